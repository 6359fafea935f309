"""siddhi-map-csv ``TestCaseOfCSVSinkMapper`` (component/src/test/java/.../sinkmapper), ported.

Each Java ``@Test`` is one test here, named after it.  The apps are the upstream ones (events
sent into ``FooStream``, copied into ``BarStream``, whose ``inMemory`` sink has the ``csv``
mapper), with an app name of their own and the topics prefixed by it (``'{{symbol}}'`` becomes
``'<name>-{{symbol}}'``).  The two Java tests that build the app with the query API are written
in SiddhiQL.  Upstream collects the messages of all its topics in one list; each topic's
messages are asserted here, in order (the sends are one after another, so the interleaving
follows).  ``System.lineSeparator()`` is ``\\n``.
"""
from __future__ import annotations

from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from tests.mappers.harness import Topic


def _app(name: str, sink: str, types: str = "symbol string, price float, volume long",
         select: str = "*") -> str:
    """The upstream app: FooStream copied into BarStream, which has ``sink``."""
    return f"""
    @App:name('{name}')
    define stream FooStream ({types});
    {sink}
    define stream BarStream ({types});
    from FooStream select {select} insert into BarStream;
    """


def _topics(name: str) -> tuple[Topic, Topic]:
    """Subscriptions to the WSO2 and IBM topics of ``'<name>-{{symbol}}'``."""
    return Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")


async def test_testCSVSinkmapperDefaultMappingWithSiddhiQL(run: Any) -> None:
    """Default mapping to a '{{symbol}}' topic: one line per event, null written as null."""
    name = "CsvSinkSiddhiQL"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-{{{{symbol}}}}', @map(type='csv'))"))
    wso2, ibm = _topics(name)
    r.send("FooStream", ("WSO2", 55.645, 100))
    r.send("FooStream", ("IBM", 75.0, 100))
    r.send("FooStream", ("WSO2", 57.6, 100))
    r.send("FooStream", ("IBM", None, 57))
    await wso2.take(2)
    await ibm.take(2)
    assert wso2.text() == ["WSO2,55.645,100\n", "WSO2,57.6,100\n"]
    assert ibm.text() == ["IBM,75.0,100\n", "IBM,null,57\n"]
    wso2.close()
    ibm.close()


async def test_testCSVSinkmapperDefaultMappingWithSiddhiQL1(run: Any) -> None:
    """A field holding the delimiter is quoted."""
    name = "CsvSinkSiddhiQL1"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-company', @map(type='csv'))"))
    company = Topic(f"{name}-company")
    r.send("FooStream", ("WSO2,NO10,Palam groove Rd", 55.645, 100))
    r.send("FooStream", ("IBM,Colombo 7", 75.0, 100))
    r.send("FooStream", ("WSO2,Colombo 10", 57.6, 100))
    r.send("FooStream", ("IBM,Colombo 3", None, 57))
    await company.take(4)
    assert company.text() == ['"WSO2,NO10,Palam groove Rd",55.645,100\n', '"IBM,Colombo 7",75.0,100\n',
                              '"WSO2,Colombo 10",57.6,100\n', '"IBM,Colombo 3",null,57\n']
    company.close()


async def test_testCSVSinkmapperDefaultMappingWithSiddhiQL2(run: Any) -> None:
    """A chunk of two events is two messages; special characters are not quoted; nulls are null."""
    name = "CsvSinkSiddhiQL2"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-company', @map(type='csv'))"))
    company = Topic(f"{name}-company")
    r.send("FooStream", ("WSO2#@$", 55.6, 100), ("IBM", 75.6, 100))
    r.send("FooStream", (None, None, 100))
    await company.take(3)
    assert company.text() == ["WSO2#@$,55.6,100\n", "IBM,75.6,100\n", "null,null,100\n"]
    company.close()


