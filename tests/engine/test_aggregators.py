"""Aggregate functions: result types, null handling, add/remove/reset."""
from __future__ import annotations

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager


def _run(select: str, rows: list[tuple], window: str = "length(3)", types: str = "a int, b double, c bool, s string",
         out: str = "current") -> tuple[list[list], dict]:
    rt = SiddhiManager().create_siddhi_app_runtime(
        f"define stream S ({types}); @info(name='q') from S#window.{window} select {select} insert {out} events into O;")
    got: list[list] = []
    rt.add_query_callback("q", lambda ts, i, r: got.extend([list(e.data) for e in (i or []) + (r or [])]))
    rt.start()
    h = rt.get_input_handler("S")
    for r in rows:
        h.send(list(r))
    schema = {a.name: a.type.value for a in rt.stream_definitions["O"].attributes}
    rt.shutdown()
    return got, schema


ROWS = [(1, 1.5, True, "x"), (2, 2.5, False, "y"), (None, None, None, None), (4, 4.5, True, "x")]


def test_result_types():
    _, schema = _run("sum(a) as si, sum(b) as sd, avg(a) as av, count() as n, min(a) as mi, max(b) as mx, "
                     "distinctCount(s) as dc, stdDev(b) as sdv, and(c) as an, or(c) as o", ROWS)
    assert schema == {"si": "long", "sd": "double", "av": "double", "n": "long", "mi": "int", "mx": "double",
                      "dc": "long", "sdv": "double", "an": "bool", "o": "bool"}


def test_sliding_values_ignore_nulls():
    got, _ = _run("sum(a) as s, avg(a) as av, count() as n, min(a) as mi, max(a) as mx, distinctCount(s) as dc",
                  ROWS)
    # length(3): the 4th row pushes (1, 1.5, ...) out; distinctCount counts null as a value (as Siddhi does)
    assert got == [[1, 1.0, 1, 1, 1, 1], [3, 1.5, 2, 1, 2, 2], [3, 1.5, 3, 1, 2, 3], [6, 3.0, 3, 2, 4, 3]]


def test_std_dev_population():
    got, _ = _run("stdDev(b) as d", [(0, 2.0, True, ""), (0, 4.0, True, ""), (0, 6.0, True, "")])
    assert got[0] == [0.0]
    assert got[-1][0] == pytest.approx(1.632993161855452)


def test_and_or():
    got, _ = _run("and(c) as an, or(c) as o", [(0, 0.0, True, ""), (0, 0.0, False, ""), (0, 0.0, True, "")],
                  window="length(2)")
    assert got == [[True, True], [False, True], [False, True]]


def test_min_max_forever_survive_expiry_not_reset():
    got, _ = _run("minForever(a) as lo, maxForever(a) as hi", [(5, 0, True, ""), (1, 0, True, ""), (3, 0, True, "")],
                  window="length(1)")
    assert got == [[5, 5], [1, 5], [1, 5]]
    # a batch window's reset starts them over (Siddhi drops every aggregator state on reset)
    got, _ = _run("minForever(a) as lo, maxForever(a) as hi", [(5, 0, True, ""), (1, 0, True, ""), (3, 0, True, "")],
                  window="lengthBatch(1)")
    assert got == [[5, 5], [1, 1], [3, 3]]


def test_min_and_max_over_nan_and_signed_zeros():
    nan = float("nan")
    # a NaN that comes first is the answer until a removal; one that comes later is passed
    # over; a NaN leaves the window by Java's equality (Siddhi's queue: Double.equals)
    got, _ = _run("min(b) as mn, max(b) as mx", [(1, v, True, "x") for v in (nan, 1.0, 2.0, float("nan"), 3.0)],
                  window="length(2)")
    # (the last: 2.0 leaves a NaN alone, which is the answer then, and 3.0 does not replace it)
    assert [[str(v) for v in row] for row in got] == [["nan", "nan"], ["nan", "nan"], ["1.0", "2.0"],
                                                     ["2.0", "2.0"], ["nan", "nan"]]
    got, _ = _run("min(b) as mn", [(1, v, True, "x") for v in (0.0, -0.0, 1.0, 2.0)], window="length(2)")
    assert [str(row[0]) for row in got] == ["0.0", "0.0", "-0.0", "1.0"]  # -0.0 is not 0.0, and leaves alone


@pytest.mark.parametrize(("fn", "values", "expected"), [
    ("min", [-0.0, 0.0, -0.0, 66.0], ["-0.0", "-0.0", "-0.0", "0.0"]),
    ("max", [0.0, -0.0, 0.0, -5.0], ["0.0", "0.0", "0.0", "-0.0"]),
    ("min", [0.0, -0.0, -1.0, 0.0, -0.0, 2.0, 3.0], ["0.0", "0.0", "-1.0", "-1.0", "-1.0", "0.0", "-0.0"]),
])
def test_min_and_max_between_equal_zeros_answer_the_older_one_left(fn, values, expected):
    """-0.0 and 0.0 compare equal, and Siddhi's queue keeps both in the order they came: after
    a removal its answer is the older one still in the window (Siddhi 5.1.33's answers; the
    first: the oldest -0.0 leaves, and the 0.0 after it answers though another -0.0 is left)."""
    got, _ = _run(f"{fn}(b) as m", [(1, v, True, "x") for v in values])
    assert [str(row[0]) for row in got] == expected


