"""Port of siddhi-io-kafka's ``KafkaSinkTestCase``, ``ErrorHandlingTestCase`` and
``KafkaSinkwithBinaryMapperTestCase`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/io/kafka/sink/``.  Each Java test runs a
source app (``@source(type='kafka')`` on ``FooStream2``, a callback on ``BarStream2``) and a sink
app (``@sink(type='kafka')`` on ``BarStream``), sends three events into ``FooStream`` and after
a sleep asserts what the source app received.  The ports run both apps on service hosts
against tansu, with the Java tests' ``xml`` mapping, and poll for the rows.  The
"invalid topic" tests rely on the broker creating a topic when a producer first asks for it
(``auto.create.topics.enable``); tansu does too, but with several partitions where the Java
tests' Kafka makes one, so where the sink leaves the partition to the client those ports
compare the events regardless of their order across partitions.
"""
from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.conftest import free_port
from tests.connectors.upstream.kafka.support import (
    f32,
    names_values,
    read_all,
    ready,
    rows,
    sink_errors,
    topics,
    wait_rows,
)

pytestmark = pytest.mark.integration

#: The three events every sink test sends.
EVENTS = [("single_topic", 55.6, 100), ("single_topic2", 75.6, 102), ("single_topic3", 57.6, 103)]


def _source_app(broker: Any, options: str, name: str = "TestExecutionPlan1", mapper: str = "xml") -> str:
    return (f"@App:name('{name}') "
            "define stream BarStream2 (symbol string, price float, volume long); "
            f"@source(type='kafka', {options}, bootstrap.servers='{broker.bootstrap_servers}', "
            f"optional.configuration='{broker.fast_group}', @map(type='{mapper}')) "
            "Define stream FooStream2 (symbol string, price float, volume long);"
            "from FooStream2 select symbol, price, volume insert into BarStream2;")


def _sink_app(broker: Any, options: str, name: str = "TestExecutionPlan", mapper: str = "xml") -> str:
    return (f"@App:name('{name}') "
            "define stream FooStream (symbol string, price float, volume long); "
            f"@sink(type='kafka', {options}, bootstrap.servers='{broker.bootstrap_servers}', @map(type='{mapper}')) "
            "Define stream BarStream (symbol string, price float, volume long);"
            "from FooStream select symbol, price, volume insert into BarStream;")


async def _source(run: Any, broker: Any, options: str, mapper: str = "xml") -> list[list[tuple[Any, ...]]]:
    src = await run(_source_app(broker, options, mapper=mapper))
    got = src.watch("BarStream2")
    await ready(src, "FooStream2")
    return got


async def test_testPublisherWithTopicWithoutPartitionKafkaTransport(run: Any, kafka_broker: Any) -> None:
    """Sink without a partition, source in a group: the three events arrive in order."""
    (t,) = await topics(kafka_broker, "single_topic")
    got = await _source(run, kafka_broker, f"topic.list='{t}', group.id='single_topic_test', "
                        "threading.option='single.thread'")
    snk = await run(_sink_app(kafka_broker, f"topic='{t}'"))
    for e in EVENTS:
        snk.send("FooStream", e)
    await wait_rows(got, 3)
    assert names_values(got) == (["single_topic", "single_topic2", "single_topic3"], [100, 102, 103])


async def test_testPublisherWithTopicWithPartitionKafkaTransport(run: Any, kafka_broker: Any) -> None:
    """``partition.no='0'`` on a two-partition topic, the source assigned partition 0: all three."""
    (t,) = await topics(kafka_broker, "topic_with_two_partitions_sub0", partitions=2)
    got = await _source(run, kafka_broker, f"topic.list='{t}', partition.no.list='0', "
                        "group.id='topic_with_two_partitions_sub0_test', threading.option='single.thread'")
    snk = await run(_sink_app(kafka_broker, f"topic='{t}', partition.no='0'", name="TestExecutionPlan3"))
    for e in EVENTS:
        snk.send("FooStream", e)
    await wait_rows(got, 3)
    assert names_values(got) == (["single_topic", "single_topic2", "single_topic3"], [100, 102, 103])


