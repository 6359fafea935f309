"""The str: namespace (siddhi-execution-string)."""
from __future__ import annotations

import logging

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager

STREAM = "define stream S (s string, t string, i int, l long, f float, d double, b bool, o object);\n"
ROW = ["Hello World", "o", 3, 10, 111.11, 2.5, True, None]


@pytest.mark.parametrize("select, expected", [
    ("str:charAt(s, 4)", "o"),
    ("str:charFrequency(s, t)", 2),
    ("str:coalesce(o, o)", None),
    ("str:coalesce(t, s)", "o"),
    ("str:concat(s, '-', i, '-', f, '-', d, '-', b)", "Hello World-3-111.11-2.5-true"),
    ("str:contains(s, 'World')", True),
    ("str:equalsIgnoreCase(s, 'HELLO world')", True),
    ("str:fillTemplate('{{1}} is {{2}} ({{3}})', s, i, f)", "Hello World is 3 (111.11)"),
    ("str:hex('MySQL')", "4d7953514c"),
    ("str:unhex('4d7953514c')", "MySQL"),
    ("str:length(s)", 11),
    ("str:locate('o', s)", 4),
    ("str:locate('o', s, 5)", 7),
    ("str:locate('z', s, 5)", 4),  # Siddhi adds the start to indexOf's -1 (real Siddhi 5.1.33 answers 4)
    ("str:lower(s)", "hello world"),
    ("str:upper(s)", "HELLO WORLD"),
    ("str:regexp(s, 'H.*d')", True),
    ("str:regexp(s, 'World')", False),  # matches() is anchored at both ends
    ("str:repeat(t, i)", "ooo"),
    ("str:replaceAll(s, '(o)', '[$1]')", "Hell[o] W[o]rld"),
    ("str:replaceFirst(s, 'o', '0')", "Hell0 World"),
    ("str:reverse(s)", "dlroW olleH"),
    ("str:split('a,b,,', ',', 1)", "b"),
    ("str:strcmp('AbC', 'Hello')", -7),
    ("str:substr(s, 6)", "World"),
    ("str:substr(s, 0, 5)", "Hello"),
    ("str:substr(s, 'W(or)ld', 1)", "or"),
    ("str:substr(s, 'xyz')", ""),
    ("str:trim(t)", "o"),
])
def test_functions(select_one, select, expected):
    assert select_one(f"{select} as v", ROW) == [expected]


def test_null_handling(select_one, caplog):
    # contains(null, x) is false; equalsIgnoreCase(x, null) is false; concat skips nulls
    row = [None, None, None, None, None, None, None, None]
    assert select_one("str:contains(s, 'a') as a, str:concat('a', s) as b", row) == [False, "a"]
    # most functions reject a null argument: the event is logged and dropped
    with caplog.at_level(logging.ERROR):
        assert select_one("str:upper(s) as v", row) == []
    assert "cannot be null" in caplog.text


def test_runtime_error_goes_to_the_fault_stream(run_app):
    app = ("@OnError(action='STREAM') define stream S (s string);\n"
           "from S select str:charFrequency(s, 'ab') as n insert into Out;\n"
           "from !S select s, _error insert into Errors;")
    runtime, got = run_app(app, stream="Errors")
    runtime.get_input_handler("S").send(["abc"])
    assert got.rows[0][0] == "abc"


@pytest.mark.parametrize("select, message", [
    ("str:charAt(s, 1, 2)", "no parameter overload"),
    ("str:concat(s)", "at least two"),
    ("str:length()", "no parameter overload"),
    ("str:lower(i)", "no parameter overload"),
    ("str:equalsIgnoreCase(s, 1)", "no parameter overload"),
    ("str:fillTemplate(s)", "no parameter overload"),
    ("str:fillTemplate(s, o, s)", "no parameter overload"),
    ("str:coalesce(s, i)", "one type"),
    ("str:regexp(s, '(')", "invalid regular expression"),
])
def test_creation_errors_carry_position(select, message):
    with pytest.raises(SiddhiAppCreationError) as info:
        SiddhiManager().create_siddhi_app_runtime(STREAM + f"from S\nselect {select} as v insert into Out;")
    assert message in str(info.value)
    assert info.value.line == 3 and info.value.column == 8


