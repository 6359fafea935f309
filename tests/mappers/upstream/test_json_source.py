"""Port of siddhi-map-json's ``JsonSourceMapperTestCase`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/map/json/sourcemapper/
JsonSourceMapperTestCase.java`` of siddhi-io/siddhi-map-json.  Each test runs the same app
text (``@App:name``, an ``inMemory`` source with the same ``@map``, ``FooStream`` into
``BarStream``) on a service host and publishes the same payloads to its topic (named after the
app, so that tests do not share one).  Where the Java test counts events, the port asserts the
count and the rows that follow from the payloads; where it looks for a log line
(``UnitTestAppender``), the port asserts Srota's log entry for the dropped payload and the
mapping error counter.  ``testTrpInMemory`` sources become ``inMemory`` ones whose messages
carry the transport properties that source adds.
"""
from __future__ import annotations

import asyncio
from typing import Any

import orjson
from structlog.testing import capture_logs

from tests.mappers.harness import Running, f32, publish, until

#: What upstream's TestTrpInMemorySource attaches to every message (prop1, prop2).
TRP = {"symbol": "test", "price": "bar"}


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


async def test_jsonSourceMapperTest1(run: Any) -> None:
    """Default mapping of {"event": {...}}: floats, an integer for a float, special characters."""
    name = "JsonSource1"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json'))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55.6,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55.678,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2@#$%^*",\n'
                         '         "price":55,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await _settle(r, got, 4, errors=0)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("WSO2", f32(55.678), 100), ("WSO2", 55.0, 100),
                          ("WSO2@#$%^*", 55.0, 100)]
    assert r.mapping_errors("FooStream") == 0


async def test_jsonSourceMapperTest2(run: Any) -> None:
    """fail.on.missing.attribute='true': an explicit null is null, an absent attribute drops the message."""
    name = "JsonSource2"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', fail.on.missing.attribute='true'))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55.6,\n'
                         '         "volume":null\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":null,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":null,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55.6,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    # The third payload lacks 'price': dropped (one mapping error).
    await _settle(r, got, 3, errors=1)
    assert _rows(got) == [("WSO2", f32(55.6), None), ("WSO2", None, 100), ("WSO2", f32(55.6), 100)]
    assert r.mapping_errors("FooStream") == 1


async def test_jsonSourceMapperTest3(run: Any) -> None:
    """fail.on.missing.attribute='false': explicit nulls and absent attributes both map to null."""
    name = "JsonSource3"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', fail.on.missing.attribute='false'))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55.6,\n'
                         '         "volume":null\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":null,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":null,\n'
                         '         "price":56,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "price":56,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":57.6,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await _settle(r, got, 5, errors=0)
    assert _rows(got) == [("WSO2", f32(55.6), None), ("WSO2", None, 100), (None, 56.0, 100),
                          (None, 56.0, 100), ("WSO2", f32(57.6), 100)]
    assert r.mapping_errors("FooStream") == 0


async def test_jsonSourceMapperTest4(run: Any) -> None:
    """Values of the wrong JSON type ("" for a number, a fraction for a long), bad JSON: dropped."""
    name = "JsonSource4"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', fail.on.missing.attribute='true'))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55.6,\n'
                         '         "volume": ""\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price": "",\n'
                         '         "volume": 100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":" ",\n'
                         '         "price":55.6,\n'
                         '         "volume": 100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol": 123,\n'
                         '         "price":1,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":10.234,\n'
                         '         "price":55.6,\n'
                         '         "volume":a\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":USD55.6,\n'
                         '         "volume": 100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55.6,\n'
                         '         "volume": 100.20\n'
                         "      }\n"
                         " }"))
    # Dropped: "" for the long and for the float, the two invalid JSON texts (volume:a,
    # price:USD55.6) and 100.20 for the long; a blank string and a number for a string map.
    await _settle(r, got, 2, errors=5)
    assert _rows(got) == [(" ", f32(55.6), 100), ("123", 1.0, 100)]
    assert r.mapping_errors("FooStream") == 5


