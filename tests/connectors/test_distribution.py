"""``@distribution`` sinks: strategies, delivery through failures, and end to end in the service."""
from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
import pytest
from srota.connectors._distribution import PARTITION_KEY, DistributedSink
from srota.connectors._inmemory import broker
from srota.connectors.base import ConnectionUnavailableError, RejectedError, Sink
from srota.engine.types import java_hash
from srota.grammar.errors import SiddhiAppCreationError
from srota.service.config import HttpConfig, ServiceConfig
from srota.service.host import ServiceHost

from tests.connectors.test_http import Server


class Recording(Sink):
    """A destination that records what it got; ``fail_at`` makes its n-th item unavailable once."""

    type_name = "recording"

    def __init__(self, fail_at: int | None = None, refuse: bytes | None = None) -> None:
        super().__init__({}, name="rec")
        self.got: list[Any] = []
        self.fail_at = fail_at
        self.refuse = refuse

    async def connect(self) -> None:
        pass

    async def publish(self, items: Sequence[tuple[Any, Mapping[str, Any]]]) -> None:
        rejected = {}
        for i, (payload, _props) in enumerate(items):
            if self.fail_at is not None and len(self.got) == self.fail_at:
                self.fail_at = None
                raise ConnectionUnavailableError("down", published=i)
            if payload == self.refuse:
                rejected[i] = "too large"
                continue
            self.got.append(payload)
        if rejected:
            raise RejectedError("refused", rejected)

    async def close(self) -> None:
        pass


def _items(*keys: str) -> list[tuple[Any, dict[str, Any]]]:
    return [(f"{k}{i}", {PARTITION_KEY: k}) for i, k in enumerate(keys)]


async def test_round_robin_continues_across_publishes():
    a, b, c = Recording(), Recording(), Recording()
    sink = DistributedSink([a, b, c], "roundRobin")
    await sink.publish(_items("x", "x", "x", "x"))
    await sink.publish(_items("y", "y"))
    assert (a.got, b.got, c.got) == (["x0", "x3"], ["x1", "y0"], ["x2", "y1"])


async def test_partitioned_sends_a_key_always_to_one_destination_as_siddhi_does():
    sinks = [Recording(), Recording(), Recording()]
    sink = DistributedSink(sinks, "partitioned")
    keys = ["IBM", "WSO2", "ORCL", "IBM", "MSFT", "WSO2", "GOOG"]
    await sink.publish(_items(*keys))
    for i, k in enumerate(keys):
        h = java_hash(k)
        signed = h - (1 << 32) if h >= 1 << 31 else h
        assert f"{k}{i}" in sinks[abs(signed) % 3].got
    assert sum(len(s.got) for s in sinks) == len(keys)
    # "IBM".hashCode() == 72654, % 3 == 0: where Siddhi sends it
    assert "IBM0" in sinks[0].got


async def test_broadcast_sends_every_item_everywhere():
    a, b = Recording(), Recording()
    await DistributedSink([a, b], "broadcast").publish(_items("k", "k"))
    assert a.got == b.got == ["k0", "k1"]


async def test_an_unavailable_destination_reports_the_first_unsent_item():
    a, b = Recording(), Recording(fail_at=1)
    sink = DistributedSink([a, b], "roundRobin")
    items = _items(*"abcdef")  # a: 0 2 4, b: 1 3 5 (b fails at its second item, index 3)
    with pytest.raises(ConnectionUnavailableError) as exc:
        await sink.publish(items)
    assert exc.value.published == 3
    assert b.got == ["b1"]


async def test_a_refused_item_is_reported_at_its_original_index():
    a, b = Recording(), Recording(refuse="d3")
    with pytest.raises(RejectedError) as exc:
        await DistributedSink([a, b], "roundRobin").publish(_items(*"abcd"))
    assert list(exc.value.rejected) == [3]
    assert a.got == ["a0", "c2"] and b.got == ["b1"]


