"""Partition routing paths: the router's fused loop must behave as the key instances' own
processors do (same rows, same chunks, same order, same state for snapshots and purge).

Each app runs twice on the same input, with fusion on and off (``engine.partition.FUSE``),
and everything observable is compared: stream callbacks (chunk by chunk), query callbacks,
downstream queries that see the partition's output chunks, and the state after a restore.
"""
from __future__ import annotations

import logging
import random
from typing import Any

import pytest
from srota.engine import Event, PlaybackClock, SiddhiManager
from srota.engine import partition as partition_module

STREAM = "define stream S (symbol string, price double, volume long);\n"

FUSABLE = {
    "length_avg": STREAM + """
        partition with (symbol of S) begin
            @info(name='q') from S#window.length(3) select symbol, avg(price) as ap insert into Out;
        end;""",
    "length_many_aggregates": STREAM + """
        partition with (symbol of S) begin
            @info(name='q') from S#window.length(4)
            select symbol, sum(price) as total, count() as n, max(volume) as hi, min(price) as lo,
                   avg(volume) as av, price * 2 as doubled, distinctCount(volume) as dc
            insert into Out;
        end;""",
    # every aggregator takes the window's step in one statement (DeferredParts.replace)
    "length_sliding_sums": STREAM + """
        partition with (symbol of S) begin
            @info(name='q') from S#window.length(3)
            select symbol, sum(price) as total, count() as n, avg(volume) as av, sum(volume) as v,
                   count(price) as np, avg(price) as ap
            insert into Out;
        end;""",
    # an argument that is an expression: remove and add stay apart
    "length_expression_argument": STREAM + """
        partition with (symbol of S) begin
            @info(name='q') from S#window.length(3) select symbol, sum(price * 2) as t insert into Out;
        end;""",
    "length_one": STREAM + """
        partition with (symbol of S) begin
            @info(name='q') from S#window.length(1) select symbol, sum(volume) as v insert into Out;
        end;""",
    "no_window": STREAM + """
        partition with (symbol of S) begin
            @info(name='q') from S select symbol, sum(price) as total, count() as n insert into Out;
        end;""",
    "key_expression": STREAM + """
        partition with (volume % 3 of S) begin
            @info(name='q') from S#window.length(5) select volume % 3 as k, sum(volume) as v
            insert into Out;
        end;""",
    # playback: the expired events the window makes carry the app's time
    "timestamp_in_aggregate": "@app:playback\n" + STREAM + """
        partition with (symbol of S) begin
            @info(name='q') from S#window.length(2)
            select symbol, sum(volume) as v, max(eventTimestamp()) as t insert into Out;
        end;""",
    "downstream_sees_run_chunks": STREAM + """
        partition with (symbol of S) begin
            @info(name='q') from S#window.length(3) select symbol, sum(price) as total insert into Mid;
        end;
        @info(name='after') from Mid select count() as n, sum(total) as t insert into Out;""",
}

NOT_FUSED = {
    "two_readers": STREAM + """
        partition with (symbol of S) begin
            @info(name='q') from S#window.length(3) select symbol, sum(price) as total insert into Out;
            from S select symbol, price insert into Other;
        end;""",
    "group_by": STREAM + """
        partition with (symbol of S) begin
            @info(name='q') from S#window.length(3) select symbol, volume, count() as n
            group by volume insert into Out;
        end;""",
    "filter": STREAM + """
        partition with (symbol of S) begin
            @info(name='q') from S[price > 100]#window.length(3) select symbol, sum(price) as t
            insert into Out;
        end;""",
    "expired_output": STREAM + """
        partition with (symbol of S) begin
            @info(name='q') from S#window.length(2) select symbol, sum(price) as t
            insert all events into Out;
        end;""",
    "stateless": STREAM + """
        partition with (symbol of S) begin
            @info(name='q') from S[volume > 10] select symbol, price * volume as value insert into Out;
        end;""",
}