async def test_jsonSourceMapperTest5(run: Any) -> None:
    """Malformed JSON (XML inside an object, an unclosed object) drops the message; a good one still maps."""
    name = "JsonSource5"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', fail.on.missing.attribute='true'))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, ("  {\n"
                         '   "event":{\n'
                         "       <symbol>WSO2</symbol>\n"
                         "       <price>55.6</price>\n"
                         "       <volume>100</volume>\n"
                         "   }\n"
                         "}"))
    await publish(name, (" {\n"
                         '   "event":{\n'
                         '       "TESTevent": {\n'
                         '       "symbol": "WSO2",\n'
                         '       "price": "55.6",\n'
                         '       "volume": "100"\n'
                         "   }\n"
                         "}"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55.6,\n'
                         '         "volume": 100\n'
                         "      }\n"
                         " }"))
    await _settle(r, got, 1, errors=2)
    assert _rows(got) == [("WSO2", f32(55.6), 100)]
    assert r.mapping_errors("FooStream") == 2


async def test_jsonSourceMapperTest6(run: Any) -> None:
    """An array for a long, an absent attribute and an extra key each drop the message."""
    name = "JsonSource6"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', fail.on.missing.attribute='true'))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, (" {\n"
                         '   "event": {\n'
                         '       "symbol": "WSO2",\n'
                         '       "price": 55.6,\n'
                         '       "volume": [\n'
                         '           {"v": 100},\n'
                         '           {"v": 200}\n'
                         "       ]\n"
                         "   }\n"
                         "}"))
    await publish(name, (" {\n"
                         '   "event":{\n'
                         '       "symbol":"WSO2",\n'
                         '       "volume":100\n'
                         "   }\n"
                         "}"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":10.12,\n'
                         '          "discount":"3%",\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55.6,\n'
                         '         "volume": 100\n'
                         "      }\n"
                         " }"))
    await _settle(r, got, 1, errors=3)
    assert _rows(got) == [("WSO2", f32(55.6), 100)]
    assert r.mapping_errors("FooStream") == 3


async def test_jsonSourceMapperTest8(run: Any) -> None:
    """An envelope key other than 'event' is an unknown attribute: the message is dropped."""
    name = "JsonSource8"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', fail.on.missing.attribute='true'))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, (" {\n"
                         '      "testEvent":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55.6,\n'
                         '         "volume": 100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55.6,\n'
                         '         "volume": 100\n'
                         "      }\n"
                         " }"))
    await _settle(r, got, 1, errors=1)
    assert _rows(got) == [("WSO2", f32(55.6), 100)]
    assert r.mapping_errors("FooStream") == 1


async def test_jsonSourceMapperTest9(run: Any) -> None:
    """Custom mapping of arrays: elements whose path is missing ('testEvent', 'Event') are dropped alone."""
    name = "JsonSource9"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', fail.on.missing.attribute='true',
        @attributes(symbol = "event.symbol", price = "event.price", volume = "event.volume") ))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, (" \n"
                         "[\n"
                         '{"event":{"symbol":"WSO2","price":52.6,"volume":100}},\n'
                         '{"event":{"symbol":"WSO2","price":53.6,"volume":99}},\n'
                         '{"event":{"symbol":"WSO2","price":54.6,"volume":80}}\n'
                         "]\n"))
    await publish(name, (" \n"
                         "[\n"
                         '{"event":{"symbol":"WSO2","price":55.6,"volume":100}},\n'
                         '{"testEvent":{"symbol":"WSO2","price":56.6,"volume":99}},\n'
                         '{"event":{"symbol":"WSO2","price":57.6,"volume":80}}\n'
                         "]\n"))
    await publish(name, ("\n"
                         "[\n"
                         '{"event":{"symbol":"WSO2","price":58.6,"volume":100}},\n'
                         '{"Event":{"symbol":"WSO2","price":59.6,"volume":99}},\n'
                         '{"event":{"symbol":"WSO2","price":60.6,"volume":80}}\n'
                         "]\n"))
    # One mapping error per payload that had a failing element (Siddhi throws once per message).
    await _settle(r, got, 7, errors=2)
    assert _rows(got) == [("WSO2", f32(52.6), 100), ("WSO2", f32(53.6), 99), ("WSO2", f32(54.6), 80),
                          ("WSO2", f32(55.6), 100), ("WSO2", f32(57.6), 80),
                          ("WSO2", f32(58.6), 100), ("WSO2", f32(60.6), 80)]
    assert r.mapping_errors("FooStream") == 2