async def _invalid_topic(run: Any, kafka_broker: Any, name: str, sink_options: str, source_options: str,
                         key: bool = False) -> list[list[tuple[Any, ...]]]:
    """The "invalid topic" tests: the sink app sends the first event to a topic that does not
    exist (the broker creates it), then the source app starts and the sink sends two more; the
    source receives all three (it reads from the earliest offset)."""
    (t,) = await topics(kafka_broker, name, create=False)
    snk = await run(_sink_app(kafka_broker, ", ".join(o for o in (f"topic='{t}'", sink_options) if o)))
    snk.send("FooStream", (f"{name}", 55.6, 100))
    # Java: Thread.sleep(500) so that the sink, not the source, creates the topic.
    await asyncio.sleep(0.5)
    got = await _source(run, kafka_broker, ", ".join(o for o in (f"topic.list='{t}', group.id='{name}_test', "
                                                                 "threading.option='single.thread'", source_options) if o))
    snk.send("FooStream", (f"{name}2", 75.6, 102))
    snk.send("FooStream", (f"{name}3", 57.6, 103))
    await wait_rows(got, 3, timeout=20)
    return got


async def test_testPublisherWithInvalidTopicKafkaTransport(run: Any, kafka_broker: Any) -> None:
    """A topic that does not exist when the sink first sends: all three events arrive."""
    got = await _invalid_topic(run, kafka_broker, "invalid_topic_without_partition2", "", "")
    n = "invalid_topic_without_partition2"
    assert sorted(rows(got)) == [(n, f32(55.6), 100), (f"{n}2", f32(75.6), 102), (f"{n}3", f32(57.6), 103)]


async def test_testPublisherWithInvalidTopicWithPartitionKafkaTransport(run: Any, kafka_broker: Any) -> None:
    """The same with ``partition.no='0'`` and the source assigned partition 0."""
    n = "invalid_topic_with_partition"
    got = await _invalid_topic(run, kafka_broker, n, "partition.no='0'", "partition.no.list='0'")
    assert names_values(got) == ([n, f"{n}2", f"{n}3"], [100, 102, 103])


async def test_testPublisherWithInvalidTopicWithPartitionOtherThan0KafkaTransportReceiveMessage(
        run: Any, kafka_broker: Any) -> None:
    """The same with ``key='{{volume}}'``: the records carry the key and all three arrive."""
    n = "invalid_topic_with_partition_3"
    got = await _invalid_topic(run, kafka_broker, n, "key='{{volume}}'", "")
    assert sorted(rows(got)) == [(n, f32(55.6), 100), (f"{n}2", f32(75.6), 102), (f"{n}3", f32(57.6), 103)]


@pytest.mark.skip(reason="commented out upstream (//@Test): expects no events from a partition the "
                  "auto-created one-partition topic does not have")
async def test_testPublisherWithInvalidTopicWithPartitionOtherThan0KafkaTransport() -> None:
    """``partition.no='2'`` on an auto-created one-partition topic: nothing arrives."""


async def test_testPublisherWithKafkaTransportWithDynamicTopic(run: Any, kafka_broker: Any) -> None:
    """``topic='{{symbol}}'``: each event goes to the topic its symbol names; a source on both
    topics receives the two."""
    t1, t2 = await topics(kafka_broker, "multiple_topic1", "multiple_topic2")
    snk = await run(_sink_app(kafka_broker, "topic='{{symbol}}'", name="TestExecutionPlan12"))
    got = await _source(run, kafka_broker, f"topic.list='{t1},{t2}', "
                        "group.id='multiple_topic1_multiple_topic2_test', threading.option='single.thread'")
    snk.send("FooStream", (t1, 55.6, 100))
    snk.send("FooStream", (t2, 75.6, 102))
    await wait_rows(got, 2)
    assert sorted(names_values(got)[0]) == [t1, t2]
    assert sorted(names_values(got)[1]) == [100, 102]


