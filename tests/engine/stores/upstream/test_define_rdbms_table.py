"""Port of siddhi-store-rdbms's ``DefineRDBMSTableTestCaseIT``: defining ``@Store(type='rdbms')``
tables (connection options, ``field.length``, ``pool.properties``, ``table.name``, indexes).

Where the Java test expects a misconfigured table to fail, Siddhi creates the app and, at
``start()``, logs the failure ("Error while connecting to Table ... will retry in '5 sec'" or
"Error starting Siddhi App").  Srota checks the store when the app is created (it connects
then) and refuses the app with one :class:`SiddhiAppCreationError` naming the cause (as
``test_sqltable.test_bad_login_missing_database_and_schema_clash_are_one_clear_line`` holds),
so those ports assert that error and its cause.
"""
from __future__ import annotations

import urllib.parse
from typing import Any

import pytest
from srota.engine.types import f32
from srota.grammar.errors import SiddhiAppCreationError

from srota import SiddhiManager
from tests.engine.stores.upstream.support import T0, count_rows, store, table_rows

STREAM = "define stream StockStream (symbol string, price float, volume long); "
TABLE = "define table StockTable (symbol string, price float, volume long); "
QUERY = "@info(name = 'query1') from StockStream   insert into StockTable ;"
THREE = [("WSO2", 55.6, 100), ("IBM", 75.6, 100), ("MSFT", 57.6, 100)]



def _rows(url: str, table: str) -> list[tuple[Any, ...]]:
    """The rows of ``table`` by symbol, the float column as a 32-bit value."""
    return sorted(((s, f32(p), v) for s, p, v in table_rows(url, table)), key=lambda r: r[0])


def _expected(events: list[tuple[str, float, int]]) -> list[tuple[Any, ...]]:
    return sorted(((s, f32(p), v) for s, p, v in events), key=lambda r: r[0])


def _opts(url: str, drop: tuple[str, ...] = (), **override: str) -> str:
    """``store(url, ...)`` with the Java test's options: some left out (``drop``) or replaced
    (``jdbc__url=''`` style keys)."""
    text = store(url, **override)
    for key in drop:
        # store() writes "key='value'"; the option is left out of the annotation
        start = text.index(f"{key}='")
        end = text.index("'", start + len(key) + 2) + 1
        text = text[:start] + text[end:].lstrip(", ")
    return text.replace(", )", ")")


def _run(app: str, events: list[tuple[str, float, int]]) -> None:
    """Create, start, send ``events`` one by one, shut down."""
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    send = rt.get_input_handler("StockStream").send
    rt.start()
    for i, e in enumerate(events):
        send(list(e), timestamp=T0 + i)
    rt.shutdown()


def _refused(app: str) -> str:
    """The error the app is refused with (Siddhi logs it at start instead: module doc)."""
    with pytest.raises(SiddhiAppCreationError) as info:
        rt = SiddhiManager().create_siddhi_app_runtime(app)
        rt.start()
        rt.shutdown()
    return str(info.value)


def _index_count(url: str, table: str) -> int:
    """How many indexes ``table`` has, primary key included (``getIndexesInTable``)."""
    p = urllib.parse.urlsplit(url)
    if p.scheme.startswith("postgres"):
        import psycopg

        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT count(DISTINCT indexname) FROM pg_indexes WHERE tablename = %s",
                               (table.lower(),)).fetchone()  # (PostgreSQL folds the name)
    else:
        import pymysql

        conn = pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=p.password,
                               database=p.path.lstrip("/"))
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT count(DISTINCT INDEX_NAME) FROM information_schema.statistics "
                            "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s", (table,))
                row = cur.fetchone()
        finally:
            conn.close()
    assert row is not None
    return int(row[0])


def test_rdbmstabledefinitiontest1(rdbms_url: str) -> None:
    """A table is created and takes the three inserted events."""
    app = STREAM + store(rdbms_url, field__length="symbol:100", pool__properties="maximumPoolSize:1") + "\n" \
        + TABLE + QUERY
    _run(app, THREE)
    assert count_rows(rdbms_url, "StockTable") == 3
    assert _rows(rdbms_url, "StockTable") == _expected(THREE)


