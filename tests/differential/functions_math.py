"""Random apps of siddhi-execution-math's functions (``--family math_fn``).

Two shapes of app. Most are one query per expression over a stream
``S (i int, l long, f float, d double, s string, r int)``: every ``math:`` function of the jar
(``abs`` ... ``toRadians``, ``atan`` with one and two arguments, ``e()``, ``pi()``,
``rand(seed)``), each argument an attribute of one of the types the function's overload takes,
a constant (``7``, ``7L``, ``1.5f``, ``-0.0``, ``1.0 / 0.0``, which is null in Siddhi as every
division by zero), a little arithmetic on an attribute
or another ``math:`` call (``math:abs(math:round(d))``). Now and then the call is wrapped so its
declared return type shows (``instanceOfLong(...)``, ``... + 2147483647`` wraps an int, ``... / 2``
truncates one), or an argument has a type the overload refuses (both engines must refuse the app).
Values are the edges of each type: 0, -0.0, NaN, the infinities, int and long minima and maxima,
longs past 2^53, floats past float range and subnormals, negatives for sqrt and the logarithms,
halves for round, strings that Java's parsers take and refuse (signs, blanks, ``0x`` floats,
``1.5f``, ``Infinity``, Unicode digits, out-of-range integers, decimals next to a float rounding
tie), and radixes 0 to 37 for ``conv``. About one value in twelve is null.

The other shape is ``math:percentile`` over a ``length`` window, a ``lengthBatch`` window or no
window, current, expired or all events out, with a constant percentile (valid or not).

Kept out of the way, and why:

* ``rand()`` without a seed: it is random (only ``instanceOfDouble(math:rand())`` and that it
  lies in [0, 1) are selected);
* a NaN's sign: Java's ``Math.copySign`` reads it (``copySign(1.0, sqrt(-1.0))`` is -1.0 on
  x86, whose default NaN is negative) where the Java spec leaves it open, so ``copySign``'s sign
  is an attribute or a constant, whose NaN (read from JSON) is Java's positive ``Double.NaN``;
* the last bit of a transcendental function (``Math.sin``, ``Math.cbrt``, ...: HotSpot's
  intrinsics and fdlibm, not C's libm): the comparison allows for it, but ``hex`` prints every
  bit, and ``sin``, ``cos``, ``tan`` of a huge value (``sin(cbrt(1e300))``) or ``power`` to a
  large exponent make it any value, so these take no such result;
* a float attribute's value is always an exact 32-bit float: the runner reads a JSON number into
  a Java ``float`` with ``Float.parseFloat`` of its digits, which can round another way than the
  double Srota is given (a double on a float rounding tie);
* a float result that is -0.0 (``parseFloat('-0')``, a float attribute selected alone): the
  runner prints a ``Float`` through ``BigDecimal``, which has no negative zero;
* ``math:percentile`` with ``group by``, over a null, over a window that empties (``length(1)``,
  a ``lengthBatch`` whose expired events are out) or over an int or long that a ``float`` does
  not hold exactly: Siddhi's defects there
  (docs/siddhi-differences.md, "math:percentile after a null, an emptied window or a rounded
  int");
* events go in chunks only when no expression can fail on a value (``parse*``, ``conv``,
  ``log``): a failing event takes its whole chunk with it in Siddhi; and only in an app of one
  query, whose events never go back in time.
"""
from __future__ import annotations

import math
import random
import struct
from collections.abc import Callable
from typing import Any

from tests.differential.functions import BASE_TS, function_case

_INT_MIN, _INT_MAX = -(2 ** 31), 2 ** 31 - 1
_LONG_MIN, _LONG_MAX = -(2 ** 63), 2 ** 63 - 1
_NAN, _INF = math.nan, math.inf

_ATTRS = [("i", "int"), ("l", "long"), ("f", "float"), ("d", "double"), ("s", "string"), ("r", "int")]
_NUM = ("int", "long", "float", "double")
_REAL = ("float", "double")
_INTEGRAL = ("int", "long")


def _f32(x: float) -> float:
    try:
        return float(struct.unpack("<f", struct.pack("<f", x))[0])
    except OverflowError:
        return math.copysign(_INF, x)


_INTS = (0, 1, -1, 2, -2, 3, 7, -7, 10, 100, -100, 255, 65535, 2 ** 24, 2 ** 24 + 1, _INT_MAX, _INT_MIN,
         _INT_MAX - 1, _INT_MIN + 1, 1_000_000_007, -123456789)
