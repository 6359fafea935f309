"""The soak's PostgreSQL keeps what it acknowledged across a crash (an ``immediate`` stop).

Found by the chaos soak: joins saw rows older than the previous record's, roll-up rows were
short and a table lost its last write, each right after a PostgreSQL stop.  The soak's server
ran with the tests' speed settings (``synchronous_commit`` and ``fsync`` off), so a crash lost
the transactions of the last few hundred milliseconds that it had already acknowledged: the
stores had written them and moved on, as they may on a production server.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.soak.cluster import postgres

pytestmark = pytest.mark.integration


def test_acknowledged_commits_survive_an_immediate_stop(tmp_path: Path) -> None:
    psycopg = pytest.importorskip("psycopg")
    try:
        server = postgres(tmp_path / "pg")
    except RuntimeError as exc:
        pytest.skip(str(exc))
    server.start()
    try:
        with psycopg.connect(server.url(), autocommit=True) as conn:
            conn.execute("CREATE TABLE t (n int)")
            for n in range(300):  # each its own transaction, acknowledged one by one
                conn.execute("INSERT INTO t VALUES (%s)", (n,))
        server.stop("immediate")
        server.resume()
        with psycopg.connect(server.url()) as conn:
            assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 300
    finally:
        server.stop("immediate")
