"""Port of siddhi-store-rdbms's ``RDBMSCUDTestCase``: the ``#rdbms:cud`` stream processor
(INSERT/UPDATE/DELETE per event against a named datasource, transactions by correlation id,
null parameters).

Each test first does what the Java ``@BeforeMethod init()`` does: an app with an rdbms
``StockTable`` creates the table and inserts WSO2 and IBM with on-demand queries.  The Java
tests enable the function with a ``YAMLConfigManager`` (``perform.CUD.operations: true``, and
``allow.null.params.with.CUD``); here ``SiddhiManager.set_extension_properties`` does
(:func:`_manager`).  ``setDataSource("TEST_DATASOURCE", HikariDataSource)`` becomes
``set_data_source`` with the same database's JDBC URL.  The Java ``@BeforeTest
validateParameters()`` is not a ``@Test`` but asserts which argument lists Siddhi accepts, so it
is ported too (:func:`test_validateParameters`).
"""
from __future__ import annotations

import logging
from typing import Any

import pytest
from srota.engine.types import f32
from srota.grammar.errors import SiddhiAppCreationError

from tests.engine.stores.upstream.support import (
    T0,
    count_rows,
    manager_with_test_datasource,
    seed_stock_table,
    store,
    table_rows,
)

TABLE_NAME = "StockTable"



def _manager(url: str, **properties: Any) -> Any:
    """Java's YAMLConfigManager: ``rdbms:cud`` with ``perform.CUD.operations: true`` (and ``properties``)."""
    manager = manager_with_test_datasource(url)
    manager.set_extension_properties("rdbms:cud", {"perform.CUD.operations": True, **properties})
    return manager


def _table(url: str, name: str = TABLE_NAME) -> list[tuple[Any, ...]]:
    """The rows of ``name``, floats as 32-bit values, sorted by symbol."""
    return sorted(((s, f32(p), v) for s, p, v in table_rows(url, name)), key=lambda r: r[0])



def _collect(rt: Any, stream: str) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    rt.add_callback(stream, lambda events: out.extend(tuple(e.data) for e in events))
    return out


def _errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def _creates(manager: Any, app: str) -> bool:
    """Java's ``isCreationSuccessful``: the app is created (or refused with a creation error)."""
    try:
        manager.create_siddhi_app_runtime(app).shutdown()
    except SiddhiAppCreationError:
        return False
    return True


def test_validateParameters(rdbms_url: str) -> None:
    """A constant query takes no values and an optional correlation id; a query with three '?'
    takes three values and an optional correlation id; anything else is a creation error."""
    manager = _manager(rdbms_url)
    definitions = "define stream InsertStream(symbol string, price float, volume long);\n\n" \
        + store(rdbms_url, pool__properties="maximumPoolSize:1") \
        + f"define table {TABLE_NAME} (symbol string, price float, volume long); \n"
    parameterized_sql_query = f"INSERT INTO {TABLE_NAME}(symbol, price, volume) VALUES (?,?,?);"
    non_parameterized_sql_query = f"INSERT INTO {TABLE_NAME}(symbol, price, volume) VALUES ('a',10.0,1);"

    def cud(query: str, args: str) -> str:
        return f"from InsertStream#rdbms:cud(\"TEST_DATASOURCE\", \"{query}\"{args}) " \
            "select numRecords " \
            "insert into ignoreStream ;\n"

    assert not _creates(manager, definitions + cud(non_parameterized_sql_query, ", volume, 't1'"))
    assert _creates(manager, definitions + cud(non_parameterized_sql_query, ", 't1'"))
    assert _creates(manager, definitions + cud(non_parameterized_sql_query, ""))
    assert not _creates(manager, definitions + cud(parameterized_sql_query, ", 't1'"))
    assert _creates(manager, definitions + cud(parameterized_sql_query, ", symbol, price, volume"))
    assert _creates(manager, definitions + cud(parameterized_sql_query, ", symbol, price, volume, 't1'"))


def test_rdbmsCUD1(rdbms_url: str) -> None:
    """A constant UPDATE run per event reports numRecords 1 (the WSO2 row renamed WSO22)."""
    seed_stock_table(rdbms_url)
    sql_query = f"UPDATE {TABLE_NAME} SET symbol = 'WSO22' WHERE symbol = 'WSO2';"
    app = "define stream StockStream (checkSymbol string); " \
        "@info(name = 'query1') " \
        f"from StockStream#rdbms:cud(\"TEST_DATASOURCE\", \"{sql_query}\") " \
        "select numRecords " \
        "insert into OutputStream ;"
    rt = _manager(rdbms_url).create_siddhi_app_runtime(app)
    stock = rt.get_input_handler("StockStream")
    rt.start()
    out = _collect(rt, "OutputStream")
    stock.send(["WSO2"], timestamp=T0)
    rt.shutdown()
    assert out == [(1,)]
    assert _table(rdbms_url) == [("IBM", f32(180), 200), ("WSO22", f32(80), 100)]


