"""Siddhi 5 semantics of incremental aggregation (and three creation checks found beside them)."""
from __future__ import annotations

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager
from srota.engine.aggregation.buckets import parse_time
from srota.engine.aggregation.runtime import _computed_map_order
from srota.grammar.errors import SiddhiParserError
from srota.grammar.model import TimeDuration as D

T0 = 1_700_000_000_000  # 2023-11-14 22:13:20 GMT


def _ts(text: str) -> int:
    return parse_time(text)[0]


def _rows(agg, duration):
    return sorted((ts, key, agg.spec.finalize(ts, key, row)) for ts, key, row in agg.store.scan(duration))


def test_mixed_utc_offsets_in_one_key_align_in_gmt_like_siddhi():
    """Siddhi 5 aligns hours/days/months/years in the aggregation's zone (aggTimeZone, GMT by
    default), never in the event's offset: the offset only turns the text into epoch ms."""
    rt = SiddhiManager().create_siddhi_app_runtime(
        "define stream S (k string, v long, ts string);\n"
        "define aggregation A from S select k, sum(v) as total, count() as n "
        "group by k aggregate by ts every sec ... year;")
    rt.start()
    h = rt.get_input_handler("S")
    # 2023-12-31 23:30 GMT, written in three offsets; then 2024-01-01 00:10 GMT (+05:30)
    for v, t in [(1, "2023-12-31 23:30:00"), (2, "2024-01-01 05:00:05 +05:30"), (4, "2023-12-31 15:30:10 -08:00"),
                 (8, "2024-01-01 05:40:00 +05:30")]:
        h.send(["a", v, t])
    agg = rt.context.aggregations["A"]
    agg.complete_all()
    hours = [(ts, r[-2:]) for ts, _, r in _rows(agg, D.HOURS)]
    assert hours == [(_ts("2023-12-31 23:00:00"), (7, 3)), (_ts("2024-01-01 00:00:00"), (8, 1))]
    assert [(ts, r[-2:]) for ts, _, r in _rows(agg, D.DAYS)] == [(_ts("2023-12-31 00:00:00"), (7, 3)),
                                                                 (_ts("2024-01-01 00:00:00"), (8, 1))]
    assert [(ts, r[-2:]) for ts, _, r in _rows(agg, D.YEARS)] == [(_ts("2023-01-01 00:00:00"), (7, 3)),
                                                                  (_ts("2024-01-01 00:00:00"), (8, 1))]
    rt.shutdown()


def test_comma_granularities_may_skip_units_and_roll_up_to_the_next_listed():
    rt = SiddhiManager().create_siddhi_app_runtime(
        "define stream S (k string, v long, ts long);\n"
        "define aggregation A from S select k, sum(v) as total group by k aggregate by ts every year, min, day;")
    rt.start()
    agg = rt.context.aggregations["A"]
    assert agg.durations == (D.MINUTES, D.DAYS, D.YEARS)
    h = rt.get_input_handler("S")
    day = 86_400_000
    for i, t in enumerate([T0, T0 + 61_000, T0 + day, T0 + 2 * day + 5]):
        h.send(["a", 10 ** i, t])
    agg.complete_all()
    assert [r[-1] for _, _, r in _rows(agg, D.MINUTES)] == [1, 10, 100, 1000]
    assert [(ts, r[-1]) for ts, _, r in _rows(agg, D.DAYS)] == [
        (_ts("2023-11-14 00:00:00"), 11), (_ts("2023-11-15 00:00:00"), 100), (_ts("2023-11-16 00:00:00"), 1000)]
    assert [r[-1] for _, _, r in _rows(agg, D.YEARS)] == [1111]
    got = rt.query(f"from A within {T0 - day}L, {T0 + 3 * day}L per 'days' select total")
    assert sorted(e.data[0] for e in got) == [11, 100, 1000]
    with pytest.raises(Exception, match="hours"):
        rt.query(f"from A within {T0}L, {T0 + day}L per 'hours' select total")
    rt.shutdown()


def _join_app(order: str) -> str:
    return ("define stream S (k string, v double, ts long);\n"
            "define stream Q (x int);\n"
            "define aggregation A from S select k, sum(v) as total group by k aggregate by ts every sec, min;\n"
            f"@info(name='q') from Q join A within {T0}L, {T0 + 60_000}L per 'seconds' "
            f"select A.k as k, total {order} insert into Out;")


