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

Pending partial matches are bounded: ``within`` expires them as events arrive, and a maximum per
state (``@pattern(max.pending='N')`` on the query, ``@app:pattern(max.pending='N')`` on the app,
or ``ctx.pattern_max_pending``) drops the oldest ones, counted in :attr:`PatternRuntime.dropped`.
:attr:`PatternRuntime.pending` gives the number of partial matches held, for metrics.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from grammar.model import (
    AbsentStreamStateElement,
    And,
    AttrType,
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

from .codegen import CodeGen
from .event import CURRENT, EXPIRED, Event, StateEvent
from .expression import ExpressionCompiler, error_at
from .scope import Column

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
        clone = _copy(se)
        clone.type = CURRENT
        events = clone.events
        for i in range(self.state_id, len(events)):
            events[i] = None
        self.new_every.append(clone)

    def reset_state(self) -> None:
        self.pending.clear()
        if self.is_start and not self.new_every:
            if self.sequence and self.post.next_every_pre is None and _has_pending(self.post.next_pre):
                return
            self.init()

    def update_state(self) -> None:
        if self.new_every:
            self.new_every.sort(key=_sort_key)
            self.pending.extend(self.new_every)
            self.new_every.clear()
            if self.limit and len(self.pending) > self.limit:
                self.rt.drop(self.pending, len(self.pending) - self.limit)

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
    def process_and_return(self, ev: Event) -> list[StateEvent]:
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


_STATE_FIELDS = frozenset({"pending", "new_every", "state_changed", "initialized", "success",
                           "start_reset", "active", "last_scheduled", "last_arrival"})


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
        super().process_and_return(ev)
        return []

    def _remove_on_no_change(self) -> bool:
        return False

    def start(self) -> None:
        """Siddhi's partitionCreated: a leading ``not S for t`` starts waiting at once."""
        if not self.started:
            self.started = True
            if self.is_start and self.waiting != -1 and self.active:
                self.last_scheduled = self.rt.ctx.clock.now() + self.waiting
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
                self._notify_at(self.rt.ctx.clock.now() + self.waiting)


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
    instances: list[PatternRuntime] = field(default_factory=list)


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
    from .query import InputPlan

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
    refs = [s.ref for s in states if s.ref]
    conds: dict[int, Callable[[StateEvent], bool] | None] = {}
    for s in states:
        filters = [h.expression for h in s.node.stream.handlers]
        if not filters:
            conds[s.state_id] = None
            continue
        expr = filters[0]
        for f in filters[1:]:
            expr = And(expr, f, pos=getattr(f, "pos", None))
        scope = PatternScope(states, gen, current=s.state_id, default_index=_CURRENT)
        code = ExpressionCompiler(ctx, scope, gen).compile_condition(expr, "pattern condition")
        conds[s.state_id] = gen.function("_state_cond", "e", list(scope.prologue) + [f"return {code}"])
    del refs
    plan = _Plan(inp.element, inp.type is StateType.SEQUENCE, states, ids, conds, inp.within_millis,
                 _max_pending(inp, ctx))
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
