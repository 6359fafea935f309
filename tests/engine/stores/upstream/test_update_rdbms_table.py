"""Port of siddhi-store-rdbms's ``UpdateRDBMSTableTestCaseIT`` (io.siddhi.extension.store.rdbms):
``update`` of an ``@Store(type='rdbms')`` table, and ``(cond) in`` checks against it, run on
PostgreSQL and MariaDB."""
from __future__ import annotations

from typing import Any

import pytest

from srota import SiddhiManager
from tests.engine.stores.upstream.support import T0, count_rows, store, table_rows

TABLE_NAME = "StockTable"


def _send_all(rt: Any, events: list[tuple[str, list[Any]]]) -> None:
    """Send (stream, data) pairs in order, one event per call, with rising timestamps."""
    for i, (stream, data) in enumerate(events):
        rt.get_input_handler(stream).send(data, timestamp=T0 + i)


def _in_check_app(url: str) -> str:
    """The app of tests 3-6: CheckStockStream events pass when their symbol is in the table."""
    streams = (
        "define stream StockStream (symbol string, price float, volume long); "
        "define stream CheckStockStream (symbol string, volume long); "
        f"{store(url, field__length='symbol:100', pool__properties='maximumPoolSize:1')}\n"
        "define table StockTable (symbol string, price float, volume long); ")
    query = (
        "@info(name = 'query1') "
        "from StockStream "
        "insert into StockTable ;"
        ""
        "@info(name = 'query2') "
        "from CheckStockStream[(StockTable.symbol==symbol) in StockTable] "
        "insert into OutStream;")
    return streams + query


def _run_in_check(url: str, checks: list[list[Any]]) -> list[tuple[Any, ...]]:
    """Insert WSO2 and IBM, send ``checks``; what query2's callback received."""
    rt = SiddhiManager().create_siddhi_app_runtime(_in_check_app(url))
    received: list[tuple[Any, ...]] = []
    rt.add_query_callback("query2", lambda ts, ins, removed: received.extend(tuple(e.data) for e in ins or ()))
    rt.start()
    _send_all(rt, [("StockStream", ["WSO2", 55.6, 100]), ("StockStream", ["IBM", 55.6, 100])]
              + [("CheckStockStream", c) for c in checks])
    rt.shutdown()
    return received


def test_updateFromTableTest1(rdbms_url: str) -> None:
    """update on StockTable.symbol == symbol (select symbol, price, volume) changes IBM's row; 3 rows stay."""
    streams = (
        "define stream StockStream (symbol string, price double, volume long); "
        "define stream UpdateStockStream (symbol string, price double, volume long); "
        f"{store(rdbms_url, field__length='symbol:100', pool__properties='maximumPoolSize:1')}\n"
        "define table StockTable (symbol string, price double, volume long); ")
    query = (
        "@info(name = 'query1')\n"
        "from StockStream\n"
        "insert into StockTable;\n"
        "@info(name = 'query2') "
        "from UpdateStockStream\n"
        "select symbol, price, volume\n"
        "update StockTable\n"
        "on (StockTable.symbol == symbol);")
    rt = SiddhiManager().create_siddhi_app_runtime(streams + query)
    rt.start()
    _send_all(rt, [("StockStream", ["WSO2", 55.6, 100]), ("StockStream", ["IBM", 75.6, 100]),
                   ("StockStream", ["WSO2", 57.6, 100]), ("UpdateStockStream", ["IBM", 57.6, 100])])
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == [("IBM", 57.6, 100), ("WSO2", 55.6, 100), ("WSO2", 57.6, 100)]
    rt.shutdown()


def test_updateFromTableTest2(rdbms_url: str) -> None:
    """update on symbol equal and table volume greater changes only WSO2 with volume 200."""
    streams = (
        "define stream StockStream (symbol string, price double, volume long); "
        "define stream UpdateStockStream (symbol string, price double, volume long); "
        f"{store(rdbms_url, field__length='symbol:100', pool__properties='maximumPoolSize:1')}\n"
        "define table StockTable (symbol string, price double, volume long); ")
    query = (
        "@info(name = 'query1') "
        "from StockStream "
        "insert into StockTable ;"
        ""
        "@info(name = 'query2') "
        "from UpdateStockStream "
        "update StockTable "
        "   on (StockTable.symbol == symbol and StockTable.volume > volume) ;")
    rt = SiddhiManager().create_siddhi_app_runtime(streams + query)
    rt.start()
    _send_all(rt, [("StockStream", ["WSO2", 55.6, 50]), ("StockStream", ["IBM", 75.6, 100]),
                   ("StockStream", ["WSO2", 57.6, 200]), ("UpdateStockStream", ["WSO2", 85.6, 100])])
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == [("IBM", 75.6, 100), ("WSO2", 55.6, 50), ("WSO2", 85.6, 100)]
    rt.shutdown()


def test_updateFromTableTest3(rdbms_url: str) -> None:
    """(StockTable.symbol==symbol) in StockTable lets the three checks of stored symbols through."""
    received = _run_in_check(rdbms_url, [["IBM", 100], ["WSO2", 100], ["IBM", 100]])
    assert len(received) == 3, "Number of success events"
    assert received == [("IBM", 100), ("WSO2", 100), ("IBM", 100)]


def test_updateFromTableTest4(rdbms_url: str) -> None:
    """The same app as test 3 (upstream repeats it): three events pass."""
    received = _run_in_check(rdbms_url, [["IBM", 100], ["WSO2", 100], ["IBM", 100]])
    assert len(received) == 3, "Number of success events"
    assert received == [("IBM", 100), ("WSO2", 100), ("IBM", 100)]


