"""The Spark jobs on the ``rdbms`` store: backfill into PostgreSQL and MariaDB equals the live
engine's rows, through the driver, over JDBC from the executors, under a shard id, and on a
standalone cluster (PostgreSQL)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse
from typing import Any

import psycopg
import pytest

from tests.spark.test_backfill import APP_LONG, _events, _live
from tests.spark.test_cluster import cluster  # noqa: F401 - the standalone cluster fixture

pytestmark = [pytest.mark.spark, pytest.mark.integration]

TABLES = ("SECONDS", "MINUTES", "HOURS", "DAYS", "MONTHS", "YEARS")


def _app(url: str, sharded: bool = False) -> str:
    p = urllib.parse.urlsplit(url)
    scheme = "postgresql" if p.scheme.startswith("postgres") else "mariadb"
    store = (f"@store(type='rdbms', jdbc.url='jdbc:{scheme}://{p.hostname}:{p.port}{p.path}', "
             f"username='{p.username}', password='{p.password}')")
    text = APP_LONG.replace("@store(type='sqlite', database='{db}')", store)
    return text.replace("@BufferSize('2')", "@BufferSize('2') @PartitionById(enable='true')") if sharded else text


def _dump(url: str, sharded: bool = False) -> dict[str, list[Any]]:
    """Every roll-up table's rows (without the shard column, the second), in one order."""
    out = {}
    if not url.startswith("postgres"):
        import pymysql

        p = urllib.parse.urlsplit(url)
        conn = pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=p.password,
                               database=p.path.lstrip("/"))
        try:
            with conn.cursor() as cur:
                for t in TABLES:
                    cur.execute(f"SELECT * FROM `TradeAgg_{t}`")
                    out[t] = sorted((r[:1] + r[2:] if sharded else r for r in cur.fetchall()), key=repr)
        finally:
            conn.close()
        return out
    with psycopg.connect(url) as conn:
        for t in TABLES:
            rows = conn.execute(f"SELECT * FROM TradeAgg_{t}").fetchall()  # unquoted: PostgreSQL folds it
            out[t] = sorted((r[:1] + r[2:] if sharded else r for r in rows), key=repr)
    return out


def test_backfill_into_mariadb_equals_the_live_engine(tmp_path: Any, spark: Any, mariadb_server: Any) -> None:
    from srota.service.spark.backfill import backfill

    events = _events(4_000, seed=7)
    src = tmp_path / "trades.json"
    src.write_text("".join(json.dumps(e) + "\n" for e in events))
    live_url = str(mariadb_server.url(mariadb_server.create_database()))
    _live(_app(live_url), events)
    live = _dump(live_url)
    assert live["SECONDS"] and len(live["YEARS"]) == 10
    for writer in ("driver", "jdbc"):
        url = str(mariadb_server.url(mariadb_server.create_database()))
        app = tmp_path / f"{writer}.siddhi"
        app.write_text(_app(url))
        backfill(str(app), "TradeAgg", str(src), "json", spark=spark, progress=None, writer=writer)
        assert _dump(url) == live, writer
        backfill(str(app), "TradeAgg", str(src), "json", spark=spark, progress=None, writer=writer)
        assert _dump(url) == live, f"{writer}: a second run changed rows"


def test_backfill_into_postgres_equals_the_live_engine(tmp_path: Any, spark: Any, postgres_server: Any) -> None:
    from srota.service.spark.backfill import backfill

    events = _events(6_000, seed=5)
    src = tmp_path / "trades.json"
    src.write_text("".join(json.dumps(e) + "\n" for e in events))
    live_url = postgres_server.url(postgres_server.create_database())
    _live(_app(live_url), events)
    live = _dump(live_url)
    assert live["SECONDS"] and len(live["YEARS"]) == 10

    for writer in ("driver", "jdbc"):
        url = postgres_server.url(postgres_server.create_database())
        app = tmp_path / f"{writer}.siddhi"
        app.write_text(_app(url))
        backfill(str(app), "TradeAgg", str(src), "json", spark=spark, progress=None, writer=writer)
        assert _dump(url) == live, writer
        backfill(str(app), "TradeAgg", str(src), "json", spark=spark, progress=None, writer=writer)
        assert _dump(url) == live, f"{writer}: a second run changed rows"

    # under a shard id: the rows carry it, and a reader composes them like any shard's
    url = postgres_server.url(postgres_server.create_database())
    app = tmp_path / "sharded.siddhi"
    app.write_text(_app(url, sharded=True))
    backfill(str(app), "TradeAgg", str(src), "json", spark=spark, progress=None, writer="jdbc",
             shard_id="backfill-2023")
    assert _dump(url, sharded=True) == live
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT DISTINCT SHARD_ID FROM TradeAgg_SECONDS").fetchall() == [("backfill-2023",)]


def test_backfill_on_a_standalone_cluster_writes_postgres(tmp_path: Any, cluster: str,  # noqa: F811
                                                          postgres_server: Any) -> None:
    events = _events(3_000, seed=9)
    src = tmp_path / "trades.json"
    src.write_text("".join(json.dumps(e) + "\n" for e in events))
    live_url = postgres_server.url(postgres_server.create_database())
    _live(_app(live_url), events)
    url = postgres_server.url(postgres_server.create_database())
    app = tmp_path / "app.siddhi"
    app.write_text(_app(url))
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run([sys.executable, "-m", "srota.service.cli", "aggregation", "backfill", str(app),
                           "--aggregation", "TradeAgg", "--input", str(src), "--master", cluster],
                          capture_output=True, text=True, timeout=400, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"on {cluster}" in done.stderr
    assert _dump(url) == _dump(live_url)
