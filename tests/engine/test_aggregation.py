"""Incremental aggregation: buckets, out-of-order events, retrieval, SQLite store, restart, purge."""
from __future__ import annotations

import random
import sqlite3

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager
from srota.engine.aggregation.buckets import bucket_start, next_bucket_start, parse_time, parse_within_pattern
from srota.engine.event import Event
from srota.grammar.model import TimeDuration as D

SEC = 1000


def _ts(text: str) -> int:
    return parse_time(text)[0]


def _app(body: str, annotations: str = "", every: str = "sec ... hour", by: str = "by ts") -> str:
    return (f"define stream S (k string, v double, ts string);\n{annotations}\n"
            f"define aggregation A from S select {body} group by k aggregate {by} every {every};")


def _runtime(text: str):
    rt = SiddhiManager().create_siddhi_app_runtime(text)
    rt.start()
    return rt, rt.get_input_handler("S"), rt.context.aggregations["A"]


def _table(agg, duration):
    return [(ts, key, agg.spec.finalize(ts, key, row)) for ts, key, row in agg.store.scan(duration)]


# ------------------------------------------------------------------------ buckets
def test_calendar_buckets_months_years_and_offsets():
    t = _ts("2018-02-14 10:11:12")
    assert bucket_start(t, D.MONTHS) == _ts("2018-02-01 00:00:00")
    assert next_bucket_start(bucket_start(t, D.MONTHS), D.MONTHS) == _ts("2018-03-01 00:00:00")
    assert bucket_start(t, D.YEARS) == _ts("2018-01-01 00:00:00")
    ts, off = parse_time("2018-01-05 02:00:00 +05:30")
    assert bucket_start(ts, D.DAYS, off) == parse_time("2018-01-05 00:00:00 +05:30")[0]
    assert parse_within_pattern("2018-01-** **:**:**") == (_ts("2018-01-01 00:00:00"), _ts("2018-02-01 00:00:00"))


# ------------------------------------------------------------------------ the seed's worked example
SEED_EVENTS = ["2018-01-01 05:59:58", "2018-01-01 05:59:58", "2018-01-01 05:59:59",
               "2018-01-01 06:00:00", "2018-01-01 06:00:01", "2018-01-01 06:00:02"]


def test_worked_example_events_0_to_5():
    # Playback at the events' times: under the wall clock the bucket timer would close the 2018
    # buckets at once (Siddhi 5), and the example is about what each event closes.
    rt, h, agg = _runtime("@app:playback\n" + _app("k, sum(v) as total, count() as n", every="sec, min, hour"))
    for i, t in enumerate(SEED_EVENTS):
        h.send(["a", float(i), t], timestamp=_ts(t))
    seconds = [(ts, row[-2:]) for ts, _, row in _table(agg, D.SECONDS)]
    assert seconds == [(_ts(SEED_EVENTS[0]), (1.0, 2)), (_ts(SEED_EVENTS[2]), (2.0, 1)),
                       (_ts(SEED_EVENTS[3]), (3.0, 1)), (_ts(SEED_EVENTS[4]), (4.0, 1))]
    assert [(ts, row[-2:]) for ts, _, row in _table(agg, D.MINUTES)] == [(_ts("2018-01-01 05:59:00"), (3.0, 3))]
    # Siddhi 5 (IncrementalExecutor.sendTimerEvent): at 06:00:00 hour 05 has ended and is written
    # too; WSO2 SP 4.2's example kept it open until a minute of hour 06 completed
    assert [(ts, row[-2:]) for ts, _, row in _table(agg, D.HOURS)] == [(_ts("2018-01-01 05:00:00"), (3.0, 3))]
    # in memory: second 06:00:02 (event 5), minute 06:00 (events 3, 4), no hour yet
    levels = [{k[0]: agg.spec.finalize(k[0], k[1], r)[-2:] for k, r in lvl.buckets.items()} for lvl in agg._levels]
    assert levels == [{_ts(SEED_EVENTS[5]): (5.0, 1)}, {_ts("2018-01-01 06:00:00"): (7.0, 2)}, {}]
    got = rt.query("from A within '2018-01-01 **:**:**' per 'hours' select AGG_TIMESTAMP, k, total, n "
                   "order by AGG_TIMESTAMP")
    assert [e.data for e in got] == [(_ts("2018-01-01 05:00:00"), "a", 3.0, 3), (_ts("2018-01-01 06:00:00"), "a", 12.0, 3)]
    rt.shutdown()


