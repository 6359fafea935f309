"""The kafka source and sink against a real (tansu) broker."""
from __future__ import annotations

import asyncio
import uuid
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaProducer
from srota.connectors import ConnectionUnavailableError, KafkaAck, KafkaSink, KafkaSource, Message
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Attribute, AttrType
from structlog.testing import capture_logs

from srota import connectors, mappers

pytestmark = pytest.mark.integration


class Collector:
    def __init__(self, fail_first: int = 0) -> None:
        self.chunks: list[list[Message]] = []
        self.fail_first = fail_first
        self.calls = 0

    async def __call__(self, messages: list[Message]) -> None:
        self.calls += 1
        if self.calls <= self.fail_first:
            raise RuntimeError("host not ready")
        self.chunks.append(messages)

    @property
    def messages(self) -> list[Message]:
        return [m for c in self.chunks for m in c]

    @property
    def payloads(self) -> list[Any]:
        return [m.payload for m in self.messages]

    async def wait_for(self, n: int, timeout: float = 20.0) -> None:
        async with asyncio.timeout(timeout):
            while len(self.messages) < n:
                await asyncio.sleep(0.02)


def group() -> str:
    return f"g-{uuid.uuid4().hex[:8]}"


async def produce(bootstrap: str, topic: str, payloads: list[bytes], partition: int | None = None,
                  headers: list[tuple[str, bytes]] | None = None) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        for p in payloads:
            await producer.send_and_wait(topic, p, partition=partition, headers=headers)
    finally:
        await producer.stop()


def source(kafka_broker: Any, topic: str, group_id: str, **extra: Any) -> KafkaSource:
    options = {"bootstrap.servers": kafka_broker.bootstrap_servers, "topic.list": topic, "group.id": group_id,
               "threading.option": "single.thread", "optional.configuration": kafka_broker.fast_group,
               "poll.timeout": "100", **extra}
    src = connectors.create_source("kafka", options, name="In")
    assert isinstance(src, KafkaSource)
    return src


async def test_sink_to_source_with_keys_across_partitions(kafka_broker: Any) -> None:
    """Produce through KafkaSink with a templated key; consume with a consumer group."""
    topic = await kafka_broker.create_topic(partitions=3)
    attrs = (Attribute("id", AttrType.STRING), Attribute("n", AttrType.INT))
    templates = mappers.option_templates({"key": "{{id}}"}, attrs)
    rows = [(f"dev-{i % 5}", i) for i in range(30)]
    sink = connectors.create_sink("kafka", {"bootstrap.servers": kafka_broker.bootstrap_servers,
                                            "topic": topic, "key": "{{id}}"}, name="Out")
    await sink.connect()
    # One record per event (the json sink's Siddhi default would write one array per key).
    per_event = mappers.JsonSinkMapper(attrs, event_grouping_enabled=False)
    await sink.publish(mappers.map_for_sink(per_event, rows, templates))
    await sink.flush()
    await sink.close()

    src = source(kafka_broker, topic, group())
    got = Collector()
    await src.start(got)
    await got.wait_for(30)
    mapper = mappers.JsonSourceMapper(attrs)
    received = [(m.properties["key"], r) for m in got.messages for r in mapper.map(m.payload)]
    assert sorted(r for _, r in received) == sorted(rows)
    assert all(key == r[0].encode() for key, r in received)
    by_partition: dict[int, list[Message]] = {}
    for m in got.messages:
        assert m.properties["topic"] == topic
        by_partition.setdefault(m.properties["partition"], []).append(m)
    # Same key -> same partition, and each partition arrives in offset order.
    for msgs in by_partition.values():
        offsets = [m.properties["offset"] for m in msgs]
        assert offsets == sorted(offsets)
    keys_per_partition = [{m.properties["key"] for m in msgs} for msgs in by_partition.values()]
    for a in keys_per_partition:
        for b in keys_per_partition:
            assert a is b or not (a & b)
    assert src.assignment() == {(topic, p) for p in range(3)}
    assert src.lag() == {f"{topic}[{p}]": 0 for p in by_partition}
    await src.stop()


