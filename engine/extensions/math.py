"""The ``math:`` namespace: Siddhi's siddhi-execution-math, as built-in extensions.

Every function of siddhi-execution-math 5.x (``abs`` ... ``toRadians``) and the
``math:percentile`` aggregator, with Siddhi's parameter types and overloads, return types
and null handling (a null argument gives null, except where noted).  Siddhi's result is the
contract where Java and Python differ:

* arithmetic is Java's ``double`` arithmetic: a domain error gives ``NaN`` (``ln(-1)``,
  ``sqrt(-1)``, ``acos(2)``), a pole or an overflow gives an infinity (``ln(0)``,
  ``exp(1000)``, ``power(0, -1)``), never a Python exception; ``power(1, NaN)`` is ``NaN``
  and ``max``/``min`` propagate ``NaN`` as ``Math.max``/``Math.min`` do;
* ``round`` is ``Math.round``: halves round up (``round(-2.5)`` is ``-2``, ``round(2.5)`` is
  ``3``), ``NaN`` gives 0, a ``float`` gives an ``int`` and a ``double`` a ``long``, clamped
  to the type's range;
* ``float`` arguments are widened from their 32-bit value (``Float.doubleValue()``);
  ``parseFloat`` returns a 32-bit value, rounded once from the string's exact value;
  ``toRadians``/``toDegrees`` multiply by one constant, as Java 9 and later do (the reference
  engine runs Java 17);
* ``bin``/``hex``/``oct`` print the two's complement of an ``int`` (32 bits) or a ``long``
  (64 bits); ``hex`` of a ``float``/``double`` is ``Float``/``Double.toHexString``;
* ``parseInt``/``parseLong``/``parseDouble``/``parseFloat`` accept exactly what Java's parsers
  accept (no ``_`` separators, no ``inf``; ``Infinity``, ``NaN``, a trailing ``d``/``f``,
  hexadecimal floating point); a string they reject is an error, as in Siddhi; ``parseInt``,
  ``parseLong`` and ``conv`` read each character as ``Character.digit`` does (any Unicode
  decimal digit, fullwidth Latin letters);
* a ``double`` -0.0 keeps its sign on the way in (``sin(-0.0)`` is -0.0, ``ceil(-0.5)`` -0.0);
* ``math:percentile`` keeps its values in ``Double.compare``'s order (-0.0 before 0.0, NaN
  last), as Siddhi's binary searches do;
* ``rand(seed)`` is ``java.util.Random(seed).nextDouble()``: the same seed gives Siddhi's
  sequence.

Where Siddhi's tests and code disagree (the code wins), and deliberate departures where Siddhi's
behaviour is a defect rather than a result:

* ``isInfinite``/``isNan`` of null give null, as Siddhi's code does (its tests assert ``false``,
  which that code cannot return);
* ``math:percentile`` keeps one sorted list per aggregator state (Siddhi shares one list
  between all ``group by`` keys of a query), an ``int``/``long`` value it rounded to 32 bits
  on the way in is removed the same way (Siddhi looks the unrounded value up and fails), and an
  empty window gives null (Siddhi raises IndexOutOfBoundsException).
"""
from __future__ import annotations

import bisect
import math
import random
from collections.abc import Callable
from typing import Any

from srota.engine.aggregators import AggregatorState
from srota.engine.expression import ArgInfo
from srota.engine.extensions._checks import INT, INT_LONG, STRING, aggregator, is_literal
from srota.engine.extensions._checks import err as creation_error
from srota.engine.extensions._checks import function as _function
from srota.engine.javanumbers import parse_double, parse_float, parse_integer
from srota.engine.registry import Param
from srota.engine.types import f32, java_order
from srota.grammar.model import AttrType

_NS = "math"
NUMBERS = (AttrType.INT, AttrType.LONG, AttrType.FLOAT, AttrType.DOUBLE)
REALS = (AttrType.FLOAT, AttrType.DOUBLE)
INTEGERS = INT_LONG
DOUBLE = (AttrType.DOUBLE,)


def function(*args: Any, pure: bool = True, **kw: Any) -> Any:
    """Declare a math function: pure unless said otherwise (only ``rand`` is not)."""
    return _function(*args, pure=pure, **kw)
