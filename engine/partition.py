"""Partitions: ``[@purge(...)] partition with (key of S, ...) begin <queries> end``.

Like Siddhi's ``PartitionRuntime``: every partition key gets its own instance of every query
of the partition (windows, aggregates, patterns: all state is per key), created lazily when
the first event with that key arrives, by planning the queries again through
:func:`engine.query.build_query` with a :class:`PartitionSources` that

* routes the partitioned streams to the instance of the event's key (a value partition keys
  by an expression; a range partition sends an event to every range whose condition holds,
  and drops it when none does);
* keeps inner streams ``#S`` local to the instance;
* subscribes the instance directly to every other (global) stream, so a global event reaches
  every instance that exists at that time.

Consecutive events of a chunk with the same key travel together (a run), so outputs of
different keys interleave in arrival order.  The router of a value partition is generated
code: one dictionary lookup per run finds what to do with the key's events, and for the
most common shape (the stream's only reader is ``from S#window.length(n) select
<aggregates>``, with or without the window, without group by) it runs the key's window and
selector in its own loop instead of calling through the instance's processors, with the
same state objects and the same output chunks (see :class:`_Fusion`); where nothing
downstream cares how the output stream's events are grouped (engine/coalesce.py), the rows
of a chunk's runs go on together as one chunk (see :func:`_fused_loop`).
``@purge(enable='true', interval='1 min', idle.period='1 hour')`` removes the instances
whose key saw no event for ``idle.period`` (checked every ``interval`` on the app's
scheduler), so memory follows the number of active keys, not the number of keys ever seen.

Elements of an instance register as ``partition<N>/<key>/<query>/...``; the partition
itself registers as ``partition<N>`` and snapshots its keys, so a restore first re-creates
the instances, then their elements find their state.
"""
from __future__ import annotations

import builtins
import dis
import logging
import re
from collections import deque
from collections.abc import Callable, Iterator
from itertools import islice
from types import CodeType
from typing import Any, NamedTuple

from srota.engine import columnar
from srota.engine.aggregators import _Avg, _Count, _Sum
from srota.engine.clock import next_period
from srota.engine.codegen import CodeGen
from srota.engine.debugger import QueryTerminal
from srota.engine.event import Event, RawEvent
from srota.engine.expression import BASE_NAMESPACE, ExpressionCompiler, error_at
from srota.engine.junction import StreamJunction
from srota.engine.output import QueryOutput
from srota.engine.planning import Sources, check_schema
from srota.engine.query import QueryRuntime, build_query, query_output_event_type
from srota.engine.scope import StreamScope
from srota.engine.selector import DeferredParts, inline_values
from srota.engine.timeutil import parse_duration
from srota.engine.types import java_double_str, java_float32_str
from srota.engine.windows.length import LengthWindow
from srota.grammar.model import (
    Attribute,
    AttrType,
    InsertIntoStream,
    JoinInputStream,
    OutputEventType,
    Partition,
    Query,
    RangePartitionType,
    SingleInputStream,
    StreamDefinition,
    ValuePartitionType,
    WindowHandler,
    find_annotation,
)

_log = logging.getLogger("srota.engine")

Emit = Callable[[list[Event]], None]
_VALIDATION = object()

#: Let the routers run eligible key instances in their own loop (see :class:`_Fusion`);
#: tests turn it off to compare with the instances' own processors.
FUSE = True

# What the router does with a run of one key's events (the first item of a route record):
# a record is (mode, instance, junction, receiver or window, selector, output, target, window
# length, target junction): the last is the stream junction a fused query's target dispatches
# to (None if it is no plain stream), which lets the router merge the runs' outputs (see
# _router_body)
_DROP = -1      # nothing (a null key, or no query of the instance reads the stream)
_DELIVER = 0    # hand the run to the instance's receiver (or its junction, if several)
_FUSED = 1      # the router runs the instance's window and selector itself (see _Fusion)
_NO_KEY = (_DROP, None, None, None, None, None, None, 0, None)


class _Instance:
    """The queries of one partition key, with its inner and routed stream junctions."""

    def __init__(self, key: Any, prefix: str) -> None:
        self.key = key
        self.prefix = prefix
        self.queries: list[QueryRuntime] = []
        self.routed: dict[str, StreamJunction] = {}
        self.inner: dict[str, StreamJunction] = {}
        self.subscriptions: list[tuple[Any, Emit]] = []
        self.start_hooks: list[Callable[[], None]] = []
        self.stop_hooks: list[Callable[[], None]] = []
        self.last_seen = 0


class PartitionSources(Sources):
    """Sources of one key instance: inner streams local, partitioned streams routed per key."""

    def __init__(self, partition: PartitionRuntime, instance: _Instance | None) -> None:
        super().__init__(partition.ctx)
        self.partition = partition
        self.instance = instance
        self.prefix = instance.prefix if instance is not None else f"{partition.name}/~validation/"
        #: whether the query being planned (by the validation instance) is a join
        self.joining = False

    def lookup(self, stream_id: str, is_inner: bool, is_fault: bool, node: Any) -> tuple[str, Any]:
        if is_inner:
            definition = self.partition.inner_defs.get(stream_id)
            if definition is None:
                raise error_at(f"inner stream '#{stream_id}' is not defined: no query of the partition "
                               f"inserts into it before this one", node)
            return "stream", definition
        return super().lookup(stream_id, is_inner, is_fault, node)

    def subscribe(self, stream_id: str, is_inner: bool, is_fault: bool, receiver: Emit) -> None:
        inst = self.instance
        if inst is None:
            # the validation instance plans the queries but never runs; it counts who reads
            # each partitioned stream (a router fuses a stream's only reader into its loop)
            # and notes the global streams the queries read (see _GlobalFanout)
            if not is_inner and not is_fault and stream_id in self.partition.routed_streams:
                if self.joining and stream_id in self.ctx.windows:
                    # a join's side on a named window the partition is keyed on finds in the
                    # whole window and takes its key's events to trigger, but makes no
                    # reader: without another query reading the window, Siddhi routes none
                    # of its events and makes no key
                    return
                readers = self.partition._readers
                readers[stream_id] = readers.get(stream_id, 0) + 1
            elif not is_inner and (is_fault or stream_id not in self.partition.routed_streams):
                self.partition._global_names.setdefault(("!" if is_fault else "") + stream_id, None)
            return
        if is_inner:
            self._inner(stream_id).subscribe(receiver, self.owner)
            return
        if not is_fault and stream_id in self.partition.routed_streams:
            junction = inst.routed.get(stream_id)
            if junction is None:
                source = self.partition.source_junction(stream_id)
                junction = StreamJunction(source.definition, self.ctx)
                # a key's copy of the stream faults where the stream does (@OnError)
                junction.fault_junction = source.fault_junction
                junction.store_errors = source.store_errors
                inst.routed[stream_id] = junction
            junction.subscribe(receiver, self.owner)
            return
        target = self.partition._fanouts[("!" if is_fault else "") + stream_id]
        target.subscribe(inst, receiver, self.owner)
        inst.subscriptions.append((target, receiver))

    def _inner(self, stream_id: str) -> StreamJunction:
        inst = self.instance
        definition = self.partition.inner_defs[stream_id]
        if inst is None:
            return StreamJunction(definition, self.ctx)
        junction = inst.inner.get(stream_id)
        if junction is None:
            junction = StreamJunction(definition, self.ctx)
            inst.inner[stream_id] = junction
        return junction

    def output_junction(self, stream_id: str, attributes: list[Attribute], is_inner: bool,
                        is_fault: bool, node: Any) -> StreamJunction:
        if not is_inner:
            return super().output_junction(stream_id, attributes, is_inner, is_fault, node)
        defs = self.partition.inner_defs
        existing = defs.get(stream_id)
        if existing is None:
            defs[stream_id] = StreamDefinition(stream_id, tuple(attributes))
        else:
            check_schema(existing, attributes, node)
        return self._inner(stream_id)


