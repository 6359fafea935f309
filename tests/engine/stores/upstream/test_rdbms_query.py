"""Port of siddhi-store-rdbms's ``RDBMSQueryTestCase``: the ``#rdbms:query`` stream processor
(a SELECT per event against a named datasource; ``ack.empty.result.set``).

Each test first does what the Java ``@BeforeMethod init()`` does: an app with an rdbms
``StockTable`` creates the table and inserts two rows with on-demand queries.  The Java test
hands ``SiddhiManager.setDataSource("TEST_DATASOURCE", ...)`` a HikariDataSource of the test
database; here ``set_data_source`` gets the same database's JDBC URL.
"""
from __future__ import annotations

import logging
from typing import Any

import pytest
from srota.engine.types import f32

from tests.engine.stores.upstream.support import T0, manager_with_test_datasource, seed_stock_table

TABLE_NAME = "StockTable"




def _run(url: str, app: str, events: list[list[Any]]) -> tuple[list[tuple[Any, ...]], int]:
    """Run ``app`` with TEST_DATASOURCE, send ``events`` to StockStream; the data of the
    OutputStream events and how many callbacks there were."""
    rt = manager_with_test_datasource(url).create_siddhi_app_runtime(app)
    stock = rt.get_input_handler("StockStream")
    rt.start()
    out: list[tuple[Any, ...]] = []
    calls = [0]

    def receive(events: Any) -> None:
        calls[0] += 1
        out.extend(tuple(e.data) for e in events)

    rt.add_callback("OutputStream", receive)
    for i, e in enumerate(events):
        stock.send(e, timestamp=T0 + i)
    rt.shutdown()
    return out, calls[0]


def test_rdbmsQuery1(rdbms_url: str) -> None:
    """A constant SELECT emits one event per row: WSO2 then IBM."""
    seed_stock_table(rdbms_url)
    app = "define stream StockStream (checkSymbol string); " \
        "@info(name = 'query1') " \
        "from StockStream#rdbms:query(\"TEST_DATASOURCE\", \"symbol string, price float, volume long\", " \
        f"\"select * from {TABLE_NAME}\") " \
        "select symbol, price, volume " \
        "insert into OutputStream ;"
    out, _ = _run(rdbms_url, app, [["WSO2"]])
    assert out == [("WSO2", f32(80), 100), ("IBM", f32(180), 200)]


def test_rdbmsQuery2(rdbms_url: str) -> None:
    """The query text comes from the event (a dynamic query): WSO2 then IBM."""
    seed_stock_table(rdbms_url)
    app = "define stream StockStream (checkSymbol string, query String); " \
        "@info(name = 'query1') " \
        "from StockStream#rdbms:query(\"TEST_DATASOURCE\", \"symbol string, price float, volume long\", " \
        "query) " \
        "select symbol, price, volume " \
        "insert into OutputStream ;"
    out, _ = _run(rdbms_url, app, [["WSO2", f"select * from {TABLE_NAME}"]])
    assert out == [("WSO2", f32(80), 100), ("IBM", f32(180), 200)]


def test_rdbmsQuery3(rdbms_url: str) -> None:
    """A parameterised SELECT with a constant parameter ('WSO2') emits the WSO2 row."""
    seed_stock_table(rdbms_url)
    app = "define stream StockStream (checkSymbol string, query String); " \
        "@info(name = 'query1') " \
        "from StockStream#rdbms:query(\"TEST_DATASOURCE\", \"symbol string, price float, volume long\", " \
        f"\"select * from {TABLE_NAME} where symbol=?\", 'WSO2') " \
        "select symbol, price, volume " \
        "insert into OutputStream ;"
    out, _ = _run(rdbms_url, app, [["WSO2", f"select * from {TABLE_NAME}"]])
    assert out == [("WSO2", f32(80), 100)]


def test_rdbmsQuery4(rdbms_url: str) -> None:
    """A parameterised SELECT bound to an event attribute (checkSymbol) emits the WSO2 row."""
    seed_stock_table(rdbms_url)
    app = "define stream StockStream (checkSymbol string, query String); " \
        "@info(name = 'query1') " \
        "from StockStream#rdbms:query(\"TEST_DATASOURCE\", \"symbol string, price float, volume long\", " \
        f"\"select * from {TABLE_NAME} where symbol=?\", checkSymbol) " \
        "select symbol, price, volume " \
        "insert into OutputStream ;"
    out, _ = _run(rdbms_url, app, [["WSO2", f"select * from {TABLE_NAME}"]])
    assert out == [("WSO2", f32(80), 100)]


def test_rdbmsQuery5(rdbms_url: str) -> None:
    """ack.empty.result.set=true and no match: one event with a null symbol."""
    seed_stock_table(rdbms_url)
    app = "define stream StockStream (checkSymbol string); " \
        "@info(name = 'query1') " \
        "from StockStream#rdbms:query(\"TEST_DATASOURCE\", \"symbol string, price float, volume long\", " \
        f"\"select * from {TABLE_NAME} where symbol=?\", checkSymbol, true) " \
        "select symbol " \
        "insert into OutputStream ;"
    out, _ = _run(rdbms_url, app, [["WSO22"]])
    assert out == [(None,)]


def test_rdbmsQuery6(rdbms_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """ack.empty.result.set=false and no match: no event."""
    seed_stock_table(rdbms_url)
    app = "define stream StockStream (checkSymbol string); " \
        "@info(name = 'query1') " \
        "from StockStream#rdbms:query(\"TEST_DATASOURCE\", \"symbol string, price float, volume long\", " \
        f"\"select * from {TABLE_NAME} where symbol=?\", checkSymbol, false) " \
        "select symbol " \
        "insert into OutputStream ;"
    out, calls = _run(rdbms_url, app, [["WSO22"]])
    assert calls == 0 and out == []
    # no event because no row matched, not because the SELECT failed (Siddhi would throw)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_rdbmsQuery7(rdbms_url: str) -> None:
    """Two parameters, ack.empty.result.set=true, no match: one event with a null symbol."""
    seed_stock_table(rdbms_url)
    app = "define stream StockStream (checkSymbol string, checkVolume long); " \
        "@info(name = 'query1') " \
        "from StockStream#rdbms:query(\"TEST_DATASOURCE\", \"symbol string, price float, volume long\", " \
        f"\"select * from {TABLE_NAME} where symbol=? and volume=?\", checkSymbol, checkVolume, true) " \
        "select symbol " \
        "insert into OutputStream ;"
    out, _ = _run(rdbms_url, app, [["WSO22", 200]])
    assert out == [(None,)]


def test_rdbmsQuery8(rdbms_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """Two parameters, ack.empty.result.set=false, no match: no event."""
    seed_stock_table(rdbms_url)
    app = "define stream StockStream (checkSymbol string, checkVolume long); " \
        "@info(name = 'query1') " \
        "from StockStream#rdbms:query(\"TEST_DATASOURCE\", \"symbol string, price float, volume long\", " \
        f"\"select * from {TABLE_NAME} where symbol=? and volume=?\", checkSymbol, checkVolume, false) " \
        "select symbol " \
        "insert into OutputStream ;"
    out, calls = _run(rdbms_url, app, [["WSO22", 123]])
    assert calls == 0 and out == []
    # no event because no row matched, not because the SELECT failed (Siddhi would throw)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
