"""Absent states: ``not S for t`` and ``not S and e2=...``.

:class:`_AbsentStreamPre` and :class:`_AbsentLogicalPre` (with their posts) wait on the app
scheduler: timers when live, event time in playback.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from srota.engine.event import CURRENT, Event, StateEvent
from srota.engine.pattern.states import (
    _copy,
    _has_pending,
    _LogicalPost,
    _LogicalPre,
    _StreamPost,
    _StreamPre,
)

if TYPE_CHECKING:
    from srota.engine.pattern.runtime import PatternRuntime


class _Timed:
    """Scheduling for absent states: Siddhi's Scheduler, one per absent state processor.

    The times asked for wait in a FIFO queue (Siddhi's LinkedBlockingQueue), not in time
    order: when time moves, the queue fires from its head while the head is due
    (``sendTimerEvents``), so a time asked for later but earlier than the head waits behind
    it, and each timer event carries its own time.  The app scheduler only wakes the queue
    when its head is due (one wake-up at a time).

    Siddhi also queues a time already queued; a second timer event at one time finds nothing
    left to do, except where each one re-arms: there Siddhi's queue grows with every period
    ('every not S for t' after several partial matches) until it never catches up.  Srota
    queues a time once, but in a partition twice: there a key's state that holds nothing is
    dropped between the two (see _AbsentStreamPre._idle), and the second finds the time it
    asked for forgotten and asks again, as in Siddhi.  A third one Srota drops, as it drops a
    second one outside a partition: where each one re-arms, Siddhi's queue would grow without
    end here too.
    """

    rt: PatternRuntime

    def _notify_at(self, at: int) -> None:
        queue = self.__dict__.get("_queue")
        if queue is None:
            queue = self.__dict__["_queue"] = []
        elif at in queue and (not self.rt.plan.partitioned or queue.count(at) > 1):
            return
        queue.append(at)
        if len(queue) == 1 and not self.__dict__.get("_firing"):
            self.rt.ctx.scheduler.schedule(at, self._wake)

    def _wake(self, at: int) -> None:
        queue = self.__dict__.get("_queue")
        if not queue or self.__dict__.get("_firing"):
            return
        now = self.rt.ctx.clock.now()
        self.__dict__["_firing"] = True
        try:
            while queue and queue[0] <= now:
                self.process_timer(queue.pop(0))  # type: ignore[attr-defined]
        finally:
            self.__dict__["_firing"] = False
            if queue:
                self.rt.ctx.scheduler.schedule(queue[0], self._wake)

    def _from_start(self, callback: Any, from_zero: bool = True) -> None:
        """Run ``callback(now)`` when the app (or partition key) starts, as Siddhi's
        ``partitionCreated`` arms a leading absent state at ``currentTime() + t``.

        A playback clock that has seen no event yet reads 0 in Siddhi, so the wait runs from
        0 and its timer fires as the first event sets the time.  ``from_zero=False`` waits
        from the first event instead (where Siddhi's answer from 0 is a hang, see start).
        """
        clock = self.rt.ctx.clock
        if from_zero and getattr(clock, "playback", False) and not clock.started \
                and not _replays_from_zero(self):
            callback(0)
        else:
            clock.on_start(callback)

    def restore(self, state: dict[str, Any]) -> None:
        """Restore, then wake the restored queue when its head is due (timers are not state)."""
        super().restore(state)  # type: ignore[misc]
        self.__dict__["_firing"] = False
        queue = self.__dict__.get("_queue")
        if queue is None:
            # A snapshot without the queue: the times its partial matches wait for.
            times = set()
            waiting = getattr(self, "waiting", -1)
            last = getattr(self, "last_scheduled", 0)
            if last > 0:
                times.add(last)
            if waiting is not None and waiting >= 0:
                for se in (*self.pending, *self.new_every):  # type: ignore[attr-defined]
                    if se.timestamp != -1:
                        times.add(se.timestamp + waiting)
            queue = self.__dict__["_queue"] = sorted(times)
        if queue:
            self.rt.ctx.scheduler.schedule(queue[0], self._wake)


def _replays_from_zero(pre: Any) -> bool:
    """Whether a wait from 0 at ``pre`` would reach an ``every not S for t`` through timers.

    A state handed on by a timer carries the timer's time, and ``every not S for t`` re-arms
    at that time + t: from 0 Siddhi replays every period up to the first event (it hangs).
    There the wait starts from the first event instead.
    """
    seen: set[int] = set()
    nxt = pre.post.next_pre
    while nxt is not None and getattr(nxt, "absent", False) and id(nxt) not in seen:
        seen.add(id(nxt))
        if isinstance(nxt, _AbsentStreamPre) and nxt.post.next_every_pre is not None:
            return True
        nxt = nxt.post.next_pre
    return False


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

    def _idle(self) -> None:
        """Forget the time last asked for where Siddhi's state of it would go.

        Inside a partition Siddhi keeps each key's state of a processor in a
        PartitionStateHolder, which drops the state whenever it is handed back holding nothing
        (``StreamPreState.canDestroy``: no partial match, and not a start state, which stays
        initialized); the next call makes a new one, whose ``lastScheduledTime`` is 0.  The
        key's timer queue is a state of its own and stays, so a timer then finds the time
        forgotten and asks again (``notProcessed && lastScheduledTime < currentTime``): a
        queue entry of no output of its own, which decides which key's timers fire first.
        Called where Siddhi hands the state back.
        """
        if not self.pending and not self.new_every and self.rt.plan.partitioned and not self.is_start:
            self.last_scheduled = 0

    def update_state(self) -> None:
        super().update_state()
        self._idle()

    def expire_events(self, now: int) -> None:
        super().expire_events(now)
        self._idle()

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
        self._idle()

    def process_timer(self, now: int) -> None:
        if not self.active:
            return
        try:
            self._process_timer(now)
        finally:
            self._idle()

    def _process_timer(self, now: int) -> None:
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
        try:
            self._process_each(ev)
        finally:
            self._idle()
        return []

    def _remove_on_no_change(self) -> bool:
        return False

    def start(self) -> None:
        """Siddhi's partitionCreated: a leading ``not S for t`` starts waiting at once."""
        if not self.started:
            self.started = True
            if self.is_start and self.waiting != -1 and self.active:
                # From the app's start (0 under playback, see _from_start).  A leading 'every
                # not S for t' waits from the first event instead: Siddhi re-arms it at each
                # timer's time + t and replays every period from 0 to the first event (hangs).
                self._from_start(self._wait_from, from_zero=self.post.next_every_pre is None or self.sequence)

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
        links = self.rt.links
        for se in tuple(self.pending):
            if not self.is_and and se.events[psid] is not None:
                removed.add(id(se))
                continue
            current = se.events[sid]
            se.events[sid] = ev
            if links and id(se) in links:
                self._run_linked(se, links)
            else:
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

    def _run_linked(self, se: StateEvent, links: dict[int, StateEvent]) -> None:
        """:meth:`_run` for a complete match that waits to go out linked to others.

        Without ``for`` this side keeps a match after its partner moved it on, and it is the
        StateEvent the last state returned, linked in the chunk Siddhi sends after the input
        chunk (runtime._cut_groups).  Siddhi's filter reads its chunk from ``se`` along those
        links and removes (unlinks) each match that fails, so that chunk ends at ``se``.  The
        post processor takes the first match left: a later one where ``se`` failed and it
        passed, with the event of this side it met before (none: Siddhi's NullPointerException,
        and Srota's error, drop the input event).
        """
        self.state_changed = False
        cond = self.cond
        kept: list[StateEvent] = []
        x: StateEvent | None = se
        while x is not None:
            nxt = links.pop(id(x), None)
            if cond is None or cond(x):
                kept.append(x)
            x = nxt
        for a, b in zip(kept, kept[1:], strict=False):
            links[id(a)] = b
        if kept:
            self.post.process(kept[0])

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
                # from the app's start (0 under playback, see _from_start)
                self._from_start(lambda now: self._notify_at(now + self.waiting))
