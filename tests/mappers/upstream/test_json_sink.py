"""Port of siddhi-map-json's ``JsonSinkMapperTestCase`` (component/src/test/java/io/siddhi/extension/
map/json/sinkmapper/JsonSinkMapperTestCase.java): one test per upstream ``@Test``, same name.

Each case runs the upstream app on a service host (``run``): events go into ``FooStream`` (one
``send`` call is one chunk, as Siddhi's ``InputHandler.send``), and what the ``inMemory`` sink
writes is read back from its topic, as the upstream ``InMemoryBroker.Subscriber`` does.  The
topics carry the test's name as a prefix (``JsonSinkMapperTestCase4-WSO2`` for ``WSO2``) so that
no test sees another's messages; apart from that the app texts are the upstream ones.  Float
attributes are 32-bit, so the values sent are ``f32(...)`` as Java's ``55.6f``.
"""
from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from srota import SiddhiAppCreationError
from tests.mappers.harness import Running, Topic, f32, until

# The app header and query every upstream case shares (``select *`` from FooStream into BarStream).
_QUERY = "from FooStream select * insert into BarStream; "


def _app(name: str, text: str) -> str:
    """The upstream app text with ``@NAME@`` (in the topic) replaced by the test's name."""
    return text.replace("@NAME@", name)


def _sink_errors(r: Running, stream: str) -> float:
    """Outputs of ``stream`` the sink mapper could not map (Siddhi logs and drops them)."""
    for line in r.host.metrics.render().decode().splitlines():
        if line.startswith("srota_sink_errors_total{") and f'stream="{stream}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


# ------------------------------------------------------------------------------------ default mapping
async def test_jsonSinkMapperTestCase1(run: Any) -> None:
    """Default mapping: one event is an {"event":{...}} object, an Event[] chunk one JSON array."""
    name = "JsonSinkMapperTestCase1"
    r = await run(_app(name, "@App:name('JsonSinkMapperTestCase1')"
                             "define stream FooStream (symbol string, price float, volume long); "
                             "@sink(type='inMemory', topic='@NAME@-WSO2', @map(type='json')) "
                             "define stream BarStream (symbol string, price float, volume long); " + _QUERY))
    wso2 = Topic(f"{name}-WSO2")
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("WSO2", f32(57.678), 100))
    r.send("FooStream", ("WSO2", f32(50), 100))
    r.send("FooStream", ("WSO2#$%", f32(50), 100))
    r.send("FooStream", ("WSO2", f32(55.6), 100), ("IBM", f32(32.6), 160))
    await wso2.take(5)
    assert wso2.text() == [
        '{"event":{"symbol":"WSO2","price":55.6,"volume":100}}',
        '{"event":{"symbol":"WSO2","price":57.678,"volume":100}}',
        '{"event":{"symbol":"WSO2","price":50.0,"volume":100}}',
        '{"event":{"symbol":"WSO2#$%","price":50.0,"volume":100}}',
        '[{"event":{"symbol":"WSO2","price":55.6,"volume":100}},'
        '{"event":{"symbol":"IBM","price":32.6,"volume":160}}]',
    ]
    wso2.close()


async def test_jsonSinkMapperTestCase2(run: Any) -> None:
    """Default mapping writes a null attribute as the string "undefined"."""
    name = "JsonSinkMapperTestCase2"
    r = await run(_app(name, "@App:name('JsonSinkMapperTestCase2')"
                             "define stream FooStream (symbol string, price float, volume long); "
                             "@sink(type='inMemory', topic='@NAME@-WSO2', @map(type='json')) "
                             "define stream BarStream (symbol string, price float, volume long); " + _QUERY))
    wso2 = Topic(f"{name}-WSO2")
    r.send("FooStream", ("WSO2", f32(55.6), None))
    r.send("FooStream", ("WSO2", None, 100))
    r.send("FooStream", (None, f32(55.6), 100))
    await wso2.take(3)
    assert wso2.text() == [
        '{"event":{"symbol":"WSO2","price":55.6,"volume":"undefined"}}',
        '{"event":{"symbol":"WSO2","price":"undefined","volume":100}}',
        '{"event":{"symbol":"undefined","price":55.6,"volume":100}}',
    ]
    wso2.close()


