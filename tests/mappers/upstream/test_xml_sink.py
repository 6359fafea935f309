"""Port of siddhi-map-xml's ``XMLSinkMapperWithSiddhiQLTestCase`` (component/src/test/java/io/siddhi/
extension/map/xml/sinkmapper/XMLSinkMapperWithSiddhiQLTestCase.java): one test per upstream
``@Test``, same name.

Each case runs the upstream app on a service host (``run``): events go into ``FooStream`` (one
``send`` call is one chunk, as Siddhi's ``InputHandler.send``; an ``Event[]`` is one call with
several rows), and what the ``inMemory`` sink writes is read back from its topic, as the
upstream ``InMemoryBroker.Subscriber`` does.  The topics carry the test's name as a prefix
(``XmlSink1-WSO2`` for ``WSO2``) so that no test sees another's messages; apart from that the
app texts are the upstream ones.  Upstream collects the messages of all topics in one list;
the port checks each topic's messages in order.  Float attributes are 32-bit, so the values
sent are ``f32(...)`` as Java's ``55.6f``.  Where Siddhi logs and drops a message (invalid XML
with ``validate.xml``), the port asserts Srota's logged reason and the sink error counter.
"""
from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from srota import SiddhiAppCreationError
from tests.mappers.harness import Running, Topic, f32, until

_QUERY = "from FooStream select * insert into BarStream; "
_STOCK = "symbol string, price float, volume long"


def _app(name: str, sink: str, attributes: str = _STOCK, query: str = _QUERY) -> str:
    """The upstream app: FooStream -> BarStream with ``sink`` on BarStream (``@NAME@`` is the test's name)."""
    return (f"@App:name('{name}')"
            f"define stream FooStream ({attributes}); "
            f"{sink.replace('@NAME@', name)} "
            f"define stream BarStream ({attributes}); " + query)


def _sink_errors(r: Running, stream: str) -> float:
    """Outputs of ``stream`` the sink mapper could not map (Siddhi logs and drops them)."""
    for line in r.host.metrics.render().decode().splitlines():
        if line.startswith("srota_sink_errors_total{") and f'stream="{stream}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def _event(symbol: str, price: str, volume: str) -> str:
    return f"<event><symbol>{symbol}</symbol><price>{price}</price><volume>{volume}</volume></event>"


def _stock_data(symbol: str, price: str) -> str:
    return f"<StockData><Symbol>{symbol}</Symbol><Price>{price}</Price></StockData>"


# ------------------------------------------------------------------------------------ default mapping
async def test_testXMLSinkmapperDefaultMappingWithSiddhiQL(run: Any) -> None:
    """Default mapping, one message per event to its symbol's topic; a null is xsi:nil."""
    name = "XmlSinkDefault"
    r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-{{symbol}}', @map(type='xml'))"))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2", f32(55.645), 100))
    r.send("FooStream", ("IBM", f32(75), 100))
    r.send("FooStream", ("WSO2", f32(57.6), 100))
    r.send("FooStream", ("IBM", f32(57.6), None))
    await wso2.take(2)
    await ibm.take(2)
    assert wso2.text() == ["<events>" + _event("WSO2", "55.645", "100") + "</events>",
                           "<events>" + _event("WSO2", "57.6", "100") + "</events>"]
    assert ibm.text() == ["<events>" + _event("IBM", "75.0", "100") + "</events>",
                          '<events><event><symbol>IBM</symbol><price>57.6</price><volume xsi:nil="true"/>'
                          "</event></events>"]
    wso2.close()
    ibm.close()


async def test_testXMLSinkmapperDefaultMappingWithSiddhiQL2(run: Any) -> None:
    """An Event[] chunk is one <events> message; nulls are xsi:nil."""
    name = "XmlSinkDefault2"
    r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-company', @map(type='xml'))"))
    company = Topic(f"{name}-company")
    r.send("FooStream", ("WSO2#@$", f32(55.6), 100), ("IBM", f32(75.6), 100))
    r.send("FooStream", (None, None, 100))
    await company.take(2)
    assert company.text() == [
        "<events>" + _event("WSO2#@$", "55.6", "100") + _event("IBM", "75.6", "100") + "</events>",
        '<events><event><symbol xsi:nil="true"/><price xsi:nil="true"/><volume>100</volume></event></events>',
    ]
    company.close()