class PartitionQuery:
    """What the app sees of one partitioned query: its name and the callbacks of all keys.

    Key instances are told to call :meth:`forward` only once somebody added a callback, so a
    partition nobody listens to pays nothing for it.
    """

    def __init__(self, name: str, runtime: QueryRuntime, partition: PartitionRuntime, position: int) -> None:
        self.name = name
        self.query = runtime.query
        self.output_attributes = runtime.output_attributes
        self.callbacks: list[Any] = []
        self.stop_hooks: list[Callable[[], None]] = []
        self.elements: dict[str, Any] = {}
        self._partition = partition
        self._position = position
        self.output = _PartitionOutput(self)
        self.purged_events_out = 0
        #: rows a fused router merged into one chunk (counted here, not per key instance)
        self.merged_events_out = 0

    def instance_runtimes(self) -> list[QueryRuntime]:
        """This query's runtime in every live key instance."""
        return [inst.queries[self._position] for inst in self._partition.instances.values()
                if len(inst.queries) > self._position]

    def add_callback(self, fn: Any) -> None:
        """Call ``fn`` with every key's outputs.  Not reached through ``add_query_callback``,
        which refuses a query inside a partition as Siddhi does; tests watch the keys with it."""
        if not self.callbacks:
            for runtime in self.instance_runtimes():
                runtime.add_callback(self.forward)
        self.callbacks.append(fn)

    def attach(self, runtime: QueryRuntime) -> None:
        """Wire a new key instance of this query."""
        if self.callbacks:
            runtime.add_callback(self.forward)

    def forward(self, timestamp: int, current: Any, expired: Any) -> None:
        for cb in self.callbacks:
            cb(timestamp, current, expired)


class _PartitionOutput:
    """``events_out`` of a partitioned query: the sum over its key instances (for metrics)."""

    def __init__(self, query: PartitionQuery) -> None:
        self._query = query

    @property
    def events_out(self) -> int:
        q = self._query
        return q.purged_events_out + q.merged_events_out + sum(r.output.events_out for r in q.instance_runtimes())