def test_rdbmsCudTransactionTest1(rdbms_url: str) -> None:
    """Inserts under correlation id 't1' are committed (A, B, E, F) or rolled back (C, D) together."""
    seed_stock_table(rdbms_url)
    sql_query = f"INSERT INTO {TABLE_NAME}(symbol, price, volume) VALUES (?,?,?);"
    streams = "define stream InsertStream(symbol string, price float, volume long);\n" \
        "define stream CommitStream(name string);\n" \
        "define stream RollbackStream(name string);\n" \
        "define stream ListTableContentStream(dummy string);\n" \
        "define stream TableContentOutputStream(dummy string, symbol string, price float, volume long);\n\n"
    table = store(rdbms_url, pool__properties="maximumPoolSize:1") \
        + f"define table {TABLE_NAME} (symbol string, price float, volume long); \n"
    queries = f"from InsertStream#rdbms:cud(\"TEST_DATASOURCE\", \"{sql_query}\", symbol, price, volume, 't1') " \
        "select numRecords " \
        "insert into ignoreStream ;\n" \
        "from CommitStream#rdbms:cud(\"TEST_DATASOURCE\", \"COMMIT\", 't1')\n" \
        "select numRecords\n" \
        "insert into ignoreStream;\n" \
        "from RollbackStream#rdbms:cud(\"TEST_DATASOURCE\", \"ROLLBACK\", 't1')\n" \
        "select numRecords\n" \
        "insert into ignoreStream;\n" \
        f"from ListTableContentStream left outer join {TABLE_NAME}\n" \
        f"select ListTableContentStream.dummy as dummy, {TABLE_NAME}.symbol as symbol, " \
        f"{TABLE_NAME}.price as price, {TABLE_NAME}.volume as volume\n" \
        "insert into TableContentOutputStream;"
    rt = _manager(rdbms_url).create_siddhi_app_runtime(streams + table + queries)
    insert = rt.get_input_handler("InsertStream").send
    commit = rt.get_input_handler("CommitStream").send
    rollback = rt.get_input_handler("RollbackStream").send
    list_table = rt.get_input_handler("ListTableContentStream").send
    rt.start()
    out = _collect(rt, "TableContentOutputStream")
    insert(["A", 1.0, 1], timestamp=T0)
    insert(["B", 2.0, 2], timestamp=T0 + 1)
    commit(["commit"], timestamp=T0 + 2)
    insert(["C", 3.0, 3], timestamp=T0 + 3)
    insert(["D", 4.0, 4], timestamp=T0 + 4)
    rollback(["rollback"], timestamp=T0 + 5)
    insert(["E", 5.0, 5], timestamp=T0 + 6)
    insert(["F", 6.0, 6], timestamp=T0 + 7)
    commit(["commit"], timestamp=T0 + 8)
    list_table(["dummy"], timestamp=T0 + 9)
    rt.shutdown()
    assert len(out) == 6
    assert out == [("dummy", "WSO2", f32(80.0), 100), ("dummy", "IBM", f32(180.0), 200),
                   ("dummy", "A", 1.0, 1), ("dummy", "B", 2.0, 2), ("dummy", "E", 5.0, 5), ("dummy", "F", 6.0, 6)]


