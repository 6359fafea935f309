"""Parity: the live engine and the Spark backfill job write identical aggregation tables.

Random events with real epoch timestamps (and time strings in several UTC offsets, one key
mixing them), out of order beyond the buffer, across minute, hour, day, month and year
boundaries; every aggregate, every granularity, every attribute type; JSON, CSV and Parquet.
"""
from __future__ import annotations

import csv
import json
import random
import sqlite3

import pytest
from srota.engine import SiddhiManager
from srota.engine.aggregation.buckets import format_offset, parse_time
from srota.engine.types import f32

pytestmark = [pytest.mark.spark, pytest.mark.integration]

KEYS = ["IBM", "WSO2", "GOOG", "ORCL", "MSFT"]
START = parse_time("2023-12-31 21:30:00")[0]  # crosses the day, month and year at midnight GMT

ATTRS = ["symbol", "price", "volume", "venue", "qty", "flag", "ts"]
APP_LONG = (
    "define stream Trades (symbol string, price float, volume long, venue int, qty double, flag bool, ts long);\n"
    "@store(type='sqlite', database='{db}') @BufferSize('2')\n"
    "define aggregation TradeAgg from Trades[volume > 0 and (flag or venue != 3)]\n"
    "select symbol, sum(price) as total, avg(qty) as avgQty, count() as trades, count(venue) as venues,\n"
    "       min(volume) as minVol, max(price) as maxPrice, min(qty) as minQty, max(venue) as maxVenue,\n"
    "       sum(venue) as sumVenue, distinctCount(venue) as dVenues, distinctCount(symbol) as dSymbols,\n"
    "       price * 1.1f as lastF, volume * 2 + venue as lastL, qty / 4 as lastQ, flag as lastFlag,\n"
    "       ifThenElse(flag, qty, 0.0) as lastIf, price / volume as ratio\n"
    "group by symbol aggregate by ts every sec ... year;")
APP_TEXT = (
    "define stream Trades (symbol string, price float, volume long, venue int, qty double, flag bool, ts string);\n"
    "define function tag[python] return string {{\n    return data[0] + '-' + str(data[1])\n}};\n"
    "@store(type='sqlite', database='{db}')\n"
    "define aggregation TradeAgg from Trades[venue / volume < 1]\n"
    "select symbol, sum(volume) as vol, count() as trades, max(qty) as maxQty, distinctCount(venue) as dv,\n"
    "       qty + price as last, tag(symbol, venue) as tag\n"
    "group by symbol, venue aggregate by ts every sec, hour, month, year;")


def _events(n: int, seed: int, text_times: bool = False) -> list[dict]:
    rnd = random.Random(seed)
    t = START
    out = []
    for _ in range(n):
        t += rnd.randint(0, 700)
        if rnd.random() < 0.002:
            t += rnd.randint(1, 5) * 3_600_000  # jumps of hours: days, the month and the year
        ts = t - (rnd.randint(0, 3000) if rnd.random() < 0.2 else 0)  # late, beyond a 2 s buffer
        if rnd.random() < 0.01:
            ts -= rnd.randint(60_000, 7_200_000)  # very late
        e = {"symbol": rnd.choice(KEYS), "price": rnd.randint(-400, 4000) / 10,
             "volume": rnd.choice([rnd.randint(-2, 500), None]) if rnd.random() < 0.05 else rnd.randint(-2, 500),
             "venue": rnd.choice([None, *range(1, 7)]) if rnd.random() < 0.1 else rnd.randint(1, 6),
             "qty": rnd.randint(1, 4000) * 0.25, "flag": rnd.random() < 0.7, "ts": ts}
        if text_times:
            # several zones; the key 'IBM' mixes offsets event by event, the others keep one each
            offset = (rnd.choice([0, 19_800_000, -28_800_000, 3_600_000]) if e["symbol"] == "IBM"
                      else {"WSO2": 19_800_000, "GOOG": -28_800_000, "ORCL": 0, "MSFT": 34_200_000}[e["symbol"]])
            e["ts"] = _text(ts, offset) if rnd.random() > 0.002 else "not a time"
        out.append(e)
    return out


def _text(ts: int, offset: int) -> str:
    from datetime import UTC, datetime

    local = datetime.fromtimestamp((ts + offset) / 1000, UTC)
    text = local.strftime("%Y-%m-%d %H:%M:%S") + (f".{ts % 1000:03d}" if ts % 7 == 0 else "")
    return text if offset == 0 and ts % 2 else f"{text} {format_offset(offset)}"


def _live(app_text: str, events: list[dict]) -> None:
    rt = SiddhiManager().create_siddhi_app_runtime(app_text)
    rt.start()
    h = rt.get_input_handler("Trades")
    for e in events:
        # a source mapper hands a float attribute over as a 32-bit value; one event per send,
        # so that a bad time drops only its own event
        h.send([f32(e[n]) if n == "price" else e[n] for n in ATTRS])
    rt.context.aggregations["TradeAgg"].complete_all()
    rt.shutdown()