async def test_testPublisherWithKafkaTransportWithDynamicTopicAndPartition(run: Any, kafka_broker: Any) -> None:
    """(Commented out upstream, ported all the same: dynamic partitions are a documented sink
    example.)  ``topic='{{symbol}}', partition.no='{{volume}}'`` over two two-partition topics:
    each event lands in the partition its volume names."""
    t1, t2 = await topics(kafka_broker, "multiple_topic1_two_par_all_sub1", "multiple_topic2_two_par_all_sub1",
                          partitions=2)
    snk = await run(_sink_app(kafka_broker, "topic='{{symbol}}', partition.no='{{volume}}'",
                              name="TestExecutionPlan14"))
    got = await _source(run, kafka_broker, f"topic.list='{t1},{t2}', partition.no.list='0,1', "
                        "group.id='multiple_topic1_two_par_all_sub1_test', threading.option='single.thread'")
    for e in ((t1, 55.6, 0), (t1, 55.6, 1), (t2, 75.6, 0), (t2, 75.6, 1)):
        snk.send("FooStream", e)
    await wait_rows(got, 4)
    assert sorted(rows(got)) == [(t1, f32(55.6), 0), (t1, f32(55.6), 1), (t2, f32(75.6), 0), (t2, f32(75.6), 1)]
    for t in (t1, t2):
        assert {(r.partition, r.value.count(b"<volume>1</volume>")) for r in await read_all(kafka_broker, t, 2)} == \
            {(0, 0), (1, 1)}


async def test_testErrorStream(run: Any) -> None:
    """ErrorHandlingTestCase: no broker, ``is.synchronous='true'``, ``on.error='STREAM'`` and
    short timeouts in ``optional.configuration`` (among them ``metadata.fetch.timeout.ms`` and
    ``timeout.ms``, which today's Java client ignores with a warning): the event that cannot be
    published reaches the fault stream ``!kafkaSinkStream``, and from it ``kafkaErrorStream``."""
    r = await run("@App:name('ErrorHandlerApp') "
                  "define stream inputStream (symbol string, price float, volume long); "
                  "define stream kafkaErrorStream (symbol string, price float, volume long); "
                  "@OnError(action='STREAM')"
                  "@sink(type='kafka', topic='single_topic', is.synchronous='true', on.error='STREAM', "
                  f"bootstrap.servers='127.0.0.1:{free_port()}',\n"
                  "optional.configuration='retry.backoff.ms:1,metadata.fetch.timeout.ms:10,"
                  "request.timeout.ms:5,timeout.ms:10', @map(type='xml'))"
                  "Define stream kafkaSinkStream (symbol string, price float, volume long);"
                  "from inputStream select symbol, price, volume insert into kafkaSinkStream;"
                  "from !kafkaSinkStream select symbol, price, volume insert into kafkaErrorStream;")
    got = r.watch("kafkaErrorStream")
    r.send("inputStream", ("single_topic", 55.6, 100))
    await wait_rows(got, 1, timeout=10)
    assert rows(got) == [("single_topic", f32(55.6), 100)]
    assert sink_errors(r, "kafkaSinkStream") >= 1


async def test_testPublisherUsingBinaryMapper(run: Any, kafka_broker: Any) -> None:
    """KafkaSinkwithBinaryMapperTestCase: ``is.binary.message='true'`` on both ends with the
    binary mapper; three events arrive."""
    (t,) = await topics(kafka_broker, "single_topic")
    got = await _source(run, kafka_broker, f"topic.list='{t}', group.id='single_topic_test', "
                        "threading.option='single.thread', is.binary.message='true'", mapper="binary")
    snk = await run(_sink_app(kafka_broker, f"topic='{t}', is.binary.message = 'true'", mapper="binary"))
    for e in EVENTS:
        snk.send("FooStream", e)
    await wait_rows(got, 3)
    assert names_values(got) == (["single_topic", "single_topic2", "single_topic3"], [100, 102, 103])
