"""siddhi-map-binary ``BinarySinkMapperTestCase`` (component/src/test/java/.../binary), ported.

Each Java ``@Test`` is one test here, named after it.  Events sent into ``inputStream`` are
copied into the stream with ``@sink(type='inMemory', @map(type='binary'))``; Java's subscriber
decodes each message with the source side's ``SiddhiEventConverter``, here the messages are
compared with :func:`~tests.mappers.harness.java_binary`'s bytes (written from the Java
converter), timestamps included.  Where Java logs a chunk it cannot convert and drops it, the
sink's error route (``on.error='LOG'``, the default) stands for it.
"""
from __future__ import annotations

from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from tests.mappers.harness import START, Topic, java_binary

TYPES = "a string, b int, c float, d long, e double, f bool"
JAVA_TYPES = "string int float long double bool"
ROWS = [("test", 36, 3.0, 380, 23.0, True), ("test1", 361, 31.0, 3801, 231.0, False),
        ("test2", 362, 32.0, 3802, 232.0, True)]


def _app(name: str, mapping: str = "") -> str:
    return f"""
    @App:name('{name}')
    define stream inputStream ({TYPES});
    @sink(type='inMemory', topic='{name}', @map(type='binary'{mapping}))
    define stream outputStream ({TYPES});
    @info(name = 'query1') from inputStream select * insert into outputStream;
    """


async def test_binarySinkMapperTest1(run: Any) -> None:
    """A chunk of three events is one message of three, each with its timestamp."""
    name = "BinarySink1"
    topic = Topic(name)
    r = await run(_app(name))
    r.send("inputStream", *ROWS)
    await topic.take(1)
    assert topic.messages == [java_binary([(START, row) for row in ROWS], JAVA_TYPES)]


async def test_binarySinkMapperTest2(run: Any) -> None:
    """A chunk with a double for the int ``b`` is not written; the next chunk is (2 events)."""
    name = "BinarySink2"
    topic = Topic(name)
    r = await run(_app(name))
    r.send("inputStream", ("test", 36.0, 3.0, 380, 23.0, True), ROWS[1])
    r.send("inputStream", ROWS[0], ROWS[2])
    await topic.take(1)
    assert topic.messages == [java_binary([(START, ROWS[0]), (START, ROWS[2])], JAVA_TYPES)]


async def test_binarySinkMapperTest3(run: Any) -> None:
    """@payload refuses the app."""
    with pytest.raises(SiddhiAppCreationError, match="does not support @payload"):
        await run(_app("BinarySink3", ", @payload('a')"))


async def test_binarySinkMapperTest4(run: Any) -> None:
    """Events sent one by one are a message each (Java's mapAndSend(Event) writes an array of one)."""
    name = "BinarySink4"
    topic = Topic(name)
    r = await run(_app(name))
    for row in ROWS:
        r.send("inputStream", row)
    await topic.take(3)
    assert topic.messages == [java_binary([(START, row)], JAVA_TYPES) for row in ROWS]
