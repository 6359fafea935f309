"""MySQL and MariaDB (PyMySQL) for the ``rdbms`` store.

PyMySQL rather than asyncmy or aiomysql: database work runs off the event loop on the app's
processing thread or a store's writer thread (see :mod:`engine.stores.postgresql`), so the
synchronous protocol aiomysql itself is built on is the direct choice; it is pure Python
(nothing to compile on a slim image), maintained, and talks to MySQL 5.7+/8 and MariaDB alike.
Tables are created with ``utf8mb4_bin``: binary comparison, as Java compares strings (MySQL's
default collation would match 'IBM' with 'ibm').
"""
from __future__ import annotations

from typing import Any

from srota.engine.stores.database import DatabaseURL, Dialect, StoreError
from srota.grammar.model import AttrType

_TYPES = {
    AttrType.INT: "INTEGER", AttrType.LONG: "BIGINT", AttrType.FLOAT: "FLOAT",
    AttrType.DOUBLE: "DOUBLE", AttrType.BOOL: "BOOLEAN", AttrType.OBJECT: "LONGBLOB",
}
_LOGIN_ERRORS = {1044, 1045, 1049, 1698}  # access denied, unknown database
_TRANSIENT = {1205, 1213, 2002, 2003, 2006, 2013, 2055, 1040, 1053, 1927}


class MySQL(Dialect):
    name = "mysql"

    def connect(self, url: DatabaseURL, timeout: float) -> Any:
        pymysql = _driver()
        return pymysql.connect(host=url.host, port=url.port, user=url.user or "", password=url.password or "",
                               database=url.database, connect_timeout=max(1, int(timeout)),
                               charset="utf8mb4", autocommit=False, read_timeout=600, write_timeout=600)

    def quote(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def column_type(self, attr_type: Any, length: int | None, key: bool) -> str:
        if attr_type is AttrType.STRING:
            # Siddhi's rdbms store: VARCHAR(254) unless field.length says otherwise
            return f"VARCHAR({length or 254})"
        return _TYPES[attr_type]

    def create_table_suffix(self) -> str:
        return " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"

    def null_safe_equal(self, left: str, right: str) -> str:
        return f"{left} <=> {right}"

    def upsert(self, table: str, columns: list[str], key: list[str]) -> str:
        q = self.quote
        names = ", ".join(q(c) for c in columns)
        marks = ", ".join(self.placeholder for _ in columns)
        rest = [c for c in columns if c not in key] or key[:1]
        sets = ", ".join(f"{q(c)} = VALUES({q(c)})" for c in rest)
        return f"INSERT INTO {q(table)} ({names}) VALUES ({marks}) ON DUPLICATE KEY UPDATE {sets}"

    def insert_if_absent(self, table: str, columns: list[str], key: list[str]) -> str:
        # not INSERT IGNORE: that would also turn a too-long string into a silent truncation
        q = self.quote
        names = ", ".join(q(c) for c in columns)
        marks = ", ".join(self.placeholder for _ in columns)
        return (f"INSERT INTO {q(table)} ({names}) VALUES ({marks}) "
                f"ON DUPLICATE KEY UPDATE {q(key[0])} = {q(key[0])}")

    def existing_columns(self, cur: Any, table: str) -> list[str] | None:
        cur.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() "
                    "AND table_name = %s ORDER BY ordinal_position", (table,))
        return [r[0] for r in cur.fetchall()] or None

    def is_transient(self, exc: BaseException) -> bool:
        import pymysql

        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        if code in _LOGIN_ERRORS:
            return False
        if code in _TRANSIENT:
            return True
        return isinstance(exc, pymysql.err.InterfaceError | ConnectionError | BrokenPipeError) or (
            isinstance(exc, pymysql.err.OperationalError) and code is not None and code >= 2000)

    def explain(self, exc: BaseException, url: DatabaseURL) -> str:
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        if code in (1045, 1698):
            return f"access denied for user '{url.user}': check username/password"
        if code == 1049:
            return f"database '{url.database}' does not exist: create it (CREATE DATABASE) or fix jdbc.url"
        if code in (2002, 2003):
            return f"connection refused: is MySQL/MariaDB running on {url.host}:{url.port}?"
        return " ".join(str(exc).split())


def _driver() -> Any:
    try:
        import pymysql
    except ImportError:
        raise StoreError("MySQL/MariaDB stores need the pymysql driver: pip install 'srota[rdbms]'") from None
    return pymysql
