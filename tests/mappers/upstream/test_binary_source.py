"""siddhi-map-binary ``BinarySourceMapperTestCase`` (component/src/test/java/.../binary), ported.

Each Java ``@Test`` is one test here, named after it.  The apps are the upstream ones (an
``inMemory`` source with the ``binary`` mapper on ``inputStream``, copied into
``outputStream``), with an app name and topic of their own.  Java builds its payloads with the
sink side's ``BinaryEventConverter``; here :func:`~tests.mappers.harness.java_binary`, written
from that Java, does (so the port does not test Srota's mapper against itself).  Where Java
changes an entry of its type array to write a wrong message, the types given here change too.
Beyond Java's assertions, the events carry the payload's timestamps.
"""
from __future__ import annotations

from typing import Any

import pytest
from srota.engine import Event
from srota.grammar.errors import SiddhiAppCreationError

from tests.mappers.harness import START, Running, java_binary, publish, until

TYPES = "a string, b int, c float, d long, e double, f bool"
JAVA_TYPES = "string int float long double bool"
EVENTS = [(START, ("test", 36, 3.0, 380, 23.0, True)), (START + 1, ("test1", 361, 31.0, 3801, 231.0, False)),
          (START + 2, ("test2", 362, 32.0, 3802, 232.0, True))]


def _app(name: str, types: str = TYPES, mapping: str = "") -> str:
    return f"""
    @App:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='binary'{mapping}))
    define stream inputStream ({types});
    define stream outputStream ({types});
    @info(name = 'query1') from inputStream select * insert into outputStream;
    """


def _timed(r: Running) -> list[tuple[int, tuple[Any, ...]]]:
    got: list[tuple[int, tuple[Any, ...]]] = []

    def callback(events: list[Event]) -> None:
        got.extend((e.timestamp, tuple(e.data)) for e in events)

    r.runtime.add_callback("outputStream", callback)
    return got


async def test_binarySourceMapperTest1(run: Any) -> None:
    """Three events of every type in one message: three events, in order, with their own times."""
    name = "BinarySource1"
    r = await run(_app(name))
    got = _timed(r)
    await publish(name, java_binary(EVENTS, JAVA_TYPES))
    await until(lambda: len(got) >= 3)
    assert got == EVENTS


async def test_binarySourceMapperTest2(run: Any) -> None:
    """The sender writes ``b`` as a float: its four bytes read as an int, which is not 36."""
    name = "BinarySource2"
    r = await run(_app(name))
    got = _timed(r)
    sent = [(ts, (data[0], float(data[1]), *data[2:])) for ts, data in EVENTS]
    await publish(name, java_binary(sent, "string float float long double bool"))
    await until(lambda: len(got) >= 3)
    assert [data[0] for _, data in got] == ["test", "test1", "test2"]
    assert got[0][1][1] != 36


async def test_binarySourceMapperTest3(run: Any) -> None:
    """The sender writes ``b`` as a double (four bytes more): the message does not read, no event."""
    name = "BinarySource3"
    r = await run(_app(name))
    got = _timed(r)
    sent = [(ts, (data[0], float(data[1]), *data[2:])) for ts, data in EVENTS]
    await publish(name, java_binary(sent, "string double float long double bool"))
    await until(lambda: r.mapping_errors("inputStream") >= 1)
    assert got == []


async def test_binarySourceMapperTest4(run: Any) -> None:
    """@attributes (custom mapping) refuses the app."""
    with pytest.raises(SiddhiAppCreationError, match="does not support custom mapping"):
        await run(_app("BinarySource4", mapping=", @attributes(a = 'a',b = 'b',c = 'c',d = 'd',e = 'e',f = 'f')"))


async def test_binarySourceMapperTest5(run: Any) -> None:
    """A ``byte[]`` payload (Java's other input class) maps as a ``ByteBuffer`` does."""
    name = "BinarySource5"
    r = await run(_app(name))
    got = _timed(r)
    await publish(name, bytearray(java_binary(EVENTS, JAVA_TYPES)))
    await until(lambda: len(got) >= 3)
    assert [data[0] for _, data in got] == ["test", "test1", "test2"]


async def test_binarySourceMapperTest6(run: Any) -> None:
    """Non-English text: ``Éclair`` and ``Éclair1``."""
    name = "BinarySource6"
    r = await run(_app(name, "a string"))
    got = _timed(r)
    await publish(name, java_binary([(START, ("Éclair",)), (START, ("Éclair1",))], "string"))
    await until(lambda: len(got) >= 2)
    assert [data for _, data in got] == [("Éclair",), ("Éclair1",)]