async def test_testCSVSinkmapperDefaultMappingWithNullElementSiddhiQL(run: Any) -> None:
    """Null attributes are written as null with the default mapping."""
    name = "CsvSinkNullElement"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-{{{{symbol}}}}', @map(type='csv'))"))
    wso2, ibm = _topics(name)
    r.send("FooStream", ("WSO2", 55.6, None))
    r.send("FooStream", ("IBM", None, 100))
    r.send("FooStream", ("WSO2", 57.6, 100))
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == ["WSO2,55.6,null\n", "WSO2,57.6,100\n"]
    assert ibm.text() == ["IBM,null,100\n"]
    wso2.close()
    ibm.close()


async def test_testCSVSinkmapperDefaultMappingWithDelimiterAndHeader(run: Any) -> None:
    """header='true': the header line once, to the first event's topic, then '-'-delimited lines."""
    name = "CsvSinkDelimiterHeader"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-{{{{symbol}}}}', "
                             "@map(type='csv', delimiter=\"-\", header='true'))"))
    wso2, ibm = _topics(name)
    r.send("FooStream", ("WSO2", 55.645, 100))
    r.send("FooStream", ("IBM", 75.0, 100))
    r.send("FooStream", ("WSO2", 57.6, 100))
    r.send("FooStream", ("IBM", None, 57))
    await wso2.take(3)
    await ibm.take(2)
    assert wso2.text() == ["symbol-price-volume\n", "WSO2-55.645-100\n", "WSO2-57.6-100\n"]
    assert ibm.text() == ["IBM-75.0-100\n", "IBM-null-57\n"]
    wso2.close()
    ibm.close()


async def test_testCSVDefaultSinkmapperWithDelimiter(run: Any) -> None:
    """Default mapping with delimiter '-' (upstream builds this app with the query API)."""
    name = "CsvSinkWithDelimiter"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-{{{{symbol}}}}', "
                             "@map(type='csv', delimiter='-'))",
                       "symbol string, price float, volume int", "symbol, price, volume"))
    wso2, ibm = _topics(name)
    r.send("FooStream", ("WSO2", 55.6, 100))
    r.send("FooStream", ("IBM", 75.6, 100))
    r.send("FooStream", ("WSO2", 57.6, 100))
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == ["WSO2-55.6-100\n", "WSO2-57.6-100\n"]
    assert ibm.text() == ["IBM-75.6-100\n"]
    wso2.close()
    ibm.close()


async def test_testCSVOutputCustomMappingWithoutCSVDelimiter(run: Any) -> None:
    """@payload places each attribute in its column."""
    name = "CsvSinkCustomNoDelimiter"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-{{{{symbol}}}}', @map(type='csv',"
                             "@payload(symbol='0',price='2',volume='1')))"))
    wso2, ibm = _topics(name)
    r.send("FooStream", ("WSO2", 55.6, 100))
    r.send("FooStream", ("IBM", 75.6, 100))
    r.send("FooStream", ("WSO2", 57.6, 100))
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == ["WSO2,100,55.6\n", "WSO2,100,57.6\n"]
    assert ibm.text() == ["IBM,100,75.6\n"]
    wso2.close()
    ibm.close()


async def test_testCSVSinkmapperDefaultMappingWithSiddhiQL3(run: Any) -> None:
    """@payload columns for a chunk of events and for null attributes."""
    name = "CsvSinkSiddhiQL3"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-company', @map(type='csv', "
                             '@payload(symbol="0",price="2",volume="1")))'))
    company = Topic(f"{name}-company")
    r.send("FooStream", ("WSO2#@$", 55.6, 100), ("IBM", 75.6, 100))
    r.send("FooStream", (None, None, 100))
    await company.take(3)
    assert company.text() == ["WSO2#@$,100,55.6\n", "IBM,100,75.6\n", "null,100,null\n"]
    company.close()


