"""Random apps of siddhi-execution-regex's functions (``--family regex_fn``).

Every function of the jar: ``regex:find(regex, s)``, ``regex:find(regex, s, start)``,
``regex:group(regex, s, id)``, ``regex:lookingAt(regex, s)`` and ``regex:matches(regex, s)``,
the regex a constant (compiled when the app is created: an invalid one refuses the app) or an
attribute (compiled per event: an invalid one drops the event), the start index and the group
id an attribute or a constant, in range and out of it (below zero, past the end, past the group
count), and nulls in every argument.

The patterns come from a grammar of Java's regex syntax (:func:`_pattern`): literals and escaped
metacharacters, ``.``, ``\\d \\w \\s \\h \\v \\R`` and their negations, POSIX and ``java*``
classes and Unicode categories (``\\p{Alpha}``, ``\\p{Punct}``, ``\\p{javaLowerCase}``,
``\\p{Lu}``, ``\\P{..}``), classes with ranges, negation, nested classes (unions, negated or
not) and intersections (``&&``, under a ``^`` and nested too), greedy, lazy and possessive quantifiers, anchors (``^ $ \\A \\z \\Z \\b
\\B``), capturing, named, non-capturing, atomic and flag groups, lookahead and lookbehind, back
references by number and by name, inline flags anywhere (``(?i) (?s) (?m) (?x) (?u) (?d)`` and
``(?-i)``), ``\\Q..\\E`` and the escapes ``\\t \\n \\x41 \\x{..} \\uXXXX \\0oct \\cX \\e``; now
and then a broken pattern (:data:`_INVALID`). The texts are drawn from the same alphabet and
from strings the pattern is likely to match (each node also draws a matching sample), with
ASCII and non-ASCII letters whose case folding differs (Java's ``(?i)`` is ASCII-only without
``(?u)``), the line terminators Java knows (``\\r\\n``, ``\\r``, ``\\u0085``, ``\\u2028``) against
``.``, ``^`` and ``$``, a character beyond U+FFFF (a start index counts UTF-16 units), the empty
string and null.

Kept out of the way (docs/siddhi-differences.md, "Java regex features", and "A query that
throws on an event"): scripts and blocks, ``\\X``, ``\\G``, ``(?U)``, ``(?c)``, lookbehinds with an
alternative of no fixed width (Python's ``re`` has none; Java allows them); capturing groups where Java keeps a
capture from a failed path or backtracks repeated rounds in its own order (:func:`_group`);
characters beyond U+FFFF near lookbehinds and back references, and the letters a
case-insensitive back reference folds otherwise (:func:`_kept_out`); characters whose Unicode
data changed after Unicode 13 (the texts use old characters only); a back reference to a group
not closed yet inside a repetition; and, of the calls that may throw on the rows drawn, all but
one (:func:`family`). A constant regex is written between single quotes, so one holding a
quote, a control character or ``${`` is passed as an attribute instead (:func:`_quotable`).
"""
from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.differential.functions import function_case

#: the characters texts are made of: ASCII letters with their other case, letters whose case
#: folding is Unicode-only (é/É, ß, σ/ς/Σ, the long s and the Kelvin sign, dotted and dotless i),
#: digits (and an Arabic-Indic one: \d is ASCII in Java), punctuation, blanks, every line terminator
_ALPHABET = ("a", "b", "A", "B", "k", "K", "s", "S", "i", "I", "x", "0", "1", "9", " ", "\t", "_", "-", ".",
             ",", "!", "#", "é", "É", "ß", "σ", "ς", "Σ", "ſ", "\u212a", "ı", "İ", "\u0663", "\u00a0",
             "\u0301", "\n", "\r", "\r\n", "\u0085", "\u2028", "\U0001F600")
#: literal characters of patterns (written as themselves; outside a class ``-`` and ``,`` are plain)
_LITERALS = ("a", "b", "A", "B", "k", "s", "S", "i", "I", "x", "0", "1", " ", "_", "-", ",", "é", "É", "ß",
             "σ", "Σ", "ς")
