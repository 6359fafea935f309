"""The Spark purge job applies the retention policy; --rebuild recomputes a coarser table."""
from __future__ import annotations

import sqlite3
import urllib.parse

import pytest
from srota.engine import SiddhiManager
from srota.engine.aggregation.buckets import bucket_start, parse_time
from srota.grammar.model import TimeDuration as D

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def _app(db) -> str:
    return ("define stream S (k string, v long, ts long);\n"
            f"@store(type='sqlite', database='{db}')\n"
            "@purge(enable='true', interval='1 min', @retentionPeriod(sec='120 sec', min='3 hours', hours='all'))\n"
            "define aggregation A from S select k, sum(v) as total, max(v) as mx, v as last, distinctCount(v) as dv\n"
            "group by k aggregate by ts every sec ... day;")


def _fill(db, text: str | None = None) -> int:
    """Six hours of events into the app (``_app(db)`` unless ``text``); returns "now" after them."""
    rt = SiddhiManager().create_siddhi_app_runtime(text if text is not None else _app(db))
    h = rt.get_input_handler("S")
    start = parse_time("2018-03-01 00:00:00")[0]
    for n in range(0, 6 * 3600, 5):
        h.send(["a" if n % 2 else "b", n % 17, start + n * 1000])
    rt.shutdown()
    return start + 6 * 3_600_000


def _rows(db, table):
    return sorted(sqlite3.connect(db).execute(f'SELECT * FROM "A_{table}"').fetchall())


def test_purge_job_deletes_exactly_the_rows_outside_retention(tmp_path, spark):
    from srota.service.spark.purge import purge

    db = tmp_path / "p.db"
    now = _fill(db)
    app = tmp_path / "app.siddhi"
    app.write_text(_app(db))
    before = {t: _rows(db, t) for t in ("SECONDS", "MINUTES", "HOURS", "DAYS")}
    lines: list[str] = []
    due = purge(str(app), "A", now, spark=spark, progress=lines.append, dry_run=True)
    assert {t: _rows(db, t) for t in before} == before  # a dry run deletes nothing ...
    assert "A_SECONDS: " + str(due["A_SECONDS"]) + " row(s) before 2018-03-01 " in "\n".join(lines)
    assert any(line.endswith("UTC would be deleted") for line in lines)  # ... and prints bounds as times
    assert "A_HOURS: kept whole (no retention)" in lines
    deleted = purge(str(app), "A", now, spark=spark, progress=None)
    assert deleted == due
    after = {t: _rows(db, t) for t in ("SECONDS", "MINUTES", "HOURS", "DAYS")}
    newest_min = max(r[0] for r in before["MINUTES"])
    newest_hour = max(r[0] for r in before["HOURS"])
    assert after["SECONDS"] == [r for r in before["SECONDS"] if r[0] >= min(now - 120_000, newest_min + 60_000)]
    assert after["MINUTES"] == [r for r in before["MINUTES"] if r[0] >= min(now - 3 * 3_600_000,
                                                                            newest_hour + 3_600_000)]
    assert after["HOURS"] == before["HOURS"]
    assert deleted["A_SECONDS"] == len(before["SECONDS"]) - len(after["SECONDS"])
    # minutes newer than the newest stored hour are never purged
    assert all(bucket_start(r[0], D.HOURS) <= newest_hour
               for r in before["MINUTES"] if r not in after["MINUTES"])


def test_rebuild_recomputes_a_coarser_table_from_the_finer_one(tmp_path, spark):
    from srota.service.spark.purge import rebuild

    db = tmp_path / "r.db"
    _fill(db)
    app = tmp_path / "app.siddhi"
    app.write_text(_app(db))
    hours = _rows(db, "HOURS")
    conn = sqlite3.connect(db)
    conn.execute('DELETE FROM "A_HOURS"')
    conn.commit()
    n = rebuild(str(app), "A", "hours", spark=spark, progress=None)
    rebuilt = _rows(db, "HOURS")
    assert n == len(rebuilt) > 0
    assert rebuilt == hours[:len(rebuilt)]  # every complete hour, identical to the live rows


def _maria_store(url: str) -> str:
    p = urllib.parse.urlsplit(url)
    return (f"@store(type='rdbms', jdbc.url='jdbc:mariadb://{p.hostname}:{p.port}{p.path}', "
            f"username='{p.username}', password='{p.password}')")


def _maria_rows(url: str, table: str) -> list[tuple]:
    import pymysql

    p = urllib.parse.urlsplit(url)
    conn = pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=p.password,
                           database=p.path.lstrip("/"))
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT * FROM `A_{table}`")
            return sorted(cur.fetchall())
    finally:
        conn.close()


def test_purge_job_on_mariadb_deletes_what_it_does_on_sqlite(tmp_path, spark, mariadb_server):
    """The rdbms store: the job reads the tables over Spark's MariaDB JDBC driver and deletes
    in the database; the same rows go as from SQLite."""
    from srota.service.spark.purge import purge

    db = tmp_path / "p.db"
    now = _fill(db)
    want = purge(str(_write(tmp_path / "sqlite.siddhi", _app(db))), "A", now, spark=spark, progress=None)
    kept = {t: len(_rows(db, t)) for t in ("SECONDS", "MINUTES", "HOURS", "DAYS")}
    url = str(mariadb_server.url(mariadb_server.create_database()))
    text = _app(db).replace(f"@store(type='sqlite', database='{db}')", _maria_store(url))
    assert _fill(db, text) == now
    app = _write(tmp_path / "maria.siddhi", text)
    assert purge(str(app), "A", now, spark=spark, progress=None, dry_run=True) == want
    assert purge(str(app), "A", now, spark=spark, progress=None) == want
    assert {t: len(_maria_rows(url, t)) for t in kept} == kept


