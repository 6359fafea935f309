"""The embedding API: callbacks, input handlers, errors, fault streams, snapshots."""
from __future__ import annotations

import logging
import threading
from typing import Any

import pytest
from srota.engine import (
    DefinitionNotExistError,
    Event,
    QueryNotExistError,
    SiddhiAppCreationError,
    SiddhiManager,
    SiddhiParserError,
)

APP = """
@app:name('T')
define stream S (symbol string, price double, volume long);
@info(name='q1') from S[price > 10] select symbol, price insert into Mid;
@info(name='q2') from Mid select symbol insert into Out;
"""


def test_chained_queries_and_callbacks(run_app):
    runtime, got = run_app(APP)
    seen = []
    runtime.add_query_callback("q1", lambda ts, ins, rem: seen.append((ts, [e.data for e in ins], rem)))
    h = runtime.get_input_handler("S")
    h.send(["IBM", 75.6, 100], timestamp=10)
    h.send(["X", 1.0, 1], timestamp=11)
    assert got.rows == [["IBM"]]
    assert seen == [(10, [("IBM", 75.6)], None)]


def test_send_events_is_one_chunk(run_app):
    runtime, got = run_app(APP)
    runtime.get_input_handler("S").send_events([Event(1, ["A", 11.0, 1]), Event(2, ["B", 12.0, 1])])
    assert got.chunks == [2]
    assert [e.timestamp for e in got.events] == [1, 2]


def test_send_events_keeps_its_own_tuples_and_current_events():
    # The engine copies what a sender could still change (list data) or did not mean to send
    # as current (an expired event); tuples of current events go in as they are.
    runtime = SiddhiManager().create_siddhi_app_runtime("define stream S (symbol string, price double);")
    seen: list[Event] = []
    runtime.add_callback("S", seen.extend)
    runtime.start()
    ts = 1_700_000_000_000
    mutable = ["A", 11.0]
    expired = Event(ts + 1, ("B", 12.0), 1)
    kept = Event(ts + 2, ("C", 13.0))
    for chunk in ([Event(ts, mutable), expired, kept], [kept], [expired]):
        runtime.get_input_handler("S").send_events(chunk)
    mutable[0] = "changed"
    assert [(e.timestamp, e.data, e.type) for e in seen] == [
        (ts, ("A", 11.0), 0), (ts + 1, ("B", 12.0), 0), (ts + 2, ("C", 13.0), 0),
        (ts + 2, ("C", 13.0), 0), (ts + 1, ("B", 12.0), 0)]
    assert seen[2] is kept and expired.type == 1  # the sender's events are not changed
    runtime.shutdown()


SENDERS_APP = """
define stream S (symbol string, price double, volume long);
@info(name='q1') from S[price > 10] select symbol, price * volume as value insert into Out;
@info(name='q2') from S select symbol, volume insert into Out2;
"""


def _senders_events(ts: int) -> list[Event]:
    return [Event(ts, ["A", 11.0, 2]), Event(ts + 1, ("B", 12.0, 3), 1), Event(ts + 2, ("C", 9.0, 4)),
            Event(ts + 3, ("D", 13.0, 5))]


def _outputs_of(app: str, check_senders: bool) -> tuple[bool, list[tuple[int, tuple, int]]]:
    runtime = SiddhiManager().create_siddhi_app_runtime(app)
    got: list[tuple[int, tuple, int]] = []
    for stream in ("Out", "Out2"):
        runtime.add_callback(stream, lambda evs: got.extend((e.timestamp, e.data, e.type) for e in evs))
    if check_senders:
        runtime.add_callback("S", lambda evs: None)  # a receiver that gets the events themselves
    runtime.start()
    checks = runtime.context.junctions["S"].checks_senders
    handler = runtime.get_input_handler("S")
    ts = 1_700_000_000_000
    handler.send_events(_senders_events(ts))
    handler.send_chunks([_senders_events(ts + 10), _senders_events(ts + 20)])
    runtime.shutdown()
    return checks, got


def test_a_stream_read_only_by_select_loops_takes_senders_events_unchecked_with_the_same_outputs():
    # The sender check (a list for a tuple, an expired event made current) costs a quarter
    # of a filter's time; where every receiver reads fields and makes its own events it
    # changes no output, so it is left out there.
    unchecked, got = _outputs_of(SENDERS_APP, check_senders=False)
    checked, want = _outputs_of(SENDERS_APP, check_senders=True)

    assert (unchecked, checked) == (False, True)
    assert got == want and len(got) == 3 * 7
    assert all(type(data) is tuple and kind == 0 for _, data, kind in got)


