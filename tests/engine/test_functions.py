"""The built-in scalar functions."""
from __future__ import annotations

import uuid

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager

STREAM = "define stream S (i int, l long, f float, d double, s string, b bool, o object);\n"
ROW = [7, 10_000_000_000, 2.5, 1.25, "42", True, None]


def project(run_app, select: str, row: list = ROW) -> list:
    runtime, got = run_app(STREAM + f"from S select {select} insert into Out;")
    runtime.get_input_handler("S").send(row)
    return got.rows[0]


@pytest.mark.parametrize("select, expected", [
    ("coalesce(o, s) as v", None),  # types differ: see the error test; here o is object
    ("convert(s, 'int') as v", 42),
    ("convert(i, 'string') as v", "7"),
    ("convert(d, 'long') as v", 1),
    ("convert('x', 'int') as v", None),
    ("cast(o, 'double') as v", None),
    ("default(o, 'z') as v", None),
    ("ifThenElse(i > 5, 'big', 'small') as v", "big"),
    ("instanceOfString(s) as v", True),
    ("instanceOfInteger(i) as v", True),
    ("instanceOfLong(i) as v", False),
    ("instanceOfDouble(d) as v", True),
    ("instanceOfFloat(f) as v", True),
    ("instanceOfBoolean(s) as v", False),
    ("maximum(i, 9, 3) as v", 9),
    ("minimum(d, 0.5, 3.0) as v", 0.5),
    ("sizeOfSet(createSet(s)) as v", 1),
])
def test_functions(run_app, select, expected):
    if select.startswith(("coalesce(o", "default(o")):
        with pytest.raises(SiddhiAppCreationError):
            SiddhiManager().create_siddhi_app_runtime(STREAM + f"from S select {select} insert into Out;")
        return
    assert project(run_app, select) == [expected]


def test_maximum_and_minimum_pass_over_a_nan(run_app):
    # Siddhi's loop compares with < and >, false for a NaN: it never wins, in any position
    nan = float("nan")
    got = project(run_app, "maximum(d, 1.0) as a, minimum(d, 1.0) as b, maximum(1.0, d) as c, minimum(1.0, d) as e",
                  [1, 1, 1.0, nan, "", False, None])
    assert got == [1.0, 1.0, 1.0, 1.0]


def test_convert_text_to_float_rounds_once(run_app):
    # Float.parseFloat: this text's double lies halfway between two floats; through it, 1.0
    assert project(run_app, "convert(s, 'float') as v", [1, 1, 1.0, 1.0, "1.00000005960464477540", True, None]) \
        == [1.0000001192092896]


def test_coalesce_and_default_pick_the_first_non_null(run_app):
    got = project(run_app, "coalesce(d, 3.0) as a, default(i, 5) as b", [None, 1, 1.0, None, "", False, None])
    assert got == [3.0, 5]


def test_cast_does_not_convert(run_app):
    # cast declares a type; a value of another type is returned unchanged (conformance note 7)
    assert project(run_app, "cast(o, 'double') as v", [1, 1, 1.0, 1.0, "", False, True]) == [True]


def test_event_timestamp_and_uuid(run_app):
    runtime, got = run_app(STREAM + "from S select eventTimestamp() as t, UUID() as u insert into Out;")
    runtime.get_input_handler("S").send(ROW, timestamp=1234)
    t, u = got.rows[0]
    assert t == 1234
    uuid.UUID(u)


def test_current_time_millis_reads_the_app_clock(run_app):
    runtime, got = run_app("@app:playback " + STREAM + "from S select currentTimeMillis() as t insert into Out;")
    runtime.get_input_handler("S").send(ROW, timestamp=5000)
    assert got.rows == [[5000]]


def test_script_function_in_python(run_app):
    runtime, got = run_app(
        "define function twice[python] return double { return data[0] * 2 };\n"
        + STREAM + "from S select twice(d) as v insert into Out;")
    runtime.get_input_handler("S").send(ROW)
    assert got.rows == [[2.5]]


@pytest.mark.parametrize("select", [
    "coalesce() as v", "coalesce(d, f) as v", "default(d, 1) as v", "default(d, 0.0, i) as v",
    "ifThenElse(i, 'a', 'b') as v", "ifThenElse(i > 1, 'a', 5) as v", "cast(d, 'newType') as v",
    "cast(d, s) as v", "convert(d) as v", "convert(d, 'string', 'int') as v", "maximum(i, d) as v",
    "sizeOfSet(s) as v", "createSet(s, i) as v", "instanceOfString(s, i) as v", "eventTimestamp(s) as v",
])
def test_wrong_arguments_are_rejected_at_creation(select):
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(STREAM + f"from S select {select} insert into Out;")


# ------------------------------------------------------------------ script functions: safety and bodies
def test_script_function_single_expression_with_comparison_returns_its_value():
    """`{ data[0] >= 1 }` is an expression, not a statement returning null."""
    from srota.engine.functions import script_function
    from srota.grammar.model import AttrType
    f = script_function("python", "f", AttrType.BOOL, " data[0] >= 1 ")
    assert f(2) is True and f(0) is False
    g = script_function("python", "g", AttrType.INT, "x = data[0] * 2\nreturn x")
    assert g(4) == 8
    h = script_function("python", "h", AttrType.BOOL, "data[0] != 1 and data[0] <= 3")
    assert h(2) is True


def test_script_functions_can_be_turned_off():
    import pytest
    from srota.engine import Limits, SiddhiAppCreationError, SiddhiManager
    app = ("define function ge1[python] return bool { data[0] >= 1 }; define stream S (a int);"
           "from S select ge1(a) as ok insert into Out;")
    rt = SiddhiManager().create_siddhi_app_runtime(app)  # on by default for the embedding API
    out: list = []
    rt.add_callback("Out", out.extend)
    rt.start()
    rt.get_input_handler("S").send([3])
    assert out[0].data == (True,)
    rt.shutdown()
    with pytest.raises(SiddhiAppCreationError, match="script functions are turned off"):
        SiddhiManager(limits=Limits(python_functions=False)).create_siddhi_app_runtime(app)
