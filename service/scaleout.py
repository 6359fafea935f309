"""Scale-out: one app runtime per Kafka input partition, checkpointed to a Kafka state topic.

Several workers (``srota run --workers N`` on one host, or replicas on several hosts with
the same config) join the consumer group of the app's Kafka source.  Kafka spreads the
partitions; this module makes the app's state follow them (docs/scaling.md):

* **State per partition.**  :class:`PartitionedAppHost` keeps one
  :class:`~srota.engine.SiddhiAppRuntime` per assigned partition number (the same number
  across co-partitioned topics, which the range assignor gives to the same member).  A
  chunk is split by partition and each part goes into its partition's runtime; outputs of
  every runtime share the app's sinks.
* **Checkpoints.**  Every ``scaleout.checkpoint_interval`` (and before a partition is given
  up) a partition's runtime is snapshotted together with the next offset of each of its
  topic-partitions, taken without an await in between.  Once every output enqueued before
  that moment is flushed, the checkpoint is written to the state topic (partition ``p`` of
  the state topic holds the checkpoints of input partition ``p``, record key ``p/<segment>``);
  once Kafka acknowledged it, the offsets it covers are committed.  So a committed offset
  never runs ahead of a saved checkpoint that includes it: the source's commit tracker
  (:mod:`srota.service.commits`) is gated, and each checkpoint reports what it saved.
* **Assignment.**  Before a newly assigned partition is read, it is claimed in the state
  topic (fencing a replaced worker that still runs), its latest checkpoint is read back,
  restored into a fresh runtime, and the partition is sought to the checkpoint's offsets.
  No checkpoint: the state starts empty at the group's committed offset.
* **Revocation.**  Before a partition moves: flush outputs, checkpoint, commit.  The runtime
  is kept until the assignment, which may give the partition back (then it goes on as it
  is, if no other worker claimed it meanwhile) or not (then it is dropped).
* After a crash (no revocation) the next owner restores the last periodic checkpoint and
  processes the records after it again: the state counts each record once, the outputs of
  at most one checkpoint interval repeat.

Checkpoints are data the engine's ``snapshot()``/``restore()`` produce and read; their bytes
are opaque here.  How they are stored, segmented and fenced is :mod:`srota.service.statetopic`.
"""
from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from types import SimpleNamespace as _ns
from typing import Any

import structlog
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from prometheus_client import Gauge
from srota.connectors._kafka import _security_kwargs
from srota.engine import Limits, SiddhiAppRuntime
from srota.engine.errorstore import MAPPING, SINK
from srota.engine.memory import release_free_memory
from srota.engine.ondemand import run_find_query_across
from srota.engine.snapshot import StaleSnapshotError
from srota.engine.stores.database import Database, StoreLockedError, StoreReplacedError
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import OnDemandQueryType, find_annotation
from srota.grammar.parser import parse_on_demand_query
from srota.service import scaleout_check
from srota.service.apphost import AppHost, manager_for
from srota.service.bindings import _background
from srota.service.config import ServiceConfig
from srota.service.metrics import Metrics
from srota.service.statetopic import Checkpoint, FencedError, StateTopic

from srota import mappers

__all__ = ["BROADCAST", "Checkpoint", "FencedError", "PartitionRuntimes", "PartitionedAppHost", "StateTopic"]

log = structlog.get_logger("srota.scaleout")

#: :meth:`PartitionedAppHost._restore`: the state could not be read in time; the app stopped.
_FAILED = object()
#: Seconds a newly assigned partition waits for its previous owner to let go of the partition's
#: shard lock (an rdbms aggregation with @PartitionById) before ending that owner's database
#: session.  In a rebalance the previous owner drops the runtime, and the lock, at its own
#: assignment, a moment after ours; one still holding it past this is a replaced worker that
#: does not know it yet (stopped past the session timeout, frozen, cut off).
SHARD_LOCK_GRACE_S = 2.0


class _ClaimAgain(Exception):
    """:meth:`PartitionedAppHost._create` found a later claim on the partition than this worker's."""


class RuntimeCreationError(Exception):
    """A partition's runtime could not be created (before any checkpoint was restored into it):
    not the checkpoint's fault, so :meth:`PartitionedAppHost._restore` retries the same one."""


