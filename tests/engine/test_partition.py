"""Partitions: per-key state, range keys, inner streams, global streams, purge, snapshots."""
from __future__ import annotations

from typing import Any

import pytest
from srota.engine import PlaybackClock, QueryNotExistError, SiddhiAppCreationError, SiddhiManager


def test_each_key_has_its_own_state(run_app):
    runtime, got = run_app("""
        define stream S (symbol string, price double);
        partition with (symbol of S) begin
            @info(name='q') from S#window.length(2) select symbol, sum(price) as total insert into Out;
        end;""")
    h = runtime.get_input_handler("S")
    for row in (["A", 1.0], ["B", 10.0], ["A", 2.0], ["A", 4.0], ["B", 20.0]):
        h.send(row)
    assert got.rows == [["A", 1.0], ["B", 10.0], ["A", 3.0], ["A", 6.0], ["B", 30.0]]


def test_a_query_inside_a_partition_takes_no_query_callback(run_app):
    """Siddhi 5.1.33's addCallback refuses it (QueryNotExistException: No query found with name: q);
    its output is reached through the stream it inserts into."""
    runtime, got = run_app("""
        define stream S (symbol string, price double);
        partition with (symbol of S) begin
            @info(name='q') from S select symbol, count() as n insert into Out;
        end;""")
    with pytest.raises(QueryNotExistError, match="inside a partition"):
        runtime.add_query_callback("q", lambda *args: None)
    h = runtime.get_input_handler("S")
    for s in ("A", "B", "A"):
        h.send([s, 1.0])
    assert got.rows == [["A", 1], ["B", 1], ["A", 2]]
    assert runtime.queries["q"].output.events_out == 3  # summed over the keys, for metrics


@pytest.mark.parametrize("reader", [
    "from B select s, v insert into Out;",
    "from W select s, v insert into Out;",
])
def test_a_partitioned_stream_no_query_reads_makes_no_key_instance(run_app, reader):
    """Siddhi 5.1.33 receives only the partitioned streams the partition's queries read: events
    of another make no instance.  Srota made one per key of A, and each of them then received
    the global stream B (or the window W): [x, 3] twice instead of nothing."""
    runtime, got = run_app(f"""
        define stream A (s string, v int); define stream B (s string, v int);
        define window W (s string, v int) length(2);
        from B insert into W;
        partition with (s of A) begin {reader} end;""")
    a, b = runtime.get_input_handler("A"), runtime.get_input_handler("B")
    a.send(["a", 1])
    a.send(["b", 2])
    b.send(["x", 3])
    assert got.rows == []


def test_range_partition_sends_to_every_matching_range(run_app):
    runtime, got = run_app("""
        define stream S (symbol string, volume long);
        partition with (volume >= 100 as 'large' or volume < 100 and volume >= 0 as 'small' or volume >= 0 as 'all' of S)
        begin
            from S select symbol, count() as n insert into Out;
        end;""")
    h = runtime.get_input_handler("S")
    h.send(["a", 150])
    h.send(["b", 50])
    h.send(["c", -1])  # matches no range: dropped
    assert got.rows == [["a", 1], ["a", 1], ["b", 1], ["b", 2]]


def test_inner_streams_are_local_and_global_streams_reach_every_key(run_app):
    runtime, got = run_app("""
        define stream S (symbol string, price double);
        define stream Reset (flag string);
        partition with (symbol of S) begin
            from S select symbol, price * 2 as price insert into #Doubled;
            from #Doubled#window.length(10) select symbol, sum(price) as total insert into Out;
            from Reset select flag as symbol, 0.0 as total insert into Out;
        end;""")
    h = runtime.get_input_handler("S")
    h.send(["A", 1.0])
    h.send(["B", 5.0])
    h.send(["A", 2.0])
    runtime.get_input_handler("Reset").send(["r"])
    assert got.rows == [["A", 2.0], ["B", 10.0], ["A", 6.0], ["r", 0.0], ["r", 0.0]]


def test_a_named_window_as_the_partition_key_stream_sends_each_key_its_events(run_app):
    # W's current and expired events go to their key's instance (tests/differential/recorded/
    # partition-of-named-window-*.json hold real Siddhi's answers)
    runtime, got = run_app("""
        @app:playback
        define stream S (symbol string, price double);
        define window W (symbol string, price double) length(2);
        from S insert into W;
        partition with (symbol of W) begin
            from W select symbol, count() as n insert all events into Out;
        end;""")
    h = runtime.get_input_handler("S")
    for i, row in enumerate((["A", 1.0], ["B", 2.0], ["A", 3.0], ["C", 4.0])):
        h.send(row, 1_700_000_000_000 + i)
    # A1 leaves at A3 (one chunk of A's: its last row), B2 at C4 (B's own chunk, then C's)
    assert got.rows == [["A", 1], ["B", 1], ["A", 1], ["B", 0], ["C", 1]]


def test_a_join_alone_reading_the_partition_key_window_makes_no_key(run_app):
    runtime, got = run_app("""
        @app:playback
        define stream S (symbol string, price double);
        define stream Q (symbol string, price double);
        define window W (symbol string, price double) length(3);
        from S insert into W;
        partition with (symbol of W) begin
            from W join Q#window.length(5) on Q.price > W.price select Q.symbol, W.price insert into Out;
        end;""")
    runtime.get_input_handler("Q").send(["Z", 10.0], 1_700_000_000_000)
    runtime.get_input_handler("S").send(["A", 1.0], 1_700_000_000_001)
    assert got.rows == [] and runtime.partitions[0].instances == {}


