"""The map: namespace: functions on object maps, map:collect/map:merge, #map:tokenize."""
from __future__ import annotations

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager

STREAM = "define stream S (k string, v long, m object, n object);\n"


@pytest.mark.parametrize("select, expected", [
    ("map:create(k, v, 'x', 1)", {"IBM": 100, "x": 1}),
    ("map:create()", {}),
    ("map:put(m, k, v)", {"a": 1, "IBM": 100}),
    ("map:putIfAbsent(m, 'a', 5)", {"a": 1}),
    ("map:putAll(m, n)", {"a": 2, "b": 3}),
    ("map:remove(m, 'a')", {}),
    ("map:replace(m, 'zz', 5)", {"a": 1}),
    ("map:replaceAll(m, n)", {"a": 2}),
    ("map:clear(m)", {}),
    ("map:clone(m)", {"a": 1}),
    ("map:get(m, 'a')", 1),
    ("map:get(m, 'zz', 'none')", "none"),
    ("map:containsKey(m, 'a')", True),
    ("map:containsValue(m, 1)", True),
    ("map:isEmpty(m)", False),
    ("map:isMap(k)", False),
    ("map:size(n)", 2),
    ("map:keys(n)", ["a", "b"]),
    ("map:values(n)", [2, 3]),
    ("map:combineByKey(m, n)", {"a": [1, 2], "b": [None, 3]}),
    ("map:toJSON(n)", '{"a":2,"b":3}'),
    ("map:toXML(n, 'r')", "<r><a>2</a><b>3</b></r>"),
    ("map:createFromJSON(\"{'s': 'IBM', 'p': {'q': 1}}\")", {"s": "IBM", "p": {"q": 1}}),
    ("map:createFromXML('<r><a>1</a><b>2.5</b><c>true</c><d>x</d></r>')", {"a": 1, "b": 2.5, "c": True, "d": "x"}),
])
def test_functions(select_one, select, expected):
    assert select_one(f"{select} as v", ["IBM", 100, {"a": 1}, {"a": 2, "b": 3}]) == [expected]


def test_keys_follow_java_hashmap_order(select_one):
    # Siddhi iterates a java.util.HashMap: "citizen" hashes before "age"
    assert select_one("map:keys(m) as v", ["", 0, {"age": 1, "citizen": 2}, None]) == [["citizen", "age"]]


def test_not_a_map_is_an_error(select_one):
    assert select_one("map:size(m) as v", ["", 0, None, None]) == []
    assert select_one("map:isMap(m) as v", ["", 0, None, None]) == [False]


@pytest.mark.parametrize("select", ["map:create(k)", "map:get(k, m)", "map:isEmpty(m, k)", "map:keys(k)",
                                    "map:putAll(m, n, m)", "map:toXML(m, 'a', 'b')", "map:replace(k, k, v)"])
def test_creation_errors(select):
    with pytest.raises(SiddhiAppCreationError) as info:
        SiddhiManager().create_siddhi_app_runtime(STREAM + f"from S select {select} as v insert into Out;")
    assert info.value.line == 2


def test_collect_and_merge(run_app):
    app = (STREAM + "from S#window.length(2) select map:collect(k, v) as c, map:merge(m) as g insert into Out;")
    runtime, got = run_app(app)
    h = runtime.get_input_handler("S")
    h.send(["a", 1, {"x": 1}, None])
    h.send(["b", 2, {"y": 2}, None])
    h.send(["c", 3, {"z": 3}, None])
    assert got.rows == [[{"a": 1}, {"x": 1}], [{"a": 1, "b": 2}, {"x": 1, "y": 2}],
                        [{"b": 2, "c": 3}, {"y": 2, "z": 3}]]


def test_tokenize(run_app):
    runtime, got = run_app(STREAM + "from S#map:tokenize(m, n) select key, value insert into Out;")
    runtime.get_input_handler("S").send(["", 0, {1: "one"}, {2: "two"}])
    assert got.rows == [[1, ["one", None]], [2, [None, "two"]]]


def test_tokenize_iterates_a_new_hash_set_of_the_keys(run_app):
    # Siddhi collects even one map's keys into a new HashSet (a table of 16): a clone, whose
    # table is sized for its entries (4 here), iterates its keys in another order than that set
    runtime, got = run_app("define stream S (a string, b string);\n"
                           "from S#map:tokenize(map:clone(map:create(a, 1, b, 2))) select key, value insert into Out;")
    runtime.get_input_handler("S").send(["é", "ü"])
    assert got.rows == [["é", 1], ["ü", 2]]


def test_a_float_in_a_map_prints_as_the_float_it_was(select_one):
    """A float attribute put into a map is held as Java holds its Float: its own shortest digits
    (111.11), not the double's (111.11000061035156), as str:fillTemplate and convert show it;
    cast(..., 'float') gives the same 32-bit value back."""
    stream = "define stream S (p float, d double);"
    assert select_one("convert(map:get(map:create('p', p), 'p'), 'string') as v", [111.11, 2.5], stream) == ["111.11"]
    assert select_one("convert(map:get(map:put(map:create(), 'p', p), 'p'), 'string') as v", [1.0e-5, 2.5],
                      stream) == ["1.0E-5"]
    assert select_one("convert(map:get(map:create('d', d), 'd'), 'string') as v", [111.11, 111.11], stream) == [
        "111.11"]
    got = select_one("cast(map:get(map:create('p', p), 'p'), 'float') as v", [111.11, 2.5], stream)
    assert got == [pytest.approx(111.11000061035156, rel=0, abs=0)]


