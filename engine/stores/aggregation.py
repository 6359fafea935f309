"""Incremental-aggregation roll-ups in PostgreSQL or MySQL/MariaDB, with Siddhi's shard ids.

``define aggregation`` with ``@store(type='rdbms', jdbc.url=...)`` keeps the tables
``<Agg>_SECONDS`` ... ``<Agg>_YEARS`` in the database in Siddhi 5.1's own layout (table and
column names, types per database, primary key: :class:`SiddhiAggregationSchema`), so the tables a
Siddhi deployment wrote are read, continued and purged as they are, and a Siddhi node and a
Srota node can share them (DESIGN.md decision 16; averages are computed on read, decision 9).

**Shards.** With ``@PartitionById(enable='true')`` every process writes its own rows under its
shard id (a ``SHARD_ID`` column, part of the primary key, as in Siddhi's distributed
aggregation) and never touches another shard's rows; every reader composes the shards' base
values (sums and counts add, minimums and maximums combine, the latest values come from the
newest event, distinct sets unite) into the rows one process would have written.  Without it,
one process owns each aggregation's tables.  Ownership (of the tables, or of one shard's rows)
is a database lock (PostgreSQL advisory lock, MySQL ``GET_LOCK``:
:class:`~srota.engine.stores.database.SessionLock`) held by the writer's connection and taken
again on every new connection before it writes, so a second writer is refused with a clear
error (:class:`~srota.engine.stores.database.StoreLockedError`) instead of corrupting rows, a
crashed owner's lock goes with its connection, and an owner whose session was ended by the
one that took its place (scale-out: a worker stopped past the session timeout whose partition
moved) writes nothing more: its writes are dropped and counted, and said once in the log.

**Writes** run on one writer thread per aggregation (queued, batched, bounded: a database that
cannot keep up holds the engine back).  A merge (an out-of-order event completing a bucket a
second time) reads the shard's stored row and writes the merged row; because a shard's rows
have one writer, read-modify-write needs no row locks.  As in the SQLite store, from the first
:meth:`~SqlAggregationStore.watermark` on every merge keeps the row it replaced in an undo table
in the same transaction, so a snapshot restore can put the shard's rows back as they were
(:meth:`~SqlAggregationStore.rewind`).  Lost connections are retried with capped back-off; an
outage longer than ``max.outage`` stops the app (engine/stores/database.py).  An error that
retrying cannot mend (a constraint, a column type) makes the writer apply the batch again row
by row: the rows that fail are logged with their keys, counted in ``failed_writes`` and
dropped, the others are written, and one bad row does not block the writer forever.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from srota.engine.aggregation.store import (
    JAVA_KEYED,
    QueuedWriter,
    SqliteSchema,
    Store,
    StoredRow,
    decode_distinct,
    encode_distinct,
    split_writes,
    table_name,
)
from srota.engine.snapshot import StaleSnapshotError
from srota.engine.stores.database import (
    Database,
    OwnerFence,
    SessionLock,
    StoreError,
    StoreLockedError,
    StoreReplacedError,
    StoreUnavailableError,
)
from srota.engine.stores.java_serialized import (
    JavaSerializedError,
    dumps_hash_set,
    is_java_serialized,
    loads_hash_set,
)
from srota.engine.types import f32, java_key, key_value
from srota.grammar.model import AttrType, TimeDuration

_log = logging.getLogger("srota.engine.aggregation")

SHARD = "SHARD_ID"
#: Scale-out: each rewind of a shard, by whom (the claim's epoch) and to which watermark.
REWINDS_TABLE = "srota_rewinds"
#: Rows per multi-row upsert statement (one round trip each).
_ROWS_PER_STATEMENT = 500


#: siddhi-store-rdbms's ``rdbms-table-config.xml`` type mapping (``typeMapping``) per database.
_SIDDHI_TYPES = {
    "postgresql": {AttrType.INT: "INTEGER", AttrType.LONG: "BIGINT", AttrType.FLOAT: "REAL",
                   AttrType.DOUBLE: "DOUBLE PRECISION", AttrType.BOOL: "BOOLEAN", AttrType.OBJECT: "BYTEA",
                   AttrType.STRING: "VARCHAR"},
    "mysql": {AttrType.INT: "INTEGER", AttrType.LONG: "BIGINT", AttrType.FLOAT: "FLOAT",
              AttrType.DOUBLE: "DOUBLE", AttrType.BOOL: "TINYINT(1)", AttrType.OBJECT: "BLOB",
              AttrType.STRING: "VARCHAR"},
}
#: siddhi-store-rdbms's ``stringSize`` (VARCHAR(254) unless ``field.length`` says otherwise).
_STRING_SIZE = 254


def _decode_set(value: Any) -> set[Any]:
    """An ``AGG_SET_x`` value: the set as JSON (Srota's, Spark's), or the Java-serialized
    ``HashSet`` Siddhi writes on MySQL/MariaDB."""
    if value is None:
        return set()
    if isinstance(value, memoryview):
        value = value.tobytes()
    if isinstance(value, bytes):
        if is_java_serialized(value):
            try:
                return loads_hash_set(value)
            except JavaSerializedError as exc:
                raise StoreError(f"a distinctCount column (AGG_SET_*) holds a Java-serialized value Srota "
                                 f"cannot read: {exc}") from exc
        value = value.decode()
    return decode_distinct(value)


#: the Java class of a distinctCount set's elements, by the attribute's type
_JAVA_ELEMENT = {AttrType.STRING: "string", AttrType.INT: "int", AttrType.LONG: "long", AttrType.FLOAT: "float",
                 AttrType.DOUBLE: "double", AttrType.BOOL: "bool"}


class StaleCheckpointError(StaleSnapshotError):
    """A snapshot's watermark is past a rewind a newer owner of the shard made since its writer
    took it: the database no longer holds what it accounts for (see
    :meth:`SqlAggregationStore.rewind`).  Whoever restores it tries an older one."""


class SiddhiAggregationSchema:
    """The tables siddhi-core 5.1 defines for an aggregation (``AggregationParser.initDefaultTables``)
    and siddhi-store-rdbms creates, and the conversion of Srota's bucket rows to and from them.

    Columns, in order: ``AGG_TIMESTAMP``, ``SHARD_ID`` (``@PartitionById``), ``AGG_EVENT_TIMESTAMP``
    (``aggregate by`` an attribute), the group-by attributes, the latest-value select items,
    ``AGG_LAST_EVENT_TIMESTAMP`` (event time with latest values), then the base values in the order
    the select items first need them (:mod:`srota.engine.aggregation.spec`).  Primary key:
    ``AGG_TIMESTAMP``, ``SHARD_ID``, ``AGG_EVENT_TIMESTAMP``, the group-by attributes.

    Siddhi writes ``AGG_TIMESTAMP`` as the bucket its root executor was in when the row was written
    and ``AGG_EVENT_TIMESTAMP`` as the event time's own bucket, so a late event is a row of its own
    (same ``AGG_EVENT_TIMESTAMP``, a later ``AGG_TIMESTAMP``) and readers add such rows up.  Srota
    writes the bucket into both (its late events are merged into the bucket's row) and reads any
    number of rows per bucket, key and shard; a bucket row's time is ``AGG_EVENT_TIMESTAMP`` for
    event time and ``AGG_TIMESTAMP`` for arrival time, which is what ``within`` and purging compare.
    """

    def __init__(self, spec: Any, db: Database, sharded: bool, lengths: dict[str, int] | None = None) -> None:
        self.spec = spec
        self.q = db.q
        self.sharded = sharded
        self.event_time = spec.time_attribute is not None
        self.has_last = self.event_time and bool(spec.latest)
        types = _SIDDHI_TYPES["postgresql" if db.dialect.name == "postgresql" else "mysql"]
        lengths = lengths or {}
        cols: list[tuple[str, AttrType]] = [("AGG_TIMESTAMP", AttrType.LONG)]
        if sharded:
            cols.append((SHARD, AttrType.STRING))
        if self.event_time:
            cols.append(("AGG_EVENT_TIMESTAMP", AttrType.LONG))
        cols += list(spec.group_by)
        cols += list(spec.latest)
        if self.has_last:
            cols.append(("AGG_LAST_EVENT_TIMESTAMP", AttrType.LONG))
        cols += [(b.name, AttrType.OBJECT if b.op == "distinct" else b.type) for b in spec.bases]
        self.key_columns = [name for name, _ in spec.group_by]
        self.key_names = [c for c, _ in cols[:len(cols) - len(spec.latest) - int(self.has_last) - len(spec.bases)]]
        self.attr_types = cols

        def sql_type(name: str, t: AttrType) -> str:
            if t is AttrType.STRING:
                return f"VARCHAR({lengths.get(name, _STRING_SIZE)})"
            return types[t]

        self.columns = [(c, sql_type(c, t) + (" NOT NULL" if c in self.key_names else "")) for c, t in cols]
        self.column_names = [c for c, _ in cols]
        #: the column a bucket row's time is in (what within, purging and recreation compare)
        self.time_column = "AGG_EVENT_TIMESTAMP" if self.event_time else "AGG_TIMESTAMP"
        #: write distinct sets as Java-serialized HashSets, as Siddhi does (set when the tables
        #: already hold Siddhi's: a Siddhi node and Srota then share one format); else as JSON
        self.java_sets = False
        self.key_positions = list(range(len(self.key_names)))
        self.shard_position = 1 if sharded else None
        self._to = self._compile_to_params()
        self._from = self._compile_from_params()

    def create(self, table: str, suffix: str) -> str:
        """siddhi-store-rdbms's ``CREATE TABLE`` (``tableCreateQuery``) for ``table``."""
        q = self.q
        cols = ", ".join(f"{q(c)} {t}" for c, t in self.columns)
        return (f"CREATE TABLE IF NOT EXISTS {q(table)} ({cols}, "
                f"PRIMARY KEY ({', '.join(q(c) for c in self.key_names)})){suffix}")

    def indexes(self, table: str) -> list[str]:
        """The ``@Index`` Siddhi puts on a new table (``indexCreateQuery``): AGG_LAST_EVENT_TIMESTAMP."""
        if not self.has_last:
            return []
        q = self.q
        return [f"CREATE INDEX {q(table + '_INDEX_1')} ON {q(table)} ({q('AGG_LAST_EVENT_TIMESTAMP')})"]

    def create_undo(self, table: str, suffix: str) -> str:
        q = self.q
        cols = ", ".join(f"{q(c)} {t.replace(' NOT NULL', '')}" for c, t in self.columns)
        return (f"CREATE TABLE IF NOT EXISTS {q(table + '__undo')} "
                f"(srota_seq BIGINT NOT NULL, srota_existed SMALLINT NOT NULL, {cols}){suffix}")

    # ------------------------------------------------------------------ row conversion
    def to_params(self, start: int, key: tuple[Any, ...], row: list[Any], shard: str | None) -> tuple[Any, ...]:
        """A bucket row as the table's record (columns in order)."""
        return self._to(start, key, row, shard)

    def from_params(self, rec: Sequence[Any]) -> StoredRow:
        """A record as ``(bucket start, key, row)``."""
        return self._from(rec)

    def blank_params(self, start: int, key: tuple[Any, ...], shard: str | None) -> tuple[Any, ...]:
        """A record with only the primary key set (the undo table's "there was no row")."""
        full = self.to_params(start, key, self._blank_row(), shard)
        return (*full[:len(self.key_names)], *([None] * (len(self.column_names) - len(self.key_names))))

    def _blank_row(self) -> list[Any]:
        spec = self.spec
        return [0, 0, *([None] * len(spec.latest)), *[set() if b.op == "distinct" else None for b in spec.bases]]

    def _compile_to_params(self) -> Any:
        spec = self.spec
        parts = ["start"]
        if self.sharded:
            parts.append("shard")
        if self.event_time:
            parts.append("start")
        parts += [f"(None if key[{i}] is None else bool(key[{i}]))" if t is AttrType.BOOL
                  else f"_kv(key[{i}])" if t in JAVA_KEYED else f"key[{i}]"
                  for i, (_, t) in enumerate(spec.group_by)]
        for i, (_, t) in enumerate(spec.latest):
            v = f"row[{2 + i}]"
            parts.append(f"(None if {v} is None else bool({v}))" if t is AttrType.BOOL else v)
        if self.has_last:
            parts.append("row[0]")
        for j, b in enumerate(spec.bases):
            v = f"row[{spec.base_offset + j}]"
            java = _JAVA_ELEMENT.get(b.arg_type, "string")
            parts.append(f"_enc({v}, {java!r})" if b.op == "distinct" else v)
        code = f"def to_params(start, key, row, shard):\n    return ({', '.join(parts)},)\n"
        ns: dict[str, Any] = {"_enc": self._encode_set, "_kv": key_value}
        exec(compile(code, f"<siddhi to_params {spec.id}>", "exec"), ns)  # noqa: S102 - generated from the spec
        return ns["to_params"]

    def _encode_set(self, values: set[Any], java_type: str) -> bytes:
        if self.java_sets and java_type in ("int", "long", "float", "double", "bool", "string"):
            return dumps_hash_set(values, java_type)
        return encode_distinct(values, java_type in ("float", "double")).encode()

    def _compile_from_params(self) -> Any:
        spec = self.spec

        def value(i: int, t: AttrType) -> str:
            v = f"v[{i}]"
            if t is AttrType.BOOL:
                return f"(None if {v} is None else bool({v}))"
            if t is AttrType.FLOAT:  # MariaDB's FLOAT reads back as its shortest decimal
                return f"(None if {v} is None else _f32(float({v})))"
            if t is AttrType.DOUBLE:
                return f"(None if {v} is None else float({v}))"
            if t is AttrType.LONG or t is AttrType.INT:
                return f"(None if {v} is None else int({v}))"
            return v

        at = 1 + int(self.sharded)
        start = f"int(v[{at}])" if self.event_time else "int(v[0])"
        at += int(self.event_time)
        key = "".join((f"_jk({value(at + i, t)})" if t in JAVA_KEYED else value(at + i, t)) + ", "
                      for i, (_, t) in enumerate(spec.group_by))
        at += len(spec.group_by)
        latest = [value(at + i, t) for i, (_, t) in enumerate(spec.latest)]
        at += len(spec.latest)
        last = f"int(v[{at}])" if self.has_last else "ts"
        at += int(self.has_last)
        bases = [f"_dec(v[{at + j}])" if b.op == "distinct" else value(at + j, b.type)
                 for j, b in enumerate(spec.bases)]
        code = ("def from_params(v):\n"
                f"    ts = {start}\n"
                f"    return ts, ({key}), [{last}, 0, {''.join(p + ', ' for p in latest + bases)}]\n")
        ns: dict[str, Any] = {"_dec": _decode_set, "_f32": f32, "_jk": java_key}
        exec(compile(code, f"<siddhi from_params {spec.id}>", "exec"), ns)  # noqa: S102 - generated from the spec
        return ns["from_params"]


class SqlAggregationStore(QueuedWriter, Store):
    """An aggregation's tables in a server database (see the module docstring)."""

    persistent = True
    #: The aggregation's snapshot carries the watermark and its restore rewinds (see runtime).
    rewinds_with_snapshot = True

    def __init__(self, spec: Any, db: Database, shard_id: str | None, sharded: bool,
                 batch_size: int = 5000, max_queued: int = 10_000, lengths: dict[str, int] | None = None,
                 fence_epoch: int | None = None) -> None:
        if sharded and not shard_id:
            raise StoreError("@PartitionById needs a shard id: SiddhiManager(shard_id=...), `shard.id` in "
                             "the service config, or one per worker under --workers")
        self.spec = spec
        self.db = db
        self.database = db.url.display()
        self.shard_id = shard_id if sharded else None
        self.schema = SiddhiAggregationSchema(spec, db, sharded, lengths)
        # the rows Spark hands over are in the SQLite layout's column order (write_params)
        self._srota = SqliteSchema(spec)
        self._srota.coerce_times = True
        self.tables = {d: table_name(spec.id, d) for d in spec.durations}
        self.errors = 0
        self.failed_writes = 0
        self._failed: StoreUnavailableError | None = None
        self._seq = 0
        self._journal = False
        self._armed = False
        ph = db.dialect.placeholder
        q = db.q
        names = self.schema.column_names
        self._select = f"SELECT {', '.join(q(c) for c in names)} FROM "
        self._time = q(self.schema.time_column)
        self._upsert = {d: db.dialect.upsert(t, names, self.schema.key_names) for d, t in self.tables.items()}
        self._shard_where = f" AND {q(SHARD)} = {ph}" if sharded else ""
        self._max_written: dict[TimeDuration, int | None] = {}
        self._multi: dict[tuple[TimeDuration, int], str] = {}
        lock_name = f"srota:agg:{db.url.database}:{spec.id}:{self.shard_id or ''}"
        self._opened = False  # set once the writer has connected and prepared the tables
        #: Set when another process took this store's lock over (this one was replaced).
        self._replaced: StoreLockedError | None = None
        #: Scale-out: a partition's runtime, whose host drops the partition when told it was
        #: replaced (StoreReplacedError) instead of running on with its writes dropped.
        self._fenced = fence_epoch is not None and bool(self.shard_id)
        #: The claim's epoch under scale-out (snapshots carry it beside their watermark).
        self.epoch = fence_epoch if self._fenced else None
        if fence_epoch is not None and self.shard_id:
            # Scale-out: the epoch of the partition's claim orders its owners (OwnerFence), so a
            # replaced owner reconnecting at once cannot take the lock back from the new one.
            fence = OwnerFence(db.url, lock_name, fence_epoch, f"aggregation '{spec.id}' shard {self.shard_id!r}",
                               db.connect_timeout)
            self._lock = fence.lock

            def take_fenced(cur: Any) -> None:
                try:
                    fence.on_connect(cur)
                except StoreReplacedError as exc:
                    if not self._opened:
                        raise  # creation: the host claims the partition again
                    # Once writing, a replaced store is one whose lock was taken (_lost_lock).
                    raise StoreLockedError(str(exc), fence.lock) from None

            db.on_connect = take_fenced
        else:
            self._lock = SessionLock(db.url, lock_name, db.connect_timeout)
            db.on_connect = self._take_ownership
        self._start_writer(f"srota-agg-{spec.id}", batch_size, max_queued)

    # ------------------------------------------------------------------ writer thread
    def _open_writer(self) -> None:
        try:
            self.db.connect_now()  # takes the lock (on_connect)
            self.db.run(self._prepare)
        except BaseException:
            self.db.close()  # not left connected: the caller may try again and again
            raise
        self._opened = True

    def _write_batch(self, _resource: None, writes: list[tuple[Any, ...]]) -> None:
        self._apply(writes)

    def _run_on_writer(self, _resource: None, fn: Callable[[Any], Any]) -> Any:
        if self._failed is not None:
            raise self._failed
        if self._replaced is not None:
            raise self._replaced
        try:
            return self.db.run(fn)
        except StoreLockedError as exc:
            self._lost_lock(exc)
            raise

    def _lost_lock(self, exc: StoreLockedError) -> None:
        """Another process took this store's lock over: this one was replaced (module doc)."""
        if self._replaced is None:
            self._replaced = exc
            _log.error("aggregation %s: another process writes %s now (this one was replaced while it was "
                       "stopped or cut off); this process's writes to it are dropped (%s)", self.spec.id,
                       f"shard {self.shard_id!r}" if self.shard_id else "its tables", exc)

    def flush(self) -> None:
        """Wait until the queued writes are written (a replaced store's are dropped: module doc)."""
        try:
            super().flush()
        except StoreLockedError:
            if self._replaced is None:
                raise

    def _run_closed(self, fn: Callable[[Any], Any]) -> Any:
        return self.db.run(fn)

    def _job_failed(self, _resource: None, exc: BaseException) -> None:
        if isinstance(exc, StoreUnavailableError):
            self._failed = exc
        elif isinstance(exc, StoreLockedError):
            pass  # replaced: said once (_lost_lock)
        elif isinstance(exc, Exception):
            _log.error("aggregation %s: a store job failed", self.spec.id, exc_info=exc)
        else:
            raise exc

    def _close_writer(self, _resource: None) -> None:
        self._release()
        self.db.close()

    def _prepare(self, cur: Any) -> None:
        """Writer thread: create the tables, read the shard's sequence number (the connection
        took ownership when it was made)."""
        self.db.dialect.serialize_ddl(cur)
        suffix = self.db.dialect.create_table_suffix()
        for t in self.tables.values():
            have = self.db.dialect.existing_columns(cur, t)
            if have is None:
                cur.execute(self.schema.create(t, suffix))
                for sql in self.schema.indexes(t):
                    cur.execute(sql)
                continue
            # As siddhi-store-rdbms: an existing table (a Siddhi node's) is used as it is; every
            # statement names its columns, so only the columns the app needs must be there.
            present = {c.lower() for c in have}
            missing = [c for c in self.schema.column_names if c.lower() not in present]
            if missing:
                hint = ""
                if "agg_timezone" in present:
                    hint = (" (it is in the layout earlier Srota versions wrote, not Siddhi's: move its rows into "
                            "Siddhi's columns or drop it)")
                elif SHARD in missing or (SHARD.lower() in present and not self.schema.sharded):
                    hint = " (@PartitionById adds SHARD_ID)"
                raise StoreError(f"aggregation table '{t}' in {self.database} has columns {have}; the app "
                                 f"needs {self.schema.column_names}, missing {missing}{hint}: migrate or drop it")
            self._detect_java_sets(cur, t)
        cur.execute(f"CREATE TABLE IF NOT EXISTS {self.db.q('srota_meta')} "
                    f"(name VARCHAR(200) PRIMARY KEY, value BIGINT)")
        ph = self.db.dialect.placeholder
        cur.execute(f"SELECT value FROM {self.db.q('srota_meta')} WHERE name = {ph}", (self._meta_key,))
        row = cur.fetchone()
        self._seq = int(row[0]) if row else 0

    def _detect_java_sets(self, cur: Any, table: str) -> None:
        """Whether an existing table's distinct sets are Siddhi's Java-serialized HashSets: then
        Srota writes its sets that way too (a shared cut-over keeps one format per table)."""
        q = self.db.q
        for b in self.spec.bases:
            if b.op != "distinct" or self.schema.java_sets:
                continue
            cur.execute(f"SELECT {q(b.name)} FROM {q(table)} WHERE {q(b.name)} IS NOT NULL LIMIT 1")
            row = cur.fetchone()
            value = None if row is None else row[0]
            if isinstance(value, memoryview):
                value = value.tobytes()
            if isinstance(value, bytes) and is_java_serialized(value):
                self.schema.java_sets = True
                _log.info("aggregation %s: %s holds Siddhi's Java-serialized distinct sets; Srota writes its "
                          "sets that way too", self.spec.id, table)

    def _take_ownership(self, cur: Any) -> None:
        """One writer per aggregation and shard: a lock held by this connection, taken on
        each new connection (module doc)."""
        if not self._lock.try_take(cur):
            shard = f" with shard id {self.shard_id!r}" if self.shard_id else ""
            raise StoreLockedError(
                f"aggregation '{self.spec.id}' in {self.database} is already written by another process{shard}: "
                "give each replica its own shard id with @PartitionById(enable='true'), or run one writer",
                self._lock)

    def _release(self) -> None:
        if not self.db.connected:  # nothing held (and no new connection just to let go)
            return
        try:
            self.db.run(self._lock.release)
        except (Exception, StoreUnavailableError):
            pass  # the connection closes next, which releases it too

    @property
    def _meta_key(self) -> str:
        return f"{self.spec.id}.{self.shard_id or ''}.seq"

    def _apply(self, writes: list[tuple[Any, ...]]) -> None:
        if not writes or self._failed is not None:
            return
        if self._replaced is not None:
            self.failed_writes += len(writes)
            return
        try:
            self.db.run(lambda cur: self._apply_once(cur, writes))
        except StoreLockedError as exc:
            # Our session was ended and another process holds the lock now: this process was
            # replaced (its partition moved while it was stopped).  What it still has to write
            # is the new owner's to write, from the checkpoint it restored: writing it here
            # would overwrite the new owner's rows.
            self._lost_lock(exc)
            self.failed_writes += len(writes)
        except StoreUnavailableError as exc:
            # Past max.outage: the writes stay unwritten and the next write() or read raises,
            # which stops the app (its host does not commit what these rows account for).
            self._failed = exc
            _log.error("aggregation %s: %s", self.spec.id, exc)
        except Exception as exc:
            # Not transient (Database.run retries those): retrying cannot mend it.  The batch
            # was rolled back whole: apply it row by row, so only the rows that fail are dropped.
            singles = split_writes(writes)
            if len(singles) > 1:
                for w in singles:
                    self._apply([w])
                return
            self.failed_writes += 1
            self.errors += 1
            self._max_written.clear()  # re-read: part of what was assumed written is not
            _log.error("aggregation %s: a row could not be written to %s and was dropped (%s); key: %s",
                       self.spec.id, self.database, " ".join(str(exc).split()), writes[0][4][0][:2])

    def _max(self, cur: Any, duration: TimeDuration) -> int | None:
        if duration not in self._max_written:
            ph = self.db.dialect.placeholder
            where = f" WHERE {self.db.q(SHARD)} = {ph}" if self.shard_id else ""
            cur.execute(f"SELECT MAX({self.db.q('AGG_TIMESTAMP')}) FROM {self.db.q(self.tables[duration])}{where}",
                        (self.shard_id,) if self.shard_id else ())
            self._max_written[duration] = cur.fetchone()[0]
        return self._max_written[duration]

    def _stored(self, cur: Any, duration: TimeDuration, rows: Sequence[StoredRow]) -> dict[Any, list[Any]]:
        """This shard's stored rows for the keys of ``rows`` that may exist (one range read)."""
        newest = self._max(cur, duration)
        maybe = [r for r in rows if newest is not None and r[0] <= newest]
        if not maybe:
            return {}
        ph = self.db.dialect.placeholder
        q = self.db.q
        lo, hi = min(r[0] for r in maybe), max(r[0] for r in maybe)
        cur.execute(f"{self._select}{q(self.tables[duration])} WHERE {q('AGG_TIMESTAMP')} >= {ph} "
                    f"AND {q('AGG_TIMESTAMP')} <= {ph}{self._shard_where}",
                    (lo, hi, *((self.shard_id,) if self.shard_id else ())))
        wanted = {(r[0], r[1]) for r in maybe}
        found = {}
        for rec in cur.fetchall():
            ts, key, row = self.schema.from_params(rec)
            # only the row Srota writes (AGG_TIMESTAMP is the bucket); the rows Siddhi wrote for
            # late events (a later AGG_TIMESTAMP) stay as they are and are added up on read
            if (ts, key) in wanted and int(rec[0]) == ts:
                found[(ts, key)] = row
        return found

    def _params(self, ts: int, key: tuple[Any, ...], row: list[Any]) -> tuple[Any, ...]:
        return self.schema.to_params(ts, key, row, self.shard_id)

    def _apply_once(self, cur: Any, writes: list[tuple[Any, ...]]) -> None:
        copy, merge = self.spec.copy_row, self.spec.merge
        last = None
        # Writes without undo rows are combined per table (one upsert of every key they touch);
        # a journaled write keeps its own undo rows under its own sequence number.
        pending: dict[TimeDuration, dict[Any, list[Any]]] = {}
        for seq, duration, mode, journal, rows in writes:
            if journal:
                self._flush_pending(cur, pending)
            out = pending.setdefault(duration, {})
            known = {k for k in ((r[0], r[1]) for r in rows) if k in out} if out else set()
            stored = self._stored(cur, duration, [r for r in rows if (r[0], r[1]) not in known]) \
                if mode == "merge" or journal else {}
            undo: list[tuple[int, tuple[Any, ...], list[Any] | None]] = []
            undone: set[Any] = set()
            for ts, key, row in rows:
                k = (ts, key)
                have = out.get(k)
                if have is None:
                    before = stored.get(k)
                    if journal and k not in undone:
                        undone.add(k)
                        undo.append((ts, key, before))
                    have = None if before is None else copy(before)
                if have is None or mode == "replace":
                    out[k] = copy(row)
                else:
                    merge(have, row)
                    out[k] = have
            if undo:
                self._write_undo(cur, duration, seq, undo)
            if journal:
                self._flush_pending(cur, pending)
            last = seq
        self._flush_pending(cur, pending)
        if last is not None and self._armed:
            self._set_meta(cur, last)

    def _flush_pending(self, cur: Any, pending: dict[TimeDuration, dict[Any, list[Any]]]) -> None:
        for duration, out in pending.items():
            if not out:
                continue
            params = [self._params(ts, key, row) for (ts, key), row in out.items()]
            dialect = self.db.dialect
            # Buckets after the newest this shard has stored are new rows: no upsert needed
            # (this shard is their only writer).
            fresh = False
            if duration in self._max_written:  # known: None means this shard has no row yet
                newest = self._max_written[duration]
                fresh = newest is None or min(k[0] for k in out) > newest
            if len(params) > 20 and dialect.bulk_upsert(cur, self.tables[duration], self.schema.column_names,
                                                        self.schema.key_names, params, fresh):
                params = []
            for i in range(0, len(params), _ROWS_PER_STATEMENT):
                part = params[i:i + _ROWS_PER_STATEMENT]
                cur.execute(self._upsert_rows(duration, len(part)), [v for p in part for v in p])
            top = max(k[0] for k in out)
            have_max = self._max_written.get(duration)
            self._max_written[duration] = top if have_max is None else max(have_max, top)
        pending.clear()

    def _upsert_rows(self, duration: TimeDuration, n: int) -> str:
        """One ``INSERT ... VALUES (...), (...) ... <upsert>`` for ``n`` rows (cached per size)."""
        key = (duration, n)
        sql = self._multi.get(key)
        if sql is None:
            one = self._upsert[duration]
            values_at = one.index(" VALUES (") + len(" VALUES ")
            close = one.index(")", values_at) + 1
            row = one[values_at:close]
            sql = one[:values_at] + ", ".join([row] * n) + one[close:]
            self._multi[key] = sql
        return sql

    def _set_meta(self, cur: Any, value: int) -> None:
        cur.execute(self.db.dialect.upsert("srota_meta", ["name", "value"], ["name"]), (self._meta_key, value))

    def _write_undo(self, cur: Any, duration: TimeDuration, seq: int,
                    undo: list[tuple[int, tuple[Any, ...], list[Any] | None]]) -> None:
        q = self.db.q
        names = self.schema.column_names
        ph = self.db.dialect.placeholder
        sql = (f"INSERT INTO {q(self.tables[duration] + '__undo')} (srota_seq, srota_existed, "
               f"{', '.join(q(c) for c in names)}) VALUES ({ph}, {ph}, {', '.join(ph for _ in names)})")
        params = []
        for ts, key, before in undo:
            if before is not None:
                params.append((seq, 1, *self._params(ts, key, before)))
            else:
                params.append((seq, 0, *self.schema.blank_params(ts, key, self.shard_id)))
        cur.executemany(sql, params)

    def _call(self, fn: Callable[[Any], Any]) -> Any:
        """Run ``fn(cursor)`` on the writer thread after the queued writes; return its result."""
        self._check()
        return super()._call(fn)

    def _check(self) -> None:
        if self._failed is not None:
            raise StoreUnavailableError(str(self._failed))

    def _check_owner(self) -> None:
        """Under scale-out, a replaced store says so to the chunk that writes (its host drops
        the partition); elsewhere its writes are dropped and counted (module doc)."""
        if self._replaced is not None and self._fenced:
            raise StoreReplacedError(str(self._replaced))

    def committed_mark(self) -> int:
        """The watermark a snapshot carries (:meth:`watermark`), once every write it accounts
        for is committed.  Raises :class:`StoreReplacedError` when some were dropped instead
        (this process was replaced): a snapshot whose mark covers writes that are not in the
        database would make whoever restores it skip them for good."""
        mark = super().committed_mark()
        if self._replaced is not None:
            raise StoreReplacedError(f"aggregation '{self.spec.id}': writes were dropped ({self._replaced}); "
                                     "no snapshot covers them")
        return mark

    # ------------------------------------------------------------------ Store
    def write(self, duration: TimeDuration, rows: Sequence[StoredRow], mode: str = "merge",
              under: int | None = None) -> None:
        if not rows:
            return
        self._check()
        self._check_owner()
        self._seq += 1
        item = (self._seq, duration, mode, self._journal and mode == "merge",
                [(ts, key, self.spec.copy_row(row)) for ts, key, row in rows])
        if self._closed:
            self.db.run(lambda cur: self._apply_once(cur, [item]))
            return
        self._queue.put(item)

    @property
    def latencies(self) -> Any:
        """Seconds each of the last 256 units of work took (statistics)."""
        return self.db.latencies

    def watermark(self) -> int:
        if not self._journal:
            self._journal = True
            self._put_job(lambda cur: self._arm(cur, fresh=True))
        return self._seq

    def _arm(self, cur: Any, fresh: bool) -> None:
        suffix = self.db.dialect.create_table_suffix()
        ph = self.db.dialect.placeholder
        self.db.dialect.serialize_ddl(cur)
        if self.epoch is not None:
            cur.execute(f"CREATE TABLE IF NOT EXISTS {self.db.q(REWINDS_TABLE)} "
                        f"(name VARCHAR(200) NOT NULL, epoch BIGINT NOT NULL, mark BIGINT NOT NULL){suffix}")
        for t in self.tables.values():
            cur.execute(self.schema.create_undo(t, suffix))
            if fresh:
                cur.execute(f"DELETE FROM {self.db.q(t + '__undo')}" + (
                    f" WHERE {self.db.q(SHARD)} = {ph}" if self.shard_id else ""),
                    (self.shard_id,) if self.shard_id else ())
        self._armed = True

    def rewind(self, mark: int, epoch: int | None = None) -> int:
        """Put this shard's rows back as they were at ``mark`` (a restored snapshot's watermark;
        ``epoch``: the claim under which it was taken, under scale-out).

        A rewind consumes the undo rows after ``mark``, and the next writes reuse their sequence
        numbers, so a snapshot whose watermark is past a rewind that a newer owner made since is
        stale: the rows it accounts for were undone.  Such a snapshot (a replaced owner's, that
        reached the state topic as its partition moved: the chaos soak's seed 77) raises
        :class:`StaleCheckpointError` instead of being restored over rows it does not match.
        Every scale-out rewind is recorded (:data:`REWINDS_TABLE`) for that check.
        """
        q = self.db.q
        ph = self.db.dialect.placeholder
        names = self.schema.column_names
        shard = (self.shard_id,) if self.shard_id else ()

        def run(cur: Any) -> int:
            self._arm(cur, fresh=False)
            if self.epoch is not None:
                self._check_not_stale(cur, mark, epoch)
            changed = 0
            for d, t in self.tables.items():
                undo = q(t + "__undo")
                cur.execute(f"SELECT srota_existed, {', '.join(q(c) for c in names)} FROM {undo} "
                            f"WHERE srota_seq > {ph}{self._shard_where} ORDER BY srota_seq DESC", (mark, *shard))
                for existed, *values in cur.fetchall():
                    if existed:
                        cur.execute(self._upsert[d], tuple(values))
                    else:
                        where = " AND ".join(f"{q(c)} = {ph}" for c in self.schema.key_names)
                        key = [values[i] for i in self.schema.key_positions]
                        cur.execute(f"DELETE FROM {q(t)} WHERE {where}", tuple(key))
                    changed += 1
                cur.execute(f"DELETE FROM {undo} WHERE srota_seq > {ph}{self._shard_where}", (mark, *shard))
            self._set_meta(cur, mark)
            if self.epoch is not None:
                cur.execute(f"INSERT INTO {q(REWINDS_TABLE)} (name, epoch, mark) VALUES ({ph}, {ph}, {ph})",
                            (self._meta_key, self.epoch, mark))
            return changed

        self.flush()
        changed = self._call(run)
        self._max_written.clear()
        self._seq = mark
        self._journal = True
        return int(changed)

    def _check_not_stale(self, cur: Any, mark: int, epoch: int | None) -> None:
        """Raise :class:`StaleCheckpointError` if an owner newer than the snapshot's rewound
        this shard below ``mark`` since (see :meth:`rewind`)."""
        if epoch is None:  # a snapshot from before snapshots carried their epoch
            return
        q, ph = self.db.q, self.db.dialect.placeholder
        cur.execute(f"SELECT epoch, mark FROM {q(REWINDS_TABLE)} WHERE name = {ph} AND epoch > {ph} AND mark < {ph} "
                    f"ORDER BY mark LIMIT 1", (self._meta_key, epoch, mark))
        row = cur.fetchone()
        if row is not None:
            raise StaleCheckpointError(
                f"aggregation '{self.spec.id}' shard {self.shard_id!r}: the snapshot (epoch {epoch}, watermark "
                f"{mark}) was taken by a replaced owner: a newer owner (epoch {int(row[0])}) rewound the shard to "
                f"{int(row[1])} since, so the rows it accounts for are not in the database")

    def trim(self, mark: int) -> None:
        q = self.db.q
        ph = self.db.dialect.placeholder
        shard = (self.shard_id,) if self.shard_id else ()

        def work(cur: Any) -> None:
            for t in self.tables.values():
                cur.execute(f"DELETE FROM {q(t + '__undo')} WHERE srota_seq <= {ph}{self._shard_where}",
                            (mark, *shard))

        self._put_job(work)

    def write_params(self, duration: TimeDuration, params: Iterable[Sequence[Any]], mode: str = "replace") -> int:
        """Write rows given in the SQLite layout's column order (what the Spark jobs compute:
        ``AGG_TIMESTAMP``, keys, ``AGG_TIMEZONE``, ``AGG_LAST_EVENT_TIMESTAMP``, latest values,
        base values) into Siddhi's columns, replacing rows with the same key; returns how many."""
        from_srota = self._srota.from_params
        rows = [self._params(*from_srota(p)) for p in params]
        sql = self._upsert[duration]
        return int(self._call(lambda cur: (cur.executemany(sql, rows), len(rows))[1]))

    def _records(self, duration: TimeDuration, start: int | None, end: int | None, own: bool) -> list[Any]:
        """The table's records (columns in order) whose bucket is in a time range; with
        ``own``, this shard's records whose ``AGG_TIMESTAMP`` is in it (the restart's recreation)."""
        q = self.db.q
        ph = self.db.dialect.placeholder
        # Siddhi's IncrementalExecutorsInitialiser selects the finer rows to recreate from by
        # AGG_TIMESTAMP, the bucket its executor was in when it wrote the row: a late event's
        # row (an older AGG_EVENT_TIMESTAMP) written in the open bucket is recreated with it
        col = q("AGG_TIMESTAMP") if own else self._time
        where: list[str] = []
        args: list[Any] = []
        if start is not None:
            where.append(f"{col} >= {ph}")
            args.append(start)
        if end is not None:
            where.append(f"{col} < {ph}")
            args.append(end)
        if own and self.shard_id:
            where.append(f"{q(SHARD)} = {ph}")
            args.append(self.shard_id)
        sql = self._select + q(self.tables[duration]) + (" WHERE " + " AND ".join(where) if where else "")
        sql += f" ORDER BY {self._time}, {q('AGG_TIMESTAMP')}"

        def read(cur: Any) -> list[Any]:
            cur.execute(sql, tuple(args))
            return list(cur.fetchall())

        return self._call(read)

    def _scan(self, duration: TimeDuration, start: int | None, end: int | None, own: bool) -> list[StoredRow]:
        records = self._records(duration, start, end, own)
        # compose the shards' base values (and the rows Siddhi wrote for late events) into
        # the rows one process would hold
        merged: dict[Any, list[Any]] = {}
        merge, copy = self.spec.merge, self.spec.copy_row
        for rec in records:
            ts, key, row = self.schema.from_params(rec)
            have = merged.get((ts, key))
            if have is None:
                merged[(ts, key)] = copy(row)
            else:
                merge(have, row)
        return [(ts, key, row) for (ts, key), row in merged.items()]

    def scan(self, duration: TimeDuration, start: int | None = None, end: int | None = None) -> list[StoredRow]:
        """Every shard's rows composed (what a reader sees), oldest first."""
        return self._scan(duration, start, end, own=False)

    @property
    def sharded(self) -> bool:
        """Whether the tables hold shards' rows (``@PartitionById``): reads are distributed."""
        return self.schema.sharded

    def scan_shards(self, duration: TimeDuration, start: int | None = None,
                    end: int | None = None) -> list[tuple[int, tuple[Any, ...], str, list[Any]]]:
        """Every shard's rows as stored, not composed: ``(AGG_TIMESTAMP, key, shard id, row)``,
        oldest first (a distributed read tells which shard has rolled what up)."""
        from_params = self.schema.from_params
        merge, copy = self.spec.merge, self.spec.copy_row
        at = self.schema.shard_position
        out: dict[Any, tuple[int, tuple[Any, ...], str, list[Any]]] = {}
        for rec in self._records(duration, start, end, own=False):
            ts, key, row = from_params(rec)
            shard = rec[at] if at is not None else ""
            have = out.get((ts, key, shard))
            if have is None:
                out[(ts, key, shard)] = (ts, key, shard, copy(row))
            else:  # a late event's row Siddhi wrote
                merge(have[3], row)
        return list(out.values())

    def latest(self, duration: TimeDuration, own: bool = False) -> int | None:
        """The newest bucket's start (every shard's), or this shard's newest ``AGG_TIMESTAMP``
        with ``own`` (as Siddhi's initialiser finds where to recreate from)."""
        q = self.db.q
        sql = f"SELECT MAX({q('AGG_TIMESTAMP') if own else self._time}) FROM {q(self.tables[duration])}"
        args: tuple[Any, ...] = ()
        if own and self.shard_id:
            sql += f" WHERE {q(SHARD)} = {self.db.dialect.placeholder}"
            args = (self.shard_id,)
        value = self._call(lambda cur: (cur.execute(sql, args), cur.fetchone())[1][0])
        return None if value is None else int(value)

    @property
    def own_shard(self) -> Store:
        """This shard's rows only (a restart rebuilds its open buckets from them)."""
        return _OwnShard(self)

    def delete_before(self, duration: TimeDuration, before: int) -> int:
        # every shard's rows, by the bucket's time, as Siddhi's IncrementalDataPurger deletes
        sql = f"DELETE FROM {self.db.q(self.tables[duration])} WHERE {self._time} < " \
              f"{self.db.dialect.placeholder}"
        n = self._call(lambda cur: (cur.execute(sql, (before,)), cur.rowcount)[1])
        self._max_written.pop(duration, None)
        return int(n)


class _OwnShard(Store):
    """A view of one shard's rows by ``AGG_TIMESTAMP`` (reads only; the restart's recreation)."""

    persistent = True

    def __init__(self, store: SqlAggregationStore) -> None:
        self._store = store

    def scan(self, duration: TimeDuration, start: int | None = None, end: int | None = None) -> list[StoredRow]:
        return self._store._scan(duration, start, end, own=True)

    def latest(self, duration: TimeDuration) -> int | None:
        return self._store.latest(duration, own=True)


def open_sql_aggregation_store(spec: Any, options: dict[str, str], shard_id: str | None, sharded: bool,
                               datasources: dict[str, dict[str, str]] | None = None,
                               fence_epoch: int | None = None) -> SqlAggregationStore:
    """The ``@store(type='rdbms')`` of an aggregation (``fence_epoch``: see OwnerFence)."""
    from srota.engine.stores.database import max_outage, url_from_options
    from srota.engine.stores.sqltable import _field_lengths

    lengths = _field_lengths(options.get("field.length", ""))
    db = Database(url_from_options(options, datasources), f"aggregation '{spec.id}'", max_outage(options))
    return SqlAggregationStore(spec, db, shard_id, sharded, lengths=lengths, fence_epoch=fence_epoch)
