"""Snapshots: a run interrupted by snapshot + restore into a new runtime equals an uninterrupted run.

Each app exercises different stateful elements; events carry timestamps under
``@app:playback`` so that time windows are deterministic.
"""
from __future__ import annotations

import random
from typing import Any

import pytest
from srota.engine import SiddhiManager

STREAMS = """@app:playback
define stream S (k string, v long);
define stream T (k string, w long);
"""

APPS = {
    "length window + group by": "from S#window.length(4) select k, sum(v) as total, count() as n "
                                "group by k insert all events into Out;",
    "time batch": "from S#window.timeBatch(1 sec) select k, max(v) as top group by k insert into Out;",
    "time window": "from S#window.time(2 sec) select k, avg(v) as a insert all events into Out;",
    "external time batch": "from S#window.externalTimeBatch(v, 10) select count() as n insert into Out;",
    "sort + rate": "from S#window.sort(3, v, 'desc') select k, v output last every 2 events insert into Out;",
    "join": "from S#window.length(3) join T#window.length(3) on S.k == T.k "
            "select S.k, S.v, T.w insert into Out;",
    "table": "define table Tab (k string, v long); from S insert into Tab; "
             "from T join Tab on T.k == Tab.k select T.k, Tab.v insert into Out;",
    "named window": "define window W (k string, v long) length(3) output all events; "
                    "from S insert into W; from W select k, sum(v) as s insert into Out;",
    "partition": "partition with (k of S) begin from S#window.length(2) select k, sum(v) as s "
                 "insert into Out; end;",
    "pattern": "from every e1=S[v > 50] -> e2=T[k == e1.k and w > e1.v] within 3 sec "
               "select e1.k, e1.v, e2.w insert into Out;",
    "sequence": "from every e1=S, e2=S[v > e1.v] select e1.v as a, e2.v as b insert into Out;",
    "session": "from S#window.session(300, k) select k, count() as n group by k insert into Out;",
    "absent pattern": "from every e1=S[v > 80] -> not T[k == e1.k] for 1 sec select e1.k, e1.v insert into Out;",
    "distinct and forever": "from S#window.length(3) select k, distinctCount(v) as d, "
                           "stdDev(v) as sd, maxForever(v) as m insert into Out;",
    "frequent": "from S#window.frequent(2, k) select k, v insert into Out;",
    "count pattern": "from every e1=S[v > 20]<2:4> -> e2=T[w > e1[0].v] select e1[0].v as a, e1[1].v as b, "
                     "e2.w as c insert into Out;",
}


def _events(n: int = 120, seed: int = 3) -> list[tuple[str, list, int]]:
    rnd = random.Random(seed)
    out = []
    ts = 1_000
    for _ in range(n):
        ts += rnd.randint(50, 400)
        if rnd.random() < 0.7:
            out.append(("S", [rnd.choice("abc"), rnd.randint(1, 100)], ts))
        else:
            out.append(("T", [rnd.choice("abc"), rnd.randint(1, 100)], ts))
    return out


def _run(app: str, events, runtime=None, snapshot: bytes | None = None):
    runtime = runtime or SiddhiManager().create_siddhi_app_runtime(STREAMS + app)
    rows: list = []
    runtime.add_callback("Out", lambda evs: rows.extend((e.timestamp, tuple(e.data)) for e in evs))
    if snapshot is not None:
        assert runtime.restore(snapshot) == []
    runtime.start()
    handlers = {s: runtime.get_input_handler(s) for s in ("S", "T")}
    for stream, data, ts in events:
        handlers[stream].send(data, timestamp=ts)
    return runtime, rows


@pytest.mark.parametrize("name", sorted(APPS))
def test_restore_continues_exactly(name):
    app = APPS[name]
    events = _events()
    half = len(events) // 2
    whole_rt, whole = _run(app, events)
    whole_rt.shutdown()
    first_rt, first = _run(app, events[:half])
    data = first_rt.snapshot()
    first_rt.shutdown()
    second_rt, second = _run(app, events[half:], snapshot=data)
    second_rt.shutdown()
    assert whole, "the app should produce output"
    assert first + second == whole


