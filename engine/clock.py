"""Time as a dependency (DESIGN.md decision 4).

Processors read time from the app's :class:`Clock` and ask its :class:`Scheduler` for timer
callbacks.  Two clocks exist:

* :class:`WallClock`: live mode.  The scheduler runs a daemon thread that fires due timers
  under the app's lock, so timer ticks never interleave with a chunk (decision 5).
* :class:`PlaybackClock`: ``@app:playback``.  Time is the newest event timestamp seen; timers
  fire synchronously, in time order, when an arriving event moves time past them.  Optional
  ``idle.time``/``increment`` advance time while no events arrive.

Time never replays the past (DESIGN.md decision 11).  A clock starts at the first time it
sees: a playback clock has no time until its first event, so whatever an app arms "at start"
(periodic triggers, purges, aggregation timers, cron) is armed through :meth:`Clock.on_start`
and counts from the first event's timestamp, not from 1970.  A periodic timer that fell
behind (a gap in event time, a suspended process) fires once and moves on to its next due
time (:func:`next_period`), so a jump of a year costs one tick, not thirty million.

Tests can drive a :class:`PlaybackClock` directly with :meth:`PlaybackClock.advance`.
"""
from __future__ import annotations

import bisect
import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

_log = logging.getLogger(__name__)

TimerCallback = Callable[[int], None]


class Clock:
    """The app's notion of now, in epoch milliseconds."""

    playback = False
    #: Whether the clock has a time (a playback clock has none before its first event).
    started = True

    def now(self) -> int:
        raise NotImplementedError

    def advance(self, timestamp: int) -> None:
        """An event of time ``timestamp`` arrived: playback clocks move to it; real time ignores it."""

    def on_start(self, callback: TimerCallback) -> None:
        """Call ``callback(start)`` once the clock has a time (at once for a wall clock).

        Timers that count from the app's start arm themselves here, so that under playback
        they count from the first event's timestamp.
        """
        callback(self.now())


class WallClock(Clock):
    """Real time."""

    def now(self) -> int:
        return time.time_ns() // 1_000_000


class PlaybackClock(Clock):
    """Time that follows event timestamps (never goes backwards).

    As in Siddhi's playback mode, :meth:`advance` first moves time to the new timestamp and
    then fires every timer due by then, in time order: a timer callback receives the time it
    was scheduled for, while ``now()`` already answers the new time (so a time window expires
    everything due in one go, as Siddhi's windows do).

    ``@app:playback(idle.time, increment)``: when ``idle_millis`` is set, once the first event
    has arrived a heartbeat thread (started with the scheduler) moves time forward by
    ``increment_millis`` whenever no event has advanced it for ``idle_millis`` of wall time.

    Without ``start`` the clock has no time until the first :meth:`advance` (``now()`` answers
    0 meanwhile); that first time is when it starts, and the :meth:`on_start` callbacks run
    then, before any timer fires.
    """

    playback = True

    def __init__(self, start: int | None = None) -> None:
        self._now = 0 if start is None else start
        self.started = start is not None
        self._on_start: list[TimerCallback] = []
        self.scheduler: Scheduler | None = None
        self.idle_millis: int | None = None
        self.increment_millis: int = 0
        self._last_wall = 0.0
        self._seen = False

    def now(self) -> int:
        return self._now

    def on_start(self, callback: TimerCallback) -> None:
        if self.started:
            callback(self._now)
        else:
            self._on_start.append(callback)

    def advance(self, timestamp: int) -> None:
        """Move time forward to ``timestamp`` (no-op if it is in the past), firing due timers.

        As Siddhi's timestamp generator, a timestamp equal to the current time notifies the
        schedulers too: a timer armed at or before now (by a rank that had had its turn, or by
        an event) fires at the next event, whether or not that event moves time.
        """
        if not self.started:
            self._begin(timestamp)
        if timestamp >= self._now:
            if self.idle_millis:  # (the wall time matters to the idle heartbeat only)
                self._last_wall = time.monotonic()
            self._seen = True
            self._now = timestamp
            if self.scheduler is not None:
                self.scheduler.fire_until(timestamp, self)

    def _begin(self, timestamp: int) -> None:
        """The first time seen: the clock starts here and the start callbacks arm their timers."""
        self.started = True
        self._now = timestamp
        callbacks, self._on_start = self._on_start, []
        for callback in callbacks:
            callback(timestamp)
        if self.scheduler is not None:  # a timer armed before the start (at 0) fires once now
            self.scheduler.fire_until(timestamp, self)

    def _set(self, timestamp: int) -> None:
        """Restore the time of a snapshot (it starts a clock that had no time yet)."""
        if not self.started:
            self._begin(timestamp)
        self._now = max(self._now, timestamp)

    def idle_due(self) -> float | None:
        """Seconds until the next idle advance is due (0 when due; None when idle is off)."""
        if not self.idle_millis or not self._seen:
            return None
        return max(0.0, self._last_wall + self.idle_millis / 1000.0 - time.monotonic())