class PartitionRuntime:
    """One partition: key routing, lazily created key instances, idle-key purging."""

    def __init__(self, partition: Partition, ctx: Any, index: int) -> None:
        self.partition = partition
        self.ctx = ctx
        self.index = index
        self.name = f"partition{index}"
        self.inner_defs: dict[str, StreamDefinition] = {}
        self.instances: dict[Any, _Instance] = {}
        self.routed_streams: dict[str, Callable[..., Any]] = {}
        self._started = False
        self._purge_handle: int | None = None
        self._query_names: list[str] = []
        self._queries: list[PartitionQuery] = []
        self._readers: dict[str, int] = {}
        self._fusions: dict[str, _Fusion] = {}
        #: per partitioned stream: key -> what the router does with that key's events
        self._records: dict[str, dict[Any, tuple[Any, ...]]] = {}
        #: global streams the queries read (in the order first read), and their fan-outs
        self._global_names: dict[str, None] = {}
        self._fanouts: dict[str, _GlobalFanout] = {}
        self._plan_keys()
        self._validate()
        self._plan_purge()
        for name in self._global_names:
            # one receiver per global stream or named window, subscribed now: the partition's
            # place among the stream's readers is where the partition stands in the app
            # (Siddhi's PartitionStreamReceiver of a stream without a partition key)
            window = ctx.windows.get(name)
            junction = window.output_junction if window is not None else ctx.junctions[name]
            fanout = self._fanouts[name] = _GlobalFanout(self, junction)
            junction.subscribe(fanout, None, chunk_invariant=True)  # (no key yet)
        # (a partitioned stream that no query of the partition reads gets no router: Siddhi has
        # no PartitionStreamReceiver for it, so its events make no key instance, which would
        # then receive the global streams the queries read)
        self._routers: dict[str, Emit] = {stream_id: self._make_router(stream_id)
                                          for stream_id in self.routed_streams if self._readers.get(stream_id)}
        for stream_id, router in self._routers.items():
            self.source_junction(stream_id).subscribe(router)
        from srota.engine.snapshot import fingerprint
        ctx.register_element(self.name, self, fingerprint(partition))
        ctx.start_hooks.append(self._start)
        ctx.stop_hooks.append(self.stop)

    def source_junction(self, stream_id: str) -> StreamJunction:
        """Where a partitioned stream's events come from: the stream's junction, or what a named
        window emits (``partition with (sym of W)`` reads W's current and expired events)."""
        window = self.ctx.windows.get(stream_id)
        return window.output_junction if window is not None else self.ctx.junctions[stream_id]

    # ------------------------------------------------------------------ planning
    def _plan_keys(self) -> None:
        ctx = self.ctx
        self._routers = {}
        #: value partitions: stream -> (the key's code over ``e``/``d``, its CodeGen)
        self._key_code: dict[str, tuple[str, CodeGen]] = {}
        values: list[tuple[str, Any, CodeGen]] = []  # (stream, its key compiled, the key's CodeGen)
        key_types: set[AttrType] = set()
        for pt in self.partition.partition_types:
            stream_id = pt.stream_id
            if stream_id not in ctx.streams and stream_id not in ctx.windows:
                raise error_at(f"partition with '{stream_id}': stream '{stream_id}' is not defined", pt)
            if stream_id in self.routed_streams or any(v[0] == stream_id for v in values):
                raise error_at(f"stream '{stream_id}' is partitioned twice", pt)
            definition = self.source_junction(stream_id).definition
            gen = CodeGen(BASE_NAMESPACE)
            scope = StreamScope(stream_id, definition.attributes)
            compiler = ExpressionCompiler(ctx, scope, gen)
            if isinstance(pt, ValuePartitionType):
                compiled = compiler.compile(pt.expression)
                values.append((stream_id, compiled, gen))
                key_types.add(compiled.type)  # (its _keys below, once every key's type is known)
            elif isinstance(pt, RangePartitionType):
                key_types.add(AttrType.STRING)  # (a label)
                body = ["d = e.data", "out = []"]
                for rp in pt.ranges:
                    cond = compiler.compile_condition(rp.condition, "range condition")
                    body.append(f"if {cond}: out.append({rp.label!r})")
                body.append("return out")
                labels = gen.function("_labels", "e", body)
                self.routed_streams[stream_id] = labels
            else:  # pragma: no cover
                raise error_at(f"unsupported partition type {type(pt).__name__}", pt)
        key_kinds = _java_key_kinds(key_types)
        for stream_id, compiled, gen in values:
            code = compiled.code
            as_java = key_kinds.get(compiled.type) if key_kinds is not None else None
            if as_java is not None:
                code = f"{gen.ref(as_java, 'java_key')}({code})"
            self.routed_streams[stream_id] = gen.function("_keys", "chunk",
                                                          [f"return [{code} for e in chunk for d in (e.data,)]"])
            self._key_code[stream_id] = (code, gen)

    def _validate(self) -> None:
        """Plan every query once without running it: creation errors now, inner stream schemas."""
        ctx = self.ctx
        sources = PartitionSources(self, None)
        n_start, n_stop = len(ctx.start_hooks), len(ctx.stop_hooks)
        prev, ctx.partition = ctx.partition, _VALIDATION
        # (held back: the timers the validation instance arms, such as a pattern's absent
        # state as its machine starts, would fire and output, though it never gets an event)
        try:
            with ctx.scheduler.held_back():
                for j, query in enumerate(self.partition.queries, start=1):
                    sources.joining = isinstance(query.input, JoinInputStream)
                    runtime = build_query(query, ctx, sources, self._query_index(j))
                    self._query_names.append(runtime.name)
                    self._queries.append(PartitionQuery(runtime.name, runtime, self, j - 1))
                    fusion = _plan_fusion(query, runtime, sources.prefix, j - 1, self.routed_streams)
                    if fusion is not None:
                        self._fusions[fusion.stream_id] = fusion
        finally:
            ctx.partition = prev
            del ctx.start_hooks[n_start:]
            del ctx.stop_hooks[n_stop:]
            ctx.unregister_prefix(sources.prefix)
        for stream_id in list(self._fusions):
            # fused only when the query is the stream's one reader in an instance, over a
            # stream (a named window's expired events take the query's ordinary path)
            if self._readers.get(stream_id) != 1 or stream_id not in self._key_code or stream_id in ctx.windows:
                del self._fusions[stream_id]
        names = [q.name for q in self._queries]
        for name in names:
            if names.count(name) > 1:
                raise error_at(f"duplicate query name '{name}' in partition", self.partition)

    def _query_index(self, j: int) -> Any:
        # build_query names an unnamed query "query_<index>"; keep partition queries distinct
        return f"{self.index}_{j}"

    def _plan_purge(self) -> None:
        self._purge_interval = self._idle = 0
        ann = find_annotation(self.partition.annotations, "purge")
        if ann is None or (ann.get("enable") or "false").strip().lower() != "true":
            return
        try:
            self._purge_interval = parse_duration(ann.get("interval") or "")
            self._idle = parse_duration(ann.get("idle.period") or "")
        except ValueError as exc:
            raise error_at(f"@purge: {exc}", ann) from None
        if self._purge_interval <= 0 or self._idle <= 0:
            raise error_at("@purge: interval and idle.period must be positive", ann)

    # ------------------------------------------------------------------ routing
    def _make_router(self, stream_id: str) -> Emit:
        if stream_id in self._key_code:
            return self._value_router(stream_id)
        return self._range_router(stream_id, self.routed_streams[stream_id])

    def _value_router(self, stream_id: str) -> Emit:
        """The generated router of a value partition (see :func:`_router_body`)."""
        code, gen = self._key_code[stream_id]
        fusion = self._fusions.get(stream_id) if FUSE else None
        if fusion is None:
            self._fusions.pop(stream_id, None)
        records = self._records.setdefault(stream_id, {})
        ns = gen.ns
        ns["_p_records"] = records
        ns["_p_record"] = lambda key: self._record(stream_id, key)
        ns["_p_ctx"] = self.ctx
        ns["_p_missing"] = _MISSING
        ns["_p_Event"] = Event
        ns["_p_RawEvent"] = RawEvent
        ns["_p_Exception"] = Exception
        slide = None
        if fusion is not None:
            target, query = fusion.target, self._queries[fusion.query_index]
            ns["_p_merge"] = lambda: self._merge_junction(target)
            ns["_p_flush"] = lambda junction, rows, chunk, end: self._flush(stream_id, query, junction, rows,
                                                                            chunk, end)
            slide = _compiled_slide(fusion, code, bool(self._idle))
            if slide is not None:
                ns["_p_slide"] = columnar.slide
                ns["_p_slide1"] = columnar.slide_one
                ns["_p_splan"] = slide
                ns["_p_islice"] = islice
        # the time of a key's last event matters to purging only
        return gen.function("_route", "chunk", _router_body(code, fusion, stamp=bool(self._idle),
                                                            compiled=slide is not None))

    def _record(self, stream_id: str, key: Any) -> tuple[Any, ...]:
        """What the router does with ``key``'s events, made when the key's first run arrives.

        The record is kept until the key's instance goes (purge), so a run costs the router
        one dictionary lookup.
        """
        if key is None:
            # Siddhi's PartitionStreamReceiver drops events without a key
            self._records[stream_id][None] = _NO_KEY
            return _NO_KEY
        inst = self.instances.get(key) or self._create(key)
        junction = inst.routed.get(stream_id)
        if junction is None or not junction.receivers:
            record: tuple[Any, ...] = (_DROP, inst, None, None, None, None, None, 0, None)
        elif len(junction.receivers) > 1 or junction.async_buffer is not None:
            record = (_DELIVER, inst, junction, junction.send, None, None, None, 0, None)
        else:
            head = junction.receivers[0]
            fusion = self._fusions.get(stream_id)
            fused = fusion.bind(inst, head) if fusion is not None else None
            # one receiver: the router calls it itself, handling its errors as the junction would
            record = ((_FUSED, inst, junction, *fused) if fused is not None
                      else (_DELIVER, inst, junction, head, None, None, None, 0, None))
        self._records[stream_id][key] = record
        return record

    def _merge_junction(self, stream_id: str | None) -> Any:
        """The junction of ``stream_id`` if it takes the fused runs' output rows merged into
        one chunk now (a plain stream whose receivers do not care how its events are
        grouped: engine/coalesce.py), else ``_MISSING``."""
        junction = self.ctx.junctions.get(stream_id) if stream_id is not None else None
        if junction is None or junction.async_buffer is not None or not junction.chunks_mergeable():
            return _MISSING
        return junction

    def _flush(self, stream_id: str, query: PartitionQuery, junction: StreamJunction, rows: list[Event],
               chunk: list[Event], end: int) -> None:
        """Dispatch the merged output rows of the runs in ``chunk[:end]``.

        They count as the query's output here, once, instead of in each key instance's
        ``QueryOutput`` (the partition's query reports the sum).  The junction handles its
        receivers' errors itself; should its dispatch still fail, the events of those runs
        fault as the runs would have one by one (to the partitioned stream's ``@OnError``;
        a key's copy of the stream faults where it does).
        """
        if not rows:
            return
        query.merged_events_out += len(rows)
        try:
            junction.dispatch(rows)
        except Exception as exc:
            self.source_junction(stream_id).on_error(chunk[:end], exc)

    def _range_router(self, stream_id: str, labels_of: Callable[[Event], list[str]]) -> Emit:
        """The router of a range partition.

        Like Siddhi's PartitionStreamReceiver: the chunk becomes the sequence of (label,
        event) pairs, event by event and, for an event in several ranges, range by range;
        consecutive pairs with the same label go to that label's instance as one chunk (a
        batching selector there emits one row per run, as for a value partition).
        """
        def deliver(label: str, run: list[Event], now: int) -> None:
            inst = self.instances.get(label) or self._create(label)
            inst.last_seen = now
            junction = inst.routed.get(stream_id)
            if junction is not None:
                junction.send(run)

        def route(chunk: list[Event]) -> None:
            now = self.ctx.clock.now()
            if len(chunk) == 1:
                for label in labels_of(chunk[0]):
                    deliver(label, chunk, now)
                return
            current: str | None = None
            run: list[Event] = []
            for e in chunk:
                for label in labels_of(e):
                    if label != current:
                        if run:
                            deliver(current, run, now)  # type: ignore[arg-type]
                        current, run = label, []
                    run.append(e)
            if run:
                deliver(current, run, now)  # type: ignore[arg-type]

        return route

    # ------------------------------------------------------------------ instances
    def _create(self, key: Any) -> _Instance:
        ctx = self.ctx
        inst = _Instance(key, f"{self.name}/{key}/")
        inst.last_seen = ctx.clock.now()
        sources = PartitionSources(self, inst)
        n_start, n_stop = len(ctx.start_hooks), len(ctx.stop_hooks)
        prev, ctx.partition = ctx.partition, inst
        try:
            for j, query in enumerate(self.partition.queries, start=1):
                runtime = build_query(query, ctx, sources, self._query_index(j))
                self._queries[j - 1].attach(runtime)
                inst.queries.append(runtime)
        except Exception:
            self._discard(inst)
            raise
        finally:
            ctx.partition = prev
            inst.start_hooks = ctx.start_hooks[n_start:]
            inst.stop_hooks = ctx.stop_hooks[n_stop:]
            del ctx.start_hooks[n_start:]
            del ctx.stop_hooks[n_stop:]
        self.instances[key] = inst
        if self._started:
            for hook in inst.start_hooks:
                hook()
        return inst

    def _discard(self, inst: _Instance) -> None:
        for records in self._records.values():
            if records.get(inst.key, _NO_KEY)[1] is inst:
                del records[inst.key]
        for target, receiver in inst.subscriptions:
            target.unsubscribe(receiver)
        inst.subscriptions.clear()
        for hook in (*inst.stop_hooks, *(h for q in inst.queries for h in q.stop_hooks)):
            try:
                hook()
            except Exception:
                _log.exception("error while removing partition key %r", inst.key)
        for q in inst.queries:
            for element in q.elements.values():
                stop = getattr(element, "stop", None)
                if callable(stop):
                    try:
                        stop()
                    except Exception:
                        _log.exception("error while stopping %s", q.name)
        # the key's timers go with its state (a window's expiry, an absent state's wait, a
        # rate limiter's tick would otherwise still output from it); a pattern's states own
        # their timers themselves
        self.ctx.scheduler.forget(owner for q in inst.queries for element in q.elements.values()
                                  for owner in (element, *getattr(element, "pres", ())))
        self.ctx.unregister_prefix(inst.prefix)
        for pq, q in zip(self._queries, inst.queries, strict=False):
            pq.purged_events_out += q.output.events_out
        inst.routed.clear()
        inst.inner.clear()
        inst.queries.clear()

    def purge_key(self, key: Any) -> bool:
        """Remove the instance of ``key`` (its state is lost); True if it existed."""
        inst = self.instances.pop(key, None)
        if inst is None:
            return False
        self._discard(inst)
        return True

    # ------------------------------------------------------------------ lifecycle
    def _start(self) -> None:
        self._started = True
        for inst in list(self.instances.values()):
            for hook in inst.start_hooks:
                hook()
        if self._purge_interval:
            # counted from the app's start (under playback: from the first event's time)
            self.ctx.clock.on_start(self._arm_purge)

    def _arm_purge(self, now: int) -> None:
        if self._started:
            self._purge_handle = self.ctx.scheduler.schedule(now + self._purge_interval, self._purge)

    def _purge(self, at: int) -> None:
        # idle: more than idle.period since the key's last event (Siddhi compares strictly)
        limit = at - self._idle
        for key in [k for k, inst in self.instances.items() if inst.last_seen < limit]:
            self.purge_key(key)
        if self._started:  # a purge that fell behind runs once, then at its next due time
            nxt = next_period(at, self._purge_interval, self.ctx.clock.now())
            self._purge_handle = self.ctx.scheduler.schedule(nxt, self._purge)

    def stop(self) -> None:
        """Stop purging and the instances' timers (the app shuts down)."""
        self._started = False
        if self._purge_handle is not None:
            self.ctx.scheduler.cancel(self._purge_handle)
            self._purge_handle = None
        for inst in self.instances.values():
            for hook in (*inst.stop_hooks, *(h for q in inst.queries for h in q.stop_hooks)):
                try:
                    hook()
                except Exception:
                    _log.exception("error while stopping partition key %r", inst.key)

    def query_runtimes(self) -> Iterator[PartitionQuery]:
        """One entry per query of the partition; its callbacks get the outputs of every key."""
        return iter(self._queries)

    def keys(self) -> list[Any]:
        """The keys that have an instance now."""
        return list(self.instances)

    # ------------------------------------------------------------------ state
    def snapshot_state(self) -> Any:
        return {"keys": [(k, inst.last_seen) for k, inst in self.instances.items()]}

    def restore_state(self, state: Any) -> None:
        """Re-create the instances of the snapshot's keys (their elements restore next)."""
        for key, last_seen in state["keys"]:
            inst = self.instances.get(key) or self._create(key)
            inst.last_seen = last_seen


