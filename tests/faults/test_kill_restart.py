"""SIGKILL at awkward moments, then a restart: the state counts every input exactly once.

The app keeps a running sum and count per key; ``srota run`` persists its state in snapshots
with the offsets of the events each includes.  The rule that makes this exact (DESIGN
decision 12): a committed offset never runs ahead of a saved snapshot that includes it, for
every partition the process was ever assigned.  Each test kills the process where an earlier
design lost records -- before the first snapshot (A), after a partition was first consumed
since the last snapshot (B), right after a rebalance (C), at a random moment mid-stream --
then restarts it, sends a tail of one record per key so every key reports its final state,
and checks every output against the prefix sums of the inputs and the final state against
an uninterrupted run.  The app also feeds an incremental aggregation stored in SQLite, whose
merges are not idempotent: after the restart its rows must equal the uninterrupted run's too.
"""
from __future__ import annotations

import asyncio
import random
import signal
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from srota.engine import SiddhiManager
from srota.service.config import ServiceConfig
from srota.service.host import AppHost
from srota.service.metrics import Metrics

from tests.conftest import free_port
from tests.integration.support import (
    SrotaProcess,
    TopicReader,
    check_running_totals,
    committed,
    kafka_sink,
    kafka_source,
    snapshot_consumed,
    snapshot_revisions,
    totals_reached,
    wait_until,
)

pytestmark = pytest.mark.integration

KEYS = 8
T0 = 1_700_000_000_000
QUERY = "from In select id, sum(n) as total, count() as count group by id insert into Out;"
AGGREGATION = ("define aggregation Agg from In select id, sum(n) as total, count() as cnt "
               "group by id aggregate by ts every sec ... min;")
AGG_QUERY = (f"from Agg within {T0 - 60_000}L, {T0 + 3_600_000}L per 'seconds' "
             "select AGG_TIMESTAMP, id, total, cnt")


def _events(start: int, n: int) -> list[dict[str, Any]]:
    return [{"id": f"k{i % KEYS}", "n": (i * 7919) % 101, "ts": T0 + i * 37} for i in range(start, start + n)]


def _uninterrupted(inputs: list[dict[str, Any]]) -> tuple[dict[str, tuple[int, int]], list[list[Any]]]:
    """The final (total, count) per key of the same query, and the aggregation's rows, run
    in-process without faults."""
    runtime = SiddhiManager().create_siddhi_app_runtime(
        f"define stream In (id string, n long, ts long); {AGGREGATION} {QUERY}")
    final: dict[str, tuple[int, int]] = {}
    runtime.add_callback("Out", lambda events: final.update({e.data[0]: (e.data[1], e.data[2]) for e in events}))
    runtime.start()
    handler = runtime.get_input_handler("In")
    for e in inputs:
        handler.send([e["id"], e["n"], e["ts"]])
    rows = sorted(list(e.data) for e in runtime.query(AGG_QUERY))
    runtime.shutdown()
    return final, rows