async def test_jsonSourceMapperTest10(run: Any) -> None:
    """Custom mapping of arrays (as test 9, asserting every price): only failing elements are dropped."""
    name = "JsonSource10"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', fail.on.missing.attribute='true',
        @attributes(symbol = "event.symbol", price = "event.price", volume = "event.volume") ))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, (" \n"
                         "[\n"
                         '{"event":{"symbol":"WSO2","price":52.6,"volume":100}},\n'
                         '{"event":{"symbol":"WSO2","price":53.6,"volume":99}},\n'
                         '{"event":{"symbol":"WSO2","price":54.6,"volume":80}}\n'
                         "]\n"))
    await publish(name, (" \n"
                         "[\n"
                         '{"event":{"symbol":"WSO2","price":55.6,"volume":100}},\n'
                         '{"testEvent":{"symbol":"WSO2","price":56.6,"volume":99}},\n'
                         '{"event":{"symbol":"WSO2","price":57.6,"volume":80}}\n'
                         "]\n"))
    await publish(name, ("\n"
                         "[\n"
                         '{"event":{"symbol":"WSO2","price":58.6,"volume":100}},\n'
                         '{"Event":{"symbol":"WSO2","price":59.6,"volume":99}},\n'
                         '{"event":{"symbol":"WSO2","price":60.6,"volume":80}}\n'
                         "]\n"))
    await _settle(r, got, 7, errors=2)
    assert _rows(got) == [("WSO2", f32(52.6), 100), ("WSO2", f32(53.6), 99), ("WSO2", f32(54.6), 80),
                          ("WSO2", f32(55.6), 100), ("WSO2", f32(57.6), 80),
                          ("WSO2", f32(58.6), 100), ("WSO2", f32(60.6), 80)]
    assert r.mapping_errors("FooStream") == 2


async def test_jsonSourceMapperTest11(run: Any) -> None:
    """enclosing.element='portfolio' with nested paths: an object is one event, an array many."""
    name = "JsonSource11"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', enclosing.element="portfolio",
        @attributes(symbol = "stock.company.symbol", price = "stock.price", volume = "stock.volume")))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         '   {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":55.6}}'
                         "}"))
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         "   ["
                         '       {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":56.6}},'
                         '       {"stock":{"volume":200,"company":{"symbol":"wso2"},"price":57.6}}'
                         "   ]\n"
                         "}\n"))
    await _settle(r, got, 3, errors=0)
    assert _rows(got) == [("wso2", f32(55.6), 100), ("wso2", f32(56.6), 100), ("wso2", f32(57.6), 200)]
    assert r.mapping_errors("FooStream") == 0


async def test_jsonSourceMapperTest12(run: Any) -> None:
    """Custom mapping, fail.on.missing.attribute='true': a null is null, an absent path drops the element."""
    name = "JsonSource12"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', enclosing.element="portfolio",
        fail.on.missing.attribute="true",
        @attributes(symbol = "stock.company.symbol", price = "stock.price", volume = "stock.volume")))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         "   ["
                         '       {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":55.6}},'
                         '       {"stock":{"volume":null,"company":{"symbol":"wso2"},"price":56.6}}'
                         "   ]\n"
                         "}\n"))
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         "   ["
                         '       {"stock":{"volume":100,"company":{"symbol":"wso2"}}},'
                         '       {"stock":{"volume":200,"company":{"symbol":"wso2"},"price":null}}'
                         "   ]\n"
                         "}\n"))
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         "   ["
                         '       {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":76.6}},'
                         '       {"stock":{"volume":200,"company":{"symbol":null},"price":77.6}}'
                         "   ]\n"
                         "}\n"))
    await _settle(r, got, 5, errors=1)
    assert _rows(got) == [("wso2", f32(55.6), 100), ("wso2", f32(56.6), None), ("wso2", None, 200),
                          ("wso2", f32(76.6), 100), (None, f32(77.6), 200)]
    assert r.mapping_errors("FooStream") == 1


async def test_jsonSourceMapperTest13(run: Any) -> None:
    """Custom mapping, fail.on.missing.attribute='false': null values map to null in every element."""
    name = "JsonSource13"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', enclosing.element="portfolio",
        fail.on.missing.attribute="false",
        @attributes(symbol = "stock.company.symbol", price = "stock.price", volume = "stock.volume")))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         "   ["
                         '       {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":55.6}},'
                         '       {"stock":{"volume":null,"company":{"symbol":"IBM"},"price":56.6}}'
                         "   ]\n"
                         "}\n"))
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         "   ["
                         '       {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":66.6}},'
                         '       {"stock":{"volume":200,"company":{"symbol":"IBM"},"price":null}}'
                         "   ]\n"
                         "}\n"))
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         "   ["
                         '       {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":76.6}},'
                         '       {"stock":{"volume":200,"company":{"symbol":null},"price":77.6}}'
                         "   ]\n"
                         "}\n"))
    await _settle(r, got, 6, errors=0)
    assert _rows(got) == [("wso2", f32(55.6), 100), ("IBM", f32(56.6), None),
                          ("wso2", f32(66.6), 100), ("IBM", None, 200),
                          ("wso2", f32(76.6), 100), (None, f32(77.6), 200)]
    assert r.mapping_errors("FooStream") == 0


