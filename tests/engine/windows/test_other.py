"""session, sort, batch, cron, expression, expressionBatch, frequent, lossyFrequent windows."""
from __future__ import annotations

import logging

import pytest
from srota.engine import Event, SiddhiAppCreationError, SiddhiManager
from srota.engine.windows.batch import CronSchedule


def _rejects(window: str) -> None:
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(
            "define stream S (symbol string, price double, volume int, ts long);"
            f"from S#window.{window} select symbol insert into O;")


# ---------------------------------------------------------------- session
def test_session_closes_after_gap_per_key(window_app):
    send, out, rt = window_app("session(1 sec, symbol)")
    send(1, ts=0, symbol="a")
    send(2, ts=500, symbol="b")
    send(3, ts=900, symbol="a")   # extends a's session to 1900
    rt.context.clock.advance(1600)  # b closes (1500)
    assert out.expired == [["b", 2]]
    rt.context.clock.advance(2000)
    assert out.expired == [["b", 2], ["a", 1], ["a", 3]]


def test_session_allowed_latency_accepts_late_event(window_app):
    send, out, rt = window_app("session(1 sec, symbol, 500)")
    send(1, ts=1000)
    rt.context.clock.advance(2100)  # session ended at 2000, kept until 2500
    send(2, ts=2200)                # a new session
    assert out.expired == []
    rt.context.clock.advance(5000)
    assert sorted(out.expired) == [["A", 1], ["A", 2]]


@pytest.mark.parametrize("bad", ["session()", "session(volume)", "session(1 sec, volume)",
                                 "session(1 sec, symbol, 2 sec)", "session(1 sec, 'k')"])
def test_session_parameter_errors(bad):
    _rejects(bad)


# ---------------------------------------------------------------- sort
def test_sort_removes_last_in_order(window_app):
    send, out, _ = window_app("sort(2, volume, 'asc')")
    for v in (100, 300, 200, 20):
        send(v, ts=1)
    assert out.expired == [["A", 300], ["A", 200]]
    # current first, then the expired one (which may be the event that just arrived)
    assert out.calls[2] == ([["A", 200]], [["A", 300]])


def test_sort_multi_key_desc(window_app):
    send, out, _ = window_app("sort(1, volume, 'asc', price, 'desc')", select="volume, price")
    send(1, ts=1, price=5.0)
    send(1, ts=1, price=7.0)
    assert out.expired == [[1, 5.0]]


@pytest.mark.parametrize("bad", ["sort(2.5)", "sort(2, 8)", "sort(2, volume, 'ecs')", "sort(2)", "sort(volume, volume)"])
def test_sort_parameter_errors(bad):
    _rejects(bad)


# ---------------------------------------------------------------- batch and cron
def test_batch_window_each_chunk_is_a_batch(window_app):
    send, out, rt = window_app("batch()", select="count() as c", out="current")
    h = send.handler
    h.send_events([Event(1, ("A", 1.0, v, 1)) for v in range(3)])
    h.send_events([Event(2, ("A", 1.0, v, 2)) for v in range(2)])
    assert out.current == [[3], [2]]


def test_batch_window_with_length_splits(window_app):
    send, out, rt = window_app("batch(2)", out="current")
    send.handler.send_events([Event(1, ("A", 1.0, v, 1)) for v in range(5)])
    assert [len(c[0]) for c in out.calls] == [2, 2, 1]


def test_batch_window_expires_previous_chunk(window_app):
    send, out, rt = window_app("batch()", out="all")
    send(1, ts=1)
    send(2, ts=2)
    assert out.expired == [["A", 1]]


@pytest.mark.parametrize("bad", ["batch(-1)", "batch(volume)", "batch(1, 2)"])
def test_batch_parameter_errors(bad):
    _rejects(bad)


def test_cron_schedule_next_time():
    s = CronSchedule("*/5 * * * * ?")
    t = s.next_after(1_700_000_000_000)
    assert t is not None and t % 5000 == 0 and 0 < t - 1_700_000_000_000 <= 5000


def test_cron_window_emits_on_schedule(window_app):
    send, out, rt = window_app("cron('*/5 * * * * ?')", out="current")
    send(1, ts=1_700_000_001_000)
    rt.context.clock.advance(1_700_000_006_000)
    assert out.current == [["A", 1]]