def test_rdbmstabledefinitiontest2(rdbms_url: str) -> None:
    """A @PrimaryKey naming no attribute makes the table fail (Siddhi: logged, retried)."""
    app = STREAM + store(rdbms_url, field__length="symbol:100", pool__properties="maximumPoolSize:1") + "\n" \
        + '@PrimaryKey("testPrimary")' + TABLE + QUERY
    assert "testPrimary" in _refused(app)


def test_rdbmstabledefinitiontest3(rdbms_url: str) -> None:
    """A store without jdbc.url makes the table fail (Siddhi: logged, retried)."""
    app = STREAM + _opts(rdbms_url, ("jdbc.url",), field__length="symbol:100",
                         pool__properties="maximumPoolSize:1") + "\n" + TABLE + QUERY
    assert "jdbc.url" in _refused(app)


def test_rdbmstabledefinitiontest4(rdbms_url: str) -> None:
    """An empty jdbc.url makes the table fail (Siddhi: logged, retried)."""
    app = STREAM + store(rdbms_url, jdbc__url="", field__length="symbol:100",
                         pool__properties="maximumPoolSize:1") + "\n" + TABLE + QUERY
    assert "jdbc.url" in _refused(app)


def test_rdbmstabledefinitiontest5(rdbms_url: str) -> None:
    """A malformed jdbc.url makes the app fail to start."""
    app = STREAM + store(rdbms_url, jdbc__url="jdsbc:h2:repository/database/ANALYTICS_EVENT_STORE",
                         field__length="symbol:100", pool__properties="maximumPoolSize:1") + "\n" + TABLE + QUERY
    assert "jdsbc:h2:repository/database/ANALYTICS_EVENT_STORE" in _refused(app)


def test_rdbmstabledefinitiontest6(rdbms_url: str) -> None:
    """A store without a password (the server needs one) makes the app fail to start."""
    app = STREAM + _opts(rdbms_url, ("password",), field__length="symbol:100",
                         pool__properties="maximumPoolSize:1") + "\n" + TABLE + QUERY
    assert "table 'StockTable': cannot connect" in _refused(app)


def test_rdbmstabledefinitiontest7(rdbms_url: str) -> None:
    """An empty password makes the app fail to start."""
    app = STREAM + store(rdbms_url, password="", field__length="symbol:100",
                         pool__properties="maximumPoolSize:1") + "\n" + TABLE + QUERY
    assert "table 'StockTable': cannot connect" in _refused(app)


def test_rdbmstabledefinitiontest8(rdbms_url: str) -> None:
    """A wrong password makes the app fail to start."""
    app = STREAM + store(rdbms_url, password="root###", field__length="symbol:100",
                         pool__properties="maximumPoolSize:1") + "\n" + TABLE + QUERY
    msg = _refused(app)
    assert "table 'StockTable': cannot connect" in msg
    assert "check username/password" in msg


def test_rdbmstabledefinitiontest9(rdbms_url: str) -> None:
    """A store without username fails to initialise table 'StockTable'."""
    app = STREAM + _opts(rdbms_url, ("username",), field__length="symbol:100",
                         pool__properties="maximumPoolSize:1") + "\n" + TABLE + QUERY
    assert "table 'StockTable'" in _refused(app)


def test_rdbmstabledefinitiontest10(rdbms_url: str) -> None:
    """An empty username fails to initialise table 'StockTable'."""
    app = STREAM + store(rdbms_url, username="", field__length="symbol:100",
                         pool__properties="maximumPoolSize:1") + "\n" + TABLE + QUERY
    assert "table 'StockTable'" in _refused(app)


def test_rdbmstabledefinitiontest11(rdbms_url: str) -> None:
    """A wrong username: error while connecting to table 'StockTable'."""
    app = STREAM + store(rdbms_url, username="root####", field__length="symbol:100",
                         pool__properties="maximumPoolSize:1") + "\n" + TABLE + QUERY
    msg = _refused(app)
    assert "table 'StockTable': cannot connect" in msg
    assert "root####" in msg


