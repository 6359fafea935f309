"""JSON as Gson reads it leniently: siddhi-map-json's ``validate.json`` check and its lenient sources.

siddhi-map-json's sink validates a generated message with ``new Gson().fromJson(text,
Object.class)``, and Gson (2.8, the version it ships with) always reads leniently there: a
template's bare ``undefined`` or ``'single quotes'`` pass, so a strict JSON parser would drop
messages Siddhi publishes.  Its source reads an event array with Gson and a custom mapping
with json-smart, both as lenient (``[{'event': {'symbol': WSO2}}]`` maps).
:func:`lenient_json_error` accepts exactly what that reader accepts (following
``JsonReader``'s ``doPeek``, ``isLiteral``, ``nextNonWhitespace`` and
``readEscapeCharacter``, and ``fromJson``'s full-consumption check);
:func:`lenient_json_loads` gives the value it reads.
"""
from __future__ import annotations

import re
from typing import Any

# Characters that end an unquoted (lenient) literal: Gson's ``JsonReader.isLiteral`` is false for them.
_GSON_NOT_LITERAL = frozenset("/\\;#={}[]:, \t\f\r\n")
_HEX = frozenset("0123456789abcdefABCDEF")
_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", "\n": "\n", "'": "'", '"': '"', "\\": "\\",
            "/": "/"}
_KEYWORDS = {"true": True, "false": False, "null": None}
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


class _GsonSyntax(Exception):
    """The text is not what Gson's lenient reader accepts."""


