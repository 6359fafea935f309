"""SIGKILL in the middle of a stream, then a restart: the state counts every input exactly once.

The app keeps a running sum and count per key.  ``srota run`` snapshots its state every
second together with the offsets of the events the state includes, and commits Kafka offsets
as outputs are flushed; the kill comes when the group's committed offsets are well ahead of
the last snapshot.  After the restart the sources seek back to the snapshot's offsets: the records in
between are processed again (their outputs repeat: at-least-once output), and the state ends
exactly where an uninterrupted run ends.
"""
from __future__ import annotations

import asyncio
import signal
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaProducer
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
    totals_reached,
    wait_until,
)

pytestmark = pytest.mark.integration

N = 4000
KEYS = 8
PARTITIONS = 3
QUERY = "from In select id, sum(n) as total, count() as count group by id insert into Out;"


def _inputs() -> list[dict[str, Any]]:
    return [{"id": f"k{i % KEYS}", "n": (i * 7919) % 101} for i in range(N)]


def _uninterrupted(inputs: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """The final (total, count) per key of the same query, run in-process without faults."""
    runtime = SiddhiManager().create_siddhi_app_runtime(
        f"define stream In (id string, n long); {QUERY}")
    final: dict[str, tuple[int, int]] = {}
    runtime.add_callback("Out", lambda events: final.update({e.data[0]: (e.data[1], e.data[2]) for e in events}))
    runtime.start()
    handler = runtime.get_input_handler("In")
    for e in inputs:
        handler.send([e["id"], e["n"]])
    runtime.shutdown()
    return final


async def test_sigkill_mid_stream_then_restart_counts_every_event_once(kafka_broker: Any, tmp_path: Path) -> None:
    kb = kafka_broker
    src, out = await kb.create_topic(partitions=PARTITIONS), await kb.create_topic(partitions=PARTITIONS)
    group = f"g-{uuid.uuid4().hex[:8]}"
    app = f"""
    @app:name('Totals')
    {kafka_source(kb, src, group, **{"batch.size": "50"})}
    define stream In (id string, n long);
    {kafka_sink(kb, out, key='{{id}}')}
    define stream Out (id string, total long, count long);
    {QUERY}
    """
    database = tmp_path / "state.db"
    srota = SrotaProcess(tmp_path, app, {
        "persistence": {"enabled": True, "database": str(database), "interval": "1 sec", "revisions": 3},
        "shutdown": {"timeout": "20 sec"}}, free_port())
    inputs = _inputs()
    producer = AIOKafkaProducer(bootstrap_servers=kb.bootstrap_servers, acks="all")
    await producer.start()

    async def produce() -> None:
        for start in range(0, N, 100):
            batch = inputs[start:start + 100]
            futures = [await producer.send(src, orjson.dumps(e), key=e["id"].encode()) for e in batch]
            await asyncio.gather(*futures)
            await asyncio.sleep(0.05)

    try:
        async with TopicReader(kb.bootstrap_servers, out) as reader:
            srota.start()
            await srota.wait_ready()
            stream = asyncio.create_task(produce())

            async def committed_past_snapshot() -> bool:
                in_snapshot = snapshot_consumed(database, "Totals")
                if in_snapshot < N // 4:
                    return False
                offsets = await committed(kb.bootstrap_servers, group, src, PARTITIONS)
                return sum(o or 0 for o in offsets.values()) - in_snapshot >= 200

            # Mid-stream, once a snapshot includes a good part of the stream and the group has
            # committed well past it: SIGKILL, no shutdown at all.
            await wait_until(committed_past_snapshot, 30, what="commits past the last snapshot")
            assert not stream.done(), "the stream ended before the kill"
            srota.kill()
            await stream
            srota.start()
            await srota.wait_ready()
            records = await reader.until(totals_reached(inputs), 60, what="the final totals after the restart")
            srota.signal(signal.SIGTERM)
            assert await srota.wait_exit(30) == 0, srota.log()
        final = check_running_totals([r.json()["event"] for r in records], inputs)
        assert final == _uninterrupted(inputs)
        log = srota.log().split("--- run 2", 1)[1]
        assert "state restored" in log
        assert "starts at the snapshot's offset" in log, "the restart did not seek to the snapshot's offsets"
    finally:
        await producer.stop()
        srota.stop()


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
        _state, offsets = await host.checkpoint()
    finally:
        await host.stop_sources()
        await host.close()
    assert offsets == restored_offsets
