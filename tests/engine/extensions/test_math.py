"""The ``math:`` namespace (siddhi-execution-math)."""
from __future__ import annotations

import math

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager
from srota.engine.extensions.math import (
    JavaRandom,
    java_hex_double,
    java_parse_double,
    java_pow,
    java_round,
)

STREAM = "define stream S (i int, l long, f float, d double, s string);\n"
ZERO = [0, 0, 0.0, 0.0, ""]


def project(select_all, select: str, **values) -> list:
    return select_all(select, list((dict(zip("ilfds", ZERO, strict=True)) | values).values()))


@pytest.mark.parametrize("call, values, expected", [
    ("abs(l)", {"l": -62342}, 62342.0),
    ("acos(f)", {"f": 0.123}, 1.4474840481795643),          # the float's 32-bit value
    ("atan(i, l)", {"i": 12, "l": 5}, 1.1760052070951352),
    ("ceil(f)", {"f": 423.187}, 424.0),
    ("floor(i)", {"i": -3}, -3.0),
    ("getExponent(i)", {"i": 60984}, 15),
    ("log(i, d)", {"i": 345234, "d": 234.34}, 2.3369082065330566),
    ("log2(i)", {"i": 91}, 6.507794640198696),
    ("max(d, i)", {"d": 1232.342342, "i": 91}, 1232.342342),
    ("min(l, i)", {"l": 1231324, "i": 91}, 91.0),
    ("power(i, l)", {"i": 56, "l": 30}, 2.7902351804926126e+52),
    ("signum(d)", {"d": -6.32}, -1),
    ("sinh(f)", {"f": 623.342}, 2.5879283518955854e+270),
    ("toDegrees(i)", {"i": 6423}, 368010.79181252775),
    ("toRadians(i)", {"i": 6}, 0.10471975511965977),
    ("copySign(f, d)", {"f": 563.4, "d": -1.0}, -563.4000244140625),
    ("e()", {}, math.e),
    ("pi()", {}, math.pi),
])
def test_functions(select_all, call, values, expected):
    assert project(select_all, f"math:{call} as v", **values) == [[pytest.approx(expected, rel=1e-15)]]


@pytest.mark.parametrize("call, values, expected", [
    ("bin(i)", {"i": 10}, "1010"),
    ("bin(i)", {"i": -1}, "1" * 32),                 # Integer.toBinaryString: two's complement
    ("oct(l)", {"l": -8}, "1777777777777777777770"),  # Long.toOctalString
    ("hex(i)", {"i": 200}, "c8"),
    ("hex(f)", {"f": 2002.342}, "0x1.f495e4p10"),    # Float.toHexString
    ("hex(d)", {"d": 1.0}, "0x1.0p0"),
    ("conv(s, i, l)", {"s": "7f", "i": 16, "l": 10}, None),  # to.base must be an int: see errors
    ("parseInt(s)", {"s": "-123"}, -123),
    ("parseLong(s)", {"s": "+9000000000"}, 9000000000),
    ("parseDouble(s)", {"s": " 1.5d "}, 1.5),
    ("parseFloat(s)", {"s": "0.1"}, 0.10000000149011612),
])
def test_strings(select_all, call, values, expected):
    if expected is None:
        with pytest.raises(SiddhiAppCreationError):
            SiddhiManager().create_siddhi_app_runtime(STREAM + f"from S select math:{call} as v insert into Out;")
        return
    assert project(select_all, f"math:{call} as v", **values) == [[expected]]


def test_conv(select_all):
    assert project(select_all, "math:conv(s, i, 2) as v", s="-7f", i=16) == [["-1111111"]]


def test_round_is_java_math_round(select_all):
    # halves up, float -> int, double -> long; 0.49999999999999994 is below a half
    for x, want in ((6.45, 6), (2.5, 3), (-2.5, -2), (-0.5, 0), (0.49999999999999994, 0), (math.nan, 0),
                    (1e300, 2 ** 63 - 1), (-1e300, -(2 ** 63))):
        assert java_round(x) == want
    assert project(select_all, "math:round(f) as a, math:round(d) as b", f=3e10, d=-3.5) == [[2 ** 31 - 1, -3]]


