"""PostgreSQL (psycopg 3) for the ``rdbms`` store.

psycopg 3 rather than asyncpg: the engine's hot path is synchronous (one writer per app,
DESIGN.md decision 5) and database work runs on the app's processing thread or a store's
writer thread, never on the event loop, so a synchronous driver fits without a private event
loop per store; psycopg 3 is the maintained successor of psycopg2, binds parameters
server-side, ships binary wheels (``psycopg[binary]``) and pipelines ``executemany``.
"""
from __future__ import annotations

from typing import Any

from srota.engine.stores.database import DatabaseURL, Dialect, StoreError
from srota.grammar.model import AttrType

_TYPES = {
    AttrType.INT: "INTEGER", AttrType.LONG: "BIGINT", AttrType.FLOAT: "REAL",
    AttrType.DOUBLE: "DOUBLE PRECISION", AttrType.BOOL: "BOOLEAN", AttrType.OBJECT: "BYTEA",
}


#: The advisory-lock key that serializes srota's schema changes in a PostgreSQL database.
_DDL_LOCK = 0x5372_6F74  # "Srot"


class PostgreSQL(Dialect):
    name = "postgresql"

    def connect(self, url: DatabaseURL, timeout: float) -> Any:
        psycopg = _driver()
        extra = {k: v for k, v in url.params if k in ("sslmode", "sslrootcert", "sslcert", "sslkey",
                                                       "application_name", "options")}
        return psycopg.connect(host=url.host, port=url.port, dbname=url.database, user=url.user,
                               password=url.password, connect_timeout=max(1, int(timeout)),
                               application_name=extra.pop("application_name", "srota"), **extra)

    def serialize_ddl(self, cur: Any) -> None:
        # A transaction-scoped advisory lock: released by the commit that ends the DDL.
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK,))

    def quote(self, name: str) -> str:
        # Folded to lower case, as PostgreSQL folds the unquoted names siddhi-store-rdbms
        # writes: a table Siddhi made (stocktable) is the app's StockTable, and SQL written
        # by hand (SELECT * FROM StockTable, #rdbms:query) finds the tables Srota makes.
        return '"' + name.lower().replace('"', '""') + '"'

    def column_type(self, attr_type: Any, length: int | None, key: bool) -> str:
        if attr_type is AttrType.STRING:
            # "C": byte order and exact equality, as Java compares strings
            return (f"VARCHAR({length})" if length else "TEXT") + ' COLLATE "C"'
        return _TYPES[attr_type]

    def null_safe_equal(self, left: str, right: str) -> str:
        return f"{left} IS NOT DISTINCT FROM {right}"

    def upsert(self, table: str, columns: list[str], key: list[str]) -> str:
        q = self.quote
        names = ", ".join(q(c) for c in columns)
        marks = ", ".join(self.placeholder for _ in columns)
        rest = [c for c in columns if c not in key]
        sets = ", ".join(f"{q(c)} = EXCLUDED.{q(c)}" for c in rest) or f"{q(key[0])} = EXCLUDED.{q(key[0])}"
        return (f"INSERT INTO {q(table)} ({names}) VALUES ({marks}) "
                f"ON CONFLICT ({', '.join(q(c) for c in key)}) DO UPDATE SET {sets}")

    def bulk_upsert(self, cur: Any, table: str, columns: list[str], key: list[str],
                    rows: list[tuple[Any, ...]], fresh: bool = False) -> bool:
        """Many rows in one round trip: COPY into a session-local staging table, then one
        upsert from it (parsing one big multi-row statement costs more than the rows); rows
        known to be new (``fresh``) are copied into the table itself."""
        q = self.quote
        names = ", ".join(q(c) for c in columns)
        if fresh:
            with cur.copy(f"COPY {q(table)} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return True
        stage = q(f"srota_stage_{table}"[:63])
        cur.execute(f"CREATE TEMP TABLE IF NOT EXISTS {stage} (LIKE {q(table)}) ON COMMIT DELETE ROWS")
        with cur.copy(f"COPY {stage} ({names}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        upsert = self.upsert(table, columns, key)
        cur.execute(f"{upsert.split(' VALUES ')[0]} SELECT {names} FROM {stage}{upsert[upsert.index(' ON CONFLICT'):]}")
        cur.execute(f"DELETE FROM {stage}")
        return True

    def insert_if_absent(self, table: str, columns: list[str], key: list[str]) -> str:
        q = self.quote
        names = ", ".join(q(c) for c in columns)
        marks = ", ".join(self.placeholder for _ in columns)
        return f"INSERT INTO {q(table)} ({names}) VALUES ({marks}) ON CONFLICT DO NOTHING"

    def existing_columns(self, cur: Any, table: str) -> list[str] | None:
        cur.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = "
                    "current_schema() AND table_name = %s ORDER BY ordinal_position", (table.lower(),))
        return [r[0] for r in cur.fetchall()] or None

    def is_transient(self, exc: BaseException) -> bool:
        import psycopg

        if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
            return not _is_login_error(exc)
        sqlstate = getattr(getattr(exc, "diag", None), "sqlstate", None) or ""
        # 40001 serialization failure, 40P01 deadlock, 57P0x admin shutdown / cannot connect now
        return sqlstate in ("40001", "40P01") or sqlstate.startswith("57P") or sqlstate.startswith("08")

    def explain(self, exc: BaseException, url: DatabaseURL) -> str:
        text = " ".join(str(exc).split())
        if "password authentication failed" in text:
            return f"password authentication failed for user '{url.user}': check username/password"
        if "does not exist" in text and "database" in text:
            return f"database '{url.database}' does not exist: create it (CREATE DATABASE) or fix jdbc.url"
        if "no password supplied" in text:
            return f"the server wants a password for user '{url.user}' and none was given: set password="
        if "Connection refused" in text or "connection failed" in text:
            return f"connection refused: is PostgreSQL running on {url.host}:{url.port}?"
        return text


def _is_login_error(exc: BaseException) -> bool:
    text = str(exc)
    return "password authentication failed" in text or ("database" in text and "does not exist" in text) \
        or "no password supplied" in text or "role" in text and "does not exist" in text


def _driver() -> Any:
    try:
        import psycopg
    except ImportError:
        raise StoreError("PostgreSQL stores need the psycopg driver: pip install 'srota[rdbms]'") from None
    return psycopg
