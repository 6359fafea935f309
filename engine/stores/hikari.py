"""``pool.properties`` as siddhi-store-rdbms reads it and HikariCP takes it.

``@store(type='rdbms', ..., pool.properties='maximumPoolSize:5, maxLifetime:60000')``: Srota
keeps one connection per database and uses none of these settings, but refuses exactly what a
Siddhi deployment refuses, so an app Siddhi would not start is not started here either, and
one Siddhi starts is accepted:

* RDBMSTableUtils.processKeyValuePairs: the text is split at commas and each entry at colons
  (Java's ``split``: trailing empty parts dropped); an entry that is not exactly one
  ``key:value`` pair is refused (so a value holding a colon is refused too);
* HikariConfig(Properties) (HikariCP 5.1's PropertyElf): ``dataSource.*`` keys go to the JDBC
  driver unchecked; any other key must name a setter of HikariConfig (the first letter in
  either case); a number must parse as Java's
  ``Integer.parseInt``/``Long.parseLong`` parse it; a boolean is ``Boolean.parseBoolean``,
  which takes any text (not ``true`` is false); the setters' own range checks apply
  (``maximumPoolSize`` at least 1, ``connectionTimeout`` and ``validationTimeout`` at least
  250 ms, ``idleTimeout`` and ``minimumIdle`` not negative); a setter taking a Java object
  (``metricRegistry``, ``dataSource`` ...) cannot be given one as text;
* the pool (HikariDataSource) refuses a ``transactionIsolation`` that is not a JDBC level.
"""
from __future__ import annotations

import re

from srota.engine.stores.database import StoreError

__all__ = ["check_pool_properties"]

_INT, _LONG, _BOOL, _STR, _OBJECT = "int", "long", "boolean", "String", "object"
#: HikariConfig's setters (HikariCP 5.1) by the type they take.
_SETTERS: dict[str, str] = {
    **dict.fromkeys(("maximumPoolSize", "minimumIdle"), _INT),
    **dict.fromkeys(("connectionTimeout", "idleTimeout", "leakDetectionThreshold", "maxLifetime",
                     "validationTimeout", "initializationFailTimeout", "keepaliveTime"), _LONG),
    **dict.fromkeys(("autoCommit", "allowPoolSuspension", "isolateInternalQueries", "readOnly",
                     "registerMbeans"), _BOOL),
    **dict.fromkeys(("catalog", "connectionInitSql", "connectionTestQuery", "dataSourceClassName",
                     "dataSourceJNDI", "driverClassName", "exceptionOverrideClassName", "jdbcUrl", "password",
                     "poolName", "schema", "transactionIsolation", "username"), _STR),
    **dict.fromkeys(("dataSource", "dataSourceProperties", "healthCheckProperties", "healthCheckRegistry",
                     "metricRegistry", "metricsTrackerFactory", "scheduledExecutor", "threadFactory"), _OBJECT),
}
#: The setters' own checks: the least value each takes, and HikariConfig's message.
_AT_LEAST: dict[str, tuple[int, str]] = {
    "maximumPoolSize": (1, "maxPoolSize cannot be less than 1"),
    "minimumIdle": (0, "minimumIdle cannot be negative"),
    "idleTimeout": (0, "idleTimeout cannot be negative"),
    "connectionTimeout": (250, "connectionTimeout cannot be less than 250ms"),  # (0 means no limit)
    "validationTimeout": (250, "validationTimeout cannot be less than 250ms"),
}
#: HikariCP's IsolationLevel: the names (any case) and their JDBC numbers (also accepted).
_ISOLATION = {"TRANSACTION_NONE": 0, "TRANSACTION_READ_UNCOMMITTED": 1, "TRANSACTION_READ_COMMITTED": 2,
              "TRANSACTION_CURSOR_STABILITY": 3, "TRANSACTION_REPEATABLE_READ": 4,
              "TRANSACTION_LAST_COMMITTED": 5, "TRANSACTION_SERIALIZABLE": 8,
              "TRANSACTION_SQL_SERVER_SNAPSHOT_ISOLATION_LEVEL": 4096}
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")  # Integer.parseInt / Long.parseLong (no '_', no spaces)
_RANGE = {_INT: 2**31, _LONG: 2**63}
_FORMAT = "does not adhere to the expected format: a property must be a key-value pair separated by a colon (:)"


def _java_split(text: str, sep: str) -> list[str]:
    """Java's ``String.split``: trailing empty parts are dropped."""
    parts = text.split(sep)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _setter(key: str) -> str | None:
    """The HikariConfig setting ``key`` names, as PropertyElf finds its setter: ``set`` and the
    key with its first letter in capitals.  (Its second try, ``set`` and the key all in capitals,
    finds none of HikariConfig's setters.)"""
    for name in _SETTERS:
        if key[:1].upper() + key[1:] == name[:1].upper() + name[1:]:
            return name
    return None


def check_pool_properties(text: str) -> None:
    """Refuse ``pool.properties`` text that siddhi-store-rdbms and HikariCP refuse (module doc);
    raises :class:`StoreError` naming the entry and why."""
    if not text.strip():
        return
    for entry in _java_split(text, ","):
        if ":" not in entry:
            raise StoreError(f"pool.properties: property '{entry}' {_FORMAT}")
        pair = _java_split(entry, ":")
        if len(pair) != 2:
            raise StoreError(f"pool.properties: property '{pair[0] if pair else entry}' {_FORMAT}")
        key, value = pair[0].strip(), pair[1].strip()
        if key.startswith("dataSource."):
            continue  # a JDBC driver property: HikariCP passes it on as it is
        name = _setter(key) if key else None
        if name is None:
            raise StoreError(f"pool.properties: property {key} does not exist on HikariConfig "
                             f"(settings: {', '.join(sorted(n for n, t in _SETTERS.items() if t != _OBJECT))}, "
                             "and dataSource.* for the JDBC driver)")
        kind = _SETTERS[name]
        if kind == _OBJECT:
            raise StoreError(f"pool.properties: {key} takes a Java object, which pool.properties cannot give")
        if kind in _RANGE:
            if not _JAVA_INTEGER.fullmatch(value) or not -_RANGE[kind] <= int(value) < _RANGE[kind]:
                raise StoreError(f"pool.properties: {key} takes a whole number ({kind}), not '{value}'")
            least = _AT_LEAST.get(name)
            number = int(value)
            if least is not None and number < least[0] and not (name == "connectionTimeout" and number == 0):
                raise StoreError(f"pool.properties: {key}:{value}: {least[1]}")
        elif name == "transactionIsolation" and value.upper() not in _ISOLATION and not (
                _JAVA_INTEGER.fullmatch(value) and int(value) in _ISOLATION.values()):
            raise StoreError(f"pool.properties: Invalid transaction isolation value: {value} "
                             f"(one of {', '.join(_ISOLATION)}, or its JDBC number)")
