"""Port of siddhi-store-rdbms's ``AggregationFilterTestCaseIT`` (io.siddhi.extension.store.rdbms.aggregation):
joins and on-demand queries with ``on`` filters over an incremental aggregation whose roll-ups live in
an ``@Store(type='rdbms')`` database, run on PostgreSQL and MariaDB."""
from __future__ import annotations

import datetime
import struct
import time
from typing import Any

import pytest

from srota import SiddhiManager
from tests.engine.stores.upstream.support import T0, store

STOCK_STREAM = ("define stream stockStream (symbol string, price float, lastClosingPrice float, volume long , "
                "quantity int, timestamp {ts});")


def f32(x: float) -> float:
    """``x`` as a Java float (Srota's float attributes are 32-bit)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _collect(rt: Any, name: str = "query1") -> list[tuple[Any, ...]]:
    """The data of every in-event the query ``name`` emits, in arrival order."""
    got: list[tuple[Any, ...]] = []

    def cb(ts: int, ins: Any, removed: Any) -> None:
        for e in ins or ():
            got.append(tuple(e.data))
    rt.add_query_callback(name, cb)
    return got


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


def _send_string_ts_events(h: Any) -> None:
    """The events test cases 1 and 2 share (string timestamps, two out of order)."""
    rows = [
        ["WSO2", 50.0, 60.0, 90, 6, "2017-06-01 04:05:50"],
        ["IBM", 50.0, 60.0, 90, 6, "2017-06-01 04:05:51"],
        ["WSO2", 60.0, 44.0, 200, 56, "2017-06-01 04:05:52"],
        ["WSO2", 100.0, None, 200, 16, "2017-06-01 04:05:52"],
        ["WSO2", 70.0, None, 40, 10, "2017-06-01 04:05:50"],  # out of order
        ["IBM", 100.0, None, 200, 26, "2017-06-01 04:05:54"],
        ["IBM", 100.0, None, 200, 96, "2017-06-01 04:05:54"],
        ["IBM", 50.0, 60.0, 90, 6, "2017-06-01 04:05:50"],  # out of order
        ["IBM", 900.0, None, 200, 60, "2017-06-01 04:05:56"],
        ["IBM", 500.0, None, 200, 7, "2017-06-01 04:05:56"],
        ["IBM", 400.0, None, 200, 9, "2017-06-01 04:06:56"],
        ["IBM", 600.0, None, 200, 6, "2017-06-01 04:07:56"],
        ["IBM", 700.0, None, 200, 20, "2017-06-01 05:07:56"],
    ]
    for i, r in enumerate(rows):
        h.send(r, timestamp=T0 + i)


def _agg(url: str, *, pool: bool = True, by_timestamp: bool = True) -> str:
    """The ``stockAggregation`` definition the tests share."""
    st = store(url, pool__properties="maximumPoolSize:1") if pool else store(url)
    return (f"{st}\n"
            "@purge(enable='false')"
            "define aggregation stockAggregation "
            "from stockStream "
            "select symbol, avg(price) as avgPrice, sum(price) as totalPrice, (price * quantity) "
            "as lastTradeValue  "
            "group by symbol "
            f"aggregate {'by timestamp ' if by_timestamp else ''}every sec...min; ")


def test_aggregationFilterTestCase1(rdbms_url: str) -> None:
    """A join with ``per i.perValue`` (per from the joined stream) returns IBM's four minutes."""
    app = (STOCK_STREAM.format(ts="string") + _agg(rdbms_url) +
           "define stream inputStream (symbol string, value int, startTime string, "
           "endTime string, perValue string); "
           "@info(name = 'query1') "
           "from inputStream as i join stockAggregation as s "
           "on i.symbol == s.symbol "
           "within \"2017-06-01 09:35:00 +05:30\", \"2017-06-01 10:37:57 +05:30\" "
           "per i.perValue "
           "select s.symbol, avgPrice, totalPrice as sumPrice, lastTradeValue  "
           "insert all events into outputStream; ")
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    got = _collect(rt)
    rt.start()
    _send_string_ts_events(rt.get_input_handler("stockStream"))
    rt.get_input_handler("inputStream").send(
        ["IBM", 1, "2017-06-01 09:35:51 +05:30", "2017-06-01 09:35:52 +05:30", "minutes"], timestamp=T0 + 100)
    expected = [
        ("IBM", 283.3333333333333, 1700.0, f32(3500.0)),
        ("IBM", 400.0, 400.0, f32(3600.0)),
        ("IBM", 700.0, 700.0, f32(14000.0)),
        ("IBM", 600.0, 600.0, f32(3600.0)),
    ]
    assert len(got) == 4, got
    assert _unsorted_match(got, expected), got
    rt.shutdown()