@pytest.mark.parametrize("query", [
    "from S select * insert into Out;",  # passes the sender's data tuple on
    "from S#window.length(2) select symbol, price insert all events into Out;",  # keeps events
    "from S[price > 10]#window.length(2) select symbol insert into Out;",
    "from S as a join S#window.length(1) as b on a.symbol == b.symbol select a.symbol insert into Out;",
    "from every e1=S -> e2=S[price > e1.price] select e1.symbol insert into Out;",
    "partition with (symbol of S) begin from S select symbol, price insert into Out; end;",
    "from S select symbol, price insert expired events into Out;",
])
def test_the_sender_check_stays_where_a_receiver_keeps_or_passes_on_events(query):
    runtime = SiddhiManager().create_siddhi_app_runtime(
        "define stream S (symbol string, price double, volume long);\n" + query)
    got: list[Event] = []
    runtime.add_callback("Out", got.extend)
    runtime.start()
    assert runtime.context.junctions["S"].checks_senders
    runtime.get_input_handler("S").send_events([Event(1_700_000_000_000, ["A", 11.0, 2])])
    runtime.shutdown()
    assert all(type(e.data) is tuple for e in got)


def test_an_async_stream_keeps_the_sender_check_for_the_events_it_buffers():
    # (its only receiver reads fields, but the buffer keeps the sender's events until the
    # worker takes them: a list the sender changes meanwhile must not change the output)
    runtime = SiddhiManager().create_siddhi_app_runtime(
        "@Async(buffer.size='64', workers='1') define stream S (symbol string, price double, volume long);\n"
        "from S select symbol, price * volume as value insert into Out;")
    got: list[tuple] = []
    runtime.add_callback("Out", lambda evs: got.extend(e.data for e in evs))
    runtime.start()
    mutable = ["A", 11.0, 2]
    with runtime.context.lock:  # the worker waits for the app lock: the event stays buffered
        runtime.get_input_handler("S").send_events([Event(1_700_000_000_000, mutable)])
        mutable[:] = ["changed", 1.0, 1]
    runtime.drain()
    runtime.shutdown()
    assert got == [("A", 22.0)]


def test_the_sender_check_comes_back_with_a_receiver_that_gets_the_events_themselves():
    runtime = SiddhiManager().create_siddhi_app_runtime(SENDERS_APP)
    runtime.start()
    junction = runtime.context.junctions["S"]
    assert not junction.checks_senders
    seen: list[Event] = []
    runtime.add_callback("S", seen.extend)
    assert junction.checks_senders
    runtime.get_input_handler("S").send_events([Event(1_700_000_000_000, ["A", 11.0, 2])])
    assert [(e.data, e.type) for e in seen] == [(("A", 11.0, 2), 0)]
    junction.unsubscribe(junction.receivers[junction.owners.index(None)])  # the callback
    assert not junction.checks_senders
    runtime.shutdown()


def test_a_debugger_sees_checked_events_on_a_stream_read_only_by_select_loops():
    from srota import QueryTerminal

    runtime = SiddhiManager().create_siddhi_app_runtime(SENDERS_APP)
    debugger = runtime.debug()
    seen: list[tuple[str, Any, int]] = []
    debugger.acquire_break_point("q1", QueryTerminal.IN)

    def on_break(events: Any, query: str, terminal: Any, dbg: Any) -> None:
        seen.extend((query, e.data, e.type) for e in events)
        dbg.play()

    debugger.set_debugger_callback(on_break)
    runtime.get_input_handler("S").send_events([Event(1_700_000_000_000, ["A", 11.0, 2]),
                                                Event(1_700_000_000_001, ("B", 12.0, 3), 1)])
    runtime.shutdown()
    assert seen == [("q1", ("A", 11.0, 2), 0), ("q1", ("B", 12.0, 3), 0)]