_METAS = ".\\*+?()[]{}|^$"
_PREDEFINED = ("\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "\\h", "\\H", "\\v", "\\V")
_PROPERTIES = ("Lower", "Upper", "Alpha", "Digit", "Alnum", "Punct", "Graph", "Print", "Blank", "Cntrl",
               "XDigit", "Space", "ASCII", "javaLowerCase", "javaUpperCase", "javaWhitespace", "javaLetter",
               "javaDigit", "javaLetterOrDigit", "IsAlphabetic", "IsLetter", "IsDigit", "IsUppercase",
               "IsLowercase", "IsWhite_Space", "IsAlpha", "IsPunct", "IsPunctuation", "IsWord", "javaSpaceChar",
               "javaMirrored", "L", "Lu", "Ll", "IsLu", "N", "Nd", "P", "IsL", "gc=Lu", "LC", "Mn")
_FLAGS = "ismxud"
_ESCAPES = (("\\t", "\t"), ("\\n", "\n"), ("\\r", "\r"), ("\\f", "\f"), ("\\e", "\x1b"), ("\\x41", "A"),
            ("\\x{61}", "a"), ("\\x{1F600}", "\U0001F600"), ("\\u00e9", "é"), ("\\u00C9", "É"),
            ("\\0101", "A"), ("\\011", "\t"), ("\\cJ", "\n"), ("\\a", "\x07"))
#: patterns Java refuses (PatternSyntaxException)
_INVALID = ("(", "a)", "[a", "a{", "x{y}", "*a", "a**", "a{2,1}", "[z-a]", "\\", "a\\", "(?<n>a)(?<n>b)",
            "\\k<zz>", "\\p{Foo}", "\\x{110000}", "(?<1a>x)", "+", "[]", "a{99999999999}",
            "(?z)", "a{,3}", "[a-\\d]", "\\0", "(?<a_b>x)", "[\\b]", "\\ca\\c")


@dataclass
class _Builder:
    """The state of one pattern being drawn: its capturing groups and its names."""

    rng: random.Random
    groups: int = 0
    closed: list[int] = field(default_factory=list)
    names: dict[str, int] = field(default_factory=dict)
    x_mode: bool = False
    captures: bool = True  # whether a capturing group may be drawn here (see _group)


#: a node: its Java text and a drawer of a text it (probably) matches, given the groups' samples
_Node = tuple[str, Callable[[random.Random, dict[int, str]], str]]


def _const(text: str) -> Callable[[random.Random, dict[int, str]], str]:
    return lambda _rng, _seen: text


def _literal(b: _Builder) -> _Node:
    rng = b.rng
    roll = rng.random()
    if roll < 0.55:
        c = rng.choice(_LITERALS)
        if c == " " and b.x_mode:  # a blank is ignored in comments mode: escape it
            return "\\ ", _const(" ")
        return c, _const(c)
    if roll < 0.75:
        c = rng.choice(_METAS)
        return "\\" + c, _const(c)
    text, char = rng.choice(_ESCAPES)
    return text, _const(char)


def _single(b: _Builder) -> _Node:
    """One character: a literal, ``.``, a predefined class, a property or a class."""
    rng = b.rng
    roll = rng.random()
    if roll < 0.35:
        return _literal(b)
    if roll < 0.45:
        return ".", lambda r, _s: r.choice(_ALPHABET)[0]
    if roll < 0.6:
        return rng.choice(_PREDEFINED), lambda r, _s: r.choice(_ALPHABET)[0]
    if roll < 0.75:
        name = rng.choice(_PROPERTIES)
        return f"\\{rng.choice('pPp')}{{{name}}}", lambda r, _s: r.choice(_ALPHABET)[0]
    return _class(b, nested=False)


def _class_item(b: _Builder, nested: bool) -> tuple[str, list[str]]:
    """A member of a class: its text and characters it holds."""
    rng = b.rng
    roll = rng.random()
    if roll < 0.35:
        c = rng.choice(("a", "b", "k", "s", "S", "x", "0", "1", "_", "é", "É", "ß", "σ", " ", "ſ"))
        return c, [c]
    if roll < 0.55:
        lo, hi = rng.choice((("a", "f"), ("A", "Z"), ("0", "5"), ("a", "z"), ("\u00c0", "\u00ff"), ("α", "ω"),
                             ("!", "/")))
        return f"{lo}-{hi}", [lo, hi]
    if roll < 0.65:
        c = rng.choice("\\[]^-&.$")
        return "\\" + c, [c]
    if roll < 0.75:
        return rng.choice(("\\d", "\\w", "\\s", "\\h", "\\v", "\\D", "\\W", "\\S")), ["a", "1", " "]
    if roll < 0.85:
        return f"\\p{{{rng.choice(_PROPERTIES)}}}", ["a", "B", "1", "!"]
    if roll < 0.92 and not nested:  # a nested class: a union (negated, with its own &&, or not)
        text, draw = _class(b, nested=True)
        return text, [draw(rng, {}) for _ in range(3)]
    text, char = rng.choice(_ESCAPES[:10])
    return text, [char]


def _class_body(b: _Builder, nested: bool) -> tuple[str, list[str]]:
    items = [_class_item(b, nested) for _ in range(b.rng.randint(1, 2))]
    return "".join(t for t, _ in items), [c for _, cs in items for c in cs]


def _class(b: _Builder, nested: bool) -> _Node:
    rng = b.rng
    negated = rng.random() < 0.3
    body, chars = _class_body(b, nested)
    if rng.random() < 0.25:  # an intersection (under a ^ too: it negates the whole)
        other, _ = _class_body(b, nested=True)
        body += "&&" + (f"[{'^' if rng.random() < 0.5 else ''}{other}]" if rng.random() < 0.6 else other)
    text = f"[{'^' if negated else ''}{body}]"
    if negated:
        return text, lambda r, _s: r.choice(_ALPHABET)[0]
    return text, lambda r, _s: r.choice(chars)


def _quantified(b: _Builder, depth: int) -> _Node:
    rng = b.rng
    quantifier, low, high = "", 1, 1
    if rng.random() >= 0.55:
        low, high = rng.choice(((0, 1), (0, 3), (1, 3), (2, 2), (1, 1), (0, 2), (2, 4)))
        quantifier = rng.choice({(0, 1): ("?",), (0, 3): ("*",), (1, 3): ("+",)}.get(
            (low, high), (f"{{{low}}}" if low == high else f"{{{low},{high}}}", f"{{{low},}}")))
        quantifier += rng.choice(("", "", "?", "+"))  # greedy, lazy, possessive
    # a possessive quantifier, or one of at least two rounds, takes no capturing group (see _group)
    no_capture = (len(quantifier) > 1 and quantifier.endswith("+")) or low >= 2
    text, draw = _atom(b, depth, quantified=bool(quantifier), no_capture=no_capture)
    if not quantifier:
        return text, draw
    if quantifier[0] in "?*+" and text.endswith(("?", "*", "+", "}")):
        text = f"(?:{text})"

    def sample(r: random.Random, seen: dict[int, str]) -> str:
        return "".join(draw(r, seen) for _ in range(r.randint(low, high)))

    return text + quantifier, sample


def _atom(b: _Builder, depth: int, quantified: bool = False, no_capture: bool = False) -> _Node:
    rng = b.rng
    roll = rng.random()
    if depth <= 0 or roll < 0.6:
        return _single(b)
    if roll < 0.85:
        return _group(b, depth - 1, quantified, no_capture)
    if roll < 0.9 and b.closed:  # a back reference, by number or by name
        number = rng.choice(b.closed)
        named = [name for name, k in b.names.items() if k == number]
        text = f"\\k<{named[0]}>" if named and rng.random() < 0.5 else f"\\{number}"
        return text, lambda _r, seen: seen.get(number, "")
    if roll < 0.95:
        text = "\\Q" + rng.choice(("a.b", "*+", "(x)", "\\d", "a|b", " ")) + rng.choice(("\\E", "\\E", ""))
        inner = text[2:-2] if text.endswith("\\E") else text[2:]
        return text, _const(inner)
    return rng.choice(("^", "$", "\\A", "\\z", "\\Z", "\\b", "\\B", "\\R")), \
        lambda r, _s: r.choice(("", "", "\n", "\r\n"))


def _flags(rng: random.Random) -> str:
    on = "".join(rng.sample(_FLAGS, rng.randint(1, 2)))
    off = "".join(rng.sample(_FLAGS, rng.randint(1, 2))) if rng.random() < 0.2 else ""
    return on + (f"-{off}" if off else "")


def _group(b: _Builder, depth: int, quantified: bool, no_capture: bool) -> _Node:
    """A group. Java keeps a group's capture from a path that failed when the group sits in a
    quantified group, an atomic group or a lookaround, or takes a possessive quantifier (its
    ``GroupTail`` restores the old capture only on a plain backtrack): a later back reference
    or ``regex:group`` sees it, Python's ``re`` does not. And a group repeated at least twice
    backtracks its rounds in another order in Java (``(a*?){2}x`` on ``ax``: group 1 is ``''``
    in Java, ``a`` in Python). Capturing groups are drawn only where neither shows (documented
    differences): ``no_capture`` for one this group's quantifier rules out."""
    rng = b.rng
    kind = rng.choice(("capture", "capture", "named", "plain", "atomic", "ahead", "behind", "flags"))
    if kind in ("capture", "named") and (not b.captures or no_capture):
        kind = "plain"
    outer = b.captures
    b.captures = outer and not quantified and kind not in ("atomic", "ahead", "behind")
    try:
        return _group_body(b, depth, kind)
    finally:
        b.captures = outer


def _group_body(b: _Builder, depth: int, kind: str) -> _Node:
    rng = b.rng
    if kind == "behind":  # each alternative of a fixed width (Srota's lookbehind: a documented gap)
        # (a blank escaped: in comments mode, which a scoped flag may turn on, it would be no width)
        alternatives = [re.sub(r"(?<!\\) ", r"\\ ", "".join(_single(b)[0] for _ in range(rng.randint(1, 3))))
                        for _ in range(rng.randint(1, 2))]
        return f"(?<{rng.choice('=!')}{'|'.join(alternatives)})", _const("")
    if kind == "capture" or kind == "named":
        b.groups += 1
        number = b.groups
        name = None
        if kind == "named":
            name = f"{rng.choice(('g', 'name', 'x'))}{number}"
            b.names[name] = number
        text, draw = _alternation(b, depth)
        b.closed.append(number)

        def capture(r: random.Random, seen: dict[int, str]) -> str:
            seen[number] = draw(r, seen)
            return seen[number]

        return f"({'?<' + name + '>' if name else ''}{text})", capture
    text, draw = _alternation(b, depth)
    if kind == "ahead":
        return f"(?{rng.choice('=!')}{text})", _const("")
    opener = {"plain": "(?:", "atomic": "(?>", "flags": f"(?{_flags(rng)}:"}[kind]
    return opener + text + ")", draw


def _sequence(b: _Builder, depth: int) -> _Node:
    rng = b.rng
    parts: list[_Node] = []
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.12:  # an inline flag in mid-pattern
            flags = _flags(rng)
            b.x_mode = "x" in flags.split("-")[0] or (b.x_mode and "x" not in flags.split("-", 1)[-1])
            parts.append((f"(?{flags})", _const("")))
        parts.append(_quantified(b, depth))

    def sample(r: random.Random, seen: dict[int, str]) -> str:
        return "".join(draw(r, seen) for _, draw in parts)

    return "".join(t for t, _ in parts), sample


def _alternation(b: _Builder, depth: int) -> _Node:
    branches = [_sequence(b, depth) for _ in range(1 if b.rng.random() < 0.7 else b.rng.randint(2, 3))]

    def sample(r: random.Random, seen: dict[int, str]) -> str:
        return r.choice(branches)[1](r, seen)

    return "|".join(t for t, _ in branches), sample


def _pattern(rng: random.Random) -> tuple[str, int, Callable[[random.Random], str]]:
    """A random Java regex, its number of groups and a drawer of texts it probably matches."""
    if rng.random() < 0.06:
        return rng.choice(_INVALID), 0, lambda r: _text(r)
    b = _Builder(rng)
    prefix = f"(?{_flags(rng)})" if rng.random() < 0.25 else ""
    if prefix:
        b.x_mode = "x" in prefix.split("-")[0]
    text, draw = _alternation(b, rng.randint(0, 2))
    return prefix + text, b.groups, lambda r: draw(r, {})


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 8)))