def test_aggregationFilterTestCase2(rdbms_url: str) -> None:
    """A join with a constant ``per "minutes"`` also returns each minute's AGG_TIMESTAMP."""
    app = (STOCK_STREAM.format(ts="string") + _agg(rdbms_url) +
           "define stream inputStream (symbol string, value int, startTime string, "
           "endTime string, perValue string); "
           "@info(name = 'query1') "
           "from inputStream as i join stockAggregation as s "
           "on i.symbol == s.symbol "
           "within \"2017-06-01 09:35:00 +05:30\", \"2017-06-01 10:37:57 +05:30\" "
           "per \"minutes\" "
           "select s.symbol, avgPrice, totalPrice as sumPrice, lastTradeValue, AGG_TIMESTAMP  "
           "insert all events into outputStream; ")
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    got = _collect(rt)
    rt.start()
    _send_string_ts_events(rt.get_input_handler("stockStream"))
    rt.get_input_handler("inputStream").send(
        ["IBM", 1, "2017-06-01 09:35:51 +05:30", "2017-06-01 09:35:52 +05:30", "minutes"], timestamp=T0 + 100)
    expected = [
        ("IBM", 283.3333333333333, 1700.0, f32(3500.0), 1496289900000),
        ("IBM", 400.0, 400.0, f32(3600.0), 1496289960000),
        ("IBM", 700.0, 700.0, f32(14000.0), 1496293620000),
        ("IBM", 600.0, 600.0, f32(3600.0), 1496290020000),
    ]
    assert len(got) == 4, got
    assert _unsorted_match(got, expected), got
    rt.shutdown()


def test_aggregationFilterTestCase3(rdbms_url: str) -> None:
    """``within "2017-06-** **:**:**" per "seconds"`` with ``order by AGG_TIMESTAMP`` gives IBM's
    four seconds of June 2017 in time order."""
    app = (STOCK_STREAM.format(ts="long") + _agg(rdbms_url).replace(
               "avg(price) as avgPrice, sum(price) as totalPrice, (price * quantity) as lastTradeValue  ",
               "avg(price) as avgPrice, sum(price) as totalPrice, (price * quantity) as lastTradeValue ") +
           "define stream inputStream (symbol string, value int, startTime string, "
           "endTime string, perValue string); "
           "@info(name = 'query1') "
           "from inputStream as i join stockAggregation as s "
           "on i.symbol == s.symbol "
           "within \"2017-06-** **:**:**\" "
           "per \"seconds\" "
           "select AGG_TIMESTAMP, i.symbol, lastTradeValue, totalPrice "
           "order by AGG_TIMESTAMP "
           "insert all events into outputStream; ")
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    got = _collect(rt)
    rt.start()
    h = rt.get_input_handler("stockStream")
    rows = [
        ["WSO2", 50.0, 60.0, 90, 6, 1496289950000],
        ["WSO2", 70.0, None, 40, 10, 1496289950000],
        ["WSO2", 60.0, 44.0, 200, 56, 1496289952000],
        ["WSO2", 100.0, None, 200, 16, 1496289952000],
        ["WSO2", 50.0, 60.0, 90, 6, 1496289950000],  # out of order
        ["WSO2", 70.0, None, 40, 10, 1496289950000],
        ["IBM", 100.0, None, 200, 26, 1496289954000],
        ["IBM", 100.0, None, 200, 96, 1496289954000],
        ["IBM", 900.0, None, 200, 60, 1496289956000],
        ["IBM", 500.0, None, 200, 7, 1496289956000],
        ["IBM", 400.0, None, 200, 9, 1496290016000],
        ["IBM", 600.0, None, 200, 6, 1496290076000],
        ["CISCO", 700.0, None, 200, 20, 1496293676000],
        ["WSO2", 60.0, 44.0, 200, 56, 1496297276000],
        ["CISCO", 800.0, None, 100, 10, 1496383676000],
        ["CISCO", 900.0, None, 100, 15, 1496470076000],
        ["IBM", 100.0, None, 200, 96, 1499062076000],
        ["IBM", 400.0, None, 200, 9, 1501740476000],
        ["WSO2", 60.0, 44.0, 200, 6, 1533276476000],
        ["WSO2", 260.0, 44.0, 200, 16, 1564812476000],
        ["CISCO", 260.0, 44.0, 200, 16, 1596434876000],
        ["CISCO", 260.0, 44.0, 200, 16, 1606975676000],
    ]
    for i, r in enumerate(rows):
        h.send(r, timestamp=T0 + i)
    rt.get_input_handler("inputStream").send(
        ["IBM", 1, "2017-06-01 09:35:51 +05:30", "2017-06-01 09:35:52 +05:30", "seconds"], timestamp=T0 + 100)
    # isEventsMatch: same rows in the same order
    assert got == [
        (1496289954000, "IBM", f32(9600.0), 200.0),
        (1496289956000, "IBM", f32(3500.0), 1400.0),
        (1496290016000, "IBM", f32(3600.0), 400.0),
        (1496290076000, "IBM", f32(3600.0), 600.0),
    ]
    rt.shutdown()