async def test_commit_after_ack_and_resume_after_restart(kafka_broker: Any) -> None:
    """Only acknowledged chunks are committed; a restarted consumer resumes after them."""
    topic = await kafka_broker.create_topic()
    g = group()
    await produce(kafka_broker.bootstrap_servers, topic, [f"m{i}".encode() for i in range(10)])
    # Explicit assignment (partition.no.list) still commits to group.id, without group joins.
    opts = {"partition.no.list": "0", "batch.size": "4"}

    first = source(kafka_broker, topic, g, **opts)
    got = Collector()
    await first.start(got)
    await got.wait_for(10)
    assert got.payloads == [f"m{i}".encode() for i in range(10)]
    assert [len(c) for c in got.chunks][:2] == [4, 4]
    token = got.chunks[0][0].ack
    assert isinstance(token, KafkaAck) and all(m.ack is token for m in got.chunks[0])
    await first.commit([token])  # the host processed and flushed only the first chunk
    await first.stop()

    second = source(kafka_broker, topic, g, **opts)
    got2 = Collector()
    await second.start(got2)
    await got2.wait_for(6)
    assert got2.payloads == [f"m{i}".encode() for i in range(4, 10)]
    await second.commit([m.ack for m in got2.messages if m.ack is not None])
    # Committing an older token again never moves the offset back.
    await second.commit([token])
    await second.stop()

    await produce(kafka_broker.bootstrap_servers, topic, [b"m10", b"m11"])
    third = source(kafka_broker, topic, g, **opts)
    got3 = Collector()
    await third.start(got3)
    await got3.wait_for(2)
    await asyncio.sleep(0.3)
    assert got3.payloads == [b"m10", b"m11"]
    await third.stop()


async def test_group_member_resumes_from_committed_offsets(kafka_broker: Any) -> None:
    """The same with a subscribed consumer group (a rejoin takes a few seconds on tansu)."""
    topic = await kafka_broker.create_topic(partitions=2)
    g = group()
    await produce(kafka_broker.bootstrap_servers, topic, [b"a0", b"a1", b"a2"], partition=0)
    await produce(kafka_broker.bootstrap_servers, topic, [b"b0", b"b1"], partition=1)
    # Only partition 0 is committed (partition.wise chunks, one token per partition, need
    # partition.no.list, as in siddhi-io-kafka, which would not be a group subscription).
    src = source(kafka_broker, topic, g)
    got = Collector()
    await src.start(got)
    await got.wait_for(5)
    await src.commit_offsets({(topic, 0): 3})
    await src.stop()

    again = source(kafka_broker, topic, g)
    got2 = Collector()
    await again.start(got2)
    await got2.wait_for(2)
    await asyncio.sleep(0.3)
    assert sorted(got2.payloads) == [b"b0", b"b1"]
    await again.stop()


async def test_host_failure_rewinds_and_redelivers(kafka_broker: Any) -> None:
    topic = await kafka_broker.create_topic()
    await produce(kafka_broker.bootstrap_servers, topic, [b"x", b"y"])
    src = source(kafka_broker, topic, group(), **{"partition.no.list": "0"})
    got = Collector(fail_first=2)
    await src.start(got)
    await got.wait_for(2, timeout=10)
    assert got.payloads == [b"x", b"y"]
    assert got.calls == 3
    await src.stop()


async def test_pause_and_resume(kafka_broker: Any) -> None:
    topic = await kafka_broker.create_topic()
    src = source(kafka_broker, topic, group(), **{"partition.no.list": "0"})
    got = Collector()
    await src.start(got)
    await src.wait_ready(10)
    src.pause()
    await produce(kafka_broker.bootstrap_servers, topic, [b"p1", b"p2"])
    await asyncio.sleep(0.6)
    assert got.payloads == []
    src.resume()
    await got.wait_for(2)
    assert got.payloads == [b"p1", b"p2"]
    await src.stop()


