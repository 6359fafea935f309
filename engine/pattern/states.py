"""The pre and post state processors of stream, counting and logical states (Siddhi's).

* :class:`_StreamPre` / :class:`_StreamPost`: ``e1=S[cond]``;
* :class:`_CountPre` / :class:`_CountPost`: ``<n:m>``, ``*``, ``+``, ``?``;
* :class:`_LogicalPre` / :class:`_LogicalPost`: ``and`` / ``or`` (both sides share one state
  event, so the side that did not arrive reads as null).

The processor kinds follow Siddhi one to one, because the corner cases of ``every``, counting
and logical states are defined by how those processors hand state events to each other.  Their
methods are the reference behaviour that the generated fast paths inline.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from srota.engine.event import CURRENT, EXPIRED, Event, StateEvent
from srota.engine.pattern.fastpaths import _UNHASHABLE

if TYPE_CHECKING:
    from srota.engine.pattern.fastpaths import _StateKey
    from srota.engine.pattern.runtime import PatternRuntime


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
        # Each bucket's bound where the key has one (see _Bound): made with the bucket,
        # raised by each partial match filed in it, gone with it; None: unknown.
        self.bounds: dict[Any, Any] = {}
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
            self.bounds.clear()
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
        self.bounds = {}
        self._index_all(self.pending)

    def _index_all(self, items: list[StateEvent]) -> None:
        index = self.index
        assert index is not None and self.key is not None
        of_state = self.key.of_state
        bounded = self.key.bound is not None
        try:
            for se in items:
                k = of_state(se)
                bucket = index.get(k)
                if bucket is None:
                    index[k] = [se]
                else:
                    bucket.append(se)
                if bounded:
                    self.file_bound(k, se, bucket is None)
        except TypeError:
            self.index = None   # an unhashable value: scan the list from now on

    def file_bound(self, k: Any, se: StateEvent, made: bool) -> None:
        """Bucket ``k``'s bound (see _Bound) once ``se`` is filed in it: ``se``'s own where it
        made the bucket, else raised to it (a bucket without a bound stays without)."""
        of_state = self.key.bound.of_state  # type: ignore[union-attr]
        if made:
            self.bounds[k] = of_state(se)
        elif (b := self.bounds.get(k)) is not None:
            t = of_state(se)
            self.bounds[k] = None if t is None else t if t > b else b

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
                self.bounds.pop(k, None)

    def _rebuild_index(self, gone: StateEvent) -> None:
        assert self.key is not None
        self.index = {}
        self.bounds = {}
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
                           "start_reset", "active", "last_scheduled", "last_arrival", "_queue"})


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
