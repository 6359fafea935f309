"""The list: namespace: functions on object lists, list:collect/list:merge, #list:tokenize."""
from __future__ import annotations

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager

STREAM = "define stream S (s string, i int, a object, b object);\n"


@pytest.mark.parametrize("select, expected", [
    ("list:create(s, i, 'x')", ["IBM", 1, "x"]),
    ("list:create()", []),
    ("list:add(a, s)", [3, 1, 2, "IBM"]),
    ("list:add(a, s, i)", [3, "IBM", 1, 2]),
    ("list:addAll(a, b)", [3, 1, 2, 2, 9]),
    ("list:addAll(a, b, true)", [3, 1, 2, 9]),
    ("list:clear(a)", []),
    ("list:clone(a)", [3, 1, 2]),
    ("list:contains(a, 2)", True),
    ("list:containsAll(a, b)", False),
    ("list:containsAny(a, b)", True),
    ("list:get(a, i)", 1),
    ("list:indexOf(a, 2)", 2),
    ("list:lastIndexOf(a, 7)", -1),
    ("list:isEmpty(a)", False),
    ("list:isList(s)", False),
    ("list:remove(a, 1)", [3, 2]),
    ("list:removeAll(a, b)", [3, 1]),
    ("list:removeByIndex(a, 0)", [1, 2]),
    ("list:retainAll(a, b)", [2]),
    ("list:setValue(a, 0, s)", ["IBM", 1, 2]),
    ("list:size(a)", 3),
    # without an order, reversed: Siddhi's documented default REV (its one-argument execute)
    ("list:sort(a)", [2, 1, 3]),
    ("list:sort(a, 'ASC')", [1, 2, 3]),
    ("list:sort(a, 'DESC')", [3, 2, 1]),
    ("list:sort(a, 'rev')", [2, 1, 3]),
    # strings in String.CASE_INSENSITIVE_ORDER, as Siddhi's sortList
    ("list:sort(list:create('b', 'a', 'C'), 'asc')", ["a", "b", "C"]),
    ("list:sort(list:create('b', 'a', 'C'), 'desc')", ["C", "b", "a"]),
])
def test_functions(select_one, select, expected):
    assert select_one(f"{select} as v", ["IBM", 1, [3, 1, 2], [2, 9]]) == [expected]


def test_nulls_and_bad_indexes(select_one):
    assert select_one("list:create(s) as v", [None, 1, None, None]) == [[]]
    assert select_one("list:size(a) as v", [None, 1, None, None]) == []      # not a list: dropped
    # an index outside the list is null (Siddhi catches IndexOutOfBoundsException); a null one an error
    assert select_one("list:get(a, i) as v", [None, 5, [1], None]) == [None]
    assert select_one("list:get(a, i) as v", [None, -1, [1], None]) == [None]
    assert select_one("list:get(a, i) as v", [None, None, [1], None]) == []


@pytest.mark.parametrize("select", ["list:setValue(a)", "list:size(s, i)", "list:containsAny(s, i)",
                                    "list:removeAll(a)", "list:sort(a, s)", "list:sort(a, 'up')"])
def test_creation_errors(select):
    with pytest.raises(SiddhiAppCreationError) as info:
        SiddhiManager().create_siddhi_app_runtime(STREAM + f"from S select {select} as v insert into Out;")
    assert info.value.line == 2


def test_collect_and_merge(run_app):
    app = STREAM + "from S#window.length(2) select list:collect(s, true) as c, list:merge(a) as m insert into Out;"
    runtime, got = run_app(app)
    h = runtime.get_input_handler("S")
    h.send(["x", 0, [1, 2], None])
    h.send(["x", 0, [3], None])
    h.send(["y", 0, [], None])
    assert got.rows == [[["x"], [1, 2]], [["x"], [1, 2, 3]], [["y"], [3]]]