# ---------------------------------------------------------------------------- global streams
def java_key_string(key: Any) -> str:
    """The partition key as Siddhi holds it: the ``toString()`` of the key's Java value (a
    Python float as a Java double's)."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float):
        return java_double_str(key)
    return str(key)


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode()`` (over UTF-16 code units), as an unsigned 32-bit int."""
    h = 0
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] | data[i + 1] << 8)) & 0xFFFFFFFF
    return h


def java_hash_set_order(keys: list[Any]) -> list[Any]:
    """``keys`` (in insertion order) in the iteration order of a Java ``HashSet`` of their
    strings made from the collection (Siddhi's ``PartitionRuntimeImpl.getPartitionKeys``):
    by hash bucket, then insertion order."""
    n = len(keys)
    cap = 16
    while cap < max(int(n / 0.75) + 1, 16):
        cap <<= 1
    mask = cap - 1

    def bucket(k: Any) -> int:
        h = java_string_hash(java_key_string(k))
        return (h ^ (h >> 16)) & mask

    return [k for _, _, k in sorted((bucket(k), i, k) for i, k in enumerate(keys))]


class _GlobalFanout:
    """The partition's one reader of a global (not partitioned) stream or of a named window.

    Siddhi's PartitionStreamReceiver of such a stream sends each chunk to every partition
    key that exists at the time, key after key, in the iteration order of a Java
    ``HashSet`` of the keys' strings; in each key, to its queries in their order.
    """

    def __init__(self, partition: PartitionRuntime, junction: StreamJunction) -> None:
        self.partition = partition
        self.junction = junction
        #: per instance (in creation order), its receivers of the stream and their owners
        self.receivers: dict[int, list[tuple[Emit, str | None]]] = {}
        self.instances: dict[int, _Instance] = {}
        self._order: list[list[tuple[Emit, str | None]]] | None = None

    def subscribe(self, inst: _Instance, receiver: Emit, owner: str | None = None) -> None:
        """Add one of ``inst``'s receivers."""
        self.instances[id(inst)] = inst
        self.receivers.setdefault(id(inst), []).append((receiver, owner))
        self._order = None
        self._note_receivers()

    def unsubscribe(self, receiver: Emit) -> None:
        """Remove a receiver (its instance goes)."""
        for k, lst in list(self.receivers.items()):
            lst[:] = [r for r in lst if r[0] != receiver]
            if not lst:
                del self.receivers[k]
                del self.instances[k]
        self._order = None
        self._note_receivers()

    def _note_receivers(self) -> None:
        """Tell the stream whether the fan-out cares how its events are chunked: not while
        no key's query reads it (senders may merge chunks then: engine/coalesce.py)."""
        invariant = self.junction.invariant_receivers
        if bool(self.receivers) == (id(self) in invariant):
            if self.receivers:
                invariant.discard(id(self))
            else:
                invariant.add(id(self))
            self.junction.ctx.coalescing_planned = False

    def _ordered(self) -> list[list[tuple[Emit, str | None]]]:
        order = self._order
        if order is None:
            by_key = {self.instances[k].key: k for k in self.receivers}
            order = self._order = [self.receivers[by_key[key]] for key in java_hash_set_order(list(by_key))]
        return order

    def __call__(self, chunk: list[Event]) -> None:
        junction = self.junction
        ctx = junction.ctx
        for receivers in self._ordered():
            for receiver, owner in receivers:
                try:
                    if ctx.inspector is not None and owner is not None:
                        debugger = ctx.debugger
                        if debugger is not None:
                            debugger.checkpoint(owner, QueryTerminal.IN, chunk)
                        statistics = ctx.statistics
                        if statistics is not None:
                            statistics.time_query(owner, receiver, chunk)
                            continue
                    receiver(chunk)
                except Exception as exc:  # one failing query must not stop the others
                    junction.on_error(chunk, exc)


