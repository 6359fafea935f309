"""Faults stay with the event that caused them (DESIGN.md decision 7).

One event that raises inside a query must not take the other events of its chunk with it:
only the bad event goes to ``!S`` (or the log), the good ones produce their output, and no
event is counted twice.
"""
from __future__ import annotations

import logging

import pytest
from srota.engine import Event, SiddhiManager

EPOCH = 1_700_000_000_000
ROWS = [("a", 10, 2), ("b", 9, 3), ("a", 8, 0), ("b", 6, 2), ("a", 4, 4)]  # the third divides by 0
# Siddhi's a / 0 is null, not an error: the faulting division is a Python function's
DIV = "define function div[python] return int { int(data[0] / data[1]) };\n"


def _run(body: str, on_error: str = "@OnError(action='STREAM')", feeds=None):
    """Run ``body`` after ``define stream S``; send ``feeds`` (``[(stream, events)]``, by
    default ROWS into S) and collect Out, Faults and Count."""
    app = (f"@app:playback {on_error} define stream S (k string, a int, b int);\n{DIV}{body}\n"
           "from !S select k, a, b insert into Faults;" if on_error else body)
    if not on_error:
        app = f"@app:playback define stream S (k string, a int, b int);\n{DIV}{body}"
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    got: dict[str, list] = {"Out": [], "Faults": [], "Count": []}
    for name in got:
        if name in rt.stream_definitions:
            rt.add_callback(name, lambda evs, n=name: got[n].extend(e.data for e in evs))
    rt.start()
    for stream, events in feeds or [("S", [Event(EPOCH + i, r) for i, r in enumerate(ROWS)])]:
        rt.get_input_handler(stream).send_events(events)
    rt.shutdown()
    return got


def test_projection_fault_takes_only_the_bad_event():
    got = _run("from S select k, div(a, b) as r insert into Out;"
               "from S select count() as n insert into Count;")
    assert got["Out"] == [("a", 5), ("b", 3), ("b", 3), ("a", 1)]
    assert got["Faults"] == [("a", 8, 0)]
    assert got["Count"] == [(5,)]  # the sibling query saw all five, once


def test_filter_fault_takes_only_the_bad_event():
    got = _run("from S[div(a, b) > 2] select k, a insert into Out;")
    assert got["Out"] == [("a", 10), ("b", 9), ("b", 6)]
    assert got["Faults"] == [("a", 8, 0)]


def test_grouped_aggregation_fault_counts_each_good_event_once():
    got = _run("from S select k, sum(div(a, b)) as s, count() as n group by k insert into Out;")
    assert sorted(got["Out"]) == [("a", 6, 2), ("b", 6, 2)]
    assert got["Faults"] == [("a", 8, 0)]


def test_aggregation_fault_after_a_window_does_not_replay_the_window():
    got = _run("from S#window.length(10) select sum(div(a, b)) as s, count() as n insert into Out;")
    assert got["Out"] == [(12, 4)]
    assert got["Faults"] == [("a", 8, 0)]


def test_custom_fault_function_faults_each_event():
    pytest.importorskip("srota_example_extension")
    got = _run("from S[b == 0 and custom:fault() > 0.0 or b != 0] select k, a insert into Out;")
    assert got["Out"] == [("a", 10), ("b", 9), ("b", 6), ("a", 4)]
    assert got["Faults"] == [("a", 8, 0)]


def test_log_action_drops_only_the_bad_event(caplog):
    with caplog.at_level(logging.ERROR, logger="srota.engine"):
        got = _run("from S select k, div(a, b) as r insert into Out;", on_error="")
    assert got["Out"] == [("a", 5), ("b", 3), ("b", 3), ("a", 1)]
    assert "1 event(s) dropped" in caplog.text


def test_partitioned_aggregation_fault_takes_only_the_bad_event():
    got = _run("partition with (k of S) begin "
               "from S#window.length(10) select k, sum(div(a, b)) as s, count() as n insert into Out; end;")
    assert got["Out"] == [("a", 5, 1), ("b", 3, 1), ("b", 6, 2), ("a", 6, 2)]
    assert got["Faults"] == [("a", 8, 0)]


def test_partitioned_projection_fault_takes_only_the_bad_event():
    got = _run("partition with (k of S) begin from S select k, div(a, b) as r insert into Out; end;")
    assert sorted(got["Out"]) == [("a", 1), ("a", 5), ("b", 3), ("b", 3)]
    assert got["Faults"] == [("a", 8, 0)]