def test_aggregationFilterTestCase4(rdbms_url: str) -> None:
    """An on-demand query with ``on symbol=="IBM"`` returns IBM's one second, avgPrice 100."""
    rt = SiddhiManager().create_siddhi_app_runtime(
        " " + STOCK_STREAM.format(ts="long") + _agg(rdbms_url).replace("sec...min; ", "sec...min ;"))
    h = rt.get_input_handler("stockStream")
    rt.start()
    rows = [
        ["WSO2", 50.0, 60.0, 90, 6, 1496289950000],
        ["WSO2", 70.0, None, 40, 10, 1496289950000],
        ["WSO2", 60.0, 44.0, 200, 56, 1496289952000],
        ["WSO2", 100.0, None, 200, 16, 1496289952000],
        ["IBM", 100.0, None, 200, 26, 1496289954000],
        ["IBM", 100.0, None, 200, 96, 1496289954000],
    ]
    for i, r in enumerate(rows):
        h.send(r, timestamp=T0 + i)
    events = rt.query("from stockAggregation "
                      "on symbol==\"IBM\" "
                      "within \"2017-06-** **:**:**\" "
                      "per \"seconds\" "
                      "select symbol, avgPrice;")
    assert events is not None
    assert len(events) == 1
    assert tuple(events[0].data) == ("IBM", 100.0)
    rt.shutdown()


def test_aggregationFilterTestCase5(rdbms_url: str) -> None:
    """Aggregating by event time (no ``by timestamp``): an on-demand query over the current month
    returns IBM's second with avg 100, sum 200 and last trade value 9600."""
    rt = SiddhiManager().create_siddhi_app_runtime(
        STOCK_STREAM.format(ts="long") + _agg(rdbms_url, pool=False, by_timestamp=False).replace(
            "sec...min; ", "sec...min ;"))
    h = rt.get_input_handler("stockStream")
    rt.start()
    # arrival time, as Java's InputHandler.send; upstream's sleeps put the pairs in different seconds,
    # each closed (and written to the tables) by the wall-clock timer before the next arrives
    h.send(["WSO2", 50.0, 60.0, 90, 6, 1496289950000])
    h.send(["WSO2", 70.0, None, 40, 10, 1496289950000])
    time.sleep(2)
    h.send(["WSO2", 60.0, 44.0, 200, 56, 1496289952000])
    h.send(["WSO2", 100.0, None, 200, 16, 1496289952000])
    time.sleep(2)
    h.send(["IBM", 100.0, None, 200, 26, 1496289954000])
    h.send(["IBM", 100.0, None, 200, 96, 1496289954000])
    time.sleep(1.5)  # upstream: 5 s
    now = int(time.time() * 1000)
    # the month of the IBM events (Java uses LocalDate.now(), the same month but for a month end)
    d = datetime.datetime.fromtimestamp(now / 1000, datetime.timezone(datetime.timedelta(hours=5, minutes=30)))
    events = rt.query("from stockAggregation "
                      "on symbol == \"IBM\" "
                      f"within \"{d.year}-{d.month:02d}-** **:**:** +05:30\" "
                      "per \"seconds\"; ")
    assert events is not None
    assert len(events) == 1
    assert tuple(events[0].data)[1:5] == ("IBM", 100.0, 200.0, f32(9600.0))
    rt.shutdown()
