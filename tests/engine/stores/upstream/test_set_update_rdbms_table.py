"""Port of siddhi-store-rdbms's ``SetUpdateRDBMSTableTestCaseIT`` (io.siddhi.extension.store.rdbms.set):
``update ... set ...`` of an ``@Store(type='rdbms')`` table, run on PostgreSQL and MariaDB."""
from __future__ import annotations

from typing import Any

import pytest

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


def test_setUpdateRDBMSTableTestCase1(rdbms_url: str) -> None:
    """Setting all columns from the event updates IBM's row (price 100); 3 rows."""
    _run(rdbms_url,
         "update StockTable "
         "set StockTable.price = price, StockTable.symbol = symbol, "
         "   StockTable.volume = volume  "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == _expected(100.0)


def test_setUpdateRDBMSTableTestCase2(rdbms_url: str) -> None:
    """Setting a subset of columns (price, symbol) updates IBM's price to 100; 3 rows."""
    _run(rdbms_url,
         "update StockTable "
         "set StockTable.price = price, StockTable.symbol = symbol "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == _expected(100.0)


def test_setUpdateRDBMSTableTestCase3(rdbms_url: str) -> None:
    """A constant as the assignment (StockTable.price = 10) sets IBM's price to 10; 3 rows."""
    _run(rdbms_url,
         "update StockTable "
         "set StockTable.price = 10 "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == _expected(10.0)


def test_setUpdateRDBMSTableTestCase4(rdbms_url: str) -> None:
    """An output attribute of the select (price + 100 as newPrice) as the assignment: IBM's price is 200."""
    _run(rdbms_url,
         "select price + 100 as newPrice , symbol "
         "update StockTable "
         "set StockTable.price = newPrice "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == _expected(200.0)


def test_setUpdateRDBMSTableTestCase5(rdbms_url: str) -> None:
    """Arithmetic on an output attribute (newPrice + 100) as the assignment: IBM's price is 300."""
    _run(rdbms_url,
         "select price + 100 as newPrice , symbol "
         "update StockTable "
         "set StockTable.price = newPrice + 100 "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == _expected(300.0)


def test_setUpdateRDBMSTableTestCase6(rdbms_url: str) -> None:
    """The table name may be left out of the set's left side (set price = 100): IBM's price is 100."""
    _run(rdbms_url,
         "update StockTable "
         "set price = 100 "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == _expected(100.0)


def test_setUpdateRDBMSTableTestCase7(rdbms_url: str) -> None:
    """The set clause is optional: every column is set from the event, IBM's price is 100."""
    _run(rdbms_url,
         "update StockTable "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == _expected(100.0)
