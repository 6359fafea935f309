"""siddhi-map-csv ``TestCaseOfCSVSourceMapper`` (component/src/test/java/.../sourcemapper), ported.

Each Java ``@Test`` is one test here, named after it.  The apps are the upstream ones (an
``inMemory`` source with the ``csv`` mapper on ``FooStream``, copied into ``BarStream``), with
an app name and topic of their own.  The Java callbacks assert a few fields per event and the
count; here every row that follows from the payloads is asserted, in order.  Where Siddhi logs
a mapping failure and drops the record, the mapping error counter and the host's log line
("payload could not be mapped") stand for that log.
"""
from __future__ import annotations

from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError
from structlog.testing import capture_logs

from tests.mappers.harness import f32, publish, until

#: System.lineSeparator() on the JVMs the upstream suite runs on.
NL = "\n"


def _app(name: str, source: str, types: str = "symbol string, price float, volume int") -> str:
    """The upstream app: ``source`` on FooStream, everything copied into BarStream."""
    return f"""
    @App:name('{name}')
    {source}
    define stream FooStream ({types});
    define stream BarStream ({types});
    from FooStream select * insert into BarStream;
    """


def _rows(chunks: list[list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    return [row for chunk in chunks for row in chunk]


async def test_testCSVInputDefaultMapping(run: Any) -> None:
    """Default mapping: fields in attribute order, the text null is a string, spaces are kept."""
    name = "CsvSrcDefaultMapping"
    r = await run(_app(name, f"@source(type='inMemory', topic='{name}', @map(type='csv'))"))
    got = r.watch("BarStream")
    await publish(name, "null,55.689,100", "IBM@#$%^*,75,0", " WSO2,10.1,10")
    await until(lambda: len(_rows(got)) >= 3)
    assert _rows(got) == [("null", f32(55.689), 100), ("IBM@#$%^*", 75.0, 0), (" WSO2", f32(10.1), 10)]


async def test_testCSVInputDefaultMappingMultipleEvent(run: Any) -> None:
    """header='true' skips the first message; delimiter '-' splits the rest."""
    name = "CsvSrcMultipleEvent"
    r = await run(_app(name, f"@source(type='inMemory', topic='{name}', @map(type='csv', header='true',"
                             "delimiter='-'))", "symbol string, price float, volume long"))
    got = r.watch("BarStream")
    await publish(name, "symbol-price-volume", "WSO2-55.6-100", "IBM-75.6-10")
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("IBM", f32(75.6), 10)]


async def test_testCSVInputCustomMapping(run: Any) -> None:
    """@attributes picks each attribute's column by 0-based index."""
    name = "CsvSrcCustomMapping"
    r = await run(_app(name, f"@source(type='inMemory', topic='{name}', @map(type='csv',"
                             "@attributes(symbol='0',price='2',volume='1')))",
                       "symbol string, price float, volume long"))
    got = r.watch("BarStream")
    await publish(name, "WSO2,100,55.6", "IBM,100,55.6")
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("IBM", f32(55.6), 100)]


async def test_testCSVInputCustomMapping1(run: Any) -> None:
    """Custom mapping with a header message; a quoted field keeps its delimiters."""
    name = "CsvSrcCustomMapping1"
    r = await run(_app(name, f"@source(type='inMemory', topic='{name}', @map(type='csv',header='true',"
                             '@attributes(symbol="2",price ="0",volume ="1")))',
                       "symbol string, price float, volume long"))
    got = r.watch("BarStream")
    await publish(name, "volume,price,symbol", '29.3,100,"WSO2,Colombo-3"', '25,243,"IBM,Colombo-10"')
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("WSO2,Colombo-3", f32(29.3), 100), ("IBM,Colombo-10", 25.0, 243)]


async def test_testInputCustomMappingwithfailunknownattribute(run: Any) -> None:
    """fail.on.unknown.attribute='false': a field that does not convert is null, the event maps."""
    name = "CsvSrcFailUnknownFalse"
    r = await run(_app(name, f"""@source(type='inMemory', topic='{name}', @map(type='csv',
        fail.on.unknown.attribute="false", @attributes(symbol="2",price ="0",volume ="1")))"""))
    got = r.watch("BarStream")
    await publish(name, "55.689,100,null", "75, ,IBM@#$%^*", " ,10,WSO2", " 55.6,aa,WSO2", " abb,10,WSO2",
                  " bb,10.6,WSO2")
    await until(lambda: len(_rows(got)) >= 6)
    # Float.parseFloat trims the field (" 55.6" reads); Integer.parseInt does not (" " fails).
    assert _rows(got) == [("null", f32(55.689), 100), ("IBM@#$%^*", 75.0, None), ("WSO2", None, 10),
                          ("WSO2", f32(55.6), None), ("WSO2", None, 10), ("WSO2", None, None)]
    assert r.mapping_errors("FooStream") == 0


async def test_testInputCustomMappingwithfailunknownattribute1(run: Any) -> None:
    """fail.on.unknown.attribute='true': a message with an unconvertible field is logged and dropped."""
    name = "CsvSrcFailUnknownTrue"
    r = await run(_app(name, f"""@source(type='inMemory', topic='{name}', @map(type='csv',
        fail.on.unknown.attribute="true", @attributes(symbol="2",price ="0",volume ="1")))"""))
    got = r.watch("BarStream")
    with capture_logs() as logs:
        await publish(name, "55.689,100,null", "75, ,IBM@#$%^*", ",10,WSO2", " 55.6,aa,WSO2")
        await until(lambda: r.mapping_errors("FooStream") >= 3)
        await until(lambda: len(_rows(got)) >= 1)
    assert _rows(got) == [("null", f32(55.689), 100)]
    assert r.mapping_errors("FooStream") == 3
    # Siddhi logs "Incompatible data format. Because value of '<attribute>' is ..." for each.
    reasons = [e["reason"] for e in logs if e["event"] == "payload could not be mapped"]
    assert len(reasons) == 3
    assert ["volume" in reasons[0], "price" in reasons[1], "volume" in reasons[2]] == [True, True, True]