def test_tokenize(run_app):
    runtime, got = run_app(STREAM + "from S#list:tokenize(a, b) select index, value insert into Out;")
    runtime.get_input_handler("S").send(["", 0, [1, 2, 3], ["x"]])
    assert got.rows == [[0, [1, "x"]], [1, [2, None]], [2, [3, None]]]


TYPED = "define stream S (c long, i int, f float, d double, b bool);\n"


@pytest.mark.parametrize("select, expected", [
    # Java's equals: Integer 1 is not Long 1, nor Double 1.0, nor true (as real Siddhi answers)
    ("list:contains(list:create(1, 2), c)", False),
    ("list:contains(list:create(1, 2), i)", True),
    ("list:contains(list:create(1L, 2), c)", True),
    ("list:contains(list:create(c), 1L)", True),
    ("list:contains(list:create(1, 2), d)", False),
    ("list:contains(list:create(b), 1)", False),
    ("list:contains(list:create(list:create(1)), list:create(c))", False),
    ("list:contains(list:create(list:create(1L)), list:create(c))", True),
    ("list:indexOf(list:create(1L, 1, 2), i)", 1),
    ("list:indexOf(list:create(1, 1L, 2), c)", 1),
    ("list:lastIndexOf(list:create(1, 1L, 1), c)", 1),
    ("list:remove(list:create(1, 2, 1L), c)", [1, 2]),
    ("list:containsAll(list:create(1, 2), list:create(c))", False),
    ("list:containsAny(list:create(1, 2), list:create(c, 5))", False),
    ("list:removeAll(list:create(1, 2, 1L), list:create(c))", [1, 2]),
    ("list:retainAll(list:create(1, 2, 1L), list:create(c))", [1]),
    ("list:addAll(list:create(1, 2), list:create(c, 2), true)", [1, 2, 1]),
    # a float is looked for as the list holds it (Java's Float both times)
    ("list:contains(list:create(f), f)", True),
    ("list:indexOf(list:add(list:create(), f), f)", 0),
])
def test_values_compare_as_javas_equals(select_one, select, expected):
    got = select_one(f"{select} as v", [1, 1, 111.11, 1.0, True], TYPED)
    assert got == [expected] and [type(v) for v in got] == [type(expected)]


@pytest.mark.parametrize("select, expected", [
    ("list:sort(list:create(1.5, 3, 10L), 'ASC')", []),
    ("list:sort(list:create(3, 1L), 'DESC')", []),
    ("list:sort(list:create(i, c), 'ASC')", []),
    ("list:sort(list:create('b', 1), 'ASC')", []),
    ("list:sort(list:create(2, b), 'ASC')", []),
    ("list:sort(list:create(c, 3L, 2L), 'ASC')", [[1, 2, 3]]),
    ("list:sort(list:create(c), 'ASC')", [[1]]),
    # only a sort compares: reversing a mixed list is fine
    ("list:sort(list:create(1.5, 3, 10L))", [[10, 3, 1.5]]),
    ("list:sort(list:create(1.5, 3, 10L), 'REV')", [[10, 3, 1.5]]),
])
def test_sort_of_mixed_classes_drops_the_event(select_one, select, expected):
    """Java's compareTo takes only a value of its own class: Siddhi's sort throws a
    ClassCastException (the event is dropped) when the list mixes Integer, Long, Double, ..."""
    assert select_one(f"{select} as v", [1, 1, 1.5, 1.0, True], TYPED) == expected


def test_collect_holds_floats_and_longs(run_app):
    app = TYPED + ("from S#window.length(2) select convert(list:collect(f), 'string') as fs, "
                   "list:contains(list:collect(c), 1) as has_int, list:contains(list:collect(c), c) as has_long, "
                   "list:collect(c, true) as distinct insert into Out;")
    runtime, got = run_app(app)
    h = runtime.get_input_handler("S")
    h.send([1, 0, 111.11, 0.0, True])
    h.send([1, 0, 1.0e-5, 0.0, True])
    h.send([2, 0, 2.5, 0.0, True])
    assert got.rows == [["[111.11]", False, True, [1]], ["[111.11, 1.0E-5]", False, True, [1]],
                        ["[1.0E-5, 2.5]", False, True, [2]]]  # (the expired 1 took the only 1 away)


