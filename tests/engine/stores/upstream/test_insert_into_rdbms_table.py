"""Port of siddhi-store-rdbms's ``InsertIntoRDBMSTableTestCaseIT`` (io.siddhi.extension.store.rdbms):
``insert into`` an ``@Store(type='rdbms')`` table, run on PostgreSQL and MariaDB."""
from __future__ import annotations

import random
import string
from typing import Any

import pytest

from srota import SiddhiManager
from tests.engine.stores.upstream.support import T0, count_rows, store, table_rows

TABLE_NAME = "StockTable"


def _big_message() -> str:
    """5000 alphanumeric characters, like upstream's ``insertInto/big-message.log`` (one line of
    random letters and digits); made here so the test needs no copy of that file."""
    rng = random.Random(5000)
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(5000))


def test_insertIntoRDBMSTableTest1(rdbms_url: str) -> None:
    """Inserting only some fields of the stream (select symbol, volume) stores one row per event."""
    streams = (
        "define stream StockStream (symbol string, price float, volume long); "
        f"{store(rdbms_url, field__length='symbol:100', pool__properties='maximumPoolSize:1')}\n"
        "@PrimaryKey(\"symbol\")"
        "define table StockTable (symbol string, volume long); ")
    query1 = (
        "@info(name = 'query1') "
        "from StockStream\n"
        "select symbol, volume\n"
        "insert into StockTable ;")
    rt = SiddhiManager().create_siddhi_app_runtime(streams + query1)
    stock_stream = rt.get_input_handler("StockStream")
    rt.start()
    stock_stream.send(["WSO2", 55.6, 100], timestamp=T0)
    stock_stream.send(["IBM", 75.6, 100], timestamp=T0 + 1)
    assert count_rows(rdbms_url, TABLE_NAME) == 2, "Definition/Insertion failed"
    assert table_rows(rdbms_url, TABLE_NAME) == [("IBM", 100), ("WSO2", 100)]
    rt.shutdown()


def test_insertIntoRDBMSTableTest2(rdbms_url: str) -> None:
    """A compound primary key (symbol, price): the same symbol with another price is a new row."""
    streams = (
        "define stream StockStream (symbol string, price float, volume long); "
        f"{store(rdbms_url, field__length='symbol:100', pool__properties='maximumPoolSize:1')}\n"
        "@PrimaryKey(\"symbol, price\")"
        "define table StockTable (symbol string, price float, volume long); ")
    query = (
        "@info(name = 'query1') "
        "from StockStream   "
        "insert into StockTable ;")
    rt = SiddhiManager().create_siddhi_app_runtime(streams + query)
    stock_stream = rt.get_input_handler("StockStream")
    rt.start()
    stock_stream.send(["WSO2", 55.6, 100], timestamp=T0)
    stock_stream.send(["IBM", 75.6, 100], timestamp=T0 + 1)
    stock_stream.send(["MSFT", 57.6, 100], timestamp=T0 + 2)
    stock_stream.send(["WSO2", 58.6, 100], timestamp=T0 + 3)
    assert count_rows(rdbms_url, TABLE_NAME) == 4, "Definition/Insertion failed"
    assert table_rows(rdbms_url, TABLE_NAME) == [
        ("IBM", pytest.approx(75.6), 100), ("MSFT", pytest.approx(57.6), 100),
        ("WSO2", pytest.approx(55.6), 100), ("WSO2", pytest.approx(58.6), 100)]
    rt.shutdown()


@pytest.mark.xfail(strict=True, reason="srota differs: the test sends 2 values to a 3-attribute stream, which "
                   "Srota refuses with the counts (Siddhi accepts it while the missing value goes unused)",
                   raises=ValueError)
def test_insertIntoRDBMSTableTest3(rdbms_url: str) -> None:
    """A second table (MyTable, fewer columns) over the same database table via table.name
    inserts into it; the columns it lacks stay null."""
    streams = "define stream StockStream (symbol string, price float, volume long);\n"
    table = (
        f"{store(rdbms_url, field__length='symbol:100', pool__properties='maximumPoolSize:1')}\n"
        "@PrimaryKey(\"symbol, price\")"
        "define table StockTable (symbol string, price float, volume long);\n"
        f"{store(rdbms_url, table__name='StockTable', field__length='symbol:100')}\n"
        "@PrimaryKey(\"symbol, price\")"
        "define table MyTable (symbol string, price float);\n")
    query = (
        "@info(name = 'query1') "
        "from StockStream   "
        "select symbol, price "
        "insert into MyTable ;")
    rt = SiddhiManager().create_siddhi_app_runtime(streams + table + query)
    stock_stream = rt.get_input_handler("StockStream")
    rt.start()
    # as upstream: two values for a three-attribute stream (volume is never read)
    stock_stream.send(["WSO2", 55.6], timestamp=T0)
    stock_stream.send(["IBM", 75.6], timestamp=T0 + 1)
    stock_stream.send(["MSFT", 57.6], timestamp=T0 + 2)
    stock_stream.send(["WSO2", 58.6], timestamp=T0 + 3)
    assert count_rows(rdbms_url, TABLE_NAME) == 4, "Definition/Insertion failed"
    assert table_rows(rdbms_url, TABLE_NAME) == [
        ("IBM", pytest.approx(75.6), None), ("MSFT", pytest.approx(57.6), None),
        ("WSO2", pytest.approx(55.6), None), ("WSO2", pytest.approx(58.6), None)]
    rt.shutdown()


