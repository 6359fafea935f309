"""externalTime and externalTimeBatch windows (event time from an attribute)."""
from __future__ import annotations

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager


def test_external_time_expires_by_attribute(window_app):
    send, out, _ = window_app("externalTime(ts, 1 sec)", playback=False)
    send(1, ets=1000)
    send(2, ets=1500)
    send(3, ets=2000)  # 1000 + 1000 <= 2000: event 1 leaves before 3
    assert out.calls[2] == ([["A", 3]], [["A", 1]])
    assert out.expired == [["A", 1]]


def test_external_time_batch_aligned_and_late_events(window_app):
    send, out, _ = window_app("externalTimeBatch(ts, 1 sec, 0)", select="count() as c", out="current",
                              playback=False)
    for ets in (1100, 1200, 1300, 1900, 1000):   # the late 1000 still joins [1000, 2000)
        send(1, ets=ets)
    send(1, ets=2100)
    assert out.current == [[5]]


def test_external_time_batch_from_first_event(window_app):
    send, out, _ = window_app("externalTimeBatch(ts, 1 sec)", out="all", playback=False)
    for ets in (1500, 2000, 2500, 3600):
        send(ets, ets=ets)
    # batches [1500, 2500), [2500, 3500): expired of batch 1 come with batch 2
    assert out.current == [["A", 1500], ["A", 2000], ["A", 2500]]
    assert out.expired == [["A", 1500], ["A", 2000]]


def test_external_time_batch_replace_timestamp(window_app):
    send, out, _ = window_app("externalTimeBatch(ts, 1 sec, 0, 0, true)", select="ts", out="current",
                              playback=False)
    send(1, ets=1100)
    send(1, ets=2100)
    assert out.current == [[2000]]


def test_external_time_batch_timeout_flushes(window_app):
    send, out, rt = window_app("externalTimeBatch(ts, 10 sec, 0, 500)", out="current")
    send(1, ts=1000, ets=100)
    send(2, ts=1100, ets=200)
    rt.context.clock.advance(1700)  # app time passes the 500 ms timeout: the batch leaves
    assert out.current == [["A", 1], ["A", 2]]


@pytest.mark.parametrize("bad", ["externalTime(volume, 1 sec)", "externalTime(ts)", "externalTime(1000, 1 sec)",
                                 "externalTime(ts, 1.5)", "externalTimeBatch(ts)",
                                 "externalTimeBatch(ts, 1 sec, 0, 1, 2)", "externalTimeBatch(volume, 1 sec)",
                                 "externalTimeBatch(ts, 1 sec, symbol)"])
def test_external_parameter_errors(bad):
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(
            "define stream S (symbol string, volume int, ts long);"
            f"from S#window.{bad} select symbol insert into O;")


@pytest.mark.parametrize("timeout", ["", ", 0, 500"])
def test_external_time_batch_events_sent_alone_as_in_one_chunk(timeout):
    """An event sent alone that joins the open batch takes a short path; its outputs (and
    the window's event time, which a timeout's flush uses) are those of the chunk loop."""
    app = ("@app:playback define stream S (symbol string, volume int, ts long);"
           f"@info(name='q') from S#window.externalTimeBatch(ts, 1 sec{timeout}) select symbol, volume, ts "
           "insert all events into O;")
    rows = [("A", 1, 1500), ("A", 2, 2400), ("A", 3, 1600), ("A", 4, 2400), ("A", 5, 2500),
            ("A", 6, 2450), ("A", 7, 4700), ("A", 8, 4100), ("A", 9, 6000)]
    got = {}
    for alone in (True, False):
        rt = SiddhiManager().create_siddhi_app_runtime(app)
        out: list = []
        rt.add_callback("O", lambda evs, out=out: out.extend((tuple(e.data), e.type, e.timestamp) for e in evs))
        rt.start()
        handler = rt.get_input_handler("S")
        if alone:
            for r in rows:
                handler.send(r, timestamp=10)
        else:
            from srota.engine import Event
            handler.send_events([Event(10, r) for r in rows])
        handler.send(("A", 10, 4600), timestamp=2000)  # app time passes the timeout: a flush
        rt.shutdown()
        got[alone] = out
    assert got[True] and got[True] == got[False]


def test_external_time_batch_late_event_sent_alone_moves_the_event_time():
    """A late but newer event sent alone after a timeout's flush moves the window's event
    time: the next flush stamps the batch's expired events with it."""
    rt = SiddhiManager().create_siddhi_app_runtime(
        "@app:playback define stream S (symbol string, volume int, ts long);"
        "@info(name='q') from S#window.externalTimeBatch(ts, 1 sec, 0, 500) select volume "
        "insert all events into O;")
    out: list = []
    rt.add_callback("O", lambda evs: out.extend((e.data[0], e.type, e.timestamp) for e in evs))
    rt.start()
    handler = rt.get_input_handler("S")
    handler.send(("A", 1, 1100), timestamp=1000)
    handler.send(("A", 2, 1200), timestamp=1100)
    rt.context.clock.advance(1700)  # the timeout flushes [1000, 2000)
    handler.send(("A", 3, 1500), timestamp=1800)  # late for the batch, newer than 1200
    rt.context.clock.advance(2300)  # the timeout sends the batch again, with the late event
    rt.shutdown()
    # the batch's expired events (current in O) carry the event time, 1500; then it comes again
    assert out == [(1, 0, 1000), (2, 0, 1100), (1, 0, 1500), (2, 0, 1500), (1, 0, 1000), (2, 0, 1100),
                   (3, 0, 1800)]