async def test_testCSVOutputCustomMappingWithCSVDelimiter(run: Any) -> None:
    """@payload columns with delimiter '-'."""
    name = "CsvSinkCustomDelimiter"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-{{{{symbol}}}}', @map(type='csv',"
                             "delimiter=\"-\",@payload(symbol='0',price='2',volume='1')))"))
    wso2, ibm = _topics(name)
    r.send("FooStream", ("WSO2", 55.6, 100))
    r.send("FooStream", ("IBM", 75.6, 100))
    r.send("FooStream", ("WSO2", 57.6, 100))
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == ["WSO2-100-55.6\n", "WSO2-100-57.6\n"]
    assert ibm.text() == ["IBM-100-75.6\n"]
    wso2.close()
    ibm.close()


async def test_testCSVSinkmapperCustomMappingWithNullAttributes(run: Any) -> None:
    """@payload columns with a null in each attribute in turn."""
    name = "CsvSinkCustomNulls"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-company', @map(type='csv', "
                             '@payload(symbol="0",price="2",volume="1"))) '))
    company = Topic(f"{name}-company")
    # Upstream sends the Integer 56 for the float price.  Siddhi's InputHandler keeps the
    # Integer in the float attribute and the mapper writes "56"; Srota's input handler makes a
    # float attribute a 32-bit float on the way in (engine/junction.py, _float_converter), so
    # the value is the float 56.0, which both write as "56.0" (Float.toString).  The mapper's
    # part -- columns, null as null -- is as upstream.
    r.send("FooStream", (None, 56, 100))
    r.send("FooStream", ("WSO2", None, 100))
    r.send("FooStream", ("WSO2", 56, None))
    await company.take(3)
    assert company.text() == ["null,100,56.0\n", "WSO2,100,null\n", "WSO2,null,56.0\n"]
    company.close()


async def test_testCSVSinkmapperCustomMappingEventsWithDelimiterAndHeader(run: Any) -> None:
    """@payload with header='true': the header lists the attributes in column order."""
    name = "CsvSinkCustomHeader"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-company', @map(type='csv',delimiter=\"-\","
                             'header=\'true\',@payload(symbol="0",price="2",volume="1")))'))
    company = Topic(f"{name}-company")
    r.send("FooStream", ("WSO2#@$", 55.6, 100), ("IBM", 75.6, 100))
    r.send("FooStream", (None, None, 100))
    await company.take(4)
    assert company.text() == ["symbol-volume-price\n", "WSO2#@$-100-55.6\n", "IBM-100-75.6\n", "null-100-null\n"]
    company.close()


async def test_testCSVOutputCustomMappingWithoutCustomattribute(run: Any) -> None:
    """No @payload: the default mapping."""
    name = "CsvSinkNoPayload"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-{{{{symbol}}}}', @map(type='csv')) "))
    wso2, ibm = _topics(name)
    r.send("FooStream", ("WSO2", 55.6, 100))
    r.send("FooStream", ("IBM", 75.6, 100))
    await wso2.take(1)
    await ibm.take(1)
    assert wso2.text() == ["WSO2,55.6,100\n"]
    assert ibm.text() == ["IBM,75.6,100\n"]
    wso2.close()
    ibm.close()


async def test_testCSVCustomSinkmapperForEventsWithDelimiterAndHeader(run: Any) -> None:
    """@payload, delimiter and header (upstream builds this app with the query API)."""
    name = "CsvSinkQueryApiHeader"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-company', @map(type='csv', delimiter='-', "
                             "header='true', @payload(symbol='0', price='2', volume='1')))",
                       "symbol string, price float, volume int", "symbol, price, volume"))
    company = Topic(f"{name}-company")
    r.send("FooStream", ("WSO2#@$", 55.6, 100), ("IBM", 75.6, 100))
    r.send("FooStream", (None, None, 100))
    await company.take(4)
    assert company.text() == ["symbol-volume-price\n", "WSO2#@$-100-55.6\n", "IBM-100-75.6\n", "null-100-null\n"]
    company.close()


async def test_testCSVOutputCustomMappingWithoutCSVWithDelimiterHeader1(run: Any) -> None:
    """A @payload column that is not an integer ('0.5') fails app creation."""
    name = "CsvSinkPayloadNotInteger"
    with pytest.raises(SiddhiAppCreationError, match="must be an integer"):
        await run(_app(name, f"@sink(type='inMemory', topic='{name}-{{{{symbol}}}}', @map(type='csv',"
                             "@payload(symbol='0.5',price='2',volume='1')))"))


