"""Merging senders' chunks only where no output changes (engine/coalesce.py)."""
from __future__ import annotations

import time

import pytest
from srota.engine import Event, SiddhiManager

T0 = 1_700_000_000_000
STREAM = "define stream S (k string, v long, ts long);\n"


def _runtime(app: str, *streams: str, merged_chunks: bool = True):
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    calls: dict[str, list[list[tuple]]] = {s: [] for s in streams}
    for s in streams:
        rt.add_callback(s, lambda evs, s=s: calls[s].append([tuple(e.data) for e in evs]),
                        merged_chunks=merged_chunks)
    rt.start()
    return rt, calls


def _chunks(n: int = 6) -> list[list[Event]]:
    return [[Event(T0 + i, (f"k{i % 2}", i + 1, T0 + i * 400))] for i in range(n)]


def _verdicts(app: str, *callbacks: str) -> dict[str, bool]:
    rt, _ = _runtime(app, *callbacks)
    rt.get_input_handler(next(iter(rt.context.junctions))).send_chunks([])  # nothing: plan only
    rt.context.replan_coalescing()
    verdicts = {sid: j.coalescible for sid, j in rt.context.junctions.items()}
    rt.shutdown()
    return verdicts


@pytest.mark.parametrize("query, coalescible", [
    ("from S[v > 2] select k, v * 2 as w insert into Out;", True),
    ("from S select k, v insert into T; from T[v > 1] select k insert into Out;", True),
    ("from S select k, sum(v) as total insert into Out;", False),          # a row per chunk
    ("from S select k, v group by k insert into Out;", False),             # the last per group and chunk
    ("from S select k, v order by v desc limit 1 insert into Out;", False),
    ("from S#window.length(2) select k, v insert into Out;", False),       # not among the flush-chunked
    ("from S#window.lengthBatch(2) select k, sum(v) as total insert into Out;", True),
    ("from S#window.externalTimeBatch(ts, 1 sec) select k, count() as n group by k insert into Out;", True),
    ("from S#window.batch() select k, sum(v) as total insert into Out;", False),  # the chunk is the batch
    ("from S select k, v output every 2 events insert into Out;", False),
    ("from every e1=S -> e2=S[v > e1.v] select e1.k as k, e2.v as v insert into Out;", False),
    ("partition with (k of S) begin from S select k, v insert into Out; end;", False),
])
def test_a_stream_is_coalescible_only_where_no_output_depends_on_its_chunks(query, coalescible):
    assert _verdicts(STREAM + query, "Out")["S"] is coalescible


def test_a_callback_gets_each_chunk_as_sent_unless_it_takes_merged_ones():
    """Siddhi calls a stream callback once per chunk: merging needs the callback's consent."""
    app = STREAM + "from S select k, v insert into T; from T select k insert into Out;"
    rt, calls = _runtime(app, "Out", merged_chunks=False)
    rt.get_input_handler("S").send_chunks(_chunks(4))
    assert calls["Out"] == [[("k0",)], [("k1",)], [("k0",)], [("k1",)]]


def test_a_query_callback_gets_each_chunk_as_sent():
    rt, calls = _runtime(STREAM + "@info(name='q') from S select k insert into Out;", "Out")
    got: list[int] = []
    rt.add_query_callback("q", lambda ts, current, expired: got.append(len(current)))
    rt.get_input_handler("S").send_chunks(_chunks(3))
    assert got == [1, 1, 1]


