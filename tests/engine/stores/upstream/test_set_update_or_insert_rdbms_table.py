"""Port of siddhi-store-rdbms's ``SetUpdateOrInsertRDBMSTableTestCaseIT`` (io.siddhi.extension.store.rdbms.set):
``update or insert into ... set ...`` of an ``@Store(type='rdbms')`` table, run on PostgreSQL and MariaDB."""
from __future__ import annotations

from typing import Any

from srota.engine import Event

from srota import SiddhiManager
from tests.engine.stores.upstream.support import (
    T0,
    count_rows,
    rows_after_set_update,
    run_set_update,
    store,
    table_rows,
)

TABLE_NAME = "StockTable"


def test_setUpdateOrInsertRDBMSTableTestCase1(rdbms_url: str) -> None:
    """Setting all columns from the event updates IBM's row (price 100); 3 rows."""
    run_set_update(rdbms_url,
         "update or insert into StockTable "
         "set StockTable.price = price, StockTable.symbol = symbol, "
         "   StockTable.volume = volume  "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == rows_after_set_update(100.0)


def test_setUpdateOrInsertRDBMSTableTestCase2(rdbms_url: str) -> None:
    """Setting a subset of columns (price, symbol) updates IBM's price to 100; 3 rows."""
    run_set_update(rdbms_url,
         "update or insert into StockTable "
         "set StockTable.price = price, StockTable.symbol = symbol "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == rows_after_set_update(100.0)


def test_setUpdateOrInsertRDBMSTableTestCase3(rdbms_url: str) -> None:
    """A constant as the assignment (StockTable.price = 10) sets IBM's price to 10; 3 rows."""
    run_set_update(rdbms_url,
         "update or insert into StockTable "
         "set StockTable.price = 10 "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == rows_after_set_update(10.0)


def test_setUpdateOrInsertRDBMSTableTestCase4(rdbms_url: str) -> None:
    """An expression of the event (price + 100) as the assignment: IBM's price is 200; 3 rows."""
    run_set_update(rdbms_url,
         "update or insert into StockTable "
         "set StockTable.price = price + 100  "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == rows_after_set_update(200.0)


def test_setUpdateOrInsertRDBMSTableTestCase5(rdbms_url: str) -> None:
    """Arithmetic on an output attribute (price + 100) as the assignment: IBM's price is 200; 3 rows."""
    run_set_update(rdbms_url,
         "update or insert into StockTable "
         "set StockTable.price = price + 100 "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == rows_after_set_update(200.0)


def test_setUpdateOrInsertRDBMSTableTestCase6(rdbms_url: str) -> None:
    """The table name may be left out of the set's left side (set price = 100): IBM's price is 100."""
    run_set_update(rdbms_url,
         "update or insert into StockTable "
         "set price = 100 "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == rows_after_set_update(100.0)


def test_setUpdateOrInsertRDBMSTableTestCase7(rdbms_url: str) -> None:
    """The set clause is optional: every column is set from the event, IBM's price is 100."""
    run_set_update(rdbms_url,
         "update or insert into StockTable "
         "   on StockTable.symbol == symbol ;")
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Update failed"
    assert table_rows(rdbms_url, TABLE_NAME) == rows_after_set_update(100.0)


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
