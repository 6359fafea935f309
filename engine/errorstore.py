"""The error store: events that failed, kept with their cause until someone replays or purges them.

Siddhi's ``ErrorStore``.  What lands here:

* ``STREAM`` errors: events of a stream with ``@OnError(action='STORE')`` whose processing
  raised in a query (each event that failed, with the exception);
* ``SINK`` errors: outputs a sink with ``on.error='STORE'`` could not publish;
* ``MAPPING`` errors: payloads a source could not map, for streams with
  ``@OnError(action='STORE')`` (the original bytes, to replay through the mapper).

A runtime hands entries to the store given to :class:`~srota.engine.SiddhiManager`
(``error_store=``); the service gives one in SQLite, or in PostgreSQL/MySQL shared by its
replicas (``errors.database``; :func:`open_error_store`), listed, shown, replayed and purged
by ``srota errors`` and the admin API.  Without a store, ``STORE`` logs
the events and says so.

Entries are plain data (JSON in the database): the events' values must be JSON values, so an
``object`` attribute is kept as its text.
"""
from __future__ import annotations

import sqlite3
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

#: Where an error happened.
STREAM, SINK, MAPPING = "STREAM", "SINK", "MAPPING"
_KINDS = (STREAM, SINK, MAPPING)


@dataclass
class ErrorEntry:
    """One failure: the events (``[{timestamp, data}]``) or the payload that failed, and why."""

    app: str
    stream: str
    kind: str
    cause: str
    events: list[dict[str, Any]] = field(default_factory=list)
    payload: bytes | None = None
    stack: str = ""
    created: int = field(default_factory=lambda: int(time.time() * 1000))
    id: int | None = None

    def summary(self) -> dict[str, Any]:
        """The entry without its events, payload and stack (for lists)."""
        return {"id": self.id, "app": self.app, "stream": self.stream, "kind": self.kind, "cause": self.cause,
                "events": len(self.events), "payload_bytes": None if self.payload is None else len(self.payload),
                "created": self.created}

    def detail(self) -> dict[str, Any]:
        """Everything, the payload as text where it decodes (else as hex)."""
        payload: Any = None
        if self.payload is not None:
            try:
                payload = self.payload.decode("utf-8")
            except UnicodeDecodeError:
                payload = {"hex": self.payload.hex()}
        return {**self.summary(), "events": self.events, "payload": payload, "stack": self.stack}


def entry_for(app: str, stream: str, kind: str, exc: BaseException | str, events: list[Any] | None = None,
              payload: bytes | str | None = None) -> ErrorEntry:
    """An entry for engine events (objects with ``timestamp`` and ``data``) or a payload."""
    if isinstance(exc, BaseException):
        cause = f"{type(exc).__name__}: {exc}"
        stack = "".join(traceback.format_exception(exc))[-8000:]
    else:
        cause, stack = exc, ""
    rows = [{"timestamp": e.timestamp, "data": [_plain(v) for v in e.data]} for e in events or []]
    data = payload.encode("utf-8") if isinstance(payload, str) else payload
    return ErrorEntry(app, stream, kind, cause, rows, data, stack)


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


