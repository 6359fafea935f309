"""The query selector: projection, aggregation, group by, having, order by, limit and offset.

Semantics follow Siddhi's ``QuerySelector`` (conformance notes 1, 2 and 8):

* without aggregators or ``group by``, every event that matches the output event type and
  ``having`` is emitted;
* with aggregators and no ``group by``, every event of a chunk updates the aggregators but
  only the LAST qualifying event of the chunk is emitted;
* with ``group by``, one event per key is emitted per chunk: the last for that key, in order
  of the key's first appearance in the chunk;
* then ``order by`` (stable), ``offset`` and ``limit`` apply per chunk;
* ``having`` sees output names first (an alias shadows an input attribute);
* without aggregators or ``group by``, a batch window's RESET events stay in the chunk and go
  on with its rows (Siddhi's processNoGroupBy): ``output first`` limiters count them and
  query callbacks are called for a chunk of resets only (see :class:`engine.output.WithResets`);
* an aggregating (or grouped) selector whose ``offset``/``limit`` removed every row still
  hands on the empty chunk (a query callback is called with neither list).

``batching=False`` (used by ``output snapshot``) emits a row for every event instead.
The projection and the whole no-aggregation path are generated code.
"""
from __future__ import annotations

import io
import itertools
import re
import tokenize
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from srota.engine import columnar as _columnar
from srota.engine.aggregators import AggregatorState
from srota.engine.codegen import CodeGen
from srota.engine.event import CURRENT, EXPIRED, RESET, Event, RawEvent
from srota.engine.expression import ArgInfo, Compiled, ExpressionCompiler, error_at, operators_only
from srota.engine.output import WithResets
from srota.engine.registry import Kind, registry
from srota.engine.scope import OutputScope, StreamScope
from srota.engine.state_codec import register_state_type
from srota.engine.types import java_key, java_order
from srota.grammar.model import (
    Attribute,
    AttrType,
    Constant,
    Expression,
    FunctionCall,
    Order,
    OutputEventType,
    Selector,
    Variable,
)

Emit = Callable[[list[Event]], None]


def comprehension_bindings(prologue: tuple[str, ...] | list[str]) -> str:
    """Turn ``name = expr`` prologue lines into comprehension clauses ``for name in (expr,)``."""
    parts = []
    for line in prologue:
        name, _, expr = line.partition(" = ")
        parts.append(f"for {name.strip()} in ({expr.strip()},)")
    return " ".join(parts)


class GroupedEvent(Event):
    """An output event of a ``group by`` selector, carrying its group key.

    Siddhi's GroupedComplexEvent: per-key output rate limiters (``output first every 5
    events`` with ``group by``) count and keep events per key.  Elsewhere it is a plain event.
    """

    __slots__ = ("group_key",)

    def __init__(self, timestamp: int, data: Any, type: int, group_key: Any) -> None:  # noqa: A002
        super().__init__(timestamp, data, type)
        self.group_key = group_key

    def __reduce__(self) -> Any:
        return (GroupedEvent, (self.timestamp, self.data, self.type, self.group_key))


class RawGroupedEvent(GroupedEvent):
    """A :class:`GroupedEvent` made by setting its slots (no Python ``__init__``; see
    :class:`~engine.event.RawEvent`); kept in state and pickled as a GroupedEvent."""

    __slots__ = ()
    __init__ = object.__init__
    _state_class = GroupedEvent


class AggregatorSlots:
    """Collects aggregator calls found while compiling the select list (or any expression).

    Each call becomes ``A[slot].{op}(arg)`` in the generated code; the caller generates an
    ``add`` and a ``remove`` variant and keeps one state per slot (and group key).
    """

    def __init__(self) -> None:
        self.factories: list[Callable[[], Any]] = []
        self.calls: list[str] = []  # the generated code of each call, with "{op}"
        self.args: list[str] = []  # the code of each call's argument ("" for none)

    def hook(self, call: FunctionCall, compiler: ExpressionCompiler) -> Compiled | None:
        ext = registry.get(Kind.AGGREGATOR, call.namespace, call.name)
        if ext is None:
            return None
        infos: list[ArgInfo] = []
        codes: list[str] = []
        inner = ExpressionCompiler(compiler.ctx, compiler.scope, compiler.gen)  # no nested aggregates
        for arg in call.args:
            info, c = inner.arg_info(arg)
            infos.append(info)
            codes.append(c.code)
        try:
            rtype, factory = ext.factory(infos)
        except Exception as exc:
            raise error_at(str(getattr(exc, "message", exc)), call) from None
        if isinstance(factory, type):  # an extension's state class may be kept in snapshots
            register_state_type(factory)
        slot = len(self.factories)
        self.factories.append(factory)
        # One argument is passed as is; several (str:groupConcat(key, sep), map:collect(k, v))
        # as one tuple, so every state keeps the one-argument add/remove interface.
        passed = codes[0] if len(codes) == 1 else (f"({', '.join(codes)},)" if codes else "")
        # "{op}" is replaced by add/remove when the two projection variants are generated.
        self.calls.append(f"A[{slot}].{{op}}({passed})")
        self.args.append(passed)
        return Compiled(f"A[{slot}].{{op}}({passed})", rtype)

    def value_code(self, code: str, event_type: str = "e.type") -> str:
        """``code`` reading each aggregator's value instead of updating it: the value its
        last update returned, that update being the one of the event ``e`` whose type is
        ``event_type`` (code: ``"0"``/``"1"`` where the row is made for current/expired events
        only).  Mostly that is ``value()``; a state class whose update answers other than its
        value (Siddhi's ``sum``: the sum after an addition, even at a count of 0) offers
        ``inline_value_after(state, temp, added)``, ``added`` being code saying the update
        added a non-null value."""
        for slot in sorted(range(len(self.calls)), key=lambda i: -len(self.calls[i])):
            after = getattr(type(self.factories[slot]()), "inline_value_after", None)
            if after is None:
                value = f"A[{slot}].value()"
            else:
                arg = self.args[slot]
                added = {"0": f"({arg}) is not None", "1": "False"}.get(
                    event_type, f"({event_type} == 0 and ({arg}) is not None)")
                value = after(f"A[{slot}]", f"_qa{slot}", added)
            code = code.replace(self.calls[slot], value)
        return code

    def destroyable_code(self) -> str | None:
        """An expression over the states ``A`` saying every one is as a new one (Siddhi drops
        an aggregator's state of a group when its ``canDestroy`` holds after an update, so a
        group may go when all of them do); None when it always holds."""
        tests = []
        for slot, factory in enumerate(self.factories):
            cls = type(factory())
            inline = getattr(cls, "inline_can_destroy", None)
            if inline is not None:
                tests.append(f"({inline(f'A[{slot}]')})")
            elif getattr(cls, "can_destroy", AggregatorState.can_destroy) is not AggregatorState.can_destroy:
                # (a state class that does not say keeps the older rule: its group may go)
                tests.append(f"A[{slot}].can_destroy()")
        return " and ".join(tests) or None


_AggregatorSlots = AggregatorSlots  # the name other modules used first


