"""Siddhi 5.1's own roll-up tables on ``@store(type='rdbms')``: Srota creates them as
siddhi-store-rdbms does, and takes over tables a Siddhi deployment made and filled (reads them,
continues them, purges them), on PostgreSQL and MariaDB."""
from __future__ import annotations

import urllib.parse
from typing import Any

import pytest

from srota import SiddhiManager
from tests.engine.stores.upstream.support import store, table_rows

M0 = 1_700_000_040_000  # a minute's start (2023-11-14 22:14:00 UTC)
M_PREV = M0 - 60_000
STREAM = "define stream stockStream (symbol string, price float, quantity int, timestamp long); "


def _app(url: str, sharded: bool = False, purge: str = "@purge(enable='false')") -> str:
    return ("@app:playback " + STREAM + f"{store(url)}\n" + ("@PartitionById(enable='true')\n" if sharded else "")
            + f"{purge}\n"
            "define aggregation stockAggregation from stockStream "
            "select symbol, sum(price) as totalPrice, avg(price) as avgPrice, (price * quantity) as lastTradeValue "
            "group by symbol aggregate by timestamp every sec...hour; ")


def _pg(url: str) -> bool:
    return urllib.parse.urlsplit(url).scheme.startswith("postgres")


def _run(url: str, *sql: str) -> None:
    p = urllib.parse.urlsplit(url)
    if _pg(url):
        import psycopg

        with psycopg.connect(url) as conn:
            for s in sql:
                conn.execute(s)
    else:
        import pymysql

        conn = pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=p.password,
                               database=p.path.lstrip("/"), autocommit=True)
        try:
            with conn.cursor() as cur:
                for s in sql:
                    cur.execute(s)
        finally:
            conn.close()


def _fetch(url: str, sql: str) -> list[tuple[Any, ...]]:
    p = urllib.parse.urlsplit(url)
    if _pg(url):
        import psycopg

        with psycopg.connect(url) as conn:
            return [tuple(r) for r in conn.execute(sql).fetchall()]
    import pymysql

    conn = pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=p.password,
                           database=p.path.lstrip("/"))
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return [tuple(r) for r in cur.fetchall()]
    finally:
        conn.close()


def _siddhi_ddl(url: str, table: str, sharded: bool) -> list[str]:
    """What siddhi-store-rdbms 7.x runs for one table of the app above (``RDBMSEventTable.createTable``
    with ``rdbms-table-config.xml``'s types: the string size 254, NOT NULL on the key columns, the
    ``@Index`` on AGG_LAST_EVENT_TIMESTAMP that ``AggregationParser.initDefaultTables`` adds)."""
    pg = _pg(url)
    real, double = ("REAL", "DOUBLE PRECISION") if pg else ("FLOAT", "DOUBLE")
    shard = "SHARD_ID VARCHAR(254) NOT NULL, " if sharded else ""
    key = "AGG_TIMESTAMP, SHARD_ID, AGG_EVENT_TIMESTAMP, symbol" if sharded else \
        "AGG_TIMESTAMP, AGG_EVENT_TIMESTAMP, symbol"
    return [f"CREATE TABLE {table} (AGG_TIMESTAMP BIGINT NOT NULL, {shard}AGG_EVENT_TIMESTAMP BIGINT NOT NULL, "
            f"symbol VARCHAR(254) NOT NULL, lastTradeValue {real}, AGG_LAST_EVENT_TIMESTAMP BIGINT, "
            f"AGG_SUM_price {double}, AGG_COUNT BIGINT, PRIMARY KEY ({key}))",
            f"CREATE INDEX {table}_INDEX_1 ON {table} (AGG_LAST_EVENT_TIMESTAMP)"]


