"""The ``regex:`` namespace (siddhi-execution-regex): ``find``, ``group``, ``lookingAt``, ``matches``.

Patterns are Java regular expressions.  :func:`java_regex` translates the Java syntax Python's
``re`` spells differently (``(?<name>...)``, ``\\p{Alpha}`` and the other POSIX classes, the
Unicode general categories ``\\p{L}``/``\\p{Lu}``/``\\p{IsLu}``/``\\p{gc=Lu}``, ``\\z``/``\\Z``,
``\\Q...\\E``, ``\\h``, ``\\v``, ``\\e``, ``\\R``, ``\\cX``, ``\\0nnn``, inline flags in mid-pattern,
nested classes (unions), intersections ``[a-z&&[^b]]``, back references to groups not yet
closed) and compiles with ``re.ASCII``, because Java's ``\\d``, ``\\w``, ``\\s`` and
case-insensitivity are ASCII by default (its ``\\b`` is not: it knows every letter and digit).
An unescaped ``{`` that is no quantifier is an error, as in Java.  :func:`java_replacement` and
:func:`java_split` give ``String.replaceAll``'s ``$1``/``${name}`` references (read only at a
match, as Java reads them) and ``String.split``'s dropping of trailing empty strings.  Start
indexes count UTF-16 units (:func:`utf16_units`).

Deliberate departures: scripts and blocks (``\\p{IsLatin}``, ``\\p{InGreek}``), ``\\X``, ``\\G``,
``&&`` in a nested class or a negated one, and negated nested classes are rejected as invalid;
``(?U)`` is ignored; a back reference inside a repetition to a group closed only later matches
nothing; the categories are Python's Unicode version's.
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

_POSIX = {
    "Lower": "a-z", "Upper": "A-Z", "ASCII": "\\x00-\\x7f", "Alpha": "a-zA-Z", "Digit": "0-9",
    "Alnum": "a-zA-Z0-9", "Punct": "!-/:-@\\[-`{-~", "Graph": "!-~", "Print": " -~", "Blank": " \\t",
    "Cntrl": "\\x00-\\x1f\\x7f", "XDigit": "0-9a-fA-F", "Space": " \\t\\n\\x0b\\f\\r",
    "IsAlphabetic": "^\\W\\d_", "IsDigit": "0-9", "IsWhite_Space": " \\t\\n\\x0b\\f\\r",
    "javaWhitespace": " \\t\\n\\x0b\\f\\r\\x1c-\\x1f",
}
#: the classes above that are Unicode in Java (outside [...] they match every letter, inside only ASCII ones;
#: the general categories, ``\\p{L}`` and ``\\p{Lu}``, are :func:`_category`'s)
_UNICODE_CLASSES = frozenset({"IsAlphabetic"})
_H = " \\t\\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000"
_V = "\\n\\x0b\\f\\r\\x85\\u2028\\u2029"


#: Java's inline flags, ``(?iu)`` or ``(?i-u:...)``; Python has no ``d`` (UNIX_LINES) and no ``U``,
#: and its ``u`` (Unicode matching) clashes with ``re.ASCII``, where Java's ``u`` is UNICODE_CASE
_JAVA_FLAGS = re.compile(r"\(\?([idmsuxU]*)(?:-([idmsuxU]*))?([:)])")
_ASCII_DIGITS = "0123456789"
_QUANTIFIER = re.compile(r"\{\d+(?:,\d*)?}")
_OCTAL = re.compile(r"\\0([0-3][0-7]{2}|[0-7]{1,2})")


#: Unicode general categories Java's \\p{..} names (``Lu``, ``IsLu``, ``gc=Lu``, ``L``)
_CATEGORY_NAME = re.compile(r"(?:Is|gc=|general_category=)?([LMNPSZC][a-z]?)")


def _category(name: str, negate: bool = False) -> str | None:
    """The class body (ranges of ``\\U`` escapes) of the Unicode general category ``name``
    (``Lu``, or ``L`` for all of ``Lu``, ``Ll``, ...), or of every other code point (``negate``),
    or None when ``name`` names none."""
    m = _CATEGORY_NAME.fullmatch(name)
    if m is None:
        return None
    ranges = _category_ranges().get(m.group(1))
    if ranges is None:
        return None
    if negate:
        bounds = [-1] + [x for a, b in ranges for x in (a, b)] + [0x110000]
        ranges = [(bounds[k] + 1, bounds[k + 1] - 1) for k in range(0, len(bounds), 2) if bounds[k] + 1 < bounds[k + 1]]
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


@functools.cache
def _category_ranges() -> dict[str, list[tuple[int, int]]]:
    """Every general category's code-point ranges, and each major class's (``L``: every letter);
    computed once, on the first pattern that needs one (Python's ``re`` has no ``\\p``)."""
    import unicodedata

    ranges: dict[str, list[tuple[int, int]]] = {}
    for cp in range(0x110000):
        cat = unicodedata.category(chr(cp))
        for key in (cat, cat[0]):
            spans = ranges.setdefault(key, [])
            if spans and spans[-1][1] == cp - 1:
                spans[-1] = (spans[-1][0], cp)
            else:
                spans.append((cp, cp))
    return ranges


def _class_span(src: str, i: int) -> int:
    """The index after the class that starts at ``src[i]`` (a ``[``), nested classes and escapes
    included; ``len(src) + 1`` when it is not closed."""
    depth, j, n = 0, i, len(src)
    while j < n:
        c = src[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            depth += 1
            j += 2 if src.startswith("[^", j) else 1
            if j < n and src[j] == "]":  # a leading ']' is literal in Java
                j += 1
            continue
        if c == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return n + 1


def _intersection(src: str, i: int) -> tuple[int, list[str]] | None:
    """For a class ``[A&&B...]`` at ``src[i]``: the index after it and its operands; None for a
    class without ``&&`` at its own level."""
    end = _class_span(src, i)
    if end > len(src):
        return None
    body_start = i + 1
    if src.startswith("^", body_start):
        if "&&" in src[body_start:end - 1]:
            raise re.error("a negated class with && is not supported")
        return None
    parts, depth, j, start = [], 0, body_start, body_start
    while j < end - 1:
        c = src[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            depth += 1
        elif c == "]" and j > start:
            depth -= 1
        elif c == "&" and depth == 0 and src.startswith("&&", j):
            parts.append(src[start:j])
            j = start = j + 2
            continue
        j += 1
    if not parts:
        return None
    parts.append(src[start:end - 1])
    if not all(parts):
        raise re.error("an empty operand of && in a class")
    return end, parts


def _python_flags(on: str, off: str | None, close: str) -> str:
    """Java's inline flag group as Python's: the flags Python has no (compatible) form of are dropped."""
    on, off = (re.sub("[duU]", "", f or "") for f in (on, off))
    if not on and not off:
        return "(?:" if close == ":" else ""
    return f"(?{on}{'-' + off if off else ''}{close}"


def _translate(src: str) -> str:
    out: list[str] = []
    i, n = 0, len(src)
    in_class = 0
    # per open group, how many scoped flag groups ``(?i:`` it holds: Java's ``a(?i)b`` turns the
    # flag on up to the end of the enclosing group, which Python spells ``a(?i:b)``
    scoped = [0]
    groups: list[int] = [0]  # per open group, its number (0: not capturing)
    opened, closed = 0, set[int]()  # capturing groups opened so far; those closed
    while i < n:
        c = src[i]
        if c == "\\" and i + 1 < n:
            d = src[i + 1]
            if d == "Q":
                end = src.find("\\E", i + 2)
                end = n if end < 0 else end
                out.append(re.escape(src[i + 2:end]))
                i = end + 2
                continue
            if d in "pP" and i + 2 < n:
                if src[i + 2] == "{":
                    close = src.find("}", i + 3)
                    name = src[i + 3:close] if close > 0 else ""
                    i = close + 1 if close > 0 else n
                else:
                    name, i = src[i + 2], i + 3
                name = name[2:] if name.startswith("Is") and name[2:] in _POSIX else name
                body = _POSIX.get(name)
                # inside [...] a negated category is written as its complement's ranges
                complement = body is None and in_class > 0 and d == "P"
                if body is None:
                    body = _category(name, negate=complement)
                if body is None:
                    raise re.error(f"unsupported character class \\{d}{{{name}}}")
                negate = (d == "P" and not complement) != body.startswith("^")
                body = body.lstrip("^")
                if in_class:
                    if negate:
                        raise re.error(f"negated class \\{d}{{{name}}} inside [...] is not supported")
                    out.append(body)
                elif name in _UNICODE_CLASSES:  # Unicode letters, where the POSIX classes are ASCII
                    out.append(f"(?u:[{'^' if negate else ''}{body}])")
                else:
                    out.append(f"[{'^' if negate else ''}{body}]")
                continue
            if d == "c" and i + 2 < n:  # \cX: the control character X ^ 64
                out.append(f"\\x{ord(src[i + 2]) ^ 64:02x}")
                i += 3
                continue
            octal = _OCTAL.match(src, i) if d == "0" else None
            if octal:  # Java's \0n, \0nn, \0mnn (Python reads \0 with up to two more digits)
                out.append(f"\\x{int(octal.group(1), 8):02x}")
                i = octal.end()
                continue
            if d in "123456789" and not in_class:  # a back reference, read as Java reads it
                ref, i = int(d), i + 2
                while i < n and src[i] in _ASCII_DIGITS and ref * 10 + int(src[i]) <= opened:
                    ref, i = ref * 10 + int(src[i]), i + 1
                # Java compiles a reference to a group not (yet) closed, which matches nothing
                # then; Python rejects it
                out.append(f"(?:\\{ref})" if ref in closed else "(?!)")
                continue
            if d in "bB" and not in_class:  # Java's word boundary knows every letter and digit
                out.append(f"(?u:\\{d})")
                i += 2
                continue
            if d == "R" and not in_class:
                out.append("(?:\r\n|[\n\x0b\f\r\x85\u2028\u2029])")
                i += 2
                continue
            simple = {"z": "\\Z", "Z": "(?=\\n?\\Z)", "e": "\\x1b", "h": f"[{_H}]", "H": f"[^{_H}]",
                      "v": f"[{_V}]", "V": f"[^{_V}]"}
            if d in simple:
                text = simple[d]
                if in_class and text.startswith("["):
                    if text.startswith("[^"):
                        raise re.error(f"\\{d} inside [...] is not supported")
                    text = text[1:-1]
                elif in_class and d in "zZ":
                    raise re.error(f"\\{d} inside [...]")
                out.append(text)
                i += 2
                continue
            out.append(src[i:i + 2])
            i += 2
            continue
        if in_class:
            if c == "[":  # Java's nested class is a union: its members join the outer class
                if src.startswith("[^", i):
                    raise re.error("a negated class inside [...] is not supported")
                in_class += 1
                i += 1
                if i < n and src[i] == "]":  # a leading ']' is literal in Java
                    out.append("\\]")
                    i += 1
                continue
            if c == "&" and src.startswith("&&", i):  # only in a nested class (see _intersection)
                raise re.error("character-class intersection (&&) in a nested class is not supported")
            if c == "]" and not (out and out[-1] in ("[", "[^")):
                in_class -= 1
                if in_class == 0:
                    out.append(c)
            else:
                out.append(c)
            i += 1
            continue
        if c == "[":
            operands = _intersection(src, i)
            if operands is not None:  # [A&&B]: one character that both classes match
                end, parts = operands
                classes = [_translate(p if _class_span(p, 0) == len(p) else f"[{p}]") for p in parts]
                out.append("(?:" + "".join(f"(?={c})" for c in classes[1:]) + classes[0] + ")")
                i = end
                continue
            in_class = 1
            if src.startswith("[^", i):
                out.append("[^")
                i += 2
            else:
                out.append("[")
                i += 1
            if i < n and src[i] == "]":  # a leading ']' is literal in Java too
                out.append("\\]")
                i += 1
            continue
        if c == "(" and src.startswith("(?<", i) and i + 3 < n and src[i + 3] not in "=!":
            out.append("(?P<")
            scoped.append(0)
            opened += 1
            groups.append(opened)
            i += 3
            continue
        flags = _JAVA_FLAGS.match(src, i) if c == "(" else None
        if flags:
            on, off, closer = flags.groups()
            if closer == ")" and (out or len(scoped) > 1):  # not at the start: scoped to the group
                text = _python_flags(on, off, ":")
                if text != "(?:":
                    out.append(text)
                    scoped[-1] += 1
            else:
                out.append(_python_flags(on, off, closer))
                if closer == ":":
                    scoped.append(0)
                    groups.append(0)
            i = flags.end()
            continue
        if c == "(":
            scoped.append(0)
            capturing = not src.startswith("(?", i)
            opened += capturing
            groups.append(opened if capturing else 0)
        elif c == ")" and len(scoped) > 1:
            out.append(")" * scoped.pop())
            closed.add(groups.pop())
        if c == "{" and not _QUANTIFIER.match(src, i):
            raise re.error("Illegal repetition", pattern=src, pos=i)  # Python would read it literally
        out.append(c)
        i += 1
    return "".join(out) + ")" * scoped[0]


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
            start = len(from_utf16_units(units[:start]))
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
