"""Port of siddhi-map-xml's ``XmlSourceMapperTestCase`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/map/xml/sourcemapper/
XmlSourceMapperTestCase.java`` of siddhi-io/siddhi-map-xml.  Each test runs the same app text
(an ``inMemory`` source with the same ``@map``, ``FooStream`` into ``BarStream``) on a service
host and publishes the same payloads to its topic (named after the test, so that tests do not
share one).  Where the Java test counts events, the port asserts the count and the rows that
follow from the payloads, and the payloads Siddhi drops as mapping errors; where it looks for
a log line (``UnitTestAppender``), the port asserts Srota's logged reason for the dropped
payload and the mapping error counter.  ``testTrpInMemory`` sources become ``inMemory`` ones
whose messages carry the transport properties that source adds.
"""
from __future__ import annotations

import asyncio
from typing import Any

import pytest
from structlog.testing import capture_logs

from srota import SiddhiAppCreationError
from tests.mappers.harness import Running, f32, publish, until

#: What upstream's TestTrpInMemorySource attaches to every message (prop1='foo', prop2='bar').
TRP = {"symbol": "foo", "price": "bar"}

_STOCK = "symbol string, price float, volume long"


def _app(name: str, mapping: str, attributes: str = _STOCK) -> str:
    """The upstream app: ``@source(type='inMemory', @map(...))`` on FooStream, FooStream into BarStream."""
    return (f"@App:name('{name}')"
            f"@source(type='inMemory', topic='{name}', {mapping}) "
            f"define stream FooStream ({attributes}); "
            f"define stream BarStream ({attributes}); "
            "from FooStream select * insert into BarStream; ")


