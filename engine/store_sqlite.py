"""``@store(type='sqlite', database='PATH')``: a table whose rows survive a restart.

The table itself stays an in-memory table (primary key and index dicts included), which is
the read cache: joins, ``in`` and on-demand queries never touch the disk.  Every change is
recorded in a write-behind buffer (row id -> latest row, or a deletion), coalesced, and
written in one transaction by a background thread every ``flush.interval`` (default 100 ms)
or as soon as ``batch.size`` changes (default 1000) are waiting, and at shutdown.  The hot
path therefore costs one dict assignment per change and never waits on I/O.

On start the rows are read back from the database (``SELECT`` in row-id order), so a table
holds after a restart what it held when the previous runtime shut down.  Rows written within
the last flush interval before a crash (not a shutdown) are lost; docs/tables.md says so.
"""
from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from typing import Any

from srota.engine import state_codec
from srota.engine.event import Event
from srota.engine.registry import Kind, Param, extension
from srota.engine.timeutil import parse_duration
from srota.grammar.model import AttrType

_log = logging.getLogger("srota.engine")

_SQL_TYPES = {
    AttrType.STRING: "TEXT", AttrType.INT: "INTEGER", AttrType.LONG: "INTEGER",
    AttrType.FLOAT: "REAL", AttrType.DOUBLE: "REAL", AttrType.BOOL: "INTEGER", AttrType.OBJECT: "BLOB",
}
_RID = "_srota_rid"
_TS = "_srota_ts"
_DELETED = object()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class SQLiteStore:
    """Write-behind persistence of one table in one SQLite database file."""

    def __init__(self, table: Any, options: dict[str, str], ctx: Any) -> None:
        path = options.get("database") or options.get("path")
        if not path:
            raise ValueError("needs database='path/to/file.db'")
        self.table = table
        self.path = path
        self.sql_table = options.get("table.name") or table.id
        self.flush_millis = parse_duration(options.get("flush.interval", "100 ms"))
        self.batch_size = int(options.get("batch.size", "1000"))
        self._types = [a.type for a in table.attributes]
        self._pending: dict[int, Any] = {}
        self._truncate = False
        self._lock = threading.Lock()  # guards _pending/_truncate (hot path vs writer)
        self._io = threading.Lock()  # one writer on the connection
        self._wake = threading.Event()
        self._closed = False
        self.writes = 0
        #: the changes a flush is writing (still counted as pending until committed)
        self._in_flight: dict[int, Any] = {}
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._create()
            table.load(self._read_all())
        except Exception:
            self._conn.close()
            raise
        self._thread = threading.Thread(target=self._run, name=f"srota-sqlite-{table.id}", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ schema and load
    def _create(self) -> None:
        cols = ", ".join(f"{_quote(a.name)} {_SQL_TYPES[a.type]}" for a in self.table.attributes)
        self._conn.execute(f"CREATE TABLE IF NOT EXISTS {_quote(self.sql_table)} "
                           f"({_RID} INTEGER PRIMARY KEY, {_TS} INTEGER, {cols})")
        have = [r[1] for r in self._conn.execute(f"PRAGMA table_info({_quote(self.sql_table)})")]
        want = [_RID, _TS, *(a.name for a in self.table.attributes)]
        if have != want:
            raise ValueError(f"table '{self.sql_table}' in {self.path} has columns {have[2:]}, "
                             f"the app defines {want[2:]}")
        names = ", ".join([_RID, _TS, *(_quote(a.name) for a in self.table.attributes)])
        marks = ", ".join("?" for _ in want)
        self._upsert_sql = f"INSERT OR REPLACE INTO {_quote(self.sql_table)} ({names}) VALUES ({marks})"
        self._delete_sql = f"DELETE FROM {_quote(self.sql_table)} WHERE {_RID} = ?"

    def _read_all(self) -> list[tuple[int, int, tuple[Any, ...]]]:
        rows = []
        types = self._types
        with self._io:
            cur = self._conn.execute(f"SELECT * FROM {_quote(self.sql_table)} ORDER BY {_RID}")
            for rec in cur:
                data = tuple(_from_sql(v, t) for v, t in zip(rec[2:], types, strict=True))
                rows.append((rec[0], rec[1] or 0, data))
        return rows

    # ------------------------------------------------------------------ hot path
    def put(self, rid: int, row: Event) -> None:
        """Record that row ``rid`` now holds ``row`` (written behind)."""
        with self._lock:
            self._pending[rid] = row
            n = len(self._pending)
        if n >= self.batch_size:
            self._wake.set()

    def remove(self, rid: int) -> None:
        """Record that row ``rid`` was deleted (written behind)."""
        with self._lock:
            self._pending[rid] = _DELETED

    def replace_all(self, rows: dict[int, Event]) -> None:
        """The table was replaced wholesale (a snapshot restore)."""
        with self._lock:
            self._truncate = True
            self._pending = dict(rows)
        self._wake.set()

    # ------------------------------------------------------------------ writer
    def _run(self) -> None:
        while not self._closed:
            self._wake.wait(self.flush_millis / 1000.0)
            self._wake.clear()
            try:
                self.flush()
            except Exception:  # keep the writer alive; the changes stay queued
                _log.exception("sqlite store %s: write failed", self.path)

    def flush(self) -> None:
        """Write every pending change in one transaction."""
        with self._io:
            with self._lock:
                pending, self._pending = self._pending, {}
                truncate, self._truncate = self._truncate, False
                self._in_flight = pending
            if not pending and not truncate:
                return
            upserts = []
            deletes = []
            for rid, row in pending.items():
                if row is _DELETED:
                    deletes.append((rid,))
                else:
                    upserts.append((rid, row.timestamp, *(_to_sql(v, t) for v, t in zip(row.data, self._types, strict=True))))
            try:
                self._conn.execute("BEGIN")
                if truncate:
                    self._conn.execute(f"DELETE FROM {_quote(self.sql_table)}")
                if deletes:
                    self._conn.executemany(self._delete_sql, deletes)
                if upserts:
                    self._conn.executemany(self._upsert_sql, upserts)
                self._conn.execute("COMMIT")
                self.writes += len(pending)
                with self._lock:
                    self._in_flight = {}
            except Exception:
                with self._lock:  # put the changes back under newer ones
                    pending.update(self._pending)
                    self._pending = pending
                    self._in_flight = {}
                    self._truncate = self._truncate or truncate
                # SQLite may have rolled back by itself (a full disk at COMMIT): a ROLLBACK
                # then fails with "no transaction is active", which must not hide the error.
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("ROLLBACK")
                raise

    def pending(self) -> int:
        """How many rows have changes not yet committed (for metrics and tests): those queued
        and those a flush is writing (while a write to a full disk fails, they are not lost)."""
        with self._lock:
            in_flight = self._in_flight
            return len(self._pending) + sum(1 for rid in in_flight if rid not in self._pending)

    def close(self) -> None:
        """Stop the writer and write what is left (called when the app shuts down)."""
        if self._closed:
            return
        self._closed = True
        self._wake.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        try:
            self.flush()
        finally:
            with self._io:
                self._conn.close()


def _to_sql(value: Any, type_: AttrType) -> Any:
    if value is None:
        return None
    if type_ is AttrType.OBJECT:
        try:
            return state_codec.dumps(value)  # data only: loading it runs no code
        except TypeError as exc:
            _log.error("an object column value cannot be stored, NULL written instead: %s", exc)
            return None
    if type_ is AttrType.BOOL:
        return 1 if value else 0
    return value


def _from_sql(value: Any, type_: AttrType) -> Any:
    if value is None:
        return None
    if type_ is AttrType.OBJECT:
        try:
            return state_codec.loads(value)
        except state_codec.StateDecodeError as exc:  # e.g. a pickle written by an older version
            _log.error("an object column value cannot be read, NULL used instead: %s", exc)
            return None
    if type_ is AttrType.BOOL:
        return bool(value)
    if type_ in (AttrType.FLOAT, AttrType.DOUBLE):
        return float(value)
    return value


@extension(Kind.STORE, "sqlite", params=(
    Param("database", (AttrType.STRING,), doc="path of the SQLite database file"),
    Param("table.name", (AttrType.STRING,), optional=True, doc="table name in the database (default: the table id)"),
    Param("flush.interval", (AttrType.STRING,), optional=True, default="100 ms",
          doc="how often pending changes are written"),
    Param("batch.size", (AttrType.INT,), optional=True, default=1000,
          doc="write at once when this many changes wait"),
))
def sqlite_store(table: Any, options: dict[str, str], ctx: Any) -> SQLiteStore:
    """Keeps a table in SQLite: in-memory reads, write-behind batched writes, reload on start."""
    return SQLiteStore(table, options, ctx)
