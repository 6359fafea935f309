"""The json: namespace: JSONPath reads, setElement, conversions, aggregators, tokenizers."""
from __future__ import annotations

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager
from srota.engine.extensions.json import gson, hash_order, parse, read

STREAM = "define stream S (json string, path string);\n"
DOC = '{name:"John", age:25, married:true, salary:2500.5, bar:[{barName:"b1"},{barName:"b2"}]}'


@pytest.mark.parametrize("select, path, expected", [
    ("json:getString(json, path)", "$.name", "John"),
    ("json:getString(json, path)", "$.bar", '[{"barName":"b1"},{"barName":"b2"}]'),
    ("json:getString(json, path)", "$.missing", None),
    ("json:getInt(json, path)", "$.age", 25),
    ("json:getInt(json, path)", "$.salary", None),
    ("json:getLong(json, path)", "$.age", 25),
    ("json:getDouble(json, path)", "$.salary", 2500.5),
    ("json:getDouble(json, path)", "$.name", None),
    ("json:getFloat(json, path)", "$.age", 25.0),
    ("json:getBool(json, path)", "$.married", True),
    # the function gives null for a value not "true"/"false", which Siddhi turns to false as it
    # does every null from a bool function (its BoolConditionExpressionExecutor)
    ("json:getBool(json, path)", "$.name", False),
    ("json:getObject(json, path)", "$.bar[1]", {"barName": "b2"}),
    ("json:getObject(json, path)", "$..barName", ["b1", "b2"]),
    ("json:isExists(json, path)", "$.age", True),
    ("json:isExists(json, path)", "$.xyz", False),
])
def test_reads(select_one, select, path, expected):
    assert select_one(f"{select} as v", [DOC, path]) == [expected]


def test_invalid_json_is_an_error(select_one):
    assert select_one("json:isExists(json, path) as v", ['{name:"John", age:25,', "$.age"]) == []


def test_set_element(select_one):
    stream = "define stream S (json string, path string, e string, key string);"
    doc = "{'name': 'Stationary', 'items': ['pen']}"
    assert select_one("json:setElement(json, path, e) as v", [doc, "$.items", "book", None], stream) == [
        {"name": "Stationary", "items": ["pen", "book"]}]
    assert select_one("json:setElement(json, path, e, key) as v", [doc, "$", "{k: 1}", "x"], stream) == [
        {"name": "Stationary", "items": ["pen"], "x": {"k": 1}}]
    assert select_one("json:setElement(json, path, e, key) as v", [doc, "$.nope", "1", "x"], stream) == [
        {"name": "Stationary", "items": ["pen"]}]
    # without a key, a leaf that is not there is not added (Jayway's set, as in Siddhi 5.1.33)
    assert select_one("json:setElement(json, path, e) as v", [doc, "$.nope", "1", None], stream) == [
        {"name": "Stationary", "items": ["pen"]}]
    assert select_one("json:setElement(json, path, e) as v", [doc, "$.items[3]", "1", None], stream) == [
        {"name": "Stationary", "items": ["pen"]}]
    assert select_one("json:setElement(json, path, e) as v", [doc, "$.name", "Office", None], stream) == [
        {"name": "Office", "items": ["pen"]}]


def test_to_object_and_to_string(select_one):
    stream = "define stream S (json string, b bool);"
    assert select_one("json:toString(json:toObject(json), b) as v",
                      ['{"user": "david"}', True], stream) == ['"{\\"user\\":\\"david\\"}"']
    assert select_one("json:toString(json) as v", ["a<b", False], stream) == ['"a\\u003cb"']
    assert select_one("json:toObject(json) as v", ["{oops", False], stream) == [None]


def test_group_aggregators(run_app):
    app = ("define stream S (json string);\n"
           "from S#window.length(2) select json:group(json, 'all', true) as g, json:groupAsObject(json) as o "
           "insert into Out;")
    runtime, got = run_app(app)
    h = runtime.get_input_handler("S")
    for j in ['{"time":"1","date":"d"}', '{"date":"d","time":"1"}', None]:
        h.send([j])
    assert got.rows[0][0] == '{"all":[{"date":"d","time":"1"}]}'  # HashMap order, as Siddhi prints
    assert got.rows[1][1] == [{"date": "d", "time": "1"}, {"date": "d", "time": "1"}]
    assert got.rows[2][1] == [{"date": "d", "time": "1"}, None]


def test_tokenizers(run_app):
    app = ("define stream S (json string, path string);\n"
           "from S#json:tokenize(json, path, false) select jsonElement insert into Out;")
    runtime, got = run_app(app)
    h = runtime.get_input_handler("S")
    h.send([DOC, "$.bar"])
    h.send([DOC, "$.name"])
    h.send([DOC, "$.missing"])
    assert got.rows == [['{"barName":"b1"}'], ['{"barName":"b2"}'], ["John"], [None]]


def test_creation_errors():
    with pytest.raises(SiddhiAppCreationError) as info:
        SiddhiManager().create_siddhi_app_runtime(
            "define stream S (json string, n int);\nfrom S select json:getString(json, n) as v insert into Out;")
    assert (info.value.line, info.value.column) == (2, 15)
    with pytest.raises(SiddhiAppCreationError, match="constant"):
        SiddhiManager().create_siddhi_app_runtime(
            "define stream S (json string, p string, f bool);\n"
            "from S#json:tokenize(json, p, f) select jsonElement insert into Out;")


def test_helpers():
    assert parse("{a: 'x', b: [1, 2.5, true, null]}") == {"a": "x", "b": [1, 2.5, True, None]}
    assert list(hash_order({"firstName": 1, "lastName": 2, "age": 3, "zz": 4})) == ["zz", "firstName",
                                                                                      "lastName", "age"]
    assert gson({"d": 1e7, "n": None}) == '{"d":1.0E7,"n":null}'
    store = parse("{book: [{t: 'A', p: 8}, {t: 'B', p: 12}]}")
    assert read(store, "$.book[?(@.p > 10)].t") == ["B"]
    assert read(store, "$.book[*].t") == ["A", "B"]
