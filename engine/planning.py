"""Input planning shared by every query shape: where inputs come from, and single-stream inputs.

:class:`Sources` answers where a query's inputs live and where its output goes (the app's
junctions, tables, named windows, aggregations; a partition substitutes key-local ones).
:func:`plan_single_input` plans ``from S[filter]#fn()#window.w()[filter]`` as a chain of
processors.  The query, join and pattern planners all build on this module, so imports flow
one way: ``query -> join, pattern -> planning``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from srota.engine.codegen import CodeGen
from srota.engine.event import Event
from srota.engine.expression import ExpressionCompiler, error_at, operators_only
from srota.engine.junction import StreamJunction
from srota.engine.registry import Kind, registry
from srota.engine.scope import StreamScope
from srota.engine.selector import comprehension_bindings
from srota.grammar.model import (
    Attribute,
    Expression,
    Filter,
    Selector,
    SingleInputStream,
    StreamDefinition,
    StreamFunction,
    Variable,
    WindowHandler,
)

Emit = Callable[[list[Event]], None]
#: ``emit_chunks(chunks, on_error)``: several chunks selected one by one, their rows handed on
#: as one chunk; ``on_error(i, exc)`` takes an error of chunk ``i`` (None: it is raised).
EmitChunks = Callable[[list[list[Any]], Callable[[int, Exception], None] | None], None]


def source_key(stream_id: str, is_inner: bool = False, is_fault: bool = False) -> str:
    """How a stream is keyed in the app: ``S``, ``!S`` (fault) or ``#S`` (partition inner)."""
    return ("#" if is_inner else "") + ("!" if is_fault else "") + stream_id


