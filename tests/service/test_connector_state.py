"""Connectors' own state in the app's snapshots (``Source.state``/``Sink.state``), through the host.

Stateful test connectors count what they delivered or published; the host saves their state
with each snapshot (keyed by stream and position), hands it back before the connectors start,
ignores entries it cannot use, and restores older snapshots that have none.
"""
from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
from srota.connectors._inmemory import InMemorySource, broker
from srota.connectors.base import AckToken, Message, Sink
from srota.engine.registry import Kind, extension
from srota.service.config import HttpConfig, PersistenceConfig, ServiceConfig
from srota.service.host import ServiceHost
from srota.service.persistence import StateStore

T0 = 1_700_000_000_000  # epoch ms

#: What the test connectors did, in order: (connector name, call, argument).
calls: list[tuple[str, str, Any]] = []


class _Chunk(AckToken):
    __slots__ = ("source", "size")

    def __init__(self, source: CountingSource, size: int) -> None:
        self.source, self.size = source, size

    def entered(self) -> None:
        self.source.entered += self.size


@extension(Kind.SOURCE, "countingIn", doc="test: inMemory; its state counts the messages that entered the app")
class CountingSource(InMemorySource):
    type_name = "countingIn"

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.delivered = 0
        self.entered = 0  # counted by the host's calls of the chunks' AckToken.entered

    async def _deliver(self, messages: list[Any]) -> bool:
        token = _Chunk(self, len(messages))
        ok = await super()._deliver([Message(m.payload, m.properties, token) for m in messages])
        self.delivered += len(messages)
        return ok

    async def start(self, on_messages: Any) -> None:
        calls.append((self.name, "start", None))
        await super().start(on_messages)

    def state(self) -> dict[str, Any] | None:
        return {"delivered": self.entered}

    def restore_state(self, state: dict[str, Any]) -> None:
        calls.append((self.name, "restore", state))
        self.entered = state["delivered"]


@extension(Kind.SINK, "countingOut", doc="test: keeps what it publishes; its state counts it")
class CountingSink(Sink):
    type_name = "countingOut"
    #: While cleared, publish waits (a slow broker).
    gate: asyncio.Event | None = None
    #: Calls of publish so far (of every instance).
    publishing = 0

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.sent: list[Any] = []
        self.base = 0

    async def connect(self) -> None:
        calls.append((self.name, "connect", None))

    async def publish(self, items: Sequence[tuple[Any, Mapping[str, Any]]]) -> None:
        CountingSink.publishing += 1
        if CountingSink.gate is not None:
            await CountingSink.gate.wait()
        self.sent.extend(payload for payload, _ in items)

    async def close(self) -> None:
        pass

    def state(self) -> dict[str, Any] | None:
        return {"sent": self.base + len(self.sent)}

    def restore_state(self, state: dict[str, Any]) -> None:
        calls.append((self.name, "restore", state))
        self.base = state["sent"]


APP = """
@app:name('ConnState')
@source(type='countingIn', topic='{topic}', @map(type='json'))
define stream In (id string, ts long);

@sink(type='countingOut', @map(type='passThrough'))
@sink(type='countingOut', @map(type='passThrough'))
define stream Out (id string, ts long, n long);

from In select id, ts, count() as n insert into Out;
"""


def _config(tmp_path: Path, persistence: bool = True) -> ServiceConfig:
    return ServiceConfig(http=HttpConfig(enabled=False), errors_database=str(tmp_path / "errors.db"),
                         persistence=PersistenceConfig(enabled=persistence, database=str(tmp_path / "state.db"),
                                                       interval_ms=3_600_000))


async def _send(topic: str, first: int, last: int) -> None:
    for i in range(first, last + 1):
        await broker.publish(topic, orjson.dumps({"event": {"id": f"e{i}", "ts": T0 + i}}))


def _sinks(host: ServiceHost) -> list[CountingSink]:
    return [b.sink for b in host.apps["ConnState"].sinks]


async def _until(check: Any, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.01)


async def _run_first(tmp_path: Path, topic: str, events: int) -> None:
    """A host that consumes ``events`` events and stops (its final snapshot saved)."""
    host = ServiceHost(_config(tmp_path), app_texts=[APP.format(topic=topic)])
    await host.start()
    try:
        await _send(topic, 1, events)
        await _until(lambda: all(len(s.sent) == events for s in _sinks(host)))
    finally:
        await host.stop()


async def _last_n_after_one_more(host: ServiceHost, topic: str, i: int) -> Any:
    """Send event ``i`` and return the ``n`` (count()) of its output: the engine state's count."""
    sink = _sinks(host)[0]
    before = len(sink.sent)
    await _send(topic, i, i)
    await _until(lambda: len(sink.sent) > before)
    return sink.sent[-1][-1]


