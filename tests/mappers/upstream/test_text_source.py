"""siddhi-map-text ``TextDefaultSourceMapperTestCase`` and ``TextCustomSourceMapperTestCase``
(component/src/test/java/.../sourcemapper), ported.

Each Java ``@Test`` is one test here, named after it.  The apps are the upstream ones (an
``inMemory`` source with the ``text`` mapper on ``FooStream``, copied into ``BarStream``), with
an app name and topic of their own.  The Java callbacks assert one field per event and the
count; here every row that follows from the payloads is asserted, in order.  Where Siddhi logs
a mapping failure and drops the event, the mapping error counter and the host's log line
("payload could not be mapped", with its reason) stand for that log.
"""
from __future__ import annotations

from typing import Any

import aiohttp
from structlog.testing import capture_logs

from tests.conftest import free_port
from tests.mappers.harness import Running, f32, publish, until

STOCK = "symbol string, price float, volume long"


def _app(name: str, mapping: str, types: str = STOCK, source: str | None = None) -> str:
    """The upstream app: ``@map(type='text', <mapping>)`` on FooStream, copied into BarStream."""
    src = source or f"@source(type='inMemory', topic='{name}', @map(type='text'{', ' + mapping if mapping else ''}))"
    return f"""
    @App:name('{name}')
    {src}
    define stream FooStream ({types});
    define stream BarStream ({types});
    from FooStream select * insert into BarStream;
    """


def _rows(chunks: list[list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    return [row for chunk in chunks for row in chunk]


async def _dropped(r: Running, n: int) -> list[str]:
    """Wait until ``n`` payloads of FooStream failed to map; the reasons logged for them."""
    with capture_logs() as logs:
        await until(lambda: r.mapping_errors("FooStream") >= n)
    return [e["reason"] for e in logs if e["event"] == "payload could not be mapped"]


def _event(symbol: str, price: str, volume: str) -> str:
    return f'symbol:"{symbol}",\nprice:{price},\nvolume:{volume}'


# ------------------------------------------------------------------ TextDefaultSourceMapperTestCase
async def test_defaultTextMapping(run: Any) -> None:
    """Two ``key:value`` events map; Java asserts the prices 55.6f and 75.6f and the count 2."""
    name = "TextSrcDefault"
    r = await run(_app(name, "fail.on.missing.attribute='true'"))
    got = r.watch("BarStream")
    await publish(name, _event("WSO2", "55.6", "100"), _event("IBM", "75.6", "10"))
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("IBM", f32(75.6), 10)]


async def test_defaultTextMappingAttributeOrderDifferent(run: Any) -> None:
    """Pairs in any order map by key; Java asserts 55.6f, 75.6f and the count 2."""
    name = "TextSrcOrder"
    r = await run(_app(name, "fail.on.missing.attribute='true'"))
    got = r.watch("BarStream")
    await publish(name, 'price:55.6,\nsymbol:"WSO2",\nvolume:100', 'volume:10,\nsymbol:"IBM",\nprice:75.6')
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("IBM", f32(75.6), 10)]


async def test_defaultTextMappingFallonMissingFalse(run: Any) -> None:
    """fail.on.missing.attribute='false' with complete events: both map (55.6f, 75.6f, count 2)."""
    name = "TextSrcMissingFalse"
    r = await run(_app(name, "fail.on.missing.attribute='false'"))
    got = r.watch("BarStream")
    await publish(name, _event("WSO2", "55.6", "100"), _event("IBM", "75.6", "10"))
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("IBM", f32(75.6), 10)]