def _data(n: int, seed: int) -> list[tuple[Any, ...]]:
    """Rows with runs of equal symbols, a few null keys and null prices."""
    rnd = random.Random(seed)
    rows = []
    symbol = "A"
    for _ in range(n):
        if rnd.random() < 0.6:
            symbol = rnd.choice(["A", "B", "C", "D", None] if rnd.random() < 0.1 else ["A", "B", "C", "D"])
        price = None if rnd.random() < 0.05 else round(rnd.uniform(50, 200), 2)
        rows.append((symbol, price, rnd.randint(1, 30)))
    return rows


def _chunks(rows: list[tuple[Any, ...]], seed: int) -> list[list[tuple[Any, ...]]]:
    rnd = random.Random(seed)
    out = []
    i = 0
    while i < len(rows):
        size = rnd.choice([1, 1, 2, 3, 7, 20])
        out.append(rows[i:i + size])
        i += size
    return out


def _run(app: str, chunks: list[list[tuple[Any, ...]]], fuse: bool, monkeypatch: pytest.MonkeyPatch,
         snapshot_at: int | None = None) -> dict[str, Any]:
    monkeypatch.setattr(partition_module, "FUSE", fuse)
    manager = SiddhiManager()
    runtime = manager.create_siddhi_app_runtime(app)
    seen: dict[str, Any] = {"out": [], "query": [], "fused": False}

    def wire(rt: Any) -> None:
        rt.add_callback("Out", lambda evs: seen["out"].append([(e.timestamp, tuple(e.data), e.type) for e in evs]))
        # (the partitioned query's own callbacks: add_query_callback refuses a query inside a
        # partition, as Siddhi does, but they show each key's chunks and expired events)
        rt.queries["q"].add_callback(lambda ts, cur, exp: seen["query"].append(
            (ts, [tuple(e.data) for e in cur or ()], [tuple(e.data) for e in exp or ()])))
        rt.start()

    wire(runtime)
    ts = 1_000
    for n, chunk in enumerate(chunks):
        if snapshot_at is not None and n == snapshot_at:
            snap = runtime.snapshot()
            runtime.shutdown()
            runtime = manager.create_siddhi_app_runtime(app)
            wire(runtime)
            assert runtime.restore(snap) == []
        handler = runtime.get_input_handler("S")
        if len(chunk) == 1:
            handler.send(chunk[0], timestamp=ts)
            ts += 1
        else:
            events = []
            for row in chunk:
                events.append(Event(ts, row))
                ts += 1
            handler.send_events(events)
        if n == len(chunks) // 2:
            # a query callback added midway reaches the instances that exist and new ones
            for p in runtime.partitions:
                seen["fused"] |= any(r[0] == partition_module._FUSED for recs in p._records.values()
                                     for r in recs.values())
    for p in runtime.partitions:
        seen["fused"] |= any(r[0] == partition_module._FUSED for recs in p._records.values() for r in recs.values())
    runtime.shutdown()
    return seen


