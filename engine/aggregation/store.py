"""Where completed buckets live: one table per granularity, ``<Agg>_SECONDS`` ... ``<Agg>_YEARS``.

Two stores share one interface:

* :class:`MemoryStore` (no ``@store``): dicts, lost when the process ends, as in Siddhi.
* :class:`SqliteStore` (``@store(type='sqlite', database='PATH')``): one SQLite file, written by
  a background thread in batches so that a slow disk never stalls event processing (one
  writer per database file, DESIGN.md).  Reads go through the same thread, after the writes
  queued before them, so a query always sees what the engine has dispatched.

Rows hold base values only (sums, counts, minimums, maximums, distinct sets, the latest
event's values), never averages: that is what lets the Spark jobs write the same rows.

Writes come in two modes.  ``merge`` (the live engine) combines a row with the row already
stored under its key, because an out-of-order event can complete a bucket a second time;
``replace`` (backfill, rebuild) overwrites, which makes re-running a batch job idempotent.

Merges are not idempotent, so a state snapshot and the SQLite tables must agree on which
merges happened (a crash, a restore of the snapshot and a replay of the events after it would
otherwise merge the replayed buckets a second time).  Every ``write`` gets a sequence number;
:meth:`SqliteStore.watermark` (taken with the snapshot, under the engine lock) is the last one.
From the first watermark on, each merge first copies the rows it is about to change into an
undo table (``<table>__undo``), in the same SQLite transaction; :meth:`SqliteStore.rewind`
(after restoring a snapshot) puts back the rows as they were at the snapshot's watermark, and
:meth:`SqliteStore.trim` forgets undo rows no kept snapshot can need.

A write that fails (a locked or full disk) is retried with back-off, never dropped; the queue
of writes is bounded, so a store that cannot keep up holds the engine back rather than growing
without limit.
"""
from __future__ import annotations

import functools
import json
import logging
import queue
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from srota.engine import collector
from srota.engine.aggregation.buckets import TABLE_SUFFIX, format_offset, parse_offset
from srota.engine.types import java_key, java_order, key_value
from srota.grammar.model import AttrType, TimeDuration

if TYPE_CHECKING:
    from srota.engine.aggregation.spec import AggSpec

_log = logging.getLogger("srota.engine.aggregation")

StoredRow = tuple[int, tuple[Any, ...], list[Any]]
"""``(AGG_TIMESTAMP, group key, row)``; row = ``[last_ts, offset, *latest, *bases]``."""

_SQL_TYPES = {
    AttrType.STRING: "TEXT", AttrType.INT: "INTEGER", AttrType.LONG: "INTEGER",
    AttrType.FLOAT: "REAL", AttrType.DOUBLE: "REAL", AttrType.BOOL: "INTEGER", AttrType.OBJECT: "BLOB",
}


def table_name(agg_id: str, duration: TimeDuration) -> str:
    """``A_SECONDS`` for aggregation ``A``."""
    return f"{agg_id}_{TABLE_SUFFIX[duration]}"


#: The types whose group keys and distinctCount set elements the engine holds as
#: :func:`~engine.types.java_key` values (Siddhi's group key is the values' text and its set a
#: ``HashSet``: -0.0 apart from 0.0, every NaN one); a table holds the numbers they stand for.
JAVA_KEYED = (AttrType.FLOAT, AttrType.DOUBLE)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def encode_distinct(values: set[Any], real: bool = False) -> str:
    """A distinct set as the JSON text both the engine and Spark write (sorted, compact).

    ``real``: the set holds a double or float attribute's values, as their
    :func:`~engine.types.java_key` values (written as the numbers they stand for)."""
    if real:
        values = [key_value(v) for v in values]  # type: ignore[assignment]
    return _dump_sorted(values)


def decode_distinct(text: str | None) -> set[Any]:
    """The set :func:`encode_distinct` wrote (a number read back as its java_key: only a double
    or float set holds a JSON number with a fraction or exponent)."""
    return {java_key(v) for v in json.loads(text)} if text else set()


def _dump_sorted(values: Any) -> str:
    # (doubles in Double.compareTo's order, as Spark's array_sort: -0.0 before 0.0, NaN last)
    return json.dumps(sorted(values, key=lambda v: (type(v).__name__, java_order(v) if v.__class__ is float else v)),
                      separators=(",", ":"), ensure_ascii=False)