class QuerySelector:
    """Runs the selector of one query instance.  ``next`` receives output chunks."""

    def __init__(self, plan: SelectorPlan) -> None:
        self.plan = plan
        self.next: Emit = _drop
        # group key -> aggregator states; the no-group-by case uses key None
        self.states: dict[Any, list[Any]] = {}
        #: the states of having's aggregators (see SelectorPlan.having_from), by group key
        #: when they are per group, else under None
        self.having_states: dict[Any, list[Any]] = {}
        self.live: dict[Any, int] = {}
        #: count events per group (to release a group's state when its window empties);
        #: the query planner turns it off for inputs that never expire events
        self.track_live = True
        #: where one event that fails goes (set for single-stream queries; see _recover)
        self.fault: Callable[[Event, Exception], None] | None = None
        #: the event the Python loops are processing (what EventError carries)
        self._current: Event | None = None

    # ------------------------------------------------------------------ processing
    def process(self, chunk: list[Event]) -> None:
        p = self.plan
        try:
            if p.fast is not None:
                out = p.fast(chunk)
            elif p.deferred is not None:
                out = p.deferred(self, chunk)
            elif p.group_key is not None:
                out = self._grouped(chunk)
            elif p.factories:
                out = self._aggregated(chunk)
            else:
                out = self._plain(chunk)
        except Exception as exc:
            if self.fault is None or len(chunk) == 1:
                if isinstance(exc, EventError):
                    raise exc.cause from None
                raise
            out = self._recover(chunk, exc)
        if out:
            if p.post is not None:
                out = p.post(out)
                if not out and not p.empty_goes_on:
                    return
            self.next(out)

    def process_chunks(self, chunks: list[list[Any]],
                       on_error: Callable[[int, Exception], None] | None = None) -> None:
        """Select each of ``chunks`` on its own and hand on their rows as one chunk.

        Siddhi's ``QuerySelector.process(List<ComplexEventChunk>)``: a join gives its selector
        the matches of each probing event of an input chunk as a chunk of their own (an
        aggregating selector's row, group by, order by and limit apply per chunk) and the
        output rate limiter merges what they give, so a callback or the target stream sees
        one chunk per input chunk.  ``on_error(i, exc)`` takes an exception of chunk ``i``;
        without it the exception is raised, after the rows of the chunks before it went on.
        """
        if len(chunks) == 1 and on_error is None:
            self.process(chunks[0])
            return
        nxt = self.next
        pieces: list[list[Event]] = []
        self.next = pieces.append
        try:
            for i, chunk in enumerate(chunks):
                try:
                    self.process(chunk)
                except Exception as exc:
                    if on_error is None:
                        raise
                    on_error(i, exc)
        finally:
            self.next = nxt
            # (a chunk that selected nothing hands nothing on; one whose offset/limit left
            # it empty still counts: Siddhi merges the chunks its selector returned, empty
            # or not, and passes the merged chunk on)
            if pieces:
                nxt(pieces[0] if len(pieces) == 1 else _merged(pieces))

    def _recover(self, chunk: list[Event], exc: Exception) -> list[Event]:
        """The output of ``chunk`` when one of its events raised: that event is faulted alone.

        Without aggregators the selector has no state, so the chunk is selected again event
        by event.  With aggregators the events before the failing one have already updated
        their groups: processing resumes after it (the chunk's output is the last row per
        group, made from the aggregators, so the rows of the events before are not lost).
        """
        p = self.plan
        fault = self.fault
        assert fault is not None
        if not p.factories:
            grouped = p.fast is None and p.group_key is not None
            select = p.fast if p.fast is not None else (self._grouped if grouped else self._plain)
            out: list[Event] = []
            for e in chunk:
                try:
                    got = select([e])
                except Exception as one:
                    fault(e, one)
                    continue
                if got.__class__ is WithResets and out.__class__ is not WithResets:
                    out = WithResets(out)
                out += got
            if grouped and p.batching:  # one row per group and chunk: the last
                return list({ev.group_key: ev for ev in out}.values())  # type: ignore[attr-defined]
            return out
        at, making_row = _failed_event(exc, chunk)
        cause = exc.cause if isinstance(exc, EventError) else exc
        if at is None:
            raise cause
        fault(chunk[at], cause)
        if making_row:
            # Every event has updated the aggregators; the row of a group's last event failed
            # (a column that is not an aggregate, made once per chunk): the group's row comes
            # from its last event whose row can be made.
            return self._merge_groups([e for i, e in enumerate(chunk) if i != at and e.type <= 1], [])
        before = [e for e in chunk[:at] if e.type <= 1]
        rest = chunk[at + 1:]
        try:
            after = self._select(rest) if rest else []
        except Exception as again:
            after = self._recover(rest, again) if len(rest) > 1 else (
                fault(rest[0], again.cause if isinstance(again, EventError) else again) or [])
        if not p.batching:
            return after  # (rows of the events before the failure are lost; snapshot limiters only)
        return self._merge_groups(before, after)

    def _select(self, chunk: list[Event]) -> list[Event]:
        p = self.plan
        if p.deferred is not None:
            return p.deferred(self, chunk)
        if p.group_key is not None:
            return self._grouped(chunk)
        return self._aggregated(chunk)

    def _merge_groups(self, before: list[Event], after: list[Event]) -> list[Event]:
        """The batched output of ``before + after`` when only ``after`` was selected now."""
        p = self.plan
        want = [e for e in before if (e.type == CURRENT and p.current_on) or (e.type == EXPIRED and p.expired_on)]
        if p.group_key is None:
            if after or not want:
                return after
            return self._value_rows([(e, None) for e in want], {None: self._states_for(None)}, Event)
        by_key: dict[Any, list[Event]] = {}
        for e in want:
            by_key.setdefault(p.group_key(e), []).append(e)
        made = {ev.group_key: ev for ev in after}  # type: ignore[attr-defined]
        out = []
        for key, events in by_key.items():
            ev = made.pop(key, None)
            out += [ev] if ev is not None else self._value_rows([(e, key) for e in events], self.states,
                                                                  GroupedEvent)
        out += made.values()
        return out

    def _value_rows(self, events: list[tuple[Event, Any]], states: dict[Any, list[Any]], kind: Any) -> list[Event]:
        """The row of the last of ``events`` (one group's, oldest first) whose row can be made
        from the aggregators' current values (no update), if it passes ``having``."""
        p = self.plan
        assert self.fault is not None
        for e, key in reversed(events):
            A = states.get(key)
            if A is None:
                return []
            try:
                row = p.project_value(e, A)
                if p.having_value is not None and not p.having_value(e, row, A):
                    return []
            except Exception as exc:
                self.fault(e, exc)
                continue
            return [kind(e.timestamp, row, e.type, key) if kind is GroupedEvent else kind(e.timestamp, row, e.type)]
        return []

    def _states_for(self, key: Any) -> list[Any]:
        states = self.states.get(key)
        if states is None:
            p = self.plan
            if p.having_from is None:
                states = [f() for f in p.factories]
            else:
                # having's aggregators: states of their own, kept by _reset (see SelectorPlan)
                hkey = key if p.having_per_group else None
                having = self.having_states.get(hkey)
                if having is None:
                    having = self.having_states[hkey] = [f() for f in p.factories[p.having_from:]]
                states = [f() for f in p.factories[:p.having_from]] + having
            self.states[key] = states
        return states

    def _reset(self) -> None:
        # Siddhi's processReset drops every group's states (cleanGroupByStates), those of
        # minForever/maxForever too: a batch window's next batch starts them over.
        self.states.clear()
        self.live.clear()

    def _plain(self, chunk: list[Event]) -> list[Event]:
        p = self.plan
        out = []
        for e in chunk:
            t = e.type
            if (t == CURRENT and p.current_on) or (t == EXPIRED and p.expired_on):
                row = p.project(e)
                if p.having is None or p.having(e, row):
                    out.append(Event(e.timestamp, row, t))
            elif t == RESET and not p.batching:
                out.append(e)
        return out

    def _aggregated(self, chunk: list[Event]) -> list[Event]:
        try:
            return self._aggregated_loop(chunk)
        except EventError:
            raise
        except Exception as exc:
            raise EventError(self._current, exc, False) from exc

    def _aggregated_loop(self, chunk: list[Event]) -> list[Event]:
        p = self.plan
        states = self._states_for(None)
        last = None
        out: list[Event] | None = [] if not p.batching else None
        for e in chunk:
            self._current = e
            t = e.type
            if t == CURRENT:
                row = p.project_add(e, states)
                ok = p.having_add is None or p.having_add(e, row, states)
            elif t == EXPIRED:
                row = p.project_remove(e, states)
                ok = p.having_remove is None or p.having_remove(e, row, states)
            elif t == RESET:
                self._reset()
                states = self._states_for(None)
                if out is not None:
                    out.append(e)  # Siddhi's non-batch path passes resets on (snapshot limiters use them)
                continue
            else:
                continue
            if ok and ((t == CURRENT and p.current_on) or (t == EXPIRED and p.expired_on)):
                last = Event(e.timestamp, row, t)
                if out is not None:
                    out.append(last)
        if out is not None:
            return out
        return [last] if last is not None else []

    def _grouped(self, chunk: list[Event]) -> list[Event]:
        try:
            return self._grouped_loop(chunk)
        except EventError:
            raise
        except Exception as exc:
            raise EventError(self._current, exc, False) from exc

    def _grouped_loop(self, chunk: list[Event]) -> list[Event]:
        p = self.plan
        key_of = p.group_key
        assert key_of is not None   # (this path is taken for grouped selectors only)
        groups: dict[Any, Event] = {}
        out: list[Event] | None = [] if not p.batching else None
        has_aggs = bool(p.factories)
        destroyable = p.destroyable
        for e in chunk:
            self._current = e
            t = e.type
            if t == RESET:
                self._reset()
                if out is not None:
                    out.append(e)
                continue
            if t != CURRENT and t != EXPIRED:
                continue
            key = key_of(e)
            if has_aggs:
                states = self._states_for(key)
                if t == CURRENT:
                    row = p.project_add(e, states)
                    ok = p.having_add is None or p.having_add(e, row, states)
                    self.live[key] = self.live.get(key, 0) + 1
                else:
                    row = p.project_remove(e, states)
                    ok = p.having_remove is None or p.having_remove(e, row, states)
                    left = self.live.get(key, 0) - 1
                    if left <= 0:
                        # the window holds none of this group's events: its states go if
                        # every one is as a new one (Siddhi drops each aggregator's state
                        # when its canDestroy holds; a count below zero, a float sum's
                        # rounding or maxForever's value keep it)
                        self.live.pop(key, None)
                        if destroyable is None or destroyable(states):
                            self.states.pop(key, None)
                    else:
                        self.live[key] = left
            else:
                row = p.project(e)
                ok = p.having is None or p.having(e, row)
            if ok and ((t == CURRENT and p.current_on) or (t == EXPIRED and p.expired_on)):
                ev = GroupedEvent(e.timestamp, row, t, key)
                if out is not None:
                    out.append(ev)
                else:
                    groups[key] = ev
        return out if out is not None else list(groups.values())

    # ------------------------------------------------------------------ state
    def snapshot_state(self) -> Any:
        return {"states": self.states, "live": self.live, "having": self.having_states}

    def restore_state(self, state: Any) -> None:
        self.states = state["states"]
        self.live = state["live"]
        self.having_states = state.get("having", {})