async def test_jsonSourceMapperTest14(run: Any) -> None:
    """Default mapping of a JSON array of {"event": {...}} objects: one event per element."""
    name = "JsonSource14"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json'))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, ("[{\n"
                         '  "event":{\n'
                         '      "symbol":"WSO2",\n'
                         '      "price":55.6,\n'
                         '      "volume":100}},'
                         "{\n"
                         '"event":{\n'
                         '"symbol":"IBM",\n'
                         '"price":32.6,\n'
                         '"volume":160\n'
                         "}\n"
                         "}]"))
    await _settle(r, got, 2, errors=0)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("IBM", f32(32.6), 160)]
    assert r.mapping_errors("FooStream") == 0


async def test_jsonSourceMapperTest15(run: Any) -> None:
    """A JSON scalar (12) is not an event: the message is dropped and the failure logged."""
    name = "JsonSource15"
    with capture_logs() as logs:
        r = await run(f"""
        @App:name('{name}')
        @source(type='inMemory', topic='{name}', @map(type='json'))
        define stream FooStream (symbol string, price float, volume long);
        define stream BarStream (symbol string, price float, volume long);
        from FooStream select * insert into BarStream;
        """)
        got = r.watch("BarStream")
        await publish(name, "12")
        # Siddhi logs "Json message 12 contains missing attributes", and so does Srota
        await until(lambda: r.mapping_errors("FooStream") >= 1)
        await asyncio.sleep(0.1)
    reasons = _failures(logs)
    assert len(reasons) == 1, reasons
    assert 'missing attributes' in reasons[0], reasons
    assert r.mapping_errors("FooStream") == 1
    assert got == []  # nothing maps


async def test_jsonSourceMapperTest16(run: Any) -> None:
    """A key the stream lacks ('event1') drops the message; the log names the key."""
    name = "JsonSource16"
    with capture_logs() as logs:
        r = await run(f"""
        @App:name('{name}')
        @source(type='inMemory', topic='{name}', @map(type='json'))
        define stream FooStream (symbol string, price float, volume long);
        define stream BarStream (symbol string, price float, volume long);
        from FooStream select * insert into BarStream;
        """)
        got = r.watch("BarStream")
        await publish(name, '{"event1":{"symbol":"WSO2","price":52.6,"volume":100}}')
        await until(lambda: r.mapping_errors("FooStream") >= 1)
        await asyncio.sleep(0.1)
    reasons = _failures(logs)
    assert len(reasons) == 1, reasons
    assert "does not have an attribute named 'event1'" in reasons[0], reasons
    assert r.mapping_errors("FooStream") == 1
    assert got == []  # nothing maps


async def test_jsonSourceMapperTest17(run: Any) -> None:
    """Default mapping into double and int attributes (a type name in any case: String)."""
    name = "JsonSource17"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json'))
    define stream FooStream (symbol String, price double, volume int);
    define stream BarStream (symbol String, price double, volume int);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55.6,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55.678,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55.0,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55.0,\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await _settle(r, got, 4, errors=0)
    assert _rows(got) == [("WSO2", 55.6, 100), ("WSO2", 55.678, 100),
                          ("WSO2", 55.0, 100), ("WSO2", 55.0, 100)]
    assert r.mapping_errors("FooStream") == 0


async def test_jsonSourceMapperTest18(run: Any) -> None:
    """A JSON integer for a double attribute is incompatible: dropped and logged."""
    name = "JsonSource18"
    with capture_logs() as logs:
        r = await run(f"""
        @App:name('{name}')
        @source(type='inMemory', topic='{name}', @map(type='json'))
        define stream FooStream (symbol String, price double, volume int);
        define stream BarStream (symbol String, price double, volume int);
        from FooStream select * insert into BarStream;
        """)
        got = r.watch("BarStream")
        await publish(name, (" {\n"
                             '      "event":{\n'
                             '         "symbol":"WSO2",\n'
                             '         "price":55,\n'
                             '         "volume":100\n'
                             "      }\n"
                             " }"))
        await until(lambda: r.mapping_errors("FooStream") >= 1)
        await asyncio.sleep(0.1)
    reasons = _failures(logs)
    assert len(reasons) == 1, reasons
    assert "attribute 'price'" in reasons[0], reasons
    assert 'not compatible with type double' in reasons[0], reasons
    assert r.mapping_errors("FooStream") == 1
    assert got == []  # nothing maps