def test_snapshot_is_data_only_and_versioned():
    """A snapshot is not a pickle: loading one runs no code, and a pickle is refused."""
    import pickle

    from srota.engine.snapshot import SnapshotError, read_snapshot
    rt, _ = _run(APPS["pattern"], _events(40))
    data = rt.snapshot()
    rt.shutdown()
    assert data[:1] != b"\x80" and b"cos" not in data[:2]
    assert read_snapshot(data)["format"] == 2

    class Boom:
        def __reduce__(self):
            return (print, ("pickled code ran",))

    evil = pickle.dumps({"format": 1, "elements": {"x": Boom()}})
    fresh = SiddhiManager().create_siddhi_app_runtime(STREAMS + APPS["pattern"])
    with pytest.raises(SnapshotError):
        fresh.restore(evil)
    with pytest.raises(SnapshotError):
        fresh.restore(data[: len(data) // 2])  # truncated


def test_snapshot_refuses_classes_outside_the_engine():
    from srota.engine import state_codec
    from srota.engine.snapshot import SnapshotError, read_snapshot
    forged = state_codec.dumps({"format": 2, "app": "a", "clock": 0, "elements": {}})
    assert read_snapshot(forged)["elements"] == {}
    import msgpack
    bad = msgpack.packb({"format": 2, "elements": {"x": msgpack.ExtType(5, msgpack.packb(["os:system", {}]))}})
    with pytest.raises(SnapshotError, match="not an engine class"):
        read_snapshot(bad)
    bad = msgpack.packb({"format": 2, "elements": {"x": msgpack.ExtType(5, msgpack.packb(["srota.engine.Gone:X", {}]))}})
    with pytest.raises(SnapshotError, match="does not exist"):
        read_snapshot(bad)


def test_a_forged_enum_tag_cannot_call_another_class():
    """State names classes; an enum tag that names a non-enum class must not construct it."""
    import msgpack
    from srota.engine import state_codec

    forged = msgpack.packb(msgpack.ExtType(7, msgpack.packb(["srota.engine.registry:Param", "x"])))
    with pytest.raises(state_codec.StateDecodeError, match="not"):
        state_codec.loads(forged)


@pytest.mark.parametrize("cut", range(1, 5))
def test_a_partial_match_both_sides_of_an_and_hold_is_one_after_a_restore(cut):
    # Regression (python -m tests.differential --restore, 3013201-1098): the codec wrote each
    # holder's partial match apart, so after a restore the 'and' had two, and the second
    # side's event completed one while the first side kept the other; from a snapshot after
    # T 70 the row (90, 80, 95) was lost.
    app = ("from every (e1=S[v > 50] and e2=T[w > 50]) -> e3=S[v > e1.v] "
           "select e1.v as a, e2.w as b, e3.v as c insert into Out;")
    events = [("S", ["a", 60], 1000), ("T", ["a", 70], 2000), ("T", ["a", 80], 3000), ("S", ["a", 90], 4000),
              ("S", ["a", 95], 5000)]
    first_rt, first = _run(app, events[:cut])
    data = first_rt.snapshot()
    first_rt.shutdown()
    second_rt, second = _run(app, events[cut:], snapshot=data)
    second_rt.shutdown()
    assert [row for _, row in first + second] == [(60, 70, 90), (90, 80, 95)]


def test_an_engine_object_held_twice_comes_back_as_one() -> None:
    """A pattern's partial match sits in the states of both sides of an 'and' (one side's match
    is gone from the other's): the codec writes an engine object once and refers to it after."""
    from srota.engine import Event, state_codec
    from srota.engine.event import StateEvent

    shared = Event(1_700_000_000_000, ("IBM", 1.5))
    match = StateEvent(-1, [shared, None])
    back = state_codec.loads(state_codec.dumps({"left": [match], "right": [match], "window": [shared]}))
    assert back["left"][0] is back["right"][0]
    assert back["left"][0].events[0] is back["window"][0]
    assert back["window"][0].data == ("IBM", 1.5)
    # apart, two equal objects stay two
    two = state_codec.loads(state_codec.dumps([Event(1, ("a",)), Event(1, ("a",))]))
    assert two[0] is not two[1]


def test_an_engine_object_that_leads_back_to_itself_comes_back() -> None:
    from srota.engine import state_codec
    from srota.engine.event import StateEvent

    match = StateEvent(5, [None])
    match.events[0] = match
    back = state_codec.loads(state_codec.dumps(match))
    assert back.events[0] is back and back.timestamp == 5


def test_a_forged_reference_to_an_object_not_written_is_refused() -> None:
    import msgpack
    from srota.engine import state_codec

    for number in (0, 7, -1, "x"):
        forged = msgpack.packb(msgpack.ExtType(12, msgpack.packb(number)))
        with pytest.raises(state_codec.StateDecodeError, match="has not written"):
            state_codec.loads(forged)


@pytest.mark.parametrize("window", ["expression('count() < 3 and sum(v) < 200')",
                                    "expressionBatch('sum(v) < 150', true)"])
def test_an_expression_window_restored_keeps_its_aggregates(window):
    # Regression (python -m tests.differential --restore, 3013201-2042): a restored expression
    # window made its aggregates again by adding its events from nothing, which does not give
    # them back (an expressionBatch's hold the event that broke the condition, which no queue
    # holds); the events its condition then refused left at the restore, unseen.
    values = [13, 58, 6, 18, 47, 4, 42, 39, 32, 10, 38, 49, 60, 45]
    _restored_at_every_step(f"from S#window.{window} select k, v insert all events into Out;",
                            [("S", ["a", v], 1_000 + 100 * i) for i, v in enumerate(values)])


def _restored_at_every_step(app: str, steps: list[tuple[str, list, int] | str]) -> None:
    """``steps`` (events, or on-demand queries) run whole, and restored after each step in turn
    (a snapshot, a new runtime started and restored: as Siddhi restores a revision): the same
    rows every time."""
    def run(cut: int | None) -> list:
        runtime = SiddhiManager().create_siddhi_app_runtime(STREAMS + app)
        rows: list = []

        def listen(rt: Any) -> None:
            rt.add_callback("Out", lambda evs: rows.extend((e.timestamp, tuple(e.data)) for e in evs))

        listen(runtime)
        runtime.start()
        for n, step in enumerate(steps):
            if n == cut:
                data = runtime.snapshot()
                runtime.shutdown()
                runtime = SiddhiManager().create_siddhi_app_runtime(STREAMS + app)
                listen(runtime)
                runtime.start()
                runtime.restore(data)
            if isinstance(step, str):
                rows.append(("found", tuple(tuple(e.data) for e in runtime.query(step))))
            else:
                stream, values, ts = step
                runtime.get_input_handler(stream).send(values, timestamp=ts)
        runtime.shutdown()
        return rows

    whole = run(None)
    assert whole
    for cut in range(1, len(steps)):
        assert run(cut) == whole, f"restored after {cut} steps"


@pytest.mark.parametrize("window", ["timeBatch(1 sec)", "lengthBatch(2)", "batch()"])
def test_a_batch_window_restored_keeps_the_place_a_find_reached(window):
    # Regression (--restore, 3013201-2077): a find (an on-demand query, a join's probe) leaves
    # Siddhi's batch queue's cursor past the events it walked, which then leave with their own
    # timestamps.  A restored window started its cursor again, so they left stamped with the
    # flush's time; Siddhi 5.1.33 restored keeps the place.
    app = (f"define window W (k string, v long) {window} output all events; from S insert into W; "
           "from W select k, v insert expired events into Out;")
    _restored_at_every_step(app, [("S", ["a", 1], 1_000), ("S", ["b", 2], 1_200), ("S", ["c", 3], 2_500),
                                  "from W select *", ("S", ["d", 4], 2_600), ("S", ["e", 5], 4_000),
                                  ("S", ["f", 6], 5_500)])


def test_a_session_window_restored_fires_its_times_in_the_order_they_were_asked_for():
    # Regression (--restore, 3013201-1405): a session window's times wait in a FIFO queue, not
    # in time order (Siddhi's scheduler); a restored window asked for them again in the order
    # of its sessions, so a key's expiry came out after another key's event, not before.
    app = "from S#window.session(2 sec, k, 1 sec) select k, v insert all events into Out;"
    _restored_at_every_step(app, [("S", ["w", 1], 1_866), ("S", ["o", 2], 1_866), ("S", ["i", 3], 3_466),
                                  ("S", ["i", 4], 4_321), ("S", ["o", 5], 4_321), ("S", ["i", 6], 4_826),
                                  ("S", ["o", 7], 5_065), ("S", ["g", 8], 5_266), ("S", ["o", 9], 5_994),
                                  ("S", ["i", 10], 7_262), ("S", ["w", 11], 8_105), ("S", ["g", 12], 12_000)])