def _drop(chunk: list[Event]) -> None:
    return None


def _merged(pieces: list[list[Event]]) -> list[Event]:
    """One chunk of ``pieces``' rows, marked :class:`WithResets` if any piece is."""
    rows: list[Event] = []
    marked = False
    for piece in pieces:
        if piece.__class__ is WithResets:
            marked = True
        rows += piece
    return WithResets(rows) if marked else rows


def _unplanned(*args: Any) -> tuple[Any, ...]:
    raise AssertionError("a selector projection used before it was planned")


class EventError(Exception):
    """An exception raised while a selector loop processed ``event`` (``cause`` is the error).

    The loops (``_aggregated``, ``_grouped``, the generated ``_deferred_chunk`` and
    ``_materialize``) wrap what an event raises, innermost first, so that the selector faults
    that event alone; ``making_row`` says it failed while its output row was being made
    (after every event of the chunk updated the aggregators).
    """

    def __init__(self, event: Event | None, cause: Exception, making_row: bool) -> None:
        super().__init__(str(cause))
        self.event = event
        self.cause = cause
        self.making_row = making_row


def _noting_event(body: list[str], making_row: bool) -> list[str]:
    """A generated loop's body that wraps what an event raises in :class:`EventError`."""
    return ["try:", *("    " + line for line in body),
            "except _EventError:",
            "    raise",
            "except Exception as _x:",
            f"    raise _EventError(locals().get('e'), _x, {making_row}) from _x"]


def _failed_event(exc: Exception, chunk: list[Event]) -> tuple[int | None, bool]:
    """Which event of ``chunk`` a selector loop was processing when ``exc`` rose (carried by
    :class:`EventError`), and whether its output row was being made."""
    if isinstance(exc, EventError) and exc.event is not None:
        for i, e in enumerate(chunk):
            if e is exc.event:
                return i, exc.making_row
    return None, False


class _OutputOnlyScope(OutputScope):
    """``having`` of a single-stream query: output attributes only (Siddhi's HAVING_STATE over
    a MetaStreamEvent resolves against the output stream definition and nothing else)."""

    def resolve(self, var: Variable) -> tuple[str, AttrType]:
        if var.stream_id is None and var.stream_index is None:
            i = self._index.get(var.attribute)
            if i is not None:
                return f"o[{i}]", self._types[i]
        raise error_at(f"having: '{var.attribute}' is not an output attribute (having sees the "
                       f"selected attributes only: {', '.join(self._index) or 'none'})", var)


