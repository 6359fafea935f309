"""siddhi-map-keyvalue ``KeyValueSourceMapperTestCase`` (component/src/test/java/.../sourcemapper),
ported.

Each Java ``@Test`` is one test here, named after it.  The apps are the upstream ones (an
``inMemory`` source with the ``keyvalue`` mapper on ``FooStream``, copied into ``BarStream``),
with an app name and topic of their own; the Java ``HashMap`` payloads are dicts, ``BigDecimal``
is ``decimal.Decimal`` and ``BigInteger`` a Python ``int``.  Java's ``testTrpInMemory`` source,
which hands its ``prop1`` option over as the ``symbol`` transport property, is an inMemory
message carrying that property.  Where Siddhi logs a mapping failure and drops the event, the
mapping error counter and the host's log line ("payload could not be mapped") stand for it.

Python has one ``int`` and one ``float`` where Java has ``Integer``/``Long`` and ``Float``/
``Double``: several Java tests assert that a ``Double`` for a ``float`` attribute, or an
``Integer`` for a ``long`` one, is dropped.  Those payloads are the same Python values as the
accepted ones, so Srota maps them; the tests are kept as Java asserts them and marked xfail.
"""
from __future__ import annotations

import pickle
from decimal import Decimal
from typing import Any

import pytest
from structlog.testing import capture_logs

from tests.mappers.harness import Running, f32, publish, until

STOCK = "symbol string, price float, volume long"

_ONE_NUMBER_TYPE = pytest.mark.xfail(
    strict=True,
    reason="Python has one int and one float type: a Java Double for a float attribute or an Integer for a "
           "long one (which Siddhi drops without implicit.cast.enable) is the same Python value as a Float "
           "or a Long, and maps")


