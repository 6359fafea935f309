"""The map: namespace: functions on object maps, map:collect/map:merge, #map:tokenize."""
from __future__ import annotations

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager

STREAM = "define stream S (k string, v long, m object, n object);\n"


def project(run_app, select: str, row: list) -> list:
    runtime, got = run_app(STREAM + f"from S select {select} insert into Out;")
    runtime.get_input_handler("S").send(row)
    return got.rows[0] if got.rows else []


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
def test_functions(run_app, select, expected):
    assert project(run_app, f"{select} as v", ["IBM", 100, {"a": 1}, {"a": 2, "b": 3}]) == [expected]


def test_keys_follow_java_hashmap_order(run_app):
    # Siddhi iterates a java.util.HashMap: "citizen" hashes before "age"
    assert project(run_app, "map:keys(m) as v", ["", 0, {"age": 1, "citizen": 2}, None]) == [["citizen", "age"]]


def test_not_a_map_is_an_error(run_app):
    assert project(run_app, "map:size(m) as v", ["", 0, None, None]) == []
    assert project(run_app, "map:isMap(m) as v", ["", 0, None, None]) == [False]


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