class SelectorPlan:
    """Everything compiled for a selector; shared by every instance of the query."""

    def __init__(self) -> None:
        self.output_attributes: list[Attribute] = []
        # Set by the planner: ``project`` without aggregators, the other two with them.
        self.project: Callable[[Event], tuple[Any, ...]] = _unplanned
        self.project_add: Callable[..., tuple[Any, ...]] = _unplanned
        self.project_remove: Callable[..., tuple[Any, ...]] = _unplanned
        self.fast: Callable[[list[Event]], list[Event]] | None = None
        self.project_value: Callable[..., Any] = _unplanned
        self.having_value: Callable[..., Any] | None = None
        self.group_key: Callable[[Event], Any] | None = None
        self.having: Callable[[Event, tuple[Any, ...]], bool] | None = None
        self.having_add: Callable[..., bool] | None = None
        self.having_remove: Callable[..., bool] | None = None
        self.post: Callable[[list[Event]], list[Event]] | None = None
        self.fused = False  # ``fast`` also applies the input's filter (see plan_selector)
        #: ``fast`` reads its input events' fields only (not their type, not the data tuple
        #: itself) and makes every output event anew: see StreamJunction.mark_copying.
        self.copies_fields = False
        #: generated ``(selector, chunk) -> out`` for batching aggregation (see _deferred_path)
        self.deferred: Callable[[Any, list[Event]], list[Event]] | None = None
        #: the code of ``deferred`` without group by, for a caller that runs it in a loop of
        #: its own (a partition's router fuses it with the key instances' windows)
        self.parts: DeferredParts | None = None
        self.factories: list[Callable[[], Any]] = []
        #: the slot of having's first aggregator (``factories[having_from:]`` are having's), or
        #: None when having calls none.  Siddhi parses having's aggregators apart from the
        #: select list's (SelectorParser.generateHavingExecutor: groupBy false), so outside a
        #: partition one state serves every group; and its RESET never reaches them (the
        #: selector evaluates having for current and expired events only), so a batch
        #: window's reset leaves them as they are.
        self.having_from: int | None = None
        #: having's aggregators keep a state per group (inside a partition, where Siddhi's
        #: PartitionStateHolder keys every state by the group-by flow too)
        self.having_per_group = False
        #: ``(states) -> bool``: every state of a group is as a new one, so the group may be
        #: dropped (None: always); see AggregatorSlots.destroyable_code
        self.destroyable: Callable[[list[Any]], bool] | None = None
        self.current_on = True
        self.expired_on = False
        self.batching = True
        #: an output chunk that order by/offset/limit left empty still goes on (Siddhi's
        #: batching selectors with aggregators or group by return the empty chunk, not null)
        self.empty_goes_on = False

    def instantiate(self) -> QuerySelector:
        return QuerySelector(self)


def plan_selector(selector: Selector, scope: Any, ctx: Any, gen: CodeGen,
                  output_event_type: OutputEventType, batching: bool = True,
                  columns: Callable[[], list[Any]] | None = None, where: str | None = None,
                  only_current: bool = False, where_unchecked: str | None = None,
                  where_nodes: Sequence[Expression] = (), order_by_output_only: bool = False) -> SelectorPlan:
    """Compile a selector for events of ``scope``.

    ``columns`` lists the input attributes for ``select *`` (defaults to ``scope.columns``).
    ``where`` is a filter condition (source over the scope's prologue) the input planner
    would otherwise run as a processor of its own: a stateless selector folds it into its
    generated loop (one pass, no intermediate chunk) and sets ``plan.fused``; other
    selectors ignore it.  ``only_current``: the input never carries anything but current
    events, so the stateless loop need not test the event type.  ``where_unchecked``: the
    same filter without its null tests (``nulls_unchecked``), when it is operators only.
    ``where_nodes``: the filters of ``where`` as expressions, for the columnar path
    (:mod:`engine.columnar`), which the stateless loop tries first on a whole chunk.
    ``order_by_output_only``: ``order by`` names output attributes only, unqualified (a query
    over one stream: Siddhi resolves its order by against the output definition alone, as its
    having; on-demand queries, joins and patterns fall back to their inputs).
    """
    plan = SelectorPlan()
    plan.batching = batching
    plan.current_on = output_event_type in (OutputEventType.CURRENT, OutputEventType.ALL)
    plan.expired_on = output_event_type in (OutputEventType.EXPIRED, OutputEventType.ALL)
    slots = AggregatorSlots()
    compiler = ExpressionCompiler(ctx, scope, gen, aggregator_hook=slots.hook)
    prologue = tuple(getattr(scope, "prologue", ()))

    names: list[str] = []
    types: list[AttrType] = []
    codes: list[str] = []
    if selector.attributes is None:
        cols = columns() if columns is not None else scope.columns()
        for col in cols:
            names.append(col.name)
            types.append(col.type)
            codes.append(col.code)
    else:
        for oa in selector.attributes:
            if not oa.rename:
                raise error_at("a select expression needs a name: add 'as <name>'", oa)
            if oa.rename in names:
                raise error_at(f"duplicate output attribute '{oa.rename}'", oa)
            c = compiler.compile(oa.expression)
            names.append(oa.rename)
            types.append(c.type)
            codes.append(c.code)
    plan.output_attributes = [Attribute(n, t) for n, t in zip(names, types, strict=True)]
    # Siddhi resolves an order-by variable against the output first, then the input
    # (OrderByEventComparator, HAVING_STATE): an input attribute that is not selected (such as
    # an aggregation's AGG_TIMESTAMP in a join) rides along as a hidden trailing column that
    # post() sorts by and strips.
    if order_by_output_only:
        for ob in selector.order_by:
            var = ob.variable
            if var.stream_id is not None or var.stream_index is not None or var.attribute not in names:
                shown = f"{var.stream_id}.{var.attribute}" if var.stream_id is not None else var.attribute
                raise error_at(f"order by '{shown}': a query over one stream orders by its output attributes, "
                               f"unqualified ({', '.join(names)})", var)
    hidden: list[str] = []
    if selector.attributes is not None:
        for ob in selector.order_by:
            var = ob.variable
            if var.attribute not in names and var.attribute not in hidden:
                codes.append(compiler.compile(var).code)
                hidden.append(var.attribute)
    body = list(prologue)
    row = "(" + "".join(c + ", " for c in codes) + ")"

    # having may aggregate too (``having sum(price) > 10``): its aggregators share the slots
    having_cond = None
    if selector.having is not None:
        # Siddhi resolves having's attributes against the output (HAVING_STATE); a query over
        # one stream has no input fallback (ExpressionParser takes the MetaStreamEvent's output
        # definition only), joins and patterns fall back to their inputs.
        hscope = (_OutputOnlyScope(names, types, scope) if isinstance(scope, StreamScope)
                  else OutputScope(names, types, scope))
        hcompiler = ExpressionCompiler(ctx, hscope, gen, aggregator_hook=slots.hook)
        n_select = len(slots.factories)
        having_cond = hcompiler.compile_condition(selector.having, "having")
        if len(slots.factories) > n_select:
            plan.having_from = n_select
            plan.having_per_group = getattr(ctx, "partition", None) is not None
    plan.factories = slots.factories
    row_type = _row_event_type(plan)

    if plan.factories:
        destroyable = slots.destroyable_code()
        if destroyable is not None:
            plan.destroyable = gen.function("_destroyable", "A", [f"return {destroyable}"])
        # (a row from the aggregators' values, without an update: for recovering from a fault)
        plan.project_value = gen.function("_project_value", "e, A",
                                          body + [f"return {slots.value_code(row, row_type)}"])
        if having_cond is not None:
            plan.having_value = gen.function("_having_value", "e, o, A",
                                             body + [f"return {slots.value_code(having_cond, row_type)}"])
        plan.project_add = gen.function("_project_add", "e, A", body + [f"return {row.replace('{op}', 'add')}"])
        plan.project_remove = gen.function("_project_remove", "e, A",
                                           body + [f"return {row.replace('{op}', 'remove')}"])
        if having_cond is not None:
            plan.having_add = gen.function("_having_add", "e, o, A",
                                           body + [f"return {having_cond.replace('{op}', 'add')}"])
            plan.having_remove = gen.function("_having_remove", "e, o, A",
                                              body + [f"return {having_cond.replace('{op}', 'remove')}"])
    else:
        star_passthrough = selector.attributes is None and prologue == ("d = e.data",) and \
            [c for c in codes] == [f"d[{i}]" for i in range(len(codes))]
        plan.project = (gen.function("_project_star", "e", ["return e.data"]) if star_passthrough
                        else gen.function("_project", "e", body + [f"return {row}"]))
        if having_cond is not None:
            plan.having = gen.function("_having", "e, o", body + [f"return {having_cond}"])

    key_expr = None
    if selector.group_by:
        kcompiler = ExpressionCompiler(ctx, scope, gen)
        keys = []
        for v in selector.group_by:
            compiled = kcompiler.compile(v)
            # (an object value, such as a counting state's list, groups by its contents; a
            # double or float by Java's equality, as Siddhi groups by the value's text)
            if compiled.type == AttrType.OBJECT:
                keys.append(f"{gen.ref(_hashable, 'hashable')}({compiled.code})")
            elif compiled.type in (AttrType.DOUBLE, AttrType.FLOAT):
                keys.append(f"{gen.ref(java_key, 'java_key')}({compiled.code})")
            else:
                keys.append(compiled.code)
        key_expr = keys[0] if len(keys) == 1 else "(" + ", ".join(keys) + ",)"
        plan.group_key = gen.function("_group_key", "e", body + [f"return {key_expr}"])

    plan.post = _plan_post(selector, names + hidden, types, ctx, gen, visible=len(names) if hidden else None)
    plan.empty_goes_on = batching and (bool(plan.factories) or plan.group_key is not None)

    if not plan.factories and plan.group_key is None and batching:
        unchecked = None
        # (a single stream's attributes only: other scopes' references may meet an absent event)
        if isinstance(scope, StreamScope) and (where is None or where_unchecked is not None) and \
                (selector.attributes is None or all(operators_only(oa.expression) for oa in selector.attributes)):
            ucompiler = ExpressionCompiler(ctx, scope, gen, nulls_unchecked=True)
            unchecked = (where_unchecked, row if selector.attributes is None else
                         "(" + "".join(ucompiler.compile(oa.expression).code + ", " for oa in selector.attributes)
                         + "".join(c + ", " for c in codes[len(names):]) + ")")
        columnar = None
        if (isinstance(scope, StreamScope) and having_cond is None and not hidden and only_current
                and plan.current_on and not plan.expired_on and (where is None or where_nodes)):
            columnar = _columnar.plan_columnar(where_nodes, None if selector.attributes is None
                                     else [oa.expression for oa in selector.attributes], scope, CURRENT)
        plan.fast = _fast_path(plan, prologue, row, having_cond, gen, where, only_current, unchecked, columnar)
        plan.fused = where is not None
    elif plan.factories and batching and having_cond is None:
        plan.deferred = _deferred_path(plan, prologue, row, codes, slots, key_expr, gen)
    return plan