async def test_pause_inside_a_fetch_puts_the_rest_back(kafka_broker: Any) -> None:
    """Pausing from the callback: the fetched records not yet delivered come again on resume, once."""
    topic = await kafka_broker.create_topic(partitions=2)
    await produce(kafka_broker.bootstrap_servers, topic, [b"a0", b"a1"], partition=0)
    await produce(kafka_broker.bootstrap_servers, topic, [b"b0", b"b1"], partition=1)
    src = source(kafka_broker, topic, group(), **{"partition.no.list": "0,1", "threading.option": "partition.wise"})
    got = Collector()

    async def pausing(messages: list[Message]) -> None:
        await got(messages)
        src.pause()

    await src.start(pausing)
    await got.wait_for(2)
    await asyncio.sleep(0.5)
    assert len(got.chunks) == 1 and src.paused
    src.resume()
    await got.wait_for(4)
    await asyncio.sleep(0.3)
    assert sorted(got.payloads) == [b"a0", b"a1", b"b0", b"b1"]
    await src.stop()


async def test_partition_wise_chunks_offsets_map_and_transport_props(kafka_broker: Any) -> None:
    topic = await kafka_broker.create_topic(partitions=2)
    await produce(kafka_broker.bootstrap_servers, topic, [b"0", b"1", b"2", b"3"], partition=0)
    await produce(kafka_broker.bootstrap_servers, topic, [b"a", b"b", b"c", b"d"], partition=1)
    src = source(kafka_broker, topic, group(), **{"partition.no.list": "0,1", "threading.option": "partition.wise",
                                                  "topic.offsets.map": f"{topic}=1"})
    got = Collector()
    await src.start(got)
    await got.wait_for(4)
    await asyncio.sleep(0.3)
    assert sorted(got.payloads) == [b"2", b"3", b"c", b"d"]  # offsets <= 1 are skipped
    assert all(len({m.properties["partition"] for m in c}) == 1 for c in got.chunks)
    # trp: properties flow into a mapping.
    attrs = (Attribute("v", AttrType.STRING), Attribute("topic", AttrType.STRING),
             Attribute("partition", AttrType.INT), Attribute("offset", AttrType.LONG))
    m = mappers.PassThroughSourceMapper((attrs[0],))
    trp = mappers.CsvSourceMapper(attrs, attribute_map={"v": "0", "topic": "trp:topic", "partition": "trp:partition",
                                                        "offset": "trp:offset"})
    first = next(msg for msg in got.messages if msg.payload == b"c")
    assert trp.map(first.payload, first.properties) == [("c", topic, 1, 2)]
    assert m.map(first.payload) == [("c",)]
    await src.stop()


async def test_sequence_ids_drop_duplicates(kafka_broker: Any) -> None:
    topic = await kafka_broker.create_topic()
    sink = KafkaSink({"bootstrap.servers": kafka_broker.bootstrap_servers, "topic": topic,
                      "sequence.id": "sink-1", "is.synchronous": "true", "partition.no": "0"})
    await sink.connect()
    await sink.publish([(b"one", {}), (b"two", {})])
    await sink.close()
    # A replayed duplicate (same sequence number) and a record without sequence headers.
    src_raw = source(kafka_broker, topic, group(), **{"partition.no.list": "0"})
    raw = Collector()
    await src_raw.start(raw)
    await raw.wait_for(2)
    await src_raw.stop()
    dup_headers = list(raw.messages[1].properties["headers"])
    await produce(kafka_broker.bootstrap_servers, topic, [b"two-again"], partition=0, headers=dup_headers)
    await produce(kafka_broker.bootstrap_servers, topic, [b"anonymous"], partition=0)
    restarted = KafkaSink({"bootstrap.servers": kafka_broker.bootstrap_servers, "topic": topic,
                           "sequence.id": "sink-1", "partition.no": "0"})
    await restarted.connect()
    await restarted.publish([(b"three", {})])
    await restarted.flush()
    await restarted.close()

    src = source(kafka_broker, topic, group(), **{"partition.no.list": "0", "seq.enabled": "true"})
    got = Collector()
    await src.start(got)
    await got.wait_for(3)
    await asyncio.sleep(0.3)
    assert got.payloads == [b"one", b"two", b"three"]
    await src.stop()


