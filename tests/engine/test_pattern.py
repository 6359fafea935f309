"""Patterns (``->``): every, counting, indexes, logical and absent states, within, bounds."""
from __future__ import annotations

import pickle
from typing import Any

import pytest
from srota.engine import Event, SiddhiAppCreationError, SiddhiManager

STREAMS = """
@app:playback
define stream S1 (symbol string, price double, volume int);
define stream S2 (symbol string, price double, volume int);
define stream S3 (symbol string, price double, volume int);
"""


def send(runtime, stream, *rows, ts=None):
    """Send rows one by one; ``ts`` is the first timestamp (then +1 ms each)."""
    h = runtime.get_input_handler(stream)
    for n, row in enumerate(rows):
        h.send(list(row), timestamp=None if ts is None else ts + n)


def app(query: str) -> str:
    return STREAMS + "@info(name='q') " + query + " insert into Out;"


# ------------------------------------------------------------------ basic and every
def test_followed_by_skips_unrelated_events(run_app):
    rt, got = run_app(app("from e1=S1[price > 20] -> e2=S2[price > e1.price] "
                          "select e1.symbol as a, e2.symbol as b"))
    send(rt, "S1", ("WSO2", 55.6, 1), ts=1000)
    send(rt, "S2", ("LOW", 10.0, 1), ts=1100)      # does not match: skipped, not fatal
    send(rt, "S2", ("IBM", 55.7, 1), ts=1200)
    send(rt, "S2", ("IBM2", 56.7, 1), ts=1300)     # no every: only the first match
    assert got.rows == [["WSO2", "IBM"]]


def test_without_every_the_start_state_does_not_rearm(run_app):
    rt, got = run_app(app("from e1=S1[price > 20] -> e2=S2[price > e1.price] "
                          "select e1.symbol as a, e2.symbol as b"))
    send(rt, "S1", ("WSO2", 55.6, 1), ("GOOG", 55.6, 1), ts=1000)
    send(rt, "S2", ("IBM", 55.7, 1), ts=2000)
    assert got.rows == [["WSO2", "IBM"]]


def test_every_single_state_starts_a_match_per_event(run_app):
    rt, got = run_app(app("from every e1=S1[price > 20] -> e2=S2[price > e1.price] "
                          "select e1.symbol as a, e2.symbol as b"))
    send(rt, "S1", ("WSO2", 55.6, 1), ("GOOG", 55.6, 1), ts=1000)
    send(rt, "S2", ("IBM", 55.7, 1), ts=2000)
    send(rt, "S2", ("IBM", 55.8, 1), ts=3000)      # both matches are complete
    assert got.rows == [["WSO2", "IBM"], ["GOOG", "IBM"]]


def test_every_group_rearms_only_after_the_group_completes(run_app):
    rt, got = run_app(app("from every (e1=S1[price > 20] -> e3=S1[price > 20]) -> e2=S2[price > e1.price] "
                          "select e1.price as p1, e3.price as p3, e2.price as p2"))
    send(rt, "S1", ("A", 55.6, 1), ("B", 54.0, 1), ("C", 53.6, 1), ("D", 53.0, 1), ts=1000)
    send(rt, "S2", ("IBM", 57.7, 1), ts=2000)
    assert got.rows == [[55.6, 54.0, 57.7], [53.6, 53.0, 57.7]]


def test_same_stream_event_cannot_fill_two_states_at_once(run_app):
    rt, got = run_app(app("from every e1=S1[symbol == 'MSFT'] -> e2=S1[price > 0] "
                          "select e1.price as a, e2.price as b"))
    send(rt, "S1", ("MSFT", 1.0, 1), ("MSFT", 2.0, 1), ("X", 3.0, 1), ts=1000)
    assert got.rows == [[1.0, 2.0], [2.0, 3.0]]


