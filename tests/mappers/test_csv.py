"""The csv source and sink mappers."""
from __future__ import annotations

import struct

import pytest
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Annotation, AnnotationElement, Attribute, AttrType
from srota.mappers import CsvSinkMapper, CsvSourceMapper, MappingError

from srota import mappers

T = AttrType
STOCK = (Attribute("symbol", T.STRING), Attribute("price", T.FLOAT), Attribute("volume", T.LONG))
ALL = (Attribute("s", T.STRING), Attribute("i", T.INT), Attribute("l", T.LONG), Attribute("f", T.FLOAT),
       Attribute("d", T.DOUBLE), Attribute("b", T.BOOL), Attribute("o", T.OBJECT))


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def ann(*nested: Annotation, **options: str) -> Annotation:
    return Annotation("map", (AnnotationElement("type", "csv"),) + tuple(
        AnnotationElement(k.replace("_", "."), v) for k, v in options.items()), nested)


class TestSource:
    def test_default_mapping(self) -> None:
        assert CsvSourceMapper(STOCK).map(b"WSO2,55.6,100\n") == [("WSO2", f32(55.6), 100)]

    def test_many_lines_crlf_and_blank_lines(self) -> None:
        rows = CsvSourceMapper(STOCK).map(b"A,1,1\r\n\r\nB,2,2\r\n\n")
        assert rows == [("A", 1.0, 1), ("B", 2.0, 2)]

    def test_quoting(self) -> None:
        payload = b'"WSO2,No10,Palm Grove Rd", 55.6,100\n"say ""hi""",1,2\n"multi\nline",3,4'
        rows = CsvSourceMapper(STOCK).map(payload)
        assert rows == [("WSO2,No10,Palm Grove Rd", f32(55.6), 100), ('say "hi"', 1.0, 2), ("multi\nline", 3.0, 4)]

    def test_fields_convert_as_java_parses_them(self) -> None:
        # siddhi-map-csv: strings as they are, Java's parseInt/parseLong (no spaces),
        # parseFloat/parseDouble (spaces allowed), parseBoolean (true in any case, else false).
        m = CsvSourceMapper(ALL)
        assert m.map(b"x,1,2,0.5, 0.25 ,TRUE,obj") == [("x", 1, 2, 0.5, 0.25, True, "obj")]
        assert m.map(b" x ,-1,+2,1e3,2.5d,yes,") == [(" x ", -1, 2, 1000.0, 2.5, False, "")]
        assert m.map(b"null,1,2,NaN,-Infinity,false,null")[0][:1] == ("null",)
        for bad in (b"x, 1,2,0.5,0.25,true,o", b"x,1,2,0.5,1_0,true,o", b"x,1,2,inf,0.25,true,o"):
            with pytest.raises(MappingError):
                m.map(bad)

    def test_empty_numeric_field_is_a_mapping_error(self) -> None:
        with pytest.raises(MappingError, match="not a number") as err:
            CsvSourceMapper(STOCK).map(b"A,,1")
        assert err.value.attribute == "price"
        assert CsvSourceMapper(STOCK, fail_on_unknown_attribute=False).map(b"A,,1") == [("A", None, 1)]
        assert CsvSourceMapper(STOCK).map(b",1,1") == [("", 1.0, 1)]  # an empty string is a string

    def test_header_skips_the_first_message_only(self) -> None:
        m = CsvSourceMapper(STOCK, delimiter="|", header=True)
        assert m.map("symbol|price|volume") == []
        assert m.map("A|1|2\nB|3|4\n") == [("A", 1.0, 2), ("B", 3.0, 4)]
        assert m.map("C|5|6") == [("C", 5.0, 6)]

    def test_tab_delimiter_trims_fields(self) -> None:
        m = CsvSourceMapper(STOCK, delimiter="\\t")
        assert m.map(b" WSO2 \t 00.3\t16\n\n\"a b\" \t1\t2") == [("WSO2", f32(0.3), 16), ("a b", 1.0, 2)]

    def test_tab_delimiter_trims_what_java_calls_white_space(self) -> None:
        # Commons CSV trims by Character.isWhitespace: the line and paragraph separators and
        # U+001F too, not a no-break space (real Siddhi 5.1.33: recorded/mapper-csv-tab-trims-java-white-space.json)
        m = CsvSourceMapper(STOCK, delimiter="\\t")
        assert m.map("\u2028x\u2029\t1\t2\n\u3000\x1fy\u2009\t1\t2\n\u00a0z\u2007\t1\t2") == [
            ("x", 1.0, 2), ("y", 1.0, 2), ("\u00a0z\u2007", 1.0, 2)]
        assert CsvSourceMapper(STOCK).map('"a,b"\u2028\u3000,1,2') == [("a,b", 1.0, 2)]

    def test_spaces_after_a_closing_quote(self) -> None:
        # Apache Commons CSV (siddhi-map-csv) skips them; Python's csv module would refuse.
        assert CsvSourceMapper(STOCK).map(b'"a,b"  ,1,2') == [("a,b", 1.0, 2)]
        assert CsvSourceMapper(STOCK, delimiter="::").map(b'"a" ::1::2') == [("a", 1.0, 2)]

    def test_multi_character_delimiter(self) -> None:
        m = CsvSourceMapper(STOCK, delimiter="-/-")
        assert m.map(b'WSO2-/-55.6-/-100\n"a-/-b"-/-1-/-2') == [("WSO2", f32(55.6), 100), ("a-/-b", 1.0, 2)]

    def test_attributes_by_column_and_transport(self) -> None:
        m = CsvSourceMapper((*STOCK, Attribute("topic", T.STRING)),
                            attribute_map={"symbol": "2", "price": "0", "volume": "1", "topic": "trp:topic"})
        assert m.map(b"55.6,100,WSO2", {"topic": "stocks"}) == [("WSO2", f32(55.6), 100, "stocks")]

    def test_unicode(self) -> None:
        assert CsvSourceMapper(STOCK).map("\u6771\u4eac \U0001f600,1,2".encode()) == [("\u6771\u4eac \U0001f600", 1.0, 2)]

    def test_fail_on_unknown_attribute(self) -> None:
        strict = CsvSourceMapper(STOCK)
        with pytest.raises(MappingError) as err:
            strict.map(b"A,1")
        assert err.value.attribute == "volume" and "missing" in err.value.reason
        with pytest.raises(MappingError) as err:
            strict.map(b"A,1,2\nB,x,3")
        assert err.value.index == 1 and err.value.attribute == "price"
        assert strict.map(b"A,1,2,extra") == [("A", 1.0, 2)]  # extra fields are ignored, as in Siddhi
        lenient = CsvSourceMapper(STOCK, fail_on_unknown_attribute=False)
        assert lenient.map(b"A,x") == [("A", None, None)]
        assert lenient.map(b"A,1,2,extra") == [("A", 1.0, 2)]

    def test_only_the_failing_records_are_dropped(self) -> None:
        with pytest.raises(MappingError) as err:
            CsvSourceMapper(STOCK).map(b"A,1,2\nB,x,3\nC,4,5\nD,6,y")
        assert err.value.rows == [("A", 1.0, 2), ("C", 4.0, 5)]
        assert err.value.index == 1 and "2 of 4 records" in err.value.reason

    @pytest.mark.parametrize("payload", [b"\xff\xfe,1,2", b"A,1,2\x00\x01", b'"unterminated,1,2', b'"ab"c,1,2'])
    def test_malformed_and_binary(self, payload: bytes) -> None:
        with pytest.raises(MappingError) as err:
            CsvSourceMapper(STOCK).map(payload)
        assert err.value.payload == payload

    def test_rejects_non_text(self) -> None:
        with pytest.raises(MappingError, match="bytes or text"):
            CsvSourceMapper(STOCK).map(["A", 1, 2])

    def test_range_errors(self) -> None:
        with pytest.raises(MappingError, match="out of range for int"):
            CsvSourceMapper((Attribute("i", T.INT),)).map(b"3000000000")

    @pytest.mark.parametrize(("kwargs", "message"), [
        ({"delimiter": '"'}, "cannot contain a quote"),
        ({"delimiter": "a\nb"}, "line break"),
        ({"attribute_map": {"symbol": "x", "price": "1", "volume": "2"}}, "column index"),
        ({"attribute_map": {"symbol": "-1", "price": "1", "volume": "2"}}, "negative"),
    ])
    def test_bad_configuration(self, kwargs: dict, message: str) -> None:
        with pytest.raises(ValueError, match=message):
            CsvSourceMapper(STOCK, **kwargs)

    def test_from_annotation(self) -> None:
        attrs = Annotation("attributes", (AnnotationElement("symbol", "2"), AnnotationElement("price", "0"),
                                          AnnotationElement("volume", "1")))
        m = mappers.create_source_mapper(STOCK, ann(attrs, header="true", delimiter="-"), "S")
        assert m.map(b"price-volume-symbol") == []
        assert m.map(b"55.6-100-WSO2") == [("WSO2", f32(55.6), 100)]
        m2 = mappers.create_source_mapper(STOCK, ann(**{"header.present": "true", "fail.on.unknown.attribute": "false"}))
        assert m2.map(b"h") == []
        assert m2.map(b"A") == [("A", None, None)]
        with pytest.raises(SiddhiAppCreationError, match="quote"):
            mappers.create_source_mapper(STOCK, ann(delimiter='x"'))