# ---------------------------------------------------------------------------- fused routing
_MISSING = object()


class _Fusion(NamedTuple):
    """A partition query the router of its input stream runs in its own loop.

    Eligible: the stream's only reader in an instance, ``from S#window.length(n) select ...
    insert into ...`` (or ``from S select ...``) with aggregates and no ``group by``, ``having``, ``order by``,
    ``limit``, rate limit or expired output (a batching selector emitting one row per run),
    whose code needs nothing but the base namespace (so one loop serves every key).  Per
    event the router keeps the key's window (the instance's ``LengthWindow.buffer``) and
    updates the instance selector's aggregator states as the window and the selector would;
    at the end of each run it makes the selector's output row and hands it to the query's
    output (or, merged with the chunk's other rows, to its target stream: see
    :func:`_fused_loop`).  State stays in the instance's own objects: snapshots, restore and purge see
    no difference.
    """

    stream_id: str
    query_index: int
    window: bool
    parts: DeferredParts
    needs_event: bool  # the remove code reads the expired event, not only its data
    target: str | None  # the global stream the query inserts into (its rows may go merged)
    row: str  # parts.row, with the aggregators' values read inline where they say how
    states: tuple[Any, ...] = ()  # a new state of each aggregator (what its class is, and says)

    def bind(self, inst: _Instance, head: Emit) -> tuple[Any, ...] | None:
        """``(window, selector, output, target, length, target junction)`` of ``inst``'s query,
        if wired as planned."""
        if len(inst.queries) <= self.query_index:
            return None
        runtime = inst.queries[self.query_index]
        base = f"{inst.prefix}{runtime.name}"
        sel = runtime.elements.get(base + "/selector")
        output = runtime.output
        if (type(output) is not QueryOutput or sel is None or sel.next is not output
                or getattr(sel.plan, "parts", None) != self.parts):
            return None
        window = None
        if self.window:
            window = runtime.elements.get(base + "/window")
            if (type(window) is not LengthWindow or window.length <= 0 or head != window.process
                    or window.next != sel.process):
                return None
        elif head != sel.process:
            return None
        # (a length window's length is fixed: restore_state replaces its buffer only)
        emit, junction = _direct(output.target)
        return window, sel, output, emit, window.length if window is not None else 0, junction


def _direct(target: Emit | None) -> tuple[Emit, StreamJunction | None]:
    """What a query output's target does, called as directly as it can be, and the stream
    junction it dispatches to (None if it is no plain stream).

    A stream target without an ``@Async`` buffer (fixed when the stream is defined) is its
    junction's ``dispatch``, which ``send`` would call.
    """
    if target is None:
        return _nothing, None
    junction = getattr(target, "__self__", None)
    if (isinstance(junction, StreamJunction) and type(junction) is StreamJunction
            and getattr(target, "__func__", None) in (StreamJunction.send, StreamJunction.dispatch)
            and junction.async_buffer is None):
        return junction.dispatch, junction
    return target, None


def _nothing(chunk: list[Event]) -> None:
    return None