async def test_testTextCustomSourceMapperEventGroup(run: Any) -> None:
    """event.grouping.enabled='true' with keyed @attributes: every line of a message is an event."""
    name = "CsvSrcEventGroup"
    r = await run(_app(name, f"""@source(type='inMemory', topic='{name}', @map(type='csv',
        event.grouping.enabled='true', @attributes(symbol="0",price="2",volume="1")))""",
                       "symbol string, price float, volume long"))
    got = r.watch("BarStream")
    await publish(name, f"WSO2,110,55.6{NL}IBM,120,55.6{NL}IFS,130,55.6{NL}",
                  f"WSO2,140,55.6{NL}IBM,150,55.6{NL}IFS,160,55.6{NL}")
    await until(lambda: len(_rows(got)) >= 6)
    p = f32(55.6)
    assert _rows(got) == [("WSO2", p, 110), ("IBM", p, 120), ("IFS", p, 130),
                          ("WSO2", p, 140), ("IBM", p, 150), ("IFS", p, 160)]


async def test_testInputCustomMappingAttributeSize(run: Any) -> None:
    """@attributes that leaves an attribute unmapped fails app creation."""
    name = "CsvSrcAttributeSize"
    with pytest.raises(SiddhiAppCreationError, match="does not map 'symbol'"):
        await run(_app(name, f"""@source(type='inMemory', topic='{name}', @map(type='csv',
            @attributes(price ="0",volume ="1")))"""))


async def test_testTextCustomSourceMapperEventGroup1(run: Any) -> None:
    """event.grouping.enabled='true' with positional @attributes("0","2","1") in attribute order."""
    name = "CsvSrcEventGroup1"
    r = await run(_app(name, f"""@source(type='inMemory', topic='{name}', @map(type='csv',
        event.grouping.enabled='true', @attributes("0","2","1")))""", "symbol string, price float, volume long"))
    got = r.watch("BarStream")
    await publish(name, f"WSO2,110,55.6{NL}IBM,120,55.6{NL}IFS,130,55.6{NL}",
                  f"WSO2,140,55.6{NL}IBM,150,55.6{NL}IFS,160,55.6{NL}")
    await until(lambda: len(_rows(got)) >= 6)
    p = f32(55.6)
    assert _rows(got) == [("WSO2", p, 110), ("IBM", p, 120), ("IFS", p, 130),
                          ("WSO2", p, 140), ("IBM", p, 150), ("IFS", p, 160)]


async def test_testTextCustomSourceMapperEventGroupTrp2(run: Any) -> None:
    """'trp:symbol' in positional @attributes takes the transport property for every event."""
    name = "CsvSrcEventGroupTrp2"
    # Upstream's testTrpInMemory source hands its option prop1='foo' to the mapper as the
    # transport property "symbol"; Srota's inMemory source passes the properties a payload is
    # published with, so the payloads are published with symbol='foo'.
    r = await run(_app(name, f"""@source(type='inMemory', topic='{name}', @map(type='csv',
        event.grouping.enabled='true', @attributes('trp:symbol',"2","1")))""",
                       "symbol string, price float, volume long"))
    got = r.watch("BarStream")
    await publish(name, f"WSO2,110,55.6{NL}IBM,120,55.6{NL}IFS,130,55.6{NL}",
                  f"WSO2,140,55.6{NL}IBM,150,55.6{NL}IFS,160,55.6{NL}", properties={"symbol": "foo"})
    await until(lambda: len(_rows(got)) >= 6)
    p = f32(55.6)
    assert _rows(got) == [("foo", p, v) for v in (110, 120, 130, 140, 150, 160)]


async def test_testTSVInputDefaultMapping(run: Any) -> None:
    """delimiter='\\t' reads tab-separated values with the fields trimmed."""
    name = "CsvSrcTsvDefault"
    r = await run(_app(name, f"@source(type='inMemory', topic='{name}', @map(type='csv', delimiter='\\t'))"))
    got = r.watch("BarStream")
    await publish(name, "null\t55.689\t100", "IBM@#$%^*\t75\t0", " WSO2\t0\t10", " WSO2\t55.6\t10",
                  " WSO2\t66.5\t10", " WSO2\t00.3\t16")
    await until(lambda: len(_rows(got)) >= 6)
    assert _rows(got) == [("null", f32(55.689), 100), ("IBM@#$%^*", 75.0, 0), ("WSO2", 0.0, 10),
                          ("WSO2", f32(55.6), 10), ("WSO2", f32(66.5), 10), ("WSO2", f32(0.3), 16)]


async def test_testCSVInputDefaultMappingMultipleEventWithMultiCharacterDelimiter(run: Any) -> None:
    """header='true' with the multi-character delimiter '-/-'."""
    name = "CsvSrcMultiCharDelimiter"
    r = await run(_app(name, f"@source(type='inMemory', topic='{name}', @map(type='csv', header='true',"
                             "delimiter='-/-'))", "symbol string, price float, volume long"))
    got = r.watch("BarStream")
    await publish(name, "symbol-/-price-/-volume", "WSO2-/-55.6-/-100", "IBM-/-75.6-/-10")
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("IBM", f32(75.6), 10)]