class Store:
    """Interface of an aggregation's tables (see the module docstring)."""

    persistent = False

    def write(self, duration: TimeDuration, rows: Sequence[StoredRow], mode: str = "merge",
              under: int | None = None) -> None:
        """Queue ``rows`` for ``duration``'s table (``mode``: ``merge`` or ``replace``).

        ``under``: the bucket the rows were written in (event time), whose older rows are late
        events'.  A database store adds those into the stored rows; :class:`MemoryStore` keeps
        them apart, as Siddhi's in-memory table does."""
        raise NotImplementedError

    def scan(self, duration: TimeDuration, start: int | None = None, end: int | None = None) -> list[StoredRow]:
        """Rows with ``start <= AGG_TIMESTAMP < end`` (either bound optional), oldest first."""
        raise NotImplementedError

    @property
    def sharded(self) -> bool:
        """Whether the tables hold several shards' rows (``@PartitionById``): reads are distributed."""
        return False

    def scan_shards(self, duration: TimeDuration, start: int | None = None,
                    end: int | None = None) -> list[tuple[int, tuple[Any, ...], str, list[Any]]]:
        """Every shard's rows as stored: ``(AGG_TIMESTAMP, key, shard id, row)`` (sharded stores)."""
        raise NotImplementedError

    def latest(self, duration: TimeDuration) -> int | None:
        """The newest ``AGG_TIMESTAMP`` of a table, or None when it is empty."""
        raise NotImplementedError

    def delete_before(self, duration: TimeDuration, before: int) -> int:
        """Delete rows with ``AGG_TIMESTAMP < before``; returns how many went."""
        raise NotImplementedError

    def newest(self, duration: TimeDuration) -> tuple[int, int] | None:
        """``(AGG_TIMESTAMP, utc offset)`` of the newest row, or None when the table is empty."""
        ts = self.latest(duration)
        if ts is None:
            return None
        rows = self.scan(duration, ts, ts + 1)
        return ts, (rows[0][2][1] if rows else 0)

    def flush(self) -> None:
        """Wait until every queued write is stored."""

    def close(self) -> None:
        """Flush and release the store."""

    #: The claim's epoch of a scale-out partition's store (snapshots carry it), else None.
    epoch: int | None = None
    #: The watermark the last snapshot carried (:meth:`committed_mark`), None before one.
    snapshot_mark: int | None = None

    def watermark(self) -> int:
        """The sequence number of the last write (persistent stores; see the module doc)."""
        return 0

    def committed_mark(self) -> int:
        """:meth:`watermark`, once every write up to it is stored (what a snapshot carries)."""
        mark = self.watermark()
        self.flush()
        self.snapshot_mark = mark
        return mark

    def rewind(self, mark: int, epoch: int | None = None) -> int:
        """Undo the writes after ``mark`` (persistent stores); returns how many rows changed.
        ``epoch``: the claim under which the snapshot holding ``mark`` was taken (scale-out)."""
        return 0

    def trim(self, mark: int) -> None:
        """Forget how to undo the writes up to ``mark``."""


