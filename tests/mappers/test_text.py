"""The text source and sink mappers: edges the siddhi-map-text suite does not reach."""
from __future__ import annotations

import struct

import pytest
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Annotation, AnnotationElement, Attribute, AttrType
from srota.mappers import MappingError, TextSinkMapper, TextSourceMapper
from srota.mappers._text import decode_escapes

from srota import mappers

T = AttrType
STOCK = (Attribute("symbol", T.STRING), Attribute("price", T.FLOAT), Attribute("volume", T.LONG))
ALL = (Attribute("s", T.STRING), Attribute("i", T.INT), Attribute("l", T.LONG), Attribute("f", T.FLOAT),
       Attribute("d", T.DOUBLE), Attribute("b", T.BOOL), Attribute("o", T.OBJECT))
EPOCH_MS = 1_700_000_000_000


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def ann(*nested: Annotation, **options: str) -> Annotation:
    return Annotation("map", (AnnotationElement("type", "text"),) + tuple(
        AnnotationElement(k.replace("_", "."), v) for k, v in options.items()), nested)


def attributes(*elements: tuple[str | None, str]) -> Annotation:
    return Annotation("attributes", tuple(AnnotationElement(k, v) for k, v in elements))


def payload(text: str, key: str | None = None) -> Annotation:
    return Annotation("payload", (AnnotationElement(key, text),))


def text_of(values: dict[str, str]) -> str:
    return ",\n".join(f"{k}:{v}" for k, v in values.items())


class TestDefaultSource:
    def test_every_attribute_type(self) -> None:
        m = TextSourceMapper(ALL)
        payload_ = text_of({"s": '"x y"', "i": "-7", "l": str(EPOCH_MS), "f": "55.6", "d": "1.5e3", "b": "TRUE",
                            "o": "1,2"})
        assert m.map(payload_) == [("x y", -7, EPOCH_MS, f32(55.6), 1500.0, True, "12")]

    def test_epoch_millisecond_long_and_thousands_separators(self) -> None:
        m = TextSourceMapper(STOCK)
        assert m.map(f'symbol:"A",\nprice:1,234.5,\nvolume:{EPOCH_MS}') == [("A", f32(1234.5), EPOCH_MS)]
        assert m.map('symbol:"A",\nprice:1,\nvolume:1,700,000,000,000') == [("A", 1.0, EPOCH_MS)]

    def test_java_number_syntax(self) -> None:
        m = TextSourceMapper(ALL)
        row = m.map(text_of({"s": "'q'", "i": "+1", "l": "-2", "f": "2f", "d": "3d", "b": "yes", "o": "o"}))
        assert row == [("q", 1, -2, 2.0, 3.0, False, "o")]

    def test_null_is_null_for_every_type(self) -> None:
        m = TextSourceMapper(ALL)
        assert m.map(text_of({n.name: "null" for n in ALL})) == [(None,) * 7]

    def test_string_quotes_and_spaces(self) -> None:
        m = TextSourceMapper(STOCK)
        assert m.map('  symbol :  "a:b, c"  ,\nprice:1,\nvolume:2')[0][0] == "a:b, c"
        assert m.map('symbol:"",\nprice:1,\nvolume:2')[0][0] == ""
        assert m.map("symbol:bare,\nprice:1,\nvolume:2")[0][0] == "bare"

    def test_missing_attribute(self) -> None:
        with pytest.raises(MappingError, match="key:value pairs") as info:
            TextSourceMapper(STOCK).map('symbol:"A",\nprice:1')
        assert info.value.rows == []
        with pytest.raises(MappingError) as info:
            TextSourceMapper(STOCK).map('symbol:"A",\nother:1,\nvolume:1')
        assert info.value.attribute == "price"
        lenient = TextSourceMapper(STOCK, fail_on_missing_attribute=False)
        assert lenient.map('volume:3') == [(None, None, 3)]
        assert lenient.map("") == [(None, None, None)]

    def test_values_that_do_not_parse_fail_even_when_lenient(self) -> None:
        lenient = TextSourceMapper(ALL, fail_on_missing_attribute=False)
        for key, bad in (("i", "1.5"), ("i", "2147483648"), ("l", "9223372036854775808"), ("f", "abc"),
                         ("d", "1_0"), ("l", " ")):
            with pytest.raises(MappingError) as info:
                lenient.map(f"{key}:{bad}")
            assert info.value.attribute == key

    def test_malformed_payloads(self) -> None:
        m = TextSourceMapper(STOCK)
        with pytest.raises(MappingError, match="UTF-8"):
            m.map(b"\xff\xfe")
        with pytest.raises(MappingError, match="expects text or bytes"):
            m.map({"symbol": "A"})
        with pytest.raises(MappingError):
            m.map("just some words")

    def test_grouping_drops_only_the_failing_events(self) -> None:
        m = TextSourceMapper(STOCK, event_grouping=True)
        with pytest.raises(MappingError) as info:
            m.map('symbol:"A",\nprice:1,\nvolume:1\n~~~~~~~~~~\nbroken\n~~~~~~~~~~\nsymbol:"C",\nprice:3,\nvolume:3')
        assert info.value.rows == [("A", 1.0, 1), ("C", 3.0, 3)]
        assert info.value.index == 1

    def test_grouping_with_crlf_and_a_trailing_delimiter(self) -> None:
        m = TextSourceMapper(STOCK, event_grouping=True, new_line="\r\n")
        text = 'symbol:"A",\r\nprice:1,\r\nvolume:1\r\n~~~~~~~~~~\r\nsymbol:"B",\r\nprice:2,\r\nvolume:2\r\n~~~~~~~~~~\r\n'
        assert m.map(text.encode()) == [("A", 1.0, 1), ("B", 2.0, 2)]

    def test_a_grouped_message_is_an_event_a_chunk_as_in_siddhi(self) -> None:
        assert TextSourceMapper(STOCK, event_grouping=True).event_grouping_enabled is False


