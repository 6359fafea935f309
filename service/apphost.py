"""One app in the service: sources -> mappers -> app -> mappers -> sinks (:class:`AppHost`).

One :class:`AppHost` per app wires the ``@source``/``@sink`` annotations of its streams to
connectors and mappers (:mod:`srota.service.bindings`), moves chunks in and outputs out, and
commits what is safe to commit; :class:`srota.service.host.ServiceHost` runs every app.

Delivery (docs/delivery.md says what is guaranteed and what is not):

* A source chunk is mapped and sent into the app as one chunk, on the event loop thread.
  From the moment its events enter the app to the moment its offsets are noted and its
  commit queued, nothing awaits: a state snapshot sees the whole chunk or none of it.
* Outputs go to per-sink queues (any thread may emit them: timers, ``@Async`` workers); a
  worker per sink maps, publishes and flushes them.
* A source chunk is committed (Kafka offsets, MQTT acknowledgements) only once every output
  enqueued up to the end of that chunk has been flushed by its sink: at-least-once output,
  nothing committed early.  With persistence, a Kafka offset is committed only once a saved
  snapshot includes it as well (DESIGN decision 12; :mod:`srota.service.commits` keeps the
  frontiers, per source and partition).
* A state snapshot is saved (with the offsets of the events it includes, in one SQLite
  transaction) only once the outputs enqueued before it was taken have been flushed: after a
  crash the app resumes from the snapshot and its offsets, and no output of an event the
  snapshot includes is lost.  The state counts each consumed event exactly once.  Before a
  rebalance takes partitions away, the host flushes, saves a snapshot and commits it, so the
  next owner starts where this state ends.
* When a sink queue holds more than ``limits.sink_buffer`` rows the app's sources pause,
  and resume when it has drained to half (bounded memory under a slow sink).
* A payload that does not map, or is larger than ``limits.max_payload_bytes``, goes to the
  stream's error route: its fault stream (``@OnError(action='STREAM')``), a dead-letter
  sink (``dead.letter.ref`` on the ``@source``: the original bytes, the reason in the
  ``srota.error`` header where the transport has headers), or only the log; it is always
  counted.  Dead letters are published before the chunk enters the app, so a dead-letter
  sink that is down holds the source rather than losing them.
* Shutdown: stop taking chunks, wait for the ones in progress, flush, commit, take the final
  snapshot (and commit what it covers), then close the sources (a Kafka consumer leaves its
  group last, so its final commit still counts).
* A kafka sink with ``transactional.id`` publishes each chunk's outputs and commits its
  offsets in one Kafka transaction (exactly-once Kafka to Kafka; untested here).  With
  persistence the offsets follow snapshots instead, and the transactions hold outputs only.
* Apps with a table or aggregation in a server database (``@store(type='rdbms')``) process
  their chunks on a thread of their own, so that database round trips never block the event
  loop; a lock keeps the "no snapshot in the middle of a chunk" rule.  While the database is
  unreachable the chunk waits (its source pauses: nothing is fetched or committed past it);
  an outage longer than the store's ``max.outage`` stops the service with that reason, the
  chunk uncommitted.
* Aggregations stored in SQLite: their store watermark is taken with each snapshot and
  saved with it; a restore rewinds the tables to it (engine/aggregation/store.py).  A store
  whose write queue is over half full pauses the sources.
* Connectors' own state (a kafka sink's sequence number, a file source's processed files:
  ``Source.state``/``Sink.state``, as Siddhi's ``currentState``) is saved with each snapshot,
  a sink's taken when it has published exactly the outputs the snapshot's engine state
  accounts for, and handed back on restore before any connector connects or starts.
"""
from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import structlog
from srota.connectors._distribution import PARTITION_KEY, destination_option
from srota.connectors._options import creation_error
from srota.connectors.base import ConnectionUnavailableError, RejectedError, Sink
from srota.engine import Limits, SiddhiAppRuntime, SiddhiManager
from srota.engine.errorstore import MAPPING, SINK, ErrorEntry, entry_for
from srota.engine.event import Event
from srota.engine.registry import Kind
from srota.engine.stores.database import StoreGoneError, StoreUnavailableError
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Annotation, AnnotationElement, StreamDefinition
from srota.service.bindings import (
    _HOST_OPTIONS,
    _background,
    _connect_with_retry,
    _connector,
    _distributed_sink,
    _options,
    _payload_bytes,
    _payload_size,
    _rows_of,
    _SinkBinding,
    _SourceBinding,
    _transient,
)
from srota.service.commits import CommitTracker
from srota.service.config import ServiceConfig
from srota.service.metrics import Metrics

from srota import (
    connectors,  # noqa: F401 - registers the built-in connectors
    mappers,
)

log = structlog.get_logger("srota.service")

#: The format of a connector's entry in a snapshot ({"format", "type", "state"}); an entry of
#: another format is ignored on restore (that connector starts fresh).
CONNECTOR_STATE_FORMAT = 1


