"""The str: namespace (siddhi-execution-string)."""
from __future__ import annotations

import logging

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager

STREAM = "define stream S (s string, t string, i int, l long, f float, d double, b bool, o object);\n"
ROW = ["Hello World", "o", 3, 10, 111.11, 2.5, True, None]


def project(run_app, select: str, row: list | None = None) -> list:
    runtime, got = run_app(STREAM + f"from S select {select} insert into Out;")
    runtime.get_input_handler("S").send(row or ROW)
    return got.rows[0] if got.rows else []


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
    ("str:locate('z', s, 5)", -1),
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
def test_functions(run_app, select, expected):
    assert project(run_app, f"{select} as v") == [expected]


def test_null_handling(run_app, caplog):
    # contains(null, x) is false; equalsIgnoreCase(x, null) is false; concat skips nulls
    row = [None, None, None, None, None, None, None, None]
    assert project(run_app, "str:contains(s, 'a') as a, str:concat('a', s) as b", row) == [False, "a"]
    # most functions reject a null argument: the event is logged and dropped
    with caplog.at_level(logging.ERROR):
        assert project(run_app, "str:upper(s) as v", row) == []
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