class MemoryStore(Store):
    """Tables as dicts (the default without ``@store``).

    Under event time, the row of a late event (one whose bucket was handed on before) is kept
    apart, under the bucket it was written in, as Siddhi's in-memory table keeps it (its
    primary key is ``AGG_TIMESTAMP``, the bucket written in, ``AGG_EVENT_TIMESTAMP``, its own,
    and the group): :meth:`scan` adds it to its bucket's row, and :meth:`entries` lists the rows
    as Siddhi's table holds them, for a read that adds them in Siddhi's order.
    """

    def __init__(self, spec: AggSpec) -> None:
        self._spec = spec
        self._tables: dict[TimeDuration, dict[tuple[int, tuple[Any, ...]], list[Any]]] = {
            d: {} for d in spec.durations}
        #: (bucket written in, own bucket, key) -> row: late events' rows (see the class doc)
        self._late: dict[TimeDuration, dict[tuple[int, int, tuple[Any, ...]], list[Any]]] = {
            d: {} for d in spec.durations}

    def write(self, duration: TimeDuration, rows: Sequence[StoredRow], mode: str = "merge",
              under: int | None = None) -> None:
        table, late = self._tables[duration], self._late[duration]
        copy, merge = self._spec.copy_row, self._spec.merge
        for start, key, row in rows:
            if under is not None and start < under and mode == "merge":
                k3 = (under, start, key)
                have = late.get(k3)
                if have is None:
                    late[k3] = copy(row)
                else:
                    merge(have, row)
                continue
            k = (start, key)
            have = table.get(k)
            if have is None or mode == "replace":
                table[k] = copy(row)
                if late and mode == "replace":
                    for gone in [k3 for k3 in late if k3[1:] == k]:
                        del late[gone]
            else:
                merge(have, row)

    def scan(self, duration: TimeDuration, start: int | None = None, end: int | None = None) -> list[StoredRow]:
        copy, merge = self._spec.copy_row, self._spec.merge
        rows = {k: copy(row) for k, row in self._tables[duration].items()
                if (start is None or k[0] >= start) and (end is None or k[0] < end)}
        for (_, ts, key), row in self._late[duration].items():
            if (start is None or ts >= start) and (end is None or ts < end):
                have = rows.get((ts, key))
                if have is None:
                    rows[(ts, key)] = copy(row)
                else:
                    merge(have, row)
        out = [(ts, key, row) for (ts, key), row in rows.items()]
        out.sort(key=lambda r: r[0])
        return out

    def entries(self, duration: TimeDuration, start: int | None = None,
                end: int | None = None) -> list[tuple[int, int, tuple[Any, ...], list[Any]]]:
        """The rows as Siddhi's table holds them, ``(bucket written in, own bucket, key, row)``
        (the own bucket in ``[start, end)``), in the order they were written: by the bucket
        written in, then as written."""
        copy = self._spec.copy_row
        out = [(ts, ts, key, copy(row)) for (ts, key), row in self._tables[duration].items()
               if (start is None or ts >= start) and (end is None or ts < end)]
        out += [(under, ts, key, copy(row)) for (under, ts, key), row in self._late[duration].items()
                if (start is None or ts >= start) and (end is None or ts < end)]
        return sorted(out, key=lambda e: e[0])  # (stable)

    def latest(self, duration: TimeDuration) -> int | None:
        table, late = self._tables[duration], self._late[duration]
        return max([*(ts for ts, _ in table), *(ts for _, ts, _ in late)], default=None)

    def size(self, duration: TimeDuration) -> int:
        """How many rows ``duration``'s table holds (a late event's row counts as one)."""
        return len(self._tables[duration]) + len(self._late[duration])

    def delete_before(self, duration: TimeDuration, before: int) -> int:
        table, late = self._tables[duration], self._late[duration]
        gone = [k for k in table if k[0] < before]
        for k in gone:
            del table[k]
        gone_late = [k for k in late if k[1] < before]
        for k3 in gone_late:
            del late[k3]
        return len(gone) + len(gone_late)

    def snapshot_state(self) -> Any:
        return {"tables": self._tables, "late": self._late}

    def restore_state(self, state: Any) -> None:
        if isinstance(state, dict) and set(state) == {"tables", "late"}:
            self._tables, self._late = state["tables"], state["late"]
        else:  # a snapshot from before late rows were kept apart: the tables alone
            self._tables = state
            self._late = {d: {} for d in self._spec.durations}


