"""engine/stores/database.py: the checks made before connecting, an outage, and a held transaction (on both servers)."""
from __future__ import annotations

import gc

import pytest
from srota.engine import collector
from srota.engine.stores.database import (
    Database,
    HeldTransaction,
    StoreError,
    StoreUnavailableError,
    parse_url,
)

from tests.conftest import free_port


def test_an_outage_inside_a_chunk_lets_the_collector_run_while_it_retries() -> None:
    """A chunk held by a database outage may wait minutes: the collector must not wait with it."""
    db = Database(parse_url(f"postgresql://u:p@127.0.0.1:{free_port()}/db"), "test store", max_outage_ms=100,
                  connect_timeout=1)
    was = gc.isenabled()
    gc.enable()
    try:
        assert collector.hold_off()
        try:
            with pytest.raises(StoreUnavailableError):
                db.run(lambda cur: cur.execute("SELECT 1"))
            assert gc.isenabled()
        finally:
            collector.release()
    finally:
        if not was:
            gc.disable()


def test_a_held_transaction_whose_savepoint_is_gone_is_ended_and_says_so(rdbms_url: str) -> None:
    """A unit of work that fails after the server dropped its savepoint (a MariaDB deadlock
    rolls the whole transaction back; here the unit releases it itself) cannot be undone
    alone: the transaction is ended, not left to commit half a unit, and the next unit
    begins a new one."""
    db = Database(parse_url(rdbms_url), "test store")
    db.run(lambda cur: cur.execute("CREATE TABLE held (n INT)"))
    tx = HeldTransaction(db, "transaction 't1'")
    tx.run(lambda cur: cur.execute("INSERT INTO held VALUES (1)"))

    def releases_then_fails(cur: object) -> None:
        cur.execute("RELEASE SAVEPOINT srota_unit")  # type: ignore[attr-defined]
        cur.execute("INSERT INTO held VALUES (2)")  # type: ignore[attr-defined]
        cur.execute("SELECT * FROM no_such_table")  # type: ignore[attr-defined]

    with pytest.raises(StoreError, match="transaction 't1' is lost, its work so far rolled back"):
        tx.run(releases_then_fails)
    tx.run(lambda cur: cur.execute("INSERT INTO held VALUES (3)"))
    assert tx.end(commit=True)
    assert [tuple(r) for r in db.run(lambda cur: (cur.execute("SELECT n FROM held"), cur.fetchall())[1])] == [(3,)]
    db.close()