async def test_jsonSinkMapperTestCase3(run: Any) -> None:
    """enclosing.element="$.portfolio.company" wraps the default {"event":{...}} object."""
    name = "JsonSinkMapperTestCase3"
    r = await run(_app(name, "@App:name('JsonSinkMapperTestCase3')"
                             "define stream FooStream (symbol string, price float, volume long); "
                             "@sink(type='inMemory', topic='@NAME@-WSO2', @map(type='json', "
                             "enclosing.element=\"$.portfolio.company\")) "
                             "define stream BarStream (symbol string, price float, volume long); " + _QUERY))
    wso2 = Topic(f"{name}-WSO2")
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("WSO2", f32(56.6), 200))
    r.send("FooStream", ("WSO2", f32(57.6), 300))
    await wso2.take(3)
    assert wso2.text() == [
        '{"portfolio":{"company":{"event":{"symbol":"WSO2","price":55.6,"volume":100}}}}',
        '{"portfolio":{"company":{"event":{"symbol":"WSO2","price":56.6,"volume":200}}}}',
        '{"portfolio":{"company":{"event":{"symbol":"WSO2","price":57.6,"volume":300}}}}',
    ]
    wso2.close()


async def test_jsonSinkMapperTestCase4(run: Any) -> None:
    """A dynamic topic='{{symbol}}' with validate.json='true' sends each event to its symbol's topic."""
    name = "JsonSinkMapperTestCase4"
    r = await run(_app(name, "@App:name('JsonSinkMapperTestCase4')"
                             "define stream FooStream (symbol string, price float, volume long); "
                             "@sink(type='inMemory', topic='@NAME@-{{symbol}}', "
                             "@map(type='json', validate.json='true')) "
                             "define stream BarStream (symbol string, price float, volume long); " + _QUERY))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("WSO2", f32(56.6), 101))
    r.send("FooStream", ("IBM", f32(75.6), 200))
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == ['{"event":{"symbol":"WSO2","price":55.6,"volume":100}}',
                           '{"event":{"symbol":"WSO2","price":56.6,"volume":101}}']
    assert ibm.text() == ['{"event":{"symbol":"IBM","price":75.6,"volume":200}}']
    wso2.close()
    ibm.close()


# ------------------------------------------------------------------------------------ custom mapping
_PAYLOAD_SYMBOL_PRICE = ('{\n'
                         '   "Stock Data":{\n'
                         '      "Symbol":"{{symbol}}",\n'
                         '      "Price":{{price}}\n'
                         '   }\n'
                         '}')


def _stock_data(symbol: str, price: str) -> str:
    """What ``_PAYLOAD_SYMBOL_PRICE`` renders to, wrapped in $.portfolio.company."""
    return ('{"portfolio":{"company":{\n'
            '   "Stock Data":{\n'
            f'      "Symbol":"{symbol}",\n'
            f'      "Price":{price}\n'
            '   }\n'
            '}}}')


async def test_jsonSinkMapperTestCase5(run: Any) -> None:
    """A @payload template with enclosing.element and validate.json: the template text, wrapped."""
    name = "JsonSinkMapperTestCase5"
    r = await run(_app(name, "@App:name('JsonSinkMapperTestCase5') "
                             "define stream FooStream (symbol string, price float, volume long); "
                             "@sink(type='inMemory', topic='@NAME@-{{symbol}}', @map(type='json', "
                             "validate.json='true', enclosing.element=\"$.portfolio.company\", "
                             '@payload("""' + _PAYLOAD_SYMBOL_PRICE + '"""))) '
                             "define stream BarStream (symbol string, price float, volume long); " + _QUERY))
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