_LONGS = (0, 1, -1, 2, -3, 7, 1000, _INT_MAX, _INT_MIN, _INT_MAX + 1, _INT_MIN - 1, 2 ** 53, 2 ** 53 + 1,
          -(2 ** 53) - 1, 2 ** 62, _LONG_MAX, _LONG_MIN, _LONG_MAX - 1, _LONG_MIN + 1, 1_700_000_000_000,
          -9_007_199_254_740_993, 123_456_789_012_345_678)
_DOUBLES = (0.0, -0.0, _NAN, _INF, -_INF, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5, 0.49999999999999994,
            -0.49999999999999994, 2.0, 10.0, 100.0, 1e-9, 1e-300, 5e-324, -5e-324, 2.2250738585072014e-308,
            2.225073858507201e-308, 1.7976931348623157e308, -1.7976931348623157e308, 1e300, -1e300,
            3.4028234663852886e38, 3.5e38, 1e39, 1.401298464324817e-45, 7e-46, 4503599627370497.0,
            9007199254740993.0, 9.223372036854776e18, -9.223372036854776e18, 1e19, 3e306, -3e306, 1e307, 2e-322, 2147483647.5, 2147483648.0,
            -2147483648.5, math.pi, math.pi / 2, -math.pi, math.e, 710.0, 709.782712893384, -745.2, 1e22,
            0.1, 0.2, 0.30000000000000004, 123.456, -987.654, 6.0, 1e-20, 22.5)
_FLOATS = (0.0, -0.0, _NAN, _INF, -_INF, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.1, -0.1, 16777216.0, 16777217.0,
           3.4028234663852886e38, -3.4028234663852886e38, 1e39, 1.401298464324817e-45, 1e-46,
           1.1754943508222875e-38, 2147483647.0, 2147483648.0, 3e9, -3e9, 9.3e18, 1e-7, 65.1, 88.7, 100.0,
           0.49999997, 8388607.5, 8388608.5, math.pi)
_STRINGS = ("0", "-0", "+0", "1", "-1", "+5", "123", "-123", "007", "2147483647", "-2147483648", "2147483648",
            "-2147483649", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "99999999999999999999",
            "1.5", "-1.5", ".5", "5.", "1e3", "1E-3", "1e400", "-1e400", "1e-400", "1.5f", "2.5d", "1.5F", "3D",
            "NaN", "-NaN", "Infinity", "-Infinity", "+Infinity", "inf", "nan", "infinity", "0x1F", "0x1.8p1",
            "0X1P-1074", "0x.8p0", "0x1.0", " 12 ", "\t7\n", " 1.5 ", "", " ", "abc", "ff", "7f", "-ff", "FF", "z",
            "Z", "zz", "101", "-101", "1_000", "1,000", "12a", "a12", "+", "-", "e5", "1e", "0.0", "-0.0",
            "\u0663", "\u0661\u0662", "\uff11\uff12", "\uff41", "\u0967", "3.4028235e38", "3.4028236e38",
            "3.5e38", "1.4e-45", "7e-46", "0.7e-45", "1.0000000596046448", "1.00000005960464477539",
            "1.00000005960464477540", "33554433", "0.1", "4.9e-324", "2.4703282292062327e-324",
            "1.7976931348623157e308", "1.7976931348623159e308", "7fffffff", "80000000", "-80000000", "zik0zj",
            "1y2p0ij32e8e7", "10000000000000000000000000000000", "\u212a", "\uff46", "\uff26\uff26", "\U0001d7cf",
            "\u00b2", "-\u0969", "3.40282356779733661637539395458142568448e38", "3.4028235677973366e38",
            "7.006492321624085e-46", "7.0064923216240854e-46", "0x1.000001p0", "0x1.0000010000001p0",
            "16777217", "16777217.000000001", "-16777217.0", "8388609.5", "0x1.fffffep127", "0x1.ffffffp127")
_RADIXES = (2, 8, 10, 16, 36, 3, 7, 35, 1, 0, 37, -1, -16)
_PERCENTS = ("50.0", "100.0", "25.0", "75.0", "99.9", "0.1", "33.3", "10.0", "66.66666666666667", "1.0")
_BAD_PERCENTS = ("0.0", "100.5", "-5.0", "50", "50.0f", "v")


