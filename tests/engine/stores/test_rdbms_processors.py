"""``#rdbms:query`` and ``#rdbms:cud`` against real PostgreSQL and MariaDB datasources."""
from __future__ import annotations

import urllib.parse
from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from srota import SiddhiManager

T0 = 1_700_000_000_000


def _manager(url: str, cud: bool = True, **cud_properties: Any) -> SiddhiManager:
    p = urllib.parse.urlsplit(url)
    scheme = "postgresql" if p.scheme.startswith("postgres") else "mariadb"
    manager = SiddhiManager()
    manager.set_data_source("SAMPLE_DB", f"jdbc:{scheme}://{p.hostname}:{p.port}{p.path}", p.username, p.password)
    if cud:  # (off by default, as Siddhi's perform.CUD.operations)
        manager.set_extension_properties("rdbms:cud", {"perform.CUD.operations": True, **cud_properties})
    return manager


APP = """
define stream Setup (sql string);
define stream Adds (name string, country string, amount double);
define stream Search (country string, floor double);
define stream Renames (old string, new string);
from Adds#rdbms:cud('SAMPLE_DB', 'INSERT INTO customers (name, country, amount) VALUES (?, ?, ?)', name, country, amount)
select name, numRecords insert into Added;
from Search#rdbms:query('SAMPLE_DB', 'name string, amount double',
    'SELECT name, amount FROM customers WHERE country = ? AND amount >= ? ORDER BY name', country, floor, true)
select country, name, amount insert into Found;
from Renames#rdbms:cud('SAMPLE_DB', 'UPDATE customers SET name = ? WHERE name = ?', new, old)
select old, numRecords insert into Renamed;
"""


def test_query_and_cud_bind_their_parameters(rdbms_url: str) -> None:
    manager = _manager(rdbms_url)
    rt = manager.create_siddhi_app_runtime(APP)
    db = rt.context.datasource("SAMPLE_DB")
    db.run(lambda cur: cur.execute("CREATE TABLE customers (name VARCHAR(64), country VARCHAR(64), amount FLOAT8)"
                                   if db.dialect.name == "postgresql" else
                                   "CREATE TABLE customers (name VARCHAR(64), country VARCHAR(64), amount DOUBLE)"))
    out: dict[str, list[tuple[Any, ...]]] = {"Added": [], "Found": [], "Renamed": []}
    for s in out:
        rt.add_callback(s, lambda events, s=s: out[s].extend(tuple(e.data) for e in events))
    rt.start()
    adds = rt.get_input_handler("Adds")
    adds.send(["ann", "LK", 10.5], timestamp=T0)
    adds.send(["bob'; DROP TABLE customers; --", "LK", 99.0], timestamp=T0 + 1)  # a value, never SQL
    adds.send(["cid", "IN", 5.0], timestamp=T0 + 2)
    rt.get_input_handler("Search").send(["LK", 10.0], timestamp=T0 + 3)
    rt.get_input_handler("Search").send(["US", 0.0], timestamp=T0 + 4)  # no rows: acknowledged with nulls
    rt.get_input_handler("Renames").send(["ann", "anna"], timestamp=T0 + 5)
    rt.get_input_handler("Renames").send(["zed", "zoe"], timestamp=T0 + 6)
    rt.shutdown()
    assert out["Added"] == [("ann", 1), ("bob'; DROP TABLE customers; --", 1), ("cid", 1)]
    assert out["Found"] == [("LK", "ann", 10.5), ("LK", "bob'; DROP TABLE customers; --", 99.0), ("US", None, None)]
    assert out["Renamed"] == [("ann", 1), ("zed", 0)]