async def test_dynamic_topic_and_publish_errors(kafka_broker: Any) -> None:
    t1 = await kafka_broker.create_topic()
    t2 = await kafka_broker.create_topic()
    sink = KafkaSink({"bootstrap.servers": kafka_broker.bootstrap_servers, "topic": "{{region}}"})
    with pytest.raises(ConnectionUnavailableError):
        await sink.publish([(b"x", {"topic": t1})])
    await sink.connect()
    await sink.publish([(b"to-1", {"topic": t1}), ("to-2", {"topic": t2})])
    await sink.flush()
    with pytest.raises(ValueError, match="template"):
        await sink.publish([(b"x", {})])
    with pytest.raises(TypeError, match="bytes"):
        await sink.publish([(("row",), {"topic": t1})])
    await sink.close()
    for t, expected in ((t1, b"to-1"), (t2, b"to-2")):
        src = source(kafka_broker, t, group(), **{"partition.no.list": "0"})
        got = Collector()
        await src.start(got)
        await got.wait_for(1)
        assert got.payloads == [expected]
        await src.stop()


async def test_source_connects_when_the_broker_appears(tansu_factory: Any) -> None:
    """A source started before its broker retries with back-off and then consumes."""
    late = tansu_factory(start=False)
    src = source(late, "late-topic", group(), **{"partition.no.list": "0"})
    got = Collector()
    await src.start(got)
    await asyncio.sleep(0.5)
    assert not src.ready
    await asyncio.to_thread(late.start)
    await late.create_topic("late-topic")
    sink = KafkaSink({"bootstrap.servers": late.bootstrap_servers, "topic": "late-topic"})
    await sink.connect()
    await sink.publish([(b"hello", {})])
    await sink.flush()
    await sink.close()
    await got.wait_for(1, timeout=30)
    assert got.payloads == [b"hello"]
    await src.stop()


async def test_unreachable_broker() -> None:
    from tests.conftest import free_port

    bootstrap = f"127.0.0.1:{free_port()}"
    sink = KafkaSink({"bootstrap.servers": bootstrap, "topic": "t",
                      "optional.configuration": "request.timeout.ms:1000"})
    with pytest.raises(ConnectionUnavailableError):
        await sink.connect()
    src = KafkaSource({"bootstrap.servers": bootstrap, "topic.list": "t", "group.id": "g",
                       "optional.configuration": "request.timeout.ms:1000"})
    await src.start(Collector())
    await asyncio.sleep(0.5)
    assert not src.ready and src.lag() == {}
    await src.commit([])
    async with asyncio.timeout(5):
        await src.stop()


def test_option_errors() -> None:
    base = {"bootstrap.servers": "x:1", "topic.list": "t", "group.id": "g"}
    with pytest.raises(SiddhiAppCreationError, match="threading.option"):
        KafkaSource({**base, "threading.option": "many"})
    # As siddhi-io-kafka: partition.wise needs the partitions, and topic.offsets.map the topic listed.
    with pytest.raises(SiddhiAppCreationError, match="'partition.wise' but there are no partitions given"):
        KafkaSource({**base, "threading.option": "partition.wise"})
    with pytest.raises(SiddhiAppCreationError, match="not in topic.list"):
        KafkaSource({**base, "topic.offsets.map": "other=3"})
    with pytest.raises(SiddhiAppCreationError, match="<topic>=<offset>"):
        KafkaSource({**base, "topic.offsets.map": "t:3"})
    with pytest.raises(SiddhiAppCreationError, match="no AIOKafkaConsumer equivalent"):
        KafkaSource({**base, "optional.configuration": "no.such.setting:1"})
    with pytest.raises(SiddhiAppCreationError, match="bad value"):
        KafkaSource({**base, "optional.configuration": "session.timeout.ms:soon"})
    with pytest.raises(SiddhiAppCreationError, match="key:value"):
        KafkaSource({**base, "optional.configuration": "session.timeout.ms"})
    with pytest.raises(SiddhiAppCreationError, match="integers"):
        KafkaSource({**base, "partition.no.list": "0,x"})
    with pytest.raises(SiddhiAppCreationError, match="group.id"):
        KafkaSource({"bootstrap.servers": "x:1", "topic.list": "t"})
    with pytest.raises(SiddhiAppCreationError, match="acks"):
        KafkaSink({"bootstrap.servers": "x:1", "topic": "t", "acks": "most"})
    with pytest.raises(SiddhiAppCreationError, match="cannot be an"):
        KafkaSink({"bootstrap.servers": "{{x}}", "topic": "t"})
    src = KafkaSource({**base, "optional.configuration": "auto.offset.reset:latest,check.crcs:false,"
                                                         "enable.auto.commit:true"})
    assert src._extra == {"auto_offset_reset": "latest", "check_crcs": False}
    assert not src._commit_enabled