async def test_jsonSinkMapperTestCase6(run: Any) -> None:
    """validate.json='true' drops every message an invalid (single-quoted) @payload produces."""
    name = "JsonSinkMapperTestCase6"
    with capture_logs() as logs:
        r = await run(_app(name, "@App:name('JsonSinkMapperTestCase6') "
                                 "define stream FooStream (symbol string, price float, volume long); "
                                 "@sink(type='inMemory', topic='@NAME@-{{symbol}}', @map(type='json', "
                                 "validate.json='true', "
                                 "@payload(\"{'StockData':{'Symbol':{{symbol}}},'Price':{{price}}\")))"
                                 "define stream BarStream (symbol string, price float, volume long); " + _QUERY))
        wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
        r.send("FooStream", ("WSO2", f32(55.6), 100))
        r.send("FooStream", ("IBM", f32(75.6), 100))
        r.send("FooStream", ("WSO2", f32(57.6), 100))

        def dropped() -> list[dict[str, Any]]:
            return [e for e in logs if e["event"] == "output could not be mapped"]

        # Siddhi logs "Invalid json string : ... Hence dropping the message." for each event;
        # here the sink mapper's failure is logged (once per batch of outputs) and counted.
        await until(lambda: sum(e["rows"] for e in dropped()) >= 3)
    assert await wso2.take(0) == []
    assert await ibm.take(0) == []
    assert sum(e["rows"] for e in dropped()) == 3
    assert all("the generated JSON is not valid" in e["reason"] for e in dropped())
    assert _sink_errors(r, "BarStream") == len(dropped())
    wso2.close()
    ibm.close()


async def test_jsonSinkMapperTestCase7(run: Any) -> None:
    """validate.json='false' publishes the invalid @payload text as it is rendered."""
    name = "JsonSinkMapperTestCase7"
    r = await run(_app(name, "@App:name('JsonSinkMapperTestCase7') "
                             "define stream FooStream (symbol string, price float, volume long); "
                             "@sink(type='inMemory', topic='@NAME@-{{symbol}}', @map(type='json', "
                             "validate.json='false', "
                             "@payload(\"{'StockData':{'Symbol':{{symbol}}},'Price':{{price}}\")))"
                             "define stream BarStream (symbol string, price float, volume long); " + _QUERY))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("IBM", f32(75.6), 100))
    r.send("FooStream", ("WSO2", f32(57.6), 100))
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == ["{'StockData':{'Symbol':WSO2},'Price':55.6",
                           "{'StockData':{'Symbol':WSO2},'Price':57.6"]
    assert ibm.text() == ["{'StockData':{'Symbol':IBM},'Price':75.6"]
    wso2.close()
    ibm.close()


async def test_jsonSinkMapperTestCase8(run: Any) -> None:
    """A @payload naming an attribute the stream lacks ({{non-exist}}) fails app creation."""
    name = "JsonSinkMapperTestCase8"
    app = _app(name, "@App:name('JsonSinkMapperTestCase8') "
                     "define stream FooStream (symbol string, price float, volume long); "
                     "@sink(type='inMemory', topic='@NAME@-{{symbol}}', @map(type='json', validate.json='true', "
                     "enclosing.element=\"$.portfolio.company\", "
                     '@payload("""{\n'
                     '   "Stock Data":{\n'
                     '      "Symbol":"{{symbol}}",\n'
                     '      "Price":{{non-exist}}\n'
                     '   }\n'
                     '}"""))) '
                     "define stream BarStream (symbol string, price float, volume long); " + _QUERY)
    with pytest.raises(SiddhiAppCreationError, match="non-exist"):
        await run(app)