def test_unknown_datasource_and_placeholder_count_are_creation_errors(pg_url: str) -> None:
    manager = _manager(pg_url)
    with pytest.raises(SiddhiAppCreationError, match="no datasource named 'OTHER' \\(SAMPLE_DB\\)"):
        manager.create_siddhi_app_runtime(APP.replace("'SAMPLE_DB', 'INSERT", "'OTHER', 'INSERT"))
    with pytest.raises(SiddhiAppCreationError, match="2 '\\?' placeholder\\(s\\) but 1 parameter"):
        manager.create_siddhi_app_runtime(APP.replace("WHERE name = ?', new, old)", "WHERE name = ?', new)"))
    per_event = ("define stream Q (q string, v long);\n"
                 "from Q#rdbms:query('SAMPLE_DB', 'name string', q, v) select name insert into Out;")
    with pytest.raises(SiddhiAppCreationError, match="a query given per event takes no parameters"):
        manager.create_siddhi_app_runtime(per_event)


def test_cud_is_off_until_its_system_parameter_says_so(pg_url: str) -> None:
    # Siddhi's CUDStreamProcessor: perform.CUD.operations defaults to false and refuses the app
    with pytest.raises(SiddhiAppCreationError, match="performing CUD operations is disabled.*perform.CUD"):
        _manager(pg_url, cud=False).create_siddhi_app_runtime(APP)
    _manager(pg_url).create_siddhi_app_runtime(APP).shutdown()


def test_a_null_cud_parameter_fails_its_chunk_unless_allowed(pg_url: str, caplog: pytest.LogCaptureFixture) -> None:
    # Siddhi's allow.null.params.with.CUD (default false): the chunk with a null parameter
    # writes nothing and its error is logged; allowed, the null is written
    for allowed, names in ((False, []), (True, [("nil",), ("ok",)])):
        rt = _manager(pg_url, **{"allow.null.params.with.CUD": allowed}).create_siddhi_app_runtime(APP)
        db = rt.context.datasource("SAMPLE_DB")
        db.run(lambda cur: cur.execute("DROP TABLE IF EXISTS customers"))
        db.run(lambda cur: cur.execute("CREATE TABLE customers (name VARCHAR(64), country VARCHAR(64), amount FLOAT8)"))
        rt.start()
        rt.get_input_handler("Adds").send_rows([("ok", "LK", 1.0), ("nil", "LK", None)], T0)  # one chunk
        assert sorted(db.run(lambda cur: (cur.execute("SELECT name FROM customers"), cur.fetchall())[1])) == names
        rt.shutdown()
        assert ("Null values have been detected" in caplog.text) is not allowed
        caplog.clear()


TX_APP = """
define stream Adds (name string);
define stream Commits (n int);
define stream Rollbacks (n int);
from Adds#rdbms:cud('SAMPLE_DB', 'INSERT INTO names (name) VALUES (?)', name, 't1')
select name, numRecords insert into Added;
from Commits#rdbms:cud('SAMPLE_DB', 'COMMIT', 't1') select n, numRecords insert into Ended;
from Rollbacks#rdbms:cud('SAMPLE_DB', 'rollback;', 't1') select n, numRecords insert into Ended;
"""


def _tx_runtime(url: str) -> tuple[Any, Any, dict[str, list[tuple[Any, ...]]]]:
    rt = _manager(url).create_siddhi_app_runtime(TX_APP)
    db = rt.context.datasource("SAMPLE_DB")  # the app's own connection: it sees committed rows only
    db.run(lambda cur: cur.execute("CREATE TABLE names (name VARCHAR(64))"))
    out: dict[str, list[tuple[Any, ...]]] = {"Added": [], "Ended": []}
    for s in out:
        rt.add_callback(s, lambda events, s=s: out[s].extend(tuple(e.data) for e in events))
    rt.start()
    return rt, db, out


def _names(db: Any) -> list[str]:
    return sorted(r[0] for r in db.run(lambda cur: (cur.execute("SELECT name FROM names"), cur.fetchall())[1]))