class SqliteErrorStore:
    """Error entries in one SQLite file (thread-safe: engine threads add, the admin API reads)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS srota_errors (id INTEGER PRIMARY KEY AUTOINCREMENT, app TEXT NOT NULL, "
            "stream TEXT NOT NULL, kind TEXT NOT NULL, cause TEXT NOT NULL, stack TEXT NOT NULL, "
            "events BLOB NOT NULL, payload BLOB, created INTEGER NOT NULL)")
        self._db.execute("CREATE INDEX IF NOT EXISTS srota_errors_app ON srota_errors (app, stream)")

    def add(self, entry: ErrorEntry) -> int:
        """Keep ``entry``; returns its id."""
        if entry.kind not in _KINDS:
            raise ValueError(f"unknown error kind {entry.kind!r}")
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO srota_errors (app, stream, kind, cause, stack, events, payload, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (entry.app, entry.stream, entry.kind, entry.cause, entry.stack, orjson.dumps(entry.events),
                 entry.payload, entry.created))
            entry.id = int(cursor.lastrowid or 0)
        return entry.id

    def entries(self, app: str | None = None, stream: str | None = None, limit: int = 100,
             after: int = 0) -> list[ErrorEntry]:
        """Entries, oldest first (``after`` an id: the next page)."""
        where, args = self._where(app, stream)
        where.append("id > ?")
        args.append(after)
        with self._lock:
            rows = self._db.execute(
                f"SELECT id, app, stream, kind, cause, stack, events, payload, created FROM srota_errors "
                f"WHERE {' AND '.join(where)} ORDER BY id LIMIT ?", (*args, limit)).fetchall()
        return [_entry(r) for r in rows]

    def count(self, app: str | None = None, stream: str | None = None) -> int:
        where, args = self._where(app, stream)
        with self._lock:
            return int(self._db.execute(f"SELECT count(*) FROM srota_errors WHERE {' AND '.join(where)}",
                                        args).fetchone()[0])

    def get(self, ident: int) -> ErrorEntry | None:
        with self._lock:
            row = self._db.execute("SELECT id, app, stream, kind, cause, stack, events, payload, created "
                                   "FROM srota_errors WHERE id = ?", (ident,)).fetchone()
        return None if row is None else _entry(row)

    def discard(self, ident: int) -> bool:
        """Remove one entry; whether it was there."""
        with self._lock:
            return self._db.execute("DELETE FROM srota_errors WHERE id = ?", (ident,)).rowcount > 0

    def purge(self, app: str | None = None, stream: str | None = None, before: int | None = None) -> int:
        """Remove the entries of an app (and stream), or all; ``before``: only older ones (ms)."""
        where, args = self._where(app, stream)
        if before is not None:
            where.append("created < ?")
            args.append(before)
        with self._lock:
            return int(self._db.execute(f"DELETE FROM srota_errors WHERE {' AND '.join(where)}", args).rowcount)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @staticmethod
    def _where(app: str | None, stream: str | None) -> tuple[list[str], list[Any]]:
        return _where(app, stream, "?")


def _entry(row: tuple[Any, ...]) -> ErrorEntry:
    ident, app, stream, kind, cause, stack, events, payload, created = row
    return ErrorEntry(app, stream, kind, cause, orjson.loads(events), payload, stack, created, ident)


class RdbmsErrorStore:
    """Error entries in a PostgreSQL or MySQL/MariaDB table (``srota_errors``): one store that
    every replica of a service shares, across outages like the ``rdbms`` store (a write waits
    for the database up to ``max_outage_ms``, then fails)."""

    def __init__(self, url: str, max_outage_ms: int = 60_000) -> None:
        from srota.engine.stores.database import Database, parse_url

        self.url = parse_url(url)
        self._db = Database(self.url, "error store", max_outage_ms)
        self._db.connect_now()
        self._ph = self._db.dialect.placeholder
        mysql = self._db.dialect.name != "postgresql"
        ident = "BIGINT AUTO_INCREMENT PRIMARY KEY" if mysql else "BIGSERIAL PRIMARY KEY"
        text, blob = ("LONGTEXT", "LONGBLOB") if mysql else ("TEXT", "BYTEA")
        q = self._db.q

        def create(cur: Any) -> None:
            self._db.dialect.serialize_ddl(cur)
            cur.execute(
                f"CREATE TABLE IF NOT EXISTS {q('srota_errors')} (id {ident}, app VARCHAR(255) NOT NULL, "
                f"stream VARCHAR(255) NOT NULL, kind VARCHAR(16) NOT NULL, cause {text} NOT NULL, "
                f"stack {text} NOT NULL, events {text} NOT NULL, payload {blob}, created BIGINT NOT NULL)"
                + self._db.dialect.create_table_suffix())

        self._db.run(create)

    def add(self, entry: ErrorEntry) -> int:
        """Keep ``entry``; returns its id."""
        if entry.kind not in _KINDS:
            raise ValueError(f"unknown error kind {entry.kind!r}")
        columns = "(app, stream, kind, cause, stack, events, payload, created)"
        marks = _marks(8, self._ph)
        values = (entry.app, entry.stream, entry.kind, entry.cause, entry.stack,
                  orjson.dumps(entry.events).decode(), entry.payload, entry.created)

        def insert(cur: Any) -> int:
            if self._db.dialect.name == "postgresql":
                cur.execute(f"INSERT INTO srota_errors {columns} VALUES ({marks}) RETURNING id", values)
                return int(cur.fetchone()[0])
            cur.execute(f"INSERT INTO srota_errors {columns} VALUES ({marks})", values)
            return int(cur.lastrowid)

        entry.id = self._db.run(insert)
        return entry.id

    def entries(self, app: str | None = None, stream: str | None = None, limit: int = 100,
                after: int = 0) -> list[ErrorEntry]:
        """Entries, oldest first (``after`` an id: the next page)."""
        where, args = _where(app, stream, self._ph)
        where.append(f"id > {self._ph}")
        args.append(after)
        return self._select(f"WHERE {' AND '.join(where)} ORDER BY id LIMIT {self._ph}", (*args, limit))

    def count(self, app: str | None = None, stream: str | None = None) -> int:
        where, args = _where(app, stream, self._ph)

        def count(cur: Any) -> int:
            cur.execute(f"SELECT count(*) FROM srota_errors WHERE {' AND '.join(where)}", args)
            return int(cur.fetchone()[0])

        return self._db.run(count)

    def get(self, ident: int) -> ErrorEntry | None:
        found = self._select(f"WHERE id = {self._ph}", (ident,))
        return found[0] if found else None

    def discard(self, ident: int) -> bool:
        """Remove one entry; whether it was there."""
        return self._delete(f"id = {self._ph}", [ident]) > 0

    def purge(self, app: str | None = None, stream: str | None = None, before: int | None = None) -> int:
        """Remove the entries of an app (and stream), or all; ``before``: only older ones (ms)."""
        where, args = _where(app, stream, self._ph)
        if before is not None:
            where.append(f"created < {self._ph}")
            args.append(before)
        return self._delete(" AND ".join(where), args)

    def close(self) -> None:
        self._db.close()

    def _select(self, tail: str, args: tuple[Any, ...]) -> list[ErrorEntry]:
        def select(cur: Any) -> list[tuple[Any, ...]]:
            cur.execute(f"SELECT id, app, stream, kind, cause, stack, events, payload, created "
                        f"FROM srota_errors {tail}", args)
            return list(cur.fetchall())

        return [_entry(tuple(bytes(v) if isinstance(v, memoryview) else v for v in row))
                for row in self._db.run(select)]

    def _delete(self, condition: str, args: list[Any]) -> int:
        def delete(cur: Any) -> int:
            cur.execute(f"DELETE FROM srota_errors WHERE {condition}", args)
            return int(cur.rowcount)

        return self._db.run(delete)


def _marks(n: int, placeholder: str) -> str:
    return ", ".join([placeholder] * n)


def _where(app: str | None, stream: str | None, mark: str) -> tuple[list[str], list[Any]]:
    where, args = ["1 = 1"], []
    if app is not None:
        where.append(f"app = {mark}")
        args.append(app)
    if stream is not None:
        where.append(f"stream = {mark}")
        args.append(stream)
    return where, args


def open_error_store(location: str) -> SqliteErrorStore | RdbmsErrorStore:
    """The store at ``location``: a database URL (``postgresql://``, ``mysql://``,
    ``mariadb://``, or ``jdbc:`` of those) or an SQLite file path."""
    if "://" in location:
        return RdbmsErrorStore(location)
    return SqliteErrorStore(location)
