"""Random apps of the text mapper, for the differential tests (``--family text_map``).

As the json and csv families (tests/differential/mappings.py): an ``inMemory`` topic read
through a ``text`` source mapper, the events passed on (all their attributes, or some, now and
then in batches of ``#window.lengthBatch``) and written through a ``text`` sink mapper to
another topic; the answer is what the sink publishes, byte for byte.  Siddhi runs them only with
siddhi-map-text (and mustache.java) on its class path.

The source reads Siddhi's own ``key:value`` format (``symbol:"WSO2",``⏎``price:55.6``), with
keys in any order and spaced any way, missing, repeated and unknown keys, lines that are no pair,
numbers with thousands separators, of the wrong kind or past their range, Java's odd number
syntax (``5f``, ``0x1p3``, ``NaNf``, Unicode digits), ``event.grouping.enabled`` messages with
their ``delimiter`` lines (well placed and not), and ``new.line.character``; or a custom mapping:
``regex.X`` options and ``@attributes`` that take their groups (``X``, ``X[2]``, ``X[0]``), labelled
or positional text, groups that take no part, patterns Java and Python read differently (``.``
and ``$`` around ``\\r`` and ``\\u2028``), an ``@attributes`` that maps only some attributes (an
app both refuse), and now and then one that names a regex or a group that does not exist (which
fails the events).  The sink writes the default format, a ``@payload`` template or a Mustache
one (``mustache.enabled``), grouped or not.

Kept out of the way, as the differences docs/mappers.md documents for the text mapper:

* an unquoted string value and an unquoted ``null`` in the default format (Siddhi drops the
  first and last characters of the one and cannot read the other): every string is quoted;
* with ``fail.on.missing.attribute='true'``, an event that lacks an attribute and still has as
  many lines as the stream has attributes (Siddhi lets some through with nulls, and fails
  others leaving their attributes marked for the next event): such events have no extra lines;
* a value that does not convert after another attribute of the same event was read (Siddhi's
  failed event leaves that attribute unset in the next one): a value that may fail is the
  event's first line, and a grouped message gives Siddhi no value to cut short (``_grouped``);
* escapes (``\\n``, ``\\r\\n``) in the sink's ``new.line.character`` or ``delimiter`` (Siddhi writes
  the backslashes), in the source's ``new.line.character`` of a grouped message (Siddhi cuts as
  many characters as the option's text has), and regex metacharacters in the source's
  ``delimiter``: options are plain text there;
* Mustache sections and partials (Srota renders variables only).
"""
from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from tests.differential.mappings import passing_app, some_attributes

_TYPES = ("string", "int", "long", "float", "double", "bool", "object")
_NAMES = ("symbol", "price", "volume", "count", "ok", "note", "tag")
_NUMBERS = ("int", "long", "float", "double")


def _attributes(rng: random.Random) -> list[tuple[str, str]]:
    names = rng.sample(_NAMES, rng.randint(2, 5))
    return [(n, rng.choice(_TYPES)) for n in names]


# ------------------------------------------------------------------------------------- values
_STRINGS = ("WSO2", "IBM", "", "é✓ñ", "a:b", "a,b", 'say "hi"', "x'y", "  spaced  ", "123", "null", "line\nbreak",
            "😀", "\t", "<&>=`", "~~~~~~~~~~", "a\rb", "a\u2028b", "a\u0085b", "1,000", "true", "{x}", "\\n")


