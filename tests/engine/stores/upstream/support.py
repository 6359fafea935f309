"""What the ports of siddhi-store-rdbms's test suites share: the ``@Store`` options of a fixture
database, and the rows the database holds (what ``RDBMSTableTestUtils`` reads in Java)."""
from __future__ import annotations

import urllib.parse
from typing import Any

import pytest

from srota import SiddhiManager
from tests.engine.stores.test_sqltable import store_options

__all__ = ["T0", "count_rows", "manager_with_test_datasource", "rows_after_set_update", "run_set_update",
           "seed_stock_table", "store", "table_rows"]

T0 = 1_700_000_000_000


def store(url: str, **extra: str) -> str:
    """``@Store(type='rdbms', jdbc.url=..., username=..., password=..., jdbc.driver.name=...)``
    for ``url`` (a ``postgresql://`` or ``mysql://`` fixture URL) with ``extra`` options
    (``field__length='symbol:100'`` style keys: ``__`` becomes ``.``)."""
    return f"@Store({store_options(url, **{k.replace('__', '.'): v for k, v in extra.items()})})"


def table_rows(url: str, table: str) -> list[tuple[Any, ...]]:
    """Every row of ``table`` (its name as the app created it), sorted by repr."""
    p = urllib.parse.urlsplit(url)
    if p.scheme.startswith("postgres"):
        import psycopg

        with psycopg.connect(url) as conn:
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()  # unquoted: folded, as Siddhi's names
    else:
        import pymysql

        conn = pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=p.password,
                               database=p.path.lstrip("/"))
        try:
            with conn.cursor() as cur:
                cur.execute(f"SELECT * FROM `{table}`")
                rows = list(cur.fetchall())
        finally:
            conn.close()
    return sorted((tuple(r) for r in rows), key=repr)


def count_rows(url: str, table: str) -> int:
    """How many rows ``table`` has (``RDBMSTableTestUtils.getRowsInTable``)."""
    return len(table_rows(url, table))


def seed_stock_table(url: str) -> None:
    """RDBMSCUDTestCase's and RDBMSQueryTestCase's ``init()``: StockTable with WSO2 and IBM."""
    rt = SiddhiManager().create_siddhi_app_runtime(
        store(url, pool__properties="maximumPoolSize:1") + "define table StockTable (symbol string, price float, volume long); ")
    rt.start()
    rt.query("select 'WSO2' as symbol, 80f as price, 100L as volume insert into StockTable")
    rt.query("select 'IBM' as symbol, 180f as price, 200L as volume insert into StockTable")
    rt.shutdown()
    assert count_rows(url, "StockTable") == 2


def manager_with_test_datasource(url: str) -> SiddhiManager:
    """A manager whose ``TEST_DATASOURCE`` is the fixture database."""
    p = urllib.parse.urlsplit(url)
    scheme = "postgresql" if p.scheme.startswith("postgres") else "mysql"
    manager = SiddhiManager()
    manager.set_data_source("TEST_DATASOURCE", f"jdbc:{scheme}://{p.hostname}:{p.port}{p.path}",
                            p.username, p.password)
    return manager


def run_set_update(url: str, update_query: str) -> None:
    """The Set*RDBMSTableTestCaseIT app with ``update_query`` as query2's body after ``from
    UpdateStockStream``: insert WSO2 55.6, IBM 75.6, WSO2 57.6 (volume 100), then (IBM, 100, 100)."""
    streams = (
        "define stream StockStream (symbol string, price float, volume long); "
        "define stream UpdateStockStream (symbol string, price float, volume long); "
        f"{store(url, field__length='symbol:100', pool__properties='maximumPoolSize:1')}\n"
        "define table StockTable (symbol string, price float, volume long); ")
    query = ("@info(name = 'query1') from StockStream insert into StockTable ;"
             f"@info(name = 'query2') from UpdateStockStream {update_query}")
    rt = SiddhiManager().create_siddhi_app_runtime(streams + query)
    stock_stream = rt.get_input_handler("StockStream")
    update_stock_stream = rt.get_input_handler("UpdateStockStream")
    rt.start()
    stock_stream.send(["WSO2", 55.6, 100], timestamp=T0)
    stock_stream.send(["IBM", 75.6, 100], timestamp=T0 + 1)
    stock_stream.send(["WSO2", 57.6, 100], timestamp=T0 + 2)
    update_stock_stream.send(["IBM", 100.0, 100], timestamp=T0 + 3)
    rt.shutdown()


def rows_after_set_update(ibm_price: float) -> list[tuple[Any, ...]]:
    """The rows :func:`run_set_update` leaves: IBM's price is ``ibm_price``, WSO2's untouched."""
    return [("IBM", pytest.approx(ibm_price), 100), ("WSO2", pytest.approx(55.6), 100),
            ("WSO2", pytest.approx(57.6), 100)]
