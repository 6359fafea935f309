"""``@store(type='rdbms')`` tables against real PostgreSQL 15 and MariaDB 10.11 servers."""
from __future__ import annotations

import urllib.parse
from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from srota import SiddhiManager

T0 = 1_700_000_000_000


def store_options(url: str, **extra: str) -> str:
    """``@store(...)`` options for a fixture URL, written the siddhi-store-rdbms way."""
    p = urllib.parse.urlsplit(url)
    scheme = "postgresql" if p.scheme.startswith("postgres") else "mysql"
    opts = {"type": "rdbms", "jdbc.url": f"jdbc:{scheme}://{p.hostname}:{p.port}{p.path}",
            "username": p.username or "", "password": p.password or "",
            "jdbc.driver.name": "org.postgresql.Driver" if scheme == "postgresql" else "org.mariadb.jdbc.Driver",
            **extra}
    return ", ".join(f"{k}='{v}'" for k, v in opts.items())


def stock_app(url: str, name: str = "stocks", **extra: str) -> str:
    return f"""
@app:name('{name}')
define stream StockStream (symbol string, price float, volume long);
define stream UpdateStream (symbol string, price float);
define stream DeleteStream (symbol string);
define stream CheckStream (symbol string, volume long);
@store({store_options(url, **extra)})
@PrimaryKey('symbol') @Index('volume')
define table StockTable (symbol string, price float, volume long);

from StockStream insert into StockTable;
from UpdateStream update StockTable set StockTable.price = price on StockTable.symbol == symbol;
from DeleteStream delete StockTable on StockTable.symbol == symbol;
@info(name='join')
from CheckStream join StockTable on StockTable.symbol == CheckStream.symbol and StockTable.volume < CheckStream.volume
select CheckStream.symbol, StockTable.price, StockTable.volume insert into Out;
"""


def _run(app: str) -> tuple[Any, list[tuple[Any, ...]]]:
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    out: list[tuple[Any, ...]] = []
    rt.add_callback("Out", lambda events: out.extend(tuple(e.data) for e in events))
    rt.start()
    return rt, out


def test_insert_update_delete_join_and_restart(rdbms_url: str) -> None:
    rt, out = _run(stock_app(rdbms_url))
    send = rt.get_input_handler("StockStream").send
    send(["WSO2", 55.6, 100], timestamp=T0)
    send(["IBM", 75.6, 10], timestamp=T0 + 1)
    send(["IBM", 1.0, 1], timestamp=T0 + 2)  # duplicate key: dropped, as Siddhi does
    rt.get_input_handler("UpdateStream").send(["IBM", 80.5], timestamp=T0 + 3)
    rt.get_input_handler("CheckStream").send(["IBM", 20], timestamp=T0 + 4)
    rt.get_input_handler("CheckStream").send(["IBM", 5], timestamp=T0 + 5)  # volume 10 is not < 5
    rt.get_input_handler("DeleteStream").send(["WSO2"], timestamp=T0 + 6)
    rows = rt.query("from StockTable select symbol, price, volume")
    rt.shutdown()
    assert out == [("IBM", pytest.approx(80.5), 10)]
    assert [tuple(e.data) for e in rows] == [("IBM", pytest.approx(80.5), 10)]
    # a new runtime (a restart, or another replica) reads the same rows from the database
    rt2, _ = _run(stock_app(rdbms_url))
    assert [tuple(e.data) for e in rt2.query("from StockTable on volume > 5 select symbol, volume")] == [("IBM", 10)]
    assert rt2.query("from StockTable on volume > 50 select symbol") == []
    rt2.shutdown()


def test_two_runtimes_share_one_table(rdbms_url: str) -> None:
    a, _ = _run(stock_app(rdbms_url, "a"))
    b, out_b = _run(stock_app(rdbms_url, "b"))
    a.get_input_handler("StockStream").send(["ORCL", 30.25, 7], timestamp=T0)
    b.get_input_handler("CheckStream").send(["ORCL", 8], timestamp=T0 + 1)
    a.shutdown()
    b.shutdown()
    assert out_b == [("ORCL", 30.25, 7)]


