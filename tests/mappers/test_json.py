"""The json source and sink mappers."""
from __future__ import annotations

import math

import orjson
import pytest
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Annotation, AnnotationElement, Attribute, AttrType, Pos
from srota.mappers import JsonSinkMapper, JsonSourceMapper, MappingError

from srota import mappers

T = AttrType
STOCK = (Attribute("symbol", T.STRING), Attribute("price", T.FLOAT), Attribute("volume", T.LONG))
ALL = (Attribute("s", T.STRING), Attribute("i", T.INT), Attribute("l", T.LONG), Attribute("f", T.FLOAT),
       Attribute("d", T.DOUBLE), Attribute("b", T.BOOL), Attribute("o", T.OBJECT))


def f32(x: float) -> float:
    import struct
    return struct.unpack("f", struct.pack("f", x))[0]


def ann(map_type: str = "json", *nested: Annotation, pos: Pos | None = None, **options: str) -> Annotation:
    elements = (AnnotationElement("type", map_type),) + tuple(
        AnnotationElement(k.replace("_", "."), v) for k, v in options.items())
    return Annotation("map", elements, nested, pos)


def attrs_ann(*positional: str, **keyed: str) -> Annotation:
    return Annotation("attributes", tuple(AnnotationElement(None, v) for v in positional)
                      + tuple(AnnotationElement(k, v) for k, v in keyed.items()))


# ------------------------------------------------------------------------------------ source: default
class TestSourceDefault:
    def test_siddhi_event_envelope(self) -> None:
        m = JsonSourceMapper(STOCK)
        assert m.map(b'{"event":{"symbol":"WSO2","price":55.6,"volume":100}}') == [("WSO2", f32(55.6), 100)]

    def test_plain_object_and_extra_keys_ignored(self) -> None:
        m = JsonSourceMapper(STOCK)
        assert m.map('{"symbol":"A","price":1,"volume":2,"other":true}') == [("A", 1.0, 2)]

    def test_array_of_events_mixed_envelopes(self) -> None:
        m = JsonSourceMapper(STOCK)
        rows = m.map(b'[{"event":{"symbol":"A","price":1.5,"volume":1}},{"symbol":"B","price":2.5,"volume":2}]')
        assert rows == [("A", 1.5, 1), ("B", 2.5, 2)]

    def test_empty_array_is_no_events(self) -> None:
        assert JsonSourceMapper(STOCK).map(b"[]") == []

    def test_nulls_are_preserved(self) -> None:
        m = JsonSourceMapper(ALL)
        assert m.map(b'{"s":null,"i":null,"l":null,"f":null,"d":null,"b":null,"o":null}') == [(None,) * 7]

    def test_all_types(self) -> None:
        m = JsonSourceMapper(ALL)
        payload = orjson.dumps({"s": "x", "i": 7, "l": 2 ** 40, "f": 0.1, "d": 0.1, "b": True, "o": {"k": [1]}})
        (row,) = m.map(payload)
        assert row == ("x", 7, 2 ** 40, f32(0.1), 0.1, True, {"k": [1]})
        assert row[3] != 0.1  # float attributes are rounded to 32 bits

    def test_numeric_strings_convert_like_siddhi(self) -> None:
        m = JsonSourceMapper(ALL)
        (row,) = m.map(b'{"s":5,"i":" 42 ","l":"-9","f":"1.5","d":"2.25","b":"TRUE","o":"text"}')
        assert row == ("5", 42, -9, 1.5, 2.25, True, "text")

    def test_int_widens_to_double(self) -> None:
        (row,) = JsonSourceMapper((Attribute("d", T.DOUBLE),)).map(b'{"d":3}')
        assert row == (3.0,) and isinstance(row[0], float)

    def test_string_attribute_takes_json_text_of_nested_values(self) -> None:
        m = JsonSourceMapper((Attribute("s", T.STRING), Attribute("t", T.STRING), Attribute("u", T.STRING)))
        assert m.map(b'{"s":{"a":1},"t":false,"u":1.5}') == [('{"a":1}', "false", "1.5")]

    def test_unicode(self) -> None:
        m = JsonSourceMapper((Attribute("s", T.STRING),))
        assert m.map('{"s":"caf\u00e9 \u6771\u4eac \U0001f600"}'.encode()) == [("caf\u00e9 \u6771\u4eac \U0001f600",)]
        assert m.map(b'{"s":"\\u00e9\\n"}') == [("\u00e9\n",)]

    def test_missing_attribute_fails_by_default(self) -> None:
        with pytest.raises(MappingError) as err:
            JsonSourceMapper(STOCK).map(b'{"symbol":"A","price":1}')
        assert err.value.attribute == "volume"
        assert "missing" in err.value.reason
        assert err.value.payload == b'{"symbol":"A","price":1}'

    def test_missing_attribute_is_null_when_allowed(self) -> None:
        m = JsonSourceMapper(STOCK, fail_on_missing_attribute=False)
        assert m.map(b'{"symbol":"A"}') == [("A", None, None)]

    def test_error_reports_event_index(self) -> None:
        with pytest.raises(MappingError) as err:
            JsonSourceMapper(STOCK).map(b'[{"symbol":"A","price":1,"volume":1},{"symbol":"B","price":"x","volume":1}]')
        assert err.value.index == 1 and err.value.attribute == "price"
        assert "event 1" in str(err.value) and "not a number" in str(err.value)

    def test_lone_event_attribute_is_not_unwrapped(self) -> None:
        m = JsonSourceMapper((Attribute("event", T.OBJECT),))
        assert m.map(b'{"event":{"a":1}}') == [({"a": 1},)]