# ------------------------------------------------------------------ counting and indexes
def test_count_collects_until_next_state_and_missing_indexes_are_null(run_app):
    rt, got = run_app(app("from e1=S1[price > 20]<2:5> -> e2=S2[price > 20] "
                          "select e1[0].price as a, e1[1].price as b, e1[2].price as c, "
                          "e1[3].price as d, e2.price as e"))
    send(rt, "S1", ("A", 25.6, 1), ("B", 47.6, 1), ("C", 13.7, 1), ts=1000)
    send(rt, "S2", ("IBM", 45.7, 1), ts=2000)
    send(rt, "S1", ("D", 47.8, 1), ts=3000)
    send(rt, "S2", ("IBM", 55.7, 1), ts=4000)
    assert got.rows == [[25.6, 47.6, None, None, 45.7]]


def test_count_below_minimum_gives_nothing(run_app):
    rt, got = run_app(app("from e1=S1[price > 20]<2:5> -> e2=S2[price > 20] "
                          "select e1[0].price as a, e2.price as e"))
    send(rt, "S1", ("A", 25.6, 1), ts=1000)
    send(rt, "S2", ("IBM", 45.7, 1), ts=2000)
    assert got.rows == []


def test_count_zero_minimum_matches_without_events(run_app):
    rt, got = run_app(app("from e1=S1[price > 20]<0:5> -> e2=S2[price > 20] "
                          "select e1[0].price as a, e1[1].price as b, e2.price as e"))
    send(rt, "S2", ("IBM", 45.7, 1), ts=1000)
    assert got.rows == [[None, None, 45.7]]


def test_count_stops_at_maximum(run_app):
    rt, got = run_app(app("from e1=S1[price > 20]<2:5> -> e2=S2[price > 20] "
                          "select e1[0].price as a, e1[3].price as d, e1[4].price as e, e2.price as f"))
    send(rt, "S1", *[("A", 21.0 + i, 1) for i in range(7)], ts=1000)
    send(rt, "S2", ("IBM", 45.7, 1), ts=2000)
    assert got.rows == [[21.0, 24.0, 25.0, 45.7]]


def test_last_indexes(run_app):
    rt, got = run_app(app("from e1=S1[price > 0]<1:> -> e2=S2 "
                          "select e1[last].price as l0, e1[last-1].price as l1, e1[last-2].price as l2"))
    send(rt, "S1", ("A", 1.0, 1), ("B", 2.0, 1), ts=1000)
    send(rt, "S2", ("X", 0.0, 1), ts=2000)
    assert got.rows == [[2.0, 1.0, None]]


def test_last_inside_own_condition_means_the_previous_event(run_app):
    # e1[last] in e1's own filter skips the candidate: a strictly rising run.
    rt, got = run_app(app("from e1=S1[e1[last].price is null or price > e1[last].price]<1:> -> e2=S2 "
                          "select e1[0].price as a, e1[last].price as b"))
    send(rt, "S1", ("A", 1.0, 1), ("B", 2.0, 1), ("C", 1.5, 1), ("D", 3.0, 1), ts=1000)
    send(rt, "S2", ("X", 0.0, 1), ts=2000)
    assert got.rows == [[1.0, 3.0]]


def test_is_null_on_event_references(run_app):
    rt, got = run_app(app("from e1=S1 -> e2=S2[price > 0]<0:3> -> e3=S3[e2[last] is null] "
                          "select e1.symbol as a, e3.symbol as c"))
    send(rt, "S1", ("A", 1.0, 1), ts=1000)
    send(rt, "S3", ("C", 1.0, 1), ts=2000)
    assert got.rows == [["A", "C"]]


# ------------------------------------------------------------------ logical
def test_or_gives_null_for_the_side_that_did_not_arrive(run_app):
    rt, got = run_app(app("from every e1=S1[price > 20] -> e2=S2['IBM' == symbol] or e3=S3['WSO2' == symbol] "
                          "select e1.price as a, e2.price as b, e3.price as c"))
    send(rt, "S1", ("IBM", 25.5, 1), ("IBM", 59.65, 1), ts=1000)
    send(rt, "S2", ("IBM", 45.5, 1), ts=2000)
    assert got.rows == [[25.5, 45.5, None], [59.65, 45.5, None]]