def next_period(at: int, period: int, now: int) -> int:
    """When a periodic timer that fired for ``at`` fires next: ``at + period`` or, if that is
    already past (the timer fell behind), the first time of its grid at or after ``now``.

    The missed periods are skipped, not replayed (DESIGN.md decision 11): a tick due exactly
    at ``now`` still fires, one further behind does not.
    """
    nxt = at + period
    if nxt < now:
        nxt += -(-(now - nxt) // period) * period
    return nxt


class Scheduler:
    """Timers for one app runtime.

    ``schedule(at, callback)`` arranges ``callback(at)`` once time reaches ``at``.  The returned
    handle can be passed to :meth:`cancel`.  Callbacks run under ``lock``.

    Every timer belongs to a *rank*: Siddhi gives each processor that needs timers (a window,
    an absent pattern state, a time-based rate limiter, an aggregation) its own ``Scheduler``,
    registered with the app's timestamp generator when the processor is created.  Under
    playback, when time moves, each of those schedulers in turn (in the order they were
    created) fires everything of its own that is due, before the next one looks at its own
    timers: a window created first fires its timer due at 7329 before a window created after
    it fires one due at 7180.  A rank stands for one such scheduler; :meth:`rank_of` hands them
    out in planning order (aggregations, named windows in the order of a HashMap of their ids, as
    Siddhi makes them, then the queries in app order, each query's windows before its rate
    limiter).  A callback's rank is ``rank`` if given, else the
    ``timer_rank`` of the object whose bound method it is, else :attr:`default_rank` (-1, before
    every query, unless a planner set it while it builds one).  Within one rank timers fire in
    time order.  (Siddhi's scheduler fires one partition key's due times, all of them, before
    the next key's, keys ordered by their first due time: the same answers here, as a window
    expires all that is due by now at its first timer and an absent state's own queue fires
    all its due times at once.  Of several keys due at the same millisecond Siddhi fires only
    one, a defect Srota does not copy: docs/siddhi-differences.md.)  Live, the timer thread fires them in time order (Siddhi's are separate
    executor tasks whose order is the threads').
    """

    def __init__(self, clock: Clock, lock: AbstractContextManager[Any]) -> None:
        self.clock = clock
        self.lock = lock
        # One heap of (at, handle, callback) per rank; the ranks with a heap, sorted.
        self._heaps: dict[int, list[tuple[int, int, TimerCallback]]] = {}
        self._ranks: list[int] = []
        # No timer is due before this (a lower bound: the fast path of ``fire_until``).
        self._earliest: float = float("inf")
        self._cancelled: set[int] = set()
        self._seq = itertools.count()
        #: The handles of timers scheduled inside :meth:`held_back`, None outside it.
        self._held: list[int] | None = None
        self._rank_keys: dict[tuple[int, str], tuple[int, object]] = {}
        #: The rank of a timer whose owner has none (see the class docstring).
        self.default_rank = -1
        self._cond = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._running = False
        self.on_error: Callable[[BaseException], None] | None = None
        if isinstance(clock, PlaybackClock):
            clock.scheduler = self

    def rank_of(self, node: object, part: str = "") -> int:
        """The rank of the timer owner planned from ``node`` (a model node; ``part`` names
        one of several owners planned from it).

        The first request makes a new rank after all existing ones, so ranks follow the order
        in which the planner asks.  Nodes count by identity (two queries with equal windows
        have two ranks), so every instance planned from the same node (each partition key's
        copy of a query) shares its rank, as Siddhi's partition keys share their query's
        Scheduler.
        """
        key = (id(node), part)
        entry = self._rank_keys.get(key)
        if entry is None:
            # (the node is kept so that its id is not reused while the app runs)
            entry = self._rank_keys[key] = (len(self._rank_keys), node)
        return entry[0]

    def schedule(self, at: int, callback: TimerCallback, rank: int | None = None) -> int:
        """Run ``callback(at)`` when time reaches ``at``; returns a handle for :meth:`cancel`."""
        if rank is None:
            rank = getattr(getattr(callback, "__self__", None), "timer_rank", None)
            if rank is None:
                rank = self.default_rank
        handle = next(self._seq)
        with self._cond:
            heap = self._heaps.get(rank)
            if heap is None:
                heap = self._heaps[rank] = []
                bisect.insort(self._ranks, rank)
            heapq.heappush(heap, (at, handle, callback))
            if at < self._earliest:
                self._earliest = at
            self._cond.notify()
        if self._held is not None:
            self._held.append(handle)
        return handle

    @contextmanager
    def held_back(self) -> Iterator[None]:
        """Cancel, on leaving, every timer scheduled inside, and drop the clock's start
        callbacks registered inside: for elements built only to be checked and thrown away
        (a partition's queries, planned once before any key exists), whose timers would
        otherwise fire and output into the app's streams."""
        outer, self._held = self._held, []
        clock = self.clock
        starts = clock._on_start if isinstance(clock, PlaybackClock) else None
        n_starts = len(starts) if starts is not None else 0
        try:
            yield
        finally:
            held, self._held = self._held, outer
            for handle in held:
                self.cancel(handle)
            if starts is not None:
                del starts[n_starts:]

    def cancel(self, handle: int) -> None:
        with self._cond:
            self._cancelled.add(handle)

    def forget(self, owners: Iterable[object]) -> None:
        """Cancel every pending timer whose callback is a method of one of ``owners``: the
        elements of a partition key that is purged, whose state is gone (Siddhi cleans the
        key's state of every element, its schedulers' queues included), so its timers must not
        fire and output."""
        ids = {id(owner) for owner in owners if owner is not None}
        with self._cond:
            for heap in self._heaps.values():
                for _at, handle, callback in heap:
                    if id(getattr(callback, "__self__", None)) in ids:
                        self._cancelled.add(handle)

    # ---------------------------------------------------------------- playback
    def fire_until(self, timestamp: int, clock: PlaybackClock) -> None:
        """Fire every timer due at or before ``timestamp`` (playback mode), rank by rank.

        As Siddhi's schedulers answer a time change one after the other, each rank fires all
        its due timers (time order) before the next rank starts, and a timer armed meanwhile
        fires in this pass if its rank has not had its turn yet or is the one firing; one armed
        in a rank already done waits for the next time change.
        """
        if timestamp < self._earliest:  # the common case, without taking the lock
            return
        heaps = self._heaps
        i = 0
        while True:
            with self._cond:
                if i >= len(self._ranks):
                    self._earliest = min((h[0][0] for h in heaps.values() if h), default=float("inf"))
                    return
                heap = heaps[self._ranks[i]]
                if not heap or heap[0][0] > timestamp:
                    i += 1
                    continue
                at, handle, callback = heapq.heappop(heap)
                if handle in self._cancelled:
                    self._cancelled.discard(handle)
                    continue
            self._run(callback, at)

    def _head(self) -> list[tuple[int, int, TimerCallback]] | None:
        """The heap whose head is the earliest timer (ties: the lower rank), for the live thread."""
        best: list[tuple[int, int, TimerCallback]] | None = None
        for rank in self._ranks:
            heap = self._heaps[rank]
            if heap and (best is None or heap[0][0] < best[0][0]):
                best = heap
        return best

    # ---------------------------------------------------------------- live mode
    def start(self) -> None:
        """Start the timer thread (live mode) or the idle heartbeat (playback with idle.time)."""
        if self._running:
            return
        if isinstance(self.clock, PlaybackClock):
            if not self.clock.idle_millis:
                return
            self._running = True
            self._thread = threading.Thread(target=self._idle_loop, name="srota-playback-idle", daemon=True)
            self._thread.start()
            return
        self._running = True
        self._thread = threading.Thread(target=self._loop, name="srota-scheduler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._running = False
        with self._cond:
            self._cond.notify()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        self._thread = None

    def _idle_loop(self) -> None:
        """Playback heartbeat: advance event time by the increment after idle wall time."""
        clock = self.clock
        assert isinstance(clock, PlaybackClock)
        while self._running:
            due = clock.idle_due()
            if due is None or due > 0:
                with self._cond:
                    self._cond.wait(min(due if due is not None else 0.05, 0.05))
                continue
            with self.lock:
                if self._running and clock.idle_due() == 0:
                    clock.advance(clock.now() + clock.increment_millis)

    def _loop(self) -> None:
        while self._running:
            with self._cond:
                heap = self._head()
                if heap is None:
                    self._cond.wait(0.5)
                    continue
                at, handle, callback = heap[0]
                delay = (at - self.clock.now()) / 1000.0
                if delay > 0:
                    self._cond.wait(min(delay, 0.5))
                    continue
                heapq.heappop(heap)
                if handle in self._cancelled:
                    self._cancelled.discard(handle)
                    continue
            if self._running:
                with self.lock:
                    self._run(callback, at)

    def _run(self, callback: TimerCallback, at: int) -> None:
        try:
            callback(at)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # a failing timer must not kill the scheduler
            # (BaseException: a store's StoreReplacedError, which the chunk path's handlers
            # must not swallow, would otherwise end the timer thread for good.)
            if self.on_error is not None:
                self.on_error(exc)
            else:
                _log.exception("timer callback failed")

    def pending(self) -> int:
        """How many timers wait (for metrics and tests)."""
        with self._cond:
            return sum(len(h) for h in self._heaps.values()) - len(self._cancelled)