@pytest.mark.parametrize(("attr", "value", "reason"), [
    (T.INT, "2147483648", "out of range for int"),
    (T.INT, "-2147483649", "out of range for int"),
    (T.LONG, "9223372036854775808", "out of range for long"),
    (T.INT, "1.5", "fraction"),
    (T.INT, "1e3", "fraction"),
    (T.INT, "true", "bool"),
    (T.LONG, '"12x"', "not an long"),
    (T.DOUBLE, '"abc"', "not a number"),
    (T.DOUBLE, "false", "bool"),
    (T.FLOAT, "[1]", "not a number"),
    (T.BOOL, "1", "not a bool"),
    (T.BOOL, '"yes"', "not a bool"),
])
def test_type_errors(attr: AttrType, value: str, reason: str) -> None:
    m = JsonSourceMapper((Attribute("a", attr),))
    with pytest.raises(MappingError) as err:
        m.map(f'{{"a":{value}}}'.encode())
    assert reason in err.value.reason
    assert err.value.attribute == "a"


def test_extreme_in_range_values() -> None:
    m = JsonSourceMapper((Attribute("i", T.INT), Attribute("l", T.LONG)))
    assert m.map(b'{"i":-2147483648,"l":9223372036854775807}') == [(-(2 ** 31), 2 ** 63 - 1)]


@pytest.mark.parametrize("payload", [
    b"", b"   ", b"{", b'{"symbol":"A",', b'{"symbol":"A","price":1,"volume":1', b"not json",
    b"\x00\x01\x02\xff\xfe", b'{"s":"\xff\xfe"}', "\ud800".encode("utf-8", "surrogatepass"),
    b'{"a":1}{"b":2}', b"NaN",
])
def test_malformed_truncated_and_binary_payloads(payload: bytes) -> None:
    with pytest.raises(MappingError) as err:
        JsonSourceMapper(STOCK).map(payload)
    assert err.value.payload == payload


@pytest.mark.parametrize("payload", [b"null", b"42", b'"text"', b"[1,2]", b"[null]", b"[[]]"])
def test_non_object_events(payload: bytes) -> None:
    with pytest.raises(MappingError, match="expected a JSON object"):
        JsonSourceMapper(STOCK).map(payload)


def test_payload_must_be_bytes_or_text() -> None:
    with pytest.raises(MappingError, match="expects bytes or text"):
        JsonSourceMapper(STOCK).map({"symbol": "A"})


def test_bytearray_and_memoryview_payloads() -> None:
    m = JsonSourceMapper((Attribute("a", T.INT),))
    assert m.map(bytearray(b'{"a":1}')) == [(1,)]
    assert m.map(memoryview(b'{"a":2}')) == [(2,)]