def _texts(rng: random.Random, draw: Callable[[random.Random], str]) -> str | None:
    roll = rng.random()
    if roll < 0.05:
        return None
    if roll < 0.1:
        return ""
    if roll < 0.6:  # a match, now and then with something around it
        core = draw(rng)
        if rng.random() < 0.4:
            core = _text(rng)[:3] + core + _text(rng)[:3]
        return core
    if roll < 0.75:  # a match, one character changed in case or replaced
        chars = list(draw(rng))
        if chars:
            k = rng.randrange(len(chars))
            chars[k] = chars[k].swapcase() if rng.random() < 0.5 else rng.choice(_ALPHABET)
        return "".join(chars)
    return _text(rng)


def _kept_out(pattern: str) -> str:
    """The characters kept out of the texts of ``pattern`` (documented differences): one beyond
    U+FFFF where there is a lookbehind (Java measures its reach in UTF-16 units, and over such a
    character fails where it should match) or a back reference (a case-insensitive one reads past
    the end of the text after one: ``StringIndexOutOfBoundsException``); and where there is a back
    reference, the letters whose lower case is not their upper case's (the long s, final sigma,
    dotless i), which a case-insensitive one folds as Java does only in Java."""
    backref = re.search(r"\\[1-9]|\\k<", pattern) is not None
    lookbehind = "(?<=" in pattern or "(?<!" in pattern
    return ("\U0001F600" if backref or lookbehind else "") + ("ſςı" if backref else "")