def test_unknown_strategy():
    with pytest.raises(ValueError, match="roundRobin, partitioned, broadcast"):
        DistributedSink([Recording()], "random")


# ------------------------------------------------------------------ in the service
APP = """
@app:name('{name}')
@source(type='inMemory', topic='{name}-in', @map(type='passThrough'))
define stream Trades (symbol string, price double);

@sink(type='inMemory', @map(type='passThrough'),
      @distribution(strategy='{strategy}', partitionKey='symbol',
                    @destination(topic='{name}-a'), @destination(topic='{name}-b')))
define stream Out (symbol string, price double);

from Trades select symbol, price insert into Out;
"""


async def _drain(sub: Any) -> list[Any]:
    out = []
    while not sub.queue.empty():
        payload, _ = sub.queue.get_nowait()
        out.append(tuple(payload))
    broker.unsubscribe(sub)
    return out


@pytest.mark.parametrize("strategy", ["roundRobin", "partitioned", "broadcast"])
async def test_service_distributes_a_streams_outputs(strategy, request):
    name = f"Dist{strategy}"
    subs = {t: broker.subscribe(f"{name}-{t}") for t in "ab"}
    host = ServiceHost(ServiceConfig(http=HttpConfig(port=0)), app_texts=[APP.format(name=name, strategy=strategy)])
    await host.start()
    try:
        trades = [("IBM", 1.0), ("WSO2", 2.0), ("IBM", 3.0), ("ORCL", 4.0)]
        for t in trades:
            await broker.publish(f"{name}-in", [t])
        want = len(trades) * (2 if strategy == "broadcast" else 1)
        async with asyncio.timeout(10):
            while sum(s.queue.qsize() for s in subs.values()) < want:
                await asyncio.sleep(0.02)
    finally:
        await host.stop()
    got = {t: await _drain(s) for t, s in subs.items()}
    if strategy == "roundRobin":
        assert got == {"a": [("IBM", 1.0), ("IBM", 3.0)], "b": [("WSO2", 2.0), ("ORCL", 4.0)]}
    elif strategy == "broadcast":
        assert got["a"] == got["b"] == trades
    else:
        assert sorted(got["a"] + got["b"]) == sorted(trades)
        # a key stays on one destination
        assert not {s for s, _ in got["a"]} & {s for s, _ in got["b"]}


async def test_service_distributes_over_http_destinations():
    async with Server() as one, Server() as two:
        app = f"""
        @app:name('DistHttp')
        @source(type='inMemory', topic='DistHttp-in', @map(type='passThrough'))
        define stream Trades (symbol string, price double);
        @sink(type='http', method='POST', @map(type='json'),
              @distribution(strategy='roundRobin',
                            @destination(publisher.url='{one.url("/a")}'),
                            @destination(publisher.url='{two.url("/b")}')))
        define stream Out (symbol string, price double);
        from Trades select symbol, price insert into Out;
        """
        host = ServiceHost(ServiceConfig(http=HttpConfig(port=0)), app_texts=[app])
        await host.start()
        try:
            for t in [("IBM", 1.0), ("WSO2", 2.0), ("ORCL", 3.0)]:
                await broker.publish("DistHttp-in", [t])
            async with asyncio.timeout(10):
                while len(one.requests) + len(two.requests) < 3:
                    await asyncio.sleep(0.02)
        finally:
            await host.stop()
    assert [orjson.loads(b)["event"]["symbol"] for _m, _p, b, _h in one.requests] == ["IBM", "ORCL"]
    assert [orjson.loads(b)["event"]["symbol"] for _m, _p, b, _h in two.requests] == ["WSO2"]