# ------------------------------------------------------------------------------------ source: custom
class TestSourceCustom:
    def test_jsonpath_attributes(self) -> None:
        m = JsonSourceMapper(
            (Attribute("id", T.STRING), Attribute("temp", T.DOUBLE), Attribute("first", T.INT),
             Attribute("last", T.INT), Attribute("odd", T.STRING)),
            attribute_map={"id": "$.device.id", "temp": "$.temp", "first": "$.readings[0]",
                           "last": "$.readings[-1]", "odd": "$['weird key'].x"})
        doc = {"device": {"id": "d1"}, "temp": 21.5, "readings": [1, 2, 3], "weird key": {"x": "y"}}
        assert m.map(orjson.dumps(doc)) == [("d1", 21.5, 1, 3, "y")]

    def test_relative_paths_like_siddhi(self) -> None:
        m = JsonSourceMapper(STOCK, enclosing_element="$.portfolio", attribute_map={
            "symbol": "stock.company.symbol", "price": "stock.price", "volume": "stock.volume"})
        doc = {"portfolio": [{"stock": {"volume": 100, "company": {"symbol": "wso2"}, "price": 56.6}},
                             {"stock": {"volume": 200, "company": {"symbol": "ibm"}, "price": 57.5}}]}
        assert m.map(orjson.dumps(doc)) == [("wso2", f32(56.6), 100), ("ibm", 57.5, 200)]

    def test_enclosing_element_object_is_one_event(self) -> None:
        m = JsonSourceMapper(STOCK, enclosing_element="$.portfolio.stock")
        assert m.map(b'{"portfolio":{"stock":{"symbol":"A","price":1,"volume":2}}}') == [("A", 1.0, 2)]

    def test_enclosing_element_default_mapping_array(self) -> None:
        m = JsonSourceMapper(STOCK, enclosing_element="$.events")
        payload = b'{"events":[{"event":{"symbol":"A","price":1,"volume":2}},{"symbol":"B","price":3,"volume":4}]}'
        assert m.map(payload) == [("A", 1.0, 2), ("B", 3.0, 4)]

    def test_missing_enclosing_element(self) -> None:
        with pytest.raises(MappingError, match="enclosing element"):
            JsonSourceMapper(STOCK, enclosing_element="$.events").map(b'{"other":[]}')

    def test_missing_path_and_wrong_node_kinds(self) -> None:
        m = JsonSourceMapper((Attribute("a", T.STRING),), attribute_map={"a": "$.x[0]"},
                             fail_on_missing_attribute=False)
        assert m.map(b'{"x":"abc"}') == [(None,)]  # a string is not indexable
        assert m.map(b'{"x":{"0":"no"}}') == [(None,)]  # an object is not an array
        assert m.map(b'{"x":[]}') == [(None,)]
        assert m.map(b'{"x":["y"]}') == [("y",)]
        strict = JsonSourceMapper((Attribute("a", T.STRING),), attribute_map={"a": "$.x.y"})
        with pytest.raises(MappingError, match="missing"):
            strict.map(b'{"x":[1]}')

    def test_explicit_null_is_kept_even_when_strict(self) -> None:
        m = JsonSourceMapper((Attribute("a", T.INT),), attribute_map={"a": "$.x.y"})
        assert m.map(b'{"x":{"y":null}}') == [(None,)]

    def test_transport_properties(self) -> None:
        m = JsonSourceMapper(
            (Attribute("v", T.INT), Attribute("topic", T.STRING), Attribute("partition", T.INT),
             Attribute("offset", T.LONG), Attribute("key", T.STRING)),
            attribute_map={"v": "$.v", "topic": "trp:topic", "partition": "trp:partition",
                           "offset": "trp:offset", "key": "trp:key"})
        trp = {"topic": "sensors", "partition": 3, "offset": 2 ** 33, "key": b"dev-1"}
        assert m.map(b'{"v":1}', trp) == [(1, "sensors", 3, 2 ** 33, "dev-1")]
        with pytest.raises(MappingError) as err:
            m.map(b'{"v":1}', {"topic": "t"})
        assert err.value.attribute == "partition"

    def test_transport_property_absent_is_null_when_allowed(self) -> None:
        m = JsonSourceMapper((Attribute("k", T.STRING),), attribute_map={"k": "trp:key"},
                             fail_on_missing_attribute=False)
        assert m.map(b"{}") == [(None,)]
        assert m.map(b"{}", {"key": None}) == [(None,)]

    @pytest.mark.parametrize("path", ["$..a", "$.*", "$.a[*]", "$[?(@.a)]", "$.", "$.a[", "$['a]", ""])
    def test_unsupported_paths_rejected_at_creation(self, path: str) -> None:
        with pytest.raises(ValueError):
            JsonSourceMapper((Attribute("a", T.INT),), attribute_map={"a": path})


def test_parse_path_subset() -> None:
    assert mappers.parse_path("$").steps == ()
    assert mappers.parse_path("$.a.b[2]['c d'][\"e\"]").steps == ("a", "b", 2, "c d", "e")
    assert mappers.parse_path("a.b").steps == ("a", "b")
    assert mappers.parse_path("$['it\\'s']").steps == ("it's",)