def test_insertIntoRDBMSTableTest4(rdbms_url: str) -> None:
    """A 5000-character message (field.length message:5000) is stored and read back whole by a join."""
    big_message = _big_message()
    streams = ("define stream StockStream (symbol string, message string);\n"
               "define stream JoinStream (symbol string);\n")
    table = (
        f"{store(rdbms_url, table__name='StockTable', field__length='symbol:100, message:5000', pool__properties='maximumPoolSize:1')}\n"  # noqa: E501
        "@PrimaryKey(\"symbol\")"
        f"define table {TABLE_NAME} (symbol string, message string);\n")
    query = (
        "@info(name = 'query1') "
        "from StockStream   "
        "select symbol, message "
        f"insert into {TABLE_NAME} ;"
        "@info(name = 'query2') "
        f"from JoinStream join {TABLE_NAME} on JoinStream.symbol == {TABLE_NAME}.symbol "
        "select JoinStream.symbol, message "
        "insert into OutStream;")
    rt = SiddhiManager().create_siddhi_app_runtime(streams + table + query)
    stock_stream = rt.get_input_handler("StockStream")
    join_stream = rt.get_input_handler("JoinStream")
    received: list[tuple[Any, ...]] = []
    rt.add_query_callback("query2", lambda ts, ins, removed: received.extend(tuple(e.data) for e in ins or ()))
    rt.start()
    stock_stream.send(["wso2", big_message], timestamp=T0)
    join_stream.send(["wso2"], timestamp=T0 + 1)
    assert len(received) == 1, "Number of success events"
    assert received[0] == ("wso2", big_message)
    rt.shutdown()


def test_insertIntoRDBMSTableTest5(rdbms_url: str) -> None:
    """Without allow.null.values, an event with a null numeric value is not inserted (nor is a
    second event with an existing primary key): 3 rows."""
    streams = "define stream StockStream (symbol string, price float, volume long);\n"
    table = (
        f"{store(rdbms_url, table__name='StockTable', field__length='symbol:100')}\n"
        "@PrimaryKey(\"symbol\")"
        "define table MyTable (symbol string, price float, volume long);\n")
    query = (
        "@info(name = 'query1') "
        "from StockStream   "
        "select symbol, price, volume "
        "insert into MyTable ;")
    rt = SiddhiManager().create_siddhi_app_runtime(streams + table + query)
    stock_stream = rt.get_input_handler("StockStream")
    rt.start()
    stock_stream.send(["WSO2", 55.6, None], timestamp=T0)
    stock_stream.send(["WSO2", 55.6, 100], timestamp=T0 + 1)
    stock_stream.send(["IBM", None, 80], timestamp=T0 + 2)
    stock_stream.send(["MSFT", 57.6, 50], timestamp=T0 + 3)
    stock_stream.send(["BMS", 58.6, 60], timestamp=T0 + 4)
    assert count_rows(rdbms_url, TABLE_NAME) == 3, "Definition/Insertion failed"
    assert table_rows(rdbms_url, TABLE_NAME) == [
        ("BMS", pytest.approx(58.6), 60), ("MSFT", pytest.approx(57.6), 50), ("WSO2", pytest.approx(55.6), 100)]
    rt.shutdown()


def test_insertIntoRDBMSTableTest6(rdbms_url: str) -> None:
    """With allow.null.values='true', events with null numeric values are inserted: 5 rows."""
    streams = "define stream StockStream (symbol string, price float, volume long);\n"
    table = (
        f"{store(rdbms_url, table__name='StockTable', field__length='symbol:100', allow__null__values='true')}\n"
        "@PrimaryKey(\"symbol\")"
        "define table MyTable (symbol string, price float, volume long);\n")
    query = (
        "@info(name = 'query1') "
        "from StockStream   "
        "select symbol, price, volume "
        "insert into MyTable ;")
    rt = SiddhiManager().create_siddhi_app_runtime(streams + table + query)
    stock_stream = rt.get_input_handler("StockStream")
    rt.start()
    stock_stream.send(["WSO2", 55.6, None], timestamp=T0)
    stock_stream.send(["BMS", 56.6, 100], timestamp=T0 + 1)
    stock_stream.send(["IBM", None, 80], timestamp=T0 + 2)
    stock_stream.send(["MSFT", 57.6, 50], timestamp=T0 + 3)
    stock_stream.send(["LSF", 58.6, 60], timestamp=T0 + 4)
    assert count_rows(rdbms_url, TABLE_NAME) == 5, "Definition/Insertion failed"
    assert table_rows(rdbms_url, TABLE_NAME) == [
        ("BMS", pytest.approx(56.6), 100), ("IBM", None, 80), ("LSF", pytest.approx(58.6), 60),
        ("MSFT", pytest.approx(57.6), 50), ("WSO2", pytest.approx(55.6), None)]
    rt.shutdown()