class _Harness:
    """Topics, a producer, a reader of the outputs and a ``srota run`` process with persistence."""

    def __init__(self, kb: Any, tmp_path: Path, partitions: int, interval: str, store: str | None = None) -> None:
        self.kb = kb
        #: The aggregation's @store (SQLite unless a test gives another, e.g. PostgreSQL's)
        self.store = store or f"@store(type='sqlite', database='{tmp_path / 'agg.db'}')"
        self.tmp_path = tmp_path
        self.partitions = partitions
        self.interval = interval
        self.group = f"g-{uuid.uuid4().hex[:8]}"
        self.database = tmp_path / "state.db"
        self.inputs: list[dict[str, Any]] = []
        #: The partition each key's latest input was sent to, where a test chose one
        self._key_partition: dict[str, int] = {}

    async def __aenter__(self) -> _Harness:
        kb = self.kb
        self.src = await kb.create_topic(partitions=self.partitions)
        self.out = await kb.create_topic(partitions=self.partitions)
        app = f"""
        @app:name('Totals')
        {kafka_source(kb, self.src, self.group, **{"batch.size": "50"})}
        define stream In (id string, n long, ts long);
        {kafka_sink(kb, self.out, key='{{id}}')}
        define stream Out (id string, total long, count long);
        {self.store}
        {AGGREGATION}
        {QUERY}
        """
        self.port = free_port()
        self.srota = SrotaProcess(self.tmp_path, app, {
            "http": {"host": "127.0.0.1", "port": self.port, "query": {"enabled": True}},
            "persistence": {"enabled": True, "database": str(self.database), "interval": self.interval,
                            "revisions": 3},
            "shutdown": {"timeout": "20 sec"}}, self.port)
        self.producer = AIOKafkaProducer(bootstrap_servers=kb.bootstrap_servers, acks="all")
        await self.producer.start()
        self.reader = TopicReader(kb.bootstrap_servers, self.out)
        await self.reader.__aenter__()
        self.srota.start()
        await self.srota.wait_ready()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.reader.__aexit__()
        await self.producer.stop()
        self.srota.stop()

    async def send(self, n: int, partition: int | None = None, pace: float = 0.0) -> None:
        """Send ``n`` more inputs (all to ``partition``, or keyed by id), 100 at a time.

        Without ``partition`` a key's input goes where the key's latest input went, if a test
        chose that partition: Kafka orders a key's records only within one partition, and the
        prefix-sum check needs each key's inputs in the order they were sent (a restart replays
        one partition while the other already has the tail).
        """
        batch_all = _events(len(self.inputs), n)
        for start in range(0, n, 100):
            batch = batch_all[start:start + 100]
            futures = [await self.producer.send(self.src, orjson.dumps(e), key=e["id"].encode(),
                                                partition=self._partition_for(e["id"], partition))
                       for e in batch]
            await asyncio.gather(*futures)
            self.inputs.extend(batch)
            if pace:
                await asyncio.sleep(pace)

    def _partition_for(self, key: str, partition: int | None) -> int | None:
        if partition is not None:
            self._key_partition[key] = partition
        return self._key_partition.get(key)

    async def processed(self, timeout: float = 30) -> None:
        """Wait until the outputs show every input sent so far."""
        await self.reader.until(totals_reached(list(self.inputs)), timeout, what="every input processed")

    async def committed(self) -> int:
        return sum(o or 0 for o in (await committed(self.kb.bootstrap_servers, self.group, self.src,
                                                    self.partitions)).values())

    async def restart_and_check(self) -> None:
        """Kill, restart, send one more record per key, and check the state is exact."""
        self.srota.kill()
        self.srota.start()
        await self.srota.wait_ready()
        await self.send(KEYS)
        records = await self.reader.until(totals_reached(self.inputs), 60, what="the final totals after the restart")
        async with aiohttp.ClientSession() as session, session.post(
                f"http://127.0.0.1:{self.port}/query", json={"app": "Totals", "query": AGG_QUERY}) as response:
            body = await response.json()
        assert response.status == 200, body
        self.srota.signal(signal.SIGTERM)
        assert await self.srota.wait_exit(30) == 0, self.srota.log()
        final = check_running_totals([r.json()["event"] for r in records], self.inputs)
        want_final, want_rows = _uninterrupted(self.inputs)
        assert final == want_final
        assert sorted(e["data"] for e in body["events"]) == want_rows


async def test_kill_before_the_first_snapshot(kafka_broker: Any, tmp_path: Path) -> None:
    """A: processed and flushed, but no periodic snapshot saved yet: nothing may be committed
    (the only snapshot is the one of the empty state, saved before the first event)."""
    async with _Harness(kafka_broker, tmp_path, partitions=3, interval="10 min") as h:
        await h.send(1000)
        await h.processed()
        await asyncio.sleep(0.5)  # time enough for a commit that follows flushed outputs
        assert snapshot_revisions(h.database, "Totals") <= 1 and snapshot_consumed(h.database, "Totals") == 0
        assert await h.committed() == 0, "offsets committed before any snapshot includes them"
        await h.restart_and_check()


async def test_kill_after_a_partition_is_first_consumed_since_the_last_snapshot(
        kafka_broker: Any, tmp_path: Path) -> None:
    """B: partition 1 has records only after the last snapshot (which has no offset for it)."""
    async with _Harness(kafka_broker, tmp_path, partitions=2, interval="4 sec") as h:
        await h.send(400, partition=0)
        await h.processed()
        await wait_until(lambda: snapshot_consumed(h.database, "Totals") == 400, 10, what="a snapshot of partition 0")
        revision = snapshot_revisions(h.database, "Totals")
        await h.send(400, partition=1)
        await h.processed()
        await asyncio.sleep(0.3)
        assert snapshot_revisions(h.database, "Totals") == revision, "a snapshot came before the kill: too slow"
        assert await h.committed() <= 400, "partition 1 committed before a snapshot includes it"
        await h.restart_and_check()