def _row_event_type(plan: SelectorPlan) -> str:
    """The type of the events an aggregating selector makes rows for, as code: ``"0"`` or
    ``"1"`` where it outputs one type only, else ``"e.type"``."""
    if plan.current_on and plan.expired_on:
        return "e.type"
    return "0" if plan.current_on else "1"


def _inline_updates(slots: AggregatorSlots) -> dict[tuple[str, str], list[str]]:
    """Statements doing what ``A[i].add(x)``/``remove(x)`` do, for states that say how.

    An aggregator state class may offer ``inline(op, state, arg) -> list[str] | None``:
    statements over the code ``state`` (its object) and ``arg`` (its argument), for a call
    whose result is not used.  The built-in count, sum and avg do (a method call per event
    and aggregator is most of a grouped aggregation's cost).
    """
    out: dict[tuple[str, str], list[str]] = {}
    for slot, (factory, call, arg) in enumerate(zip(slots.factories, slots.calls, slots.args, strict=True)):
        inline = getattr(type(factory()), "inline", None)
        if inline is None:
            continue
        for op in ("add", "remove"):
            lines = inline(op, f"A[{slot}]", arg)
            if lines:
                out[(call, op)] = lines
    return out


def inline_values(row: str, factories: list[Callable[[], Any]]) -> str:
    """``row`` with each ``A[i].value()`` replaced by the state's ``inline_value`` expression,
    where its class has one (a call less per output row).

    Token by token, so text inside a string literal stays as it is.
    """
    inline: dict[str, Callable[[str, str], str]] = {}
    for i, factory in enumerate(factories):
        fn = getattr(type(factory()), "inline_value", None)
        if fn is not None:
            inline[str(i)] = fn
    if not inline:
        return row
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(row).readline)
                  if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)]
    except (tokenize.TokenError, SyntaxError):
        return row
    if any(t.start[0] != 1 or t.end[0] != 1 for t in tokens):
        return row  # columns are offsets into row only if it is one line
    spans: list[tuple[int, int, str]] = []
    i = 0
    while i < len(tokens):
        s = [t.string for t in tokens[i:i + 8]]
        if (s[:2] == ["A", "["] and s[3:] == ["]", ".", "value", "(", ")"] and s[2] in inline
                and (i == 0 or tokens[i - 1].string != ".")):
            spans.append((tokens[i].start[1], tokens[i + 7].end[1], inline[s[2]](f"A[{s[2]}]", f"_qv{s[2]}")))
            i += 8
        else:
            i += 1
    for start, end, code in reversed(spans):
        row = row[:start] + code + row[end:]
    return row


class DeferredParts(NamedTuple):
    """The per-event code of an aggregating selector without group by (source lines).

    Over the event ``e`` (``prologue`` binds its locals) and the aggregator states ``A``:
    ``add``/``remove`` update the states for a current/expired event, ``row`` is the
    output row read from the states.  The selector emits the row of the last current event
    of a chunk, made after all its events updated the states.  ``replace``, where every
    aggregator says how and reads a plain attribute, does ``remove`` of the expired event
    whose data is bound to ``_qd`` and then ``add`` of ``e`` in one go (a sliding window's
    step); None otherwise.  ``replaced`` says, where ``replace`` is given, what each update
    is: the state's slot and the attribute its aggregator reads (``d[i]``, or ``""`` for
    ``count()``).
    """

    prologue: tuple[str, ...]
    add: list[str]
    remove: list[str]
    row: str
    replace: list[str] | None = None
    replaced: tuple[tuple[int, str], ...] = ()


#: An aggregator argument that reads an attribute of the event's data and cannot raise.
_PLAIN_ATTRIBUTE = re.compile(r"d\[\d+\]")


def _replace_lines(updates: list[str], slots: AggregatorSlots
                   ) -> tuple[list[str] | None, tuple[tuple[int, str], ...]]:
    """:attr:`DeferredParts.replace` and ``replaced``: each update is a bare aggregator call
    over a plain attribute, of a state class offering ``inline_replace(state, old, new)``.
    (With arguments that cannot raise, each state's remove and add may go together: the
    states are independent, so the order across them does not matter.)"""
    lines: list[str] = []
    replaced: list[tuple[int, str]] = []
    for update in updates:
        if update not in slots.calls:
            return None, ()
        slot = slots.calls.index(update)
        arg = slots.args[slot]
        replace = getattr(type(slots.factories[slot]()), "inline_replace", None)
        if replace is None or (arg and not _PLAIN_ATTRIBUTE.fullmatch(arg)):  # (count(): no argument)
            return None, ()
        lines += replace(f"A[{slot}]", "_qd" + arg[1:] if arg else "", arg)
        replaced.append((slot, arg))
    return lines, tuple(replaced)