def test_java_double_arithmetic_instead_of_exceptions(select_all):
    got = project(select_all, "math:ln(d) as a, math:sqrt(i) as b, math:exp(l) as c, math:power(d, i) as e, "
                           "math:acos(f) as g", d=0.0, i=-1, l=1000, f=2.0)
    a, b, c, e, g = got[0]
    assert a == -math.inf and math.isnan(b) and c == math.inf and e == math.inf and math.isnan(g)
    assert math.isnan(java_pow(1.0, math.nan)) and java_pow(math.nan, 0.0) == 1.0
    assert java_pow(-8.0, 1 / 3) != java_pow(-8.0, 1 / 3)           # NaN, not a ValueError
    assert java_pow(-0.0, -1.0) == -math.inf
    # Java: |x| == 1 to an infinite power is NaN (real Siddhi 5.1.33: math:power(1L, Infinity) is NaN)
    assert all(math.isnan(java_pow(x, y)) for x in (1.0, -1.0) for y in (math.inf, -math.inf))


def test_nulls_give_null(run_app):
    runtime, got = run_app(STREAM + "from S select math:sin(d) as a, math:max(d, i) as b, math:bin(i) as c, "
                                    "math:parseInt(s) as e, math:isNan(d) as g insert into Out;")
    runtime.get_input_handler("S").send([None, 0, 0.0, None, None])
    # isNan returns bool: Siddhi turns a bool function's null to false (every other null stays)
    assert got.rows == [[None, None, None, None, False]]


def test_bad_input_strings_are_errors(select_all, caplog):
    for s in ("12_3", " 12", "2147483648", "1e3"):
        assert project(select_all, "math:parseInt(s) as v", s=s) == []
    for s in ("inf", "nan", "1_0", "0x1p"):
        with pytest.raises(ValueError):
            java_parse_double(s)
    assert java_parse_double("-Infinity") == -math.inf and java_parse_double("0x1.8p1") == 3.0


def test_log_base_one_is_an_error(select_all, caplog):
    assert project(select_all, "math:log(d, 1.0) as v", d=5.0) == []
    assert "base" in caplog.text


def test_hex_of_doubles():
    assert java_hex_double(-0.0) == "-0x0.0p0"
    assert java_hex_double(4.9e-324) == "0x0.0000000000001p-1022"
    assert java_hex_double(math.inf) == "Infinity"


def test_rand_with_a_seed_is_java_util_random(run_app):
    # new java.util.Random(42).nextDouble() == 0.7275636800328681 (then 0.6832234717598454)
    assert JavaRandom(42).next_double() == 0.7275636800328681
    runtime, got = run_app(STREAM + "from S select math:rand(42) as v insert into Out;")
    for _ in range(2):
        runtime.get_input_handler("S").send(ZERO)
    assert got.rows == [[0.7275636800328681], [0.6832234717598454]]


@pytest.mark.parametrize("select", [
    "math:abs(s)", "math:abs()", "math:abs(d, d)", "math:acos(i)", "math:round(i)", "math:bin(d)",
    "math:rand(l)", "math:rand(1.5)", "math:conv(s, 16, 2, 2)", "math:e(1)", "math:max(d)",
    "math:percentile(d, 97)", "math:percentile(d, d)", "math:percentile(d, 0.0)", "math:percentile(d, 100.5)",
])
def test_creation_errors_carry_the_position(select):
    with pytest.raises(SiddhiAppCreationError) as info:
        SiddhiManager().create_siddhi_app_runtime(STREAM + f"from S\nselect {select} as v insert into Out;")
    assert info.value.line == 3 and info.value.column == 8


def test_percentile_over_a_sliding_window(run_app):
    runtime, got = run_app(STREAM + "from S#window.length(5) select math:percentile(i, 97.0) as p insert into Out;")
    for v in (10, 30, 100, 40, 80, 60, 20, 90, 70, 50):
        runtime.get_input_handler("S").send([v, 0, 0.0, 0.0, ""])
    assert [r[0] for r in got.rows] == [10.0, 30.0, 100.0, 100.0, 100.0, 100.0, 100.0, 90.0, 90.0, 90.0]


def test_percentile_whole_rank_is_a_mean_and_groups_are_separate(run_app):
    runtime, got = run_app(STREAM + "from S select s, math:percentile(d, 50.0) as p group by s insert into Out;")
    send = runtime.get_input_handler("S").send
    for s, d in (("a", 1.0), ("a", 3.0), ("b", 100.0)):
        send([0, 0, 0.0, d, s])
    assert got.rows == [["a", 1.0], ["a", 2.0], ["b", 100.0]]