async def test_testXMLSinkmapperDefaultMappingWithNullElementSiddhiQL(run: Any) -> None:
    """A null volume is <volume xsi:nil="true"/>."""
    name = "XmlSinkDefaultNull"
    r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-{{symbol}}', @map(type='xml'))"))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2", f32(55.6), None))
    r.send("FooStream", ("IBM", f32(75.6), 100))
    r.send("FooStream", ("WSO2", f32(57.6), 100))
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == ['<events><event><symbol>WSO2</symbol><price>55.6</price><volume xsi:nil="true"/>'
                           "</event></events>",
                           "<events>" + _event("WSO2", "57.6", "100") + "</events>"]
    assert ibm.text() == ["<events>" + _event("IBM", "75.6", "100") + "</events>"]
    wso2.close()
    ibm.close()


# ------------------------------------------------------------------------------------ custom mapping
async def test_testXMLOutputCustomMappingWithoutXMLEnclosingElement(run: Any) -> None:
    """A @payload template without an enclosing element is written as rendered."""
    name = "XmlSinkCustomNoEnclosing"
    r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-{{symbol}}', @map(type='xml', @payload("
                             "\"<StockData><Symbol>{{symbol}}</Symbol><Price>{{price}}</Price></StockData>\")))"))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("IBM", f32(75.6), 100))
    r.send("FooStream", ("WSO2", f32(57.6), 100))
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == [_stock_data("WSO2", "55.6"), _stock_data("WSO2", "57.6")]
    assert ibm.text() == [_stock_data("IBM", "75.6")]
    wso2.close()
    ibm.close()


async def test_testXMLOutputCustomMappingWithXMLEnclosingElement(run: Any) -> None:
    """The enclosing element (with a namespace declaration) wraps the @payload; its closing tag
    is derived from it."""
    name = "XmlSinkCustomEnclosing"
    r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-{{symbol}}', "
                             "@map(type='xml', enclosing.element=\"<portfolio "
                             "xmlns:dt='urn:schemas-microsoft-com:datatypes'>\", "
                             "@payload(\"<dt:StockData><Symbol>{{symbol}}</Symbol><Price>{{price}}</Price>"
                             "</dt:StockData>\")))"))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("IBM", f32(75.6), 100))
    r.send("FooStream", ("WSO2", f32(57.6), 100))
    await wso2.take(2)
    await ibm.take(1)

    def expected(symbol: str, price: str) -> str:
        return ("<portfolio xmlns:dt='urn:schemas-microsoft-com:datatypes'>"
                f"<dt:StockData><Symbol>{symbol}</Symbol><Price>{price}</Price></dt:StockData></portfolio>")

    assert wso2.text() == [expected("WSO2", "55.6"), expected("WSO2", "57.6")]
    assert ibm.text() == [expected("IBM", "75.6")]
    wso2.close()
    ibm.close()


async def test_testXMLOutputCustomMappingWithCustomAttributes(run: Any) -> None:
    """Placeholders inside XML attributes of the @payload."""
    name = "XmlSinkCustomAttributes"
    r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-{{symbol}}', @map(type='xml', @payload("
                             "\"<StockData><Symbol id='{{id}}' value='{{price}}'>{{symbol}}</Symbol>"
                             "<Price company='{{symbol}}'>{{price}}</Price></StockData>\")))",
                       "id int, symbol string, price float, volume long",
                       "from FooStream select id, symbol, price, volume insert into BarStream; "))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", (1, "WSO2", f32(55.6), 100))
    r.send("FooStream", (2, "IBM", f32(75.6), 100))
    r.send("FooStream", (3, "WSO2", f32(57.6), 100))
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == ["<StockData><Symbol id='1' value='55.6'>WSO2</Symbol>"
                           "<Price company='WSO2'>55.6</Price></StockData>",
                           "<StockData><Symbol id='3' value='57.6'>WSO2</Symbol>"
                           "<Price company='WSO2'>57.6</Price></StockData>"]
    assert ibm.text() == ["<StockData><Symbol id='2' value='75.6'>IBM</Symbol>"
                          "<Price company='IBM'>75.6</Price></StockData>"]
    wso2.close()
    ibm.close()