def _lock_conflict(exc: BaseException) -> StoreLockedError | None:
    """The :class:`StoreLockedError` behind ``exc``, if any (app creation re-raises a store's
    error as a SiddhiAppCreationError: the original is its cause or context)."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        if isinstance(e, StoreLockedError):
            return e
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return None

# ---------------------------------------------------------------------------- runtimes
#: :attr:`PartitionRuntimes.current` while a chunk of a ``@global`` table's source is sent.
BROADCAST = -1
#: The input partition whose runtime runs the app's triggers (see :meth:`PartitionRuntimes.create`).
TRIGGER_PARTITION = 0


class _RoutedHandler:
    """An input handler that sends into the runtime of the partition being processed."""

    def __init__(self, runtimes: PartitionRuntimes, stream_id: str) -> None:
        self._runtimes = runtimes
        self._stream = stream_id

    def _target(self) -> SiddhiAppRuntime:
        rt = self._runtimes.by_partition.get(self._runtimes.current) if self._runtimes.current is not None else None
        if rt is None:
            raise RuntimeError(f"no partition runtime for input into {self._stream}")
        return rt

    def send_rows(self, rows: list[tuple[Any, ...]]) -> None:
        self.send_row_groups([rows])

    def send_row_groups(self, groups: list[list[tuple[Any, ...]]]) -> None:
        """Rows, a group per message (see :meth:`InputHandler.send_row_groups`)."""
        if self._runtimes.current == BROADCAST:  # a table's rows: the grouping does not matter
            self._runtimes.broadcast(self._stream, [row for rows in groups for row in rows])
            return
        self._target().get_input_handler(self._stream).send_row_groups(groups)

    def send(self, data: Any) -> None:
        self.send_rows([tuple(data)])


class PartitionRuntimes:
    """Stands where :class:`AppHost` expects one runtime: definitions come from a template
    runtime (never started), events go to the runtime of :attr:`current` partition, and
    callbacks are added to every partition runtime."""

    def __init__(self, make: Callable[[int | None], SiddhiAppRuntime]) -> None:
        self._make = make
        self.template = make(None)
        self.by_partition: dict[int, SiddhiAppRuntime] = {}
        #: The partition whose chunk is being processed (set by the host around each part).
        self.current: int | None = None
        self._callbacks: list[tuple[str, Any, bool]] = []
        #: ``@global`` tables, and every row their source streams delivered (in order), which
        #: a partition runtime created later is given again.
        self.global_tables: set[str] = set()
        self.replay: list[tuple[str, list[tuple[Any, ...]]]] = []
        # Counters of runtimes already dropped, so that the metrics' counters never go down.
        self._retired: dict[str, dict[str, int]] = {"junctions": {}, "errors": {}, "breaches": {}, "out": {}}
        #: Told of a timer of a partition runtime that raised: ``(partition, runtime, error)``,
        #: on the runtime's scheduler thread (the host sets it; unset, the scheduler logs it).
        self.on_timer_error: Callable[[int, SiddhiAppRuntime, BaseException], None] | None = None

    # what AppHost reads
    @property
    def name(self) -> str:
        return self.template.name

    @property
    def app(self) -> Any:
        return self.template.app

    @property
    def stream_definitions(self) -> Any:
        return self.template.stream_definitions

    @property
    def queries(self) -> Any:
        """Every query, with ``output.events_out`` summed over the partitions (for metrics)."""
        runtimes = list(dict(self.by_partition).values())
        retired = self._retired["out"]
        return {name: _ns(output=_ns(events_out=retired.get(name, 0) + sum(
                    rt.queries[name].output.events_out for rt in runtimes if name in rt.queries)))
                for name in self.template.queries}

    @property
    def context(self) -> Any:
        """The counters the metrics read, summed over the partition runtimes."""
        ctxs = [rt.context for rt in dict(self.by_partition).values()]

        def total(attr: str) -> dict[str, int]:
            out = dict(self._retired[attr])
            for c in ctxs:
                for k, v in list(getattr(c, attr).items()):
                    out[k] = out.get(k, 0) + v
            return out

        junctions = dict(self._retired["junctions"])
        patterns: dict[str, list[int]] = {}
        for c in ctxs:
            for sid, j in list(c.junctions.items()):
                junctions[sid] = junctions.get(sid, 0) + j.events_in
            for eid, element in list(c.elements.items()):
                if eid.endswith("/pattern") and hasattr(element, "pending"):
                    got = patterns.setdefault(eid, [0, 0])
                    got[0] += element.pending
                    got[1] += getattr(element, "dropped", 0)
        pending = sum(c.scheduler.pending() for c in ctxs)
        return _ns(junctions={k: _ns(events_in=v) for k, v in junctions.items()}, errors=total("errors"),
                   breaches=total("breaches"), scheduler=_ns(pending=lambda: pending),
                   elements={k: _ns(pending=v[0], dropped=v[1]) for k, v in patterns.items()},
                   # Aggregation stores belong to the partitions' runtimes and are checkpointed
                   # with them: the single-process store checks see none here.
                   aggregations={})

    @property
    def tables(self) -> Any:
        return self.template.tables

    def add_callback(self, stream_id: str, callback: Any, *, merged_chunks: bool = False) -> None:
        self._callbacks.append((stream_id, callback, merged_chunks))
        for rt in self.by_partition.values():
            rt.add_callback(stream_id, callback, merged_chunks=merged_chunks)

    def get_input_handler(self, stream_id: str) -> _RoutedHandler:
        return _RoutedHandler(self, stream_id)

    def start(self) -> None:
        """Partition runtimes start when their partition is assigned."""

    def drain(self) -> int:
        return sum(rt.drain() for rt in self.by_partition.values())

    def shutdown(self) -> None:
        for rt in self.by_partition.values():
            rt.shutdown()
        self.by_partition.clear()
        self.template.shutdown()

    def query(self, text: str) -> list[Any]:
        """An on-demand query over this worker's partitions, answered as one runtime holding
        their state would (see docs/scaling.md).

        ``from T ... select ...`` reads the rows of every partition through one selector
        (group by, aggregates, order by and limit over them all); a ``@global`` table is
        read once (every partition holds the same rows); ``delete`` and ``update`` change
        every partition.  Refused: inserts (a row's partition is the Kafka key's, which the
        query cannot know) and aggregations (each partition rolls up its own events; ask
        the shared ``rdbms`` store, which composes them).
        """
        runtimes = dict(self.by_partition)  # one copy: the admin server runs this on a thread
        ordered = [runtimes[p] for p in sorted(runtimes)]
        query = parse_on_demand_query(text)
        store = query.input_store
        if store is not None and store in self.template.context.aggregations:
            raise ValueError(f"'{store}' is an aggregation, rolled up per partition under scale-out: query its "
                             "shared rdbms store, which composes the partitions' rows")
        if query.type in (OnDemandQueryType.INSERT, OnDemandQueryType.UPDATE_OR_INSERT):
            raise ValueError("under scale-out a table is per partition, and an on-demand insert cannot know the "
                             "row's partition: send the row through the app's Kafka source")
        if not ordered:
            return []
        if store is not None and store in self.global_tables:
            return ordered[0].query(text)
        if query.type == OnDemandQueryType.FIND and store is not None:
            return run_find_query_across([rt.context for rt in ordered], text)
        out: list[Any] = []
        for rt in ordered:
            out.extend(rt.query(text))
        return out

    def snapshot(self) -> bytes:
        raise NotImplementedError("scale-out checkpoints each partition (PartitionedAppHost.checkpoint_partitions)")

    def restore(self, data: bytes) -> list[str]:
        raise NotImplementedError("scale-out restores each partition when it is assigned")

    # partitions
    def broadcast(self, stream_id: str, rows: list[tuple[Any, ...]]) -> None:
        """Rows of a ``@global`` table's source: into every partition runtime, and kept."""
        self.replay.append((stream_id, list(rows)))
        for rt in self.by_partition.values():
            rt.get_input_handler(stream_id).send_rows(rows)

    def create(self, partition: int, state: bytes | None) -> SiddhiAppRuntime:
        """The runtime of ``partition`` with ``state`` restored into it, started.  Raises
        :class:`RuntimeCreationError` when the runtime cannot be created at all (a store it
        cannot open), the restore's error when ``state`` cannot be restored."""
        try:
            rt = self._make(partition)
        except Exception as exc:
            raise RuntimeCreationError(f"partition {partition}: {exc}") from exc
        # A trigger fires once per app, not once per partition: in partition 0's runtime only
        # (whichever worker owns it), and at 'start' only when the app first starts (no state).
        if partition != TRIGGER_PARTITION:
            rt.disable_triggers()
        elif state is not None:
            rt.disable_triggers(start_only=True)
        for stream_id, cb, merged_chunks in self._callbacks:
            rt.add_callback(stream_id, cb, merged_chunks=merged_chunks)
        if self.on_timer_error is not None:
            rt.context.scheduler.on_error = functools.partial(self.on_timer_error, partition, rt)
        if state is not None:
            try:
                rt.restore(state)
            except BaseException:
                rt.shutdown()
                raise
        rt.start()
        if self.global_tables:
            # The checkpoint's copy of a global table may be older than what this worker has
            # read of its topic since: start it again from every row read.
            for table in sorted(self.global_tables):
                rt.query(f"delete {table} on true")
            for stream_id, rows in self.replay:
                rt.get_input_handler(stream_id).send_rows(rows)
        self.by_partition[partition] = rt
        return rt

    def release_locks(self, partition: int) -> None:
        """Close the idle database connections of ``partition``'s stores, whose session locks
        fence the partition (scaling.md): a revoked partition's next owner takes them at once
        instead of waiting for them.  If the partition stays here, the stores connect again,
        and take their locks again, at their next use."""
        rt = self.by_partition.get(partition)
        if rt is None:
            return
        ctx = rt.context
        for element in (*ctx.tables.values(), *(getattr(a, "store", None) for a in ctx.aggregations.values())):
            db = getattr(element, "db", None)  # (stores on a server database have one)
            if isinstance(db, Database) and db.holds_session_lock:
                db.disconnect()

    def drop(self, partition: int) -> None:
        rt = self.by_partition.pop(partition, None)
        if rt is not None:
            r, ctx = self._retired, rt.context
            for sid, j in list(ctx.junctions.items()):
                r["junctions"][sid] = r["junctions"].get(sid, 0) + j.events_in
            for attr in ("errors", "breaches"):
                for k, v in list(getattr(ctx, attr).items()):
                    r[attr][k] = r[attr].get(k, 0) + v
            for name, q in list(rt.queries.items()):
                r["out"][name] = r["out"].get(name, 0) + q.output.events_out
            rt.shutdown()