async def test_lag_while_paused_counts_what_arrives_meanwhile(kafka_broker: Any) -> None:
    """Paused partitions are not fetched, so the fetcher's high-water mark goes stale: the lag
    must still count the records produced during the pause."""
    topic = await kafka_broker.create_topic()
    src = source(kafka_broker, topic, group())
    got = Collector()
    await src.start(got)
    await src.wait_ready(10)
    await produce(kafka_broker.bootstrap_servers, topic, [b"a", b"b"])
    await got.wait_for(2)
    # (the delivered records' position and the fetcher's high-water mark may land a moment
    # after the collector has them: until both are there the partition is left out)
    async with asyncio.timeout(10):
        while src.lag() != {f"{topic}[0]": 0}:
            await asyncio.sleep(0.05)
    src.pause()
    await asyncio.sleep(1.0)  # no fetch in flight any more
    await produce(kafka_broker.bootstrap_servers, topic, [b"c", b"d", b"e"])
    async with asyncio.timeout(10):
        while src.lag() != {f"{topic}[0]": 3}:
            await asyncio.sleep(0.1)
    src.resume()
    await got.wait_for(5)
    async with asyncio.timeout(10):
        while src.lag() != {f"{topic}[0]": 0}:
            await asyncio.sleep(0.1)
    await src.stop()


def test_sequenced_sink_state_is_the_next_number() -> None:
    """As siddhi-io-kafka's KafkaSinkState: ``lastSentSequenceNo``, the number of the next record,
    only with a sequence.id; a restore sets it, and ignores what it does not know."""
    plain = KafkaSink({"bootstrap.servers": "x:1", "topic": "t"})
    assert plain.state() is None
    sink = KafkaSink({"bootstrap.servers": "x:1", "topic": "t", "sequence.id": "s"})
    fresh = sink.state()
    assert fresh is not None and fresh["lastSentSequenceNo"] > 1_700_000_000_000_000  # microseconds since the epoch
    sink.restore_state({"lastSentSequenceNo": 42, "other": 1})
    assert sink.state() == {"lastSentSequenceNo": 42}
    for bad in ({}, {"lastSentSequenceNo": "42"}, {"lastSentSequenceNo": True}):
        sink.restore_state(bad)
        assert sink.state() == {"lastSentSequenceNo": 42}
    plain.restore_state({"lastSentSequenceNo": 7})
    assert plain.state() is None


async def test_a_restored_sequenced_sink_numbers_replayed_outputs_as_before(kafka_broker: Any) -> None:
    """The sink's state taken after two records and restored into a new sink: the replay of the
    third record carries the third's number, so a seq.enabled source drops it."""
    topic = await kafka_broker.create_topic()
    options = {"bootstrap.servers": kafka_broker.bootstrap_servers, "topic": topic, "sequence.id": "relay",
               "partition.no": "0"}
    sink = KafkaSink(options)
    sink.restore_state({"lastSentSequenceNo": 0})  # Siddhi's first number
    await sink.connect()
    await sink.publish([(b"one", {}), (b"two", {})])
    await sink.flush()
    saved = sink.state()
    assert saved == {"lastSentSequenceNo": 2}
    await sink.publish([(b"three", {})])
    await sink.close()  # a crash after the third record went out

    again = KafkaSink(options)
    again.restore_state(saved)
    await again.connect()
    await again.publish([(b"three", {}), (b"four", {})])  # the replay, then a new output
    await again.flush()
    await again.close()

    raw = Collector()
    src_raw = source(kafka_broker, topic, group(), **{"partition.no.list": "0"})
    await src_raw.start(raw)
    await raw.wait_for(5)
    await src_raw.stop()
    # (aiokafka gives a record's headers as (key, bytes) pairs)
    assert [dict(m.properties["headers"])["sequence.no"] for m in raw.messages] == [b"0", b"1", b"2", b"2", b"3"]
    got = Collector()
    src = source(kafka_broker, topic, group(), **{"partition.no.list": "0", "seq.enabled": "true"})
    await src.start(got)
    await got.wait_for(4)
    await asyncio.sleep(0.3)
    await src.stop()
    assert got.payloads == [b"one", b"two", b"three", b"four"]


