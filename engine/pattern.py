"""Patterns (``->``) and sequences (``,``): the state machines of Siddhi's StateInputStream.

The planner mirrors Siddhi's ``StateInputStreamParser``: every stream state of the query gets a
*pre* state processor (holding the partial matches that wait for that state) and a *post*
state processor (which forwards a match to the next state, re-arms ``every`` and marks the
match as complete).  The processor kinds follow Siddhi one to one, because the corner cases of
``every``, counting, logical and absent states are defined by how those processors hand state
events to each other:

* :class:`_StreamPre` / :class:`_StreamPost`: ``e1=S[cond]``;
* :class:`_CountPre` / :class:`_CountPost`: ``<n:m>``, ``*``, ``+``, ``?``;
* :class:`_LogicalPre` / :class:`_LogicalPost`: ``and`` / ``or`` (both sides share one state
  event, so the side that did not arrive reads as null);
* :class:`_AbsentStreamPre`, :class:`_AbsentLogicalPre` and their posts: ``not S for t`` and
  ``not S and e2=...``, driven by the app scheduler (timers when live, event time in playback).

A partial match is a :class:`~engine.event.StateEvent` whose ``events[i]`` is the event of
state ``i`` (None while absent) or, for a counting state, the list of collected events.  State
ids are assigned in Siddhi's order (the right side of a logical state first), which the
processors rely on.

Everything mutable is created in ``connect()``: a partition instantiates one state machine per
key.  Per-state conditions are generated Python (:class:`PatternScope` tells the expression
compiler where ``e1.price``, ``e1[last].price`` and unqualified attributes live).

Speed (the per-event work is generated, as everywhere in the engine): a plain state whose
condition compares an attribute of its event for equality with one of an earlier event
(``symbol == e1.symbol``) files its pending partial matches in a dict by that value, so an
event is tested against its own key's partial matches only (:class:`_StateKey`); the
candidates are tested in one generated loop (:class:`_Test`); and a pattern's stream receiver
is generated whole when its states are plain (:meth:`PatternRuntime._gen_receiver`).  The
processors' methods remain the reference behaviour the generated code inlines.

Pending partial matches are bounded: ``within`` expires them as events arrive, and a maximum per
state (``@pattern(max.pending='N')`` on the query, ``@app:pattern(max.pending='N')`` on the app,
or ``ctx.pattern_max_pending``) drops the oldest ones, counted in :attr:`PatternRuntime.dropped`.
:attr:`PatternRuntime.pending` gives the number of partial matches held, for metrics.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from srota.engine.codegen import CodeGen
from srota.engine.event import CURRENT, EXPIRED, Event, StateEvent
from srota.engine.expression import BASE_NAMESPACE, ExpressionCompiler, error_at
from srota.engine.scope import Column
from srota.grammar.model import (
    AbsentStreamStateElement,
    And,
    AttrType,
    Compare,
    CompareOperator,
    CountStateElement,
    EveryStateElement,
    Expression,
    Filter,
    GroupStateElement,
    IsNullStream,
    LastIndex,
    LogicalOperator,
    LogicalStateElement,
    NextStateElement,
    Query,
    StateInputStream,
    StateType,
    StreamStateElement,
    Variable,
    find_annotation,
)

Emit = Callable[[list[Any]], None]

# Positions inside a counting state's chain, as Siddhi numbers them (SiddhiConstants).
_CURRENT = -1   # the newest collected event
_LAST = -2      # Siddhi's LAST: one before the newest


# ============================================================================ scope
@dataclass
class _StateInfo:
    """What the planner knows about one stream state."""

    state_id: int
    ref: str | None
    stream_id: str
    attributes: tuple[Any, ...]
    is_count: bool
    node: Any
    is_inner: bool = False
    is_fault: bool = False
    absent: bool = False


class PatternScope:
    """Resolves attributes over a pattern's :class:`StateEvent`.

    ``current`` is the state whose filter is being compiled (None for the selector): there an
    unqualified attribute is that state's own, and ``e2[last]`` inside ``e2``'s own filter
    skips the candidate event (Siddhi's ExpressionParser does the same).  ``default_index`` is
    the chain position of an unindexed reference to a counting state: the newest event inside
    filters, the first one in the selector.
    """

    def __init__(self, states: list[_StateInfo], gen: CodeGen, current: int | None = None,
                 default_index: int = 0) -> None:
        self.states = states
        self.current = current
        self.default_index = default_index
        lines = []
        for s in states:
            if s.is_count:
                lines.append(f"c{s.state_id} = e.events[{s.state_id}] or ()")
            else:
                null = gen.ref(Event(-1, (None,) * len(s.attributes)), "nul")
                lines.append(f"d{s.state_id} = (e.events[{s.state_id}] or {null}).data")
        self.prologue: tuple[str, ...] = tuple(lines)

    # ------------------------------------------------------------------ lookup
    def _state_named(self, name: str, node: Any) -> _StateInfo:
        for s in self.states:
            if (s.ref is None and s.stream_id == name) or s.ref == name:
                return s
        raise error_at(f"'{name}' is not an event reference or stream of this pattern", node)

    def is_stream_reference(self, name: str) -> bool:
        return any(s.ref == name or (s.ref is None and s.stream_id == name) for s in self.states) \
            and not self._is_attribute(name)

    def _is_attribute(self, name: str) -> bool:
        if self.current is not None:
            return any(a.name == name for a in self.states[self.current].attributes)
        return any(a.name == name for s in self.states for a in s.attributes)

    def _position(self, s: _StateInfo, index: int | None, stream_id: str | None) -> int:
        """Siddhi's chain position for ``index`` (an int or a :class:`LastIndex`)."""
        if index is None:
            return self.default_index
        if isinstance(index, LastIndex):
            siddhi = _LAST - int(index)            # the compiler's LAST - k
            own = (self.current is not None and stream_id is not None
                   and self.states[self.current].ref is not None
                   and self.states[self.current].ref == stream_id and s.state_id == self.current)
            return siddhi if own else siddhi + 1
        return int(index)

    def resolve(self, var: Variable) -> tuple[str, AttrType]:
        name = var.attribute
        if var.stream_id is not None:
            s = self._state_named(var.stream_id, var)
        elif self.current is not None:
            s = self.states[self.current]
        else:
            found = [st for st in self.states if any(a.name == name for a in st.attributes)]
            if not found:
                raise error_at(f"no stream of this pattern has an attribute '{name}'", var)
            if len(found) > 1:
                raise error_at(f"'{name}' is ambiguous: qualify it with an event reference "
                               f"({', '.join(st.ref or st.stream_id for st in found)})", var)
            s = found[0]
        i = next((k for k, a in enumerate(s.attributes) if a.name == name), None)
        if i is None:
            raise error_at(f"stream '{s.stream_id}' has no attribute '{name}'", var)
        pos = self._position(s, var.stream_index, var.stream_id)
        return self._read(s, pos, f".data[{i}]", f"d{s.state_id}[{i}]"), s.attributes[i].type

    def _read(self, s: _StateInfo, pos: int, suffix: str, plain: str) -> str:
        sid = s.state_id
        if not s.is_count:
            # A plain state is a chain of one event.
            return plain if pos in (0, _CURRENT) else "None"
        c = f"c{sid}"
        if pos >= 0:
            return f"({c}[{pos}]{suffix} if len({c}) > {pos} else None)"
        return f"({c}[{pos}]{suffix} if len({c}) >= {-pos} else None)"

    def _event_code(self, s: _StateInfo, pos: int) -> str:
        sid = s.state_id
        if not s.is_count:
            return f"e.events[{sid}]" if pos in (0, _CURRENT) else "None"
        c = f"c{sid}"
        if pos >= 0:
            return f"({c}[{pos}] if len({c}) > {pos} else None)"
        return f"({c}[{pos}] if len({c}) >= {-pos} else None)"

    def resolve_stream(self, node: IsNullStream) -> str:
        s = self._state_named(node.stream_id, node)
        index = node.stream_index
        if index is None:
            pos = self.default_index
        elif isinstance(index, LastIndex):
            pos = _LAST - int(index) + 1
        else:
            pos = int(index)
        return self._event_code(s, pos)

    def timestamp(self, node: Expression | None) -> str:
        if node is None:
            return "e.timestamp"
        if isinstance(node, Variable) and node.stream_id is None:
            s = self._state_named(node.attribute, node)
            ev = self._event_code(s, self._position(s, node.stream_index, None))
            return f"(_ts.timestamp if (_ts := {ev}) is not None else None)"
        raise error_at("eventTimestamp() takes an event reference such as e1", node)

    def columns(self) -> list[Column]:
        """``select *``: every attribute of every state (a repeated name is an error)."""
        cols: list[Column] = []
        seen: set[str] = set()
        for s in self.states:
            for i, a in enumerate(s.attributes):
                if a.name in seen:
                    raise error_at(f"select * is ambiguous: attribute '{a.name}' exists in several "
                                   "streams of the pattern", s.node)
                seen.add(a.name)
                cols.append(Column(a.name, a.type, self._read(s, self.default_index, f".data[{i}]",
                                                              f"d{s.state_id}[{i}]")))
        return cols


# ============================================================================ processors
def _copy(se: StateEvent) -> StateEvent:
    """Siddhi's StateEventCloner: a new state event over the same events."""
    return StateEvent(se.timestamp, [x[:] if x.__class__ is list else x for x in se.events], se.type)


def _sort_key(se: StateEvent) -> tuple[bool, int]:
    # Siddhi's eventTimeComparator: by timestamp, fresh states (timestamp -1) last.
    return (se.timestamp == -1, se.timestamp)


class _StreamPost:
    """StreamPostStateProcessor: a state matched; hand the match on."""

    def __init__(self) -> None:
        self.state_id = 0
        self.pre: Any = None
        self.next_pre: Any = None
        self.next_every_pre: Any = None
        self.callback_pre: Any = None
        self.to_selector = False   # Siddhi: nextProcessor (the QuerySelector) is set
        self.returned = False      # Siddhi: isEventReturned

    def set_next_pre(self, pre: Any) -> None:
        self.next_pre = pre

    def set_next_every_pre(self, pre: Any) -> None:
        self.next_every_pre = pre

    def process(self, se: StateEvent) -> None:
        self.pre.state_changed = True
        ev = se.events[self.state_id]
        se.timestamp = (ev[-1] if ev.__class__ is list else ev).timestamp
        if self.to_selector:
            self.returned = True
        if self.next_pre is not None:
            self.next_pre.add_state(se)
        if self.next_every_pre is not None:
            self.next_every_pre.add_every_state(se)
        if self.callback_pre is not None:
            self.callback_pre.start_state_reset()


class _StreamPre:
    """StreamPreStateProcessor: the partial matches waiting for one stream state."""

    absent = False

    def __init__(self, rt: PatternRuntime, sequence: bool) -> None:
        self.rt = rt
        self.sequence = sequence
        self.state_id = 0
        self.is_start = False
        self.cond: Callable[[StateEvent], bool] | None = None
        self.scan: Callable[[Any, Event], list[StateEvent] | None] | None = None
        # The equality index (see _StateKey): pending partial matches by key, each list in
        # the order of ``pending``, which stays the authoritative list (expiry, bounds,
        # snapshots, metrics).  None when the condition has no usable equality.
        self.key: _StateKey | None = None
        self.index: dict[Any, list[StateEvent]] | None = None
        self.post: Any = None
        self.last_post: Any = None
        self.within = -1
        self.start_ids: tuple[int, ...] = ()
        self.within_every_pre: Any = None
        self.pending: list[StateEvent] = []
        self.new_every: list[StateEvent] = []
        self.state_changed = False
        self.initialized = False
        self.limit = 0

    # ------------------------------------------------------------------ condition chain
    def _run(self, se: StateEvent) -> None:
        """Siddhi's ``process(stateEvent)``: filters, then the post processor."""
        self.state_changed = False
        cond = self.cond
        if cond is None or cond(se):
            self.post.process(se)

    def _expired(self, se: StateEvent, now: int) -> bool:
        if self.within < 0:
            return False
        events = se.events
        for sid in self.start_ids:
            ev = events[sid]
            if ev is not None:
                if ev.__class__ is list:
                    if not ev:
                        continue
                    ev = ev[0]
                if abs(ev.timestamp - now) > self.within:
                    return True
        return False

    # ------------------------------------------------------------------ lifecycle
    def init(self) -> None:
        if self.is_start and (not self.initialized or self.post.next_every_pre is not None or (
                self.sequence and getattr(self.post.next_pre, "absent", False))):
            self.add_state(StateEvent(-1, [None] * self.rt.size))
            self.initialized = True

    def add_state(self, se: StateEvent) -> None:
        if self.sequence:
            if not self.new_every:
                self.new_every.append(se)
        else:
            self.new_every.append(se)

    def add_every_state(self, se: StateEvent) -> None:
        # A copy of ``se`` with this state and the later ones empty: ``every`` starts over here.
        events = se.events
        sid = self.state_id
        head = events[:sid]
        if self.rt.counting:
            head = [x[:] if x.__class__ is list else x for x in head]
        head += [None] * (len(events) - sid)
        self.new_every.append(StateEvent(se.timestamp, head, CURRENT))

    def reset_state(self) -> None:
        self.pending.clear()
        if self.index is not None:
            self.index.clear()
        if self.is_start and not self.new_every:
            if self.sequence and self.post.next_every_pre is None and _has_pending(self.post.next_pre):
                return
            self.init()

    def update_state(self) -> None:
        if self.new_every:
            new = self.new_every
            if len(new) > 1:
                new.sort(key=_sort_key)
            self.pending.extend(new)
            if self.index is not None:
                self._index_all(new)
            new.clear()
            if self.limit and len(self.pending) > self.limit:
                self._bound()

    def _bound(self) -> None:
        """Drop the oldest partial matches beyond the limit (``max.pending``)."""
        n = len(self.pending) - self.limit
        if self.index is not None:
            self._unindex_all(self.pending[:n])
        self.rt.drop(self.pending, n)

    # ------------------------------------------------------------------ equality index
    def use_index(self, key: _StateKey) -> None:
        """File this state's pending partial matches under ``key`` (see :class:`_StateKey`)."""
        self.key = key
        self.index = {}
        self._index_all(self.pending)

    def _index_all(self, items: list[StateEvent]) -> None:
        index = self.index
        assert index is not None and self.key is not None
        of_state = self.key.of_state
        try:
            for se in items:
                k = of_state(se)
                bucket = index.get(k)
                if bucket is None:
                    index[k] = [se]
                else:
                    bucket.append(se)
        except TypeError:
            self.index = None   # an unhashable value: scan the list from now on

    def _unindex_all(self, items: list[StateEvent]) -> None:
        index = self.index
        assert index is not None and self.key is not None
        of_state = self.key.of_state
        for se in items:
            k = of_state(se)
            bucket = index.get(k)
            # The oldest entries leave first, so the one to remove is usually at the front.
            if bucket is not None and bucket[0] is se:
                del bucket[0]
            elif bucket is None or not _remove_identical(bucket, se):
                # Not filed under its key (which cannot change while it waits here): rebuild.
                self._rebuild_index(se)
                continue
            if not bucket:
                del index[k]

    def _rebuild_index(self, gone: StateEvent) -> None:
        assert self.key is not None
        self.index = {}
        self._index_all([x for x in self.pending if x is not gone])

    def expire_events(self, now: int) -> None:
        if self.within < 0:
            return
        expired = None
        pending = self.pending
        n = 0
        for se in pending:
            if self._expired(se, now):
                n += 1
                if se.type != EXPIRED:
                    se.type = EXPIRED
                    expired = se
            else:
                break
        if n:
            if self.index is not None:
                self._unindex_all(pending[:n])
            del pending[:n]
        if self.new_every:
            keep = []
            for se in self.new_every:
                if self._expired(se, now):
                    if se.type != EXPIRED:
                        se.type = EXPIRED
                        expired = se
                else:
                    keep.append(se)
            self.new_every[:] = keep
        if expired is not None and self.within_every_pre is not None:
            self.within_every_pre.add_every_state(expired)
            self.within_every_pre.update_state()

    # ------------------------------------------------------------------ events
    def process_and_return(self, ev: Event) -> list[StateEvent] | tuple[()]:
        """Offer ``ev`` to the waiting partial matches; the ones that completed the pattern."""
        if self.sequence:
            return self._process_each(ev)
        # Patterns: test every candidate in one generated loop, then hand the ones that
        # passed to the post processor in their order (a condition only reads its own
        # partial match, so testing all first changes nothing).
        index = self.index
        if index is not None:
            hits = self.key.probe(index, ev)  # type: ignore[union-attr]
            if hits is _UNHASHABLE:
                self.index = None
                hits = self.scan(self.pending, ev)  # type: ignore[misc]
        elif self.pending:
            hits = self.scan(self.pending, ev)  # type: ignore[misc]
        else:
            return ()
        if hits is None:
            return ()
        return self._passed(hits, ev)

    def _passed(self, hits: list[StateEvent], ev: Event) -> list[StateEvent] | tuple[()]:
        out: list[StateEvent] | None = None
        sid = self.state_id
        post = self.post
        last_post = self.last_post
        pending = self.pending
        for se in hits:
            self.state_changed = False
            post.process(se)
            if last_post.returned:
                last_post.returned = False
                if out is None:
                    out = [se]
                else:
                    out.append(se)
            if self.state_changed:
                if self.index is not None:
                    self._unindex_all([se])
                _remove_identical(pending, se)
            else:
                se.events[sid] = None
        return () if out is None else out

    def _process_each(self, ev: Event) -> list[StateEvent]:
        """Siddhi's loop, one partial match at a time (sequences and absent states)."""
        out: list[StateEvent] = []
        sid = self.state_id
        removed: set[int] = set()
        last_post = self.last_post
        for se in tuple(self.pending):
            se.events[sid] = ev
            self._run(se)
            if last_post.returned:
                last_post.returned = False
                out.append(se)
            if self.state_changed:
                removed.add(id(se))
            else:
                se.events[sid] = None
                if self.sequence:
                    if self._remove_on_no_change():
                        removed.add(id(se))
                    if self.post.callback_pre is not None:
                        self.post.callback_pre.start_state_reset()
        if removed:
            self.pending[:] = [s for s in self.pending if id(s) not in removed]
        return out

    def _remove_on_no_change(self) -> bool:
        return True

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k in _STATE_FIELDS}

    def restore(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self.key is not None:   # the index is derived from ``pending``
            self.use_index(self.key)


_STATE_FIELDS = frozenset({"pending", "new_every", "state_changed", "initialized", "success",
                           "start_reset", "active", "last_scheduled", "last_arrival"})


def _remove_identical(items: list[Any], x: Any) -> bool:
    """Remove ``x`` itself from ``items`` (of state events); False when absent."""
    try:
        items.remove(x)   # StateEvent has no __eq__: remove() finds x itself, in C
    except ValueError:
        return False
    return True


def _has_pending(pre: Any) -> bool:
    return pre is not None and bool(pre.pending)


class _CountPost(_StreamPost):
    """CountPostStateProcessor: forwards once the minimum is collected."""

    def __init__(self, min_count: int, max_count: int) -> None:
        super().__init__()
        self.min = min_count
        self.max = max_count

    def process(self, se: StateEvent) -> None:
        chain = se.events[self.state_id]
        n = len(chain)
        pre = self.pre
        pre.success = True
        se.timestamp = chain[-1].timestamp
        if n >= self.min:
            if pre.sequence:
                if self.next_pre is not None:
                    self.next_pre.add_state(se)
                if n != self.max:
                    pre.add_state(se)
            elif n == self.min:
                self.min_count_reached(se)
            if n == self.max:
                pre.state_changed = True

    def min_count_reached(self, se: StateEvent) -> None:
        if self.to_selector:
            self.pre.state_changed = True
            self.returned = True
        if self.next_pre is not None:
            self.next_pre.add_state(se)
        if self.next_every_pre is not None:
            self.next_every_pre.add_every_state(se)

    def set_next_pre(self, pre: Any) -> None:
        self.next_pre = pre
        if self.pre.is_start and self.pre.sequence and self.min == 0:
            pre.post.callback_pre = self.pre


class _CountPre(_StreamPre):
    """CountPreStateProcessor: collects events of a counting state."""

    def __init__(self, rt: PatternRuntime, sequence: bool, min_count: int, max_count: int) -> None:
        super().__init__(rt, sequence)
        self.min = min_count
        self.max = max_count
        self.success = False
        self.start_reset = False

    def process_and_return(self, ev: Event) -> list[StateEvent]:
        out: list[StateEvent] = []
        sid = self.state_id
        removed: set[int] = set()
        last_post = self.last_post
        for se in tuple(self.pending):
            events = se.events
            if (len(events) > sid + 1 and events[sid + 1] is not None) or \
                    (len(events) > sid + 2 and events[sid + 2] is not None):
                removed.add(id(se))   # the next state took over this match
                continue
            chain = events[sid]
            if chain is None:
                events[sid] = [ev]
            else:
                chain.append(ev)
            self.success = False
            self._run(se)
            if last_post.returned:
                last_post.returned = False
                out.append(se)
            if self.state_changed:
                removed.add(id(se))
            if not self.success:
                chain = events[sid]
                if chain is not None:
                    chain.pop()
                    if not chain:
                        events[sid] = None
                if self.sequence:
                    removed.add(id(se))
        if removed:
            self.pending[:] = [s for s in self.pending if id(s) not in removed]
        return out

    def add_state(self, se: StateEvent) -> None:
        super().add_state(se)
        if self.min == 0 and se.events[self.state_id] is None:
            self.post.min_count_reached(se)

    def start_state_reset(self) -> None:
        self.start_reset = True
        cb = self.post.callback_pre
        if cb is not None and cb is not self:
            cb.start_state_reset()

    def update_state(self) -> None:
        if self.start_reset:
            self.start_reset = False
            self.init()
        super().update_state()


class _LogicalPost(_StreamPost):
    """LogicalPostStateProcessor: ``and`` waits for the partner, ``or`` does not."""

    def __init__(self, is_and: bool) -> None:
        super().__init__()
        self.is_and = is_and
        self.partner_pre: Any = None
        self.partner_post: Any = None

    def process(self, se: StateEvent) -> None:
        if self.is_and:
            partner = self.partner_pre
            if partner.absent:
                go = partner.partner_can_proceed(se)
            else:
                go = se.events[partner.state_id] is not None
            if go:
                _StreamPost.process(self, se)
                # Siddhi only does this for 'or'; without it a leading 'A and B' completed by
                # its left side would never reach the selector (a Siddhi bug we do not copy).
                if self.partner_post.to_selector and self.pre.last_post is self.partner_post:
                    self.partner_post.returned = True
            else:
                self.pre.state_changed = True
        else:
            _StreamPost.process(self, se)
            if self.partner_post.to_selector and self.pre.last_post is self.partner_post:
                self.partner_post.returned = True   # 'from A or B select ...'

    def set_next_pre(self, pre: Any) -> None:
        self.next_pre = pre
        self.partner_post.next_pre = pre

    def set_next_every_pre(self, pre: Any) -> None:
        self.next_every_pre = pre
        self.partner_post.next_every_pre = pre


class _LogicalPre(_StreamPre):
    """LogicalPreStateProcessor: both sides of ``and``/``or`` share each state event."""

    def __init__(self, rt: PatternRuntime, sequence: bool, is_and: bool) -> None:
        super().__init__(rt, sequence)
        self.is_and = is_and
        self.partner: Any = None

    def add_state(self, se: StateEvent) -> None:
        partner = self.partner
        if self.is_start or self.sequence:
            if not self.new_every:
                self.new_every.append(se)
            if partner is not None and not partner.new_every:
                partner.new_every.append(se)
        else:
            self.new_every.append(se)
            if partner is not None:
                partner.new_every.append(se)

    def add_every_state(self, se: StateEvent) -> None:
        clone = _copy(se)
        clone.type = CURRENT
        events = clone.events
        for i in range(self.state_id, len(events)):
            events[i] = None
        self.new_every.append(clone)
        if self.partner is not None:
            events[self.partner.state_id] = None
            self.partner.new_every.append(clone)

    def reset_state(self) -> None:
        partner = self.partner
        if not self.is_and or len(self.pending) == len(partner.pending):
            self.pending.clear()
            partner.pending.clear()
            if self.is_start and not self.new_every:
                if self.sequence and self.post.next_every_pre is None and _has_pending(self.post.next_pre):
                    return
                self.init()

    def update_state(self) -> None:
        super().update_state()
        self.partner._move_new()

    def _move_new(self) -> None:
        _StreamPre.update_state(self)

    def process_and_return(self, ev: Event) -> list[StateEvent]:
        out: list[StateEvent] = []
        sid = self.state_id
        psid = self.partner.state_id
        removed: set[int] = set()
        last_post = self.last_post
        for se in tuple(self.pending):
            if not self.is_and and se.events[psid] is not None:
                removed.add(id(se))
                continue
            se.events[sid] = ev
            self._run(se)
            if last_post.returned:
                last_post.returned = False
                out.append(se)
            if self.state_changed:
                removed.add(id(se))
            else:
                se.events[sid] = None
                if self.sequence:
                    removed.add(id(se))
        if removed:
            self.pending[:] = [s for s in self.pending if id(s) not in removed]
        return out


class _Timed:
    """Scheduling for absent states (Siddhi's Scheduler + EntryValveProcessor)."""

    rt: PatternRuntime

    def _notify_at(self, at: int) -> None:
        scheduled = self.__dict__.setdefault("_scheduled", set())
        if at in scheduled:
            return
        scheduled.add(at)
        self.rt.ctx.scheduler.schedule(at, self._fire)

    def _fire(self, at: int) -> None:
        self.__dict__.setdefault("_scheduled", set()).discard(at)
        self.process_timer(at)  # type: ignore[attr-defined]

    def restore(self, state: dict[str, Any]) -> None:
        """Restore, then arm again the timers the restored state waits for (timers are not state)."""
        super().restore(state)  # type: ignore[misc]
        self.__dict__["_scheduled"] = set()
        waiting = getattr(self, "waiting", -1)
        last = getattr(self, "last_scheduled", 0)
        if last > 0:
            self._notify_at(last)
        if waiting is not None and waiting >= 0:
            for se in (*self.pending, *self.new_every):  # type: ignore[attr-defined]
                if se.timestamp != -1:
                    self._notify_at(se.timestamp + waiting)


class _AbsentStreamPost(_StreamPost):
    """AbsentStreamPostStateProcessor: a forbidden event arrived."""

    def process(self, se: StateEvent) -> None:
        pre = self.pre
        pre.state_changed = True
        ev = se.events[self.state_id]
        se.timestamp = ev.timestamp
        self.returned = True
        if pre.is_start and self.next_every_pre is not None and self.next_every_pre is pre:
            self.next_every_pre.add_every_state(se)
        pre.update_last_arrival_time(ev.timestamp)


class _AbsentStreamPre(_Timed, _StreamPre):
    """AbsentStreamPreStateProcessor: ``not S[cond] for t``."""

    absent = True

    def __init__(self, rt: PatternRuntime, sequence: bool, waiting: int) -> None:
        super().__init__(rt, sequence)
        self.waiting = waiting
        self.last_scheduled = 0
        self.active = True
        self.started = False

    def update_last_arrival_time(self, ts: int) -> None:
        self.last_scheduled = ts + self.waiting
        self._notify_at(self.last_scheduled)

    def add_state(self, se: StateEvent) -> None:
        if not self.active:
            return
        if self.sequence:
            self.new_every.clear()
        self.new_every.append(se)
        if not self.is_start:
            self.last_scheduled = se.timestamp + self.waiting
            self._notify_at(self.last_scheduled)

    def add_every_state(self, se: StateEvent) -> None:
        clone = _copy(se)
        clone.type = CURRENT
        for i in range(self.state_id, len(clone.events)):
            clone.events[i] = None
        self.new_every.append(clone)
        self.last_scheduled = se.timestamp + self.waiting
        self._notify_at(self.last_scheduled)

    def reset_state(self) -> None:
        self.pending.clear()
        if self.is_start:
            if self.sequence and self.post.next_every_pre is None and _has_pending(self.post.next_pre):
                return
            self.init()

    def process_timer(self, now: int) -> None:
        if not self.active:
            return
        ready: list[StateEvent] = []
        initialize = self.is_start and not self.new_every and not self.pending
        if initialize and self.sequence and self.post.next_every_pre is None and self.last_scheduled > 0:
            initialize = False   # a sequence without every: an event already arrived
        if initialize:
            self.add_state(StateEvent(-1, [None] * self.rt.size))
        elif self.sequence and self.new_every:
            self.reset_state()
        self.update_state()
        keep = []
        for se in self.pending:
            if self._expired(se, now):
                if self.within_every_pre is not None and self.post.next_every_pre is not self:
                    self.post.next_every_pre.add_every_state(se)
                continue
            if (se.timestamp == -1 and now >= self.last_scheduled) or \
                    (se.timestamp != -1 and now >= se.timestamp + self.waiting):
                se.timestamp = now
                ready.append(se)
            else:
                keep.append(se)
        self.pending[:] = keep
        if self.within_every_pre is not None:
            self.within_every_pre.update_state()
        for se in ready:
            self._send(se)
        actual = self.rt.ctx.clock.now()
        if actual > self.waiting + now:
            self.last_scheduled = actual + self.waiting
        if not ready and self.last_scheduled < now:
            self.last_scheduled = now + self.waiting
            self._notify_at(self.last_scheduled)

    def _send(self, se: StateEvent) -> None:
        post = self.post
        if post.to_selector:
            self.rt.emit_now(se)
        if post.next_pre is not None:
            post.next_pre.add_state(se)
        if post.next_every_pre is not None:
            post.next_every_pre.add_every_state(se)
        elif self.is_start:
            self.active = False
        if post.callback_pre is not None:
            post.callback_pre.start_state_reset()

    def process_and_return(self, ev: Event) -> list[StateEvent]:
        if not self.active:
            return []
        self._process_each(ev)
        return []

    def _remove_on_no_change(self) -> bool:
        return False

    def start(self) -> None:
        """Siddhi's partitionCreated: a leading ``not S for t`` starts waiting at once."""
        if not self.started:
            self.started = True
            if self.is_start and self.waiting != -1 and self.active:
                # from the app's start; under playback from the first event's time
                self.rt.ctx.clock.on_start(self._wait_from)

    def _wait_from(self, now: int) -> None:
        if self.active:
            self.last_scheduled = now + self.waiting
            self._notify_at(self.last_scheduled)


class _AbsentLogicalPost(_LogicalPost):
    """AbsentLogicalPostStateProcessor: the forbidden side of a logical state arrived."""

    def process(self, se: StateEvent) -> None:
        self.pre.state_changed = True
        ev = se.events[self.state_id]
        self.returned = True
        self.pre.update_last_arrival_time(ev.timestamp)


class _AbsentLogicalPre(_Timed, _LogicalPre):
    """AbsentLogicalPreStateProcessor: ``not S[cond] [for t] and/or e2=...``."""

    absent = True

    def __init__(self, rt: PatternRuntime, sequence: bool, is_and: bool, waiting: int | None) -> None:
        super().__init__(rt, sequence, is_and)
        self.waiting = -1 if waiting is None else waiting
        self.last_arrival = 0
        self.active = True
        self.started = False

    def update_last_arrival_time(self, ts: int) -> None:
        self.last_arrival = ts

    def _empty(self) -> Event:
        # Siddhi marks a side that timed out with a fresh StreamEvent: no data, timestamp -1.
        return Event(-1, (None,) * len(self.rt.plan.states[self.state_id].attributes))

    def add_state(self, se: StateEvent) -> None:
        if not self.active:
            return
        super().add_state(se)
        if not self.is_start and self.waiting != -1:
            self._notify_at(se.timestamp + self.waiting)
            partner = self.partner
            if partner.absent:
                partner._notify_at(se.timestamp + partner.waiting)

    def add_every_state(self, se: StateEvent) -> None:
        clone = _copy(se)
        clone.type = CURRENT
        own = clone.events[self.state_id]
        if own is not None:
            clone.timestamp = own.timestamp
        clone.events[self.state_id] = None
        clone.events[self.partner.state_id] = None
        self.new_every.append(clone)
        self.partner.new_every.append(clone)

    def _waiting_passed(self, now: int, se: StateEvent) -> bool:
        own = se.events[self.state_id]
        if own is None:
            return now >= se.timestamp + self.waiting
        return now >= own.timestamp + self.waiting

    def process_timer(self, now: int) -> None:
        if not self.active:
            return
        ready: list[StateEvent] = []
        if now >= self.last_arrival + self.waiting:
            if self.is_start and self.sequence and not self.new_every and not self.pending:
                self.add_state(StateEvent(-1, [None] * self.rt.size))
            elif self.sequence and self.new_every:
                self.reset_state()
            self.update_state()
            expired = None
            keep = []
            psid = self.partner.state_id
            for se in self.pending:
                if self._expired(se, now):
                    expired = se
                    continue
                if self._waiting_passed(now, se):
                    partner_ev = se.events[psid]
                    if not self.is_and and partner_ev is None:
                        se.events[self.state_id] = self._empty()  # Siddhi adds an empty event
                        ready.append(se)
                    elif self.is_and and partner_ev is not None:
                        ready.append(se)
                    elif self.is_and:
                        se.events[self.state_id] = self._empty()
                    continue
                keep.append(se)
            self.pending[:] = keep
            if expired is not None and self.within_every_pre is not None:
                self.within_every_pre.add_every_state(expired)
                self.within_every_pre.update_state()
            for se in ready:
                se.timestamp = now
                self._send(se)
            self.last_arrival = 0
        if self.post.next_every_pre is not None or (not ready and self.is_start):
            if self.last_arrival == 0:
                nxt = self.rt.ctx.clock.now() + self.waiting
            else:
                nxt = self.last_arrival + self.waiting
            self._notify_at(nxt)

    def _send(self, se: StateEvent) -> None:
        post = self.post
        if post.to_selector:
            self.rt.emit_now(se)
        if post.next_pre is not None:
            post.next_pre.add_state(se)
        if post.next_every_pre is not None:
            post.next_every_pre.add_every_state(se)
        elif self.is_start:
            self.active = False
            if not self.is_and and self.partner.absent:
                self.partner.active = False
        if post.callback_pre is not None:
            post.callback_pre.start_state_reset()

    def process_and_return(self, ev: Event) -> list[StateEvent]:
        if not self.active:
            return []
        sid = self.state_id
        psid = self.partner.state_id
        removed: set[int] = set()
        last_post = self.last_post
        for se in tuple(self.pending):
            if not self.is_and and se.events[psid] is not None:
                removed.add(id(se))
                continue
            current = se.events[sid]
            se.events[sid] = ev
            self._run(se)
            if self.waiting != -1 or (self.sequence and self.is_and
                                      and self.post.next_every_pre is not None):
                se.events[sid] = current   # back to the original state
            if last_post.returned:
                last_post.returned = False
                removed.add(id(se))   # the forbidden event came: no longer a candidate
                if self.sequence:
                    pp = self.partner.pending
                    for k, x in enumerate(pp):
                        if x is se:
                            del pp[k]
                            break
            if not self.state_changed:
                se.events[sid] = current
                if self.sequence:
                    removed.add(id(se))
        if removed:
            self.pending[:] = [s for s in self.pending if id(s) not in removed]
        return []

    def partner_can_proceed(self, se: StateEvent) -> bool:
        if self.sequence and self.post.next_every_pre is None and self.last_arrival > 0:
            return False
        if self.waiting == -1:
            if self.post.next_every_pre is None:
                return se.events[self.state_id] is None
            if self.last_arrival > 0:
                self.last_arrival = 0
                self.init()
                return False
            return True
        return se.events[self.state_id] is not None

    def start(self) -> None:
        if not self.started:
            self.started = True
            if self.is_start and self.waiting != -1 and self.active:
                # from the app's start; under playback from the first event's time
                self.rt.ctx.clock.on_start(lambda now: self._notify_at(now + self.waiting))


# ============================================================================ inner runtimes
@dataclass
class _Inner:
    """Siddhi's InnerStateRuntime: how init/reset/update/setup recurse over the tree."""

    kind: str
    first: Any
    last: Any
    children: tuple[_Inner, ...] = ()
    stream_key: tuple[str, bool, bool] | None = None

    def set_selector(self) -> None:
        if self.kind == "next":
            self.children[1].set_selector()
        elif self.kind == "logical":
            self.children[1].set_selector()
            self.children[0].set_selector()
        elif self.kind == "every":
            self.children[0].set_selector()
        else:
            self.last.to_selector = True

    def setup(self, receivers: dict[tuple[str, bool, bool], list[Any]]) -> None:
        if self.kind == "next":
            self.children[0].setup(receivers)
            self.children[1].setup(receivers)
        elif self.kind == "logical":
            self.children[1].setup(receivers)
            self.children[0].setup(receivers)
        elif self.kind == "every":
            self.children[0].setup(receivers)
        else:
            assert self.stream_key is not None
            receivers.setdefault(self.stream_key, []).append(self.first)

    def init(self) -> None:
        if self.kind == "next":
            self.children[0].init()
            self.children[1].init()
        elif self.kind == "logical":
            self.children[1].init()
            self.children[0].init()
        elif self.kind == "every":
            self.children[0].init()
        else:
            self.first.init()

    def reset(self) -> None:
        if self.kind == "next":
            self.children[1].reset()
            self.children[0].reset()
        elif self.kind == "logical":
            self.children[1].reset()
        else:  # stream, count and every reset their first processor (as Siddhi does)
            self.first.reset_state()

    def update(self) -> None:
        if self.kind == "next":
            self.children[0].update()
            self.children[1].update()
        elif self.kind == "logical":
            self.children[1].update()
        else:
            self.first.update_state()


# ============================================================================ runtime
class PatternRuntime:
    """One instance of a pattern/sequence state machine (one per partition key)."""

    def __init__(self, plan: _Plan, ctx: Any, emit: Emit) -> None:
        self.plan = plan
        self.ctx = ctx
        self.size = len(plan.states)
        self.counting = any(s.is_count for s in plan.states)   # chains to copy in clones
        self._emit = emit
        self.dropped = 0
        self.pres: list[_StreamPre] = []
        self.startup: list[Any] = []
        self.receivers: dict[tuple[str, bool, bool], list[Any]] = {}
        self.top = self._build(plan.element, None, None, True, self.pres, None)
        if plan.within is not None:
            start_ids = tuple(p.state_id for p in self.pres if p.is_start)
            for p in self.pres:
                p.within = plan.within
                p.start_ids = start_ids
        self.top.first.last_post = self.top.last
        self.top.set_selector()
        self.top.setup(self.receivers)
        for p in self.pres:
            p.limit = plan.max_pending
        self.top.init()

    # ------------------------------------------------------------------ build (StateInputStreamParser.parse)
    def _build(self, el: Any, pre: Any, post: Any, is_start: bool, pres: list[Any],
               logical: bool | None) -> _Inner:
        plan = self.plan
        seq = plan.sequence
        if isinstance(el, (StreamStateElement, AbsentStreamStateElement)):
            info = plan.states[plan.ids[id(el)]]
            absent = isinstance(el, AbsentStreamStateElement)
            if pre is None:
                pre = (_AbsentStreamPre(self, seq, el.waiting_millis if el.waiting_millis is not None else -1)
                       if absent else _StreamPre(self, seq))
                if absent:
                    self.startup.append(pre)
            pre.state_id = info.state_id
            pre.is_start = is_start
            pre.cond = plan.conds[info.state_id]
            pre.scan = plan.scans.get(info.state_id)
            key = plan.keys.get(info.state_id)
            if key is not None and type(pre) is _StreamPre:
                pre.use_index(key)
            if post is None:
                post = _AbsentStreamPost() if absent else _StreamPost()
            post.state_id = info.state_id
            post.pre = pre
            pre.post = pre.last_post = post
            pres.append(pre)
            return _Inner("stream", pre, post, stream_key=(info.stream_id, info.is_inner, info.is_fault))
        if isinstance(el, NextStateElement):
            cur = self._build(el.first, pre, post, is_start, pres, None)
            nxt = self._build(el.next, pre, post, False, pres, None)
            cur.last.set_next_pre(nxt.first)
            return _Inner("next", cur.first, nxt.last, (cur, nxt))
        if isinstance(el, EveryStateElement):
            inner_pres: list[Any] = []
            inner = self._build(el.element, pre, post, is_start, inner_pres, None)
            inner.last.set_next_every_pre(inner.first)
            for p in inner_pres:
                p.within_every_pre = inner.first
            pres.extend(inner_pres)
            return _Inner("every", inner.first, inner.last, (inner,))
        if isinstance(el, LogicalStateElement):
            is_and = el.op is LogicalOperator.AND
            left, right = _sides(el)
            sides = []
            for side in (left, right):
                if isinstance(side, AbsentStreamStateElement):
                    p = _AbsentLogicalPre(self, seq, is_and, side.waiting_millis)
                    self.startup.append(p)
                    q: _LogicalPost = _AbsentLogicalPost(is_and)
                else:
                    p, q = _LogicalPre(self, seq, is_and), _LogicalPost(is_and)
                sides.append((p, q))
            (pre1, post1), (pre2, post2) = sides
            post1.partner_pre, post2.partner_pre = pre2, pre1
            post1.partner_post, post2.partner_post = post2, post1
            pre1.partner, pre2.partner = pre2, pre1
            inner2 = self._build(right, pre2, post2, is_start, pres, None)
            inner1 = self._build(left, pre1, post1, is_start, pres, None)
            return _Inner("logical", inner1.first, inner2.last, (inner1, inner2))
        if isinstance(el, CountStateElement):
            hi = el.max_count if el.max_count >= 0 else 1 << 31
            lo = max(el.min_count, 0)
            cpre = _CountPre(self, seq, lo, hi)
            cpost = _CountPost(lo, hi)
            inner = self._build(el.element, cpre, cpost, is_start, pres, None)
            return _Inner("count", inner.first, inner.last, stream_key=inner.stream_key)
        if isinstance(el, GroupStateElement):
            group_pres: list[Any] = []
            inner = self._build(el.element, pre, post, is_start, group_pres, None)
            if el.within_millis is not None:
                firsts = [inner.first]
                partner = getattr(inner.first, "partner", None)
                if partner is not None:
                    firsts.append(partner)
                start_ids = tuple(p.state_id for p in firsts)
                for p in group_pres:
                    p.within = el.within_millis
                    p.start_ids = start_ids
            pres.extend(group_pres)
            return inner
        raise error_at(f"unsupported pattern element {type(el).__name__}", el)

    # ------------------------------------------------------------------ receiving
    def receiver(self, key: tuple[str, bool, bool]) -> Callable[[list[Event]], None]:
        """The chunk receiver for one input stream of the pattern."""
        plan = self.plan
        if key not in plan.receivers:
            plan.receivers[key] = self._gen_receiver(key)
        make = plan.receivers[key]
        if make is not None:
            return make(self.pres, self._emit, _copy, StateEvent)
        return self._receiver(key)

    def _gen_receiver(self, key: tuple[str, bool, bool]) -> Callable[..., Any] | None:
        """A generated receiver doing :meth:`_receiver`'s work in one loop, or None.

        Only for patterns whose states on this stream are all plain (:class:`_StreamPre`).
        Per event, inline: the ``within`` test of each state's oldest partial match, the move
        of a new partial match into ``pending`` (and the index), the candidate loops of the
        conditions, and the hand-over of the partial matches that passed.  The processors
        are called for the rest (expiry, several new partial matches, other kinds of next
        state).  The source depends on the plan alone, so every instance (partition key)
        shares it; ``make(pres, emit, copy)`` binds one instance.
        """
        plan = self.plan
        procs = self.receivers[key]
        gen = plan.gen
        if plan.sequence or gen is None or any(type(p) is not _StreamPre for p in procs) \
                or any(p.state_id not in plan.tests for p in procs):
            return None
        order = procs if len(procs) == 1 else procs[::-1]
        names = {id(p): f"_r_p{i}" for i, p in enumerate(self.pres)}
        body = [f"{names[id(p)]} = _r_pres[{i}]" for i, p in enumerate(self.pres)]
        loop = ["_r_matched = None",
                "for _r_ev in _r_chunk:",
                "    if _r_ev.type != 0:",
                "        continue",
                "    _r_now = _r_ev.timestamp",
                "    _r_d = _r_ev.data"]
        for p in self.pres:
            loop += _indent(self._expiry_lines(p, names), 1)
        for p in procs:
            loop += _indent(self._update_lines(p, names), 1)
        for p in order:
            loop += _indent(self._process_lines(p, names), 1)
        # Each match goes to the selector on its own, as Siddhi's receiver sends it, copied
        # (the partial match may still change).
        copy = "_r_copy(_r_se)" if self.counting else "_r_SE(_r_se.timestamp, _r_se.events[:], _r_se.type)"
        loop += ["if _r_matched is not None:",
                 "    for _r_se in _r_matched:",
                 f"        _r_emit([{copy}])"]
        body += ["def _pattern_receive(_r_chunk):", *_indent(loop, 1), "return _pattern_receive"]
        return gen.function("_make_pattern_receive", "_r_pres, _r_emit, _r_copy, _r_SE", body)

    def _expiry_lines(self, p: Any, names: dict[int, str]) -> list[str]:
        """``p.expire_events(now)``, called only when it has something to do."""
        if p.within < 0:
            return []
        n = names[id(p)]
        if type(p) is not _StreamPre or any(self.plan.states[i].is_count for i in p.start_ids):
            return [f"{n}.expire_events(_r_now)"]
        starts = [i for i in p.start_ids if i != p.state_id]
        if not starts:
            # A partial match waiting in a plain state has no event of that state yet: when
            # it is the only start state, nothing waiting here can be past ``within``.
            return []
        # expire_events only acts when the oldest partial match is past ``within`` (it stops
        # at the first live one) or a new one (not moved in yet) is.
        w = p.within

        def late(se: str) -> str:   # _expired(se, now)
            return " or ".join(f"((_r_x := {se}.events[{i}]) is not None "
                               f"and not -{w} <= _r_x.timestamp - _r_now <= {w})" for i in starts)

        return [f"_r_pd = {n}.pending",
                f"if _r_pd and ({late('_r_pd[0]')}):",
                f"    {n}.expire_events(_r_now)",
                f"elif {n}.new_every:",
                f"    for _r_s in {n}.new_every:",
                f"        if {late('_r_s')}:",
                f"            {n}.expire_events(_r_now)",
                "            break"]

    def _update_lines(self, p: Any, names: dict[int, str]) -> list[str]:
        """``p.update_state()``; one new partial match (the usual case) is moved inline."""
        n = names[id(p)]
        lines = [f"_r_ne = {n}.new_every",
                 "if _r_ne:",
                 "    if len(_r_ne) == 1:",
                 "        _r_s = _r_ne.pop()",
                 f"        {n}.pending.append(_r_s)"]
        key = self.plan.keys.get(p.state_id) if p.index is not None else None
        if key is not None:
            lines += [f"        _r_ix = {n}.index",
                      "        if _r_ix is not None:",
                      "            _r_v = _r_s.events",
                      "            try:",
                      f"                _r_k = {key.held}",
                      "                _r_b = _r_ix.get(_r_k)",
                      "            except TypeError:",
                      f"                {n}.index = None   # unhashable: scan the list from now on",
                      "            else:",
                      "                if _r_b is None:",
                      "                    _r_ix[_r_k] = [_r_s]",
                      "                else:",
                      "                    _r_b.append(_r_s)"]
        if p.limit:   # the same bound for every instance of the plan
            lines += [f"        if len({n}.pending) > {p.limit}:", f"            {n}._bound()"]
        return lines + ["    else:", f"        {n}.update_state()"]

    def _process_lines(self, p: Any, names: dict[int, str]) -> list[str]:
        """``p.process_and_return(ev)``: the candidate loop, then the hand-over of the hits."""
        n = names[id(p)]
        key = self.plan.keys.get(p.state_id) if p.index is not None else None
        if key is None or key.found is None:
            test = self.plan.tests[p.state_id]
            lines = [f"_r_pd = {n}.pending",
                     "if _r_pd:",
                     *_indent(test.candidates("_r_pd"), 1)]
            if test.whole:
                lines += _indent(self._hit_lines(p, names, False, True), 1)
            else:
                lines += ["    if _r_hits is not None:", *_indent(self._hit_lines(p, names, False, False), 2)]
            return [*test.own, *_gated(test.gate, lines)]
        test = key.found
        collect = ["if _r_got:",
                   "    if _r_matched is None:",
                   "        _r_matched = []",
                   "    _r_matched += _r_got"]
        lines = ["try:",
                 f"    _r_cands = _r_ix.get(_r_key := {key.arriving})",
                 "except TypeError:",
                 "    _r_cands = None",
                 f"    _r_got = {n}.process_and_return(_r_ev)",
                 *_indent(collect, 1),
                 "if _r_cands is not None:",
                 *_indent(test.candidates("_r_cands"), 1)]
        if test.whole:
            lines += _indent(self._hit_lines(p, names, True, True), 1)
        else:
            lines += ["    if _r_hits is not None:", *_indent(self._hit_lines(p, names, True, False), 2)]
        # The partial matches filed under the event's key are the only candidates (none can
        # pass when the key is null or NaN); without the index (an unhashable value was
        # seen) the processor scans them all.
        return [f"_r_ix = {n}.index",
                "if _r_ix is None:",
                f"    _r_got = {n}.process_and_return(_r_ev)",
                *_indent(collect, 1),
                f"elif {key.safe}:",
                *_indent(test.own, 1),
                *_indent(_gated(test.gate, lines), 1)]

    def _hit_lines(self, p: Any, names: dict[int, str], indexed: bool, all_pass: bool) -> list[str]:
        """``p._passed(_r_hits, ev)``, inline for a plain post processor (the usual case).

        Inline: what :meth:`_StreamPost.process` does for each hit, then its removal from
        ``pending`` (``_r_pd`` unless ``indexed``) and from the index bucket ``_r_cands``
        (filed under ``_r_key``); ``all_pass`` says every candidate is a hit.  The state's
        flag ends True, as after Siddhi's loop.
        """
        n = names[id(p)]
        q = p.post
        last = p.last_post
        nxt, again = q.next_pre, q.next_every_pre
        # ``returned`` is read by ``p`` from its last post processor: inline when that is
        # ``q`` itself, or a plain one whose own pre resets it at once (so ``p`` reads False).
        plain_return = last is q or (not q.to_selector and type(last) is _StreamPost
                                     and last.pre.last_post is last)
        if type(q) is not _StreamPost or q.callback_pre is not None or not plain_return:
            return [f"_r_got = {n}._passed(_r_hits, _r_ev)",
                    "if _r_got:",
                    "    if _r_matched is None:",
                    "        _r_matched = []",
                    "    _r_matched += _r_got"]
        lines = [f"{n}.state_changed = True",
                 "for e in _r_hits:",
                 "    e.timestamp = _r_now"]
        if q.to_selector and last is q:
            lines += ["    if _r_matched is None:",
                      "        _r_matched = [e]",
                      "    else:",
                      "        _r_matched.append(e)"]
        if nxt is not None:
            # A plain pattern state's add_state appends to its new partial matches.
            lines.append(f"    {names[id(nxt)]}.new_every.append(e)" if type(nxt) is _StreamPre
                         else f"    {names[id(nxt)]}.add_state(e)")
        if again is not None:
            if type(again).add_every_state is _StreamPre.add_every_state and not self.counting:
                # add_every_state: a copy with this state and the later ones empty.
                sid, size = again.state_id, self.size
                fresh = "[" + ", ".join(["None"] * (size - sid)) + "]"
                events = fresh if sid == 0 else f"e.events[:{sid}] + {fresh}"
                lines.append(f"    {names[id(again)]}.new_every.append(_r_SE(_r_now, {events}, 0))")
            else:
                lines.append(f"    {names[id(again)]}.add_every_state(e)")
        # Removal (list.remove finds e itself: StateEvent has no __eq__).
        if not indexed:
            if all_pass:
                return [*lines, "_r_pd.clear()"]
            return [*lines, "    _r_pd.remove(e)"]
        lines.append(f"    {n}.pending.remove(e)")
        if all_pass:   # the whole bucket passed
            return [*lines, "del _r_ix[_r_key]"]
        return [*lines,
                "    _r_cands.remove(e)",
                "if not _r_cands:",
                "    del _r_ix[_r_key]"]

    def _receiver(self, key: tuple[str, bool, bool]) -> Callable[[list[Event]], None]:
        procs = self.receivers[key]
        order = procs if len(procs) == 1 else procs[::-1]
        pres = self.pres
        top = self.top
        sequence = self.plan.sequence
        emit = self._emit
        single_update = procs[:1] if len(procs) == 1 else procs
        expiring = [p for p in pres if p.within >= 0]

        def receive(chunk: list[Event]) -> None:
            matched: list[StateEvent] = []
            for ev in chunk:
                if ev.type != CURRENT:
                    continue
                ts = ev.timestamp
                for p in expiring:
                    p.expire_events(ts)
                if sequence:
                    top.reset()
                    top.update()
                else:
                    for p in single_update:
                        p.update_state()
                for p in order:
                    got = p.process_and_return(ev)
                    if got:
                        matched.extend(got)
            for se in matched:
                emit([_copy(se)])

        return receive

    def emit_now(self, se: StateEvent) -> None:
        """Output from a timer (absent states): straight to the selector."""
        self._emit([_copy(se)])

    def start(self) -> None:
        for p in self.startup:
            p.start()

    # ------------------------------------------------------------------ metrics and bounds
    @property
    def pending(self) -> int:
        """Partial matches currently held (for metrics)."""
        seen: set[int] = set()
        for p in self.pres:
            for se in p.pending:
                seen.add(id(se))
            for se in p.new_every:
                seen.add(id(se))
        return len(seen)

    def drop(self, pending: list[StateEvent], n: int) -> None:
        del pending[:n]
        self.dropped += n

    # ------------------------------------------------------------------ snapshots
    def snapshot_state(self) -> Any:
        return {"pres": [p.snapshot() for p in self.pres], "dropped": self.dropped}

    def restore_state(self, state: Any) -> None:
        for p, s in zip(self.pres, state["pres"], strict=False):
            p.restore(s)
        self.dropped = state.get("dropped", 0)


def _gated(gate: str | None, lines: list[str]) -> list[str]:
    """``lines`` under ``if gate:`` (the part of a condition testable once per event)."""
    return lines if gate is None else [f"if {gate}:", *_indent(lines, 1)]


def _indent(lines: list[str], depth: int) -> list[str]:
    pad = "    " * depth
    return [pad + line for line in lines]


def _sides(el: LogicalStateElement) -> tuple[Any, Any]:
    """The two sides of a logical state as Siddhi orders them: an absent side always first.

    Siddhi's compiler builds ``present and not S`` as ``logicalNotAnd(not S, present)`` (and
    likewise for ``or``); which side comes first decides which processor leads the state.
    """
    left, right = _unwrap(el.left), _unwrap(el.right)
    if isinstance(right, AbsentStreamStateElement) and not isinstance(left, AbsentStreamStateElement):
        return right, left
    return left, right


def _unwrap(el: Any) -> Any:
    """A logical side may come wrapped in a group without ``within``."""
    while isinstance(el, GroupStateElement) and el.within_millis is None:
        el = el.element
    return el


# ============================================================================ planning
@dataclass
class _Plan:
    element: Any
    sequence: bool
    states: list[_StateInfo]
    ids: dict[int, int]
    conds: dict[int, Callable[[StateEvent], bool] | None]
    within: int | None
    max_pending: int = 0
    tests: dict[int, _Test] = field(default_factory=dict)
    scans: dict[int, Callable[[Any, Event], list[StateEvent] | None]] = field(default_factory=dict)
    keys: dict[int, _StateKey] = field(default_factory=dict)
    gen: CodeGen | None = None
    # Generated receivers by stream key (made for the first instance, shared by the others).
    receivers: dict[tuple[str, bool, bool], Callable[..., Any] | None] = field(default_factory=dict)
    instances: list[PatternRuntime] = field(default_factory=list)


# ============================================================================ generated loops
#: What a probe returns when the arriving event's key cannot be hashed (the index is dropped).
_UNHASHABLE = object()

#: Attribute types whose values hash consistently with the generated ``==`` (numbers of
#: different types compare and hash alike in Python); ``object`` values may be unhashable.
_HASHABLE_TYPES = frozenset({AttrType.STRING, AttrType.INT, AttrType.LONG, AttrType.FLOAT,
                             AttrType.DOUBLE, AttrType.BOOL})


@dataclass(frozen=True)
class _Test:
    """One state's condition, ready to be written into a loop over candidate partial matches.

    ``code`` reads the arriving event as ``d{sid}`` (bound once per event by ``own``) and the
    candidate's other events through ``bindings`` (lines over ``_r_v``, its events list).
    ``gate`` is the part of the condition that reads the arriving event only (its conjuncts
    over ``d{sid}`` alone, without function calls): it is tested once per event, before
    any candidate; ``whole`` says it is the whole condition, so every candidate passes.
    """

    sid: int
    code: str
    own: tuple[str, ...]
    bindings: tuple[str, ...]
    gate: str | None = None
    whole: bool = False
    reads_state: bool = True   # the code reads ``e`` (the candidate) itself, not only bindings

    def candidates(self, source: str) -> list[str]:
        """Lines setting ``_r_hits`` to the partial matches of ``source`` that pass (or None).

        ``own`` must be bound and ``gate`` true.  A passing partial match keeps the event
        (``events[sid]``), as Siddhi's does when its post processor runs; a failing one is
        left as it was.  The arriving event is ``_r_ev``.
        """
        sid = self.sid
        if self.whole:
            return [f"_r_hits = list({source})",
                    "for e in _r_hits:",
                    f"    e.events[{sid}] = _r_ev"]
        if not self.reads_state:
            # The condition reads the candidate through its bindings only: set the event on
            # the ones that pass.
            return ["_r_hits = None",
                    f"for e in {source}:",
                    *(["    _r_v = e.events"] if self.bindings else []),
                    *("    " + b for b in self.bindings),
                    f"    if {self.code}:",
                    f"        e.events[{sid}] = _r_ev",
                    "        if _r_hits is None:",
                    "            _r_hits = [e]",
                    "        else:",
                    "            _r_hits.append(e)"]
        return ["_r_hits = None",
                f"for e in {source}:",
                "    _r_v = e.events",
                f"    _r_v[{sid}] = _r_ev",
                *("    " + b for b in self.bindings),
                f"    if {self.code}:",
                "        if _r_hits is None:",
                "            _r_hits = [e]",
                "        else:",
                "            _r_hits.append(e)",
                "    else:",
                f"        _r_v[{sid}] = None"]

    def loop(self, source: str) -> list[str]:
        """:meth:`candidates` with ``own`` and ``gate`` (``_r_hits`` None when the gate fails)."""
        lines = self.candidates(source)
        if self.gate is not None:
            lines = ["_r_hits = None", f"if {self.gate} and {source}:", *("    " + x for x in lines)]
        return [*self.own, *lines]


#: Names a condition may use and still be a function of the arriving event alone.
_PURE_NAMES = frozenset({"None", "True", "False", "and", "or", "not", "is", "in", "if", "else",
                         *BASE_NAMESPACE})


_STRING_LITERAL = re.compile(r"'(?:[^'\\]|\\.)*'" r'|"(?:[^"\\]|\\.)*"')
_NAME = re.compile(r"(?<!\w)[A-Za-z_]\w*")


@functools.lru_cache(maxsize=1024)   # partitions plan the same conditions for every key
def _names(code: str) -> frozenset[str]:
    """The names (and attribute names) ``code`` uses, outside its string literals."""
    return frozenset(_NAME.findall(_STRING_LITERAL.sub("''", code)))


def _reads_only(code: str, name: str) -> bool:
    """Whether ``code`` reads nothing but the local ``name`` (no candidate, no function)."""
    return all(n in _PURE_NAMES or n == name or re.fullmatch(r"_t\d+", n) for n in _names(code))


def _test(scope: PatternScope, sid: int, code: str, gates: Sequence[str] = ()) -> _Test:
    """The :class:`_Test` of state ``sid``'s condition ``code`` (``gates``: its conjuncts)."""
    own = (f"d{sid} = _r_d",) if re.search(rf"\bd{sid}\b", code) else ()
    bindings = []
    for s, line in zip(scope.states, scope.prologue, strict=True):
        name = f"c{s.state_id}" if s.is_count else f"d{s.state_id}"
        if s.state_id != sid and re.search(rf"\b{name}\b", code):
            bindings.append(line.replace("e.events[", "_r_v["))
    if _reads_only(code, f"d{sid}"):
        return _Test(sid, code, own, tuple(bindings), code, True)
    gates = [g for g in gates if _reads_only(g, f"d{sid}")]
    if gates and not own:
        own = (f"d{sid} = _r_d",)
    return _Test(sid, code, own, tuple(bindings), " and ".join(gates) if gates else None,
                 reads_state="e" in _names(code))


def _gen_scan(gen: CodeGen, test: _Test) -> Callable[[Any, Event], list[StateEvent] | None]:
    """``scan(candidates, ev)``: the passing partial matches (or None), in one loop."""
    return gen.function("_state_scan", "_r_cands, _r_ev",
                        ["_r_d = _r_ev.data", *test.loop("_r_cands"), "return _r_hits"])


@dataclass(frozen=True)
class _StateKey:
    """The equality index of one state's pending partial matches.

    ``of_state(se)`` is the key a pending partial match is filed under (the values of the
    earlier events its condition compares with for equality); ``arriving`` is the source of
    the arriving event's key over its data ``_r_d``; ``probe(index, ev)`` tests the partial
    matches filed under that key as ``scan`` would (``_UNHASHABLE`` for an unhashable key).
    """

    parts: tuple[tuple[int, int, int], ...]   # (own attribute, earlier state, its attribute)
    held: str       # the source of ``of_state`` over the events list ``_r_v``
    arriving: str
    of_state: Callable[[StateEvent], Any]
    probe: Callable[[dict[Any, list[StateEvent]], Event], Any]
    # For the generated receiver: when ``safe`` holds (no part of the arriving key is null or
    # NaN), the partial matches filed under the key are exactly those whose equalities hold,
    # so they only need ``found``, the condition without those equalities.  When it does not
    # hold, no partial match can pass (a null or NaN equals nothing).
    safe: str = "True"
    found: _Test | None = None


def _gen_key(gen: CodeGen, scope: PatternScope, parts: tuple[tuple[int, int, int], ...],
             test: _Test, found: _Test) -> _StateKey:
    """The key functions of a state's equality index (a tuple key for several equalities)."""
    held, arriving = [], []
    for own, j, i in parts:
        null = gen.ref(Event(-1, (None,) * len(scope.states[j].attributes)), "nul")
        held.append(f"(_r_v[{j}] or {null}).data[{i}]")
        arriving.append(f"_r_d[{own}]")
    if len(parts) == 1:
        held_key, ev_key = held[0], arriving[0]
    else:
        held_key, ev_key = f"({', '.join(held)})", f"({', '.join(arriving)})"
    of_state = gen.function("_state_key", "e", ["_r_v = e.events", f"return {held_key}"])
    probe = gen.function("_state_probe", "_r_index, _r_ev", [
        "_r_d = _r_ev.data",
        "try:",
        f"    _r_cands = _r_index.get({ev_key})",
        "except TypeError:",
        f"    return {gen.ref(_UNHASHABLE, 'unhashable')}",
        "if _r_cands is None:",
        "    return None",
        *test.loop("_r_cands"),
        "return _r_hits",
    ])
    own = scope.states[test.sid].attributes
    safe = []
    for i, _j, _i in parts:
        safe.append(f"_r_d[{i}] is not None")
        if own[i].type is not AttrType.STRING and own[i].type is not AttrType.BOOL:
            safe.append(f"_r_d[{i}] == _r_d[{i}]")   # NaN
    return _StateKey(parts, held_key, ev_key, of_state, probe, " and ".join(safe), found)


def _plain_states(el: Any, ids: dict[int, int], plain: bool = True, out: set[int] | None = None) -> set[int]:
    """Ids of the states run by a plain :class:`_StreamPre` (not counting, logical or absent).

    Only these can be indexed, and only their events can be part of a key: once a partial
    match has passed such a state, the state's event never changes again (a counting chain
    grows while the match waits further on, a logical side can be filled later).
    """
    if out is None:
        out = set()
    if isinstance(el, StreamStateElement):
        if plain:
            out.add(ids[id(el)])
    elif isinstance(el, NextStateElement):
        _plain_states(el.first, ids, plain, out)
        _plain_states(el.next, ids, plain, out)
    elif isinstance(el, (EveryStateElement, GroupStateElement)):
        _plain_states(el.element, ids, plain, out)
    elif isinstance(el, LogicalStateElement):
        _plain_states(el.left, ids, False, out)
        _plain_states(el.right, ids, False, out)
    elif isinstance(el, CountStateElement):
        _plain_states(el.element, ids, False, out)
    return out


def _conjuncts(expr: Expression) -> list[Expression]:
    if isinstance(expr, And):
        return _conjuncts(expr.left) + _conjuncts(expr.right)
    return [expr]


def _equality_parts(expr: Expression, scope: PatternScope, sid: int,
                    plain: set[int]) -> tuple[tuple[tuple[int, int, int], ...], list[int]]:
    """The conjuncts ``own.attr == ref.attr`` (either order) of state ``sid``'s condition.

    ``own`` is the arriving event of this state, ``ref`` an earlier plain state (lower id): a
    partial match waiting here already holds that event, so it can be filed under its value.
    Any other conjunct (or an ``or`` above the equality) is left to the condition.  Returns
    the parts (a key of several for several equalities) and the positions of the conjuncts
    they cover.
    """
    parts: list[tuple[int, int, int]] = []
    covered: list[int] = []
    for n, c in enumerate(_conjuncts(expr)):
        if not (isinstance(c, Compare) and c.op is CompareOperator.EQ
                and isinstance(c.left, Variable) and isinstance(c.right, Variable)):
            continue
        a, b = _locate(c.left, scope), _locate(c.right, scope)
        if a is None or b is None:
            continue
        if b[0] == sid:
            a, b = b, a
        if a[0] == sid and b[0] < sid and b[0] in plain \
                and a[2] in _HASHABLE_TYPES and b[2] in _HASHABLE_TYPES:
            part = (a[1], b[0], b[1])
            if part not in parts:
                parts.append(part)
            covered.append(n)
    return tuple(parts), covered


def _locate(var: Variable, scope: PatternScope) -> tuple[int, int, AttrType] | None:
    """``(state id, attribute index, type)`` of a variable that reads a plain state's event."""
    if var.stream_id is None:
        assert scope.current is not None
        s = scope.states[scope.current]
    else:
        s = scope._state_named(var.stream_id, var)
    if s.is_count or scope._position(s, var.stream_index, var.stream_id) not in (0, _CURRENT):
        return None   # a chain, or e1[1].x of a plain state (null)
    for i, a in enumerate(s.attributes):
        if a.name == var.attribute:
            return s.state_id, i, a.type
    return None


def _collect_states(el: Any, out: list[Any], counted: bool = False) -> None:
    """Stream states in Siddhi's numbering order (the right side of a logical state first)."""
    if isinstance(el, (StreamStateElement, AbsentStreamStateElement)):
        out.append((el, counted))
    elif isinstance(el, NextStateElement):
        _collect_states(el.first, out)
        _collect_states(el.next, out)
    elif isinstance(el, (EveryStateElement, GroupStateElement)):
        _collect_states(el.element, out, counted)
    elif isinstance(el, LogicalStateElement):
        left, right = _sides(el)
        _collect_states(right, out)
        _collect_states(left, out)
    elif isinstance(el, CountStateElement):
        _collect_states(el.element, out, True)
    else:
        raise error_at(f"unsupported pattern element {type(el).__name__}", el)


def _max_pending(inp: StateInputStream, ctx: Any) -> int:
    """The bound on pending partial matches per state (0: unbounded)."""
    limit = getattr(ctx, "pattern_max_pending", 0) or 0
    app = getattr(ctx, "app", None)
    if app is not None:
        a = find_annotation(app.annotations, "app:pattern")
        if a is not None and a.get("max.pending"):
            limit = _int_setting(a.get("max.pending"), a)
        for q in getattr(app, "execution_elements", ()):
            for query in (q,) if isinstance(q, Query) else getattr(q, "queries", ()):
                if query.input is inp:
                    qa = find_annotation(query.annotations, "pattern")
                    if qa is not None and qa.get("max.pending"):
                        limit = _int_setting(qa.get("max.pending"), qa)
    return limit


def _int_setting(value: str, node: Any) -> int:
    try:
        n = int(value)
    except ValueError:
        raise error_at(f"max.pending must be an integer, not '{value}'", node) from None
    if n < 0:
        raise error_at("max.pending cannot be negative", node)
    return n


def plan_state_input(inp: StateInputStream, ctx: Any, sources: Any, gen: CodeGen,
                     element_prefix: str) -> Any:
    """Plan a pattern or sequence input; ``connect(emit)`` builds one state machine instance."""
    from srota.engine.query import InputPlan

    found: list[Any] = []
    _collect_states(inp.element, found)
    states: list[_StateInfo] = []
    ids: dict[int, int] = {}
    for n, (node, counted) in enumerate(found):
        stream = node.stream
        kind, obj = sources.lookup(stream.stream_id, stream.is_inner, stream.is_fault, stream)
        if kind != "stream":
            raise error_at(f"'{stream.stream_id}' is a {kind}: patterns and sequences read streams only",
                           stream)
        for h in stream.handlers:
            if not isinstance(h, Filter):
                raise error_at("only filters can be used on a stream inside a pattern or sequence", h)
        absent = isinstance(node, AbsentStreamStateElement)
        states.append(_StateInfo(n, None if absent else stream.reference_id, stream.stream_id,
                                 tuple(obj.attributes), counted, node, stream.is_inner,
                                 stream.is_fault, absent))
        ids[id(node)] = n
    sequence = inp.type is StateType.SEQUENCE
    plain = _plain_states(inp.element, ids)
    conds: dict[int, Callable[[StateEvent], bool] | None] = {}
    tests: dict[int, _Test] = {}
    keys: dict[int, _StateKey] = {}
    for s in states:
        sid = s.state_id
        scope = PatternScope(states, gen, current=sid, default_index=_CURRENT)
        filters = [h.expression for h in s.node.stream.handlers]
        if not filters:
            conds[sid] = None
            tests[sid] = _test(scope, sid, "True")
            continue
        expr = filters[0]
        for f in filters[1:]:
            expr = And(expr, f, pos=getattr(f, "pos", None))
        compiler = ExpressionCompiler(ctx, scope, gen)
        code = compiler.compile_condition(expr, "pattern condition")
        conds[sid] = gen.function("_state_cond", "e", list(scope.prologue) + [f"return {code}"])
        if s.is_count:
            continue   # counting states keep their own loop (chains, min and max)
        conjuncts = _conjuncts(expr)
        gates = ([compiler.compile_condition(c, "pattern condition") for c in conjuncts]
                 if len(conjuncts) > 1 else [code])
        tests[sid] = test = _test(scope, sid, code, gates if len(gates) > 1 else [])
        # Sequences drop every partial match an event does not extend, so an index would not
        # spare them the scan: only patterns index.
        if not sequence and sid in plain:
            parts, covered = _equality_parts(expr, scope, sid, plain)
            if parts:
                rest = [g for n, g in enumerate(gates) if n not in covered]
                found = _test(scope, sid, " and ".join(f"({g})" for g in rest) or "True", rest)
                keys[sid] = _gen_key(gen, scope, parts, test, found)
    plan = _Plan(inp.element, sequence, states, ids, conds, inp.within_millis,
                 _max_pending(inp, ctx), tests, {sid: _gen_scan(gen, t) for sid, t in tests.items()},
                 keys, gen)
    scope = PatternScope(states, gen, current=None, default_index=0)
    elements: dict[str, Any] = {}

    def connect(emit: Emit) -> None:
        rt = PatternRuntime(plan, ctx, emit)
        plan.instances.append(rt)
        eid = f"{element_prefix}/pattern"
        elements[eid] = rt
        ctx.register_element(eid, rt)
        for key in rt.receivers:
            sources.subscribe(key[0], key[1], key[2], rt.receiver(key))
        if rt.startup:
            # A leading absent state starts waiting when the app (or partition key) starts;
            # a partition runs the hooks its instances add once it has started.
            ctx.start_hooks.append(rt.start)

    return InputPlan(scope, connect, scope.columns, elements)
