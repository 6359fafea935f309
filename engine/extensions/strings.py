"""The ``str:`` namespace: Siddhi's siddhi-execution-string, as built-in extensions.

Functions follow the Java implementations argument by argument: which null arguments give a
value (``str:contains(null, x)`` is false, ``str:concat`` skips nulls) and which are errors
(most: the event is then logged and dropped, or routed to the fault stream), and the Java
string semantics (``String.split`` drops trailing empty strings, ``trim`` strips every
character up to U+0020, ``strcmp`` is ``compareTo``, numbers print as Java prints them).
Regular expressions are Java's (see :mod:`srota.engine.extensions.regex`).

Strings are indexed, measured and compared in UTF-16 units, as Java's are (``str:length``,
``str:charAt``, ``str:substr``, ``str:locate``, ``str:strcmp``, ``str:hex``): a character beyond
U+FFFF counts two, and an index between its surrogates splits it.  ``str:locate(s, t, start)``
gives ``start - 1`` when ``s`` is absent, as Siddhi does (it adds ``start`` to ``indexOf``'s -1).

Deliberate departure: ``str:groupConcat`` with one argument removes the expired value (Siddhi
looks up the string "0" instead and fails with a NullPointerException).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from srota.engine.aggregators import AggregatorState
from srota.engine.event import Event
from srota.engine.expression import ArgInfo
from srota.engine.extensions._checks import (
    ALL,
    BOOL,
    INT,
    OBJECT,
    PRIMITIVES,
    REPEAT,
    STRING,
    ChunkProcessor,
    aggregator,
    err,
    function,
    is_literal,
    java_str,
    plain_function,
    stream_processor,
)
from srota.engine.extensions.regex import (
    compile_or_error,
    from_utf16_units,
    java_lower,
    java_regex,
    java_replace,
    java_split,
    java_upper,
    pattern_getter,
    utf16_units,
)
from srota.engine.javanumbers import JAVA_SPACE, parse_integer
from srota.engine.registry import Param
from srota.grammar.model import Attribute, AttrType

_ORDINALS = ("First", "Second", "Third", "Fourth")


def _java_trim(s: str) -> str:
    """``String.trim()``: every character up to U+0020 off both ends, and nothing else (Python's
    ``strip()`` keeps controls and takes U+00A0, U+2003 ...)."""
    return s.strip(JAVA_SPACE)


def _no_nulls(name: str, *values: Any) -> None:
    for i, v in enumerate(values):
        if v is None:
            raise ValueError(f"Invalid input given to str:{name}() function. "
                             f"{_ORDINALS[i]} argument cannot be null")


def _not_null(name: str, v: Any) -> None:
    if v is None:
        raise ValueError(f"Invalid input given to str:{name}() function. The argument cannot be null")


def _utf16_len(s: str) -> int:
    return len(utf16_units(s))


def _one_string(name: str, doc: str, fn: Callable[[str], Any], returns: AttrType, example: tuple[str, str]) -> None:
    def run(v: Any) -> Any:
        if v is None:
            _not_null(name, v)
        return fn(v)

    plain_function("str", name, (Param("input.string", STRING, dynamic=True, doc="The input string."),),
                   returns=returns, doc=doc + " A null argument is an error.", examples=(example,))(run)


_one_string("length", "The number of characters (UTF-16 units) of the string.", _utf16_len, AttrType.INT,
            ("str:length('Hello World')", "11"))
_one_string("lower", "The string in lower case.", str.lower, AttrType.STRING, ("str:lower('WSO2 cep ')", "'wso2 cep '"))
_one_string("upper", "The string in upper case.", str.upper, AttrType.STRING,
            ("str:upper('Hello World')", "'HELLO WORLD'"))
_one_string("reverse", "The string reversed.", lambda s: s[::-1], AttrType.STRING,
            ("str:reverse('Hello World')", "'dlroW olleH'"))
_one_string("trim", "The string without leading and trailing whitespace (characters up to U+0020).",
            _java_trim, AttrType.STRING, ("str:trim('  AbCDefghiJ KLMN  ')", "'AbCDefghiJ KLMN'"))


def _hex(s: str) -> str:
    units = s.encode("utf-16-be")
    return "".join(format(int.from_bytes(units[i:i + 2], "big"), "x") for i in range(0, len(units), 2))


def _java_parse_int(text: str, radix: int = 10) -> int:
    """``Integer.parseInt(text, radix)`` (engine/javanumbers.py: no spaces or underscores, which
    Python's ``int`` takes)."""
    return parse_integer(text, -2**31, 2**31 - 1, radix)


def _unhex(s: str) -> str:
    out = []
    for i in range(0, len(s), 2):
        if i + 2 > len(s):
            raise IndexError(f"begin {i}, end {i + 2}, length {len(s)}")
        out.append(chr(_java_parse_int(s[i:i + 2], 16)))  # (a negative code, "-1", is an error in both)
    return "".join(out)


_one_string("hex", "The hexadecimal form of each character code, concatenated (Integer.toHexString).", _hex,
            AttrType.STRING, ("str:hex('MySQL')", "'4d7953514c'"))
_one_string("unhex", "The characters whose two-digit hexadecimal codes (Integer.parseInt's) make up the string.", _unhex,
            AttrType.STRING, ("str:unhex('4d7953514c')", "'MySQL'"))


@plain_function("str", "charAt",
                (Param("input.value", STRING, dynamic=True, doc="The input string."),
                 Param("index", INT, dynamic=True, doc="The position of the character (from 0).")),
                returns=AttrType.STRING,
                doc="The character at the index, as a string. Null arguments and an index outside the string are errors.",
                examples=(("str:charAt('WSO2', 1)", "'S'"),))
def _char_at(s: Any, i: Any) -> str:
    _no_nulls("charAt", s, i)
    units = utf16_units(s)
    if not 0 <= i < len(units):
        raise IndexError(f"Index argument {i} is negative or not less than the length of the given string {s}")
    return from_utf16_units(units[i])


@plain_function("str", "charFrequency",
                (Param("input.string", STRING, dynamic=True, doc="The input string."),
                 Param("char", STRING, dynamic=True, doc="The character to count (a one-character string).")),
                returns=AttrType.LONG,
                doc="How often the character occurs in the string. Null arguments, or a char that is not "
                    "one character, are errors.",
                examples=(("str:charFrequency('WSO2,ABM,NSFT', ',')", "2"),))
def _char_frequency(s: Any, c: Any) -> int:
    _no_nulls("charFrequency", s, c)
    if len(utf16_units(c)) != 1:  # Java's length(): a character beyond U+FFFF is two
        raise ValueError("Invalid input given to str:charFrequency() function. `char` parameter is "
                         f"expected to be a character, found '{c}'.")
    return s.count(c)


@function("str", "coalesce", (Param("arg", ALL, dynamic=True, doc="Values of one type."),),
          overloads=(("arg", REPEAT),), returns="the arguments' type",
          doc="The first argument that is not null (all arguments must have one type). With one "
              "argument, always null (as Siddhi's).",
          examples=(("str:coalesce(null, 'BBB', 'CCC')", "'BBB'"),))
def _coalesce(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    first = infos[0].type
    for i, a in enumerate(infos):
        if a.type != first:
            raise err(f"str:coalesce(): argument {i + 1} is {a.type.value}, but the first is {first.value}; "
                      "every argument must have one type")

    def coalesce(*values: Any) -> Any:
        for v in values:
            if v is not None:
                return v
        return None

    if len(infos) == 1:
        # Siddhi calls a one-argument function's execute(Object), which coalesce leaves at null
        return first, lambda _v: None
    return first, coalesce


@function("str", "concat", (Param("arg", PRIMITIVES, dynamic=True, doc="Values to join (nulls are skipped)."),),
          overloads=(("arg", REPEAT),), returns=AttrType.STRING,
          doc="The arguments (at least two) as one string; null arguments are skipped.",
          examples=(("str:concat('D533', '8JU^', 'XYZ')", "'D5338JU^XYZ'"),))
def _concat(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    if len(infos) < 2:
        raise err(f"str:concat() function requires at least two arguments, but found only {len(infos)}")
    types = [a.type for a in infos]
    if all(t is AttrType.STRING for t in types):
        def concat_strings(*values: Any) -> str:
            return "".join(v for v in values if v is not None)
        return AttrType.STRING, concat_strings

    def concat(*values: Any) -> str:
        return "".join(java_str(v, t) for v, t in zip(values, types, strict=True) if v is not None)

    return AttrType.STRING, concat


@plain_function("str", "contains",
                (Param("input.string", STRING, dynamic=True, doc="The string to search in."),
                 Param("search.string", STRING, dynamic=True, doc="The string to look for.")),
                returns=AttrType.BOOL,
                doc="Whether the input contains the search string. A null input gives false; a null "
                    "search string is an error.",
                examples=(("str:contains('21 products are produced by WSO2 currently', 'WSO2')", "true"),))
def _contains(s: Any, sub: Any) -> bool:
    if s is None:
        return False
    if sub is None:
        raise ValueError("Invalid input given to str:contains() function. Second argument cannot be null")
    return sub in s


@plain_function("str", "equalsIgnoreCase",
                (Param("arg1", STRING, dynamic=True, doc="The first string."),
                 Param("arg2", STRING, dynamic=True, doc="The second string.")),
                returns=AttrType.BOOL,
                doc="Whether the strings are equal ignoring case (Java's per-character simple case mappings). "
                    "A null first argument is an error; a null second one gives false.",
                examples=(("str:equalsIgnoreCase('WSO2', 'wso2')", "true"),))
def _equals_ignore_case(a: Any, b: Any) -> bool:
    if a is None:
        raise ValueError("Invalid input given to str:equalsIgnoreCase() function. First argument cannot be null")
    if b is None or len(a) != len(b) or _utf16_len(a) != _utf16_len(b):
        return False
    # String.regionMatches(ignoreCase): per character, the simple (one-character) mappings of
    # Character.toUpperCase, then toLowerCase of those; so 'İ' matches 'i' and 'ﬅ' not 'ﬆ'
    return a == b or all(x == y or (ux := java_upper(x)) == (uy := java_upper(y))
                         or java_lower(ux) == java_lower(uy) for x, y in zip(a, b, strict=True))


_TEMPLATE_SPLIT = java_regex(r"\{\{|}}")


@function("str", "fillTemplate",
          (Param("template", STRING, dynamic=True, doc="Text with {{n}} (1-based argument) or {{key}} placeholders."),
           Param("replacement.type", PRIMITIVES, optional=True, dynamic=True,
                 doc="Values for {{1}}, {{2}}, ..."),
           Param("map", OBJECT, optional=True, dynamic=True, doc="A map whose entries fill {{key}}.")),
          overloads=(("template", "replacement.type", REPEAT), ("template", "map")),
          returns=AttrType.STRING,
          doc="The template with {{n}} replaced by the n-th following argument, or {{key}} by the "
              "map's value. A placeholder whose value is null keeps its inner text.",
          examples=(("str:fillTemplate('{{1}} is {{2}}', 'WSO2', 15)", "'WSO2 is 15'"),
                    ("str:fillTemplate('{{name}} is {{age}}', map:create('name', 'WSO2', 'age', 15))",
                     "'WSO2 is 15'")))
def _fill_template(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    if infos[1].type is AttrType.OBJECT and len(infos) > 2:
        raise err("str:fillTemplate() takes (STRING, MAP) or (STRING, STRING, ...)")
    fixed = java_split(_TEMPLATE_SPLIT, str(infos[0].value)) if is_literal(infos[0]) and infos[0].value else None
    types = [a.type for a in infos]

    def fill(template: Any, *values: Any) -> str:
        if template is None:
            raise ValueError("Invalid input given to str:fillTemplate() function. The template cannot be null")
        pieces = list(fixed) if fixed is not None else java_split(_TEMPLATE_SPLIT, template)
        if isinstance(values[0], dict):
            mapping = values[0]
            for i in range(1, len(pieces), 2):
                v = mapping.get(_java_trim(pieces[i]))
                if v is not None:
                    pieces[i] = java_str(v)
        else:
            for i in range(1, len(pieces), 2):
                index = _java_parse_int(_java_trim(pieces[i]))
                if not 0 <= index <= len(values):
                    raise IndexError(f"Index {index} out of bounds for length {len(values) + 1}")
                v = template if index == 0 else values[index - 1]
                if v is not None:
                    pieces[i] = java_str(v, types[index])
        return "".join(pieces)

    return AttrType.STRING, fill


@function("str", "locate",
          (Param("string.to.search.for", STRING, dynamic=True, doc="The string to look for."),
           Param("string.to.search.in", STRING, dynamic=True, doc="The string to search in."),
           Param("searching.start.position", INT, optional=True, default=0, dynamic=True,
                 doc="Where to start searching.")),
          returns=AttrType.INT,
          doc="The position of the first occurrence at or after the start position, -1 when absent. "
              "Null arguments and a start outside the string are errors.",
          examples=(("str:locate('@wso2.com', 'user@wso2.com')", "4"),))
def _locate(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    def locate(needle: Any, hay: Any, start: Any = None) -> int:
        _no_nulls("locate", needle, hay)
        hay, needle = utf16_units(hay), utf16_units(needle)
        if start is None:
            return hay.find(needle)
        if not 0 <= start <= len(hay):
            raise IndexError(f"begin {start}, end {len(hay)}, length {len(hay)}")
        # Siddhi searches hay.substring(start) and adds start to indexOf's answer, so an absent
        # string gives start - 1, not -1 (its own test expects -1, but the engine answers this)
        return hay[start:].find(needle) + start

    if len(infos) == 3:
        def locate3(needle: Any, hay: Any, start: Any) -> int:
            if start is None:
                raise ValueError("Invalid input given to str:locate() function. Third argument cannot be null")
            return locate(needle, hay, start)
        return AttrType.INT, locate3
    return AttrType.INT, locate


@function("str", "regexp",
          (Param("input.string", STRING, dynamic=True, doc="The string to match."),
           Param("regex", STRING, dynamic=True, doc="A Java regular expression.")),
          returns=AttrType.BOOL,
          doc="Whether the whole string matches the regular expression. Null arguments are errors.",
          examples=(("str:regexp('WSO2 abcdh', 'WSO(.*h)')", "true"),))
def _regexp(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    get = pattern_getter("str:regexp", infos[1])

    def regexp(s: Any, regex: Any) -> bool:
        _no_nulls("regexp", s, regex)
        return get(regex).fullmatch(s) is not None

    return AttrType.BOOL, regexp


@plain_function("str", "repeat",
                (Param("input.string", STRING, dynamic=True, doc="The string to repeat."),
                 Param("times", INT, dynamic=True, doc="How many times.")),
                returns=AttrType.STRING, doc="The string repeated the given number of times. Null arguments are errors.",
                examples=(("str:repeat('StRing 1', 3)", "'StRing 1StRing 1StRing 1'"),))
def _repeat(s: Any, times: Any) -> str:
    _no_nulls("repeat", s, times)
    return s * times


def _replace(name: str, count: int, doc: str, example: tuple[str, str]) -> None:
    @function("str", name,
              (Param("input.string", STRING, dynamic=True, doc="The input string."),
               Param("regex", STRING, dynamic=True, doc="A Java regular expression."),
               Param("replacement.string", STRING, dynamic=True,
                     doc="The replacement ($1 and ${name} refer to groups).")),
              returns=AttrType.STRING, doc=doc + " Null arguments are errors.", examples=(example,))
    def build(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
        def replace(s: Any, regex: Any, replacement: Any) -> str:
            _no_nulls(name, s, regex, replacement)
            # String.replaceAll/replaceFirst compile the regex at each call: an invalid constant
            # one fails each event, not the app (java_regex caches the compiled pattern)
            return java_replace(java_regex(regex), s, replacement, count)

        return AttrType.STRING, replace


_replace("replaceAll", 0, "The string with every match of the regular expression replaced.",
         ("str:replaceAll('hello hi hello', 'hello', 'test')", "'test hi test'"))
_replace("replaceFirst", 1, "The string with the first match of the regular expression replaced.",
         ("str:replaceFirst('hello WSO2 A hello', 'WSO2(.*)A', 'XXXX')", "'hello XXXX hello'"))


@function("str", "split",
          (Param("input.string", STRING, dynamic=True, doc="The string to split."),
           Param("split.string", STRING, dynamic=True, doc="A Java regular expression to split at."),
           Param("group.number", INT, dynamic=True, doc="Which piece to return (from 0).")),
          returns=AttrType.STRING,
          doc="One piece of the string split at the regular expression (Java's String.split: trailing "
              "empty pieces are dropped). Null arguments and a missing piece are errors.",
          examples=(("str:split('WSO2,ABM,NSFT', ',', 0)", "'WSO2'"),))
def _split(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    def split(s: Any, regex: Any, index: Any) -> str:
        _no_nulls("split", s, regex, index)
        pieces = java_split(java_regex(regex), s)  # String.split: an invalid regex fails the event
        if not 0 <= index < len(pieces):
            raise IndexError(f"Index argument {index} is negative or not less than the length of the "
                             f"given string {s}")
        return pieces[index]

    return AttrType.STRING, split


@plain_function("str", "strcmp",
                (Param("arg1", STRING, dynamic=True, doc="The first string."),
                 Param("arg2", STRING, dynamic=True, doc="The string to compare with.")),
                returns=AttrType.INT,
                doc="Java's compareTo: the difference of the first differing characters, else of the lengths. "
                    "Null arguments are errors.",
                examples=(("str:strcmp('AbCDefghiJ KLMN', 'Hello')", "-7"),))
def _strcmp(a: Any, b: Any) -> int:
    _no_nulls("strcmp", a, b)
    a, b = utf16_units(a), utf16_units(b)  # compareTo compares UTF-16 units
    for x, y in zip(a, b, strict=False):
        if x != y:
            return ord(x) - ord(y)
    return len(a) - len(b)


@function("str", "substr",
          (Param("input.string", STRING, dynamic=True, doc="The input string."),
           Param("begin.index", INT, optional=True, dynamic=True, doc="Where the substring starts."),
           Param("length", INT, optional=True, dynamic=True, doc="How many characters to take."),
           Param("regex", STRING, optional=True, dynamic=True, doc="A Java regular expression to find."),
           Param("group.number", INT, optional=True, default=0, dynamic=True,
                 doc="The group of the regex match to return.")),
          overloads=(("input.string", "begin.index"), ("input.string", "begin.index", "length"),
                     ("input.string", "regex"), ("input.string", "regex", "group.number")),
          returns=AttrType.STRING,
          doc="A substring: from begin.index (for length characters), or the first match of the "
              "regex (or one of its groups; '' when nothing matches). Null arguments and "
              "positions outside the string are errors.",
          examples=(("str:substr('AbCDefghiJ KLMN', 4, 2)", "'ef'"),
                    ("str:substr('WSO2D efghiJ KLMN', '^WSO2(.*)')", "'WSO2D efghiJ KLMN'"),
                    ("str:substr('WSO2 cep WSO2 XX E hi hello world', 'WSO2(.*)A(.*)', 2)", "''")))
def _substr(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    by_regex = infos[1].type is AttrType.STRING
    three = len(infos) == 3

    def check(s: Any, a: Any, b: Any) -> None:
        _no_nulls("substr", s, a)
        if three and b is None:
            raise ValueError("Invalid input given to str:substr() function. Third argument cannot be null")

    if by_regex:
        get = pattern_getter("str:substr", infos[1])

        def by_pattern(s: Any, regex: Any, group: Any = 0) -> str:
            check(s, regex, group)
            m = get(regex).search(s)
            if m is None:
                return ""
            if group < 0 or group > m.re.groups:
                raise IndexError(f"No group {group}")
            return m.group(group)  # an unmatched group gives null, as in Java

        return AttrType.STRING, by_pattern

    def by_index(s: Any, begin: Any, length: Any = None) -> str:
        check(s, begin, length)
        units = utf16_units(s)  # substring indexes UTF-16 units
        end = len(units) if not three else begin + length
        if begin < 0 or end > len(units) or begin > end:
            raise IndexError(f"begin {begin}, end {end}, length {len(units)}")
        return from_utf16_units(units[begin:end])

    return AttrType.STRING, by_index


# ---------------------------------------------------------------------------- groupConcat
class _GroupConcat(AggregatorState):
    """Counts per string in first-seen (or sorted) order; the separator comes with each event."""

    __slots__ = ("counts", "distinct", "order", "single", "sep")

    def __init__(self, distinct: bool, order: str | None, single: bool) -> None:
        self.counts: dict[str, int] = {}
        self.distinct = distinct
        self.order = order
        self.single = single
        self.sep = ","  # the separator of the latest event (the selector may read value() later)

    def _text(self, separator: str) -> str:
        keys = list(self.counts)
        if self.order is not None:  # a TreeMap: String.compareTo's order, of UTF-16 units
            keys.sort(key=utf16_units, reverse=self.order == "DESC")
        if self.distinct:
            return separator.join(keys)
        return separator.join(k for k in keys for _ in range(self.counts[k]))

    def _split(self, value: Any) -> tuple[Any, str]:
        if self.single:
            return value, ","
        self.sep = java_str(value[1])
        return value[0], self.sep

    def add(self, value: Any) -> str:
        key, sep = self._split(value)
        if key is None and self.single:
            return self.value()
        text = java_str(key)
        self.counts[text] = self.counts.get(text, 0) + 1
        return self._text(sep)

    def remove(self, value: Any) -> str:
        key, sep = self._split(value)
        if key is None and self.single:
            return self.value()
        text = java_str(key)
        left = self.counts.get(text, 0) - 1
        if left > 0:
            self.counts[text] = left
        else:
            self.counts.pop(text, None)
        return self._text(sep)

    def reset(self) -> None:
        self.counts = {}

    def value(self) -> str:
        return self._text(self.sep) if self.counts else ""


@aggregator("str", "groupConcat",
            (Param("key", STRING, dynamic=True, doc="The strings to concatenate."),
             Param("separator", STRING, optional=True, default=",", dynamic=True, doc="The separator."),
             Param("distinct", BOOL, optional=True, default=False, dynamic=True,
                   doc="Only distinct values (a constant)."),
             Param("order", STRING, optional=True, default="No order", dynamic=True,
                   doc="'ASC' or 'DESC' (a constant); by default the order values were first seen in.")),
            overloads=(("key",), ("key", REPEAT), ("key", "separator", "distinct"),
                       ("key", "separator", "distinct", "order")),
            returns=AttrType.STRING,
            doc="Concatenates the key values of the window (or group), separated by the separator. "
                "Equal values are listed together.",
            examples=(("from InputStream#window.time(5 min) select str:groupConcat(\"key\") as keys "
                       "insert into OutputStream;", "'A,B,S,C,A' for keys A, B, S, C, A"),
                      ("str:groupConcat(\"key\", \"-\", true, \"ASC\")", "'A-B-C-S' for keys A, B, S, C, A")))
def _group_concat(infos: list[ArgInfo]) -> tuple[AttrType, Any]:
    if len(infos) > 4:
        raise err(f"str:groupConcat() takes key, separator, distinct and order, but found {len(infos)} arguments")
    distinct = False
    order = None
    if len(infos) >= 3:
        if not is_literal(infos[2]):
            raise err("str:groupConcat() function's third attribute `distinct` should be a constant")
        distinct = bool(infos[2].value)
    if len(infos) == 4:
        if not is_literal(infos[3]):
            raise err("str:groupConcat() function's forth attribute `order` should be a constant "
                      "having 'ASC' or 'DESC'")
        order = str(infos[3].value).upper()
        if order not in ("ASC", "DESC"):
            raise err(f"str:groupConcat() function's forth attribute `order` should be 'ASC' or 'DESC', "
                      f"but found '{infos[3].value}'")
    single = len(infos) == 1
    return AttrType.STRING, lambda: _GroupConcat(distinct, order, single)


# ---------------------------------------------------------------------------- tokenize
@stream_processor("str", "tokenize",
                  (Param("input.string", STRING, dynamic=True, doc="The string to split."),
                   Param("regex", STRING, dynamic=True, doc="A Java regular expression to split at (a constant)."),
                   Param("distinct", BOOL, optional=True, default=False, dynamic=True,
                         doc="Only the first occurrence of each token (a constant).")),
                  overloads=(("input.string", "regex"), ("input.string", "regex", "distinct")),
                  returns="token (string)",
                  doc="Splits the string at the regular expression and emits one event per token, "
                      "with the input attributes plus `token`.",
                  examples=(("from inputStream#str:tokenize(str, ',') select token insert into outputStream;",
                             "'Android,Windows8,iOS' gives three events: 'Android', 'Windows8', 'iOS'"),))
def _tokenize(infos: list[ArgInfo], getters: list[Any], attributes: list[Attribute],
              ctx: Any) -> tuple[list[Attribute], Callable[[], ChunkProcessor]]:
    if not is_literal(infos[1]):
        raise err("str:tokenize(): the regex should be a constant")
    pattern = compile_or_error("str:tokenize", infos[1].value)
    distinct = False
    if len(infos) == 3:
        if not is_literal(infos[2]):
            raise err("str:tokenize(): 'distinct' should be a constant")
        distinct = bool(infos[2].value)
    text = getters[0]

    def run(chunk: list[Event]) -> list[Event]:
        out: list[Event] = []
        for e in chunk:
            s = text(e)
            if s is None:
                raise ValueError("Invalid input given to str:tokenize() function. Input.string argument cannot be null")
            words = java_split(pattern, s)
            if distinct:
                words = list(dict.fromkeys(words))
            out.extend(Event(e.timestamp, (*e.data, w), e.type) for w in words)
        return out

    return [Attribute("token", AttrType.STRING)], lambda: ChunkProcessor(run)