_INT_MIN, _INT_MAX = -(2 ** 31), 2 ** 31 - 1
_LONG_MIN, _LONG_MAX = -(2 ** 63), 2 ** 63 - 1
_NAN = math.nan
_INF = math.inf


class MathError(ValueError):
    """A math function failed on its input (Siddhi's SiddhiAppRuntimeException)."""


# ---------------------------------------------------------------------------- Java arithmetic
def _to_double(t: AttrType) -> Callable[[Any], float]:
    """``MathUtil.convertToDouble`` for an argument of type ``t``."""
    if t is AttrType.FLOAT:
        return f32
    return float


def _java_log(x: float) -> float:
    try:
        return math.log(x)
    except ValueError:
        return -_INF if x == 0 else _NAN


def _java_floor(x: float) -> float:
    return float(math.floor(x)) if math.isfinite(x) and x != 0 else x


def _java_ceil(x: float) -> float:
    if not math.isfinite(x) or x == 0:  # Math.ceil(-0.0) is -0.0
        return x
    r = float(math.ceil(x))
    return -0.0 if r == 0 and x < 0 else r


def _java_cbrt(x: float) -> float:
    if not math.isfinite(x) or x == 0:
        return x
    return math.cbrt(x) if hasattr(math, "cbrt") else math.copysign(abs(x) ** (1 / 3), x)


def java_pow(x: float, y: float) -> float:
    """``Math.pow``: NaN and infinities instead of exceptions; ``pow(1, NaN)`` and
    ``pow(±1, ±Infinity)`` are NaN (Python gives 1.0)."""
    if y == 0:
        return 1.0
    if math.isnan(y) or math.isnan(x) or (math.isinf(y) and abs(x) == 1):
        return _NAN
    try:
        return math.pow(x, y)
    except ZeroDivisionError:
        return _INF
    except OverflowError:
        # |x| > 1 with a large y, or |x| < 1 with a large negative y: the sign follows an odd
        # integral y with a negative x.
        odd = y == math.floor(y) and abs(y) < 2 ** 53 and int(y) % 2 == 1
        return -_INF if x < 0 and odd else _INF
    except ValueError:
        if x == 0:  # 0 ** negative
            odd = y == math.floor(y) and abs(y) < 2 ** 53 and int(y) % 2 == 1
            return math.copysign(_INF, x) if odd else _INF
        return _NAN  # negative ** non-integral


def _java_max(a: float, b: float) -> float:
    if a != a or b != b:
        return _NAN
    if a == b == 0.0:
        return 0.0 if math.copysign(1.0, a) > 0 or math.copysign(1.0, b) > 0 else -0.0
    return a if a >= b else b


def _java_min(a: float, b: float) -> float:
    if a != a or b != b:
        return _NAN
    if a == b == 0.0:
        return -0.0 if math.copysign(1.0, a) < 0 or math.copysign(1.0, b) < 0 else 0.0
    return a if a <= b else b


def java_round(x: float, low: int = _LONG_MIN, high: int = _LONG_MAX) -> int:
    """``Math.round``: the closest integer, halves up; NaN is 0; clamped to ``[low, high]``."""
    if x != x:
        return 0
    if x >= high:
        return high
    if x <= low:
        return low
    r = math.floor(x)
    # x - floor(x) is exact for doubles, so halves are recognised exactly (0.49999999999999994 -> 0).
    return r + 1 if x - r >= 0.5 else r


def _get_exponent(x: float) -> int:
    if not math.isfinite(x):
        return 1024
    if x == 0 or abs(x) < 2.2250738585072014e-308:
        return -1023
    return math.frexp(x)[1] - 1


def _get_exponent_float(x: float) -> int:
    # Siddhi widens a float to double first, so this is the double's exponent.
    return _get_exponent(x)


def _twos(value: int, bits: int) -> int:
    return value & ((1 << bits) - 1)