class AppHost:
    """One app with its sources and sinks."""

    def __init__(self, path: Path | None, text: str, config: ServiceConfig, metrics: Metrics,
                 offline: bool = False) -> None:
        self.path = path
        self.config = config
        #: Planned for validation only: server-database stores do not connect.
        self.offline = offline
        self.metrics = metrics
        limits = Limits(max_window_events=config.limits.max_window_events,
                        max_pending_matches=config.limits.max_pending_matches,
                        python_functions=config.limits.python_functions)
        self.runtime: SiddhiAppRuntime = self._create_runtime(text, limits)
        self.name = self.runtime.name
        stats = config.statistics
        level = stats.level_of(self.name)
        setter = getattr(self.runtime, "set_statistics_level", None)
        if level != "off" and setter is not None and self.runtime.statistics() is None:
            setter(level, stats.reporter, stats.interval_ms)  # (an app's own @app:statistics wins)
        #: Processing runs off the event loop (a server-database store: blocking round trips).
        self._engine_thread = ThreadPoolExecutor(1, thread_name_prefix=f"srota-{self.name}") \
            if _uses_server_database(self.runtime) else None
        self._engine_gate = asyncio.Lock()
        #: Why the app stopped by itself (a database outage past its limit), or None.
        self.failed: str | None = None
        #: Called with the reason when the app stops by itself (the ServiceHost stops the process).
        self.on_failure: Any = None
        self.sources: list[_SourceBinding] = []
        self.sinks: list[_SinkBinding] = []
        self.dead_letters: list[Any] = []
        #: Commits wait for saved snapshots (persistence on; see srota.service.commits).
        self.gated = config.persistence.enabled
        #: Saves a snapshot of this app and commits what it covers (set by the ServiceHost
        #: when state is persisted): called before a rebalance takes partitions away.
        self.checkpointer: Any = None
        self._snapshot_chunks: dict[str, int] = {}
        self._early_snapshot: asyncio.Task[None] | None = None
        self._commit_wakeup = asyncio.Event()
        self._commit_lock = asyncio.Lock()  # commits go out in order, or offsets could move back
        self._flushed = asyncio.Condition()  # notified whenever a sink flushed a batch
        self._committer: asyncio.Task[None] | None = None
        self._out_lock = threading.Lock()
        self._paused = False        # by back-pressure from a sink
        self._store_paused = False  # by back-pressure from an aggregation store
        self._agg_stores: dict[str, Any] | None = None
        self._accepting = True      # False once shutdown began
        self._inflight = 0          # chunks inside _on_messages
        self._txn: _SinkBinding | None = None
        self._txn_lock = asyncio.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        #: The most rows any sink queue held (tests and metrics read it).
        self.max_rows_queued = 0
        self.started = False
        self._log = log.bind(app=self.name)
        self._bind()

    def _create_runtime(self, text: str, limits: Limits) -> SiddhiAppRuntime:
        """The app runtime (scale-out overrides this with one runtime per partition)."""
        return manager_for(self.config, limits, self.config.shard_id, self.offline).create_siddhi_app_runtime(text)

    # ------------------------------------------------------------------ wiring
    def _bind(self) -> None:
        for _stream_id, definition in self.runtime.stream_definitions.items():
            if definition.is_fault:
                continue
            for n, ann in enumerate(a for a in definition.annotations if a.name.lower() == "source"):
                self.sources.append(self._bind_source(definition, ann, n))
            for n, ann in enumerate(a for a in definition.annotations if a.name.lower() == "sink"):
                self.sinks.append(self._bind_sink(definition, ann, n))
        transactional = [b for b in self.sinks if b.transactional]
        if transactional:
            # One transaction must hold every output of a chunk and the chunk's offsets.
            if len(self.sinks) != 1:
                raise SiddhiAppCreationError(
                    f"app {self.name}: a kafka sink with transactional.id must be the app's only sink "
                    "(one transaction holds every output of a chunk with the chunk's offsets)")
            if not self.sources or any(not hasattr(b.source, "transaction_offsets") for b in self.sources):
                raise SiddhiAppCreationError(
                    f"app {self.name}: a kafka sink with transactional.id needs kafka sources only")
            self._txn = transactional[0]

    def _bind_source(self, definition: StreamDefinition, ann: Annotation, n: int) -> _SourceBinding:
        type_name, options = _options(ann, self.config.refs)
        name = f"{self.name}/{definition.id}/source{n}"
        source = _connector(Kind.SOURCE, type_name, options, name, ann)
        maps = ann.nested("map")
        mapper = mappers.create_source_mapper(definition.attributes, maps[0] if maps else None, definition.id)
        source.check_map_type(mapper.type_name)
        fault = f"!{definition.id}" if f"!{definition.id}" in self.runtime.stream_definitions else None
        dead_letter = None
        if options.get("dead.letter.ref"):
            dl_ann = Annotation("sink", (AnnotationElement("ref", options["dead.letter.ref"]),), (), ann.pos)
            dl_type, dl_options = _options(dl_ann, self.config.refs)
            dead_letter = _connector(Kind.SINK, dl_type, dl_options, f"{name}/dead-letter", dl_ann)
            self.dead_letters.append(dead_letter)
        return _SourceBinding(definition.id, source, mapper, type_name, name, dead_letter, fault,
                              CommitTracker(gated=self.gated), state_key=f"source:{definition.id}:{n}")

    def _bind_sink(self, definition: StreamDefinition, ann: Annotation, n: int) -> _SinkBinding:
        type_name, options = _options(ann, self.config.refs)
        name = f"{self.name}/{definition.id}/sink{n}"
        distribution = ann.nested("distribution")
        sink: Sink = (_distributed_sink(type_name, options, name, distribution[0]) if distribution
                      else _connector(Kind.SINK, type_name, options, name, ann))
        maps = ann.nested("map")
        mapper = mappers.create_sink_mapper(definition.attributes, maps[0] if maps else None, definition.id)
        for each in (sink, *getattr(sink, "destinations", ())):  # (a @distribution's sinks too)
            each.map_type = (maps[0].get("type") if maps else None) or "passThrough"
            if hasattr(each, "set_attributes"):  # the log sink writes name=value pairs
                each.set_attributes([a.name for a in definition.attributes])
        templates = mappers.option_templates({k: v for k, v in options.items() if k not in _HOST_OPTIONS},
                                             definition.attributes)
        if distribution:
            key = distribution[0].get("partitionKey")
            if key is not None:  # each item carries its key's text for the strategy
                if key not in {a.name for a in definition.attributes}:
                    raise creation_error(f"@distribution partitionKey: stream '{definition.id}' has no "
                                          f"attribute '{key}'", distribution[0].pos)
                templates[PARTITION_KEY] = mappers.option_templates({PARTITION_KEY: "{{" + key + "}}"},
                                                                    definition.attributes)[PARTITION_KEY]
            # A destination's own templates, rendered per event under keys of their own.
            for i, dest in enumerate(distribution[0].nested("destination")):
                own = {destination_option(i, el.key): el.value for el in dest.elements if el.key is not None}
                templates.update(mappers.option_templates(own, definition.attributes))
        on_error = options.get("on.error", "LOG").upper()
        if on_error not in ("LOG", "WAIT", "STREAM", "STORE"):
            raise SiddhiAppCreationError(f"@sink on.error must be LOG, WAIT, STREAM or STORE, not '{on_error}'",
                                         ann.pos.line if ann.pos else None, ann.pos.column if ann.pos else None)
        if on_error == "STREAM" and f"!{definition.id}" not in self.runtime.stream_definitions:
            raise SiddhiAppCreationError(
                f"@sink on.error='STREAM' needs a fault stream: add @OnError(action='STREAM') to {definition.id}",
                ann.pos.line if ann.pos else None, ann.pos.column if ann.pos else None)
        binding = _SinkBinding(definition.id, sink, mapper, templates, on_error, type_name,
                               transactional=bool(getattr(sink, "transactional", False)),
                               state_key=f"sink:{definition.id}:{n}")
        # A grouping mapper writes an output chunk as one message: then the chunks must stay
        # as cut; a mapper that writes each event on its own takes merged ones.
        self.runtime.add_callback(definition.id, functools.partial(self._on_output, binding),
                                  merged_chunks=not getattr(mapper, "groups_events", True))
        return binding

    # ------------------------------------------------------------------ outputs
    def _on_output(self, binding: _SinkBinding, events: list[Any]) -> None:
        """Engine callback (any thread): queue the rows for the sink's worker.

        The rows are queued here, on the emitting thread, so that an output counts as
        enqueued before the engine releases its lock: a snapshot (taken under that lock)
        then never includes the effect of an output that a checkpoint does not wait for.
        """
        rows: list[tuple[Any, ...]]
        # (the binary format writes each event's time; the log sink prints it)
        if binding.mapper.wants_timestamps or binding.sink.wants_timestamps:
            rows = [mappers.TimedRow.of(e.timestamp, e.data) for e in events]
        else:
            rows = [e.data for e in events]
        with self._out_lock:
            binding.queue.append(rows)
            binding.rows_queued += len(rows)
            binding.enqueued_seq += 1
            self.max_rows_queued = max(self.max_rows_queued, binding.rows_queued)
        if threading.get_ident() == self._loop_thread or self._loop is None:
            self._after_enqueue(binding)
        else:  # a timer or @Async thread: the rest belongs to the loop
            self._loop.call_soon_threadsafe(self._after_enqueue, binding)

    def _after_enqueue(self, binding: _SinkBinding) -> None:
        binding.wakeup.set()
        self.metrics.buffer_depth.labels(self.name, binding.stream_id, "out").set(binding.rows_queued)
        if binding.rows_queued > self.config.limits.sink_buffer and not self._paused:
            self._paused = True
            self._log.warning("sink is slow: pausing sources", stream=binding.stream_id,
                              queued=binding.rows_queued)
            for s in self.sources:
                s.source.pause()

    def _take(self, b: _SinkBinding, max_rows: int | None = 1000,
              to_state: bool = True) -> tuple[list[tuple[Any, ...]], int]:
        """Up to ``max_rows`` queued rows (whole entries) and how many entries they are.

        The entries' lengths go to ``b.chunk_sizes``: a grouping sink mapper writes each
        output chunk as one message (see ``mappers.map_for_sink``).  While a checkpoint waits
        for the sink's state (``b.state_at``), no entry past that point is taken (unless
        ``to_state`` is False), so the state is taken between exactly the right outputs.
        """
        batch: list[tuple[Any, ...]] = []
        sizes: list[int] = []
        with self._out_lock:
            limit = len(b.queue)
            if to_state and b.state_at is not None:
                limit = min(limit, max(b.state_at - b.flushed_seq, 0))
            while len(sizes) < limit and (max_rows is None or len(batch) < max_rows):
                entry = b.queue.popleft()
                batch.extend(entry)
                sizes.append(len(entry))
        b.chunk_sizes = sizes
        return batch, len(sizes)

    async def _flushed_batch(self, b: _SinkBinding, rows: int, taken: int) -> None:
        with self._out_lock:
            b.rows_queued -= rows
            b.flushed_seq += taken
        self._take_sink_state(b)
        self.metrics.buffer_depth.labels(self.name, b.stream_id, "out").set(b.rows_queued)
        self._commit_wakeup.set()
        async with self._flushed:
            self._flushed.notify_all()
        if self._paused and self._accepting and \
                all(s.rows_queued <= self.config.limits.sink_buffer // 2 for s in self.sinks):
            self._paused = False
            self._log.info("sinks caught up: resuming sources")
            self._resume_sources()

    def _resume_sources(self) -> None:
        if self._paused or self._store_paused or not self._accepting:
            return
        for s in self.sources:
            s.source.resume()

    def _check_stores(self) -> None:
        """Pause the sources while an aggregation store's write queue is over half full (its
        writer is slow or retrying a failing write), resume once it is under a quarter: the
        queue's own bound would otherwise block the event loop."""
        stores = [st for st in self._stores().values() if hasattr(st, "backlog")]
        if not stores:
            return
        if not self._store_paused and any(st.backlog > st.max_queued // 2 for st in stores):
            self._store_paused = True
            self._log.warning("aggregation store is slow: pausing sources",
                              backlog={st.spec.id: st.backlog for st in stores})
            for b in self.sources:
                b.source.pause()
        elif self._store_paused and all(st.backlog <= st.max_queued // 4 for st in stores):
            self._store_paused = False
            self._log.info("aggregation stores caught up: resuming sources")
            self._resume_sources()

    async def _sink_worker(self, b: _SinkBinding) -> None:
        while True:
            await b.wakeup.wait()
            b.wakeup.clear()
            if b.transactional:
                # Outputs of a chunk go in the chunk's own transaction (see _on_messages);
                # this only publishes outputs that came from no chunk (timers).
                await asyncio.sleep(0.05)
                if not self._inflight and b.queue:
                    await self._transact([])
                continue
            while b.queue:
                batch, taken = self._take(b)
                if not taken:  # waiting at a checkpoint's point: its state is taken, go on
                    self._take_sink_state(b)
                    continue
                await self._publish(b, batch)
                await self._flushed_batch(b, len(batch), taken)

    def _unmapped(self, b: _SinkBinding, rows: list[tuple[Any, ...]], failed: mappers.Failures) -> None:
        """Log (and with ``on.error='STORE'`` keep) the outputs whose message could not be made;
        the batch's other messages still go out, as Siddhi drops only the message that failed."""
        for indexes, exc in failed:
            self.metrics.sink_errors.labels(self.name, b.stream_id).inc()
            self._log.error("output could not be mapped", stream=b.stream_id, reason=str(exc), rows=len(indexes))
            if b.on_error == "STORE":
                self._store_error(b.stream_id, SINK, exc, [rows[i] for i in indexes])

    async def _publish(self, b: _SinkBinding, rows: list[tuple[Any, ...]]) -> None:
        failed: mappers.Failures = []
        items, carried = mappers.map_rows_for_sink(b.mapper, rows, b.templates, b.chunk_sizes, failed)
        if failed:
            self._unmapped(b, rows, failed)
            if not items:
                return
            rows, carried = _rows_of(rows, carried)
        if b.sink.wants_events:
            names = b.mapper.names
            for (_payload, props), indexes in zip(items, carried, strict=True):
                if indexes:  # (a sink's properties may hold any value: Sink.publish takes Mapping[str, Any])
                    cast(dict[str, Any], props)["_event"] = dict(zip(names, rows[indexes[0]], strict=True))
        delay = 0.1
        flushing = False  # every item is handed to the sink; only the flush remains
        while True:
            try:
                if not flushing:
                    await b.sink.publish(items)
                    flushing = True
                await b.sink.flush()
                self.metrics.sink_messages.labels(self.name, b.stream_id, b.transport).inc(len(items))
                return
            except asyncio.CancelledError:
                raise
            except RejectedError as exc:
                # Records the transport can never take: route those alone; the others went out.
                self.metrics.sink_errors.labels(self.name, b.stream_id).inc()
                # (an item may carry several rows: a grouping mapper's array)
                bad = [rows[r] for i in sorted(exc.rejected) if i < len(carried) for r in carried[i]]
                self._log.error("outputs refused by the transport", stream=b.stream_id, events=len(bad),
                                reason=next(iter(exc.rejected.values()), str(exc)))
                if b.on_error == "STREAM" and bad:
                    self.runtime.get_input_handler(f"!{b.stream_id}").send_rows([(*row, exc) for row in bad])
                elif b.on_error == "STORE" and bad:
                    self._store_error(b.stream_id, SINK, next(iter(exc.rejected.values()), str(exc)), bad)
                keep = [i for i in range(len(items)) if i not in exc.rejected]
                items, carried = [items[i] for i in keep], [carried[i] for i in keep]
                rows, carried = _rows_of(rows, carried)
                if not flushing:
                    flushing = True
                    continue
                self.metrics.sink_messages.labels(self.name, b.stream_id, b.transport).inc(len(items))
                return
            except Exception as exc:
                flushing = False
                self.metrics.sink_errors.labels(self.name, b.stream_id).inc()
                published = exc.published if isinstance(exc, ConnectionUnavailableError) else 0
                if published:
                    # The leading items went out; retrying or routing them again would
                    # duplicate them.
                    items, carried = items[published:], carried[published:]
                    rows, carried = _rows_of(rows, carried)
                if b.on_error == "WAIT" and _transient(exc):
                    self._log.warning("publish failed, retrying", stream=b.stream_id, error=str(exc),
                                      retry_in=round(delay, 2))
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 10.0)
                    with contextlib.suppress(Exception):
                        await b.sink.wait_connected(timeout=delay)
                    continue
                if b.on_error == "STREAM":
                    handler = self.runtime.get_input_handler(f"!{b.stream_id}")
                    handler.send_rows([(*row, exc) for row in rows])
                    return
                if b.on_error == "STORE":
                    self._log.error("publish failed, events kept in the error store", stream=b.stream_id,
                                    error=str(exc), events=len(rows))
                    self._store_error(b.stream_id, SINK, exc, rows)
                    return
                self._log.error("publish failed, events dropped", stream=b.stream_id, error=str(exc),
                                events=len(rows))
                return

    async def _transact(self, acks: list[tuple[_SourceBinding, Any]]) -> None:
        """Publish everything queued for the transactional sink and commit ``acks`` with it.

        Retried with back-off until it succeeds (a transactional sink always waits): the
        chunk's events are in the app's state already, so giving up would either lose its
        outputs or, redelivered, count it twice.
        """
        b = self._txn
        assert b is not None
        async with self._txn_lock:
            rows, taken = self._take(b, None, to_state=False)
            failed: mappers.Failures = []
            items = mappers.map_for_sink(b.mapper, rows, b.templates, b.chunk_sizes, failed) if rows else []
            self._unmapped(b, rows, failed)
            offsets: dict[str, dict[Any, int]] = {}
            by_source: list[tuple[Any, dict[Any, int]]] = []
            for src, token in acks:
                group, group_offsets = src.source.transaction_offsets([token])
                offsets.setdefault(group, {}).update(group_offsets)
                by_source.append((src.source, group_offsets))
            delay = 0.1
            while True:
                try:
                    await b.sink.transaction(items, offsets)
                    break
                except asyncio.CancelledError:
                    raise
                except RejectedError as exc:
                    # Records the broker can never take abort the transaction every time: leave
                    # them out (logged, counted) and commit the rest.
                    self.metrics.sink_errors.labels(self.name, b.stream_id).inc()
                    self._log.error("outputs refused by the transport", stream=b.stream_id,
                                    events=len(exc.rejected), reason=next(iter(exc.rejected.values()), str(exc)))
                    items = [item for i, item in enumerate(items) if i not in exc.rejected]
                except Exception as exc:
                    self.metrics.sink_errors.labels(self.name, b.stream_id).inc()
                    self._log.warning("transaction failed, retrying", stream=b.stream_id, error=repr(exc),
                                      retry_in=round(delay, 2))
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 10.0)
                    with contextlib.suppress(Exception):
                        await b.sink.wait_connected(timeout=delay)
            for source, group_offsets in by_source:
                source.transaction_committed(group_offsets)
            if items:
                self.metrics.sink_messages.labels(self.name, b.stream_id, b.transport).inc(len(items))
            await self._flushed_batch(b, len(rows), taken)

    # ------------------------------------------------------------------ inputs
    async def _on_messages(self, b: _SourceBinding, messages: list[Any]) -> None:
        if not self._accepting:
            # Shutdown has begun and the final snapshot may already be taken: leave the chunk
            # unconsumed (Kafka redelivers it after the restart: it is not committed).
            self._log.info("shutting down: chunk left unconsumed", stream=b.stream_id, messages=len(messages))
            return
        self._inflight += 1
        try:
            await self._take_chunk(b, messages)
        finally:
            self._inflight -= 1

    async def _take_chunk(self, b: _SourceBinding, messages: list[Any]) -> None:
        started = time.perf_counter()
        limit = self.config.limits.max_payload_bytes
        # Each message's rows are a chunk of their own, as in Siddhi (the engine merges them
        # where no output changes: engine/coalesce.py).
        rows: list[list[tuple[Any, ...]]] = []
        failures: list[tuple[Any, str, Exception | None]] = []
        self.metrics.source_messages.labels(self.name, b.stream_id, b.transport).inc(len(messages))
        for m in messages:
            payload = m.payload
            size = _payload_size(payload, limit)
            if size > limit:
                self.metrics.oversized.labels(self.name, b.stream_id).inc()
                failures.append((m, f"payload of {size} bytes exceeds the limit of {limit}", None))
                continue
            try:
                rows.append(b.mapper.map(payload, m.properties))
            except mappers.MappingError as exc:
                rows.append(exc.rows)  # the elements that did map (only the failing ones are dropped)
                failures.append((m, str(exc), exc))
            except Exception as exc:  # a mapper bug must not turn one payload into a poison pill
                failures.append((m, f"{type(exc).__name__}: {exc}", exc))
        if failures and b.dead_letter is not None:
            await self._dead_letter(b, failures)
        # From here on nothing awaits until the commit is queued (see the module doc).
        for m, reason, error in failures:
            m.rejected = reason
            self._fault(b, m, reason, error)
        if self._engine_thread is None:
            pending = self._process(b, rows, messages)
        else:
            async with self._engine_gate:  # no snapshot between the chunk's effects and its offsets
                if rows:
                    loop = asyncio.get_running_loop()
                    try:
                        await loop.run_in_executor(self._engine_thread, self._send, b, rows)
                    except StoreUnavailableError as exc:
                        self._stop_failed(str(exc))
                        return
                pending = self._process(b, [], messages)
        if self._txn is not None:
            await self._transact_after(b, pending)
        self._check_stores()
        self.metrics.latency.labels(self.name).observe(time.perf_counter() - started)

    async def replay(self, entry: ErrorEntry) -> int:
        """Send a stored error's events (or payload) back where they failed; returns how many.

        A stream's events go back into the stream, a payload through its source's mapper, a
        sink's outputs to the sink's queue: from there the normal path takes them (a failure
        again is routed again, and so stored again).  Raises ``ValueError`` when the entry
        cannot go back (its stream or sink is gone, the payload still does not map), and
        ``StoreGoneError`` where a store stayed unreachable meanwhile (the app stops then, as
        for a source's chunk; the entry stays to be replayed again).
        """
        if not self._accepting:
            raise ValueError(f"app '{self.name}' takes no events now: "
                             + (f"it stopped ({self.failed})" if self.failed else "it is stopping"))
        if entry.kind == SINK:
            binding = next((s for s in self.sinks if s.stream_id == entry.stream), None)
            if binding is None:
                raise ValueError(f"app '{self.name}' has no sink on stream '{entry.stream}' any more")
            self._on_output(binding, [Event(e["timestamp"], tuple(e["data"])) for e in entry.events])
            return len(entry.events)
        if entry.stream not in self.runtime.stream_definitions:
            raise ValueError(f"app '{self.name}' has no stream '{entry.stream}' any more")
        if entry.kind == MAPPING:
            source = next((s for s in self.sources if s.stream_id == entry.stream), None)
            if source is None or entry.payload is None:
                raise ValueError(f"app '{self.name}' has no source on stream '{entry.stream}' to map the payload")
            try:
                rows = source.mapper.map(entry.payload, {})
            except mappers.MappingError as exc:
                raise ValueError(f"the payload still does not map: {exc}") from None
            now = int(time.time() * 1000)
            stamps = getattr(rows, "timestamps", None) or [now] * len(rows)  # (a binary message's own)
            events = [Event(t, tuple(row)) for t, row in zip(stamps, rows, strict=True)]
        else:
            events = [Event(e["timestamp"], tuple(e["data"])) for e in entry.events]
        handler = self.runtime.get_input_handler(entry.stream)
        try:
            if self._engine_thread is None:
                handler.send_events(events)
            else:
                async with self._engine_gate:
                    await asyncio.get_running_loop().run_in_executor(self._engine_thread, handler.send_events, events)
        except StoreUnavailableError as exc:  # as for a source's chunk: the app stops
            raise self._stopped_by(exc) from exc
        return len(events)

    def use_engine_thread(self) -> None:
        """Process this app's chunks on a thread of its own from now on (a debugger or a pause
        may hold a chunk: the event loop must go on meanwhile)."""
        if self._engine_thread is None:
            self._engine_thread = ThreadPoolExecutor(1, thread_name_prefix=f"srota-{self.name}")

    def _send(self, b: _SourceBinding, groups: list[list[tuple[Any, ...]]]) -> None:
        """Send mapped rows, a group per message, into the app (on the event loop, or the
        app's engine thread)."""
        if not b.mapper.event_grouping_enabled:  # event.grouping.enabled='false': an event a chunk
            groups = [[row] for rows in groups for row in rows]
        self.runtime.get_input_handler(b.stream_id).send_row_groups(groups)

    def _process(self, b: _SourceBinding, rows: list[list[tuple[Any, ...]]],
                 messages: list[Any]) -> tuple[Any, dict[tuple[str, int], int]] | None:
        """Send ``rows`` and note the chunk's offsets, with no await in between (module doc).

        With a transactional sink (no persistence) the offsets are not noted but returned, to
        go in the transaction of the chunk's outputs (:meth:`_transact_after`).
        """
        if rows:
            self._send(b, rows)
        token = messages[-1].ack if messages else None
        entered = getattr(token, "entered", None)
        if entered is not None:  # the source's state may count the chunk now (AckToken.entered)
            entered()
        offsets = self._next_offsets(messages, token)
        if self._txn is not None and token is not None and not self.gated:
            return token, offsets
        with self._out_lock:
            seqs = {id(s): s.enqueued_seq for s in self.sinks}
        b.commits.consumed(offsets, token, seqs, len(messages))
        if self._txn is None:
            self._commit_wakeup.set()
        return None

    async def _transact_after(self, b: _SourceBinding,
                              pending: tuple[Any, dict[tuple[str, int], int]] | None) -> None:
        """The Kafka-transaction tail of a chunk (a transactional sink; see the module doc)."""
        if pending is not None:
            token, offsets = pending
            # The chunk's offsets go in the transaction of its outputs (noted after it, as
            # committed: nothing else commits them).
            await self._transact([(b, token)])
            b.commits.consumed(offsets, None, {})
            b.commits.committed(offsets)
        else:
            # With persistence the offsets wait for a snapshot (decision 12), so they
            # cannot ride in the outputs' transaction: the outputs go out alone.
            await self._transact([])
            self._commit_wakeup.set()

    def _stop_failed(self, reason: str) -> None:
        """The app cannot go on (a database outage past its limit): stop taking chunks."""
        self._accepting = False
        self.failed = reason
        self._log.error("app stopped: " + reason)
        if self.on_failure is not None:
            self.on_failure(reason)

    @staticmethod
    def _next_offsets(messages: list[Any], token: Any) -> dict[tuple[str, int], int]:
        next_offsets = getattr(token, "next_offsets", None)
        if next_offsets is not None:  # covers records the source skipped (duplicates, offsets map)
            return dict(next_offsets())
        parts: dict[tuple[str, int], int] = {}
        for m in messages:
            props = m.properties
            offset = props.get("offset")
            if offset is not None and "partition" in props:
                parts[(str(props.get("topic", "")), int(props["partition"]))] = int(offset) + 1
        return parts

    @property
    def consumed(self) -> dict[str, dict[tuple[str, int], int]]:
        """Source name -> {(topic, partition): next offset} of every event sent into the app."""
        return {b.name: b.commits.positions() for b in self.sources if b.commits.positions()}

    def _fault(self, b: _SourceBinding, message: Any, reason: str, exc: Exception | None) -> None:
        """Count, log and route one payload that did not map (after its dead letter went out)."""
        self.metrics.mapping_errors.labels(self.name, b.stream_id).inc()
        where = {k: message.properties.get(k) for k in ("topic", "partition", "offset") if k in message.properties}
        if b.fault_stream is not None:
            attributes = self.runtime.stream_definitions[b.stream_id].attributes
            error = exc if exc is not None else ValueError(reason)
            self.runtime.get_input_handler(b.fault_stream).send([*([None] * len(attributes)), error])
        elif self._stores_errors(b.stream_id):
            self._store_error(b.stream_id, MAPPING, reason, payload=_payload_bytes(message.payload))
        self._log.warning("payload could not be mapped", stream=b.stream_id, reason=reason, **where)

    def _stores_errors(self, stream_id: str) -> bool:
        junction = self.runtime.context.junctions.get(stream_id)
        return bool(getattr(junction, "store_errors", False))

    def _store_error(self, stream_id: str, kind: str, cause: BaseException | str,
                     rows: list[tuple[Any, ...]] | None = None, payload: bytes | None = None) -> None:
        """Keep failed rows or a payload in the error store (a failing store is logged)."""
        events = [Event(int(time.time() * 1000), row) for row in rows or []]
        try:
            self.runtime.context.error_store.add(entry_for(self.name, stream_id, kind, cause, events, payload))
            self.metrics.errors_stored.labels(self.name, stream_id, kind).inc()
        except Exception as exc:  # noqa: BLE001 -- the error route must not fail the chunk
            self._log.error("the error store failed; events only logged", stream=stream_id, kind=kind,
                            error=str(exc), events=len(rows or []))

    async def _dead_letter(self, b: _SourceBinding, failures: list[tuple[Any, str, Exception | None]]) -> None:
        """Publish the original payloads of ``failures`` to the dead-letter sink, each once.

        The reason and where the payload came from travel as ``headers`` (Kafka record
        headers; transports without headers keep only the payload).  The message's own
        transport properties are not passed on: its ``topic`` would override the sink's.

        One dead letter at a time, each flushed before the next: a retry after a transient
        failure then repeats only the one that failed, never those already out.  A dead
        letter that can never be published (larger than the broker takes) is logged and
        counted with its reason, and the others go on.
        """
        for m, reason, _exc in failures:
            headers = {"srota.error": reason, "srota.app": self.name, "srota.stream": b.stream_id}
            where = {}
            for k in ("topic", "partition", "offset"):
                if k in m.properties:
                    headers[f"srota.source.{k}"] = str(m.properties[k])
                    where[k] = m.properties[k]
            await self._dead_letter_one(b, (m.payload, {"headers": headers}), where)

    async def _dead_letter_one(self, b: _SourceBinding, item: tuple[Any, dict[str, Any]],
                               where: dict[str, Any]) -> None:
        delay = 0.1
        while True:
            try:
                await b.dead_letter.publish([item])
                await b.dead_letter.flush()
                self.metrics.dead_letters.labels(self.name, b.stream_id).inc()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not self._accepting:
                    raise  # shutting down: the chunk stays unconsumed
                self.metrics.sink_errors.labels(self.name, b.stream_id).inc()
                if not _transient(exc):  # retrying cannot help (e.g. a payload the sink cannot take)
                    reason = next(iter(exc.rejected.values())) if isinstance(exc, RejectedError) else repr(exc)
                    kind = type(exc.__cause__ or exc).__name__ if not isinstance(exc, RejectedError) \
                        else reason.split(":", 1)[0]
                    self.metrics.dead_letters_lost.labels(self.name, b.stream_id, kind).inc()
                    self._log.error("dead letter can never be published; it is only logged", stream=b.stream_id,
                                    reason=reason, bytes=_payload_size(item[0], 1 << 62), **where)
                    return
                self._log.warning("dead-letter publish failed, retrying (the source waits)", stream=b.stream_id,
                                  error=str(exc), retry_in=round(delay, 2))
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)
                with contextlib.suppress(Exception):
                    await b.dead_letter.wait_connected(timeout=delay)

    async def _commit_loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):  # at least once a second, for the lag gauge
                    await self._commit_wakeup.wait()
            self._commit_wakeup.clear()
            await self._commit_ready()
            self._check_stores()
            self._update_lag()

    def _update_lag(self) -> None:
        """Set ``srota_consumer_lag`` from sources that know it (Kafka: from fetch responses)."""
        for b in self.sources:
            lag = getattr(b.source, "lag", None)
            if lag is None:
                continue
            for where, n in lag().items():
                topic, _, partition = where.rpartition("[")
                self.metrics.consumer_lag.labels(self.name, topic, partition.rstrip("]")).set(n)

    async def _commit_ready(self) -> None:
        """Commit what each source's tracker says is due (see srota.service.commits).

        Sources with offsets (Kafka) commit offsets; others (MQTT) acknowledge the tokens of
        the chunks whose outputs are flushed.
        """
        async with self._commit_lock:
            flushed = {id(s): s.flushed_seq for s in self.sinks}

            def passed(seqs: dict[int, int]) -> bool:
                return all(flushed[k] >= v for k, v in seqs.items())

            for b in self.sources:
                tokens = b.commits.flushed(passed)
                if b.commits.held >= self.config.persistence.held_acks:
                    self._snapshot_soon()
                commit_offsets = getattr(b.source, "commit_offsets", None)
                try:
                    if commit_offsets is not None:
                        due = b.commits.due()
                        if due:
                            b.commits.committed(await commit_offsets(due))
                    elif tokens:
                        await b.source.commit(tokens)
                except Exception as exc:  # the next commit covers these offsets again
                    self._log.warning("commit failed", stream=b.stream_id, error=str(exc))

    def _snapshot_soon(self) -> None:
        """Take a snapshot now, not at the next interval: MQTT acknowledgements wait for one,
        and the broker stops sending once its in-flight window is full of unacknowledged messages."""
        if self.checkpointer is None or (self._early_snapshot is not None and not self._early_snapshot.done()):
            return

        async def snapshot() -> None:
            try:
                await self.checkpointer(self)
            except Exception as exc:  # the interval's snapshot tries again
                self._log.warning("early snapshot for held acknowledgements failed", error=repr(exc))

        self._early_snapshot = asyncio.create_task(snapshot(), name=f"srota-early-snapshot-{self.name}")

    def saved(self, offsets: dict[str, dict[tuple[str, int], int]]) -> None:
        """The snapshot of the last :meth:`checkpoint`, with these offsets (source name ->
        partition -> next offset), is saved."""
        chunks, self._snapshot_chunks = self._snapshot_chunks, {}
        for b in self.sources:
            b.commits.saved(offsets.get(b.name, {}), chunks.get(b.name))
        self._commit_wakeup.set()

    async def _wait_flushed(self, seqs: dict[int, int]) -> None:
        """Wait until every sink has flushed its outputs up to ``seqs`` (id(sink) -> seq)."""
        async with self._flushed:
            await self._flushed.wait_for(
                lambda: all(s.flushed_seq >= seqs.get(id(s), 0) for s in self.sinks))

    def _enqueued(self) -> dict[int, int]:
        with self._out_lock:
            return {id(s): s.enqueued_seq for s in self.sinks}

    async def _on_revoke(self, b: _SourceBinding, partitions: set[tuple[str, int]]) -> None:
        """Before a rebalance moves ``partitions``: flush, save a snapshot (when state is
        persisted) and commit what was processed, so the next owner starts where it ends.

        The partitions stay in the snapshots' offsets (decision 12 holds for every partition
        ever assigned): if they come back, or the process restarts, the state resumes there.
        """
        async def flush_save_commit() -> None:
            try:
                await self.drain()
                if self.gated and self.checkpointer is not None:
                    await self.checkpointer(self)
            except Exception as exc:  # logged here: the source may have stopped waiting
                self._log.warning("flush, snapshot and commit before a rebalance failed; records will be "
                                  "redelivered", stream=b.stream_id, error=repr(exc))

        # Shielded: if the source stops waiting (half the rebalance timeout), the work goes on
        # and its commit still lands, usually before the next owner reads the group's offsets.
        task = asyncio.create_task(flush_save_commit(), name=f"srota-revoke-{self.name}")
        _background.add(task)
        task.add_done_callback(_background.discard)
        await asyncio.shield(task)

    async def checkpoint(self) -> tuple[bytes, dict[str, dict[tuple[str, int], int]], dict[str, int]]:
        """The app's state, the offsets of the events it includes and the watermarks of its
        aggregation stores (:meth:`checkpoint_with_connectors` without the connectors' state)."""
        state, offsets, marks, _states = await self.checkpoint_with_connectors()
        return state, offsets, marks

    async def checkpoint_with_connectors(self) -> tuple[bytes, dict[str, dict[tuple[str, int], int]],
                                                          dict[str, int], dict[str, dict[str, Any]]]:
        """The app's state, the offsets of the events it includes, the watermarks of its
        aggregation stores and its connectors' own state, once their outputs are out and their
        store writes stored.

        Taken without an await in between (no chunk can be half-way in), then held back until
        every output enqueued before it has been flushed: a snapshot saved earlier would, after
        a crash, resume past events whose outputs were never published.  The watermarks are
        taken under the engine lock with the state, so that a restore can undo exactly the
        store writes the state does not account for (see engine/aggregation/store.py).

        Connectors' state (``Source.state``, ``Sink.state``) is keyed by ``state_key`` and
        wrapped as ``{"format": 1, "type": transport, "state": ...}`` (see
        :mod:`srota.service.persistence`).  A source's is taken with the engine state; a
        sink's when the sink has flushed exactly the outputs enqueued before the engine state
        was taken (its position in the queue is noted under the engine lock too).

        A database store that stays unreachable past its ``max.outage`` meanwhile stops the app,
        as it does for a chunk, and ``StoreGoneError`` says so (no snapshot then).
        """
        try:
            return await self._checkpoint_with_connectors()
        except StoreUnavailableError as exc:
            raise self._stopped_by(exc) from exc

    async def _checkpoint_with_connectors(self) -> tuple[bytes, dict[str, dict[tuple[str, int], int]],
                                                           dict[str, int], dict[str, dict[str, Any]]]:
        self.runtime.drain()  # events waiting in @Async buffers belong in this snapshot
        stores = self._stores()
        stateful = [b for b in self.sinks if getattr(type(b.sink), "state", Sink.state) is not Sink.state]

        def take() -> tuple[bytes, dict[str, int]]:
            with self.runtime.context.lock:
                snapshot = self.runtime.snapshot(), {name: store.watermark() for name, store in stores.items()}
                with self._out_lock:  # outputs are enqueued under the engine lock: this is the state's point
                    for b in stateful:
                        b.state_at, b.state_taken = b.enqueued_seq, None
                return snapshot

        async with self._engine_gate:  # not between a chunk's effects and its offsets
            if self._engine_thread is None:
                state, marks = take()
            else:  # a database store's snapshot waits for its writes: not on the event loop
                state, marks = await asyncio.get_running_loop().run_in_executor(self._engine_thread, take)
            offsets = self.consumed
            # What the snapshot includes of sources without offsets (MQTT): their acknowledgements wait for it.
            self._snapshot_chunks = {b.name: b.commits.chunks() for b in self.sources}
            states = {b.state_key: _connector_entry(b.transport, _state_of(b.source)) for b in self.sources}
        for b in stateful:
            self._take_sink_state(b)  # already flushed to its point: nothing more will come
        for store in stores.values():
            await asyncio.to_thread(store.flush)
        await self._wait_flushed(self._enqueued())
        for b in stateful:
            states[b.state_key] = _connector_entry(b.transport, b.state_taken)
        return state, offsets, marks, {k: v for k, v in states.items() if v is not None}

    async def restore_state(self, state: bytes) -> list[str]:
        """Restore a snapshot into the running app, between chunks (the Siddhi Runner API's
        ``restore``); returns the ids of elements that could not be restored.  A database
        store that stays unreachable meanwhile stops the app (``StoreGoneError``)."""
        try:
            async with self._engine_gate:
                if self._engine_thread is None:
                    return self.runtime.restore(state)
                return await asyncio.get_running_loop().run_in_executor(self._engine_thread, self.runtime.restore,
                                                                        state)
        except StoreUnavailableError as exc:
            raise self._stopped_by(exc) from exc

    def _timer_failed(self, exc: BaseException) -> None:
        """A timer of the app raised (on the scheduler's thread, or in a playback chunk): a
        store outage stops the app as a chunk's does; anything else is logged, as the
        scheduler logs it without this hook, and the timers go on."""
        if not isinstance(exc, StoreUnavailableError):
            self._log.error("timer callback failed", exc_info=exc)
            return
        self._log.error("a timer met a database outage", error=str(exc))
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # (the loop closed: the app is gone anyway)
                self._loop.call_soon_threadsafe(self._stop_failed, str(exc))

    def _stopped_by(self, exc: StoreUnavailableError) -> StoreGoneError:
        """Stop the app for a store outage met outside a source's chunk (a snapshot, a restore,
        a replay), as :meth:`_stop_failed` does for a chunk, and say so to the caller, which
        answers one request (an ``Exception``, not the outage's ``BaseException``)."""
        self._stop_failed(str(exc))
        return StoreGoneError(f"app '{self.name}' stopped: {exc}")

    def _take_sink_state(self, b: _SinkBinding) -> None:
        """Take the sink's state if it has just flushed up to a checkpoint's point."""
        if b.state_at is not None and b.flushed_seq >= b.state_at:
            b.state_at = None
            b.state_taken = _state_of(b.sink)

    def _stores(self) -> dict[str, Any]:
        """The persistent (SQLite) stores of the app's aggregations, by aggregation id."""
        if self._agg_stores is None:  # aggregations are all defined when the app is created
            self._agg_stores = {name: agg.store for name, agg in self.runtime.context.aggregations.items()
                                if getattr(agg.store, "persistent", False)}
        return self._agg_stores

    def trim_stores(self, marks: dict[str, int]) -> None:
        """Forget store undo rows up to ``marks`` (no kept snapshot is older)."""
        for name, store in self._stores().items():
            if name in marks:
                store.trim(marks[name])

    # ------------------------------------------------------------------ lifecycle
    async def start(self, restore: tuple[bytes | None, dict[str, Any]] | None = None,
                    marks: dict[str, int] | None = None,
                    connector_states: dict[str, dict[str, Any]] | None = None) -> None:
        """Restore the connectors' state, open sinks, restore state, start the app, then start
        consuming.

        ``restore`` is ``(snapshot, {source name: {(topic, partition): next offset}})``:
        sources that can (Kafka) start at the offsets saved with the snapshot.  ``marks`` are
        the aggregation store watermarks saved with it: writes after them are undone (the
        events that made them are consumed again).  ``connector_states`` is the connectors' state
        saved with it (by ``state_key``; see :meth:`checkpoint_with_connectors`): each
        connector with an entry gets it back before it connects or starts; entries no
        connector has are ignored.
        """
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        if restore is not None and restore[0] is not None and connector_states:
            for key, transport, connector in [*((b.state_key, b.transport, b.sink) for b in self.sinks),
                                              *((b.state_key, b.transport, b.source) for b in self.sources)]:
                if key in connector_states:
                    _restore_connector(self._log, key, transport, connector, connector_states[key])
        for sink in [*(b.sink for b in self.sinks), *self.dead_letters]:
            await _connect_with_retry(sink, self._log)
        for out in self.sinks:
            out.task = asyncio.create_task(self._sink_worker(out), name=f"srota-sink-{out.stream_id}")
        self._committer = asyncio.create_task(self._commit_loop(), name=f"srota-commit-{self.name}")
        if restore is not None and restore[0] is not None:
            skipped = self.runtime.restore(restore[0])
            self._log.info("state restored", skipped=skipped)
            for name, store in self._stores().items():
                if marks and name in marks:
                    await asyncio.to_thread(store.rewind, marks[name])
            for b in self.sources:
                offsets = restore[1].get(b.name)
                if offsets:
                    b.commits.restore(offsets)
                seek = getattr(b.source, "seek_on_start", None)
                if offsets and seek is not None:
                    seek(offsets)
        for b in self.sources:
            if hasattr(b.source, "on_revoke"):
                b.source.on_revoke = functools.partial(self._on_revoke, b)
        self.runtime.context.scheduler.on_error = self._timer_failed
        self.runtime.start()
        if self.checkpointer is not None and (restore is None or restore[0] is None):
            # State is persisted but there is no snapshot yet: save one of the empty state
            # before the first event, so that a crash before the first periodic snapshot
            # restores this one (its store watermarks undo the writes of the lost run).
            await self.checkpointer(self)
        for b in self.sources:
            await b.source.start(functools.partial(self._on_messages, b))
        self.started = True
        self._log.info("app started", sources=len(self.sources), sinks=len(self.sinks))

    def is_ready(self) -> bool:
        return self.started and all(getattr(b.source, "ready", True) for b in self._running_sources()) and \
            all(getattr(b.sink, "connected", True) for b in self.sinks)

    def _running_sources(self) -> list[Any]:
        """The sources this host runs (all of them; under scale-out, some run on one worker)."""
        return self.sources

    async def quiesce(self) -> None:
        """Stop taking chunks (sources paused) and wait for the ones being processed."""
        self._accepting = False
        for b in self.sources:
            b.source.pause()
        # A chunk held by the debugger or a pause would never finish: let it go.
        for release in (getattr(self.runtime, "resume", None), getattr(self.runtime, "undebug", None)):
            if release is not None:  # (scale-out's per-partition runtimes have no debugger)
                release()
        while self._inflight:
            await asyncio.sleep(0.01)

    async def stop_sources(self) -> None:
        for b in self.sources:
            with contextlib.suppress(Exception):
                await b.source.stop()

    async def drain(self) -> None:
        """Wait until every sink has flushed what is queued now, then commit."""
        await self._wait_flushed(self._enqueued())
        await self._commit_ready()

    async def commit(self) -> None:
        """Commit what is due now (see :mod:`srota.service.commits`)."""
        await self._commit_ready()

    async def close(self) -> None:
        self.runtime.shutdown()
        if self._engine_thread is not None:
            self._engine_thread.shutdown(wait=False)
        for b in self.sinks:
            if b.task is not None:
                b.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await b.task
        for task in (self._committer, self._early_snapshot):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        for sink in [*(b.sink for b in self.sinks), *self.dead_letters]:
            with contextlib.suppress(Exception):
                await sink.close()
        self.started = False

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "file": str(self.path) if self.path else None,
            "streams": sorted(s for s in self.runtime.stream_definitions if not s.startswith("!")),
            "queries": sorted(self.runtime.queries),
            "sources": [{"stream": b.stream_id, "type": b.transport, "ready": getattr(b.source, "ready", True)}
                        for b in self.sources],
            "sinks": [{"stream": b.stream_id, "type": b.transport, "queued": b.rows_queued}
                      for b in self.sinks],
        }