async def test_testTextSinkMapperdafaultEventGroup(run: Any) -> None:
    """event.grouping.enabled='true': a chunk's events for one topic are one multi-line message."""
    name = "CsvSinkDefaultGroup"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-{{{{symbol}}}}', "
                             "@map(type='csv' , event.grouping.enabled='true')) "))
    wso2, ibm = _topics(name)
    r.send("FooStream", *[("WSO2", 55.6, 100), ("IBM", 75.6, 100)] * 3)
    await wso2.take(1)
    await ibm.take(1)
    assert wso2.text() == ["WSO2,55.6,100\nWSO2,55.6,100\nWSO2,55.6,100\n"]
    assert ibm.text() == ["IBM,75.6,100\nIBM,75.6,100\nIBM,75.6,100\n"]
    wso2.close()
    ibm.close()


async def test_testTextcustomSinkMapperGroup(run: Any) -> None:
    """event.grouping.enabled='true' with @payload columns."""
    name = "CsvSinkCustomGroup"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-{{{{symbol}}}}', "
                             "@map(type='csv' , event.grouping.enabled='true',"
                             '@payload(symbol ="0",price="2",volume="1"))) '))
    wso2, ibm = _topics(name)
    r.send("FooStream", *[("WSO2", 55.6, 100), ("IBM", 75.6, 100)] * 3)
    await wso2.take(1)
    await ibm.take(1)
    assert wso2.text() == ["WSO2,100,55.6\nWSO2,100,55.6\nWSO2,100,55.6\n"]
    assert ibm.text() == ["IBM,100,75.6\nIBM,100,75.6\nIBM,100,75.6\n"]
    wso2.close()
    ibm.close()


async def test_testCSVOutputCustomMapping(run: Any) -> None:
    """@payload naming only some attributes writes only those columns."""
    name = "CsvSinkCustomPartial"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-{{{{symbol}}}}', @map(type='csv',"
                             "@payload(symbol='0',volume='1')))"))
    wso2, ibm = _topics(name)
    r.send("FooStream", ("WSO2", 55.6, 100))
    r.send("FooStream", ("IBM", 75.6, 100))
    r.send("FooStream", ("WSO2", 57.6, 100))
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == ["WSO2,100\n", "WSO2,100\n"]
    assert ibm.text() == ["IBM,100\n"]
    wso2.close()
    ibm.close()


async def test_testCSVOutputCustomMappingWithInvalidIndex(run: Any) -> None:
    """A @payload column beyond the columns written (2 of 2) fails app creation."""
    name = "CsvSinkInvalidIndex"
    with pytest.raises(SiddhiAppCreationError, match="@payload columns must be 0..1"):
        await run(_app(name, f"@sink(type='inMemory', topic='{name}-{{{{symbol}}}}', @map(type='csv',"
                             "@payload(symbol='0',volume='2')))"))


async def test_testTSVSinkmapperDefaultMapping(run: Any) -> None:
    """delimiter='\\t' writes tab-separated values."""
    name = "CsvSinkTsv"
    r = await run(_app(name, f"@sink(type='inMemory', topic='{name}-{{{{symbol}}}}', "
                             "@map(type='csv', delimiter='\\t'))"))
    wso2, ibm = _topics(name)
    r.send("FooStream", ("WSO2", 55.645, 100))
    r.send("FooStream", ("IBM", 75.0, 100))
    r.send("FooStream", ("WSO2", 57.6, 100))
    r.send("FooStream", ("IBM", None, 57))
    await wso2.take(2)
    await ibm.take(2)
    assert wso2.text() == ["WSO2\t55.645\t100\n", "WSO2\t57.6\t100\n"]
    assert ibm.text() == ["IBM\t75.0\t100\n", "IBM\tnull\t57\n"]
    wso2.close()
    ibm.close()