async def test_testTextSourceMapperGroupedEvents(run: Any) -> None:
    """event.grouping.enabled='true': the default ``~~~~~~~~~~`` line separates events; 4 events."""
    name = "TextSrcGrouped"
    r = await run(_app(name, "event.grouping.enabled='true'"))
    got = r.watch("BarStream")
    await publish(name, _event("wso2", "55.6", "200") + "\n~~~~~~~~~~\n" + _event("IBM", "75.6", "100"),
                  _event("IFS", "50.6", "200") + "\n~~~~~~~~~~\n" + _event("Virtusa", "70.6", "100"))
    await until(lambda: len(_rows(got)) >= 4)
    assert _rows(got) == [("wso2", f32(55.6), 200), ("IBM", f32(75.6), 100), ("IFS", f32(50.6), 200),
                          ("Virtusa", f32(70.6), 100)]


async def test_testTextSourceMapperGroupedEventsCustom(run: Any) -> None:
    """delimiter='####' separates grouped events; Java asserts the four prices and the count 4."""
    name = "TextSrcGroupedCustom"
    r = await run(_app(name, "event.grouping.enabled='true',delimiter='####'"))
    got = r.watch("BarStream")
    await publish(name, _event("wso2", "55.6", "200") + "\n####\n" + _event("IBM", "75.6", "100"),
                  _event("IFS", "50.6", "200") + "\n####\n" + _event("Virtusa", "70.6", "100"))
    await until(lambda: len(_rows(got)) >= 4)
    assert [row[1] for row in _rows(got)] == [f32(55.6), f32(75.6), f32(50.6), f32(70.6)]


async def test_testTextSourceMapperGroupedEventsCustomNewline(run: Any) -> None:
    """new.line.character='\\n\\r' while the messages use '\\n': nothing splits, no event maps (count 0)."""
    name = "TextSrcGroupedNewline"
    r = await run(_app(name, "event.grouping.enabled='true',delimiter='####',new.line.character='\\n\\r'"))
    got = r.watch("BarStream")
    await publish(name, _event("wso2", "55.6", "200") + "\n####\n" + _event("IBM", "75.6", "100"),
                  _event("IFS", "50.6", "200") + "\n####\n" + _event("Virtusa", "70.6", "100"))
    reasons = await _dropped(r, 2)
    assert _rows(got) == []
    assert len(reasons) == 2 and all("key:value pairs" in reason for reason in reasons)


async def test_testTextSourceMapperMissingAttribute(run: Any) -> None:
    """Both grouped events lack ``volume``: Siddhi logs and drops them (count 0)."""
    name = "TextSrcMissingAttr"
    r = await run(_app(name, "event.grouping.enabled='true',delimiter='####'"))
    got = r.watch("BarStream")
    await publish(name, 'symbol:"wso2",\nprice:55.6\n####\nsymbol:"IBM",\nprice:75.6')
    reasons = await _dropped(r, 1)
    assert _rows(got) == []
    assert reasons == ["event 0: the event has 2 key:value pairs but the stream has 3 attributes (2 of 2 events failed)"]


async def test_testTextSourceMapperExtraMapping(run: Any) -> None:
    """A key the stream does not have (``age``) is ignored, wherever it is; 4 events."""
    name = "TextSrcExtra"
    r = await run(_app(name, "event.grouping.enabled='true',delimiter='####'"))
    got = r.watch("BarStream")
    await publish(name,
                  'symbol:"IFS",\nprice:50.6,\nvolume:200,\nage:20\n####\nsymbol:"Virtusa",\nprice:70.6,\nvolume:100,\nage:20',
                  'symbol:"IFS",\nprice:50.6,\nage:20,\nvolume:200\n####\nsymbol:"Virtusa",\nprice:70.6,\nage:20,\nvolume:100')
    await until(lambda: len(_rows(got)) >= 4)
    assert _rows(got) == [("IFS", f32(50.6), 200), ("Virtusa", f32(70.6), 100)] * 2


async def test_testTextSourceMapperGroupedEventsWithoutEnable(run: Any) -> None:
    """Grouping off: a grouped message is one event whose ``volume`` holds the rest; dropped (count 0)."""
    name = "TextSrcWithoutEnable"
    r = await run(_app(name, "event.grouping.enabled='false'"))
    got = r.watch("BarStream")
    await publish(name, _event("wso2", "55.6", "200") + "\n~~~~~~~~~~\n" + _event("IBM", "75.6", "100"),
                  _event("IFS", "50.6", "200") + "\n~~~~~~~~~~\n" + _event("Virtusa", "70.6", "100"))
    reasons = await _dropped(r, 2)
    assert _rows(got) == []
    assert len(reasons) == 2 and all("incompatible data format" in reason for reason in reasons)


