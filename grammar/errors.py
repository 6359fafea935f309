"""The errors of the SiddhiQL front end, shared with the engine.

One documented hierarchy: every problem with an app's text or meaning is a
:class:`SiddhiAppCreationError` carrying ``line`` and ``column`` (None when unknown).
Syntax errors are the subclass :class:`SiddhiParserError`, which also says what was expected
and shows the offending line with a caret.
"""
from __future__ import annotations


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


class SiddhiParserError(SiddhiAppCreationError):
    """The app text is not valid SiddhiQL.  ``expected`` lists what the parser would have accepted."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None,
                 source_line: str | None = None, expected: tuple[str, ...] = ()) -> None:
        self.expected = expected
        super().__init__(message, line, column, source_line)