def test_a_failing_senders_event_on_an_unchecked_stream_is_routed_as_a_tuple(run_app):
    runtime, got = run_app("""
    @OnError(action='STREAM')
    define stream S (symbol string, price double, volume long);
    from S select symbol, price / volume as v insert into Out;
    """)
    faults: list[Any] = []
    runtime.add_callback("!S", lambda evs: faults.extend(e.data for e in evs))
    handler = runtime.get_input_handler("S")
    assert not runtime.context.junctions["S"].checks_senders
    handler.send_events([Event(1_700_000_000_000, ["A", 11.0, 2]), Event(1_700_000_000_001, ["B", 12.0, "x"])])
    assert got.rows == [["A", 5.5]]
    assert len(faults) == 1 and faults[0][:3] == ("B", 12.0, "x") and isinstance(faults[0][3], TypeError)


def test_inferred_stream_definition():
    runtime = SiddhiManager().create_siddhi_app_runtime(APP)
    out = runtime.stream_definitions["Mid"]
    assert [(a.name, a.type.value) for a in out.attributes] == [("symbol", "string"), ("price", "double")]


def test_unknown_query_and_stream_raise():
    runtime = SiddhiManager().create_siddhi_app_runtime(APP)
    with pytest.raises(QueryNotExistError):
        runtime.add_query_callback("nope", lambda *a: None)
    with pytest.raises(DefinitionNotExistError):
        runtime.add_callback("Nope", lambda e: None)
    with pytest.raises(DefinitionNotExistError):
        runtime.get_input_handler("Nope")


def test_syntax_error_has_line_column_and_caret():
    with pytest.raises(SiddhiParserError) as info:
        SiddhiManager().create_siddhi_app_runtime("define stream S (a int);\nfrom S selct a insert into O;")
    err = info.value
    assert err.line == 2 and err.column is not None
    assert "^" in str(err)
    assert isinstance(err, SiddhiAppCreationError)


def test_duplicate_definition_with_another_schema_is_rejected():
    with pytest.raises(SiddhiAppCreationError, match="already defined"):
        SiddhiManager().create_siddhi_app_runtime("define stream S (a int); define stream S (a long);")


@pytest.mark.parametrize("app", [
    "define table T (a int, b string); @PrimaryKey('a') define table T (a int, b string);",
    "@PrimaryKey('a') define table T (a int, b string); define table T (a int, b string);",
    "define table T (a int, b string); @Index('a') define table T (a int, b string);",
    "@PrimaryKey('a') @Index('b') define table T (a int, b string); "
    "@Index('b') @PrimaryKey('a') define table T (a int, b string);",
    "define window W (a int) length(2); define window W (a int) length(2);",
    "define stream S (a int); define aggregation A from S select sum(a) as t aggregate every sec...min; "
    "define aggregation A from S select sum(a) as t aggregate every sec...min;",
])
def test_a_table_defined_again_with_other_annotations_or_a_window_or_aggregation_twice_is_refused(app):
    """Siddhi 5.1.33 (SiddhiApp.checkDuplicateDefinition): a table defined again must equal the first,
    annotations and their order included; a window or an aggregation is never defined twice."""
    with pytest.raises(SiddhiAppCreationError, match="already defined"):
        SiddhiManager().create_siddhi_app_runtime(app)


@pytest.mark.parametrize("app", [
    "define table T (a int, b string); define table T (a int, b string);",
    "@PrimaryKey('a') define table T (a int, b string); @PrimaryKey('a') define table T (a int, b string);",
])
def test_the_same_table_defined_twice_is_one_table(app):
    runtime = SiddhiManager().create_siddhi_app_runtime(app)
    assert list(runtime.tables) == ["T"]


@pytest.mark.parametrize("app", [
    "define stream S (a int, b string); define stream O (x int, y string); from S select a, b insert into O;",
    "define stream S (a int, b int); define stream O (b int, a int); from S select a, b insert into O;",
    "define stream S (a int, b string); from S select a, b insert into O; from S select a as x, b insert into O;",
    "define stream S (a int, b int); define table T (b int, a int); from S select a, b insert into T;",
    "define stream S (a int, b string); define table T (a int, b string); "
    "from S select a as x, b update or insert into T set T.b = b on T.a == x;",
    "define stream S (a int, b string); define window W (x int, y string) length(2); from S select a, b insert into W;",
    "define stream S (a int, b string); define stream O (x int, y string); "
    "partition with (b of S) begin from S select a, b insert into O; end;",
    "define stream S (a int, b string); partition with (b of S) begin from S select a, b insert into #I; "
    "from S select a as x, b insert into #I; from #I select a insert into O; end;",
])
def test_an_output_must_have_the_names_of_the_definition_it_inserts_into(app):
    """Siddhi 5.1.33's validateOutputStream compares names and types (DuplicateDefinitionException),
    although the events are written by position."""
    with pytest.raises(SiddhiAppCreationError, match="does not match the definition of"):
        SiddhiManager().create_siddhi_app_runtime(app)