def _update_lines(updates: list[str], inline: dict[tuple[str, str], list[str]], op: str) -> list[str]:
    out: list[str] = []
    for c in updates:
        out += inline.get((c, op)) or [c.replace("{op}", op)]
    return out


def _ungrouped_loop(prologue: tuple[str, ...], updates: list[str], inline: dict[tuple[str, str], list[str]],
                    m: str, cur_on: bool, exp_on: bool) -> list[str]:
    """The no-group-by loop of :func:`_deferred_path`: one pending row, no dictionary."""
    body = [
        "A = S.get(None)",
        "if A is None:",
        "    A = sel._states_for(None)",
        "last = made = LA = None",  # the pending event (and its states), or the made event
        "for e in chunk:",
        "    t = e.type",
        "    if t > 1:",
        "        if t == 3:",
        "            if last is not None:",
        f"                made = {m}(last, LA, None)",
        "                last = None",
        "            sel._reset()",
        "            A = sel._states_for(None)",
        "        continue",
    ]
    body += ["    " + line for line in prologue]
    for t, on, op in ((0, cur_on, "add"), (1, exp_on, "remove")):
        body.append("    if t == 0:" if t == 0 else "    else:")
        if not on:
            body += ["        if last is not None:",
                     f"            made = {m}(last, LA, None)",
                     "            last = None"]
        for c in updates:
            lines = inline.get((c, op))
            body += [f"        {line}" for line in lines] if lines else [f"        {c.replace('{op}', op)}"]
        if on:
            body += ["        last = e", "        LA = A", "        made = None"]
    body += ["if last is not None:",
             f"    return [{m}(last, LA, None)]",
             "return [made] if made is not None else []"]
    return body


#: A group-by key the compiled group_add reads: one attribute, or a tuple of attributes.
_KEY_ATTRIBUTES = re.compile(r"d\[\d+\]|\((?:d\[\d+\], )*d\[\d+\],\)")


def _group_add_plan(plan: SelectorPlan, prologue: tuple[str, ...], key_expr: str | None, updates: list[str],
                    slots: AggregatorSlots) -> tuple[tuple[int, ...], tuple[tuple[str, int, type], ...],
                                                     tuple[tuple[tuple[str, Any], ...], ...]] | None:
    """The arguments of the compiled ``group_plan`` (engine/_speedups.c), whose plan
    ``group_add`` takes a grouped selector's current events with, or None where it does not
    take the query: ``(the key's attribute indices, per aggregator (kind, attribute index,
    state class), per aggregator the slots of a new state)``.  A new group's states are made
    from the last (instances made without ``__init__``, their slots set as a new state's
    are: a new state's slots hold plain numbers, and the factories are called once here to
    see them).

    It takes a key of plain attributes and select columns that are each a bare aggregator
    call (or no call at all), every aggregator's state class saying how a chunk adds to it
    (``chunk_kind``: the built-in count, sum and avg), over a plain attribute (``count()``
    reads none).  What it adds is what the generated loop would (the same float additions
    in the same order, exact int sums); chunk by chunk it leaves to the loop the events it
    cannot take (nulls it can, a value of another type it cannot).
    """
    if _columnar.group_add is None or key_expr is None or prologue != ("d = e.data",):
        return None
    if not _KEY_ATTRIBUTES.fullmatch(key_expr):
        return None
    keys = tuple(int(i) for i in re.findall(r"d\[(\d+)\]", key_expr))
    if sorted(slots.calls.index(c) if c in slots.calls else -1 for c in updates) != list(range(len(slots.calls))):
        return None  # (a column computing with an aggregator's value, or a having aggregator)
    specs: list[tuple[str, int, type]] = []
    prototypes: list[tuple[tuple[str, Any], ...]] = []
    for factory, arg in zip(plan.factories, slots.args, strict=True):
        state = factory()
        cls = type(state)
        if "chunk_kind" not in cls.__dict__ or hasattr(state, "__dict__") or cls.__new__ is not object.__new__:
            return None
        prototype = tuple(state.__getstate__().items())
        if any(type(value) not in (int, float, bool) for _, value in prototype):
            return None
        prototypes.append(prototype)
        kind = state.chunk_kind()
        if kind == "c":
            specs.append((kind, -1, cls))  # (count's argument is not read: see _Count.inline)
        elif _PLAIN_ATTRIBUTE.fullmatch(arg):
            specs.append((kind, int(arg[2:-1]), cls))
        else:
            return None
    return keys, tuple(specs), tuple(prototypes)