def _good_text(rng: random.Random, typ: str) -> str:
    """A value's text as a feed of ``typ`` writes it, now and then at an edge of the type."""
    if typ == "string":
        return rng.choice(_STRINGS)
    if typ == "object":  # (an unquoted null is null in Srota, by design)
        return rng.choice([s for s in _STRINGS if s != "null"])
    if typ == "bool":
        return rng.choice(("true", "false", "true", "false", "TRUE", "False", "yes", "1", "", "tru"))
    if typ == "int":
        return rng.choice(("0", "7", "-3", "100", "2147483647", "-2147483648", "1,000", "+5", "007",
                           str(rng.randint(-1000, 1000))))
    if typ == "long":
        return rng.choice(("0", "9", "-4", "1700000000000", "9223372036854775807", "-9223372036854775808",
                           "1,700,000,000,000", "+7", str(rng.randint(-10**6, 10**6))))
    return rng.choice(("55.6", "0.5", "-2.25", "100", "0", "1e10", "1.5E-5", "3.4E38", "123456789", "0.1", "-0.0",
                       "1,234.5", "65.1", "9999999.5", "1.0E7", "0.001", str(round(rng.uniform(-1000, 1000),
                                                                                     rng.randint(1, 7)))))


def _odd_text(rng: random.Random, typ: str) -> str:
    """A number's text that Java may refuse, or reads in its own way."""
    common = ("x", "", "5 5", "--5", "12L", "1_000", "0x1F", '"5"', "١٢", "１２", "+", "-", "1e3", "1.5")
    if typ in ("int", "long"):
        extra = ("2147483648", "-2147483649", "9223372036854775808", "NaN", "٣", "+0", "-0")
    else:
        extra = ("NaN", "Infinity", "-Infinity", "NaNf", "Infinityd", "0x1p3", "0x1.8p1", "0X1P-2", "0x1p3f",
                 "1e400", "-1e-400", "1.", ".5", "5f", "5D", "+.5e+2", "1.0000001788139343", "3.4028236E38", "1e39",
                 "٣.٥", "1e", "e5", "1.5e-45", "0x", "1__0")
    return rng.choice(common + extra)


def _quoted(rng: random.Random, text: str) -> str:
    q = '"' if rng.random() < 0.8 else "'"
    return q + text + q


def _safe(text: str, bad: tuple[str, ...]) -> str:
    """``text`` without the separators in ``bad`` (a string that would split the event)."""
    for b in bad:
        text = text.replace(b, " ")
    return text


# ------------------------------------------------------------------------------ text family
def text_family(rng: random.Random) -> dict[str, Any]:
    """An app with a text source and a text sink, and the messages published to it."""
    attrs = _attributes(rng)
    custom = rng.random() < 0.45
    fail = rng.choice((None, "true", "false"))
    failing = fail != "false"
    grouping = rng.random() < 0.3
    options: list[str] = []
    if fail is not None:
        options.append(f"fail.on.missing.attribute='{fail}'")
    delimiter = "~~~~~~~~~~"
    new_line = "\n"
    if grouping:
        options.append("event.grouping.enabled='true'")
        if rng.random() < 0.4:
            delimiter = rng.choice(("###", "----", "END", "~~", "@@@@"))
            options.append(f"delimiter='{delimiter}'")
        if rng.random() < 0.15:  # plain text only (the option's length is what Siddhi cuts)
            new_line = rng.choice((" ", ";"))
            options.append(f"new.line.character='{new_line}'")
    elif rng.random() < 0.25:
        new_line, written = rng.choice((("\n", "\\n"), ("\r\n", "\\r\\n"), (" ", " "), ("\r\n", "\\r\\n")))
        options.append(f"new.line.character='{written}'")
    elif rng.random() < 0.1:
        options.append("event.grouping.enabled='false'")
    odd_rate = rng.choice((0.0, 0.1, 0.2, 0.35))
    if custom:
        regexes, mapping, build = _custom_mapping(rng, attrs, odd_rate)
        options += [f"regex.{k}='{v}'" for k, v in regexes.items()]
        if rng.random() < 0.1 and len(mapping) == len(attrs):  # positional @attributes
            mapped = ", ".join(f"'{mapping[a]}'" for a, _ in attrs)
        else:
            mapped = ", ".join(f"{a}='{m}'" for a, m in mapping.items())
        options.append(f"@attributes({mapped})")
        event = build
    else:
        def event() -> str:
            return _default_event(rng, attrs, odd_rate, failing, new_line, delimiter if grouping else None)
    source = "@map(type='text'" + "".join(", " + o for o in options) + ")"
    out_attrs = some_attributes(rng, attrs)
    sink, sink_grouping = _sink(rng, out_attrs)
    window = f"#window.lengthBatch({rng.randint(2, 3)})" if sink_grouping and rng.random() < 0.6 else ""
    app = passing_app(source, attrs, sink, out_attrs, window)
    steps = []
    for _ in range(rng.randint(4, 12)):
        if grouping:
            text = _grouped(rng, [event() for _ in range(rng.randint(1, 3))], delimiter, new_line, odd_rate, custom)
        elif rng.random() < 0.04:
            text = rng.choice(("", "hello", "\n", ",\n", ":", "a:1:2", "  "))
        else:
            text = event()
        steps.append({"publish": "in", "message": text})
    return {"app": app, "topics": ["out"], "streams": [], "queries": [], "steps": steps}


