"""Port of siddhi-store-rdbms's ``SetUpdateOrInsertRDBMSTableTestCaseIT`` (io.siddhi.extension.store.rdbms.set):
``update or insert into ... set ...`` of an ``@Store(type='rdbms')`` table, run on PostgreSQL and MariaDB."""
from __future__ import annotations

from typing import Any

import pytest
from srota.engine import Event

from srota import SiddhiManager
from tests.engine.stores.upstream.support import T0, count_rows, store, table_rows

TABLE_NAME = "StockTable"


def _run(url: str, update_query: str) -> None:
    """The class's app with ``update_query`` as query2's body after ``from UpdateStockStream``:
    insert WSO2 55.6, IBM 75.6, WSO2 57.6 (all volume 100), then update with (IBM, 100, 100)."""
    streams = (
        "define stream StockStream (symbol string, price float, volume long); "
        "define stream UpdateStockStream (symbol string, price float, volume long); "
        f"{store(url, field__length='symbol:100', pool__properties='maximumPoolSize:1')}\n"
        "define table StockTable (symbol string, price float, volume long); ")
    query = (
        "@info(name = 'query1') "
        "from StockStream "
        "insert into StockTable ;"
        ""
        "@info(name = 'query2') "
        "from UpdateStockStream "
        f"{update_query}")
    rt = SiddhiManager().create_siddhi_app_runtime(streams + query)
    stock_stream = rt.get_input_handler("StockStream")
    update_stock_stream = rt.get_input_handler("UpdateStockStream")
    rt.start()
    stock_stream.send(["WSO2", 55.6, 100], timestamp=T0)
    stock_stream.send(["IBM", 75.6, 100], timestamp=T0 + 1)
    stock_stream.send(["WSO2", 57.6, 100], timestamp=T0 + 2)
    update_stock_stream.send(["IBM", 100.0, 100], timestamp=T0 + 3)
    rt.shutdown()


def _expected(ibm_price: float) -> list[tuple[Any, ...]]:
    """The rows after the update: IBM's price is ``ibm_price``, the WSO2 rows are untouched."""
    return [("IBM", pytest.approx(ibm_price), 100), ("WSO2", pytest.approx(55.6), 100),
            ("WSO2", pytest.approx(57.6), 100)]


def test_setUpdateOrInsertRDBMSTableTestCase1(rdbms_url: str) -> None:
    """Setting all columns from the event updates IBM's row (price 100); 3 rows."""
    _run(rdbms_url,
         "update or insert into StockTable "
         "set StockTable.price = price, StockTable.symbol = symbol, "
         "   StockTable.volume = volume  "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == _expected(100.0)


def test_setUpdateOrInsertRDBMSTableTestCase2(rdbms_url: str) -> None:
    """Setting a subset of columns (price, symbol) updates IBM's price to 100; 3 rows."""
    _run(rdbms_url,
         "update or insert into StockTable "
         "set StockTable.price = price, StockTable.symbol = symbol "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == _expected(100.0)


def test_setUpdateOrInsertRDBMSTableTestCase3(rdbms_url: str) -> None:
    """A constant as the assignment (StockTable.price = 10) sets IBM's price to 10; 3 rows."""
    _run(rdbms_url,
         "update or insert into StockTable "
         "set StockTable.price = 10 "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == _expected(10.0)


def test_setUpdateOrInsertRDBMSTableTestCase4(rdbms_url: str) -> None:
    """An expression of the event (price + 100) as the assignment: IBM's price is 200; 3 rows."""
    _run(rdbms_url,
         "update or insert into StockTable "
         "set StockTable.price = price + 100  "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == _expected(200.0)


def test_setUpdateOrInsertRDBMSTableTestCase5(rdbms_url: str) -> None:
    """Arithmetic on an output attribute (price + 100) as the assignment: IBM's price is 200; 3 rows."""
    _run(rdbms_url,
         "update or insert into StockTable "
         "set StockTable.price = price + 100 "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == _expected(200.0)


def test_setUpdateOrInsertRDBMSTableTestCase6(rdbms_url: str) -> None:
    """The table name may be left out of the set's left side (set price = 100): IBM's price is 100."""
    _run(rdbms_url,
         "update or insert into StockTable "
         "set price = 100 "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == _expected(100.0)


def test_setUpdateOrInsertRDBMSTableTestCase7(rdbms_url: str) -> None:
    """The set clause is optional: every column is set from the event, IBM's price is 100."""
    _run(rdbms_url,
         "update or insert into StockTable "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == _expected(100.0)


def test_setUpdateOrInsertRDBMSTableTestCase8(rdbms_url: str) -> None:
    """One batch of four events into a keyed table: the first two insert, the last two set only
    the price (155), so a join later reads WSO2 and IBM with price 155 and volume 100."""
    streams = (
        "define stream SearchStream (symbol string); "
        "define stream UpdateStockStream (symbol string, price int, volume long); "
        f"{store(rdbms_url, field__length='symbol:100', pool__properties='maximumPoolSize:1')}\n"
        "@PrimaryKey(\"symbol\")"
        "define table StockTable (symbol string, price int, volume long); ")
    query = (
        "@info(name = 'query1') "
        "from UpdateStockStream "
        "select symbol, price, volume "
        "update or insert into StockTable "
        "set StockTable.price = price "
        "   on StockTable.symbol == symbol;"
        "@info(name = 'query2') "
        "from SearchStream#window.length(1) join StockTable on StockTable.symbol == SearchStream.symbol "
        "select StockTable.symbol as symbol, price, volume "
        "insert into OutStream;")
    rt = SiddhiManager().create_siddhi_app_runtime(streams + query)
    update_stock_stream = rt.get_input_handler("UpdateStockStream")
    search_stream = rt.get_input_handler("SearchStream")
    received: list[tuple[Any, ...]] = []
    rt.add_query_callback("query2", lambda ts, ins, removed: received.extend(tuple(e.data) for e in ins or ()))
    rt.start()
    # one InputHandler.send(Event[]) call upstream: one chunk here
    update_stock_stream.send_events([
        Event(T0, ("WSO2", 55, 100)),
        Event(T0, ("IBM", 55, 100)),
        Event(T0, ("WSO2", 155, 0)),
        Event(T0, ("IBM", 155, 0)),
    ])
    search_stream.send(["WSO2"], timestamp=T0 + 1)
    search_stream.send(["IBM"], timestamp=T0 + 2)
    assert received == [("WSO2", 155, 100), ("IBM", 155, 100)]
    assert table_rows(rdbms_url, TABLE_NAME) == [("IBM", 155, 100), ("WSO2", 155, 100)]
    rt.shutdown()