async def test_testXMLOutputCustomMappingWithoutPayloadElement(run: Any) -> None:
    """enclosing.element without @payload: the default <event>s inside <portfolio>."""
    name = "XmlSinkNoPayload"
    r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-{{symbol}}', "
                             "@map(type='xml', enclosing.element='<portfolio>'))"))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("IBM", f32(75.6), 100))
    await wso2.take(1)
    await ibm.take(1)
    assert wso2.text() == ["<portfolio>" + _event("WSO2", "55.6", "100") + "</portfolio>"]
    assert ibm.text() == ["<portfolio>" + _event("IBM", "75.6", "100") + "</portfolio>"]
    wso2.close()
    ibm.close()


@pytest.mark.xfail(strict=True, reason="Siddhi's InputHandler keeps the Integer 56 sent into the float price and "
                   "writes '56'; Srota's input handler makes a float attribute a 32-bit float on the way in "
                   "(engine/junction.py), so the value is 56.0 and written '56.0' (Float.toString).  The "
                   "mapper's part, a null written as null, is as upstream (tests/mappers/test_xml.py)")
async def test_testXMLSinkmapperCustomMappingWithNullAttributes(run: Any) -> None:
    """A null in a @payload is written as null; Java's 56 (an Integer sent into the float
    price) is written 56."""
    name = "XmlSinkCustomNull"
    r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-company', @map(type='xml', "
                             "enclosing.element='<portfolio>', "
                             "@payload(\"<StockData><symbol>{{symbol}}</symbol><price>{{price}}</price>"
                             "<volume>{{volume}}</volume></StockData>\")))"))
    company = Topic(f"{name}-company")
    r.send("FooStream", (None, 56, 100))
    r.send("FooStream", ("WSO2", None, 100))
    r.send("FooStream", ("WSO2", 56, None))
    await company.take(3)
    assert company.text() == [
        "<portfolio><StockData><symbol>null</symbol><price>56</price><volume>100</volume></StockData></portfolio>",
        "<portfolio><StockData><symbol>WSO2</symbol><price>null</price><volume>100</volume></StockData></portfolio>",
        "<portfolio><StockData><symbol>WSO2</symbol><price>56</price><volume>null</volume></StockData></portfolio>",
    ]
    company.close()


async def test_testXMLOutputCustomMappingWithXMLValidation(run: Any) -> None:
    """validate.xml='true' publishes well-formed messages."""
    name = "XmlSinkValidation"
    r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-{{symbol}}', @map(type='xml', "
                             "enclosing.element='<portfolio>',  validate.xml='true', @payload("
                             "\"<StockData><Symbol>{{symbol}}</Symbol><Price>{{price}}</Price></StockData>\")))"))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("IBM", f32(75.6), 100))
    r.send("FooStream", ("WSO2", f32(57.6), 100))
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == ["<portfolio>" + _stock_data("WSO2", "55.6") + "</portfolio>",
                           "<portfolio>" + _stock_data("WSO2", "57.6") + "</portfolio>"]
    assert ibm.text() == ["<portfolio>" + _stock_data("IBM", "75.6") + "</portfolio>"]
    wso2.close()
    ibm.close()


async def _assert_dropped(name: str, r: Running, logs: list[dict[str, Any]], rows: int,
                          topics: list[Topic]) -> None:
    """Every one of ``rows`` outputs was dropped as invalid XML, logged and counted; nothing published."""
    def dropped() -> list[dict[str, Any]]:
        return [e for e in logs if e["event"] == "output could not be mapped"]

    await until(lambda: sum(e["rows"] for e in dropped()) >= rows)
    for topic in topics:
        assert await topic.take(0) == []
        topic.close()
    assert sum(e["rows"] for e in dropped()) == rows
    assert all("the generated XML is not valid" in e["reason"] for e in dropped())
    assert _sink_errors(r, "BarStream") == len(dropped())