class TestCustomSource:
    def mapper(self, fail: bool = True, **amap: str) -> TextSourceMapper:
        return TextSourceMapper(STOCK, attribute_map=amap or {"symbol": "A[1]", "price": "A[2]", "volume": "B"},
                                regexes={"A": r"(\w+)\s([-.0-9,]+)", "B": r"volume=([-0-9]+)"},
                                fail_on_missing_attribute=fail)

    def test_groups_and_commas(self) -> None:
        assert self.mapper().map("IBM 1,234.5 volume=1700000000000") == [("IBM", 1234.5, EPOCH_MS)]

    def test_whole_match_and_unmatched_group(self) -> None:
        m = TextSourceMapper(STOCK, attribute_map={"symbol": "A[0]", "price": "B[2]", "volume": "B[1]"},
                             regexes={"A": r"[A-Z]+", "B": r"(\d+)(?:x(\d+))?"}, fail_on_missing_attribute=False)
        assert m.map("IBM 5") == [("IBM", None, 5)]

    def test_java_named_groups_and_ascii_classes(self) -> None:
        m = TextSourceMapper(STOCK, attribute_map={"symbol": "A[1]", "price": "A[2]", "volume": "A[3]"},
                             regexes={"A": r"(?<sym>\w+) (\d+) (\d+)"})
        assert m.map("abc 1 2") == [("abc", 1.0, 2)]
        with pytest.raises(MappingError):  # Java's \w is ASCII: 'é' is not a word character
            m.map("é 1 2")

    def test_regex_runs_against_the_whole_message(self) -> None:
        with pytest.raises(MappingError, match="found no value"):
            self.mapper().map("nothing here")
        assert self.mapper(fail=False).map("nothing here") == [(None, None, None)]

    def test_configuration_errors_fail_every_event(self) -> None:
        for amap, reason in (({"symbol": "A[x]", "price": "A[2]", "volume": "B"}, "not a number"),
                             ({"symbol": "Z[1]", "price": "A[2]", "volume": "B"}, "regex.Z"),
                             ({"symbol": "A[9]", "price": "A[2]", "volume": "B"}, "no group 9")):
            with pytest.raises(MappingError, match=reason):
                self.mapper(False, **amap).map("IBM 1 volume=2")

    def test_a_group_out_of_range_is_only_an_error_when_the_regex_matches(self) -> None:
        m = self.mapper(False, symbol="A[9]", price="A[2]", volume="B")
        assert m.map("volume=2") == [(None, None, 2)]

    def test_transport_properties(self) -> None:
        m = self.mapper(symbol="trp:topic", price="A[2]", volume="trp:offset")
        assert m.map("IBM 1 volume=2", {"topic": "t", "offset": str(EPOCH_MS)}) == [("t", 1.0, EPOCH_MS)]
        with pytest.raises(MappingError, match="transport property 'topic'"):
            m.map("IBM 1 volume=2", {"offset": 1})
        lenient = self.mapper(False, symbol="trp:topic", price="A[2]", volume="trp:offset")
        assert lenient.map("IBM 1", {}) == [(None, 1.0, None)]

    def test_a_bad_number_fails_even_when_lenient(self) -> None:
        with pytest.raises(MappingError, match="incompatible"):
            self.mapper(False).map("IBM 1.2.3 volume=2")