# ---------------------------------------------------------------------------- global tables
#: The table annotation: the table is the same in every partition, fed from a topic that
#: every worker reads whole (like Kafka Streams' GlobalKTable).
GLOBAL = "global"


def _feeders(app: Any, tables: set[str]) -> set[str]:
    """Streams that queries read to write into ``tables``."""
    out: set[str] = set()
    for element in app.execution_elements:
        target = getattr(getattr(element, "output", None), "target", None)
        stream_id = getattr(getattr(element, "input", None), "stream_id", None)
        if target in tables and isinstance(stream_id, str):
            out.add(stream_id)
    return out


async def _partition_counts(bootstrap: str, security: Mapping[str, Any], topics: list[str]) -> dict[str, int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, **security)
    await admin.start()
    try:
        names = set(await admin.list_topics())
        found = [t for t in topics if t in names]
        return {i["topic"]: len(i.get("partitions") or ()) for i in (await admin.describe_topics(found) if found else [])}
    finally:
        await admin.close()


# ---------------------------------------------------------------------------- metrics
_GAUGES: dict[int, dict[str, Gauge]] = {}


def _gauges(metrics: Metrics) -> dict[str, Gauge]:
    found = _GAUGES.get(id(metrics))
    if found is None:
        r = metrics.registry
        found = {
            "owned": Gauge("srota_partition_owned", "1 for each input partition this worker owns",
                           ["app", "partition"], registry=r),
            "restore": Gauge("srota_partition_restore_seconds", "Time the last restore of a partition took",
                             ["app", "partition"], registry=r),
            "bytes": Gauge("srota_checkpoint_bytes", "Bytes the last checkpoint of a partition wrote (compressed)",
                           ["app", "partition"], registry=r),
            "seconds": Gauge("srota_checkpoint_seconds", "Time the last checkpoint of a partition took "
                             "(snapshot, flush, write, commit)", ["app", "partition"], registry=r),
        }
        _GAUGES[id(metrics)] = found
    return found


def _snapshot_marks(rt: SiddhiAppRuntime) -> dict[str, int]:
    """The watermarks the snapshot just taken of ``rt`` carries, by aggregation (database stores)."""
    return {name: agg.store.snapshot_mark for name, agg in rt.context.aggregations.items()
            if agg.store.snapshot_mark is not None}


def _trim_undo(rt: SiddhiAppRuntime | None, marks: dict[str, int]) -> None:
    """A newer checkpoint of ``rt``'s partition is saved: the undo rows up to the one before it
    (``marks``) are no longer needed (restores fall back at most to that one), so they go;
    without this the undo tables grew by every write, and each restore read them all."""
    if rt is None:
        return
    for name, mark in marks.items():
        agg = rt.context.aggregations.get(name)
        if agg is not None:
            agg.store.trim(mark)


class _PartitionInfo:
    __slots__ = ("restore_s", "restored_from", "checkpoint_bytes", "state_bytes", "checkpoint_s", "checkpoints",
                 "offsets", "marks")

    def __init__(self) -> None:
        self.restore_s = 0.0
        self.restored_from: str | None = None
        #: What the last checkpoint wrote to the state topic (compressed), and the snapshot's size.
        self.checkpoint_bytes = 0
        self.state_bytes = 0
        self.checkpoint_s = 0.0
        self.checkpoints = 0
        #: ``{topic: next offset}`` saved with the last checkpoint.
        self.offsets: dict[str, int] = {}
        #: The watermarks of the database aggregation stores saved with the last checkpoint.
        self.marks: dict[str, int] = {}


