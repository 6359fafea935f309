"""Port of siddhi-store-rdbms's ``SelectOptimisationAggregationTestCaseIT``
(io.siddhi.extension.store.rdbms.aggregation): joins and on-demand queries that aggregate again over an
incremental aggregation (``sum(count)``, ``group by`` on the join's sides, ``order by AGG_TIMESTAMP``)
whose roll-ups live in an ``@Store(type='rdbms')`` database, run on PostgreSQL and MariaDB."""
from __future__ import annotations

from typing import Any

import pytest

from srota import SiddhiManager
from tests.engine.stores.upstream.support import T0, store

STOCK_STREAM = ("define stream stockStream (symbol string, price float, lastClosingPrice float, volume long , "
                "quantity int, timestamp long);")
NAMED_STOCK_STREAM = ("define stream stockStream (symbol string, name string, price float, lastClosingPrice float, "
                      "volume long , quantity int, timestamp long);")
INPUT_STREAM = ("define stream inputStream (symbol string, value int, startTime string, "
                "endTime string, perValue string); ")
PURGE_OFF = "@purge(enable='false')"
INPUT = ["IBM", 1, "2017-06-01 09:35:51 +05:30", "2017-06-01 09:35:52 +05:30", "seconds"]

# the eleven events of test cases 1-4, 8 and 9
EVENTS = [
    ["WSO2", 50.0, 60.0, 90, 6, 1496289950000],
    ["WSO2", 70.0, None, 40, 10, 1496289950000],
    ["WSO2", 60.0, 44.0, 200, 56, 1496289952000],
    ["WSO2", 100.0, None, 200, 16, 1496289952000],
    ["IBM", 100.0, None, 200, 26, 1496289954000],
    ["IBM", 100.0, None, 200, 96, 1496289954000],
    ["IBM", 900.0, None, 200, 60, 1496289956000],
    ["IBM", 500.0, None, 200, 7, 1496289956000],
    ["IBM", 400.0, None, 200, 9, 1496290016000],
    ["IBM", 600.0, None, 200, 6, 1496290076000],
    ["CISCO", 700.0, None, 200, 20, 1496293676000],
]
# the nine events of test cases 10-13 (one out of order)
EVENTS_10 = [
    ["WSO2", 50.0, 60.0, 90, 6, 1496289950000],
    ["WSO22", 75.0, None, 40, 10, 1496289950100],
    ["WSO23", 60.0, 44.0, 200, 56, 1496289952000],
    ["WSO24", 100.0, None, 200, 16, 1496289952000],
    ["WSO23", 70.0, None, 40, 10, 1496289950090],
    ["IBM", 101.0, None, 200, 26, 1496289954000],
    ["IBM1", 102.0, None, 200, 100, 1496289954000],
    ["IBM", 900.0, None, 200, 60, 1496289956000],
    ["IBM1", 500.0, None, 200, 7, 1496289956000],
]


def _named(names: list[str]) -> list[list[Any]]:
    """EVENTS with a ``name`` attribute after the symbol (test cases 5-7)."""
    return [[e[0], n, *e[1:]] for e, n in zip(EVENTS, names, strict=True)]


def _agg(url: str, select: str, every: str = "sec, min", purge: bool = True) -> str:
    """``stockAggregation`` selecting ``select`` (with its ``group by``)."""
    return (f"{store(url, pool__properties='maximumPoolSize:1')}\n"
            f"{PURGE_OFF if purge else ''}"
            "define aggregation stockAggregation "
            "from stockStream "
            f"{select}"
            f"aggregate by timestamp every {every} ;")


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


def _join(app: str, rows: list[list[Any]], trigger: list[Any]) -> list[tuple[Any, ...]]:
    """Run ``app``: send ``rows`` to stockStream and ``trigger`` to inputStream; the in-events of query1."""
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    got: list[tuple[Any, ...]] = []
    rt.add_query_callback("query1", lambda ts, ins, removed: got.extend(tuple(e.data) for e in ins or ()))
    try:
        rt.start()
        h = rt.get_input_handler("stockStream")
        for i, r in enumerate(rows):
            h.send(r, timestamp=T0 + i)
        rt.get_input_handler("inputStream").send(trigger, timestamp=T0 + 100)
    finally:
        rt.shutdown()
    return got