async def test_connector_state_round_trips_through_a_snapshot(tmp_path: Path, request: Any) -> None:
    topic = f"{request.node.name}-in"
    calls.clear()
    await _run_first(tmp_path, topic, 3)
    with sqlite3.connect(tmp_path / "state.db") as db:
        rows = {key: orjson.loads(blob) for key, blob in db.execute(
            "SELECT connector, state FROM srota_connector_states WHERE app = 'ConnState' AND revision = "
            "(SELECT MAX(revision) FROM srota_snapshots WHERE app = 'ConnState')")}
    # Keyed by kind, stream and position: the two sinks of Out do not clash.
    assert rows == {"source:In:0": {"format": 1, "type": "countingIn", "state": {"delivered": 3}},
                    "sink:Out:0": {"format": 1, "type": "countingOut", "state": {"sent": 3}},
                    "sink:Out:1": {"format": 1, "type": "countingOut", "state": {"sent": 3}}}

    calls.clear()
    second = ServiceHost(_config(tmp_path), app_texts=[APP.format(topic=topic)])
    await second.start()
    try:
        app = second.apps["ConnState"]
        src_name, (sink0, sink1) = app.sources[0].source.name, (b.sink.name for b in app.sinks)
        # Each connector got its state back before it connected or started.
        for name, first_call in ((src_name, "start"), (sink0, "connect"), (sink1, "connect")):
            mine = [c for c in calls if c[0] == name]
            assert mine[0][1] == "restore" and mine[1][1] == first_call, mine
        assert [c[2] for c in calls if c[1] == "restore"] == [{"sent": 3}, {"sent": 3}, {"delivered": 3}]
        assert await _last_n_after_one_more(second, topic, 4) == 4  # the engine state came back too
        assert [s.state() for s in _sinks(second)] == [{"sent": 4}, {"sent": 4}]
    finally:
        await second.stop()


async def test_a_snapshot_from_before_connector_state_restores(tmp_path: Path, request: Any) -> None:
    """A database written before connector state existed (no srota_connector_states table):
    the engine state restores, the connectors start fresh."""
    topic = f"{request.node.name}-in"
    await _run_first(tmp_path, topic, 2)
    with sqlite3.connect(tmp_path / "state.db") as db:
        db.execute("DROP TABLE srota_connector_states")
    calls.clear()
    host = ServiceHost(_config(tmp_path), app_texts=[APP.format(topic=topic)])
    await host.start()
    try:
        assert [c for c in calls if c[1] == "restore"] == []
        assert await _last_n_after_one_more(host, topic, 3) == 3
        assert [s.state() for s in _sinks(host)] == [{"sent": 1}, {"sent": 1}]
    finally:
        await host.stop()
    store = StateStore(tmp_path / "state.db")  # the table is back, with the new revisions' rows
    await store.open()
    try:
        assert (await store.load("ConnState")).connectors["sink:Out:0"]["state"] == {"sent": 1}
    finally:
        await store.close()


async def test_entries_the_host_cannot_use_are_ignored(tmp_path: Path, request: Any) -> None:
    """An entry of another format or transport, one no connector has and one that is not
    JSON: the app starts, those connectors fresh, the others restored."""
    topic = f"{request.node.name}-in"
    await _run_first(tmp_path, topic, 2)
    with sqlite3.connect(tmp_path / "state.db") as db:
        (revision,) = db.execute("SELECT MAX(revision) FROM srota_snapshots").fetchone()
        where = "WHERE app = 'ConnState' AND revision = ? AND connector = ?"
        db.execute(f"UPDATE srota_connector_states SET state = ? {where}",
                   (orjson.dumps({"format": 2, "type": "countingOut", "state": {"sent": 9}}), revision, "sink:Out:0"))
        db.execute(f"UPDATE srota_connector_states SET state = ? {where}",
                   (orjson.dumps({"format": 1, "type": "kafka", "state": {"sent": 9}}), revision, "sink:Out:1"))
        db.execute(f"UPDATE srota_connector_states SET state = ? {where}", (b"\x00not json", revision, "source:In:0"))
        db.execute("INSERT INTO srota_connector_states VALUES ('ConnState', ?, 'sink:Gone:0', ?)",
                   (revision, orjson.dumps({"format": 1, "type": "countingOut", "state": {"sent": 1}})))
    calls.clear()
    host = ServiceHost(_config(tmp_path), app_texts=[APP.format(topic=topic)])
    await host.start()
    try:
        assert [c for c in calls if c[1] == "restore"] == []
        assert await _last_n_after_one_more(host, topic, 3) == 3
    finally:
        await host.stop()