TYPED = "define stream S (c long, i int, f float, d double, b bool);\n"


@pytest.mark.parametrize("select, expected", [
    # Java's equals on keys and values: Integer 1 is not Long 1, nor Double 1.0, nor true
    ("map:containsKey(map:create(1, 'x'), c)", False),
    ("map:containsKey(map:create(1L, 'x'), c)", True),
    ("map:containsKey(map:create(1.0, 'x'), i)", False),
    ("map:get(map:create(1, 'x'), c)", None),
    ("map:get(map:create(1L, 'x'), i)", None),
    ("map:get(map:create(1L, 'x'), c)", "x"),
    ("map:get(map:create(b, 'x'), i)", None),
    ("map:get(map:create(1, 'x'), c, 'none')", "none"),
    ("map:containsValue(map:create('k', 1), c)", False),
    ("map:containsValue(map:create('k', c), 1L)", True),
    ("map:remove(map:create(1, 'x'), c)", {1: "x"}),
    ("map:remove(map:create(1L, 'x'), c)", {}),
    ("map:replace(map:create(1, 'x'), c, 'z')", {1: "x"}),
    ("map:replaceAll(map:create(1, 'x'), map:create(1L, 'z'))", {1: "x"}),
    ("map:putIfAbsent(map:create(1L, 'x'), c, 'z')", {1: "x"}),
    # a float key is looked for as the map holds it (Java's Float both times)
    ("map:get(map:create(f, 'x'), f)", "x"),
])
def test_keys_and_values_compare_as_javas_equals(select_one, select, expected):
    assert select_one(f"{select} as v", [1, 1, 111.11, 1.0, True], TYPED) == [expected]


def test_collect_holds_floats_and_longs(run_app):
    app = TYPED + ("from S#window.length(2) select convert(map:collect('p', f), 'string') as fs, "
                   "map:containsKey(map:collect(c, f), 1) as has_int, map:containsKey(map:collect(c, f), c) as has_long "
                   "insert into Out;")
    runtime, got = run_app(app)
    h = runtime.get_input_handler("S")
    h.send([1, 0, 111.11, 0.0, True])
    h.send([2, 0, 1.0e-5, 0.0, True])
    assert got.rows == [["{p=111.11}", False, True], ["{p=1.0E-5}", False, True]]


def test_a_map_prints_in_java_hashmap_order(select_one):
    """String.valueOf of a HashMap (convert, and a map inside a list that map:toXML prints)
    iterates its hash order, not the order the keys were put in (as real Siddhi answers)."""
    assert select_one("convert(map:create('b', 1, 'a', 2), 'string') as v", ["", 0, None, None]) == ["{a=2, b=1}"]
    assert select_one("map:toXML(map:create('k', list:create(map:create('y', 1, 'x', 2)))) as v",
                      ["", 0, None, None]) == ["<k>[{x=2, y=1}]</k>"]


def test_to_xml_of_a_null_key_drops_the_event(select_one):
    """Siddhi writes each key with key.toString(): a null key is a NullPointerException."""
    assert select_one("map:toXML(map:create(k, 1)) as v", [None, 0, None, None]) == []
    assert select_one("map:toXML(map:create(k, 1), 'r') as v", [None, 0, None, None]) == []
    assert select_one("map:toXML(map:create(k, 1)) as v", ["a", 0, None, None]) == ["<a>1</a>"]


def test_a_copied_map_iterates_in_a_table_sized_for_its_entries(select_one):
    """new HashMap<>(m) sizes its table for m's entries (1 entry: 2 slots, 2: 4, 3-5: 8), and
    putAll into a map without a table sizes it at once: the keys come out in that table's
    order (tests/differential/recorded/ext-map-copies-iterate-in-their-own-table.json)."""
    row = ["s", 2, None, None]
    assert select_one("map:keys(map:clone(map:create(false, k, 2, k))) as v", row) == [[False, 2]]
    assert select_one("map:keys(map:create(false, k, 2, k)) as v", row) == [[2, False]]


def test_collect_hands_out_copies_sized_for_their_entries(run_app):
    runtime, got = run_app("define stream S (k string, v int);\n"
                           "from S select map:keys(map:collect(k, v)) as keys insert into Out;")
    for k in ("B", "IBM"):
        runtime.get_input_handler("S").send([k, 1])
    assert got.rows == [[["B"]], [["IBM", "B"]]]


def test_a_java_hashmap_keeps_its_table_in_a_snapshot():
    from srota.engine import state_codec
    from srota.engine.extensions._checks import JavaHashMap, java_map_copy

    copy = java_map_copy(JavaHashMap([("B", 1), ("IBM", 2)]))
    back = state_codec.loads(state_codec.dumps({"m": copy}))["m"]
    assert type(back) is JavaHashMap and back == copy and back.table == copy.table == 4


def test_a_copied_map_equals_the_map_it_copies(select_one):
    """AbstractMap.equals compares entries only, whatever table either map has."""
    row = ["s", 2, None, None]
    assert select_one("list:contains(list:create(map:clone(map:create(k, v))), map:create(k, v)) as v", row) == [True]
    assert select_one("list:contains(list:create(map:collect(k, v)), map:create(k, v)) as v", row) == [True]
    assert select_one('list:contains(list:create(map:createFromJSON("""{"a": "x"}""")), '
                      "map:create('a', 'x')) as v", row) == [True]
    # and the values compare as Java's equals: Integer 1 is not Double 1.0
    assert select_one("list:contains(list:create(map:create('a', 1)), map:create('a', 1.0)) as v", row) == [False]