def _on_demand(app: str, rows: list[list[Any]], query: str) -> list[tuple[Any, ...]] | None:
    """Run ``app``: send ``rows`` to stockStream, then the on-demand ``query``; its rows (None if none)."""
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    try:
        rt.start()
        h = rt.get_input_handler("stockStream")
        for i, r in enumerate(rows):
            h.send(r, timestamp=T0 + i)
        events = rt.query(query)
    finally:
        rt.shutdown()
    return None if events is None else [tuple(e.data) for e in events]


JOIN_SEC = ("@info(name = 'query1') "
            "from inputStream as i join stockAggregation as s "
            "within 1496200000000L, 1596434876000L "
            "per \"seconds\" ")
JOIN_SEC_10 = ("define stream inputStream (symbol string); "
               "@info(name = 'query1') "
               "from inputStream as i join stockAggregation as s "
               "within 1496200000000L, 1596535449000L "
               "per \"seconds\" ")


def test_aggregationFunctionTestcase1(rdbms_url: str) -> None:
    """``count()`` without group by, joined per second and ordered by AGG_TIMESTAMP: 2,2,2,2,1,1,1."""
    got = _join(STOCK_STREAM + _agg(rdbms_url, "select count() as count ") + INPUT_STREAM + JOIN_SEC +
                "select count order by AGG_TIMESTAMP insert all events into outputStream; ", EVENTS, INPUT)
    assert got == [(2,), (2,), (2,), (2,), (1,), (1,), (1,)]


def test_aggregationFunctionTestcase2(rdbms_url: str) -> None:
    """As case 1 selecting AGG_TIMESTAMP too: each second's start in order."""
    got = _join(STOCK_STREAM + _agg(rdbms_url, "select count() as count ") + INPUT_STREAM + JOIN_SEC +
                "select AGG_TIMESTAMP, count order by AGG_TIMESTAMP insert all events into outputStream; ",
                EVENTS, INPUT)
    assert got == [(1496289950000, 2), (1496289952000, 2), (1496289954000, 2), (1496289956000, 2),
                   (1496290016000, 1), (1496290076000, 1), (1496293676000, 1)]


def test_aggregationFunctionTestcase3(rdbms_url: str) -> None:
    """``count()`` grouped by symbol: one row per second and symbol."""
    got = _join(STOCK_STREAM + _agg(rdbms_url, "select symbol, count() as count group by symbol ") + INPUT_STREAM +
                JOIN_SEC + "select AGG_TIMESTAMP, s.symbol, s.count insert all events into outputStream; ",
                EVENTS, INPUT)
    assert len(got) == 7
    assert _unsorted_match(got, [
        (1496289950000, "WSO2", 2), (1496289952000, "WSO2", 2), (1496289954000, "IBM", 2),
        (1496289956000, "IBM", 2), (1496290016000, "IBM", 1), (1496290076000, "IBM", 1),
        (1496293676000, "CISCO", 1)]), got


def test_aggregationFunctionTestcase4(rdbms_url: str) -> None:
    """``sum(count)`` grouped by s.symbol in the join: WSO2 4, IBM 6, CISCO 1."""
    got = _join(STOCK_STREAM + _agg(rdbms_url, "select symbol, count() as count group by symbol ") + INPUT_STREAM +
                JOIN_SEC + "select s.symbol, sum(count) as count group by s.symbol "
                "insert all events into outputStream; ", EVENTS, INPUT)
    assert len(got) == 3
    assert _unsorted_match(got, [("WSO2", 4), ("IBM", 6), ("CISCO", 1)]), got


def test_aggregationFunctionTestcase5(rdbms_url: str) -> None:
    """Grouped by (symbol, name) with name == symbol; the join sums by symbol and selects the name too."""
    got = _join(NAMED_STOCK_STREAM + _agg(rdbms_url, "select symbol, name, count() as count group by symbol, name ") +
                INPUT_STREAM + JOIN_SEC + "select s.symbol, s.name, sum(count) as count group by s.symbol "
                "insert all events into outputStream; ", _named([e[0] for e in EVENTS]), INPUT)
    assert len(got) == 3
    assert _unsorted_match(got, [("WSO2", "WSO2", 4), ("IBM", "IBM", 6), ("CISCO", "CISCO", 1)]), got


NAMES_6 = ["WSO21", "WSO22", "WSO21", "WSO22", "IBM1", "IBM2", "IBM1", "IBM2", "IBM1", "IBM1", "CISCO1"]


