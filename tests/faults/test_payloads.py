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