async def test_jsonSourceMapperTest19(run: Any) -> None:
    """A JSON number with a fraction for an int attribute is incompatible: dropped and logged."""
    name = "JsonSource19"
    with capture_logs() as logs:
        r = await run(f"""
        @App:name('{name}')
        @source(type='inMemory', topic='{name}', @map(type='json'))
        define stream FooStream (symbol String, price double, volume int);
        define stream BarStream (symbol String, price double, volume int);
        from FooStream select * insert into BarStream;
        """)
        got = r.watch("BarStream")
        await publish(name, (" {\n"
                             '      "event":{\n'
                             '         "symbol":"true",\n'
                             '         "price":55.0,\n'
                             '         "volume":100.0\n'
                             "      }\n"
                             " }"))
        await until(lambda: r.mapping_errors("FooStream") >= 1)
        await asyncio.sleep(0.1)
    reasons = _failures(logs)
    assert len(reasons) == 1, reasons
    assert "attribute 'volume'" in reasons[0], reasons
    assert 'not compatible with type int' in reasons[0], reasons
    assert r.mapping_errors("FooStream") == 1
    assert got == []  # nothing maps


async def test_jsonSourceMapper20(run: Any) -> None:
    """A JSON string ("true") for a bool attribute is incompatible: dropped and logged."""
    name = "JsonSource20"
    with capture_logs() as logs:
        r = await run(f"""
        @App:name('{name}')
        @source(type='inMemory', topic='{name}', @map(type='json'))
        define stream FooStream (symbol Bool, price double, volume int);
        define stream BarStream (symbol Bool, price double, volume int);
        from FooStream select * insert into BarStream;
        """)
        got = r.watch("BarStream")
        await publish(name, (" {\n"
                             '      "event":{\n'
                             '         "symbol":"true",\n'
                             '         "price":55,\n'
                             '         "volume":100.0\n'
                             "      }\n"
                             " }"))
        await until(lambda: r.mapping_errors("FooStream") >= 1)
        await asyncio.sleep(0.1)
    reasons = _failures(logs)
    assert len(reasons) == 1, reasons
    assert "attribute 'symbol'" in reasons[0], reasons
    assert 'not compatible with type bool' in reasons[0], reasons
    assert r.mapping_errors("FooStream") == 1
    assert got == []  # nothing maps


async def test_jsonSourceMapperTest21(run: Any) -> None:
    """A payload that is neither text nor bytes (an int) is rejected and logged."""
    name = "JsonSource21"
    with capture_logs() as logs:
        r = await run(f"""
        @App:name('{name}')
        @source(type='inMemory', topic='{name}', @map(type='json'))
        define stream FooStream (symbol Bool, price double, volume int);
        define stream BarStream (symbol Bool, price double, volume int);
        from FooStream select * insert into BarStream;
        """)
        got = r.watch("BarStream")
        await publish(name, 12)
        # Siddhi logs "Invalid JSON object received. Expected String or byte array".
        await until(lambda: r.mapping_errors("FooStream") >= 1)
        await asyncio.sleep(0.1)
    reasons = _failures(logs)
    assert len(reasons) == 1, reasons
    assert 'expects bytes or text, not int' in reasons[0], reasons
    assert r.mapping_errors("FooStream") == 1
    assert got == []  # nothing maps


async def test_jsonSourceMapperTest22(run: Any) -> None:
    """As test 13 with the payloads as UTF-8 bytes."""
    name = "JsonSource22"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', enclosing.element="portfolio",
        fail.on.missing.attribute="false",
        @attributes(symbol = "stock.company.symbol", price = "stock.price", volume = "stock.volume")))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, (b"\n"
                         b'{"portfolio":\n'
                         b"   ["
                         b'       {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":55.6}},'
                         b'       {"stock":{"volume":null,"company":{"symbol":"IBM"},"price":56.6}}'
                         b"   ]\n"
                         b"}\n"))
    await publish(name, (b"\n"
                         b'{"portfolio":\n'
                         b"   ["
                         b'       {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":66.6}},'
                         b'       {"stock":{"volume":200,"company":{"symbol":"IBM"},"price":null}}'
                         b"   ]\n"
                         b"}\n"))
    await publish(name, (b"\n"
                         b'{"portfolio":\n'
                         b"   ["
                         b'       {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":76.6}},'
                         b'       {"stock":{"volume":200,"company":{"symbol":null},"price":77.6}}'
                         b"   ]\n"
                         b"}\n"))
    await _settle(r, got, 6, errors=0)
    assert _rows(got) == [("wso2", f32(55.6), 100), ("IBM", f32(56.6), None),
                          ("wso2", f32(66.6), 100), ("IBM", None, 200),
                          ("wso2", f32(76.6), 100), (None, f32(77.6), 200)]
    assert r.mapping_errors("FooStream") == 0


