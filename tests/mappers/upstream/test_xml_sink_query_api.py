"""Port of siddhi-map-xml's ``XMLSinkMapperWithSiddhiQueryAPITestCase``: the app is built in code
(``srota.query``, as the upstream builds it with Siddhi's query API), the ``@sink``/``@map``/
``@payload`` annotations included, rendered to SiddhiQL (which must parse back to the same app)
and run on a service host.

The sink topic is ``{{symbol}}`` upstream; here it carries the test's name as a prefix so that
no other test sees its messages.  Upstream sends ``100L`` into the ``int`` volume; Siddhi's
input handler does not convert it, and ``100`` is written either way.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from structlog.testing import capture_logs

from srota.query import App, Query, Stream, annotation, col
from tests.mappers.harness import Running, Topic, f32, until

Run = Callable[[str], Awaitable[Running]]


async def _start(run: Run, app: App) -> Running:
    """Start the built app from its SiddhiQL, after checking that the text parses to the built model."""
    text = app.to_siddhiql()
    assert App.from_siddhiql(text).to_siddhiql() == text
    return await run(text)


def _app(name: str, mapping: Any) -> App:
    """FooStream -> BarStream (select symbol, price, volume) with ``@sink(type='inMemory', ...)``."""
    foo = Stream("FooStream").attr("symbol", "string").attr("price", "float").attr("volume", "int")
    bar = (Stream("BarStream").attr("symbol", "string").attr("price", "float").attr("volume", "int")
           .annotate("sink", type="inMemory", topic=f"{name}-{{{{symbol}}}}", nested=[mapping]))
    query = Query.from_("FooStream").select(col("symbol"), col("price"), col("volume")).insert_into("BarStream")
    return App(name).stream(foo).stream(bar).query(query)


def _send_three(r: Running) -> None:
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("IBM", f32(75.6), 100))
    r.send("FooStream", ("WSO2", f32(57.6), 100))


_PAYLOAD = "<StockData><Symbol>{{symbol}}</Symbol><Price>{{price}}</Price></StockData>"


def _stock_data(symbol: str, price: str) -> str:
    return f"<StockData><Symbol>{symbol}</Symbol><Price>{price}</Price></StockData>"


async def test_testXMLSinkmapperWithDefaultMapping(run: Run) -> None:
    """A built app with @map(type='xml') publishes each event as <events><event>...</event></events>."""
    name = "XMLSinkQueryAPIDefault"
    r = await _start(run, _app(name, annotation("map", type="xml")))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    _send_three(r)
    await wso2.take(2)
    await ibm.take(1)
    assert len(wso2.messages) == 2, "Incorrect number of events consumed!"
    assert len(ibm.messages) == 1, "Incorrect number of events consumed!"
    assert wso2.text() == ["<events><event><symbol>WSO2</symbol><price>55.6</price><volume>100</volume>"
                           "</event></events>",
                           "<events><event><symbol>WSO2</symbol><price>57.6</price><volume>100</volume>"
                           "</event></events>"], "Incorrect mapping!"
    assert ibm.text() == ["<events><event><symbol>IBM</symbol><price>75.6</price><volume>100</volume>"
                          "</event></events>"], "Incorrect mapping!"
    wso2.close()
    ibm.close()


async def test_testXMLSinkmapperWithCustomMapping(run: Run) -> None:
    """A built app with @map(type='xml', @payload(...)) publishes the rendered template per symbol."""
    name = "XMLSinkQueryAPICustom"
    r = await _start(run, _app(name, annotation("map", type="xml", nested=[annotation("payload", _PAYLOAD)])))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    _send_three(r)
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == [_stock_data("WSO2", "55.6"), _stock_data("WSO2", "57.6")], "Incorrect mapping!"
    assert ibm.text() == [_stock_data("IBM", "75.6")], "Incorrect mapping!"
    wso2.close()
    ibm.close()


async def test_testXMLOutputCustomMappingWithXMLPrefix(run: Run) -> None:
    """enclosing.element='<portfolio>' wraps each rendered @payload."""
    name = "XMLSinkQueryAPIPrefix"
    r = await _start(run, _app(name, annotation("map", type="xml", enclosing__element="<portfolio>",
                                                nested=[annotation("payload", _PAYLOAD)])))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    _send_three(r)
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == ["<portfolio>" + _stock_data("WSO2", "55.6") + "</portfolio>",
                           "<portfolio>" + _stock_data("WSO2", "57.6") + "</portfolio>"], "Incorrect mapping!"
    assert ibm.text() == ["<portfolio>" + _stock_data("IBM", "75.6") + "</portfolio>"], "Incorrect mapping!"
    wso2.close()
    ibm.close()


async def test_testXMLOutputCustomMappingWithXMLValidation(run: Run) -> None:
    """validate.xml='true' publishes the well-formed messages."""
    name = "XMLSinkQueryAPIValidation"
    r = await _start(run, _app(name, annotation("map", type="xml", enclosing__element="<portfolio>",
                                                validate__xml="true", nested=[annotation("payload", _PAYLOAD)])))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    _send_three(r)
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == ["<portfolio>" + _stock_data("WSO2", "55.6") + "</portfolio>",
                           "<portfolio>" + _stock_data("WSO2", "57.6") + "</portfolio>"], "Incorrect mapping!"
    assert ibm.text() == ["<portfolio>" + _stock_data("IBM", "75.6") + "</portfolio>"], "Incorrect mapping!"
    wso2.close()
    ibm.close()


async def test_negativeTestXMLOutputCustomMappingWithXMLValidation(run: Run) -> None:
    """An enclosing element '<portfolio' makes malformed XML: validate.xml drops every message."""
    name = "XMLSinkQueryAPIValidationNegative"
    with capture_logs() as logs:
        r = await _start(run, _app(name, annotation("map", type="xml", enclosing__element="<portfolio",
                                                    validate__xml="true",
                                                    nested=[annotation("payload", _PAYLOAD)])))
        wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
        _send_three(r)

        def dropped() -> list[dict[str, Any]]:
            return [e for e in logs if e["event"] == "output could not be mapped"]

        # Siddhi logs "Parse error occurred when validating output XML event ..." per event.
        await until(lambda: sum(e["rows"] for e in dropped()) >= 3)
    assert await wso2.take(0) == [], "Incorrect number of events consumed!"
    assert await ibm.take(0) == [], "Incorrect number of events consumed!"
    assert all("the generated XML is not valid" in e["reason"] for e in dropped())
    wso2.close()
    ibm.close()