def test_update_or_insert_and_conditions_without_sql_translation(rdbms_url: str) -> None:
    app = f"""
define stream S (symbol string, price double, volume long);
define stream Q (prefix string);
@store({store_options(rdbms_url)})
@PrimaryKey('symbol')
define table T (symbol string, price double, volume long);
from S update or insert into T set T.price = price, T.volume = T.volume + volume on T.symbol == symbol;
from Q join T on str:contains(T.symbol, prefix) or T.price * 2 > 1000.0
select T.symbol, T.volume insert into Out;
"""
    rt, out = _run(app)
    send = rt.get_input_handler("S").send
    send(["abc", 10.0, 1], timestamp=T0)
    send(["abd", 600.0, 2], timestamp=T0 + 1)
    send(["abc", 11.0, 5], timestamp=T0 + 2)
    rt.get_input_handler("Q").send(["bc"], timestamp=T0 + 3)
    table = rt.context.tables["T"]
    rt.shutdown()
    assert sorted(out) == [("abc", 6), ("abd", 2)]
    assert any("filtered in Python" in p for p in table.plans)
    assert any("SQL WHERE" in p for p in table.plans)


def test_null_comparisons_follow_siddhi_under_not(rdbms_url: str) -> None:
    app = f"""
define stream S (k string, v int);
define stream Q (v int);
@store({store_options(rdbms_url, **{"allow.null.values": "true"})})
define table T (k string, v int);
from S insert into T;
from Q join T on not (T.v == Q.v) select T.k insert into Out;
"""
    rt, out = _run(app)
    rt.get_input_handler("S").send(["a", 1], timestamp=T0)
    rt.get_input_handler("S").send(["b", None], timestamp=T0 + 1)
    rt.get_input_handler("Q").send([1], timestamp=T0 + 2)
    rt.shutdown()
    # null == 1 is false in Siddhi, so not(...) is true for 'b'
    assert out == [("b",)]


def test_nulls_need_allow_null_values(rdbms_url: str) -> None:
    """siddhi-store-rdbms's allow.null.values (default false): a row with a null that is not a
    string is not inserted, and a null in such a column reads as 0 / false (JDBC's getters)."""
    def run(allow: str) -> list[tuple[Any, ...]]:
        rt, _ = _run(f"""
define stream S (k string, v long, ok bool, note string);
define stream U (k string, v long);
@store({store_options(rdbms_url, **{"allow.null.values": allow})})
@PrimaryKey('k')
define table T (k string, v long, ok bool, note string);
from S insert into T;
from U update T set T.v = v on T.k == k;
from S select k insert into Out;
""")
        send = rt.get_input_handler("S").send
        send(["a", 1, True, "x"], timestamp=T0)
        send(["b", None, True, "y"], timestamp=T0 + 1)
        send(["c", 2, False, None], timestamp=T0 + 2)  # a null string is allowed
        rt.get_input_handler("U").send(["a", None], timestamp=T0 + 3)  # an update may write a null
        rows = sorted(tuple(e.data) for e in rt.query("from T select k, v, ok, note"))
        rt.shutdown()
        return rows

    assert run("false") == [("a", 0, True, "x"), ("c", 2, False, None)]
    assert run("true") == [("a", None, True, "x"), ("b", None, True, "y"), ("c", 2, False, None)]


def test_a_null_refuses_its_whole_insert_chunk_as_siddhi(rdbms_url: str) -> None:
    """siddhi-store-rdbms binds a chunk's rows in one batch and fails it at the first null that
    allow.null.values refuses, before anything runs: nothing of the chunk is inserted, and the
    chunk goes to the query's error handling (here @OnError's fault stream, with Siddhi's words)."""
    rt = SiddhiManager().create_siddhi_app_runtime(f"""
@OnError(action='STREAM')
define stream S (k string, v long);
@store({store_options(rdbms_url)})
define table T (k string, v long);
from S insert into T;
from !S select k, _error insert into Faults;
""")
    faults: list[tuple[Any, ...]] = []
    rt.add_callback("Faults", lambda events: faults.extend(tuple(e.data) for e in events))
    rt.start()
    rt.get_input_handler("S").send_rows([("a", 1), ("b", None), ("c", 3)], T0)  # one chunk
    rt.get_input_handler("S").send(["d", 4], timestamp=T0 + 1)
    rows = sorted(tuple(e.data) for e in rt.query("from T select k, v"))
    rt.shutdown()
    assert rows == [("d", 4)]
    assert [k for k, _ in faults] == ["a", "b", "c"]
    assert "A null value detected for the attribute 'v'" in str(faults[0][1])


