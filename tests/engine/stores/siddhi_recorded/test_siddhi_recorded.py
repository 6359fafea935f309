"""Tables real Siddhi wrote, taken over by Srota: the recordings of ``record.py``.

Each fixture is what Siddhi 5.1.33 with siddhi-store-rdbms did on a real database: the app, the
tables after a first run (columns and types as Siddhi created them, and its rows), the events of a
second run after a restart, Siddhi's answers to ``within ... per ...`` queries at the end of it,
and the tables it left. Here the tables are created exactly as Siddhi created them and filled with
its first-run rows; Srota then runs the second run's events on them (the restart) and must give
Siddhi's answers and leave what Siddhi left, read the way a reader composes the rows (Siddhi
writes a late event as a row of its own where Srota merges it into its bucket's row:
docs/aggregation.md). Java is not needed: the recordings are committed.
"""
from __future__ import annotations

import base64
import json
import math
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from srota.engine import SiddhiManager

HERE = Path(__file__).resolve().parent
#: the recordings Srota must match (mariadb_distinct_count has its own test)
CASES = ["postgresql_one_node", "postgresql_two_shards", "mariadb_one_node", "mariadb_two_shards"]


def _load(name: str) -> dict[str, Any]:
    return dict(json.loads((HERE / f"{name}.json").read_text()))


def _store(db: str, url: str) -> str:
    p = urllib.parse.urlsplit(url)
    scheme = "postgresql" if db == "postgresql" else "mysql"
    return (f"type='rdbms', jdbc.url='jdbc:{scheme}://{p.hostname}:{p.port}{p.path}', username='{p.username}', "
            f"password='{p.password}'")


