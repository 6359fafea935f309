"""Port of siddhi-store-rdbms's ``LatestAggregationTestCaseIT`` (io.siddhi.extension.store.rdbms.aggregation):
a "latest" attribute (a plain expression, no aggregator) in an incremental aggregation whose roll-ups live
in an ``@Store(type='rdbms')`` database, run on PostgreSQL and MariaDB."""
from __future__ import annotations

import datetime
import struct
import time
from typing import Any

import pytest

from srota import SiddhiManager
from tests.engine.stores.upstream.support import T0, store

STOCK_STREAM = ("define stream stockStream (symbol string, price float, lastClosingPrice float, volume long , "
                "quantity int, timestamp long);")


def f32(x: float) -> float:
    """``x`` as a Java float (Srota's float attributes are 32-bit)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _collect(rt: Any) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The data of every in-event and every remove-event ``query1`` emits."""
    ins_: list[tuple[Any, ...]] = []
    removed_: list[tuple[Any, ...]] = []

    def cb(ts: int, ins: Any, removed: Any) -> None:
        ins_.extend(tuple(e.data) for e in ins or ())
        removed_.extend(tuple(e.data) for e in removed or ())
    rt.add_query_callback("query1", cb)
    return ins_, removed_


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


def _app(url: str, select: str) -> str:
    """The aggregation (no group by: the latest row of each second wins) and a join selecting ``select``."""
    return (STOCK_STREAM +
            f"{store(url, pool__properties='maximumPoolSize:1')}\n"
            "@purge(enable='false')"
            "define aggregation stockAggregation "
            "from stockStream "
            "select symbol, avg(price) as avgPrice, (price * quantity) as latestPrice "
            "aggregate by timestamp every sec...min ;"
            "define stream inputStream (symbol string); "
            "@info(name = 'query1') "
            "from inputStream as i join stockAggregation as s "
            "within 1496200000000L, 1596535449000L "
            "per \"seconds\" "
            f"{select}"
            "insert all events into outputStream; ")


EVENTS_1_TO_3 = [
    ["WSO2", 50.0, 60.0, 90, 6, 1496289950000],
    ["WSO22", 75.0, None, 40, 10, 1496289950100],
    ["WSO23", 60.0, 44.0, 200, 56, 1496289952000],
    ["WSO24", 100.0, None, 200, 16, 1496289952000],
    ["WSO23", 70.0, None, 40, 10, 1496289950090],  # out of order
    ["IBM", 101.0, None, 200, 26, 1496289954000],
    ["IBM1", 102.0, None, 200, 100, 1496289954000],
    ["IBM", 900.0, None, 200, 60, 1496289956000],
    ["IBM1", 500.0, None, 200, 7, 1496289956000],
]


def _run(rt: Any, rows: list[list[Any]]) -> None:
    """Start ``rt``, send ``rows`` to stockStream, then one event to inputStream (the join's trigger)."""
    rt.start()
    h = rt.get_input_handler("stockStream")
    for i, r in enumerate(rows):
        h.send(r, timestamp=T0 + i)
    rt.get_input_handler("inputStream").send(["IBM"], timestamp=T0 + 100)


def test_latestTestCase1(rdbms_url: str) -> None:
    """Per second, latestPrice and symbol come from the latest event (the out-of-order one does not win);
    the join emits the same four rows as in- and remove-events."""
    rt = SiddhiManager().create_siddhi_app_runtime(_app(
        rdbms_url, "select AGG_TIMESTAMP, s.symbol, s.latestPrice order by AGG_TIMESTAMP "))
    ins, removed = _collect(rt)
    try:
        _run(rt, EVENTS_1_TO_3)
        expected = [
            (1496289950000, "WSO22", f32(750.0)),
            (1496289952000, "WSO24", f32(1600.0)),
            (1496289954000, "IBM1", f32(10200.0)),
            (1496289956000, "IBM1", f32(3500.0)),
        ]
        assert len(ins) == 4, ins
        assert _unsorted_match(ins, expected), ins
        assert len(removed) == 4, removed
        assert _unsorted_match(removed, expected), removed
    finally:
        rt.shutdown()


def test_latestTestCase2(rdbms_url: str) -> None:
    """Grouping the join's output by symbol keeps one row per symbol (the last second's latestPrice)."""
    rt = SiddhiManager().create_siddhi_app_runtime(_app(
        rdbms_url, "select s.symbol, s.latestPrice group by s.symbol order by AGG_TIMESTAMP "))
    ins, removed = _collect(rt)
    try:
        _run(rt, EVENTS_1_TO_3)
        expected = [("WSO22", f32(750.0)), ("WSO24", f32(1600.0)), ("IBM1", f32(3500.0))]
        assert len(ins) == 3, ins
        assert _unsorted_match(ins, expected), ins
        assert len(removed) == 3, removed
        assert _unsorted_match(removed, expected), removed
    finally:
        rt.shutdown()