async def test_negativeTestXMLOutputCustomMappingWithXMLValidation(run: Any) -> None:
    """validate.xml='true' drops every message a malformed @payload (<StockData data>) produces."""
    name = "XmlSinkValidationNegative"
    with capture_logs() as logs:
        r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-{{symbol}}', @map(type='xml', "
                                 "enclosing.element='<portfolio>', validate.xml='true', @payload("
                                 "\"<StockData data><Symbol>{{symbol}}</Symbol><Price>{{price}}</Price>"
                                 "</StockData data>\")))"))
        wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
        r.send("FooStream", ("WSO2", f32(55.6), 100))
        r.send("FooStream", ("IBM", f32(75.6), 100))
        r.send("FooStream", ("WSO2", f32(57.6), 100))
        # Siddhi logs "Parse error occurred when validating output XML event ..." per event.
        await _assert_dropped(name, r, logs, 3, [wso2, ibm])


async def test_testXMLOutputCustomMappingWithoutXMLValidation(run: Any) -> None:
    """validate.xml='false' publishes the malformed @payload as rendered."""
    name = "XmlSinkNoValidation"
    r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-{{symbol}}', @map(type='xml', "
                             "enclosing.element='<portfolio>', validate.xml='false', @payload("
                             "\"<StockData data><Symbol>{{symbol}}</Symbol><Price>{{price}}</Price>"
                             "</StockData data>\")))"))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("IBM", f32(75.6), 100))
    r.send("FooStream", ("WSO2", f32(57.6), 100))
    await wso2.take(2)
    await ibm.take(1)
    assert len(wso2.messages) == 2 and len(ibm.messages) == 1
    assert ibm.text() == ["<portfolio><StockData data><Symbol>IBM</Symbol><Price>75.6</Price>"
                          "</StockData data></portfolio>"]
    wso2.close()
    ibm.close()


async def test_testNoSuchAttributeExceptionForXMLOutputMapping(run: Any) -> None:
    """A @payload naming an attribute the stream lacks ({{non-exist}}) fails app creation."""
    name = "XmlSinkNoSuchAttribute"
    app = _app(name, "@sink(type='inMemory', topic='@NAME@-{{symbol}}', @map(type='xml', @payload("
                     "\"<StockData><Symbol>{{non-exist}}</Symbol><Price>{{price}}</Price></StockData>\")))")
    with pytest.raises(SiddhiAppCreationError, match="non-exist"):
        await run(app)


async def test_testXMLSinkmapperCustomtMappingForEventWithSiddhiQL(run: Any) -> None:
    """An Event[] chunk with a @payload: one message, the rendered events inside the (here
    malformed, unvalidated) enclosing element."""
    name = "XmlSinkCustomEvents"
    r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-company', @map(type='xml', "
                             "enclosing.element=\"<portfolio xmlns:dt='urn:schemas-microsoft-com:datatypes>\", "
                             "@payload(\"<dt:StockData><Symbol>{{symbol}}</Symbol><Price>{{price}}</Price>"
                             "</dt:StockData>\")))"))
    company = Topic(f"{name}-company")
    r.send("FooStream", ("WSO2#@$", f32(55.6), 100), ("IBM", f32(75.6), 100))
    await company.take(1)
    assert company.text() == ["<portfolio xmlns:dt='urn:schemas-microsoft-com:datatypes>"
                              "<dt:StockData><Symbol>WSO2#@$</Symbol><Price>55.6</Price></dt:StockData>"
                              "<dt:StockData><Symbol>IBM</Symbol><Price>75.6</Price></dt:StockData></portfolio>"]
    company.close()


async def test_testXMLSinkmapperDefaultMappingForEventsWithSiddhiQL(run: Any) -> None:
    """An Event[] chunk with the default mapping inside an enclosing element: one message."""
    name = "XmlSinkDefaultEvents"
    r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-company', @map(type='xml', "
                             "enclosing.element=\"<portfolio xmlns:dt='urn:schemas-microsoft-com:datatypes>\"))"))
    company = Topic(f"{name}-company")
    r.send("FooStream", ("WSO2#@$", f32(55.6), 100), ("IBM", f32(75.6), 100))
    await company.take(1)
    assert company.text() == ["<portfolio xmlns:dt='urn:schemas-microsoft-com:datatypes>"
                              + _event("WSO2#@$", "55.6", "100") + _event("IBM", "75.6", "100") + "</portfolio>"]
    company.close()


