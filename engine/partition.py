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

Consecutive events of a chunk with the same key travel together, so outputs of different
keys interleave in arrival order.  ``@purge(enable='true', interval='1 min', idle.period='1
hour')`` removes the instances whose key saw no event for ``idle.period`` (checked every
``interval`` on the app's scheduler), so memory follows the number of active keys, not the
number of keys ever seen.

Elements of an instance register as ``partition<N>/<key>/<query>/...``; the partition
itself registers as ``partition<N>`` and snapshots its keys, so a restore first re-creates
the instances, then their elements find their state.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from grammar.model import (
    Attribute,
    Partition,
    RangePartitionType,
    StreamDefinition,
    ValuePartitionType,
    find_annotation,
)

from .codegen import CodeGen
from .event import Event
from .expression import BASE_NAMESPACE, ExpressionCompiler, error_at
from .junction import StreamJunction
from .query import QueryRuntime, Sources, build_query, check_schema
from .scope import StreamScope
from .timeutil import parse_duration

_log = logging.getLogger("srota.engine")

Emit = Callable[[list[Event]], None]
_VALIDATION = object()


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
            return  # the validation instance plans the queries but never runs
        if is_inner:
            self._inner(stream_id).subscribe(receiver)
            return
        if not is_fault and stream_id in self.partition.routed_streams:
            junction = inst.routed.get(stream_id)
            if junction is None:
                junction = StreamJunction(self.ctx.streams[stream_id], self.ctx)
                inst.routed[stream_id] = junction
            junction.subscribe(receiver)
            return
        kind, obj = super().lookup(stream_id, is_inner, is_fault, None)
        target = obj if kind == "window" else self.ctx.junctions[("!" if is_fault else "") + stream_id]
        target.subscribe(receiver)
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

    def instance_runtimes(self) -> list[QueryRuntime]:
        """This query's runtime in every live key instance."""
        return [inst.queries[self._position] for inst in self._partition.instances.values()
                if len(inst.queries) > self._position]

    def add_callback(self, fn: Any) -> None:
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
        return q.purged_events_out + sum(r.output.events_out for r in q.instance_runtimes())


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
        self._plan_keys()
        self._validate()
        self._plan_purge()
        for stream_id, router in self._routers.items():
            ctx.junctions[stream_id].subscribe(router)
        from .snapshot import fingerprint
        ctx.register_element(self.name, self, fingerprint(partition))
        ctx.start_hooks.append(self._start)
        ctx.stop_hooks.append(self.stop)

    # ------------------------------------------------------------------ planning
    def _plan_keys(self) -> None:
        ctx = self.ctx
        self._routers: dict[str, Emit] = {}
        for pt in self.partition.partition_types:
            stream_id = pt.stream_id
            if stream_id not in ctx.streams:
                raise error_at(f"partition with '{stream_id}': stream '{stream_id}' is not defined", pt)
            if stream_id in self.routed_streams:
                raise error_at(f"stream '{stream_id}' is partitioned twice", pt)
            definition = ctx.streams[stream_id]
            gen = CodeGen(BASE_NAMESPACE)
            scope = StreamScope(stream_id, definition.attributes)
            compiler = ExpressionCompiler(ctx, scope, gen)
            if isinstance(pt, ValuePartitionType):
                code = compiler.compile(pt.expression).code
                keys = gen.function("_keys", "chunk", [f"return [{code} for e in chunk for d in (e.data,)]"])
                self.routed_streams[stream_id] = keys
                self._routers[stream_id] = self._value_router(stream_id, keys)
            elif isinstance(pt, RangePartitionType):
                body = ["d = e.data", "out = []"]
                for rp in pt.ranges:
                    cond = compiler.compile_condition(rp.condition, "range condition")
                    body.append(f"if {cond}: out.append({rp.label!r})")
                body.append("return out")
                labels = gen.function("_labels", "e", body)
                self.routed_streams[stream_id] = labels
                self._routers[stream_id] = self._range_router(stream_id, labels)
            else:  # pragma: no cover
                raise error_at(f"unsupported partition type {type(pt).__name__}", pt)

    def _validate(self) -> None:
        """Plan every query once without running it: creation errors now, inner stream schemas."""
        ctx = self.ctx
        sources = PartitionSources(self, None)
        n_start, n_stop = len(ctx.start_hooks), len(ctx.stop_hooks)
        prev, ctx.partition = ctx.partition, _VALIDATION
        try:
            for j, query in enumerate(self.partition.queries, start=1):
                runtime = build_query(query, ctx, sources, self._query_index(j))
                self._query_names.append(runtime.name)
                self._queries.append(PartitionQuery(runtime.name, runtime, self, j - 1))
        finally:
            ctx.partition = prev
            del ctx.start_hooks[n_start:]
            del ctx.stop_hooks[n_stop:]
            ctx.unregister_prefix(sources.prefix)
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
    def _value_router(self, stream_id: str, keys_of: Callable[[list[Event]], list[Any]]) -> Emit:
        def route(chunk: list[Event]) -> None:
            keys = keys_of(chunk)
            now = self.ctx.clock.now()
            start = 0
            n = len(chunk)
            while start < n:
                key = keys[start]
                end = start + 1
                while end < n and keys[end] == key:
                    end += 1
                if key is not None:
                    inst = self.instances.get(key) or self._create(key)
                    inst.last_seen = now
                    junction = inst.routed.get(stream_id)
                    if junction is not None:
                        junction.send(chunk[start:end] if start or end < n else chunk)
                start = end

        return route

    def _range_router(self, stream_id: str, labels_of: Callable[[Event], list[str]]) -> Emit:
        def route(chunk: list[Event]) -> None:
            now = self.ctx.clock.now()
            for e in chunk:
                for label in labels_of(e):
                    inst = self.instances.get(label) or self._create(label)
                    inst.last_seen = now
                    junction = inst.routed.get(stream_id)
                    if junction is not None:
                        junction.send([e])

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
            self._purge_handle = self.ctx.scheduler.schedule(self.ctx.clock.now() + self._purge_interval,
                                                             self._purge)

    def _purge(self, at: int) -> None:
        limit = at - self._idle
        for key in [k for k, inst in self.instances.items() if inst.last_seen <= limit]:
            self.purge_key(key)
        if self._started:
            self._purge_handle = self.ctx.scheduler.schedule(at + self._purge_interval, self._purge)

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


def build_partition(partition: Partition, ctx: Any, index: int) -> PartitionRuntime:
    """Plan a partition (validating its queries now) and subscribe its key routers."""
    if not partition.queries:
        raise error_at("a partition needs at least one query", partition)
    return PartitionRuntime(partition, ctx, index)