@pytest.mark.parametrize("name", sorted(FUSABLE))
@pytest.mark.parametrize("seed", [1, 2])
def test_fused_router_matches_the_instances(name: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = _chunks(_data(400, seed), seed)
    fused = _run(FUSABLE[name], chunks, True, monkeypatch)
    plain = _run(FUSABLE[name], chunks, False, monkeypatch)
    assert fused["fused"] and not plain["fused"]
    assert fused["out"] and fused["out"] == plain["out"]
    assert fused["query"] == plain["query"]


@pytest.mark.parametrize("name", sorted(NOT_FUSED))
def test_other_queries_keep_their_processors(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = _chunks(_data(200, 3), 3)
    routed = _run(NOT_FUSED[name], chunks, True, monkeypatch)
    plain = _run(NOT_FUSED[name], chunks, False, monkeypatch)
    assert not routed["fused"]
    assert routed["out"] == plain["out"]
    assert routed["query"] == plain["query"]


@pytest.mark.parametrize("name", ["length_avg", "length_many_aggregates", "no_window"])
def test_fused_state_survives_snapshot_and_restore(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = _chunks(_data(300, 5), 5)
    whole = _run(FUSABLE[name], chunks, True, monkeypatch)
    restored = _run(FUSABLE[name], chunks, True, monkeypatch, snapshot_at=len(chunks) // 3)
    plain = _run(FUSABLE[name], chunks, False, monkeypatch, snapshot_at=len(chunks) // 3)
    assert restored["fused"]
    assert restored["out"] == whole["out"] == plain["out"]


def test_rows_of_runs_in_arrival_order() -> None:
    runtime = SiddhiManager().create_siddhi_app_runtime(FUSABLE["length_avg"])
    chunks: list[list[tuple[Any, ...]]] = []
    runtime.add_callback("Out", lambda evs: chunks.append([tuple(e.data) for e in evs]))
    runtime.start()
    h = runtime.get_input_handler("S")
    h.send_events([Event(1, ("A", 1.0, 1)), Event(2, ("A", 3.0, 1)), Event(3, ("B", 10.0, 1)),
                   Event(4, ("A", 5.0, 1)), Event(5, (None, 7.0, 1)), Event(6, ("B", 20.0, 1))])
    h.send_events([Event(7, ("A", 7.0, 1)), Event(8, ("A", 9.0, 1))])
    runtime.shutdown()
    # one chunk per run of a key, the row of the run's last event; the null key is dropped
    assert chunks == [[("A", 2.0)], [("B", 10.0)], [("A", 3.0)], [("B", 15.0)], [("A", 7.0)]]
    assert runtime.partitions[0]._fusions


@pytest.mark.parametrize("fuse", [True, False])
def test_purged_keys_start_over(fuse: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(partition_module, "FUSE", fuse)
    clock = PlaybackClock(0)
    runtime = SiddhiManager().create_siddhi_app_runtime(STREAM + """
        @purge(enable='true', interval='1 sec', idle.period='3 sec')
        partition with (symbol of S) begin
            from S#window.length(10) select symbol, sum(volume) as v insert into Out;
        end;""", clock=clock)
    got: list[tuple[Any, ...]] = []
    runtime.add_callback("Out", lambda evs: got.extend(tuple(e.data) for e in evs))
    runtime.start()
    h = runtime.get_input_handler("S")
    h.send_events([Event(1_000, ("idle", 1.0, 5)), Event(1_000, ("busy", 1.0, 1))])
    for t in range(2_000, 8_001, 1_000):
        h.send(("busy", 1.0, 1), timestamp=t)
    assert runtime.partitions[0].keys() == ["busy"]
    h.send_events([Event(8_500, ("idle", 1.0, 2)), Event(8_500, ("busy", 1.0, 1))])
    runtime.shutdown()
    assert got[-2:] == [("idle", 2), ("busy", 9)]
    assert bool(runtime.partitions[0]._fusions) is fuse


def test_errors_drop_the_run_as_the_instance_junction_would(caplog: pytest.LogCaptureFixture,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    results = {}
    for fuse in (True, False):
        monkeypatch.setattr(partition_module, "FUSE", fuse)
        runtime = SiddhiManager().create_siddhi_app_runtime(FUSABLE["length_avg"])
        got: list[tuple[Any, ...]] = []
        calls: list[int] = []

        def on_query(ts: int, cur: Any, exp: Any, calls: list[int] = calls) -> None:
            calls.append(ts)
            if len(calls) == 2:
                raise RuntimeError("callback failed")

        runtime.queries["q"].add_callback(on_query)  # (see wire() above)
        runtime.add_callback("Out", lambda evs, got=got: got.extend(tuple(e.data) for e in evs))
        runtime.start()
        with caplog.at_level(logging.ERROR, logger="srota.engine"):
            runtime.get_input_handler("S").send_events(
                [Event(1, ("A", 1.0, 1)), Event(2, ("B", 2.0, 1)), Event(3, ("A", 3.0, 1))])
        runtime.shutdown()
        results[fuse] = (got, calls)
    assert results[True] == results[False]
    assert results[True][0] == [("A", 1.0), ("A", 2.0)]  # B's run failed in the callback
    assert "callback failed" in caplog.text


@pytest.mark.parametrize("fuse", [True, False])
def test_fused_query_inserting_into_a_table(fuse: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(partition_module, "FUSE", fuse)
    runtime = SiddhiManager().create_siddhi_app_runtime(STREAM + """
        define table T (symbol string, total long);
        partition with (symbol of S) begin
            from S#window.length(2) select symbol, sum(volume) as total insert into T;
        end;""")
    runtime.start()
    runtime.get_input_handler("S").send_events(
        [Event(1, ("A", 1.0, 1)), Event(2, ("A", 1.0, 2)), Event(3, ("B", 1.0, 5)), Event(4, ("A", 1.0, 4))])
    rows = sorted(tuple(e.data) for e in runtime.query("from T select symbol, total"))
    runtime.shutdown()
    assert rows == [("A", 3), ("A", 6), ("B", 5)]
    assert bool(runtime.partitions[0]._fusions) is fuse


# ---------------------------------------------------------------------------- merged rows
def _run_merged(app: str, chunks: list[list[tuple[Any, ...]]], fuse: bool, monkeypatch: pytest.MonkeyPatch,
                merged: bool = True, sensitive_stream: str | None = None) -> dict[str, Any]:
    """Like :func:`_run`, without a query callback: ``Out``'s callback takes merged chunks
    (``merged``), and ``sensitive_stream`` (if any) has a callback that does not."""
    monkeypatch.setattr(partition_module, "FUSE", fuse)
    runtime = SiddhiManager().create_siddhi_app_runtime(app)
    seen: dict[str, Any] = {"out": [], "other": []}
    runtime.add_callback("Out", lambda evs: seen["out"].append([(e.timestamp, tuple(e.data)) for e in evs]),
                         merged_chunks=merged)
    if sensitive_stream is not None:
        runtime.add_callback(sensitive_stream,
                             lambda evs: seen["other"].append([(e.timestamp, tuple(e.data)) for e in evs]))
    runtime.start()
    handler = runtime.get_input_handler("S")
    ts = 1_000
    for chunk in chunks:
        events = []
        for row in chunk:
            events.append(Event(ts, row))
            ts += 1
        handler.send_events(events)
    seen["events_out"] = runtime.queries["q"].output.events_out
    runtime.shutdown()
    return seen


@pytest.mark.parametrize("name", ["length_avg", "length_many_aggregates", "no_window", "key_expression"])
def test_fused_rows_merge_where_nothing_downstream_tells(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = _chunks(_data(400, 7), 7)
    merged = _run_merged(FUSABLE[name], chunks, True, monkeypatch)
    plain = _run_merged(FUSABLE[name], chunks, False, monkeypatch)
    # the same rows in the same order and the same count; the fused router hands on fewer chunks
    assert [r for c in merged["out"] for r in c] == [r for c in plain["out"] for r in c]
    assert len(merged["out"]) < len(plain["out"])
    assert merged["events_out"] == plain["events_out"] == sum(map(len, plain["out"]))
    # a callback that wants the chunks as made gets them as the instances make them
    kept = _run_merged(FUSABLE[name], chunks, True, monkeypatch, merged=False)
    assert kept["out"] == plain["out"]


def test_no_merging_once_a_key_instance_reads_the_target(monkeypatch: pytest.MonkeyPatch) -> None:
    # every key's instance reads Out (a global stream): Out stops taking merged chunks as soon
    # as the first key's instance exists, in the middle of the router's first chunk
    app = STREAM + """
        partition with (symbol of S) begin
            @info(name='q') from S#window.length(3) select symbol, sum(price) as total insert into Out;
            from Out select symbol, total insert into Echo;
        end;"""
    chunks = _chunks(_data(300, 11), 11)
    fused = _run_merged(app, chunks, True, monkeypatch, sensitive_stream="Echo")
    plain = _run_merged(app, chunks, False, monkeypatch, sensitive_stream="Echo")
    assert fused["out"] == plain["out"] and fused["other"] == plain["other"]


def test_merged_rows_come_before_a_faulted_event(monkeypatch: pytest.MonkeyPatch) -> None:
    # an event failing in the fused step goes to the fault stream after the rows before it
    app = "@OnError(action='STREAM')\n" + STREAM + """
        partition with (symbol of S) begin
            @info(name='q') from S#window.length(2) select symbol, sum(volume) as v insert into Out;
        end;
        from !S select symbol, -1L as v insert into Out;"""
    chunks = [[("A", 1.0, 1), ("B", 1.0, 2), ("C", 1.0, "x"), ("A", 1.0, 3), ("B", 1.0, 4)]]
    got = {}
    for fuse in (True, False):
        seen = _run_merged(app, chunks, fuse, monkeypatch)
        got[fuse] = [r for c in seen["out"] for r in c]
    assert got[True] == got[False]
    assert [r[1] for r in got[True]] == [("A", 1), ("B", 2), ("C", -1), ("A", 4), ("B", 6)]


@pytest.mark.parametrize("name, replaced", [("length_sliding_sums", True), ("length_avg", True),
                                            ("length_expression_argument", False),
                                            ("length_many_aggregates", False)])
def test_a_sliding_step_is_one_statement_per_aggregator_where_each_says_how(name: str, replaced: bool) -> None:
    runtime = SiddhiManager().create_siddhi_app_runtime(FUSABLE[name])
    runtime.start()
    runtime.get_input_handler("S").send(("A", 1.0, 1), timestamp=1_700_000_000_000)
    selectors = [el for p in runtime.partitions for inst in p.instances.values() for q in inst.queries
                 for key, el in q.elements.items() if key.endswith("/selector")]
    runtime.shutdown()
    assert selectors and all((sel.plan.parts.replace is not None) is replaced for sel in selectors)



def _one_by_one(fuse: bool, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setattr(partition_module, "FUSE", fuse)
    app = STREAM + """
        @OnError(action='STREAM')
        define stream Out (symbol string, ap double);
        partition with (symbol of S) begin
            @info(name='q') from S#window.length(2) select symbol, avg(price) as ap insert into Out;
        end;
        @info(name='bad') from Out select symbol, str:length(cast(ap, 'string')) as x insert into X;
        from !Out select symbol, ap insert into Faults;"""
    runtime = SiddhiManager().create_siddhi_app_runtime(app)
    seen: dict[str, Any] = {"Out": [], "Faults": [], "X": []}
    for stream in list(seen):
        runtime.add_callback(stream, lambda evs, rows=seen[stream]: rows.extend(tuple(e.data) for e in evs))
    runtime.start()
    handler = runtime.get_input_handler("S")
    for row in [("A", 1.0, 1), ("A", 3.0, 1), ("B", 4.0, 1), ("A", 5.0, 1)]:
        handler.send(row, timestamp=1_000)
    seen["fused"] = any(r[0] == partition_module._FUSED for p in runtime.partitions
                        for recs in p._records.values() for r in recs.values())
    runtime.shutdown()
    return seen


def test_one_by_one_rows_reach_the_target_stream_as_its_dispatch_would(monkeypatch: pytest.MonkeyPatch) -> None:
    """An event sent alone: the fused router dispatches its row into the target stream
    itself; a reader of that stream that fails has its rows routed by the stream's @OnError."""
    fused = _one_by_one(True, monkeypatch)
    plain = _one_by_one(False, monkeypatch)
    assert fused.pop("fused") and not plain.pop("fused")
    assert fused["Out"] == [("A", 1.0), ("A", 2.0), ("B", 4.0), ("A", 4.0)]
    assert fused["Faults"] and fused == plain