def test_group_concat(run_app):
    app = STREAM + "from S#window.length(2) select str:groupConcat(s, '-', false, 'DESC') as v insert into Out;"
    runtime, got = run_app(app)
    h = runtime.get_input_handler("S")
    for s in ["AAA", "AAA", "BBB", "CCC"]:
        h.send([s, None, 1, 1, 1.0, 1.0, True, None])
    assert [r[0] for r in got.rows] == ["AAA", "AAA-AAA", "BBB-AAA", "CCC-BBB"]


def test_group_concat_distinct_needs_constants():
    with pytest.raises(SiddhiAppCreationError, match="distinct"):
        SiddhiManager().create_siddhi_app_runtime(
            STREAM + "from S select str:groupConcat(s, ',', b) as v insert into Out;")


def test_group_concat_state_is_in_snapshots():
    app = STREAM + "@info(name='q') from S select str:groupConcat(s) as v insert into Out;"
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    rt.start()
    rt.get_input_handler("S").send(["A", None, 1, 1, 1.0, 1.0, True, None])
    snap = rt.snapshot()
    rt.shutdown()
    rt2 = SiddhiManager().create_siddhi_app_runtime(app)
    got = []
    rt2.add_callback("Out", lambda events: got.extend(e.data[0] for e in events))
    rt2.start()
    rt2.restore(snap)
    rt2.get_input_handler("S").send(["B", None, 1, 1, 1.0, 1.0, True, None])
    rt2.shutdown()
    assert got == ["A,B"]


def test_tokenize(run_app):
    runtime, got = run_app("define stream S (data string);\n"
                           "from S#str:tokenize(data, ',', true) select token insert into Out;")
    runtime.get_input_handler("S").send(["a,b,a,,c,,"])
    assert got.rows == [["a"], ["b"], [""], ["c"]]


def test_tokenize_regex_must_be_constant():
    with pytest.raises(SiddhiAppCreationError, match="constant"):
        SiddhiManager().create_siddhi_app_runtime(
            "define stream S (data string, r string);\nfrom S#str:tokenize(data, r) select token insert into Out;")


@pytest.mark.parametrize("select, row, expected", [
    # Java indexes, measures and compares UTF-16 units: U+1F600 is two of them
    ("str:charAt(s, 2)", ["\U0001F600x", "", 0], "x"),
    ("str:substr(s, 2)", ["\U0001F600xy", "", 0], "xy"),
    ("str:substr(s, 0, 2)", ["\U0001F600xy", "", 0], "\U0001F600"),
    ("str:locate('x', s)", ["\U0001F600x", "", 0], 2),
    ("str:locate('x', s, 1)", ["\U0001F600x", "", 0], 2),
    ("str:strcmp('+', s)", ["\U0001F600", "", 0], 43 - 0xD83D),
    ("str:length(s)", ["\U0001F600x", "", 0], 3),
    # Siddhi searches s.substring(start) and adds start: an absent string gives start - 1
    ("str:locate('z', s, i)", ["abc", "", 2], 1),
    ("str:locate('z', s, i)", ["abc", "", 0], -1),
    # Java reads a replacement's $ and \ only at a match: without one, a bad template is no error
    ("str:replaceFirst(s, 'a{2}', t)", ["abc", "$", 0], "abc"),
    ("str:replaceAll(s, 'q', t)", ["abc", "\\", 0], "abc"),
])
def test_java_strings(select_one, select, row, expected):
    stream = "define stream S (s string, t string, i int);\n"
    assert select_one(f"{select} as v", row, stream) == [expected]