def _rows(got: list[list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    return [row for chunk in got for row in chunk]


async def _settle(r: Running, got: list[list[tuple[Any, ...]]], rows: int, errors: int = 0) -> None:
    """Wait for ``rows`` events and ``errors`` dropped payloads, then a moment more for any others."""
    await until(lambda: len(_rows(got)) >= rows and r.mapping_errors("FooStream") >= errors)
    await asyncio.sleep(0.1)


def _failures(logs: list[dict[str, Any]]) -> list[str]:
    """The reasons the host logged for FooStream payloads that did not map."""
    return [e["reason"] for e in logs
            if e["event"] == "payload could not be mapped" and e.get("stream") == "FooStream"]


def _portfolio(*stocks: str) -> str:
    return ('<?xml version="1.0"?>'
            '<portfolio xmlns:dt="urn:schemas-microsoft-com:datatypes">' + "".join(stocks) + "</portfolio>")


# ------------------------------------------------------------------------------------ default mapping
async def test_testXmlInputMappingDefault(run: Any) -> None:
    """Default mapping: 3 of 8 messages map (an empty string is "", an empty or non-numeric
    number drops the message; 75 is 75.0 for a float)."""
    name = "XmlSourceDefault"
    r = await run(_app(name, "@map(type='xml')", "symbol string, price float, volume int"))
    got = r.watch("BarStream")
    await publish(name, "<events><event><symbol></symbol><price>55.689</price>"
                        "<volume>100</volume></event></events>")
    await publish(name, "<events><event><symbol>IBM@#$%^*</symbol><price>75</price>"
                        "<volume>10</volume></event></events>")
    await publish(name, "<events><event><symbol>WSO2</symbol><price>75</price>"
                        "<volume></volume></event></events>")
    await publish(name, "<events><event><symbol>WSO2</symbol><price></price>"
                        "<volume>10</volume></event></events>")
    await publish(name, "<events><event><symbol> </symbol><price>56</price>"
                        "<volume>10</volume></event></events>")
    await publish(name, "<events><event><symbol>WSO2</symbol><price>56</price>"
                        "<volume>aa</volume></event></events>")
    await publish(name, "<events><event><symbol>WSO2</symbol><price>bb</price>"
                        "<volume>10</volume></event></events>")
    await publish(name, "<events><event><symbol>WSO2</symbol><price>bb</price>"
                        "<volume>10.6</volume></event></events>")
    await _settle(r, got, 3, errors=5)
    assert _rows(got) == [("", f32(55.689), 100), ("IBM@#$%^*", 75.0, 10), (" ", 56.0, 10)]
    assert r.mapping_errors("FooStream") == 5


async def test_testXmlInputMappingDefaultMultipleEvents(run: Any) -> None:
    """Several <event>s in one message map; a sibling <event111> is ignored."""
    name = "XmlSourceDefaultMultiple"
    r = await run(_app(name, "@map(type='xml')"))
    got = r.watch("BarStream")
    await publish(name, "<events><event><symbol>WSO2</symbol><price>55.6</price>"
                        "<volume>100</volume></event><event><symbol>IBM</symbol><price>75.6</price>"
                        "<volume>10</volume></event><event111><symbol>IBM</symbol><price>75.6</price>"
                        "<volume>10</volume></event111></events>")
    await _settle(r, got, 2)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("IBM", f32(75.6), 10)]
    assert len(got) == 1  # the events of one message go in as one chunk
    assert r.mapping_errors("FooStream") == 0


async def test_testXmlInputMappingDefaultNegative(run: Any) -> None:
    """A root other than <events> and malformed XML map nothing."""
    name = "XmlSourceDefaultNegative"
    with capture_logs() as logs:
        r = await run(_app(name, "@map(type='xml')"))
        got = r.watch("BarStream")
        await publish(name, "<test><event><symbol>WSO2</symbol><price>55.6</price>"
                            "<volume>100</volume></event><event><symbol>IBM</symbol><price>75.6</price>"
                            "<volume>10</volume></event></test>")
        await publish(name, "<events><event><symbol>WSO2</symbol><price>55.6</price>"
                            "<volume>100</volume><event><symbol>IBM</symbol><price>75.6</price>"
                            "<volume>10</volume></event></events>")
        await publish(name, "<test><event><symbol>WSO2</symbol><price>55.6</price>"
                            "<volume>100</volume></event><event><symbol>IBM</symbol><price><v1>33</v1></price>"
                            "<volume>10</volume></event></test>")
        await _settle(r, got, 0, errors=3)
    assert _rows(got) == []
    assert r.mapping_errors("FooStream") == 3
    reasons = _failures(logs)
    assert "expects the root element <events>, found <test>" in reasons[0]
    assert reasons[1].startswith("invalid XML")


async def test_testXmlInputMappingDefaultMultipleEventsOnBinaryMessage(run: Any) -> None:
    """The default mapping of a byte[] (UTF-8) message."""
    name = "XmlSourceDefaultBinary"
    r = await run(_app(name, "@map(type='xml')"))
    got = r.watch("BarStream")
    events = ("<events><event><symbol>WSO2</symbol><price>55.6</price>"
              "<volume>100</volume></event><event><symbol>IBM</symbol><price>75.6</price>"
              "<volume>10</volume></event><event111><symbol>IBM</symbol><price>75.6</price>"
              "<volume>10</volume></event111></events>")
    await publish(name, events.encode("utf-8"))
    await _settle(r, got, 2)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("IBM", f32(75.6), 10)]


# ------------------------------------------------------------------------------------ custom mapping
async def test_testXmlInputMappingCustom1(run: Any) -> None:
    """enclosing.element='//portfolio': 4 of its 9 children map ("null" and "" are strings;
    a missing <volume>, "null" or "" for a number drop the event)."""
    name = "XmlSourceCustom1"
    r = await run(_app(name, "@map(type='xml', namespaces = "
                             "\"dt=urn:schemas-microsoft-com:datatypes,at=urn:schemas-microsoft-com:datatypes\", "
                             "enclosing.element=\"//portfolio\", @attributes(symbol = \"symbol\""
                             "                                           , price = \"price\""
                             "                                           , volume = \"volume\"))"))
    got = r.watch("BarStream")
    await publish(name, _portfolio(
        '  <stock exchange="nasdaq">    <volume>100</volume>    <symbol>WSO2</symbol>'
        '    <price dt:dt="number">55.6</price>  </stock>',
        '  <stock1 exchange="nyse">    <volume>200</volume>    <symbol>IBM</symbol>'
        '    <price dt:dt="number">75.6</price>  </stock1>',
        '  <stock1 exchange="nyse">    <volume1>200</volume1>    <symbol>IBM</symbol>'
        '    <price dt:dt="number">75.6</price>  </stock1>',
        '  <stock exchange="nasdaq">    <volume>null</volume>    <symbol>WSO2</symbol>'
        '    <price dt:dt="number">55.6</price>  </stock>',
        '  <stock exchange="nasdaq">    <volume>100</volume>    <symbol>null</symbol>'
        '    <price dt:dt="number">55.6</price>  </stock>',
        '  <stock exchange="nasdaq">    <volume>100</volume>    <symbol>WSO2</symbol>'
        '    <price dt:dt="number">null</price>  </stock>',
        '  <stock exchange="nasdaq">    <volume>100</volume>    <symbol></symbol>'
        '    <price dt:dt="number">100</price>  </stock>',
        '  <stock exchange="nasdaq">    <volume></volume>    <symbol>WSO2</symbol>'
        '    <price dt:dt="number">100</price>  </stock>',
        '  <stock exchange="nasdaq">    <volume>100</volume>    <symbol>WSO2</symbol>'
        '    <price dt:dt="number"></price>  </stock>'))
    # One message: the events that map go on, the message is counted once as a mapping error.
    await _settle(r, got, 4, errors=1)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("IBM", f32(75.6), 200), ("null", f32(55.6), 100),
                          ("", 100.0, 100)]
    assert r.mapping_errors("FooStream") == 1


