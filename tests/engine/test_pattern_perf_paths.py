"""The fast paths of patterns: the equality index, the generated loops and receiver.

Each test checks the outputs against what Siddhi's one-partial-match-at-a-time loop gives
(written out by hand, or the same query with the equality in a form the index cannot use:
``not (k != e1.k)``), and the index against ``pending``, which stays authoritative.
"""
from __future__ import annotations

import random

import pytest
from srota.engine import Event, SiddhiManager
from srota.engine.pattern import planner

STREAMS = """
@app:playback
define stream A (k string, p double, v int);
define stream B (k string, p double, v int);
"""


def make(query: str, *, partition: bool = False):
    body = "@info(name='q') " + query + " insert into Out;"
    if partition:
        body = "partition with (v of A, v of B) begin " + body + " end;"
    rt = SiddhiManager().create_siddhi_app_runtime(STREAMS + body)
    rows: list[tuple] = []
    rt.add_callback("Out", lambda evs: rows.extend(tuple(e.data) for e in evs))
    rt.start()
    return rt, rows


def feed(rt, events, chunk: int = 1) -> None:
    """``events``: (stream, ts, row); chunks never mix streams."""
    i = 0
    while i < len(events):
        j = i
        while j < len(events) and j - i < chunk and events[j][0] == events[i][0]:
            j += 1
        rt.get_input_handler(events[i][0]).send_events([Event(t, d) for _s, t, d in events[i:j]])
        i = j


def pattern(rt):
    return rt.context.elements["q/pattern"]


def random_events(seed: int, n: int = 400, keys: str = "abcd") -> list[tuple]:
    rnd = random.Random(seed)
    ts, out = 1000, []
    for _ in range(n):
        ts += rnd.choice([0, 1, 50, 400])
        out.append((rnd.choice("AB"), ts, (rnd.choice(keys), float(rnd.randrange(100)), rnd.randrange(3))))
    return out


def same_as_unindexed(query: str, unindexed: str, events, chunk: int = 1, partition: bool = False):
    a, got = make(query, partition=partition)
    b, want = make(unindexed, partition=partition)
    feed(a, events, chunk)
    feed(b, events, chunk)
    a.shutdown()
    b.shutdown()
    assert got == want
    return got


# ------------------------------------------------------------------ what gets indexed
def test_equality_with_an_earlier_event_indexes_the_state():
    rt, _ = make("from every e1=A[p > 50] -> e2=B[k == e1.k and p < e1.p] select e1.p as a, e2.p as b")
    start, nxt = pattern(rt).pres
    assert start.index is None and nxt.index == {}
    assert nxt.key.parts == ((0, 0, 0),)
    rt.shutdown()


def test_either_order_and_several_equalities_make_one_tuple_key():
    rt, _ = make("from every e1=A -> e2=B[e1.v == v and p > 1 and k == e1.k] select e2.p as b")
    assert pattern(rt).pres[1].key.parts == ((2, 0, 2), (0, 0, 0))
    rt.shutdown()


def test_no_index_for_or_inequality_sequences_or_counting_states():
    for query in ("from every e1=A -> e2=B[k == e1.k or v == e1.v] select e2.p as b",
                  "from every e1=A -> e2=B[k != e1.k] select e2.p as b",
                  "from every e1=A, e2=B[k == e1.k] select e2.p as b",
                  "from every e1=A -> e2=B[k == e1.k]<1:2> select e2[0].p as b",
                  "from every e1=A<1:2> -> e2=B[k == e1[0].k] select e2.p as b",
                  "from every (e1=A or e3=B) -> e2=B[k == e1.k] select e2.p as b"):
        rt, _ = make(query)
        assert all(p.index is None for p in pattern(rt).pres), query
        rt.shutdown()


# ------------------------------------------------------------------ same outputs
def test_indexed_outputs_equal_the_scan_in_order_one_by_one_and_in_chunks():
    q = "from every e1=A[p > 50] -> e2=A[k == e1.k and p < e1.p] within 2 sec select e1.p as a, e2.p as b"
    plain = q.replace("k == e1.k", "not (k != e1.k)")
    for seed in range(6):
        events = random_events(seed)
        one = same_as_unindexed(q, plain, events, chunk=1)
        chunked = same_as_unindexed(q, plain, events, chunk=50)
        assert one and one == chunked