def java_hex_double(x: float, subnormal_exp: int = -1022) -> str:
    """``Double.toHexString`` (``Float.toHexString`` with ``subnormal_exp=-126``)."""
    if x != x:
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    x = abs(x)
    if x == 0:
        return sign + "0x0.0p0"
    mantissa, exp = math.frexp(x)  # x = mantissa * 2**exp, 0.5 <= mantissa < 1
    exp -= 1
    if exp < subnormal_exp:
        frac = x / 2.0 ** subnormal_exp  # < 1
        digits = f"{int(frac * 2 ** 52):013x}".rstrip("0") or "0"
        return f"{sign}0x0.{digits}p{subnormal_exp}"
    frac = mantissa * 2 - 1
    digits = f"{int(frac * 2 ** 52):013x}".rstrip("0") or "0"
    return f"{sign}0x1.{digits}p{exp}"


def java_parse_double(text: str) -> float:
    """``Double.parseDouble`` (engine/javanumbers.py), its failure a MathError."""
    try:
        return parse_double(text)
    except ValueError as exc:
        raise MathError(str(exc)) from None


def java_parse_float(text: str) -> float:
    """``Float.parseFloat``, rounded once from the text's exact value (engine/javanumbers.py)."""
    try:
        return parse_float(text)
    except ValueError as exc:
        raise MathError(str(exc)) from None


def java_parse_int(text: str, low: int, high: int, radix: int = 10) -> int:
    """``Integer.parseInt``/``Long.parseLong`` (range ``[low, high]``) of ``radix``
    (engine/javanumbers.py), its failure a MathError."""
    try:
        return parse_integer(text, low, high, radix)
    except ValueError as exc:
        raise MathError(str(exc)) from None


_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _java_conv(text: str, from_base: int, to_base: int) -> str:
    """``Integer.toString(Integer.parseInt(text, from), to)``."""
    if not 2 <= from_base <= 36:
        raise MathError(f"radix {from_base} out of range")
    value = java_parse_int(text, _INT_MIN, _INT_MAX, from_base)
    if not 2 <= to_base <= 36:
        to_base = 10
    if value == 0:
        return "0"
    neg, value = value < 0, abs(value)
    out = []
    while value:
        value, d = divmod(value, to_base)
        out.append(_DIGITS[d])
    return ("-" if neg else "") + "".join(reversed(out))


class JavaRandom:
    """``java.util.Random``: the 48-bit linear congruential generator and ``nextDouble``."""

    __slots__ = ("seed",)

    _MULT = 0x5DEECE66D
    _MASK = (1 << 48) - 1

    def __init__(self, seed: int | None = None) -> None:
        if seed is None:
            seed = random.getrandbits(64)
        self.seed = (seed ^ self._MULT) & self._MASK

    def _next(self, bits: int) -> int:
        self.seed = (self.seed * self._MULT + 0xB) & self._MASK
        return self.seed >> (48 - bits)

    def next_double(self) -> float:
        return ((self._next(26) << 27) + self._next(27)) * 1.1102230246251565e-16  # 2**-53


# ---------------------------------------------------------------------------- declarations
def _p(name: str, types: tuple[AttrType, ...], doc: str, **kw: Any) -> Param:
    return Param(name, types, dynamic=kw.pop("dynamic", True), doc=doc, **kw)


def _nan(x: float) -> float:
    return _NAN


def _inf(x: float) -> float:
    return _INF


def _signed_inf(x: float) -> float:
    return math.copysign(_INF, x)


def _log_error(x: float) -> float:
    return -_INF if x == 0 else _NAN


def _unary(name: str, types: tuple[AttrType, ...], fn: Callable[[float], Any], returns: AttrType,
           doc: str, example: tuple[str, str], on_error: Callable[[float], Any] = _nan) -> None:
    """A one-argument function on a number widened to double; null gives null.

    ``fn`` is called directly (most are C functions of :mod:`math`); where it raises for a
    domain error or an overflow, ``on_error`` gives Java's answer instead (NaN, an infinity).
    """

    @function(_NS, name, (_p("p1", types, "The input value."),), returns=returns, doc=doc,
              examples=(example,))
    def _build(infos: list[ArgInfo], ctx: Any) -> Any:
        if infos[0].type is AttrType.FLOAT:
            def impl(v: Any) -> Any:
                if v is None:
                    return None
                try:
                    return fn(f32(v))
                except (ValueError, OverflowError):
                    return on_error(f32(v))
        else:
            def impl(v: Any) -> Any:
                if v is None:
                    return None
                # float(): Java widens an int or long to double first, and keeps a double's -0.0
                # (``v + 0.0`` would not: -0.0 + 0.0 is 0.0)
                try:
                    return fn(float(v))
                except (ValueError, OverflowError):
                    return on_error(float(v))
        impl.__name__ = f"math_{name}"
        return returns, impl


