"""The ``regex:`` namespace (siddhi-execution-regex): ``find``, ``group``, ``lookingAt``, ``matches``.

Patterns are Java regular expressions.  :func:`java_regex` translates the Java syntax Python's
``re`` spells differently (``(?<name>...)``, ``\\p{Alpha}`` and the other POSIX classes,
``\\z``/``\\Z``, ``\\Q...\\E``, ``\\h``, ``\\v``, ``\\e``) and compiles with ``re.ASCII``, because
Java's ``\\d``, ``\\w``, ``\\s``, ``\\b`` and case-insensitivity are ASCII by default.
:func:`java_replacement` and :func:`java_split` give ``String.replaceAll``'s ``$1``/``${name}``
references and ``String.split``'s dropping of trailing empty strings.

Deliberate departures: character-class unions and intersections (``[a-z&&[^e]]``) and the
Unicode ``\\p{javaLowerCase}``-style classes are not translated (such a pattern is rejected as
invalid); strings are indexed by code point, not by UTF-16 unit.
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
    "L": "^\\W\\d_", "IsAlphabetic": "^\\W\\d_", "IsDigit": "0-9", "IsWhite_Space": " \\t\\n\\x0b\\f\\r",
    "javaWhitespace": " \\t\\n\\x0b\\f\\r\\x1c-\\x1f",
}
_H = " \\t\\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000"
_V = "\\n\\x0b\\f\\r\\x85\\u2028\\u2029"


def _translate(src: str) -> str:
    out: list[str] = []
    i, n = 0, len(src)
    in_class = 0
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
                if body is None:
                    raise re.error(f"unsupported character class \\{d}{{{name}}}")
                negate = (d == "P") != body.startswith("^")
                body = body.lstrip("^")
                if in_class:
                    if negate:
                        raise re.error(f"negated class \\{d}{{{name}}} inside [...] is not supported")
                    out.append(body)
                else:
                    out.append(f"[{'^' if negate else ''}{body}]")
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
            if c == "[":
                out.append("\\[")  # Java's nested class; Python would warn: treat as literal
            elif c == "]" and not (out and out[-1] in ("[", "[^")):
                in_class = 0
                out.append(c)
            else:
                out.append(c)
            i += 1
            continue
        if c == "[":
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
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


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
        elif template[i + 1].isdigit():
            j = i + 2
            while j < n and template[j].isdigit():
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
        if source is None or start is None:
            return False
        if start < 0 or start > len(source):
            raise IndexError(f"Illegal start index {start}")
        return get(regex).search(source, start) is not None

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