class TestSink:
    def test_default_format_every_type_and_nulls(self) -> None:
        m = TextSinkMapper(ALL)
        row = ("x", 1, EPOCH_MS, f32(55.6), 1e-4, True, {"k": [1]})
        assert m.map([row]) == [b's:"x",\ni:1,\nl:1700000000000,\nf:55.6,\nd:1.0E-4,\nb:true,\no:{"k":[1]}']
        assert m.map([(None,) * 7]) == [b"s:null,\ni:null,\nl:null,\nf:null,\nd:null,\nb:null,\no:null"]

    def test_round_trip_through_the_source(self) -> None:
        rows = [("a", 1.5, EPOCH_MS), (None, None, None), ("q", 2.0, 3)]
        text = TextSinkMapper(STOCK, event_grouping_enabled=True).map(rows)[0]
        assert TextSourceMapper(STOCK, event_grouping=True, fail_on_missing_attribute=False).map(text) == rows

    def test_grouping_new_line_and_delimiter(self) -> None:
        m = TextSinkMapper(STOCK, payload="{{symbol}}", event_grouping_enabled=True, delimiter="##", new_line="\r\n")
        assert m.map([("a", 1.0, 1), ("b", 2.0, 2)]) == [b"a\r\n##\r\nb"]
        assert m.map([("a", 1.0, 1)]) == [b"a"]
        assert m.map([]) == []

    def test_template_values_as_java_writes_them(self) -> None:
        m = TextSinkMapper(ALL, payload="{{s}}|{{l}}|{{f}}|{{d}}|{{b}}|{{i}}")
        assert m.map([(None, None, EPOCH_MS, f32(0.1), 12345678.9, False, None)]) == [
            b"null|1700000000000|0.1|1.23456789E7|false|null"]

    def test_template_values_at_the_extremes_as_java_17_writes_them(self) -> None:
        # JDK 17's Double.toString and Float.toString do not always write the shortest digits
        m = TextSinkMapper(ALL, payload="{{f}}|{{d}}")
        assert m.map([(None, None, None, f32(7.706176681832562e+25), 7.8117e20, None, None)]) == [
            b"7.7061766E25|7.811699999999999E20"]

    def test_mustache(self) -> None:
        m = TextSinkMapper(STOCK, payload="{{symbol}}/{{{symbol}}}/{{& symbol}}/{{price}}/{{nope}}{{! note }}",
                           mustache=True)
        assert m.map([('a&b<"=\'`>', 1.5, 1)]) == [b"a&amp;b&lt;&quot;&#61;&#39;&#96;&gt;/a&b<\"='`>/a&b<\"='`>/1.5/"]
        assert m.map([(None, None, None)]) == [b"////"]
        with pytest.raises(ValueError, match="sections"):
            TextSinkMapper(STOCK, payload="{{#symbol}}x{{/symbol}}", mustache=True)

    def test_short_rows_are_mapping_errors(self) -> None:
        with pytest.raises(MappingError):
            TextSinkMapper(STOCK).map([("a",)])