async def test_jsonSinkMapperTestCase9(run: Any) -> None:
    """A @payload may leave attributes out (volume, country): only the named ones are written."""
    name = "JsonSinkMapperTestCase9"
    r = await run(_app(name, "@App:name('JsonSinkMapperTestCase9') "
                             "define stream FooStream (symbol string, price float, volume long, country string); "
                             "@sink(type='inMemory', topic='@NAME@-{{symbol}}', @map(type='json', "
                             "validate.json='true', enclosing.element=\"$.portfolio.company\", "
                             '@payload("""' + _PAYLOAD_SYMBOL_PRICE + '"""))) '
                             "define stream BarStream (symbol string, price float, volume long, country string); "
                             + _QUERY))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2", f32(55.6), 100, "SL"))
    r.send("FooStream", ("IBM", f32(75.6), 100, "USA"))
    r.send("FooStream", ("WSO2", f32(57.6), 100, "SL"))
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == [_stock_data("WSO2", "55.6"), _stock_data("WSO2", "57.6")]
    assert ibm.text() == [_stock_data("IBM", "75.6")]
    wso2.close()
    ibm.close()


async def test_jsonSinkMapperTestCase10(run: Any) -> None:
    """A null in a @payload template is a bare undefined (quoted where the template quotes it)."""
    name = "JsonSinkMapperTestCase10"
    r = await run(_app(name, "@App:name('JsonSinkMapperTestCase10') "
                             "define stream FooStream (symbol string, price float, volume long, company string); "
                             "@sink(type='inMemory', topic='@NAME@-{{company}}', @map(type='json', "
                             "validate.json='true', enclosing.element=\"$.portfolio.company\", "
                             '@payload("""{\n'
                             '   "Stock Data":{\n'
                             '      "Symbol":"{{symbol}}",\n'
                             '      "Price":{{price}},\n'
                             '      "Volume":{{volume}}\n'
                             '   }\n'
                             '}"""))) '
                             "define stream BarStream (symbol string, price float, volume long, company string); "
                             + _QUERY))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2", f32(55.6), None, "WSO2"))
    r.send("FooStream", ("IBM", None, 500, "IBM"))
    r.send("FooStream", (None, f32(57.6), 200, "WSO2"))

    def expected(symbol: str, price: str, volume: str) -> str:
        return ('{"portfolio":{"company":{\n'
                '   "Stock Data":{\n'
                f'      "Symbol":"{symbol}",\n'
                f'      "Price":{price},\n'
                f'      "Volume":{volume}\n'
                '   }\n'
                '}}}')

    # Upstream: validate.json='true', yet the messages with a bare undefined (not JSON) arrive:
    # Gson parses leniently (mappers/_json.py: gson_lenient_error).
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == [expected("WSO2", "55.6", "undefined"), expected("undefined", "57.6", "200")]
    assert ibm.text() == [expected("IBM", "undefined", "500")]
    wso2.close()
    ibm.close()


_PAYLOAD_ALL = ('{\n'
                '   "Stock Data":{\n'
                '       "Symbol":"{{symbol}}",\n'
                '       "Price":{{price}},\n'
                '       "Volume":{{volume}}\n'
                '   }\n'
                '}')


def _stock_all(symbol: str, price: str, volume: str) -> str:
    """What ``_PAYLOAD_ALL`` renders to for one event."""
    return ('{\n'
            '   "Stock Data":{\n'
            f'       "Symbol":"{symbol}",\n'
            f'       "Price":{price},\n'
            f'       "Volume":{volume}\n'
            '   }\n'
            '}')