def _plan_fusion(query: Query, runtime: QueryRuntime, prefix: str, index: int,
                 routed: dict[str, Any]) -> _Fusion | None:
    """The fusion of a partition query (planned on the validation instance), if eligible."""
    inp = query.input
    if (not isinstance(inp, SingleInputStream) or inp.is_inner or inp.is_fault
            or inp.stream_id not in routed or query.output_rate is not None
            or query_output_event_type(query) is not OutputEventType.CURRENT):
        return None
    handlers = inp.handlers
    if len(handlers) > 1 or (handlers and not isinstance(handlers[0], WindowHandler)):
        return None
    base = f"{prefix}{runtime.name}"
    plan = getattr(runtime.elements.get(base + "/selector"), "plan", None)
    parts = getattr(plan, "parts", None)
    if (plan is None or parts is None or plan.post is not None or plan.group_key is not None or not plan.current_on
            or plan.expired_on or parts.prologue != ("d = e.data",) or not _only_base_names(parts)):
        return None
    if handlers:
        window = runtime.elements.get(base + "/window")
        if type(window) is not LengthWindow or window.length <= 0:
            return None
    out = query.output
    target = (out.target if isinstance(out, InsertIntoStream) and not out.is_inner and not out.is_fault
              else None)
    return _Fusion(inp.stream_id, index, bool(handlers), parts, _uses_event(parts.remove), target,
                   inline_values(parts.row, plan.factories), tuple(factory() for factory in plan.factories))


#: A key of one plain attribute, and the columns of a row the compiled slide makes.
_KEY_ATTRIBUTE = re.compile(r"d\[(\d+)\]")
_ROW_COLUMN = re.compile(r"d\[(\d+)\]|A\[(\d+)\]\.value\(\)"
                         r"|\(_qa(\d+)\.total if \(_qa\3 := A\[\3\]\)\.count or \(d\[(\d+)\]\) is not None else None\)")


def _java_key_kinds(types: set[AttrType]) -> dict[AttrType, Callable[[Any], Any]] | None:
    """How the value keys of a partition are made Siddhi's, given the ``types`` of all its keys (a
    range partition's are strings, its labels): per key type, the function that gives a value
    its key, where the raw value will not do; None where it does everywhere.

    Siddhi keys a value partition by the key's ``toString()`` (``ValuePartitionExecutor``), a
    range partition by its label.  Raw values group events the same way where every key has
    one type of string, int, long or bool (ints and longs print alike), so they are kept there,
    the fast path.  Floats and doubles of one type differ only at zero (``-0.0`` and ``0.0``
    print apart) and NaN (equal to itself in print only): those two are keyed by their text.
    Keys of several types (an int and a double, a bool and a string, a range label and a
    number) are all keyed by their text.
    """
    if types <= {AttrType.INT, AttrType.LONG} or (len(types) == 1 and types <= {AttrType.STRING, AttrType.BOOL,
                                                                               AttrType.OBJECT}):
        return None
    if types == {AttrType.DOUBLE} or types == {AttrType.FLOAT}:
        text = java_double_str if types == {AttrType.DOUBLE} else java_float32_str

        def key(v: Any) -> Any:
            return v if v is None or (v == v and v != 0) else text(v)

        return {t: key for t in types}
    return {t: _JAVA_TEXT[t] for t in types if t in _JAVA_TEXT}


#: A key's text as Java's ``toString()`` gives it (None stays None: such an event has no key).
_JAVA_TEXT: dict[AttrType, Callable[[Any], Any]] = {
    **{t: lambda v: None if v is None else java_key_string(v)
       for t in (AttrType.INT, AttrType.LONG, AttrType.BOOL, AttrType.DOUBLE)},
    AttrType.FLOAT: lambda v: None if v is None else java_float32_str(v),
}


def _compiled_slide(fusion: _Fusion, key_code: str, stamp: bool) -> Any:
    """The compiled module's plan (``_speedups.slide_plan``) of the fused loop's step, or None
    where it does not take the query.

    It takes a length window over a key of one plain attribute (no purge times to note), a
    row of plain attributes and bare aggregator values, and updates that are each the
    built-in ``count()``, or ``sum``/``avg`` of a plain attribute summed as floats; the code
    it stands for is generated again from the states' classes and must be the fusion's
    (so that the compiled step does what the generated one would).
    """
    parts = fusion.parts
    key = _KEY_ATTRIBUTE.fullmatch(key_code)
    if (columnar.slide_plan is None or key is None or stamp or not fusion.window or fusion.needs_event
            or parts.replace is None or not parts.replaced or not fusion.states):
        return None
    kinds = {_Avg: "a", _Count: "c"}
    value_kind: list[str | None] = [kinds.get(type(state)) or (
        "s" if type(state) is _Sum and not state.integral else None) for state in fusion.states]
    add: list[str] = []
    replace: list[str] = []
    updates = []
    for slot, arg in parts.replaced:
        state = fusion.states[slot]
        if value_kind[slot] is None:
            return None
        add += type(state).inline("add", f"A[{slot}]", arg) or []
        replace += type(state).inline_replace(f"A[{slot}]", "_qd" + arg[1:] if arg else "", arg)
        if value_kind[slot] == "c":
            updates.append((slot, "c", -1, type(state)))
        else:
            attribute = _KEY_ATTRIBUTE.fullmatch(arg)
            if attribute is None:
                return None
            updates.append((slot, "f", int(attribute[1]), type(state)))
    if add != parts.add or replace != parts.replace:
        return None
    row = parts.row.strip()
    if not (row.startswith("(") and row.endswith(")")):
        return None
    columns: list[tuple[Any, ...]] = []
    for item in (c.strip() for c in row[1:-1].split(",")):
        if not item:
            continue
        column = _ROW_COLUMN.fullmatch(item)
        if column is None:
            return None
        if column[1] is not None:
            columns.append(("a", int(column[1])))
            continue
        slot = int(column[2] or column[3])
        if slot >= len(fusion.states) or value_kind[slot] is None:
            return None
        if column[3] is None:
            columns.append(("v", slot, value_kind[slot], type(fusion.states[slot])))
        elif value_kind[slot] == "s":  # (a sum's value as its update returned it: _Sum.value_after)
            columns.append(("v", slot, "w", type(fusion.states[slot]), int(column[4])))
        else:
            return None
    if not columns:
        return None
    return columnar.slide_plan(int(key[1]), len(fusion.states), tuple(updates), tuple(columns), deque)


def _only_base_names(parts: DeferredParts) -> bool:
    """Whether the code reads no global but the base namespace's and builtins.

    Names a query's own CodeGen binds (functions, constants) belong to each instance; a
    loop shared by every key must not depend on one instance's.
    """
    body = [*parts.prologue, *parts.add, "d = e.data", *parts.remove, f"return {parts.row}"]
    source = "def _probe(e, A):\n" + "".join(f"    {line}\n" for line in body)
    try:
        code = compile(source, "<probe>", "exec")
    except SyntaxError:
        return False
    allowed = set(BASE_NAMESPACE) | set(dir(builtins))
    return _global_names(code) <= allowed


def _global_names(code: CodeType) -> set[str]:
    names = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _global_names(const)
    return names