_D = AttrType.DOUBLE
for _name, _types, _fn, _err, _doc, _ex in (
    ("abs", NUMBERS, abs, _nan, "The absolute value of p1 (a double).", ("math:abs(-6)", "Returns 6.0.")),
    ("acos", REALS, math.acos, _nan, "The arc-cosine of p1 in radians (NaN outside [-1, 1]).",
     ("math:acos(0.5)", "Returns 1.0471975511965979.")),
    ("asin", REALS, math.asin, _nan, "The arc-sine of p1 in radians (NaN outside [-1, 1]).",
     ("math:asin(0.5)", "Returns 0.5235987755982989.")),
    ("cbrt", NUMBERS, _java_cbrt, _nan, "The cube root of p1.", ("math:cbrt(17.0)", "Returns 2.5712815906582356.")),
    ("ceil", REALS, _java_ceil, _nan, "The smallest integral double not below p1.",
     ("math:ceil(423.187)", "Returns 424.0.")),
    ("cos", NUMBERS, math.cos, _nan, "The cosine of p1 (radians).", ("math:cos(6)", "Returns 0.9601702866503661.")),
    ("cosh", NUMBERS, math.cosh, _inf, "The hyperbolic cosine of p1.", ("math:cosh(6)", "Returns 201.7156361224559.")),
    ("exp", NUMBERS, math.exp, _inf, "Euler's number e raised to p1.", ("math:exp(10)", "Returns 22026.465794806718.")),
    ("floor", NUMBERS, _java_floor, _nan, "The largest integral double not above p1.",
     ("math:floor(10.23)", "Returns 10.0.")),
    ("ln", NUMBERS, math.log, _log_error, "The natural logarithm of p1.", ("math:ln(11.453)", "Returns 2.438251704415579.")),
    ("log10", NUMBERS, math.log10, _log_error, "The base 10 logarithm of p1.",
     ("math:log10(19.234)", "Returns 1.2840457421030493.")),
    ("log2", NUMBERS, lambda x: _java_log(x) / 0.6931471805599453, _nan, "The base 2 logarithm of p1 (ln(p1) / ln(2)).",
     ("math:log2(91)", "Returns 6.507794640198696.")),
    ("sin", NUMBERS, math.sin, _nan, "The sine of p1 (radians).", ("math:sin(6.0)", "Returns -0.27941549819892586.")),
    ("sinh", NUMBERS, math.sinh, _signed_inf, "The hyperbolic sine of p1.",
     ("math:sinh(6)", "Returns 201.71315737027922.")),
    ("sqrt", NUMBERS, math.sqrt, _nan, "The square root of p1 (NaN when negative).", ("math:sqrt(4)", "Returns 2.0.")),
    ("tan", NUMBERS, math.tan, _nan, "The tangent of p1 (radians).", ("math:tan(6.0)", "Returns -0.29100619138474915.")),
    ("tanh", NUMBERS, math.tanh, _nan, "The hyperbolic tangent of p1.", ("math:tanh(6.0)", "Returns 0.9999877116507956.")),
    # Java 9+: one product with a constant (Java 8's x * 180.0 / PI rounds twice and overflows sooner)
    ("toDegrees", NUMBERS, lambda x: x * 57.29577951308232, _nan, "Converts p1 from radians to degrees.",
     ("math:toDegrees(6.0)", "Returns 343.77467707849394.")),
    ("toRadians", NUMBERS, lambda x: x * 0.017453292519943295, _nan, "Converts p1 from degrees to radians.",
     ("math:toRadians(6.0)", "Returns 0.10471975511965978.")),
):
    _unary(_name, _types, _fn, _D, _doc, _ex, _err)

_unary("getExponent", NUMBERS, _get_exponent, AttrType.INT,
       "The unbiased exponent of p1 as a double (Math.getExponent).", ("math:getExponent(60984.1)", "Returns 15."))
