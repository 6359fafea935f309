"""Named windows: shared by the queries that insert into, read from and join with them."""
from __future__ import annotations

import pytest
from srota.engine import Event, SiddhiAppCreationError, SiddhiManager

APP = """
define stream S (symbol string, price double);
define window W (symbol string, price double) length(2) {output};
@info(name='in') from S insert into W;
@info(name='q') from W select symbol, price insert all events into Out;
"""


def test_readers_get_current_and_expired(run_app):
    runtime, got = run_app(APP.format(output="output all events"), stream=None, query="q")
    h = runtime.get_input_handler("S")
    for i in range(3):
        h.send([f"s{i}", float(i)])
    assert got.rows == [["s0", 0.0], ["s1", 1.0], ["s2", 2.0]]
    assert got.expired_rows == [["s0", 0.0]]


def test_output_current_events_hides_expired(run_app):
    runtime, got = run_app(APP.format(output="output current events"), stream=None, query="q")
    h = runtime.get_input_handler("S")
    for i in range(3):
        h.send([f"s{i}", float(i)])
    assert len(got.rows) == 3 and got.expired_rows == []


def test_window_is_shared_and_has_an_input_handler(run_app):
    runtime, got = run_app("define stream Check (symbol string);" + APP.format(output="") + """
        @info(name='j') from Check join W on Check.symbol == W.symbol
        select W.symbol as symbol, W.price as price insert into Joined;""", stream="Joined")
    runtime.get_input_handler("W").send(["direct", 5.0])  # straight into the window
    runtime.get_input_handler("S").send(["s", 1.0])
    runtime.get_input_handler("Check").send(["direct"])
    assert got.rows == [["direct", 5.0]]
    assert [e.data for e in runtime.query("from W select *")] == [("direct", 5.0), ("s", 1.0)]


def test_events_sent_straight_into_a_window_are_checked_and_kept_as_tuples(run_app):
    # (the sender check asked the window whether its receivers only read fields: it has none
    # such, it keeps the events)
    runtime, got = run_app(APP.format(output=""), stream=None, query="q")
    mutable = ["direct", 5.0]
    runtime.get_input_handler("W").send_events([Event(1_700_000_000_000, mutable),
                                                Event(1_700_000_000_001, ("expired", 6.0), 1)])
    mutable[0] = "changed"
    assert [e.data for e in runtime.query("from W select *")] == [("direct", 5.0), ("expired", 6.0)]
    assert got.rows == [["direct", 5.0], ["expired", 6.0]]


def test_aggregates_over_batch_window_reset(run_app):
    runtime, got = run_app("""
        define stream S (symbol string, price double);
        define window W (symbol string, price double) lengthBatch(2);
        from S insert into W;
        from W select sum(price) as total insert into Out;""")
    runtime.get_input_handler("S").send_events([Event(1, ["a", 1.0]), Event(2, ["b", 2.0])])
    runtime.get_input_handler("S").send_events([Event(3, ["c", 10.0]), Event(4, ["d", 20.0])])
    assert got.rows == [[3.0], [30.0]]


@pytest.mark.parametrize("app", [
    "define window W (a int) sum(a);",  # not a window
    "define window W (a int) length(2); define stream S (a int); from W#window.length(1) insert into O;",
    "define stream W (a int); define window W (a int) length(2);",
])
def test_named_window_creation_errors(app):
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(app)


def test_input_handler_of_a_named_window_sends_one_by_one():
    # Regression: the one-by-one send path once assumed every target was a stream junction.
    from srota.engine import SiddhiManager

    runtime = SiddhiManager().create_siddhi_app_runtime(
        "define window W (a int) length(2); from W select a insert into Out;")
    rows = []
    runtime.add_callback("Out", lambda evs: rows.extend(e.data for e in evs))
    runtime.start()
    runtime.get_input_handler("W").send([1])
    assert rows == [(1,)]
    runtime.shutdown()