async def test_jsonSourceMapperTest23(run: Any) -> None:
    """Positional @attributes with enclosing.element: an object is one event, an array many."""
    name = "JsonSource23"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', enclosing.element="portfolio",
        @attributes("stock.company.symbol", "stock.price", "stock.volume")))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         '   {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":55.6}}'
                         "}"))
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         "   ["
                         '       {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":56.6}},'
                         '       {"stock":{"volume":200,"company":{"symbol":"wso2"},"price":57.6}}'
                         "   ]\n"
                         "}\n"))
    await _settle(r, got, 3, errors=0)
    assert _rows(got) == [("wso2", f32(55.6), 100), ("wso2", f32(56.6), 100), ("wso2", f32(57.6), 200)]
    assert r.mapping_errors("FooStream") == 0


async def test_jsonSourceMapperTest24(run: Any) -> None:
    """Positional @attributes with a 'trp:symbol' transport property."""
    name = "JsonSource24"
    # TestTrpInMemorySource (type 'testTrpInMemory', prop1='test', prop2='bar') hands the mapper the
    # transport properties symbol='test' and price='bar': here inMemory passes publish()'s on.
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', enclosing.element="portfolio",
        @attributes("stock.company.symbol", "stock.price", "trp:symbol")))
    define stream FooStream (symbol string, price float, volume string);
    define stream BarStream (symbol string, price float, volume string);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         '   {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":55.6}}'
                         "}"), properties=TRP)
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         "   ["
                         '       {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":56.6}},'
                         '       {"stock":{"volume":200,"company":{"symbol":"wso2"},"price":57.6}}'
                         "   ]\n"
                         "}\n"), properties=TRP)
    await _settle(r, got, 3, errors=0)
    assert _rows(got) == [("wso2", f32(55.6), "test"), ("wso2", f32(56.6), "test"),
                          ("wso2", f32(57.6), "test")]
    assert r.mapping_errors("FooStream") == 0


async def test_jsonSourceMapperTest25(run: Any) -> None:
    """Named @attributes with a 'trp:symbol' transport property."""
    name = "JsonSource25"
    # TestTrpInMemorySource (type 'testTrpInMemory', prop1='test', prop2='bar') hands the mapper the
    # transport properties symbol='test' and price='bar': here inMemory passes publish()'s on.
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', enclosing.element="portfolio",
        @attributes(symbol="stock.company.symbol", price="stock.price", volume="trp:symbol")))
    define stream FooStream (symbol string, price float, volume string);
    define stream BarStream (symbol string, price float, volume string);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         '   {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":55.6}}'
                         "}"), properties=TRP)
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         "   ["
                         '       {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":56.6}},'
                         '       {"stock":{"volume":200,"company":{"symbol":"wso2"},"price":57.6}}'
                         "   ]\n"
                         "}\n"), properties=TRP)
    await _settle(r, got, 3, errors=0)
    assert _rows(got) == [("wso2", f32(55.6), "test"), ("wso2", f32(56.6), "test"),
                          ("wso2", f32(57.6), "test")]
    assert r.mapping_errors("FooStream") == 0


async def test_jsonSourceMapperTest26(run: Any) -> None:
    """Default mapping of plain objects (no envelope); an object for every value drops the message."""
    name = "JsonSource26"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json'))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, ("{\n"
                         '         "symbol":"WSO2",\n'
                         '         "price":55.6,\n'
                         '         "volume":100\n'
                         "      }"))
    await publish(name, ("{\n"
                         '         "symbol":"WSO2",\n'
                         '         "price":55.678,\n'
                         '         "volume":100\n'
                         "      }"))
    await publish(name, ("{\n"
                         '         "symbol":"WSO2",\n'
                         '         "price":55,\n'
                         '         "volume":100\n'
                         "      }"))
    await publish(name, ("{\n"
                         '         "symbol":"WSO2@#$%^*",\n'
                         '         "price":55,\n'
                         '         "volume":100\n'
                         "      }"))
    await publish(name, ('{"symbol":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":55,\n'
                         '         "volume":100\n'
                         "      }}"))
    # The last payload's only key, 'symbol', holds an object: price and volume are missing.
    await _settle(r, got, 4, errors=1)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("WSO2", f32(55.678), 100), ("WSO2", 55.0, 100),
                          ("WSO2@#$%^*", 55.0, 100)]
    assert r.mapping_errors("FooStream") == 1