async def test_testXMLSinkmapperCustomtMappingWithValidationForMultiple(run: Any) -> None:
    """An Event[] chunk with a valid @payload and validate.xml: one message."""
    name = "XmlSinkValidationMultiple"
    r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-company', @map(type='xml', "
                             "enclosing.element='<portfolio>',validate.xml='true',"
                             "@payload(\"<StockData><Symbol>{{symbol}}</Symbol><Price>{{price}}</Price>"
                             "</StockData>\")))"))
    company = Topic(f"{name}-company")
    r.send("FooStream", ("WSO2#@$", f32(55.6), 100), ("IBM", f32(75.6), 100))
    await company.take(1)
    assert company.text() == ["<portfolio>" + _stock_data("WSO2#@$", "55.6") + _stock_data("IBM", "75.6")
                              + "</portfolio>"]
    company.close()


async def test_negativeTestXMLOutputCustomMappingEventsWithXMLValidation(run: Any) -> None:
    """An Event[] chunk whose @payload is malformed, with validate.xml: nothing is published."""
    name = "XmlSinkValidationEventsNegative"
    with capture_logs() as logs:
        r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-{{symbol}}', @map(type='xml', "
                                 "enclosing.element='<portfolio>', validate.xml='true', @payload("
                                 "\"<StockData data><Symbol>{{symbol}}</Symbol><Price>{{price}}</Price>"
                                 "</StockData data>\")))"))
        wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
        r.send("FooStream", ("WSO2#@$", f32(55.6), 100), ("IBM", f32(75.6), 100))
        # The chunk is grouped by topic (WSO2#@$, IBM): both messages are invalid and dropped.
        await _assert_dropped(name, r, logs, 2, [wso2, ibm])


async def test_testXMLSinkmapperCustomtMappingForEventWithSiddhiQL123(run: Any) -> None:
    """@payload('pay') names an object attribute (an object message): a creation error."""
    name = "XmlSinkObjectPayload"
    app = (f"@App:name('{name}')"
           "define stream FooStream (symbol string, price1 Object , volume long, pay object); "
           f"@sink(type='inMemory', topic='{name}-company', @map(type='xml', enclosing.element='<portfolio>', "
           "@payload('pay'))) "
           "define stream BarStream (symbol string, price1 Object, volume long, pay object);" + _QUERY)
    with pytest.raises(SiddhiAppCreationError, match="object message"):
        await run(app)


async def test_testXMLOutputCustomMappingWithCustomAttributes1(run: Any) -> None:
    """Placeholders inside XML attributes of the @payload (as testXMLOutputCustomMappingWithCustomAttributes)."""
    name = "XmlSinkCustomAttributes1"
    r = await run(_app(name, "@sink(type='inMemory', topic='@NAME@-{{symbol}}', @map(type='xml', @payload("
                             "\"<StockData><Symbol id='{{id}}' value='{{price}}'>{{symbol}}</Symbol>"
                             "<Price company='{{symbol}}'>{{price}}</Price></StockData>\")))",
                       "id int, symbol string, price float, volume long",
                       "from FooStream select id, symbol, price, volume insert into BarStream; "))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", (1, "WSO2", f32(55.6), 100))
    r.send("FooStream", (2, "IBM", f32(75.6), 100))
    r.send("FooStream", (3, "WSO2", f32(57.6), 100))
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == ["<StockData><Symbol id='1' value='55.6'>WSO2</Symbol>"
                           "<Price company='WSO2'>55.6</Price></StockData>",
                           "<StockData><Symbol id='3' value='57.6'>WSO2</Symbol>"
                           "<Price company='WSO2'>57.6</Price></StockData>"]
    assert ibm.text() == ["<StockData><Symbol id='2' value='75.6'>IBM</Symbol>"
                          "<Price company='IBM'>75.6</Price></StockData>"]
    wso2.close()
    ibm.close()