# ------------------------------------------------------------------------------------ source: registry
class TestSourceFromAnnotation:
    def test_options_and_attributes(self) -> None:
        m = mappers.create_source_mapper(STOCK, ann(
            "json", attrs_ann(symbol="$.s", price="$.p", volume="$.v"), enclosing_element="$.data",
            fail_on_missing_attribute="false"), "Stock")
        assert isinstance(m, JsonSourceMapper)
        assert m.map(b'{"data":[{"s":"A","p":1}]}') == [("A", 1.0, None)]

    def test_positional_attributes(self) -> None:
        m = mappers.create_source_mapper(STOCK, ann("json", attrs_ann("$.s", "$.p", "$.v")))
        assert m.map(b'{"s":"A","p":2,"v":3}') == [("A", 2.0, 3)]

    @pytest.mark.parametrize(("annotation", "message"), [
        (ann("json", bogus="1"), "unknown option 'bogus'"),
        (ann("json", fail_on_missing_attribute="maybe"), "must be 'true' or 'false'"),
        (ann("json", attrs_ann(symbol="$.s")), "does not map 'price', 'volume'"),
        (ann("json", attrs_ann(symbol="$.s", price="$.p", volume="$.v", nope="$.n")), "not an attribute"),
        (ann("json", attrs_ann("$.s", "$.p")), "has 2 values but the stream has 3"),
        (ann("json", attrs_ann(symbol="$..s", price="$.p", volume="$.v")), "recursive descent"),
        (ann("json", enclosing_element="$.a[*]"), "only [n]"),
        (ann("yaml"), "no source mapper called 'yaml'"),
    ])
    def test_creation_errors_carry_position(self, annotation: Annotation, message: str) -> None:
        located = Annotation(annotation.name, annotation.elements, annotation.annotations, Pos(3, 7))
        with pytest.raises(SiddhiAppCreationError) as err:
            mappers.create_source_mapper(STOCK, located, "Stock")
        assert message in str(err.value)
        assert (err.value.line, err.value.column) == (3, 7)

    def test_default_type_is_passthrough(self) -> None:
        assert isinstance(mappers.create_source_mapper(STOCK, None), mappers.PassThroughSourceMapper)