def _state_of(connector: Any) -> dict[str, Any] | None:
    """A connector's own state (None for one that keeps none or has no ``state``)."""
    state = getattr(connector, "state", None)
    return state() if state is not None else None


def _connector_entry(transport: str, state: dict[str, Any] | None) -> dict[str, Any] | None:
    """A connector's state as saved in a snapshot, or None when it keeps none."""
    if state is None:
        return None
    return {"format": CONNECTOR_STATE_FORMAT, "type": transport, "state": state}


def _restore_connector(log: Any, key: str, transport: str, connector: Any, entry: Any) -> None:
    """Hand a connector its saved state; an entry of another format or transport is ignored."""
    restore = getattr(connector, "restore_state", None)
    if restore is None or not isinstance(entry, dict):
        return
    if entry.get("format") != CONNECTOR_STATE_FORMAT or entry.get("type") != transport \
            or not isinstance(entry.get("state"), dict):
        log.warning("connector state not restored (saved by another connector or version)", connector=key,
                    saved_type=entry.get("type"), saved_format=entry.get("format"))
        return
    try:
        restore(entry["state"])
    except Exception as exc:  # the connector starts fresh rather than the app not at all
        log.error("connector state could not be restored; starting it fresh", connector=key, error=repr(exc))


def manager_for(config: ServiceConfig, limits: Limits | None, shard_id: str | None,
                offline: bool = False, fence_epoch: int | None = None) -> SiddhiManager:
    """A SiddhiManager with the service's shard id, datasources and extensions' parameters
    (``fence_epoch``: see :class:`SiddhiManager`)."""
    from srota.service.errors import ServiceErrorStore

    manager = SiddhiManager(limits=limits, shard_id=shard_id, offline=offline,
                            error_store=ServiceErrorStore(config.errors_database), fence_epoch=fence_epoch)
    for name, options in config.datasources.items():
        manager.set_data_source(name, **{("url" if k == "jdbc.url" else k): v for k, v in options.items()})
    for extension, properties in config.extensions.items():
        manager.set_extension_properties(extension, properties)
    return manager


def _uses_server_database(runtime: Any) -> bool:
    """True when a table or aggregation of the app lives in a server database (rdbms)."""
    ctx = getattr(runtime, "template", runtime).context  # scale-out: the partitions' template
    tables = getattr(ctx, "tables", {})
    aggregations = getattr(ctx, "aggregations", {})
    return any(getattr(t, "sql_backed", False) for t in tables.values()) or any(
        getattr(getattr(a, "store", None), "rewinds_with_snapshot", False) for a in aggregations.values())
