"""The passThrough mappers and the public surface of the mappers package."""
from __future__ import annotations

import struct

import pytest
from srota.engine.registry import Kind, registry
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Annotation, AnnotationElement, Attribute, AttrType
from srota.mappers import MappingError, PassThroughSinkMapper, PassThroughSourceMapper

from srota import mappers

T = AttrType
STOCK = (Attribute("symbol", T.STRING), Attribute("price", T.FLOAT), Attribute("volume", T.LONG))


class _Event:
    def __init__(self, data: tuple) -> None:
        self.data = data


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


class TestSource:
    def test_row_shapes(self) -> None:
        m = PassThroughSourceMapper(STOCK)
        assert m.map(("A", 1.0, 2)) == [("A", 1.0, 2)]
        assert m.map(["A", 1.0, 2]) == [("A", 1.0, 2)]
        assert m.map({"volume": 2, "symbol": "A", "price": 1, "x": 0}) == [("A", 1.0, 2)]
        assert m.map(_Event(("A", 0.1, 2))) == [("A", f32(0.1), 2)]

    def test_many_rows(self) -> None:
        m = PassThroughSourceMapper(STOCK)
        assert m.map([("A", 1.0, 1), ["B", 2, 2], {"symbol": "C", "price": 3.0, "volume": 3}]) == [
            ("A", 1.0, 1), ("B", 2.0, 2), ("C", 3.0, 3)]

    def test_nulls_and_objects(self) -> None:
        m = PassThroughSourceMapper((Attribute("o", T.OBJECT), Attribute("s", T.STRING)))
        payload = {"o": [1, 2], "s": None}
        assert m.map(payload) == [([1, 2], None)]
        assert m.map(([1], "x")) == [([1], "x")]

    def test_text_payload_for_single_attribute_streams(self) -> None:
        assert PassThroughSourceMapper((Attribute("s", T.STRING),)).map(b"caf\xc3\xa9") == [("caf\u00e9",)]
        assert PassThroughSourceMapper((Attribute("o", T.OBJECT),)).map(b"\x00\xff") == [(b"\x00\xff",)]
        with pytest.raises(MappingError, match="UTF-8"):
            PassThroughSourceMapper((Attribute("s", T.STRING),)).map(b"\xff")
        with pytest.raises(MappingError, match="only a stream with one"):
            PassThroughSourceMapper(STOCK).map(b"A,1,2")

    @pytest.mark.parametrize(("payload", "message"), [
        (("A", "1.0", 2), "is not a number"),
        (("A", 1.0, 2.5), "is not a long"),
        (("A", True, 2), "is not a number"),
        ((1, 1.0, 2), "is not a string"),
        (("A", 1.0, 2 ** 64), "out of range for long"),
        (("A", 1.0), "has 2 values"),
        ({"symbol": "A"}, "missing"),
        (42, "must be a tuple"),
        ([("A", 1.0, 1), ("B", "x", 1)], "event 1"),
    ])
    def test_type_errors(self, payload: object, message: str) -> None:
        with pytest.raises(MappingError) as err:
            PassThroughSourceMapper(STOCK).map(payload)
        assert message in str(err.value)

    def test_bool_attribute_is_strict(self) -> None:
        m = PassThroughSourceMapper((Attribute("b", T.BOOL), Attribute("i", T.INT)))
        assert m.map((True, 3)) == [(True, 3)]
        with pytest.raises(MappingError):
            m.map((1, 3))
        with pytest.raises(MappingError):
            m.map((True, False))


def test_sink_hands_rows_through() -> None:
    m = PassThroughSinkMapper(STOCK)
    assert not m.produces_bytes and not m.groups_events
    assert m.map([("A", 1.0, 1), ["B", 2.0, 2]]) == [("A", 1.0, 1), ("B", 2.0, 2)]


def test_registry_names_and_options() -> None:
    for kind in (Kind.SOURCE_MAPPER, Kind.SINK_MAPPER):
        names = {e.name.lower() for e in registry.all(kind)}
        assert {"json", "csv", "passthrough"} <= names
    assert isinstance(mappers.create_source_mapper(STOCK, Annotation("map", (AnnotationElement("type", "passThrough"),))),
                      PassThroughSourceMapper)
    assert isinstance(mappers.create_sink_mapper(STOCK, None), PassThroughSinkMapper)
    with pytest.raises(SiddhiAppCreationError, match="takes no options"):
        mappers.create_sink_mapper(STOCK, Annotation("map", (AnnotationElement("type", "passThrough"),
                                                             AnnotationElement("x", "1"))))
    json_ext = registry.get(Kind.SOURCE_MAPPER, "", "json")
    assert json_ext is not None
    assert {p.name for p in json_ext.params} == {"enclosing.element", "fail.on.missing.attribute",
                                                 "event.grouping.enabled"}
    assert all(p.doc for e in registry.all(Kind.SINK_MAPPER) for p in e.params)


def test_public_api() -> None:
    assert set(mappers.__all__) == {
        "DEFAULT_MAP_TYPE", "TRP_PREFIX", "CsvSinkMapper", "CsvSourceMapper", "Failures", "JsonPathError", "JsonSinkMapper",
        "JsonSourceMapper", "MappingError", "PassThroughSinkMapper", "PassThroughSourceMapper", "SinkMapper",
        "SourceMapper", "Template", "TemplateError", "create_sink_mapper", "create_source_mapper", "is_template",
        "map_for_sink", "map_rows_for_sink", "option_templates", "parse_path",
        "KeyValueSinkMapper", "KeyValueSourceMapper", "TextSinkMapper", "TextSourceMapper",
        "XmlSinkMapper", "XmlSourceMapper", "BinarySinkMapper", "BinarySourceMapper", "TimedRow", "TimedRows"}
    for name in mappers.__all__:
        obj = getattr(mappers, name)
        assert isinstance(obj, str) or obj.__doc__, name
    assert issubclass(MappingError, ValueError)