class SqliteSchema:
    """Table layout and SQL of one aggregation in SQLite (shared with the Spark jobs)."""

    def __init__(self, spec: AggSpec) -> None:
        self.spec = spec
        self.key_columns = [name for name, _ in spec.group_by]
        self.columns: list[tuple[str, str]] = [("AGG_TIMESTAMP", "INTEGER")]
        self.columns += [(name, _SQL_TYPES[t]) for name, t in spec.group_by]
        self.columns += [("AGG_TIMEZONE", "TEXT"), ("AGG_LAST_EVENT_TIMESTAMP", "INTEGER")]
        self.columns += [(name, _SQL_TYPES[t]) for name, t in spec.latest]
        self.columns += [(b.name, "TEXT" if b.op == "distinct" else _SQL_TYPES[b.type]) for b in spec.bases]
        self.column_names = [c for c, _ in self.columns]

    def create_sql(self, table: str) -> str:
        cols = ", ".join(f"{_q(c)} {t}" for c, t in self.columns)
        pk = ", ".join(_q(c) for c in ["AGG_TIMESTAMP", *self.key_columns])
        return f"CREATE TABLE IF NOT EXISTS {_q(table)} ({cols}, PRIMARY KEY ({pk}))"

    def undo_create_sql(self, table: str) -> str:
        """The undo table of ``table``: the rows as they were before write ``srota_seq``
        (``srota_existed`` 0: the key had no row; only the key columns are set then)."""
        cols = ", ".join(f"{_q(c)} {t}" for c, t in self.columns)
        return (f"CREATE TABLE IF NOT EXISTS {_q(table + '__undo')} "
                f"(srota_seq INTEGER NOT NULL, srota_existed INTEGER NOT NULL, {cols})")

    def _pk_where(self) -> str:
        return " AND ".join(f"{_q(c)} IS ?" for c in ["AGG_TIMESTAMP", *self.key_columns])

    def undo_copy_sql(self, table: str) -> str:
        """Copy the row under a key (params: seq, *key) into the undo table."""
        cols = ", ".join(_q(c) for c in self.column_names)
        return (f"INSERT INTO {_q(table + '__undo')} (srota_seq, srota_existed, {cols}) "
                f"SELECT ?, 1, {cols} FROM {_q(table)} WHERE {self._pk_where()}")

    def undo_absent_sql(self, table: str) -> str:
        """Note that a key had no row (params: seq, *key)."""
        keys = ["AGG_TIMESTAMP", *self.key_columns]
        cols = ", ".join(_q(c) for c in keys)
        marks = ", ".join("?" for _ in keys)
        return f"INSERT INTO {_q(table + '__undo')} (srota_seq, srota_existed, {cols}) VALUES (?, 0, {marks})"

    def delete_key_sql(self, table: str) -> str:
        return f"DELETE FROM {_q(table)} WHERE {self._pk_where()}"

    def put_sql(self, table: str) -> str:
        names = ", ".join(_q(c) for c in self.column_names)
        marks = ", ".join("?" for _ in self.column_names)
        return f"INSERT OR REPLACE INTO {_q(table)} ({names}) VALUES ({marks})"

    def upsert_sql(self, table: str, mode: str) -> str:
        names = ", ".join(_q(c) for c in self.column_names)
        marks = ", ".join("?" for _ in self.column_names)
        conflict = ", ".join(_q(c) for c in ["AGG_TIMESTAMP", *self.key_columns])
        if mode == "replace":
            sets = [f"{_q(c)} = excluded.{_q(c)}" for c in self.column_names[1 + len(self.key_columns):]]
        else:
            sets = self._merge_sets()
        return (f"INSERT INTO {_q(table)} ({names}) VALUES ({marks}) "
                f"ON CONFLICT ({conflict}) DO UPDATE SET {', '.join(sets)}")

    def _merge_sets(self) -> list[str]:
        # SQLite evaluates every SET expression against the old row, so the latest-value
        # columns can compare timestamps before AGG_LAST_EVENT_TIMESTAMP changes.
        newer = 'excluded."AGG_LAST_EVENT_TIMESTAMP" >= "AGG_LAST_EVENT_TIMESTAMP"'
        sets = [f'"AGG_TIMEZONE" = CASE WHEN {newer} THEN excluded."AGG_TIMEZONE" ELSE "AGG_TIMEZONE" END']
        for name, _ in self.spec.latest:
            c = _q(name)
            sets.append(f"{c} = CASE WHEN {newer} THEN excluded.{c} ELSE {c} END")
        sets.append('"AGG_LAST_EVENT_TIMESTAMP" = max("AGG_LAST_EVENT_TIMESTAMP", '
                    'excluded."AGG_LAST_EVENT_TIMESTAMP")')
        for b in self.spec.bases:
            c = _q(b.name)
            if b.op in ("sum", "count"):
                sets.append(f"{c} = CASE WHEN {c} IS NULL THEN excluded.{c} WHEN excluded.{c} IS NULL "
                            f"THEN {c} ELSE {c} + excluded.{c} END")
            elif b.op in ("min", "max"):
                sets.append(f"{c} = CASE WHEN excluded.{c} IS NULL THEN {c} WHEN {c} IS NULL THEN "
                            f"excluded.{c} ELSE {b.op}({c}, excluded.{c}) END")
            else:
                sets.append(f"{c} = srota_union({c}, excluded.{c})")
        return sets

    # ------------------------------------------------------------------ row conversion
    def to_params(self, start: int, key: tuple[Any, ...], row: list[Any]) -> tuple[Any, ...]:
        """A row in column order (written for each stored row: one generated expression)."""
        convert = self._to_params
        if convert is None:
            convert = self._to_params = self._compile_to_params()
        return convert(start, key, row)

    _to_params: Any = None

    def _compile_to_params(self) -> Any:
        spec = self.spec
        n_latest = len(spec.latest)
        parts = []
        for i, (_, t) in enumerate(spec.latest):
            v = f"row[{2 + i}]"
            parts.append(f"(None if {v} is None else int({v}))" if t is AttrType.BOOL else v)
        for j, b in enumerate(spec.bases):
            v = f"row[{2 + n_latest + j}]"
            if b.op == "distinct":
                parts.append(f"_enc({v}, True)" if b.arg_type in JAVA_KEYED else f"_enc({v})")
            elif b.type is AttrType.BOOL:
                parts.append(f"(None if {v} is None else int({v}))")
            else:
                parts.append(v)
        keys = "".join((f"_kv(key[{i}])" if t in JAVA_KEYED else f"key[{i}]") + ", "
                       for i, (_, t) in enumerate(spec.group_by))
        code = ("def to_params(start, key, row):\n"
                f"    return (start, {keys}_tz(row[1]), row[0], {''.join(p + ', ' for p in parts)})\n")
        ns: dict[str, Any] = {"_enc": encode_distinct, "_tz": functools.cache(format_offset), "_kv": key_value}
        exec(compile(code, f"<to_params {spec.id}>", "exec"), ns)  # noqa: S102 - generated from the spec
        return ns["to_params"]

    def from_params(self, values: Sequence[Any]) -> StoredRow:
        """A stored record (columns in order; extra trailing columns are ignored) as
        ``(start, key, row)`` (read for each stored row: one generated expression)."""
        convert = self._from_params
        if convert is None:
            convert = self._from_params = self._compile_from_params()
        return convert(values)

    _from_params: Any = None

    #: Whether the time columns are coerced to int on read (server stores set it: their
    #: drivers' number types are not SQLite's).
    coerce_times = False

    def _compile_from_params(self) -> Any:
        spec = self.spec
        nk = len(spec.group_by)

        def value(i: int, t: AttrType, distinct: bool = False) -> str:
            v = f"v[{i}]"
            if distinct:
                return f"_dec({v})"
            if t is AttrType.BOOL:
                return f"(None if {v} is None else bool({v}))"
            if t in (AttrType.FLOAT, AttrType.DOUBLE):
                return f"(None if {v} is None else float({v}))"
            return v

        start = "int(v[0])" if self.coerce_times else "v[0]"
        last = f"v[{2 + nk}]"
        if self.coerce_times:
            last = f"(None if {last} is None else int({last}))"
        key = "".join((f"_jk({value(1 + i, t)})" if t in JAVA_KEYED else value(1 + i, t)) + ", "
                      for i, (_, t) in enumerate(spec.group_by))
        at = 3 + nk
        parts = [value(at + i, t) for i, (_, t) in enumerate(spec.latest)]
        at += len(spec.latest)
        parts += [value(at + j, b.type, b.op == "distinct") for j, b in enumerate(spec.bases)]
        code = ("def from_params(v):\n"
                f"    return {start}, ({key}), [{last}, _tz(v[{1 + nk}]), {''.join(p + ', ' for p in parts)}]\n")
        ns: dict[str, Any] = {"_dec": decode_distinct, "_tz": functools.cache(parse_offset), "_jk": java_key}
        exec(compile(code, f"<from_params {spec.id}>", "exec"), ns)  # noqa: S102 - generated from the spec
        return ns["from_params"]