def test_min_state_from_a_snapshot_without_the_zeros_still_works():
    """A ``min`` state kept before the queue's zeros were followed restores without them."""
    from srota.engine.aggregators import _MinMax

    old = _MinMax(False)
    old.add(2.0)
    old.add(1.0)
    state = old.__getstate__()
    del state["zeros"]
    restored = object.__new__(_MinMax)
    restored.__setstate__(state)
    assert restored.remove(2.0) == 1.0
    assert restored.add(0.0) == 0.0
    assert restored.remove(1.0) == 0.0
    assert restored.add(-0.0) == 0.0 and restored.remove(0.0) == -0.0


def test_union_set():
    rt = SiddhiManager().create_siddhi_app_runtime(
        "define stream S (v string); @info(name='q') from S#window.length(2) "
        "select unionSet(createSet(v)) as u insert into O;")
    got = []
    rt.add_query_callback("q", lambda ts, i, r: got.extend(e.data[0] for e in i or ()))
    rt.start()
    for v in "aba":
        rt.get_input_handler("S").send([v])
    rt.shutdown()
    assert got == [{"a"}, {"a", "b"}, {"a", "b"}]


def test_reset_clears_batch_aggregates():
    got, _ = _run("count() as n, sum(a) as s", [(1, 0, True, "")] * 5, window="lengthBatch(2)")
    assert got == [[2, 2], [2, 2]]


@pytest.mark.parametrize("bad", ["sum(s)", "sum(a, b)", "avg(c)", "stdDev(s)", "and(a)", "count(a, b)",
                                 "min()", "distinctCount(c)"])
def test_aggregator_argument_errors(bad):
    with pytest.raises(SiddhiAppCreationError):
        _run(f"{bad} as x", [])


def test_union_set_prints_as_a_java_hashset_and_keeps_it_in_a_snapshot(run_app):
    from srota.engine import state_codec
    from srota.engine.aggregators import JavaHashSet

    runtime, got = run_app("define stream S (sym string);\n"
                           "from S select convert(unionSet(createSet(sym)), 'string') as s, "
                           "unionSet(createSet(sym)) as raw insert into Out;")
    for sym in ("WSO2", "IBM", "A"):
        runtime.get_input_handler("S").send([sym])
    # a HashSet's toString, in its hash order (tests/differential/recorded/core-sets-print-as-java-hashsets.json)
    assert [row[0] for row in got.rows] == ["[WSO2]", "[IBM, WSO2]", "[A, IBM, WSO2]"]
    raw = got.rows[-1][1]
    back = state_codec.loads(state_codec.dumps(raw))
    assert type(back) is JavaHashSet and back == raw and back.java_order == raw.java_order


def test_sets_hold_their_elements_as_a_java_hashset(run_app):
    """-0.0 is not 0.0 and every NaN is one element (``Double.equals``), and a float attribute's
    elements go in ``Float.hashCode``'s order and print as ``Float.toString``; Siddhi 5.1.33's
    answers (tests/differential/recorded/aggregator-union-set-java-equality-and-float-hash.json)."""
    from srota.engine import state_codec

    runtime, got = run_app("define stream S (d double, f float);\n"
                           "from S select sizeOfSet(unionSet(createSet(d))) as n, "
                           "convert(unionSet(createSet(d)), 'string') as s, "
                           "convert(unionSet(createSet(f)), 'string') as sf, unionSet(createSet(f)) as raw "
                           "insert into Out;")
    for v in (0.0, -0.0, float("nan"), float("nan"), 1.0, 0.1):
        runtime.get_input_handler("S").send([v, v])
    assert [row[:3] for row in got.rows] == [
        [1, "[0.0]", "[0.0]"], [2, "[0.0, -0.0]", "[0.0, -0.0]"], [3, "[0.0, -0.0, NaN]", "[0.0, -0.0, NaN]"],
        [3, "[0.0, -0.0, NaN]", "[0.0, -0.0, NaN]"], [4, "[0.0, -0.0, 1.0, NaN]", "[0.0, -0.0, NaN, 1.0]"],
        [5, "[0.0, -0.0, 1.0, 0.1, NaN]", "[0.0, -0.0, NaN, 1.0, 0.1]"]]
    raw = got.rows[-1][3]
    back = state_codec.loads(state_codec.dumps(raw))
    assert list(map(repr, back.java_order)) == list(map(repr, raw.java_order)) and back.float32


def test_a_set_of_a_float_attribute_holds_null(run_app):
    """``createSet`` of a null float is a set holding null (a HashSet takes null, hash 0)."""
    runtime, got = run_app("define stream S (f float);\n"
                           "from S select sizeOfSet(unionSet(createSet(f))) as n, "
                           "convert(unionSet(createSet(f)), 'string') as s insert into Out;")
    for v in (None, 1.5, None):
        runtime.get_input_handler("S").send([v])
    assert got.rows == [[1, "[null]"], [2, "[null, 1.5]"], [2, "[null, 1.5]"]]
