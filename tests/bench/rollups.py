"""Roll-up stores side by side: SQLite, PostgreSQL 15 and MariaDB 10.11, one and two shards.

    python -m tests.bench.rollups [N]

The workload is the aggregation seed's stock aggregation (``every sec ... year``, grouped by
symbol) over the benchmark's trades (100 symbols, event time +1 ms each, ``data.py``), fed in
chunks of 1000 through the live engine.  For each store it prints one JSON line with:

* ``events_per_s``: events through the engine until every roll-up row is committed (the
  stores write on their own threads, so this is the engine's rate unless the store lags);
* ``writer_rows_per_s``: base rows the store's writer commits per second (200,000 rows of
  distinct keys, written a completed second's 1000 rows per call, as the engine does, into the
  tables the engine run just filled: the seconds already hold rows, so every write takes the
  merge path, a read of its range and an upsert, not the plain COPY of buckets past the newest);
* ``query_p50_ms`` / ``query_p99_ms``: on-demand ``within ... per 'hours'`` reads (50 runs);
* for ``2 shards``: two processes, each half of the events under its own shard id, and the
  composed read by a third.

Then the targets: PostgreSQL at least 0.7 of SQLite's event rate, and 100k base rows/s per
worker.  The servers are started here (tests/dbservers.py), on free loopback ports.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import shutil
import statistics
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

from tests.bench.data import rows as make_rows

APP = """@app:name('bench')
@app:playback
define stream TradeStream (symbol string, price double, volume long, ts long);
{store}{shard}@purge(enable='false')
define aggregation TradeAggregation
from TradeStream
select symbol, avg(price) as avgPrice, sum(volume) as total, max(price) as maxPrice
group by symbol
aggregate by ts every sec ... year;
"""


def _store(url: str | None, tmp: Path) -> str:
    if url is None:
        return ""
    if url == "sqlite":
        return f"@store(type='sqlite', database='{tmp / 'bench.db'}')\n"
    p = urllib.parse.urlsplit(url)
    scheme = "postgresql" if p.scheme.startswith("postgres") else "mysql"
    return (f"@store(type='rdbms', jdbc.url='jdbc:{scheme}://{p.hostname}:{p.port}{p.path}', "
            f"username='{p.username}', password='{p.password}')\n")


def _run(url: str | None, tmp: str, events: list[tuple[Any, ...]], shard: str | None) -> dict[str, Any]:
    from srota import SiddhiManager

    app = APP.format(store=_store(url, Path(tmp)), shard="@PartitionById(enable='true')\n" if shard else "")
    rt = SiddhiManager(shard_id=shard).create_siddhi_app_runtime(app)
    rt.start()
    handler = rt.get_input_handler("TradeStream")
    agg = rt.context.aggregations["TradeAggregation"]
    store = agg.store
    t0 = time.perf_counter()
    for i in range(0, len(events), 1000):
        chunk = events[i:i + 1000]
        handler.send_rows(chunk)
    agg.complete_all()  # flushes the store too
    elapsed = time.perf_counter() - t0
    rows = sum(len(store.scan(d)) for d in agg.spec.durations) if url is not None else 0
    rt.shutdown()
    return {"events": len(events), "seconds": elapsed, "rows": rows}


def _child(url: str | None, tmp: str, events: list[tuple[Any, ...]], shard: str | None, out: Any) -> None:
    out.put(_run(url, tmp, events, shard))


def _writer_rate(url: str, tmp: str, n_rows: int = 200_000) -> float:
    """Base rows/s the store's writer commits: ``n_rows`` distinct keys written as the engine
    does (a completed second's rows per write call), until all are committed."""
    from srota import SiddhiManager

    app = APP.format(store=_store(url, Path(tmp)), shard="")
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    agg = rt.context.aggregations["TradeAggregation"]
    store, spec = agg.store, agg.spec
    duration = spec.durations[0]
    per_second = 1000  # keys completed per second bucket
    batches = []
    for b in range(n_rows // per_second):
        ts = 1_700_000_000_000 + b * 1000
        rows = []
        for k in range(per_second):
            row = [ts + 999, 0, *([None] * len(spec.latest)),
                   *(set() if b.op == "distinct" else 1 if b.type.value in ("int", "long") else 1.0
                     for b in spec.bases)]
            rows.append((ts, (f"sym{k}",), row))
        batches.append(rows)
    t0 = time.perf_counter()
    for rows in batches:
        store.write(duration, rows)
    store.flush()
    elapsed = time.perf_counter() - t0
    rt.shutdown()
    return n_rows / elapsed


def _query_latency(url: str | None, tmp: str, shard: str | None) -> tuple[float, float]:
    from srota import SiddhiManager

    app = APP.format(store=_store(url, Path(tmp)), shard="@PartitionById(enable='true')\n" if shard else "")
    rt = SiddhiManager(shard_id=shard).create_siddhi_app_runtime(app)
    rt.start()
    q = ("from TradeAggregation within 1700000000000L, 1800000000000L per 'hours' "
         "select AGG_TIMESTAMP, symbol, avgPrice, total, maxPrice")
    times = []
    for _ in range(50):
        t = time.perf_counter()
        rt.query(q)
        times.append((time.perf_counter() - t) * 1000)
    rt.shutdown()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


def main(n: int = 200_000) -> None:
    from tests.dbservers import MariaDBServer, PostgresServer, mariadb_bin, postgres_bin

    trades = make_rows(n)
    work = Path(tempfile.mkdtemp(prefix="srota-bench-rollups-"))
    servers: list[Any] = []
    urls: dict[str, str | None] = {"memory": None, "sqlite": "sqlite"}
    try:
        bindir = postgres_bin()
        if bindir is not None:
            pg = PostgresServer(work / "pg", bindir)
            pg.start()
            servers.append(pg)
            urls["postgresql"] = pg.url(pg.create_database())
        found = mariadb_bin()
        if found is not None:
            maria = MariaDBServer(work / "maria", *found)
            maria.start()
            servers.append(maria)
            urls["mariadb"] = maria.url(maria.create_database())
        results: dict[str, dict[str, Any]] = {}
        for name, url in urls.items():
            tmp = work / name
            (tmp / "w").mkdir(parents=True, exist_ok=True)
            r = _run(url, str(tmp), trades, None)
            p50, p99 = _query_latency(url, str(tmp), None) if url is not None else (0.0, 0.0)
            writer = _writer_rate(url, str(tmp / "w")) if url is not None else None
            line = {"store": name, "shards": 1, "events_per_s": round(r["events"] / r["seconds"]),
                    "writer_rows_per_s": round(writer) if writer else None,
                    "rows": r["rows"], "rows_per_s": round(r["rows"] / r["seconds"]) if r["rows"] else None,
                    "query_p50_ms": round(p50, 2), "query_p99_ms": round(p99, 2)}
            results[name] = line
            print(json.dumps(line), flush=True)
        for name in ("postgresql", "mariadb"):
            if name not in urls:
                continue
            db = servers[0] if name == "postgresql" else servers[-1]
            url = db.url(db.create_database())
            ctx = mp.get_context("spawn")
            out = ctx.Queue()
            t0 = time.perf_counter()
            procs = [ctx.Process(target=_child, args=(url, str(work), trades[i::2], f"s{i}", out)) for i in (0, 1)]
            for p in procs:
                p.start()
            got = [out.get() for _ in procs]
            for p in procs:
                p.join()
            elapsed = time.perf_counter() - t0
            p50, p99 = _query_latency(url, str(work), "reader")
            line = {"store": name, "shards": 2, "events_per_s": round(n / elapsed),
                    "per_worker_events_per_s": [round(g["events"] / g["seconds"]) for g in got],
                    "rows": sum(g["rows"] for g in got) // 2,
                    "query_p50_ms": round(p50, 2), "query_p99_ms": round(p99, 2),
                    "note": "wall time includes starting two processes"}
            print(json.dumps(line), flush=True)
        if "postgresql" in results:
            ratio = results["postgresql"]["events_per_s"] / results["sqlite"]["events_per_s"]
            rows = results["postgresql"]["writer_rows_per_s"] or 0
            print(f"PostgreSQL / SQLite event rate: {ratio:.2f} (target 0.7): {'met' if ratio >= 0.7 else 'NOT met'}")
            print(f"PostgreSQL base rows/s per worker: {rows:,} (target 100,000): "
                  f"{'met' if rows >= 100_000 else 'NOT met'}")
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)