def _grouped(rng: random.Random, events: list[str], delimiter: str, new_line: str, odd_rate: float,
             custom: bool) -> str:
    """Events of one message, a ``delimiter`` line between them (now and then misplaced).

    Siddhi cuts a line break's length off each event but the last, whatever stands there, and
    keeps the last as it is, the break before a closing delimiter line included.  So, in the
    default format (where a value cut short, or one that keeps a ';' line break, fails, and
    Siddhi's failure can mark attributes for the next event, and where an empty line after a
    trailing separator is one line too many: documented differences), an event glued to its
    delimiter ends with letters for Siddhi to cut, the last event has no trailing separator, and
    the message ends with a delimiter line only where the line break is blank.
    """
    line = new_line + delimiter + new_line
    closing = custom or not new_line.strip()  # a delimiter line may close the message
    if not custom:
        events[-1] = events[-1].removesuffix("," + new_line)
    if rng.random() >= odd_rate:
        text = line.join(events)
        return text + (line if rng.random() < 0.15 and closing else "")
    r = rng.random()
    if r < 0.3:  # the delimiter glued to the end of an event's last line
        if not custom:
            events = [e + "x" * len(new_line) for e in events[:-1]] + events[-1:]
        return (delimiter + new_line).join(events)
    if r < 0.55:  # a delimiter line first
        return delimiter + new_line + line.join(events)
    if r < 0.8 or not custom:  # two delimiter lines in a row
        events.insert(rng.randrange(len(events) + (1 if closing else 0)), "")
        return line.join(events)
    return line.join(events) + new_line + delimiter  # a last delimiter without its line break


# ------------------------------------------------------------------------- default mapping
def _default_event(rng: random.Random, attrs: list[tuple[str, str]], odd_rate: float, failing: bool,
                   new_line: str, delimiter: str | None) -> str:
    """One event in Siddhi's ``key:value`` format (``delimiter``: of a grouped message, which no
    value holds)."""
    separator = "," + new_line
    bad = (separator,) if delimiter is None else (separator, delimiter)

    def value(typ: str, odd: bool) -> str:
        if typ == "string":
            return _quoted(rng, _safe(_good_text(rng, typ), bad))
        if odd:
            return _odd_text(rng, typ)
        return _safe(_good_text(rng, typ), bad)

    def key(name: str) -> str:
        r = rng.random()
        if r < 0.8:
            return f"{name}:"
        return rng.choice((f" {name} : ", f"{name}: ", f"\t{name}:", f"{name} :  "))

    pairs = [(a, key(a) + value(t, False)) for a, t in attrs]
    if rng.random() < 0.3:
        rng.shuffle(pairs)
    missing = False
    if rng.random() < odd_rate:
        del pairs[rng.randrange(len(pairs))]
        missing = True
    if rng.random() < odd_rate and not (failing and missing):
        extra = rng.choice(("extra:1", "garbage", "", "Symbol:\"x\"", ":", "note"))
        pairs.insert(rng.randrange(len(pairs) + 1), ("", extra))
    present = [(a, t) for a, t in attrs if any(p[0] == a for p in pairs)]
    if rng.random() < odd_rate and not (failing and missing) and present:  # a repeated key: the first wins
        a, t = rng.choice(present)
        pairs.append((a, key(a) + value(t, rng.random() < 0.5)))
    numbers = [(a, t) for a, t in attrs if t in _NUMBERS and any(p[0] == a for p in pairs)]
    if numbers and rng.random() < odd_rate:
        # a value that may not convert: the first line, so that Siddhi's failure marks nothing
        a, t = rng.choice(numbers)
        pairs = [p for p in pairs if p[0] != a]
        pairs.insert(0, (a, key(a) + value(t, True)))
    text = separator.join(p[1] for p in pairs)
    if rng.random() < 0.1:
        text += separator  # a trailing separator (Java's split drops the empty string after it)
    return text


