"""The errors of the SiddhiQL front end, shared with the engine.

One documented hierarchy: every problem with an app's text or meaning is a
:class:`SiddhiAppCreationError` carrying ``line`` and ``column`` (None when unknown).
Syntax errors are the subclass :class:`SiddhiParserError`, which also says what was expected
and shows the offending line with a caret.
"""
from __future__ import annotations

import difflib
from collections.abc import Iterable


class SiddhiAppCreationError(Exception):
    """An app cannot be created: bad syntax, unknown names, type errors, bad parameters."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None,
                 source_line: str | None = None) -> None:
        self.message = message
        self.line = line
        self.column = column
        self.source_line = source_line
        super().__init__(self._render())

    def _render(self) -> str:
        where = f"line {self.line}, column {self.column}: " if self.line is not None else ""
        text = f"{where}{self.message}"
        if self.source_line is not None and self.column is not None:
            text += f"\n    {self.source_line}\n    {' ' * (self.column - 1)}^"
        return text


def did_you_mean(name: str, choices: Iterable[str], limit: int = 12) -> str:
    """`` (did you mean 'x'? valid: a, b, c)`` for an unknown name, or ``""`` with no choices.

    The closest choice (difflib) is named first; up to ``limit`` valid choices follow.
    """
    options = sorted(set(choices))
    if not options:
        return ""
    close = difflib.get_close_matches(name, options, n=1, cutoff=0.6) or \
        difflib.get_close_matches(name.lower(), [o.lower() for o in options], n=1, cutoff=0.6)
    if close and close[0] not in options:  # matched case-insensitively: name the real spelling
        close = [next(o for o in options if o.lower() == close[0])]
    shown = ", ".join(options[:limit]) + (", ..." if len(options) > limit else "")
    return f" (did you mean '{close[0]}'? valid: {shown})" if close else f" (valid: {shown})"


class SiddhiParserError(SiddhiAppCreationError):
    """The app text is not valid SiddhiQL.  ``expected`` lists what the parser would have accepted."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None,
                 source_line: str | None = None, expected: tuple[str, ...] = ()) -> None:
        self.expected = expected
        super().__init__(message, line, column, source_line)