def _write(path, text: str):
    path.write_text(text)
    return path


def _pg_store(url: str) -> str:
    p = urllib.parse.urlsplit(url)
    return (f"@store(type='rdbms', jdbc.url='jdbc:postgresql://{p.hostname}:{p.port}{p.path}', "
            f"username='{p.username}', password='{p.password}')")


def test_rebuild_on_postgres_recomputes_the_live_rows(tmp_path, spark, postgres_server):
    """--rebuild on an rdbms table in Siddhi's layout (AGG_EVENT_TIMESTAMP, no AGG_TIMEZONE)."""
    import psycopg
    from srota.service.spark.purge import rebuild

    url = str(postgres_server.url(postgres_server.create_database()))
    text = _app(tmp_path / "unused.db").replace(f"@store(type='sqlite', database='{tmp_path / 'unused.db'}')",
                                                _pg_store(url))
    _fill(None, text)
    with psycopg.connect(url) as conn:
        hours = sorted(conn.execute("SELECT * FROM A_HOURS").fetchall())
        conn.execute("DELETE FROM A_HOURS")
    n = rebuild(str(_write(tmp_path / "pg.siddhi", text)), "A", "hours", spark=spark, progress=None)
    with psycopg.connect(url) as conn:
        rebuilt = sorted(conn.execute("SELECT * FROM A_HOURS").fetchall())
    assert n == len(rebuilt) > 0
    assert rebuilt == hours[:len(rebuilt)]


def test_purge_on_mariadb_deletes_by_the_event_bucket(tmp_path, spark, mariadb_server):
    """A row Siddhi wrote for a late event (its bucket in AGG_EVENT_TIMESTAMP, a later
    AGG_TIMESTAMP) is due when its bucket is, as Siddhi's IncrementalDataPurger deletes it: the
    dry run counts what the purge deletes."""
    import pymysql
    from srota.service.spark.purge import purge

    url = str(mariadb_server.url(mariadb_server.create_database()))
    text = _app(tmp_path / "unused.db").replace(f"@store(type='sqlite', database='{tmp_path / 'unused.db'}')",
                                                _maria_store(url))
    now = _fill(None, text)
    p = urllib.parse.urlsplit(url)
    conn = pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=p.password,
                           database=p.path.lstrip("/"), autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT MIN(AGG_EVENT_TIMESTAMP), MAX(AGG_TIMESTAMP) FROM `A_SECONDS`")
            oldest, newest = cur.fetchone()
            cur.execute("SELECT * FROM `A_SECONDS` WHERE AGG_EVENT_TIMESTAMP = %s LIMIT 1", (oldest,))
            late = list(cur.fetchone())
            late[0] = newest  # written while the root executor was in the newest second
            cur.execute(f"INSERT INTO `A_SECONDS` VALUES ({', '.join(['%s'] * len(late))})", late)
    finally:
        conn.close()
    app = _write(tmp_path / "maria.siddhi", text)
    due = purge(str(app), "A", now, spark=spark, progress=None, dry_run=True)
    assert purge(str(app), "A", now, spark=spark, progress=None) == due
    assert not [r for r in _maria_rows(url, "SECONDS") if r[1] == oldest]


def test_purge_of_a_sharded_aggregation_deletes_every_shards_rows(tmp_path, spark, postgres_server):
    """@PartitionById: the purge needs no shard id of its own and deletes the rows of every
    shard before the bounds (Siddhi's purger deletes by time alone)."""
    import psycopg
    from srota.service.spark.purge import purge

    db = tmp_path / "p.db"
    now = _fill(db)
    want = purge(str(_write(tmp_path / "sqlite.siddhi", _app(db))), "A", now, spark=spark, progress=None)
    kept = {t: len(_rows(db, t)) for t in ("SECONDS", "MINUTES", "HOURS", "DAYS")}
    url = str(postgres_server.url(postgres_server.create_database()))
    text = _app(db).replace(f"@store(type='sqlite', database='{db}')", _pg_store(url) + " @PartitionById(enable='true')")
    rt = SiddhiManager(shard_id="node-1").create_siddhi_app_runtime(text)
    h = rt.get_input_handler("S")
    start = parse_time("2018-03-01 00:00:00")[0]
    for n in range(0, 6 * 3600, 5):
        h.send(["a" if n % 2 else "b", n % 17, start + n * 1000])
    rt.shutdown()
    app = _write(tmp_path / "pg.siddhi", text)
    assert purge(str(app), "A", now, spark=spark, progress=None) == want
    with psycopg.connect(url) as conn:
        assert {t: conn.execute(f"SELECT count(*) FROM A_{t}").fetchone()[0] for t in kept} == kept
        assert conn.execute("SELECT DISTINCT shard_id FROM A_SECONDS").fetchall() == [("node-1",)]