class _DB:
    """A connection to the test database, with the statements these tests need."""

    def __init__(self, db: str, url: str) -> None:
        self.pg = db == "postgresql"
        p = urllib.parse.urlsplit(url)
        if self.pg:
            import psycopg

            self.conn: Any = psycopg.connect(url, autocommit=True)
        else:
            import pymysql

            self.conn = pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=p.password,
                                        database=p.path.lstrip("/"), autocommit=True)

    def run(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        cur = self.conn.cursor()
        try:
            cur.execute(sql, params)
            return [tuple(r) for r in cur.fetchall()] if cur.description else []
        finally:
            cur.close()

    def close(self) -> None:
        self.conn.close()


def _value(v: Any) -> Any:
    return base64.b64decode(v["base64"]) if isinstance(v, dict) else v


def create_as_siddhi_did(db: _DB, tables: dict[str, Any]) -> None:
    """The recorded tables: Siddhi's column names, types, NOT NULLs, primary key and index; then
    its rows."""
    for t in tables.values():
        cols = ", ".join(f"{n} {ty}" + ("" if nullable else " NOT NULL") for n, ty, nullable in t["columns"])
        db.run(f"CREATE TABLE {t['name']} ({cols}, PRIMARY KEY ({', '.join(t['primary_key'])}))")
        for name, definition in t["indexes"]:
            db.run(definition if db.pg else f"CREATE INDEX {name} ON {t['name']} ({definition})")
        if t["rows"]:
            marks = ", ".join(["%s"] * len(t["columns"]))
            for row in t["rows"]:
                db.run(f"INSERT INTO {t['name']} VALUES ({marks})", [_value(v) for v in row])


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    return bool(a == b)


def _order(r: list[Any]) -> list[Any]:
    return [repr(v) if not isinstance(v, (int, float)) else round(float(v), 6) for v in r]


def _same_rows(ours: list[list[Any]], theirs: list[list[Any]]) -> bool:
    key = _order
    a, b = sorted(ours, key=key), sorted(theirs, key=key)
    return len(a) == len(b) and all(len(x) == len(y) and all(map(_close, x, y)) for x, y in zip(a, b, strict=True))


def _keys(table: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(column names, the bucket's key columns: the primary key but AGG_TIMESTAMP), lower case."""
    return ([c[0].lower() for c in table["columns"]],
            [n.lower() for n in table["primary_key"] if n.lower() != "agg_timestamp"])


def composed(table: dict[str, Any]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """What a reader makes of a table's rows: one value set per event bucket, shard and group
    key, over every row (a late event's own row): sums and counts add, minimums and maximums
    combine, the latest values come from the row with the newest AGG_LAST_EVENT_TIMESTAMP."""
    names, keys = _keys(table)
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for raw in table["rows"]:
        row = dict(zip(names, raw, strict=True))
        k = tuple(row[n] for n in keys)
        have = out.get(k)
        if have is None:
            out[k] = {n: v for n, v in row.items() if n != "agg_timestamp"}
            continue
        newer = (row.get("agg_last_event_timestamp") or 0) > (have.get("agg_last_event_timestamp") or 0)
        for n, v in row.items():
            if n == "agg_timestamp" or n in keys:
                continue
            if n.startswith(("agg_sum_", "agg_count")):
                have[n] = (have[n] or 0) + (v or 0)
            elif n.startswith("agg_min_"):
                have[n] = v if have[n] is None else min(have[n], v)
            elif n.startswith("agg_max_"):
                have[n] = v if have[n] is None else max(have[n], v)
            elif newer:
                have[n] = v
    return out


def _dump(db: _DB, tables: dict[str, Any]) -> dict[str, Any]:
    """The rows of the recorded tables now (with the recording's description of each table)."""
    out = {}
    for d, t in tables.items():
        rows = db.run(f"SELECT * FROM {t['name']}")
        out[d] = {**t, "rows": [list(r) for r in rows]}
    return out


def _answers(rt: Any, queries: list[str]) -> list[list[list[Any]]]:
    return [[list(e.data) for e in (rt.query(q) or ())] for q in queries]


@pytest.fixture
def recorded_db(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(case name, database URL) for a recording, on a fresh database of its kind."""
    name = request.param
    url = str(request.getfixturevalue("pg_url" if name.startswith("postgresql") else "mysql_url"))
    yield name, url


def run_phase_two(name: str, url: str) -> tuple[dict[str, Any], list[list[list[Any]]], dict[str, Any], str]:
    """Siddhi's phase-1 tables, then Srota on phase 2's events: (recording, Srota's answers, the
    tables Srota left, the app as Srota ran it)."""
    rec = _load(name)
    db = _DB(rec["db"], url)
    try:
        create_as_siddhi_did(db, rec["phases"][0]["tables"])
        app = rec["app"].replace("{store}", _store(rec["db"], url))
        runtimes = []
        for shard in rec["shards"]:
            rt = (SiddhiManager(shard_id=shard) if shard else SiddhiManager()).create_siddhi_app_runtime(app)
            rt.start()
            runtimes.append(rt)
        for i, ts, data in rec["phases"][1]["events"]:
            runtimes[i].get_input_handler("stockStream").send(data, timestamp=ts)
        for rt in runtimes:
            rt.context.aggregations["stockAggregation"].store.flush()
        answers = _answers(runtimes[0], rec["queries"])
        for rt in runtimes:
            rt.shutdown()
        final = _dump(db, rec["phases"][1]["tables"])
    finally:
        db.close()
    return rec, answers, final, app


@pytest.mark.parametrize("recorded_db", CASES, indirect=True)
def test_srota_continues_siddhis_tables_as_siddhi_does(recorded_db: tuple[str, str]) -> None:
    """After Siddhi's first run and a restart, Srota gives Siddhi's answers and leaves its tables."""
    name, url = recorded_db
    rec, answers, final, _ = run_phase_two(name, url)
    for q, ours, theirs in zip(rec["queries"], answers, rec["phases"][1]["answers"], strict=True):
        assert theirs["error"] is None
        assert _same_rows(ours, theirs["rows"]), f"{q}\n ours: {sorted(ours)}\n Siddhi's: {sorted(theirs['rows'])}"
    for d, theirs in rec["phases"][1]["tables"].items():
        a, b = composed(final[d]), composed(theirs)
        assert sorted(a) == sorted(b), f"{d}: buckets ours {sorted(a)}, Siddhi's {sorted(b)}"
        for k in a:
            assert all(_close(a[k][n], b[k][n]) for n in b[k]), f"{d} {k}: ours {a[k]}, Siddhi's {b[k]}"
        # row by row, the rows are Siddhi's own but where Siddhi wrote a late event's row (a later
        # AGG_TIMESTAMP) and Srota merged the event into its bucket's row
        late = _late_buckets(theirs)
        names, keys = _keys(theirs)
        ours_rows = [r for r in final[d]["rows"] if _bucket(names, keys, r) not in late]
        their_rows = [r for r in theirs["rows"] if _bucket(names, keys, r) not in late]
        assert _same_rows(ours_rows, their_rows), d


def _bucket(names: list[str], keys: list[str], raw: list[Any]) -> tuple[Any, ...]:
    row = dict(zip(names, raw, strict=True))
    return tuple(row[n] for n in keys)


def _late_buckets(table: dict[str, Any]) -> set[tuple[Any, ...]]:
    """The buckets Siddhi wrote a late event's row for (a row whose AGG_TIMESTAMP is later)."""
    names, keys = _keys(table)
    return {_bucket(names, keys, raw) for raw in table["rows"]
            if (row := dict(zip(names, raw, strict=True)))["agg_timestamp"] != row["agg_event_timestamp"]}


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from srota.service.spark.session import SparkUnavailable, get_spark

    try:
        session = get_spark("local[1]", "srota-siddhi-recorded", shuffle_partitions=2)
    except SparkUnavailable as exc:
        pytest.skip(str(exc))
    yield session
    session.stop()


T0 = 1_700_000_000_000
#: retention for the purge: seconds 120 s, minutes 2 hours (Siddhi's minimums), the rest kept
RETENTION = ("@purge(enable='true', interval='10 min', @retentionPeriod(sec='120 sec', min='2 hours', "
             "hours='all', days='all', months='all', years='all'))")


@pytest.mark.spark
@pytest.mark.integration
@pytest.mark.parametrize("recorded_db", CASES, indirect=True)
def test_spark_purges_the_continued_tables_by_the_event_bucket(recorded_db: tuple[str, str], spark: Any,
                                                              tmp_path: Path) -> None:
    """``srota aggregation purge`` on the tables Siddhi wrote and Srota continued: rows go by
    AGG_EVENT_TIMESTAMP, as Siddhi's IncrementalDataPurger deletes them (a late event's row goes
    with its bucket, not with the later AGG_TIMESTAMP it was written at); what is left is what
    Siddhi left, less the purged buckets."""
    from srota.service.spark.purge import purge

    name, url = recorded_db
    rec, _, final, app = run_phase_two(name, url)
    path = tmp_path / "app.siddhi"
    path.write_text(app.replace("@purge(enable='false')", RETENTION))
    now = T0 + 7_200_000  # 2023-11-15 00:53:20: the hours table's newest bucket ends after it
    # seconds: up to the end of the newest stored minute (23:00), which is before now - 120 s;
    # minutes: now - 2 hours, T0 itself (the newest stored hour ends later)
    bounds = {"SECONDS": 1_700_002_860_000, "MINUTES": T0}
    deleted = purge(str(path), "stockAggregation", now, spark=spark, progress=None)
    db = _DB(rec["db"], url)
    try:
        left = _dump(db, rec["phases"][1]["tables"])
    finally:
        db.close()
    for d, table in final.items():
        names, _ = _keys(table)
        at = names.index("agg_event_timestamp")
        bound = bounds.get(d)
        kept = [r for r in table["rows"] if bound is None or r[at] >= bound]
        assert _same_rows(left[d]["rows"], kept), d
        gone = len(table["rows"]) - len(kept)
        assert deleted.get(table["name"], 0) == gone, (d, deleted)
        # Siddhi's own final rows, purged the same way, compose to what is left
        theirs = rec["phases"][1]["tables"][d]
        expect = composed({**theirs, "rows": [r for r in theirs["rows"] if bound is None or r[at] >= bound]})
        assert composed(left[d]).keys() == expect.keys()
    assert not [r for r in left["MINUTES"]["rows"] if r[names.index("agg_event_timestamp")] < T0]


@pytest.mark.parametrize("recorded_db", CASES, indirect=True)
def test_srota_creates_the_tables_siddhi_created(recorded_db: tuple[str, str]) -> None:
    """On an empty database Srota creates the tables real Siddhi created: names, column order,
    types, NOT NULL, primary key and index, as the database describes them."""
    from tests.engine.stores.siddhi_recorded.record import dump

    name, url = recorded_db
    rec = _load(name)
    app = rec["app"].replace("{store}", _store(rec["db"], url))
    shard = rec["shards"][0]
    rt = (SiddhiManager(shard_id=shard) if shard else SiddhiManager()).create_siddhi_app_runtime(app)
    rt.start()
    rt.shutdown()
    db = _DB(rec["db"], url)
    try:
        ours = dump(db.conn, rec["db"])
    finally:
        db.close()
    theirs = rec["phases"][0]["tables"]
    assert sorted(ours) == sorted(theirs)
    for d, t in theirs.items():
        assert (ours[d]["name"], ours[d]["columns"], ours[d]["primary_key"]) == \
            (t["name"], t["columns"], t["primary_key"])
        assert ours[d]["indexes"] == t["indexes"], d
