"""The bucket timer of incremental aggregation (engine/aggregation/runtime.py).

Siddhi 5's root ``IncrementalExecutor`` arms a timer for event time too
(``getTimestamp`` -> ``scheduler.notifyAt(getNextEmitTime(ts))``), so a bucket closes when the
app's clock passes its end, not only when a later event arrives.  Most tests drive the clock by
playback (a ``Tick`` stream moves it), so that when a timer fires is exact.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from srota.engine import SiddhiManager
from srota.grammar.model import TimeDuration as D

T0 = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC, a whole second; its minute ends at T0 + 40 s
SEC = 1000


def _app(annotations: str = "", playback: bool = True) -> str:
    return (("@app:playback\n" if playback else "")
            + "define stream S (k string, v long, ts long);\n"
              "define stream Tick (n int);\n"
              f"{annotations}\n"
              "define aggregation A from S select k, sum(v) as total, count() as n group by k "
              "aggregate by ts every sec ... year;")


class _Run:
    """A started runtime of ``_app``: send events, move the playback clock, look at the tables."""

    def __init__(self, text: str) -> None:
        self.rt = SiddhiManager().create_siddhi_app_runtime(text)
        self.rt.start()
        self.agg = self.rt.context.aggregations["A"]
        self._s = self.rt.get_input_handler("S")
        self._tick = self.rt.get_input_handler("Tick")

    def send(self, v: int, ts: int, at: int | None = None, k: str = "a") -> None:
        """An event of time ``ts`` arriving at ``at`` (the playback clock; default ``ts``)."""
        self._s.send([k, v, ts], timestamp=ts if at is None else at)

    def tick(self, at: int) -> None:
        """Move the playback clock to ``at`` (an event of another stream)."""
        self._tick.send([0], timestamp=at)

    def table(self, d: D) -> dict[int, tuple[Any, ...]]:
        """``{AGG_TIMESTAMP: (total, n)}`` of key ``a`` in granularity ``d``'s table."""
        return {ts: self.agg.spec.finalize(ts, key, row)[-2:] for ts, key, row in self.agg.store.scan(d)}

    def read(self, per: str) -> dict[int, tuple[Any, ...]]:
        """What a query reads (the table and the open buckets)."""
        got = self.rt.query(f"from A within {T0 - 86_400_000}L, {T0 + 86_400_000}L per '{per}' "
                            "select AGG_TIMESTAMP, total, n")
        return {e.data[0]: tuple(e.data[1:]) for e in got}