def _dump(db, tables) -> dict[str, list]:
    conn = sqlite3.connect(db)
    return {t: sorted(conn.execute(f'SELECT * FROM "TradeAgg_{t}"').fetchall(), key=repr) for t in tables}


def _write_csv(path, events) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(ATTRS)
        for e in events:
            w.writerow(["" if e[n] is None else str(e[n]).lower() if isinstance(e[n], bool) else e[n] for n in ATTRS])


def test_live_engine_and_backfill_write_identical_tables(tmp_path, spark):
    """Long epoch times; JSON, CSV and Parquet inputs; every aggregate and granularity."""
    from srota.service.spark.backfill import backfill

    tables = ("SECONDS", "MINUTES", "HOURS", "DAYS", "MONTHS", "YEARS")
    events = _events(20_000, seed=11)
    src = tmp_path / "trades.json"
    src.write_text("".join(json.dumps(e) + "\n" for e in events))
    _live(APP_LONG.format(db=tmp_path / "live.db"), events)
    live = _dump(tmp_path / "live.db", tables)
    assert len(live["YEARS"]) == 2 * len(KEYS) and len(live["MONTHS"]) == 2 * len(KEYS)

    app = tmp_path / "app.siddhi"
    app.write_text(APP_LONG.format(db=tmp_path / "batch.db"))
    lines: list[str] = []
    result = backfill(str(app), "TradeAgg", str(src), "json", spark=spark, progress=lines.append)
    assert _dump(tmp_path / "batch.db", tables) == live
    # a division by an attribute is Spark SQL too: x / 0 is null in Siddhi as in Spark
    assert {path for _, path, _ in result["paths"]} == {"Spark SQL"}, result["paths"]
    assert any(line.startswith("read: ") for line in lines) and any(line.startswith("compute: ") for line in lines)
    assert "latest value ratio = price / volume: Spark SQL" in lines
    # a null venue != 3 is true (Siddhi's NotEqualCompareConditionExpressionExecutor)
    kept = [e for e in events if (e["volume"] or 0) > 0 and (e["flag"] or e["venue"] != 3)]
    assert any(e["venue"] is None and not e["flag"] for e in kept)
    assert result["events"] == len(kept)

    # idempotent: a second run changes nothing
    backfill(str(app), "TradeAgg", str(src), "json", spark=spark, progress=None)
    assert _dump(tmp_path / "batch.db", tables) == live

    # the same events from CSV and from Parquet
    _write_csv(tmp_path / "trades.csv", events)
    app.write_text(APP_LONG.format(db=tmp_path / "csv.db"))
    backfill(str(app), "TradeAgg", str(tmp_path / "trades.csv"), "csv", spark=spark, progress=None)
    assert _dump(tmp_path / "csv.db", tables) == live
    spark.read.json(str(src)).coalesce(1).write.parquet(str(tmp_path / "trades.parquet"))
    app.write_text(APP_LONG.format(db=tmp_path / "pq.db"))
    backfill(str(app), "TradeAgg", str(tmp_path / "trades.parquet"), "parquet", spark=spark, progress=None)
    assert _dump(tmp_path / "pq.db", tables) == live


def test_time_strings_in_several_zones_and_mixed_offsets_in_one_key(tmp_path, spark):
    """Offsets only move an event to epoch ms; buckets align in GMT on both sides, so a key that
    mixes offsets gets the same hours, months and years live and in the backfill.  Granularities
    skip units (sec, hour, month, year); a malformed time is dropped on both sides."""
    from srota.service.spark.backfill import backfill

    tables = ("SECONDS", "HOURS", "MONTHS", "YEARS")
    events = _events(8_000, seed=5, text_times=True)
    assert {e["ts"][-6:] for e in events if e["symbol"] == "IBM" and e["ts"][-6] in "+-"} >= {"+05:30", "-08:00"}
    _live(APP_TEXT.format(db=tmp_path / "live.db"), events)
    # two files: input order is file name, then position (the order the live engine saw)
    _write_csv(tmp_path / "trades-1.csv", events[:4000])
    _write_csv(tmp_path / "trades-2.csv", events[4000:])
    app = tmp_path / "app.siddhi"
    app.write_text(APP_TEXT.format(db=tmp_path / "batch.db"))
    result = backfill(str(app), "TradeAgg", str(tmp_path / "trades-*.csv"), "csv", spark=spark, progress=None)
    live = _dump(tmp_path / "live.db", tables)
    assert live["HOURS"] and _dump(tmp_path / "batch.db", tables) == live
    paths = dict((label, path) for label, path, _ in result["paths"])
    assert paths["latest value tag = tag(symbol, venue)"] == "Python (Arrow, mapInArrow)"
    assert paths["filter [venue / volume < 1]"] == "Spark SQL"
    assert paths["latest value last = qty + price"] == "Spark SQL"