async def test_testXmlInputMappingCustom2(run: Any) -> None:
    """XPaths to XML attributes (symbol/@exchange ...), one event per message."""
    name = "XmlSourceCustom2"
    r = await run(_app(name, "@map(type='xml', namespaces = "
                             "\"dt=urn:schemas-microsoft-com:datatypes\", "
                             "enclosing.element=\"//portfolio\", @attributes(symbol = \"symbol/@exchange\""
                             "                                           , price = \"price/@priceAttr\""
                             "                                           , volume = \"volume/@volAttr\"))"))
    got = r.watch("BarStream")
    await publish(name, _portfolio('  <stock exchange="nasdaq">    <volume volAttr="108">100</volume>'
                                   '    <symbol exchange="null">WSO2</symbol>'
                                   '    <price priceAttr="55.8">55.6</price>  </stock>'))
    await publish(name, _portfolio('  <stock exchange="nyse">    <volume volAttr="208">200</volume>'
                                   '    <symbol exchange="nasdaq">IBM</symbol>'
                                   '    <price priceAttr="75.8">75.6</price>  </stock>'))
    await _settle(r, got, 2)
    assert _rows(got) == [("null", f32(55.8), 108), ("nasdaq", f32(75.8), 208)]


async def test_testXmlInputMappingCustom3(run: Any) -> None:
    """A nested XPath (company/symbol); the event with an empty <volume> is dropped."""
    name = "XmlSourceCustom3"
    r = await run(_app(name, "@map(type='xml', namespaces = "
                             "\"dt=urn:schemas-microsoft-com:datatypes\", "
                             "enclosing.element=\"//portfolio\", @attributes(symbol = \"company/symbol\""
                             "                                           , price = \"price\""
                             "                                           , volume = \"volume\"))"))
    got = r.watch("BarStream")
    await publish(name, _portfolio(
        '  <stock exchange="nasdaq">    <volume>100</volume>    <company>       <symbol>WSO2</symbol>'
        '    </company>    <price dt:dt="number">55.6</price>  </stock>',
        '  <stock exchange="nyse">    <volume>200</volume>    <company>       <symbol>IBM</symbol>'
        '    </company>    <price dt:dt="number">75.6</price>  </stock>',
        '  <stock exchange="nyse">    <volume></volume>    <company>       <symbol>IBM</symbol>'
        '    </company>    <price dt:dt="number">75.6</price>  </stock>'))
    await _settle(r, got, 2, errors=1)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("IBM", f32(75.6), 200)]


async def test_testXmlInputMappingCustom4(run: Any) -> None:
    """Without @attributes the default mapping applies (enclosing.element is ignored)."""
    name = "XmlSourceCustom4"
    r = await run(_app(name, "@map(type='xml', namespaces = "
                             "\"dt=urn:schemas-microsoft-com:datatypes\", "
                             "enclosing.element=\"//portfolio\")"))
    got = r.watch("BarStream")
    await publish(name, "<events><event><symbol>WSO2</symbol><price>55.6</price>"
                        "<volume>100</volume></event></events>")
    await publish(name, "<events><event><symbol>IBM</symbol><price>75.6</price>"
                        "<volume>10</volume></event></events>")
    await publish(name, "<events><event><symbol1>IBM</symbol1><price>75.6</price>"
                        "<volume>10</volume></event></events>")
    await _settle(r, got, 2, errors=1)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("IBM", f32(75.6), 10)]
    assert r.mapping_errors("FooStream") == 1


