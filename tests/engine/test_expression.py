"""Siddhi's expression typing and null rules, through filters and projections."""
from __future__ import annotations

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager
from srota.engine.types import f32

STREAM = "define stream S (i int, l long, f float, d double, s string, b bool, o object);\n"


def project(run_app, select: str, row: list) -> list:
    runtime, got = run_app(STREAM + f"from S select {select} insert into Out;")
    runtime.get_input_handler("S").send(row)
    assert len(got.rows) == 1
    return got.rows[0]


ROW = [7, 10_000_000_000, 2.5, 1.25, "x", True, None]


@pytest.mark.parametrize("expr, expected", [
    ("i / 2 as v", 3),                   # int division truncates
    ("-7 / 2 as v", -3),                 # toward zero, as in Java
    ("i % 4 as v", 3),
    ("-7 % 4 as v", -3),                 # sign of the dividend
    ("l / 3 as v", 3_333_333_333),
    ("i + l as v", 10_000_000_007),
    ("d / 0 as v", None),               # Siddhi: division by zero is null
    ("i * 2.0 as v", 14.0),
])
def test_arithmetic_follows_java(run_app, expr, expected):
    assert project(run_app, expr, ROW) == [expected]


def test_float_arithmetic_is_32_bit(run_app):
    got = project(run_app, "f - 0.1f as v", [1, 1, 13.66, 0.0, "", False, None])
    assert got[0] == f32(f32(13.66) - f32(0.1))


def test_null_propagates_through_arithmetic(run_app):
    assert project(run_app, "i + 1 as a, d * 2 as b", [None, 1, 1.0, None, "", False, None]) == [None, None]


def test_output_types_are_promoted():
    runtime = SiddhiManager().create_siddhi_app_runtime(
        STREAM + "from S select i + l as a, i + f as b, f + d as c, i / i as e insert into Out;")
    types = [a.type.value for a in runtime.stream_definitions["Out"].attributes]
    assert types == ["long", "float", "double", "int"]


@pytest.mark.parametrize("cond, row, passes", [
    ("i > 5", ROW, True),
    ("i > 5L", ROW, True),
    ("f >= 2.5f", ROW, True),
    ("d < 2", ROW, True),
    ("s == 'x'", ROW, True),
    ("s != 'x'", ROW, False),
    ("b", ROW, True),
    ("not b", ROW, False),
    ("i > 5 and d > 5", ROW, False),
    ("i > 5 or d > 5", ROW, True),
    ("o is null", ROW, True),
    ("not (i is null)", ROW, True),
])
def test_conditions(run_app, cond, row, passes):
    runtime, got = run_app(STREAM + f"from S[{cond}] select i insert into Out;")
    runtime.get_input_handler("S").send(row)
    assert bool(got.rows) is passes


_EDGE = [2147483647, 2147483647, f32(2147483647.0), 0.0, "", False, None]  # f is 2147483648f


@pytest.mark.parametrize("cond, passes", [
    # Regression (difftest 3013303-2990-filter): Siddhi's == and != of a float and a long take
    # doubleValue() of each (EqualCompareConditionExpressionExecutorFloatLong), where the
    # other comparisons and an int promote to float, as Java does: 2147483647L is not
    # 2147483648f, though it is not less than it either
    ("f == l", False), ("l == f", False), ("f != l", True), ("l != f", True),
    ("f == 2147483647L", False), ("f < l", False), ("f >= l", True), ("l >= f", True),
    ("f == i", True), ("i == f", True), ("f != i", False),
])
def test_a_float_against_a_long_or_an_int_compares_as_siddhi_does(run_app, cond, passes):
    runtime, got = run_app(STREAM + f"from S[{cond}] select i insert into Out;")
    runtime.get_input_handler("S").send(_EDGE)
    assert bool(got.rows) is passes


@pytest.mark.parametrize("cond, passes", [("i > 5", False), ("i == 7", False), ("s == 'x'", False),
                                          ("i != 7", True), ("s != 'x'", True)])
def test_comparison_with_null(run_app, cond, passes):
    # Siddhi: a comparison with null is false, except != which is true
    runtime, got = run_app(STREAM + f"from S[{cond}] select i insert into Out;")
    runtime.get_input_handler("S").send([None, 1, 1.0, 1.0, None, False, None])
    assert bool(got.rows) is passes


@pytest.mark.parametrize("query, message", [
    ("from S[i] select i insert into Out;", "bool"),
    ("from S[i > 1 and d] select i insert into Out;", "bool"),
    ("from S[s > 1] select i insert into Out;", "compare"),
    ("from S select s + 1 as x insert into Out;", "numeric"),
    ("from S select nope insert into Out;", "no attribute 'nope'"),
    ("from T select i insert into Out;", "not defined"),
    ("from S select foo(i) as x insert into Out;", "unknown function"),
    ("from S select X.i as x insert into Out;", "no stream or alias"),
])
def test_creation_errors_name_line_and_column(query, message):
    with pytest.raises(SiddhiAppCreationError) as info:
        SiddhiManager().create_siddhi_app_runtime(STREAM + query)
    assert message in str(info.value)
    assert info.value.line == 2
    assert info.value.column is not None


def test_comparison_of_nullable_arithmetic(run_app):
    # Regression: the null check of a compound operand once negated the operand's own
    # inner null tests, so `i + l > 5` rejected rows it should pass.
    runtime, got = run_app(STREAM + "from S[i + l > 5 and not (d * 2 < 0)] select i insert into Out;")
    h = runtime.get_input_handler("S")
    h.send(ROW)
    h.send([None, 10, 1.0, 1.0, "", False, None])
    assert got.rows == [[7]]


def test_a_functions_constant_code_gets_no_null_check(run_app):
    # math:e() compiles to the number itself: `2.718... is None` was a SyntaxWarning (and
    # an error where warnings are errors)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", SyntaxWarning)
        assert project(run_app, "math:e() / 2 as v", [1, 1, 1.0, 1.0, "", False, None]) == [1.3591409142295225]
