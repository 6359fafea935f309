"""The inMemory broker, source and sink, the log sink, and the connectors' shared machinery."""
from __future__ import annotations

import asyncio
import re
import uuid

import pytest
from srota.connectors import InMemorySink, InMemorySource, LogSink, Message, broker
from srota.engine.registry import Kind, registry
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Pos
from structlog.testing import capture_logs

from srota import connectors


def topic() -> str:
    return f"mem-{uuid.uuid4().hex[:8]}"


class Collector:
    """An on_messages callback that records chunks."""

    def __init__(self) -> None:
        self.chunks: list[list[Message]] = []
        self.event = asyncio.Event()

    async def __call__(self, messages: list[Message]) -> None:
        self.chunks.append(messages)
        self.event.set()

    @property
    def payloads(self) -> list[object]:
        return [m.payload for c in self.chunks for m in c]

    async def wait_for(self, n: int, timeout: float = 5.0) -> None:
        async with asyncio.timeout(timeout):
            while len(self.payloads) < n:
                self.event.clear()
                await self.event.wait()


async def test_sink_to_source_in_order_with_chunks() -> None:
    t = topic()
    src = connectors.create_source("inMemory", {"topic": t, "batch.size": "3"}, name="In")
    got = Collector()
    await src.start(got)
    await src.wait_ready(1)
    sink = connectors.create_sink("inMemory", {"topic": t, "type": "inMemory", "on.error": "LOG"})
    await sink.connect()
    await sink.publish([(("row", i), {}) for i in range(7)])
    await got.wait_for(7)
    assert got.payloads == [("row", i) for i in range(7)]
    assert max(len(c) for c in got.chunks) <= 3
    assert got.chunks[0][0].properties == {"topic": t}
    await src.stop()
    await sink.close()
    assert broker.subscribers(t) == 0


async def test_backlog_counts_what_subscribers_have_not_taken() -> None:
    t = topic()
    first, second = broker.subscribe(t), broker.subscribe(t)
    assert broker.backlog(t) == 0
    await broker.publish(t, "a")
    await broker.publish(t, "b")
    assert broker.backlog(t) == 4
    first.queue.get_nowait()
    assert broker.backlog(t) == 3 and broker.backlog(topic()) == 0
    broker.unsubscribe(first)
    broker.unsubscribe(second)


async def test_fan_out_and_dynamic_topic() -> None:
    a, b = topic(), topic()
    got_a1, got_a2, got_b = Collector(), Collector(), Collector()
    sources = [InMemorySource({"topic": a}), InMemorySource({"topic": a}), InMemorySource({"topic": b})]
    for s, c in zip(sources, (got_a1, got_a2, got_b), strict=True):
        await s.start(c)
    sink = InMemorySink({"topic": "{{region}}"})
    await sink.publish([(b"x", {"topic": a}), (b"y", {"topic": b})])
    await got_a1.wait_for(1)
    await got_a2.wait_for(1)
    await got_b.wait_for(1)
    assert (got_a1.payloads, got_a2.payloads, got_b.payloads) == ([b"x"], [b"x"], [b"y"])
    with pytest.raises(ValueError, match="template"):
        await sink.publish([(b"z", {})])
    for s in sources:
        await s.stop()


async def test_pause_resume_and_back_pressure() -> None:
    t = topic()
    src = InMemorySource({"topic": t, "buffer.size": 2, "batch.size": 1})
    got = Collector()
    await src.start(got)
    src.pause()
    assert src.paused
    await broker.publish(t, 1)
    await asyncio.sleep(0.05)
    assert got.payloads == []
    await broker.publish(t, 2)
    # The queue (2) is full: a third publish waits until the source drains it.
    blocked = asyncio.create_task(broker.publish(t, 3))
    await asyncio.sleep(0.05)
    assert not blocked.done()
    src.resume()
    await got.wait_for(3)
    await blocked
    assert got.payloads == [1, 2, 3]
    await src.stop()


async def test_publish_threadsafe_from_a_thread() -> None:
    t = topic()
    src = InMemorySource({"topic": t})
    got = Collector()
    await src.start(got)
    await asyncio.to_thread(broker.publish_threadsafe, t, "from-thread", {"k": 1})
    await got.wait_for(1)
    assert got.chunks[0][0].properties == {"k": 1, "topic": t}
    await src.stop()


async def test_callback_failure_is_logged_and_delivery_continues() -> None:
    t = topic()
    seen: list[object] = []

    async def flaky(messages: list[Message]) -> None:
        seen.extend(m.payload for m in messages)
        if messages[0].payload == "boom":
            raise RuntimeError("host bug")

    src = InMemorySource({"topic": t, "batch.size": 1})
    await src.start(flaky)
    with capture_logs() as logs:
        await broker.publish(t, "boom")
        await broker.publish(t, "ok")
        async with asyncio.timeout(2):
            while len(seen) < 2:
                await asyncio.sleep(0.01)
    assert seen == ["boom", "ok"]
    assert any(e["event"] == "the host failed to take a chunk" for e in logs)
    await src.stop()