def test_strings_compare_case_sensitively(rdbms_url: str) -> None:
    app = f"""
define stream S (k string);
define stream Q (k string);
@store({store_options(rdbms_url)})
@PrimaryKey('k')
define table T (k string);
from S insert into T;
from Q join T on T.k == Q.k select T.k insert into Out;
"""
    rt, out = _run(app)
    rt.get_input_handler("S").send(["IBM"], timestamp=T0)
    rt.get_input_handler("S").send(["ibm"], timestamp=T0 + 1)  # a different key, as in Java
    rt.get_input_handler("Q").send(["ibm"], timestamp=T0 + 2)
    rt.shutdown()
    assert out == [("ibm",)]


def _in_queries(store: str) -> tuple[dict[str, list[str]], list[str]]:
    """What four ``in`` queries let through, and the table's plans, with ``store`` on the table."""
    app = f"""
define stream S (k string, v long);
define stream Q (k string, v long);
{store}
@PrimaryKey('k')
define table T (k string, v long);
from S insert into T;
@info(name='key') from Q[(T.k == k) in T] select k insert into ByKey;
@info(name='exists') from Q[(T.v >= v and not (T.k == k)) in T] select k insert into Other;
@info(name='mixed') from Q[(T.v >= v and str:length(T.k) == 2) in T] select k insert into Mixed;
@info(name='negated') from Q[not ((T.v == v) in T)] select k insert into Missing;
"""
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    got: dict[str, list[str]] = {s: [] for s in ("ByKey", "Other", "Mixed", "Missing")}
    for stream, rows in got.items():
        rt.add_callback(stream, lambda events, rows=rows: rows.extend(e.data[0] for e in events))
    rt.start()
    rt.get_input_handler("S").send(["ab", 10], timestamp=T0)
    rt.get_input_handler("S").send(["abc", None], timestamp=T0 + 1)  # a null matches no comparison
    for i, (k, v) in enumerate([("ab", 5), ("abc", 10), ("x", 10), ("ab", 11), ("x", None)]):
        rt.get_input_handler("Q").send([k, v], timestamp=T0 + 10 + i)
    plans = list(getattr(rt.context.tables["T"], "plans", ()))
    rt.shutdown()
    return got, plans


def test_in_asks_the_database_whether_a_row_matches(rdbms_url: str) -> None:
    """``cond in T`` is SQL (Siddhi's rdbms store asks whether a record exists): a key lookup,
    ``SELECT 1 ... LIMIT 1``, or the translatable part in SQL and the rest in Python; the
    answers are the in-memory table's."""
    got, plans = _in_queries(f"@store({store_options(rdbms_url, **{'allow.null.values': 'true'})})")
    assert got == {"ByKey": ["ab", "abc", "ab"], "Other": ["abc", "x"], "Mixed": ["ab", "abc", "x"],
                   "Missing": ["ab", "ab", "x"]}
    assert got == _in_queries("")[0]
    ins = [p for p in plans if p.startswith("'in' condition")]
    assert len(ins) == 4 and all("SQL WHERE" in p for p in ins)
    assert sum("filtered in Python: 1 part(s)" in p for p in ins) == 1