def test_rdbmstabledefinitiontest12(rdbms_url: str) -> None:
    """Without field.length the table is created with default string lengths and takes a row."""
    app = STREAM + store(rdbms_url, pool__properties="maximumPoolSize:1") + "\n" + TABLE + QUERY
    _run(app, THREE[:1])
    assert count_rows(rdbms_url, "StockTable") == 1
    assert _rows(rdbms_url, "StockTable") == _expected(THREE[:1])


def test_rdbmstabledefinitiontest13(rdbms_url: str) -> None:
    """field.length for an attribute the table lacks ('length:254') makes the table fail."""
    app = STREAM + store(rdbms_url, field__length="length:254", pool__properties="maximumPoolSize:1") + "\n" \
        + TABLE + QUERY
    assert "length" in _refused(app)


def test_rdbmstabledefinitiontest14() -> None:
    """jndi.resource names a JNDI datasource, which wins over the bogus jdbc.url/username/password."""
    pytest.skip("needs a JNDI naming context (java:comp/env/jdbc/TestDB bound to a HikariDataSource); Srota has "
                "no JNDI; its named datasources (datasource='NAME', SiddhiManager.set_data_source) are tested "
                "in test_sqltable.test_a_store_may_name_a_datasource")


def test_rdbmstabledefinitiontest15() -> None:
    """An unknown jndi.resource makes the table fail (logged, retried)."""
    pytest.skip("needs a JNDI naming context: the point is a failed JNDI lookup; Srota has no JNDI, and the "
                "test's jdbc.url is H2 (jdbc:h2:./target/testdb###), which Srota refuses for that reason alone")


def test_rdbmstabledefinitiontest16(rdbms_url: str) -> None:
    """Valid pool.properties (maximumPoolSize:2, maxLifetime:60000) are accepted; three rows."""
    app = STREAM + store(rdbms_url, field__length="symbol:100",
                         pool__properties="maximumPoolSize:2, maxLifetime:60000") + "\n" + TABLE + QUERY
    _run(app, THREE)
    assert count_rows(rdbms_url, "StockTable") == 3
    assert _rows(rdbms_url, "StockTable") == _expected(THREE)


def test_rdbmstabledefinitiontest17(rdbms_url: str) -> None:
    """An unknown pool property (maxWSO2) makes the app fail to start."""
    app = STREAM + store(rdbms_url, field__length="symbol:100",
                         pool__properties="maximumPoolSize:5,maxWSO2:60000") + "\n" + TABLE + QUERY
    assert "maxWSO2" in _refused(app)


def test_rdbmstabledefinitiontest18(rdbms_url: str) -> None:
    """A pool property with a bad value (maxLifetime:WSO2) makes the app fail, naming 'WSO2'."""
    app = STREAM + store(rdbms_url, field__length="symbol:100",
                         pool__properties="maximumPoolSize:5, maxLifetime:WSO2") + "\n" + TABLE + QUERY
    assert "WSO2" in _refused(app)


def test_rdbmstabledefinitiontest19(rdbms_url: str) -> None:
    """table.name='FooTable' on a table defined as FooTable: the rows land in FooTable."""
    app = STREAM + store(rdbms_url, field__length="symbol:100", table__name="FooTable",
                         pool__properties="maximumPoolSize:1") + "\n" \
        + "define table FooTable (symbol string, price float, volume long); " \
        + "@info(name = 'query1') from StockStream insert into FooTable;"
    _run(app, THREE)
    assert count_rows(rdbms_url, "FooTable") == 3
    assert _rows(rdbms_url, "FooTable") == _expected(THREE)


