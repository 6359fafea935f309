"""time, timeBatch, timeLength and delay windows, under playback time (deterministic)."""
from __future__ import annotations

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager


def test_time_expires_on_arrival_and_on_timer(window_app):
    send, out, rt = window_app("time(1 sec)")
    send(1, ts=1000)
    send(2, ts=1500)
    send(3, ts=2200)  # the timer due at 2000 fires before the event: event 1 leaves first
    assert out.calls[2:4] == [([], [["A", 1]]), ([["A", 3]], [])]
    rt.context.clock.advance(10_000)  # timers expire the rest, all at once
    assert out.expired == [["A", 1], ["A", 2], ["A", 3]]
    assert out.calls[-1] == ([], [["A", 2], ["A", 3]])


def test_time_boundary_is_inclusive(window_app):
    send, out, _ = window_app("time(1000)")
    send(1, ts=0)
    send(2, ts=1000)
    assert out.expired == [["A", 1]]


def test_time_sum_decreases_on_expiry(window_app):
    send, out, rt = window_app("time(1 sec)", select="sum(volume) as s", out="all")
    send(5, ts=0)
    send(7, ts=500)
    rt.context.clock.advance(1000)
    rt.context.clock.advance(1500)
    assert out.current == [[5], [12]]
    assert out.expired == [[7], [None]]  # sum of nothing is null


def test_time_window_snapshot_rearms_timer(window_app):
    send, out, rt = window_app("time(1 sec)")
    send(1, ts=0)
    w = rt.context.elements["q/window"]
    state = w.snapshot_state()
    w.restore_state(state)
    rt.context.clock.advance(2000)
    assert out.expired == [["A", 1]]


@pytest.mark.parametrize("bad", ["time()", "time(4.7)", "time(volume)", "time(1 sec, 2)", "time('1')"])
def test_time_parameter_errors(bad):
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(
            f"define stream S (symbol string, volume int); from S#window.{bad} select symbol insert into O;")


def test_time_batch_flushes_at_period_end(window_app):
    send, out, rt = window_app("timeBatch(1 sec)", out="all")
    send(1, ts=0)
    send(2, ts=500)
    send(3, ts=1000)  # the timer at 1000 flushes [1, 2] first
    send(4, ts=2100)  # flush at 2000: expired [1, 2], then [3]
    assert out.current == [["A", 1], ["A", 2], ["A", 3]]
    assert out.expired == [["A", 1], ["A", 2]]
    rt.context.clock.advance(3000)
    assert out.current[-1] == ["A", 4]
    assert out.expired == [["A", 1], ["A", 2], ["A", 3]]


def test_time_batch_aggregate_one_row_per_batch(window_app):
    send, out, rt = window_app("timeBatch(1 sec)", select="sum(volume) as s", out="current")
    for v, t in ((1, 0), (2, 100), (3, 900), (10, 1200)):
        send(v, ts=t)
    rt.context.clock.advance(2000)
    assert out.current == [[6], [10]]


def test_time_batch_start_time_aligns(window_app):
    send, out, rt = window_app("timeBatch(1 sec, 0)", out="current")
    send(1, ts=1700)   # batch [1000, 2000)
    send(2, ts=2100)   # flush at 2000
    assert out.current == [["A", 1]]


def test_time_batch_stream_current(window_app):
    send, out, rt = window_app("timeBatch(1 sec, true)", select="count() as c", out="current")
    send(1, ts=0)
    send(2, ts=10)
    send(3, ts=1500)  # the batch ended at 1000: the count restarts
    assert out.current == [[1], [2], [1]]


@pytest.mark.parametrize("bad", ["timeBatch(1 sec, 'x')", "timeBatch(volume)", "timeBatch(1 sec, 0, 1)",
                                 "timeBatch()", "timeBatch(1.5)"])
def test_time_batch_parameter_errors(bad):
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(
            f"define stream S (symbol string, volume int); from S#window.{bad} select symbol insert into O;")


def test_time_length_bounded_by_count_and_time(window_app):
    send, out, rt = window_app("timeLength(2 sec, 2)")
    send(1, ts=0)
    send(2, ts=100)
    send(3, ts=200)      # count bound: 1 leaves
    rt.context.clock.advance(2150)  # time bound: 2 leaves
    assert out.expired == [["A", 1], ["A", 2]]


@pytest.mark.parametrize("bad", ["timeLength(2 sec)", "timeLength(2 sec, volume)", "timeLength(2.0, 3)"])
def test_time_length_parameter_errors(bad):
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(
            f"define stream S (symbol string, volume int); from S#window.{bad} select symbol insert into O;")


def test_delay_emits_later_as_current(window_app):
    send, out, rt = window_app("delay(1 sec)")
    send(1, ts=0)
    assert out.current == []
    rt.context.clock.advance(1000)
    assert out.current == [["A", 1]]
    assert out.expired == []


@pytest.mark.parametrize("bad", ["delay()", "delay(volume)", "delay(1.5)"])
def test_delay_parameter_errors(bad):
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(
            f"define stream S (symbol string, volume int); from S#window.{bad} select symbol insert into O;")


def test_live_time_window_uses_wall_clock_timers(window_app):
    import time
    send, out, rt = window_app("time(100)", playback=False)
    send(1)
    deadline = time.monotonic() + 2
    while not out.expired and time.monotonic() < deadline:
        time.sleep(0.01)
    assert out.expired == [["A", 1]]
