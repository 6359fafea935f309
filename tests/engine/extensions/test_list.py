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