def _app(name: str, mapping: str, types: str = STOCK) -> str:
    return f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='keyvalue'{mapping}))
    define stream FooStream ({types});
    define stream BarStream ({types});
    from FooStream select * insert into BarStream;
    """


def _rows(chunks: list[list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    return [row for chunk in chunks for row in chunk]


async def _settle(r: Running, got: list[list[tuple[Any, ...]]], messages: int) -> list[str]:
    """Wait until every one of ``messages`` payloads mapped or failed; the logged failure reasons."""
    with capture_logs() as logs:
        await until(lambda: len(_rows(got)) + r.mapping_errors("FooStream") >= messages)
    return [e["reason"] for e in logs if e["event"] == "payload could not be mapped"]


async def test_keyvalueSourceMapperDefaultTest1(run: Any) -> None:
    """Default mapping: four maps keyed by attribute name are four events."""
    name = "KvSrcDefault1"
    r = await run(_app(name, ""))
    got = r.watch("BarStream")
    await publish(name, {"symbol": "WSO2", "price": 55.6, "volume": 100},
                  {"symbol": "WSO2", "price": 55.678, "volume": 100},
                  {"symbol": "WSO2", "price": 55.678, "volume": 100},
                  {"symbol": "WSO2@#$%^*", "price": 55.678, "volume": 100})
    await _settle(r, got, 4)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("WSO2", f32(55.678), 100), ("WSO2", f32(55.678), 100),
                          ("WSO2@#$%^*", f32(55.678), 100)]


async def test_keyvalueSourceMapperDefaultTest2(run: Any) -> None:
    """fail.on.missing.attribute defaults to true: maps without price or symbol are dropped; 1 event."""
    name = "KvSrcDefault2"
    r = await run(_app(name, ""))
    got = r.watch("BarStream")
    await publish(name, {"symbol": "IBM", "volume": 100}, {"price": 50.0, "volume": 100},
                  {"symbol": "WSO2", "price": 50.0, "volume": 100})
    reasons = await _settle(r, got, 3)
    assert _rows(got) == [("WSO2", 50.0, 100)]
    assert r.mapping_errors("FooStream") == 2
    assert ["'price'" in reasons[0], "'symbol'" in reasons[1]] == [True, True]


async def test_keyvalueSourceMapperDefaultTest3(run: Any) -> None:
    """fail.on.missing.attribute='false': null or absent keys are null; a text payload is dropped; 3 events."""
    name = "KvSrcDefault3"
    r = await run(_app(name, " ,fail.on.missing.attribute='false'"))
    got = r.watch("BarStream")
    await publish(name, {"symbol": None, "price": 55.6, "volume": 100},
                  {"symbol": "WSO2", "price": None, "volume": 100},
                  {"price": 50.0, "volume": 100},
                  "price: 40,volume: 100, price 55.6")
    reasons = await _settle(r, got, 4)
    assert _rows(got) == [(None, f32(55.6), 100), ("WSO2", None, 100), (None, 50.0, 100)]
    assert reasons == ["the keyvalue mapper expects a map, not str"]


@_ONE_NUMBER_TYPE
async def test_keyvalueSourceMapperDefaultTest4(run: Any) -> None:
    """Strict types: Java drops "false" for a bool, the Double 55.6 for a float, 100.0f for an int and
    the Integer 300 for a long: 1 event of 5."""
    name = "KvSrcDefault4"
    r = await run(_app(name, " ,fail.on.missing.attribute='true'",
                       "symbol string, price float, volume int, state bool, amount long"))
    got = r.watch("BarStream")
    ok = {"state": False, "symbol": "WSO2", "price": 55.6, "volume": 100, "amount": 300}
    await publish(name, ok, {**ok, "state": "false"}, {**ok, "price": 55.6}, {**ok, "volume": 100.0},
                  {**ok, "amount": 300})
    await _settle(r, got, 5)
    assert _rows(got) == [("WSO2", f32(55.6), 100, False, 300)]


@pytest.mark.xfail(strict=True, reason="bytes payloads are refused: Siddhi deserializes a Java-serialized Map, "
                                       "which has no safe Python counterpart (unpickling untrusted bytes runs code)")
async def test_defaultKeyvalueSourceMapperwithBinaryEventTest3(run: Any) -> None:
    """As ``DefaultTest3`` with every payload serialized to bytes (Java serialization; pickle here):
    Siddhi maps the three maps (3 events)."""
    name = "KvSrcBinary"
    r = await run(_app(name, " ,fail.on.missing.attribute='false'"))
    got = r.watch("BarStream")
    await publish(name, *(pickle.dumps(p) for p in (
        {"symbol": None, "price": 55.6, "volume": 100}, {"symbol": "WSO2", "price": None, "volume": 100},
        {"price": 50.0, "volume": 100}, "price: 40,volume: 100, price 55.6")))
    await _settle(r, got, 4)
    assert _rows(got) == [(None, f32(55.6), 100), ("WSO2", None, 100), (None, 50.0, 100)]


_SPV = " , fail.on.missing.attribute='{}', @attributes(symbol = 's', price = 'p', volume = 'v')"


async def test_keyvalueSourceMapperCustomTest1(run: Any) -> None:
    """Custom keys s, p, v: three events."""
    name = "KvSrcCustom1"
    r = await run(_app(name, _SPV.format("true")))
    got = r.watch("BarStream")
    await publish(name, {"s": "WSO2", "p": 55.6, "v": 100}, {"s": "WSO2", "p": 55.678, "v": 100},
                  {"s": "WSO2@#$%^*", "p": 55.678, "v": 100})
    await _settle(r, got, 3)
    assert _rows(got) == [("WSO2", f32(55.6), 100), ("WSO2", f32(55.678), 100), ("WSO2@#$%^*", f32(55.678), 100)]


async def test_keyvalueSourceMapperCustomTest2(run: Any) -> None:
    """Custom keys with fail.on.missing.attribute='false': null and absent keys are null; 3 events."""
    name = "KvSrcCustom2"
    r = await run(_app(name, _SPV.format("false")))
    got = r.watch("BarStream")
    await publish(name, {"s": None, "p": 55.6, "v": 100}, {"s": "WSO2", "p": None, "v": 100},
                  {"p": 55.678, "v": 100})
    await _settle(r, got, 3)
    assert _rows(got) == [(None, f32(55.6), 100), ("WSO2", None, 100), (None, f32(55.678), 100)]


@_ONE_NUMBER_TYPE
async def test_keyvalueSourceMapperCustomTest3(run: Any) -> None:
    """Custom keys: Java drops the Double 55.6 for the float and the Integer 100 for the long; 1 event."""
    name = "KvSrcCustom3"
    r = await run(_app(name, _SPV.format("true")))
    got = r.watch("BarStream")
    await publish(name, {"s": "WSO2", "p": 55.6, "v": 100}, {"s": "WSO2", "p": 55.678, "v": 100},
                  {"s": "WSO2@#$%^*", "p": 55.678, "v": 100})
    await _settle(r, got, 3)
    assert _rows(got) == [("WSO2@#$%^*", f32(55.678), 100)]


@_ONE_NUMBER_TYPE
async def test_keyvalueSourceMapperCustomTest4(run: Any) -> None:
    """Positional @attributes('s', 'p', 'v'): as ``CustomTest3``, 1 event in Java."""
    name = "KvSrcCustom4"
    r = await run(_app(name, " , @attributes('s', 'p', 'v')"))
    got = r.watch("BarStream")
    await publish(name, {"s": "WSO2", "p": 55.6, "v": 100}, {"s": "WSO2", "p": 55.678, "v": 100},
                  {"s": "WSO2@#$%^*", "p": 55.678, "v": 100})
    await _settle(r, got, 3)
    assert _rows(got) == [("WSO2@#$%^*", f32(55.678), 100)]


@_ONE_NUMBER_TYPE
async def test_keyvalueSourceMapperCustomTest5(run: Any) -> None:
    """``symbol = 'trp:symbol'`` takes the transport property ('foo'); Java maps 1 event of 3."""
    name = "KvSrcCustom5"
    r = await run(_app(name, " , @attributes(symbol = 'trp:symbol', price = 'p', volume = 'v')"))
    got = r.watch("BarStream")
    await publish(name, {"s": "WSO2", "p": 55.6, "v": 100}, {"s": "WSO2", "p": 55.678, "v": 100},
                  {"s": "WSO2@#$%^*", "p": 55.678, "v": 100}, properties={"symbol": "foo", "price": "bar"})
    await _settle(r, got, 3)
    assert _rows(got) == [("foo", f32(55.678), 100)]


@_ONE_NUMBER_TYPE
async def test_keyvalueSourceMapperCustomTest6(run: Any) -> None:
    """Positional ``'trp:symbol'``: as ``CustomTest5`` (1 event in Java)."""
    name = "KvSrcCustom6"
    r = await run(_app(name, " , @attributes('trp:symbol', 'p', 'v')"))
    got = r.watch("BarStream")
    await publish(name, {"s": "WSO2", "p": 55.6, "v": 100}, {"s": "WSO2", "p": 55.678, "v": 100},
                  {"s": "WSO2@#$%^*", "p": 55.678, "v": 100}, properties={"symbol": "foo", "price": "bar"})
    await _settle(r, got, 3)
    assert _rows(got) == [("foo", f32(55.678), 100)]


async def test_keyvalueSourceMapperCustomTest7(run: Any) -> None:
    """BigDecimal prices and BigInteger volumes map to float and long; symbol from trp ('foo'); 3 events."""
    name = "KvSrcCustom7"
    r = await run(_app(name, " , @attributes('trp:symbol', 'p', 'v')"))
    got = r.watch("BarStream")
    await publish(name, {"s": "WSO2", "p": Decimal("55.6"), "v": 100}, {"s": "WSO2", "p": Decimal("55.678"), "v": 100},
                  {"s": "WSO2@#$%^*", "p": Decimal("55.6789"), "v": 105}, properties={"symbol": "foo", "price": "bar"})
    await _settle(r, got, 3)
    assert _rows(got) == [("foo", f32(55.6), 100), ("foo", f32(55.678), 100), ("foo", f32(55.6789), 105)]


async def test_keyvalueSourceMapperDefaultTest8(run: Any) -> None:
    """BigInteger and BigDecimal values for a string attribute are their text ("9001" ... "9004")."""
    name = "KvSrcDefault8"
    r = await run(_app(name, ""))
    got = r.watch("BarStream")
    await publish(name, {"symbol": 9001, "price": 55.6, "volume": 100},
                  {"symbol": Decimal("9002"), "price": 55.678, "volume": 100},
                  {"symbol": 9003, "price": 55.678, "volume": 100},
                  {"symbol": Decimal("9004"), "price": 55.678, "volume": 100})
    await _settle(r, got, 4)
    assert [row[0] for row in _rows(got)] == ["9001", "9002", "9003", "9004"]


async def test_keyvalueSourceMapperDefaultTest9(run: Any) -> None:
    """implicit.cast.enable='true': every value casts; symbols "9001" ... "9004" (4 events)."""
    name = "KvSrcDefault9"
    r = await run(_app(name, ", implicit.cast.enable='true'"))
    got = r.watch("BarStream")
    await publish(name, {"symbol": 9001, "price": 55.6, "volume": 100},
                  {"symbol": Decimal("9002"), "price": 55.678, "volume": 100},
                  {"symbol": 9003, "price": 55.678, "volume": 100},
                  {"symbol": Decimal("9004"), "price": 55.678, "volume": 100})
    await _settle(r, got, 4)
    assert _rows(got) == [("9001", f32(55.6), 100), ("9002", f32(55.678), 100), ("9003", f32(55.678), 100),
                          ("9004", f32(55.678), 100)]