# ------------------------------------------------------------------------------------ sink
class TestSink:
    def test_default_format(self) -> None:
        out = JsonSinkMapper(STOCK).map([("WSO2", f32(55.6), 100), ("IBM", None, 7)])
        assert out == [b'{"event":{"symbol":"WSO2","price":55.6,"volume":100}}',
                       b'{"event":{"symbol":"IBM","price":null,"volume":7}}']

    def test_all_types_and_float32_printing(self) -> None:
        (out,) = JsonSinkMapper(ALL).map([("s\"q", 1, 2 ** 40, f32(0.1), 0.1, False, {"k": [1, b"b"]})])
        assert orjson.loads(out) == {"event": {"s": "s\"q", "i": 1, "l": 2 ** 40, "f": 0.1, "d": 0.1,
                                               "b": False, "o": {"k": [1, "b"]}}}

    def test_round_trip_through_source(self) -> None:
        rows = [("caf\u00e9", 1, -5, f32(3.3), 1e-300, True, [1, "x", None]), (None,) * 7]
        out = JsonSinkMapper(ALL).map(rows)
        src = JsonSourceMapper(ALL)
        assert [r for p in out for r in src.map(p)] == rows

    def test_grouping_and_enclosing_element(self) -> None:
        m = JsonSinkMapper(STOCK, enclosing_element="$.portfolio.stocks", event_grouping_enabled=True)
        (out,) = m.map([("A", 1.0, 1), ("B", 2.0, 2)])
        assert orjson.loads(out) == {"portfolio": {"stocks": [
            {"event": {"symbol": "A", "price": 1.0, "volume": 1}},
            {"event": {"symbol": "B", "price": 2.0, "volume": 2}}]}}
        assert len(m.map([("A", 1.0, 1)])) == 1 and orjson.loads(m.map([("A", 1.0, 1)])[0])["portfolio"]["stocks"]

    def test_null_attributes_can_be_left_out(self) -> None:
        m = JsonSinkMapper(STOCK, enable_null_attribute_value=False)
        assert m.map([("A", None, None)]) == [b'{"event":{"symbol":"A"}}']

    def test_payload_template(self) -> None:
        m = JsonSinkMapper(STOCK, payload='{"StockData":{"Symbol":"{{symbol}}","Price":{{price}},"V":{{ volume }}}}')
        out = m.map([('W"SO2\n', f32(55.6), 100)])
        assert orjson.loads(out[0]) == {"StockData": {"Symbol": 'W"SO2\n', "Price": 55.6, "V": 100}}

    def test_payload_template_nulls_nan_and_grouping(self) -> None:
        m = JsonSinkMapper((Attribute("d", T.DOUBLE), Attribute("b", T.BOOL)), payload='{"d":{{d}},"b":{{b}}}',
                           event_grouping_enabled=True, enclosing_element="$.all")
        (out,) = m.map([(math.nan, None), (1.5, True)])
        assert orjson.loads(out) == {"all": [{"d": None, "b": None}, {"d": 1.5, "b": True}]}

    def test_validate_json_rejects_broken_template_output(self) -> None:
        m = JsonSinkMapper(STOCK, payload='{"s":{{symbol}}}', validate_json=True)
        with pytest.raises(MappingError, match="not valid"):
            m.map([("A", 1.0, 1)])
        assert JsonSinkMapper(STOCK, payload='{"s":{{symbol}}}').map([("A", 1.0, 1)]) == [b'{"s":A}']

    def test_template_unknown_attribute(self) -> None:
        with pytest.raises(mappers.TemplateError, match="nope"):
            JsonSinkMapper(STOCK, payload="{{nope}}")

    def test_short_row_and_unserialisable_values(self) -> None:
        with pytest.raises(MappingError, match="fewer values"):
            JsonSinkMapper(STOCK).map([("A", 1.0)])
        with pytest.raises(MappingError, match="cannot write JSON"):
            JsonSinkMapper((Attribute("l", T.LONG),)).map([(2 ** 70,)])

    def test_empty_chunk(self) -> None:
        assert JsonSinkMapper(STOCK, event_grouping_enabled=True).map([]) == []

    def test_from_annotation(self) -> None:
        payload = Annotation("payload", (AnnotationElement(None, '{"s":"{{symbol}}"}'),))
        m = mappers.create_sink_mapper(STOCK, ann("json", payload, event_grouping_enabled="true"), "S")
        assert m.groups_events and m.map([("A", 1.0, 1), ("B", 1.0, 1)]) == [b'[{"s":"A"},{"s":"B"}]']
        with pytest.raises(SiddhiAppCreationError, match="one template"):
            mappers.create_sink_mapper(STOCK, ann("json", Annotation("payload", (AnnotationElement("a", "x"),))))
        with pytest.raises(SiddhiAppCreationError, match="not an attribute"):
            mappers.create_sink_mapper(STOCK, ann("json", Annotation("payload", (AnnotationElement(None, "{{x}}"),))))
        with pytest.raises(SiddhiAppCreationError, match="path of names"):
            mappers.create_sink_mapper(STOCK, ann("json", enclosing_element="$.a[0]"))


# ------------------------------------------------------------------------------------ dynamic options
def test_map_for_sink_with_dynamic_options() -> None:
    templates = mappers.option_templates({"topic": "prices-{{symbol}}", "key": "{{volume}}", "acks": "all"}, STOCK)
    assert set(templates) == {"topic", "key"}
    rows = [("A", 1.0, 1), ("B", 2.0, 2), ("A", 3.0, 3)]
    pairs = mappers.map_for_sink(JsonSinkMapper(STOCK), rows, templates)
    assert [p for _, p in pairs] == [{"topic": "prices-A", "key": "1"}, {"topic": "prices-B", "key": "2"},
                                     {"topic": "prices-A", "key": "3"}]
    grouped = mappers.map_for_sink(JsonSinkMapper(STOCK, event_grouping_enabled=True), rows,
                                   mappers.option_templates({"topic": "p-{{symbol}}"}, STOCK))
    assert [(len(orjson.loads(p)), props["topic"]) for p, props in grouped] == [(2, "p-A"), (1, "p-B")]
    assert mappers.map_for_sink(JsonSinkMapper(STOCK), rows[:1]) == [
        (b'{"event":{"symbol":"A","price":1.0,"volume":1}}', {})]


def test_template_text_formatting() -> None:
    t = mappers.Template("{{s}}/{{f}}/{{b}}/{{d}}/{{l}}", (Attribute("s", T.STRING), Attribute("f", T.FLOAT),
                                                           Attribute("b", T.BOOL), Attribute("d", T.DOUBLE),
                                                           Attribute("l", T.LONG)))
    assert t.render(("x", f32(55.6), True, None, 5)) == "x/55.6/true/null/5"
    assert t.attribute_names == ("s", "f", "b", "d", "l")
    assert mappers.is_template("a{{b}}") and not mappers.is_template("a{b}") and not mappers.is_template(3)