def test_and_waits_for_both_in_either_order(run_app):
    rt, got = run_app(app("from every (e1=S1[price > 20] and e2=S2[price > 30]) "
                          "select e1.symbol as a, e2.price as b"))
    send(rt, "S1", ("WSO2", 25.0, 1), ts=1000)
    send(rt, "S2", ("IBM", 35.0, 1), ts=1100)
    send(rt, "S2", ("ORCL", 55.0, 1), ts=1200)
    send(rt, "S1", ("GOOG", 45.0, 1), ts=1300)
    assert got.rows == [["WSO2", 35.0], ["GOOG", 55.0]]


# ------------------------------------------------------------------ within
def test_within_expires_partial_matches_from_the_first_event(run_app):
    rt, got = run_app(app("from every e1=S1[price > 20] -> e2=S2[price > e1.price] within 1 sec "
                          "select e1.symbol as a, e2.symbol as b"))
    send(rt, "S1", ("WSO2", 55.6, 1), ts=1000)
    send(rt, "S1", ("GOOG", 54.0, 1), ts=2500)
    send(rt, "S2", ("IBM", 55.7, 1), ts=3000)
    assert got.rows == [["GOOG", "IBM"]]


def test_every_group_within_rearms_when_the_match_expires(run_app):
    rt, got = run_app(app("from every (e1=S1 -> e2=S1[symbol == e1.symbol]) within 5 sec "
                          "select e1.volume as v1, e2.volume as v2"))
    send(rt, "S1", ("WSO2", 1.0, 100), ts=1000)
    send(rt, "S1", ("WSO2", 1.0, 150), ts=7000)
    send(rt, "S1", ("WSO2", 1.0, 200), ts=7500)
    assert got.rows == [[150, 200]]


# ------------------------------------------------------------------ absent (event time)
def test_absent_for_fires_after_waiting_time(run_app):
    rt, got = run_app(app("from e1=S1[price > 20] -> not S2[price > e1.price] for 1 sec "
                          "select e1.symbol as a"))
    send(rt, "S1", ("WSO2", 55.6, 1), ts=1000)
    send(rt, "S3", ("tick", 0.0, 0), ts=2500)      # moves event time past the wait
    assert got.rows == [["WSO2"]]


def test_absent_is_cancelled_by_a_matching_event(run_app):
    rt, got = run_app(app("from e1=S1[price > 20] -> not S2[price > e1.price] for 1 sec "
                          "select e1.symbol as a"))
    send(rt, "S1", ("WSO2", 55.6, 1), ts=1000)
    send(rt, "S2", ("IBM", 60.0, 1), ts=1500)
    send(rt, "S3", ("tick", 0.0, 0), ts=3000)
    assert got.rows == []


def test_not_and_fires_when_partner_arrives_without_the_absent_event(run_app):
    rt, got = run_app(app("from e1=S1[price > 20] -> not S2[price > 30] and e3=S3 "
                          "select e1.symbol as a, e3.symbol as c"))
    send(rt, "S1", ("WSO2", 55.6, 1), ts=1000)
    send(rt, "S3", ("C", 1.0, 1), ts=1100)
    assert got.rows == [["WSO2", "C"]]


_T_ABS = 1_700_000_000_000