def test_collected_longs_stay_longs_in_a_snapshot():
    from srota.engine.extensions._checks import JavaLong

    app = "@app:playback\n" + TYPED + "from S#window.length(3) select list:collect(c) as v insert into Out;"
    rows: list = []

    def run(events, snapshot=None):
        runtime = SiddhiManager().create_siddhi_app_runtime(app)
        runtime.add_callback("Out", lambda evs: rows.extend(e.data[0] for e in evs))
        if snapshot is not None:
            runtime.restore(snapshot)
        runtime.start()
        for n, c in enumerate(events):
            runtime.get_input_handler("S").send([c, 0, 0.0, 0.0, True], timestamp=1000 + n)
        return runtime

    first = run([1, 2])
    data = first.snapshot()
    first.shutdown()
    run([3]).shutdown()
    run([3], data).shutdown()
    assert rows[-1] == [1, 2, 3] and [type(v) for v in rows[-1]] == [JavaLong] * 3


def test_a_forged_kind_of_int_cannot_make_another_class():
    """The snapshot tag of a JavaLong names its class: it must name a kind of int, made without
    calling anything the data names."""
    import msgpack
    from srota.engine import state_codec
    from srota.engine.extensions._checks import JavaLong

    assert type(state_codec.loads(state_codec.dumps(JavaLong(7)))) is JavaLong
    forged = msgpack.ExtType(8, msgpack.packb(["srota.engine.event:Event", 1]))
    with pytest.raises(state_codec.StateDecodeError, match="kind of int"):
        state_codec.loads(msgpack.packb(forged))


def test_a_null_is_distinct_drops_the_event(select_one, run_app):
    """Siddhi unboxes is.distinct (``(boolean) data[2]``): a null one is a NullPointerException."""
    stream = "define stream S (i int, b bool);\n"
    assert select_one("list:addAll(list:create(1), list:create(1, 2), b) as v", [1, None], stream) == []
    assert select_one("list:addAll(list:create(1), list:create(1, 2), b) as v", [1, True], stream) == [[1, 2]]
    runtime, got = run_app(stream + "from S#window.length(2) select list:collect(i, b) as c insert into C;\n"
                                    "from S#window.length(2) select list:merge(list:create(i), b) as m insert into Out;")
    collected: list = []
    runtime.add_callback("C", lambda events: collected.extend(e.data[0] for e in events))
    h = runtime.get_input_handler("S")
    h.send([1, True])
    h.send([2, None])
    h.send([1, True])
    assert collected == [[1], [1]] and got.rows == [[[1]], [[1]]]


@pytest.mark.parametrize("values, expected", [
    # Java compares code points, each upper- then lower-cased one to one: ß stays ß (after z),
    # İ is i, ſ is s; a code point beyond the BMP sorts after U+E000
    ("'ß', 'st', 'Z', 'sa'", ["sa", "st", "Z", "ß"]),
    ("'i', 'İ', 'ı', 'j', 'h'", ["h", "i", "İ", "ı", "j"]),
    ("'sb', 'ſ', 'S'", ["ſ", "S", "sb"]),
    ("'😀', '\ue000'", ["\ue000", "😀"]),
])
def test_sort_of_strings_in_javas_case_insensitive_order(select_one, values, expected):
    assert select_one(f"list:sort(list:create({values}), 'asc') as v", ["", 0, None, None]) == [expected]


def test_sort_of_doubles_in_javas_order(select_one):
    """Double.compareTo: -0.0 before 0.0."""
    got = select_one("list:sort(list:create(0.0, -0.0, 1.0, -0.0), 'asc') as v", ["", 0, None, None])
    assert got == [[-0.0, -0.0, 0.0, 1.0]] and [str(v) for v in got[0]] == ["-0.0", "-0.0", "0.0", "1.0"]