def test_backfill_range_writes_only_whole_buckets(tmp_path, spark):
    from srota.service.spark.backfill import backfill

    events = _events(3000, seed=3)
    src = tmp_path / "t.csv"
    _write_csv(src, events)
    app = tmp_path / "app.siddhi"
    app.write_text(APP_LONG.format(db=tmp_path / "r.db"))
    have = {e["ts"] - e["ts"] % 60_000 for e in events if (e["volume"] or 0) > 0}
    start = min(m for m in have if {m + 60_000, m + 120_000, m + 180_000} <= have)
    end = start + 60_000 * 3 + 30_000
    backfill(str(app), "TradeAgg", str(src), "csv", start, end, spark=spark, progress=None)
    rows = _dump(tmp_path / "r.db", ("SECONDS", "MINUTES", "HOURS"))
    assert rows["SECONDS"] and all(start <= r[0] < end for r in rows["SECONDS"])
    minutes = {r[0] - r[0] % 60_000 for r in rows["SECONDS"]}
    assert {r[0] for r in rows["MINUTES"]} == minutes - {start + 180_000}  # the 4th is half covered
    assert rows["HOURS"] == []


APP_EDGES = (
    "define stream Trades (symbol string, price float, volume long, venue int, qty double, flag bool, ts string);\n"
    "@store(type='sqlite', database='{db}')\n"
    "define aggregation TradeAgg from Trades[not (venue is null) or flag]\n"
    "select symbol, sum(volume / 3) as q, sum(volume % 3) as r, min(venue % -4) as m, max(price / 3f) as pf,\n"
    "       sum(price % 2.5f) as pm, count(qty) as cq, qty > 100.0 and venue < 4 as lastCond,\n"
    "       default(venue, -1) as lastVenue, coalesce(qty, 0.5) as lastQty, symbol == 'IBM' or venue >= 5 as c2\n"
    "group by symbol aggregate by ts every sec ... year;")


def test_edge_semantics_of_translated_expressions_and_time_strings(tmp_path, spark):
    """Integer division and remainder of negative numbers, float remainder, nulls in conditions
    and values, time strings with milliseconds, Z/GMT/lower case, compact offsets, extra spaces,
    single digits, day 31 of February (runs on, as parse_time does) and invalid fields (dropped)."""
    from srota.service.spark.backfill import backfill

    rnd = random.Random(2)
    base = parse_time("2024-02-28 23:00:00")[0]
    texts = ["2024-02-31 10:00:00", "2024-13-01 00:00:00", "2024-02-29 24:00:00", "2024-2-9 1:2:3",
             "  2024-03-01 00:00:00 +0530  ", "2024-03-01 00:00:00 gmt", "2024-02-29 23:59:59.5 Z",
             "2024-02-29 23:59:59.25 UTC", "2024-02-29 23:59:59.123 -08:00", "2024-02-29 23:59:59"]
    events = []
    for _ in range(1500):
        if rnd.random() < 0.3:
            ts = rnd.choice(texts)
        else:
            ms = base + rnd.randint(0, 30 * 3_600_000)
            ts = _text(ms, rnd.choice([0, 19_800_000, -28_800_000]))
        events.append({"symbol": rnd.choice(KEYS), "price": rnd.randint(-200, 200) / 8,
                       "volume": rnd.randint(-50, 50), "venue": rnd.choice([None, *range(-9, 10)]),
                       "qty": rnd.choice([None, rnd.randint(0, 800) * 0.5]), "flag": rnd.random() < 0.5, "ts": ts})
    _live(APP_EDGES.format(db=tmp_path / "live.db"), events)
    src = tmp_path / "e.json"
    src.write_text("".join(json.dumps(e) + "\n" for e in events))
    app = tmp_path / "app.siddhi"
    app.write_text(APP_EDGES.format(db=tmp_path / "batch.db"))
    result = backfill(str(app), "TradeAgg", str(src), "json", spark=spark, progress=None)
    tables = ("SECONDS", "MINUTES", "HOURS", "DAYS", "MONTHS", "YEARS")
    live = _dump(tmp_path / "live.db", tables)
    assert len(live["MONTHS"]) == 2 * len(KEYS) and _dump(tmp_path / "batch.db", tables) == live
    assert {path for _, path, _ in result["paths"]} == {"Spark SQL"}


def test_jdbc_writer_into_sqlite_equals_the_live_engine(tmp_path, spark):
    """``writer='jdbc'`` (a staging table written through the SQLite JDBC driver, then one upsert)
    writes the rows the live engine writes, twice over."""
    from srota.service.spark.backfill import backfill

    tables = ("SECONDS", "MINUTES", "HOURS", "DAYS", "MONTHS", "YEARS")
    events = _events(4_000, seed=13)
    src = tmp_path / "trades.json"
    src.write_text("".join(json.dumps(e) + "\n" for e in events))
    _live(APP_LONG.format(db=tmp_path / "live.db"), events)
    live = _dump(tmp_path / "live.db", tables)
    app = tmp_path / "app.siddhi"
    app.write_text(APP_LONG.format(db=tmp_path / "batch.db"))
    for _ in range(2):
        backfill(str(app), "TradeAgg", str(src), "json", spark=spark, progress=None, writer="jdbc")
        assert _dump(tmp_path / "batch.db", tables) == live