@pytest.mark.parametrize(("group_by", "expected"), [
    ("", [[69.0, 6.0, 45.0]]),
    (" group by e1.symbol", [[69.0, 6.0, 45.0], [59.0, 8.0, 45.0]]),
])
def test_not_and_side_cuts_the_matches_one_event_completes_after_the_first(run_app, group_by, expected):
    # Regression (difftest 90418-162-pattern): the forbidden side of 'not S2[...] and e2=...'
    # keeps each match after e2 moved it on; the S2 event that completes two matches runs
    # them through its filter, which unlinks Siddhi's output chunk after the first.  The
    # other match is consumed all the same: the next S2 event completes nothing.  With group
    # by (difftest 3011804-2368-pattern), Siddhi's selector has taken each match out of the
    # linked chunk (ComplexEventChunk.remove unlinks it) and handed on a GroupedComplexEvent
    # of its own, so the filter has no link to cut: both matches go out.
    rt, got = run_app(app("from every e1=S1[price > 50] -> not S2[price > 1000] and e2=S1[price < 50] "
                          f"-> e3=S2 select e1.price as p1, e2.price as p2, e3.price as p3{group_by}"))
    send(rt, "S1", ("A", 69.0, 1), ts=_T_ABS + 1000)
    send(rt, "S1", ("A", 6.0, 1), ts=_T_ABS + 1100)
    send(rt, "S1", ("B", 59.0, 1), ts=_T_ABS + 1200)
    send(rt, "S1", ("B", 8.0, 1), ts=_T_ABS + 1300)
    send(rt, "S2", ("C", 45.0, 1), ts=_T_ABS + 1400)
    send(rt, "S2", ("D", 46.0, 1), ts=_T_ABS + 1500)
    assert got.rows == expected   # Siddhi 5.1.33's answer


