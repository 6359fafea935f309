"""The keyvalue source and sink mappers: edges the siddhi-map-keyvalue suite does not reach."""
from __future__ import annotations

import datetime
import struct
from collections import OrderedDict
from decimal import Decimal
from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Annotation, AnnotationElement, Attribute, AttrType
from srota.mappers import KeyValueSinkMapper, KeyValueSourceMapper, MappingError

from srota import mappers

T = AttrType
ALL = (Attribute("s", T.STRING), Attribute("i", T.INT), Attribute("l", T.LONG), Attribute("f", T.FLOAT),
       Attribute("d", T.DOUBLE), Attribute("b", T.BOOL), Attribute("o", T.OBJECT))
EPOCH_MS = 1_700_000_000_000


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def ann(*nested: Annotation, **options: str) -> Annotation:
    return Annotation("map", (AnnotationElement("type", "keyvalue"),) + tuple(
        AnnotationElement(k.replace("_", "."), v) for k, v in options.items()), nested)


def full(**changes: Any) -> dict[str, Any]:
    values: dict[str, Any] = {"s": "x", "i": 1, "l": EPOCH_MS, "f": 55.6, "d": 0.5, "b": True, "o": [1]}
    values.update(changes)
    return values


class TestSource:
    def test_every_attribute_type(self) -> None:
        assert KeyValueSourceMapper(ALL).map(full()) == [("x", 1, EPOCH_MS, f32(55.6), 0.5, True, [1])]

    def test_any_mapping_is_a_payload(self) -> None:
        assert KeyValueSourceMapper(ALL).map(OrderedDict(full()))[0][0] == "x"

    def test_numbers_accepted_without_a_cast(self) -> None:
        # Python's int stands for Java's Integer, Long and BigInteger; float for Float and Double.
        m = KeyValueSourceMapper(ALL)
        row = m.map(full(s=9001, f=2, d=3, i=Decimal("7.9"), l=Decimal(EPOCH_MS)))[0]
        assert row[:5] == ("9001", 7, EPOCH_MS, 2.0, 3.0)
        assert m.map(full(s=Decimal("1.50"), f=Decimal("0.1")))[0][0::3] == ("1.50", f32(0.1), [1])

    def test_datetimes(self) -> None:
        stamp = datetime.datetime.fromtimestamp(EPOCH_MS / 1000, datetime.UTC)
        row = KeyValueSourceMapper(ALL).map(full(l=stamp, s=datetime.date(2024, 1, 2)))[0]
        assert row[:3] == ("2024-01-02", 1, EPOCH_MS)

    @pytest.mark.parametrize("key, value", [
        ("s", 1.5), ("s", True), ("s", b"x"), ("i", 1.0), ("i", "1"), ("i", True), ("i", 2 ** 31),
        ("l", 2 ** 63), ("l", "5"), ("f", "1.5"), ("f", True), ("d", "x"), ("b", "true"), ("b", 1),
    ])
    def test_strict_types(self, key: str, value: Any) -> None:
        with pytest.raises(MappingError) as info:
            KeyValueSourceMapper(ALL).map(full(**{key: value}))
        assert info.value.attribute == key

    def test_implicit_cast(self) -> None:
        m = KeyValueSourceMapper(ALL, implicit_cast_enable=True)
        row = m.map(full(i="42", l=str(EPOCH_MS), f="55.6f", d=" 2.5 ", b="TRUE"))[0]
        assert row[1:6] == (42, EPOCH_MS, f32(55.6), 2.5, True)
        assert m.map(full(b="yes"))[0][5] is False  # Boolean.parseBoolean
        for key, value in (("i", 1.5), ("i", " 1"), ("l", "1e3"), ("d", True), ("s", 1.5)):
            with pytest.raises(MappingError):
                m.map(full(**{key: value}))

    def test_nulls_and_missing_keys(self) -> None:
        with pytest.raises(MappingError, match="missing or null") as info:
            KeyValueSourceMapper(ALL).map(full(i=None))
        assert info.value.attribute == "i"
        lenient = KeyValueSourceMapper(ALL, fail_on_missing_attribute=False)
        assert lenient.map({}) == [(None,) * 7]
        assert lenient.map(full(o=None, s=None)) == [(None, 1, EPOCH_MS, f32(55.6), 0.5, True, None)]

    def test_malformed_payloads(self) -> None:
        m = KeyValueSourceMapper(ALL)
        for payload in ("symbol: 1", b"\xac\xed\x00\x05", [("s", "x")], None, 7):
            with pytest.raises(MappingError, match="expects a map") as info:
                m.map(payload)
            assert info.value.payload is payload

    def test_custom_keys_and_transport_properties(self) -> None:
        attrs = ALL[:3]
        m = KeyValueSourceMapper(attrs, attribute_map={"s": "trp:topic", "i": "a.b", "l": "trp:offset"})
        assert m.map({"a.b": 3}, {"topic": "t", "offset": str(EPOCH_MS)}) == [("t", 3, EPOCH_MS)]
        with pytest.raises(MappingError, match="transport property"):
            m.map({"a.b": 3}, {"topic": "t"})
        with pytest.raises(MappingError, match="cannot convert|not a long"):
            m.map({"a.b": 3}, {"topic": "t", "offset": "soon"})


class TestSink:
    def test_default_map(self) -> None:
        row = ("x", 1, EPOCH_MS, f32(55.6), 0.5, None, {"k": 1})
        assert KeyValueSinkMapper(ALL).map([row, row]) == [dict(zip([a.name for a in ALL], row, strict=True))] * 2
        assert KeyValueSinkMapper.produces_bytes is False

    def test_payload_kinds(self) -> None:
        m = KeyValueSinkMapper(ALL, [("v", "l"), ("t", "{{l}} at {{f}} {{b}}"), ("w", "`word`"), (None, " s ")])
        assert m.map([("x", 1, EPOCH_MS, f32(55.6), 0.5, None, None)]) == [
            {"v": EPOCH_MS, "t": "1700000000000 at 55.6 null", "w": "word", None: "x"}]

    def test_short_rows_are_mapping_errors(self) -> None:
        with pytest.raises(MappingError):
            KeyValueSinkMapper(ALL).map([("x",)])


class TestFactory:
    def test_source_options(self) -> None:
        m = mappers.create_source_mapper(ALL, ann(fail_on_missing_attribute="false", implicit_cast_enable="true"))
        assert isinstance(m, KeyValueSourceMapper)
        assert (m.fail_on_missing_attribute, m.implicit_cast_enable) == (False, True)

    @pytest.mark.parametrize("kind, annotation, message", [
        ("source", ann(nosuch="1"), "unknown option"),
        ("source", ann(Annotation("attributes", (AnnotationElement("zz", "a"),))), "not an attribute"),
        ("sink", ann(nosuch="1"), "unknown option"),
        ("sink", ann(Annotation("payload", (AnnotationElement("k", "{{zz}}"),))), "zz"),
        ("sink", ann(Annotation("payload", ())), "empty"),
    ])
    def test_creation_errors(self, kind: str, annotation: Annotation, message: str) -> None:
        create = mappers.create_source_mapper if kind == "source" else mappers.create_sink_mapper
        with pytest.raises(SiddhiAppCreationError, match=message):
            create(ALL, annotation, "S")