def _value(rng: random.Random, typ: str) -> Any:
    """A value of an attribute of ``typ``: mostly an edge, sometimes a random one."""
    roll = rng.random()
    if typ == "int":
        return rng.choice(_INTS) if roll < 0.7 else rng.randint(-1000, 1000) if roll < 0.9 else rng.randint(
            _INT_MIN, _INT_MAX)
    if typ == "long":
        return rng.choice(_LONGS) if roll < 0.7 else rng.randint(-10 ** 6, 10 ** 6) if roll < 0.9 else rng.randint(
            _LONG_MIN, _LONG_MAX)
    if typ == "double":
        if roll < 0.7:
            return rng.choice(_DOUBLES)
        if roll < 0.85:
            return round(rng.uniform(-50, 50), rng.randint(0, 4))
        return rng.choice((-1, 1)) * 10.0 ** rng.uniform(-320, 308)
    if typ == "float":
        # an exact 32-bit value (or one past float range, or below it): see the module doc
        if roll < 0.7:
            value = rng.choice(_FLOATS)
            return value if value in (1e39, 1e-46) else _f32(value)
        if roll < 0.85:
            return _f32(round(rng.uniform(-50, 50), rng.randint(0, 3)))
        return _f32(rng.choice((-1, 1)) * 10.0 ** rng.uniform(-45, 38))
    if typ == "string":
        return rng.choice(_STRINGS) if roll < 0.85 else str(rng.choice((rng.randint(-10 ** 6, 10 ** 6),
                                                                        round(rng.uniform(-99, 99), 3))))
    return rng.choice(_RADIXES)  # r: a radix


# ---------------------------------------------------------------------------------------- args
_CONSTANTS = {
    "int": ("0", "7", "-3", "2147483647", "100", "1", "2"),
    "long": ("0L", "7L", "-3L", "9223372036854775807L", "-9223372036854775807L", "9007199254740993L", "1L"),
    "float": ("1.5f", "-0.0f", "0.0f", "-2.5f", "3.4028235E38f", "1.0E-45f", "0.1f", "2.5f"),
    "double": ("1.5", "-0.0", "0.0", "-2.5", "2.5", "0.5", "1.0E300", "4.9E-324", "(0.0 / 0.0)",
               "(1.0 / 0.0)", "(-1.0 / 0.0)", "100.0", "0.49999999999999994"),
    "string": ("'123'", "'-0'", "'1.5'", "'ff'", "'NaN'", "'abc'", "' 7 '", "'0x1p3'", "''"),
}
_ATTR_OF = {"int": "i", "long": "l", "float": "f", "double": "d", "string": "s"}
# a little arithmetic on an attribute, of the attribute's type (Java's wrapping and rounding);
# SiddhiQL has no unary minus but on a literal, so a negation is ``* -1``
_ARITH = {
    "int": ("(i + 1)", "(i * 2)", "(i * -1)", "(i / 3)", "(i % 7)"),
    "long": ("(l + 1L)", "(l * 3)", "(l * -1L)", "(l / 7)", "(i + l)"),
    "float": ("(f * 2.0f)", "(f * -1.0f)", "(f + 0.1f)", "(f / 3.0f)", "(i * 1.5f)"),
    "double": ("(d * 2.0)", "(d * -1.0)", "(d / 0.0)", "(d - d)", "(d + f)", "(l * 1.0)", "(i / 2.0)", "(d * 1.0E300)"),
}


def _arg(rng: random.Random, typ: str, depth: int, exact: bool = False) -> str:
    """An argument of ``typ``: an attribute, a constant, a little arithmetic or a nested call
    (``exact``: no transcendental function's result anywhere inside, see the module doc)."""
    roll = rng.random()
    if roll < 0.55:
        return _ATTR_OF[typ]
    if roll < 0.75:
        return rng.choice(_CONSTANTS[typ])
    if roll < 0.88 and typ in _ARITH:
        return rng.choice(_ARITH[typ])
    if depth < 2:
        nested = [name for name, (_, returns) in _FUNCTIONS.items()
                  if returns == typ and not (exact and name in _TRANSCENDENTAL)]
        if nested:
            return _call(rng, rng.choice(nested), depth + 1, exact)
    return _ATTR_OF[typ]


# name -> (the types each argument may have, the declared return type)
_FUNCTIONS: dict[str, tuple[tuple[tuple[str, ...], ...], str]] = {}