async def test_sequenced_records_redelivered_after_a_host_failure_are_not_dropped(kafka_broker: Any) -> None:
    """seq.enabled: a chunk the host failed to take is delivered again, not dropped as
    duplicates of itself (the numbers seen count only once a chunk is delivered)."""
    topic = await kafka_broker.create_topic()
    sink = KafkaSink({"bootstrap.servers": kafka_broker.bootstrap_servers, "topic": topic,
                      "sequence.id": "s", "partition.no": "0"})
    await sink.connect()
    await sink.publish([(b"x", {}), (b"y", {})])
    await sink.close()
    src = source(kafka_broker, topic, group(), **{"partition.no.list": "0", "seq.enabled": "true"})
    got = Collector(fail_first=1)
    await src.start(got)
    await got.wait_for(2, timeout=10)
    await src.stop()
    assert got.payloads == [b"x", b"y"]


async def test_a_restored_seq_enabled_source_drops_what_it_received_before(kafka_broker: Any) -> None:
    """As siddhi-io-kafka's KafkaSourceState: the last sequence numbers received (per sequence
    id and partition) are the source's state; a source restored with them drops a replay."""
    topic = await kafka_broker.create_topic()
    options = {"bootstrap.servers": kafka_broker.bootstrap_servers, "topic": topic, "sequence.id": "relay",
               "partition.no": "0"}
    sink = KafkaSink(options)
    sink.restore_state({"lastSentSequenceNo": 0})
    await sink.connect()
    await sink.publish([(b"one", {}), (b"two", {})])
    await sink.close()
    first = source(kafka_broker, topic, group(), **{"partition.no.list": "0", "seq.enabled": "true"})
    assert first.state() is None  # nothing received yet
    got = Collector()
    await first.start(got)
    await got.wait_for(2)
    await first.stop()
    assert first.state() is None  # delivered, but the host did not say the events entered the app
    got.messages[-1].ack.entered()  # as the host does once the chunk's events are in the app's state
    state = first.state()
    assert state == {"lastReceivedSeqNo": [["relay", 0, 1]]}
    assert source(kafka_broker, topic, group()).state() is None  # without seq.enabled: no state

    replay = KafkaSink(options)
    replay.restore_state({"lastSentSequenceNo": 1})  # "two" again, then "three"
    await replay.connect()
    await replay.publish([(b"two", {}), (b"three", {})])
    await replay.close()
    restored = source(kafka_broker, topic, group(), **{"partition.no.list": "0", "seq.enabled": "true"})
    restored.restore_state(orjson.loads(orjson.dumps(state)))
    again = Collector()
    await restored.start(again)  # a new group: reads the topic from its start
    await again.wait_for(1)
    await asyncio.sleep(0.3)
    await restored.stop()
    assert again.payloads == [b"three"]
    again.messages[-1].ack.entered()
    assert restored.state() == {"lastReceivedSeqNo": [["relay", 0, 2]]}


