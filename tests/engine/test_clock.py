"""The live timer thread (engine/clock.py's Scheduler)."""
from __future__ import annotations

import threading

import pytest
from srota.engine.clock import Scheduler, WallClock


class _Replaced(BaseException):
    """As :class:`~srota.engine.stores.database.StoreReplacedError`: a BaseException, so that
    the chunk path's ``except Exception`` handlers do not swallow it."""


def test_a_timer_raising_a_base_exception_does_not_end_the_timer_thread() -> None:
    """A timer of a partition whose table met the partition's newer owner (its fence raises
    StoreReplacedError, a BaseException) ended the runtime's timer thread: every later timer of
    the runtime was silently never run.  It is reported like any failing timer."""
    clock = WallClock()
    scheduler = Scheduler(clock, threading.RLock())
    errors: list[BaseException] = []
    scheduler.on_error = errors.append
    ran = threading.Event()

    def replaced(_at: int) -> None:
        raise _Replaced("table 'T' for shard 'p0' has a newer owner")

    now = clock.now()
    scheduler.schedule(now, replaced)
    scheduler.schedule(now + 50, lambda _at: ran.set())
    scheduler.start()
    try:
        assert ran.wait(5), "the timer after the failing one never ran"
        assert [type(e) for e in errors] == [_Replaced]
    finally:
        scheduler.stop()


def test_keyboard_interrupt_in_a_timer_still_propagates() -> None:
    clock = WallClock()
    scheduler = Scheduler(clock, threading.RLock())
    scheduler.on_error = lambda exc: None

    def interrupted(_at: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        scheduler._run(interrupted, clock.now())
