"""Where a Kafka source resumes after its consumer failed: after what it delivered, not at an
older committed offset (the app's state already counts what it delivered).

tansu keeps a member in its group through the outages of test_broker_outage.py, so the
reconnection path is forced here: the consumer's fetch fails once with a connection error,
the source builds a new consumer, rejoins, and positions its partitions.
"""
from __future__ import annotations

import uuid
from typing import Any

import pytest
from aiokafka.errors import KafkaConnectionError
from srota.connectors import KafkaSource, Message

from srota import connectors
from tests.integration.support import committed, produce, wait_until

pytestmark = pytest.mark.integration


class Host:
    """Takes chunks and commits only when told to."""

    def __init__(self) -> None:
        self.chunks: list[list[Message]] = []

    async def __call__(self, messages: list[Message]) -> None:
        self.chunks.append(messages)

    @property
    def payloads(self) -> list[bytes]:
        return [m.payload for c in self.chunks for m in c]


def _source(kafka_broker: Any, topic: str, group: str) -> KafkaSource:
    src = connectors.create_source("kafka", {
        "bootstrap.servers": kafka_broker.bootstrap_servers, "topic.list": topic, "group.id": group,
        "optional.configuration": kafka_broker.fast_group, "poll.timeout": "100", "batch.size": "5"}, name="In")
    assert isinstance(src, KafkaSource)
    return src


def _fail_next_fetch(source: KafkaSource) -> None:
    consumer = source._consumer
    assert consumer is not None
    real = consumer.getmany

    async def failing(*args: Any, **kwargs: Any) -> Any:
        consumer.getmany = real  # type: ignore[method-assign]
        raise KafkaConnectionError("connection to the broker lost (test)")

    consumer.getmany = failing  # type: ignore[method-assign]


async def test_reconnect_resumes_after_what_was_delivered_not_the_committed_offset(kafka_broker: Any) -> None:
    topic, group = await kafka_broker.create_topic(), f"g-{uuid.uuid4().hex[:8]}"
    host = Host()
    source = _source(kafka_broker, topic, group)
    await produce(kafka_broker.bootstrap_servers, topic, [f"{i}".encode() for i in range(10)])
    await source.start(host)
    try:
        await wait_until(lambda: len(host.payloads) >= 10, 20, what="10 records")
        await source.commit([host.chunks[0][-1].ack])  # only the first chunk: its outputs "flushed"
        first = host.chunks[0][-1].properties["offset"] + 1
        assert (await committed(kafka_broker.bootstrap_servers, group, topic, 1)) == {0: first}
        connections = len([c for c in host.chunks])
        _fail_next_fetch(source)
        await wait_until(lambda: source._consumer is None or not source.ready, 10, what="the reconnection")
        await source.wait_ready(20)
        await produce(kafka_broker.bootstrap_servers, topic, [f"{i}".encode() for i in range(10, 15)])
        await wait_until(lambda: len(host.payloads) >= 15, 20, what="the new records")
        assert len(host.chunks) > connections
    finally:
        await source.stop()
    assert host.payloads == [f"{i}".encode() for i in range(15)], "records delivered twice after the reconnect"


async def test_snapshot_offsets_override_the_committed_offsets(kafka_broker: Any) -> None:
    """seek_on_start goes back before the committed offset (the restored state needs those)."""
    topic, group = await kafka_broker.create_topic(partitions=2), f"g-{uuid.uuid4().hex[:8]}"
    await produce(kafka_broker.bootstrap_servers, topic, [f"a{i}".encode() for i in range(6)], partition=0)
    await produce(kafka_broker.bootstrap_servers, topic, [f"b{i}".encode() for i in range(6)], partition=1)
    host = Host()
    source = _source(kafka_broker, topic, group)
    await source.start(host)
    try:
        await wait_until(lambda: len(host.payloads) >= 12, 20, what="every record")
        await source.commit([c[-1].ack for c in host.chunks])
    finally:
        await source.stop()
    assert (await committed(kafka_broker.bootstrap_servers, group, topic, 2)) == {0: 6, 1: 6}

    again = Host()
    source = _source(kafka_broker, topic, group)
    source.seek_on_start({(topic, 0): 4})  # partition 1: no snapshot offset, the group's wins
    await source.start(again)
    try:
        await wait_until(lambda: len(again.payloads) >= 2, 20, what="the replayed records")
        await produce(kafka_broker.bootstrap_servers, topic, [b"b6"], partition=1)
        await wait_until(lambda: len(again.payloads) >= 3, 20, what="a new record")
    finally:
        await source.stop()
    assert sorted(again.payloads) == [b"a4", b"a5", b"b6"]