def test_percentile_state_is_in_snapshots(run_app):
    app = STREAM + "@info(name='q') from S#window.lengthBatch(3) select math:percentile(d, 50.0) as p insert into Out;"
    runtime, got = run_app(app)
    send = runtime.get_input_handler("S").send
    send([0, 0, 0.0, 5.0, ""])
    send([0, 0, 0.0, 1.0, ""])
    snapshot = runtime.snapshot()
    runtime2, got2 = run_app(app)
    runtime2.restore(snapshot)
    runtime2.get_input_handler("S").send([0, 0, 0.0, 3.0, ""])
    assert got2.rows == [[3.0]]


def test_parsers_read_digits_as_java_does(select_all):
    # Integer.parseInt reads any Unicode decimal digit (Character.digit); Double.parseDouble only
    # ASCII ones (checked on real Siddhi 5.1.33: parseInt('٣') is 3, parseDouble('٣') drops the event)
    assert project(select_all, "math:parseInt(s) as v", s="\u0663") == [[3]]
    assert project(select_all, "math:parseLong(s) as v", s="-\u0661\u0662") == [[-12]]
    with pytest.raises(ValueError):
        java_parse_double("\u0663")


def test_a_double_keeps_its_negative_zero(select_all):
    # Java widens an int or long to double and passes a double as it is: sin(-0.0) is -0.0 (real
    # Siddhi 5.1.33); Math.ceil(-0.0) and Math.ceil(-0.5) are -0.0 too
    row = project(select_all, "math:sin(d) as a, math:floor(d) as b, math:tan(d) as c, math:sqrt(d) as e, "
                              "math:ceil(d) as g, math:toDegrees(d) as h, math:ceil(f) as k", d=-0.0, f=-0.0)[0]
    assert row == [0.0] * 7 and all(math.copysign(1.0, v) == -1.0 for v in row)
    assert math.copysign(1.0, project(select_all, "math:ceil(d) as v", d=-0.5)[0][0]) == -1.0


def test_parse_float_rounds_the_exact_value_once(select_all):
    # Float.parseFloat rounds the decimal itself; through a double, 1.00000005960464477540 (above
    # the midpoint of 1.0 and the next float) becomes the midpoint, which ties to even, 1.0
    for text, want in (("1.00000005960464477540", 1.0000001192092896), ("1.0000000596046448", 1.0000001192092896),
                       ("1.00000005960464477539", 1.0), ("1.000000059604644775390625", 1.0),
                       ("0x1.0000011p0", 1.0000001192092896), ("-1.00000005960464477540", -1.0000001192092896),
                       ("3.40282356779733661637539395458142568449e38", math.inf)):
        assert project(select_all, "math:parseFloat(s) as v", s=text) == [[want]], text


def test_integer_parsers_read_digits_as_character_digit(select_all):
    # Integer.parseInt(s, radix) reads each UTF-16 unit with Character.digit: Unicode decimal
    # digits and fullwidth Latin letters count, the Kelvin sign and a digit past U+FFFF do not
    assert project(select_all, "math:conv(s, 3, 10) as v", s="\u0661\u0662") == [["5"]]
    assert project(select_all, "math:conv(s, 16, 10) as v", s="\uff26\uff46") == [["255"]]
    for s in ("\u212a", "\U0001d7cf"):
        assert project(select_all, "math:conv(s, 36, 10) as v", s=s) == []
        assert project(select_all, "math:parseInt(s) as v", s=s) == []


def test_degrees_and_radians_are_one_product_as_in_java_17(select_all):
    # Java 9+: angrad * RADIANS_TO_DEGREES (Java 8's angrad * 180.0 / PI overflows for 3e306)
    assert project(select_all, "math:toDegrees(d) as a, math:toRadians(i) as b", d=3e306, i=6) == [
        [1.7188733853924698e308, 0.10471975511965978]]


def test_percentile_orders_values_as_double_compare(run_app):
    # Siddhi's sorted list is searched with Double.compareTo: -0.0 before 0.0, NaN last
    runtime, got = run_app(STREAM + "from S#window.length(3) select math:percentile(d, 100.0) as a, "
                                    "math:percentile(d, 10.0) as b insert into Out;")
    for d in (0.0, -0.0, math.nan, 1.5, -2.5):
        runtime.get_input_handler("S").send([0, 0, 0.0, d, ""])
    rows = [[repr(v) for v in row] for row in got.rows]
    assert rows == [["0.0", "0.0"], ["0.0", "-0.0"], ["nan", "-0.0"], ["nan", "-0.0"], ["nan", "-2.5"]]