# ------------------------------------------------------------------------ out-of-order events
BUFFER_SEQ = [50, 51, 52, 53, 51, 53, 54, 50]  # the seed's @BufferSize example (seconds)


def _buffer_run(annotations: str):
    rt, h, agg = _runtime(_app("k, count() as n", annotations, every="sec, min"))
    for i, s in enumerate(BUFFER_SEQ):
        h.send(["a", float(i), f"2018-01-01 00:00:{s:02d}"])
    agg.complete_all()
    counts = {ts % 60_000 // SEC: row[-1] for ts, _, row in _table(agg, D.SECONDS)}
    rt.shutdown()
    return counts, agg


def test_a_double_sum_starts_from_zero():
    # Siddhi's sum executor starts from 0.0: a bucket of one -0.0 (or of a null, then a
    # -0.0) sums to 0.0, not -0.0
    rt, h, _ = _runtime("@app:playback\n" + _app("k, sum(v) as total"))
    t = "2018-01-01 05:58:10"
    for row in (["a", -0.0, t], ["b", None, t], ["b", -0.0, t]):
        h.send(row, timestamp=_ts(t))
    got = rt.query("from A within '2018-**-** **:**:**' per 'seconds' select k, total")
    rt.shutdown()
    assert sorted((e.data[0], str(e.data[1])) for e in got) == [("a", "0.0"), ("b", "0.0")]


def test_a_long_sum_wraps_as_java_does():
    # Siddhi's long sum adds Java longs: past Long.MAX_VALUE it wraps, in a bucket and across
    rt = SiddhiManager().create_siddhi_app_runtime(
        "@app:playback\ndefine stream S (k string, v long);\n"
        "define aggregation A from S select k, sum(v) as total group by k aggregate every sec ... hour;")
    rt.start()
    h = rt.get_input_handler("S")
    t0 = 1_700_000_000_000
    for ts, v in ((t0, 2**63 - 1), (t0, 1), (t0 + 1500, 2**63 - 1), (t0 + 1500, 2)):
        h.send(["a", v], timestamp=ts)
    got = rt.query("from A within 1699990000000L, 1700010000000L per 'hours' select k, total")
    rt.shutdown()
    # (-2**63) + (2**63 + 1 wrapped to -2**63 + 1) wraps again to 1
    assert [list(e.data) for e in got] == [["a", 1]]


def test_buffer_keeps_late_events_in_their_bucket():
    counts, agg = _buffer_run("@BufferSize('3')")
    assert counts == {50: 2, 51: 2, 52: 1, 53: 2, 54: 1}  # event 8 still lands in second 50
    assert agg.dropped == 0


def test_ignore_events_older_than_buffer():
    counts, agg = _buffer_run("@BufferSize('3') @IgnoreEventsOlderThanBuffer('true')")
    assert counts == {50: 1, 51: 2, 52: 1, 53: 2, 54: 1}
    assert agg.dropped == 1


def test_without_buffer_ignore_drops_every_late_event():
    counts, agg = _buffer_run("@IgnoreEventsOlderThanBuffer('true')")
    assert counts == {50: 1, 51: 1, 52: 1, 53: 2, 54: 1}
    assert agg.dropped == 2  # the second 51 and the last 50


def test_latest_value_is_from_the_latest_event_time_ties_to_later_arrival():
    rt, h, agg = _runtime(_app("k, v * 2 as last, max(v) as mx", every="sec, min"))
    h.send(["a", 1.0, "2018-01-01 00:00:05"])
    h.send(["a", 9.0, "2018-01-01 00:00:01"])  # older: not the latest
    h.send(["a", 3.0, "2018-01-01 00:00:05"])  # tie: later arrival wins
    got = rt.query("from A within '2018-01-01 00:**:** **' per 'minutes' select last, mx"
                   .replace(" **'", "'"))
    assert [e.data for e in got] == [(6.0, 9.0)]
    rt.shutdown()


# ------------------------------------------------------------------------ joins and on-demand
def test_join_with_per_from_stream_attribute_and_on_condition():
    text = (_app("k, avg(v) as av, sum(v) as total", every="sec ... day")
            + "define stream Q (k string, per string);"
              "@info(name='q') from Q as q join A as a on q.k == a.k within '2018-01-01 **:**:**' per q.per "
              "select AGG_TIMESTAMP, a.k, av, total order by AGG_TIMESTAMP insert into Out;")
    rt, h, agg = _runtime(text)
    for i, t in enumerate(SEED_EVENTS):
        h.send(["a" if i % 2 else "b", float(i), t])
    got = []
    rt.add_callback("Out", lambda evs: got.extend(e.data for e in evs))
    rt.get_input_handler("Q").send(["a", "minutes"])
    assert got == [(_ts("2018-01-01 05:59:00"), "a", 1.0, 1.0), (_ts("2018-01-01 06:00:00"), "a", 4.0, 8.0)]
    got.clear()
    rt.get_input_handler("Q").send(["b", "days"])
    assert got == [(_ts("2018-01-01 00:00:00"), "b", 2.0, 6.0)]
    rt.shutdown()


def test_on_demand_with_wildcard_within_and_selector_aggregation():
    rt, h, agg = _runtime(_app("k, sum(v) as total", every="sec ... month"))
    for i, t in enumerate(SEED_EVENTS):
        h.send(["a" if i < 3 else "b", float(i), t])
    got = rt.query("from A within '2018-**-** **:**:**' per 'months' select k, total")
    assert sorted(e.data for e in got) == [("a", 3.0), ("b", 12.0)]
    got = rt.query("from A on k == 'b' within '2018-01-01 06:**:**' per 'seconds' select sum(total) as t")
    assert [e.data for e in got] == [(12.0,)]
    with pytest.raises(SiddhiAppCreationError):
        rt.query("from A within '2018-**-** **:**:**' per 'years' select k")
    rt.shutdown()


# ------------------------------------------------------------------------ creation errors
@pytest.mark.parametrize("text", [
    _app("k, sum(k) as s"),
    _app("k, stdDev(v) as s"),
    _app("k, count() as n", "@PartitionById"),
    _app("k, count() as n", "@BufferSize('2')", by=""),
    _app("k, count() as n", "@purge(enable='true', @retentionPeriod(sec='10 sec'))"),
    _app("k, count() as n", "@purge(enable='true', @retentionPeriod(days='40 days'))"),
    _app("k, count() as n", "@store(type='cassandra')"),
])
def test_creation_errors(text):
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(text)


# ------------------------------------------------------------------------ SQLite store
def _double_keyed_run(store: str = "") -> list[list]:
    rt, h, _ = _runtime(
        f"@app:playback\ndefine stream S (k double, v double, ts long);\n{store}\n"
        "define aggregation A from S select k, count() as n, distinctCount(v) as dv "
        "group by k aggregate by ts every sec, min;")
    t0 = 1_700_000_000_000
    nan = float("nan")
    # every NaN a fresh object, as a decoded message gives them
    for i, (k, v) in enumerate(((0.0, 0.0), (-0.0, -0.0), (float("nan"), nan), (float("nan"), float("nan")),
                                (0.0, -0.0), (1.0, 0.0), (1.0, -0.0), (1.0, float("nan")))):
        h.send([k, v, t0 + 1 + i], timestamp=t0 + 1 + i)
    h.send([1.0, float("nan"), t0 + 1500], timestamp=t0 + 1500)  # the next second: the first is closed
    got = rt.query("from A within 1699990000000L, 1700010000000L per 'minutes' select k, n, dv")
    rt.shutdown()
    return sorted([str(e.data[0]), e.data[1], e.data[2]] for e in got)


def test_a_double_group_by_keeps_the_zeros_apart_and_the_nans_together():
    # Siddhi's group key is the values' text ("0.0", "-0.0", "NaN") and its distinctCount set a
    # HashSet of Doubles: Double.equals tells -0.0 from 0.0 and takes every NaN for one value
    # (recorded: aggregation-group-by-double-zeros-and-nan)
    assert _double_keyed_run() == [["-0.0", 1, 1], ["0.0", 2, 2], ["1.0", 4, 3], ["nan", 2, 1]]


def test_a_double_group_by_with_a_sqlite_store_writes_and_reads_its_buckets(tmp_path):
    # (SQLite's primary key takes -0.0 for 0.0 and stores NaN as null, as a database's would
    # for Siddhi's rdbms tables: the closed second's -0.0 row merges into the 0.0 row there;
    # the read of the open minute comes from memory)
    store = f"@store(type='sqlite', database='{tmp_path / 'agg.db'}')"
    assert _double_keyed_run(store) == [["-0.0", 1, 1], ["0.0", 2, 2], ["1.0", 4, 3], ["nan", 2, 1]]


def _zeros_run(chunked: bool, times: tuple[int, ...], values: tuple[float, ...]) -> list[str]:
    rt, h, _ = _runtime(
        "@app:playback\ndefine stream S (k string, v double, ts long);\n"
        "define aggregation A from S select k, min(v) as lo, max(v) as hi group by k aggregate by ts every sec, min;")
    t0 = 1_700_000_000_000
    rows = [["a", v, t0 + t] for t, v in zip(times, values, strict=True)]
    if chunked:
        h.send_events([Event(r[2], tuple(r)) for r in rows])
    else:
        for r in rows:
            h.send(r, timestamp=r[2])
    got = rt.query("from A within 1699990000000L, 1700010000000L per 'minutes' select lo, hi")
    rt.shutdown()
    return [str(v) for e in got for v in e.data]


def test_a_read_adds_open_buckets_in_the_order_of_siddhis_maps():
    # IncrementalDataAggregator keeps one entry per store key ("<second>:-:a:-:-<minute>" for
    # the open second, "<minute>:-:a:-:-<minute>" for the minute) in a map filled by
    # computeIfAbsent, newest first in a bin: the second's -0.0 is added before the minute's 0.0,
    # and min and max keep the first of equal values
    # (recorded: aggregation-read-adds-open-buckets-in-siddhis-map-order)
    assert _zeros_run(False, (1, 1005), (0.0, -0.0)) == ["-0.0", "-0.0"]
    assert _zeros_run(False, (1, 1005), (-0.0, 0.0)) == ["0.0", "0.0"]


def test_under_playback_a_chunk_closes_buckets_by_its_own_time():
    # Siddhi's root closes by AGG_TIMESTAMP, a chunk's time (its last event's): the chunk's three
    # events stay open under their own seconds, and the read adds them in the store's map order
    # (recorded: aggregation-chunk-closes-buckets-by-arrival)
    assert _zeros_run(True, (1, 1005, 2005), (0.0, -0.0, 5.0)) == ["-0.0", "5.0"]
    assert _zeros_run(False, (1, 1005, 2005), (0.0, -0.0, 5.0)) == ["0.0", "5.0"]


def test_under_playback_a_late_coarser_bucket_stays_open_until_its_granularity_moves_on():
    # the chunk's IBM of 22:13:59 reaches the minutes after 22:13 closed, and stays open under its
    # own minute: the hour's read adds hour (MAX), second (-Infinity) and that minute (MAX) in
    # that order, -Infinity (adding the two MAX first gives NaN)
    # (recorded: aggregation-late-minute-stays-open-under-playback)
    rt, h, agg = _runtime(
        "@app:playback\ndefine stream S (sym string, price double, ts long);\n"
        "define aggregation A from S select sym, sum(price) as total group by sym "
        "aggregate by ts every sec, min, hour;")
    big = 1.7976931348623157e308
    h.send(["IBM", big, 1_700_000_008_345], timestamp=1_700_000_008_345)
    h.send_events([Event(1_700_000_039_821, ("IBM", big, 1_700_000_039_821)),
                   Event(1_700_000_040_147, ("ORCL", 35.4, 1_700_000_040_147))])
    h.send(["IBM", float("-inf"), 1_700_000_098_560], timestamp=1_700_000_098_560)
    assert (1_699_999_980_000, ("IBM",)) in agg._levels[1].buckets  # 22:13 open again, and still
    got = rt.query("from A on sym == 'IBM' within 1699920000000L, 1700006400000L per 'hours' select total")
    rt.shutdown()
    assert [e.data[0] for e in got] == [float("-inf")]


def test_sqlite_tables_hold_base_values_keyed_by_time_and_group(tmp_path):
    db = tmp_path / "agg.db"
    # playback at the events' times: the wall clock's bucket timer would close the 2018 buckets
    rt, h, agg = _runtime("@app:playback\n" + _app("k, avg(v) as av, distinctCount(v) as dv, v + 1 as nxt",
                                                    f"@store(type='sqlite', database='{db}')", every="sec, min"))
    for i, t in enumerate(SEED_EVENTS):
        h.send(["a", float(i % 2), t], timestamp=_ts(t))
    rt.shutdown()
    conn = sqlite3.connect(db)
    info = conn.execute('PRAGMA table_info("A_SECONDS")').fetchall()
    cols = {r[1]: r[5] for r in info}  # name -> primary key position
    assert cols == {"AGG_TIMESTAMP": 1, "k": 2, "AGG_TIMEZONE": 0, "AGG_LAST_EVENT_TIMESTAMP": 0, "nxt": 0,
                    "AGG_SUM_v": 0, "AGG_COUNT": 0, "AGG_SET_v": 0}
    assert conn.execute('SELECT * FROM "A_MINUTES"').fetchall() == [
        (_ts("2018-01-01 05:59:00"), "a", "+00:00", _ts(SEED_EVENTS[2]), 1.0, 1.0, 3, "[0.0,1.0]")]
    assert {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")} == {
        "A_SECONDS", "A_MINUTES"}


def _random_events(n: int, seed: int = 7) -> list[list]:
    rnd = random.Random(seed)
    t = _ts("2018-01-31 23:50:00")
    out = []
    for _ in range(n):
        t += rnd.randint(0, 3000)
        ts = t - rnd.randint(0, 2500)  # out of order, within a 3-second buffer
        out.append([f"k{rnd.randint(0, 3)}", rnd.randint(-20, 20) * 0.5, ts])
    return out


def _restart_app(db) -> str:
    return ("define stream S (k string, v double, ts long);\n"
            f"@store(type='sqlite', database='{db}') @BufferSize('3')\n"
            "define aggregation A from S select k, sum(v) as total, count() as n, max(v) as mx, v as last "
            "group by k aggregate by ts every sec ... month;")


def _dump(db) -> dict:
    conn = sqlite3.connect(db)
    return {t: sorted(conn.execute(f'SELECT * FROM "A_{t}"').fetchall())
            for t in ("SECONDS", "MINUTES", "HOURS", "DAYS", "MONTHS")}


def test_restart_recreates_open_buckets_and_ignores_resent_events(tmp_path):
    events = _random_events(4000)
    rt = SiddhiManager().create_siddhi_app_runtime(_restart_app(tmp_path / "whole.db"))
    h = rt.get_input_handler("S")
    for e in events:
        h.send(e)
    rt.context.aggregations["A"].complete_all()
    rt.shutdown()

    cut = 2600
    rt = SiddhiManager().create_siddhi_app_runtime(_restart_app(tmp_path / "cut.db"))
    h = rt.get_input_handler("S")
    for e in events[:cut]:
        h.send(e)
    rt.shutdown()  # stops mid-stream: the open buckets are lost
    rt = SiddhiManager().create_siddhi_app_runtime(_restart_app(tmp_path / "cut.db"))
    h = rt.get_input_handler("S")
    for e in events[cut - 300:]:  # the source resends from an earlier offset
        h.send(e)
    agg = rt.context.aggregations["A"]
    assert agg.dropped > 0
    agg.complete_all()
    rt.shutdown()
    assert _dump(tmp_path / "cut.db") == _dump(tmp_path / "whole.db")


def test_snapshot_restores_open_buckets_without_recreation():
    text = _app("k, sum(v) as total", every="sec, min")
    rt, h, agg = _runtime(text)
    for i, t in enumerate(SEED_EVENTS[:4]):
        h.send(["a", float(i), t])
    snap = rt.snapshot()
    rt.shutdown()
    rt2, h2, agg2 = _runtime(text)
    rt2.restore(snap)
    for i, t in enumerate(SEED_EVENTS[4:], start=4):
        h2.send(["a", float(i), t])
    got = rt2.query("from A within '2018-01-01 **:**:**' per 'minutes' select AGG_TIMESTAMP, total "
                       "order by AGG_TIMESTAMP")
    assert [e.data[1] for e in got] == [3.0, 12.0]
    rt2.shutdown()


# ------------------------------------------------------------------------ purging
def test_purge_keeps_rows_within_retention_and_never_outruns_coarser_table(tmp_path):
    db = tmp_path / "p.db"
    text = ("define stream S (k string, v double, ts long);\n"
            f"@store(type='sqlite', database='{db}')\n"
            "@purge(enable='true', interval='10 sec', @retentionPeriod(sec='120 sec', min='3 hours', hours='all'))\n"
            "define aggregation A from S select k, sum(v) as total group by k aggregate by ts every sec ... day;")
    rt = SiddhiManager().create_siddhi_app_runtime(text)
    h = rt.get_input_handler("S")
    start = _ts("2018-01-01 00:00:00")
    for n in range(0, 5 * 3600, 7):  # five hours, one event every 7 seconds
        h.send(["a", 1.0, start + n * SEC])
    agg = rt.context.aggregations["A"]
    agg.store.flush()
    before = _dump_tables(db)
    now = start + 5 * 3600 * SEC
    agg.purge(now)
    after = _dump_tables(db)
    # seconds: retention says keep >= now - 120 s, but the minutes table only holds minutes up to
    # the newest dispatched minute, so seconds after its end stay too
    newest_minute = max(r[0] for r in after["MINUTES"])
    bound_sec = min(now - 120 * SEC, newest_minute + 60 * SEC)
    assert after["SECONDS"] == [r for r in before["SECONDS"] if r[0] >= bound_sec]
    newest_hour = max(r[0] for r in after["HOURS"])
    bound_min = min(now - 3 * 3600 * SEC, newest_hour + 3600 * SEC)
    assert after["MINUTES"] == [r for r in before["MINUTES"] if r[0] >= bound_min]
    assert after["HOURS"] == before["HOURS"]
    assert after["DAYS"] == before["DAYS"] == []
    # no finer row was purged before a coarser row holding it existed
    assert all(bucket_start(r[0], D.HOURS) <= newest_hour for r in before["MINUTES"] if r not in after["MINUTES"])
    rt.shutdown()


def _dump_tables(db) -> dict:
    conn = sqlite3.connect(db)
    return {t: sorted(conn.execute(f'SELECT * FROM "A_{t}"').fetchall())
            for t in ("SECONDS", "MINUTES", "HOURS", "DAYS")}


def test_an_arrival_time_read_gives_the_tables_rows_in_time_order_then_the_open_buckets():
    # Siddhi adds the open buckets to the table's rows (IncrementalAggregateCompileCondition.find,
    # arrival time): an on-demand `group by` keeps each group's last row, the newest bucket's.
    # Srota ordered these rows as event-time reads are (a HashMap of bucket and key), which for
    # these seconds put the newest bucket first and gave the middle one's price.
    t0 = 1_700_000_002_000
    rt = SiddhiManager().create_siddhi_app_runtime("""@app:playback
    define stream S (symbol string, price double);
    define aggregation A from S select symbol, sum(price) as total, price as last
    group by symbol aggregate every sec...min;
    """)
    rt.start()
    for n, price in enumerate((10.0, 20.0, 30.0)):  # three seconds: two written, one open
        rt.get_input_handler("S").send(("IBM", price), t0 + 1000 * n + 10)
    rows = rt.query(f'from A within {t0 - 60_000}L, {t0 + 60_000}L per "seconds" '
                    "select symbol, last group by symbol")
    assert [tuple(e.data) for e in rows] == [("IBM", 30.0)]
    rt.shutdown()