# -------------------------------------------------------------------------- custom mapping
_STRING_GROUPS = (r"(\w+)", r"(\S+)", r"(\S*)", r"([^;]*)", r"(.*)", r"(.{0,})", r"([A-Za-z0-9]+)")
_NUMBER_GROUPS = (r"([-.0-9]+)", r"([-+.0-9eE,]+)", r"(\S+)", r"([^;\s]*)")
_INT_GROUPS = (r"([-0-9]+)", r"(\d+)", r"([-0-9,]+)", r"(\S+)")
_BOOL_GROUPS = (r"(\w+)", r"(true|false)", r"(\S+)")


def _group(rng: random.Random, typ: str) -> str:
    if typ in ("string", "object"):
        return rng.choice(_STRING_GROUPS)
    if typ in ("int", "long"):
        return rng.choice(_INT_GROUPS)
    if typ == "bool":
        return rng.choice(_BOOL_GROUPS)
    return rng.choice(_NUMBER_GROUPS)


def _custom_mapping(rng: random.Random, attrs: list[tuple[str, str]], odd_rate: float) -> tuple[
        dict[str, str], dict[str, str], Callable[[], str]]:
    """``regex.X`` options, the ``@attributes`` mapping and a function that writes one event.

    A few attributes (the positional ones) are groups of one regex ``A`` over the start of the
    message (``wso2 55.6 ...``); the others are ``label=value`` parts, each with a regex of its
    own, in any order after them.
    """
    positional = attrs[:rng.randint(0, len(attrs))] if rng.random() < 0.6 else []
    labelled = [a for a in attrs if a not in positional]
    regexes: dict[str, str] = {}
    mapping: dict[str, str] = {}
    groups = {a: _group(rng, t) for a, t in attrs}
    head_sep = " "
    if positional:
        space, head_sep = rng.choice(((r"\s", " "), (r"\s+", "  "), (" ", " "), (":", ":"), (r"\s*,\s*", ", ")))
        body = space.join(groups[a] for a, _ in positional)
        anchored = rng.random() < 0.2
        optional = rng.random() < 0.2  # a last group that may take no part
        if optional:
            body += r"(?:#(\w+))?"
        regexes["A"] = ("^" if anchored else "") + body
        for i, (a, _) in enumerate(positional, 1):
            mapping[a] = f"A[{i}]"
        if optional and rng.random() < 0.5:
            mapping[positional[-1][0]] = f"A[{len(positional) + 1}]"
    ids = iter("BCDEFGH")
    labels: dict[str, str] = {}
    for a, _ in labelled:
        regex_id = next(ids)
        labels[a] = rng.choice((a, a.upper(), a[:3]))
        end = "$" if rng.random() < 0.1 else ""
        regexes[regex_id] = f"{labels[a]}={groups[a]}{end}"
        mapping[a] = rng.choice((regex_id, f"{regex_id}[1]"))
    if rng.random() < 0.03 and len(mapping) > 1:  # an @attributes that maps only some (refused)
        del mapping[rng.choice(list(mapping))]
    if rng.random() < 0.04:  # a regex that is not defined, or a group the regex does not have
        a = rng.choice(list(mapping))
        mapping[a] = rng.choice(("Z", "Z[1]", "B[7]", "A[9]"))
    if rng.random() < 0.05 and mapping:
        a = rng.choice(list(mapping))
        if mapping[a].startswith("A["):
            mapping[a] = "A[0]"  # the whole match
    separator = rng.choice((" ", "; ", " ; ", ", ", "\n", " | ", "\r\n"))
    types = dict(attrs)

    def value(a: str) -> str:
        typ = types[a]
        if typ in _NUMBERS and rng.random() < odd_rate:
            return _odd_text(rng, typ)
        text = _good_text(rng, typ)
        if typ in ("string", "object") and rng.random() < 0.5:
            text = rng.choice(("WSO2", "IBM", "abc_1", "x"))
        return text

    def build() -> str:
        head = head_sep.join(value(a) for a, _ in positional)
        if positional and rng.random() < 0.2:
            head += "#" + rng.choice(("tag", "x1", ""))
        parts = [f"{labels[a]}={value(a)}" for a, _ in labelled if rng.random() >= odd_rate / 2]
        if rng.random() < 0.3:
            rng.shuffle(parts)
        if labelled and rng.random() < odd_rate:
            a = rng.choice(labelled)[0]
            parts.insert(rng.randrange(len(parts) + 1), f"{labels[a]}={value(a)}")  # a second value
        text = separator.join(([head] if positional else []) + parts)
        if rng.random() < odd_rate / 3:
            text = rng.choice(("", "nothing here", "  ", text.upper()))
        if rng.random() < 0.1:
            text += rng.choice(("\n", "\r\n", " ", "\u2028"))
        return text

    return regexes, mapping, build