async def test_testTextSourceMapperGroupedEventsWithoutEnable2(run: Any) -> None:
    """A repeated key: the first pair wins (prices 55.6f and 50.6f, count 2)."""
    name = "TextSrcWithoutEnable2"
    r = await run(_app(name, "event.grouping.enabled='false'"))
    got = r.watch("BarStream")
    await publish(name, 'symbol:"wso2",\nprice:55.6,\nprice:58.6,\nvolume:200',
                  'symbol:"IFS",\nprice:50.6,\nvolume:200,\nsymbol:"IBM"')
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("wso2", f32(55.6), 200), ("IFS", f32(50.6), 200)]


async def test_testTextSourceMapperSingleEventForEventGroup(run: Any) -> None:
    """Grouping on, messages of one event each: both map (55.6f, 50.6f, count 2)."""
    name = "TextSrcSingleForGroup"
    r = await run(_app(name, "event.grouping.enabled='true'"))
    got = r.watch("BarStream")
    await publish(name, _event("wso2", "55.6", "200"), _event("IFS", "50.6", "200"))
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("wso2", f32(55.6), 200), ("IFS", f32(50.6), 200)]


async def test_sampleTest(run: Any) -> None:
    """Java's number syntax: ``200f`` is a float, ``100`` a double; Java asserts maxVal 200f, 100f."""
    name = "TextSrcSample"
    types = "houseId int, maxVal float, minVal float, avgVal double"
    r = await run(_app(name, "", types))
    got = r.watch("BarStream")
    await publish(name, "houseId:1,\nmaxVal:200f,\nminVal:8,\navgVal:100", "houseId:1,\nmaxVal:100f,\nminVal:8,\navgVal:100")
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [(1, 200.0, 8.0, 100.0), (1, 100.0, 8.0, 100.0)]


async def test_testTextSourceMapperAttributeSameName(run: Any) -> None:
    """As ``...WithoutEnable2``: the first pair of a repeated key wins (55.6f, 50.6f, count 2)."""
    name = "TextSrcSameName"
    r = await run(_app(name, "event.grouping.enabled='false'"))
    got = r.watch("BarStream")
    await publish(name, 'symbol:"wso2",\nprice:55.6,\nprice:58.6,\nvolume:200',
                  'symbol:"IFS",\nprice:50.6,\nvolume:200,\nsymbol:"IBM"')
    await until(lambda: len(_rows(got)) >= 2)
    assert [row[1] for row in _rows(got)] == [f32(55.6), f32(50.6)]


_SIXTEEN = "ABCDEFGHIJKLMNOP"


def _large_group() -> str:
    prices = ["55.6", "75.6", "75.6", "75.6"]
    volumes = ["200", "100", "100", "100"]
    return "\n~~~~~~~~~~\n".join(_event(s, prices[i % 4], volumes[i % 4]) for i, s in enumerate(_SIXTEEN))


async def test_testTextSourceMapperGroupedEventsLargeGroup(run: Any) -> None:
    """One message of 16 grouped events: symbols A..P in order (count 16)."""
    name = "TextSrcLargeGroup"
    r = await run(_app(name, "event.grouping.enabled='true'"))
    got = r.watch("BarStream")
    await publish(name, _large_group())
    await until(lambda: len(_rows(got)) >= 16)
    assert [row[0] for row in _rows(got)] == list(_SIXTEEN)