async def test_testXmlInputMappingCustom5(run: Any) -> None:
    """No enclosing element: XPaths from the root (//stock[1]/...) give one event."""
    name = "XmlSourceCustom5"
    r = await run(_app(name, "@map(type='xml', namespaces = "
                             "\"dt=urn:schemas-microsoft-com:datatypes\", "
                             "@attributes(symbol = \"//stock[1]/symbol\""
                             "                                           , price = \"//stock[1]/price\""
                             "                                           , volume = \"//stock[1]/volume\"))"))
    got = r.watch("BarStream")
    await publish(name, _portfolio(
        '  <stock exchange="nasdaq">    <volume>100</volume>    <symbol>WSO2</symbol>'
        '    <price dt="number">55.6</price>  </stock>',
        '  <stock exchange="nyse">    <volume>200</volume>    <symbol>IBM</symbol>'
        '    <price dt="number">75.6</price>  </stock>'))
    await _settle(r, got, 1)
    assert _rows(got) == [("WSO2", f32(55.6), 100)]


async def test_testXmlInputMappingCustom6(run: Any) -> None:
    """A prefix bound to another namespace URI selects nothing: every event is dropped."""
    name = "XmlSourceCustom6"
    r = await run(_app(name, "@map(type='xml', namespaces = "
                             "\"dt=urn:schemas-microsoft-com:data\", "
                             "enclosing.element=\"//portfolio\", @attributes(symbol = \"symbol\""
                             "                                           , price = \"dt:price\""
                             "                                           , volume = \"volume\"))"))
    got = r.watch("BarStream")
    await publish(name, _portfolio(
        '  <stock exchange="nasdaq">    <volume>100</volume>    <symbol>WSO2</symbol>'
        '    <dt:price dt:at="number">55.6</dt:price>  </stock>',
        '  <stock exchange="nyse">    <volume>200</volume>    <symbol>IBM</symbol>'
        '    <dt:price dt:at="number">75.6</dt:price>  </stock>'))
    await _settle(r, got, 0, errors=1)
    assert _rows(got) == []


async def test_testXmlInputMappingCustom7(run: Any) -> None:
    """No enclosing element and XPaths relative to the root that select nothing: dropped."""
    name = "XmlSourceCustom7"
    r = await run(_app(name, "@map(type='xml', namespaces = "
                             "\"dt=urn:schemas-microsoft-com:datatypes\", "
                             "@attributes(symbol = \"symbol\""
                             "                                           , price = \"price\""
                             "                                           , volume = \"volume\"))"))
    got = r.watch("BarStream")
    await publish(name, _portfolio(
        '  <stock exchange="nasdaq">    <volume>100</volume>    <symbol>WSO2</symbol>'
        '    <price dt="number">55.6</price>  </stock>',
        '  <stock exchange="nyse">    <volume>200</volume>    <symbol>IBM</symbol>'
        '    <price dt="number">75.6</price>  </stock>'))
    await _settle(r, got, 0, errors=1)
    assert _rows(got) == []


async def test_testXmlInputMappingCustom8(run: Any) -> None:
    """An enclosing element that matches nothing (//portfolio11) drops the message."""
    name = "XmlSourceCustom8"
    with capture_logs() as logs:
        r = await run(_app(name, "@map(type='xml', namespaces = "
                                 "\"dt=urn:schemas-microsoft-com:datatypes\", "
                                 "enclosing.element=\"//portfolio11\", @attributes(symbol = \"symbol\""
                                 "                                           , price = \"price\""
                                 "                                           , volume = \"volume\"))"))
        got = r.watch("BarStream")
        await publish(name, _portfolio(
            '  <stock exchange="nasdaq">    <volume>100</volume>    <symbol>WSO2</symbol>'
            '    <price dt:dt="number">55.6</price>  </stock>',
            '  <stock exchange="nyse">    <volume>200</volume>    <symbol>IBM</symbol>'
            '    <price dt:dt="number">75.6</price>  </stock>'))
        await _settle(r, got, 0, errors=1)
    assert _rows(got) == []
    assert _failures(logs) == ["the enclosing element did not match any XML node"]


