"""Time never replays the past (DESIGN.md decision 11), with epoch-millisecond timestamps.

A playback clock starts at the first event's time, and every periodic timer that fell behind
fires once and moves on to its next due time.  Before, an ``@app:playback`` app fed
timestamps like 1_700_000_000_000 caught up one period at a time from 1970 and never came back.
"""
from __future__ import annotations

import threading

import pytest
from srota.engine import SiddhiManager
from srota.engine.clock import PlaybackClock, next_period

pytestmark = pytest.mark.timeout(60)

EPOCH = 1_700_000_000_000
DAY = 86_400_000

APP = """
@app:playback
define stream S (sym string, price double, ts long);
define trigger T at every 1 sec;
define aggregation A from S select sym, sum(price) as total, count() as n
    group by sym aggregate by ts every sec ... year;
from T select triggered_time as t insert into Ticks;
@purge(enable='true', interval='1 sec', idle.period='2 sec')
partition with (sym of S) begin
    from S select sym, count() as c insert into Counts;
end;
"""


def _run(app: str, events: list[tuple[str, float, int]]):
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    ticks: list = []
    counts: list = []
    rt.add_callback("Ticks", ticks.extend)
    rt.add_callback("Counts", counts.extend)
    rt.start()
    h = rt.get_input_handler("S")
    for sym, price, ts in events:
        h.send([sym, price, ts], ts)
    return rt, ticks, counts


def test_acceptance_aggregation_trigger_and_purged_partition_from_epoch_time():
    """2,000 events from 1_700_000_000_000: the trigger ticks from the first event, the
    partition purges idle keys, the aggregation holds every event; no timer replays 1970."""
    events = [(f"s{i % 4}" if i < 1_000 else "late", 1.0, EPOCH + i * 10) for i in range(2_000)]
    rt, ticks, counts = _run(APP, events)
    ctx = rt.context
    # one tick per second of event time, counted from the first event
    assert [e.data[0] for e in ticks] == [EPOCH + 1_000 * k for k in range(1, 20)]
    assert ctx.scheduler.pending() < 10  # the trigger, the purges: not a backlog from 1970
    # the partition purged s0..s3 (idle for more than 2 s), so 'late' is the only key left
    partition = rt.partitions[0]
    assert list(partition.instances) == ["late"]
    assert len(counts) == 2_000 and counts[-1].data == ("late", 1_000)
    # the aggregation has every event, in its own (event time) buckets
    got = rt.query(f"from A within {EPOCH - DAY}L, {EPOCH + DAY}L per 'minutes' select sym, total, n")
    assert sorted(e.data for e in got)[-1] == ("s3", 250.0, 250)
    assert sum(e.data[2] for e in got) == 2_000
    rt.shutdown()


def test_gap_of_a_year_costs_one_tick():
    """A year without events: the trigger fires once for the first missed second, not 31M times."""
    year = 365 * DAY
    rt, ticks, _ = _run(APP, [("a", 1.0, EPOCH), ("a", 1.0, EPOCH + year + 500), ("a", 1.0, EPOCH + year + 1_000)])
    assert [e.data[0] for e in ticks] == [EPOCH + 1_000, EPOCH + year + 1_000]
    rt.shutdown()


def test_arrival_time_aggregation_in_playback():
    """An arrival-time aggregation's bucket timer counts from the first event."""
    app = ("@app:playback define stream S (sym string, price double, ts long);"
           "define aggregation A from S select sym, sum(price) as total group by sym aggregate every sec ... hour;")
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    rt.start()
    h = rt.get_input_handler("S")
    for i in range(300):
        h.send(["a", 1.0, 0], EPOCH + i * 10)
    agg = rt.context.aggregations["A"]
    assert rt.context.scheduler.pending() <= 2
    got = rt.query(f"from A within {EPOCH - DAY}L, {EPOCH + DAY}L per 'seconds' select sym, total")
    assert sum(e.data[1] for e in got) == 300.0
    assert agg._levels[0].top is not None and agg._levels[0].top >= EPOCH
    rt.shutdown()