def _run_join(order: str, events) -> list[tuple]:
    rt = SiddhiManager().create_siddhi_app_runtime(_join_app(order))
    got: list[tuple] = []
    rt.add_callback("Out", lambda evs: got.extend(e.data for e in evs))
    rt.start()
    h = rt.get_input_handler("S")
    for e in events:
        h.send(list(e))
    rt.get_input_handler("Q").send([1])
    rt.shutdown()
    return got


def test_order_by_agg_timestamp_that_is_not_selected():
    events = [("a", 1.0, T0 + 3_000), ("a", 2.0, T0 + 1_000), ("a", 4.0, T0 + 2_000), ("a", 8.0, T0 + 1_500)]
    assert _run_join("order by AGG_TIMESTAMP", events) == [("a", 10.0), ("a", 4.0), ("a", 1.0)]
    assert _run_join("order by AGG_TIMESTAMP desc", events) == [("a", 1.0), ("a", 4.0), ("a", 10.0)]


def test_ties_of_agg_timestamp_keep_siddhis_hashmap_order():
    """Siddhi sorts with a stable List.sort: rows of one AGG_TIMESTAMP stay in the order the
    aggregation's find returned them, a HashMap of "<AGG_TIMESTAMP>:-:<key>:-:" keys (filled by
    computeIfAbsent: newest first in a bin)."""
    keys = ["IBM", "WSO2", "GOOG", "ORCL", "MSFT", "AAPL", "AMZN"]
    events = [(k, float(i), T0 + (i % 2) * 1_000) for i, k in enumerate(keys)]
    got = _run_join("order by AGG_TIMESTAMP", events)
    expected = []
    for ts in (T0, T0 + 1_000):
        ks = [(ts, (k,)) for i, k in enumerate(keys) if T0 + (i % 2) * 1_000 == ts]
        order = _computed_map_order([f"{t}:-:{k[0]}:-:" for t, k in ks])
        expected += [(ks[n][1][0], float(keys.index(ks[n][1][0]))) for n in order]
    assert got == expected


@pytest.mark.parametrize("text, error", [
    ("@async(buffer.size='16', workers='1', batch.size.max='0') define stream S (symbol string);\n"
     "from S select symbol insert into O;", SiddhiAppCreationError),
    ("define stream L (timestamp long, ip string);\n"
     "from L#window.externalTimeBatch(timestamp, 1 sec, 1/2, 100) select timestamp, ip, count() as total "
     "insert all events into O;", SiddhiAppCreationError),
    ("define stream C (symbol string); define table T (symbol string, volume long);\n"
     "from C#window.length(1)[symbol=='WSO2'] join T select C.symbol as s, T.volume as v insert into O;",
     SiddhiParserError),
])
def test_rejected_at_creation_as_siddhi_does(text, error):
    with pytest.raises(error):
        SiddhiManager().create_siddhi_app_runtime(text)


def test_a_filter_after_a_window_stays_valid_outside_joins():
    SiddhiManager().create_siddhi_app_runtime(
        "define stream C (symbol string);\nfrom C#window.length(1)[symbol=='WSO2'] select symbol insert into O;")


_STOCKS = ("define stream stockStream (symbol string, price float, lastClosingPrice float, volume long, "
           "quantity int, timestamp long);")
_TRADES = [["WSO2", 50.0, 60.0, 90, 6, 1496289950000], ["WSO22", 75.0, None, 40, 10, 1496289950100],
           ["WSO23", 60.0, 44.0, 200, 56, 1496289952000], ["WSO24", 100.0, None, 200, 16, 1496289952000],
           ["WSO23", 70.0, None, 40, 10, 1496289950090], ["IBM", 101.0, None, 200, 26, 1496289954000],
           ["IBM1", 102.0, None, 200, 100, 1496289954000], ["IBM", 900.0, None, 200, 60, 1496289956000],
           ["IBM1", 500.0, None, 200, 7, 1496289956000]]


def _run_grouped_join(aggregation: str, query: str) -> tuple[list[list], list[list]]:
    rt = SiddhiManager().create_siddhi_app_runtime(
        _STOCKS + aggregation + "define stream inputStream (symbol string); @info(name = 'query1') "
        "from inputStream as i join stockAggregation as s within 1496200000000L, 1596535449000L "
        f"per 'seconds' {query} insert all events into outputStream;")
    current: list[list] = []
    expired: list[list] = []
    rt.add_query_callback("query1", lambda ts, ins, rems: (current.extend(list(e.data) for e in ins or ()),
                                                            expired.extend(list(e.data) for e in rems or ())))
    rt.start()
    stocks = rt.get_input_handler("stockStream")
    for row in _TRADES:
        stocks.send(row)
    rt.get_input_handler("inputStream").send(["IBM"])
    rt.shutdown()
    return current, expired