@pytest.mark.parametrize("query", [
    "from S select k, sum(v) as total insert into Out;",
    "from S select k, count() as n group by k insert into Out;",
    "from S#window.length(2) select k, avg(v) as a insert into Out;",
    "from S#window.lengthBatch(4) select k, sum(v) as total group by k insert into Out;",
    "from S#window.externalTimeBatch(ts, 1 sec) select k, count() as n group by k insert into Out;",
    "from S[v > 2] select k, v * 2 as w insert into Out;",
    "partition with (k of S) begin from S select k, sum(v) as total insert into Out; end;",
    "from S#window.batch() select sum(v) as total insert into Out;",
])
def test_send_chunks_gives_the_outputs_of_sending_each_chunk(query):
    """Merged or not, the rows are those of one send per chunk (Siddhi's per-message chunks)."""
    app = STREAM + query
    one_by_one, calls_one = _runtime(app, "Out")
    handler = one_by_one.get_input_handler("S")
    for chunk in _chunks(9):
        handler.send_events(chunk)
    together, calls_together = _runtime(app, "Out")
    together.get_input_handler("S").send_chunks(_chunks(9))
    rows = lambda calls: [row for call in calls["Out"] for row in call]  # noqa: E731
    assert rows(calls_together) == rows(calls_one)
    assert rows(calls_one)


def test_coalescible_chunks_reach_a_callback_in_one_call():
    rt, calls = _runtime(STREAM + "from S[v > 2] select k, v insert into Out;", "Out")
    rt.get_input_handler("S").send_chunks(_chunks(6))
    assert calls["Out"] == [[("k0", 3), ("k1", 4), ("k0", 5), ("k1", 6)]]


def test_a_partition_instance_created_later_stops_the_merging():
    """Receivers added at run time (a partition's instance subscribing to a plain stream)
    make the senders plan again before they merge."""
    app = STREAM + """
    define stream K (k string);
    from S select k, v insert into Out;
    partition with (k of K) begin
        from K select k insert into #Seen;
        from S select k, sum(v) as total insert into Totals;
    end;
    """
    rt, calls = _runtime(app, "Out", "Totals")
    s = rt.get_input_handler("S")
    s.send_chunks(_chunks(2))
    assert calls["Out"] == [[("k0", 1), ("k1", 2)]]
    rt.get_input_handler("K").send(["k0"])  # the key's instance subscribes to S now
    s.send_chunks(_chunks(2))
    assert calls["Out"][1:] == [[("k0", 1)], [("k1", 2)]]


def test_nothing_is_merged_with_a_playback_clock():
    rt, calls = _runtime("@app:playback\n" + STREAM + "from S select k, v insert into Out;", "Out")
    rt.get_input_handler("S").send_chunks(_chunks(3))
    assert len(calls["Out"]) == 3


def test_send_row_groups_sends_each_group_as_a_chunk():
    rt, calls = _runtime(STREAM + "from S select sum(v) as total insert into Out;", "Out")
    rt.get_input_handler("S").send_row_groups([[("a", 1, T0), ("b", 2, T0)], [], [("c", 4, T0)]], T0)
    assert calls["Out"] == [[(3,)], [(7,)]]


