"""``srota run --workers 2``: two worker processes share the partitions; a dead one is restarted."""
from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
import yaml

from tests.conftest import free_port
from tests.integration.support import (
    SROTA,
    TopicReader,
    check_running_totals,
    kafka_sink,
    kafka_source,
    produce,
    totals_reached,
    wait_until,
)

pytestmark = pytest.mark.integration


async def _apps(port: int) -> Any:
    try:
        async with aiohttp.ClientSession() as s, \
                s.get(f"http://127.0.0.1:{port}/apps", timeout=aiohttp.ClientTimeout(total=1)) as r:
            return (await r.json())[0]["scaleout"]
    except (aiohttp.ClientError, TimeoutError, IndexError, KeyError):
        return None


def _free_pair() -> int:
    import socket

    while True:
        port = free_port()
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", port + 1))
            return port
        except OSError:
            continue


async def test_two_workers_share_partitions_and_a_killed_worker_is_started_again(
        kafka_broker: Any, tmp_path: Path) -> None:
    kb = kafka_broker
    src, out = await kb.create_topic(partitions=4), await kb.create_topic(partitions=2)
    group = f"g-{uuid.uuid4().hex[:8]}"
    app = tmp_path / "totals.siddhi"
    app.write_text(f"""
    @app:name('Totals')
    {kafka_source(kb, src, group, **{"key.attribute": "id"})}
    define stream In (id string, n long);
    {kafka_sink(kb, out, key='{{id}}')}
    define stream Out (id string, total long, count long);
    from In select id, sum(n) as total, count() as count group by id insert into Out;
    """)
    port = _free_pair()
    cfg = tmp_path / "srota.yaml"
    cfg.write_text(yaml.safe_dump({
        "http": {"host": "127.0.0.1", "port": port}, "logging": {"format": "json", "level": "info"},
        "scaleout": {"checkpoint_interval": "500 ms", "state_topic": f"state-{uuid.uuid4().hex[:8]}"}}))
    log = tmp_path / "srota.log"
    with open(log, "wb") as f:
        proc = subprocess.Popen([str(SROTA), "run", str(app), "--config", str(cfg), "--workers", "2"],
                                stdout=f, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    inputs = [{"id": f"k{i % 16}", "n": i % 13} for i in range(2000)]
    try:
        async def split() -> Any:
            both = [await _apps(port), await _apps(port + 1)]
            if all(both) and all(b["partitions"] for b in both) and \
                    sum(len(b["partitions"]) for b in both) == 4:  # type: ignore[index]
                return both
            return None

        both = await wait_until(split, 60, interval=0.2, what="both workers to own partitions")
        assert both[0]["pid"] != both[1]["pid"]
        async with TopicReader(kb.bootstrap_servers, out) as reader:
            await produce(kb.bootstrap_servers, src, [(e["id"].encode(), orjson.dumps(e)) for e in inputs[:1000]])
            await reader.until(totals_reached(inputs[:1000]), 30, what="the first half")
            await asyncio.sleep(1.0)  # a checkpoint
            os.kill(both[1]["pid"], signal.SIGKILL)

            async def restarted() -> bool:
                again = await split()
                return bool(again) and again[1]["pid"] != both[1]["pid"]

            await wait_until(restarted, 60, interval=0.2, what="the killed worker to be started again")
            await produce(kb.bootstrap_servers, src, [(e["id"].encode(), orjson.dumps(e)) for e in inputs[1000:]])
            records = await reader.until(totals_reached(inputs), 30, what="the final totals")
        check_running_totals([r.json()["event"] for r in records], inputs)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert "starting it again" in log.read_text()


async def test_workers_stop_cleanly_when_their_supervisor_is_killed(kafka_broker: Any, tmp_path: Path) -> None:
    kb = kafka_broker
    src = await kb.create_topic(partitions=2)
    app = tmp_path / "pass.siddhi"
    app.write_text(f"""
    @app:name('Pass')
    {kafka_source(kb, src, f"g-{uuid.uuid4().hex[:8]}", **{"key.attribute": "id"})}
    define stream In (id string, n long);
    from In[n > 0] select id insert into Out;
    """)
    port = _free_pair()
    cfg = tmp_path / "srota.yaml"
    cfg.write_text(yaml.safe_dump({"http": {"host": "127.0.0.1", "port": port},
                                   "scaleout": {"state_topic": f"state-{uuid.uuid4().hex[:8]}"}}))
    with open(tmp_path / "srota.log", "wb") as f:
        proc = subprocess.Popen([str(SROTA), "run", str(app), "--config", str(cfg), "--workers", "2"],
                                stdout=f, stderr=subprocess.STDOUT)
    try:
        pids = [s["pid"] for s in await wait_until(
            lambda: _both(port), 60, interval=0.2, what="both workers up")]
        proc.kill()
        proc.wait(10)

        def gone() -> bool:
            return not any(os.path.exists(f"/proc/{pid}") and
                           "zombie" not in open(f"/proc/{pid}/status").read().lower() for pid in pids)

        await wait_until(gone, 30, interval=0.2, what="the workers to stop")
    finally:
        if proc.poll() is None:
            proc.kill()


async def _both(port: int) -> Any:
    both = [await _apps(port), await _apps(port + 1)]
    return both if all(both) else None