def test_purge_removes_idle_keys_and_keeps_active_ones():
    clock = PlaybackClock(0)
    runtime = SiddhiManager().create_siddhi_app_runtime("""
        define stream S (symbol string, price double);
        @purge(enable='true', interval='1 sec', idle.period='5 sec')
        partition with (symbol of S) begin
            from S#window.length(100) select symbol, sum(price) as total insert into Out;
        end;""", clock=clock)
    got = []
    runtime.add_callback("Out", lambda events: got.extend(list(e.data) for e in events))
    runtime.start()
    h = runtime.get_input_handler("S")
    partition = runtime.partitions[0]
    h.send(["idle", 1.0], timestamp=1_000)
    for t in range(1_000, 10_001, 1_000):
        h.send(["busy", 1.0], timestamp=t)
    # 'idle' saw nothing for more than 5 s: its instance and its elements are gone
    assert partition.keys() == ["busy"]
    assert not [eid for eid in runtime.context.elements if "/idle/" in eid]
    assert any("/busy/" in eid for eid in runtime.context.elements)
    h.send(["busy", 1.0], timestamp=10_500)
    h.send(["idle", 1.0], timestamp=10_600)
    assert got[-2:] == [["busy", 11.0], ["idle", 1.0]]  # busy kept its sum, idle starts over
    runtime.shutdown()


@pytest.mark.parametrize("query", [
    "from every e1=S[price > 10] -> not S[price > 100] for 5 sec select e1.symbol as s, e1.price as p insert",
    "from S#window.time(5 sec) select symbol, count() as n insert expired events",
    "from S#window.timeBatch(5 sec) select symbol, count() as n insert",
    "from S#window.time(5 sec) select symbol, count() as n output last every 4 sec insert",
])
def test_a_purged_key_s_timers_go_with_its_state(query):
    # Regression: a purged key's elements kept their timers in the app's scheduler, so its
    # absent state's wait, its window's expiry or its rate limiter's tick still fired after the
    # purge and output from the state that was gone.  Siddhi cleans every state of the key,
    # its schedulers' queues included.
    text = ("@app:playback define stream S (symbol string, price double); "
            "@purge(enable='true', interval='1 sec', idle.period='1 sec') "
            f"partition with (symbol of S) begin {query} into Out; end;")
    runtime = SiddhiManager().create_siddhi_app_runtime(text)
    got: list[Any] = []
    runtime.add_callback("Out", lambda events: got.extend(list(e.data) for e in events))
    runtime.start()
    h = runtime.get_input_handler("S")
    h.send(["idle", 20.0], timestamp=1_700_000_001_000)
    for t in range(2_000, 12_001, 1_000):
        h.send(["busy", 30.0], timestamp=1_700_000_000_000 + t)
    assert runtime.partitions[0].keys() == ["busy"]
    assert not [row for row in got if row[0] == "idle"]
    assert [row for row in got if row[0] == "busy"]  # (the key that stays still outputs)
    runtime.shutdown()


def test_memory_does_not_grow_with_keys_ever_seen():
    clock = PlaybackClock(0)
    runtime = SiddhiManager().create_siddhi_app_runtime("""
        define stream S (symbol string);
        @purge(enable='true', interval='1 sec', idle.period='2 sec')
        partition with (symbol of S) begin
            from S select symbol, count() as n insert into Out;
        end;""", clock=clock)
    runtime.start()
    h = runtime.get_input_handler("S")
    for i in range(500):
        h.send([f"k{i}"], timestamp=i * 100)
    partition = runtime.partitions[0]
    assert len(partition.keys()) <= 40
    assert len(runtime.context.elements) < 100
    runtime.shutdown()


def test_snapshot_restores_per_key_state():
    app = """
        define stream S (symbol string, price double);
        partition with (symbol of S) begin
            @info(name='q') from S select symbol, sum(price) as total insert into Out;
        end;"""
    first = SiddhiManager().create_siddhi_app_runtime(app)
    first.start()
    first.get_input_handler("S").send(["A", 1.0])
    first.get_input_handler("S").send(["B", 2.0])
    snap = first.snapshot()
    first.shutdown()
    second = SiddhiManager().create_siddhi_app_runtime(app)
    got = []
    second.add_callback("Out", lambda events: got.extend(list(e.data) for e in events))
    second.start()
    assert second.restore(snap) == []
    second.get_input_handler("S").send(["A", 10.0])
    second.get_input_handler("S").send(["B", 10.0])
    second.shutdown()
    assert got == [["A", 11.0], ["B", 12.0]]


@pytest.mark.parametrize("app", [
    "define stream S (a string); partition with (b of S) begin from S select a insert into O; end;",
    "define stream S (a string); partition with (a of X) begin from S select a insert into O; end;",
    "define stream S (a string); partition with (a of S) begin from #I select a insert into O; end;",
    "define stream S (a string); partition with (a of S) begin from S select x insert into O; end;",
])
def test_partition_creation_errors(app):
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(app)