async def test_testXmlInputMappingCustom9(run: Any) -> None:
    """@attributes naming an attribute the stream lacks (symbol1) fails app creation."""
    name = "XmlSourceCustom9"
    app = _app(name, "@map(type='xml', namespaces = "
                     "\"dt=urn:schemas-microsoft-com:datatypes\", "
                     "enclosing.element=\"//portfolio\", @attributes(symbol1 = \"symbol\""
                     "                                           , price = \"price\""
                     "                                           , volume = \"volume\"))")
    with pytest.raises(SiddhiAppCreationError, match="symbol1"):
        await run(app)


async def test_testXmlInputMappingCustom10(run: Any) -> None:
    """fail.on.missing.attribute='false': an empty <volume> is null instead of dropping the event."""
    name = "XmlSourceCustom10"
    r = await run(_app(name, "@map(type='xml', namespaces = "
                             "\"dt=urn:schemas-microsoft-com:datatypes\", fail.on.missing.attribute=\"false\","
                             "enclosing.element=\"//portfolio\", @attributes(symbol = \"symbol\""
                             "                                           , price = \"price\""
                             "                                           , volume = \"volume\"))"))
    got = r.watch("BarStream")
    await publish(name, _portfolio(
        '  <stock exchange="nasdaq">    <volume></volume>    <symbol>WSO2</symbol>'
        '    <price dt:dt="number">55.6</price>  </stock>',
        '  <stock exchange="nyse">    <volume>200</volume>    <symbol>IBM</symbol>'
        '    <price dt:dt="number">75.6</price>  </stock>'))
    await _settle(r, got, 2)
    assert _rows(got) == [("WSO2", f32(55.6), None), ("IBM", f32(75.6), 200)]
    assert r.mapping_errors("FooStream") == 0


async def test_testXmlInputMappingCustom11(run: Any) -> None:
    """An enclosing element that matches two <portfolio>s: the children of both are events."""
    name = "XmlSourceCustom11"
    r = await run(_app(name, "@map(type='xml', namespaces = "
                             "\"dt=urn:schemas-microsoft-com:datatypes\", "
                             "enclosing.element=\"//portfolio\", @attributes(symbol = \"symbol\""
                             "                                           , price = \"price\""
                             "                                           , volume = \"volume\"))"))
    got = r.watch("BarStream")
    await publish(name, '<?xml version="1.0"?>'
                        "<root>"
                        '<portfolio xmlns:dt="urn:schemas-microsoft-com:datatypes">'
                        '  <stock exchange="nasdaq">    <volume>55</volume>    <symbol>WSO2</symbol>'
                        "    <price>55.6</price>  </stock>"
                        "</portfolio>"
                        '<portfolio xmlns:dt="urn:schemas-microsoft-com:datatypes">'
                        '  <stock exchange="nyse">    <volume>200</volume>    <symbol>IBM</symbol>'
                        "    <price>75.6</price>  </stock>"
                        "</portfolio>"
                        "</root>")
    await _settle(r, got, 2)
    assert _rows(got) == [("WSO2", f32(55.6), 55), ("IBM", f32(75.6), 200)]


async def test_testXmlInputMappingCustom12(run: Any) -> None:
    """An empty message is dropped (Siddhi logs "... Hence dropping message chunk")."""
    name = "XmlSourceCustom12"
    with capture_logs() as logs:
        r = await run(_app(name, "@map(type='xml', namespaces = "
                                 "\"dt=urn:schemas-microsoft-com:datatypes\", "
                                 "enclosing.element=\"//portfolio\", @attributes(symbol = \"symbol\""
                                 "                                           , price = \"price\""
                                 "                                           , volume = \"volume\"))"))
        await publish(name, "")
        await until(lambda: r.mapping_errors("FooStream") >= 1)
    reasons = _failures(logs)
    assert len(reasons) == 1 and reasons[0].startswith("invalid XML")
    assert r.mapping_errors("FooStream") == 1


