"""The json: namespace: JSONPath reads, setElement, conversions, aggregators, tokenizers."""
from __future__ import annotations

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager
from srota.engine.extensions._jsonpath import JsonPathError
from srota.engine.extensions.json import PathNotFound, _Group, gson, hash_order, parse, read

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


# ---------------------------------------------------------------------------- JSONPath as Jayway 2.4.0 reads it
# (every answer below is what Siddhi 5.1.33 gave: tests/differential/recorded/ext-json-path-*.json)
SHOP = parse('{"items": [1, 2, 3.5, "x"], "o": {"a": 1, "b": 2}, "s": "hello", "n": 5, "neg": [-1, -2],'
             ' "rows": [{"p": [1, 2]}, {"p": [3]}]}')


@pytest.mark.parametrize("path, expected", [
    ("$.items.length()", 4),
    ("$.items.size()", 4),
    ("$.o.length()", 2),
    ("$.s.length()", None),  # only arrays and objects have a length
    ("$.length()", 6),
    ("$.items.min()", 1.0),
    ("$.items.max()", 3.5),
    ("$.items.avg()", 6.5 / 3),
    ("$.items.sum()", 6.5),
    ("$.items.stddev()", 1.0274023338281626),
    ("$.items.sum(10, 2.5)", 19.0),  # the numeric parameters count too
    ("$.items.sum($.n)", 11.5),
    ("$.items.sum(5)", 6.5),  # Jayway reads one-character parameters as none
    ("$.neg.max()", 5e-324),  # max() starts from Double.MIN_VALUE
    ("$.items.concat()", "x"),
    ("$.items.concat(\"z\", 3)", "xz3"),
    ("$.neg.append(77)", [-1, -2, 77]),
    ("$.rows[*].p.sum()", [3.0, 3.0]),  # a function applies to each value an indefinite path finds
    ("$.rows[*].p.length()", [2, 1]),
])
def test_path_functions(path, expected):
    assert read(SHOP, path) == expected
    assert SHOP["neg"] == [-1, -2]  # append() changes a copy


@pytest.mark.parametrize("path", ["$.o.sum()", "$.n.sum()", "$.s.max()", "$.items.foo()", "$.rows[*].p[0].sum()"])
def test_path_functions_that_fail(path):
    # Jayway throws (nothing to aggregate, no such function): Siddhi's json functions drop the event
    with pytest.raises(JsonPathError):
        read(SHOP, path)


def test_a_path_after_a_function_reads_its_value():
    with pytest.raises(PathNotFound):
        read(SHOP, "$.items.length().x")


BOOKS = parse('{"book": [{"cat": "ref", "t": "A", "p": 8.95, "tags": ["x", "y"], "isbn": "1"},'
              ' {"cat": "fic", "t": "B", "p": 12, "tags": ["y"]}, {"cat": "fic", "t": "C", "p": "12", "tags": []},'
              ' {"cat": "ref", "t": "D", "p": 22.99, "tags": ["x", "z", "y"], "isbn": ""}], "cats": ["ref"], "lim": 10}')


@pytest.mark.parametrize("flt, expected", [
    ("@.cat in ['ref', 'x']", "AD"),
    ("@.cat IN $.cats", "AD"),
    ("@.cat nin ['ref']", "BC"),
    ("@.cat in $.missing", ""),
    ("@.p in [12]", "BC"),  # a number equals a string that reads as the same number
    ("@.p == '12'", "BC"),
    ("@.p == 12.0", "B"),  # ... but a string only equals a number whose text is the same ("12" is not 12.0)
    ("@.p === 12", "B"),
    ("@.p !== 12", "ACD"),
    ("@.tags size 2", "A"),
    ("@.t size 1", "ABCD"),
    ("@.tags empty true", "C"),
    ("@.isbn empty true", "D"),
    ("@.tags empty false", "ABD"),
    ("@.tags subsetof ['x', 'y']", "ABC"),
    ("@.tags contains 'x'", "AD"),
    ("@.t contains 'A'", "A"),
    ("@.t =~ /[ab]/i", "AB"),
    ("@.p =~ /1.*/", "BC"),
    ("!(@.cat == 'ref')", "BC"),
    ("!@.isbn", "BC"),
    ("@.cat == 'fic' && @.p > 10", "B"),
    ("(@.cat == 'ref' || @.p == 12) && @.t != 'D'", "ABC"),
    ("@.p < $.lim", "A"),
    ("@.t > 'B'", "CD"),
    ("@.tags == ['y']", "B"),
    ("@.tags.length() == 2", "A"),
    ("@.tags all ['x']", ""),  # `all` needs a list node no filter text gives: no item matches
    ("@.p matches 'x'", ""),
])
def test_filter_operators(flt, expected):
    assert "".join(read(BOOKS, f"$.book[?({flt})].t")) == expected


