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

    def test_plain_object(self) -> None:
        m = JsonSourceMapper(STOCK)
        assert m.map('{"symbol":"A","price":1,"volume":2}') == [("A", 1.0, 2)]
        assert m.map(b'{"EVENT":{"symbol":"A","price":1,"volume":2}}') == [("A", 1.0, 2)]  # any case

    def test_unknown_key_fails_a_single_object_but_not_an_array_element(self) -> None:
        m = JsonSourceMapper(STOCK)
        with pytest.raises(MappingError, match="does not have an attribute named 'other'"):
            m.map(b'{"symbol":"A","price":1,"volume":2,"other":true}')
        with pytest.raises(MappingError, match="'testEvent'"):
            m.map(b'{"testEvent":{"symbol":"A","price":1.5,"volume":2}}')
        assert m.map(b'[{"symbol":"A","price":1,"volume":2,"other":true}]') == [("A", 1.0, 2)]
        lenient = JsonSourceMapper(STOCK, fail_on_missing_attribute=False)
        with pytest.raises(MappingError, match="'other'"):  # as many keys as attributes, one unknown
            lenient.map(b'{"symbol":"A","price":1,"other":2}')

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

    def test_single_object_is_strict_about_json_types(self) -> None:
        # siddhi-map-json reads a single object token by token: a number in a string is not a number.
        m = JsonSourceMapper(ALL)
        with pytest.raises(MappingError, match="not compatible with type int"):
            m.map(b'{"s":5,"i":" 42 ","l":-9,"f":1.5,"d":2.25,"b":true,"o":"text"}')
        (row,) = m.map(b'{"s":5,"i":42,"l":-9,"f":1,"d":2.25,"b":true,"o":"text"}')
        assert row == ("5", 42, -9, 1.0, 2.25, True, "text")

    def test_array_elements_convert_from_text_like_siddhi(self) -> None:
        m = JsonSourceMapper(ALL)
        rows = m.map(b'[{"s":5,"i":"42","l":"-9","f":"1.5","d":3,"b":"TRUE","o":"text"}]')
        assert rows == [("5", 42, -9, 1.5, 3.0, True, "text")] and isinstance(rows[0][4], float)

    def test_integer_for_double_fails_but_float_takes_it(self) -> None:
        with pytest.raises(MappingError, match="not compatible with type double"):
            JsonSourceMapper((Attribute("d", T.DOUBLE),)).map(b'{"d":3}')
        assert JsonSourceMapper((Attribute("d", T.DOUBLE),)).map(b'{"d":3.0}') == [(3.0,)]
        (row,) = JsonSourceMapper((Attribute("f", T.FLOAT),)).map(b'{"f":3}')
        assert row == (3.0,) and isinstance(row[0], float)

    def test_string_attribute_takes_json_text_of_nested_values(self) -> None:
        m = JsonSourceMapper((Attribute("s", T.STRING), Attribute("t", T.STRING), Attribute("u", T.STRING)))
        assert m.map(b'{"s":{"a":1},"t":false,"u":1.5}') == [('{"a":1}', "false", "1.5")]

    def test_nested_values_beyond_64_bits_keep_their_json_text(self) -> None:
        """Found by the payload fuzzing (tests/faults/test_payloads.py): an array of events read
        leniently (as Gson, here because of the unquoted name) keeps integers beyond 64 bits, which orjson
        cannot write, and the mapper raised a TypeError instead of mapping them."""
        m = JsonSourceMapper((Attribute("s", T.STRING),))
        assert m.map(b'[{s:[-9223372036854775809, {"b": 123456789012345678901234567890}]}]') == [
            ('[-9223372036854775809,{"b":123456789012345678901234567890}]',)]

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

    def test_a_lone_scalar_is_an_event_of_nulls_when_missing_attributes_are_allowed(self) -> None:
        """Siddhi's single-event reader finds no attribute in `12`, `"x"` or white space: all null,
        or dropped; `null` it refuses (checked on Siddhi 5.1.33 with siddhi-map-json)."""
        m = JsonSourceMapper(STOCK, fail_on_missing_attribute=False)
        assert [m.map(p) for p in (b"12", b'"x"', b"true", b" \n", "\t")] == [[(None, None, None)]] * 5
        with pytest.raises(MappingError, match="the message is null"):
            m.map(b"null")
        with pytest.raises(MappingError, match="invalid JSON"):
            m.map(b"")
        with pytest.raises(MappingError, match="missing attributes"):
            JsonSourceMapper(STOCK).map(b"12")

    def test_error_reports_event_index(self) -> None:
        with pytest.raises(MappingError) as err:
            JsonSourceMapper(STOCK).map(b'[{"symbol":"A","price":1,"volume":1},{"symbol":"B","price":"x","volume":1}]')
        assert err.value.index == 1 and err.value.attribute == "price"
        assert "event 1" in str(err.value) and "not a number" in str(err.value)
        assert err.value.rows == [("A", 1.0, 1)]  # the elements that mapped still go on

    def test_array_drops_only_mis_shaped_elements(self) -> None:
        payload = (b'[{"event":{"symbol":"A","price":1.5,"volume":1}},'
                   b'{"testEvent":{"symbol":"B","price":2.5,"volume":2}},'
                   b'{"Event":{"symbol":"C","price":3.5,"volume":3}},'
                   b'{"event":{"symbol":"D","price":4.5}},'
                   b'{"symbol":"E","price":5.5,"volume":5}]')
        for fail in (True, False):
            with pytest.raises(MappingError) as err:
                JsonSourceMapper(STOCK, fail_on_missing_attribute=fail).map(payload)
            kept = [r[0] for r in err.value.rows]
            # an envelope short of attributes fails only with fail.on.missing.attribute='true'
            assert kept == (["A", "E"] if fail else ["A", "D", "E"])
            assert err.value.index == 1

    def test_an_attribute_named_event_is_read_as_siddhi_walks_the_tokens(self) -> None:
        # Siddhi skips the first field named event with its value and takes every later field
        # name as an attribute; an object for an object attribute is the first node of that
        # name in the whole document (real Siddhi 5.1.33's answers)
        m = JsonSourceMapper((Attribute("event", T.OBJECT),))
        with pytest.raises(MappingError, match="attribute named 'a'"):
            m.map(b'{"event":{"a":1}}')
        assert m.map(b'{"event":{"event":{"a":1}}}') == [({"event": {"a": 1}},)]
        assert m.map(b'{"event":{"event":"x"}}') == [("x",)]
        with pytest.raises(MappingError, match="missing attributes"):
            m.map(b'{"event":"x"}')
        assert JsonSourceMapper((Attribute("event", T.STRING),)).map(b'{"event":{"event":[1,2]}}') == [
            ('{"event":[1,2]}',)]

    def test_fields_beside_the_envelope_and_nested_fields_are_attributes(self) -> None:
        m = JsonSourceMapper((Attribute("a", T.STRING), Attribute("b", T.INT)))
        assert m.map(b'{"event":{"a":"x"},"b":2}') == [("x", 2)]
        assert m.map(b'{"event":{"a":{"k":1,"b":2},"b":3}}') == [('{"k":1,"b":2}', 3)]
        with pytest.raises(MappingError, match="missing attributes"):  # the nested b counts
            m.map(b'{"event":{"a":[1,{"b":2}],"b":3}}')
        assert JsonSourceMapper((Attribute("a", T.STRING), Attribute("b", T.INT)), fail_on_missing_attribute=False,
                                ).map(b'{"event":{"a":[1,{"b":2}],"b":3}}') == [('[1,{"b":2}]', 3)]
        # a number keeps its text; a nested document is Jackson's compact text
        assert m.map(b'{"event":{"a":55.60,"b":-0}}') == [("55.60", 0)]
        assert m.map(b'{"event":{"a":{"d":1e7,"s":"\\u0001/\xc3\xa9"},"b":7}}') == [
            ('{"d":1.0E7,"s":"\\u0001/\u00e9"}', 7)]

    def test_a_custom_mapping_reads_strings_as_json_smart_does(self) -> None:
        # json-smart reads a string with an escape in it char by char, skipping a raw DEL there
        # (real Siddhi 5.1.33: recorded/mapper-json-custom-del-after-an-escape.json)
        m = JsonSourceMapper((Attribute("a", T.STRING), Attribute("b", T.STRING)), attribute_map={"a": "$.a", "b": "$.b"})
        assert m.map('{"a":"\\u0001\x7f","b":"x\x7f"}') == [("\x01", "x\x7f")]
        assert m.map(b'{"a":"\\n\x7fz","b":"\\"\x7f"}') == [("\nz", '"')]
        assert JsonSourceMapper(STOCK).map(b'{"symbol":"\\n\x7f","price":1.5,"volume":1}') == [("\n\x7f", 1.5, 1)]

    def test_a_custom_mapping_converts_text_as_java_parses_it(self) -> None:
        m = JsonSourceMapper((Attribute("ok", T.BOOL), Attribute("n", T.INT), Attribute("d", T.DOUBLE)),
                             attribute_map={"ok": "$.ok", "n": "$.n", "d": "$.d"})
        assert m.map(b'{"ok":" 7 ","n":"+5","d":" 7 "}') == [(False, 5, 7.0)]
        assert m.map(b'{"ok":"TRUE","n":7,"d":"1e3"}') == [(True, 7, 1000.0)]
        assert m.map(b'{"ok":{"k":1},"n":-0,"d":1}') == [(False, 0, 1.0)]
        for bad in (b'{"ok":true,"n":" 7 ","d":1}', b'{"ok":true,"n":12.0,"d":1}', b'{"ok":true,"n":7,"d":"x"}'):
            with pytest.raises(MappingError):
                m.map(bad)

    def test_an_array_may_be_lenient_json_a_single_object_may_not(self) -> None:
        """Siddhi reads an event array with Gson (lenient: single quotes, bare words) and a
        single object with Jackson (strict JSON)."""
        m = JsonSourceMapper(STOCK)
        assert m.map(b"[{'event':{'symbol':WSO2,'price':55.6,'volume':100}}, {symbol:'IBM',price:1,volume:2}]") == [
            ("WSO2", f32(55.6), 100), ("IBM", 1.0, 2)]
        with pytest.raises(MappingError, match="invalid JSON"):
            m.map(b"{'symbol':'WSO2','price':55.6,'volume':100}")
        with pytest.raises(MappingError, match="invalid JSON"):
            m.map(b"[{'symbol':'WSO2'")  # not even Gson reads it