def _columns(url: str, table: str) -> list[tuple[str, str, str]]:
    """(name, type, nullable) of each column, in order, lower case."""
    if _pg(url):
        sql = ("SELECT column_name, CASE WHEN data_type = 'character varying' THEN 'varchar(' || "
               "character_maximum_length || ')' ELSE data_type END, is_nullable FROM information_schema.columns "
               f"WHERE table_schema = current_schema() AND table_name = '{table.lower()}' ORDER BY ordinal_position")
    else:
        sql = ("SELECT column_name, column_type, is_nullable FROM information_schema.columns WHERE table_schema = "
               f"DATABASE() AND table_name = '{table}' ORDER BY ordinal_position")
    return [(str(n).lower(), str(t).lower(), str(z)) for n, t, z in _fetch(url, sql)]


def _primary_key(url: str, table: str) -> list[str]:
    name = table.lower() if _pg(url) else table
    schema = "current_schema()" if _pg(url) else "DATABASE()"
    rows = _fetch(url, "SELECT k.column_name FROM information_schema.table_constraints c JOIN "
                       "information_schema.key_column_usage k ON c.constraint_name = k.constraint_name AND "
                       "c.table_name = k.table_name AND c.table_schema = k.table_schema WHERE "
                       f"c.constraint_type = 'PRIMARY KEY' AND c.table_schema = {schema} AND c.table_name = '{name}' "
                       "ORDER BY k.ordinal_position")
    return [str(r[0]).lower() for r in rows]


@pytest.mark.parametrize("sharded", [False, True])
def test_srota_creates_the_tables_siddhi_creates(rdbms_url: str, sharded: bool) -> None:
    """Names, order, types, NOT NULL and primary key of every table equal those of the tables
    siddhi-store-rdbms creates (the same DDL run by hand on a second set of tables)."""
    rt = SiddhiManager(shard_id="node1").create_siddhi_app_runtime(_app(rdbms_url, sharded))
    rt.start()
    rt.shutdown()
    for d in ("SECONDS", "MINUTES", "HOURS"):
        _run(rdbms_url, *[s.replace("stockAggregation_", "siddhiMade_") for s in
                          _siddhi_ddl(rdbms_url, f"stockAggregation_{d}", sharded)])
        ours, theirs = f"stockAggregation_{d}", f"siddhiMade_{d}"
        assert _columns(rdbms_url, ours) == _columns(rdbms_url, theirs)
        assert _primary_key(rdbms_url, ours) == _primary_key(rdbms_url, theirs)
    cols = [c[0] for c in _columns(rdbms_url, "stockAggregation_SECONDS")]
    assert cols == ["agg_timestamp", *(["shard_id"] if sharded else []), "agg_event_timestamp", "symbol",
                    "lasttradevalue", "agg_last_event_timestamp", "agg_sum_price", "agg_count"]


def _siddhi_rows(url: str, sharded: bool) -> None:
    """The tables as a Siddhi node ('node1') leaves them: a closed minute (M_PREV) rolled up, the
    seconds of the open minute M0, and a late WSO2 event of M0's first second that arrived while the
    node was in its third second: Siddhi writes it as a row of its own (AGG_TIMESTAMP the second it
    was written in, AGG_EVENT_TIMESTAMP its own second)."""
    shard = "'node1', " if sharded else ""
    for d in ("SECONDS", "MINUTES", "HOURS"):
        _run(url, *_siddhi_ddl(url, f"stockAggregation_{d}", sharded))

    def ins(d: str, agg_ts: int, evt: int, sym: str, last_value: float, last: int, s: float, n: int) -> str:
        return (f"INSERT INTO stockAggregation_{d} VALUES ({agg_ts}, {shard}{evt}, '{sym}', {last_value}, {last}, "
                f"{s}, {n})")

    _run(url,
         ins("SECONDS", M_PREV, M_PREV, "IBM", 4.0, M_PREV + 10, 3.0, 2),
         ins("SECONDS", M_PREV + 5000, M_PREV + 5000, "IBM", 6.0, M_PREV + 5000, 2.0, 1),
         ins("MINUTES", M_PREV, M_PREV, "IBM", 6.0, M_PREV + 5000, 5.0, 3),
         ins("SECONDS", M0, M0, "WSO2", 20.0, M0 + 500, 30.0, 2),
         ins("SECONDS", M0 + 1000, M0 + 1000, "IBM", 15.0, M0 + 1000, 5.0, 1),
         ins("SECONDS", M0 + 2000, M0, "WSO2", 30.0, M0 + 200, 30.0, 1))