class TestFactory:
    def test_options_and_escapes(self) -> None:
        m = mappers.create_source_mapper(STOCK, ann(event_grouping_enabled="true", delimiter="--",
                                                    new_line_character="\\r\\n"))
        assert isinstance(m, TextSourceMapper)
        assert (m.delimiter, m.new_line) == ("--", "\r\n")
        assert decode_escapes("a\\tb\\\\n") == "a\tb\\n"

    def test_regex_options_and_attributes(self) -> None:
        m = mappers.create_source_mapper(STOCK, ann(attributes(("symbol", "A[1]"), ("price", "A[2]"),
                                                               ("volume", "B")),
                                                    **{"regex_A": r"(\w+) ([0-9.]+)", "regex_B": r"v=(\d+)"}))
        assert m.map("IBM 2.5 v=3") == [("IBM", 2.5, 3)]

    @pytest.mark.parametrize("annotation, message", [
        (ann(regex_A="(unclosed"), "not a valid regular expression"),
        (ann(nosuch="x"), "unknown option"),
        (ann(fail_on_missing_attribute="maybe"), "'true' or 'false'"),
        (ann(delimiter=""), "delimiter cannot be empty"),
    ])
    def test_source_creation_errors(self, annotation: Annotation, message: str) -> None:
        with pytest.raises(SiddhiAppCreationError, match=message):
            mappers.create_source_mapper(STOCK, annotation, "S")

    @pytest.mark.parametrize("annotation, message", [
        (ann(payload("{{id}}")), "id"),
        (ann(payload("price")), "object @payload"),
        (ann(Annotation("payload", (AnnotationElement("a", "x"), AnnotationElement("b", "y")))), "multiple"),
        (ann(payload("{{#price}}{{/price}}"), mustache_enabled="true"), "not supported"),
    ])
    def test_sink_creation_errors(self, annotation: Annotation, message: str) -> None:
        with pytest.raises(SiddhiAppCreationError, match=message):
            mappers.create_sink_mapper(STOCK, annotation, "S")

    def test_back_quoted_payload_is_literal_text(self) -> None:
        m = mappers.create_sink_mapper(STOCK, ann(payload("`price`")))
        assert m.map([("a", 1.0, 1)]) == [b"price"]