def test_fault_in_a_plain_column_of_an_aggregating_query():
    """`div(a, b)` is not an aggregate: its row is made once per chunk, from the group's last event.

    (The failing event has then already been counted by the aggregators: unlike Siddhi,
    which stops at the failing column, ``n`` includes it.)
    """
    got = _run("from S select k, div(a, b) as r, count() as n group by k insert into Out;")
    # group 'a': its last event (4/4) makes the row; 'b' likewise (the middle event's row is
    # never made, so it does not fail)
    assert sorted(row[:2] for row in got["Out"]) == [("a", 1), ("b", 3)]
    got = _run("from S[k == 'a'] select div(a, b) as r, count() as n insert into Out;")
    assert [row[0] for row in got["Out"]] == [1]
    rows = [("a", 10, 2), ("a", 8, 0)]  # the failing event is the last one: the row before it
    rt = SiddhiManager().create_siddhi_app_runtime(
        "@OnError(action='STREAM') define stream S (k string, a int, b int);" + DIV +
        "from S select k, div(a, b) as r, count() as n group by k insert into Out;")
    out: list = []
    faults: list = []
    rt.add_callback("Out", lambda evs: out.extend(e.data for e in evs))
    rt.add_callback("!S", lambda evs: faults.extend(e.data[:3] for e in evs))
    rt.start()
    rt.get_input_handler("S").send_events([Event(EPOCH + i, r) for i, r in enumerate(rows)])
    rt.shutdown()
    assert [row[:2] for row in out] == [("a", 5)] and faults == [("a", 8, 0)]


def test_an_exception_raised_again_still_faults_only_its_own_event():
    """A function that raises the same exception object each time (a cached error): its
    traceback then also holds the frames of the earlier raise.  The selector must fault the
    event it was processing now, not the whole chunk (it once read that from the frames)."""
    got = _run("define function capped[python] return int {\n"
               "    import builtins\n"
               "    if data[0] > 50:\n"
               "        if not hasattr(builtins, 'srota_test_cached_error'):\n"
               "            builtins.srota_test_cached_error = ValueError('over the cap')\n"
               "        raise builtins.srota_test_cached_error\n"
               "    return data[0]\n"
               "};\n"
               "from S select k, sum(capped(a)) as s group by k insert into Out;",
               feeds=[("S", [Event(EPOCH, ("a", 60, 0))]),  # raises once: a chunk of one
                      ("S", [Event(EPOCH + 1 + i, r) for i, r in enumerate([("a", 1, 0), ("a", 70, 0), ("b", 2, 0)])])])
    assert got["Faults"] == [("a", 60, 0), ("a", 70, 0)]
    assert sorted(got["Out"]) == [("a", 1), ("b", 2)]


def test_join_fault_takes_only_the_bad_event():
    """A join whose condition raises for one event of a chunk faults that event alone; the
    others still join (it faulted the whole chunk, after joining the events before it)."""
    got = _run("define stream R (k string);\n"
               "define window W (k string) length(5);\n"
               "from R insert into W;\n"
               "from S join W on S.k == W.k and div(S.a, S.b) > 1 select S.k, S.a insert into Out;",
               feeds=[("R", [Event(EPOCH, ("a",)), Event(EPOCH, ("b",))]),
                      ("S", [Event(EPOCH + 1 + i, r) for i, r in enumerate(ROWS)])])
    assert got["Faults"] == [("a", 8, 0)]
    assert got["Out"] == [("a", 10), ("b", 9), ("b", 6)]


def test_join_selector_fault_takes_only_the_bad_event():
    """An aggregating selector behind a join that raises on one probing event's matches faults
    that event alone; the rows of the others go on (as one chunk)."""
    got = _run("define stream R (k string);\n"
               "define window W (k string) length(5);\n"
               "from R insert into W;\n"
               "from S join W on S.k == W.k select S.k, sum(div(S.a, S.b)) as x insert into Out;",
               feeds=[("R", [Event(EPOCH, ("a",)), Event(EPOCH, ("b",))]),
                      ("S", [Event(EPOCH + 1 + i, r) for i, r in enumerate(ROWS)])])
    assert got["Faults"] == [("a", 8, 0)]
    assert got["Out"] == [("a", 5), ("b", 3), ("b", 3), ("a", 1)]  # the side without a window resets


def test_pattern_fault_takes_only_the_bad_event():
    """A pattern condition that raises for one event of a chunk faults that event alone; the
    matches of the others come out (they were lost with the whole chunk faulted)."""
    got = _run("from every e1=S[div(a, b) > 1] -> e2=S[k == e1.k] select e1.a as first, e2.a as second insert into Out;")
    assert got["Faults"] == [("a", 8, 0)]
    # e2 is checked before e1 for each event: (a, 8, 0) completed e1=(a, 10) before its own e1
    # condition raised; it is faulted as an e1 candidate only
    assert got["Out"] == [(10, 8), (9, 6)]
