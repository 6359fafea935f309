"""The binary mappers (mappers/_binary.py): siddhi-map-binary's bytes, both ways."""
from __future__ import annotations

import struct
from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Annotation, AnnotationElement, Attribute, AttrType
from srota.mappers import MappingError, TimedRow, TimedRows

from srota import mappers
from tests.mappers.harness import java_binary

TS = 1_700_000_000_000
TYPES = "string int float long double bool"
ATTRS = [Attribute(n, AttrType(t)) for n, t in zip("abcdef", TYPES.split(), strict=True)]
BINARY = Annotation("map", (AnnotationElement("type", "binary"),), ())


def _source(attrs: list[Attribute] = ATTRS) -> Any:
    return mappers.create_source_mapper(attrs, BINARY, "In")


def _sink(attrs: list[Attribute] = ATTRS) -> Any:
    return mappers.create_sink_mapper(attrs, BINARY, "Out")


EVENTS = [(TS, ("test", 36, 3.0, 380, 23.0, True)), (TS + 1, ("Éclair", -361, 31.5, 2**40, -231.25, False))]


def test_the_sink_writes_what_siddhis_converter_writes():
    rows = [TimedRow.of(ts, data) for ts, data in EVENTS]
    assert _sink().map(rows) == [java_binary(EVENTS, TYPES)]


def test_the_source_reads_siddhis_bytes_with_the_events_own_timestamps():
    got = _source().map(java_binary(EVENTS, TYPES))
    assert isinstance(got, TimedRows)
    assert list(got) == [data for _, data in EVENTS] and got.timestamps == [TS, TS + 1]
    assert _source().map(bytearray(java_binary(EVENTS, TYPES))) == list(got)  # any bytes-like payload


def test_a_float_travels_as_32_bits_and_a_bool_is_true_only_as_1():
    attrs = [Attribute("c", AttrType.FLOAT), Attribute("f", AttrType.BOOL)]
    (payload,) = _sink(attrs).map([TimedRow.of(TS, (0.1, True))])
    (c, f), = _source(attrs).map(payload)
    assert c == struct.unpack(">f", struct.pack(">f", 0.1))[0] and f is True
    # Java reads `get() == 1`: another byte is false
    assert _source(attrs).map(payload[:-1] + b"\x02") == [(c, False)]


def test_strings_null_and_empty_read_back_as_null_as_in_siddhi():
    attrs = [Attribute("s", AttrType.STRING), Attribute("n", AttrType.INT)]
    (payload,) = _sink(attrs).map([TimedRow.of(TS, ("", 1))])
    assert _source(attrs).map(payload) == [(None, 1)]
    with pytest.raises(MappingError, match="attribute 'n'.*null cannot be written"):
        _sink(attrs).map([TimedRow.of(TS, ("x", None))])


def test_a_string_that_is_not_utf8_is_read_with_replacement_characters():
    attrs = [Attribute("s", AttrType.STRING)]
    payload = struct.pack(">iqi", 1, TS, 2) + b"\xff\xfe"
    assert _source(attrs).map(payload) == [("\ufffd\ufffd",)]


def test_an_object_attribute_is_four_zero_bytes_and_reads_as_null():
    attrs = [Attribute("o", AttrType.OBJECT), Attribute("n", AttrType.LONG)]
    (payload,) = _sink(attrs).map([TimedRow.of(TS, ({"any": 1}, 7))])
    assert payload == struct.pack(">iqiq", 1, TS, 0, 7)
    assert _source(attrs).map(payload) == [(None, 7)]


@pytest.mark.parametrize("payload, reason", [
    (java_binary(EVENTS, TYPES)[:-3], "ends before its last event"),
    (java_binary(EVENTS, "string double float long double bool"), "ends before its last event"),
    (struct.pack(">i", 2_000_000_000) + b"\x00" * 20, "holds 2000000000 events"),
    (struct.pack(">i", -1), "holds -1 events"),
    (b"\x00\x00", "ends before"),
])
def test_a_message_that_does_not_read_whole_is_refused_whole(payload: bytes, reason: str):
    with pytest.raises(MappingError, match=reason) as info:
        _source().map(payload)
    assert info.value.rows == []  # nothing of it goes in, as in Siddhi


def test_bytes_after_the_last_event_are_ignored_as_in_siddhi():
    assert _source().map(java_binary(EVENTS, TYPES) + b"\x00\x01") == [data for _, data in EVENTS]


def test_a_payload_that_is_not_bytes_is_refused():
    with pytest.raises(MappingError, match="must be bytes, not str"):
        _source().map("text")


@pytest.mark.parametrize("row, message", [
    (("x", 36.0, 1.0, 1, 1.0, True), "attribute 'b': cannot be written in binary: float 36.0 is not an int"),
    (("x", 2**31, 1.0, 1, 1.0, True), "attribute 'b': cannot be written in binary: 2147483648 is out of range for int"),
    ((5, 1, 1.0, 1, 1.0, True), "attribute 'a': cannot be written in binary: int 5 is not a string"),
    (("x", 1, 1.0, 1, 1.0, 1), "attribute 'f': cannot be written in binary: int 1 is not a bool"),
    (("x", 1, 1.0, 1, 10**400, True), "attribute 'e': cannot be written in binary: int too large"),
])
def test_a_chunk_with_a_value_of_the_wrong_type_is_not_written(row: tuple[Any, ...], message: str):
    with pytest.raises(MappingError, match=message):
        _sink().map([TimedRow.of(TS, ("ok", 1, 1.0, 1, 1.0, True)), TimedRow.of(TS, row)])


def test_rows_without_a_timestamp_are_written_with_the_time_now():
    (payload,) = _sink([Attribute("n", AttrType.INT)]).map([(1,)])
    (stamp,) = struct.unpack_from(">q", payload, 4)
    assert abs(stamp - TS) < 10 * 365 * 86_400_000  # an epoch-ms time, not 0


def test_custom_mapping_and_payload_templates_refuse_the_app():
    attrs_ann = Annotation("map", (AnnotationElement("type", "binary"),),
                           (Annotation("attributes", (AnnotationElement("a", "a"),), ()),))
    with pytest.raises(SiddhiAppCreationError, match="does not support custom mapping"):
        mappers.create_source_mapper(ATTRS[:1], attrs_ann, "In")
    payload_ann = Annotation("map", (AnnotationElement("type", "binary"),),
                             (Annotation("payload", (AnnotationElement(None, "a"),), ()),))
    with pytest.raises(SiddhiAppCreationError, match="does not support @payload"):
        mappers.create_sink_mapper(ATTRS, payload_ann, "Out")


async def test_a_binary_file_passes_through_an_app_with_its_events_times(run: Any, tmp_path: Any) -> None:
    # Siddhi to Siddhi: a file another Siddhi wrote is read whole (binary.full) and its events
    # leave through a binary sink as they came, timestamps included.
    from tests.mappers.harness import Topic

    path = tmp_path / "events.bin"
    path.write_bytes(java_binary(EVENTS, TYPES))
    topic = Topic("BinaryRelay")
    await run(f"""
    @App:name('BinaryRelay')
    @source(type='file', file.uri='{path}', mode='binary.full', @map(type='binary'))
    define stream In (a string, b int, c float, d long, e double, f bool);
    @sink(type='inMemory', topic='BinaryRelay', @map(type='binary'))
    define stream Out (a string, b int, c float, d long, e double, f bool);
    from In select * insert into Out;
    """)
    await topic.take(1)
    assert topic.messages == [java_binary(EVENTS, TYPES)]
