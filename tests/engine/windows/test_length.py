"""length and lengthBatch windows."""
from __future__ import annotations

import pytest
from srota.engine import Event, SiddhiAppCreationError, SiddhiManager


def test_length_expires_oldest_before_new(window_app):
    send, out, _ = window_app("length(2)")
    for v in range(4):
        send(v, ts=1000 + v)
    assert out.current == [["A", 0], ["A", 1], ["A", 2], ["A", 3]]
    assert out.expired == [["A", 0], ["A", 1]]
    # the expired event comes first in the same chunk as the new one
    assert out.calls[2] == ([["A", 2]], [["A", 0]])


def test_length_aggregates_follow_window(window_app):
    send, out, _ = window_app("length(2)", select="sum(volume) as s, count() as c, avg(volume) as a", out="current")
    for v in (1, 2, 3):
        send(v, ts=1)
    assert out.current == [[1, 1, 1.0], [3, 2, 1.5], [5, 2, 2.5]]


def test_length_zero_passes_and_resets(window_app):
    send, out, _ = window_app("length(0)", select="count() as c", out="all")
    send(1, ts=1)
    send(2, ts=2)
    # [current, expired, reset]: the aggregating selector emits the last, the expired row
    assert out.current == []
    assert out.expired == [[0], [0]]


def test_length_contents_and_snapshot(window_app):
    send, _, rt = window_app("length(2)")
    for v in range(3):
        send(v, ts=1)
    window = rt.context.elements["q/window"]
    assert [e.data[2] for e in window.contents()] == [1, 2]
    state = window.snapshot_state()
    window.restore_state(state)
    assert [e.data[2] for e in window.contents()] == [1, 2]


@pytest.mark.parametrize("bad", ["length()", "length(2, volume)", "length(4.7)", "length(volume)",
                                 "length('a')", "length(1/2)"])
def test_length_parameter_errors(bad):
    with pytest.raises(SiddhiAppCreationError) as err:
        SiddhiManager().create_siddhi_app_runtime(
            "define stream S (symbol string, volume int);\n"
            f"from S#window.{bad} select symbol insert into O;")
    assert err.value.line == 2


def test_length_batch_emits_full_batches_only(window_app):
    send, out, _ = window_app("lengthBatch(3)", out="current")
    for v in range(7):
        send(v, ts=1)
    assert out.current == [["A", 0], ["A", 1], ["A", 2], ["A", 3], ["A", 4], ["A", 5]]
    assert [len(c[0]) for c in out.calls] == [3, 3]


def test_length_batch_expires_previous_batch_then_resets(window_app):
    send, out, _ = window_app("lengthBatch(2)", select="symbol, volume, count() as c", out="all")
    for v in range(4):
        send(v, ts=1)
    # one row per flush (aggregating selector): the last current of the batch
    assert out.current == [["A", 1, 2], ["A", 3, 2]]
    assert out.expired == []


def test_length_batch_expired_output(window_app):
    send, out, _ = window_app("lengthBatch(2)", out="expired")
    for v in range(6):
        send(v, ts=1)
    assert out.expired == [["A", 0], ["A", 1], ["A", 2], ["A", 3]]


def test_length_batch_stream_current_events(window_app):
    send, out, _ = window_app("lengthBatch(2, true)", select="count() as c", out="current")
    for v in range(5):
        send(v, ts=1)
    assert [r[0] for r in out.current] == [1, 2, 1, 2, 1]


def test_length_batch_chunk_sizes_with_stream_current(run_app):
    rt, got = run_app("define stream S (v int); from S#window.lengthBatch(2, true) select v "
                      "insert all events into Out;")
    h = rt.get_input_handler("S")
    for v in range(5):
        h.send([v])
    # the third event: [expired x2 (turned current by insert), current]
    assert got.chunks == [1, 1, 3, 1, 3]


def test_length_batch_zero(window_app):
    send, out, _ = window_app("lengthBatch(0)", select="count() as c", out="current")
    send(1, ts=1)
    send(2, ts=1)
    assert out.current == [[1], [1]]  # each event passes alone, then the reset clears the count


def test_length_batch_contents_is_last_batch():
    rt = SiddhiManager().create_siddhi_app_runtime(
        "define stream S (v int); define window W (v int) lengthBatch(2);"
        "from S insert into W;")
    rt.start()
    h = rt.get_input_handler("S")
    for v in range(3):
        h.send([v])
    assert [e.data for e in rt.context.windows["W"].processor.contents()] == [(0,), (1,)]
    rt.shutdown()


@pytest.mark.parametrize("bad", ["lengthBatch(1/2)", "lengthBatch(volume)", "lengthBatch(2, 3)",
                                 "lengthBatch(2, true, 1)", "lengthBatch(2.0)"])
def test_length_batch_parameter_errors(bad):
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(
            f"define stream S (symbol string, volume int); from S#window.{bad} select symbol insert into O;")


def test_unknown_window_is_rejected():
    with pytest.raises(SiddhiAppCreationError, match="unknown window"):
        SiddhiManager().create_siddhi_app_runtime(
            "define stream S (v int); from S#window.nope(1) select v insert into O;")


def test_events_are_not_mutated(window_app):
    send, out, rt = window_app("length(1)")
    e = Event(5, ("A", 1.0, 1, 5))
    send.handler.send_events([e])
    send(2, ts=6)
    assert e.type == 0 and e.timestamp == 5