@pytest.mark.parametrize(("attr", "value", "reason"), [
    (T.INT, "2147483648", "out of range for int"),
    (T.INT, "-2147483649", "out of range for int"),
    (T.LONG, "9223372036854775808", "out of range for long"),
    (T.INT, "1.5", "not compatible with type int"),
    (T.INT, "1e3", "not compatible with type int"),
    (T.INT, "true", "not compatible with type int"),
    (T.INT, '"42"', "not compatible with type int"),
    (T.LONG, '"12x"', "not compatible with type long"),
    (T.LONG, "100.20", "not compatible with type long"),
    (T.DOUBLE, '"abc"', "not compatible with type double"),
    (T.DOUBLE, "55", "not compatible with type double"),
    (T.DOUBLE, "false", "not compatible with type double"),
    (T.FLOAT, "[1]", "not compatible with type float"),
    (T.FLOAT, '""', "not compatible with type float"),
    (T.BOOL, "1", "not compatible with type bool"),
    (T.BOOL, '"true"', "not compatible with type bool"),
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


@pytest.mark.parametrize("payload", [b"[1,2]", b"[null]", b"[[]]"])
def test_non_object_events(payload: bytes) -> None:
    with pytest.raises(MappingError, match="expected a JSON object"):
        JsonSourceMapper(STOCK).map(payload)


@pytest.mark.parametrize(("payload", "reason"), [(b"null", "the message is null"), (b"42", "missing attributes"),
                                                 (b'"text"', "missing attributes")])
def test_a_lone_scalar_provides_no_attribute(payload: bytes, reason: str) -> None:
    with pytest.raises(MappingError, match=reason):
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

    def test_a_custom_mapping_reads_lenient_json(self) -> None:
        """Siddhi reads a custom mapping's payload with json-smart, as leniently as Gson."""
        m = JsonSourceMapper(STOCK, attribute_map={"symbol": "$.s", "price": "$.p", "volume": "$.v"})
        assert m.map(b"{'s': WSO2, p: 55.6, 'v': 100}") == [("WSO2", f32(55.6), 100)]

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

    @pytest.mark.parametrize("path", ["$.", "$.a[", "$['a]", "", "$.a[?(@.x >"])
    def test_malformed_paths_rejected_at_creation(self, path: str) -> None:
        with pytest.raises(ValueError):
            JsonSourceMapper((Attribute("a", T.INT),), attribute_map={"a": path})

    def test_wildcards_descent_and_filters(self) -> None:
        # Jayway: an indefinite path gives a list; a string attribute gets its JSON text.
        m = JsonSourceMapper(
            (Attribute("ids", T.STRING), Attribute("prices", T.OBJECT), Attribute("cheap", T.STRING),
             Attribute("first", T.DOUBLE), Attribute("none", T.STRING)),
            attribute_map={"ids": "$.items[*].id", "prices": "$..price",
                           "cheap": "$.items[?(@.price < 10 && @.id != 'c')].id",
                           "first": "items[0].price", "none": "$.items[?(@.price > 100)].id"})
        doc = {"items": [{"id": "a", "price": 5.5}, {"id": "b", "price": 50}, {"id": "c", "price": 1}]}
        assert m.map(orjson.dumps(doc)) == [('["a","b","c"]', [5.5, 50, 1], '["a"]', 5.5, "[]")]

    def test_indefinite_enclosing_element(self) -> None:
        m = JsonSourceMapper((Attribute("id", T.STRING),), enclosing_element="$.groups[*].items[*]",
                             attribute_map={"id": "$.id"})
        doc = {"groups": [{"items": [{"id": "a"}, {"id": "b"}]}, {"items": [{"id": "c"}]}]}
        assert m.map(orjson.dumps(doc)) == [("a",), ("b",), ("c",)]

    def test_array_with_custom_mapping_drops_only_failing_elements(self) -> None:
        m = JsonSourceMapper(STOCK, attribute_map={"symbol": "event.symbol", "price": "event.price",
                                                   "volume": "event.volume"})
        payload = (b'[{"event":{"symbol":"A","price":55.6,"volume":100}},'
                   b'{"testEvent":{"symbol":"B","price":56.6,"volume":99}},'
                   b'{"event":{"symbol":"C","price":57.6,"volume":null}}]')
        with pytest.raises(MappingError) as err:
            m.map(payload)
        assert err.value.rows == [("A", f32(55.6), 100), ("C", f32(57.6), None)]
        assert err.value.index == 1 and "missing" in err.value.reason
        lenient = JsonSourceMapper(STOCK, fail_on_missing_attribute=False, attribute_map={
            "symbol": "event.symbol", "price": "event.price", "volume": "event.volume"})
        assert [r[0] for r in lenient.map(payload)] == ["A", None, "C"]


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
        (ann("json", attrs_ann(symbol="$..", price="$.p", volume="$.v")), "invalid JSON path"),
        (ann("json", enclosing_element="$.a[?("), "invalid JSON path"),
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
        # Siddhi's defaults: one event is an object, a chunk of several one JSON array message,
        # and a null is written "undefined".
        m = JsonSinkMapper(STOCK)
        assert m.map([("WSO2", f32(55.6), 100)]) == [b'{"event":{"symbol":"WSO2","price":55.6,"volume":100}}']
        assert m.map([("WSO2", f32(55.6), 100), ("IBM", None, 7)]) == [
            b'[{"event":{"symbol":"WSO2","price":55.6,"volume":100}},'
            b'{"event":{"symbol":"IBM","price":"undefined","volume":7}}]']

    def test_one_message_per_event_and_json_nulls_as_options(self) -> None:
        m = JsonSinkMapper(STOCK, event_grouping_enabled=False, enable_null_attribute_value=True)
        assert m.map([("WSO2", f32(55.6), 100), ("IBM", None, 7)]) == [
            b'{"event":{"symbol":"WSO2","price":55.6,"volume":100}}',
            b'{"event":{"symbol":"IBM","price":null,"volume":7}}']
        assert m.map_group([("A", 1.0, 1)]) == [b'{"event":{"symbol":"A","price":1.0,"volume":1}}']

    def test_a_group_of_a_chunk_is_an_array_even_of_one(self) -> None:
        assert JsonSinkMapper(STOCK).map_group([("A", 1.0, 1)]) == [b'[{"event":{"symbol":"A","price":1.0,"volume":1}}]']

    def test_all_types_and_float32_printing(self) -> None:
        (out,) = JsonSinkMapper(ALL).map([("s\"q", 1, 2 ** 40, f32(0.1), 0.1, False, {"k": [1, b"b"]})])
        assert orjson.loads(out) == {"event": {"s": "s\"q", "i": 1, "l": 2 ** 40, "f": 0.1, "d": 0.1,
                                               "b": False, "o": {"k": [1, "b"]}}}

    def test_round_trip_through_source(self) -> None:
        rows = [("caf\u00e9", 1, -5, f32(3.3), 1e-300, True, [1, "x", None]), (None,) * 7]
        src = JsonSourceMapper(ALL)
        for grouping in (True, False):
            out = JsonSinkMapper(ALL, event_grouping_enabled=grouping, enable_null_attribute_value=True).map(rows)
            assert len(out) == (1 if grouping else 2)
            assert [r for p in out for r in src.map(p)] == rows

    def test_grouping_and_enclosing_element(self) -> None:
        m = JsonSinkMapper(STOCK, enclosing_element="$.portfolio.stocks", event_grouping_enabled=True)
        (out,) = m.map([("A", 1.0, 1), ("B", 2.0, 2)])
        assert orjson.loads(out) == {"portfolio": {"stocks": [
            {"event": {"symbol": "A", "price": 1.0, "volume": 1}},
            {"event": {"symbol": "B", "price": 2.0, "volume": 2}}]}}
        assert len(m.map([("A", 1.0, 1)])) == 1 and orjson.loads(m.map([("A", 1.0, 1)])[0])["portfolio"]["stocks"]

    def test_nulls_are_undefined_by_default(self) -> None:
        assert JsonSinkMapper(STOCK).map([(None, None, None)]) == [
            b'{"event":{"symbol":"undefined","price":"undefined","volume":"undefined"}}']
        assert JsonSinkMapper(STOCK, enable_null_attribute_value=True).map([(None, None, None)]) == [
            b'{"event":{"symbol":null,"price":null,"volume":null}}']

    @pytest.mark.parametrize(("value", "double", "float_"), [
        (1e7, b"1.0E7", b"1.0E7"), (1e-5, b"1.0E-5", b"1.0E-5"), (1e23, b"9.999999999999999E22", b"1.0E23"),
        (0.0009765625, b"9.765625E-4", b"9.765625E-4"), (123456789.0, b"1.23456789E8", b"1.23456792E8"),
        (-0.0, b"-0.0", b"-0.0"), (55.6, b"55.6", b"55.6"), (8388608.5, b"8388608.5", b"8388608.0"),
        (math.nan, b"NaN", b"NaN"), (-math.inf, b"-Infinity", b"-Infinity"),
    ])
    def test_numbers_are_written_as_gson_writes_them(self, value: float, double: bytes, float_: bytes) -> None:
        # Siddhi's Gson writes Double.toString and Float.toString (checked on Siddhi 5.1.33,
        # tests/differential/recorded/mapper-json-sink-numbers.json), NaN and the infinities too
        m = JsonSinkMapper((Attribute("d", T.DOUBLE), Attribute("f", T.FLOAT)))
        (out,) = m.map([(value, f32(value))])
        assert out == b'{"event":{"d":' + double + b',"f":' + float_ + b"}}"
        (text,) = JsonSinkMapper((Attribute("d", T.DOUBLE), Attribute("f", T.FLOAT)),
                                 payload='{"d":{{d}},"f":"{{f}}"}').map([(value, f32(value))])
        assert text == b'{"d":' + double + b',"f":"' + float_ + b'"}'

    def test_strings_are_escaped_as_gson_escapes_them(self) -> None:
        # Gson writes the line and paragraph separators escaped, control characters as \\uXXXX,
        # the rest as it is (real Siddhi 5.1.33: recorded/mapper-json-sink-string-escapes.json)
        m = JsonSinkMapper((Attribute("a", T.STRING),))
        assert m.map([("\u2028x\u2029",)]) == [b'{"event":{"a":"\\u2028x\\u2029"}}']
        assert m.map([("\x01<&>'=\u00e9\t",)]) == [
            b'{"event":{"a":"\\u0001<&>\'=\xc3\xa9\\t"}}']

    def test_payload_template(self) -> None:
        m = JsonSinkMapper(STOCK, payload='{"StockData":{"Symbol":"{{symbol}}","Price":{{price}},"V":{{ volume }}}}')
        out = m.map([('W"SO2\n', f32(55.6), 100)])
        assert orjson.loads(out[0]) == {"StockData": {"Symbol": 'W"SO2\n', "Price": 55.6, "V": 100}}

    def test_payload_template_nulls_nan_and_grouping(self) -> None:
        m = JsonSinkMapper((Attribute("d", T.DOUBLE), Attribute("b", T.BOOL)), payload='{"d":{{d}},"b":{{b}}}',
                           enclosing_element="$.all", enable_null_attribute_value=True)
        (out,) = m.map([(math.nan, None), (1.5, True)])
        # Siddhi's ",\n" separator; NaN as Java's String.valueOf writes it (real Siddhi 5.1.33)
        assert out == b'{"all":[{"d":NaN,"b":null},\n{"d":1.5,"b":true}]}'
        (out,) = m.map([(1e7, None), (1.5, True)])
        assert orjson.loads(out) == {"all": [{"d": 1e7, "b": None}, {"d": 1.5, "b": True}]}
        assert out.startswith(b'{"all":[{"d":1.0E7,')
        siddhi = JsonSinkMapper(STOCK, payload='{"S":"{{symbol}}","P":{{price}},"V":{{volume}}}')
        assert siddhi.map([(None, None, 1)]) == [b'{"S":"undefined","P":undefined,"V":1}']

    def test_a_string_is_escaped_inside_quotes_and_written_as_it_is_outside(self) -> None:
        # Siddhi writes every value raw: '{{message}}' holding a JSON document sends that
        # document; inside "..." Srota escapes, so a quote in a name cannot break the JSON.
        doc = '{"event":{"symbol":"WSO2","price":55.6}}'
        assert JsonSinkMapper(STOCK, payload="{{symbol}}").map([(doc, 1.0, 1)]) == [doc.encode()]
        m = JsonSinkMapper(STOCK, payload='{"raw": {{symbol}}, "text": "{{symbol}}", "esc": "a\\"{{symbol}}"}')
        (out,) = m.map([('{"a":"x"}', 1.0, 1)])
        assert orjson.loads(out) == {"raw": {"a": "x"}, "text": '{"a":"x"}', "esc": 'a"{"a":"x"}'}
        obj = JsonSinkMapper((Attribute("o", T.OBJECT),), payload='{"in": "{{o}}", "out": {{o}}}')
        assert orjson.loads(obj.map([({"k": '"q"'},)])[0]) == {"in": '{"k":"\\"q\\""}', "out": {"k": '"q"'}}

    def test_validate_json_rejects_broken_template_output(self) -> None:
        """As Siddhi's Gson check: an unterminated object fails, a bare value passes (lenient)."""
        m = JsonSinkMapper(STOCK, payload='{"s":"{{symbol}}"', validate_json=True)
        with pytest.raises(MappingError, match="not valid"):
            m.map([("A", 1.0, 1)])
        lenient = JsonSinkMapper(STOCK, payload='{"s":{{symbol}}}', validate_json=True)
        assert lenient.map([("A", 1.0, 1)]) == [b'{"s":A}']

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
        m = mappers.create_sink_mapper(STOCK, ann("json", payload), "S")
        assert m.groups_events and m.map([("A", 1.0, 1), ("B", 1.0, 1)]) == [b'[{"s":"A"},\n{"s":"B"}]']
        m = mappers.create_sink_mapper(STOCK, ann("json", event_grouping_enabled="false",
                                                  enable_null_attribute_value="true"), "S")
        assert not m.groups_events and m.map([("A", None, 1), ("B", 1.0, 1)])[0] == \
            b'{"event":{"symbol":"A","price":null,"volume":1}}'
        with pytest.raises(SiddhiAppCreationError, match="one template"):
            mappers.create_sink_mapper(STOCK, ann("json", Annotation("payload", (AnnotationElement("a", "x"),))))
        with pytest.raises(SiddhiAppCreationError, match="not an attribute"):
            mappers.create_sink_mapper(STOCK, ann("json", Annotation("payload", (AnnotationElement(None, "{{x}}"),))))
        with pytest.raises(SiddhiAppCreationError, match="names no element"):
            mappers.create_sink_mapper(STOCK, ann("json", enclosing_element="."))
        # Siddhi splits at the dots and writes each name as it is (real Siddhi 5.1.33:
        # recorded/mapper-json-sink-enclosing-names.json)
        odd = mappers.create_sink_mapper(STOCK, ann("json", enclosing_element="$.a[0].b c."))
        assert odd.map([("A", 1.0, 2)]) == [b'{"a[0]":{"b c":{"event":{"symbol":"A","price":1.0,"volume":2}}}}']


# ------------------------------------------------------------------------------------ dynamic options
def test_map_for_sink_with_dynamic_options() -> None:
    templates = mappers.option_templates({"topic": "prices-{{symbol}}", "key": "{{volume}}", "acks": "all"}, STOCK)
    assert set(templates) == {"topic", "key"}
    rows = [("A", 1.0, 1), ("B", 2.0, 2), ("A", 3.0, 3)]
    pairs = mappers.map_for_sink(JsonSinkMapper(STOCK, event_grouping_enabled=False), rows, templates)
    assert [p for _, p in pairs] == [{"topic": "prices-A", "key": "1"}, {"topic": "prices-B", "key": "2"},
                                     {"topic": "prices-A", "key": "3"}]
    grouped = mappers.map_for_sink(JsonSinkMapper(STOCK), rows,
                                   mappers.option_templates({"topic": "p-{{symbol}}"}, STOCK))
    # Siddhi groups a chunk by its dynamic options and maps each group as an array, even of one.
    assert [(len(orjson.loads(p)), props["topic"]) for p, props in grouped] == [(2, "p-A"), (1, "p-B")]
    assert isinstance(orjson.loads(grouped[1][0]), list)
    # Chunks given back to back are mapped one by one: a chunk of one is an object.
    chunked = mappers.map_for_sink(JsonSinkMapper(STOCK), rows, None, [2, 1])
    assert [type(orjson.loads(p)).__name__ for p, _ in chunked] == ["list", "dict"]
    assert mappers.map_for_sink(JsonSinkMapper(STOCK), rows[:1]) == [
        (b'{"event":{"symbol":"A","price":1.0,"volume":1}}', {})]


def test_map_rows_for_sink_collects_what_fails_and_maps_the_rest() -> None:
    """With a ``failed`` list a message that does not map is recorded with its rows, the other
    messages of the batch are made: the chunk of a grouping mapper, the event otherwise."""
    payload = "{'s':{{symbol}}}"  # `{'s':a b}` is not JSON, even to Gson
    rows = [("a b", 1.0, 1), ("B", 2.0, 2), ("C", 3.0, 3), ("d e", 4.0, 4)]
    failed: mappers.Failures = []
    grouped = JsonSinkMapper(STOCK, payload=payload, validate_json=True)
    items, carried = mappers.map_rows_for_sink(grouped, rows, None, [2, 1, 1], failed)
    assert [p for p, _ in items] == [b"{'s':C}"] and carried == [[2]]
    assert [indexes for indexes, _ in failed] == [[0, 1], [3]]
    assert all(isinstance(exc, MappingError) for _, exc in failed)
    failed.clear()
    per_event = JsonSinkMapper(STOCK, payload=payload, validate_json=True, event_grouping_enabled=False)
    templates = mappers.option_templates({"topic": "t-{{volume}}"}, STOCK)
    items, carried = mappers.map_rows_for_sink(per_event, rows, templates, None, failed)
    assert items == [(b"{'s':B}", {"topic": "t-2"}), (b"{'s':C}", {"topic": "t-3"})] and carried == [[1], [2]]
    assert [indexes for indexes, _ in failed] == [[0], [3]]
    with pytest.raises(MappingError):  # without the list, the first failure is raised
        mappers.map_rows_for_sink(per_event, rows)


def test_template_text_formatting() -> None:
    t = mappers.Template("{{s}}/{{f}}/{{b}}/{{d}}/{{l}}", (Attribute("s", T.STRING), Attribute("f", T.FLOAT),
                                                           Attribute("b", T.BOOL), Attribute("d", T.DOUBLE),
                                                           Attribute("l", T.LONG)))
    assert t.render(("x", f32(55.6), True, None, 5)) == "x/55.6/true/null/5"
    assert t.attribute_names == ("s", "f", "b", "d", "l")
    assert mappers.is_template("a{{b}}") and not mappers.is_template("a{b}") and not mappers.is_template(3)


def test_map_rows_for_sink_says_which_rows_each_item_carries() -> None:
    rows = [("A", 1.0, 1), ("B", 2.0, 2), ("C", 3.0, 3)]
    items, carried = mappers.map_rows_for_sink(JsonSinkMapper(STOCK), rows, None, [2, 1])
    assert len(items) == 2 and carried == [[0, 1], [2]]  # an array for the first chunk
    items, carried = mappers.map_rows_for_sink(JsonSinkMapper(STOCK, event_grouping_enabled=False), rows, None, [2, 1])
    assert carried == [[0], [1], [2]]
    header = mappers.map_rows_for_sink(mappers.CsvSinkMapper(STOCK, header=True), rows)[1]
    assert header[0] == []  # the header line carries no row