class TestSink:
    def test_default(self) -> None:
        assert CsvSinkMapper(STOCK).map([("WSO2", f32(55.6), 100)]) == [b"WSO2,55.6,100\n"]

    def test_header_once_as_its_own_message_and_grouping(self) -> None:
        m = CsvSinkMapper(STOCK, delimiter="-", header=True, event_grouping_enabled=True)
        assert m.preamble() == [b"symbol-price-volume\n"]
        assert m.preamble() == []
        assert m.map([("A", 1.0, 1), ("B", 2.5, 2)]) == [b"A-1.0-1\nB-2.5-2\n"]
        per_event = CsvSinkMapper(STOCK, header=True)
        assert mappers.map_for_sink(per_event, [("A", 1.0, 1), ("B", 2.5, 2)]) == [
            (b"symbol,price,volume\n", {}), (b"A,1.0,1\n", {}), (b"B,2.5,2\n", {})]
        assert mappers.map_for_sink(per_event, [("C", 1.0, 1)]) == [(b"C,1.0,1\n", {})]

    def test_payload_columns(self) -> None:
        m = CsvSinkMapper(STOCK, payload_columns={"symbol": 0, "price": 2, "volume": 1}, header=True)
        assert m.preamble() == [b"symbol,volume,price\n"]
        assert m.map([("WSO2", f32(55.6), 100)]) == [b"WSO2,100,55.6\n"]

    def test_quoting_nulls_and_types(self) -> None:
        # Commons CSV minimal quoting; null is `null`; doubles as Java writes them.
        (out,) = CsvSinkMapper(ALL).map([('a,"b"', 1, None, f32(0.1), 1e-9, False, {"k": 1})])
        assert out == b'"a,""b""",1,null,0.1,1.0E-9,false,"{""k"":1}"\n'
        (out,) = CsvSinkMapper(STOCK).map([(" lead", 1.0, None)])
        assert out == b'" lead",1.0,null\n'
        (out,) = CsvSinkMapper(STOCK).map([("", 12345678.0, 1)])
        assert out == b'"",1.2345678E7,1\n'

    def test_round_trip(self) -> None:
        rows = [("multi\nline \u00e9", 1, 2 ** 40, f32(3.3), 0.1, True, "o"), ("s", -1, 0, 0.0, -2.5, False, "")]
        sink, src = CsvSinkMapper(ALL), CsvSourceMapper(ALL)
        assert [r for p in sink.map(rows) for r in src.map(p)] == rows
        grouped = CsvSinkMapper(ALL, event_grouping_enabled=True, header=True)
        header_src = CsvSourceMapper(ALL, header=True)
        assert header_src.map(grouped.preamble()[0]) == []
        assert header_src.map(grouped.map(rows)[0]) == rows
        # A null is written `null`, which Siddhi reads back as the text "null" or a mapping error.
        (line,) = sink.map([(None,) * 7])
        assert line == b"null,null,null,null,null,null,null\n"
        assert CsvSourceMapper(ALL, fail_on_unknown_attribute=False).map(line) == [
            ("null", None, None, None, None, False, "null")]

    def test_errors(self) -> None:
        with pytest.raises(ValueError, match="0..1"):
            CsvSinkMapper(STOCK, payload_columns={"symbol": 0, "price": 2})
        with pytest.raises(ValueError, match="not an attribute"):
            CsvSinkMapper(STOCK, payload_columns={"nope": 0})
        with pytest.raises(MappingError, match="fewer values"):
            CsvSinkMapper(STOCK).map([("A",)])

    def test_from_annotation(self) -> None:
        payload = Annotation("payload", (AnnotationElement("symbol", "0"), AnnotationElement("price", "2"),
                                         AnnotationElement("volume", "1")))
        m = mappers.create_sink_mapper(STOCK, ann(payload, delimiter=";"), "S")
        assert m.map([("A", 1.5, 3)]) == [b"A;3;1.5\n"]
        with pytest.raises(SiddhiAppCreationError, match="must be an integer"):
            mappers.create_sink_mapper(STOCK, ann(Annotation("payload", (AnnotationElement("symbol", "x"),))))
        with pytest.raises(SiddhiAppCreationError, match="pairs"):
            mappers.create_sink_mapper(STOCK, ann(Annotation("payload", (AnnotationElement(None, "x"),))))
