"""Hostile payloads on every source mapper: each maps, or raises MappingError, and nothing else.

Malformed, truncated, oversized, binary and unusual-unicode inputs must never escape as
another exception (the host routes MappingError to the error route and goes on).
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from srota.grammar.model import Annotation, AnnotationElement, Attribute, AttrType

from srota import mappers

ATTRS = (Attribute("id", AttrType.STRING), Attribute("n", AttrType.INT), Attribute("x", AttrType.DOUBLE),
         Attribute("ok", AttrType.BOOL))


def _mapper(kind: str, **options: str):
    elements = (AnnotationElement("type", kind), *(AnnotationElement(k, v) for k, v in options.items()))
    return mappers.create_source_mapper(ATTRS, Annotation("map", elements), "S")


AVRO_SCHEMA = ('{"type": "record", "name": "S", "fields": [{"name": "id", "type": "string"}, '
               '{"name": "n", "type": "int"}, {"name": "x", "type": "double"}, {"name": "ok", "type": "boolean"}]}')

MAPPERS = {
    "avro": lambda: _mapper("avro", **{"schema.def": AVRO_SCHEMA}),
    "avro-framed": lambda: _mapper("avro", **{"schema.def": AVRO_SCHEMA, "use.avro.serializer": "true"}),
    "json": lambda: _mapper("json"),
    "json-strict": lambda: _mapper("json", **{"fail.on.missing.attribute": "true"}),
    "csv": lambda: _mapper("csv"),
    "passThrough": lambda: _mapper("passThrough"),
}

GOOD = {
    # the Avro binary datum of ("a", 1, 2.5, True): string, zig-zag int, little-endian double, boolean
    "avro": b"\x02a\x02" + bytes.fromhex("0000000000000440") + b"\x01",
    "avro-framed": b"\x00\x00\x00\x00\x07\x02a\x02" + bytes.fromhex("0000000000000440") + b"\x01",
    "json": b'{"event": {"id": "a", "n": 1, "x": 2.5, "ok": true}}',
    "json-strict": b'{"event": {"id": "a", "n": 1, "x": 2.5, "ok": true}}',
    "csv": b"a,1,2.5,true",
    "passThrough": ("a", 1, 2.5, True),
}

HOSTILE = [
    b"",
    b"\x00\x01\x02\xff\xfe",
    b'{"event": {"id": "a", "n": ',
    b"{" * 10_000,
    b"[" * 10_000 + b"]" * 10_000,
    '{"event": {"id": "\ud800", "n": 1}}'.encode("utf-8", "surrogatepass"),
    '{"event": {"id": "\u202e\u0000\U0001f600", "n": 1, "x": 1.0, "ok": false}}'.encode(),
    b'{"event": {"id": "a", "n": "not a number", "x": 1.0, "ok": true}}',
    b'{"event": {"id": "a", "n": 99999999999999999999999, "x": 1e999, "ok": "maybe"}}',
    b"a,1",
    b'"unterminated,1,2.5,true',
    b"a,1,2.5,true,extra,columns",
    b"\xef\xbb\xbfa,1,2.5,true",
    "a,\u0661,2.5,true".encode(),
    b"x" * 2_000_000,
    None,
    12345,
    ["a", 1],
    {"id": "a"},
]


@pytest.mark.parametrize("kind", sorted(MAPPERS))
def test_good_payload_maps(kind):
    rows = MAPPERS[kind]().map(GOOD[kind], {})
    assert rows == [("a", 1, 2.5, True)]


@pytest.mark.parametrize("kind", sorted(MAPPERS))
@pytest.mark.parametrize("payload", HOSTILE, ids=lambda p: repr(p)[:30])
def test_hostile_payloads_map_or_raise_mapping_error(kind, payload):
    mapper = MAPPERS[kind]()
    try:
        rows = mapper.map(payload, {})
    except mappers.MappingError:
        return
    for row in rows:  # whatever maps has the schema's shape
        assert len(row) == len(ATTRS)


@pytest.mark.parametrize("kind", sorted(MAPPERS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payload=st.one_of(st.binary(max_size=300), st.text(max_size=200).map(str.encode)))
def test_random_bytes_map_or_raise_mapping_error(kind, payload):
    try:
        MAPPERS[kind]().map(payload, {})
    except mappers.MappingError:
        pass


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**30), max_value=10**30) | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["event", "id", "n", "x", "ok", "events", ""]) | st.text(max_size=5), inner, max_size=5),
    max_leaves=30)


@pytest.mark.parametrize("kind", ["json", "json-strict"])
@settings(max_examples=200, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=_JSON_VALUES)
def test_random_json_documents_map_or_raise_mapping_error(kind, document):
    """Well-formed JSON of any shape (wrong types, huge numbers, NaN, nesting, arrays of events)."""
    import json

    payload = json.dumps({"event": document} if isinstance(document, dict) else document).encode()
    try:
        rows = MAPPERS[kind]().map(payload, {})
    except mappers.MappingError:
        return
    for row in rows:
        assert len(row) == len(ATTRS)


@settings(max_examples=200, deadline=2000)
@given(cells=st.lists(st.text(max_size=15) | st.integers().map(str) | st.floats().map(repr), max_size=8),
       separator=st.sampled_from([",", ";", "\t"]))
def test_random_csv_rows_map_or_raise_mapping_error(cells, separator):
    payload = separator.join(cells).encode()
    try:
        rows = MAPPERS["csv"]().map(payload, {})
    except mappers.MappingError:
        return
    for row in rows:
        assert len(row) == len(ATTRS)


def test_pathological_json_is_refused_in_bounded_time():
    """Deep nesting and a number with a million digits: an answer (a row or MappingError) at once."""
    import time

    for payload in (b'{"event": ' * 100_000 + b"1" + b"}" * 100_000,
                    b'{"event": {"id": "a", "n": ' + b"9" * 1_000_000 + b', "x": 1.0, "ok": true}}',
                    b'{"event": {"id": "a", "n": 1, "x": 1' + b"0" * 100_000 + b'.5, "ok": true}}'):
        started = time.perf_counter()
        with pytest.raises(mappers.MappingError):
            MAPPERS["json"]().map(payload, {})
        assert time.perf_counter() - started < 2.0