def test_tuple_keys_three_states_and_partitions_equal_the_scan():
    q = ("from every e1=A[p > 30] -> e2=A[k == e1.k and v == e1.v] -> e3=B[e2.k == k and p > e1.p] "
         "within 3 sec select e1.p as a, e2.p as b, e3.p as c")
    plain = q.replace("k == e1.k and v == e1.v", "not (k != e1.k or v != e1.v)").replace(
        "e2.k == k", "not (e2.k != k)")
    for seed in range(4):
        events = random_events(10 + seed, keys="ab")
        assert same_as_unindexed(q, plain, events, chunk=7)
        same_as_unindexed(q, plain, events, chunk=7, partition=True)


def test_one_event_completes_its_key_in_start_order():
    # conformance note 9: with every, one e2 completes all matching partial matches in the
    # order they started; partial matches of another key are not touched.
    rt, rows = make("from every e1=A -> e2=B[k == e1.k] select e1.p as a, e2.p as b")
    feed(rt, [("A", 1, ("x", 1.0, 0)), ("A", 2, ("y", 2.0, 0)), ("A", 3, ("x", 3.0, 0)),
              ("A", 4, ("x", 4.0, 0)), ("B", 5, ("x", 9.0, 0))], chunk=10)
    assert rows == [(1.0, 9.0), (3.0, 9.0), (4.0, 9.0)]
    pre = pattern(rt).pres[1]
    assert [se.events[0].data[0] for se in pre.pending] == ["y"]
    assert list(pre.index) == ["y"]
    rt.shutdown()


def test_null_and_nan_keys_never_match():
    rt, rows = make("from every e1=A -> e2=B[k == e1.k and p == e1.p] select e1.v as a, e2.v as b")
    nan = float("nan")
    feed(rt, [("A", 1, (None, 1.0, 1)), ("B", 2, (None, 1.0, 2)),      # null == null is false
              ("A", 3, ("x", nan, 3)), ("B", 4, ("x", nan, 4)),        # NaN == NaN is false
              ("A", 5, ("x", 2.0, 5)), ("B", 6, ("x", 2.0, 6))])
    assert rows == [(5, 6)]
    rt.shutdown()


def test_the_same_nan_object_still_does_not_match():
    nan = float("nan")
    rt, rows = make("from every e1=A -> e2=B[p == e1.p] select e1.v as a, e2.v as b")
    feed(rt, [("A", 1, ("x", nan, 1)), ("B", 2, ("x", nan, 2))])   # found in the dict by identity
    assert rows == []
    rt.shutdown()


def test_an_unhashable_value_falls_back_to_scanning():
    rt, rows = make("from every e1=A -> e2=B[k == e1.k] select e1.v as a, e2.v as b")
    feed(rt, [("A", 1, ("x", 1.0, 1)), ("A", 2, (["x"], 1.0, 2)), ("B", 3, ("x", 1.0, 3)),
              ("B", 4, (["x"], 1.0, 4))])
    assert rows == [(1, 3), (2, 4)]
    assert pattern(rt).pres[1].index is None
    rt.shutdown()


def test_condition_on_the_arriving_event_only_is_tested_once_and_still_per_candidate_correct():
    # 'p > 50' reads the arriving event only: tested once per event, before the candidates.
    q = "from every e1=A[v == 1] -> e2=B[p > 50 and k == e1.k and e1.p < p] select e1.p as a, e2.p as b"
    plain = q.replace("k == e1.k", "not (k != e1.k)")
    assert same_as_unindexed(q, plain, random_events(3), chunk=9)


def test_event_timestamp_in_a_condition_sees_the_partial_match():
    q = ("from every e1=A -> e2=B[k == e1.k and eventTimestamp() == eventTimestamp(e1)] "
         "select e1.v as a, e2.v as b")
    rt, rows = make(q)
    feed(rt, [("A", 1, ("x", 1.0, 1)), ("B", 5, ("x", 1.0, 2))])
    assert rows == [(1, 2)]   # eventTimestamp() is the partial match's: e1's time so far
    rt.shutdown()


# ------------------------------------------------------------------ bookkeeping
def _index_matches_pending(pre) -> None:
    filed = [se for bucket in pre.index.values() for se in bucket]
    assert sorted(map(id, filed)) == sorted(map(id, pre.pending))
    assert all(pre.index.values())          # no empty buckets left behind
    for bucket in pre.index.values():       # each bucket in pending's order
        pos = [next(i for i, x in enumerate(pre.pending) if x is se) for se in bucket]
        assert pos == sorted(pos)


