"""Benchmark: the Spark backfill against a Spark-SQL-only ceiling job, from Parquet and CSV.

    .venv/bin/python tests/bench/bench_backfill.py [N_EVENTS=2000000] [MASTER=local[2]]

Writes N trades (20 symbols, about 50 events per second of event time) as one Parquet file
and one CSV file, then, per format, runs two separate processes:

* **backfill**: ``srota aggregation backfill`` (sum, avg, count, max and a latest value, grouped
  by symbol, every sec ... year), which reports its phases (session, read, compute, write);
* **ceiling**: a Spark-SQL-only job reading the same file once (cached) and grouping it per
  granularity with the same aggregates (``noop`` sink: nothing is written).

Each is timed as a whole process and inside the Spark session.  The target: inside the
session the backfill's read + compute reaches at least 0.8 of the ceiling's events/s; its
write rate (rows upserted into SQLite per second) is reported beside it.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

APP = """define stream Trades (symbol string, price double, volume long, ts long);
@store(type='sqlite', database='{db}')
define aggregation TradeAgg from Trades
select symbol, sum(price) as total, avg(price) as avgPrice, count() as trades, max(price) as maxPrice,
       price * volume as lastValue
group by symbol aggregate by ts every sec ... year;"""

GRANULARITY_SQL = {
    "seconds": "ts - pmod(ts, 1000L)", "minutes": "ts - pmod(ts, 60000L)", "hours": "ts - pmod(ts, 3600000L)",
    "days": "ts - pmod(ts, 86400000L)", "months": "unix_millis(date_trunc('MONTH', timestamp_millis(ts)))",
    "years": "unix_millis(date_trunc('YEAR', timestamp_millis(ts)))",
}


def generate(n: int, directory: Path) -> tuple[Path, Path]:
    """``events.parquet`` and ``events.csv`` with the same n trades (numpy, pyarrow: seconds)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    rng = np.random.default_rng(1)
    symbols = np.array([f"S{i}" for i in range(20)])
    ts = 1_704_067_200_000 + np.cumsum(rng.integers(0, 41, n))  # from 2024-01-01, ~20 ms apart
    ts -= rng.integers(0, 2000, n) * (rng.random(n) < 0.1)  # 10 % late by up to 2 s
    table = pa.table({"symbol": symbols[rng.integers(0, 20, n)], "price": rng.integers(1, 4001, n) * 0.25,
                      "volume": rng.integers(1, 501, n), "ts": ts})
    parquet, csv = directory / "events.parquet", directory / "events.csv"
    pq.write_table(table, parquet)
    pacsv.write_csv(table, csv)
    return parquet, csv


def ceiling(path: str, fmt: str, master: str) -> None:
    """The Spark-SQL-only job (run in its own process); prints its timings as JSON."""
    sys.path.insert(0, str(ROOT))
    from srota.service.spark.session import get_spark

    t0 = time.perf_counter()
    spark = get_spark(master, "srota-bench-ceiling")
    t1 = time.perf_counter()
    if fmt == "csv":
        df = spark.read.schema("symbol string, price double, volume long, ts long").option("header", "true").csv(path)
    else:
        df = spark.read.parquet(path)
    df = df.cache()
    n = df.count()
    df.createOrReplaceTempView("events")
    for bucket in GRANULARITY_SQL.values():
        spark.sql(f"SELECT {bucket} AS b, symbol, sum(price), count(1), max(price), max_by(price * volume, ts) "
                  f"FROM events GROUP BY 1, symbol").write.format("noop").mode("overwrite").save()
    t2 = time.perf_counter()
    spark.stop()
    print(json.dumps({"events": n, "session": t1 - t0, "inside": t2 - t1}))


def _run(cmd: list[str]) -> tuple[float, str, str]:
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - t, done.stdout, done.stderr


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] == "--ceiling":
        ceiling(*args[1:4])
        return
    n = int(next((a for a in args if a.isdigit()), 2_000_000))
    master = next((a for a in args if not a.isdigit()), "local[2]")
    py = sys.executable
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        parquet, csv = generate(n, Path(d))
        print(f"{n:,} events written as Parquet and CSV in {time.perf_counter() - t:.1f}s; master {master}\n")
        header = (f"{'format':8} {'job':9} {'process s':>9} {'session s':>9} {'inside s':>8} "
                  f"{'events/s inside':>15} {'write s':>8} {'rows/s':>8}")
        print(header)
        print("-" * len(header))
        for fmt, path in (("parquet", parquet), ("csv", csv)):
            whole, out, _ = _run([py, __file__, "--ceiling", str(path), fmt, master])
            c = json.loads(out.strip().splitlines()[-1])
            c_rate = c["events"] / c["inside"]
            print(f"{fmt:8} {'ceiling':9} {whole:9.1f} {c['session']:9.1f} {c['inside']:8.1f} {c_rate:15,.0f}")

            app = Path(d) / f"app_{fmt}.siddhi"
            app.write_text(APP.format(db=Path(d) / f"agg_{fmt}.db"))
            whole, out, err = _run([py, "-m", "srota.service.cli", "aggregation", "backfill", str(app),
                                    "--aggregation", "TradeAgg", "--input", str(path), "--format", fmt,
                                    "--master", master])
            m = re.search(r"backfilled (\d+) events into (\d+) rows .*session ([\d.]+)s, read ([\d.]+)s, "
                          r"compute ([\d.]+)s, write ([\d.]+)s", out)
            assert m, out + err
            events, rows = int(m[1]), int(m[2])
            session, read, compute, write = (float(m[i]) for i in range(3, 7))
            inside = read + compute
            rate = events / inside
            print(f"{fmt:8} {'backfill':9} {whole:9.1f} {session:9.1f} {inside:8.1f} {rate:15,.0f} "
                  f"{write:8.1f} {rows / write:8,.0f}")
            print(f"{'':8} {'':9} backfill/ceiling inside the session: {rate / c_rate:.2f} "
                  f"(target >= 0.80); {rows:,} rows written")


if __name__ == "__main__":
    main()