async def test_testXmlInputMappingCustom13(run: Any) -> None:
    """A malformed namespaces entry (two '=') is logged ("Each namespace has to have format");
    the app runs and maps."""
    name = "XmlSourceCustom13"
    with capture_logs() as logs:
        r = await run(_app(name, "@map(type='xml', namespaces = "
                                 "\"dt=urn:schemas-microsoft-=com:datatypes\", "
                                 "enclosing.element=\"//portfolio\", @attributes(symbol = \"symbol\""
                                 "                                           , price = \"price\""
                                 "                                           , volume = \"volume\"))"))
        got = r.watch("BarStream")
        await publish(name, _portfolio('  <stock exchange="nasdaq">    <volume>100</volume>'
                                       '    <symbol>WSO2</symbol>    <price dt:dt="number">55.6</price>  </stock>'))
        await _settle(r, got, 1)
    assert any("each namespace has to have format" in e["event"] for e in logs)
    assert _rows(got) == [("WSO2", f32(55.6), 100)]


async def test_testXmlInputMappingCustom15(run: Any) -> None:
    """An XPath that selects an element with children, for a float attribute, drops the event
    (Siddhi: "... did not return a leaf element and stream definition is not expecting a String
    attribute")."""
    name = "XmlSourceCustom15"
    with capture_logs() as logs:
        r = await run(_app(name, "@map(type='xml', namespaces = "
                                 "\"dt=urn:schemas-microsoftcom:datatypes\", "
                                 "enclosing.element=\"//portfolio\", @attributes(symbol = \"symbol\""
                                 "                                           , price = \"price\""
                                 "                                           , volume = \"volume\"))"))
        got = r.watch("BarStream")
        await publish(name, _portfolio('  <stock exchange="nasdaq">    <symbol><symbol>WSO2</symbol></symbol>'
                                       "    <price><price>55.6</price></price>     <volume>100</volume>  </stock>"))
        await _settle(r, got, 0, errors=1)
    assert _rows(got) == []
    reasons = _failures(logs)
    assert len(reasons) == 1
    assert "selected an element with child elements, and attribute 'price' is float, not string" in reasons[0]


async def test_testXmlInputMappingCustomForEvents(run: Any) -> None:
    """An XML attribute value that does not convert (priceAttr="") drops the event (Siddhi:
    "Error occurred when extracting attribute value")."""
    name = "XmlSourceCustomForEvents"
    with capture_logs() as logs:
        r = await run(_app(name, "@map(type='xml', namespaces = "
                                 "\"dt=urn:schemas-microsoft-com:datatypes\", "
                                 "enclosing.element=\"//portfolio\", @attributes(symbol = \"symbol/@exchange\""
                                 "                                           , price = \"price/@priceAttr\""
                                 "                                           , volume = \"volume/@volAttr\"))"))
        got = r.watch("BarStream")
        await publish(name, _portfolio('  <stock exchange="nasdaq">    <volume volAttr="108">100</volume>'
                                       '    <symbol exchange="null">WSO2</symbol>'
                                       '    <price priceAttr="">55.6</price>  </stock>'))
        await _settle(r, got, 0, errors=1)
    assert _rows(got) == []
    reasons = _failures(logs)
    assert len(reasons) == 1 and "cannot convert the value of 'price/@priceAttr' to float" in reasons[0]


async def test_testXmlInputMappingCustom16(run: Any) -> None:
    """An enclosing element that is not an XPath (//12) fails app creation."""
    name = "XmlSourceCustom16"
    app = _app(name, "@map(type='xml', namespaces = "
                     "\"dt=urn:schemas-microsoft-com:datatypes,at=urn:schemas-microsoft-com:datatypes\", "
                     "enclosing.element=\"//12\", @attributes(symbol = \"symbol\""
                     "                                           , price = \"price\""
                     "                                           , volume = \"volume\"))")
    with pytest.raises(SiddhiAppCreationError, match="enclosing.element"):
        await run(app)