def test_a_grouped_join_with_an_aggregation_emits_current_rows_then_their_expired_copies():
    """Siddhi's LatestAggregationTestCase.latestTestCase2: the stream side has no window, so
    each stream event is followed by its expired copy and a reset, and the selector takes the
    joined rows of each as a chunk of its own (JoinProcessor, QuerySelector.process(List)):
    a group's current row is not replaced by its expired copy."""
    current, expired = _run_grouped_join(
        "define aggregation stockAggregation from stockStream select symbol, avg(price) as avgPrice, "
        "(price * quantity) as latestPrice aggregate by timestamp every sec...year;",
        "select s.symbol, s.latestPrice group by s.symbol order by AGG_TIMESTAMP")
    want = [["WSO22", 750.0], ["WSO24", 1600.0], ["IBM1", 3500.0]]
    assert sorted(current) == sorted(want)
    assert sorted(expired) == sorted(want)


def test_a_grouped_join_aggregates_each_stream_event_on_its_own():
    """Siddhi's SelectOptimisationAggregationTestCase.aggregationFunctionTestcase10: sum() in
    the joining query over the rows one stream event found, grouped by the aggregation's key."""
    current, _ = _run_grouped_join(
        "define aggregation stockAggregation from stockStream select symbol, sum(price) as sumPrice "
        "group by symbol aggregate by timestamp every sec...year;",
        "select i.symbol, sum(s.sumPrice) as sumPrice group by s.symbol")
    assert sorted(current) == sorted([["IBM", 75.0], ["IBM", 50.0], ["IBM", 130.0], ["IBM", 100.0],
                                      ["IBM", 602.0], ["IBM", 1001.0]])


def test_a_join_with_an_aggregation_hands_on_one_chunk_per_input_chunk():
    """The chunks the selector takes one by one (the rows, their expired copies, the reset)
    go on as one: Siddhi's output rate limiter merges what ``QuerySelector.process(List)``
    gives, so latestTestCase2's callback is called once, with three current and three
    expired events."""
    rt = SiddhiManager().create_siddhi_app_runtime(
        _STOCKS + "define aggregation stockAggregation from stockStream select symbol, avg(price) as avgPrice, "
        "(price * quantity) as latestPrice aggregate by timestamp every sec...year;"
        "define stream inputStream (symbol string); @info(name = 'query1') "
        "from inputStream as i join stockAggregation as s within 1496200000000L, 1596535449000L "
        "per 'seconds' select s.symbol, s.latestPrice group by s.symbol order by AGG_TIMESTAMP "
        "insert all events into outputStream;")
    calls: list[tuple[int, int]] = []
    rt.add_query_callback("query1", lambda ts, ins, rems: calls.append((len(ins or ()), len(rems or ()))))
    rt.start()
    for row in _TRADES:
        rt.get_input_handler("stockStream").send(row)
    rt.get_input_handler("inputStream").send(["IBM"])
    rt.shutdown()
    assert calls == [(3, 3)]


def test_a_join_per_a_granularity_the_aggregation_does_not_keep_fails_its_events_not_the_app(caplog):
    """Siddhi's Aggregation1TestCase.incrementalStreamProcessorTest22: ``per "days"`` on an
    aggregation kept ``sec...hour``; the app is created and the joining event is logged and
    dropped (a warning at creation says so)."""
    app = (_STOCKS + "define aggregation stockAggregation from stockStream select symbol, avg(price) as avgPrice "
           "group by symbol aggregate by timestamp every sec...hour; "
           "define stream inputStream (symbol string); @info(name = 'query1') from inputStream as i join "
           "stockAggregation as s within \"2017-06-** **:**:**\" per \"days\" select s.symbol, avgPrice "
           "insert all events into outputStream;")
    with caplog.at_level("WARNING"):
        rt = SiddhiManager().create_siddhi_app_runtime(app)
    assert "does not keep days" in caplog.text
    got = []
    rt.add_callback("outputStream", got.extend)
    rt.start()
    caplog.clear()
    rt.get_input_handler("inputStream").send(["IBM"])
    rt.shutdown()
    assert got == [] and "does not keep days" in caplog.text