async def test_jsonSourceMapperTest27(run: Any) -> None:
    """fail.on.missing.attribute='false' with arrays of plain objects: a mis-shaped element is dropped."""
    name = "JsonSource27"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', fail.on.missing.attribute='false'))
    define stream FooStream (symbol string, price float, volume long);
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, (" \n"
                         "[\n"
                         '{"symbol":"WSO2","price":52.6,"volume":100},\n'
                         '{"symbol":"WSO2","price":53.6,"volume":99},\n'
                         '{"symbol":"WSO2","price":54.6,"volume":80}\n'
                         "]\n"))
    await publish(name, (" \n"
                         "[\n"
                         '{"symbol":"WSO2","price":55.6,"volume":100},\n'
                         '{"testEvent":{"symbol":"WSO2","price":56.6,"volume":99}},\n'
                         '{"symbol":"WSO2","price":57.6,"volume":80}\n'
                         "]\n"))
    await publish(name, ("\n"
                         "[\n"
                         '{"symbol":"WSO2","price":58.6,"volume":100},\n'
                         '{"symbol":"WSO2","price":59.6,"volume":99},\n'
                         '{"symbol":"WSO2","price":60.6,"volume":80}\n'
                         "]\n"))
    await _settle(r, got, 8, errors=1)
    assert _rows(got) == [("WSO2", f32(52.6), 100), ("WSO2", f32(53.6), 99), ("WSO2", f32(54.6), 80),
                          ("WSO2", f32(55.6), 100), ("WSO2", f32(57.6), 80),
                          ("WSO2", f32(58.6), 100), ("WSO2", f32(59.6), 99), ("WSO2", f32(60.6), 80)]
    assert r.mapping_errors("FooStream") == 1


async def test_jsonSourceMapperTest28(run: Any) -> None:
    """An object attribute takes JSON arrays and objects as their values (lists and dicts)."""
    name = "JsonSource28"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json'))
    define stream FooStream (symbol string, price object, volume long);
    define stream BarStream (symbol string, price object, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":[25,25],\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":{"lkr":55.678},\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":{"prices":25, "priceArray":[25,25]},\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2@#$%^*",\n'
                         '         "price":{"price":25, "priceArray":[25,25,25], "priceObject":{"price":25,'
                         '"amount":5,"items":[1,2,3]}},\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2@#$%^*",\n'
                         '         "price":{"price":25, "priceArray":[25,25,25], "priceObject":{"price":25,'
                         '"amount":5,"items":[{"id":1},{"id":2},{"id":3}]}},\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2@#$%^*",\n'
                         '         "price":{"price":25, "priceArray":[{"lkr":25},{"lkr":25},{"lkr":25}], '
                         '"priceObject":{"price":25,'
                         '"amount":5,"items":[{"id":1},{"id":2},{"id":3}]}},\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    symbols = ["WSO2"] * 3 + ["WSO2@#$%^*"] * 3
    prices = [orjson.loads(t) for t in (
        '[25,25]', '{"lkr":55.678}', '{"prices":25, "priceArray":[25,25]}',
        '{"price":25, "priceArray":[25,25,25], "priceObject":{"price":25,"amount":5,"items":[1,2,3]}}',
        '{"price":25, "priceArray":[25,25,25], '
        '"priceObject":{"price":25,"amount":5,"items":[{"id":1},{"id":2},{"id":3}]}}',
        '{"price":25, "priceArray":[{"lkr":25},{"lkr":25},{"lkr":25}], '
        '"priceObject":{"price":25,"amount":5,"items":[{"id":1},{"id":2},{"id":3}]}}')]
    await _settle(r, got, 6, errors=0)
    assert _rows(got) == [(s, p, 100) for s, p in zip(symbols, prices, strict=True)]
    assert r.mapping_errors("FooStream") == 0


async def test_jsonSourceMapperTest29(run: Any) -> None:
    """A string attribute takes a JSON array or object as its compact text; an object takes a string."""
    name = "JsonSource29"
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json'))
    define stream FooStream (symbol object, price string, volume long);
    define stream BarStream (symbol object, price string, volume long);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":[25,25],\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":{"lkr":55.678},\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2",\n'
                         '         "price":{"prices":25, "priceArray":[25,25]},\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2@#$%^*",\n'
                         '         "price":{"price":25, "priceArray":[25,25,25], "priceObject":{"price":25,'
                         '"amount":5,"items":[1,2,3]}},\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2@#$%^*",\n'
                         '         "price":{"price":25, "priceArray":[25,25,25], "priceObject":{"price":25,'
                         '"amount":5,"items":[{"id":1},{"id":2},{"id":3}]}},\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    await publish(name, (" {\n"
                         '      "event":{\n'
                         '         "symbol":"WSO2@#$%^*",\n'
                         '         "price":{"price":25,"priceArray":[{"lkr":25},{"lkr":25},{"lkr":25}], '
                         '"priceObject":{"price":25,'
                         '"amount":5,"items":[{"id":1},{"id":2},{"id":3}]}},\n'
                         '         "volume":100\n'
                         "      }\n"
                         " }"))
    symbols = ["WSO2"] * 3 + ["WSO2@#$%^*"] * 3
    prices = ['[25,25]', '{"lkr":55.678}', '{"prices":25,"priceArray":[25,25]}',
              '{"price":25,"priceArray":[25,25,25],"priceObject":{"price":25,"amount":5,"items":[1,2,3]}}',
              '{"price":25,"priceArray":[25,25,25],"priceObject":'
              '{"price":25,"amount":5,"items":[{"id":1},{"id":2},{"id":3}]}}',
              '{"price":25,"priceArray":[{"lkr":25},{"lkr":25},{"lkr":25}],"priceObject":'
              '{"price":25,"amount":5,"items":[{"id":1},{"id":2},{"id":3}]}}']
    await _settle(r, got, 6, errors=0)
    assert _rows(got) == [(s, p, 100) for s, p in zip(symbols, prices, strict=True)]
    assert r.mapping_errors("FooStream") == 0