@pytest.mark.parametrize("bad", ["cron('nonsense')", "cron(5)", "cron(symbol)"])
def test_cron_parameter_errors(bad):
    _rejects(bad)


# ---------------------------------------------------------------- expression windows
def test_expression_window_keeps_while_condition_holds(window_app):
    send, out, _ = window_app("expression('count() <= 2')")
    for v in range(4):
        send(v, ts=v)
    assert out.expired == [["A", 0], ["A", 1]]


def test_expression_window_first_last(window_app):
    send, out, _ = window_app("expression('eventTimestamp(last) - eventTimestamp(first) < 10')")
    send(1, ts=0)
    send(2, ts=5)
    send(3, ts=12)   # 12 - 0 >= 10: event 1 leaves, then 12 - 5 < 10 holds
    assert out.expired == [["A", 1]]


def test_expression_batch_flushes_when_condition_fails(window_app):
    send, out, _ = window_app("expressionBatch('sum(volume) < 10')", out="all")
    for v in (4, 4, 4, 4, 4):
        send(v, ts=1)
    # [4, 4] flushes when the third 4 breaks the sum; the third starts the next batch
    assert out.current == [["A", 4], ["A", 4], ["A", 4], ["A", 4]]
    assert out.expired == [["A", 4], ["A", 4]]


def test_expression_batch_include_triggering_event(window_app):
    send, out, _ = window_app("expressionBatch('count() < 3', true)", out="current")
    for v in range(3):
        send(v, ts=1)
    assert out.current == [["A", 0], ["A", 1], ["A", 2]]


@pytest.mark.parametrize("bad", ["expression(5)", "expression('volume')", "expression('nope(')",
                                 "expressionBatch(volume)", "expressionBatch('count() < 2', 1)"])
def test_expression_parameter_errors(bad):
    _rejects(bad)


# ---------------------------------------------------------------- frequency windows
def test_frequent_keeps_most_frequent_keys(window_app):
    send, out, _ = window_app("frequent(1, symbol)")
    send(1, symbol="a")
    send(2, symbol="a")
    send(3, symbol="b")   # a's count drops to 1; b is dropped
    send(4, symbol="b")   # a's count drops to 0: a leaves, b enters
    assert out.current == [["a", 1], ["a", 2], ["b", 4]]
    assert out.expired == [["a", 2]]


def test_lossy_frequent_passes_frequent_keys(window_app):
    send, out, _ = window_app("lossyFrequent(0.5, 0.1, symbol)")
    for s in "aaab":
        send(1, symbol=s)
    assert [r[0] for r in out.current] == ["a", "a", "a"]


@pytest.mark.parametrize("bad", ["frequent(1.5)", "frequent(volume)", "frequent(2, 5)",
                                 "lossyFrequent('x')", "lossyFrequent(2.0, 0.1)",
                                 # Siddhi 5.1.33's overloads: an int count, doubles, one string key
                                 "frequent(2, volume)", "frequent(2, symbol, symbol)",
                                 "lossyFrequent(1, 0.05)", "lossyFrequent(0.3, 0.05, volume)",
                                 "lossyFrequent(0.3, 0.05, symbol, symbol)"])
def test_frequency_parameter_errors(bad):
    _rejects(bad)


@pytest.mark.parametrize("window", ["expression(rule)", "expressionBatch(rule)"])
def test_a_dynamic_expression_that_does_not_compile_faults_each_event_with_its_error(window, caplog):
    """Each event carrying the bad expression is faulted with the compile error, and a good
    expression later works (before: the second event failed an internal assertion)."""
    rt = SiddhiManager().create_siddhi_app_runtime(
        "define stream S (rule string, v int);"
        f"from S#window.{window} select rule, v insert into O;")
    got: list = []
    rt.add_callback("O", got.extend)
    rt.start()
    h = rt.get_input_handler("S")
    h.send(["eventTimestamp(last)", 1])
    h.send(["eventTimestamp(last)", 2])
    h.send(["count() <= 1", 3])
    rt.shutdown()
    assert "AssertionError" not in caplog.text
    assert sum("must be a bool expression" in r.getMessage() for r in caplog.records) == 2
    assert sum(r.levelno >= logging.ERROR for r in caplog.records) == 2  # the good expression works
    if window.startswith("expression("):
        assert [e.data[1] for e in got if e.type == 0] == [3]
