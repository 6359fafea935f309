"""Joins: ``from L[#window...] [unidirectional] [left|right|full outer] join R ... on cond``.

Like Siddhi's ``JoinInputStreamParser`` and ``JoinProcessor``:

* each stream side runs its own chain (filters, stream functions, window); a side without a
  window holds nothing (Siddhi puts a ``lengthBatch(0)`` there: every event passes, then
  leaves at once as an expired event, then a reset);
* every event a side's window emits (current or expired) probes the other side's contents
  (window contents, named window contents, table rows) with the compiled ``on`` condition and
  yields one :class:`~engine.event.StateEvent` per match, of the probing event's type; the
  matches of ONE probing event form one chunk for the selector (so an aggregating selector
  emits once per probing event, as in Siddhi), and the rows of all the probing events of an
  input chunk go on as one chunk (``QuerySelector.process_chunks``: Siddhi's output rate
  limiter merges the chunks of ``QuerySelector.process(List)``);
* ``unidirectional`` lets only that side trigger; tables and aggregations never trigger;
* an outer side that finds nothing emits its event with ``None`` for the other side;
* a named window joined with itself triggers from one side only (Siddhi shares one receiver).

Probing a table uses :func:`engine.table.compile_matcher`, so an equality on a primary-key or
indexed column becomes a dict lookup.  Joins with an aggregation are delegated to the
aggregation (``join_input_plan``).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from srota.engine.codegen import CodeGen
from srota.engine.event import EXPIRED, RESET, TIMER, Event, StateEvent
from srota.engine.expression import error_at
from srota.engine.planning import EmitChunks, InputPlan, Sources, plan_single_input
from srota.engine.scope import Column
from srota.engine.table import compile_matcher
from srota.grammar.errors import did_you_mean
from srota.grammar.model import (
    Attribute,
    AttrType,
    Expression,
    FunctionCall,
    IsNullStream,
    JoinInputStream,
    JoinTrigger,
    JoinType,
    OutputEventType,
    Partition,
    Query,
    SingleInputStream,
    Variable,
)

Emit = Callable[[list[Any]], None]

_DATA = ("_dl", "_dr")
_EVENT = ("_el", "_er")


@dataclass
class JoinSide:
    """What the planner knows about one side of a join."""

    inp: SingleInputStream
    kind: str  # "stream", "window" (named window), "table" or "aggregation"
    obj: Any
    attributes: tuple[Attribute, ...]
    names: frozenset[str]


class JoinScope:
    """Attributes of both sides of a join, over ``StateEvent(events=[left, right])``.

    ``prologue`` binds ``_el``/``_er`` (the events, None for a missing outer side) and
    ``_dl``/``_dr`` (their data, all-None tuples when missing).  Probe functions use the same
    names with other bindings, so one compiled condition text serves both.
    """

    def __init__(self, sides: Sequence[JoinSide], prologue: tuple[str, ...] = ()) -> None:
        self.sides = list(sides)
        self.prologue = prologue
        self._index = [{a.name: i for i, a in enumerate(s.attributes)} for s in sides]

    @classmethod
    def over(cls, sides: Sequence[JoinSide], gen: CodeGen) -> JoinScope:
        """A scope whose prologue reads both sides from ``e.events`` (None-filled when missing)."""
        nulls = [gen.ref(tuple([None] * len(side.attributes)), "nulls") for side in sides]
        prologue = tuple(
            line for i in range(2) for line in (
                f"{_EVENT[i]} = e.events[{i}]",
                f"{_DATA[i]} = {_EVENT[i]}.data if {_EVENT[i]} is not None else {nulls[i]}"))
        return cls(sides, prologue)

    def _side_of(self, name: str, node: Any) -> int:
        found = [i for i, s in enumerate(self.sides) if name in s.names]
        if not found:
            known = sorted(n for s in self.sides for n in s.names)
            raise error_at(f"'{name}' is neither of the joined inputs ({', '.join(known)})", node)
        if len(found) > 1:
            raise error_at(f"'{name}' names both sides of the join: give them aliases with 'as'", node)
        return found[0]

    def resolve(self, var: Variable) -> tuple[str, AttrType]:
        if var.stream_index is not None:
            raise error_at(f"'{var.stream_id}[{var.stream_index}]' indexes are only allowed in patterns", var)
        if var.stream_id is not None:
            i = self._side_of(var.stream_id, var)
            j = self._index[i].get(var.attribute)
            if j is None:
                raise error_at(f"'{var.stream_id}' has no attribute '{var.attribute}'"
                               f"{did_you_mean(var.attribute, self._index[i])}", var)
        else:
            having = [i for i, idx in enumerate(self._index) if var.attribute in idx]
            if not having:
                raise error_at(f"neither joined input has an attribute '{var.attribute}'", var)
            if len(having) > 1:
                raise error_at(f"attribute '{var.attribute}' is ambiguous: both joined inputs have it; "
                               f"qualify it with the stream name or alias", var)
            i = having[0]
            j = self._index[i][var.attribute]
        return f"{_DATA[i]}[{j}]", self.sides[i].attributes[j].type

    def resolve_stream(self, node: IsNullStream) -> str:
        return _EVENT[self._side_of(node.stream_id, node)]

    def timestamp(self, node: Expression | None) -> str:
        if node is None:
            return "e.timestamp"
        if isinstance(node, Variable) and node.stream_id is None:
            return f"{_EVENT[self._side_of(node.attribute, node)]}.timestamp"
        raise error_at("eventTimestamp() takes a stream name or alias of the join", node)

    def is_stream_reference(self, name: str) -> bool:
        return any(name in s.names for s in self.sides)

    def columns(self) -> list[Column]:
        """``select *``: the left attributes, then the right ones (names must not clash)."""
        cols: list[Column] = []
        seen: set[str] = set()
        for i, s in enumerate(self.sides):
            for j, a in enumerate(s.attributes):
                if a.name in seen:
                    raise error_at(f"'select *' over the join would output attribute '{a.name}' twice; "
                                   f"select the attributes with distinct names", s.inp)
                seen.add(a.name)
                cols.append(Column(a.name, a.type, f"{_DATA[i]}[{j}]"))
        return cols


class _NoWindow:
    """The window of a join side that has none: the event passes, expires at once, resets.

    As Siddhi's EmptyWindowProcessor, the expired and reset copies carry the time the chunk
    arrived (the app clock), not the event's own timestamp.
    """

    __slots__ = ("next", "expired", "reset", "clock")

    def __init__(self, expired: bool, reset: bool = True, clock: Any = None) -> None:
        self.next: Emit = _drop
        self.expired = expired
        self.reset = reset
        self.clock = clock

    def process(self, chunk: list[Event]) -> None:
        if not self.reset and not self.expired:
            # nothing to add for a row-wise selector: pass the chunk as it is
            self.next([e for e in chunk if e.type <= EXPIRED])
            return
        out: list[Event] = []
        now = self.clock.now() if self.clock is not None else None
        for e in chunk:
            if e.type > EXPIRED:
                continue
            out.append(e)
            ts = e.timestamp if now is None else now
            if self.expired:
                out.append(Event(ts, e.data, EXPIRED))
            if self.reset:
                out.append(Event(ts, e.data, RESET))
        if out:
            self.next(out)

    def contents(self) -> tuple[Event, ...]:
        return ()


def _drop(chunk: list[Any]) -> None:
    return None


def _drop_chunks(chunks: list[list[Any]], on_error: Any) -> None:
    return None


def emit_one_by_one(emit: Emit) -> EmitChunks:
    """An ``emit_chunks`` for a receiver of single chunks: each chunk goes on by itself."""
    def emit_chunks(chunks: list[list[Any]], on_error: Callable[[int, Exception], None] | None) -> None:
        for i, chunk in enumerate(chunks):
            try:
                emit(chunk)
            except Exception as exc:
                if on_error is None:
                    raise
                on_error(i, exc)

    return emit_chunks


def _no_contents() -> tuple[Event, ...]:
    return ()


class JoinProcessor:
    """Receives one side's window output and probes the other side (Siddhi's post-JoinProcessor).

    As Siddhi's, it probes with every event of a chunk first, then hands the selector the
    matches of each probing event as a chunk of their own, all in one call (``next_chunks``:
    their rows go on as one chunk, see :meth:`QuerySelector.process_chunks`).
    """

    __slots__ = ("probe", "contents", "left", "outer", "next_chunks", "fault")

    def __init__(self, probe: Callable[[Event, Any], list[Event]], contents: Callable[[], Any],
                 left: bool, outer: bool) -> None:
        self.probe = probe
        self.contents = contents
        self.left = left
        self.outer = outer
        self.next_chunks: EmitChunks = _drop_chunks
        #: where one event that raises goes (its stream's @OnError); None: the chunk fails
        self.fault: Callable[[Event, Exception], None] | None = None

    def process(self, chunk: list[Event]) -> None:
        probe, contents, left = self.probe, self.contents, self.left
        chunks: list[list[StateEvent]] = []
        probing: list[Event] = []  # the event each chunk's rows come from
        for ev in chunk:
            t = ev.type
            if t == TIMER:
                continue
            if t == RESET:
                chunks.append([StateEvent(ev.timestamp, [ev, None] if left else [None, ev], RESET)])
                probing.append(ev)
                continue
            try:
                found = probe(ev, contents())
            except Exception as exc:
                # this event alone (its joins are done one by one): the others go on
                if self.fault is None or len(chunk) == 1:
                    if chunks:
                        self.next_chunks(chunks, None)
                    raise
                self.fault(ev, exc)
                continue
            if found:
                ts = ev.timestamp
                if left:
                    chunks.append([StateEvent(ts, [ev, f], t) for f in found])
                else:
                    chunks.append([StateEvent(ts, [f, ev], t) for f in found])
                probing.append(ev)
            elif self.outer:
                chunks.append([StateEvent(ev.timestamp, [ev, None] if left else [None, ev], t)])
                probing.append(ev)
        if not chunks:
            return
        fault = self.fault
        if fault is None or len(chunk) == 1:
            self.next_chunks(chunks, None)
        else:  # the selector failing on one event's matches faults that event, as a probe would
            self.next_chunks(chunks, lambda i, exc: fault(probing[i], exc))


def _query_of(ctx: Any, inp: JoinInputStream) -> Query | None:
    """The query whose input is ``inp`` (None when planned from outside an app)."""
    elements = getattr(getattr(ctx, "app", None), "execution_elements", ())
    for element in elements:
        queries = element.queries if isinstance(element, Partition) else (element,)
        for q in queries:
            if isinstance(q, Query) and q.input is inp:
                return q
    return None


class BatchJoinProcessor(JoinProcessor):
    """A join processor for row-wise selectors: one output chunk per input chunk."""

    __slots__ = ("next",)

    def __init__(self, probe: Callable[[Event, Any], list[Event]], contents: Callable[[], Any],
                 left: bool, outer: bool) -> None:
        super().__init__(probe, contents, left, outer)
        self.next: Emit = _drop

    def process(self, chunk: list[Event]) -> None:
        probe, contents, left, outer = self.probe, self.contents, self.left, self.outer
        out: list[Any] = []
        for ev in chunk:
            t = ev.type
            if t > EXPIRED:
                if t == RESET:
                    out.append(StateEvent(ev.timestamp, [ev, None] if left else [None, ev], RESET))
                continue
            try:
                found = probe(ev, contents())
            except Exception as exc:
                if self.fault is None or len(chunk) == 1:
                    raise
                self.fault(ev, exc)  # the probe of this event alone failed: the others join
                continue
            if found:
                ts = ev.timestamp
                if left:
                    out.extend([StateEvent(ts, [ev, f], t) for f in found])
                else:
                    out.extend([StateEvent(ts, [f, ev], t) for f in found])
            elif outer:
                out.append(StateEvent(ev.timestamp, [ev, None] if left else [None, ev], t))
        if out:
            self.next(out)


def output_needs(ctx: Any, inp: JoinInputStream) -> tuple[bool, bool]:
    """What the query of join ``inp`` needs of its input: ``(expired, row_wise)``: whether it
    outputs expired events (so a side without a window sends expired copies), and whether
    its selector treats every row alike whatever the chunks (so one chunk per input chunk
    will do, without reset events)."""
    query = _query_of(ctx, inp)
    return _expects_expired(query), _row_wise(ctx, query)


def _expects_expired(query: Query | None) -> bool:
    """Whether the query outputs expired events (unknown: assume it does)."""
    if query is None:
        return True
    return getattr(query.output, "event_type", OutputEventType.CURRENT) in (
        OutputEventType.EXPIRED, OutputEventType.ALL)


def _row_wise(ctx: Any, query: Query | None) -> bool:
    """True when the selector treats every row alike whatever the chunk boundaries.

    Then the matches of all probing events of one input chunk can travel as one chunk and
    the no-window side needs no reset events: no aggregators, group by, order by, limit.
    """
    if query is None:
        return False
    sel = query.selector
    if sel.group_by or sel.order_by or sel.limit is not None or sel.offset is not None:
        return False
    if sel.attributes is None:
        return True

    def has_aggregator(node: Any) -> bool:
        if isinstance(node, FunctionCall) and ctx.is_aggregator(node.namespace, node.name):
            return True
        if is_dataclass(node):
            return any(has_aggregator(getattr(node, f.name)) for f in fields(node) if f.name != "pos")
        if isinstance(node, tuple):
            return any(has_aggregator(x) for x in node)
        return False

    return not any(has_aggregator(oa.expression) for oa in sel.attributes) and \
        not (sel.having is not None and has_aggregator(sel.having))


def _output_data(query: Query | None, scope: JoinScope, i: int, side: JoinSide) -> list[int | None] | None:
    """The attributes of side ``i`` in its events' output data, as Siddhi lays them out: the
    distinct attributes of that side the selector outputs as plain variables, in select order
    (``select *``: all).  A frequency window without key attributes keys by them.  None when
    the query is unknown."""
    if query is None:
        return None
    sel = query.selector
    if sel.attributes is None:
        return list(range(len(side.attributes)))
    slots: list[int | None] = []
    for oa in sel.attributes:
        var = oa.expression
        if not isinstance(var, Variable) or var.stream_index is not None:
            continue
        try:
            if var.stream_id is not None:
                if scope._side_of(var.stream_id, var) != i:
                    continue
            elif var.attribute not in scope._index[i] or any(
                    var.attribute in idx for j, idx in enumerate(scope._index) if j != i):
                continue
        except Exception:  # noqa: BLE001 - the selector reports it
            continue
        j = scope._index[i].get(var.attribute)
        if j is not None and j not in slots:
            slots.append(j)
    return slots


def plan_join_input(inp: JoinInputStream, ctx: Any, sources: Sources, gen: CodeGen,
                    element_prefix: str) -> InputPlan:
    """Plan a join: both sides' chains, the probe functions and the join scope."""
    looked = []
    for side_inp in (inp.left, inp.right):
        kind, obj = sources.lookup(side_inp.stream_id, side_inp.is_inner, side_inp.is_fault, side_inp)
        if kind == "aggregation":
            return obj.join_input_plan(inp, ctx, sources, gen, element_prefix)
        looked.append((kind, obj))
    if inp.within or inp.per is not None:
        raise error_at("'within' and 'per' are only allowed when joining an aggregation", inp)
    sides: list[JoinSide] = []
    for side_inp, (kind, obj) in zip((inp.left, inp.right), looked, strict=True):
        if kind == "table":
            if side_inp.handlers:
                raise error_at(f"table '{side_inp.stream_id}' cannot take filters or windows in a join", side_inp)
            attributes = tuple(obj.definition.attributes)
        elif kind == "window":
            attributes = tuple(obj.definition.attributes)
        else:
            attributes = tuple(obj.attributes)
        names = frozenset([side_inp.reference_id] if side_inp.reference_id else [side_inp.stream_id])
        sides.append(JoinSide(side_inp, kind, obj, attributes, names))
    left, right = sides
    if left.kind == "table" and right.kind == "table":
        raise error_at(f"both inputs of the join, '{left.inp.stream_id}' and '{right.inp.stream_id}', "
                       f"are tables", inp)

    gen.ns.setdefault("_StateEvent", StateEvent)
    scope = JoinScope.over(sides, gen)

    # Which sides trigger: not tables, only the unidirectional one, one side of a window self-join.
    triggers = [s.kind != "table" for s in sides]
    if inp.trigger is JoinTrigger.LEFT:
        triggers[1] = False
    elif inp.trigger is JoinTrigger.RIGHT:
        triggers[0] = False
    for i, side in enumerate(sides):
        # Siddhi compiles a finder on a side whenever the other side may trigger (a window
        # self-join too), and a cron window has none (Window.compileCondition refuses it).
        if side.kind == "window" and not side.obj.findable and triggers[1 - i]:
            raise error_at(f"window '{side.inp.stream_id}' cannot be searched by a join: a "
                           f"{side.obj.definition.window.name} window keeps no findable contents", side.inp)
    if inp.trigger is JoinTrigger.ALL and left.kind == "window" and right.kind == "window" \
            and left.inp.stream_id == right.inp.stream_id:
        triggers[0] = False
    outer = (inp.join_type in (JoinType.LEFT_OUTER, JoinType.FULL_OUTER),
             inp.join_type in (JoinType.RIGHT_OUTER, JoinType.FULL_OUTER))

    # One probe per triggering side: its event against the other side's contents.
    probes: list[Callable[..., list[Event]] | None] = [None, None]
    for i in (0, 1):
        if not triggers[i]:
            continue
        o = 1 - i
        other = sides[o]
        probe_scope = JoinScope(sides, (f"{_EVENT[i]} = e", f"{_DATA[i]} = e.data"))
        table = other.obj if other.kind == "table" else None
        source = f"{gen.ref(table, 'tbl')}.scan()" if table is not None else "_src"
        probes[i] = compile_matcher(inp.on, probe_scope, _DATA[o], _EVENT[o], source, gen, ctx, table,
                                    params="e, _src", what="join condition")

    # Each stream/window side's chain (filters, functions, window), planned once.
    expired, batch = output_needs(ctx, inp)
    query_of = _query_of(ctx, inp)
    chains: list[InputPlan | None] = [None, None]
    for i, s in enumerate(sides):
        if s.kind != "table":
            # as Siddhi's JoinInputStreamParser: the side's window knows whether the query
            # outputs expired events (batch windows then emit them)
            chains[i] = plan_single_input(s.inp, ctx, sources, gen, f"{element_prefix}/{('left', 'right')[i]}",
                                          expects_expired=expired)
    output_slots = [_output_data(query_of, scope, i, sides[i]) for i in (0, 1)]
    elements: dict[str, Any] = {}
    window_ids = [f"{element_prefix}/{('left', 'right')[i]}/window" for i in (0, 1)]

    def connect_chunks(emit_chunks: EmitChunks, emit: Emit | None = None) -> None:
        joiners: list[JoinProcessor | None] = [None, None]
        for i in (0, 1):
            probe = probes[i]
            if triggers[i] and probe is not None:
                joiner: JoinProcessor
                if batch:
                    joiner = BatchJoinProcessor(probe, _no_contents, i == 0, outer[i])
                    joiner.next = emit if emit is not None else lambda chunk: emit_chunks([chunk], None)
                else:
                    joiner = JoinProcessor(probe, _no_contents, i == 0, outer[i])
                joiner.next_chunks = emit_chunks
                joiner.fault = ctx.fault_event
                joiners[i] = joiner
        holders: list[Any] = [None, None]
        for i, s in enumerate(sides):
            if s.kind == "table":
                holders[i] = None  # the probe reads the table itself (by key when it can)
                continue
            plan = chains[i]
            assert plan is not None
            jp = joiners[i]
            if s.kind == "window":
                # a named window: it holds the events; subscribe only to trigger
                if jp is not None:
                    plan.connect(jp.process)
                holders[i] = s.obj
            elif s.inp.window is not None:
                # the side's own window must be fed even when the side does not trigger
                plan.connect(jp.process if jp is not None else _drop)
                elements.update(plan.elements)
                holders[i] = plan.elements[window_ids[i]]
                holders[i].enable_find()  # Siddhi's findToBeExecuted
                # (with no output data at all Siddhi's generateKey fails on a null array for
                # every event: the window keeps its all-attribute key instead)
                if output_slots[i] and hasattr(holders[i], "key_by_output"):
                    holders[i].key_by_output(output_slots[i])
            else:
                # every event leaves a reset behind, as Siddhi's EmptyWindowProcessor: a query
                # callback is called for it even where nothing matched (with neither list)
                nowin = _NoWindow(expired, clock=ctx.clock)
                if jp is not None:
                    nowin.next = jp.process
                    plan.connect(nowin.process)
                elements.update(plan.elements)
                holders[i] = nowin
        for i in (0, 1):
            jp = joiners[i]
            if jp is not None and holders[1 - i] is not None:
                jp.contents = holders[1 - i].contents

    def connect(emit: Emit) -> None:
        connect_chunks(emit_one_by_one(emit), emit)

    return InputPlan(scope, connect, scope.columns, elements, connect_chunks=connect_chunks)
