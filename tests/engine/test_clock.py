"""The timers of engine/clock.py's Scheduler: the live thread, and timers held back."""
from __future__ import annotations

import threading

import pytest
from srota.engine.clock import PlaybackClock, Scheduler, WallClock


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


def test_timers_and_start_callbacks_made_while_held_back_never_run() -> None:
    """What a partition builds only to check it (engine/partition.py, ``_validate``) arms its
    timers like any element; held back, they are cancelled and its start callbacks dropped,
    while the ones made before and after run."""
    clock = PlaybackClock()
    scheduler = Scheduler(clock, threading.RLock())
    ran: list[str] = []
    scheduler.schedule(100, lambda at: ran.append(f"before {at}"))
    with scheduler.held_back():
        scheduler.schedule(100, lambda at: ran.append(f"held {at}"))
        clock.on_start(lambda at: ran.append(f"held start {at}"))
    scheduler.schedule(200, lambda at: ran.append(f"after {at}"))
    clock.on_start(lambda at: ran.append(f"start {at}"))
    clock.advance(1_700_000_000_000)
    assert ran == ["start 1700000000000", "before 100", "after 200"]