def test_within_expiry_purges_the_index_and_the_pending_count():
    rt, rows = make("from every e1=A -> e2=B[k == e1.k] within 1 sec select e1.v as a, e2.v as b")
    # New partial matches of e2 move into its pending list when a B event arrives.
    feed(rt, [("A", 1000, ("x", 1.0, 1)), ("A", 1100, ("y", 1.0, 2)), ("A", 1900, ("x", 1.0, 3)),
              ("B", 1950, ("q", 1.0, 4))])
    pre = pattern(rt).pres[1]
    _index_matches_pending(pre)
    assert {k: len(v) for k, v in pre.index.items()} == {"x": 2, "y": 1}
    assert pattern(rt).pending == 4     # three waiting for e2, one fresh start
    feed(rt, [("B", 2050, ("q", 1.0, 5))])          # x@1000 is past within
    _index_matches_pending(pre)
    assert {k: len(v) for k, v in pre.index.items()} == {"x": 1, "y": 1}
    assert pattern(rt).pending == 3
    feed(rt, [("B", 2100, ("x", 1.0, 6))])
    assert rows == [(3, 6)]
    feed(rt, [("B", 5000, ("q", 1.0, 7))])
    assert pre.index == {} and pre.pending == [] and pattern(rt).pending == 1
    rt.shutdown()


def test_max_pending_drops_the_oldest_from_the_index_too():
    rt, rows = make("@pattern(max.pending='2') from every e1=A -> e2=B[k == e1.k] select e1.v as a, e2.v as b")
    feed(rt, [("A", 1, ("x", 1.0, 1)), ("A", 2, ("y", 1.0, 2)), ("A", 3, ("x", 1.0, 3)),
              ("A", 4, ("z", 1.0, 4)), ("B", 5, ("q", 1.0, 5))])
    pre = pattern(rt).pres[1]
    _index_matches_pending(pre)
    assert pattern(rt).dropped == 2 and sorted(pre.index) == ["x", "z"]
    feed(rt, [("B", 6, ("x", 1.0, 6)), ("B", 7, ("y", 1.0, 7))])
    assert rows == [(3, 6)]
    rt.shutdown()


def test_random_runs_keep_the_index_equal_to_pending():
    rt, _ = make("from every e1=A[p > 20] -> e2=A[k == e1.k and p < e1.p] -> e3=B[v == e2.v] "
                 "within 2 sec select e1.p as a, e2.p as b, e3.p as c")
    for n, ev in enumerate(random_events(7, 600)):
        feed(rt, [ev])
        if n % 37 == 0:
            for pre in pattern(rt).pres:
                if pre.index is not None:
                    _index_matches_pending(pre)
    rt.shutdown()


def test_snapshot_restores_the_index():
    q = "from every e1=A[p > 30] -> e2=A[k == e1.k and p < e1.p] within 5 sec select e1.p as a, e2.p as b"
    events = random_events(21, 300)
    whole, want = make(q)
    feed(whole, events)
    whole.shutdown()
    first, got = make(q)
    feed(first, events[:150])
    snap = first.snapshot()
    first.shutdown()
    second, rest = make(q)
    second.restore(snap)
    _index_matches_pending(pattern(second).pres[1])
    feed(second, events[150:])
    second.shutdown()
    assert got + rest == want


def test_sequences_still_drop_partial_matches_an_event_does_not_extend():
    rt, rows = make("from every e1=A, e2=A[k == e1.k] select e1.v as a, e2.v as b")
    feed(rt, [("A", 1, ("x", 1.0, 1)), ("A", 2, ("y", 1.0, 2)), ("A", 3, ("x", 1.0, 3)),
              ("A", 4, ("x", 1.0, 4))])
    assert rows == [(3, 4)]
    rt.shutdown()


def test_partition_instances_run_generated_receivers():
    rt, rows = make("from every e1=A -> e2=B[k == e1.k] select e1.v as a, e2.p as b", partition=True)
    feed(rt, [("A", 1, ("x", 1.0, 1)), ("A", 2, ("x", 1.0, 2)), ("B", 3, ("x", 5.0, 2)),
              ("B", 4, ("x", 6.0, 1))])
    assert rows == [(2, 5.0), (1, 6.0)]
    instances = [el for eid, el in rt.context.elements.items() if eid.endswith("/pattern")]
    assert len(instances) == 2
    for rt_ in instances:
        assert rt_.plan.receivers and all(m is not None for m in rt_.plan.receivers.values())
    rt.shutdown()


