"""Parity: the live engine and the Spark backfill job write identical aggregation tables."""
from __future__ import annotations

import json
import random
import sqlite3

import pytest
from srota.engine import SiddhiManager
from srota.engine.aggregation.buckets import parse_time

pytestmark = [pytest.mark.spark, pytest.mark.integration]

TABLES = ("SECONDS", "MINUTES", "HOURS", "DAYS", "MONTHS", "YEARS")
KEYS = ["IBM", "WSO2", "GOOG", "ORCL", "MSFT"]


def _app(db) -> str:
    return ("define stream Trades (symbol string, price double, volume long, venue int, ts long);\n"
            f"@store(type='sqlite', database='{db}') @BufferSize('4')\n"
            "define aggregation TradeAgg from Trades[volume > 0]\n"
            "select symbol, sum(price) as total, avg(price) as avgPrice, count() as trades,\n"
            "       min(volume) as minVol, max(price) as maxPrice, distinctCount(venue) as venues,\n"
            "       price * volume as lastValue, venue as lastVenue\n"
            "group by symbol aggregate by ts every sec ... year;")


def _events(n: int, seed: int = 11) -> list[dict]:
    """n trades from 2018-01-31 22:00 across minute, hour, day and month boundaries, out of order
    by up to 3 seconds (within the 4-second buffer)."""
    rnd = random.Random(seed)
    t = parse_time("2018-01-31 22:00:00")[0]
    out = []
    for _ in range(n):
        t += rnd.randint(0, 150)  # 100k events cover about 2 hours ...
        if rnd.random() < 0.0005:
            t += rnd.randint(1, 3) * 3_600_000  # ... plus a few jumps of hours (days, a month end)
        out.append({"symbol": rnd.choice(KEYS), "price": rnd.randint(1, 4000) * 0.25,
                    "volume": rnd.randint(-2, 500), "venue": rnd.randint(1, 6),
                    "ts": t - rnd.randint(0, 3000)})
    return out


def _dump(db) -> dict[str, list]:
    conn = sqlite3.connect(db)
    return {t: sorted(conn.execute(f'SELECT * FROM "TradeAgg_{t}"').fetchall()) for t in TABLES}


def test_live_engine_and_backfill_write_identical_tables(tmp_path, spark):
    from srota.service.spark.backfill import backfill

    events = _events(100_000)
    assert events[-1]["ts"] - events[0]["ts"] > 2 * 86_400_000 // 24  # several hours at least
    src = tmp_path / "trades.json"
    src.write_text("".join(json.dumps(e) + "\n" for e in events))

    live_db, batch_db = tmp_path / "live.db", tmp_path / "batch.db"
    rt = SiddhiManager().create_siddhi_app_runtime(_app(live_db))
    rt.start()
    h = rt.get_input_handler("Trades")
    names = ["symbol", "price", "volume", "venue", "ts"]
    for e in events:
        h.send([e[n] for n in names])
    agg = rt.context.aggregations["TradeAgg"]
    assert agg.dropped == 0
    agg.complete_all()
    rt.shutdown()

    app = tmp_path / "app.siddhi"
    app.write_text(_app(batch_db))
    result = backfill(str(app), "TradeAgg", str(src), "json", spark=spark, progress=None)
    live, batch = _dump(live_db), _dump(batch_db)
    assert {t: len(rows) for t, rows in live.items()} == {t: len(rows) for t, rows in batch.items()}
    for t in TABLES:
        assert live[t] == batch[t], t
    assert len(live["MONTHS"]) >= 2 * len(KEYS)  # January and February
    assert result["events"] == sum(1 for e in events if e["volume"] > 0)

    # idempotent: a second run changes nothing
    backfill(str(app), "TradeAgg", str(src), "json", spark=spark, progress=None)
    assert _dump(batch_db) == batch


def test_backfill_range_writes_only_whole_buckets(tmp_path, spark):
    from srota.service.spark.backfill import backfill

    events = _events(3000, seed=3)
    src = tmp_path / "t.csv"
    names = ["symbol", "price", "volume", "venue", "ts"]
    src.write_text(",".join(names) + "\n" + "".join(",".join(str(e[n]) for n in names) + "\n" for e in events))
    app = tmp_path / "app.siddhi"
    app.write_text(_app(tmp_path / "r.db"))
    start = parse_time("2018-01-31 22:01:00")[0]
    end = parse_time("2018-01-31 22:02:30")[0]
    backfill(str(app), "TradeAgg", str(src), "csv", start, end, spark=spark, progress=None)
    rows = _dump(tmp_path / "r.db")
    assert rows["SECONDS"] and all(start <= r[0] < end for r in rows["SECONDS"])
    assert {r[0] for r in rows["MINUTES"]} == {start}  # 22:02 is only half covered
    assert rows["HOURS"] == []