async def test_stop_lets_the_chunk_in_progress_finish() -> None:
    t = topic()
    finished = asyncio.Event()

    async def slow(messages: list[Message]) -> None:
        await asyncio.sleep(0.2)
        finished.set()

    src = InMemorySource({"topic": t})
    await src.start(slow)
    await broker.publish(t, 1)
    await asyncio.sleep(0.02)
    await src.stop()
    assert finished.is_set()


async def test_log_sink() -> None:
    sink = connectors.create_sink("log", {"prefix": "alerts", "priority": "warn"}, name="Alerts")
    await sink.connect()
    with capture_logs() as logs:
        await sink.publish([(b'{"a":1}', {}), (("row", 1), {"topic": "t"})])
    assert logs[0] == {"event": 'alerts : {"a":1}', "log_level": "warning"}  # text as it is (Siddhi's line)
    # a row as Siddhi prints an Event (the time of logging stands in for an unknown timestamp)
    assert re.fullmatch(r"alerts : Event\{timestamp=\d+, data=\[row, 1\], isExpired=false\}", logs[1]["event"])
    assert logs[1]["properties"] == {"topic": "t"} and logs[1]["log_level"] == "warning"
    off = LogSink({"priority": "OFF"})
    with capture_logs() as logs:
        await off.publish([(b"x", {})])
    assert logs == []
    default = LogSink({}, name="S")
    with capture_logs() as logs:
        await default.publish([(b"x", {})])
    assert logs[0]["event"] == "S : x" and logs[0]["log_level"] == "info"
    await sink.close()


def test_option_validation() -> None:
    with pytest.raises(SiddhiAppCreationError, match="option 'topic' is required"):
        InMemorySource({})
    with pytest.raises(SiddhiAppCreationError, match="unknown option 'colour'") as err:
        connectors.create_source("inMemory", {"topic": "t", "colour": "red"}, pos=Pos(4, 2))
    assert (err.value.line, err.value.column) == (4, 2)
    with pytest.raises(SiddhiAppCreationError, match="must be of type int"):
        InMemorySource({"topic": "t", "batch.size": "many"})
    with pytest.raises(SiddhiAppCreationError, match="cannot be an"):
        InMemorySource({"topic": "{{x}}"})
    with pytest.raises(SiddhiAppCreationError, match="priority"):
        LogSink({"priority": "LOUD"})
    with pytest.raises(SiddhiAppCreationError, match="no source called 'carrier-pigeon'"):
        connectors.create_source("carrier-pigeon", {})


def test_registry_and_public_api() -> None:
    sources = {e.name for e in registry.all(Kind.SOURCE)}
    sinks = {e.name for e in registry.all(Kind.SINK)}
    assert {"kafka", "mqtt", "inMemory", "file"} <= sources
    assert {"kafka", "mqtt", "inMemory", "file", "log"} <= sinks
    for e in registry.all(Kind.SOURCE) + registry.all(Kind.SINK):
        assert e.doc and all(p.doc for p in e.params), e.name
    assert connectors.dynamic_options("kafka") == ("topic", "partition.no", "key")
    assert connectors.dynamic_options("mqtt") == ("topic", "quality.of.service", "message.retain")
    assert connectors.dynamic_options("nope") == ()
    for name in set(connectors.__all__) - {"HOST_OPTIONS", "OnMessages"}:  # constants, a type alias
        assert getattr(connectors, name).__doc__, name


async def test_backoff_grows_and_resets() -> None:
    b = connectors.Backoff(initial=0.01, maximum=0.04, jitter=0.0)
    assert [b.next_delay() for _ in range(4)] == [0.01, 0.02, 0.04, 0.04]
    b.reset()
    assert await b.sleep() == 0.01


async def test_a_failing_source_reports_its_error() -> None:
    class Broken(connectors.Source):
        type_name = "broken"

        async def _run(self) -> None:
            raise OSError("disk on fire")

    src = Broken({})
    with capture_logs() as logs:
        await src.start(Collector())
        await asyncio.sleep(0.05)
    assert not src.running and isinstance(src.error, OSError)
    assert logs[0]["event"] == "source stopped on an unexpected error"
    await src.stop()
    with pytest.raises(RuntimeError, match="already started"):
        ok = InMemorySource({"topic": topic()})
        await ok.start(Collector())
        assert ok.running
        try:
            await ok.start(Collector())
        finally:
            await ok.stop()


async def test_a_source_with_a_backlog_lets_other_tasks_run_between_chunks() -> None:
    # A transport with records buffered (a Kafka fetch of 60,000 records) hands chunk after
    # chunk without waiting on anything: the loop's other tasks (HTTP probes, heartbeats,
    # timers, sinks' senders) must get a turn after each chunk, not after the whole backlog.
    class Backlog(connectors.Source):
        type_name = "backlog"

        async def _run(self) -> None:
            for i in range(5):
                await self._deliver([Message(str(i).encode(), {})])

    delivered = Collector()
    src = Backlog({})
    seen: list[int] = []

    async def probe() -> None:
        seen.append(len(delivered.chunks))

    await src.start(delivered)
    await asyncio.create_task(probe())
    await src.stop()
    assert seen == [1]