# ------------------------------------------------------------------ bounds beside the index
def _bound_of(rt):
    return pattern(rt).pres[1].key.bound


def test_a_range_beside_an_equality_bounds_each_bucket():
    rt, rows = make("from every e1=A -> e2=B[k == e1.k and p < e1.p * 0.5] select e1.p as a, e2.p as b")
    nxt = pattern(rt).pres[1]
    assert nxt.key.bound is not None
    feed(rt, [("A", 1, ("a", 8.0, 1)), ("A", 2, ("a", 20.0, 1)), ("A", 3, ("b", 2.0, 1)),
              ("A", 4, ("c", None, 1)), ("B", 5, ("z", 0.0, 1))])   # (B files them)
    assert nxt.bounds == {"a": 10.0, "b": 1.0, "c": None}   # c: a null, no bound
    feed(rt, [("B", 6, ("a", 10.0, 1)), ("B", 7, ("b", 1.0, 1))])   # not under: skipped
    assert rows == []
    feed(rt, [("B", 8, ("a", 3.0, 1))])                       # under 10: the bucket is scanned
    assert rows == [(8.0, 3.0), (20.0, 3.0)] and "a" not in nxt.bounds   # gone with its bucket
    rt.shutdown()


def test_no_bound_for_functions_ints_or_the_arriving_event_alone():
    for cond in ["k == e1.k and p < e1.p and coalesce(p, 0.0) > 1.0",   # a function beside it
                 "k == e1.k and v < e1.v",                                 # ints
                 "k == e1.k and p < 5.0",                                  # the arriving event alone
                 "k == e1.k and p < e1.p + p",                             # both sides read it
                 "p < e1.p"]:                                              # no index
        rt, _ = make(f"from every e1=A -> e2=B[{cond}] select e1.p as a, e2.p as b")
        key = pattern(rt).pres[1].key
        assert key is None or key.bound is None, cond
        rt.shutdown()


def _values(seed: int, n: int = 500) -> list[tuple]:
    """Random events whose ``p`` is sometimes null, NaN, an infinity or an int."""
    rnd = random.Random(seed)
    ts, out = 1000, []
    for _ in range(n):
        ts += rnd.choice([0, 1, 50, 400])
        r = rnd.random()
        p = (None if r < 0.04 else float("nan") if r < 0.07 else float("inf") if r < 0.08
             else rnd.randrange(100) if r < 0.1 else rnd.randrange(1000) / 10)
        out.append((rnd.choice("AB"), ts, (rnd.choice("abc"), p, rnd.randrange(3))))
    return out


@pytest.mark.parametrize("cond", ["p < e1.p * 0.5", "e1.p * 0.5 > p", "p <= e1.p - 40.0", "p > e1.p",
                                  "e1.p <= p", "p >= e1.p + 10.0 and v != 1"])
@pytest.mark.parametrize("chunk", [1, 7])
def test_bounded_outputs_equal_the_scan(monkeypatch, cond, chunk):
    query = (f"from every e1=A[v != 2] -> e2=B[k == e1.k and {cond}] within 3 sec "
             "select e1.p as a, e2.p as b, e2.v as c")
    for seed in range(6):
        events = _values(seed)
        bounded, got = make(query)
        assert _bound_of(bounded) is not None
        feed(bounded, events, chunk)
        for pre in pattern(bounded).pres:
            if pre.index is not None:
                _index_matches_pending(pre)
                assert set(pre.bounds) == set(pre.index)
        bounded.shutdown()
        with monkeypatch.context() as m:
            m.setattr(planner, "_bound_part", lambda *a: None)
            scanned, want = make(query)
            assert _bound_of(scanned) is None
            feed(scanned, events, chunk)
            scanned.shutdown()
        assert repr(got) == repr(want) and want   # (repr: NaN rows compare equal too)


def test_a_restored_index_gets_its_bounds_again():
    q = "from every e1=A -> e2=B[k == e1.k and p < e1.p] within 5 sec select e1.p as a, e2.p as b"
    first, _ = make(q)
    feed(first, [("A", 1, ("a", 5.0, 1)), ("A", 2, ("a", 9.0, 1)), ("B", 3, ("z", 0.0, 1))])
    snap = first.snapshot()
    first.shutdown()
    second, rows = make(q)
    second.restore(snap)
    assert pattern(second).pres[1].bounds == {"a": 9.0}
    feed(second, [("B", 4, ("a", 7.0, 1))])
    assert rows == [(9.0, 7.0)]
    second.shutdown()