def split_writes(writes: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The queued writes ``(seq, duration, mode, journal, rows)`` as one write per row: what a
    store applies one by one after a batch failed for a reason retrying cannot mend, so that
    only the rows that fail are dropped."""
    return [(seq, duration, mode, journal, [row]) for seq, duration, mode, journal, rows in writes for row in rows]


def _transient(exc: BaseException) -> bool:
    """Whether retrying a failed SQLite write may succeed (the database is locked, busy, full
    or its disk failed for a moment), rather than fail the same way (a constraint, a schema)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    text = str(exc).lower()
    return any(m in text for m in ("locked", "busy", "disk i/o", "full", "unable to open"))


def _union(a: str | None, b: str | None) -> str:
    # one element per java_key (-0.0 apart from 0.0, one NaN), written as the value it stands for
    merged: dict[Any, Any] = {}
    for text in (a, b):
        for v in json.loads(text) if text else ():
            merged.setdefault(java_key(v), v)
    return _dump_sorted(merged.values())


_STOP = object()


def take_batch(q: queue.Queue[Any], rows_at: int, batch_size: int) -> list[Any]:
    """A store writer's next batch: the first queued item (waiting for it), then what else is
    queued, up to ``batch_size`` rows (``item[rows_at]`` holds a write's rows) or a control
    item (``_STOP``, a job), which ends the batch.  Writes of a batch share one transaction."""
    item = q.get()
    batch = [item]
    pending = 0 if item is _STOP or callable(item) else len(item[rows_at])
    while pending < batch_size:
        try:
            more = q.get_nowait()
        except queue.Empty:
            break
        batch.append(more)
        if more is _STOP or callable(more):
            break
        pending += len(more[rows_at])
    return batch


class QueuedWriter:
    """A store's writer thread, fed by a bounded queue (both aggregation stores use it).

    Writes are tuples queued by ``write()`` (``item[_rows_at]`` holds the rows) and written in
    batches (:func:`take_batch`), one transaction each; jobs (callables) run on the writer
    thread in queue order, after the writes queued before them.  The thread owns a resource
    (a SQLite connection; nothing for a server database, whose ``Database`` keeps its own):
    subclasses say how to open it, write a batch with it, run a job on it and close it.
    """

    _rows_at = 4

    def _start_writer(self, name: str, batch_size: int, max_queued: int) -> None:
        """Start the thread and wait until it has opened its resource (a bad path or a
        schema error surfaces here, at app creation)."""
        self._batch_size = batch_size
        # Bounded: a writer that cannot keep up (or keeps failing) blocks write(), which holds
        # the engine (and so the sources) back instead of growing memory without limit.
        self._queue: queue.Queue[Any] = queue.Queue(max_queued)
        #: The bound of the write queue (a host pauses its sources well before it).
        self.max_queued = max_queued
        self._closed = False
        ready: Future[None] = Future()
        self._thread = threading.Thread(target=self._writer_loop, args=(ready,), daemon=True, name=name)
        self._thread.start()
        ready.result()

    def _writer_loop(self, ready: Future[None]) -> None:
        try:
            resource = self._open_writer()
        except Exception as exc:
            ready.set_exception(exc)
            return
        ready.set_result(None)
        while True:
            batch = take_batch(self._queue, self._rows_at, self._batch_size)
            writes: list[tuple[Any, ...]] = []
            for it in batch:
                if it is _STOP or callable(it):
                    self._write_batch(resource, writes)
                    writes = []
                    if it is _STOP:
                        self._close_writer(resource)
                        return
                    try:
                        it(resource)
                    except BaseException as exc:  # noqa: BLE001 -- a job of _put_job (a _call reports its own)
                        self._job_failed(resource, exc)
                else:
                    writes.append(it)
            self._write_batch(resource, writes)

    # ------------------------------------------------------------------ subclasses say how
    def _open_writer(self) -> Any:
        raise NotImplementedError

    def _write_batch(self, resource: Any, writes: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    def _run_on_writer(self, resource: Any, fn: Callable[[Any], Any]) -> Any:
        """Run ``fn`` with what it works on (a connection, a cursor) on the writer thread."""
        raise NotImplementedError

    def _run_closed(self, fn: Callable[[Any], Any]) -> Any:
        """Run ``fn`` on the caller's thread once the writer is closed."""
        raise NotImplementedError

    def _job_failed(self, resource: Any, exc: BaseException) -> None:
        raise NotImplementedError

    def _close_writer(self, resource: Any) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ callers
    def _call(self, fn: Callable[[Any], Any]) -> Any:
        """Run ``fn`` on the writer thread after the queued writes; return its result."""
        if self._closed:
            return self._run_closed(fn)
        done: Future[Any] = Future()

        def job(resource: Any) -> None:
            try:
                done.set_result(self._run_on_writer(resource, fn))
            except BaseException as exc:  # noqa: BLE001 -- the caller gets it
                done.set_exception(exc)

        self._queue.put(job)
        try:
            return done.result(timeout=0.05)
        except TimeoutError:
            if done.done():
                raise  # fn's own
            collector.let_run()  # the writer is behind, or retrying through an outage
            return done.result()

    def _put_job(self, fn: Callable[[Any], Any]) -> None:
        """Run ``fn`` on the writer thread after the queued writes, without waiting."""
        if self._closed:
            self._call(fn)
        else:
            self._queue.put(lambda resource: self._run_on_writer(resource, fn))

    @property
    def backlog(self) -> int:
        """Writes queued and not yet stored."""
        return self._queue.qsize()

    def flush(self) -> None:
        if not self._closed:
            self._call(lambda _: None)

    def close(self) -> None:
        if self._closed:
            return
        self._queue.put(_STOP)
        self._thread.join()
        self._closed = True


class SqliteStore(QueuedWriter, Store):
    """An aggregation's tables in one SQLite file, written off the hot path."""

    persistent = True

    def __init__(self, spec: AggSpec, database: str, batch_size: int = 5000, max_queued: int = 10_000) -> None:
        self.spec = spec
        self.database = database
        self.schema = SqliteSchema(spec)
        self.tables = {d: table_name(spec.id, d) for d in spec.durations}
        self._sql = {(d, m): self.schema.upsert_sql(t, m) for d, t in self.tables.items()
                     for m in ("merge", "replace")}
        #: Failed write attempts (a transient one is retried until it succeeds).
        self.errors = 0
        #: Rows dropped because their write could never succeed (logged with the reason).
        self.failed_writes = 0
        #: Seconds each of the last 256 batch writes took (statistics).
        self.latencies: deque[float] = deque(maxlen=256)
        # Sequence number of the last write() (the writer thread persists it in srota_meta).
        self._seq = 0
        # True once a watermark was taken (or a snapshot rewound to): merges keep undo rows.
        self._journal = False
        # Writer thread: the undo and meta tables exist (created when journaling starts).
        self._armed = False
        self._retry_delay = 0.05
        self._start_writer(f"srota-agg-{spec.id}", batch_size, max_queued)

    # ------------------------------------------------------------------ writer thread
    def _open_writer(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.database, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.create_function("srota_union", 2, _union, deterministic=True)
        for t in self.tables.values():
            conn.execute(self.schema.create_sql(t))
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'srota_meta'").fetchone():
            row = conn.execute("SELECT value FROM srota_meta WHERE name = ?", (self._meta_key,)).fetchone()
            self._seq = int(row[0]) if row else 0
        return conn

    def _write_batch(self, conn: sqlite3.Connection, writes: list[tuple[Any, ...]]) -> None:
        self._apply(conn, writes)

    def _run_on_writer(self, conn: sqlite3.Connection, fn: Callable[[Any], Any]) -> Any:
        return fn(conn)

    def _run_closed(self, fn: Callable[[Any], Any]) -> Any:
        conn = sqlite3.connect(self.database)
        conn.create_function("srota_union", 2, _union, deterministic=True)
        try:
            return fn(conn)
        finally:
            conn.commit()
            conn.close()

    def _job_failed(self, conn: sqlite3.Connection, exc: BaseException) -> None:
        _log.error("aggregation %s: a store job failed", self.spec.id, exc_info=exc)
        if conn.in_transaction:
            conn.execute("ROLLBACK")

    def _close_writer(self, conn: sqlite3.Connection) -> None:
        conn.close()

    @property
    def _meta_key(self) -> str:
        return f"{self.spec.id}.seq"

    def _apply(self, conn: sqlite3.Connection, writes: list[tuple[Any, ...]]) -> None:
        """Write a batch in one transaction; retry with back-off what can succeed later (a
        locked, busy or full database), and report what cannot (a constraint, a schema clash):
        the batch is split so that only the writes that fail are dropped, logged and counted
        in ``failed_writes``, and the writer goes on."""
        if not writes:
            return
        delay = self._retry_delay
        while True:
            try:
                t0 = time.perf_counter()
                self._apply_once(conn, writes)
                self.latencies.append(time.perf_counter() - t0)
                return
            except Exception as exc:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                if not _transient(exc):
                    singles = split_writes(writes)
                    if len(singles) > 1:  # find the rows that fail: only they are dropped
                        for w in singles:
                            self._apply(conn, [w])
                        return
                    self.failed_writes += 1
                    self.errors += 1
                    _log.error("aggregation %s: a row could not be written to %s and was dropped: %s: %s "
                               "(retrying cannot help; fix the table and backfill the range); key: %s",
                               self.spec.id, self.database, type(exc).__name__, exc, writes[0][4][0][:2])
                    return
                self.errors += 1
                _log.exception("aggregation %s: writing %d batch(es) to %s failed; retrying in %.2f s",
                               self.spec.id, len(writes), self.database, delay)
                collector.let_run()  # (a closed store writes on the caller's thread, maybe inside a chunk)
                time.sleep(delay)
                delay = min(delay * 2, 5.0)

    def _apply_once(self, conn: sqlite3.Connection, writes: list[tuple[Any, ...]]) -> None:
        nk = 1 + len(self.schema.key_columns)
        conn.execute("BEGIN")
        last = None
        for seq, duration, mode, journal, params in writes:
            table = self.tables[duration]
            if journal:
                copy, absent = self.schema.undo_copy_sql(table), self.schema.undo_absent_sql(table)
                for p in params:
                    key = (seq, *p[:nk])
                    if conn.execute(copy, key).rowcount == 0:
                        conn.execute(absent, key)
            conn.executemany(self._sql[(duration, mode)], params)
            last = seq
        if last is not None and self._armed:
            conn.execute("INSERT OR REPLACE INTO srota_meta VALUES (?, ?)", (self._meta_key, last))
        conn.execute("COMMIT")

    # ------------------------------------------------------------------ Store
    def write(self, duration: TimeDuration, rows: Sequence[StoredRow], mode: str = "merge",
              under: int | None = None) -> None:
        if not rows:
            return
        to_params = self.schema.to_params
        params = [to_params(start, key, row) for start, key, row in rows]
        self._seq += 1
        item = (self._seq, duration, mode, self._journal and mode == "merge", params)
        if self._closed:
            self._call(lambda conn: self._apply(conn, [item]))
            return
        if self._queue.full():
            collector.let_run()  # the put waits for the writer: maybe for an outage's length
        self._queue.put(item)  # blocks while the queue is full: back-pressure

    def watermark(self) -> int:
        """The sequence number of the last write; from now on merges keep undo rows.

        Take it together with the state snapshot, under the engine lock, and save it with the
        snapshot; flush the store before the snapshot is saved.
        """
        if not self._journal:
            self._journal = True
            # Undo rows left by an earlier run belong to snapshots nobody restored: start afresh.
            self._put_job(lambda conn: self._arm(conn, fresh=True))
        return self._seq

    def _arm(self, conn: sqlite3.Connection, fresh: bool) -> None:
        """Writer thread: create the undo and meta tables (emptying old undo rows if ``fresh``)."""
        for t in self.tables.values():
            conn.execute(self.schema.undo_create_sql(t))
            if fresh:
                conn.execute(f"DELETE FROM {_q(t + '__undo')}")
        conn.execute("CREATE TABLE IF NOT EXISTS srota_meta (name TEXT PRIMARY KEY, value INTEGER)")
        self._armed = True

    def rewind(self, mark: int, epoch: int | None = None) -> int:
        """Undo every write after ``mark`` (restoring a snapshot saved with that watermark; one
        process writes a SQLite store, so ``epoch`` plays no part)."""
        tables = list(self.tables.values())
        schema = self.schema
        nk = 1 + len(schema.key_columns)

        def run(conn: sqlite3.Connection) -> int:
            self._arm(conn, fresh=False)
            changed = 0
            conn.execute("BEGIN")
            for t in tables:
                undo = _q(t + "__undo")
                cols = ", ".join(_q(c) for c in schema.column_names)
                rows = conn.execute(f"SELECT srota_existed, {cols} FROM {undo} WHERE srota_seq > ? "
                                    "ORDER BY srota_seq DESC, rowid DESC", (mark,)).fetchall()
                for existed, *values in rows:
                    if existed:
                        conn.execute(schema.put_sql(t), values)
                    else:
                        conn.execute(schema.delete_key_sql(t), values[:nk])
                    changed += 1
                conn.execute(f"DELETE FROM {undo} WHERE srota_seq > ?", (mark,))
            conn.execute("INSERT OR REPLACE INTO srota_meta VALUES (?, ?)", (self._meta_key, mark))
            conn.execute("COMMIT")
            return changed

        self.flush()
        changed = self._call(run)
        self._seq = mark
        self._journal = True
        if changed:
            _log.info("aggregation %s: %d row change(s) after the snapshot undone in %s",
                      self.spec.id, changed, self.database)
        return changed

    def trim(self, mark: int) -> None:
        """Forget the undo rows of writes up to ``mark`` (no kept snapshot is older)."""
        tables = list(self.tables.values())

        def run(conn: sqlite3.Connection) -> None:
            for t in tables:
                conn.execute(f"DELETE FROM {_q(t + '__undo')} WHERE srota_seq <= ?", (mark,))

        self._put_job(run)

    def write_params(self, duration: TimeDuration, params: Iterable[Sequence[Any]], mode: str = "replace") -> int:
        """Write rows already in column order (the Spark jobs); returns how many."""
        sql = self._sql[(duration, mode)]
        rows = [tuple(p) for p in params]

        def run(conn: sqlite3.Connection) -> int:
            conn.execute("BEGIN")
            conn.executemany(sql, rows)
            conn.execute("COMMIT")
            return len(rows)

        return self._call(run)

    def scan(self, duration: TimeDuration, start: int | None = None, end: int | None = None) -> list[StoredRow]:
        where, args = [], []
        if start is not None:
            where.append('"AGG_TIMESTAMP" >= ?')
            args.append(start)
        if end is not None:
            where.append('"AGG_TIMESTAMP" < ?')
            args.append(end)
        cols = ", ".join(_q(c) for c in self.schema.column_names)
        sql = f"SELECT {cols} FROM {_q(self.tables[duration])}"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += ' ORDER BY "AGG_TIMESTAMP"'
        raw = self._call(lambda conn: conn.execute(sql, args).fetchall())
        return [self.schema.from_params(r) for r in raw]

    def latest(self, duration: TimeDuration) -> int | None:
        sql = f'SELECT max("AGG_TIMESTAMP") FROM {_q(self.tables[duration])}'
        return self._call(lambda conn: conn.execute(sql).fetchone()[0])

    def delete_before(self, duration: TimeDuration, before: int) -> int:
        sql = f'DELETE FROM {_q(self.tables[duration])} WHERE "AGG_TIMESTAMP" < ?'
        return self._call(lambda conn: conn.execute(sql, (before,)).rowcount)
