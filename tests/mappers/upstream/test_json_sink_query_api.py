"""Port of siddhi-map-json's ``JSONOutputMapperWithSiddhiQueryAPITestCase``: the app is built in
code (``srota.query``, as the upstream builds it with Siddhi's query API), the ``@sink``/``@map``/
``@payload`` annotations included, rendered to SiddhiQL (which must parse back to the same app)
and run on a service host.

The sink topic is ``{{symbol}}`` upstream; here it carries the test's name as a prefix so that
no other test sees its messages.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from srota.query import App, Query, Stream, annotation, col
from tests.mappers.harness import Running, Topic, f32

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


async def test_testJSONOutputMapperWithDefaultMapping(run: Run) -> None:
    """A built app with @map(type='json') publishes each event to its symbol's topic."""
    name = "JSONOutputMapperQueryAPIDefault"
    r = await _start(run, _app(name, annotation("map", type="json")))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    # Upstream sends 100L into the int volume; Siddhi's input handler does not convert it.
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("IBM", f32(75.6), 100))
    r.send("FooStream", ("WSO2", f32(57.6), 100))
    await wso2.take(2)
    await ibm.take(1)
    assert len(wso2.messages) == 2, "Incorrect number of events consumed!"
    assert len(ibm.messages) == 1, "Incorrect number of events consumed!"
    assert wso2.text() == ['{"event":{"symbol":"WSO2","price":55.6,"volume":100}}',
                           '{"event":{"symbol":"WSO2","price":57.6,"volume":100}}']
    assert ibm.text() == ['{"event":{"symbol":"IBM","price":75.6,"volume":100}}']
    wso2.close()
    ibm.close()


async def test_testJSONOutputMapperWithCustomMapping(run: Run) -> None:
    """A built app with @map(type='json', @payload(...)) publishes the rendered template per symbol."""
    name = "JSONOutputMapperQueryAPICustom"
    payload = ('{\n'
               '   "Stock Data":{\n'
               '      "Symbol":"{{symbol}}",\n'
               '      "Price":{{price}}\n'
               '   }\n'
               '}')
    r = await _start(run, _app(name, annotation("map", type="json", nested=[annotation("payload", payload)])))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("IBM", f32(75.6), 100))
    r.send("FooStream", ("WSO2", f32(57.6), 100))
    await wso2.take(2)
    await ibm.take(1)
    assert len(wso2.messages) == 2, "Incorrect number of events consumed!"
    assert len(ibm.messages) == 1, "Incorrect number of events consumed!"

    def expected(symbol: str, price: str) -> str:
        return ('{\n'
                '   "Stock Data":{\n'
                f'      "Symbol":"{symbol}",\n'
                f'      "Price":{price}\n'
                '   }\n'
                '}')

    assert wso2.text() == [expected("WSO2", "55.6"), expected("WSO2", "57.6")], "Mapping incorrect!"
    assert ibm.text() == [expected("IBM", "75.6")], "Mapping incorrect!"
    wso2.close()
    ibm.close()