def _deferred_path(plan: SelectorPlan, prologue: tuple[str, ...], row: str, columns: list[str],
                   slots: AggregatorSlots, key_expr: str | None,
                   gen: CodeGen) -> Callable[[Any, list[Event]], list[Event]]:
    """The batching aggregating selector as one generated loop.

    A batching selector emits one event per chunk (per group key with ``group by``): the
    last that qualifies.  Every event still updates the aggregators (the row expression is
    evaluated for that, with ``add`` or ``remove``), but the output row and its event are
    made only for the events that are emitted, from the aggregators' ``value()``: when the
    chunk ends, or earlier when an event that is not emitted (an expired event of a query
    that outputs current events, a reset) is about to change what the row would read.
    """
    gen.ns.setdefault("_RawGroupedEvent", RawGroupedEvent)
    gen.ns.setdefault("_RawEvent", RawEvent)
    grouped = key_expr is not None
    row_value = slots.value_code(row, _row_event_type(plan))
    gen.ns.setdefault("_EventError", EventError)
    # (made without __init__, the aggregators' values read inline where they say how: this
    # runs once per group and chunk, as often as the updates on a tumbling window)
    data = inline_values(row_value, plan.factories)
    if _columnar.untracked is not None:
        # (what a sink keeps of the rows costs the collector's older generations nothing)
        data = f"{gen.ref(_columnar.untracked, 'untracked')}({data})"
    make = [f"_o = {'_RawGroupedEvent' if grouped else '_RawEvent'}()", "_o.timestamp = e.timestamp",
        f"_o.data = {data}", "_o.type = e.type",
        *(["_o.group_key = key"] if grouped else []), "return _o"]
    materialize = gen.function("_materialize", "e, A, key", _noting_event(list(prologue) + make, True))
    m = gen.ref(materialize, "mat")
    destroyable = slots.destroyable_code()
    cur_on, exp_on = plan.current_on, plan.expired_on
    # Update statements: the columns that call aggregators (the others are read only when
    # a row is made); a column that is just a call needs no more than the call.
    updates = [c for c in columns if "{op}" in c] or ["pass"]
    inline = _inline_updates(slots)
    body = [
        "S = sel.states",
        "live = sel.live",
        "track = sel.track_live",
    ]
    if cur_on:
        # A chunk of one current event (a partition's key instance, events sent one by
        # one): no bookkeeping of pending rows.
        body += ["if len(chunk) == 1 and chunk[0].type == 0:", "    e = chunk[0]"]
        body += ["    " + line for line in prologue]
        body += [f"    key = {key_expr if grouped else 'None'}",
                 "    A = S.get(key)",
                 "    if A is None:",
                 "        A = sel._states_for(key)"]
        for c in updates:
            lines = inline.get((c, "add"))
            body += [f"    {line}" for line in lines] if lines else [f"    {c.replace('{op}', 'add')}"]
        if grouped:
            body += ["    if track:", "        live[key] = live.get(key, 0) + 1"]
        body.append(f"    return [{m}(e, A, key)]")
    if not grouped:
        plan.parts = DeferredParts(prologue, _update_lines(updates, inline, "add"),
                                   _update_lines(updates, inline, "remove"), row_value,
                                   *_replace_lines(updates, slots))
        return gen.function("_deferred_chunk", "sel, chunk",
                            _noting_event(body + _ungrouped_loop(prologue, updates, inline, m, cur_on, exp_on),
                                          False))
    # pending: key -> the event whose row is still to be made, from the states ``S[key]``
    # (they stay there until the row is made), or ``(the made event,)``.  Made only where the
    # states are about to change or leave ``S``: an event that is not emitted, a reset.  (A
    # bare event, not an ``(event, states)`` pair: no tuple per event on the hot path.)
    # A group's states are made here, not by a call of _states_for: after each batch window's
    # reset every group starts over, so this runs as often as the rows are made.
    fresh = ", ".join(f"{gen.ref(factory, 'fac')}()" for factory in plan.factories)
    chunked = _group_add_plan(plan, prologue, key_expr, updates, slots) if cur_on else None
    reset = ["for k, v in pending.items():",
             "    if v.__class__ is not tuple:",
             f"        pending[k] = ({m}(v, S[k], k),)",
             "sel._reset()"]
    if chunked is None:
        body += ["pending = {}", "for e in chunk:"]
        indent = "    "
        body += [f"{indent}t = e.type", f"{indent}if t > 1:", f"{indent}    if t == 3:",
                 *(f"{indent}        {line}" for line in reset), f"{indent}    continue"]
    else:
        # The current events after the chunk's start and after each reset (a batch window's
        # batch) go to the compiled group_add as long as it takes them; the loop below goes
        # on from the first it leaves (see _group_add_plan).
        gen.ns.setdefault("_islice", itertools.islice)
        assert _columnar.group_plan is not None
        group_plan = gen.ref(_columnar.group_plan(*chunked), "gplan")
        add = f"{gen.ref(_columnar.group_add, 'gadd')}(chunk, _i, {group_plan}, S, _live, pending)"
        body += ["pending = {}", "_n = len(chunk)", "_live = live if track else None", "_i = 0",
                 f"if _n >= {_columnar.MIN_CHUNK}:", f"    _i = {add}",
                 "while _i < _n:", "    for e in _islice(chunk, _i, None):", "        _i += 1"]
        indent = "        "
        body += [f"{indent}t = e.type", f"{indent}if t > 1:", f"{indent}    if t == 3:",
                 *(f"{indent}        {line}" for line in reset),
                 f"{indent}        if _n - _i >= {_columnar.MIN_CHUNK}:",
                 f"{indent}            _i = {add}",
                 f"{indent}            break",
                 f"{indent}    continue"]
    body += [indent + line for line in prologue]
    body.append(f"{indent}key = {key_expr}")
    body += [
        f"{indent}A = S.get(key)",
        f"{indent}if A is None:",
        f"{indent}    A = S[key] = [{fresh}]",
    ]
    loop: list[str] = []
    for t, on, op in ((0, cur_on, "add"), (1, exp_on, "remove")):
        loop.append("    if t == 0:" if t == 0 else "    else:")
        if not on:
            loop += ["        p = pending.get(key)",
                     "        if p is not None and p.__class__ is not tuple:",
                     f"            pending[key] = ({m}(p, A, key),)"]
        for c in updates:
            lines = inline.get((c, op))
            loop += [f"        {line}" for line in lines] if lines else [f"        {c.replace('{op}', op)}"]
        if t == 0:
            loop += ["        if track:", "            live[key] = live.get(key, 0) + 1"]
        else:
            # (the group's states go when the window holds none of its events and every
            # state is as a new one: see QuerySelector._grouped_loop)
            loop += ["        left = live.get(key, 0) - 1",
                     "        if left <= 0:",
                     "            live.pop(key, None)"]
            if destroyable is None:
                loop.append("            S.pop(key, None)")
            else:
                loop += [f"            if {destroyable}:",
                         "                S.pop(key, None)"]
            loop += ["        else:",
                     "            live[key] = left"]
        if on and t == 1:
            # (the states may have left S just now: then the row is made from them at once,
            # nothing can change them later)
            loop += ["        if key in S:",
                     "            pending[key] = e",
                     "        else:",
                     f"            pending[key] = ({m}(e, A, key),)"]
        elif on:
            loop.append("        pending[key] = e")
    body += [indent[4:] + line for line in loop]
    body.append(f"return [v[0] if v.__class__ is tuple else {m}(v, S[k], k) for k, v in pending.items()]")
    return gen.function("_deferred_chunk", "sel, chunk", _noting_event(body, False))


def _hashable(value: Any) -> Any:
    """An object value of ``group by`` as a key.  Siddhi groups by the values' text
    (``GroupByKeyGenerator``), so equal lists, maps and sets group together; here they are
    made hashable by their contents (a map's in its order)."""
    if isinstance(value, list):
        return ("[]", tuple(_hashable(v) for v in value))
    if isinstance(value, dict):
        return ("{}", tuple((_hashable(k), _hashable(v)) for k, v in value.items()))
    if isinstance(value, set):
        return frozenset(_hashable(v) for v in value)
    return java_key(value)


#: After an unchecked select loop met a null, this many chunks run the checked loop only
#: (an attribute that is often null would otherwise cost an exception per chunk).
NULL_BACKOFF_CHUNKS = 64


def _fast_path(plan: SelectorPlan, prologue: tuple[str, ...], row: str, having: str | None,
               gen: CodeGen, where: str | None = None, only_current: bool = False,
               unchecked: tuple[str | None, str] | None = None,
               columnar: Callable[[list[Event]], list[Event] | None] | None = None,
               ) -> Callable[[list[Event]], list[Event]]:
    """One generated loop for the stateless selector (the hot path of filters).

    Output events are :class:`~engine.event.RawEvent` objects made with three slot stores: in
    CPython 3.11 that is ~85 ns cheaper than calling ``Event`` (whose ``__init__`` is Python
    code), and an output event is the largest cost left per event.

    ``unchecked``: ``where`` and ``row`` compiled without their null tests (operators only,
    see :func:`engine.expression.operators_only`).  That loop runs first; the event where a
    null made it raise TypeError and the rest of the chunk run the checked loop, whose outputs
    are the same as if it had run alone (the unchecked loop's outputs are exact up to there,
    and the failing event added none).  Then the next :data:`NULL_BACKOFF_CHUNKS` chunks run
    checked.  A filter's null tests are about a tenth of its loop.

    ``columnar``: the same selection over a whole chunk at once (:mod:`engine.columnar`),
    tried first on a chunk of :data:`~engine.columnar.MIN_CHUNK` events or more; where it
    answers None (a null, another type) the loop runs the chunk.
    """
    gen.ns.setdefault("_RawEvent", RawEvent)
    gen.ns.setdefault("_WithResets", WithResets)
    if plan.current_on and plan.expired_on:
        type_test = "e.type <= 1"
        etype = "e.type"
    elif plan.current_on:
        type_test, etype = ("" if only_current else "e.type == 0"), "0"
    else:
        type_test, etype = "e.type == 1", "1"
    star = plan.project.__name__ == "_project_star"
    plan.copies_fields = not type_test and not star
    body = []
    if columnar is not None:
        name = gen.ref(columnar, "columnar")
        body += [f"if len(chunk) >= {_columnar.MIN_CHUNK}:", f"    out = {name}(chunk)", "    if out is not None:",
                 "        return out"]
    body += ["out = []", "append = out.append"]
    if unchecked is None or unchecked == (where, row):
        body += _select_loop("chunk", prologue, type_test, where, "e.data" if star else row, having, etype)
    else:
        backoff = gen.ref([0], "nulls")
        optimistic = _select_loop("_it", prologue, type_test, unchecked[0], "e.data" if star else unchecked[1],
                                  having, etype)
        gen.ns.setdefault("_chain", itertools.chain)
        body += ["_it = iter(chunk)", f"if {backoff}[0]:", f"    {backoff}[0] -= 1", "else:", "    try:",
                 *("        " + line for line in optimistic), "        return out", "    except TypeError:",
                 f"        {backoff}[0] = {NULL_BACKOFF_CHUNKS}", "        _it = _chain((e,), _it)",
                 # the checked loop: from the event that raised (or every event, backing off)
                 *_select_loop("_it", prologue, type_test, where, "e.data" if star else row, having, etype)]
    body.append("return out")
    return gen.function("_select_chunk", "chunk", body)


