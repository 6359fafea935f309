"""``srota run`` as a process: SIGTERM in the middle of a stream.

Every message the service consumed is either produced or left uncommitted: for each
partition, every input below the group's committed offset has its output.  The process exits
0 and a restart picks up the rest, so over both runs every input has its output, and the
clean shutdown (which commits what it flushed before leaving the group) repeats nothing.
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

from tests.conftest import free_port
from tests.integration.support import SrotaProcess, TopicReader, committed, kafka_sink, kafka_source

pytestmark = pytest.mark.integration

N = 3000
PARTITIONS = 3


async def test_sigterm_mid_stream_loses_nothing(kafka_broker: Any, tmp_path: Path) -> None:
    kb = kafka_broker
    src, out = await kb.create_topic(partitions=PARTITIONS), await kb.create_topic()
    group = f"g-{uuid.uuid4().hex[:8]}"
    app = f"""
    @app:name('Piped')
    {kafka_source(kb, src, group, **{"batch.size": "100"})}
    define stream In (n int);
    {kafka_sink(kb, out)}
    define stream Out (n int);
    from In select n insert into Out;
    """
    srota = SrotaProcess(tmp_path, app, {"shutdown": {"timeout": "20 sec"}}, free_port())
    offsets: dict[int, tuple[int, int]] = {}  # n -> (partition, offset)
    producer = AIOKafkaProducer(bootstrap_servers=kb.bootstrap_servers, acks="all")
    await producer.start()

    async def produce(lo: int, hi: int, pause: float) -> None:
        for start in range(lo, hi, 100):
            futures = [(n, await producer.send(src, orjson.dumps({"n": n}), partition=n % PARTITIONS))
                       for n in range(start, min(hi, start + 100))]
            for n, fut in futures:
                meta = await fut
                offsets[n] = (meta.partition, meta.offset)
            await asyncio.sleep(pause)

    try:
        async with TopicReader(kb.bootstrap_servers, out) as reader:
            srota.start()
            await srota.wait_ready()
            stream = asyncio.create_task(produce(0, N, 0.05))
            await reader.until(lambda rs: len(rs) >= 500, what="some output before SIGTERM")
            srota.signal(signal.SIGTERM)
            assert await srota.wait_exit(30) == 0, srota.log()
            await stream
            first_run = {r.json()["event"]["n"] for r in await reader.until(lambda rs: True)}
            done = await committed(kb.bootstrap_servers, group, src, PARTITIONS)
            assert sum(o or 0 for o in done.values()) < N, "SIGTERM came after the stream ended"
            for n, (partition, offset) in offsets.items():
                if offset < (done[partition] or 0):
                    assert n in first_run, f"input {n} (partition {partition}, offset {offset}) committed, never produced"
            assert '"stopped"' in srota.log() or "stopped" in srota.log()

            srota.start()
            await srota.wait_ready()
            records = await reader.until(lambda rs: {r.json()["event"]["n"] for r in rs} >= set(range(N)),
                                         what="every input after the restart")
            srota.signal(signal.SIGTERM)
            assert await srota.wait_exit(30) == 0, srota.log()
        ns = [r.json()["event"]["n"] for r in records]
        assert sorted(set(ns)) == list(range(N))
        assert len(ns) == N, f"{len(ns) - N} outputs repeated after a clean shutdown"
    finally:
        await producer.stop()
        srota.stop()