async def test_jsonSinkMapperTestCase11(run: Any) -> None:
    """A @payload with enclosing.element: an Event[] chunk is "[t1,\\nt2]" inside the wrapper."""
    name = "JsonSinkMapperTestCase11"
    r = await run(_app(name, "@App:name('JsonSinkMapperTestCase11')"
                             "define stream FooStream (symbol string, price float, volume long); "
                             "@sink(type='inMemory', topic='@NAME@-WSO2', @map(type='json',"
                             " enclosing.element=\"$.portfolio.company\", "
                             '@payload("""' + _PAYLOAD_ALL + '"""))) '
                             "define stream BarStream (symbol string, price float, volume long); " + _QUERY))
    wso2 = Topic(f"{name}-WSO2")
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("WSO2", f32(57.678), 100))
    r.send("FooStream", ("WSO2", f32(50), 100))
    r.send("FooStream", ("WSO2#$%", f32(50), 100))
    r.send("FooStream", ("WSO2", f32(55.6), 100), ("IBM", f32(32.6), 160))
    await wso2.take(5)

    def wrapped(text: str) -> str:
        return '{"portfolio":{"company":' + text + '}}'

    assert wso2.text() == [
        wrapped(_stock_all("WSO2", "55.6", "100")),
        wrapped(_stock_all("WSO2", "57.678", "100")),
        wrapped(_stock_all("WSO2", "50.0", "100")),
        wrapped(_stock_all("WSO2#$%", "50.0", "100")),
        wrapped("[" + _stock_all("WSO2", "55.6", "100") + ",\n" + _stock_all("IBM", "32.6", "160") + "]"),
    ]
    wso2.close()


async def test_jsonSinkMapperTestCase12(run: Any) -> None:
    """A @payload without enclosing.element: one event is the template text, a chunk "[t1,\\nt2]"."""
    name = "JsonSinkMapperTestCase12"
    r = await run(_app(name, "@App:name('JsonSinkMapperTestCase12')"
                             "define stream FooStream (symbol string, price float, volume long); "
                             "@sink(type='inMemory', topic='@NAME@-WSO2', @map(type='json',"
                             '@payload("""' + _PAYLOAD_ALL + '"""))) '
                             "define stream BarStream (symbol string, price float, volume long); " + _QUERY))
    wso2 = Topic(f"{name}-WSO2")
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("WSO2", f32(57.678), 100))
    r.send("FooStream", ("WSO2", f32(50), 100))
    r.send("FooStream", ("WSO2#$%", f32(50), 100))
    r.send("FooStream", ("WSO2", f32(55.6), 100), ("IBM", f32(32.6), 160))
    await wso2.take(5)
    assert wso2.text() == [
        _stock_all("WSO2", "55.6", "100"),
        _stock_all("WSO2", "57.678", "100"),
        _stock_all("WSO2", "50.0", "100"),
        _stock_all("WSO2#$%", "50.0", "100"),
        "[" + _stock_all("WSO2", "55.6", "100") + ",\n" + _stock_all("IBM", "32.6", "160") + "]",
    ]
    wso2.close()


async def test_jsonSinkMapperTestCase13(run: Any) -> None:
    """Default mapping with validate.json='true' and a dynamic topic (upstream: "type is boolean")."""
    name = "JsonSinkMapperTestCase13"
    r = await run(_app(name, "@App:name('JsonSinkMapperTestCase13')"
                             "define stream FooStream (symbol string, price float, volume long); "
                             "@sink(type='inMemory', topic='@NAME@-{{symbol}}', "
                             "@map(type='json', validate.json='true')) "
                             "define stream BarStream (symbol string, price float, volume long); " + _QUERY))
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("WSO2", f32(56.6), 101))
    r.send("FooStream", ("IBM", f32(75.6), 200))
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == ['{"event":{"symbol":"WSO2","price":55.6,"volume":100}}',
                           '{"event":{"symbol":"WSO2","price":56.6,"volume":101}}']
    assert ibm.text() == ['{"event":{"symbol":"IBM","price":75.6,"volume":200}}']
    wso2.close()
    ibm.close()