def _indent(lines: list[str], n: int) -> list[str]:
    pad = "    " * n
    return [pad + line for line in lines]


def _router_body(key_code: str, fusion: _Fusion | None, stamp: bool = True, compiled: bool = False) -> list[str]:
    """The router of a value partition: one generated loop over a chunk.

    It splits the chunk into runs of consecutive events with the same key (Siddhi's
    PartitionStreamReceiver) and finishes each run before the next one starts, so outputs
    of different keys interleave in arrival order.  A key's record (``_record``) says what
    happens with its run: nothing, a call of the instance's receiver, or (``fusion``) the
    instance's window and selector run here, event by event, and the output row made when
    the run ends (see :func:`_fused_loop`).  Errors are handled per run as the instance's
    junction would (``@OnError`` of the stream: logged and the run dropped).  ``stamp``:
    note the time of each key's last run (for purging).  A chunk of one event (events sent
    one by one) takes a straight path without the loop.  ``compiled``: the compiled slide
    (``_p_slide`` over its plan ``_p_splan``) takes the fused runs first (see :func:`_fused_loop`),
    and ``_p_slide1`` a chunk of one event.

    (CPython 3.11 specializes a comparison only where a conditional jump of one code unit
    follows it; an ``if`` over a long block needs a longer jump.  So the hot comparisons
    guard short blocks: ``if a == b: pass`` ``else: <long block>``.)
    """
    body = ["_qR = _p_records"]
    if stamp or (fusion is not None and fusion.needs_event):
        body.append("_qnow = _p_ctx.clock.now()")
    body += [
        "if len(chunk) == 1:",
        "    e = chunk[0]",
        "    d = e.data",
        f"    _qkey = {key_code}",
        "    _qrec = _qR.get(_qkey) or _p_record(_qkey)",
        *_indent(_unpack(stamp), 1),
    ]
    deliver_one = [
        "if _qmode == 0:",
        "    try:",
        "        _qa(chunk)",
        "    except _p_Exception as _qx:",
        "        _qj.on_error(chunk, _qx)",
    ]
    if fusion is None:
        body += [*_indent(deliver_one, 1), "    return"]
    else:
        # the fused mode is every key's but a null key's: it runs after the short block
        body += ["    if _qmode != 1:",
                 *_indent(deliver_one, 2),
                 "        return"]
        if compiled:
            # the compiled step and output event (_speedups.slide_one), or None where it
            # leaves the event to the generated step
            body += ["    try:",
                     "        _qo = _p_slide1(e, _qrec, _p_splan)",
                     "    except _p_Exception as _qx:",
                     "        _qj.on_error(chunk, _qx)",
                     "        return",
                     "    if _qo is None:",
                     *_indent(_bind_state(fusion), 2),
                     "    try:",
                     "        if _qo is None:",
                     *_indent(_step(fusion), 3),
                     *_indent(_make_output(fusion, "e"), 3),
                     *_indent(_deliver_output(inline=True), 2),
                     "    except _p_Exception as _qx:",
                     "        _qj.on_error(chunk, _qx)",
                     "    return"]
        else:
            body += [*_indent(_bind_state(fusion), 1),
                     "    try:",
                     *_indent(_step(fusion), 2),
                     *_indent(_emit(fusion, "e"), 2),
                     "    except _p_Exception as _qx:",
                     "        _qj.on_error(chunk, _qx)",
                     "    return"]
        return body + _fused_loop(key_code, fusion, stamp, compiled)
    body += [
        "_qcur = _p_missing",
        "_qmode = -1",
        "_qstart = 0",
        "for _qi, e in enumerate(chunk):",
        "    d = e.data",
        f"    _qkey = {key_code}",
        "    if _qkey == _qcur:",
        "        pass",
        "    else:",
        "        if _qmode == 0:",
        *_indent(_deliver_run("_qi"), 3),
        "        _qstart = _qi",
        "        _qrec = _qR.get(_qkey) or _p_record(_qkey)",
        *_indent(_unpack(stamp), 2),
        "        _qcur = _qkey",
        "_qi = len(chunk)",
        "if _qmode == 0:",
        *_indent(_deliver_run("_qi"), 1),
    ]
    return body


def _unpack(stamp: bool) -> list[str]:
    """Bind the fields of the record ``_qrec`` (and note the key's time, with ``stamp``)."""
    lines = ["_qmode, _qinst, _qj, _qa, _qsel, _qout, _qtgt, _qn, _qmj = _qrec"]
    if stamp:
        lines += ["if _qinst is not None:",
                  "    _qinst.last_seen = _qnow"]
    return lines


def _bind_state(fusion: _Fusion) -> list[str]:
    """Bind a fused record's state: the window's buffer ``_qbuf`` and the aggregator states ``A``.

    Read at each run, not kept in the record: a restore replaces both objects.
    """
    return [*(["_qbuf = _qa.buffer"] if fusion.window else []),
            "try:",
            "    A = _qsel.states[None]",
            "except KeyError:",
            "    A = _qsel._states_for(None)"]


def _step(fusion: _Fusion) -> list[str]:
    """What the window and the selector do with the event ``e`` (``d`` bound to its data)."""
    parts = fusion.parts
    if not fusion.window:
        return list(parts.add)
    if parts.replace is not None and not fusion.needs_event:
        # the oldest event leaves and ``e`` comes in: one step per aggregator
        return ["if len(_qbuf) < _qn:",
                "    _qbuf.append(e)",
                *_indent(parts.add, 1),
                "else:",
                "    _qd = _qbuf.popleft().data",
                "    _qbuf.append(e)",
                *_indent(parts.replace, 1)]
    if fusion.needs_event:
        remove = ["_qe2 = e", "e = _p_Event(_qnow, _qold.data, 1)", "d = e.data", *parts.remove,
                  "e = _qe2", "d = e.data"]
    else:
        remove = ["d = _qold.data", *parts.remove, "d = e.data"]
    # the window's part first: an error in the selector's leaves it as the window's would
    return ["if len(_qbuf) < _qn:",
            "    _qbuf.append(e)",
            *_indent(parts.add, 1),
            "else:",
            "    _qold = _qbuf.popleft()",
            "    _qbuf.append(e)",
            *_indent(remove, 1),
            *_indent(parts.add, 1)]


def _deliver_run(end: str) -> list[str]:
    """Hand the run ``chunk[_qstart:end]`` to the receiver of a mode-0 record."""
    run = f"chunk[_qstart:{end}]"
    return [
        "try:",
        f"    _qa(chunk if _qstart == 0 and {end} == len(chunk) else {run})",
        "except _p_Exception as _qx:",
        f"    _qj.on_error({run}, _qx)",
    ]


def _emit(fusion: _Fusion, last: str = "_qlast") -> list[str]:
    """Make the output row of the run's last event ``last`` and hand it to the query's output.

    ``last`` is ``e`` (with ``d`` bound) when the run is the chunk's only event.
    """
    return [*_make_output(fusion, last), *_deliver_output(inline=last == "e")]


