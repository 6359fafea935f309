"""The regex: namespace and the Java regular-expression translation it rests on."""
from __future__ import annotations

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager
from srota.engine.extensions.regex import java_regex, java_replace, java_split

STREAM = "define stream S (s string, r string, i int);\n"


def project(run_app, select: str, row: list) -> list:
    runtime, got = run_app(STREAM + f"from S select {select} insert into Out;")
    runtime.get_input_handler("S").send(row)
    return got.rows[0] if got.rows else []


@pytest.mark.parametrize("select, row, expected", [
    ("regex:find(r, s)", ["21 products by WSO2", "\\d\\d(.*)WSO2", 0], True),
    ("regex:find(r, s, i)", ["21 products by WSO2", "\\d\\d", 1], False),
    ("regex:find(r, s, i)", ["x", "x", None], False),
    ("regex:find(r, s)", [None, "x", 0], False),
    ("regex:group(r, s, i)", ["21 products by WSO2 now", "(\\d\\d)(.*)(WSO2.*)", 3], "WSO2 now"),
    ("regex:group(r, s, i)", ["WSO2 x middleware", "WSO2(.*)middleware", 2], None),
    ("regex:lookingAt(r, s)", ["WSO2 is middleware", "WSO2(.*)middleware", 0], True),
    ("regex:lookingAt(r, s)", ["21 WSO2 middleware", "WSO2", 0], False),
    ("regex:matches(r, s)", ["WSO2 is middleware company", "WSO2(.*)middleware", 0], False),
    ("regex:matches(r, s)", ["WSO2 is middleware company", "WSO2(.*)middleware(.*)", 0], True),
    ("regex:matches('(?<y>\\d{4})-\\p{Alpha}+', s)", ["2024-abc", None, 0], True),
])
def test_functions(run_app, select, row, expected):
    assert project(run_app, f"{select} as v", row) == [expected]


def test_null_regex_is_an_error(run_app):
    assert project(run_app, "regex:matches(r, s) as v", ["x", None, 0]) == []


@pytest.mark.parametrize("select", ["regex:find(r)", "regex:find(r, i)", "regex:group(r, s, s)",
                                    "regex:matches(i, s)", "regex:lookingAt('(', s)"])
def test_creation_errors(select):
    with pytest.raises(SiddhiAppCreationError) as info:
        SiddhiManager().create_siddhi_app_runtime(STREAM + f"from S select {select} as v insert into Out;")
    assert info.value.line == 2


def test_java_syntax_translation():
    assert java_regex(r"\p{Lower}+\z").fullmatch("abc")
    assert not java_regex(r"\d").match("\u0663")  # Java's \d is ASCII only
    assert java_regex(r"\Qa.b\E").fullmatch("a.b") and not java_regex(r"\Qa.b\E").fullmatch("axb")
    assert java_regex(r"[\p{Upper}_]+").fullmatch("AB_C")


def test_java_replacement_and_split():
    assert java_replace(java_regex("(a)(b)?"), "ab a", "<$1$2>") == "<ab> <a>"
    assert java_replace(java_regex("(?<x>o)"), "foo", "${x}0") == "fo0o0"
    assert java_replace(java_regex("o"), "foo", "\\$") == "f$$"
    assert java_split(java_regex(","), "a,b,,") == ["a", "b"]
    assert java_split(java_regex(","), "") == [""]
    assert java_split(java_regex(""), "abc") == ["a", "b", "c"]
