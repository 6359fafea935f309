"""Port of siddhi-store-rdbms's ``SetUpdateRDBMSTableTestCaseIT`` (io.siddhi.extension.store.rdbms.set):
``update ... set ...`` of an ``@Store(type='rdbms')`` table, run on PostgreSQL and MariaDB."""
from __future__ import annotations

from tests.engine.stores.upstream.support import count_rows, rows_after_set_update, run_set_update, table_rows

TABLE_NAME = "StockTable"


def test_setUpdateRDBMSTableTestCase1(rdbms_url: str) -> None:
    """Setting all columns from the event updates IBM's row (price 100); 3 rows."""
    run_set_update(rdbms_url,
         "update StockTable "
         "set StockTable.price = price, StockTable.symbol = symbol, "
         "   StockTable.volume = volume  "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == rows_after_set_update(100.0)


def test_setUpdateRDBMSTableTestCase2(rdbms_url: str) -> None:
    """Setting a subset of columns (price, symbol) updates IBM's price to 100; 3 rows."""
    run_set_update(rdbms_url,
         "update StockTable "
         "set StockTable.price = price, StockTable.symbol = symbol "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == rows_after_set_update(100.0)


def test_setUpdateRDBMSTableTestCase3(rdbms_url: str) -> None:
    """A constant as the assignment (StockTable.price = 10) sets IBM's price to 10; 3 rows."""
    run_set_update(rdbms_url,
         "update StockTable "
         "set StockTable.price = 10 "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == rows_after_set_update(10.0)


def test_setUpdateRDBMSTableTestCase4(rdbms_url: str) -> None:
    """An output attribute of the select (price + 100 as newPrice) as the assignment: IBM's price is 200."""
    run_set_update(rdbms_url,
         "select price + 100 as newPrice , symbol "
         "update StockTable "
         "set StockTable.price = newPrice "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == rows_after_set_update(200.0)


def test_setUpdateRDBMSTableTestCase5(rdbms_url: str) -> None:
    """Arithmetic on an output attribute (newPrice + 100) as the assignment: IBM's price is 300."""
    run_set_update(rdbms_url,
         "select price + 100 as newPrice , symbol "
         "update StockTable "
         "set StockTable.price = newPrice + 100 "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == rows_after_set_update(300.0)


def test_setUpdateRDBMSTableTestCase6(rdbms_url: str) -> None:
    """The table name may be left out of the set's left side (set price = 100): IBM's price is 100."""
    run_set_update(rdbms_url,
         "update StockTable "
         "set price = 100 "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == rows_after_set_update(100.0)


def test_setUpdateRDBMSTableTestCase7(rdbms_url: str) -> None:
    """The set clause is optional: every column is set from the event, IBM's price is 100."""
    run_set_update(rdbms_url,
         "update StockTable "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == rows_after_set_update(100.0)