_unary("signum", NUMBERS, lambda x: 0 if x != x else (1 if x > 0 else -1 if x < 0 else 0), AttrType.INT,
       "1, 0 or -1 for a positive, zero or negative p1.", ("math:signum(-6.32)", "Returns -1."))


def _binary(name: str, p1: str, p2: str, fn: Callable[[float, float], float], doc: str,
            example: tuple[str, str]) -> None:
    @function(_NS, name, (_p(p1, NUMBERS, "The first value."), _p(p2, NUMBERS, "The second value.")),
              returns=_D, doc=doc, examples=(example,))
    def _build(infos: list[ArgInfo], ctx: Any) -> Any:
        a, b = _to_double(infos[0].type), _to_double(infos[1].type)

        def impl(x: Any, y: Any) -> Any:
            if x is None or y is None:
                return None
            return fn(a(x), b(y))

        impl.__name__ = f"math_{name}"
        return _D, impl


_binary("copySign", "magnitude", "sign", math.copysign,
        "The magnitude of the first argument with the sign of the second.", ("math:copySign(5.6, -3.0)", "Returns -5.6."))
_binary("max", "p1", "p2", _java_max, "The greater of two numbers, as a double (NaN if either is).",
        ("math:max(123.67, 91)", "Returns 123.67."))
_binary("min", "p1", "p2", _java_min, "The smaller of two numbers, as a double (NaN if either is).",
        ("math:min(123.67, 91)", "Returns 91.0."))
_binary("power", "value", "to.power", java_pow, "value raised to the power to.power (Math.pow).",
        ("math:power(5.6, 3.0)", "Returns 175.61599999999996."))


@function(_NS, "atan", (_p("p1", NUMBERS, "The value (or y of atan2)."),
                        _p("p2", NUMBERS, "x of atan2.", optional=True, default="0D")),
          overloads=(("p1",), ("p1", "p2")), returns=_D,
          doc="The arc-tangent of p1, or of p1/p2 by quadrant (Math.atan2) when p2 is given.",
          examples=(("math:atan(12.0, 5.0)", "Returns 1.1760052070951352."),))
def _atan(infos: list[ArgInfo], ctx: Any) -> Any:
    a = _to_double(infos[0].type)
    if len(infos) == 1:
        return _D, lambda x: None if x is None else math.atan(a(x))
    b = _to_double(infos[1].type)
    return _D, lambda x, y: None if x is None or y is None else math.atan2(a(x), b(y))


@function(_NS, "log", (_p("number", NUMBERS, "The number."), _p("base", NUMBERS, "The base.")), returns=_D,
          doc="The logarithm of number to base (ln(number) / ln(base)); base 1 is an error.",
          examples=(("math:log(34, 2.0)", "Returns 5.08746284125034."),))
def _log(infos: list[ArgInfo], ctx: Any) -> Any:
    a, b = _to_double(infos[0].type), _to_double(infos[1].type)

    def math_log(x: Any, y: Any) -> Any:
        if x is None or y is None:
            return None
        number, base = a(x), b(y)
        if base == 1:
            raise MathError(f"the base argument of math:log() is 1, so math:log({number},{base}) is undefined")
        return _java_log(number) / _java_log(base)

    return _D, math_log


def _radix(name: str, fn_int: Callable[[int], str], fn_long: Callable[[int], str], doc: str,
           example: tuple[str, str]) -> None:
    @function(_NS, name, (_p("p1", INTEGERS, "The value."),), returns=AttrType.STRING, doc=doc,
              examples=(example,))
    def _build(infos: list[ArgInfo], ctx: Any) -> Any:
        fn = fn_int if infos[0].type is AttrType.INT else fn_long
        return AttrType.STRING, lambda v: None if v is None else fn(v)


_radix("bin", lambda v: format(_twos(v, 32), "b"), lambda v: format(_twos(v, 64), "b"),
       "The unsigned binary string of p1 (two's complement: 32 bits for int, 64 for long).",
       ("math:bin(9)", "Returns '1001'."))