async def test_testTextSourceMapperGroupedEventsLargeGroupOnbinaryMessage(run: Any) -> None:
    """The same 16 events as UTF-8 bytes: A..P (count 16).

    (The Java test builds the bytes but publishes the string; here the bytes are published, as
    its name says.)
    """
    name = "TextSrcLargeGroupBinary"
    r = await run(_app(name, "event.grouping.enabled='true'"))
    got = r.watch("BarStream")
    await publish(name, _large_group().encode())
    await until(lambda: len(_rows(got)) >= 16)
    assert [row[0] for row in _rows(got)] == list(_SIXTEEN)


async def _post(port: int, *bodies: str) -> None:
    async with aiohttp.ClientSession() as client:
        for body in bodies:
            async with client.post(f"http://127.0.0.1:{port}/endpoints/RecPro", data=body.encode()) as resp:
                assert resp.status == 200


async def test_testTextMappingSingle(run: Any) -> None:
    """An http source with the text mapper: two posted events give the names John, Mike in order."""
    name, port = "TextSrcHttpSingle", free_port()
    r = await run(_app(name, "", "name string, age int, country string",
                       source=f"@source(type='http', @map(type='text'), "
                              f"receiver.url='http://127.0.0.1:{port}/endpoints/RecPro', basic.auth.enabled='false')"))
    got = r.watch("BarStream")
    await _post(port, 'name:"John",\nage:100,\ncountry:"USA"', 'name:"Mike",\nage:100,\ncountry:"USA"')
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("John", 100, "USA"), ("Mike", 100, "USA")]


async def test_testTextMappingMultiple(run: Any) -> None:
    """An http source with grouping: two posted messages of two events: John1, John2, Mike1, Mike2."""
    name, port = "TextSrcHttpMultiple", free_port()
    r = await run(_app(name, "", "name string, age int, country string",
                       source=f"@source(type='http', @map(type='text',event.grouping.enabled='true'), "
                              f"receiver.url='http://127.0.0.1:{port}/endpoints/RecPro', basic.auth.enabled='false')"))
    got = r.watch("BarStream")
    await _post(port, 'name:"John1",\nage:100,\ncountry:"USA"\n~~~~~~~~~~\nname:"John2",\nage:100,\ncountry:"USA"',
                'name:"Mike1",\nage:100,\ncountry:"USA"\n~~~~~~~~~~\nname:"Mike2",\nage:100,\ncountry:"USA"')
    await until(lambda: len(_rows(got)) >= 4)
    assert [row[0] for row in _rows(got)] == ["John1", "John2", "Mike1", "Mike2"]


# ------------------------------------------------------------------ TextCustomSourceMapperTestCase
_AB = "regex.A='(\\w+)\\s([-.0-9]+)',regex.B='volume=([-0-9]+)'"
_A3 = "regex.A='(\\w+)\\s([-.0-9]+):([-.0-9]+)'"
_ANY3 = "regex.A='(.{0,})\\s([-.0-9]+):([-.0-9]+)'"


async def test_testTextCustomSourceMapper(run: Any) -> None:
    """regex.A groups give symbol and price, regex.B the volume: 55.6f and 75.6f (count 2)."""
    name = "TextSrcCustom"
    r = await run(_app(name, f"fail.on.missing.attribute='true',{_AB},"
                             "@attributes(symbol = 'A[1]', price = 'A[2]', volume = 'B')"))
    got = r.watch("BarStream")
    await publish(name, "wso2 55.6 volume=45", "IBM 75.6 volume=45")
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("wso2", f32(55.6), 45), ("IBM", f32(75.6), 45)]


async def test_testTextCustomSourceMapperOnBinaryMessage(run: Any) -> None:
    """The same mapping given UTF-8 bytes: 55.6f and 75.6f (count 2)."""
    name = "TextSrcCustomBinary"
    r = await run(_app(name, f"fail.on.missing.attribute='true',{_AB},"
                             "@attributes(symbol = 'A[1]', price = 'A[2]', volume = 'B')"))
    got = r.watch("BarStream")
    await publish(name, b"wso2 55.6 volume=45", b"IBM 75.6 volume=45")
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("wso2", f32(55.6), 45), ("IBM", f32(75.6), 45)]


