"""JSON as Gson reads it leniently: siddhi-map-json's ``validate.json`` check.

siddhi-map-json's sink validates a generated message with ``new Gson().fromJson(text,
Object.class)``, and Gson (2.8, the version it ships with) always reads leniently there: a
template's bare ``undefined`` or ``'single quotes'`` pass, so a strict JSON parser would drop
messages Siddhi publishes.  :func:`lenient_json_error` accepts exactly what that reader
accepts (following ``JsonReader``'s ``doPeek``, ``isLiteral``, ``nextNonWhitespace`` and
``readEscapeCharacter``, and ``fromJson``'s full-consumption check).
"""
from __future__ import annotations

# Characters that end an unquoted (lenient) literal: Gson's ``JsonReader.isLiteral`` is false for them.
_GSON_NOT_LITERAL = frozenset("/\\;#={}[]:, \t\f\r\n")
_HEX = frozenset("0123456789abcdefABCDEF")


class _GsonSyntax(Exception):
    """The text is not what Gson's lenient reader accepts."""


class _GsonLenientReader:
    """Gson 2.8's ``JsonReader`` in lenient mode, reduced to accepting or rejecting a document.

    Lenient Gson accepts, beyond JSON: unquoted and single-quoted names and strings, ``//``,
    ``#`` and ``/* */`` comments, ``=``/``=>`` for ``:``, ``;`` for ``,``, empty array slots
    (``[1,,2]``: nulls) and a leading ``)]}'\\n``.  It rejects what JSON rejects otherwise
    (unterminated objects, arrays and strings, a trailing comma in an object, a missing ``:``).
    """

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

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

    def document(self) -> None:
        """Read the whole text: one value (or nothing), then only whitespace and comments."""
        c = self.next_non_whitespace()
        if c == ")" and self.s.startswith(")]}'\n", self.i - 1):  # Gson's non-execute prefix
            self.i += 4
            c = self.next_non_whitespace()
        if c is None:
            return  # an empty document: fromJson gives null, no error
        if self.value(c):
            return  # fromJson's "fully consumed" check is skipped for a null result
        if self.next_non_whitespace() is not None:
            raise _GsonSyntax("the document was not fully consumed")

    def value(self, c: str) -> bool:
        """Read the value starting with ``c`` (consumed); True when it is a null."""
        if c == "{":
            self._object()
        elif c == "[":
            self._array()
        elif c in "\"'":
            self._string(c)
        else:
            return self._literal().lower() == "null"
        return False

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

    def _string(self, quote: str) -> None:
        s, n, i = self.s, len(self.s), self.i
        while True:
            if i >= n:
                raise _GsonSyntax("unterminated string")
            c = s[i]
            i += 1
            if c == quote:
                break
            if c == "\\":
                if i >= n:
                    raise _GsonSyntax("unterminated escape sequence")
                e = s[i]
                i += 1
                if e == "u":
                    if i + 4 > n or not all(h in _HEX for h in s[i:i + 4]):
                        raise _GsonSyntax("malformed unicode escape")
                    i += 4
                elif e not in "tbnrf\n'\"\\/":
                    raise _GsonSyntax(f"invalid escape sequence \\{e}")
        self.i = i

    def _object(self) -> None:
        c = self._expect()
        if c == "}":
            return
        while True:
            if c in "\"'":
                self._string(c)
            elif c not in _GSON_NOT_LITERAL:
                self._literal()  # an unquoted name
            else:
                raise _GsonSyntax(f"expected a name at {self.i - 1}")
            c = self._expect()
            if c == "=":
                if self.s.startswith(">", self.i):
                    self.i += 1
            elif c != ":":
                raise _GsonSyntax(f"expected ':' at {self.i - 1}")
            self.value(self._expect())
            c = self._expect()
            if c == "}":
                return
            if c not in ",;":
                raise _GsonSyntax(f"unterminated object at {self.i - 1}")
            c = self._expect()

    def _array(self) -> None:
        c = self._expect()
        if c == "]":
            return
        while True:
            if c in ",;]":
                self.i -= 1  # an empty slot is a null; the separator (or end) is read next
            else:
                self.value(c)
            c = self._expect()
            if c == "]":
                return
            if c not in ",;":
                raise _GsonSyntax(f"unterminated array at {self.i - 1}")
            c = self._expect()


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
