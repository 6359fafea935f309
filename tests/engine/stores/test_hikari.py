"""``pool.properties`` refused and accepted as siddhi-store-rdbms with HikariCP does.

Every case was run through siddhi-store-rdbms's own parsing (RDBMSTableUtils.processKeyValuePairs)
and ``new HikariConfig(properties).validate()`` of HikariCP 5.1.0 on Java 17; the comment of
each says what Java answered.
"""
from __future__ import annotations

import pytest
from srota.engine.stores.database import StoreError
from srota.engine.stores.hikari import check_pool_properties
from srota.grammar.errors import SiddhiAppCreationError

from srota import SiddhiManager
from tests.engine.stores.upstream.support import store

APP = "define stream S (symbol string); {store}\ndefine table T (symbol string); from S insert into T;"


@pytest.mark.parametrize("text, message", [
    ("maxWSO2:6", "property maxWSO2 does not exist on HikariConfig"),  # Property maxWSO2 does not exist
    ("loginTimeout:5", "property loginTimeout does not exist"),  # (a HikariDataSource setting, not the config's)
    ("maxlifetime:60000", "property maxlifetime does not exist"),  # only the first letter's case is free
    ("MAXLIFETIME:60000", "property MAXLIFETIME does not exist"),
    ("maxLifetime:WSO2", "maxLifetime takes a whole number \\(long\\), not 'WSO2'"),  # NumberFormatException
    ("maxLifetime:1_000", "not '1_000'"),  # (Python's int() takes it; Long.parseLong does not)
    ("maximumPoolSize:3000000000", "maximumPoolSize takes a whole number \\(int\\)"),  # beyond an int
    ("maximumPoolSize:0", "maxPoolSize cannot be less than 1"),  # IllegalArgumentException
    ("connectionTimeout:100", "connectionTimeout cannot be less than 250ms"),
    ("validationTimeout:100", "validationTimeout cannot be less than 250ms"),
    ("idleTimeout:-1", "idleTimeout cannot be negative"),
    ("minimumIdle:-1", "minimumIdle cannot be negative"),
    ("transactionIsolation:FOO", "Invalid transaction isolation value: FOO"),  # (when the pool is made)
    ("metricRegistry:x", "metricRegistry takes a Java object"),  # (a JNDI lookup of 'x' fails)
    ("healthCheckProperties:x", "takes a Java object"),  # argument type mismatch
    ("connectionInitSql:SET a:1", "property 'connectionInitSql' does not adhere to the expected format"),
    ("maximumPoolSize:", "property 'maximumPoolSize' does not adhere"),  # (the empty value is dropped)
    ("maximumPoolSize", "property 'maximumPoolSize' does not adhere"),
    ("maximumPoolSize:5,,minimumIdle:1", "property '' does not adhere"),
    ("maximumPoolSize:5, ", "property ' ' does not adhere"),
])
def test_refused_as_hikari_refuses(text: str, message: str) -> None:
    with pytest.raises(StoreError, match=message):
        check_pool_properties(text)


@pytest.mark.parametrize("text", [
    "maximumPoolSize:1",
    "maximumPoolSize: 5 , MaxLifetime:60000",  # (the first letter in either case)
    "autoCommit:yes",  # Boolean.parseBoolean: anything not 'true' is false
    "readOnly:TRUE, isolateInternalQueries:1",
    "connectionTimeout:0",  # 0: no limit
    "maxLifetime:1000",  # below 30 s: HikariCP logs and takes its default
    "maximumPoolSize:+5, initializationFailTimeout:-5, leakDetectionThreshold:1, keepaliveTime:1000",
    "transactionIsolation:transaction_serializable, poolName:a b",
    "transactionIsolation:2",  # a JDBC level's number
    "dataSource.cachePrepStmts:true, dataSource.anything:x",  # the driver's, passed on unchecked
    "maximumPoolSize:5,",  # (Java's split drops the trailing empty part)
    "",
])
def test_accepted_as_hikari_accepts(text: str) -> None:
    check_pool_properties(text)


def test_a_table_with_a_pool_property_hikari_refuses_is_refused(rdbms_url: str) -> None:
    """At the table: Siddhi's app does not start (HikariConfig's IllegalArgumentException)."""
    app = APP.format(store=store(rdbms_url, pool__properties="maximumPoolSize:0"))
    with pytest.raises(SiddhiAppCreationError, match="maxPoolSize cannot be less than 1"):
        SiddhiManager().create_siddhi_app_runtime(app)


def test_a_table_takes_what_hikari_takes(rdbms_url: str) -> None:
    app = APP.format(store=store(rdbms_url, pool__properties="maximumPoolSize:2, autoCommit:yes"))
    SiddhiManager().create_siddhi_app_runtime(app).shutdown()