# ------------------------------------------------------------------ @Async: micro-batching
def _wait_for(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert predicate()


def test_async_single_sends_keep_the_outputs_of_synchronous_sends():
    """An aggregating query after an @Async stream emits a row per send, as without @Async
    (the buffer keeps each sender's chunk: merging would emit a row per batch)."""
    query = "from S select sum(v) as total insert into Out;"
    sync_rt, sync_calls = _runtime(STREAM + query, "Out")
    async_rt, async_calls = _runtime("@Async(buffer.size='64', workers='2', batch.size.max='16')\n"
                                     + STREAM + query, "Out")
    n = 2000
    for rt in (sync_rt, async_rt):
        handler = rt.get_input_handler("S")
        for i in range(n):
            handler.send(("k", i, T0 + i), T0 + i)
    rows = lambda calls: [row for call in calls["Out"] for row in call]  # noqa: E731
    _wait_for(lambda: len(rows(async_calls)) == n)
    assert rows(async_calls) == rows(sync_calls)
    async_rt.shutdown()


def test_async_single_sends_to_a_coalescible_stream_are_processed_in_batches():
    rt, calls = _runtime("@Async(buffer.size='100000', workers='1', batch.size.max='100000')\n"
                         + STREAM + "from S[v >= 0] select v insert into Out;", "Out")
    handler = rt.get_input_handler("S")
    n = 20_000
    for i in range(n):
        handler.send(("k", i, T0 + i), T0 + i)
    _wait_for(lambda: sum(map(len, calls["Out"])) == n)
    assert [row[0] for call in calls["Out"] for row in call] == list(range(n))
    assert len(calls["Out"]) < n  # some sends were merged (the worker took what queued up)
    rt.shutdown()


def test_async_buffer_holds_at_most_its_size_and_drains_at_shutdown():
    rt, calls = _runtime("@Async(buffer.size='8', workers='1')\n" + STREAM
                         + "from S select v insert into Out;", "Out")
    buffer = rt.context.junctions["S"].async_buffer
    handler = rt.get_input_handler("S")
    seen = 0
    for i in range(500):
        handler.send(("k", i, T0), T0)
        seen = max(seen, len(buffer))
    handler.send_events([Event(T0, ("k", i, T0)) for i in range(500, 520)])  # a chunk larger than the size
    rt.shutdown()
    assert seen <= 8
    assert [row[0] for call in calls["Out"] for row in call] == list(range(520))


def test_async_sends_move_a_playback_clock_when_they_are_processed():
    rt, calls = _runtime("@app:playback\n@Async(buffer.size='16', workers='1')\n" + STREAM
                         + "from S select v, currentTimeMillis() as now insert into Out;", "Out")
    handler = rt.get_input_handler("S")
    for i in range(5):
        handler.send(("k", i, 0), T0 + i * 1000)
    _wait_for(lambda: sum(map(len, calls["Out"])) == 5)
    assert [row for call in calls["Out"] for row in call] == [(i, T0 + i * 1000) for i in range(5)]
    rt.shutdown()


def test_a_burst_of_sends_wakes_a_sleeping_worker_once():
    """Until the woken worker gets the GIL it still looks asleep; each send of the burst set
    the wake event again (a lock and a notify per event, a third of a fast sender's time)."""
    rt, calls = _runtime("@Async(buffer.size='1000', workers='1', batch.size.max='1000')\n" + STREAM
                         + "from S[v >= 0] select v insert into Out;", "Out")
    buffer = rt.context.junctions["S"].async_buffer
    _wait_for(lambda: buffer._sleeping)
    wake, sets = buffer._wake, []
    original_set = wake.set
    wake.set = lambda: (sets.append(1), original_set())  # type: ignore[method-assign]
    handler = rt.get_input_handler("S")
    with rt.context.lock:  # the woken worker waits here and cannot go back to sleep
        for i in range(500):
            handler.send(("k", i, T0 + i), T0 + i)
        assert len(sets) == 1
    _wait_for(lambda: sum(map(len, calls["Out"])) == 500)
    assert [row[0] for call in calls["Out"] for row in call] == list(range(500))
    rt.shutdown()


def test_a_merged_batch_mixes_single_sends_and_whole_chunks_in_order():
    """Single sends and multi-event chunks queued together go through as merged batches of at
    most batch.size.max events, never splitting a chunk, in the order they were sent."""
    rt, calls = _runtime("@Async(buffer.size='1000', workers='1', batch.size.max='10')\n" + STREAM
                         + "from S[v >= 0] select v insert into Out;", "Out")
    handler = rt.get_input_handler("S")
    sent = 0
    with rt.context.lock:  # everything queues up before the worker takes any of it
        for round_ in range(20):
            for _ in range(round_ % 4):
                handler.send(("k", sent, T0 + sent), T0 + sent)
                sent += 1
            size = 3 + round_ % 7
            handler.send_events([Event(T0 + sent + j, ("k", sent + j, T0)) for j in range(size)])
            sent += size
    _wait_for(lambda: sum(map(len, calls["Out"])) == sent)
    assert [row[0] for call in calls["Out"] for row in call] == list(range(sent))
    assert all(len(call) <= 10 for call in calls["Out"])
    assert len(calls["Out"]) < 40  # merged: fewer calls than sends and chunks
    rt.shutdown()