@pytest.mark.parametrize("distribution, message", [
    ("@distribution(strategy='roundRobin')", "at least one @destination"),
    ("@distribution(strategy='partitioned', @destination(topic='a'))", "needs a partitionKey"),
    ("@distribution(strategy='partitioned', partitionKey='nope', @destination(topic='a'))", "no attribute 'nope'"),
    ("@distribution(strategy='random', @destination(topic='a'))", "strategy must be"),
])
async def test_distribution_errors_are_creation_errors(distribution, message):
    app = f"""
    @app:name('DistBad')
    @sink(type='inMemory', @map(type='passThrough'), {distribution})
    define stream Out (symbol string, price double);
    """
    host = ServiceHost(ServiceConfig(http=HttpConfig(port=0)), app_texts=[app])
    with pytest.raises(SiddhiAppCreationError, match=message):
        await host.start()
    await host.stop()


@pytest.mark.integration
async def test_service_partitions_mqtt_outputs_over_two_topics(mqtt_broker: Any):
    """Partitioned over two real MQTT topics: each symbol's events on one topic, in order."""
    from srota.connectors import MqttSource

    from tests.connectors.test_mqtt import Collector, prefix

    p = prefix()
    app = f"""
    @app:name('DistMqtt')
    @source(type='inMemory', topic='DistMqtt-in', @map(type='passThrough'))
    define stream Trades (symbol string, price double);
    @sink(type='mqtt', url='{mqtt_broker.url}', quality.of.service='1', @map(type='json'),
          @distribution(strategy='partitioned', partitionKey='symbol',
                        @destination(topic='{p}/a'), @destination(topic='{p}/b')))
    define stream Out (symbol string, price double);
    from Trades select symbol, price insert into Out;
    """
    sources = {}
    for t in "ab":
        src = MqttSource({"url": mqtt_broker.url, "topic": f"{p}/{t}", "quality.of.service": "1"}, name=t)
        got = Collector(src)
        await src.start(got)
        await src.wait_ready(10)
        sources[t] = (src, got)
    host = ServiceHost(ServiceConfig(http=HttpConfig(port=0)), app_texts=[app])
    await host.start()
    trades = [("IBM", 1.0), ("WSO2", 2.0), ("IBM", 3.0), ("ORCL", 4.0), ("WSO2", 5.0)]
    try:
        for t in trades:
            await broker.publish("DistMqtt-in", [t])
        async with asyncio.timeout(10):
            while sum(len(got.messages) for _, got in sources.values()) < len(trades):
                await asyncio.sleep(0.02)
    finally:
        await host.stop()
        for src, _ in sources.values():
            await src.stop()
    got = {t: [(e["event"]["symbol"], e["event"]["price"]) for e in map(orjson.loads, g.payloads)]
           for t, (_, g) in sources.items()}
    assert sorted(got["a"] + got["b"]) == sorted(trades)
    assert not {s for s, _ in got["a"]} & {s for s, _ in got["b"]}
    for rows in got.values():  # each symbol's events in the order sent
        for symbol in {s for s, _ in rows}:
            assert [x for s, x in rows if s == symbol] == [x for s, x in trades if s == symbol]


@pytest.mark.integration
async def test_service_round_robins_kafka_outputs_over_two_topics(kafka_broker: Any):
    from tests.connectors.test_kafka import Collector as KafkaCollector
    from tests.connectors.test_kafka import source

    topics = [await kafka_broker.create_topic() for _ in range(2)]
    app = f"""
    @app:name('DistKafka')
    @source(type='inMemory', topic='DistKafka-in', @map(type='passThrough'))
    define stream Trades (symbol string, price double);
    @sink(type='kafka', bootstrap.servers='{kafka_broker.bootstrap_servers}', @map(type='json'),
          @distribution(strategy='roundRobin', @destination(topic='{topics[0]}'), @destination(topic='{topics[1]}')))
    define stream Out (symbol string, price double);
    from Trades select symbol, price insert into Out;
    """
    host = ServiceHost(ServiceConfig(http=HttpConfig(port=0)), app_texts=[app])
    await host.start()
    trades = [("IBM", 1.0), ("WSO2", 2.0), ("IBM", 3.0), ("ORCL", 4.0)]
    try:
        for t in trades:
            await broker.publish("DistKafka-in", [t])
        async with asyncio.timeout(20):  # every output published and acknowledged
            while 'srota_sink_messages_total{app="DistKafka",stream="Out",transport="kafka"} 4.0' \
                    not in host.metrics.render().decode():
                await asyncio.sleep(0.05)
    finally:
        await host.stop()
    got = {}
    for i, topic in enumerate(topics):
        src = source(kafka_broker, topic, f"dist-{i}-{topic}")
        collector = KafkaCollector()
        await src.start(collector)
        await collector.wait_for(2)
        await src.stop()
        got[i] = [tuple(orjson.loads(m.payload)["event"].values()) for m in collector.messages]
    assert got == {0: [("IBM", 1.0), ("IBM", 3.0)], 1: [("WSO2", 2.0), ("ORCL", 4.0)]}