# ------------------------------------------------------------------------------------- sink
def _sink(rng: random.Random, attrs: list[tuple[str, str]]) -> tuple[str, bool]:
    """A text sink mapper: the default format or a template, grouped or not."""
    options: list[str] = []
    grouping = rng.random() < 0.35
    if grouping:
        options.append("event.grouping.enabled='true'")
        if rng.random() < 0.4:
            options.append(f"delimiter='{rng.choice(('###', '----', 'END', '~~', '|'))}'")
    if rng.random() < 0.15:
        options.append(f"new.line.character='{rng.choice((' ', ' | ', '<br>', ';'))}'")
    r = rng.random()
    if r < 0.45:
        pass
    elif r < 0.75:
        options.append(f'@payload("""{_template(rng, attrs, mustache=False)}""")')
    else:
        options.insert(0, "mustache.enabled='true'")
        if rng.random() < 0.9:
            options.append(f'@payload("""{_template(rng, attrs, mustache=True)}""")')
    return "@map(type='text'" + "".join(", " + o for o in options) + ")", grouping


def _template(rng: random.Random, attrs: list[tuple[str, str]], mustache: bool) -> str:
    used = rng.sample(attrs, rng.randint(1, len(attrs)))
    pieces = []
    for a, _ in used:
        if mustache:
            tag = rng.choice(("{{%s}}", "{{%s}}", "{{{%s}}}", "{{& %s}}", "{{ %s }}")) % a
        else:
            tag = rng.choice(("{{%s}}", "{{%s}}", "{{%s}}", "{{{%s}}}", "'{{%s}}'")) % a
        pieces.append(rng.choice(("", f"{a}=", f"{a.upper()}: ", '"' + a + '":')) + tag)
    joiner = rng.choice((" ", ", ", "\n", " | ", ""))
    body = joiner.join(pieces)
    if mustache and rng.random() < 0.2:
        body += rng.choice(("{{! a comment }}", "{{nope}}", " {{ nope }}"))
    if rng.random() < 0.2:
        body = rng.choice(("Event: ", "{", "<e>", "[ ")) + body + rng.choice(("", "}", "</e>", " ]"))
    if not mustache and rng.random() < 0.04:
        body = rng.choice(("`word`", "{{ " + used[0][0] + " }}", "no attributes"))
    return body
