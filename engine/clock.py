"""Time as a dependency (DESIGN.md decision 4).

Processors read time from the app's :class:`Clock` and ask its :class:`Scheduler` for timer
callbacks.  Two clocks exist:

* :class:`WallClock`: live mode.  The scheduler runs a daemon thread that fires due timers
  under the app's lock, so timer ticks never interleave with a chunk (decision 5).
* :class:`PlaybackClock`: ``@app:playback``.  Time is the newest event timestamp seen; timers
  fire synchronously, in time order, when an arriving event moves time past them.  Optional
  ``idle.time``/``increment`` advance time while no events arrive.

Tests can drive a :class:`PlaybackClock` directly with :meth:`PlaybackClock.advance`.
"""
from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

_log = logging.getLogger(__name__)

TimerCallback = Callable[[int], None]


class Clock:
    """The app's notion of now, in epoch milliseconds."""

    playback = False

    def now(self) -> int:
        raise NotImplementedError


class WallClock(Clock):
    """Real time."""

    def now(self) -> int:
        return time.time_ns() // 1_000_000


class PlaybackClock(Clock):
    """Time that follows event timestamps (never goes backwards)."""

    playback = True

    def __init__(self, start: int = 0) -> None:
        self._now = start
        self.scheduler: Scheduler | None = None

    def now(self) -> int:
        return self._now

    def advance(self, timestamp: int) -> None:
        """Move time forward to ``timestamp`` (no-op if it is in the past), firing due timers."""
        if timestamp > self._now:
            if self.scheduler is not None:
                self.scheduler.fire_until(timestamp, self)
            self._now = max(self._now, timestamp)

    def _set(self, timestamp: int) -> None:
        self._now = max(self._now, timestamp)


class Scheduler:
    """Timers for one app runtime.

    ``schedule(at, callback)`` arranges ``callback(at)`` once time reaches ``at``.  The returned
    handle can be passed to :meth:`cancel`.  Callbacks run under ``lock``.
    """

    def __init__(self, clock: Clock, lock: threading.RLock) -> None:
        self.clock = clock
        self.lock = lock
        self._heap: list[tuple[int, int, TimerCallback]] = []
        self._cancelled: set[int] = set()
        self._seq = itertools.count()
        self._cond = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._running = False
        self.on_error: Callable[[BaseException], None] | None = None
        if isinstance(clock, PlaybackClock):
            clock.scheduler = self

    def schedule(self, at: int, callback: TimerCallback) -> int:
        """Run ``callback(at)`` when time reaches ``at``; returns a handle for :meth:`cancel`."""
        handle = next(self._seq)
        with self._cond:
            heapq.heappush(self._heap, (at, handle, callback))
            self._cond.notify()
        return handle

    def cancel(self, handle: int) -> None:
        with self._cond:
            self._cancelled.add(handle)

    # ---------------------------------------------------------------- playback
    def fire_until(self, timestamp: int, clock: PlaybackClock) -> None:
        """Fire, in order, every timer due at or before ``timestamp`` (playback mode)."""
        while True:
            with self._cond:
                if not self._heap or self._heap[0][0] > timestamp:
                    return
                at, handle, callback = heapq.heappop(self._heap)
                if handle in self._cancelled:
                    self._cancelled.discard(handle)
                    continue
            clock._set(at)
            self._run(callback, at)

    # ---------------------------------------------------------------- live mode
    def start(self) -> None:
        """Start the timer thread (live mode only; playback fires timers on event arrival)."""
        if isinstance(self.clock, PlaybackClock) or self._running:
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

    def _loop(self) -> None:
        while self._running:
            with self._cond:
                if not self._heap:
                    self._cond.wait(0.5)
                    continue
                at, handle, callback = self._heap[0]
                delay = (at - self.clock.now()) / 1000.0
                if delay > 0:
                    self._cond.wait(min(delay, 0.5))
                    continue
                heapq.heappop(self._heap)
                if handle in self._cancelled:
                    self._cancelled.discard(handle)
                    continue
            if self._running:
                with self.lock:
                    self._run(callback, at)

    def _run(self, callback: TimerCallback, at: int) -> None:
        try:
            callback(at)
        except Exception as exc:  # a failing timer must not kill the scheduler
            if self.on_error is not None:
                self.on_error(exc)
            else:
                _log.exception("timer callback failed")

    def pending(self) -> int:
        """How many timers wait (for metrics and tests)."""
        with self._cond:
            return len(self._heap) - len(self._cancelled)
