"""The error store: events that failed, kept with their cause until someone replays or purges them.

Siddhi's ``ErrorStore``.  What lands here:

* ``STREAM`` errors: events of a stream with ``@OnError(action='STORE')`` whose processing
  raised in a query (each event that failed, with the exception);
* ``SINK`` errors: outputs a sink with ``on.error='STORE'`` could not publish;
* ``MAPPING`` errors: payloads a source could not map, for streams with
  ``@OnError(action='STORE')`` (the original bytes, to replay through the mapper).

A runtime hands entries to the store given to :class:`~srota.engine.SiddhiManager`
(``error_store=``); the service gives one in SQLite (``errors.database``), listed, shown,
replayed and purged by ``srota errors`` and the admin API.  Without a store, ``STORE`` logs
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
        where, args = ["1 = 1"], []
        if app is not None:
            where.append("app = ?")
            args.append(app)
        if stream is not None:
            where.append("stream = ?")
            args.append(stream)
        return where, args


def _entry(row: tuple[Any, ...]) -> ErrorEntry:
    ident, app, stream, kind, cause, stack, events, payload, created = row
    return ErrorEntry(app, stream, kind, cause, orjson.loads(events), payload, stack, created, ident)
