"""Benchmark: Spark backfill throughput (events in, rows written, per second).

    .venv/bin/python tests/bench/bench_backfill.py [N_EVENTS] [MASTER]
"""
from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from srota.service.spark.backfill import backfill  # noqa: E402
from srota.service.spark.session import get_spark  # noqa: E402

APP = """define stream Trades (symbol string, price double, volume long, ts long);
@store(type='sqlite', database='{db}')
define aggregation TradeAgg from Trades
select symbol, sum(price) as total, avg(price) as avgPrice, count() as trades, max(price) as maxPrice,
       price * volume as lastValue
group by symbol aggregate by ts every sec ... year;"""


def main() -> None:
    args = [a for a in sys.argv[1:] if a.isdigit() or a.startswith(("local", "spark://", "yarn", "k8s://"))]
    n = int(next((a for a in args if a.isdigit()), 500_000))
    master = next((a for a in args if not a.isdigit()), "local[*]")
    rnd = random.Random(1)
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "trades.json"
        t = 1_514_764_800_000
        with src.open("w") as f:
            for _ in range(n):
                t += rnd.randint(0, 40)
                f.write(json.dumps({"symbol": f"S{rnd.randint(0, 49)}", "price": rnd.randint(1, 4000) * 0.25,
                                    "volume": rnd.randint(1, 500), "ts": t}) + "\n")
        app = Path(d) / "app.siddhi"
        app.write_text(APP.format(db=Path(d) / "agg.db"))
        spark = get_spark(master, "srota-bench-backfill")
        try:
            t0 = time.perf_counter()
            result = backfill(str(app), "TradeAgg", str(src), "json", spark=spark, progress=None)
            secs = time.perf_counter() - t0
        finally:
            spark.stop()
    rows = sum(result["rows"].values())
    print(f"\nbackfill: {result['events']} events -> {rows} rows in {secs:.1f}s "
          f"({result['events'] / secs:,.0f} events/s, {rows / secs:,.0f} rows/s written)")


if __name__ == "__main__":
    main()