@pytest.mark.integration
async def test_a_destinations_own_options_may_be_templates(mqtt_broker: Any):
    """``@destination(topic='.../{{symbol}}/a')``: each destination renders its own template per
    event (before: the template text itself was the topic)."""
    from srota.connectors import MqttSource

    from tests.connectors.test_mqtt import Collector, prefix

    p = prefix()
    app = f"""
    @app:name('DistTemplates')
    @source(type='inMemory', topic='DistTemplates-in', @map(type='passThrough'))
    define stream Trades (symbol string, price double);
    @sink(type='mqtt', url='{mqtt_broker.url}', quality.of.service='1', @map(type='json'),
          @distribution(strategy='roundRobin',
                        @destination(topic='{p}/{{{{symbol}}}}/a'), @destination(topic='{p}/{{{{symbol}}}}/b')))
    define stream Out (symbol string, price double);
    from Trades select symbol, price insert into Out;
    """
    src = MqttSource({"url": mqtt_broker.url, "topic": f"{p}/#", "quality.of.service": "1"}, name="all")
    got = Collector(src)
    await src.start(got)
    await src.wait_ready(10)
    host = ServiceHost(ServiceConfig(http=HttpConfig(port=0)), app_texts=[app])
    await host.start()
    trades = [("IBM", 1.0), ("WSO2", 2.0), ("IBM", 3.0), ("ORCL", 4.0)]
    try:
        for t in trades:
            await broker.publish("DistTemplates-in", [t])
        async with asyncio.timeout(10):
            while len(got.messages) < len(trades):
                await asyncio.sleep(0.02)
    finally:
        await host.stop()
        await src.stop()
    topics = sorted((m.properties["topic"], orjson.loads(m.payload)["event"]["price"]) for m in got.messages)
    assert topics == sorted([(f"{p}/IBM/a", 1.0), (f"{p}/WSO2/b", 2.0), (f"{p}/IBM/a", 3.0), (f"{p}/ORCL/b", 4.0)])


def test_a_distributions_state_is_its_destinations_state():
    """A kafka destination's sequence numbers go into the app's snapshot and come back, so
    outputs replayed after a restore carry the numbers a consumer with seq.enabled drops
    (the distribution kept no state: replayed outputs were numbered anew and passed)."""
    from srota.connectors import KafkaSink

    def numbered(seq_id: str) -> KafkaSink:
        return KafkaSink({"bootstrap.servers": "127.0.0.1:9", "topic": "t", "sequence.id": seq_id})

    sink = DistributedSink([numbered("a"), Recording(), numbered("b")], "roundRobin")
    saved = sink.state()
    assert saved is not None and saved["destinations"][1] is None
    restored = DistributedSink([numbered("a"), Recording(), numbered("b")], "roundRobin")
    restored.restore_state(saved)
    assert restored.state() == saved
    assert [d.state() for d in restored.destinations] == saved["destinations"]
    assert DistributedSink([Recording(), Recording()], "broadcast").state() is None