def test_java_strings_errors(select_one):
    stream = "define stream S (s string, t string, i int);\n"
    # charFrequency wants one UTF-16 unit; locate's start past the end is substring's error
    assert select_one("str:charFrequency(s, t) as v", ["a\U0001F600", "\U0001F600", 0], stream) == []
    assert select_one("str:locate('a', s, i) as v", ["abc", "", 4], stream) == []
    assert select_one("str:charAt(s, 2) as v", ["\U0001F600", "", 0], stream) == []
    assert select_one("str:replaceFirst(s, 'a', t) as v", ["abc", "$", 0], stream) == []


@pytest.mark.parametrize("select, row, expected", [
    # unhex reads each pair with Integer.parseInt(pair, 16): a sign, any Unicode decimal digit
    # and the fullwidth letters are digits of it
    ("str:unhex(s)", ["ＡＢ", "", 0], "\u00ab"),
    ("str:unhex(s)", ["+f\u0663a", "", 0], "\x0f:"),
    # coalesce of one argument: Siddhi calls its execute(Object), which gives null
    ("str:coalesce(s)", ["x", "", 0], None),
    ("str:coalesce(i)", ["x", "", 3], None),
    # fillTemplate trims a placeholder with String.trim: controls go, U+00A0 stays
    ("str:fillTemplate(t, s)", ["v", "{{\x011}}", 0], "v"),
    ("str:fillTemplate(t, map:create('name', s))", ["v", "{{\u00a0name}}", 0], "\u00a0name"),
    ("str:fillTemplate(t, map:create('name', s))", ["v", "{{\x01name\t}}", 0], "v"),
    # equalsIgnoreCase compares Character.toUpperCase, then toLowerCase, of each character:
    # simple (one-character) mappings, not Python's full ones
    ("str:equalsIgnoreCase(s, t)", ["\u0130", "i", 0], True),
    ("str:equalsIgnoreCase(s, t)", ["\ufb05", "\ufb06", 0], False),
    ("str:equalsIgnoreCase(s, t)", ["\u1fb3", "\u1fbc", 0], True),
    ("str:equalsIgnoreCase(s, t)", ["\u00df", "\u1e9e", 0], True),
    ("str:equalsIgnoreCase(s, t)", ["a\U00010400", "A\U00010428", 0], True),
])
def test_java_parsing_and_case(select_one, select, row, expected):
    stream = "define stream S (s string, t string, i int);\n"
    assert select_one(f"{select} as v", row, stream) == [expected]


@pytest.mark.parametrize("select, row", [
    # Integer.parseInt takes no spaces or underscores (Python's int takes both)
    ("str:unhex(s)", [" 1", "", 0]),
    ("str:unhex(s)", ["1_", "", 0]),
    ("str:fillTemplate(t, s)", ["v", "{{\u00a01}}", 0]),
    ("str:fillTemplate(t, s)", ["v", "{{0_1}}", 0]),
    # String.split/replaceAll/replaceFirst compile the regex per call: a bad constant one fails
    # each event, and the app is created
    ("str:split(s, '(', 0)", ["a", "", 0]),
    ("str:replaceAll(s, '(', t)", ["a", "", 0]),
    ("str:replaceFirst(s, '(', t)", ["a", "", 0]),
])
def test_java_parsing_errors_drop_the_event(select_one, select, row):
    stream = "define stream S (s string, t string, i int);\n"
    assert select_one(f"{select} as v", row, stream) == []


def test_group_concat_orders_as_string_compare_to(run_app):
    # a TreeMap of String.compareTo: UTF-16 units, so U+1F600 (D83D DE00) sorts before U+FFFD
    app = "define stream S (s string);\nfrom S select str:groupConcat(s, ',', false, 'ASC') as v insert into Out;"
    runtime, got = run_app(app)
    for s in ["\ufffd", "\U0001F600", "a"]:
        runtime.get_input_handler("S").send([s])
    assert [r[0] for r in got.rows] == ["\ufffd", "\U0001F600,\ufffd", "a,\U0001F600,\ufffd"]
