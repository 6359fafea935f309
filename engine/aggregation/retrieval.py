"""Reading an aggregation: ``from S join A on ... within ... per ...`` and on-demand queries.

A join with an aggregation is triggered by the stream side only.  For each stream event the
``within`` bounds and the ``per`` granularity are evaluated (constants, or attributes of the
event), the aggregation's rows of that granularity are read (tables plus open buckets), and
each row that satisfies ``on`` makes one joined event.  A stream side without a window
behaves as Siddhi's empty window: every current event is followed by its expired copy (when
the query emits expired events) and a reset, so a query with ``insert all events`` emits each
joined row again as an expired event; the rows of each stream event (and of its copy) reach the
selector as a chunk of their own, as in Siddhi's ``JoinProcessor``.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from srota.engine.aggregation.buckets import within_range
from srota.engine.codegen import CodeGen
from srota.engine.event import CURRENT, EXPIRED, RESET, Event, StateEvent
from srota.engine.expression import BASE_NAMESPACE, ExpressionCompiler, error_at
from srota.engine.join import JoinScope, JoinSide, emit_one_by_one, output_needs
from srota.engine.scope import StreamScope
from srota.grammar.model import (
    Attribute,
    AttrType,
    Expression,
    JoinInputStream,
    JoinType,
    OnDemandQuery,
    OnDemandQueryType,
    OutputEventType,
    SingleInputStream,
    WindowHandler,
)

if TYPE_CHECKING:
    from srota.engine.aggregation.runtime import Aggregation
    from srota.engine.planning import EmitChunks

_log = logging.getLogger("srota.engine.aggregation")


def _names(inp: SingleInputStream) -> frozenset[str]:
    return frozenset([inp.reference_id] if inp.reference_id else [inp.stream_id])


def _bounds_function(agg: Aggregation, within: tuple[Expression, ...], per: Expression | None,
                     compiler: ExpressionCompiler, gen: CodeGen, prologue: tuple[str, ...], node: Any,
                     per_at_runtime: bool = False) -> Any:
    """``bounds(e) -> (start, end, per)`` for a stream event, or a constant triple.

    ``per_at_runtime``: a constant granularity the aggregation does not keep fails each event
    (as in Siddhi's joins) instead of the creation.
    """
    if per is None:
        raise error_at(f"reading aggregation '{agg.id}' needs 'within <start>, <end> per <granularity>'", node)
    if len(within) > 2:
        raise error_at("within takes one pattern or a start and an end", node)
    parts = [compiler.compile(w) for w in within]
    for w, c in zip(within, parts, strict=True):
        if c.type not in (AttrType.LONG, AttrType.INT, AttrType.STRING):
            raise error_at(f"a within value must be a long or a string, not {c.type.value}", w)
    pc = compiler.compile(per)
    if pc.type is not AttrType.STRING:
        raise error_at(f"per must be a string such as 'days', not {pc.type.value}", per)
    if all(c.constant for c in parts) and pc.constant:
        try:
            start, end = within_range(tuple(c.value for c in parts)) if parts else (None, None)
        except ValueError as exc:
            raise error_at(str(exc), node) from None
        try:
            return (start, end, agg.per_duration(pc.value))
        except ValueError as exc:
            if not per_at_runtime:
                raise error_at(str(exc), node) from None
            # Siddhi creates such a join and fails each event of it (logged, dropped)
            _log.warning("%s: every event of the join with it will fail", exc)
            message = str(exc)

            def failing_bounds(e: Any) -> Any:
                raise ValueError(message)

            return failing_bounds
    gen.ns["_within_range"] = within_range
    gen.ns["_per"] = agg.per_duration
    rng = f"_within_range(({''.join(c.code + ', ' for c in parts)}))" if parts else "(None, None)"
    return gen.function("_agg_bounds", "e", [*prologue, f"_r = {rng}", f"return _r[0], _r[1], _per({pc.code})"])


def plan_aggregation_join(agg: Aggregation, inp: JoinInputStream, ctx: Any, sources: Any, gen: CodeGen,
                          element_prefix: str) -> Any:
    """The InputPlan of a join between a stream (or named window) and aggregation ``agg``."""
    from srota.engine.planning import InputPlan, plan_single_input

    kinds = [sources.lookup(s.stream_id, s.is_inner, s.is_fault, s)[0] for s in (inp.left, inp.right)]
    if kinds == ["aggregation", "aggregation"]:
        raise error_at("cannot join two aggregations", inp)
    agg_pos = 0 if kinds[0] == "aggregation" else 1
    stream_pos = 1 - agg_pos
    agg_inp = (inp.left, inp.right)[agg_pos]
    stream_inp = (inp.left, inp.right)[stream_pos]
    if agg_inp.handlers:
        raise error_at(f"aggregation '{agg.id}' cannot take filters or windows in a join", agg_inp)
    if kinds[stream_pos] == "table":
        raise error_at(f"table '{stream_inp.stream_id}' cannot be joined with aggregation '{agg.id}'", inp)

    splan = plan_single_input(stream_inp, ctx, sources, gen, f"{element_prefix}/{('left', 'right')[stream_pos]}",
                              scope_data=f"d{stream_pos}")
    stream_scope: StreamScope = splan.scope
    has_window = kinds[stream_pos] == "window" or any(isinstance(h, WindowHandler) for h in stream_inp.handlers)
    outer = {JoinType.LEFT_OUTER: 0, JoinType.RIGHT_OUTER: 1}.get(inp.join_type)
    keep_unmatched = inp.join_type is JoinType.FULL_OUTER or outer == stream_pos

    sides: list[JoinSide] = [None, None]  # type: ignore[list-item]
    sides[stream_pos] = JoinSide(stream_inp, kinds[stream_pos], None, tuple(stream_scope.attributes),
                                 _names(stream_inp))
    sides[agg_pos] = JoinSide(agg_inp, "aggregation", agg, tuple(agg.attributes), _names(agg_inp))
    scope = JoinScope.over(sides, gen)

    compiler = ExpressionCompiler(ctx, stream_scope, gen)
    bounds = _bounds_function(agg, inp.within, inp.per, compiler, gen, stream_scope.prologue, inp,
                              per_at_runtime=True)
    on = None
    if inp.on is not None:
        cond = ExpressionCompiler(ctx, scope, gen).compile_condition(inp.on, "on")
        on = gen.function("_agg_on", "e", [*scope.prologue, f"return {cond}"])

    expired, row_wise = output_needs(ctx, inp)

    def alone(e: Event) -> list[Event | None]:
        """The pair of a stream event without an aggregation row."""
        return [e, None] if stream_pos == 0 else [None, e]

    def joined_rows(e: Event) -> list[list[Event | None]]:
        start, end, per = bounds if isinstance(bounds, tuple) else bounds(e)
        joined = []
        for row in agg.rows(per, start, end):
            pair = alone(e)
            pair[agg_pos] = Event(row[0], row)
            if on is None or on(StateEvent(e.timestamp, pair, e.type)):
                joined.append(pair)
        if not joined and keep_unmatched:
            joined.append(alone(e))
        return joined

    def connect_chunks(emit_chunks: EmitChunks) -> None:
        def receive(chunk: list[Event]) -> None:
            # As Siddhi's JoinProcessor: the rows each stream event finds are a chunk of their
            # own for the selector (group by, aggregates and order by apply per chunk), and
            # the selector hands on the rows of all of them as one chunk; a stream side
            # without a window is the empty window: each current event is followed by its
            # expired copy (if the query emits expired events) and a reset.  A row-wise
            # selector cannot tell chunks apart: one chunk for the whole input.
            out: list[StateEvent] = []
            chunks: list[list[StateEvent]] = []
            try:
                for e in chunk:
                    t = e.type
                    if t == RESET:
                        if not row_wise:
                            chunks.append([StateEvent(e.timestamp, alone(e), RESET)])
                        continue
                    if t != CURRENT and t != EXPIRED:
                        continue
                    joined = joined_rows(e)
                    copies = not has_window and t == CURRENT
                    if row_wise:
                        out.extend(StateEvent(e.timestamp, p, t) for p in joined)
                        if copies and expired:
                            out.extend(StateEvent(e.timestamp, p, EXPIRED) for p in joined)
                        continue
                    if joined:
                        chunks.append([StateEvent(e.timestamp, p, t) for p in joined])
                    if copies:
                        if joined and expired:
                            chunks.append([StateEvent(e.timestamp, p, EXPIRED) for p in joined])
                        chunks.append([StateEvent(e.timestamp, alone(e), RESET)])
            finally:  # (what the events before a failing one found still goes on)
                if out:
                    chunks.append(out)
                if chunks:
                    emit_chunks(chunks, None)

        with ctx.lock:
            splan.connect(receive)

    def connect(emit: Any) -> None:
        connect_chunks(emit_one_by_one(emit))

    return InputPlan(scope, connect, scope.columns, splan.elements, connect_chunks=connect_chunks)


# ---------------------------------------------------------------------------- on demand
class _OnDemandPlan:
    def __init__(self, agg: Aggregation, query: OnDemandQuery) -> None:
        from srota.engine.selector import plan_selector

        ctx = agg.ctx
        if query.type is not OnDemandQueryType.FIND:
            raise error_at(f"aggregation '{agg.id}' is read-only: only 'from {agg.id} ... select' queries", query)
        names = [query.reference_id] if query.reference_id else []
        self.scope = StreamScope(agg.id, agg.attributes, names)
        gen = CodeGen(BASE_NAMESPACE)
        compiler = ExpressionCompiler(ctx, self.scope, gen)
        self.bounds = _bounds_function(agg, query.within, query.per, compiler, gen, (), query)
        if not isinstance(self.bounds, tuple):
            raise error_at("within and per of an on-demand query must be constants", query)
        self.on = None
        if query.on is not None:
            cond = compiler.compile_condition(query.on, "on")
            self.on = gen.function("_agg_od_on", "chunk",
                                   [f"return [e for e in chunk for d in (e.data,) if {cond}]"])
        self.selector = plan_selector(query.selector, self.scope, ctx, gen, OutputEventType.CURRENT, True)


def _on_demand_plan(agg: Aggregation, query: OnDemandQuery) -> _OnDemandPlan:
    """The plan of ``query`` (made once, kept per query)."""
    plan = agg._plans.get(query)
    if plan is None:
        plan = _OnDemandPlan(agg, query)
        if len(agg._plans) < 256:
            agg._plans[query] = plan
    return plan


def on_demand_output_attributes(agg: Aggregation, query: OnDemandQuery) -> list[Attribute]:
    """What an on-demand find query against ``agg`` returns (planned, not run)."""
    return list(_on_demand_plan(agg, query).selector.output_attributes)


def run_on_demand(agg: Aggregation, query: OnDemandQuery) -> list[Event]:
    """Evaluate an on-demand find query against ``agg`` (plans are cached per query)."""
    plan = _on_demand_plan(agg, query)
    start, end, per = plan.bounds
    # Siddhi's on-demand read joins the rows to an empty matching event (timestamp -1),
    # whose timestamp every row it returns carries
    events = [Event(-1, row) for row in agg.rows(per, start, end)]
    if plan.on is not None:
        events = plan.on(events)
    if not events:
        return []
    selector = plan.selector.instantiate()
    out: list[Event] = []
    selector.next = out.extend
    selector.process(events)
    return out