async def test_jsonSinkMapperTestCase14(run: Any) -> None:
    """Default mapping with enclosing.element: an Event[] chunk is an array inside the wrapper."""
    name = "JsonSinkMapperTestCase14"
    r = await run(_app(name, "@App:name('JsonSinkMapperTestCase14')"
                             "define stream FooStream (symbol string, price float, volume long); "
                             "@sink(type='inMemory', topic='@NAME@-WSO2', @map(type='json',"
                             " enclosing.element=\"$.portfolio.company\")) "
                             "define stream BarStream (symbol string, price float, volume long); " + _QUERY))
    wso2 = Topic(f"{name}-WSO2")
    r.send("FooStream", ("WSO2", f32(55.6), 100))
    r.send("FooStream", ("WSO2", f32(57.678), 100))
    r.send("FooStream", ("WSO2", f32(50), 100))
    r.send("FooStream", ("WSO2#$%", f32(50), 100))
    r.send("FooStream", ("WSO2", f32(55.6), 100), ("IBM", f32(32.6), 160))
    await wso2.take(5)
    assert wso2.text() == [
        '{"portfolio":{"company":{"event":{"symbol":"WSO2","price":55.6,"volume":100}}}}',
        '{"portfolio":{"company":{"event":{"symbol":"WSO2","price":57.678,"volume":100}}}}',
        '{"portfolio":{"company":{"event":{"symbol":"WSO2","price":50.0,"volume":100}}}}',
        '{"portfolio":{"company":{"event":{"symbol":"WSO2#$%","price":50.0,"volume":100}}}}',
        '{"portfolio":{"company":[{"event":{"symbol":"WSO2","price":55.6,"volume":100}},'
        '{"event":{"symbol":"IBM","price":32.6,"volume":160}}]}}',
    ]
    wso2.close()


async def test_jsonSinkDefaultMapperForInt(run: Any) -> None:
    """Default mapping writes a long of 100000 as a plain integer (no exponent or fraction)."""
    name = "JsonSinkDefaultMapperForInt"
    r = await run(_app(name, "@App:name('JsonSinkDefaultMapperForInt')"
                             "define stream FooStream (symbol string, price float, volume long); "
                             "@sink(type='inMemory', topic='@NAME@-WSO2', @map(type='json')) "
                             "define stream BarStream (symbol string, price float, volume long); " + _QUERY))
    wso2 = Topic(f"{name}-WSO2")
    r.send("FooStream", ("WSO2", f32(55.6), 100000))
    await wso2.take(1)
    assert wso2.text() == ['{"event":{"symbol":"WSO2","price":55.6,"volume":100000}}']
    wso2.close()


async def test_jsonSinkCustomMapperTestCaseForInt(run: Any) -> None:
    """A @payload template writes a long of 100000 as a plain integer."""
    name = "JsonSinkCustomMapperTestCaseForInt"
    r = await run(_app(name, "@App:name('JsonSinkCustomMapperTestCaseForInt')"
                             "define stream FooStream (symbol string, price float, volume long); "
                             "@sink(type='inMemory', topic='@NAME@-WSO2', @map(type='json',"
                             " enclosing.element=\"$.portfolio.company\", "
                             '@payload("""' + _PAYLOAD_ALL + '"""))) '
                             "define stream BarStream (symbol string, price float, volume long); " + _QUERY))
    wso2 = Topic(f"{name}-WSO2")
    r.send("FooStream", ("WSO2", f32(55.6), 100000))
    await wso2.take(1)
    assert wso2.text() == ['{"portfolio":{"company":' + _stock_all("WSO2", "55.6", "100000") + '}}']
    wso2.close()