@pytest.mark.parametrize("path", [
    "$.book[?(@.tags anyof ['z'])]",  # anyof and noneof came with Jayway 2.5
    "$.book[?(@.p == )]",
    "$.lim[?(@ == 1)]",  # a filter on a primitive after a definite path
    "$.book[?(@.tags contains 'x' && @.q in [[1]])]",  # a list in a list is no filter value
    "$.book.",
    "$.book b",
])
def test_paths_jayway_cannot_read(path):
    with pytest.raises(JsonPathError):
        read(BOOKS, path)


def test_several_names_in_one_bracket():
    doc = parse('{"cat": "c", "title": "t", "n": {"a": [1, {"b": 2}], "d": {"e": 5, "b": 6}}}')
    assert read(doc, "$['cat','title']") == {"cat": "c", "title": "t"}  # the last step: one object
    assert read(doc, "$['cat','missing']") == {"cat": "c"}
    assert read(doc, "$['missing','nope']") == {}
    assert read(doc, "$.n['a','d'].b") == [6]  # elsewhere: each name in turn
    assert read(doc, "$.n['a','d'][0]") == [1]


def test_deep_scan_order():
    doc = parse('{"c": "c", "n": {"a": [1, {"b": 2}], "d": {"b": 6}}, "arr": [[1], {"b": 7}]}')
    # a node's children first, then each child's subtree
    assert read(doc, "$..*") == ["c", {"a": [1, {"b": 2}], "d": {"b": 6}}, [[1], {"b": 7}], [1, {"b": 2}],
                                 {"b": 6}, 1, {"b": 2}, 2, 6, [1], {"b": 7}, 1, 7]
    assert read(doc, "$..b") == [2, 6, 7]
    # at an array, Jayway runs the step after the scanned one on every element
    assert read(doc, "$..[0].b") == [2, 7]


def test_set_element_through_a_negative_index_drops_the_event(select_one):
    stream = "define stream S (json string, path string, e string);"
    doc = "{'a': [1, 2]}"
    assert select_one("json:setElement(json, path, e) as v", [doc, "$.a[-1]", "9"], stream) == []
    assert select_one("json:setElement(json, path, e) as v", [doc, "$.a[1]", "9"], stream) == [{"a": [1, "9"]}]


# ---- found by the differential generator (tests/differential/functions_collection.py)
def test_a_map_is_read_as_gson_writes_it(select_one):
    # Siddhi reads a non-string document through gson.toJson: keys as String.valueOf writes them,
    # in the map's HashMap order
    stream = "define stream S (l long, d double, s string);"
    assert select_one("json:getObject(map:create(l, s, d, 2), '$') as v", [7, 1.5, "x"], stream) == [
        {"7": "x", "1.5": 2}]
    assert select_one("json:setElement(map:create(l, s), '$', d, 'k') as v", [7, 1.5, "x"], stream) == [
        {"7": "x", "k": 1.5}]
    assert select_one("json:toString(map:create('id', s, 'b', 42)) as v", [7, 1.5, "ß"], stream) == [
        '{"b":42,"id":"ß"}']
    stream = "define stream S (b bool, d double);"
    assert select_one("json:toString(map:create(b, 1)) as v", [True, 1e10], stream) == ['{"true":1}']
    assert select_one("json:toString(map:create(d, 1)) as v", [True, 1e10], stream) == ['{"1.0E10":1}']


@pytest.mark.parametrize("text, expected", [
    ('{"a": 1} x', {"a": 1}),  # json-smart's permissive mode stops after the first object or array
    ("[1] 2", [1]),
    ("1 2", "1 2"),  # an unquoted text is a string to its end
    ("", ""),
    ('{"a": 1,}', {"a": 1}),  # useless commas
    ("[1,,2,]", [1, 2]),
    ("{,}", {}),
])
def test_json_smart_reads_trailing_data_and_useless_commas(select_one, text, expected):
    assert select_one("json:toObject(json) as v", [text, "$"]) == [expected]
    assert parse(text) == expected


def test_a_null_document_drops_the_event(select_one):
    # Gson writes a null as "null", which Jayway's JsonContext refuses
    for select in ("json:getString(json, '$.a')", "json:isExists(json, '$.a')", "json:getBool(json, '$.a')"):
        assert select_one(f"{select} as v", [None, "$"]) == []
        assert select_one(f"{select} as v", ["null", "$"]) == []
    assert select_one("json:getString(json, '$.a') as v", ["", "$"]) == []


def test_group_parses_as_json_simple_and_fails_on_what_it_never_added(run_app):
    app = "define stream S (json string);\nfrom S select json:group(json) as g insert into Out;"
    runtime, got = run_app(app)
    h = runtime.get_input_handler("S")
    for j in ['{"a": 1}', "{a: 2}", '{"b": 3} x', "null"]:
        h.send([j])
    # {a: 2} is no JSON to MODE_JSON_SIMPLE (dropped); trailing data is fine; "null" is a null
    assert got.rows == [['[{"a":1}]'], ['[{"a":1},{"b":3}]'], ['[{"a":1},{"b":3},null]']]
    group = _Group(1, as_object=False, second_is_bool=False)
    with pytest.raises(ValueError, match="never added"):  # (Siddhi unboxes a null count)
        group.remove('{"a": 1}')


