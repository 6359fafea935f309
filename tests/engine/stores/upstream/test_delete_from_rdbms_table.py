"""Port of siddhi-store-rdbms's ``DeleteFromRDBMSTableTestCaseIT`` (io.siddhi.extension.store.rdbms):
``delete`` from an ``@Store(type='rdbms')`` table on conditions, run on PostgreSQL and MariaDB."""
from __future__ import annotations

from typing import Any

import pytest

from srota import SiddhiManager
from tests.engine.stores.upstream.support import T0, count_rows, store, table_rows

TABLE_NAME = "StockTable"


def _streams(url: str) -> str:
    """The two streams and the key-less table every test of the class defines."""
    return (
        "define stream StockStream (symbol string, price float, volume long); "
        "define stream DeleteStockStream (symbol string, price float, volume long); "
        f"{store(url, field__length='symbol:100', pool__properties='maximumPoolSize:1')}\n"
        "define table StockTable (symbol string, price float, volume long); ")


def _query(on: str) -> str:
    """query1 inserts StockStream into the table, query2 deletes from it ``on`` a condition."""
    return (
        "@info(name = 'query1') "
        "from StockStream "
        "insert into StockTable ;"
        ""
        "@info(name = 'query2') "
        "from DeleteStockStream "
        "delete StockTable "
        f"   on {on};")


def _run(url: str, on: str, stocks: list[list[Any]], deletes: list[list[Any]]) -> None:
    """Create and start the app, send ``stocks`` then ``deletes``, shut it down."""
    rt = SiddhiManager().create_siddhi_app_runtime(_streams(url) + _query(on))
    stock_stream = rt.get_input_handler("StockStream")
    delete_stock_stream = rt.get_input_handler("DeleteStockStream")
    rt.start()
    t = T0
    for row in stocks:
        stock_stream.send(row, timestamp=t)
        t += 1
    for row in deletes:
        delete_stock_stream.send(row, timestamp=t)
        t += 1
    rt.shutdown()


def test_deleteFromRDBMSTableTest1(rdbms_url: str) -> None:
    """Deleting on StockTable.symbol == symbol removes every row of that symbol: none are left."""
    _run(rdbms_url, "StockTable.symbol == symbol ",
         [["WSO2", 55.6, 100], ["IBM", 75.6, 100], ["WSO2", 57.6, 100]],
         [["IBM", 57.6, 100], ["WSO2", 57.6, 100]])
    assert count_rows(rdbms_url, TABLE_NAME) == 0, "Deletion failed"


def test_deleteFromRDBMSTableTest2(rdbms_url: str) -> None:
    """The same with the operands swapped (symbol == StockTable.symbol): none are left."""
    _run(rdbms_url, "symbol == StockTable.symbol ",
         [["WSO2", 55.6, 100], ["IBM", 75.6, 100], ["WSO2", 57.6, 100]],
         [["IBM", 57.6, 100], ["WSO2", 57.6, 100]])
    assert count_rows(rdbms_url, TABLE_NAME) == 0, "Deletion failed"


def test_deleteFromRDBMSTableTest3(rdbms_url: str) -> None:
    """Deleting on a constant (StockTable.symbol == 'IBM') removes the IBM row only."""
    _run(rdbms_url, "StockTable.symbol == 'IBM'  ",
         [["WSO2", 55.6, 100], ["IBM", 75.6, 100], ["WSO2", 57.6, 100]],
         [["IBM", 57.6, 100]])
    assert count_rows(rdbms_url, TABLE_NAME) == 2, "Deletion failed"
    assert table_rows(rdbms_url, TABLE_NAME) == [("WSO2", pytest.approx(55.6), 100),
                                                 ("WSO2", pytest.approx(57.6), 100)]


def test_deleteFromRDBMSTableTest4(rdbms_url: str) -> None:
    """The constant on the left ('IBM' == StockTable.symbol) removes the IBM row only."""
    _run(rdbms_url, "'IBM' == StockTable.symbol  ",
         [["WSO2", 55.6, 100], ["IBM", 75.6, 100], ["WSO2", 57.6, 100]],
         [["IBM", 57.6, 100]])
    assert count_rows(rdbms_url, TABLE_NAME) == 2, "Deletion failed"
    assert table_rows(rdbms_url, TABLE_NAME) == [("WSO2", pytest.approx(55.6), 100),
                                                 ("WSO2", pytest.approx(57.6), 100)]


def test_deleteFromRDBMSTableTest5(rdbms_url: str) -> None:
    """A conjunction (symbol equal, table price greater, volume equal) removes only IBM at 75.6."""
    _run(rdbms_url, "StockTable.symbol==symbol and StockTable.price > price and  StockTable.volume == volume  ",
         [["WSO2", 55.6, 100], ["IBM", 75.6, 100], ["IBM", 57.6, 100]],
         [["IBM", 57.6, 100]])
    assert count_rows(rdbms_url, TABLE_NAME) == 2, "Deletion failed"
    assert table_rows(rdbms_url, TABLE_NAME) == [("IBM", pytest.approx(57.6), 100),
                                                 ("WSO2", pytest.approx(55.6), 100)]


def test_deleteFromRDBMSTableTest6(rdbms_url: str) -> None:
    """Constants mixed with a stream value (symbol=='IBM', price > 50, volume == volume) remove both IBM rows."""
    _run(rdbms_url, "StockTable.symbol=='IBM' and StockTable.price > 50 and  StockTable.volume == volume  ",
         [["WSO2", 55.6, 100], ["IBM", 75.6, 100], ["IBM", 57.6, 100]],
         [["IBM", 57.6, 100]])
    assert count_rows(rdbms_url, TABLE_NAME) == 1, "Deletion failed"
    assert table_rows(rdbms_url, TABLE_NAME) == [("WSO2", pytest.approx(55.6), 100)]


def test_deleteFromRDBMSTableTest7(rdbms_url: str) -> None:
    """Deleting IBM on StockTable.symbol == symbol leaves the two WSO2 rows."""
    _run(rdbms_url, "StockTable.symbol == symbol ",
         [["WSO2", 55.6, 100], ["IBM", 75.6, 100], ["WSO2", 57.6, 100]],
         [["IBM", 57.6, 100]])
    assert count_rows(rdbms_url, TABLE_NAME) == 2, "Deletion failed"
    assert table_rows(rdbms_url, TABLE_NAME) == [("WSO2", pytest.approx(55.6), 100),
                                                 ("WSO2", pytest.approx(57.6), 100)]


def test_deleteFromRDBMSTableTest8(rdbms_url: str) -> None:
    """The same as test 7 (upstream repeats it): the two WSO2 rows are left."""
    _run(rdbms_url, "StockTable.symbol == symbol ",
         [["WSO2", 55.6, 100], ["IBM", 75.6, 100], ["WSO2", 57.6, 100]],
         [["IBM", 57.6, 100]])
    assert count_rows(rdbms_url, TABLE_NAME) == 2, "Deletion failed"
    assert table_rows(rdbms_url, TABLE_NAME) == [("WSO2", pytest.approx(55.6), 100),
                                                 ("WSO2", pytest.approx(57.6), 100)]