async def test_testTextCustomSourceMapperOneRegex(run: Any) -> None:
    """Three groups of one regex: 55.6f and 75.6f (count 2)."""
    name = "TextSrcOneRegex"
    r = await run(_app(name, f"fail.on.missing.attribute='true',{_A3},"
                             "@attributes(symbol = 'A[1]', price = 'A[2]', volume = 'A[3]')"))
    got = r.watch("BarStream")
    await publish(name, "wso2 55.6:45", "IBM 75.6:45")
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("wso2", f32(55.6), 45), ("IBM", f32(75.6), 45)]


async def test_testTextCustomSourceMapperNoRegex(run: Any) -> None:
    """@attributes name regex A, which is not defined: every event is dropped (count 0)."""
    name = "TextSrcNoRegex"
    r = await run(_app(name, "fail.on.missing.attribute='true',"
                             "@attributes(symbol = 'A[1]', price = 'A[2]', volume = 'A[3]')"))
    got = r.watch("BarStream")
    await publish(name, "wso2 55.6:45", "IBM 75.6:45")
    reasons = await _dropped(r, 2)
    assert _rows(got) == []
    assert len(reasons) == 2 and all("no regular expression regex.A" in reason for reason in reasons)


async def test_testTextCustomSourceMapperSpecialCharacters(run: Any) -> None:
    """``(.{0,})`` takes symbols with special characters: 55.6f and 75.6f (count 2)."""
    name = "TextSrcSpecial"
    r = await run(_app(name, f"fail.on.missing.attribute='true',{_ANY3},"
                             "@attributes(symbol = 'A[1]', price = 'A[2]', volume = 'A[3]')"))
    got = r.watch("BarStream")
    await publish(name, "w#@so2 55.6:45", "I&BM 75.6:45")
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("w#@so2", f32(55.6), 45), ("I&BM", f32(75.6), 45)]


async def test_testTextCustomSourceMapperTcp(run: Any) -> None:
    """As ``...SpecialCharacters`` over Siddhi's tcp transport (55.6f, 75.6f, count 2).

    Srota has no tcp transport; the transport is incidental to the mapping, so the same bytes
    come through ``inMemory`` here.
    """
    name = "TextSrcTcp"
    r = await run(_app(name, f"fail.on.missing.attribute='true',{_ANY3},"
                             "@attributes(symbol = 'A[1]', price = 'A[2]', volume = 'A[3]')"))
    got = r.watch("BarStream")
    await publish(name, b"w#@so2 55.6:45", b"I&BM 75.6:45")
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("w#@so2", f32(55.6), 45), ("I&BM", f32(75.6), 45)]


async def test_testTextCustomSourceMapperEventGroup(run: Any) -> None:
    """Custom mapping with grouping: four events (55.6f, 75.6f, 65.6f, 85.6f)."""
    name = "TextSrcCustomGroup"
    r = await run(_app(name, f"fail.on.missing.attribute='true',event.grouping.enabled='true',{_A3},"
                             "@attributes(symbol = 'A[1]', price = 'A[2]', volume = 'A[3]')"))
    got = r.watch("BarStream")
    await publish(name, "wso2 55.6:45\n~~~~~~~~~~\nIBM 75.6:45\n", "IFS 65.6:45\n~~~~~~~~~~\nMIT 85.6:45")
    await until(lambda: len(_rows(got)) >= 4)
    assert _rows(got) == [("wso2", f32(55.6), 45), ("IBM", f32(75.6), 45), ("IFS", f32(65.6), 45),
                          ("MIT", f32(85.6), 45)]


_HOUSE = "houseId int, maxVal float, minVal float, avgVal double"
_HOUSE_MAP = ("fail.on.missing.attribute='true',"
              "regex.A='houseId:([-.0-9]+),\\nmaxVal:([-.0-9]+),\\nminVal:([-.0-9]+),\\navgVal:([-.0-9]+)',"
              "@attributes(houseId = 'A[1]', maxVal = 'A[2]', minVal = 'A[3]' ,avgVal='A[4]')")