_radix("oct", lambda v: format(_twos(v, 32), "o"), lambda v: format(_twos(v, 64), "o"),
       "The unsigned octal string of p1 (two's complement: 32 bits for int, 64 for long).",
       ("math:oct(99)", "Returns '143'."))


@function(_NS, "hex", (_p("p1", NUMBERS, "The value."),), returns=AttrType.STRING,
          doc="The hexadecimal string of p1: Integer/Long.toHexString for int/long, "
              "Float/Double.toHexString for float/double.",
          examples=(("math:hex(200)", "Returns 'c8'."),))
def _hex(infos: list[ArgInfo], ctx: Any) -> Any:
    t = infos[0].type
    if t is AttrType.INT:
        fn: Callable[[Any], str] = lambda v: format(_twos(v, 32), "x")  # noqa: E731
    elif t is AttrType.LONG:
        fn = lambda v: format(_twos(v, 64), "x")  # noqa: E731
    elif t is AttrType.FLOAT:
        fn = lambda v: java_hex_double(f32(v), -126)  # noqa: E731
    else:
        fn = lambda v: java_hex_double(float(v))  # noqa: E731
    return AttrType.STRING, lambda v: None if v is None else fn(v)


@function(_NS, "conv", (_p("a", STRING, "The number, as a string in from.base."),
                        _p("from.base", INT, "The base of a."), _p("to.base", INT, "The base to convert to.")),
          returns=AttrType.STRING, doc="Converts a from from.base to to.base (as Java's Integer.parseInt/toString).",
          examples=(("math:conv('7f', 16, 10)", "Returns '127'."),))
def _conv(infos: list[ArgInfo], ctx: Any) -> Any:
    def math_conv(a: Any, f: Any, t: Any) -> Any:
        if a is None or f is None or t is None:
            return None
        return _java_conv(a, f, t)

    return AttrType.STRING, math_conv


def _bool_test(name: str, test: Callable[[float], bool], doc: str, example: tuple[str, str]) -> None:
    @function(_NS, name, (_p("p1", REALS, "The value."),), returns=AttrType.BOOL, doc=doc, examples=(example,))
    def _build(infos: list[ArgInfo], ctx: Any) -> Any:
        return AttrType.BOOL, lambda v: None if v is None else test(v)


_bool_test("isInfinite", math.isinf, "Whether p1 is infinitely large.", ("math:isInfinite(inValue)", "true for Infinity."))
_bool_test("isNan", math.isnan, "Whether p1 is NaN.", ("math:isNan(inValue)", "true for NaN."))


def _parse(name: str, returns: AttrType, fn: Callable[[str], Any], doc: str, example: tuple[str, str]) -> None:
    @function(_NS, name, (_p("p1", STRING, "The string to parse."),), returns=returns, doc=doc,
              examples=(example,))
    def _build(infos: list[ArgInfo], ctx: Any) -> Any:
        return returns, lambda v: None if v is None else fn(v)


_parse("parseDouble", _D, java_parse_double, "p1 parsed as a double (Double.parseDouble).",
       ("math:parseDouble('123')", "Returns 123.0."))
_parse("parseFloat", AttrType.FLOAT, java_parse_float, "p1 parsed as a float (Float.parseFloat).",
       ("math:parseFloat('123')", "Returns 123.0."))
_parse("parseInt", AttrType.INT, lambda s: java_parse_int(s, _INT_MIN, _INT_MAX),
       "p1 parsed as an int (Integer.parseInt).", ("math:parseInt('123')", "Returns 123."))
_parse("parseLong", AttrType.LONG, lambda s: java_parse_int(s, _LONG_MIN, _LONG_MAX),
       "p1 parsed as a long (Long.parseLong).", ("math:parseLong('123')", "Returns 123."))


def _constant(name: str, value: float, doc: str) -> None:
    @function(_NS, name, (), overloads=((),), returns=_D, doc=doc,
              examples=((f"math:{name}()", f"Returns {value!r}."),))
    def _build(infos: list[ArgInfo], ctx: Any) -> Any:
        return _D, repr(value)


_constant("e", math.e, "Euler's number e.")
_constant("pi", math.pi, "The number pi.")