def test_rdbmstabledefinitiontest20(rdbms_url: str) -> None:
    """An empty table.name falls back to the table's id (StockTable)."""
    app = STREAM + store(rdbms_url, field__length="symbol:100", table__name="",
                         pool__properties="maximumPoolSize:1, maxLifetime:60000") + "\n" + TABLE \
        + "@info(name = 'query1') from StockStream insert into StockTable;"
    _run(app, THREE)
    assert count_rows(rdbms_url, "StockTable") == 3
    assert _rows(rdbms_url, "StockTable") == _expected(THREE)


def test_rdbmstabledefinitiontest21(rdbms_url: str) -> None:
    """table.name='FooTable' on StockTable: inserts into StockTable land in database table FooTable."""
    app = STREAM + store(rdbms_url, field__length="symbol:100", table__name="FooTable",
                         pool__properties="maximumPoolSize:1") + "\n" + TABLE \
        + "@info(name = 'query1') from StockStream insert into StockTable;"
    _run(app, THREE)
    assert count_rows(rdbms_url, "FooTable") == 3
    assert _rows(rdbms_url, "FooTable") == _expected(THREE)


@pytest.mark.xfail(strict=True, reason="disabled upstream (enabled = false): the two definitions on FooTable "
                                       "clash (volume vs length, name), so not even Siddhi inserts the rows")
def test_rdbmstabledefinitiontest22(rdbms_url: str) -> None:
    """Disabled upstream: a second table with table.name of an existing, differently shaped table."""
    streams = STREAM + store(rdbms_url, field__length="symbol:100", table__name="FooTable",
                             pool__properties="maximumPoolSize:1") + "\n" \
        + "define table FooTable (symbol string, price float, length int, name string);"
    streams2 = store(rdbms_url, field__length="symbol:100", table__name="FooTable") + "\n" \
        + '@PrimaryKey("symbol")' + TABLE.strip()
    _run(streams + streams2 + "@info(name = 'query1') from StockStream insert into StockTable;", THREE)
    assert count_rows(rdbms_url, "FooTable") == 3


def test_rdbmstabledefinitiontest23(rdbms_url: str) -> None:
    """A second table (StockTable2) with table.name='StockTable' shares the database table."""
    streams2 = store(rdbms_url, field__length="symbol:100", table__name="StockTable") + "\n" \
        + "define table StockTable2 (symbol string, price float, volume long); "
    app = STREAM + store(rdbms_url, field__length="symbol:100", pool__properties="maximumPoolSize:1") + "\n" \
        + TABLE + streams2 + QUERY
    _run(app, THREE)
    assert count_rows(rdbms_url, "StockTable") == 3
    assert _rows(rdbms_url, "StockTable") == _expected(THREE)


def test_rdbmstabledefinitiontest24(rdbms_url: str) -> None:
    """A custom table.check.query is accepted; the table is created and takes three rows."""
    streams2 = store(rdbms_url, field__length="symbol:100", table__name="StockTable") + "\n" \
        + "define table StockTable2 (symbol string, price float, volume long); "
    app = STREAM + store(rdbms_url, table__name="StockTable", table__check__query="SELECT 1 FROM StockTable LIMIT 1",
                         field__length="symbol:100", pool__properties="maximumPoolSize:1") + "\n" \
        + TABLE + streams2 + QUERY
    _run(app, THREE)
    assert count_rows(rdbms_url, "StockTable") == 3
    assert _rows(rdbms_url, "StockTable") == _expected(THREE)


def test_rdbmstabledefinitiontest25(rdbms_url: str) -> None:
    """@PrimaryKey('symbol'), @Index('volume'), @Index('symbol', 'volume'): three rows, three indexes."""
    app = STREAM + store(rdbms_url, field__length="symbol:100", pool__properties="maximumPoolSize:1") + "\n" \
        + '@PrimaryKey("symbol")@Index("volume")@Index("symbol", "volume")' + TABLE + QUERY
    _run(app, THREE)
    assert count_rows(rdbms_url, "StockTable") == 3
    assert _rows(rdbms_url, "StockTable") == _expected(THREE)
    # the primary key's index and one per @Index annotation (the second one on two columns)
    assert _index_count(rdbms_url, "StockTable") == 3
