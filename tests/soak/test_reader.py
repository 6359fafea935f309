"""The soak's topic reader: what a reader at the tail went past is found by reading again.

Found by the chaos soak (seed 70 failed on one join output that its reader never saw): tansu
0.6.0, the soak's broker, raises a partition's high-water mark before it stores the produced
batch, so while several producers write one partition a fetch at the tail can return a later
producer's batch, stored first, and the reader moves past the earlier one for good.  Four
producers writing 3,000 records each to one partition made a tailing aiokafka reader miss 5 of
12,000 here; a fresh reader afterwards saw all of them.  The checks read every topic again
from the beginning (:meth:`Topic.reread`); these tests make the tail go past records on purpose.
"""
from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from tests.soak.soak import Topic

pytestmark = pytest.mark.integration


async def _produce(bootstrap: str, topic: str, n: int, partition: int = 0) -> None:
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        for i in range(n):
            await producer.send_and_wait(topic, orjson.dumps({"event": {"uid": f"u{i}", "n": i}}),
                                         partition=partition)
    finally:
        await producer.stop()


async def _read_to_end(reader: Topic) -> None:
    for _ in range(100):
        if await reader.poll():
            return
    raise AssertionError("the reader did not reach the end")


def test_reread_finds_what_the_tail_went_past(kafka_broker: Any) -> None:
    async def run() -> None:
        from aiokafka import TopicPartition

        name = await kafka_broker.create_topic(partitions=2)
        await _produce(kafka_broker.bootstrap_servers, name, 10, partition=0)
        await _produce(kafka_broker.bootstrap_servers, name, 4, partition=1)
        seen: list[str] = []
        reader = Topic(kafka_broker.bootstrap_servers, name)
        await reader.start(2)
        reader.on_event = lambda e: seen.append(e["uid"])
        try:
            await _read_to_end(reader)
            assert [e["n"] for e in reader.records[0]] == list(range(10))
            # As the broker's race does: records 10-12 of partition 0 are gone past unseen.
            await _produce(kafka_broker.bootstrap_servers, name, 16, partition=0)
            reader._consumer.seek(TopicPartition(name, 0), 13)
            await _read_to_end(reader)
            assert len(reader.records[0]) == 23
            assert await reader.reread() == 3
            assert [o for o in reader.offsets[0]] == list(range(26))
            assert [e["uid"] for e in reader.records[0]] == [f"u{i}" for i in range(10)] + \
                [f"u{i}" for i in range(16)]
            assert len(reader.records[1]) == len(reader.seen_at[1]) == 4
            assert reader.missed_at_tail == 3 and sorted(seen[-3:]) == ["u0", "u1", "u2"]
            # Seen, for the repeats' timeline, when the next record the tail saw was.
            assert reader.seen_at[0][10] == reader.seen_at[0][12] == reader.seen_at[0][13]
            # Nothing is found twice, and the tail goes on after the end it was read to.
            assert await reader.reread() == 0
            await _produce(kafka_broker.bootstrap_servers, name, 2, partition=1)
            await _read_to_end(reader)
            assert reader.offsets[1] == list(range(6))
        finally:
            await reader.stop()

    asyncio.run(run())


def test_reread_counts_records_past_the_tail_as_read_not_missed(kafka_broker: Any) -> None:
    async def run() -> None:
        name = await kafka_broker.create_topic(partitions=1)
        reader = Topic(kafka_broker.bootstrap_servers, name)
        await reader.start(1)
        try:
            await _produce(kafka_broker.bootstrap_servers, name, 5)
            # The tail has read nothing yet: the re-read reads it all, none of it missed.
            assert await reader.reread() == 0
            assert [e["n"] for e in reader.records[0]] == list(range(5))
            await _produce(kafka_broker.bootstrap_servers, name, 1)
            await _read_to_end(reader)
            assert reader.offsets[0] == list(range(6))
        finally:
            await reader.stop()

    asyncio.run(run())