async def test_sample(run: Any) -> None:
    """A regex across lines (``\\n`` in the regex): maxVal 100f and 75.6f (count 2)."""
    name = "TextSrcCustomSample"
    r = await run(_app(name, _HOUSE_MAP, _HOUSE))
    got = r.watch("BarStream")
    await publish(name, "houseId:1,\nmaxVal:100,\nminVal:0,\navgVal:55.5", "houseId:1,\nmaxVal:75.6,\nminVal:0,\navgVal:55.5")
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [(1, 100.0, 0.0, 55.5), (1, f32(75.6), 0.0, 55.5)]


async def test_sampleOnBinaryMessage(run: Any) -> None:
    """As ``sample`` with UTF-8 bytes: maxVal 100f and 75.6f (count 2)."""
    name = "TextSrcCustomSampleBinary"
    r = await run(_app(name, _HOUSE_MAP, _HOUSE))
    got = r.watch("BarStream")
    await publish(name, b"houseId:1,\nmaxVal:100,\nminVal:0,\navgVal:55.5", b"houseId:1,\nmaxVal:75.6,\nminVal:0,\navgVal:55.5")
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [(1, 100.0, 0.0, 55.5), (1, f32(75.6), 0.0, 55.5)]


async def test_testTextCustomSourceWrongRegexGroup(run: Any) -> None:
    """``volume = 'D'`` names no regex: every event is dropped (count 0)."""
    name = "TextSrcWrongGroup"
    r = await run(_app(name, "fail.on.missing.attribute='true',regex.A='(\\w+)\\s([-.0-9]+)',"
                             "@attributes(symbol = 'A[1]', price = 'A[2]', volume = 'D')"))
    got = r.watch("BarStream")
    await publish(name, "wso2 55.6 45", "IBM 75.6 45")
    reasons = await _dropped(r, 2)
    assert _rows(got) == []
    assert len(reasons) == 2 and all("regex.D" in reason for reason in reasons)


async def test_testTextCustomSourceMapperFailOnMissingFalse(run: Any) -> None:
    """fail.on.missing.attribute='false': regex A finds nothing, symbol and price are null (count 2)."""
    name = "TextSrcCustomMissingFalse"
    r = await run(_app(name, f"fail.on.missing.attribute='false',{_AB},"
                             "@attributes(symbol = 'A[1]', price = 'A[2]', volume = 'B')"))
    got = r.watch("BarStream")
    await publish(name, "55.6 volume=45", "75.6 volume=45")
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [(None, None, 45), (None, None, 45)]


async def test_testTextCustomSourceWrongRegexGroupIdx(run: Any) -> None:
    """``A[4]``/``A[3]`` of a two-group regex that matches: every event is dropped (count 0)."""
    name = "TextSrcWrongGroupIdx"
    r = await run(_app(name, f"fail.on.missing.attribute='true',{_AB},"
                             "@attributes(symbol = 'A[4]', price = 'A[3]', volume = 'B')"))
    got = r.watch("BarStream")
    await publish(name, "wso2 55.6 volume=45", "IBM 75.6 volume=45")
    reasons = await _dropped(r, 2)
    assert _rows(got) == []
    assert len(reasons) == 2 and all("regex.A has no group 4" in reason for reason in reasons)


async def test_testTextCustomSourceWithoutAttribute(run: Any) -> None:
    """Regexes without @attributes: the default mapping applies and these payloads fail (count 0)."""
    name = "TextSrcWithoutAttributes"
    r = await run(_app(name, _AB))
    got = r.watch("BarStream")
    await publish(name, "wso2 55.6 volume=45", "IBM 75.6 volume=45")
    reasons = await _dropped(r, 2)
    assert _rows(got) == []
    assert len(reasons) == 2