def test_aggregationFunctionTestcase6(rdbms_url: str) -> None:
    """Grouped by (symbol, name) with several names per symbol; the join's sum by symbol adds them up."""
    got = _join(NAMED_STOCK_STREAM + _agg(rdbms_url, "select symbol, name, count() as count group by symbol, name ") +
                INPUT_STREAM + JOIN_SEC + "select s.symbol, sum(count) as count group by s.symbol "
                "insert all events into outputStream; ", _named(NAMES_6), INPUT)
    assert len(got) == 3
    assert _unsorted_match(got, [("WSO2", 4), ("IBM", 6), ("CISCO", 1)]), got


def test_aggregationFunctionTestcase7(rdbms_url: str) -> None:
    """As case 6 selecting s.name too: the name of the last row of each symbol's group."""
    got = _join(NAMED_STOCK_STREAM + _agg(rdbms_url, "select symbol, name, count() as count group by symbol, name ") +
                INPUT_STREAM + JOIN_SEC + "select s.symbol, s.name, sum(count) as count group by s.symbol "
                "insert all events into outputStream; ", _named(NAMES_6), INPUT)
    assert len(got) == 3
    assert _unsorted_match(got, [("WSO2", "WSO22", 4), ("IBM", "IBM1", 6), ("CISCO", "CISCO1", 1)]), got


def test_aggregationFunctionTestcase8(rdbms_url: str) -> None:
    """On-demand query per second ordered by AGG_TIMESTAMP: seven rows in time order."""
    got = _on_demand(STOCK_STREAM + _agg(rdbms_url, "select count() as count "), EVENTS,
                     "from stockAggregation "
                     "within 1496200000000L, 1596434876000L "
                     "per \"seconds\" "
                     "select AGG_TIMESTAMP, count "
                     "order by AGG_TIMESTAMP;")
    assert got is not None
    assert len(got) == 7
    assert got == [(1496289950000, 2), (1496289952000, 2), (1496289954000, 2), (1496289956000, 2),
                   (1496290016000, 1), (1496290076000, 1), (1496293676000, 1)]


def test_aggregationFunctionTestcase9(rdbms_url: str) -> None:
    """On-demand ``sum(count)`` grouped by symbol: WSO2 4, IBM 6, CISCO 1."""
    got = _on_demand(STOCK_STREAM + _agg(rdbms_url, "select symbol, count() as count group by symbol "), EVENTS,
                     "from stockAggregation "
                     "within 1496200000000L, 1596434876000L "
                     "per \"seconds\" "
                     "select symbol, sum(count) as count "
                     "group by symbol;")
    assert got is not None
    assert len(got) == 3
    assert _unsorted_match(got, [("WSO2", 4), ("IBM", 6), ("CISCO", 1)]), got


def test_aggregationFunctionTestcase10(rdbms_url: str) -> None:
    """Selecting i.symbol while grouping by s.symbol: one row per aggregated symbol, all named IBM."""
    got = _join(STOCK_STREAM + _agg(rdbms_url, "select symbol, sum(price) as sumPrice group by symbol ", "sec...min") +
                JOIN_SEC_10 + "select i.symbol, sum(s.sumPrice) as sumPrice group by s.symbol "
                "insert all events into outputStream; ", EVENTS_10, ["IBM"])
    assert len(got) == 6
    assert _unsorted_match(got, [("IBM", 75.0), ("IBM", 50.0), ("IBM", 130.0), ("IBM", 100.0),
                                 ("IBM", 602.0), ("IBM", 1001.0)]), got


def test_aggregationFunctionTestcase11(rdbms_url: str) -> None:
    """Grouping by i.symbol sums every row into one; s.symbol is the last row's (order by AGG_TIMESTAMP)."""
    got = _join(STOCK_STREAM + _agg(rdbms_url, "select symbol, sum(price) as sumPrice  group by symbol ",
                                    "sec...min") +
                JOIN_SEC_10 + "select s.symbol, sum(s.sumPrice) as sumPrice group by i.symbol "
                "order by AGG_TIMESTAMP insert all events into outputStream; ", EVENTS_10, ["IBM"])
    assert len(got) == 1
    assert got[0] == ("WSO22", 1958.0)