# ---------------------------------------------------------------------------- the host
class PartitionedAppHost(AppHost):
    """An :class:`AppHost` whose state is one runtime per assigned Kafka partition (module doc)."""

    async def replay(self, entry: Any) -> int:
        """Send a stored error back (see :meth:`AppHost.replay`), as scale-out allows.

        A sink's outputs go to the sink, as in one process.  A payload of the Kafka source that
        did not map goes back to the source's topic, keyed by the source's ``key.attribute``,
        so that it comes back through the partition (and the worker) it belongs to, with the
        normal guarantees.  Events that failed inside the app are refused: they belong to the
        runtime of a partition this worker may not own (``srota errors show`` has them).
        """
        if entry.kind == SINK:
            return await super().replay(entry)
        if entry.kind != MAPPING or entry.payload is None or not self._kafka \
                or entry.stream != self._kafka[0].stream_id:
            raise ValueError("under scale-out only failed outputs and payloads of the kafka source can be replayed "
                             "(events that failed inside the app belong to one partition's runtime); srota errors "
                             "show has them")
        b = self._kafka[0]
        try:
            rows = b.mapper.map(entry.payload, {})
        except mappers.MappingError as exc:
            raise ValueError(f"the payload still does not map: {exc}") from None
        key: bytes | None = None
        ann = self._source_annotation(b.stream_id)
        attribute = ann.get("key.attribute") if ann else None
        if attribute and rows:
            names = [a.name for a in self.partitions.template.stream_definitions[b.stream_id].attributes]
            value = rows[0][names.index(attribute)]
            key = None if value is None else str(value).encode()
        producer = AIOKafkaProducer(bootstrap_servers=b.source.options["bootstrap.servers"], acks="all",
                                    **_security_kwargs(b.source.options))
        await producer.start()
        try:
            await (await producer.send(b.source.topics[0], bytes(entry.payload), key=key))
        finally:
            await producer.stop()
        self._log.info("payload replayed through the source topic", stream=b.stream_id, topic=b.source.topics[0],
                       events=len(rows))
        return len(rows)

    def __init__(self, path: Path | None, text: str, config: ServiceConfig, metrics: Metrics,
                 offline: bool = False) -> None:
        super().__init__(path, text, config, metrics, offline)
        self.partitions: PartitionRuntimes = self.runtime  # type: ignore[assignment]
        self.partitions.on_timer_error = self._partition_timer_failed
        self._scaleout = config.scaleout
        app = self.partitions.template.app
        self.partitions.global_tables = {t.id for t in app.table_definitions
                                         if find_annotation(t.annotations, GLOBAL) is not None}
        feeders = _feeders(app, self.partitions.global_tables)
        self._global = [b for b in self.sources if b.stream_id in feeders]
        for b in self._global:
            if b.transport != "kafka":
                raise SiddhiAppCreationError(
                    f"app {self.name}: the @{GLOBAL} table fed from {b.stream_id} needs a kafka @source (every "
                    f"worker reads its topic whole), not {b.transport}")
        self._kafka = [b for b in self.sources if b.transport == "kafka" and b not in self._global]
        infos = {}
        for b in self.sources:
            ann = self._source_annotation(b.stream_id)
            infos[b.stream_id] = scaleout_check.SourceInfo(
                b.transport, (ann.get("key.attribute") if ann else None) or None, b in self._global)
        if self._kafka:
            if len(self._kafka) > 1:
                raise SiddhiAppCreationError(
                    f"app {self.name}: scale-out needs one kafka @source (list co-partitioned topics in its "
                    f"topic.list), not {len(self._kafka)}")
            if getattr(self._kafka[0].source, "_partitions", None):
                raise SiddhiAppCreationError(
                    f"app {self.name}: scale-out needs the consumer group to assign partitions; remove "
                    "partition.no.list from the kafka @source")
            for b in self.sources:
                if b.transport == "mqtt" and b.source.options.get("shared.subscription"):
                    raise SiddhiAppCreationError(
                        f"app {self.name}: with a kafka @source the mqtt source of {b.stream_id} runs on one worker "
                        "(the owner of partition 0); remove shared.subscription='true'")
                if b.transport not in ("kafka", "mqtt") and b not in self._global:
                    raise SiddhiAppCreationError(
                        f"app {self.name}: with a kafka @source, scale-out cannot also take the {b.transport} "
                        f"source of {b.stream_id} (its events belong to no partition)")
            if self._txn is not None:
                raise SiddhiAppCreationError(f"app {self.name}: transactional kafka sinks are not supported with "
                                             "scale-out yet")
        for sink in self.sinks:
            # A sink's own state (Sink.state) is in single-process snapshots only: the
            # partitions' checkpoints do not carry it, and every worker would keep its own.
            own = sink.sink.state()
            if own is not None:
                raise SiddhiAppCreationError(
                    f"app {self.name}: the @sink of {sink.stream_id} keeps state of its own ({own}), which "
                    "scale-out does not carry yet. A kafka sink's sequence.id numbers its records: every worker "
                    "would number its own under the one id, so a consumer dropping duplicates by number (a kafka "
                    "@source with seq.enabled) would drop other workers' records")
        if self._kafka and self._kafka[0].source.options.get("seq.enabled"):
            self._log.warning("seq.enabled under scale-out drops duplicates only while a partition stays with "
                              "its worker: the sequence numbers seen are not in the partitions' checkpoints, so "
                              "a partition's new owner takes a duplicate of a record received before the move",
                              stream=self._kafka[0].stream_id)
        scaleout_check.check(self.partitions.template.app, infos)
        #: With a kafka @source: MQTT sources run on the worker owning partition 0 only (their
        #: events go into that partition's runtime), started and stopped as it comes and goes.
        self._single: list[Any] = []
        self._single_on = False
        self._single_lock = asyncio.Lock()
        self._single_task: asyncio.Task[None] | None = None
        self._intake = asyncio.Lock()
        mqtt = [b for b in self.sources if b.transport == "mqtt"]
        if self._kafka:
            self._single = mqtt
        else:
            # Stateless (the check passed).  Every worker subscribes: each would receive every
            # message, unless the subscription is shared, which the user must ask for (a shared
            # subscription does not survive a Mosquitto restart: docs/delivery.md).
            for b in mqtt:
                if not b.source.options.get("shared.subscription"):
                    raise SiddhiAppCreationError(
                        f"app {self.name}: under scale-out every worker would receive each message of the mqtt "
                        f"source of {b.stream_id}: set shared.subscription='true' on it (each message to one "
                        "worker; Mosquitto 2.0 loses QoS 1 messages published while it restarts), add a kafka "
                        "@source (the mqtt source then runs on one worker), or run it without scale-out")
                topics = getattr(b.source, "topics", None)
                if topics is not None:
                    b.source.topics = [t if t.startswith("$share/") else f"$share/srota-{self.name}/{t}"
                                       for t in topics]
        self._state: StateTopic | None = None
        self._consumed: dict[tuple[str, int], int] = {}
        self._checkpointed: dict[tuple[str, int], int] = {}
        self._info: dict[int, _PartitionInfo] = {}
        # Partitions revoked by a rebalance whose runtimes are kept until the assignment says
        # whether they stay here (aiokafka revokes every partition at every rebalance).
        self._revoked: set[int] = set()
        self._ckpt_lock = asyncio.Lock()
        #: Partition -> the epoch of this worker's latest claim on it (see _create_runtime).
        self._epochs: dict[int, int] = {}
        self._ckpt_task: asyncio.Task[None] | None = None
        self._gauges = _gauges(metrics)

    def _create_runtime(self, text: str, limits: Limits) -> Any:
        base = self.config.shard_id or ""

        def make(partition: int | None) -> SiddhiAppRuntime:
            # A partition's aggregation rows move with it (its shard id is the partition's); the
            # template is never started and writes nothing, but must not share a shard's lock.
            shard = f"{base}p{partition}" if partition is not None else f"template-{uuid.uuid4().hex[:12]}"
            # The claim's epoch fences a replaced owner out of the rdbms tables (OwnerFence).
            epoch = self._epochs.get(partition) if partition is not None else None
            return manager_for(self.config, limits, shard, self.offline, fence_epoch=epoch) \
                .create_siddhi_app_runtime(text)

        return PartitionRuntimes(make)

    def _source_annotation(self, stream_id: str) -> Any:
        definition = self.partitions.template.stream_definitions[stream_id]
        for a in definition.annotations:
            if a.name.lower() == "source":
                return a
        return None

    # ------------------------------------------------------------------ lifecycle
    async def start(self, restore: Any = None, marks: dict[str, int] | None = None,
                    connector_states: dict[str, dict[str, Any]] | None = None) -> None:
        """Open the state topic, hook the Kafka source's assignment, then start as usual.

        (``restore``, ``marks`` and ``connector_states`` come from the single-process store, which a
        partitioned app does not use: each partition restores from its checkpoint in the state
        topic, which holds no connector state.)
        """
        if self._kafka:
            b = self._kafka[0]
            src = b.source
            topic = self._scaleout.state_topic.replace("{app}", self.name)
            self._state = StateTopic(topic, src.options["bootstrap.servers"], _security_kwargs(src.options))
            await self._state.open(src.topics)
            src.assignment_strategy = (RangePartitionAssignor,)
            src.on_assign = self._on_assign
            # Commits wait for checkpoints (decision 12, per partition): the host commits
            # min(flushed, saved), and each checkpoint reports what it saved.
            b.commits.gated = True
        if self._global:
            await self._read_whole(self._global)
        # AppHost.start opens the sinks and starts the sources it is given: only the global
        # ones (reference data first, like a GlobalKTable); the group's sources start here
        # once the global tables have caught up, with this host's revocation handler (a
        # revocation must checkpoint and drop the partitions' runtimes).
        group_sources = [b for b in self.sources if b not in self._global]
        self.sources = list(self._global)
        try:
            await super().start(None)
            if self._global:
                await self._caught_up(self._global)
        finally:
            self.sources = self._global + group_sources
        if not self._kafka and 0 not in self.partitions.by_partition:
            self.partitions.create(0, None)  # no partitions: one runtime for the worker's share
        for b in group_sources:
            if b in self._single:
                continue  # started with partition 0 (_follow_partition_0)
            if b in self._kafka:
                b.source.on_revoke = self._revoke
            await b.source.start(lambda msgs, b=b: self._on_messages(b, msgs))
        if self._state is not None:
            self._ckpt_task = asyncio.create_task(self._checkpoint_loop(), name=f"srota-checkpoints-{self.name}")

    async def _read_whole(self, bindings: list[Any]) -> None:
        """Make the sources of ``@global`` tables read every partition from the start, uncommitted."""
        for b in bindings:
            src = b.source
            counts = await _partition_counts(src.options["bootstrap.servers"], _security_kwargs(src.options),
                                             src.topics)
            src._partitions = sorted({p for n in counts.values() for p in range(n)})
            src._commit_enabled = False
            src.seek_on_start({(t, p): 0 for t, n in counts.items() for p in range(n)})

    async def _caught_up(self, bindings: list[Any], timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done = True
            for b in bindings:
                consumer = b.source._consumer
                if consumer is None or not consumer.assignment():
                    done = False
                    continue
                for tp in consumer.assignment():
                    high = consumer.highwater(tp)
                    if high is None or (high > 0 and b.source._positions.get(tp, 0) < high):
                        done = False
            if done:
                return
            await asyncio.sleep(0.05)
        self._log.warning("global tables not caught up with their topics; starting anyway", timeout_s=timeout)

    async def _checkpoint_loop(self) -> None:
        interval = self._scaleout.checkpoint_interval_ms / 1000.0
        while True:
            await asyncio.sleep(interval)
            try:
                await self.checkpoint_partitions(set(self.partitions.by_partition), skip_unchanged=True)
            except Exception:
                self._log.exception("checkpoint failed")

    def _running_sources(self) -> list[Any]:
        """Every source but the MQTT ones while another worker runs them (not counted for readiness)."""
        if self._single_on or not self._single:
            return self.sources
        return [b for b in self.sources if b not in self._single]

    async def _follow_partition_0(self) -> None:
        """Run the MQTT sources here exactly while this worker owns partition 0 (not revoked).

        One worker at a time, chosen by the consumer group: when it goes (a crash, a stop past
        the session timeout) partition 0 and the sources move to another.  The session
        (``client.id``, ``clean.session='false'``) is the same on every worker, so the broker
        keeps one plain subscription and sends the next owner what was not acknowledged.  A
        worker that still holds the connection when the next connects is disconnected by the
        broker (one connection per client id)."""
        async with self._single_lock:
            want = TRIGGER_PARTITION in self.partitions.by_partition and TRIGGER_PARTITION not in self._revoked
            if want == self._single_on or not self._single or not self.started and want:
                return
            self._single_on = want
            for b in self._single:
                if want:
                    self._log.info("partition 0 is here: starting the mqtt source", stream=b.stream_id)
                    b.source.resume()
                    await b.source.start(lambda msgs, b=b: self._on_messages(b, msgs))
                else:
                    # What is not acknowledged yet, the broker sends to the next owner.
                    b.source.pause()
                    await b.source.stop()
                    self._log.info("partition 0 left: mqtt source stopped", stream=b.stream_id)

    async def drain(self) -> None:
        """Flush and commit (shutdown): every owned partition is checkpointed, then committed."""
        await super().drain()
        if self._state is not None:
            await self.checkpoint_partitions(set(self.partitions.by_partition))

    async def close(self) -> None:
        if self._ckpt_task is not None:
            self._ckpt_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._ckpt_task
        await super().close()
        for p in list(self._info):
            self._gauges["owned"].labels(self.name, str(p)).set(0)
        if self._state is not None:
            await self._state.close()

    # ------------------------------------------------------------------ inputs
    async def _take_chunk(self, b: Any, messages: list[Any]) -> None:
        """Split the chunk by partition; each part goes into its partition's runtime."""
        if b in self._global:
            self.partitions.current = BROADCAST
            try:
                await super()._take_chunk(b, messages)
            finally:
                self.partitions.current = None
            return
        if not self._kafka:
            self.partitions.current = 0
            if 0 not in self.partitions.by_partition:
                self.partitions.create(0, None)
            await super()._take_chunk(b, messages)
            return
        async with self._intake:  # one chunk at a time in the runtimes (MQTT and Kafka both come)
            if b in self._single:
                await self._take_single(b, messages)
            else:
                await self._take_partitioned(b, messages)

    async def _take_single(self, b: Any, messages: list[Any]) -> None:
        """An MQTT chunk: into partition 0's runtime while it is this worker's."""
        if TRIGGER_PARTITION not in self.partitions.by_partition or TRIGGER_PARTITION in self._revoked:
            # Partition 0 is moving: unacknowledged, the broker sends these to its next owner.
            self._log.info("mqtt chunk left unprocessed: partition 0 is not here", messages=len(messages))
            return
        self.partitions.current = TRIGGER_PARTITION
        try:
            await super()._take_chunk(b, messages)
        except StoreReplacedError as exc:  # unacknowledged: the broker sends them to the new owner
            await self._replaced(TRIGGER_PARTITION, exc)
        finally:
            self.partitions.current = None

    async def _take_partitioned(self, b: Any, messages: list[Any]) -> None:
        parts: dict[int, list[Any]] = {}
        for m in messages:
            parts.setdefault(int(m.properties["partition"]), []).append(m)
        token = messages[-1].ack if messages else None
        next_offsets = token.next_offsets() if token is not None else {}
        for p, group in parts.items():
            if p not in self.partitions.by_partition:
                self._log.warning("records of a partition this worker does not own; left unprocessed",
                                  partition=p, records=len(group))
                continue
            self.partitions.current = p
            try:
                await super()._take_chunk(b, group)
            except StoreReplacedError as exc:  # its offsets are not ours to record
                await self._replaced(p, exc)
                continue
            # No await since the part entered the runtime: its offsets go with its state.
            for key, off in next_offsets.items():
                if key[1] == p:
                    self._consumed[key] = off
        self.partitions.current = None

    async def _replaced(self, p: int, exc: StoreReplacedError) -> None:
        """A store of partition ``p``'s runtime found a newer owner of the partition (this worker
        was stopped or cut off past its session): drop the partition, as a fenced checkpoint does."""
        self._log.error("partition taken over by another worker; its state here is dropped", partition=p,
                        reason=str(exc))
        self._forget({p})
        await self._follow_partition_0()

    def _partition_timer_failed(self, p: int, rt: SiddhiAppRuntime, exc: BaseException) -> None:
        """A timer of partition ``p``'s runtime raised (on its scheduler's thread).  A store that
        found a newer owner of the partition drops it now, as a chunk meeting it does (before, the
        partition ran on, its timers emitting, until its next checkpoint); a store outage stops
        the app, as in one process; anything else is logged and the timers go on."""
        if not isinstance(exc, StoreReplacedError):
            self._timer_failed(exc)
            return
        self._log.error("a timer met a store taken over by another worker", partition=p, reason=str(exc))
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # (the loop closed: the app is gone anyway)
                self._loop.call_soon_threadsafe(self._drop_replaced_later, p, rt, exc)

    def _drop_replaced_later(self, p: int, rt: SiddhiAppRuntime, exc: StoreReplacedError) -> None:
        task = asyncio.create_task(self._drop_replaced(p, rt, exc), name=f"srota-replaced-{self.name}-{p}")
        _background.add(task)
        task.add_done_callback(_background.discard)

    async def _drop_replaced(self, p: int, rt: SiddhiAppRuntime, exc: StoreReplacedError) -> None:
        # Between chunks (a chunk may be in the runtime on the engine thread), and only the
        # runtime whose timer raised: the partition may have been dropped, or restored anew, since.
        async with self._intake:
            if self.partitions.by_partition.get(p) is rt:
                await self._replaced(p, exc)

    # ------------------------------------------------------------------ assignment
    async def _on_assign(self, assigned: set[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Restore each newly assigned partition from its latest checkpoint; where to start."""
        try:
            return await self._assign(assigned)
        finally:
            await self._follow_partition_0()
            # Dropping and restoring runtimes frees most of what it allocated: give it back
            # to the system now rather than at the host's next periodic trim.
            await asyncio.to_thread(release_free_memory)

    async def _assign(self, assigned: set[tuple[str, int]]) -> dict[tuple[str, int], int]:
        assert self._state is not None
        starts: dict[tuple[str, int], int] = {}
        numbers = {p for _t, p in assigned}
        # A runtime whose revocation never ran (a chunk in flight outlasted the rebalance's
        # wait for it) is a revoked one without its checkpoint: dropped if it moved, kept only
        # if no other worker claimed it meanwhile (else its state is stale).
        self._revoked |= set(self.partitions.by_partition)
        self._forget(self._revoked - numbers)
        for p in sorted(numbers & self._revoked):
            self._revoked.discard(p)
            if p in self.partitions.by_partition and await self._still_claimed(p):
                self._log.debug("partition kept through the rebalance", partition=p)
            else:  # another worker owned it meanwhile: its state here is stale
                self._forget({p})
        to_restore: list[int] = []
        for p in sorted(numbers):
            if p in self.partitions.by_partition and self._info.get(p) is not None:
                # Still ours (a rebalance that kept it): the state and positions are current.
                for (t, q) in assigned:
                    if q == p and (t, q) in self._consumed:
                        starts[(t, q)] = self._consumed[(t, q)]
            else:
                to_restore.append(p)
        # All at once: a restore mostly waits (the state topic, a previous owner letting go of
        # its locks), and one after another they outlast the group's rebalance timeout, which
        # then rebalances again, and again.
        started = time.perf_counter()
        done = await asyncio.gather(*(self._restore_assigned(p, assigned, starts) for p in to_restore))
        if not all(done):
            return starts  # the app stopped (logged): nothing is delivered any more
        if to_restore:
            self._log.debug("assignment restored", partitions=to_restore,
                            seconds=round(time.perf_counter() - started, 3))
        return starts

    async def _restore_assigned(self, p: int, assigned: set[tuple[str, int]],
                                starts: dict[tuple[str, int], int]) -> bool:
        """Restore partition ``p`` of an assignment and record where it starts (into
        ``starts``); False when the app stopped for it."""
        started = time.perf_counter()
        cp = await self._restore(p)
        if cp is _FAILED:
            return False
        # No await from here on: the runtime is in place, and the periodic checkpoint must not
        # see it before its offsets are recorded, or it saves the restored state with none (the
        # next owner would process those records again; the assignment's other restores may
        # still take seconds).
        info = _PartitionInfo()
        info.restore_s = time.perf_counter() - started
        self._info[p] = info
        self._gauges["owned"].labels(self.name, str(p)).set(1)
        self._gauges["restore"].labels(self.name, str(p)).set(info.restore_s)
        if cp is None:
            self._log.info("partition assigned, no checkpoint: state starts empty", partition=p)
            return True
        info.restored_from = cp.id
        info.offsets = dict(cp.offsets)
        info.state_bytes = len(cp.state)
        info.checkpoint_bytes = cp.stored_bytes
        restored = {(t, q): cp.offsets[t] for (t, q) in assigned if q == p and t in cp.offsets}
        starts.update(restored)
        self._consumed.update(restored)
        self._checkpointed.update(restored)
        self._kafka[0].commits.restore(restored)
        self._log.info("partition state restored", partition=p, bytes=len(cp.state),
                       seconds=round(info.restore_s, 3), offsets=cp.offsets)
        return True

    async def _restore(self, p: int) -> Any:
        """Claim partition ``p`` and create its runtime from its newest checkpoint that restores.

        The claim comes first (it fences a replaced owner still writing, see
        :class:`StateTopic`).  A checkpoint that cannot be restored (a snapshot of another app
        version) is skipped for the one before it, which is said loudly: the records after it
        are processed again.  Reading the state topic is retried while the broker is away (the
        partition cannot be processed without its state) for ``scaleout.restore_timeout``;
        then the app stops with an error (returns ``_FAILED``), and nothing is consumed.  So is
        creating the runtime (:meth:`_create`): that failing says nothing about the checkpoint.
        """
        state = self._state
        assert state is not None
        bad: set[str] = set()
        delay = 0.2
        deadline = time.monotonic() + self._scaleout.restore_timeout_ms / 1000.0
        claimed = False
        while True:
            try:
                if not claimed:
                    epoch = self._epochs[p] = await state.claim(p)
                    claimed = True
                    self._log.debug("partition claimed", partition=p, epoch=epoch)
                cp = await state.load(p, frozenset(bad))
            except Exception as exc:
                if time.monotonic() + delay > deadline:
                    self._stop_failed(f"scale-out: cannot read the state of partition {p} from the state topic "
                                      f"{state.topic} for {self._scaleout.restore_timeout_ms / 1000:g} s "
                                      f"({exc!r}); check the broker and the topic, then restart")
                    return _FAILED
                self._log.warning("cannot read the state topic; retrying", partition=p, error=repr(exc),
                                  retry_in=round(delay, 2))
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            try:
                if cp is None:
                    if bad:
                        self._log.error("no checkpoint of this partition can be restored: its state starts empty "
                                        "at the group's committed offset", partition=p, skipped=sorted(bad))
                    return None if await self._create(p, None, deadline) else _FAILED
                if not await self._create(p, cp.state, deadline):
                    return _FAILED
            except _ClaimAgain as exc:
                self._log.warning("partition claimed by another worker while this one restored it; claiming it "
                                  "again", partition=p, reason=str(exc))
                claimed = False
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            except Exception as exc:
                if cp is None:  # no checkpoint to blame
                    raise
                if isinstance(exc, StaleSnapshotError):
                    # A replaced owner's checkpoint that reached the state topic: the database's
                    # rows were rewound by a newer owner since (engine/stores/aggregation.py, rewind).
                    self._log.warning("checkpoint of a replaced owner skipped: the database moved on without it; "
                                      "trying the one before it", partition=p, checkpoint=cp.id, reason=str(exc))
                else:
                    self._log.exception("checkpoint cannot be restored; trying the one before it", partition=p,
                                        checkpoint=cp.id)
                bad.add(cp.id)
                continue
            if bad:
                self._log.warning("partition restored from an older checkpoint", partition=p, checkpoint=cp.id,
                                  skipped=sorted(bad))
            return cp

    async def _create(self, p: int, state: bytes | None, deadline: float) -> bool:
        """Create partition ``p``'s runtime from ``state``, retrying while the runtime itself
        cannot be created; False when the app stopped for it (logged).  Errors restoring
        ``state`` are raised (the caller tries an older checkpoint).

        The usual cause is the partition's shard lock (an rdbms aggregation with
        @PartitionById), still held by the partition's previous owner.  That is temporary, and
        the same checkpoint is tried again: walking back to an older one would restore state
        the roll-up rows are already past.  Past :data:`SHARD_LOCK_GRACE_S` the holder is a
        replaced worker (this one claimed the partition), and its database session is ended,
        which releases the lock and keeps the replaced worker from writing again
        (:class:`~srota.engine.stores.database.SessionLock`).
        """
        delay = 0.2
        locked_since: float | None = None
        cannot_end = False
        while True:
            try:
                self.partitions.create(p, state)
                return True
            except RuntimeCreationError as exc:
                error = exc
            except StoreReplacedError as exc:
                # A later claim than this worker's was made while this one waited (the partition
                # went to another worker and came back): claim it again, from its newest state.
                raise _ClaimAgain(str(exc)) from None
            now = time.monotonic()
            locked = _lock_conflict(error)
            if locked is not None:
                locked_since = now if locked_since is None else locked_since
                if now - locked_since >= SHARD_LOCK_GRACE_S:
                    try:
                        holder = await asyncio.to_thread(locked.end_holder)
                    except Exception as end_error:
                        if not cannot_end:
                            cannot_end = True
                            self._log.error("cannot end the database session holding the partition's shard lock "
                                            "(a replaced worker's); waiting for it to let go. Let this database "
                                            "user end its own sessions (PostgreSQL: the same user, or "
                                            "pg_signal_backend; MySQL: the same user, or CONNECTION ADMIN)",
                                            partition=p, lock=locked.lock.name, error=repr(end_error))
                    else:
                        if holder is not None:
                            self._log.warning("ended the database session of a replaced worker that still held the "
                                              "partition's shard lock", partition=p, lock=locked.lock.name,
                                              session=holder)
                        delay = 0.05  # the lock goes as the session ends: look again soon
            if now + delay > deadline:
                what = ("its shard lock is still held by another process's database session" if locked is not None
                        else f"its runtime cannot be created ({error})")
                self._stop_failed(f"scale-out: partition {p} cannot be started for "
                                  f"{self._scaleout.restore_timeout_ms / 1000:g} s: {what}")
                return False
            if locked is not None:
                self._log.info("the partition's shard lock is still held by its previous owner; trying the same "
                               "checkpoint again", partition=p, retry_in=round(delay, 2))
            else:
                self._log.warning("cannot create the partition's runtime; retrying", partition=p,
                                  error=str(error), retry_in=round(delay, 2))
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)

    async def _revoke(self, partitions: set[tuple[str, int]]) -> None:
        """Before partitions move: flush outputs, checkpoint and commit.  Their runtimes are
        kept until the assignment: a partition given back, and claimed by nobody else
        meanwhile, goes on with its runtime as it is (no restore); the others are dropped then."""
        numbers = {p for _t, p in partitions}
        single = TRIGGER_PARTITION in numbers and self._single_on
        if single:
            for b in self._single:
                b.source.pause()  # no more MQTT chunks; the checkpoint acknowledges the flushed ones
        try:
            await self.checkpoint_partitions(numbers & set(self.partitions.by_partition))
            kept = numbers & set(self.partitions.by_partition)  # (a fenced one was dropped)
            self._revoked |= kept
            numbers -= kept
            for p in kept:  # checkpointed: their next owner, maybe another worker, takes the locks now
                self.partitions.release_locks(p)
        finally:
            # Even when the checkpoint did not finish (the rebalance timeout): the next owner
            # starts from the last saved checkpoint, which the commits never ran ahead of.
            self._forget(numbers)
            if single:
                # Kept or not, partition 0 is not ours until the assignment says so: the MQTT
                # sources stop now (a task: this may be a cancellation), and the assignment
                # starts them again if it gives partition 0 back (_follow_partition_0 is serial).
                self._single_task = asyncio.create_task(self._follow_partition_0())

    async def _still_claimed(self, p: int) -> bool:
        """True if no other worker claimed partition ``p`` since this one last checked."""
        assert self._state is not None
        try:
            return await self._state.still_claimed(p)
        except Exception as exc:  # cannot tell: restore from the state topic instead
            self._log.warning("cannot check the claim on a partition given back; restoring it", partition=p,
                              error=repr(exc))
            return False

    def _forget(self, numbers: set[int]) -> None:
        """Drop the runtimes and positions of partitions this worker no longer owns."""
        self._revoked -= numbers
        for p in numbers:
            self.partitions.drop(p)
            self._info.pop(p, None)
            if self._state is not None:
                self._state.release(p)
            self._gauges["owned"].labels(self.name, str(p)).set(0)
        for key in [k for k in self._consumed if k[1] in numbers]:
            self._consumed.pop(key, None)
            self._checkpointed.pop(key, None)

    # ------------------------------------------------------------------ checkpoints
    async def checkpoint_partitions(self, numbers: set[int], skip_unchanged: bool = False) -> None:
        """Checkpoint the given partitions (see the module doc), then commit their offsets."""
        state = self._state
        if state is None or not numbers:
            return
        async with self._ckpt_lock:
            started = time.perf_counter()
            taken: list[Checkpoint] = []
            marks: dict[int, dict[str, int]] = {}
            replaced: dict[int, StoreReplacedError] = {}
            # Under the engine gate: with an engine thread (a server-database store) a chunk is
            # sent into the runtime off the loop, and its offsets are recorded after; a snapshot
            # taken meanwhile would hold records its offsets do not cover (counted twice on restore).
            async with self._engine_gate:
                for p in sorted(numbers):
                    rt = self.partitions.by_partition.get(p)
                    info = self._info.get(p)
                    if rt is None or info is None:
                        continue  # gone, or still being restored (its offsets are not recorded yet)
                    offsets = {t: off for (t, q), off in self._consumed.items() if q == p}
                    if skip_unchanged and info.offsets == offsets and info.checkpoints:
                        continue
                    rt.drain()  # events waiting in @Async buffers belong in this checkpoint
                    try:
                        taken.append(Checkpoint(p, rt.snapshot(), offsets, epoch=self._epochs.get(p, 0)))
                    except StoreReplacedError as dropped:  # writes of its state were dropped: no checkpoint
                        replaced[p] = dropped
                        continue
                    marks[p] = _snapshot_marks(rt)
            for p, why in replaced.items():
                await self._replaced(p, why)
            if not taken:
                return
            # Outputs enqueued before the snapshots must be out before the checkpoint is saved.
            await AppHost.drain(self)
            commit: dict[tuple[str, int], int] = {}
            fenced: set[int] = set()
            for cp in taken:
                try:
                    size = await state.save(cp)
                except FencedError as exc:
                    # Replaced (another worker owns the partition now): its state is not ours to
                    # write, and the group will not take our commits either.
                    self._log.error("partition taken over by another worker; its state here is dropped",
                                    partition=cp.partition, reason=str(exc))
                    fenced.add(cp.partition)
                    continue
                info = self._info.get(cp.partition)
                if info is not None:
                    _trim_undo(self.partitions.by_partition.get(cp.partition), info.marks)
                    info.marks = marks.get(cp.partition, {})
                    info.offsets = dict(cp.offsets)
                    info.checkpoint_bytes = size
                    info.state_bytes = len(cp.state)
                    info.checkpoints += 1
                self._gauges["bytes"].labels(self.name, str(cp.partition)).set(size)
                for t, off in cp.offsets.items():
                    self._checkpointed[(t, cp.partition)] = off
                    commit[(t, cp.partition)] = off
            if fenced:
                self._forget(fenced)
                await self._follow_partition_0()
                taken = [cp for cp in taken if cp.partition not in fenced]
            if commit:
                # Saved: now the host may commit these offsets (all their outputs are flushed).
                self._kafka[0].commits.saved(commit)
                await self._commit_ready()
            elapsed = time.perf_counter() - started
            for cp in taken:
                info = self._info.get(cp.partition)
                if info is not None:
                    info.checkpoint_s = elapsed
                self._gauges["seconds"].labels(self.name, str(cp.partition)).set(elapsed)
            self._log.debug("checkpoints saved", partitions=[cp.partition for cp in taken],
                            bytes=sum(len(cp.state) for cp in taken), seconds=round(elapsed, 3))

    # ------------------------------------------------------------------ admin
    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["scaleout"] = {
            "pid": os.getpid(),
            "state_topic": self._state.topic if self._state else None,
            "partitions": {str(p): {"restore_seconds": round(i.restore_s, 4), "restored_from": i.restored_from,
                                    "checkpoint_bytes": i.checkpoint_bytes, "state_bytes": i.state_bytes,
                                    "checkpoint_seconds": round(i.checkpoint_s, 4),
                                    "checkpoints": i.checkpoints, "offsets": i.offsets}
                           for p, i in sorted(self._info.items())},
        }
        return out