def _select_loop(source: str, prologue: tuple[str, ...], type_test: str, where: str | None, row_code: str,
                 having: str | None, etype: str) -> list[str]:
    """``for e in source:`` appending the output event of each event that passes.

    Where the input may carry other than current events (``type_test``), a RESET goes on
    as it is (Siddhi's processNoGroupBy keeps a batch window's resets in its chunk, for the
    rate limiter and the query callbacks): the first turns ``out`` into a
    :class:`~engine.output.WithResets`.  That test runs only for events the type test
    skips, so a query whose input has none pays nothing for it.
    """
    tests = [t for t in (type_test, where) if t]
    body = [f"for e in {source}:"]
    if type_test:
        # skip timer/expired events before the prologue reads their data; pass resets on
        body += [f"    if not ({type_test}):",
                 "        if e.type == 3:",
                 "            if out.__class__ is not _WithResets:",
                 "                out = _WithResets(out)",
                 "                append = out.append",
                 "            append(e)",
                 "        continue"]
        tests = [t for t in tests if t is not type_test]
    body += ["    " + line for line in prologue]
    indent = "    "
    if tests:
        body.append(f"    if {' and '.join(f'({t})' for t in tests)}:")
        indent = "        "
    if having is None:
        body.append(f"{indent}o = _RawEvent()")
        body.append(f"{indent}o.data = {row_code}")
    else:
        body.append(f"{indent}row = {row_code}")
        body.append(f"{indent}o = row")
        body.append(f"{indent}if not ({having}):")
        body.append(f"{indent}    continue")
        body.append(f"{indent}o = _RawEvent()")
        body.append(f"{indent}o.data = row")
    body.append(f"{indent}o.timestamp = e.timestamp")
    body.append(f"{indent}o.type = {etype}")
    body.append(f"{indent}append(o)")
    return body


def _constant_int(expr: Any, what: str, ctx: Any, gen: CodeGen) -> int | None:
    if expr is None:
        return None
    if not isinstance(expr, Constant) or expr.type not in (AttrType.INT, AttrType.LONG):
        raise error_at(f"{what} must be a constant int or long", expr)
    if expr.value < 0:
        raise error_at(f"{what} cannot be negative ({expr.value})", expr)
    return int(expr.value)


def _non_null_first(i: int) -> Callable[[Event], tuple[bool, Any]]:
    """A sort key on attribute ``i``: nulls sort before values (so, reversed, after them),
    values in Java's order (OrderByEventComparator's ``compareTo``)."""
    return lambda ev: (ev.data[i] is not None, java_order(ev.data[i]))


def _null_last(i: int) -> Callable[[Event], tuple[bool, Any]]:
    """A sort key on attribute ``i`` that puts nulls after values, in Java's order."""
    return lambda ev: (ev.data[i] is None, java_order(ev.data[i]))


def _plan_post(selector: Selector, names: list[str], types: list[AttrType], ctx: Any,
               gen: CodeGen, visible: int | None = None) -> Callable[[list[Event]], list[Event]] | None:
    """order by, offset and limit over each output chunk; ``visible``: strip the hidden
    order-by columns after the ``visible`` output attributes."""
    limit = _constant_int(selector.limit, "limit", ctx, gen)
    offset = _constant_int(selector.offset, "offset", ctx, gen)
    order: list[tuple[int, bool]] = []
    for ob in selector.order_by:
        var: Variable = ob.variable
        if var.attribute not in names:
            raise error_at(f"order by '{var.attribute}': not an output attribute", ob)
        order.append((names.index(var.attribute), ob.order is Order.DESC))
    if limit is None and offset is None and not order:
        return None

    def post(chunk: list[Event]) -> list[Event]:
        if chunk.__class__ is WithResets:
            return _post_with_resets(chunk, order, offset, limit, visible)
        if order:
            # Siddhi (QuerySelector.orderEventChunk) sorts each run of events of one type
            # (current, expired) on its own with List.sort: stable, so ties keep their arrival
            # order, and nulls last in either direction (OrderByEventComparator).
            t0 = chunk[0].type
            if all(ev.type == t0 for ev in chunk):
                chunk = _sorted(chunk, order)
            else:
                runs: list[list[Event]] = []
                for ev in chunk:
                    if runs and runs[-1][0].type == ev.type:
                        runs[-1].append(ev)
                    else:
                        runs.append([ev])
                chunk = [ev for run in runs for ev in _sorted(run, order)]
        if offset:
            chunk = chunk[offset:]
        if limit is not None:
            chunk = chunk[:limit]
        if visible is not None:
            for ev in chunk:
                ev.data = ev.data[:visible]
        return chunk

    return post


def _post_with_resets(chunk: list[Event], order: list[tuple[int, bool]], offset: int | None,
                      limit: int | None, visible: int | None) -> list[Event]:
    """order by, offset and limit over a chunk holding RESET events, as Siddhi's
    QuerySelector does: a run of resets splits the runs that are sorted (and is not sorted
    itself), offset and limit count and remove rows only, the resets stay."""
    if order:
        runs: list[list[Event]] = []
        for ev in chunk:
            if runs and runs[-1][0].type == ev.type:
                runs[-1].append(ev)
            else:
                runs.append([ev])
        chunk = [ev for run in runs for ev in (run if run[0].type == RESET else _sorted(run, order))]
    out: list[Event] = WithResets()
    skip = offset or 0
    room = limit
    for ev in chunk:
        if ev.type != RESET:
            if skip:
                skip -= 1
                continue
            if room is not None:
                if room <= 0:
                    continue
                room -= 1
            if visible is not None:
                ev.data = ev.data[:visible]
        out.append(ev)
    return out


def _sorted(chunk: list[Event], order: list[tuple[int, bool]]) -> list[Event]:
    """Stable sort by ``(index, descending)`` keys, nulls last; Python's sort is stable with
    reverse=True too, so sort by the last key first."""
    for idx, desc in reversed(order):
        if desc:
            chunk = sorted(chunk, key=_non_null_first(idx), reverse=True)
        else:
            chunk = sorted(chunk, key=_null_last(idx))
    return chunk