def _q(rt: Any, per: str) -> list[tuple[Any, ...]]:
    events = rt.query(f"from stockAggregation within {M_PREV - 3_600_000}L, {M0 + 3_600_000}L per '{per}' "
                      "select AGG_TIMESTAMP, symbol, totalPrice, avgPrice, lastTradeValue")
    return sorted(tuple(e.data) for e in events or ())


@pytest.mark.parametrize("sharded", [False, True])
def test_a_siddhi_deployments_tables_are_read_continued_and_purged(rdbms_url: str, sharded: bool) -> None:
    _siddhi_rows(rdbms_url, sharded)
    # Srota takes over as node2 (distributed) or as the only node (then it recreates the open
    # minute and hour from Siddhi's rows, as IncrementalExecutorsInitialiser does)
    rt = SiddhiManager(shard_id="node2").create_siddhi_app_runtime(_app(rdbms_url, sharded))
    rt.start()
    seconds = [(M_PREV, "IBM", 3.0, 1.5, 4.0), (M_PREV + 5000, "IBM", 2.0, 2.0, 6.0),
               (M0, "WSO2", 60.0, 20.0, 20.0), (M0 + 1000, "IBM", 5.0, 5.0, 15.0)]
    assert _q(rt, "seconds") == seconds
    minutes = [(M_PREV, "IBM", 5.0, 5.0 / 3, 6.0), (M0, "IBM", 5.0, 5.0, 15.0), (M0, "WSO2", 60.0, 20.0, 20.0)]
    assert _q(rt, "minutes") == minutes

    # continued: an IBM event in M0's fourth second, then one in the next minute closes M0
    h = rt.get_input_handler("stockStream")
    h.send(["IBM", 7.0, 2, M0 + 3000], timestamp=M0 + 3000)
    h.send(["WSO2", 1.0, 1, M0 + 61_000], timestamp=M0 + 61_000)
    rt.context.aggregations["stockAggregation"].store.flush()
    minutes[1] = (M0, "IBM", 12.0, 6.0, 14.0)
    if not sharded:  # a distributed read sees tables only, and the new second is still open
        minutes.append((M0 + 60_000, "WSO2", 1.0, 1.0, 1.0))
    assert _q(rt, "minutes") == minutes
    shard = ("node2",) if sharded else ()
    got = [r for r in table_rows(rdbms_url, "stockAggregation_SECONDS") if r[0] == M0 + 3000]
    assert got == [(M0 + 3000, *shard, M0 + 3000, "IBM", 14.0, M0 + 3000, 7.0, 1)]
    got = [r for r in table_rows(rdbms_url, "stockAggregation_MINUTES") if r[0] == M0]
    if sharded:  # node2 rolls up its own rows only; node1's seconds stay node1's to roll up
        assert got == [(M0, "node2", M0, "IBM", 14.0, M0 + 3000, 7.0, 1)]
    else:  # the minute Siddhi left open, closed with Siddhi's rows and the new event
        assert got == [(M0, M0, "IBM", 14.0, M0 + 3000, 12.0, 2), (M0, M0, "WSO2", 20.0, M0 + 500, 60.0, 3)]

    # purged: seconds up to the newest closed minute go, by AGG_EVENT_TIMESTAMP (Siddhi's purger's
    # column for event time), the late row Siddhi wrote with a later AGG_TIMESTAMP included
    agg = rt.context.aggregations["stockAggregation"]
    agg.purge(M0 + 3_600_000)
    left = [r[2 if sharded else 1] for r in table_rows(rdbms_url, "stockAggregation_SECONDS")]
    assert all(t >= M0 + 60_000 for t in left), left
    minute_rows = sorted(r[0] for r in table_rows(rdbms_url, "stockAggregation_MINUTES"))
    assert minute_rows == ([M_PREV, M0] if sharded else [M_PREV, M0, M0])  # kept: 24 hours
    rt.shutdown()
