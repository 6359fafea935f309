"""The query planner: one app-model ``Query`` to a running query instance.

Like Siddhi's ``QueryParser``, it delegates each part to the planner of that construct:
single-stream inputs to :mod:`srota.engine.planning` (filters, stream functions, windows),
joins to :mod:`srota.engine.join`, patterns and sequences to :mod:`srota.engine.pattern`, the selector to :mod:`engine.selector`,
rate limiting to :mod:`engine.ratelimit`, table outputs to :mod:`engine.table`.

Where a query's inputs come from and where its output goes is asked of a
:class:`~srota.engine.planning.Sources` object, so that a partition can plan the same query
against key-local inner streams.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from srota.engine.coalesce import chunk_invariance, outputs_mergeable
from srota.engine.codegen import CodeGen
from srota.engine.event import Event
from srota.engine.expression import BASE_NAMESPACE, error_at
from srota.engine.join import plan_join_input
from srota.engine.junction import StreamJunction
from srota.engine.output import QueryOutput, insert_into_stream
from srota.engine.pattern import plan_state_input
from srota.engine.planning import Sources, check_schema, plan_single_input, source_key
from srota.engine.selector import plan_selector
from srota.engine.snapshot import fingerprint
from srota.grammar.model import (
    Attribute,
    DeleteStream,
    InsertIntoStream,
    JoinInputStream,
    OutputEventType,
    Query,
    ReturnStream,
    SingleInputStream,
    SnapshotOutputRate,
    StateInputStream,
    UpdateOrInsertStream,
    UpdateStream,
)

Emit = Callable[[list[Event]], None]


@dataclass
class QueryRuntime:
    """One running query (or one partition-key instance of it)."""

    name: str
    query: Query
    output: QueryOutput
    output_attributes: list[Attribute]
    elements: dict[str, Any] = field(default_factory=dict)
    stop_hooks: list[Callable[[], None]] = field(default_factory=list)
    #: Whether the query's outputs are the same however its input's chunks are cut, whether
    #: its output chunks follow its input's, and the stream it then inserts into (see
    #: :mod:`srota.engine.coalesce`).
    chunk_invariant: bool = False
    follows_input: bool = False
    output_stream: str | None = None

    def add_callback(self, fn: Any) -> None:
        self.output.callbacks.append(fn)


def query_output_event_type(query: Query) -> OutputEventType:
    out = query.output
    return getattr(out, "event_type", OutputEventType.CURRENT)


def build_query(query: Query, ctx: Any, sources: Sources, index: int) -> QueryRuntime:
    """Plan ``query`` and wire a running instance of it."""
    name = query.name or f"query_{index}"
    gen = CodeGen(BASE_NAMESPACE)
    element_prefix = f"{sources.prefix}{name}"
    out_type = query_output_event_type(query)
    if isinstance(query.output_rate, SnapshotOutputRate) and out_type is not OutputEventType.ALL:
        # (Siddhi's QueryParser; a snapshot query inserts all events unless told otherwise)
        raise error_at(f"query '{name}' is performing snapshot rate limiting: it can only insert all events, "
                       f"not {out_type.value} events", query.output)
    inp = query.input
    pattern_rank: int | None = None
    if isinstance(inp, SingleInputStream):
        plan = plan_single_input(inp, ctx, sources, gen, element_prefix,
                                 expects_expired=out_type is not OutputEventType.CURRENT,
                                 selector=query.selector)
    elif isinstance(inp, JoinInputStream):
        plan = plan_join_input(inp, ctx, sources, gen, element_prefix)
    elif isinstance(inp, StateInputStream):
        plan = plan_state_input(inp, ctx, sources, gen, element_prefix)
        # Absent states wait on timers: their turn comes after the windows planned before and
        # before this query's rate limiter, as Siddhi creates their Schedulers while parsing
        # the input (one rank for the query's absent states; Siddhi has one per state).
        pattern_rank = _rank_of(ctx, inp, "pattern")
    else:  # pragma: no cover - the model has no other input kinds
        raise error_at(f"unsupported input {type(inp).__name__}", inp)

    batching = not isinstance(query.output_rate, SnapshotOutputRate)
    selector_plan = plan_selector(query.selector, plan.scope, ctx, gen, out_type, batching, plan.columns,
                                  where=plan.where if plan.connect_unfiltered is not None else None,
                                  only_current=plan.only_current,
                                  where_unchecked=plan.where_unchecked if plan.connect_unfiltered is not None else None,
                                  where_nodes=plan.where_nodes if plan.connect_unfiltered is not None else (),
                                  order_by_output_only=isinstance(inp, SingleInputStream))
    selector = selector_plan.instantiate()
    if isinstance(inp, SingleInputStream):
        # its events carry the input stream's row: one that fails goes to that stream's @OnError
        selector.fault = ctx.fault_event
    output = QueryOutput(name, ctx)
    runtime = QueryRuntime(name, query, output, selector_plan.output_attributes)
    runtime.elements[f"{element_prefix}/selector"] = selector

    if query.output_rate is not None:
        from srota.engine.ratelimit import build_rate_limiter
        limiter = build_rate_limiter(query.output_rate, query, selector, ctx, element_prefix)
        # Siddhi's time-based limiters own a Scheduler, created after the input's.
        limiter.timer_rank = _rank_of(ctx, query.output_rate)
        runtime.elements[f"{element_prefix}/rate"] = limiter
        selector.next = limiter.process
        limiter.next = output
        runtime.stop_hooks.append(getattr(limiter, "stop", lambda: None))
    else:
        selector.next = output

    # A batching selector without a rate limiter emits current events only when the query
    # outputs current events: the target then need not look for expired ones to convert.
    all_current = (batching and query.output_rate is None and out_type is OutputEventType.CURRENT)
    output.target = plan_output(query, selector_plan.output_attributes, ctx, sources, gen, all_current)
    # The receivers this query subscribes belong to it (debugger IN checkpoints, statistics).
    outer_owner, sources.owner = sources.owner, name
    scheduler = getattr(ctx, "scheduler", None)
    outer_rank = getattr(scheduler, "default_rank", None)
    if pattern_rank is not None:
        # (timers the pattern's states arm while being built)
        scheduler.default_rank = pattern_rank  # type: ignore[union-attr]
    try:
        if selector_plan.fused and plan.connect_unfiltered is not None:
            plan.connect_unfiltered(selector.process)
        elif plan.connect_chunks is not None:
            plan.connect_chunks(selector.process_chunks)
        else:
            plan.connect(selector.process)
    finally:
        sources.owner = outer_owner
        if outer_rank is not None:
            scheduler.default_rank = outer_rank  # type: ignore[union-attr]
    if pattern_rank is not None:
        for element in plan.elements.values():
            for pre in getattr(element, "pres", ()):
                pre.timer_rank = pattern_rank
    if selector_plan.copies_fields and isinstance(inp, SingleInputStream) and not sources.prefix:
        # (marks the selector only where it is the receiver itself, with no processor before it)
        junction = ctx.junctions.get(source_key(inp.stream_id, inp.is_inner, inp.is_fault))
        if junction is not None:
            junction.mark_copying(selector.process)
    if plan.merge_outputs is not None and not sources.prefix:  # (not inside a partition)
        mergeable = outputs_mergeable(query, bool(selector_plan.factories), ctx, output)
        if mergeable is not None:
            plan.merge_outputs(mergeable)
    selector.track_live = plan.emits_expired
    runtime.chunk_invariant, runtime.follows_input, runtime.output_stream = chunk_invariance(
        query, bool(selector_plan.factories), ctx)
    runtime.elements.update(plan.elements)  # filled by connect(): one instance's processors
    version = fingerprint(query)
    for eid, element in runtime.elements.items():
        ctx.register_element(eid, element, version)
    return runtime


def _rank_of(ctx: Any, node: Any, part: str = "") -> int | None:
    """The timer rank of an owner planned from ``node`` (None without a ranking scheduler)."""
    rank_of = getattr(getattr(ctx, "scheduler", None), "rank_of", None)
    return None if rank_of is None else rank_of(node, part)


def plan_output(query: Query, attributes: list[Attribute], ctx: Any, sources: Sources,
                gen: CodeGen, all_current: bool = False) -> Emit | None:
    """The output target of a query: a stream, named window or table.

    ``all_current``: the query emits nothing but current events (no conversion needed).
    """
    out = query.output
    if isinstance(out, ReturnStream):
        return None
    if isinstance(out, InsertIntoStream):
        if not out.is_inner and not out.is_fault:
            if out.target in ctx.tables:
                from srota.engine.table import plan_table_insert
                check_schema(ctx.tables[out.target], attributes, out, "table ")
                return plan_table_insert(out, attributes, ctx, gen)
            if out.target in ctx.windows:
                window = ctx.windows[out.target]
                check_schema(window.definition, attributes, out)
                return window.insert
            if out.target in ctx.aggregations:
                raise error_at(f"cannot insert into aggregation '{out.target}'", out)
        junction = sources.output_junction(out.target, attributes, out.is_inner, out.is_fault, out)
        if not all_current:
            return insert_into_stream(junction)
        # A plain stream without an @Async buffer (fixed when the stream is defined, before
        # any query) dispatches what it is sent: the query calls dispatch itself, one call
        # less per output chunk (what one-by-one senders pay per event).
        if type(junction) is StreamJunction and junction.async_buffer is None:
            return junction.dispatch
        return junction.send
    if isinstance(out, (DeleteStream, UpdateStream, UpdateOrInsertStream)):
        from srota.engine.table import plan_table_output
        if isinstance(out, UpdateOrInsertStream) and out.target in ctx.tables:  # (it may insert what it is given)
            check_schema(ctx.tables[out.target], attributes, out, "table ")
        return plan_table_output(out, attributes, ctx, gen)
    raise error_at(f"unsupported output {type(out).__name__}", out)