async def test_kill_right_after_a_rebalance(kafka_broker: Any, tmp_path: Path) -> None:
    """C: another member joins the group (for another topic); the snapshot saved after the
    rebalance must still hold the offsets of every partition, and commits must not pass it."""
    async with _Harness(kafka_broker, tmp_path, partitions=3, interval="3 sec") as h:
        await h.send(600)
        await h.processed()
        await wait_until(lambda: snapshot_consumed(h.database, "Totals") == 600, 10, what="a snapshot of everything")
        other = await kafka_broker.create_topic()
        joiner = AIOKafkaConsumer(other, bootstrap_servers=kafka_broker.bootstrap_servers, group_id=h.group,
                                  session_timeout_ms=2000, heartbeat_interval_ms=500)
        await joiner.start()
        try:
            await wait_until(lambda: h.srota.log().split(f"--- run {h.srota.runs}")[-1].count(
                "kafka partitions assigned") >= 2, 30, what="the rebalance")
            revision = snapshot_revisions(h.database, "Totals")
            await wait_until(lambda: snapshot_revisions(h.database, "Totals") > revision, 10,
                             what="a snapshot after the rebalance")
            revision = snapshot_revisions(h.database, "Totals")
            await h.send(300)
            await h.processed()
            await asyncio.sleep(0.2)
            assert snapshot_revisions(h.database, "Totals") == revision, "a snapshot came before the kill: too slow"
            await h.restart_and_check()
        finally:
            await joiner.stop()


async def test_kill_at_a_random_moment_mid_stream(kafka_broker: Any, tmp_path: Path) -> None:
    """Snapshots every second while a stream goes on; SIGKILL at a random point of it."""
    async with _Harness(kafka_broker, tmp_path, partitions=3, interval="1 sec") as h:
        stream = asyncio.create_task(h.send(3000, pace=0.05))
        moment = random.randrange(300, 2700, 100)
        await wait_until(lambda: len(h.inputs) >= moment, 30, what=f"{moment} inputs sent")
        assert not stream.done(), "the stream ended before the kill"
        h.srota.kill()
        await stream
        await h.restart_and_check()


async def test_kill_at_a_random_moment_with_roll_ups_in_postgres(kafka_broker: Any, pg_url: str,
                                                                  tmp_path: Path) -> None:
    """The crash bar with the aggregation in PostgreSQL: its chunks run off the event loop, its
    writes are committed before the offsets that cover them, and a restore rewinds its rows."""
    import urllib.parse

    p = urllib.parse.urlsplit(pg_url)
    store = (f"@store(type='rdbms', jdbc.url='jdbc:postgresql://{p.hostname}:{p.port}{p.path}', "
             f"username='{p.username}', password='{p.password}')")
    async with _Harness(kafka_broker, tmp_path, partitions=3, interval="1 sec", store=store) as h:
        stream = asyncio.create_task(h.send(3000, pace=0.05))
        moment = random.randrange(300, 2700, 100)
        await wait_until(lambda: len(h.inputs) >= moment, 30, what=f"{moment} inputs sent")
        assert not stream.done(), "the stream ended before the kill"
        h.srota.kill()
        await stream
        await h.restart_and_check()


async def test_checkpoint_keeps_restored_offsets_of_partitions_not_consumed_since() -> None:
    """A snapshot taken after a restore, before a partition delivered again, keeps that
    partition's restored offset: without it, a crash then resumes the partition from the
    group's committed offset, past events the restored state never counted."""
    app = """
    @app:name('Idle')
    @source(type='inMemory', topic='idle-partitions-test', @map(type='passThrough'))
    define stream In (n int);
    from In select sum(n) as total insert into Out;
    """
    host = AppHost(None, app, ServiceConfig(), Metrics())
    restored_offsets = {"Idle/In/source0": {("t", 0): 17, ("t", 1): 5}}
    await host.start((host.runtime.snapshot(), restored_offsets))
    try:
        _state, offsets, _marks = await host.checkpoint()
    finally:
        await host.stop_sources()
        await host.close()
    assert offsets == restored_offsets