@pytest.mark.parametrize("app", [
    "define stream S (a int, b string); define table T (a int, b string); "
    "from S select a as x, b update T set T.b = b on T.a == x;",  # an update inserts nothing
    "define stream S (a int, b string); define table T (a int, b string); from S select a as x delete T on T.a == x;",
])
def test_an_update_or_delete_output_may_name_its_own_attributes(app):
    SiddhiManager().create_siddhi_app_runtime(app).shutdown()


def test_insert_into_existing_stream_must_match_its_schema():
    with pytest.raises(SiddhiAppCreationError, match="does not match"):
        SiddhiManager().create_siddhi_app_runtime(
            "define stream S (a int); define stream O (a string); from S select a insert into O;")


FAULT_APP = """
@OnError(action='STREAM')
define stream S (symbol string, volume long);
from S[custom:fault() > volume] select symbol insert into Out;
from !S select symbol, _error insert into Faults;
"""


def test_error_in_query_goes_to_fault_stream(run_app):
    runtime, got = run_app(FAULT_APP, stream="Faults")
    runtime.get_input_handler("S").send(["IBM", 5])
    assert len(got.rows) == 1
    symbol, error = got.rows[0]
    assert symbol == "IBM" and isinstance(error, RuntimeError)


def test_error_in_query_is_logged_and_dropped_by_default(run_app, caplog):
    runtime, got = run_app(FAULT_APP.replace("@OnError(action='STREAM')", "").replace(
        "from !S select symbol, _error insert into Faults;", ""))
    with caplog.at_level(logging.ERROR):
        runtime.get_input_handler("S").send(["IBM", 5])
        runtime.get_input_handler("S").send(["IBM", 6])  # the runtime goes on
    assert got.rows == []
    assert "error processing events of stream S" in caplog.text
    assert runtime.context.errors["S"] == 2


def test_sends_from_many_threads_are_serialised(run_app):
    runtime, got = run_app(APP)
    h = runtime.get_input_handler("S")

    def send() -> None:
        for i in range(500):
            h.send(["A", 20.0, i])

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got.rows) == 2000


def test_snapshot_round_trip_restores_matching_elements():
    app = ("define stream S (k string, v long);"
           "@info(name='q') from S select k, sum(v) as total group by k insert into Out;")
    first = SiddhiManager().create_siddhi_app_runtime(app)
    first.start()
    first.get_input_handler("S").send(["a", 5])
    data = first.snapshot()
    first.shutdown()

    second = SiddhiManager().create_siddhi_app_runtime(app)
    rows = []
    second.add_callback("Out", lambda evs: rows.extend(e.data for e in evs))
    assert second.restore(data) == []
    second.start()
    second.get_input_handler("S").send(["a", 1])
    assert rows == [("a", 6)]

    changed = SiddhiManager().create_siddhi_app_runtime(app.replace("sum(v)", "count()"))
    assert changed.restore(data) == ["q/selector"]


def test_app_async_is_rejected_with_advice():
    with pytest.raises(SiddhiAppCreationError, match="@Async"):
        SiddhiManager().create_siddhi_app_runtime("@app:async define stream S (a int);")


def test_async_stream_processes_everything_in_order(run_app):
    import time

    runtime, got = run_app("@Async(buffer.size='4', workers='2', batch.size.max='3')"
                           "define stream S (a int); from S select a insert into Mid; "
                           "from Mid select a insert into Out;")
    h = runtime.get_input_handler("S")
    for i in range(200):
        h.send([i])
    deadline = time.monotonic() + 5
    while len(got.rows) < 200 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [r[0] for r in got.rows] == list(range(200))


def test_float_attributes_are_rounded_to_32_bits_on_input(run_app):
    # 55.6f == 55.6f holds in Java; a table join on a float key must see the same value
    runtime, got = run_app("define stream S (p float); from S[p == 55.6f] select p insert into Out;")
    runtime.get_input_handler("S").send([55.6])
    runtime.get_input_handler("S").send_events([Event(1, [55.6])])
    assert len(got.rows) == 2