@function(_NS, "rand", (_p("seed", INTEGERS, "A constant seed (java.util.Random).", optional=True,
                           default="defaultSeed"),),
          overloads=((), ("seed",)), returns=_D, pure=False,
          doc="A pseudo-random double in [0, 1), from java.util.Random (seeded when a seed is given).",
          examples=(("math:rand()", "A random double between 0 and 1."),))
def _rand(infos: list[ArgInfo], ctx: Any) -> Any:
    if infos:
        if not is_literal(infos[0]):
            raise creation_error("the seed argument of math:rand() must be a constant")
        seeded = JavaRandom(infos[0].value)
        # The compiled call passes the (constant) seed on every event; it only seeded the generator.
        return _D, lambda _seed: seeded.next_double()
    return _D, JavaRandom().next_double


@function(_NS, "round", (_p("p1", REALS, "The value to round."),), returns="int|long",
          doc="The closest integer to p1, halves rounding up (Math.round): an int for a float, a long for a double.",
          examples=(("math:round(3252.353)", "Returns 3252."),))
def _round(infos: list[ArgInfo], ctx: Any) -> Any:
    if infos[0].type is AttrType.FLOAT:
        return AttrType.INT, lambda v: None if v is None else java_round(f32(v), _INT_MIN, _INT_MAX)
    floor = math.floor

    def math_round(v: Any) -> Any:
        if v is None:
            return None
        if -4.5e15 < v < 4.5e15:  # the common case, inline; java_round has the edges
            r = floor(v)
            return r + 1 if v - r >= 0.5 else r
        return java_round(v)

    return AttrType.LONG, math_round


# ---------------------------------------------------------------------------- percentile
class _Percentile(AggregatorState):
    """The values of the window, sorted; the value is Siddhi's nearest-rank percentile.

    They are kept in ``Double.compare``'s order (java_order: -0.0 before 0.0, NaN last and
    equal to itself), which Siddhi's sorted list keeps: its binary searches compare boxed
    Doubles."""

    __slots__ = ("values", "p", "narrow")

    def __init__(self, p: float, narrow: bool) -> None:
        self.values: list[float] = []
        self.p = p
        self.narrow = narrow  # int/long values are held as 32-bit floats, as Siddhi does

    def _number(self, value: Any) -> float:
        if type(value) is tuple:  # the selector passes (arg, p): every argument, as one tuple
            value = value[0]
        if value is None:
            raise MathError("math:percentile() got a null value")
        return f32(value) if self.narrow else float(value)

    def add(self, value: Any) -> Any:
        bisect.insort_right(self.values, self._number(value), key=java_order)
        return self.value()

    def remove(self, value: Any) -> Any:
        number = self._number(value)
        key = java_order(number)
        i = bisect.bisect_left(self.values, key, key=java_order)
        if i == len(self.values) or java_order(self.values[i]) != key:
            raise MathError(f"math:percentile(): {number} is not in the window")
        del self.values[i]
        return self.value()

    def reset(self) -> None:
        self.values = []

    def value(self) -> Any:
        values = self.values
        n = len(values)
        if n == 0:
            return None
        index = self.p * n / 100
        if index % 1 == 0:
            i = int(index)
            return values[i - 1] if i == n else (values[i - 1] + values[i]) / 2
        i = java_round(index)
        return values[0] if i == 0 else values[i - 1]


@aggregator(_NS, "percentile", (_p("arg", NUMBERS, "The values whose percentile is computed."),
                                _p("p", DOUBLE, "The percentile, a constant double with 0 < p <= 100.")),
            overloads=(("arg", "p"),), returns=_D,
            doc="An estimate of the p-th percentile of arg over the window (nearest rank; "
                "the mean of two ranks when p * n / 100 is whole).",
            examples=(("math:percentile(temperature, 97.0)", "The 97th percentile of the temperatures."),))
def _percentile(infos: list[ArgInfo]) -> Any:
    if not is_literal(infos[1]):
        raise creation_error("the percentile value of math:percentile() has to be a constant")
    p = float(infos[1].value)
    if not 0 < p <= 100:
        raise creation_error(f"the percentile value of math:percentile() should be in 0 < p <= 100, but found {p}")
    narrow = infos[0].type in (AttrType.INT, AttrType.LONG)
    return _D, lambda: _Percentile(p, narrow)