async def test_testTextCustomSourceMapperDifferentEventOrder(run: Any) -> None:
    """Regex A does not match ``55.6 wso2 ...``: with fail.on.missing.attribute the events drop (count 0)."""
    name = "TextSrcDifferentOrder"
    r = await run(_app(name, f"fail.on.missing.attribute='true',{_AB},"
                             "@attributes(symbol = 'A[1]', price = 'A[2]', volume = 'B')"))
    got = r.watch("BarStream")
    await publish(name, " 55.6 wso2 volume=45", "75.6 IBM volume=45")
    reasons = await _dropped(r, 2)
    assert _rows(got) == []
    assert len(reasons) == 2 and all("found no value" in reason for reason in reasons)


async def test_testTextCustomSourceMapperDifferentEventOrder2(run: Any) -> None:
    """Regexes find their groups anywhere in the text: 55.6f and 75.6f (count 2)."""
    name = "TextSrcDifferentOrder2"
    r = await run(_app(name, f"fail.on.missing.attribute='true',{_AB},"
                             "@attributes(symbol = 'A[1]', price = 'A[2]', volume = 'B')"))
    got = r.watch("BarStream")
    await publish(name, "volume=45 wso2 55.6", "volume=45 IBM 75.6")
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("wso2", f32(55.6), 45), ("IBM", f32(75.6), 45)]


async def test_testTextMappingSingleCustom(run: Any) -> None:
    """An http source with a custom text mapping: symbols wso2 and IBM in order."""
    name, port = "TextSrcHttpCustom", free_port()
    r = await run(_app(name, "", source=(
        f"@source(type='http', receiver.url='http://127.0.0.1:{port}/endpoints/RecPro', "
        f"@map(type='text',fail.on.missing.attribute='true',{_AB},"
        "@attributes(symbol = 'A[1]', price = 'A[2]', volume = 'B')))")))
    got = r.watch("BarStream")
    await _post(port, "volume=45 wso2 55.6", "volume=45 IBM 55.6")
    await until(lambda: len(_rows(got)) >= 2)
    assert [row[0] for row in _rows(got)] == ["wso2", "IBM"]


async def test_testTextCustomSourceMapper2(run: Any) -> None:
    """Positional @attributes('A[1]', 'A[2]', 'B'): 55.6f and 75.6f (count 2)."""
    name = "TextSrcPositional"
    r = await run(_app(name, f"{_AB},@attributes('A[1]', 'A[2]', 'B')"))
    got = r.watch("BarStream")
    await publish(name, "wso2 55.6 volume=45", "IBM 75.6 volume=45")
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("wso2", f32(55.6), 45), ("IBM", f32(75.6), 45)]


async def test_testTextCustomSourceMapper3(run: Any) -> None:
    """Positional ``'trp:symbol'``: the symbol is the transport property ('foo'); 55.6f, 75.6f.

    Java's ``testTrpInMemory`` source hands its ``prop1`` option over as the ``symbol``
    transport property; here the inMemory message carries that property.
    """
    name = "TextSrcTrpPositional"
    r = await run(_app(name, f"{_AB},@attributes('trp:symbol', 'A[2]', 'B')"))
    got = r.watch("BarStream")
    await publish(name, "wso2 55.6 volume=45", "IBM 75.6 volume=45", properties={"symbol": "foo"})
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("foo", f32(55.6), 45), ("foo", f32(75.6), 45)]


async def test_testTextCustomSourceMapper4(run: Any) -> None:
    """Keyed ``symbol='trp:symbol'``: as ``...Mapper3`` (symbol 'foo'; 55.6f, 75.6f)."""
    name = "TextSrcTrpKeyed"
    r = await run(_app(name, f"{_AB},@attributes(symbol='trp:symbol', price='A[2]', volume='B')"))
    got = r.watch("BarStream")
    await publish(name, "wso2 55.6 volume=45", "IBM 75.6 volume=45", properties={"symbol": "foo"})
    await until(lambda: len(_rows(got)) >= 2)
    assert _rows(got) == [("foo", f32(55.6), 45), ("foo", f32(75.6), 45)]