def _make_output(fusion: _Fusion, last: str) -> list[str]:
    """Make ``_qo``, the output event of the run whose last event is ``last``."""
    row = fusion.row
    bind = [] if last == "e" else [*(["e = _qlast"] if _uses_event([row]) else []), "d = _qlast.data"]
    return [
        *bind,
        "_qo = _p_RawEvent()",
        f"_qo.timestamp = {last}.timestamp",
        f"_qo.data = {row}",
        "_qo.type = 0",
    ]


def _deliver_output(inline: bool = False) -> list[str]:
    """Hand ``_qo`` on as a chunk of its own: QueryOutput's work, without its call when
    nobody listens to the query.

    ``inline`` (the path of a chunk of one event, what one-by-one senders take): a plain
    target stream's ``StreamJunction.dispatch`` runs here, one call less per event.
    """
    if not inline:
        return ["if _qout.callbacks:",
                "    _qout([_qo])",
                "else:",
                "    _qout.events_out += 1",
                "    _qtgt([_qo])"]
    return ["if _qout.callbacks:",
            "    _qout([_qo])",
            "elif _qmj is None:",
            "    _qout.events_out += 1",
            "    _qtgt([_qo])",
            "else:",
            "    _qout.events_out += 1",
            # StreamJunction.dispatch, inline (as InputHandler.send does it)
            "    _qc = [_qo]",
            "    _qmj.events_in += 1",
            "    _qdo = _p_ctx.dispatching",
            "    _p_ctx.dispatching = _qmj",
            "    try:",
            "        if _p_ctx.inspector is None:",
            "            for _qrv in _qmj.receivers:",
            "                try:",
            "                    _qrv(_qc)",
            "                except _p_Exception as _qx2:",
            "                    _qmj.on_error(_qc, _qx2)",
            "        else:",
            "            _qmj._dispatch_inspected(_qc)",
            "    finally:",
            "        _p_ctx.dispatching = _qdo"]


#: Hand the merged outputs on and stop merging in this chunk (code outside the router runs
#: next: what it does must come after the outputs before it, and may change who listens).
_FLUSH = [
    "if _qM is not _p_missing:",
    "    _p_flush(_qM, _qpend, chunk, _qstart)",
    "    _qM = _p_missing",
]


def _fused_loop(key_code: str, fusion: _Fusion, stamp: bool, compiled: bool = False) -> list[str]:
    """The router's loop over a chunk of several events, with a fusion.

    Each run's output row goes on as a chunk of its own (a batching selector emits one row
    per chunk it gets), unless nothing downstream can tell: when the query's target stream
    takes merged chunks (``chunks_mergeable``, engine/coalesce.py: only callbacks and
    chunk-invariant queries read it) and the key's query has no callback, the rows of
    consecutive runs are collected (``_qpend``) and dispatched as one chunk, in the same
    order, before anything else happens outside the router: a mode-0 run, an error's
    handling, a new key's instance (which may subscribe to the target), or a row that is
    not merged.  From then on the chunk's rows go one by one.  (Merged rows are counted
    in the partition's query, not in the instances': see :meth:`PartitionRuntime._flush`.)

    ``A`` (the aggregator states) is None while the current run's record is not fused.

    ``compiled``: where the rows go merged, the compiled module's ``slide`` runs the fused
    runs from the chunk's start (the same window steps, state updates and rows as this loop's)
    and stops at the first event it does not take (a key without its record, a record of
    another mode, a null or a value of another type); the loop goes on from there, taking that
    event as the start of a run.
    """
    row_uses_event = _uses_event([fusion.row])

    def end_of_run(in_loop: bool) -> list[str]:
        rebind = in_loop and row_uses_event
        emit = [
            *(["_qe = e"] if rebind else []),
            "try:",
            *_indent(_make_output(fusion, "_qlast"), 1),
            "    if _qmj is _qM and not _qout.callbacks:",
            "        _qpa(_qo)",
            "    else:",
            *_indent(_FLUSH, 2),
            *_indent(_deliver_output(), 2),
            "except _p_Exception as _qx:",
            *_indent(_FLUSH, 1),
            "    _qj.on_error(chunk[_qstart:_qi], _qx)",
            "_qlast = None",
            *(["e = _qe"] if rebind else []),
            *(["d = e.data"] if in_loop else []),
        ]
        # (no last event when every event of a fused run failed: each was faulted on its own)
        return ["if _qlast is not None:", *_indent(emit, 1),
                "elif _qmode == 0:", *_indent(_FLUSH, 1), *_indent(_deliver_run("_qi"), 1)]

    return [
        "_qcur = _p_missing",
        "_qmode = -1",
        "_qstart = 0",
        "_qlast = None",
        "A = None",
        "_qM = _p_merge()",  # the target junction that takes the runs' rows merged, or _p_missing
        "_qpend = []",
        "_qpa = _qpend.append",
        *(["_qi0 = _p_slide(chunk, 0, _qR, _qM, _qpend, _p_splan) if _qM is not _p_missing else 0",
           "for _qi, e in enumerate(_p_islice(chunk, _qi0, None) if _qi0 else chunk, _qi0):"] if compiled
          else ["for _qi, e in enumerate(chunk):"]),
        "    d = e.data",
        f"    _qkey = {key_code}",
        "    if _qkey == _qcur:",
        "        pass",
        "    else:",
        *_indent(end_of_run(True), 2),
        "        _qstart = _qi",
        "        _qrec = _qR.get(_qkey)",
        "        if _qrec is None:",
        *_indent(_FLUSH, 3),
        "            _qrec = _p_record(_qkey)",
        *_indent(_unpack(stamp), 2),
        "        if _qmode == 1:",
        *_indent(_bind_state(fusion), 3),
        "        else:",
        "            A = None",
        "        _qcur = _qkey",
        "    if A is not None:",
        "        try:",
        *_indent(_step(fusion), 3),
        "            _qlast = e",
        "        except _p_Exception as _qx:",
        *_indent(_FLUSH, 3),
        "            _qj.on_error([e], _qx)",  # the fault stays with the event; the run goes on
        "_qi = len(chunk)",
        *end_of_run(False),
        "if _qM is not _p_missing and _qpend:",
        "    _p_flush(_qM, _qpend, chunk, _qi)",
    ]


def _uses_event(lines: list[str]) -> bool:
    """Whether code reads the event ``e`` itself (not only its data ``d``); may err on yes."""
    return any(re.search(r"(?<![\w.])e\b", line) for line in lines)


def build_partition(partition: Partition, ctx: Any, index: int) -> PartitionRuntime:
    """Plan a partition (validating its queries now) and subscribe its key routers."""
    if not partition.queries:
        raise error_at("a partition needs at least one query", partition)
    return PartitionRuntime(partition, ctx, index)