def test_rdbmsBatchCudTest1(rdbms_url: str) -> None:
    """Rows read with rdbms:query are batch-inserted with rdbms:cud under id '1' and committed."""
    seed_stock_table(rdbms_url)
    src, dst = TABLE_NAME + "Src", TABLE_NAME + "Dst"
    select_query = f"SELECT * FROM {src};"
    insert_query = f"INSERT INTO {dst}(symbol, price, volume) VALUES(?, ?, ?);"
    # the inserts under id '1' stay in their transaction until the 'commit' call ends it
    streams = "define stream addSrcTableRecordsStream(symbol string, price float, volume long);\n" \
        "define stream listSrcTableRecordsStream(dummy int);\n" \
        "define stream copyTableDataStream(dummy int);\n" \
        "define stream listDstTableRecordsStream(dummy int);"
    tables = store(rdbms_url, pool__properties="maximumPoolSize:1") \
        + f"define table {src} (symbol string, price float, volume long); \n" \
        + store(rdbms_url, pool__properties="maximumPoolSize:1") \
        + f"define table {dst} (symbol string, price float, volume long); \n"
    queries = "from addSrcTableRecordsStream\n" \
        "select symbol, price, volume \n" \
        f"insert into {src};\n\n" \
        f"from listSrcTableRecordsStream left outer join {src}\n" \
        f"select {src}.symbol as symbol, {src}.price as price, {src}.volume as volume\n" \
        "insert into outputSrcTableRecordsStream;\n\n" \
        "from copyTableDataStream#rdbms:query('TEST_DATASOURCE', 'symbol string, price float, volume long', '" \
        f"{select_query}')\n" \
        "select symbol, price, volume\n" \
        "insert into insertRecordStream;\n\n" \
        f"from insertRecordStream#rdbms:cud('TEST_DATASOURCE', '{insert_query}', symbol, price, volume, '1')\n" \
        "select 'REC_INSERTED' as status\n" \
        "insert into commitRecordsStream;\n\n" \
        "from commitRecordsStream#rdbms:cud('TEST_DATASOURCE', 'commit', '1')\n" \
        "insert into finalizeStream;\n\n" \
        f"from listDstTableRecordsStream left outer join {dst}\n" \
        f"select {dst}.symbol as symbol, {dst}.price as price, {dst}.volume as volume\n" \
        "insert into outputDstTableRecordsStream;"
    rt = _manager(rdbms_url).create_siddhi_app_runtime(streams + tables + queries)
    add_src = rt.get_input_handler("addSrcTableRecordsStream").send
    list_src = rt.get_input_handler("listSrcTableRecordsStream").send
    copy = rt.get_input_handler("copyTableDataStream").send
    list_dst = rt.get_input_handler("listDstTableRecordsStream").send
    rt.start()
    src_out = _collect(rt, "outputSrcTableRecordsStream")
    dst_out = _collect(rt, "outputDstTableRecordsStream")
    add_src(["WSO2", 55.6, 100], timestamp=T0)
    add_src(["IBM", 75.6, 100], timestamp=T0 + 1)
    list_src([1], timestamp=T0 + 2)
    assert len(src_out) == 2
    assert src_out == [("WSO2", f32(55.6), 100), ("IBM", f32(75.6), 100)]
    copy([1], timestamp=T0 + 3)
    list_dst([1], timestamp=T0 + 4)
    rt.shutdown()
    assert len(dst_out) == 2
    assert dst_out == [("WSO2", f32(55.6), 100), ("IBM", f32(75.6), 100)]


def test_rdbmsCUDNullParamTest1(rdbms_url: str) -> None:
    """With allow.null.params.with.CUD=true a parameterised INSERT of ('X', 1.0, 30) reports numRecords 1."""
    seed_stock_table(rdbms_url)
    # the Java text: ';' in the query and another appended for non-Oracle databases
    parameterized_sql_query = f"INSERT INTO {TABLE_NAME}(symbol, price, volume) VALUES (?,?,?);;"
    definitions = "define stream InsertStream(symbol string, price float, volume long);\n\n" \
        + store(rdbms_url, pool__properties="maximumPoolSize:1") \
        + f"define table {TABLE_NAME} (symbol string, price float, volume long); \n"
    parameterized_cud = f"from InsertStream#rdbms:cud(\"TEST_DATASOURCE\", \"{parameterized_sql_query}\", " \
        "symbol, price, volume) " \
        "select numRecords " \
        "insert into OutputStream ;\n"
    rt = _manager(rdbms_url, **{"allow.null.params.with.CUD": True}).create_siddhi_app_runtime(definitions + parameterized_cud)
    insert = rt.get_input_handler("InsertStream")
    rt.start()
    out = _collect(rt, "OutputStream")
    insert.send(["X", 1.0, 30], timestamp=T0)
    rt.shutdown()
    assert out == [(1,)]
    assert _table(rdbms_url) == [("IBM", f32(180), 200), ("WSO2", f32(80), 100), ("X", 1.0, 30)]


def test_rdbmsCUDNullParamTest2(rdbms_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """Without allow.null.params.with.CUD a null parameter is refused: no event, nothing inserted."""
    seed_stock_table(rdbms_url)
    parameterized_sql_query = f"INSERT INTO {TABLE_NAME}(symbol, price, volume) VALUES (?,?,?);;"
    definitions = "define stream InsertStream(symbol string, price float, volume long);\n\n" \
        + store(rdbms_url, pool__properties="maximumPoolSize:1") \
        + f"define table {TABLE_NAME} (symbol string, price float, volume long); \n"
    parameterized_cud = f"from InsertStream#rdbms:cud(\"TEST_DATASOURCE\", \"{parameterized_sql_query}\", " \
        "symbol, price, volume) " \
        "select numRecords " \
        "insert into OutputStream ;\n"
    rt = _manager(rdbms_url).create_siddhi_app_runtime(definitions + parameterized_cud)
    insert = rt.get_input_handler("InsertStream")
    rt.start()
    out = _collect(rt, "OutputStream")
    insert.send(["Y", 1.0, None], timestamp=T0)
    rt.shutdown()
    assert out == []
    # refused for its null (Siddhi: "Null values have been detected ... CUD functions do not
    # permit null parameters"), not for an SQL error
    assert any("null" in m.lower() for m in _errors(caplog))
    assert count_rows(rdbms_url, TABLE_NAME) == 2
