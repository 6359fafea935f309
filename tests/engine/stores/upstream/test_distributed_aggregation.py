"""Port of siddhi-store-rdbms's ``DistributedAggregationTestCaseIT``
(io.siddhi.extension.store.rdbms.aggregation): ``@PartitionById`` incremental aggregations, several
shards (Siddhi's ``shardId`` system config; ``SiddhiManager(shard_id=...)`` here) writing to one
``@Store(type='rdbms')`` database and any shard's queries composing them, run on PostgreSQL and MariaDB."""
from __future__ import annotations

import datetime
import struct
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from srota import SiddhiManager
from tests.engine.stores.upstream.support import T0, store

STREAMS = ("define stream stockStream (symbol string, price float, lastClosingPrice float, volume long,"
           " quantity int, timestamp long); ")
STREAMS_NO_TS = ("define stream stockStream (symbol string, price float, lastClosingPrice float, volume long,"
                 " quantity int); ")


def f32(x: float) -> float:
    """``x`` as a Java float (Srota's float attributes are 32-bit)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _agg(url: str, select: str, every: str, name: str = "stockAggregation", sharded: bool = True,
         by_timestamp: bool = True) -> str:
    """A ``define aggregation`` as upstream writes it (``@partitionbyid`` with no ``enable``)."""
    return (f"{store(url, pool__properties='maximumPoolSize:1')}\n"
            f"{'@partitionbyid ' + chr(10) if sharded else ''}"
            "@purge(enable='false')\n"
            f"define aggregation {name}\n"
            "from stockStream \n"
            f"{select}"
            f"aggregate {'by timestamp ' if by_timestamp else ''}every {every}; ")


def _unsorted_match(got: list[tuple[Any, ...]], expected: list[tuple[Any, ...]]) -> bool:
    """``SiddhiTestHelper.isUnsortedEventsMatch``: the same rows in any order (floats compared loosely)."""
    rest = list(got)
    for e in expected:
        want = [pytest.approx(v) if isinstance(v, float) else v for v in e]
        hit = next((g for g in rest if list(g) == want), None)
        if hit is None:
            return False
        rest.remove(hit)
    return not rest


@contextmanager
def _shards(*apps: str) -> Iterator[list[Any]]:
    """One started runtime per app, shard ids node1, node2, ... (Siddhi's ``shardId`` system config)."""
    rts = [SiddhiManager(shard_id=f"node{i + 1}").create_siddhi_app_runtime(app) for i, app in enumerate(apps)]
    try:
        for rt in rts:  # as upstream's siddhiAppRuntime.start(): the runtimes' timers run
            rt.start()
        yield rts
    finally:
        for rt in rts:
            rt.shutdown()


def _send(rts: list[Any], sends: list[tuple[int, list[Any]]], now: bool = False) -> None:
    """Send each ``(shard number, row)`` to that shard's stockStream, in order. Arrival time is T0 + i,
    or the wall clock (``now``) where the aggregation uses it (Java's ``InputHandler.send``)."""
    for i, (n, row) in enumerate(sends):
        rts[n - 1].get_input_handler("stockStream").send(
            row, timestamp=int(time.time() * 1000) if now else T0 + i)


def _wait(now: bool = False) -> None:
    """Upstream's ``Thread.sleep(5000)`` before querying. In Siddhi the root executor of each shard
    schedules a wall-clock timer at its bucket's next emit time (``IncrementalExecutor.getTimestamp``
    -> ``scheduler.notifyAt``) which moves the closed second to the shared table: at once for the
    first 2017 event time, and the buckets of the 2017 events that follow (late by then) at the
    timer's next tick, a second later at most; at the next second boundary for arrival time
    (``now``), where a timer late on a loaded host would leave the last second unwritten a while
    longer: those wait 2 s (upstream waits 5)."""
    time.sleep(2.0 if now else 1.2)




def _rows(events: Any) -> list[tuple[Any, ...]]:
    assert events is not None, "Events arrive"
    return [tuple(e.data) for e in events]


SEL = "select symbol,sum(price) as totalPrice,avg(price) as avgPrice \n"
SEL_LAST = "select symbol,sum(price) as totalPrice,avg(price) as avgPrice, (price*quantity) as lastTradeValue \n"

# the twenty sends of tests 11, 12 and 13
SENDS_11 = [
    (1, ["WSO2", 50.0, 60.0, 90, 6, 1496289950000]),
    (2, ["WSO2", 70.0, 60.0, 90, 6, 1496289950000]),
    (3, ["WSO2", 10.0, 65.0, 30, 3, 1496289950010]),
    (1, ["IBM", 100.0, None, 200, 16, 1496289951011]),
    (1, ["IBM", 110.0, None, 200, 16, 1496289951050]),
    (1, ["IBM", 300.0, None, 200, 9, 1496289972000]),
    (2, ["IBM", 500.0, None, 200, 9, 1496289972000]),
    (1, ["IBM", 1000.0, None, 200, 60, 1496289982020]),
    (2, ["WSO2", 400.0, None, 200, 7, 1496289982030]),
    (3, ["WSO2", 35.0, 65.0, 30, 3, 1496289982040]),
    (3, ["WSO2", 5.0, 65.0, 30, 3, 1496289982000]),
    (1, ["WSO2", 135.0, 60.0, 90, 11, 1496289950020]),
    (1, ["WSO2", 135.0, 60.0, 90, 11, 1496289950000]),
    (3, ["IBM", 111.0, None, 200, 9, 1496289972000]),
    (2, ["IBM", 99.0, None, 200, 10, 1496289982000]),
    (3, ["IBM", 11.0, None, 200, 10, 1498289982000]),
    (3, ["IBM", 13.0, None, 200, 10, 1498289982000]),
    (1, ["WSO2", 6.0, 60.0, 90, 6, 1496280950000]),
    (2, ["WSO2", 7.0, 60.0, 90, 6, 1496280950000]),
    (3, ["WSO2", 3.0, 65.0, 30, 3, 1496280950010]),
]


def test_partialAggregationTest1(rdbms_url: str) -> None:
    """Two shards, minute granularity: the second shard's query composes both shards' minutes."""
    app = STREAMS + _agg(rdbms_url, SEL, "sec...year")
    with _shards(app, app) as rts:
        _send(rts, [
            (1, ["WSO2", 50.0, 60.0, 90, 6, 1496289950000]),
            (2, ["WSO2", 70.0, 60.0, 90, 6, 1496289950000]),
            (1, ["IBM", 100.0, None, 200, 16, 1496289951011]),
            (2, ["IBM", 110.0, None, 200, 16, 1496289951011]),
            (1, ["IBM", 300.0, None, 200, 9, 1496289972000]),
            (2, ["IBM", 500.0, None, 200, 9, 1496289972000]),
            (1, ["IBM", 1000.0, None, 200, 60, 1496289982000]),
            (2, ["WSO2", 400.0, None, 200, 7, 1496289982005]),
            (1, ["IBM", 150.0, None, 200, 26, 1496290801000]),
            (2, ["WSO2", 50.0, None, 200, 96, 1496290801001]),
        ])
        _wait()
        got = _rows(rts[1].query("from stockAggregation within 0L, 1543664151000L per "
                                 "'minutes' select AGG_TIMESTAMP, symbol, totalPrice, avgPrice"))
    assert len(got) == 3, got
    assert _unsorted_match(got, [(1496290800000, "WSO2", 200.0, 100.0), (1496289900000, "IBM", 330.0, 82.5),
                                 (1496289960000, "WSO2", 2200.0, 550.0)]), got


def test_partialAggregationTest2(rdbms_url: str) -> None:
    """Three shards, second granularity, queried from the first shard."""
    app = STREAMS + _agg(rdbms_url, SEL, "sec...year")
    with _shards(app, app, app) as rts:
        _send(rts, [
            (1, ["WSO2", 50.0, 60.0, 90, 6, 1496289950000]),
            (2, ["WSO2", 70.0, 60.0, 90, 6, 1496289950000]),
            (3, ["WSO2", 10.0, 65.0, 30, 3, 1496289950010]),
            (1, ["IBM", 100.0, None, 200, 16, 1496289951011]),
            (1, ["IBM", 110.0, None, 200, 16, 1496289951050]),
            (1, ["IBM", 300.0, None, 200, 9, 1496289972000]),
            (2, ["IBM", 500.0, None, 200, 9, 1496289972000]),
            (1, ["IBM", 1000.0, None, 200, 60, 1496289982020]),
            (2, ["WSO2", 400.0, None, 200, 7, 1496289982030]),
            (3, ["WSO2", 35.0, 65.0, 30, 3, 1496289982040]),
            (3, ["WSO2", 5.0, 65.0, 30, 3, 1496289982000]),
        ])
        _wait()
        got = _rows(rts[0].query("from stockAggregation within 0L, 1543664151000L per "
                                 "'seconds' select AGG_TIMESTAMP, totalPrice, avgPrice"))
    assert len(got) == 4, got
    assert _unsorted_match(got, [(1496289972000, 800.0, 400.0), (1496289950000, 130.0, 43.333333333333336),
                                 (1496289982000, 1440.0, 360.0), (1496289951000, 210.0, 105.0)]), got


def test_partialAggregationTest3(rdbms_url: str) -> None:
    """Two shards, hour granularity."""
    app = STREAMS + _agg(rdbms_url, SEL, "sec...year")
    with _shards(app, app) as rts:
        _send(rts, [
            (1, ["WSO2", 50.0, 60.0, 90, 6, 1496289950000]),
            (2, ["WSO2", 70.0, 60.0, 90, 6, 1496289950000]),
            (1, ["IBM", 100.0, None, 200, 16, 1496289951011]),
            (2, ["IBM", 110.0, None, 200, 16, 1496289951011]),
            (1, ["IBM", 300.0, None, 200, 9, 1496289972000]),
            (2, ["IBM", 500.0, None, 200, 9, 1496289972000]),
            (1, ["IBM", 1000.0, None, 200, 60, 1496289982000]),
            (2, ["WSO2", 400.0, None, 200, 7, 1496289982000]),
            (1, ["IBM", 150.0, None, 200, 26, 1496294401000]),
            (2, ["WSO2", 50.0, None, 200, 96, 1496294401000]),
            (1, ["IBM", 250.0, None, 200, 26, 1496375401000]),
            (2, ["WSO2", 10.0, None, 200, 96, 1496375401500]),
            (1, ["IBM", 155.0, None, 200, 26, 1496447401000]),
            (2, ["WSO2", 5.0, None, 200, 96, 1496447401000]),
        ])
        _wait()
        got = _rows(rts[1].query("from stockAggregation within 0L, 1543664151000L per "
                                 "'hours' select AGG_TIMESTAMP, totalPrice, avgPrice"))
    assert len(got) == 4, got
    assert _unsorted_match(got, [(1496444400000, 160.0, 80.0), (1496372400000, 260.0, 130.0),
                                 (1496289600000, 2530.0, 316.25), (1496293200000, 200.0, 100.0)]), got


def test_partialAggregationTest4(rdbms_url: str) -> None:
    """Two shards, day granularity, with a latest value (price*quantity) across shards."""
    app = STREAMS + _agg(rdbms_url, SEL_LAST, "sec...year")
    with _shards(app, app) as rts:
        _send(rts, [
            (1, ["WSO2", 50.0, 60.0, 90, 6, 1496289950000]),
            (2, ["WSO2", 70.0, 60.0, 90, 6, 1496289950000]),
            (1, ["IBM", 100.0, None, 200, 16, 1496289951011]),
            (2, ["IBM", 110.0, None, 200, 16, 1496289951011]),
            (1, ["IBM", 150.0, None, 200, 26, 1496294401000]),
            (2, ["WSO2", 50.0, None, 200, 96, 1496294401003]),
            (1, ["IBM", 250.0, None, 200, 26, 1496375401000]),
            (2, ["WSO2", 10.0, None, 200, 96, 1496375401500]),
            (1, ["IBM", 155.0, None, 200, 26, 1496447401000]),
            (2, ["WSO2", 5.0, None, 200, 96, 1496447401005]),
            (1, ["IBM", 7.0, None, 200, 26, 1500438001000]),
            (2, ["WSO2", 3.0, None, 200, 96, 1500438001500]),
        ])
        _wait()
        got = _rows(rts[1].query("from stockAggregation within 0L, 1543664151000L per "
                                 "'days' select AGG_TIMESTAMP, totalPrice, avgPrice, lastTradeValue"))
    assert len(got) == 3, got
    assert _unsorted_match(got, [(1496361600000, 420.0, 105.0, f32(480.0)),
                                 (1496275200000, 530.0, 88.33333333333333, f32(4800.0)),
                                 (1500422400000, 10.0, 5.0, f32(288.0))]), got


def test_partialAggregationTest5(rdbms_url: str) -> None:
    """Two shards, month granularity."""
    app = STREAMS + _agg(rdbms_url, SEL_LAST, "sec...year")
    with _shards(app, app) as rts:
        _send(rts, [
            (1, ["WSO2", 50.0, 60.0, 90, 6, 1496289950000]),
            (2, ["WSO2", 70.0, 60.0, 90, 6, 1496289950000]),
            (1, ["IBM", 100.0, None, 200, 16, 1496289951011]),
            (2, ["IBM", 110.0, None, 200, 16, 1496289951011]),
            (1, ["IBM", 150.0, None, 200, 26, 1496294401000]),
            (2, ["WSO2", 50.0, None, 200, 96, 1496294401003]),
            (1, ["IBM", 250.0, None, 200, 26, 1496375401000]),
            (2, ["WSO2", 10.0, None, 200, 96, 1496375401500]),
            (1, ["IBM", 155.0, None, 200, 26, 1496447401000]),
            (2, ["WSO2", 5.0, None, 200, 96, 1496447401005]),
            (1, ["IBM", 7.0, None, 200, 26, 1500438001000]),
            (2, ["WSO2", 3.0, None, 200, 96, 1500438001500]),
            (1, ["IBM", 12.0, None, 200, 26, 1503980401000]),
            (2, ["WSO2", 8.0, None, 200, 96, 1503980401500]),
        ])
        _wait()
        got = _rows(rts[1].query("from stockAggregation within 0L, 1543664151000L per "
                                 "'months' select AGG_TIMESTAMP, totalPrice, avgPrice, lastTradeValue"))
    assert len(got) == 3, got
    assert _unsorted_match(got, [(1501545600000, 20.0, 10.0, f32(768.0)),
                                 (1496275200000, 950.0, 95.0, f32(480.0)),
                                 (1498867200000, 10.0, 5.0, f32(288.0))]), got


SENDS_6 = [
    (1, ["WSO2", 50.0, 60.0, 90, 6, 1496289950000]),
    (2, ["WSO2", 70.0, 60.0, 90, 6, 1496289950000]),
    (1, ["IBM", 155.0, None, 200, 26, 1496447401000]),
    (2, ["WSO2", 5.0, None, 200, 96, 1496447401005]),
    (1, ["IBM", 7.0, None, 200, 26, 1500438001000]),
    (2, ["WSO2", 3.0, None, 200, 96, 1500438001500]),
    (1, ["IBM", 12.0, None, 200, 26, 1503980401000]),
    (2, ["WSO2", 8.0, None, 200, 96, 1503980401500]),
    (1, ["IBM", 45.0, None, 200, 16, 1514851260000]),
    (2, ["WSO2", 10.0, None, 200, 86, 1514851260500]),
    (3, ["IBM", 100.0, None, 200, 100, 1517861260000]),
    (3, ["IBM", 100.0, None, 200, 100, 1555734000000]),
]


def test_partialAggregationTest6(rdbms_url: str) -> None:
    """Three shards, year granularity."""
    app = STREAMS + _agg(rdbms_url, SEL_LAST, "sec...year")
    with _shards(app, app, app) as rts:
        _send(rts, SENDS_6)
        _wait()
        got = _rows(rts[1].query("from stockAggregation within 0L, 1655734000000L per "
                                 "'years' select AGG_TIMESTAMP, totalPrice, avgPrice, lastTradeValue"))
    assert len(got) == 3, got
    assert _unsorted_match(got, [(1546300800000, 100.0, 100.0, f32(10000.0)),
                                 (1514764800000, 155.0, 51.666666666666664, f32(10000.0)),
                                 (1483228800000, 310.0, 38.75, f32(768.0))]), got


SENDS_7 = [
    (1, ["WSO2", 50.0, 60.0, 90, 6]),
    (1, ["WSO2", 70.0, 60.0, 90, 6]),
    (2, ["IBM", 155.0, None, 200, 26]),
    (2, ["WSO2", 5.0, None, 200, 96]),
    (1, ["IBM", 7.0, None, 200, 26]),
    (2, ["WSO2", 3.0, None, 200, 96]),
    (3, ["IBM", 100.0, None, 200, 100]),
    (1, ["WSO2", 50.0, 60.0, 90, 6]),
    (3, ["IBM", 100.0, None, 200, 120]),
    (3, ["IBM", 100.0, None, 200, 180]),  # upstream sends this one a second later: the latest event
]


def test_partialAggregationTest7(rdbms_url: str) -> None:
    """Three shards aggregating by arrival time: one year row, the latest value from shard 3's last event."""
    app = STREAMS_NO_TS + _agg(rdbms_url, SEL_LAST, "sec...year", by_timestamp=False)
    with _shards(app, app, app) as rts:
        _send(rts, SENDS_7[:-1], now=True)
        time.sleep(1.0)  # upstream's Thread.sleep(1000): the last event's second is a later one
        _send(rts, SENDS_7[-1:], now=True)
        _wait(now=True)
        got = _rows(rts[0].query("from stockAggregation within 0L, "
                                 f"{int(time.time() * 1000) + 1000000}L per 'years' "
                                 "select avgPrice, totalPrice as sumPrice, lastTradeValue"))
    assert len(got) == 1, got
    assert _unsorted_match(got, [(64.0, 640.0, f32(18000.0))]), got


def test_partialAggregationTest8(rdbms_url: str) -> None:
    """As test 7 through a join whose ``within`` and ``per`` come from the joined stream (time strings
    sent to long attributes, as upstream does)."""
    app = (STREAMS_NO_TS.replace("; ", ";") +
           f"{store(rdbms_url, pool__properties='maximumPoolSize:1')}\n"
           "@partitionbyid "
           "@purge(enable='false')\n"
           "define aggregation stockAggregation "
           "from stockStream "
           "select avg(price) as avgPrice, sum(price) as totalPrice, (price * quantity) "
           "as lastTradeValue  "
           "aggregate every sec...year; "
           "define stream inputStream (symbol string, value int, startTime long, "
           "endTime long, perValue string); "
           "@info(name = 'query1') "
           "from inputStream join stockAggregation "
           "within startTime, endTime "
           "per perValue "
           "select avgPrice, totalPrice as sumPrice,lastTradeValue "
           "insert all events into outputStream; ")
    with _shards(app, app, app) as rts:
        got: list[tuple[Any, ...]] = []
        rts[0].add_query_callback("query1", lambda ts, ins, rem: got.extend(tuple(e.data) for e in ins or ()))
        _send(rts, SENDS_7[:-1], now=True)
        time.sleep(1.0)  # upstream's Thread.sleep(1000)
        _send(rts, SENDS_7[-1:], now=True)
        _wait(now=True)
        year = datetime.date.today().year + 2
        rts[0].get_input_handler("inputStream").send(
            ["IBM", 1, "2017-06-01 09:35:52 +05:30", f"{year}-06-01 09:35:52 +05:30", "years"],
            timestamp=int(time.time() * 1000))
    assert len(got) == 1, got
    assert _unsorted_match(got, [(64.0, 640.0, f32(18000.0))]), got


def test_partialAggregationTest9(rdbms_url: str) -> None:
    """Three shards grouped by symbol, years: the on-demand query and a join agree."""
    app = (STREAMS.replace("volume long,", "volume long, ").replace(" quantity", "quantity") +
           f"{store(rdbms_url, pool__properties='maximumPoolSize:1')}\n"
           "@partitionbyid "
           "@purge(enable='false')\n"
           "define aggregation stockAggregation "
           "from stockStream "
           "select symbol, avg(price) as avgPrice, sum(price) as totalPrice, count() as count "
           "group by symbol "
           "aggregate by timestamp every sec...year; "
           "define stream inputStream (value int, startTime long, "
           "endTime long, perValue string); "
           "@info(name = 'query1') "
           "from inputStream join stockAggregation "
           "within startTime, endTime "
           "per perValue "
           "select AGG_TIMESTAMP, symbol, totalPrice, avgPrice, count "
           "insert all events into outputStream; ")
    with _shards(app, app, app) as rts:
        joined: list[tuple[Any, ...]] = []
        rts[0].add_query_callback("query1", lambda ts, ins, rem: joined.extend(tuple(e.data) for e in ins or ()))
        _send(rts, [*SENDS_6, (1, ["IBM", 1.0, None, 200, 100, 1555734000000])])
        _wait()
        rts[0].get_input_handler("inputStream").send(
            [1, "2015-06-01 09:35:52 +05:30", "2021-06-01 09:35:52 +05:30", "years"], timestamp=T0 + 100)
        got = _rows(rts[0].query("from stockAggregation within 0L, 1643664151000L per "
                                 "'years' select AGG_TIMESTAMP, symbol, totalPrice, avgPrice, count "))
    expected = [(1483228800000, "IBM", 174.0, 58.0, 3), (1514764800000, "WSO2", 10.0, 10.0, 1),
                (1483228800000, "WSO2", 136.0, 27.2, 5), (1514764800000, "IBM", 145.0, 72.5, 2),
                (1546300800000, "IBM", 101.0, 50.5, 2)]
    assert len(got) == 5, got
    assert _unsorted_match(got, expected), got
    assert _unsorted_match(joined, expected), joined


def test_partialAggregationTest10(rdbms_url: str) -> None:
    """Three shards grouped by symbol by arrival time: the join and the on-demand query give one row
    per symbol for the current year."""
    app = (STREAMS_NO_TS.replace("volume long,", "volume long, ").replace(" quantity", "quantity") +
           f"{store(rdbms_url, pool__properties='maximumPoolSize:1')}\n"
           "@partitionbyid "
           "@purge(enable='false')\n"
           "define aggregation stockAggregation "
           "from stockStream "
           "select symbol, avg(price) as avgPrice, sum(price) as totalPrice, count() as count "
           "group by symbol "
           "aggregate every sec...year; "
           "define stream inputStream (value int, startTime long, "
           "endTime long, perValue string); "
           "@info(name = 'query1') "
           "from inputStream join stockAggregation "
           "within startTime, endTime "
           "per perValue "
           "select symbol, totalPrice, avgPrice, count "
           "insert all events into outputStream; ")
    with _shards(app, app, app) as rts:
        joined: list[tuple[Any, ...]] = []
        rts[0].add_query_callback("query1", lambda ts, ins, rem: joined.extend(tuple(e.data) for e in ins or ()))
        _send(rts, SENDS_7, now=True)
        _wait(now=True)
        year = datetime.date.today().year + 2
        rts[0].get_input_handler("inputStream").send(
            [1, "2017-06-01 09:35:52 +05:30", f"{year}-06-01 09:35:52 +05:30", "years"],
            timestamp=int(time.time() * 1000))
        got = _rows(rts[0].query("from stockAggregation within 0L, "
                                 f"{int(time.time() * 1000) + 1000000}L per 'years' "
                                 "select symbol, totalPrice, avgPrice, count "))
    expected = [("IBM", 462.0, 92.4, 5), ("WSO2", 178.0, 35.6, 5)]
    assert len(joined) == 2, joined
    assert _unsorted_match(joined, expected), joined
    assert _unsorted_match(got, expected), got


def test_partialAggregationTest11(rdbms_url: str) -> None:
    """Three shards, out-of-order events: seconds and minutes composed across shards."""
    app = STREAMS + _agg(rdbms_url, SEL, "sec...hour")
    with _shards(app, app, app) as rts:
        _send(rts, SENDS_11)
        _wait()
        secs = _rows(rts[0].query("from stockAggregation within 0L, "
                                  "1543664151000L per 'seconds' select AGG_TIMESTAMP, totalPrice, avgPrice"))
        mins = _rows(rts[0].query("from stockAggregation within 0L, "
                                  "1543664151000L per 'minutes' select AGG_TIMESTAMP, totalPrice, avgPrice"))
    assert len(secs) == 6, secs
    assert len(mins) == 4, mins
    assert _unsorted_match(secs, [
        (1496289972000, 911.0, 303.6666666666667), (1496289950000, 400.0, 80.0),
        (1496289982000, 1539.0, 307.8), (1496280950000, 16.0, 5.333333333333333),
        (1498289982000, 24.0, 12.0), (1496289951000, 210.0, 105.0)]), secs
    assert _unsorted_match(mins, [
        (1496280900000, 16.0, 5.333333333333333), (1496289900000, 610.0, 87.14285714285714),
        (1496289960000, 2450.0, 306.25), (1498289940000, 24.0, 12.0)]), mins


def test_partialAggregationTest12(rdbms_url: str) -> None:
    """Two sharded aggregations in one app (sum and avg, grouped by symbol), hours."""
    app = (STREAMS + _agg(rdbms_url, "select symbol,sum(price) as totalPrice \ngroup by symbol ", "sec...hour",
                          name="stockSumAggregation") +
           _agg(rdbms_url, "select symbol,avg(price) as avgPrice \ngroup by symbol ", "sec...hour",
                name="stockAvgAggregation"))
    with _shards(app, app, app) as rts:
        _send(rts, SENDS_11)
        _wait()
        sums = _rows(rts[0].query("from stockSumAggregation within 0L, "
                                  "1543664151000L per 'hours' select AGG_TIMESTAMP, symbol, totalPrice"))
        avgs = _rows(rts[0].query("from stockAvgAggregation within 0L, "
                                  "1543664151000L per 'hours' select AGG_TIMESTAMP, symbol, avgPrice"))
    assert len(sums) == 4, sums
    assert len(avgs) == 4, avgs
    assert _unsorted_match(sums, [(1496289600000, "WSO2", 840.0), (1498287600000, "IBM", 24.0),
                                  (1496278800000, "WSO2", 16.0), (1496289600000, "IBM", 2220.0)]), sums
    assert _unsorted_match(avgs, [(1496289600000, "WSO2", 105.0), (1498287600000, "IBM", 12.0),
                                  (1496278800000, "WSO2", 5.333333333333333),
                                  (1496289600000, "IBM", 317.14285714285717)]), avgs


def test_partialAggregationTest13(rdbms_url: str) -> None:
    """A sharded and an unsharded aggregation side by side: the unsharded one only has its own
    runtime's events."""
    sharded = _agg(rdbms_url, SEL, "sec...day")
    normal = _agg(rdbms_url, SEL, "sec...day", name="stockNormalAggregation", sharded=False)
    with _shards(STREAMS + sharded + normal, STREAMS + sharded, STREAMS + sharded) as rts:
        _send(rts, SENDS_11)
        _wait()
        agg = _rows(rts[0].query("from stockAggregation within 0L, 1543664151000L per "
                                 "'days' select AGG_TIMESTAMP, symbol, totalPrice"))
        normal_rows = _rows(rts[0].query("from stockNormalAggregation within 0L, "
                                         "1543664151000L per 'days' select AGG_TIMESTAMP, symbol, totalPrice"))
    assert len(agg) == 2, agg
    assert len(normal_rows) == 1, normal_rows
    assert _unsorted_match(agg, [(1498262400000, "IBM", 24.0), (1496275200000, "WSO2", 3076.0)]), agg
    assert _unsorted_match(normal_rows, [(1496275200000, "IBM", 1836.0)]), normal_rows