def test_cud_calls_with_a_correlation_id_share_a_transaction_until_commit_or_rollback(
        rdbms_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """Siddhi's transaction.correlation.id: the inserts under 't1' are not seen until COMMIT,
    discarded by ROLLBACK, and an open one is rolled back when the app stops."""
    rt, db, out = _tx_runtime(rdbms_url)
    adds, commit = rt.get_input_handler("Adds"), rt.get_input_handler("Commits")
    adds.send(["a"], timestamp=T0)
    adds.send_rows([("b",), ("c",)], T0 + 1)
    assert _names(db) == []  # held in the open transaction
    commit.send([1], timestamp=T0 + 2)
    assert _names(db) == ["a", "b", "c"]
    adds.send(["d"], timestamp=T0 + 3)
    rt.get_input_handler("Rollbacks").send([2], timestamp=T0 + 4)
    commit.send([3], timestamp=T0 + 5)  # nothing open: nothing to commit
    adds.send(["e"], timestamp=T0 + 6)
    assert _names(db) == ["a", "b", "c"]
    rt.shutdown()
    assert out["Added"] == [("a", 1), ("b", 1), ("c", 1), ("d", 1), ("e", 1)]
    assert out["Ended"] == [(1, 0), (2, 0), (3, 0)]
    assert "transaction 't1' on datasource 'SAMPLE_DB' neither committed nor rolled back: rolled back" in caplog.text
    check = _manager(rdbms_url).create_siddhi_app_runtime(TX_APP)
    assert _names(check.context.datasource("SAMPLE_DB")) == ["a", "b", "c"]  # e went with the stop
    check.shutdown()


def test_a_chunk_failing_in_a_transaction_leaves_nothing_and_the_transaction_goes_on(
        rdbms_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """A chunk whose statement fails (here a duplicate name) takes its earlier statements
    with it and the rest of the transaction stands: on PostgreSQL a failed statement aborts
    the whole transaction, which then refused every later statement and turned COMMIT into
    a silent rollback; on MariaDB the chunk's earlier rows stayed in."""
    rt, db, out = _tx_runtime(rdbms_url)
    db.run(lambda cur: cur.execute("CREATE UNIQUE INDEX names_unique ON names (name)"))
    adds = rt.get_input_handler("Adds")
    adds.send(["a"], timestamp=T0)
    adds.send_rows([("b",), ("a",)], T0 + 1)  # one chunk: b, then a duplicate
    assert "names_unique" in caplog.text or "Duplicate" in caplog.text
    adds.send(["c"], timestamp=T0 + 2)
    rt.get_input_handler("Commits").send([1], timestamp=T0 + 3)
    assert _names(db) == ["a", "c"]
    rt.shutdown()
    assert out["Added"] == [("a", 1), ("c", 1)]


def _kill_other_sessions(cur: Any, dialect: str) -> None:
    """End every other session on the current database, as an administrator (or a failover) would."""
    if dialect == "postgresql":
        cur.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        return
    cur.execute("SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND id <> CONNECTION_ID()")
    for (session,) in cur.fetchall():
        cur.execute(f"KILL {int(session)}")


def test_a_transaction_whose_connection_is_lost_fails_its_chunk_and_a_new_one_begins(
        rdbms_url: str, caplog: pytest.LogCaptureFixture) -> None:
    rt, db, out = _tx_runtime(rdbms_url)
    adds = rt.get_input_handler("Adds")
    adds.send(["a"], timestamp=T0)
    db.run(lambda cur: _kill_other_sessions(cur, db.dialect.name))
    adds.send(["b"], timestamp=T0 + 1)
    assert "transaction 't1' is lost, its work so far rolled back" in caplog.text
    adds.send(["c"], timestamp=T0 + 2)
    rt.get_input_handler("Commits").send([1], timestamp=T0 + 3)
    assert _names(db) == ["c"]
    rt.shutdown()
    assert out["Added"] == [("a", 1), ("c", 1)]


def test_a_correlation_id_must_be_a_constant(pg_url: str, caplog: pytest.LogCaptureFixture) -> None:
    manager = _manager(pg_url)
    with pytest.raises(SiddhiAppCreationError, match="1 '\\?' placeholder.*2 parameter.*correlation id.*constant"):
        manager.create_siddhi_app_runtime(TX_APP.replace("name, 't1')", "name, name)"))
    manager.create_siddhi_app_runtime(TX_APP.replace("'COMMIT', 't1'", "'COMMIT'")).shutdown()
    assert "'COMMIT' without a transaction correlation id has no effect" in caplog.text


def test_a_commit_whose_connection_is_lost_says_so(rdbms_url: str, caplog: pytest.LogCaptureFixture) -> None:
    rt, db, _ = _tx_runtime(rdbms_url)
    rt.get_input_handler("Adds").send(["a"], timestamp=T0)
    db.run(lambda cur: _kill_other_sessions(cur, db.dialect.name))
    rt.get_input_handler("Commits").send([1], timestamp=T0 + 1)
    assert "transaction 't1' could not commit" in caplog.text
    rt.get_input_handler("Adds").send(["b"], timestamp=T0 + 2)  # a new transaction
    rt.get_input_handler("Commits").send([2], timestamp=T0 + 3)
    assert _names(db) == ["b"]
    rt.shutdown()


def test_cud_runs_any_statement_siddhi_runs(rdbms_url: str) -> None:
    """Siddhi's CUDStreamProcessor runs whatever statement it is given (a CREATE, a TRUNCATE,
    an INSERT ... SELECT), not only INSERT/UPDATE/DELETE; numRecords is the statement's count."""
    app = ("define stream Go (n int);\n"
           "from Go#rdbms:cud('SAMPLE_DB', 'CREATE TABLE IF NOT EXISTS audit (n INT)') select n, numRecords as made "
           "insert into Made;\n"
           "from Made#rdbms:cud('SAMPLE_DB', 'INSERT INTO audit (n) SELECT ? UNION ALL SELECT ?', n, n) "
           "select n, numRecords as filled insert into Filled;\n"
           "from Filled[n == 3]#rdbms:cud('SAMPLE_DB', 'TRUNCATE TABLE audit') select n, numRecords as emptied "
           "insert into Emptied;")
    rt = _manager(rdbms_url).create_siddhi_app_runtime(app)
    out: dict[str, list[tuple[Any, ...]]] = {"Made": [], "Filled": [], "Emptied": []}
    for s in out:
        rt.add_callback(s, lambda events, s=s: out[s].extend(tuple(e.data) for e in events))
    rt.start()
    db = rt.context.datasource("SAMPLE_DB")
    go = rt.get_input_handler("Go")
    go.send([1], timestamp=T0)
    go.send([2], timestamp=T0 + 1)
    assert sorted(db.run(lambda cur: (cur.execute("SELECT n FROM audit"), cur.fetchall())[1])) == [(1,), (1,), (2,), (2,)]
    go.send([3], timestamp=T0 + 2)
    assert db.run(lambda cur: (cur.execute("SELECT n FROM audit"), cur.fetchall())[1]) in ([], ())
    rt.shutdown()
    assert out["Made"] == [(1, 0), (2, 0), (3, 0)]
    assert out["Filled"] == [(1, 2), (2, 2), (3, 2)]
    assert out["Emptied"] == [(3, 0)]


@pytest.mark.parametrize("query", ["DROP TABLE audit", "alter table audit add column m int",
                                   "UPDATE audit SET dropped = 1 WHERE n = ?"])
def test_cud_refuses_what_siddhi_calls_unauthorised(pg_url: str, query: str) -> None:
    """Siddhi drops every event of an rdbms:cud whose query contains DROP or ALTER (any case,
    anywhere: RDBMSStreamProcessorUtil.queryContainsCheck); the query is a constant, so Srota
    refuses the app."""
    args = ", n" if "?" in query else ""
    app = f"define stream Go (n int);\nfrom Go#rdbms:cud('SAMPLE_DB', '{query}'{args}) select n insert into Out;"
    with pytest.raises(SiddhiAppCreationError, match="the query has unauthorised operations"):
        _manager(pg_url).create_siddhi_app_runtime(app)


def test_cud_refuses_a_select(pg_url: str) -> None:
    """A SELECT in a JDBC batch fails every chunk in Siddhi (a result where none was expected)."""
    app = "define stream Go (n int);\nfrom Go#rdbms:cud('SAMPLE_DB', 'SELECT 1') select n insert into Out;"
    with pytest.raises(SiddhiAppCreationError, match="a SELECT returns rows.*use rdbms:query"):
        _manager(pg_url).create_siddhi_app_runtime(app)


def test_a_failing_cud_statement_drops_its_chunk_with_siddhis_message(
        rdbms_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """Siddhi: "Error in manipulating records from datasource 'X': <the driver's message>", and
    nothing of the chunk is written (its statements run in one transaction)."""
    rt = _manager(rdbms_url).create_siddhi_app_runtime(APP)
    db = rt.context.datasource("SAMPLE_DB")
    db.run(lambda cur: cur.execute("CREATE TABLE customers (name VARCHAR(4), country VARCHAR(64), amount FLOAT8)"
                                   if db.dialect.name == "postgresql" else
                                   "CREATE TABLE customers (name VARCHAR(4), country VARCHAR(64), amount DOUBLE)"))
    if db.dialect.name != "postgresql":  # (MariaDB truncates a long value in a non-strict session)
        db.run(lambda cur: cur.execute("SET SESSION sql_mode = 'STRICT_ALL_TABLES'"))
    added: list[tuple[Any, ...]] = []
    rt.add_callback("Added", lambda events: added.extend(tuple(e.data) for e in events))
    rt.start()
    rt.get_input_handler("Adds").send_rows([("ann", "LK", 1.0), ("too long", "LK", 2.0)], T0)  # one chunk
    rt.get_input_handler("Adds").send(["bob", "LK", 3.0], timestamp=T0 + 1)
    rows = db.run(lambda cur: (cur.execute("SELECT name FROM customers"), cur.fetchall())[1])
    rt.shutdown()
    assert added == [("bob", 1)]
    assert [tuple(r) for r in rows] == [("bob",)]
    assert "Error in manipulating records from datasource 'SAMPLE_DB': " in caplog.text


def test_query_reads_a_null_column_as_jdbc_does(rdbms_url: str) -> None:
    """Siddhi's QueryStreamProcessor reads columns with JDBC's getters: a NULL number reads as
    0 and a NULL bool as false; only a string stays null (ack.empty.result.set's row is all null)."""
    app = ("define stream Ask (k int);\n"
           "from Ask#rdbms:query('SAMPLE_DB', 's string, i int, l long, f float, d double, b bool', "
           "'SELECT s, i, l, f, d, b FROM nulls WHERE k = ?', k, true) select k, s, i, l, f, d, b insert into Out;")
    rt = _manager(rdbms_url).create_siddhi_app_runtime(app)
    db = rt.context.datasource("SAMPLE_DB")
    db.run(lambda cur: cur.execute("CREATE TABLE nulls (k INT, s VARCHAR(8), i INT, l BIGINT, f REAL, d DOUBLE "
                                   "PRECISION, b BOOLEAN)"))
    db.run(lambda cur: cur.execute("INSERT INTO nulls VALUES (1, NULL, NULL, NULL, NULL, NULL, NULL)"))
    out: list[tuple[Any, ...]] = []
    rt.add_callback("Out", lambda events: out.extend(tuple(e.data) for e in events))
    rt.start()
    rt.get_input_handler("Ask").send([1], timestamp=T0)
    rt.get_input_handler("Ask").send([2], timestamp=T0 + 1)
    rt.shutdown()
    assert out == [(1, None, 0, 0, 0.0, 0.0, False), (2, None, None, None, None, None, None)]


def test_query_refuses_an_object_result_type(pg_url: str) -> None:
    """Siddhi's attribute.definition.list takes bool, double, float, int, long and string."""
    app = ("define stream Ask (k int);\n"
           "from Ask#rdbms:query('SAMPLE_DB', 'o object', 'SELECT 1') select o insert into Out;")
    with pytest.raises(SiddhiAppCreationError, match="attribute definition 'o object'"):
        _manager(pg_url).create_siddhi_app_runtime(app)