def _declare(names: str, overloads: tuple[tuple[str, ...], ...], returns: str) -> None:
    for name in names.split():
        _FUNCTIONS[name] = (overloads, returns)


_declare("abs cbrt cos cosh exp floor ln log10 log2 sin sinh sqrt tan tanh toDegrees toRadians", (_NUM,), "double")
_declare("acos asin ceil", (_REAL,), "double")
_declare("atan", (_NUM,), "double")  # and atan(y, x): see _call
_declare("copySign max min power", (_NUM, _NUM), "double")
_declare("log", (_NUM, _NUM), "double")
_declare("getExponent signum", (_NUM,), "int")
_declare("round", (_REAL,), "int|long")
_declare("bin oct", (_INTEGRAL,), "string")
_declare("hex", (_NUM,), "string")
_declare("isInfinite isNan", (_REAL,), "bool")
_declare("parseDouble", (("string",),), "double")
_declare("parseFloat", (("string",),), "float")
_declare("parseInt", (("string",),), "int")
_declare("parseLong", (("string",),), "long")
_declare("conv", (("string",), ("int",), ("int",)), "string")
_declare("e pi", (), "double")
# the calls that can fail on a value (a string Java's parser refuses, a log of base 1)
_CAN_FAIL = ("math:parse", "math:conv(", "math:log(")
# the functions that show (or blow up) the last bit of their argument: see the module doc
_SENSITIVE = frozenset(("hex", "sin", "cos", "tan", "power"))
_TRANSCENDENTAL = frozenset("acos asin atan cbrt cos cosh exp ln log log10 log2 power sin sinh tan tanh".split())


def _call(rng: random.Random, name: str, depth: int = 0, exact: bool = False) -> str:
    """A call of ``name`` (``exact``: no transcendental function's result anywhere inside)."""
    overloads, _ = _FUNCTIONS[name]
    if name == "atan" and rng.random() < 0.5:
        overloads = (_NUM, _NUM)
    args = []
    for position, types in enumerate(overloads):
        if name == "conv" and position > 0:
            args.append("r" if rng.random() < 0.6 else str(rng.choice(_RADIXES)))
        elif name == "copySign" and position == 1:  # no computed NaN (see the module doc)
            typ = rng.choice(types)
            args.append(_ATTR_OF[typ] if rng.random() < 0.7 else rng.choice(_CONSTANTS[typ]))
        else:
            args.append(_arg(rng, rng.choice(types), depth, exact=exact or name in _SENSITIVE))
    return f"math:{name}({', '.join(args)})"


def _wrong_call(rng: random.Random) -> str:
    """A call with an argument type (or count) the jar's overloads refuse: both engines refuse the app."""
    return rng.choice(("math:acos(i)", "math:ceil(l)", "math:round(i)", "math:bin(d)", "math:oct(f)",
                       "math:isNan(i)", "math:parseInt(i)", "math:conv(s, 16L, 10)", "math:conv(i, 16, 10)",
                       "math:log(d)", "math:power(d)", "math:atan(d, d, d)", "math:abs(s)", "math:pi(1)",
                       "math:sin(true)", "math:max(d, s)", "math:rand(d)", "math:rand(i)", "math:hex(s)"))


def _returns(name: str, call: str) -> str:
    returns = _FUNCTIONS[name][1]
    if returns == "int|long":  # round: an int of a float, a long of a double
        inner = call[len("math:round("):-1]
        return "int" if _type_of(inner) == "float" else "long"
    return returns


def _type_of(expression: str) -> str:
    """The type of an argument :func:`_arg` made (an attribute, constant, arithmetic or call)."""
    for typ, attr in _ATTR_OF.items():
        if expression == attr:
            return typ
    for typ, values in _CONSTANTS.items():
        if expression in values:
            return typ
    for typ, values in _ARITH.items():
        if expression in values:
            return typ
    name = expression[len("math:"):expression.index("(")]
    return _returns(name, expression)


_WRAPS: dict[str, tuple[Callable[[str], str], ...]] = {
    "int": (lambda x: f"{x} + 2147483647", lambda x: f"{x} / 2", lambda x: f"instanceOfInteger({x})"),
    "long": (lambda x: f"{x} + 9223372036854775807L", lambda x: f"{x} / 2", lambda x: f"instanceOfLong({x})"),
    "double": (lambda x: f"{x} / 2", lambda x: f"instanceOfDouble({x})", lambda x: f"{x} is null"),
    "float": (lambda x: f"instanceOfFloat({x})", lambda x: f"{x} * 1.0", lambda x: f"{x} / 3.0f * 1.0"),
    "string": (lambda x: f"instanceOfString({x})",),
    "bool": (lambda x: f"instanceOfBoolean({x})", lambda x: f"not {x}"),
}