def _wait_for(check: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


def test_the_first_event_arms_a_timer_that_closes_its_second_when_the_clock_passes_it() -> None:
    r = _Run(_app())
    r.send(1, T0 + 100)
    assert r.agg._timer_at == T0 + SEC  # Siddhi: notifyAt(getNextEmitTime(ts))
    r.send(2, T0 + 900)
    assert r.table(D.SECONDS) == {}
    r.tick(T0 + SEC)  # no event of a later second: the timer closes it
    assert r.table(D.SECONDS) == {T0: (3, 2)}
    assert r.table(D.MINUTES) == {}
    assert r.agg._timer_at == T0 + 2 * SEC  # and ticks on, one root bucket at a time
    r.tick(T0 + 40 * SEC)  # the minute's end: the timer closes the minute as well
    assert r.table(D.MINUTES) == {T0 - 20 * SEC: (3, 2)}
    assert r.table(D.HOURS) == {}
    r.rt.shutdown()


def test_a_late_event_of_a_second_the_timer_closed_is_merged_at_the_next_tick() -> None:
    r = _Run(_app())
    r.send(1, T0 + 100)
    r.tick(T0 + SEC)
    assert r.table(D.SECONDS) == {T0: (1, 1)}
    r.send(5, T0 + 200, at=T0 + 1100)  # late: its second was already written
    assert r.table(D.SECONDS) == {T0: (1, 1)}
    assert r.read("seconds") == {T0: (6, 2)}  # a read composes the table and the reopened bucket
    r.tick(T0 + 2 * SEC)
    assert r.table(D.SECONDS) == {T0: (6, 2)}  # merged into the stored row, as Siddhi's reads merge
    assert r.agg._levels[0].buckets == {}
    r.tick(T0 + 40 * SEC)
    assert r.table(D.MINUTES) == {T0 - 20 * SEC: (6, 2)}
    assert r.read("minutes") == {T0 - 20 * SEC: (6, 2)}
    r.rt.shutdown()


def test_under_the_wall_clock_past_event_times_are_written_at_once_at_every_granularity() -> None:
    r = _Run(_app(playback=False))
    r.send(1, T0 + 100, at=int(time.time() * 1000))
    assert _wait_for(lambda: bool(r.table(D.YEARS)))
    assert [r.table(d) for d in (D.SECONDS, D.MINUTES, D.DAYS, D.YEARS)] == [
        {T0: (1, 1)}, {T0 - 20 * SEC: (1, 1)}, {1_699_920_000_000: (1, 1)}, {1_672_531_200_000: (1, 1)}]
    # a later event of the same second is late now: the next tick (a second at most) merges it
    r.send(2, T0 + 300, at=int(time.time() * 1000))
    assert _wait_for(lambda: r.table(D.YEARS) == {1_672_531_200_000: (3, 2)})
    assert r.table(D.SECONDS) == {T0: (3, 2)}
    r.rt.shutdown()


def test_shutdown_cancels_a_pending_timer_and_leaves_the_open_bucket_unwritten() -> None:
    r = _Run(_app(playback=False))
    future = (int(time.time() * 1000) // SEC + 3600) * SEC  # a second an hour ahead
    r.send(7, future + 5, at=int(time.time() * 1000))
    assert r.agg._timer_at == future + SEC
    scheduler = r.rt.context.scheduler
    assert scheduler.pending() >= 1
    r.rt.shutdown()
    assert r.agg._timer_at is None
    assert scheduler.pending() == 0
    assert r.table(D.SECONDS) == {}  # as in Siddhi, the open bucket stays in memory


def test_a_playback_clock_passing_a_timer_cancelled_by_shutdown_writes_nothing() -> None:
    r = _Run(_app())
    r.send(1, T0 + 100)
    r.rt.shutdown()
    r.rt.context.clock.advance(T0 + 60 * SEC)
    assert r.table(D.SECONDS) == {}


def test_a_snapshot_carries_the_pending_timer() -> None:
    r = _Run(_app())
    r.send(4, T0 + 100)
    snap = r.rt.snapshot()
    r.rt.shutdown()
    r2 = _Run(_app())
    r2.rt.restore(snap)
    assert r2.agg._timer_at == T0 + SEC
    r2.tick(T0 + SEC)
    assert r2.table(D.SECONDS) == {T0: (4, 1)}
    r2.rt.shutdown()


def test_with_buffer_size_event_time_has_no_timer_as_in_wso2_sp() -> None:
    # WSO2 SP 4.2's @BufferSize decides when an event-time bucket is complete (Siddhi 5 dropped it
    # and armed the timer instead): only later events close buckets
    r = _Run(_app("@BufferSize('2')"))
    r.send(1, T0 + 100)
    r.tick(T0 + 60 * SEC)
    assert r.agg._timer_at is None
    assert r.table(D.SECONDS) == {}
    r.send(1, T0 + 3100)  # three seconds on: the buffer of two lets second T0 go
    assert r.table(D.SECONDS) == {T0: (1, 1)}
    r.rt.shutdown()


def test_arrival_time_still_arms_its_timer_at_the_start() -> None:
    text = ("@app:playback\ndefine stream S (k string, v long);\ndefine stream Tick (n int);\n"
            "define aggregation A from S select k, sum(v) as total, count() as n group by k "
            "aggregate every sec ... min;")
    rt = SiddhiManager().create_siddhi_app_runtime(text)
    rt.start()
    agg = rt.context.aggregations["A"]
    rt.get_input_handler("Tick").send([0], timestamp=T0 + 500)  # the playback clock starts here
    assert agg._timer_at == T0 + SEC
    rt.get_input_handler("S").send(["a", 2], timestamp=T0 + 600)
    rt.get_input_handler("Tick").send([0], timestamp=T0 + SEC)
    assert [(ts, agg.spec.finalize(ts, k, row)[-2:]) for ts, k, row in agg.store.scan(D.SECONDS)] == [
        (T0, (2, 1))]
    rt.shutdown()
