"""What the ports of siddhi-io-kafka's tests share: topics, the test publisher, app texts.

Siddhi's tests start an embedded Kafka (with ZooKeeper) on port 9092, create topics with
``KafkaTestUtil.createTopic`` and publish with ``KafkaTestUtil.kafkaPublisher``: for every topic
``n`` XML events ``<symbol>{topic}</symbol><price>12.5</price><volume>{i}</volume>``, into partition
``i % partitions`` when the topic has more than one partition (or when asked to), one second apart.
Here the broker is the session's tansu (``kafka_broker``), every test makes topics of its own
(:func:`topics`), :func:`kafka_publisher` sends the same events (XML, or the text mapper's
default format as Java's ``isXML=false`` does) without the pauses, the apps map with ``xml``
(``text`` in ``KafkaSourceHATestCase``) as the Java tests' do, and every source app gets the broker's
``fast_group`` consumer settings so that a group join takes a second, not fifteen.
``Thread.sleep`` waits become polls with timeouts.
"""
from __future__ import annotations

import asyncio
import uuid
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from tests.connectors.upstream.mqtt.support import rows, sink_errors, sink_of, source_of
from tests.mappers.harness import Running, f32, until

__all__ = ["Running", "f32", "kafka_publisher", "names_values", "ready", "rows", "sink_errors", "sink_of",
           "source_app", "source_of", "topics", "until", "wait_rows"]

#: Epoch milliseconds for the event times the tests set.
START = 1_700_000_000_000


async def topics(broker: Any, *names: str, partitions: int = 1, create: bool = True) -> list[str]:
    """``names`` made unique to this test (the session's broker is shared) and, with ``create``,
    created with ``partitions`` partitions (``KafkaTestUtil.createTopic``)."""
    suffix = uuid.uuid4().hex[:8]
    out = [f"{n}-{suffix}" for n in names]
    if create:
        for t in out:
            await broker.create_topic(t, partitions)
    return out


def event_message(symbol: str, volume: int, xml: bool = True) -> bytes:
    """One event of ``kafkaPublisher``: XML (``isXML``) or the text mapper's default format."""
    if xml:
        return (f"<events><event><symbol>{symbol}</symbol><price>12.5</price>"
                f"<volume>{volume}</volume></event></events>").encode()
    return f'symbol:"{symbol}",\nprice:12.5,\nvolume:{volume}'.encode()


async def kafka_publisher(broker: Any, names: list[str], partitions: int, per_topic: int,
                          with_partition: bool = False, key: bytes | None = None, xml: bool = True) -> None:
    """``KafkaTestUtil.kafkaPublisher``: ``per_topic`` events into each topic, event ``i`` into
    partition ``i % partitions`` when there is more than one partition or ``with_partition``;
    XML events, or with ``xml=False`` the text mapper's default format."""
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers, acks="all")
    await producer.start()
    try:
        for topic in names:
            for i in range(per_topic):
                partition = i % partitions if partitions > 1 or with_partition else None
                await producer.send_and_wait(topic, event_message(topic, i, xml), partition=partition, key=key)
    finally:
        await producer.stop()


async def read_all(broker: Any, topic: str, n: int, timeout: float = 10.0) -> list[Any]:
    """The first ``n`` records of every partition of ``topic`` (a plain consumer, no group)."""
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=broker.bootstrap_servers, auto_offset_reset="earliest",
                                enable_auto_commit=False)
    await consumer.start()
    got: list[Any] = []
    try:
        async with asyncio.timeout(timeout):
            while len(got) < n:
                for records in (await consumer.getmany(timeout_ms=200)).values():
                    got.extend(records)
    finally:
        await consumer.stop()
    return got


def source_app(broker: Any, options: str, name: str = "TestExecutionPlan", fmt: str = "@map(type='xml')") -> str:
    """The apps of ``KafkaSourceTestCase``: a kafka source on ``FooStream`` into ``BarStream``.
    ``options`` are the Java test's (without ``bootstrap.servers``, which is the broker's)."""
    return (f"@App:name('{name}') "
            "define stream BarStream (symbol string, price float, volume long); "
            "@info(name = 'query1') "
            f"@source(type='kafka', {options}, bootstrap.servers='{broker.bootstrap_servers}', "
            f"optional.configuration='{broker.fast_group}', {fmt}) "
            "Define stream FooStream (symbol string, price float, volume long);"
            "from FooStream select symbol, price, volume insert into BarStream;")


async def ready(r: Running, stream: str = "FooStream", timeout: float = 15.0) -> None:
    """Wait until the kafka source of ``stream`` has its partitions (assigned or joined)."""
    await source_of(r, stream).wait_ready(timeout)


def names_values(got: list[list[tuple[Any, ...]]]) -> tuple[list[str], list[int]]:
    """``receivedEventNameList`` and ``receivedValueList`` of the Java tests (symbol, volume)."""
    rs = rows(got)
    return [r[0] for r in rs], [r[2] for r in rs]


async def wait_rows(got: list[list[tuple[Any, ...]]], n: int, timeout: float = 15.0, settle: float = 0.3) -> None:
    """``SiddhiTestHelper.waitForEvents``: wait for ``n`` rows, then a moment more for any others."""
    await until(lambda: len(rows(got)) >= n, timeout)
    await asyncio.sleep(settle)