async def test_jsonSinkMapperTestCaseForPreserveNullValue(run: Any) -> None:
    """enable.null.attribute.value='true': default mapping writes a null attribute as JSON null."""
    name = "JsonSinkMapperTestCaseForPreserveNullValue"
    r = await run(_app(name, "@App:name('JsonSinkMapperTestCaseForPreserveNullValue')"
                             "define stream FooStream (symbol string, price float, volume long); "
                             "@sink(type='inMemory', topic='@NAME@-WSO2', "
                             "@map(type='json', enable.null.attribute.value='true')) "
                             "define stream BarStream (symbol string, price float, volume long); " + _QUERY))
    wso2 = Topic(f"{name}-WSO2")
    r.send("FooStream", ("WSO2", f32(55.6), None))
    r.send("FooStream", ("WSO2", None, 100))
    r.send("FooStream", (None, f32(55.6), 100))
    await wso2.take(3)
    assert wso2.text() == [
        '{"event":{"symbol":"WSO2","price":55.6,"volume":null}}',
        '{"event":{"symbol":"WSO2","price":null,"volume":100}}',
        '{"event":{"symbol":null,"price":55.6,"volume":100}}',
    ]
    wso2.close()


async def test_jsonSinkCustomMapperTestCaseForPreserveNullValue(run: Any) -> None:
    """enable.null.attribute.value='true': a @payload template writes a null as null ("null" in quotes)."""
    name = "JsonSinkCustomMapperTestCaseForPreserveNullValue"
    r = await run(_app(name, "@App:name('JsonSinkCustomMapperTestCaseForPreserveNullValue')"
                             "define stream FooStream (symbol string, price float, volume long); "
                             "@sink(type='inMemory', topic='@NAME@-WSO2', @map(type='json', "
                             "enable.null.attribute.value='true',"
                             '@payload("""' + _PAYLOAD_ALL + '"""))) '
                             "define stream BarStream (symbol string, price float, volume long); " + _QUERY))
    wso2 = Topic(f"{name}-WSO2")
    r.send("FooStream", ("WSO2", f32(55.6), None))
    r.send("FooStream", ("WSO2", None, 100))
    r.send("FooStream", (None, f32(55.6), 100))
    await wso2.take(3)
    assert wso2.text() == [
        _stock_all("WSO2", "55.6", "null"),
        _stock_all("WSO2", "null", "100"),
        _stock_all("null", "55.6", "100"),
    ]
    wso2.close()


async def test_jsonSinkMapperTestCaseForNestedJson(run: Any) -> None:
    """A nested-object @payload with enclosing.element='event' and validate.json on a log sink."""
    # see https://github.com/wso2/streaming-integrator/issues/228
    app = ("@App:name(\"PreDefinedProducerApp\")\n"
           "define stream DataStream"
           "(PublisherName string,AlertCategory String,AlertType String,recipientType String);\n"
           "@sink(type='log',\n"
           "@map(type='json', enclosing.element='event', validate.json='true', "
           '@payload("""{"alertTypeData":{"PublisherName":"{{PublisherName}}","AlertCategory"'
           ':"{{AlertCategory}}","AlertType":"{{AlertType}}"},"recipientData":{"recipientType":'
           '"{{recipientType}}"}}""")))\n'
           "define stream DataWriteStream (PublisherName string, AlertCategory string, "
           "AlertType string, recipientType string);\n"
           "from DataStream\n"
           "select PublisherName, AlertCategory, AlertType , recipientType\n"
           "insert into DataWriteStream; ")
    r = await run(app)
    got = r.watch("DataWriteStream")
    with capture_logs() as logs:
        r.send("DataStream", ("WSO2", "IBM", "FOO", "BAR"))
        await until(lambda: any(e.get("log_level") == "info" and "recipientData" in e["event"] for e in logs))
    assert [row for chunk in got for row in chunk] == [("WSO2", "IBM", "FOO", "BAR")]
    # The log sink writes "<app> : <stream> : <payload>", as Siddhi's LogSink: the payload is the
    # template, valid JSON, wrapped in {"event": ...}.
    lines = [e["event"] for e in logs if "recipientData" in e["event"]]
    assert lines == ['PreDefinedProducerApp : DataWriteStream : {"event":{"alertTypeData":{"PublisherName":"WSO2",'
                     '"AlertCategory":"IBM","AlertType":"FOO"},"recipientData":{"recipientType":"BAR"}}}']