def test_updateFromTableTest5(rdbms_url: str) -> None:
    """A symbol not in the table (BSD) does not pass the in check: two events pass."""
    received = _run_in_check(rdbms_url, [["BSD", 100], ["WSO2", 100], ["IBM", 100]])
    assert len(received) == 2, "Number of success events"
    assert received == [("WSO2", 100), ("IBM", 100)]


def test_updateFromTableTest6(rdbms_url: str) -> None:
    """The same app and events as test 3 (upstream repeats it): three events pass."""
    received = _run_in_check(rdbms_url, [["IBM", 100], ["WSO2", 100], ["IBM", 100]])
    assert len(received) == 3, "Number of success events"
    assert received == [("IBM", 100), ("WSO2", 100), ("IBM", 100)]


def test_updateFromTableTest7(rdbms_url: str) -> None:
    """An update through renamed attributes (comp as symbol, prc as price) is seen by a later
    in check comparing price with the table's: IBM passes before (185.6) and after (200) it."""
    streams = (
        "define stream StockStream (symbol string, price float, volume long); "
        "define stream CheckStockStream (symbol string, price float, volume long); "
        "define stream UpdateStockStream (comp string, prc float, volume long); "
        f"{store(rdbms_url, field__length='symbol:100', pool__properties='maximumPoolSize:1')}\n"
        "define table StockTable (symbol string, price float, volume long); ")
    query = (
        "@info(name = 'query1') "
        "from StockStream "
        "insert into StockTable ;"
        ""
        "@info(name = 'query2') "
        "from UpdateStockStream "
        "select comp as symbol, prc as price, volume "
        "update StockTable "
        "   on StockTable.symbol==symbol;"
        ""
        "@info(name = 'query3') "
        "from CheckStockStream[(symbol==StockTable.symbol and volume==StockTable.volume "
        "and price<StockTable.price) in StockTable] "
        "insert into OutStream;")
    rt = SiddhiManager().create_siddhi_app_runtime(streams + query)
    received: list[tuple[Any, ...]] = []
    removed_count = 0

    def on_query3(ts: int, ins: Any, removed: Any) -> None:
        nonlocal removed_count
        received.extend(tuple(e.data) for e in ins or ())
        removed_count += len(removed or ())

    rt.add_query_callback("query3", on_query3)
    rt.start()
    _send_all(rt, [("StockStream", ["WSO2", 55.6, 100]), ("StockStream", ["IBM", 185.6, 100]),
                   ("CheckStockStream", ["IBM", 150.6, 100]), ("CheckStockStream", ["WSO2", 175.6, 100]),
                   ("UpdateStockStream", ["IBM", 200.0, 100]), ("CheckStockStream", ["IBM", 190.6, 100]),
                   ("CheckStockStream", ["WSO2", 155.6, 100])])
    assert len(received) == 2, "Number of success events"
    assert received == [("IBM", pytest.approx(150.6), 100), ("IBM", pytest.approx(190.6), 100)]
    assert removed_count == 0, "Number of remove events"
    rt.shutdown()


def test_updateFromTableTest8(rdbms_url: str) -> None:
    """update on StockTable.volume == volume rewrites all three rows (all volume 100) to the event."""
    streams = (
        "define stream StockStream (symbol string, price float, volume long); "
        "define stream UpdateStockStream (symbol string, price float, volume long); "
        f"{store(rdbms_url, field__length='symbol:100', pool__properties='maximumPoolSize:1')}\n"
        "define table StockTable (symbol string, price float, volume long); ")
    query = (
        "@info(name = 'query1') "
        "from StockStream "
        "insert into StockTable ;"
        ""
        "@info(name = 'query2') "
        "from UpdateStockStream "
        "update StockTable "
        "   on StockTable.volume == volume ;")
    rt = SiddhiManager().create_siddhi_app_runtime(streams + query)
    rt.start()
    _send_all(rt, [("StockStream", ["WSO2", 55.6, 100]), ("StockStream", ["IBM", 75.6, 100]),
                   ("StockStream", ["WSO2", 57.6, 100]), ("UpdateStockStream", ["IBM", 57.6, 100])])
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == [("IBM", pytest.approx(57.6), 100)] * 3
    rt.shutdown()


def test_updateFromTableTest9(rdbms_url: str) -> None:
    """As test 2 with an explicit select: only WSO2 with volume 200 is updated."""
    streams = (
        "define stream StockStream (symbol string, price double, volume long); "
        "define stream UpdateStockStream (symbol string, price double, volume long); "
        f"{store(rdbms_url, field__length='symbol:100', pool__properties='maximumPoolSize:1')}\n"
        "define table StockTable (symbol string, price double, volume long); ")
    query = (
        "@info(name = 'query1') "
        "from StockStream "
        "insert into StockTable ;"
        ""
        "@info(name = 'query2') "
        "from UpdateStockStream "
        "select symbol, price, volume "
        "update StockTable "
        "   on (StockTable.symbol == symbol and StockTable.volume > volume) ;")
    rt = SiddhiManager().create_siddhi_app_runtime(streams + query)
    rt.start()
    _send_all(rt, [("StockStream", ["WSO2", 55.6, 50]), ("StockStream", ["IBM", 75.6, 100]),
                   ("StockStream", ["WSO2", 57.6, 200]), ("UpdateStockStream", ["WSO2", 85.6, 100])])
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == [("IBM", 75.6, 100), ("WSO2", 55.6, 50), ("WSO2", 85.6, 100)]
    rt.shutdown()