def _two_matches_completed_together_twice(rt: Any) -> None:
    """Twice: two S1 pairs (e1 over 50, e2 under 50), then the S2 event that completes both."""
    for base, prices, last in ((_T_ABS + 1000, (69.0, 6.0, 59.0, 8.0), 45.0),
                               (_T_ABS + 2000, (79.0, 7.0, 89.0, 9.0), 46.0)):
        for n, price in enumerate(prices):
            send(rt, "S1", ("AB"[n // 2], price, 1), ts=base + 100 * n)
        send(rt, "S2", ("C", last, 1), ts=base + 400)


@pytest.mark.parametrize(("select", "expected"), [
    # each match was selected as it was made: count() and sum() count the one cut after
    (", count() as n, sum(e1.price) as s", [[69.0, 6.0, 45.0, 1, 69.0], [79.0, 7.0, 46.0, 3, 207.0]]),
    # A's row fails having and leaves the chain before the filter cuts it: B's goes out
    (" having p1 < 60", [[59.0, 8.0, 45.0]]),
])
def test_not_and_side_cut_matches_were_selected_as_they_were_made(run_app, select, expected):
    # Regression (difftest 3013302-1241-pattern): Siddhi's selector takes each match as
    # the state processor returns it, before the forbidden side's filter unlinks the
    # matches after the first; Srota selected only the matches left after the cut.
    rt, got = run_app(app("from every e1=S1[price > 50] -> not S2[price > 1000] and e2=S1[price < 50] "
                          f"-> e3=S2 select e1.price as p1, e2.price as p2, e3.price as p3{select}"))
    _two_matches_completed_together_twice(rt)
    assert got.rows == expected   # Siddhi 5.1.33's answer


def test_not_and_side_cut_before_a_rate_limiter(run_app):
    # With a rate limiter between the selector and the output, the matches are cut before
    # they are selected (docs/siddhi-differences.md): the rows are Siddhi's, one per group;
    # Siddhi sends them in a chunk each, Srota in one.
    rt, got = run_app(app("from every e1=S1[price > 50] -> not S2[price > 1000] and e2=S1[price < 50] "
                          "-> e3=S2 select e1.price as p1, e2.price as p2, e3.price as p3 "
                          "output every 2 events"))
    _two_matches_completed_together_twice(rt)
    assert got.rows == [[69.0, 6.0, 45.0], [79.0, 7.0, 46.0]]


def test_not_and_side_cut_drops_a_later_match_that_passes_the_filter(run_app):
    # B's match comes first in the output chunk (its e2 came first).  A's met the forbidden
    # GOOG after its e2, so the filter run from B's passes A's (with that GOOG) and drops
    # B's; B's link is cut all the same, and only B's goes out.
    rt, got = run_app(app("from every e1=S1[price > 50] -> not S2[symbol == 'GOOG' and price > e1.price] "
                          "and e2=S1[price < 50 and volume == e1.volume] -> e3=S2[volume > 100] "
                          "select e1.price as p1, e2.price as p2, e3.price as p3"))
    send(rt, "S1", ("A", 69.0, 5), ts=_T_ABS + 1000)
    send(rt, "S1", ("B", 99.0, 7), ts=_T_ABS + 1010)
    send(rt, "S1", ("B", 8.0, 7), ts=_T_ABS + 1020)
    send(rt, "S1", ("A", 6.0, 5), ts=_T_ABS + 1030)
    send(rt, "S2", ("GOOG", 80.0, 5), ts=_T_ABS + 1040)
    send(rt, "S2", ("ORCL", 45.0, 120), ts=_T_ABS + 1400)
    send(rt, "S2", ("ORCL", 46.0, 120), ts=_T_ABS + 1500)
    assert got.rows == [[99.0, 8.0, 45.0]]   # Siddhi 5.1.33's answer


def test_a_partition_key_forgets_its_absent_wait_while_it_holds_no_match(run_app):
    # Regression (difftest 3011809-3363-partition): Siddhi drops a key's state of the absent
    # processor whenever it holds no partial match (PartitionStateHolder.returnState), so
    # GOOG's timer at 15370 (the wait its killed match asked for) finds lastScheduledTime 0 and
    # asks again for 15870: GOOG's queue then comes first at the next time change, and its
    # row due at 16244 goes out before IBM's due at 16243 (Siddhi 5.1.33's answer).
    text = STREAMS + ("partition with (symbol of S1) begin @info(name='q') from every e1=S1[price >= 44] "
                      "-> not S1[symbol == e1.symbol] for 500 millisec select e1.price as p, e1.symbol as s "
                      "insert into Out; end;")
    rt, got = run_app(text)
    h = rt.get_input_handler("S1")
    h.send(["GOOG", 47.3, 50], timestamp=_T_ABS + 14402)
    h.send(["GOOG", 26.1, 56], timestamp=_T_ABS + 14870)
    h.send_events([Event(_T_ABS + 15743, ("IBM", 89.8, 11)), Event(_T_ABS + 15744, ("GOOG", 80.4, 4))])
    h.send(["ORCL", 89.1, 43], timestamp=_T_ABS + 17691)
    assert got.rows == [[80.4, "GOOG"], [89.8, "IBM"]]


@pytest.mark.parametrize(("keys", "expected"), [(("A",), []), (("C",), [[None, None]]),
                                                (("A", "C"), [[None, None]])])
def test_a_partition_s_validation_instance_fires_no_timer(run_app, keys, expected):
    # Regression (found 2026-11-29 by the partition family): a count state that may match
    # nothing hands the empty partial match on as its machine starts, so the absent state
    # after it asks for a timer at once.  The partition builds its queries once to check them
    # (no key, no events), and that instance's timer fired into Out: a row no key made.  Only
    # C, whose event the count state does not take, waits from the start (Siddhi 5.1.33).
    text = ("@app:playback define stream S (sym string, price double); partition with (sym of S) begin "
            "from every e1=S[price > 10]<:3> -> not S[price > 100] for 500 millisec "
            "select e1[0].price as p, e1[last].price as pl insert into Out; end;")
    rt, got = run_app(text)
    h = rt.get_input_handler("S")
    for i, key in enumerate(keys):
        h.send([key, 20.0 if key == "A" else 5.0], timestamp=_T_ABS + 1000 + 100 * i)
    h.send([keys[0], 5.0], timestamp=_T_ABS + 5000)  # (time moves on: due timers fire)
    h.send([keys[0], 5.0], timestamp=_T_ABS + 9000)
    assert got.rows == expected


def test_a_partition_key_queues_a_time_twice_at_most() -> None:
    # Siddhi queues every time asked for, and a key's dropped state makes a second timer at one
    # time ask again (see the test above); where each one re-arms ('every e1=S -> every not S
    # for t'), Siddhi's queue grows without end.  Srota keeps two of a time, not more.
    from srota.engine.pattern.absent import _AbsentStreamPre

    runtime = SiddhiManager().create_siddhi_app_runtime(
        STREAMS + "partition with (symbol of S1) begin from every e1=S1 -> every not S1[price > 1000] "
        "for 1 sec select e1.price as p insert into Out; end;")
    rows: list[Any] = []
    runtime.add_callback("Out", rows.extend)
    runtime.start()
    handler = runtime.get_input_handler("S1")
    for i in range(40):
        handler.send_events([Event(_T_ABS + 3000 * i + k, ("A", float(k), 1)) for k in range(3)])
    pres = [p for element in runtime._ctx.elements.values() for p in getattr(element, "pres", ())
            if isinstance(p, _AbsentStreamPre)]
    assert pres and rows
    for pre in pres:
        queue = pre.__dict__.get("_queue") or []
        assert all(queue.count(at) <= 2 for at in queue)
    runtime.shutdown()


_LATE_OR = ("from e1=S1[symbol != 'IBM'] -> every (e2=S3[price > 69.1] or e2b=S1[price > e1.price]) "
            "within 2 sec select e1.price as p1, e2.price as v0, e2b.price as v1")


@pytest.mark.parametrize("one_chunk", [True, False])
def test_a_match_expired_later_in_its_chunk_is_a_removed_event_to_query_callbacks(run_app, one_chunk):
    # Regression (difftests 281126-58-pattern, 11-214-pattern): GOOG completes the OR's
    # partial match, selected at once; IBM, later in the same chunk, finds it past 'within'
    # on the other side, which shares it, and marks it expired before Siddhi's multi receiver
    # hands the chunk's outputs on.  The query callback sees it removed, the stream current.
    rt, got = run_app(app(_LATE_OR), query="q")
    out = []
    rt.add_callback("Out", lambda events: out.extend((list(e.data), e.is_expired) for e in events))
    send(rt, "S1", ("ORCL", 50.0, 1), ts=_T_ABS + 1000)
    send(rt, "S3", ("X", 90.0, 1), ts=_T_ABS + 1500)
    late = [Event(_T_ABS + 3500, ["GOOG", 98.1, 1]), Event(_T_ABS + 3500, ["IBM", 93.7, 1])]
    if one_chunk:
        rt.get_input_handler("S1").send_events(late)
    else:
        for e in late:
            rt.get_input_handler("S1").send_events([e])
    # Siddhi 5.1.33's answers
    if one_chunk:
        assert got.rows == [[50.0, 90.0, None], [50.0, None, 93.7]]
        assert got.expired_rows == [[50.0, None, 98.1]]
    else:
        assert got.rows == [[50.0, 90.0, None], [50.0, None, 98.1], [50.0, None, 93.7]]
        assert got.expired_rows == []
    assert out == [([50.0, 90.0, None], False), ([50.0, None, 98.1], False), ([50.0, None, 93.7], False)]


# ------------------------------------------------------------------ selector and errors
def test_unqualified_attribute_resolves_across_streams(run_app):
    rt, got = run_app(STREAMS + "define stream T (code string); @info(name='q') "
                      "from e1=S1 -> e2=T select code, e1.symbol as s insert into Out;")
    send(rt, "S1", ("A", 1.0, 1), ts=1000)
    rt.get_input_handler("T").send(["x"], timestamp=1100)
    assert got.rows == [["x", "A"]]


def test_ambiguous_unqualified_attribute_is_an_error():
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(app("from e1=S1 -> e2=S2 select symbol"))


def test_unknown_reference_is_an_error():
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(app("from e1=S1 -> e2=S2[price > e9.price] "
                                                      "select e1.symbol as s"))


def test_event_timestamp_of_a_reference(run_app):
    rt, got = run_app(app("from e1=S1 -> e2=S2 select eventTimestamp(e1) as t1, eventTimestamp(e2) as t2"))
    send(rt, "S1", ("A", 1.0, 1), ts=1000)
    send(rt, "S2", ("B", 1.0, 1), ts=2000)
    assert got.rows == [[1000, 2000]]


def test_aggregation_sees_one_match_per_chunk(run_app):
    rt, got = run_app(app("from every e1=S1 -> e2=S2 select count() as n"))
    send(rt, "S1", ("A", 1.0, 1), ("B", 1.0, 1), ts=1000)
    send(rt, "S2", ("C", 1.0, 1), ts=2000)
    assert got.rows == [[1], [2]]


# ------------------------------------------------------------------ bounds, metrics, snapshots, partitions
def test_max_pending_drops_the_oldest_partial_matches(run_app):
    text = STREAMS + ("@info(name='q') @pattern(max.pending='3') "
                      "from every e1=S1 -> e2=S2[symbol == e1.symbol] "
                      "select e1.symbol as a insert into Out;")
    rt, got = run_app(text)
    send(rt, "S1", *[(f"K{i}", 1.0, 1) for i in range(10)], ts=1000)
    send(rt, "S2", ("K0", 1.0, 1), ts=2000)     # dropped long ago
    send(rt, "S2", ("K9", 1.0, 1), ts=2001)
    pattern = rt.context.elements["q/pattern"]
    assert got.rows == [["K9"]]
    assert pattern.dropped >= 6
    assert pattern.pending <= 4


def test_pending_count_and_within_keep_state_bounded(run_app):
    rt, got = run_app(app("from every e1=S1 -> e2=S2[symbol == e1.symbol] within 1 sec select e1.symbol as a"))
    pattern = rt.context.elements["q/pattern"]
    send(rt, "S1", *[(f"K{i}", 1.0, 1) for i in range(50)], ts=1000)
    assert pattern.pending >= 50
    send(rt, "S1", ("late", 1.0, 1), ts=5000)
    assert pattern.pending <= 3


def test_snapshot_restores_partial_matches():
    text = app("from every e1=S1 -> e2=S2[symbol == e1.symbol] select e1.price as a, e2.price as b")
    first = SiddhiManager().create_siddhi_app_runtime(text)
    first.start()
    send(first, "S1", ("A", 1.0, 1), ts=1000)
    data = first.snapshot()
    first.shutdown()
    second = SiddhiManager().create_siddhi_app_runtime(text)
    rows = []
    second.add_callback("Out", lambda evs: rows.extend(list(e.data) for e in evs))
    second.start()
    second.restore(data)
    send(second, "S2", ("A", 2.0, 1), ts=2000)
    second.shutdown()
    assert rows == [[1.0, 2.0]]
    assert pickle.loads(pickle.dumps(first.context.elements["q/pattern"].snapshot_state()))


def test_absent_timers_are_armed_again_after_a_restore():
    # Regression: a restored `not ... for` partial match never fired (timers are not in snapshots).
    from srota.engine import SiddhiManager

    app = ("@app:playback define stream S (v long); define stream T (v long);"
           "from e1=S -> not T for 1 sec select e1.v as v insert into Out;")
    first = SiddhiManager().create_siddhi_app_runtime(app)
    first.start()
    first.get_input_handler("S").send([7], timestamp=1000)
    data = first.snapshot()
    first.shutdown()

    second = SiddhiManager().create_siddhi_app_runtime(app)
    rows = []
    second.add_callback("Out", lambda evs: rows.extend(e.data for e in evs))
    assert second.restore(data) == []
    second.start()
    second.get_input_handler("T").send([0], timestamp=3000)  # time passes the 1 s wait
    assert rows == [(7,)]
    second.shutdown()


# ------------------------------------------------------------------ matches of one chunk
_CHUNK_APP = """@app:playback
define stream S (k string, v int);
define function pydiv[python] return int {{ int(data[0] / data[1]) }};
@info(name='q') from every e1=S[v > 0] -> e2=S[k == e1.k] select e1.k as k, {select} insert into Out;"""
_T0 = 1_700_000_000_000


def _chunk_run(select: str, merged_chunks: bool, query_callback: bool = False,
               rows: tuple[tuple[str, int], ...] = (("a", 4), ("b", 6), ("a", 2), ("b", 3), ("c", 1), ("c", 1)),
               ) -> tuple[list[list[tuple]], list[int]]:
    from srota.engine import Event

    rt = SiddhiManager().create_siddhi_app_runtime(_CHUNK_APP.format(select=select))
    calls: list[list[tuple]] = []
    per_query: list[int] = []
    rt.add_callback("Out", lambda evs: calls.append([tuple(e.data) for e in evs]), merged_chunks=merged_chunks)
    if query_callback:
        rt.add_query_callback("q", lambda ts, cur, exp: per_query.append(len(cur or ())))
    rt.start()
    rt.get_input_handler("S").send_events([Event(_T0 + i, r) for i, r in enumerate(rows)])
    rt.shutdown()
    return calls, per_query


def test_a_chunks_matches_go_on_together_where_nothing_can_tell():
    merged, _ = _chunk_run("e1.v / e2.v as q", merged_chunks=True)
    apart, _ = _chunk_run("e1.v / e2.v as q", merged_chunks=False)
    assert merged == [[("a", 2), ("b", 2), ("c", 1)]]
    assert apart == [[("a", 2)], [("b", 2)], [("c", 1)]]  # a callback that wants chunks as sent


def test_a_chunks_matches_go_one_by_one_to_query_callbacks_and_aggregates():
    _, per_query = _chunk_run("e1.v / e2.v as q", merged_chunks=True, query_callback=True)
    assert per_query == [1, 1, 1]
    counted, _ = _chunk_run("count() as n", merged_chunks=True)
    assert counted == [[("a", 1)], [("b", 2)], [("c", 3)]]  # a row per match, as Siddhi


def test_a_failing_row_among_merged_matches_fails_as_it_would_one_by_one(caplog):
    rows = (("a", 4), ("b", 6), ("a", 2), ("b", 0), ("c", 1), ("c", 1))
    # (Siddhi's x / 0 is null, not an error: a Python function's division raises instead)
    merged, _ = _chunk_run("pydiv(e1.v, e2.v) as q", merged_chunks=True, rows=rows)
    apart, _ = _chunk_run("pydiv(e1.v, e2.v) as q", merged_chunks=False, rows=rows)
    assert merged == apart == [[("a", 2)]]  # the row before it stands, the ones after go with the chunk
    assert "by zero" in caplog.text


@pytest.mark.parametrize("query", [
    "from every e1=S[v > 0] -> e2=S[k == e1.k] select e1.k as k, e2.v as v",
    "from every e1=S[v > 0], e2=S[k == e1.k] select e1.k as k, e2.v as v",              # a sequence
    "from every e1=S[v > 1] -> e2=S[v > 0]<2> select e1.k as k, e2[0].v as v",          # counting
    "from every (e1=S[v > 2] or e2=S[k == 'c']) -> e3=S select e3.k as k, e3.v as v",   # logical
])
def test_merged_matches_keep_the_rows_of_every_pattern_shape(query):
    from srota.engine import Event

    rows = [("a", 4), ("b", 6), ("a", 2), ("b", 3), ("c", 1), ("c", 1), ("a", 5), ("a", 7), ("b", 1)] * 3
    got = {}
    for merged_chunks in (True, False):
        rt = SiddhiManager().create_siddhi_app_runtime(
            "@app:playback\ndefine stream S (k string, v int);\n" + query + " insert into Out;")
        out: list[tuple] = []
        rt.add_callback("Out", lambda evs, out=out: out.extend(tuple(e.data) for e in evs), merged_chunks=merged_chunks)
        rt.start()
        events = [Event(_T0 + i, r) for i, r in enumerate(rows)]
        for i in range(0, len(events), 5):
            rt.get_input_handler("S").send_events(events[i:i + 5])
        rt.shutdown()
        got[merged_chunks] = out
    assert got[True] and got[True] == got[False]