def test_aggregationFunctionTestcase12(rdbms_url: str) -> None:
    """Grouping by i.symbol and selecting it: one row, IBM 1958."""
    got = _join(STOCK_STREAM + _agg(rdbms_url, "select symbol, sum(price) as sumPrice group by symbol ", "sec...min") +
                JOIN_SEC_10 + "select i.symbol, sum(sumPrice) as totalPrice group by i.symbol "
                "order by AGG_TIMESTAMP insert all events into outputStream; ", EVENTS_10, ["IBM"])
    assert len(got) == 1
    assert got[0] == ("IBM", 1958.0)


def test_aggregationFunctionTestcase13(rdbms_url: str) -> None:
    """Grouping by (i.symbol, s.symbol): one row per aggregated symbol with its total."""
    got = _join(STOCK_STREAM + _agg(rdbms_url, "select symbol, sum(price) as sumPrice group by symbol ", "sec...min") +
                JOIN_SEC_10 + "select s.symbol, sum(s.sumPrice) as sumPrice group by i.symbol, s.symbol "
                "insert all events into outputStream; ", EVENTS_10, ["IBM"])
    assert len(got) == 6
    assert _unsorted_match(got, [("WSO22", 75.0), ("WSO2", 50.0), ("WSO23", 130.0), ("WSO24", 100.0),
                                 ("IBM1", 602.0), ("IBM", 1001.0)]), got


def test_aggregationFunctionTestcase14(rdbms_url: str) -> None:
    """A join ``on`` the symbol within "2017-06-01 04:05:**": IBM's total over the minute is 2000."""
    app = (STOCK_STREAM + _agg(
        rdbms_url, "select symbol, avg(price) as avgPrice, sum(price) as totalPrice, (price * quantity) as "
        "lastTradeValue, count() as count group by symbol ", "sec...min", purge=False) +
        INPUT_STREAM +
        "@info(name = 'query1') "
        "from inputStream join stockAggregation  "
        "on inputStream.symbol == stockAggregation.symbol "
        "within \"2017-06-01 04:05:**\" "
        "per \"seconds\" "
        "select stockAggregation.symbol, sum(totalPrice) as totalPrice "
        "group by stockAggregation.symbol "
        "order by AGG_TIMESTAMP "
        "insert all events into outputStream; ")
    got = _join(app, [
        ["WSO2", 50.0, 60.0, 90, 6, 1496289950000],
        ["WSO2", 70.0, None, 40, 10, 1496289950000],
        ["WSO2", 60.0, 44.0, 200, 56, 1496289949000],
        ["WSO2", 100.0, None, 200, 16, 1496289949000],
        ["IBM", 100.0, None, 200, 26, 1496289948000],
        ["IBM", 100.0, None, 200, 96, 1496289948000],
        ["IBM", 900.0, None, 200, 60, 1496289947000],
        ["IBM", 500.0, None, 200, 7, 1496289947000],
        ["IBM", 400.0, None, 200, 9, 1496289946000],
    ], INPUT)
    assert len(got) == 1
    assert got[0][0] == "IBM"
    assert got[0][1] == 2000.0


def test_aggregationFunctionTestcase15(rdbms_url: str) -> None:
    """On-demand ``group by AGG_TIMESTAMP`` sums both symbols per second: 120, 160, 200."""
    app = (STOCK_STREAM +
           f"{store(rdbms_url)}\n"
           "@purge(enable='false')"
           " define aggregation stockAggregation "
           "from stockStream "
           "select symbol, sum(price) as totalPrice  "
           "group by symbol "
           "aggregate by timestamp every sec...hour ;")
    got = _on_demand(app, [
        ["WSO2", 50.0, 60.0, 90, 6, 1496289950000],
        ["IBM", 70.0, None, 40, 10, 1496289950000],
        ["WSO2", 60.0, 44.0, 200, 56, 1496289952000],
        ["IBM", 100.0, None, 200, 16, 1496289952500],
        ["IBM", 100.0, None, 200, 26, 1496289954000],
        ["WSO2", 100.0, None, 200, 96, 1496289954500],
    ], "from stockAggregation "
       "within \"2017-06-** **:**:**\" "
       "per \"seconds\" "
       "select AGG_TIMESTAMP, sum(totalPrice) as totalPrice "
       "group by AGG_TIMESTAMP;")
    assert got is not None
    assert len(got) == 3
    assert _unsorted_match(got, [(1496289950000, 120.0), (1496289952000, 160.0), (1496289954000, 200.0)]), got
