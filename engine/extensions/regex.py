"""The ``regex:`` namespace (siddhi-execution-regex): ``find``, ``group``, ``lookingAt``, ``matches``.

Patterns are Java regular expressions.  :func:`java_regex` reads one as Java 17's ``Pattern``
does (:class:`_Translator`: its errors are Java's) and writes it for Python's ``re`` with
nothing left to ``re``'s own reading of flags or classes: every character set is spelt out as
code-point ranges (classes with unions, ``&&`` and negation at any depth, ``\\d``/``\\w``/``\\s``
ASCII as in Java, ``\\h``, ``\\v``, the POSIX, ``java*``, ``Is*`` and general-category
properties, their case-insensitive forms), case-insensitivity per character (ASCII under
``(?i)``, ``Character.toUpperCase``/``toLowerCase`` under ``(?iu)``), ``.``, ``^``, ``$`` and
``\\Z`` with Java's line terminators (``(?s)``, ``(?m)``, ``(?d)``), comments mode ``(?x)``
stripped, inline flags scoped as Java scopes them (to the end of the enclosing group, across
``|``), ``\\b`` with Java's word characters, ``\\R`` (atomic when repeated), ``\\Q..\\E``,
``\\x{..}``, ``\\k<name>``, ``\\N{..}``, ``\\cX``, ``\\0nnn``, and back references to groups
not closed yet (which match nothing).  :func:`java_replacement` and :func:`java_split` give
``String.replaceAll``'s ``$1``/``${name}`` references (read only at a match, as Java reads them)
and ``String.split``'s dropping of trailing empty strings.  Start indexes count UTF-16 units
(:func:`utf16_units`).

Deliberate departures (docs/siddhi-differences.md, "Java regex features"): scripts and blocks
(``\\p{IsLatin}``, ``\\p{InGreek}``), ``\\X``, ``\\G``, ``(?c)`` and a few ``java*`` properties
are rejected as invalid, as is a lookbehind with an alternative of no fixed width (its
alternatives may differ in width); ``(?U)`` is ignored; a back
reference inside a repetition to a group closed only later matches nothing; Unicode data is
Python's.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from srota.engine.expression import ArgInfo
from srota.engine.extensions._checks import INT, STRING, err, function, is_literal
from srota.engine.registry import Param
from srota.grammar.model import AttrType

_ASCII_DIGITS = "0123456789"
_OCTAL = re.compile(r"\\0([0-3][0-7]{2}|[0-7]{1,2})")


# ---------------------------------------------------------------------------------------------
# Sets of code points: sorted, disjoint, non-adjacent (lo, hi) ranges

_Ranges = tuple[tuple[int, int], ...]
_MAX = 0x10FFFF


def _norm(spans: Any) -> _Ranges:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def _complement(a: _Ranges) -> _Ranges:
    out, start = [], 0
    for lo, hi in a:
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= _MAX:
        out.append((start, _MAX))
    return tuple(out)


def _intersect(a: _Ranges, b: _Ranges) -> _Ranges:
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def _chars(text: str) -> _Ranges:
    """The set of the characters of ``text``, ``a-z`` read as a range."""
    spans, i = [], 0
    while i < len(text):
        if i + 2 < len(text) and text[i + 1] == "-":
            spans.append((ord(text[i]), ord(text[i + 2])))
            i += 3
        else:
            spans.append((ord(text[i]), ord(text[i])))
            i += 1
    return _norm(spans)


def _emit(ranges: _Ranges) -> str:
    """A Python expression matching one character of ``ranges``."""
    if not ranges:  # still one character wide, as a lookbehind needs
        return "[^\\x00-\\U0010ffff]"
    comp = _complement(ranges)
    if not comp:
        return "(?s:.)"
    negate = len(comp) < len(ranges)

    def char(cp: int) -> str:
        return chr(cp) if chr(cp).isascii() and chr(cp).isalnum() else f"\\U{cp:08x}"

    body = "".join(char(a) if a == b else f"{char(a)}-{char(b)}" for a, b in (comp if negate else ranges))
    return f"[{'^' if negate else ''}{body}]"


# ---------------------------------------------------------------------------------------------
# Java's character classes and properties (java.util.regex.CharPredicates, Java 17)

_LINE_TERMINATORS = _chars("\n\r\x85\u2028\u2029")
_ASCII_SETS = {
    "Lower": "a-z", "Upper": "A-Z", "ASCII": "\x00-\x7f", "Alpha": "a-zA-Z", "Digit": "0-9",
    "Alnum": "a-zA-Z0-9", "Punct": "!-/:-@[-`{-~", "Graph": "!-~", "Print": " -~", "Blank": " \t",
    "Cntrl": "\x00-\x1f\x7f", "XDigit": "0-9a-fA-F", "Space": " \t\n\x0b\f\r", "L1": "\x00-\xff",
}
_PREDEFINED = {"d": "0-9", "w": "a-zA-Z0-9_", "s": " \t\n\x0b\f\r",
               "h": " \t\xa0\u1680\u180e\u2000-\u200a\u202f\u205f\u3000", "v": "\n\x0b\f\r\x85\u2028\u2029"}
_WHITE_SPACE = "\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
#: Java's general categories by their one- and two-letter names (LC: the cased letters, LD: letters and digits)
_CATEGORY_GROUPS = {"LC": ("Lu", "Ll", "Lt"), "LD": ("L", "Nd")}
#: the names whose set is every cased letter under CASE_INSENSITIVE (CharPredicates' caseIns):
#: of \\p{Name}, and (upper-cased) of \\p{IsName}
_CASED_UNDER_I = frozenset({"Lu", "Ll", "Lt", "javaLowerCase", "javaUpperCase", "javaTitleCase"})
_IS_CASED_UNDER_I = frozenset({"LOWERCASE", "UPPERCASE", "TITLECASE", "LOWER", "UPPER"})


@functools.cache
def _category_ranges() -> dict[str, _Ranges]:
    """Every general category's code points, and each major class's (``L``: every letter);
    computed once, on the first pattern that needs one (Python's ``re`` has no ``\\p``)."""
    import unicodedata

    spans: dict[str, list[tuple[int, int]]] = {}
    for cp in range(0x110000):
        cat = unicodedata.category(chr(cp))
        for key in (cat, cat[0]):
            found = spans.setdefault(key, [])
            if found and found[-1][1] == cp - 1:
                found[-1] = (found[-1][0], cp)
            else:
                found.append((cp, cp))
    return {key: tuple(value) for key, value in spans.items()}


def _categories(*names: str) -> _Ranges:
    table = _category_ranges()
    return _norm(span for name in names for span in table.get(name, ()))


@functools.cache
def _where(test: str) -> _Ranges:
    """The code points for which the ``str`` method ``test`` (``islower``, ``isupper``) holds."""
    method = getattr(str, test)
    return _norm((cp, cp) for cp in range(0x110000) if method(chr(cp)))


@functools.cache
def _mirrored() -> _Ranges:
    import unicodedata

    return _norm((cp, cp) for cp in range(0x110000) if unicodedata.mirrored(chr(cp)))


def _cased() -> _Ranges:
    return _norm(_where("islower") + _where("isupper") + _categories("Lt"))


def _alphabetic() -> _Ranges:
    # Character.isAlphabetic: letters, letter numbers and Other_Alphabetic (which Python's
    # unicodedata does not give: the marks it holds are left out)
    return _categories("L", "Nl")


def _unicode_property(name: str, ci: bool) -> _Ranges | None:
    """``\\p{IsName}``: Java's binary properties, then its POSIX names in their Unicode forms."""
    upper = name.upper()
    if ci and upper in _IS_CASED_UNDER_I:
        return _cased()
    graph = _complement(_categories("Zs", "Zl", "Zp", "Cc", "Cs", "Cn"))
    blank = _norm(_categories("Zs") + ((9, 9),))
    table: dict[str, Callable[[], _Ranges]] = {
        "ALPHABETIC": _alphabetic, "ALPHA": _alphabetic, "ASSIGNED": lambda: _complement(_categories("Cn")),
        "CONTROL": lambda: _categories("Cc"), "CNTRL": lambda: _categories("Cc"),
        "HEXDIGIT": lambda: _chars("0-9A-Fa-f\uff10-\uff19\uff21-\uff26\uff41-\uff46"),
        "JOINCONTROL": lambda: _chars("\u200c-\u200d"), "LETTER": lambda: _categories("L"),
        "LOWERCASE": lambda: _where("islower"), "LOWER": lambda: _where("islower"),
        "UPPERCASE": lambda: _where("isupper"), "UPPER": lambda: _where("isupper"),
        "TITLECASE": lambda: _categories("Lt"), "PUNCTUATION": lambda: _categories("P"),
        "PUNCT": lambda: _categories("P"), "WHITESPACE": lambda: _chars(_WHITE_SPACE),
        "SPACE": lambda: _chars(_WHITE_SPACE), "DIGIT": lambda: _categories("Nd"),
        "ALNUM": lambda: _norm(_alphabetic() + _categories("Nd")), "BLANK": lambda: blank,
        "GRAPH": lambda: graph, "PRINT": lambda: _intersect(_norm(graph + blank), _complement(_categories("Cc"))),
        "WORD": lambda: _norm(_alphabetic() + _categories("Mn", "Me", "Mc", "Nd", "Pc") + _chars("\u200c-\u200d")),
        "NONCHARACTERCODEPOINT": lambda: _norm([(0xFDD0, 0xFDEF)] + [(p + 0xFFFE, p + 0xFFFF)
                                                                    for p in range(0, 0x110000, 0x10000)]),
    }
    table["XDIGIT"] = table["HEXDIGIT"]
    table["HEX_DIGIT"] = table["HEXDIGIT"]
    table["WHITE_SPACE"] = table["WHITESPACE"]
    table["JOIN_CONTROL"] = table["JOINCONTROL"]
    table["NONCHARACTER_CODE_POINT"] = table["NONCHARACTERCODEPOINT"]
    make = table.get(upper)
    return make() if make else None


def _java_property(name: str, ci: bool) -> _Ranges | None:
    """``\\p{Name}``: a general category, a POSIX class (ASCII) or a ``java*`` method's set."""
    if ci and name in _CASED_UNDER_I:
        return _cased()
    if ci and name in ("Lower", "Upper"):
        return _chars("a-zA-Z")
    if name in _ASCII_SETS:
        return _chars(_ASCII_SETS[name])
    if name == "all":
        return ((0, _MAX),)
    if name in _CATEGORY_GROUPS:
        return _categories(*_CATEGORY_GROUPS[name])
    if re.fullmatch(r"[LMNPSZC][a-z]?", name):
        found = _categories(name)
        return found if found or name in ("Cn", "Co", "Cs") else None
    java: dict[str, Callable[[], _Ranges]] = {
        "javaLowerCase": lambda: _where("islower"), "javaUpperCase": lambda: _where("isupper"),
        "javaTitleCase": lambda: _categories("Lt"), "javaAlphabetic": _alphabetic,
        "javaDigit": lambda: _categories("Nd"), "javaDefined": lambda: _complement(_categories("Cn")),
        "javaLetter": lambda: _categories("L"), "javaLetterOrDigit": lambda: _categories("L", "Nd"),
        "javaSpaceChar": lambda: _categories("Zs", "Zl", "Zp"),
        "javaWhitespace": lambda: _intersect(_norm(_categories("Zs", "Zl", "Zp") + _chars("\t-\r\x1c-\x1f")),
                                             _complement(_chars("\xa0\u2007\u202f"))),
        "javaISOControl": lambda: _chars("\x00-\x1f\x7f-\x9f"), "javaMirrored": _mirrored,
    }
    make = java.get(name)
    return make() if make else None


@functools.cache
def _property(name: str, ci: bool) -> _Ranges:
    """The set ``\\p{name}`` names (``ci``: under CASE_INSENSITIVE), as Java 17 resolves it."""
    if "=" in name:
        key, _, value = name.partition("=")
        if key in ("gc", "general_category"):
            found = _java_property(value, ci)
            if found is not None and (value in _CATEGORY_GROUPS or re.fullmatch(r"[LMNPSZC][a-z]?", value)):
                return found
        raise re.error(f"Unknown character property name {{{name}}}")
    if name.startswith("Is"):
        found = _unicode_property(name[2:], ci)
        if found is None:
            found = _java_property(name[2:], ci)
    elif name.startswith("In"):
        found = None  # Unicode blocks: a documented gap
    else:
        found = _java_property(name, ci)
    if found is None:
        raise re.error(f"Unknown character property name {{{name}}}")
    return found


# ---------------------------------------------------------------------------------------------
# Case folding: Java's CASE_INSENSITIVE (ASCII) and UNICODE_CASE (Character.toUpperCase/toLowerCase)


def java_upper(c: str) -> str:
    """``Character.toUpperCase(c)``: Python's full mapping where it is one character; else the
    titlecase where that is (the Greek letters with iota subscript), else ``c`` (ß, ŉ, ﬀ ...)."""
    up = c.upper()
    if len(up) == 1:
        return up
    title = c.title()
    return title if len(title) == 1 else c


def java_lower(c: str) -> str:
    """``Character.toLowerCase(c)``: only U+0130's full lowercase is longer ('i' and a combining dot)."""
    low = c.lower()
    return low if len(low) == 1 else ("i" if c == "\u0130" else c)


@functools.cache
def _case_table() -> tuple[tuple[int, int, int], ...]:
    """Every code point whose Java case mappings move it: (it, upper, lower of upper)."""
    out = []
    for cp in range(0x110000):
        c = chr(cp)
        up = java_upper(c)
        lu = java_lower(up)
        if up != c or lu != c:
            out.append((cp, ord(up), ord(lu)))
    return tuple(out)


def _fold_char(cp: int, flags: frozenset[str]) -> _Ranges:
    """The characters a literal ``cp`` matches under ``flags``."""
    if "i" not in flags:
        return ((cp, cp),)
    c = chr(cp)
    if "u" not in flags:
        if c.isascii() and c.isalpha():
            return _norm([(ord(c.lower()),) * 2, (ord(c.upper()),) * 2])
        return ((cp, cp),)
    lu = ord(java_lower(java_upper(c)))
    if ord(java_upper(c)) == lu:  # Java's single(): no case, the character itself
        return ((cp, cp),)
    return _norm([(cp, cp), (lu, lu)] + [(x, x) for x, _up, low in _case_table() if low == lu])


def _fold_range(lo: int, hi: int, flags: frozenset[str]) -> _Ranges:
    """The characters a class range ``lo-hi`` matches under ``flags`` (CIRange, CIRangeU)."""
    spans = [(lo, hi)]
    if "i" in flags:
        if "u" in flags:
            spans += [(x, x) for x, up, low in _case_table() if lo <= up <= hi or lo <= low <= hi]
        else:
            for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ":
                if lo <= ord(c.swapcase()) <= hi:
                    spans.append((ord(c), ord(c)))
    return _norm(spans)


@functools.cache
def _word_sides() -> tuple[str, str]:
    """Java's word boundary (``Pattern.Bound``): whether the characters before and at a position
    are word characters: a letter, a digit (Nd) or '_', or a non-spacing mark after a letter or
    digit (through up to two marks here; Java walks back through any number)."""
    # Python's Unicode \w is L, N and '_': Java's word characters and the numbers (Nl, No) that
    # are no letters, which go by a short class (the word class spelt out made every pattern
    # with \b a 100-kB one, half a second to compile)
    python_word = _norm(_categories("L", "Nd", "Nl", "No") + ((0x5F, 0x5F),))
    numbers = _emit(_intersect(python_word, _complement(_norm(_categories("L", "Nd") + ((0x5F, 0x5F),)))))
    word, base = f"(?u:(?!{numbers})\\w)", f"(?u:(?!{numbers}|_)\\w)"
    mark = _emit(_categories("Mn"))
    left = f"(?:(?<={word})|(?<={base}{mark})|(?<={base}{mark}{mark}))"
    right = f"(?:(?={word})|(?<={base})(?={mark})|(?<={base}{mark})(?={mark}))"
    return left, right


# ---------------------------------------------------------------------------------------------
# The translation

_JAVA_BLANKS = " \t\n\x0b\f\r"
_FLAG_LETTERS = "idmsuxU"
_LINE_BREAK = "(?:\\r\\n|[\\n\\x0b\\f\\r\\x85\\u2028\\u2029])"
_ANY_LINE_END = "(?:\\r\\n|(?<!\\r)\\n|[\\r\\x85\\u2028\\u2029])"


class _Translator:
    """Java's ``Pattern`` syntax read as Java 17 reads it, written as Python's ``re`` (every
    character set spelt out, every anchor as lookarounds, no Python flag left to apply)."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.i = 0
        self.flags: frozenset[str] = frozenset()
        self.opened = 0  # capturing groups opened so far
        self.closed: set[int] = set()
        self.names: set[str] = set()

    def error(self, message: str) -> re.error:
        return re.error(message, pattern=self.src, pos=min(self.i, len(self.src)))

    def peek(self) -> str:
        """The next character, past blanks and comments in comments mode ('' at the end)."""
        self.skip_blanks()
        return self.src[self.i] if self.i < len(self.src) else ""

    def skip_blanks(self) -> None:
        if "x" not in self.flags:
            return
        src, n = self.src, len(self.src)
        while self.i < n:
            c = src[self.i]
            if c in _JAVA_BLANKS:
                self.i += 1
            elif c == "#":
                ends = "\n" if "d" in self.flags else "\n\r\x85\u2028\u2029"
                while self.i < n and src[self.i] not in ends:
                    self.i += 1
            else:
                return

    # -- sequences, alternations and groups --------------------------------------------------

    def alternation(self) -> str:
        return "|".join(self.branches())

    def branches(self) -> list[str]:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.sequence())
        return branches

    def sequence(self) -> str:
        out: list[str] = []
        quantifiable = False  # the last item takes a quantifier
        while True:
            c = self.peek()
            if not c or c in "|)":
                return "".join(out)
            if c in "*+?":
                if not quantifiable:
                    raise self.error(f"Dangling meta character '{c}'")
                out[-1] = self.quantifier(out[-1])
                quantifiable = False
                continue
            if c == "{":  # with nothing before it, Java repeats an empty atom: '{2}' matches ''
                if quantifiable:
                    out[-1] = self.quantifier(out[-1])
                else:
                    self.quantifier("")
                quantifiable = False
                continue
            items = self.atom()
            if items is None:  # inline flags alone: nothing to quantify (Java's dangling '*')
                quantifiable = False
            elif items:  # (an empty \\Q\\E leaves the last item to a quantifier after it)
                out.extend(items)
                quantifiable = True

    def quantifier(self, item: str) -> str:
        # a repeated \R never gives back the \n of a \r\n it took: Java's LineEnding backtracks
        # only into what follows it, and in a repetition that is the end of one round
        item = item.replace(_LINE_BREAK, "(?>" + _LINE_BREAK[3:])
        c = self.src[self.i]
        self.i += 1
        if c == "{":
            low, high = self.counted()
            text = f"{{{low}}}" if high == low else f"{{{low},{'' if high is None else high}}}"
        else:
            text = c
        if self.peek() in ("?", "+"):
            text += self.src[self.i]
            self.i += 1
        return item + text

    def counted(self) -> tuple[int, int | None]:
        """A counted closure's bounds, after its ``{``."""
        def number() -> str:
            digits = ""
            while self.i < len(self.src) and self.src[self.i].isascii() and self.src[self.i].isdigit():
                digits += self.src[self.i]
                self.i += 1
                self.skip_blanks()  # Java's read() passes blanks in comments mode
            return digits

        if not (self.i < len(self.src) and self.src[self.i] in _ASCII_DIGITS):
            raise self.error("Illegal repetition")
        low = int(number())
        high: int | None = low
        if self.i < len(self.src) and self.src[self.i] == ",":
            self.i += 1
            self.skip_blanks()
            digits = number()
            high = int(digits) if digits else None
        if not (self.i < len(self.src) and self.src[self.i] == "}"):
            raise self.error("Unclosed counted closure")
        self.i += 1
        if low > 0x7FFFFFFF or (high is not None and (high > 0x7FFFFFFF or high < low)):
            raise self.error("Illegal repetition range")
        return low, high

    def group(self) -> list[str] | None:
        src = self.src
        self.i += 1  # the '('
        self.skip_blanks()
        saved = self.flags
        if src.startswith("?", self.i):
            self.i += 1
            head = src[self.i:self.i + 2]
            if head[:1] in (":", "=", "!", ">"):
                opener = "(?" + head[0]
                self.i += 1
            elif head in ("<=", "<!"):
                self.i += 2
                branches = self.branches()
                self.close_group(saved)
                if len(branches) > 1:
                    # Java looks behind for alternatives of different widths; re takes one
                    # fixed width per lookbehind: one each, the same test in the same order
                    if head == "<=":
                        return ["(?:" + "|".join(f"(?<={b})" for b in branches) + ")"]
                    return ["(?:" + "".join(f"(?<!{b})" for b in branches) + ")"]
                return [f"(?{head}{branches[0]})"]
            elif head[:1] == "<":
                self.i += 1
                name = self.group_name()
                if name in self.names:
                    raise self.error(f"Named capturing group <{name}> is already defined")
                self.names.add(name)
                self.opened += 1
                number = self.opened
                opener = f"(?P<{name}>"
                body = self.alternation()
                self.close_group(saved)
                self.closed.add(number)
                return [opener + body + ")"]
            else:  # inline flags, alone (they hold to the end of the enclosing group) or scoped
                self.inline_flags()
                if src.startswith(")", self.i):
                    self.i += 1
                    return None
                if not src.startswith(":", self.i):
                    raise self.error("Unknown inline modifier")
                self.i += 1
                opener = "(?:"
            body = self.alternation()
            self.close_group(saved)
            return [opener + body + ")"]
        self.opened += 1
        number = self.opened
        body = self.alternation()
        self.close_group(saved)
        self.closed.add(number)
        return ["(" + body + ")"]

    def close_group(self, saved: frozenset[str]) -> None:
        if self.peek() != ")":
            raise self.error("Unclosed group")
        self.i += 1
        self.flags = saved

    def group_name(self) -> str:
        src, start = self.src, self.i
        if not (self.i < len(src) and src[self.i].isascii() and src[self.i].isalpha()):
            raise self.error("capturing group name does not start with a Latin letter")
        while self.i < len(src) and src[self.i].isascii() and src[self.i].isalnum():
            self.i += 1
        if not src.startswith(">", self.i):
            raise self.error("named capturing group is missing trailing '>'")
        self.i += 1
        return src[start:self.i - 1]

    def inline_flags(self) -> None:
        flags, src, on = set(self.flags), self.src, True
        while self.i < len(src) and (src[self.i] in _FLAG_LETTERS or (on and src[self.i] == "-")):
            c = src[self.i]
            if c == "-":
                on = False
            elif on:
                flags.add(c)
            else:
                flags.discard(c)
            self.i += 1
        self.flags = frozenset(flags)

    # -- atoms -------------------------------------------------------------------------------

    def atom(self) -> list[str] | None:
        """The items of the next atom (one, or one per character of a ``\\Q..\\E`` quote; None
        for inline flags alone)."""
        src = self.src
        c = src[self.i]
        if c == "(":
            return self.group()
        if c == "[":
            self.i += 1
            return [_emit(self.char_class())]
        if c == "\\":
            return self.escape()
        self.i += 1
        flags = self.flags
        if c == ".":
            if "s" in flags:
                return ["(?s:.)"]
            return [_emit(_complement(_chars("\n") if "d" in flags else _LINE_TERMINATORS))]
        if c == "^":
            if "m" not in flags:
                return ["(?:\\A)"]
            after = "(?<=\\n)" if "d" in flags else "(?<=[\\n\\x85\\u2028\\u2029])|(?<=\\r)(?!\\n)"
            # Java's ^ never matches at the end of the input, even after a line terminator
            return [f"(?:(?!\\Z)(?:\\A|{after}))"]
        if c == "$":
            return [self.dollar("m" in flags)]
        return [_emit(_fold_char(ord(c), flags)) if "i" in flags else re.escape(c)]

    def dollar(self, multiline: bool) -> str:
        if "d" in self.flags:
            return "(?=\\n|\\Z)" if multiline else "(?=\\n?\\Z)"
        if multiline:  # before any line terminator (not inside \r\n), or at the end
            return "(?=[\\r\\x85\\u2028\\u2029]|(?<!\\r)\\n|\\Z)"
        return f"(?={_ANY_LINE_END}?\\Z)"

    def quote(self) -> str:
        """The text of a ``\\Q..\\E`` quote (after its ``\\Q``)."""
        end = self.src.find("\\E", self.i)
        end = len(self.src) if end < 0 else end
        text = self.src[self.i:end]
        self.i = end + 2
        return text

    def escape(self) -> list[str]:
        src = self.src
        if self.i + 1 >= len(src):
            raise self.error("Unexpected internal error")
        d = src[self.i + 1]
        flags = self.flags
        if d == "Q":
            self.i += 2
            return [_emit(_fold_char(ord(c), flags)) if "i" in flags else re.escape(c) for c in self.quote()]
        if d in "123456789":  # a back reference, read as Java reads it
            self.i += 2
            ref = int(d)
            while self.i < len(src) and src[self.i] in _ASCII_DIGITS and ref * 10 + int(src[self.i]) <= self.opened:
                ref, self.i = ref * 10 + int(src[self.i]), self.i + 1
            # Java compiles a reference to a group not (yet) closed, which matches nothing then;
            # Python rejects it
            return [self.backref(f"\\{ref}") if ref in self.closed else "(?!)"]
        if d == "k":
            self.i += 2
            if not src.startswith("<", self.i):
                raise self.error("\\k is not followed by '<' for named capturing group")
            self.i += 1
            name = self.group_name()
            if name not in self.names:
                raise self.error(f"named capturing group <{name}> does not exist")
            return [self.backref(f"(?P={name})")]
        if d in "bB":
            self.i += 2
            left, right = _word_sides()
            if d == "b":
                return [f"(?:(?={left})(?!{right})|(?!{left})(?={right}))"]
            return [f"(?:(?={left})(?={right})|(?!{left})(?!{right}))"]
        anchors = {"A": "(?:\\A)", "z": "(?:\\Z)", "R": _LINE_BREAK}
        if d in anchors:
            self.i += 2
            return [anchors[d]]
        if d == "Z":
            self.i += 2
            return [self.dollar(False)]
        found = self.char_escape()
        if isinstance(found, tuple):
            return [_emit(found)]
        return [_emit(_fold_char(found, flags)) if "i" in flags else re.escape(chr(found))]

    def backref(self, ref: str) -> str:
        if "i" not in self.flags:
            return f"(?:{ref})"
        return f"(?i{'u' if 'u' in self.flags else ''}:{ref})"

    def hex_digits(self, n: int, message: str) -> int:
        """The value of the ``n`` hexadecimal digits at the cursor (``\\xhh``, ``\\uhhhh``)."""
        digits = self.src[self.i:self.i + n]
        if len(digits) < n or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise self.error(message)
        self.i += n
        return int(digits, 16)

    def char_escape(self) -> int | _Ranges:
        """The escape at ``self.i`` (a ``\\``) that stands for one character (its code point) or a
        set of them (``\\d``, ``\\p{..}``); an error for any other."""
        src = self.src
        d = src[self.i + 1]
        self.i += 2
        if d in _PREDEFINED or d.lower() in _PREDEFINED:
            found = _chars(_PREDEFINED[d.lower()])
            return _complement(found) if d.isupper() else found
        if d in "pP":
            if src.startswith("{", self.i):
                close = src.find("}", self.i)
                if close < 0:
                    raise self.error("Unclosed character family")
                name, self.i = src[self.i + 1:close], close + 1
            elif self.i < len(src):
                name, self.i = src[self.i], self.i + 1
            else:
                raise self.error("Illegal character family")
            found = _property(name, "i" in self.flags)
            return _complement(found) if d == "P" else found
        simple = {"t": 9, "n": 10, "r": 13, "f": 12, "a": 7, "e": 27}
        if d in simple:
            return simple[d]
        if d == "0":
            octal = _OCTAL.match(src, self.i - 2)
            if not octal:
                raise self.error("Illegal octal escape sequence")
            self.i = octal.end()
            return int(octal.group(1), 8)
        if d == "x":
            if src.startswith("{", self.i):
                close = src.find("}", self.i)
                digits = src[self.i + 1:close] if close > 0 else ""
                if not digits or not all(c in "0123456789abcdefABCDEF" for c in digits) or int(digits, 16) > _MAX:
                    raise self.error("Illegal hexadecimal escape sequence")
                self.i = close + 1
                return int(digits, 16)
            return self.hex_digits(2, "Illegal hexadecimal escape sequence")
        if d == "u":
            return self.hex_digits(4, "Illegal Unicode escape sequence")
        if d == "c":
            if self.i >= len(src):
                raise self.error("Illegal control escape sequence")
            self.i += 1
            return ord(src[self.i - 1]) ^ 64
        if d == "N" and src.startswith("{", self.i):
            import unicodedata

            close = src.find("}", self.i)
            try:
                char = unicodedata.lookup(src[self.i + 1:close]) if close > 0 else ""
            except KeyError:
                char = ""
            if len(char) != 1:
                raise self.error("Unknown character name")
            self.i = close + 1
            return ord(char)
        if d.isascii() and d.isalnum():  # \G, \X, \y ...: Java's unsupported escapes (and gaps)
            raise self.error("Illegal/unsupported escape sequence")
        return ord(d)

    # -- character classes -------------------------------------------------------------------

    def char_class(self) -> _Ranges:
        """A class (after its ``[``): unions of members and nested classes, ``&&`` between them
        (left to right), all of it negated by a leading ``^``."""
        src = self.src
        negate = src.startswith("^", self.i)
        if negate:
            self.i += 1
        result: _Ranges | None = None  # the intersection so far
        operand: list[tuple[int, int]] = []
        has_member = False
        while True:
            self.skip_blanks()
            if self.i >= len(src):
                raise self.error("Unclosed character class")
            c = src[self.i]
            if c == "]" and (has_member or result is not None):
                self.i += 1
                break
            if c == "&" and src.startswith("&&", self.i):
                self.i += 2
                if has_member:
                    current = _norm(operand)
                    result = current if result is None else _intersect(result, current)
                operand, has_member = [], False
                continue
            if c == "[":
                self.i += 1
                operand.extend(self.char_class())
                has_member = True
                continue
            operand.extend(self.class_member())
            has_member = True
        if has_member or result is None:
            current = _norm(operand)
            result = current if result is None else _intersect(result, current)
        return _complement(result) if negate else result

    def class_member(self) -> _Ranges:
        """One member of a class: a character, a range, a predefined class or a property."""
        src = self.src
        if src.startswith("\\Q", self.i):
            self.i += 2
            text = self.quote()
            return _norm(span for c in text for span in self.class_char(ord(c)))
        first = self.class_atom()
        if isinstance(first, tuple):
            return first
        self.skip_blanks()
        if (src.startswith("-", self.i) and self.i + 1 < len(src) and src[self.i + 1] not in "[]"):
            self.i += 1
            self.skip_blanks()
            if self.i >= len(src):
                raise self.error("Unclosed character class")
            last = self.class_atom()
            if isinstance(last, tuple) or last < first:
                raise self.error("Illegal character range")
            return _fold_range(first, last, self.flags)
        return self.class_char(first)

    def class_atom(self) -> int | _Ranges:
        c = self.src[self.i]
        if c == "\\":
            d = self.src[self.i + 1:self.i + 2]
            if d and d in "123456789bBAzZRXGk":
                raise self.error("Illegal/unsupported escape sequence")
            return self.char_escape()
        self.i += 1
        return ord(c)

    def class_char(self, cp: int) -> _Ranges:
        """A character member: under UNICODE_CASE one below 256 adds its two cases (Java's BitClass),
        but for the few whose folding reaches past 255 (k, s, i, µ, å, ÿ and their cases)."""
        flags = self.flags
        if "i" in flags and "u" in flags and cp < 256 and chr(cp) not in "IiSsKk\xc5\xe5\xff\xb5" \
                and not chr(cp).isascii():
            c = chr(cp)
            return _norm([(cp, cp), (ord(java_lower(c)),) * 2, (ord(java_upper(c)),) * 2])
        return _fold_char(cp, flags)


def _translate(src: str) -> str:
    translator = _Translator(src)
    out = translator.alternation()
    if translator.i < len(src):
        raise translator.error("Unmatched closing ')'")
    return out


@functools.lru_cache(maxsize=1024)
def java_regex(pattern: str) -> re.Pattern[str]:
    """Compile a Java regular expression (raises ``re.error`` when it is invalid)."""
    return re.compile(_translate(pattern), re.ASCII)


def java_replacement(template: str) -> Callable[[re.Match[str]], str]:
    """The function ``Matcher.replaceAll(template)`` applies to each match (``$n``, ``${name}``, ``\\x``)."""
    parts: list[tuple[str, str]] = []  # ("lit", text) | ("num", digits) | ("name", group name)
    lit: list[str] = []
    i, n = 0, len(template)
    while i < n:
        c = template[i]
        if c == "\\":
            if i + 1 >= n:
                raise ValueError("character to be escaped is missing")
            lit.append(template[i + 1])
            i += 2
            continue
        if c != "$":
            lit.append(c)
            i += 1
            continue
        if i + 1 >= n:
            raise ValueError("Illegal group reference: group index is missing")
        if lit:
            parts.append(("lit", "".join(lit)))
            lit = []
        if template[i + 1] == "{":
            close = template.find("}", i + 2)
            if close < 0:
                raise ValueError("named capturing group is missing trailing '}'")
            parts.append(("name", template[i + 2:close]))
            i = close + 1
        elif template[i + 1] in _ASCII_DIGITS:  # Java's group numbers are ASCII digits only
            j = i + 2
            while j < n and template[j] in _ASCII_DIGITS:
                j += 1
            parts.append(("num", template[i + 1:j]))
            i = j
        else:
            raise ValueError("Illegal group reference")
    if lit:
        parts.append(("lit", "".join(lit)))

    def replace(m: re.Match[str]) -> str:
        return "".join(text if kind == "lit" else _group_text(m, kind, text) for kind, text in parts)

    return replace


def _group_text(m: re.Match[str], kind: str, ref: str) -> str:
    if kind == "name":
        try:
            return m.group(ref) or ""
        except IndexError:
            raise IndexError(f"No group with name {{{ref}}}") from None
    # Java reads as many digits as still name an existing group ($12 is $1 then '2')
    count = m.re.groups
    if int(ref[0]) > count:
        raise IndexError(f"No group {ref[0]}")
    used = 1
    while used < len(ref) and int(ref[:used + 1]) <= count:
        used += 1
    return (m.group(int(ref[:used])) or "") + ref[used:]


def java_replace(pattern: re.Pattern[str], source: str, template: str, count: int = 0) -> str:
    """``source.replaceAll(regex, template)`` (``count=1``: ``replaceFirst``)."""
    if "$" not in template and "\\" not in template:
        return pattern.sub(template, source, count=count)  # no references: re reads it literally
    if pattern.search(source) is None:
        return source  # Java reads the template only at a match: a bad one is no error without one
    return pattern.sub(java_replacement(template), source, count=count)


def java_split(pattern: re.Pattern[str], source: str) -> list[str]:
    """``String.split(regex)``: no leading empty piece from a zero-width match, no trailing empties."""
    pieces: list[str] = []
    index = 0
    matched = False
    for m in pattern.finditer(source):
        if m.end() == 0:  # a zero-width match at the start never yields a leading empty piece
            continue
        matched = True
        pieces.append(source[index:m.start()])
        index = m.end()
    if not matched:
        return [source]
    pieces.append(source[index:])
    while pieces and pieces[-1] == "":
        pieces.pop()
    return pieces


def utf16_units(s: str) -> str:
    """``s`` as Java holds it: one character per UTF-16 unit (a character beyond U+FFFF becomes
    its two surrogates), so that indexes, lengths and comparisons count as Java's do."""
    if s.isascii() or max(s) <= "\uffff":
        return s
    return "".join(c if c <= "\uffff" else chr(0xD7C0 + (ord(c) >> 10)) + chr(0xDC00 + (ord(c) & 0x3FF)) for c in s)


def from_utf16_units(u: str) -> str:
    """The string of Java's UTF-16 units ``u`` (from :func:`utf16_units`), surrogate pairs joined again
    (a lone surrogate, as Java's ``substring`` may leave one, stays)."""
    if u.isascii() or not any("\ud800" <= c <= "\udfff" for c in u):
        return u
    return u.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def compile_or_error(qual: str, text: Any) -> re.Pattern[str]:
    """A constant pattern compiled at creation (an invalid one is a creation error)."""
    try:
        return java_regex(str(text))
    except re.error as exc:
        raise err(f"{qual}: invalid regular expression '{text}': {exc}") from None


def pattern_getter(qual: str, info: ArgInfo) -> Callable[[str], re.Pattern[str]]:
    """``f(regex)`` giving the compiled pattern: fixed for a literal, cached per text otherwise."""
    if is_literal(info) and info.value is not None:
        fixed = compile_or_error(qual, info.value)
        return lambda _text: fixed
    return java_regex


_REGEX = Param("regex", STRING, dynamic=True, doc="A Java regular expression.")
_INPUT = Param("input.sequence", STRING, dynamic=True, doc="The text to match against.")


@function("regex", "find",
          (_REGEX, _INPUT, Param("starting.index", INT, optional=True, default=0, dynamic=True,
                                 doc="Where to start searching (the matcher is reset first).")),
          returns=AttrType.BOOL,
          doc="Whether a subsequence of the input matches the regex (Java's Matcher.find). "
              "A null input or starting index gives false; a null regex is an error.",
          examples=(("regex:find('\\d\\d(.*)WSO2', '21 products are produced by WSO2 currently')",
                     "true"),))
def _find(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    get = pattern_getter("regex:find", infos[0])
    if len(infos) == 2:
        def find(regex: Any, source: Any) -> bool:
            if regex is None:
                raise ValueError("Invalid input given to regex:find() function. First argument cannot be null")
            if source is None:
                return False
            return get(regex).search(source) is not None
        return AttrType.BOOL, find

    def find_from(regex: Any, source: Any, start: Any) -> bool:
        if regex is None:
            raise ValueError("Invalid input given to regex:find() function. First argument cannot be null")
        if source is None:
            return False
        pattern = get(regex)  # compiled before the start is looked at: a bad regex is an error
        if start is None:
            return False
        units = utf16_units(source)  # Java's start index counts UTF-16 units
        if start < 0 or start > len(units):
            raise IndexError(f"Illegal start index {start}")
        if len(units) != len(source):
            # a start between the two halves of a surrogate pair: Java sees each half alone
            head = from_utf16_units(units[:start])
            source, start = head + from_utf16_units(units[start:]), len(head)
        return pattern.search(source, start) is not None

    return AttrType.BOOL, find_from


@function("regex", "group",
          (_REGEX, _INPUT, Param("group.id", INT, dynamic=True, doc="The group to return (0 is the whole match).")),
          returns=AttrType.STRING,
          doc="The given group of the first match of the regex in the input, or null when nothing "
              "matches or the group does not exist. Null arguments are an error.",
          examples=(("regex:group('(\\d\\d)(.*)(WSO2.*)', '21 products are produced within 10 years by WSO2 "
                     "currently by WSO2 employees', 3)", "'WSO2 employees'"),))
def _group(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    get = pattern_getter("regex:group", infos[0])

    def group(regex: Any, source: Any, gid: Any) -> Any:
        for k, v in enumerate((regex, source, gid)):
            if v is None:
                raise ValueError(f"Invalid input given to regex:group() function. "
                                 f"{('First', 'Second', 'Third')[k]} argument cannot be null")
        pattern = get(regex)
        m = pattern.search(source)
        if m is None or gid > pattern.groups:
            return None
        return m.group(gid)

    return AttrType.STRING, group


def _anchored(name: str, method: str, doc: str, example: tuple[str, str]) -> None:
    @function("regex", name, (_REGEX, _INPUT), returns=AttrType.BOOL, doc=doc, examples=(example,))
    def build(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
        get = pattern_getter(f"regex:{name}", infos[0])

        def run(regex: Any, source: Any) -> bool:
            if regex is None:
                raise ValueError(f"Invalid input given to regex:{name}() function. First argument cannot be null")
            if source is None:
                return False
            return getattr(get(regex), method)(source) is not None

        return AttrType.BOOL, run


_anchored("lookingAt", "match",
          "Whether the input, from its start, begins with a match of the regex (Java's "
          "Matcher.lookingAt). A null input gives false; a null regex is an error.",
          ("regex:lookingAt('\\d\\d(.*)WSO2', '21 products are produced by WSO2 currently')", "true"))
_anchored("matches", "fullmatch",
          "Whether the whole input matches the regex (Java's Matcher.matches). A null input gives "
          "false; a null regex is an error.",
          ("regex:matches('WSO2(.*)middleware(.*)', 'WSO2 is situated in trace and its a middleware "
           "company')", "true"))