async def test_testXmlInputMappingCustomOnBinaryMessage17(run: Any) -> None:
    """Custom11's message as byte[]."""
    name = "XmlSourceCustomBinary17"
    r = await run(_app(name, "@map(type='xml', namespaces = "
                             "\"dt=urn:schemas-microsoft-com:datatypes\", "
                             "enclosing.element=\"//portfolio\", @attributes(symbol = \"symbol\""
                             "                                           , price = \"price\""
                             "                                           , volume = \"volume\"))"))
    got = r.watch("BarStream")
    await publish(name, (b'<?xml version="1.0"?>'
                         b"<root>"
                         b'<portfolio xmlns:dt="urn:schemas-microsoft-com:datatypes">'
                         b'  <stock exchange="nasdaq">    <volume>55</volume>    <symbol>WSO2</symbol>'
                         b"    <price>55.6</price>  </stock>"
                         b"</portfolio>"
                         b'<portfolio xmlns:dt="urn:schemas-microsoft-com:datatypes">'
                         b'  <stock exchange="nyse">    <volume>200</volume>    <symbol>IBM</symbol>'
                         b"    <price>75.6</price>  </stock>"
                         b"</portfolio>"
                         b"</root>"))
    await _settle(r, got, 2)
    assert _rows(got) == [("WSO2", f32(55.6), 55), ("IBM", f32(75.6), 200)]


async def test_testXmlInputMappingCustomOnNoChildrenInXpath(run: Any) -> None:
    """enclosing.element.as.event with leaf event elements: @attributes(data='data') is the
    element's own text."""
    name = "XmlSourceNoChildren"
    r = await run(_app(name, "@map(type='xml', "
                             "enclosing.element=\"//message/listNode/data\", @attributes(data = \"data\"),"
                             "enclosing.element.as.event=\"true\")", "data int"))
    got = r.watch("BarStream")
    await publish(name, (b'<?xml version="1.0"?>'
                         b"<message>\n"
                         b"    <listNode>\n"
                         b"       <data>1</data>\n"
                         b"       <data>2</data>\n"
                         b"       <data>3</data>\n"
                         b"    </listNode>\n"
                         b"</message>"))
    await _settle(r, got, 3)
    assert _rows(got) == [(1,), (2,), (3,)]


async def test_testXmlInputMappingCustom18(run: Any) -> None:
    """Positional @attributes("symbol", "price", "volume")."""
    name = "XmlSourceCustom18"
    r = await run(_app(name, "@map(type='xml', namespaces = "
                             "\"dt=urn:schemas-microsoft-com:datatypes\","
                             "enclosing.element=\"//portfolio\", @attributes(\"symbol\""
                             "                                           , \"price\""
                             "                                           , \"volume\"))"))
    got = r.watch("BarStream")
    await publish(name, _portfolio(
        '  <stock exchange="nasdaq">    <volume>100</volume>    <symbol>WSO2</symbol>'
        '    <price dt:dt="number">55.6</price>  </stock>',
        '  <stock exchange="nyse">    <volume>200</volume>    <symbol>IBM</symbol>'
        '    <price dt:dt="number">75.6</price>  </stock>'))
    await _settle(r, got, 2)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("IBM", f32(75.6), 200)]


async def test_testXmlInputMappingCustom19(run: Any) -> None:
    """Positional @attributes with a 'trp:symbol' transport property."""
    name = "XmlSourceCustom19"
    # TestTrpInMemorySource (type 'testTrpInMemory', prop1='foo', prop2='bar') hands the mapper the
    # transport properties symbol='foo' and price='bar': here inMemory passes publish()'s on.
    r = await run(_app(name, "@map(type='xml', namespaces = "
                             "\"dt=urn:schemas-microsoft-com:datatypes\","
                             "enclosing.element=\"//portfolio\", @attributes(\"trp:symbol\""
                             "                                           , \"price\""
                             "                                           , \"volume\"))"))
    got = r.watch("BarStream")
    await publish(name, _portfolio(
        '  <stock exchange="nasdaq">    <volume>100</volume>    <symbol>WSO2</symbol>'
        '    <price dt:dt="number">55.6</price>  </stock>',
        '  <stock exchange="nyse">    <volume>200</volume>    <symbol>IBM</symbol>'
        '    <price dt:dt="number">75.6</price>  </stock>'), properties=TRP)
    await _settle(r, got, 2)
    assert _rows(got) == [("foo", f32(55.6), 100), ("foo", f32(75.6), 200)]