def test_an_event_short_of_values_is_refused_with_the_counts(run_app):
    """It was an IndexError from the generated float rounding."""
    runtime, got = run_app("define stream S (s string, p float, v long); from S select s insert into Out;")
    with pytest.raises(ValueError, match="an event of stream 'S' has 2 value\\(s\\), the stream has 3 attributes"):
        runtime.get_input_handler("S").send(["WSO2", 55.6], timestamp=1_700_000_000_000)
    assert got.rows == []


def test_source_or_sink_without_a_type_is_rejected():
    with pytest.raises(SiddhiAppCreationError, match="needs a type"):
        SiddhiManager().create_siddhi_app_runtime("@sink(name='log') define stream S (a int);")


def test_drain_processes_what_async_buffers_hold(run_app):
    runtime, got = run_app("@Async(buffer.size='1000') define stream S (a int); from S select a insert into Out;")
    runtime.context.junctions["S"].async_buffer.stop()  # no workers: only drain() can process
    h = runtime.get_input_handler("S")
    for i in range(10):
        h.send([i])
    assert got.rows == []
    assert runtime.drain() == 10
    assert [r[0] for r in got.rows] == list(range(10))


def test_a_query_filling_an_async_stream_drains_it_itself_instead_of_deadlocking(run_app):
    # The query holds the app lock while it inserts; the async workers need that lock, so a
    # full buffer must be drained by the inserting thread (no private lock API involved).
    runtime, got = run_app(
        "define stream S (a int); @Async(buffer.size='2', workers='1') define stream T (a int);"
        "from S select a insert into T; from T select a insert into Out;")
    from srota.engine import Event
    runtime.get_input_handler("S").send_events([Event(1_700_000_000_000 + i, [i]) for i in range(50)])
    runtime.drain()
    assert sorted(r[0] for r in got.rows) == list(range(50))


def test_row_groups_with_their_own_timestamps_keep_them_and_drive_a_playback_clock():
    # A format that carries its events' times (the binary mapper's TimedRows) sends them;
    # under @app:playback the clock follows them, so a time window expires by them.
    from srota.mappers import TimedRows

    ts = 1_700_000_000_000
    app = """@app:playback
    define stream S (n int);
    from S#window.time(1 sec) select sum(n) as total insert all events into Out;
    """
    runtime = SiddhiManager().create_siddhi_app_runtime(app)
    got: list[tuple[int, tuple, bool]] = []
    runtime.add_callback("Out", lambda evs: got.extend((e.timestamp, tuple(e.data), e.is_expired) for e in evs))
    runtime.start()
    handler = runtime.get_input_handler("S")
    handler.send_row_groups([TimedRows([(1,), (2,)], [ts, ts + 10]), [(5,)]], ts + 20)
    handler.send_row_groups([TimedRows([(4,)], [ts + 5_000])])
    runtime.shutdown()
    # one row per chunk (Siddhi's batch semantics); at ts + 5000 the three expired first
    assert got == [(ts + 10, (3,), False), (ts + 20, (8,), False), (ts + 5_000, (None,), False),
                   (ts + 5_000, (4,), False)]


def test_row_groups_whose_timestamps_do_not_match_their_rows_are_refused():
    from srota.mappers import TimedRows

    runtime = SiddhiManager().create_siddhi_app_runtime("define stream S (n int);")
    runtime.start()
    with pytest.raises(ValueError, match="2 rows came with 1 timestamps"):
        runtime.get_input_handler("S").send_row_groups([TimedRows([(1,), (2,)], [1_700_000_000_000])])
    runtime.shutdown()


def test_extension_properties_are_text_by_extension_for_later_apps():
    manager = SiddhiManager()
    manager.set_extension_properties("RDBMS:cud", {"perform.CUD.operations": True, "n": 3})
    manager.set_extension_properties("rdbms:cud", {"allow.null.params.with.CUD": False})
    ctx = manager.create_siddhi_app_runtime("define stream S (a int);").context
    assert ctx.extension_property("rdbms:CUD", "perform.CUD.operations", "false") == "true"
    assert ctx.extension_property("rdbms:cud", "n", "") == "3"
    assert ctx.extension_property("rdbms:cud", "allow.null.params.with.CUD", "true") == "false"
    assert ctx.extension_property("str:concat", "x", "default") == "default"
    with pytest.raises(ValueError, match="namespace:name"):
        manager.set_extension_properties("cud", {})