async def test_a_sink_state_is_taken_after_exactly_the_outputs_the_engine_state_includes(request: Any,
                                                                                         tmp_path: Path) -> None:
    """The sinks are slow: when the snapshot is taken they are publishing the first output,
    the second is queued, and three more are queued before they catch up.  Their state is
    taken after the two, not after all five (the queue is not taken past the snapshot's point
    while the state is due)."""
    topic = f"{request.node.name}-in"
    host = ServiceHost(_config(tmp_path, persistence=False), app_texts=[APP.format(topic=topic)])
    CountingSink.gate = asyncio.Event()
    await host.start()
    try:
        app = host.apps["ConnState"]
        CountingSink.publishing = 0
        await _send(topic, 1, 1)
        await _until(lambda: CountingSink.publishing == 2)  # each sink holds the first output
        await _send(topic, 2, 2)
        await _until(lambda: app.sources[0].source.delivered == 2)
        checkpoint = asyncio.create_task(app.checkpoint_with_connectors())
        await _until(lambda: app.sinks[0].state_at is not None)
        await _send(topic, 3, 5)
        await _until(lambda: app.sources[0].source.delivered == 5)
        CountingSink.gate.set()
        _state, _offsets, _marks, connectors = await asyncio.wait_for(checkpoint, 5)
        assert connectors["sink:Out:0"]["state"] == {"sent": 2}
        assert connectors["sink:Out:1"]["state"] == {"sent": 2}
        assert connectors["source:In:0"]["state"] == {"delivered": 2}
        await _until(lambda: all(len(s.sent) == 5 for s in _sinks(host)))
        assert [row[1] for row in _sinks(host)[0].sent] == [T0 + i for i in range(1, 6)]
    finally:
        CountingSink.gate.set()
        CountingSink.gate = None
        await host.stop()


async def test_a_chunk_left_unconsumed_at_shutdown_does_not_count_in_the_source_state(tmp_path: Path,
                                                                                      request: Any) -> None:
    """The host calls a chunk's ``AckToken.entered`` when its events enter the app, not for a
    chunk it leaves unconsumed once shutdown began (which the final snapshot does not include)."""
    topic = f"{request.node.name}-in"
    host = ServiceHost(_config(tmp_path), app_texts=[APP.format(topic=topic)])
    await host.start()
    try:
        app = host.apps["ConnState"]
        b = app.sources[0]
        await _send(topic, 1, 2)
        await _until(lambda: b.source.delivered == 2)
        assert b.source.state() == {"delivered": 2}
        await app.quiesce()
        late = b.source
        payload = orjson.dumps({"event": {"id": "late", "ts": T0 + 3}})
        await app._on_messages(b, [Message(payload, {}, _Chunk(late, 1))])
        assert late.state() == {"delivered": 2}
    finally:
        await host.stop()
    store = StateStore(tmp_path / "state.db")
    await store.open()
    try:
        assert (await store.load("ConnState")).connectors["source:In:0"]["state"] == {"delivered": 2}
    finally:
        await store.close()


async def test_a_restarted_app_goes_on_tailing_a_file_where_its_snapshot_left_it(tmp_path: Path) -> None:
    # Without the position in the snapshot a restart read the tailed file from its start:
    # every line again, into an app whose state already held them.
    log = tmp_path / "readings.log"
    log.write_bytes(b"".join(orjson.dumps({"event": {"id": f"e{i}", "ts": T0 + i}}) + b"\n" for i in (1, 2, 3)))
    app = f"""
    @app:name('Tail')
    @source(type='file', file.uri='{log}', file.polling.interval='20', @map(type='json'))
    define stream In (id string, ts long);
    @sink(type='inMemory', topic='tail-out', @map(type='passThrough'))
    define stream Out (id string, n long);
    @info(name='count') from In select id, count() as n insert into Out;
    """

    async def run_until(rows: int) -> list[Any]:
        out = broker.subscribe("tail-out")  # before the host starts: nothing is missed
        got: list[Any] = []
        host = ServiceHost(_config(tmp_path), app_texts=[app])
        await host.start()
        try:
            async with asyncio.timeout(5):
                while len(got) < rows:
                    got.append((await out.queue.get())[0])
            await asyncio.sleep(0.1)  # nothing more comes
            while not out.queue.empty():
                got.append(out.queue.get_nowait()[0])
        finally:
            await host.stop()  # the final snapshot holds the file's position
            broker.unsubscribe(out)
        return got

    assert await run_until(3) == [("e1", 1), ("e2", 2), ("e3", 3)]
    with open(log, "ab") as f:
        f.write(orjson.dumps({"event": {"id": "e4", "ts": T0 + 4}}) + b"\n")
    assert await run_until(1) == [("e4", 4)]  # the count went on from the engine's restored state