async def test_a_chunk_in_flight_across_a_rebalance_is_not_delivered_again(kafka_broker: Any) -> None:
    """Found by the chaos soak: a chunk held in the host past half the rebalance timeout (a
    database outage) made the revocation give up waiting for it, and the assignment then sought
    the partition back to before the chunk, which was still being processed: once done, it was
    delivered again and counted twice.  The assignment now waits for the chunk in flight, so
    the seek starts after it."""
    from aiokafka import AIOKafkaConsumer

    topic, other = await kafka_broker.create_topic(), await kafka_broker.create_topic()
    g = group()
    await produce(kafka_broker.bootstrap_servers, topic, [b"a", b"b", b"c"])
    release = asyncio.Event()
    entered = asyncio.Event()
    chunks: list[list[Any]] = []

    async def host(messages: list[Message]) -> None:
        chunks.append([m.payload for m in messages])
        entered.set()
        await release.wait()  # the first chunk is held, as by a database outage

    async def revoke(_partitions: set[tuple[str, int]]) -> None:
        pass

    src = source(kafka_broker, topic, g)
    src.on_revoke = revoke
    await src.start(host)
    other_member = None
    try:
        await asyncio.wait_for(entered.wait(), 20)
        epoch = src._epoch
        # Another member joins the group (for another topic): a rebalance while the chunk is held.
        other_member = AIOKafkaConsumer(other, bootstrap_servers=kafka_broker.bootstrap_servers, group_id=g,
                                        session_timeout_ms=2000, heartbeat_interval_ms=500, rebalance_timeout_ms=3000)
        await other_member.start()
        await asyncio.sleep(4.0)  # past the revocation's wait (half the rebalance timeout)
        release.set()
        async with asyncio.timeout(20):
            while src._epoch == epoch:  # the assignment is done
                await asyncio.sleep(0.05)
        await asyncio.sleep(1.5)  # a redelivery would be here by now
        assert [p for c in chunks for p in c] == [b"a", b"b", b"c"]
        assert src.assignment() == {(topic, 0)}
    finally:
        release.set()
        if other_member is not None:
            await other_member.stop()
        await src.stop()


@pytest.mark.parametrize("rebalance_timeout", ["1000", None])
async def test_an_assignment_longer_than_the_rebalance_timeout_is_reported(kafka_broker: Any,
                                                                          rebalance_timeout: str | None) -> None:
    """Found by the chaos soak: assignments that restored state for longer than the group's
    rebalance timeout each made the group rebalance again, a storm that no log explained.
    Such an assignment is now reported, with the setting to raise.  With the rebalance timeout
    left to its default (``max.poll.interval.ms``), an assignment that outlasts the session
    timeout is within it: no warning, and the group settles on one assignment."""
    topic = await kafka_broker.create_topic()

    async def slow_assign(_partitions: set[tuple[str, int]]) -> dict[tuple[str, int], int]:
        await asyncio.sleep(1.5)  # a restore waiting for its state
        return {}

    async def host(_messages: list[Message]) -> None:
        pass

    configuration = "session.timeout.ms:1000,heartbeat.interval.ms:300"
    if rebalance_timeout is not None:
        configuration += f",rebalance.timeout.ms:{rebalance_timeout}"
    src = source(kafka_broker, topic, group(), **{"optional.configuration": configuration})
    src.on_assign = slow_assign
    with capture_logs() as logs:
        await src.start(host)
        try:
            async with asyncio.timeout(20):
                while src._epoch == 0:
                    await asyncio.sleep(0.05)
            if rebalance_timeout is None:
                await asyncio.sleep(2.0)
                assert src._epoch == 1  # no rebalance after the first
        finally:
            await src.stop()
    slow = [e for e in logs if "longer than the group's rebalance timeout" in e["event"]]
    if rebalance_timeout is None:
        assert not slow
    else:
        assert slow and slow[0]["log_level"] == "warning" and slow[0]["rebalance_timeout_s"] == 1.0


async def test_the_rebalance_timeout_is_max_poll_interval_unless_set_as_in_the_java_client() -> None:
    """aiokafka's default rebalance timeout is the session timeout (10 s); the Java consumer
    (Siddhi's Kafka source) waits max.poll.interval.ms, 5 min, for members to rejoin.  An
    assignment that restores state for longer than 10 s made every rebalance start another."""
    base = {"bootstrap.servers": "x:1", "topic.list": "t", "group.id": "g"}

    def timeout_ms(configuration: str | None) -> int:
        extra = {} if configuration is None else {"optional.configuration": configuration}
        return KafkaSource({**base, **extra})._make_consumer()._rebalance_timeout_ms  # (what it joins with)

    assert timeout_ms(None) == 300_000
    assert timeout_ms("session.timeout.ms:2000") == 300_000
    assert timeout_ms("max.poll.interval.ms:60000") == 60_000
    assert timeout_ms("session.timeout.ms:2000,rebalance.timeout.ms:3000") == 3_000
