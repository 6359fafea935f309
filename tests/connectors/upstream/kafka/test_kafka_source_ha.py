"""Port of siddhi-io-kafka's ``KafkaSourceHATestCase`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/io/kafka/source/KafkaSourceHATestCase.java``
(left out of upstream's ``testng.xml``, "uncomment when the text mapper is released"; ported
all the same).  The apps map with ``text`` and the events are published in its default format,
as the Java tests' are (``kafkaPublisher(..., isXML=false)``).
"""
from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.connectors.upstream.kafka.support import (
    kafka_publisher,
    ready,
    rows,
    source_app,
    source_of,
    topics,
    until,
    wait_rows,
)
from tests.connectors.upstream.kafka.test_sequenced_messaging import crash

pytestmark = pytest.mark.integration


async def test_testAKafkaPauseAndResume(run: Any, kafka_broker: Any) -> None:
    """``partition.wise`` over a two-partition topic: four events arrive; with the source
    paused four more do not; after resuming they do."""
    (t,) = await topics(kafka_broker, "kafka_topic3", partitions=2)
    r = await run(source_app(kafka_broker, f"topic.list='{t}', group.id='test1', threading.option='partition.wise', "
                             "partition.no.list='0,1'", fmt="@map(type='text')"))
    got = r.watch("BarStream")
    await ready(r)
    await kafka_publisher(kafka_broker, [t], 2, 4, xml=False)
    await wait_rows(got, 4)
    assert len(rows(got)) == 4
    source = source_of(r, "FooStream")
    source.pause()
    got.clear()
    await kafka_publisher(kafka_broker, [t], 2, 4, xml=False)
    await asyncio.sleep(1.0)
    assert rows(got) == []
    source.resume()
    await wait_rows(got, 4)
    assert len(rows(got)) == 4


async def test_testRecoveryOnFailureOfSingleNodeWithKafka(run: Any, kafka_broker: Any) -> None:
    """``count(symbol)`` over five events, persisted part-way, the app failing and restored
    while events keep coming: the last count is 5 (each event counted once)."""
    (t,) = await topics(kafka_broker, "kafka_topic4")
    app = ("@App:name('TestExecutionPlan') define stream BarStream (count long); "
           f"@source(type='kafka', topic.list='{t}', group.id='test', threading.option='topic.wise', "
           f"bootstrap.servers='{kafka_broker.bootstrap_servers}', partition.no.list='0', @map(type='text')) "
           "define stream FooStream (symbol string, price float, volume long); "
           "from FooStream select count(symbol) as count insert into BarStream;")
    r = await run(app, persistence=True)
    got = r.watch("BarStream")
    await ready(r)
    await kafka_publisher(kafka_broker, [t], 1, 2, xml=False)
    await wait_rows(got, 2, settle=0.1)
    await r.host.snapshot()
    await kafka_publisher(kafka_broker, [t], 1, 1, xml=False)
    await wait_rows(got, 3, settle=0.1)
    await crash(run, r)
    await kafka_publisher(kafka_broker, [t], 1, 1, xml=False)  # while the app is down
    again = await run(app, persistence=True)
    counts = again.watch("BarStream")
    await ready(again)
    await kafka_publisher(kafka_broker, [t], 1, 1, xml=False)
    await until(lambda: bool(rows(counts)) and rows(counts)[-1] == (5,), timeout=15)
    await asyncio.sleep(0.3)
    assert rows(counts)[-1] == (5,)


@pytest.mark.skip(reason="not ported: two chained apps on two nodes, each with its own persistence store "
                  "(the text mapper it also needs is there now); the single-node recovery above covers the "
                  "kafka part on one broker")
async def test_testRecoveryOnFailureOfMultipleNodeWithKafka() -> None:
    """Two chained apps on two managers, both failing and restored."""


@pytest.mark.skip(reason="commented out upstream (//@Test)")
async def test_testCreatingFullKafkaEventFlow() -> None:
    """A kafka sink app feeding a kafka source app."""
