"""engine/stores/database.py without a server: the checks made before connecting."""
from __future__ import annotations

import pytest


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