async def test_jsonSourceMapperTest30(run: Any) -> None:
    """event.grouping.enabled='false': every event of an array reaches the app as a chunk of its own."""
    name = "JsonSource30"
    # TestTrpInMemorySource (type 'testTrpInMemory', prop1='test', prop2='bar') hands the mapper the
    # transport properties symbol='test' and price='bar': here inMemory passes publish()'s on.
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', enclosing.element="portfolio",
        event.grouping.enabled='false',
        @attributes(symbol="stock.company.symbol", price="stock.price", volume="trp:symbol")))
    define stream FooStream (symbol string, price float, volume string);
    define stream BarStream (symbol string, price float, volume string);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         '   {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":55.6}}'
                         "}"), properties=TRP)
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         "   ["
                         '       {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":56.6}},'
                         '       {"stock":{"volume":200,"company":{"symbol":"wso2"},"price":57.6}}'
                         "   ]\n"
                         "}\n"), properties=TRP)
    await _settle(r, got, 3)
    expected = [("wso2", f32(55.6), "test"), ("wso2", f32(56.6), "test"), ("wso2", f32(57.6), "test")]
    assert got == [[row] for row in expected]  # one event a callback, as Java asserts
    assert r.mapping_errors("FooStream") == 0


async def test_jsonSourceMapperTest31(run: Any) -> None:
    """event.grouping.enabled='true': the events of an array reach the app as one chunk."""
    name = "JsonSource31"
    # TestTrpInMemorySource (type 'testTrpInMemory', prop1='test', prop2='bar') hands the mapper the
    # transport properties symbol='test' and price='bar': here inMemory passes publish()'s on.
    r = await run(f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', enclosing.element="portfolio",
        event.grouping.enabled='true',
        @attributes(symbol="stock.company.symbol", price="stock.price", volume="trp:symbol")))
    define stream FooStream (symbol string, price float, volume string);
    define stream BarStream (symbol string, price float, volume string);
    from FooStream select * insert into BarStream;
    """)
    got = r.watch("BarStream")
    await publish(name, ("\n"
                         '{"portfolio":\n'
                         "   ["
                         '       {"stock":{"volume":100,"company":{"symbol":"wso2"},"price":56.6}},'
                         '       {"stock":{"volume":200,"company":{"symbol":"wso2"},"price":57.6}}'
                         "   ]\n"
                         "}\n"), properties=TRP)
    await _settle(r, got, 2)
    assert got == [[("wso2", f32(56.6), "test"), ("wso2", f32(57.6), "test")]]
    assert r.mapping_errors("FooStream") == 0
