"""engine/stores/database.py without a server: the checks made before connecting."""
from __future__ import annotations

import gc

import pytest
from srota.engine import collector
from srota.engine.stores.database import Database, StoreUnavailableError, parse_url

from tests.conftest import free_port


@pytest.mark.parametrize("text, message", [
    ("maximumPoolSize:5,maxWSO2:60000", "property maxWSO2 does not exist on HikariConfig"),
    ("maxLifetime:WSO2", "maxLifetime takes a number, not 'WSO2'"),
    ("autoCommit:yes", "autoCommit takes true or false, not 'yes'"),
    ("maximumPoolSize", "'maximumPoolSize' is not 'setting:value'"),
    ("MAXIMUMPOOLSIZE:2", "does not exist"),
])
def test_pool_properties_hikari_refuses_are_refused(text: str, message: str) -> None:
    from srota.engine.stores.database import StoreError, check_pool_properties

    with pytest.raises(StoreError, match=message):
        check_pool_properties(text)


def test_pool_properties_hikari_takes_pass() -> None:
    from srota.engine.stores.database import check_pool_properties

    check_pool_properties("maximumPoolSize:2, MaxLifetime:60000, autoCommit:false, poolName:srota, "
                          "dataSource.cachePrepStmts:true, ")


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
