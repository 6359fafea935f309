"""Random apps of the json and csv mappers, for the differential tests (``--family json_map|csv_map``).

Each app reads an ``inMemory`` topic through a source mapper, passes the events on (all their
attributes, or some, renamed) and writes them through a sink mapper to another topic; the case
publishes text messages and the answer is what the sink publishes (the runner's ``topic:out``),
so the two mappers are compared byte for byte as a Kafka or MQTT consumer would see them.
Siddhi runs them only with siddhi-map-json or siddhi-map-csv on its class path
(``python -m tests.differential --family json_map --classpath JARS``).

Messages are drawn the way real feeds go wrong: Siddhi's own envelope ``{"event": {...}}`` and
plain objects, arrays of events, keys in any order, missing and extra keys, nulls, numbers of
the wrong kind (an int for a double, a fraction for an int, text for a number), values at and
past the limits of int and long, nested objects where text is expected, unicode and escapes,
and text that is not JSON at all.  Custom mappings read JSONPath ``@attributes`` under an
``enclosing.element``, with ``fail.on.missing.attribute`` either way.  No fault stream is read:
Siddhi logs a message that fails to map (and keeps it in its error store), where Srota also
sends it to the app's fault stream, by design (docs/siddhi-differences.md).

Kept out of the way, as documented differences: a double of 1E7 or more, or under 1E-3, in the
json sink's default mapping (Siddhi's Gson writes ``Double.toString``, Srota JSON's own form).
"""
from __future__ import annotations

import json
import random
from typing import Any

_TYPES = ("string", "int", "long", "float", "double", "bool")
_NAMES = ("symbol", "price", "volume", "count", "ok", "note")


def _attributes(rng: random.Random) -> list[tuple[str, str]]:
    names = rng.sample(_NAMES, rng.randint(2, 5))
    return [(n, rng.choice(_TYPES)) for n in names]


def _define(name: str, attrs: list[tuple[str, str]]) -> str:
    return f"define stream {name} ({', '.join(f'{a} {t}' for a, t in attrs)});"


def passing_app(source: str, attrs: list[tuple[str, str]], sink: str, out_attrs: list[tuple[str, str]],
                window: str = "") -> str:
    """The app of every mapping family: topic ``in`` through the ``source`` mapper into S, S's
    ``out_attrs`` (all of its attributes, or some) into O, O through the ``sink`` mapper to ``out``."""
    select = "*" if out_attrs == attrs else ", ".join(a for a, _ in out_attrs)
    return "\n".join([
        "@app:name('Mapping')",
        f"@source(type='inMemory', topic='in', {source})",
        _define("S", attrs),
        f"@sink(type='inMemory', topic='out', {sink})",
        _define("O", out_attrs),
        f"from S{window} select {select} insert into O;",
    ]) + "\n"