def _expression(rng: random.Random) -> tuple[str, bool]:
    """One selected expression, and whether it can fail on a value (see the module doc)."""
    if rng.random() < 0.015:
        return _wrong_call(rng), False
    if rng.random() < 0.03:
        return f"math:rand({rng.choice(('7', '-3', '0', '42L', '9223372036854775807L'))})", False
    if rng.random() < 0.01:  # unseeded: only what does not depend on the draw
        return rng.choice(("math:rand() >= 0.0 and math:rand() < 1.0", "instanceOfDouble(math:rand())")), False
    name = rng.choice(list(_FUNCTIONS))
    call = _call(rng, name)
    fails = any(prefix in call for prefix in _CAN_FAIL)
    returns = _returns(name, call)
    if returns == "float":
        # a float -0.0 prints as 0.0 through the runner (see the module doc): never a float alone
        return rng.choice(_WRAPS["float"])(call), fails
    if rng.random() < 0.2:
        return rng.choice(_WRAPS[returns])(call), fails
    return call, fails


def _percentile_case(rng: random.Random) -> dict[str, Any]:
    """``math:percentile`` over a window or none (see the module doc for what is kept out)."""
    typ = rng.choice(_NUM)
    percent = rng.choice(_BAD_PERCENTS) if rng.random() < 0.05 else rng.choice(_PERCENTS)
    window = rng.choice(("", f"#window.length({rng.randint(2, 6)})", f"#window.lengthBatch({rng.randint(1, 4)})"))
    # expired events of a length window (a batch's empty the list: see the module doc)
    out = rng.choice(("", "", "all events ", "expired events ")) if "length(" in window else ""
    app = ("@app:playback\ndefine stream S (v " + typ + ");\n\n"
           f"@info(name='q0')\nfrom S{window}\nselect math:percentile(v, {percent}) as r\ninsert {out}into O0;\n")
    ts = BASE_TS + rng.randint(0, 5000)
    steps: list[dict[str, Any]] = []
    for _ in range(rng.randint(2, 8)):  # percentile never fails on these values: chunks too
        events = []
        for _ in range(rng.choice((1, 1, 2, 3))):
            ts += rng.choice((0, 1, rng.randint(1, 900)))
            events.append([ts, [_percentile_value(rng, typ)]])
        steps.append({"stream": "S", "events": events})
    return {"app": app, "streams": ["O0"], "queries": [], "steps": steps}


def _percentile_value(rng: random.Random, typ: str) -> Any:
    """A value for ``math:percentile``: never null; -0.0, NaN and the infinities for reals."""
    if typ in _INTEGRAL:
        # held exactly by a float: Siddhi rounds an int or long to float on the way in and then
        # cannot find the rounded value to remove it (see the module doc)
        return rng.choice((0, 1, -1, 7, 7, 100, -50, 2 ** 24, -(2 ** 24), 3, 3)) if rng.random() < 0.6 else \
            rng.randint(-1000, 1000)
    if typ == "float":
        return _f32(rng.choice((0.0, -0.0, 1.5, -2.5, 0.1, 65.1, 3.4e38, _INF, -_INF, _NAN, 2.5, 2.5)))
    return rng.choice((0.0, -0.0, 1.5, -2.5, 0.1, 1e300, _INF, -_INF, _NAN, 5e-324, 2.5, 2.5,
                       round(rng.uniform(-9, 9), 2)))


def family(rng: random.Random) -> dict[str, Any]:
    """A case of ``math:`` calls over every numeric type and a string (or one of ``math:percentile``)."""
    if rng.random() < 0.15:
        return _percentile_case(rng)
    drawn = [_expression(rng) for _ in range(rng.randint(1, 5))]
    expressions = [expression for expression, _ in drawn]
    can_fail = any(fails for _, fails in drawn)
    rows = [[None if rng.random() < 0.08 else _value(rng, typ) for _, typ in _ATTRS]
            for _ in range(rng.randint(3, 12))]
    chunked = not can_fail
    return function_case(rng, _ATTRS, expressions, rows, chunk_rate=0.4 if chunked else 0.0)