def test_latestTestCase3(rdbms_url: str) -> None:
    """The latest attributes beside an avg: avgPrice covers every event of the second."""
    rt = SiddhiManager().create_siddhi_app_runtime(_app(
        rdbms_url, "select AGG_TIMESTAMP, s.symbol, s.latestPrice, s.avgPrice order by AGG_TIMESTAMP "))
    ins, removed = _collect(rt)
    try:
        _run(rt, EVENTS_1_TO_3)
        expected = [
            (1496289950000, "WSO22", f32(750.0), 65.0),
            (1496289952000, "WSO24", f32(1600.0), 80.0),
            (1496289954000, "IBM1", f32(10200.0), 101.5),
            (1496289956000, "IBM1", f32(3500.0), 700.0),
        ]
        assert len(ins) == 4, ins
        assert _unsorted_match(ins, expected), ins
        assert len(removed) == 4, removed
        assert _unsorted_match(removed, expected), removed
    finally:
        rt.shutdown()


def test_latestTestCase4(rdbms_url: str) -> None:
    """As case 2 with distinct millisecond timestamps inside each second: the latest by time wins."""
    rt = SiddhiManager().create_siddhi_app_runtime(_app(
        rdbms_url, "select s.symbol, s.latestPrice group by s.symbol order by AGG_TIMESTAMP "))
    ins, _removed = _collect(rt)  # upstream's callback only counts in-events here
    try:
        _run(rt, [
            ["WSO2", 50.0, 60.0, 90, 6, 1496289950010],
            ["WSO22", 75.0, None, 40, 10, 1496289950100],
            ["WSO23", 60.0, 44.0, 200, 56, 1496289952010],
            ["WSO24", 100.0, None, 200, 16, 1496289952020],
            ["WSO23", 70.0, None, 40, 10, 1496289950090],  # out of order
            ["IBM", 101.0, None, 200, 26, 1496289954010],
            ["IBM1", 102.0, None, 200, 100, 1496289954020],
            ["IBM", 900.0, None, 200, 60, 1496289956010],
            ["IBM1", 500.0, None, 200, 7, 1496289956030],
        ])
        expected = [("WSO22", f32(750.0)), ("WSO24", f32(1600.0)), ("IBM1", f32(3500.0))]
        assert len(ins) == 3, ins
        assert _unsorted_match(ins, expected), ins
    finally:
        rt.shutdown()


def test_latestTestCase5(rdbms_url: str) -> None:
    """Event-time aggregation with group by symbol: an on-demand query over the current month summing
    totalPrice per symbol gives IBM 200 (last trade 9600) and WSO2 280 (last trade 1600)."""
    rt = SiddhiManager().create_siddhi_app_runtime(
        STOCK_STREAM +
        f"{store(rdbms_url)}\n"
        "@purge(enable='false')"
        "define aggregation stockAggregation "
        "from stockStream "
        "select symbol, avg(price) as avgPrice, sum(price) as totalPrice, "
        "(price * quantity) as lastTradeValue  "
        "group by symbol "
        "aggregate every sec...min ;")
    h = rt.get_input_handler("stockStream")
    rt.start()
    # arrival time, as Java's InputHandler.send; upstream's sleeps put the pairs in different seconds,
    # each closed (and written to the tables) by the wall-clock timer before the next arrives
    h.send(["WSO2", 50.0, 60.0, 90, 6, 1496289950010])
    h.send(["WSO2", 70.0, None, 40, 10, 1496289950020])
    time.sleep(2)
    h.send(["WSO2", 60.0, 44.0, 200, 56, 1496289952010])
    h.send(["WSO2", 100.0, None, 200, 16, 1496289952020])
    time.sleep(2)
    h.send(["IBM", 100.0, None, 200, 26, 1496289954010])
    h.send(["IBM", 100.0, None, 200, 96, 1496289954020])
    time.sleep(1.5)  # upstream: 5 s
    now = int(time.time() * 1000)
    d = datetime.datetime.fromtimestamp(now / 1000, datetime.timezone(datetime.timedelta(hours=5, minutes=30)))
    events = rt.query("from stockAggregation "
                      f"within \"{d.year}-{d.month:02d}-** **:**:** +05:30\" "
                      "per \"seconds\" "
                      "select symbol, sum(totalPrice) as totalPrice, lastTradeValue "
                      "group by symbol; ")
    assert events is not None
    assert len(events) == 2
    assert _unsorted_match([tuple(e.data) for e in events],
                           [("IBM", 200.0, f32(9600.0)), ("WSO2", 280.0, f32(1600.0))])
    rt.shutdown()