def some_attributes(rng: random.Random, attrs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The attributes the app passes on: mostly all of them (``select *``), else some."""
    return attrs if rng.random() < 0.7 else rng.sample(attrs, rng.randint(1, len(attrs)))


# ------------------------------------------------------------------------------------- values
def _good(rng: random.Random, typ: str, plain: bool = False) -> Any:
    """A value a feed of ``typ`` sends, now and then at an edge of the type; ``plain``: a string
    without a quote, backslash or line break."""
    if typ == "string":
        if plain:
            return rng.choice(("WSO2", "IBM", "", "é✓ñ", "  spaced  ", "123", "null", "a,b"))
        return rng.choice(("WSO2", "IBM", "", "é✓ñ", 'a"b\\c', "line\nbreak", "  spaced  ", "123", "null", "a,b",
                           "\u2028x\u2029", "\x01\x7f", "<&>'=", "😀"))
    if typ == "bool":
        return rng.random() < 0.5
    if typ == "int":
        return rng.choice((0, 7, -3, 100, 2_147_483_647, -2_147_483_648, rng.randint(-1000, 1000)))
    if typ == "long":
        return rng.choice((0, 9, -4, 1_700_000_000_000, 9_223_372_036_854_775_807, -9_223_372_036_854_775_808,
                           rng.randint(-10**6, 10**6)))
    # float and double: short decimals mostly, some with many digits or exponents (but not where
    # the json sink's default mapping prints them differently by design)
    return rng.choice((55.6, 0.5, -2.25, 100.0, 0.0, 1234.5678, rng.choice((-1, 1)) * round(rng.uniform(1, 1000), rng.randint(1, 6)),
                       3.4e5, 0.001, 1e-3 * 7, 65.1, -0.0, 9999999.5))


def _odd(rng: random.Random, typ: str) -> Any:
    """A value of another kind than ``typ``, or past its range: what makes a mapper drop or
    convert the message."""
    choices: list[Any] = [None, "55", "x", True, 12, 12.5, {"k": 1}, [1, 2], "", 1.0, "12.5", "true", " 7 "]
    if typ == "int":
        choices += [2_147_483_648, -2_147_483_649]
    if typ == "long":
        choices += [9_223_372_036_854_775_808]
    return rng.choice(choices)


def _value(rng: random.Random, typ: str, odd_rate: float, plain: bool = False) -> Any:
    if rng.random() < odd_rate:
        value = _odd(rng, typ)
        # a nested value is a string attribute's JSON text, with quotes: not for a template
        return "x" if plain and typ == "string" and value.__class__ in (dict, list) else value
    return _good(rng, typ, plain)


def _object_text(rng: random.Random, pairs: list[tuple[str, Any]]) -> str:
    """A JSON object of ``pairs`` in their order (json.dumps, now and then with other spacing)."""
    sep = rng.choice(((",", ":"), (", ", ": "), (",", ": ")))
    return json.dumps(dict(pairs), separators=sep, ensure_ascii=rng.random() < 0.2)


# --------------------------------------------------------------------------------- json family
def json_family(rng: random.Random) -> dict[str, Any]:
    """An app with a json source and a json sink, and the messages published to it."""
    attrs = _attributes(rng)
    custom = rng.random() < 0.35
    fail_on_missing = rng.choice((None, "true", "false"))
    odd_rate = rng.choice((0.0, 0.05, 0.15, 0.3))
    options = [] if fail_on_missing is None else [f"fail.on.missing.attribute='{fail_on_missing}'"]
    enclosing = None
    if custom:
        enclosing = rng.choice((None, "$.portfolio", "$.portfolio.stock", "$"))
        if enclosing:
            options.append(f"enclosing.element='{enclosing}'")
        paths = {a: rng.choice((f"$.{a}", f"$.data.{a}", f"{a}", f"$['{a}']")) for a, _ in attrs}
        mapped = rng.sample(attrs, rng.randint(1, len(attrs))) if rng.random() < 0.2 else attrs
        options.append("@attributes(" + ", ".join(f"{a}=\"{paths[a]}\"" for a, _ in mapped) + ")")
    if rng.random() < 0.2:
        options.insert(0, "event.grouping.enabled='false'")  # an array's events go in one by one
    source = "@map(type='json'" + "".join(", " + o for o in options) + ")"
    out_attrs = some_attributes(rng, attrs)
    sink = _json_sink(rng, out_attrs)
    # Siddhi writes a string into a template's string literal raw, Srota JSON-escapes it (by design)
    plain = "@payload" in sink
    app = passing_app(source, attrs, sink, out_attrs)
    steps = []
    for _ in range(rng.randint(4, 14)):
        if custom:
            text = _custom_message(rng, attrs, paths, enclosing, odd_rate, plain)
        else:
            text = _default_message(rng, attrs, odd_rate, plain)
        steps.append({"publish": "in", "message": text})
    return {"app": app, "topics": ["out"], "streams": [], "queries": [], "steps": steps}


def _json_sink(rng: random.Random, attrs: list[tuple[str, str]]) -> str:
    r = rng.random()
    if r < 0.4:
        return "@map(type='json')"
    if r < 0.55:
        return "@map(type='json', " + rng.choice(("event.grouping.enabled='false'", "enable.null.attribute.value='true'",
                                                   "event.grouping.enabled='true'")) + ")"
    if r < 0.7:
        return f"@map(type='json', enclosing.element='{rng.choice(('$.portfolio', '$.a.b', '$'))}')"
    if r < 0.8:
        return "@map(type='json', validate.json='true')"
    # a custom payload: the attributes in a template of our own
    fields = []
    for a, t in attrs:
        quoted = t == "string" and rng.random() < 0.8
        fields.append(f'"{a}":' + (f'"{{{{{a}}}}}"' if quoted else f"{{{{{a}}}}}"))
    body = "{" + ",".join(fields) + "}"
    validate = ", validate.json='true'" if rng.random() < 0.3 else ""
    return f"@map(type='json'{validate}, @payload(\"\"\"{body}\"\"\"))"


def _pairs(rng: random.Random, attrs: list[tuple[str, str]], odd_rate: float, plain: bool,
           in_array: bool = False) -> list[tuple[str, Any]]:
    """One event's keys and values: in any order, now and then one missing or one too many.
    ``in_array``: no null and no value of another kind (Siddhi fails the whole array on one, where
    Srota drops that element alone, by design)."""
    pairs = [(a, _value(rng, t, 0.0 if in_array else odd_rate, plain)) for a, t in attrs]
    if rng.random() < 0.3:
        rng.shuffle(pairs)
    if rng.random() < odd_rate:
        del pairs[rng.randrange(len(pairs))]
    if rng.random() < odd_rate:
        # (in an array, an "event" key that is no object fails the whole message in Siddhi,
        # where Srota drops that element alone, by design)
        extra = rng.choice(("extra", "Symbol") if in_array else ("extra", "Symbol", "event"))
        pairs.insert(rng.randrange(len(pairs) + 1), (extra, rng.choice((1, "x"))))
    return pairs


def _default_message(rng: random.Random, attrs: list[tuple[str, str]], odd_rate: float, plain: bool) -> str:
    def one(in_array: bool = False) -> str:
        body = _object_text(rng, _pairs(rng, attrs, odd_rate, plain, in_array))
        r = rng.random()
        if r < 0.75:
            return '{"event":' + body + "}"
        if r < 0.8:
            return '{"Event":' + body + "}"
        return body

    r = rng.random()
    if r < 0.6:
        text = one()
    elif r < 0.9:
        text = "[" + ",".join(one(True) for _ in range(rng.randint(1, 3))) + "]"
    else:
        text = rng.choice(('{"event":{', "not json", "", "[]", "{}", '{"event":null}', "[1,2]",
                           '{"event":{"a":1}} trailing', "{'event':{}}", "null"))
    return text


def _nest(path: str, value: Any, into: dict[str, Any]) -> None:
    keys = [k for k in path.replace("$['", "").replace("']", "").removeprefix("$.").split(".") if k]
    for k in keys[:-1]:
        into = into.setdefault(k, {})
    into[keys[-1]] = value


def _custom_message(rng: random.Random, attrs: list[tuple[str, str]], paths: dict[str, str],
                    enclosing: str | None, odd_rate: float, plain: bool) -> str:
    def one(in_array: bool = False) -> dict[str, Any]:
        event: dict[str, Any] = {}
        for a, t in attrs:
            if rng.random() < odd_rate / 2:
                continue  # a missing attribute
            _nest(paths[a], _value(rng, t, 0.0 if in_array else odd_rate, plain), event)
        return event

    def some() -> list[dict[str, Any]]:
        return [one(True) for _ in range(rng.randint(1, 3))]

    if enclosing in (None, "$"):
        doc: Any = one() if rng.random() < 0.8 else some()
    else:
        inner: Any = one() if rng.random() < 0.5 else some()
        doc = {}
        _nest(enclosing, inner, doc)
        if rng.random() < odd_rate:
            doc = {"other": inner}  # the enclosing element is not there
    if rng.random() < odd_rate / 2:
        return rng.choice(("not json", "", "{"))
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------------- csv family
def _csv_text(value: Any) -> str:
    """A field as a feed writes it: Java's text of a value (``true``, ``55.6``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def _csv_field(rng: random.Random, typ: str, odd_rate: float) -> str:
    if rng.random() < odd_rate:
        return rng.choice(("x", "", " 7 ", "1.5", "TRUE", "yes", "null", "2147483648", "9223372036854775808",
                           "1e3", "-0", "NaN", "Infinity", "0x1F", "+5", "12L", "1_000"))
    return _csv_text(_good(rng, typ))


def _csv_record(rng: random.Random, fields: list[str], delimiter: str) -> str:
    """Fields joined by ``delimiter``, quoted where they must be (and now and then where not)."""
    out = []
    for f in fields:
        must = delimiter in f or '"' in f or "\n" in f or "\r" in f
        if must or rng.random() < 0.1:
            f = '"' + f.replace('"', '""') + '"'
        out.append(f)
    return delimiter.join(out)


def csv_family(rng: random.Random) -> dict[str, Any]:
    """An app with a csv source and a csv sink, and the messages published to it."""
    attrs = _attributes(rng)
    delimiter = rng.choice((",", ",", ";", "|", "-/-", "\t"))
    odd_rate = rng.choice((0.0, 0.05, 0.15))
    options = [] if delimiter == "," else [f"delimiter='{delimiter}'".replace("\t", "\\t")]
    header = rng.random() < 0.2
    if header:
        options.append("header='true'")
    fail = rng.choice((None, "true", "false"))
    if fail is not None:
        options.append(f"fail.on.unknown.attribute='{fail}'")
    grouping = rng.random() < 0.3
    if grouping:
        options.append("event.grouping.enabled='true'")
    width = len(attrs) + (rng.randint(1, 2) if rng.random() < 0.3 else 0)  # extra columns are ignored
    positions = None
    if rng.random() < 0.35:
        positions = rng.sample(range(width), len(attrs))
        options.append("@attributes(" + ", ".join(f"{a}='{p}'" for (a, _), p in zip(attrs, positions, strict=True))
                       + ")")
    source = "@map(type='csv'" + "".join(", " + o for o in options) + ")"
    out_attrs = some_attributes(rng, attrs)
    app = passing_app(source, attrs, _csv_sink(rng, out_attrs), out_attrs)
    steps = []
    if header:
        steps.append({"publish": "in", "message": delimiter.join(a for a, _ in attrs)})
    for _ in range(rng.randint(4, 12)):
        records = []
        for _ in range(rng.randint(1, 3) if rng.random() < 0.4 else 1):
            row = [_csv_field(rng, t, odd_rate) for _, t in attrs]
            fields = [_csv_text(_good(rng, "string"))] * width
            for i, value in enumerate(row):
                fields[positions[i] if positions else i] = value
            records.append(_csv_record(rng, fields, delimiter))
        line_end = "\r\n" if rng.random() < 0.15 else "\n"
        if rng.random() < 0.1:
            records.insert(rng.randrange(len(records) + 1), "")  # an empty line
        text = line_end.join(records) + (line_end if rng.random() < 0.3 else "")
        steps.append({"publish": "in", "message": text})
    return {"app": app, "topics": ["out"], "streams": [], "queries": [], "steps": steps}


def _csv_sink(rng: random.Random, attrs: list[tuple[str, str]]) -> str:
    options = []
    delimiter = rng.choice((",", ",", ";", "|"))
    if delimiter != ",":
        options.append(f"delimiter='{delimiter}'")
    if rng.random() < 0.2:
        options.append("header='true'")
    if rng.random() < 0.3:
        options.append("event.grouping.enabled='true'")
    if rng.random() < 0.3:
        columns = rng.sample(range(len(attrs)), len(attrs))
        options.append("@payload(" + ", ".join(f"{a}='{c}'" for (a, _), c in zip(attrs, columns, strict=True)) + ")")
    return "@map(type='csv'" + "".join(", " + o for o in options) + ")"


# ------------------------------------------------------------------------- text and xml families
def text_family(rng: random.Random) -> dict[str, Any]:
    """An app with a text source and a text sink (tests/differential/mappings_text.py)."""
    from tests.differential.mappings_text import text_family as build

    return build(rng)


def xml_family(rng: random.Random) -> dict[str, Any]:
    """An app with an xml source and an xml sink (tests/differential/mappings_xml.py)."""
    from tests.differential.mappings_xml import xml_family as build

    return build(rng)