@pytest.mark.parametrize("doc, path, expected", [
    # Jayway changes its targets in its own order (by name or index, descending): the first
    # that cannot take the element stops the rest (z is changed, m stops, a is not), and a
    # null one is skipped
    ('{"a": [1], "m": 5, "z": [2]}', "$.*", {"a": [1], "m": 5, "z": [2, 7]}),
    ('{"a": [[1], 5]}', "$.a[*]", {"a": [[1], 5]}),
    ('{"a": [1], "n": null, "b": [2]}', "$.*", {"a": [1, 7], "n": None, "b": [2, 7]}),
    ('{"a": [1], "x": {"y": 1}}', "$['x','q']", {"a": [1], "x": 7, "q": 7}),  # several names: each set
    # a deep scan runs a function on an array's elements under the array's own reference: the
    # array, its two elements: three targets, all the array
    ('{"a": [1, 2]}', "$..*.size()", {"a": [1, 2, 7, 7, 7]}),
])
def test_set_element_changes_targets_in_jayway_order(select_one, doc, path, expected):
    stream = "define stream S (json string, path string, e int);"
    assert select_one("json:setElement(json, path, e) as v", [doc, path, 7], stream) == [expected]


def test_set_element_drops_a_null_element_it_would_add_or_put(select_one):
    stream = "define stream S (json string, path string, e int, key string);"
    doc = '{"a": [1], "b": {}}'
    assert select_one("json:setElement(json, path, e) as v", [doc, "$.a", None, None], stream) == []
    assert select_one("json:setElement(json, path, e, key) as v", [doc, "$.b", None, "k"], stream) == []
    assert select_one("json:setElement(json, path, e) as v", [doc, "$.b", None, None], stream) == [
        {"a": [1], "b": None}]
    assert select_one("json:setElement(json, path, e, key) as v", [doc, "$.b", 1, ""], stream) == []
    # an array in an array takes no element (json-smart's setProperty refuses a list)
    assert select_one("json:setElement(json, path, e) as v", ["[[1], [2]]", "$[*]", 1, None], stream) == []


def test_long_numbers_keep_their_digits(select_one):
    # json-smart reads an integer past a long as a BigInteger (orjson would give a double) and a
    # decimal of more than 18 characters as a BigDecimal, which Gson writes with all its digits
    doc = '{"i": 123456789012345678901234567890, "d": 0.12345678901234567890, "e": 12345678901234567.5}'
    assert select_one("json:getString(json, '$.i') as v", [doc, "$"]) == ["123456789012345678901234567890"]
    assert select_one("json:getString(json, '$.d') as v", [doc, "$"]) == ["0.12345678901234567890"]
    assert select_one("json:getString(json, '$.e') as v", [doc, "$"]) == ["12345678901234567.5"]
    assert select_one("json:getDouble(json, '$.d') as v", [doc, "$"]) == [0.12345678901234568]
    assert select_one("json:group(json) as v", ['{"d": -0.000000000000000001}', "$"]) == ['[{"d":-1E-18}]']
    assert select_one("json:getString(json, '$.s') as v", ['{"s": "\\ud83d\\ude00", "n": 1234567890123456789.0}',
                                                          "$"]) == ["😀"]


def test_json_objects_are_taken_as_they_are(select_one, run_app):
    # json:group keeps a JSONObject (json:toObject's) as it is, and the tokenizers read any
    # object as it is: a BigDecimal stays one (written -1E-18); the functions write and parse it
    # again (Gson, then json-smart: -1E-18 is short enough to be a double, -1.0E-18)
    doc = '{"a": -0.000000000000000001}'
    assert select_one("json:group(json:toObject(json)) as v", [doc, "$"]) == ['[{"a":-1E-18}]']
    assert select_one("json:getString(json:toObject(json), '$') as v", [doc, "$"]) == ['{"a":-1.0E-18}']
    runtime, got = run_app("define stream S (json string);\n"
                           "from S#json:tokenize(json:toObject(json), '$') select jsonElement insert into Out;")
    runtime.get_input_handler("S").send([doc])
    assert got.rows == [['{"a":-1E-18}']]


def test_json_numbers_and_objects_keep_their_class_in_a_snapshot():
    from srota.engine import state_codec
    from srota.engine.extensions.json import BigDecimal, JsonObject, _json_objects

    obj = _json_objects(parse('{"a": 0.12345678901234567890, "b": [1]}'))
    back = state_codec.loads(state_codec.dumps({"o": obj}))["o"]
    assert type(back) is JsonObject and type(back["a"]) is BigDecimal and back["a"].text == "0.12345678901234567890"
    assert gson(back) == gson(obj) == '{"a":0.12345678901234567890,"b":[1]}'