def test_sqlite_aggregation_purge_starts_no_thread_per_tick(tmp_path):
    """A purge that fell behind runs once, on one thread at a time (not one thread per tick)."""
    db = tmp_path / "agg.db"
    app = (f"@app:playback define stream S (sym string, price double, ts long);"
           f"@store(type='sqlite', database='{db}') @purge(enable='true', interval='1 sec', "
           f"@retentionPeriod(sec='120 sec', min='24 hours'))"
           f"define aggregation A from S select sym, sum(price) as total group by sym aggregate by ts every sec, min;")
    started: list[str] = []
    original = threading.Thread.start

    def spy(self):
        started.append(self.name)
        return original(self)

    rt = SiddhiManager().create_siddhi_app_runtime(app)
    rt.start()
    h = rt.get_input_handler("S")
    try:
        threading.Thread.start = spy  # type: ignore[method-assign]
        h.send(["a", 1.0, EPOCH], EPOCH)
        h.send(["a", 1.0, EPOCH + 3_600_000], EPOCH + 3_600_000)  # an hour: 3,600 purge periods
    finally:
        threading.Thread.start = original  # type: ignore[method-assign]
    assert len([n for n in started if n.startswith("srota-purge")]) <= 1
    rt.shutdown()


def test_playback_clock_starts_at_first_time_and_runs_start_callbacks_once():
    clock = PlaybackClock()
    seen: list[int] = []
    clock.on_start(seen.append)
    assert seen == [] and not clock.started
    clock.advance(EPOCH)
    clock.on_start(seen.append)  # after the start: at once, with the current time
    clock.advance(EPOCH + 5)
    assert seen == [EPOCH, EPOCH] and clock.now() == EPOCH + 5


@pytest.mark.parametrize(("at", "now", "expected"), [
    (1_000, 1_000, 2_000),    # on time
    (1_000, 1_500, 2_000),    # a little late: still the next one
    (1_000, 2_000, 2_000),    # the next one is due now: it fires too
    (1_000, 2_001, 3_000),    # behind: skip to the next due time
    (EPOCH, EPOCH + DAY + 1, EPOCH + DAY + 1_000),
])
def test_next_period(at, now, expected):
    assert next_period(at, 1_000, now) == expected


def test_time_batch_window_skips_empty_batches_after_a_gap():
    """The flushes a gap would produce still happen; the empty batches in between are skipped."""
    rt = SiddhiManager().create_siddhi_app_runtime(
        "@app:playback define stream S (a int);"
        "@info(name='q') from S#window.timeBatch(1 sec) select a insert all events into Out;")
    out: list = []
    rt.add_query_callback("q", lambda ts, cur, exp: out.append(([e.data for e in cur or ()],
                                                                [e.data for e in exp or ()])))
    scheduler = rt.context.scheduler
    fired: list[int] = []
    run = scheduler._run
    scheduler._run = lambda callback, at: (fired.append(at), run(callback, at))  # type: ignore[method-assign]
    rt.start()
    h = rt.get_input_handler("S")
    h.send([1], EPOCH)
    h.send([2], EPOCH + 30 * DAY)
    h.send([3], EPOCH + 30 * DAY + 1_000)
    assert out == [([(1,)], []), ([], [(1,)]), ([(2,)], [])]
    assert len(fired) < 10  # not one tick per second of the 30 days
    rt.shutdown()


def test_a_chunk_moves_the_playback_clock_to_its_last_events_time_as_siddhi_does():
    """Siddhi's ``InputHandler.send(Event[])`` sets the playback time to the last event's
    timestamp, never back: a chunk whose latest event is not its last leaves the clock at the
    last one's (here the earliest's, where the clock starts), not at the chunk's latest."""
    from srota.engine import Event

    rt = SiddhiManager().create_siddhi_app_runtime(
        "@app:playback define stream S (sym string); "
        "from S select sym, currentTimeMillis() as now insert into Out;")
    got: list = []
    rt.add_callback("Out", lambda events: got.extend(e.data for e in events))
    rt.start()
    h = rt.get_input_handler("S")
    h.send_events([Event(EPOCH + 2_000, ("late",)), Event(EPOCH + 1_000, ("early",))])
    h.send_events([Event(EPOCH + 1_500, ("b",)), Event(EPOCH + 3_000, ("c",)), Event(EPOCH + 2_500, ("d",))])
    h.send_events([Event(EPOCH + 500, ("old",))])  # never back
    rt.shutdown()

    assert got == [("late", EPOCH + 1_000), ("early", EPOCH + 1_000),
                   ("b", EPOCH + 2_500), ("c", EPOCH + 2_500), ("d", EPOCH + 2_500),
                   ("old", EPOCH + 2_500)]