class _GsonLenientReader:
    """Gson 2.8's ``JsonReader`` in lenient mode: reads a document into Python values (dicts,
    lists, strings, ints, floats, bools, None) or rejects it.

    Lenient Gson accepts, beyond JSON: unquoted and single-quoted names and strings, ``//``,
    ``#`` and ``/* */`` comments, ``=``/``=>`` for ``:``, ``;`` for ``,``, empty array slots
    (``[1,,2]``: nulls) and a leading ``)]}'\\n``.  It rejects what JSON rejects otherwise
    (unterminated objects, arrays and strings, a trailing comma in an object, a missing ``:``).
    """

    #: Nesting deeper than this is refused (each level costs Python frames; strict JSON goes
    #: through orjson, which takes 1024 levels, and only lenient text comes here).
    MAX_DEPTH = 128

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.depth = 0

    def _skip_line(self) -> None:
        end = self.s.find("\n", self.i)
        self.i = len(self.s) if end < 0 else end + 1

    def next_non_whitespace(self) -> str | None:
        """The next significant character (consumed), skipping whitespace and comments; None at the end."""
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            self.i += 1
            if c in " \t\n\r":
                continue
            if c == "/" and self.i < n:
                if s[self.i] == "*":
                    end = s.find("*/", self.i + 1)
                    if end < 0:
                        raise _GsonSyntax("unterminated comment")
                    self.i = end + 2
                    continue
                if s[self.i] == "/":
                    self._skip_line()
                    continue
            elif c == "#":
                self._skip_line()
                continue
            return c
        return None

    def _expect(self) -> str:
        c = self.next_non_whitespace()
        if c is None:
            raise _GsonSyntax("end of input")
        return c

    def document(self) -> Any:
        """Read the whole text: one value (or nothing: None), then only whitespace and comments."""
        c = self.next_non_whitespace()
        if c == ")" and self.s.startswith(")]}'\n", self.i - 1):  # Gson's non-execute prefix
            self.i += 4
            c = self.next_non_whitespace()
        if c is None:
            return None  # an empty document: fromJson gives null, no error
        got = self.value(c)
        if got is None:
            return None  # fromJson's "fully consumed" check is skipped for a null result
        if self.next_non_whitespace() is not None:
            raise _GsonSyntax("the document was not fully consumed")
        return got

    def value(self, c: str) -> Any:
        """Read the value starting with ``c`` (consumed)."""
        if c == "{" or c == "[":
            self.depth += 1
            if self.depth > self.MAX_DEPTH:
                raise _GsonSyntax(f"nested deeper than {self.MAX_DEPTH} levels")
            got = self._object() if c == "{" else self._array()
            self.depth -= 1
            return got
        if c in "\"'":
            return self._string(c)
        return _literal_value(self._literal())

    def _literal(self) -> str:
        """A keyword, number or unquoted string: the literal characters from the current one on."""
        s, start = self.s, self.i - 1
        j = start
        while j < len(s) and s[j] not in _GSON_NOT_LITERAL:
            j += 1
        if j == start:
            raise _GsonSyntax(f"expected a value at {start}")
        self.i = j
        return s[start:j]

    def _string(self, quote: str) -> str:
        s, n, i = self.s, len(self.s), self.i
        parts: list[str] = []
        start = i
        while True:
            if i >= n:
                raise _GsonSyntax("unterminated string")
            c = s[i]
            i += 1
            if c == quote:
                parts.append(s[start:i - 1])
                break
            if c == "\\":
                parts.append(s[start:i - 1])
                if i >= n:
                    raise _GsonSyntax("unterminated escape sequence")
                e = s[i]
                i += 1
                if e == "u":
                    code = self._hex4(i)
                    i += 4
                    if 0xD800 <= code <= 0xDFFF:
                        # A character beyond U+FFFF is written as a UTF-16 pair of escapes:
                        # one Python character.  A lone half is no character (Java keeps it;
                        # it could never be written as UTF-8 again): refused, as orjson does.
                        low = self._hex4(i + 2) if code <= 0xDBFF and s.startswith("\\u", i) else 0
                        if not 0xDC00 <= low <= 0xDFFF:
                            raise _GsonSyntax(f"lone surrogate \\u{code:04x} (half of a UTF-16 pair) at {i - 6}")
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    parts.append(chr(code))
                elif e in _ESCAPES:
                    parts.append(_ESCAPES[e])
                else:
                    raise _GsonSyntax(f"invalid escape sequence \\{e}")
                start = i
        self.i = i
        return "".join(parts)

    def _hex4(self, i: int) -> int:
        """The four hex digits of a ``\\u`` escape at ``i``."""
        digits = self.s[i:i + 4]
        if len(digits) < 4 or not all(h in _HEX for h in digits):
            raise _GsonSyntax("malformed unicode escape")
        return int(digits, 16)

    def _object(self) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        c = self._expect()
        if c == "}":
            return obj
        while True:
            if c in "\"'":
                name = self._string(c)
            elif c not in _GSON_NOT_LITERAL:
                name = self._literal()  # an unquoted name
            else:
                raise _GsonSyntax(f"expected a name at {self.i - 1}")
            c = self._expect()
            if c == "=":
                if self.s.startswith(">", self.i):
                    self.i += 1
            elif c != ":":
                raise _GsonSyntax(f"expected ':' at {self.i - 1}")
            obj[name] = self.value(self._expect())
            c = self._expect()
            if c == "}":
                return obj
            if c not in ",;":
                raise _GsonSyntax(f"unterminated object at {self.i - 1}")
            c = self._expect()

    def _array(self) -> list[Any]:
        items: list[Any] = []
        c = self._expect()
        if c == "]":
            return items
        while True:
            if c in ",;]":
                self.i -= 1  # an empty slot is a null; the separator (or end) is read next
                items.append(None)
            else:
                items.append(self.value(c))
            c = self._expect()
            if c == "]":
                return items
            if c not in ",;":
                raise _GsonSyntax(f"unterminated array at {self.i - 1}")
            c = self._expect()


def _literal_value(text: str) -> Any:
    """An unquoted literal as Gson reads it: a keyword (any letter case), a JSON number, or a string."""
    lower = text.lower()
    if lower in _KEYWORDS:
        return _KEYWORDS[lower]
    if _NUMBER.fullmatch(text):
        if not any(c in text for c in ".eE"):
            try:
                return int(text)
            except ValueError:  # more digits than int() takes from text: as Gson, a double
                pass
        return float(text)
    return text


def lenient_json_loads(text: str) -> Any:
    """``text`` read as Gson's lenient reader reads it (``{'a': WSO2}`` is ``{"a": "WSO2"}``);
    raises ``ValueError`` with the reason where that reader fails."""
    try:
        return _GsonLenientReader(text).document()
    except _GsonSyntax as exc:
        raise ValueError(str(exc)) from None


def lenient_json_error(text: str) -> str | None:
    """Why ``new Gson().fromJson(text, Object.class)`` fails on ``text`` (None: it reads it).

    This is siddhi-map-json's ``validate.json`` test (``JsonSinkMapper.isValidJson``): Gson
    reads leniently, so ``{"Volume":undefined}`` or ``{'a':1}`` are valid and only text its
    reader cannot get through (an unterminated object, a missing ``:``) is not.
    """
    try:
        _GsonLenientReader(text).document()
    except _GsonSyntax as exc:
        return str(exc)
    return None