async def test_testXmlInputMappingCustom20(run: Any) -> None:
    """Named @attributes with a 'trp:symbol' transport property."""
    name = "XmlSourceCustom20"
    r = await run(_app(name, "@map(type='xml', namespaces = "
                             "\"dt=urn:schemas-microsoft-com:datatypes\","
                             "enclosing.element=\"//portfolio\", @attributes(volume=\"volume\""
                             "                                           , price=\"price\""
                             "                                           , symbol=\"trp:symbol\"))"))
    got = r.watch("BarStream")
    await publish(name, _portfolio(
        '  <stock exchange="nasdaq">    <volume>100</volume>    <symbol>WSO2</symbol>'
        '    <price dt:dt="number">55.6</price>  </stock>',
        '  <stock exchange="nyse">    <volume>200</volume>    <symbol>IBM</symbol>'
        '    <price dt:dt="number">75.6</price>  </stock>'), properties=TRP)
    await _settle(r, got, 2)
    assert _rows(got) == [("foo", f32(55.6), 100), ("foo", f32(75.6), 200)]


async def test_testXmlInputMappingForMultipleEventsWithNestedXMLStructure(run: Any) -> None:
    """extract.leaf.node.data: one event per <leafNode> of the first stock (with the stock's
    values), one for the second stock; a missing value is null."""
    name = "XmlSourceNested"
    r = await run(_app(name, "@map(type='xml',"
                             "enclosing.element=\"/portfolio\","
                             "fail.on.missing.attribute=\"false\","
                             "extract.leaf.node.data=\"true\","
                             "@attributes(volume = \"/stock/volume\", price = \"/stock/price\", "
                             "symbol = \"/stock/symbol\", "
                             "alternateSymbolValue = \"/stock/leafNode/alternateSymbolValue\", "
                             "alternateSymbolValue2 = \"/stock/leafNode/alternateSymbolValue2\"))",
                       "volume int, price float, symbol string, alternateSymbolValue string, "
                       "alternateSymbolValue2 string"))
    got = r.watch("BarStream")
    await publish(name, '<?xml version="1.0"?>'
                        "<portfolio>"
                        "  <stock>"
                        "    <volume>100</volume>"
                        "    <symbol>WSO2</symbol>"
                        "    <price>55.6</price>"
                        "    <leafNode>"
                        "         <alternateSymbolValue>WSO22</alternateSymbolValue>"
                        "         <alternateSymbolValue2>WSO33</alternateSymbolValue2>"
                        "    </leafNode>"
                        "    <leafNode>"
                        "         <alternateSymbolValue>WSO44</alternateSymbolValue>"
                        "         <alternateSymbolValue2>WSO55</alternateSymbolValue2>"
                        "    </leafNode>"
                        "  </stock>"
                        '  <stock exchange="nyse">'
                        "    <volume>200</volume>"
                        "    <symbol>IBM</symbol>"
                        "    <price>99.9</price>"
                        "  </stock>"
                        "</portfolio>")
    await _settle(r, got, 3)
    assert _rows(got) == [(100, f32(55.6), "WSO2", "WSO22", "WSO33"), (100, f32(55.6), "WSO2", "WSO44", "WSO55"),
                          (200, f32(99.9), "IBM", None, None)]


async def test_testXmlInputMappingCustomOnNoChildrenInXpath2(run: Any) -> None:
    """enclosing.element.as.event='true' on /events/wrapper/event: each <event> is one event."""
    name = "XmlSourceNoChildren2"
    r = await run(_app(name, "@map(type='xml', "
                             "enclosing.element=\"/events/wrapper/event\", enclosing.element.as.event=\"true\", "
                             "@attributes(volume = \"volume\", price = \"price\", symbol = \"symbol\"))",
                       "volume int, price float, symbol string"))
    got = r.watch("BarStream")
    await publish(name, (b'<?xml version="1.0"?>'
                         b"<events><wrapper>\n"
                         b"    <event>\n"
                         b"        <symbol>WSO2</symbol>\n"
                         b"        <price>55.6</price>\n"
                         b"        <volume>100</volume>\n"
                         b"    </event>\n"
                         b"    <event>\n"
                         b"        <symbol>IBM</symbol>\n"
                         b"        <price>66.6</price>\n"
                         b"        <volume>200</volume>\n"
                         b"    </event>\n"
                         b"</wrapper></events>\n"))
    await _settle(r, got, 2)
    assert _rows(got) == [(100, f32(55.6), "WSO2"), (200, f32(66.6), "IBM")]