def test_cache_serves_primary_key_lookups(pg_url: str) -> None:
    app = f"""
define stream S (k string, v long);
define stream Q (k string);
@store({store_options(pg_url)}, @cache(size='2', cache.policy='LRU'))
@PrimaryKey('k')
define table T (k string, v long);
from S insert into T;
from Q join T on T.k == Q.k select T.k, T.v insert into Out;
"""
    rt, out = _run(app)
    for i, k in enumerate("abc"):
        rt.get_input_handler("S").send([k, i], timestamp=T0 + i)
    for k in "cbc":
        rt.get_input_handler("Q").send([k], timestamp=T0 + 10)
    cache = rt.context.tables["T"]._cache
    rt.shutdown()
    assert out == [("c", 2), ("b", 1), ("c", 2)]
    assert cache.hits == 3 and len(cache._rows) == 2


def test_the_cache_gives_an_updated_null_as_the_database_reads_it(pg_url: str) -> None:
    """Without allow.null.values a null read from the table is 0: so is one the cache keeps."""
    app = f"""
define stream S (k string, v long);
define stream U (k string, v long);
define stream Q (k string);
@store({store_options(pg_url)}, @cache(size='4', cache.policy='LRU'))
@PrimaryKey('k')
define table T (k string, v long);
from S insert into T;
from U update T set T.v = v on T.k == k;
from Q join T on T.k == Q.k select T.k, T.v insert into Out;
"""
    rt, out = _run(app)
    rt.get_input_handler("S").send(["a", 1], timestamp=T0)
    rt.get_input_handler("U").send(["a", None], timestamp=T0 + 1)
    rt.get_input_handler("Q").send(["a"], timestamp=T0 + 2)
    cache = rt.context.tables["T"]._cache
    rt.shutdown()
    assert out == [("a", 0)] and cache.hits == 2  # (the update and the join found "a" in it)


def test_bad_login_missing_database_and_schema_clash_are_one_clear_line(postgres_server: Any, pg_url: str) -> None:
    with pytest.raises(SiddhiAppCreationError, match="password authentication failed for user 'srota'"):
        SiddhiManager().create_siddhi_app_runtime(stock_app(postgres_server.url("postgres", password="nope")))
    without = stock_app(postgres_server.url("postgres")).replace("password='srota'", "password=''")
    with pytest.raises(SiddhiAppCreationError, match="wants a password for user 'srota' and none was given"):
        SiddhiManager().create_siddhi_app_runtime(without)  # (it said "connection refused")
    with pytest.raises(SiddhiAppCreationError, match="database 'missing' does not exist"):
        SiddhiManager().create_siddhi_app_runtime(stock_app(postgres_server.url("missing")))
    rt, _ = _run(stock_app(pg_url))
    rt.shutdown()
    clash = stock_app(pg_url).replace("define table StockTable (symbol string, price float, volume long)",
                                      "define table StockTable (symbol string, price float, volume long, owner string)")
    clash = clash.split("from StockStream")[0]
    with pytest.raises(SiddhiAppCreationError,
                       match=r"has columns \['symbol', 'price', 'volume'\], not \['owner'\] that the app defines"):
        SiddhiManager().create_siddhi_app_runtime(clash)


def test_refused_connection_names_the_server() -> None:
    app = stock_app("postgresql://srota:srota@127.0.0.1:9/db")
    with pytest.raises(SiddhiAppCreationError, match="is PostgreSQL running on 127.0.0.1:9"):
        SiddhiManager().create_siddhi_app_runtime(app)


def test_a_store_may_name_a_datasource(pg_url: str) -> None:
    p = urllib.parse.urlsplit(pg_url)
    manager = SiddhiManager()
    manager.set_data_source("STOCKS", f"jdbc:postgresql://{p.hostname}:{p.port}{p.path}", p.username, p.password)
    app = """define stream S (k string);
@store(type='rdbms', datasource='STOCKS') define table T (k string);
from S insert into T;"""
    rt = manager.create_siddhi_app_runtime(app)
    rt.start()
    rt.get_input_handler("S").send(["x"], timestamp=T0)
    assert [e.data for e in rt.query("from T select k")] == [("x",)]
    rt.shutdown()
    with pytest.raises(SiddhiAppCreationError, match="no datasource named 'NOPE' \\(STOCKS\\)"):
        manager.create_siddhi_app_runtime(app.replace("'STOCKS'", "'NOPE'"))