class TestSiddhiDifferential:
    """Divergences from siddhi-map-text 2.1.x on Siddhi 5.1.33 found by the differential tests
    (``python -m tests.differential --family text_map``); several are also recorded cases
    (tests/differential/recorded/mapper-text-*.json)."""

    def test_unicode_decimal_digits_are_an_int_and_a_long(self) -> None:
        # Integer.parseInt and Long.parseLong read any Unicode decimal digit (Character.digit)
        m = TextSourceMapper(ALL, fail_on_missing_attribute=False)
        assert m.map("i:١٢,\nl:+٣") == [(None, 12, 3, None, None, None, None)]
        assert m.map("i:１２") == [(None, 12, None, None, None, None, None)]
        custom = TextSourceMapper(STOCK, attribute_map={"symbol": "A[1]", "price": "A[2]", "volume": "A[3]"},
                                  regexes={"A": r"(\w+) (\S+) (\S+)"})
        assert custom.map("x 1 ٧") == [("x", 1.0, 7)]
        with pytest.raises(MappingError):  # Double.parseDouble reads ASCII digits only
            custom.map("x ٣.٥ 7")

    def test_java_floating_point_syntax(self) -> None:
        m = TextSourceMapper(ALL, fail_on_missing_attribute=False)
        assert m.map("d:0x1.8p1,\nf:0X1P-2f")[0][3:5] == (0.25, 3.0)
        assert m.map("d:0x1p2000")[0][4] == float("inf")
        for bad in ("NaNf", "Infinityd", "0x1F", "0x1.8", "1e", "e5", "0x"):
            with pytest.raises(MappingError):
                m.map(f"d:{bad}")

    def test_a_float_is_rounded_once_from_its_text(self) -> None:
        # Float.parseFloat rounds the decimal to 32 bits directly: through a double, which lands
        # on the midpoint of two floats, it would round up
        m = TextSourceMapper(ALL, fail_on_missing_attribute=False)
        assert m.map("f:1.0000001788139343")[0][3] == f32(1.0000001192092896)
        assert m.map("f:1.00000017881393432617187501")[0][3] == f32(1.0000002384185791)
        assert m.map("f:0x1.0000010000000001p0")[0][3] == f32(1.0000001192092896)
        assert m.map("f:3.4028235677973366e38")[0][3] == f32(3.4028234663852886e38)
        assert m.map("f:3.4028236e38")[0][3] == float("inf")

    def test_regex_dot_and_dollar_know_javas_line_terminators(self) -> None:
        m = TextSourceMapper(STOCK, attribute_map={"symbol": "A", "price": "B", "volume": "C"},
                             regexes={"A": r"s=(.*)", "B": r"p=([0-9.]+)$", "C": r"v=(\d+)\Z"},
                             fail_on_missing_attribute=False)
        assert m.map("s=a\rb p=1 v=2\r\n") == [("a", None, 2)]
        assert m.map("v=2\u2028s=x\u0085y p=1\u2029") == [("x", 1.0, None)]
        assert m.map("s=\u2028 p=1\n") == [("", 1.0, None)]
        dotall = TextSourceMapper(STOCK, attribute_map={"symbol": "A", "price": "B", "volume": "C"},
                                  regexes={"A": r"(?s)s=(.*)", "B": r"p=(\S+)", "C": r"v=(\d+)"},
                                  fail_on_missing_attribute=False)
        assert dotall.map("s=a\rb") == [("a\rb", None, None)]

    def test_regexes_are_javas_syntax(self) -> None:
        m = TextSourceMapper(STOCK, attribute_map={"symbol": "A", "price": "B", "volume": "C"},
                             regexes={"A": r"(\p{Alpha}+)\z", "B": r"\Q1.5\E(\d)", "C": r"\b(\d+)x"},
                             fail_on_missing_attribute=False)
        # (Java 17's \b knows every letter: no boundary between 'é' and '1')
        assert m.map("1.57 é12x abc") == [("abc", 7.0, None)]
        assert m.map("1.57 e 12x abc") == [("abc", 7.0, 12)]

    def test_a_group_index_is_read_as_integer_parse_int(self) -> None:
        m = TextSourceMapper(STOCK, attribute_map={"symbol": "A[ 1]", "price": "A[2]", "volume": "A[3]"},
                             regexes={"A": r"(\w+) (\S+) (\S+)"}, fail_on_missing_attribute=False)
        with pytest.raises(MappingError, match="not a number"):
            m.map("x 1 2")

    def test_grouped_events_lose_a_line_breaks_length_whatever_stands_there(self) -> None:
        m = TextSourceMapper(STOCK, event_grouping=True, fail_on_missing_attribute=False)
        # the delimiter glued to the last line: Siddhi cuts the '9' (and a quote off "b")
        assert m.map('symbol:"a",\nvolume:19~~~~~~~~~~\nsymbol:"b"x~~~~~~~~~~\nvolume:3') == [
            ("a", None, 1), ("b", None, None), (None, None, 3)]
        assert m.map('volume:1\n~~~~~~~~~~\n') == [(None, None, 1)]  # the last event keeps its line break

    def test_an_empty_event_loses_the_rest_of_a_grouped_message(self) -> None:
        m = TextSourceMapper(STOCK, event_grouping=True, fail_on_missing_attribute=False)
        for text in ("~~~~~~~~~~\nvolume:1", "~~~~~~~~~~\n", "~~~~~~~~~~\n~~~~~~~~~~\n"):
            with pytest.raises(MappingError, match="delimiter") as info:
                m.map(text)
            assert info.value.rows == []
        with pytest.raises(MappingError, match="the rest of the message is lost") as info:
            m.map("volume:1\n~~~~~~~~~~\n~~~~~~~~~~\nvolume:2\n~~~~~~~~~~\nvolume:3")
        assert info.value.rows == [(None, None, 1)]
        assert m.map("") == [(None, None, None)]  # no delimiter at all: one (empty) event

    def test_mustache_escapes_control_characters_as_mustache_java_does(self) -> None:
        m = TextSinkMapper(STOCK, payload="{{symbol}}|{{{symbol}}}", mustache=True)
        assert m.map([("a\tb\nc\rd\x00\x0e", 1.0, 1)]) == [b"a&#9;b&#10;c&#13;d&#0;\x0e|a\tb\nc\rd\x00\x0e"]

    def test_mustache_templates_parse_as_mustache_java_parses_them(self) -> None:
        def render(template: str) -> bytes:
            return TextSinkMapper(STOCK, payload=template, mustache=True).map([("<a>", 1.5, 2)])[0]

        assert render("{{symbol}}}") == b"&lt;a&gt;}"
        assert render("a\rb{{volume}}\r\nc\r") == b"ab2\r\nc"  # a carriage return without a line feed is lost
        assert render("{{%pragma}}{{ volume }}|{{&  symbol }}|{{{ symbol }}}") == b"2|<a>|<a>"
        for bad in ("{{{symbol}}", "{{}}", "x {{symbol", "{{>partial}}", "{{=<% %>=}}"):
            with pytest.raises(ValueError):
                TextSinkMapper(STOCK, payload=bad, mustache=True)

    def test_payload_placeholders_are_read_as_siddhis_template_builder_reads_them(self) -> None:
        with pytest.raises(ValueError, match="names no attribute"):
            TextSinkMapper(STOCK, payload="{{ symbol }}")
        m = TextSinkMapper(STOCK, payload="{{(symbol)}}|{{[price]}}|{{{volume}}}")
        assert m.map([("a", 1.5, 2)]) == [b"a|1.5|{2}"]