def _quotable(pattern: str) -> bool:
    """Whether ``pattern`` can be written as a SiddhiQL string constant: there is no escape in
    one, and Siddhi reads ``${name}`` in an app as a system or environment variable (an app
    naming none fails to parse; one naming a variable depends on the machine)."""
    return "${" not in pattern and not any(c in "'\"" or c < " " for c in pattern)


def _may_fail(kind: str, row: list[Any], start: int | None, invalid: bool) -> bool:
    """Whether a call of ``kind`` can throw on ``row`` (``start``: a constant start index or group
    id, None for the attribute ``i``), which drops the event."""
    p, s, i = row
    value = i if start is None else start
    if p is None or invalid:
        return True
    if kind == "find3":  # a start index outside 0..length (in UTF-16 units) is an error
        return s is not None and value is not None and not 0 <= value <= len(s.encode("utf-16-le")) // 2
    if kind == "group":  # null arguments and a negative group are errors
        return s is None or value is None or value < 0
    return False


def family(rng: random.Random) -> dict[str, Any]:
    """``regex:`` calls over a pattern ``p`` (or a constant), a text ``s`` and an int ``i``.

    A call that throws drops the event, and in Siddhi the exception leaves the stream's junction
    before the event reaches the later queries (docs/siddhi-differences.md, "A query that throws
    on an event"): of the calls that can throw on the rows drawn, only the last query keeps one."""
    patterns = [_pattern(rng) for _ in range(rng.randint(1, 2))]
    pat, groups, _draw = patterns[0]
    constant = rng.random() < 0.4 and _quotable(pat)
    regex = f"'{pat}'" if constant else "p"
    rows = []
    uses_start = rng.random() < 0.5
    for _ in range(rng.randint(3, 10)):
        pat_k, groups_k, draw_k = patterns[0] if constant else rng.choice(patterns)
        s = _texts(rng, draw_k)
        if s:
            s = "".join(c for c in s if c not in _kept_out(pat_k))
        if uses_start:
            i = rng.randint(-1, len(s or "") + 2)  # a start index in and out of range
        else:
            i = rng.randint(-1, groups_k + 1)  # a group id in and out of range
        rows.append([None if rng.random() < 0.03 else pat_k, s, None if rng.random() < 0.04 else i])
    invalid = {p for p, _g, _d in patterns if p in _INVALID}
    calls: list[tuple[str, str, bool]] = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(("find", "find3", "group", "lookingAt", "matches"))
        start = None if rng.random() < 0.7 else rng.choice((0, 1, 2, 5) if kind == "find3" else
                                                          tuple(range(groups + 2)))
        arg = "i" if start is None else str(start)
        text = {"find3": f"regex:find({regex}, s, {arg})", "group": f"regex:group({regex}, s, {arg})"}.get(
            kind, f"regex:{kind}({regex}, s)")
        fails = any(_may_fail(kind, row if not constant else [pat, *row[1:]], start, row[0] in invalid)
                    for row in rows)
        calls.append((text, kind, fails))
    safe = [text for text, _kind, fails in calls if not fails]
    risky = [text for text, _kind, fails in calls if fails]
    expressions = list(dict.fromkeys(safe + risky[:1]))
    return function_case(rng, [("p", "string"), ("s", "string"), ("i", "int")], expressions, rows)