class Sources:
    """Where a query's inputs and outputs live (the app's junctions, tables, windows)."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.prefix = ""
        #: The query whose receivers are being subscribed (build_query sets it).
        self.owner: str | None = None

    def lookup(self, stream_id: str, is_inner: bool, is_fault: bool, node: Any) -> tuple[str, Any]:
        """``(kind, object)``: a stream definition, named window, table or aggregation."""
        ctx = self.ctx
        if is_inner:
            raise error_at(f"inner stream '#{stream_id}' can only be used inside a partition", node)
        key = source_key(stream_id, False, is_fault)
        if key in ctx.streams:
            return "stream", ctx.streams[key]
        if not is_fault:
            if stream_id in ctx.windows:
                return "window", ctx.windows[stream_id]
            if stream_id in ctx.tables:
                return "table", ctx.tables[stream_id]
            if stream_id in ctx.aggregations:
                return "aggregation", ctx.aggregations[stream_id]
        raise error_at(f"stream '{key}' is not defined", node)

    def subscribe(self, stream_id: str, is_inner: bool, is_fault: bool, receiver: Emit) -> None:
        kind, obj = self.lookup(stream_id, is_inner, is_fault, None)
        if kind == "window":
            obj.subscribe(receiver)
        else:
            self.ctx.junctions[source_key(stream_id, is_inner, is_fault)].subscribe(receiver, self.owner)

    def output_junction(self, stream_id: str, attributes: list[Attribute], is_inner: bool,
                        is_fault: bool, node: Any) -> StreamJunction:
        """The junction to insert into, defining the stream from the output when it is new."""
        ctx = self.ctx
        if is_inner:
            raise error_at(f"inner stream '#{stream_id}' can only be used inside a partition", node)
        key = source_key(stream_id, False, is_fault)
        existing = ctx.streams.get(key)
        if existing is None:
            definition = StreamDefinition(stream_id, tuple(attributes), is_fault=is_fault)
            return ctx.define_stream(definition, key)
        check_schema(existing, attributes, node)
        return ctx.junctions[key]


def check_schema(existing: Any, attributes: list[Attribute], node: Any, what: str = "") -> None:
    """A query may insert into an existing stream, window or table only with its attribute names
    and types, in its order (Siddhi's validateOutputStream: the definitions equal but for their
    annotations), although the events are written by position.  ``what``: "table " and the like."""
    have = [(a.name, a.type) for a in existing.attributes]
    want = [(a.name, a.type) for a in attributes]
    if have != want:
        shown = ", ".join(f"{a.name} {a.type.value}" for a in attributes)
        target = ", ".join(f"{a.name} {a.type.value}" for a in existing.attributes)
        raise error_at(f"output ({shown}) does not match the definition of {what}'{existing.id}' ({target})", node)


@dataclass
class InputPlan:
    """What an input planner hands to the query planner.

    ``scope`` resolves attributes for the selector; ``columns`` lists ``select *``;
    ``connect(emit)`` subscribes this instance's processors to their sources.
    """

    scope: Any
    connect: Callable[[Emit], None]
    columns: Callable[[], list[Any]] | None = None
    elements: dict[str, Any] = field(default_factory=dict)
    #: A filter the selector may run instead (see ``plan_selector(where=...)``); then the
    #: query connects with ``connect_unfiltered``, which leaves the filter processors out.
    where: str | None = None
    #: ``where`` without its null tests, when every filter is operators only (see
    #: ``ExpressionCompiler(nulls_unchecked=True)``).
    where_unchecked: str | None = None
    #: The filters of ``where`` as expressions (for the columnar path, engine/columnar.py).
    where_nodes: tuple[Expression, ...] = ()
    connect_unfiltered: Callable[[Emit], None] | None = None
    #: The input carries only current events (a stream without windows).
    only_current: bool = False
    #: Whether the connected processors may emit expired events (known after ``connect``).
    emits_expired: bool = True
    #: For an input that hands the selector several outputs per input chunk one by one (a
    #: pattern's matches): takes a predicate saying when they may go as one chunk instead.
    merge_outputs: Callable[[Callable[[], bool]], None] | None = None
    #: For a join: connects with ``emit_chunks(chunks, on_error)`` instead, which selects each
    #: chunk (the matches of one probing event) on its own and hands on their rows as one
    #: chunk, as Siddhi's JoinProcessor gives ``QuerySelector.process(List)`` the chunks of
    #: one input chunk (see :meth:`engine.selector.QuerySelector.process_chunks`).
    connect_chunks: Callable[[EmitChunks], None] | None = None


def plan_single_input(inp: SingleInputStream, ctx: Any, sources: Sources, gen: CodeGen,
                      element_prefix: str, scope_data: str = "d", expects_expired: bool = True,
                      selector: Selector | None = None) -> InputPlan:
    """``from S[filter]#fn()#window.w()[filter] as a``: a chain of processors per instance.

    ``selector``: the query's selector, when the input is a query's only input (a frequency
    window without key attributes keys by what it outputs, see :func:`output_data_slots`).
    """
    kind, obj = sources.lookup(inp.stream_id, inp.is_inner, inp.is_fault, inp)
    if kind == "table":
        raise error_at(f"table '{inp.stream_id}' can only be joined or queried on demand", inp)
    if kind == "aggregation":
        raise error_at(f"aggregation '{inp.stream_id}' can only be joined or queried on demand", inp)
    definition = obj.definition if kind == "window" else obj
    if kind == "window" and any(isinstance(h, WindowHandler) for h in inp.handlers):
        raise error_at(f"window '{inp.stream_id}' cannot take another window", inp)
    names = [inp.reference_id] if inp.reference_id else []
    attributes = list(definition.attributes)
    scope = StreamScope(inp.stream_id, attributes, names, scope_data)
    stages: list[Callable[[], Any]] = []  # each builds one processor for an instance
    elements: dict[str, Any] = {}
    windows = 0
    conditions: list[str] = []  # of the filters, while the input has nothing but filters
    window_scope: StreamScope | None = None
    key_slots: list[list[int | None] | None] = [None]  # (filled once the input is planned)
    unchecked: list[str] = []  # the same without null tests, while they are operators only
    for n, handler in enumerate(inp.handlers):
        if isinstance(handler, Filter):
            # Before any window only current events flow; after one, timer/reset events too.
            stage, cond = _filter_stage(handler, scope, ctx, gen, mixed=windows > 0 or n > 0)
            stages.append(stage)
            conditions.append(cond)
            if operators_only(handler.expression):
                unchecked.append(ExpressionCompiler(ctx, scope, gen, nulls_unchecked=True)
                                 .compile_condition(handler.expression, "filter"))
        elif isinstance(handler, WindowHandler):
            windows += 1
            if windows > 1:
                raise error_at("a stream can have only one window", handler)
            from srota.engine.windows import build_window
            eid = f"{element_prefix}/window"
            window_scope = scope
            stages.append(_window_stage(build_window, handler, scope, ctx, gen, eid, elements, expects_expired,
                                        key_slots))
        elif isinstance(handler, StreamFunction):
            stage, scope = _stream_function_stage(handler, scope, ctx, gen, f"{element_prefix}/fn{n}",
                                                  elements)
            stages.append(stage)
        else:  # pragma: no cover
            raise error_at(f"unsupported stream handler {type(handler).__name__}", handler)

    stream_id, is_inner, is_fault = inp.stream_id, inp.is_inner, inp.is_fault
    if selector is not None and window_scope is not None:
        key_slots[0] = output_data_slots(selector, window_scope, scope)

    def connect(emit: Emit) -> None:
        processors = [make() for make in stages]
        head = emit
        for proc in reversed(processors):
            proc.next = head
            head = proc.process
        sources.subscribe(stream_id, is_inner, is_fault, head)
        # Junctions carry current events only; a named window or a window may expire some.
        plan.emits_expired = kind != "stream" or any(getattr(p, "emits_expired", False) for p in processors)

    plan = InputPlan(scope, connect, scope.columns, elements, only_current=kind == "stream" and not stages)
    if conditions and len(conditions) == len(stages):
        # Only filters: a stateless selector can run them in its own loop (one pass, no
        # intermediate chunk).  Timer and reset events, which filters pass on, never reach
        # a filter that reads a stream or a named window directly, so none is lost.
        plan.where = " and ".join(f"({c})" for c in conditions)
        plan.where_nodes = tuple(h.expression for h in inp.handlers if isinstance(h, Filter))
        if len(unchecked) == len(conditions):
            plan.where_unchecked = " and ".join(f"({c})" for c in unchecked)
        plan.only_current = kind == "stream"

        def connect_unfiltered(emit: Emit) -> None:
            sources.subscribe(stream_id, is_inner, is_fault, emit)

        plan.connect_unfiltered = connect_unfiltered
    return plan


class FilterProcessor:
    """Keeps the events of a chunk for which the compiled condition holds.

    A condition that raises for one event (``a / b`` with ``b == 0``) faults that event only:
    the chunk is filtered again event by event (a filter has no state, so nothing is
    applied twice) and the failing events go to the stream's ``@OnError``.
    """

    __slots__ = ("select", "next", "fault")

    def __init__(self, select: Callable[[list[Event]], list[Event]],
                 fault: Callable[[Event, Exception], None]) -> None:
        self.select = select
        self.next: Emit = _nothing
        self.fault = fault

    def process(self, chunk: list[Event]) -> None:
        try:
            out = self.select(chunk)
        except Exception:
            if len(chunk) == 1:
                raise
            out = self._one_by_one(chunk)
        if out:
            self.next(out)

    def _one_by_one(self, chunk: list[Event]) -> list[Event]:
        out: list[Event] = []
        select = self.select
        for e in chunk:
            try:
                out += select([e])
            except Exception as exc:
                self.fault(e, exc)
        return out


def _nothing(chunk: list[Event]) -> None:
    return None


def _filter_stage(handler: Filter, scope: StreamScope, ctx: Any, gen: CodeGen,
                  mixed: bool) -> tuple[Callable[[], Any], str]:
    compiler = ExpressionCompiler(ctx, scope, gen)
    cond = compiler.compile_condition(handler.expression, "filter")
    binds = comprehension_bindings(scope.prologue)
    # After a window, timer and reset events pass through untouched (the selector needs them);
    # every event carries data, so the bindings are safe and the type test short-circuits.
    test = f"e.type > 1 or {cond}" if mixed else cond
    run = gen.function("_filter_chunk", "chunk", [f"return [e for e in chunk {binds} if {test}]"])

    def make() -> FilterProcessor:
        return FilterProcessor(run, ctx.fault_event)

    return make, cond


def output_data_slots(selector: Selector, window_scope: StreamScope,
                      final_scope: StreamScope) -> list[int | None]:
    """The event's output data as Siddhi lays it out for a single-stream query, as indexes
    into the window's input: one slot per output attribute, in select order, duplicates kept
    (SelectorParser's addOutputDataAllowingDuplicate); a slot is None (``null``) where the
    output is not a plain attribute, or one the window does not see (made by a stream
    function after it).  ``select *`` outputs every attribute of the input's last definition.
    """
    if selector.attributes is None:
        return [window_scope.index(a.name) for a in final_scope.attributes]
    slots: list[int | None] = []
    for oa in selector.attributes:
        var = oa.expression
        if (not isinstance(var, Variable) or var.stream_index is not None
                or (var.stream_id is not None and var.stream_id not in window_scope.names)):
            slots.append(None)
        else:
            slots.append(window_scope.index(var.attribute))
    return slots


def _window_stage(build_window: Any, handler: WindowHandler, scope: StreamScope, ctx: Any, gen: CodeGen,
                  eid: str, elements: dict[str, Any], expects_expired: bool = True,
                  key_slots: list[list[int | None] | None] | None = None) -> Callable[[], Any]:
    # A single-stream query never scans its window; only batch windows care about `expired`.
    factory = build_window(handler, scope, ctx, gen, expired=expects_expired, findable=False)

    def make() -> Any:
        window = factory()
        slots = key_slots[0] if key_slots is not None else None
        if slots is not None and hasattr(window, "key_by_output"):
            # Siddhi's frequency windows without key attributes key by the output data
            window.key_by_output(slots)
        elements[eid] = window
        return window

    return make


def _stream_function_stage(handler: StreamFunction, scope: StreamScope, ctx: Any, gen: CodeGen,
                           eid: str, elements: dict[str, Any]) -> tuple[Callable[[], Any], StreamScope]:
    ext = registry.get(Kind.STREAM_PROCESSOR, handler.namespace, handler.name)
    if ext is None:
        if registry.get(Kind.WINDOW, handler.namespace, handler.name) is not None:
            raise error_at(f"'{handler.name}' is a window: write #window.{handler.name}(...)", handler)
        qual = f"{handler.namespace}:{handler.name}" if handler.namespace else handler.name
        raise error_at(f"unknown stream function '#{qual}'", handler)
    compiler = ExpressionCompiler(ctx, scope, gen)
    infos = []
    getters = []
    for arg in compiler.star_args(handler) if handler.star else handler.args:
        info, c = compiler.arg_info(arg)
        infos.append(info)
        getters.append(gen.function("_arg", "e", list(scope.prologue) + [f"return {c.code}"]))
    try:
        extra, make_processor = ext.factory(infos, getters, list(scope.attributes), ctx)
    except Exception as exc:
        raise error_at(str(getattr(exc, "message", exc)), handler) from None
    names = {a.name for a in scope.attributes}
    for a in extra:
        if a.name in names:
            raise error_at(f"stream function output '{a.name}' clashes with an input attribute", handler)
    new_scope = StreamScope(scope.stream_id, [*scope.attributes, *extra], list(scope.names), scope.data)
    # A stream function with timers (a SchedulingProcessor in Siddhi) takes its turn in
    # planning order, as its Scheduler is created when the query is parsed (engine.clock).
    rank_of = getattr(getattr(ctx, "scheduler", None), "rank_of", None)
    rank = None if rank_of is None else rank_of(handler)

    def make() -> Any:
        proc = make_processor()
        if rank is not None:
            try:
                proc.timer_rank = rank
            except AttributeError:  # (a processor with __slots__ has no timers of its own)
                pass
        elements[eid] = proc
        return proc

    return make, new_scope
