"""Siddhi's type rules, as used by the expression compiler and the mappers."""
from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from srota.grammar.model import AttrType

_F32 = struct.Struct("f")

NUMERIC_RANK = {AttrType.INT: 0, AttrType.LONG: 1, AttrType.FLOAT: 2, AttrType.DOUBLE: 3}


def f32(value: float) -> float:
    """Round a Python float to the nearest 32-bit float (Java ``float`` arithmetic)."""
    try:
        return _F32.unpack(_F32.pack(value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def held_value(value: Any, type_: AttrType) -> Any:
    """A constant of ``type_`` as the engine holds it: a ``float`` rounded to 32 bits, as Java
    holds a float literal; None and the other types as they are."""
    return f32(float(value)) if type_ is AttrType.FLOAT and value is not None else value


def math_type(left: AttrType, right: AttrType) -> AttrType:
    """The result type of ``left op right`` for numeric operands (Java promotion)."""
    return left if NUMERIC_RANK[left] >= NUMERIC_RANK[right] else right


#: Java's int and long ranges.
INT_MIN, INT_MAX = -(2 ** 31), 2 ** 31 - 1
LONG_MIN, LONG_MAX = -(2 ** 63), 2 ** 63 - 1
_INT_MIN, _INT_MAX, _LONG_MIN, _LONG_MAX = INT_MIN, INT_MAX, LONG_MIN, LONG_MAX


def wrap_int(v: int) -> int:
    """``v`` as Java's 32-bit ``int`` arithmetic leaves it (two's complement wrap-around)."""
    return ((v + 0x80000000) & 0xFFFFFFFF) - 0x80000000


def wrap_long(v: int) -> int:
    """``v`` as Java's 64-bit ``long`` arithmetic leaves it (two's complement wrap-around)."""
    return ((v + 0x8000000000000000) & 0xFFFFFFFFFFFFFFFF) - 0x8000000000000000


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def java_idiv(a: int, b: int) -> int | None:
    """Siddhi's ``int`` division: truncates toward zero; ``x / 0`` is null (Siddhi's
    ``DivideExpressionExecutorInt`` answers null rather than throwing); ``MIN / -1`` wraps."""
    if b == 0:
        return None
    q = _trunc_div(a, b)
    return q if q <= _INT_MAX else wrap_int(q)


def java_ldiv(a: int, b: int) -> int | None:
    """Siddhi's ``long`` division (as :func:`java_idiv`, 64 bits)."""
    if b == 0:
        return None
    q = _trunc_div(a, b)
    return q if q <= _LONG_MAX else wrap_long(q)


def java_imod(a: int, b: int) -> int | None:
    """Siddhi's integer remainder: takes the sign of the dividend; ``x % 0`` is null."""
    if b == 0:
        return None
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def java_fdiv(a: float, b: float) -> float | None:
    """Siddhi's floating division: ``x / 0.0`` (and ``-0.0``) is null, not Infinity or NaN."""
    if b == 0:
        return None
    return a / b


def java_fmod(a: float, b: float) -> float | None:
    """Siddhi's floating remainder (Java's ``%`` is C's ``fmod``); ``x % 0.0`` is null."""
    if b == 0:
        return None
    if math.isinf(a):
        return math.nan  # Java's answer; Python's fmod raises ValueError here
    return math.fmod(a, b)


def coerce(value: Any, type_: AttrType) -> Any:
    """Convert ``value`` to ``type_`` as Siddhi's ``convert`` does; raises ValueError/TypeError."""
    if value is None:
        return None
    if type_ is AttrType.STRING:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            return java_double_str(value)
        return str(value)
    if type_ in (AttrType.INT, AttrType.LONG):
        if isinstance(value, bool):
            return 1 if value else 0
        if isinstance(value, str):
            value = value.strip()
            return int(value) if "." not in value and "e" not in value.lower() else int(float(value))
        return int(value)
    if type_ is AttrType.DOUBLE:
        if isinstance(value, bool):
            return 1.0 if value else 0.0
        return float(value)
    if type_ is AttrType.FLOAT:
        if isinstance(value, bool):
            return 1.0 if value else 0.0
        return f32(float(value))
    if type_ is AttrType.BOOL:
        if isinstance(value, str):
            low = value.strip().lower()
            if low in ("true", "false"):
                return low == "true"
            raise ValueError(f"cannot convert {value!r} to bool")
        if isinstance(value, (int, float)):
            return value != 0
        return bool(value)
    return value


def _java_sci_or_plain(digits: str, exp10: int, negative: bool) -> str:
    """Java's layout of ``0.<digits> x 10^exp10`` (``FloatingDecimal.getChars``): plain from
    1e-3 to below 1e7 (with at least one digit after the point), else ``d.ddddE<n>``."""
    sign = "-" if negative else ""
    if 0 < exp10 <= 7:
        whole = digits[:exp10].ljust(exp10, "0")
        return f"{sign}{whole}.{digits[exp10:] or '0'}"
    if -3 < exp10 <= 0:
        return f"{sign}0.{'0' * -exp10}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exp10 - 1}"


def _long_digits(value: int, insignificant: int) -> tuple[str, int]:
    """``FloatingDecimal.developLongDigits``: an integral value's digits, the last
    ``insignificant`` ones rounded away (half up), as ``(digits, exponent)``."""
    exp10 = 0
    if insignificant:
        pow10 = 10 ** insignificant
        value, residue = divmod(value, pow10)
        exp10 = insignificant
        if residue >= pow10 >> 1:
            value += 1
    text = str(value)
    return text.rstrip("0") or "0", len(text) + exp10


def _java_fp_str(value: float, significant_bits: int, shortest: str) -> str:
    """``Double.toString``/``Float.toString`` of JDK 17 (``FloatingDecimal``).

    An integral value below 2^63 prints all its digits but those past the binary precision
    (``1.23456792E8`` for the float 123456792, where the shortest would be ``1.2345679E8``);
    other values print their shortest round-trip digits (``shortest``: Python's ``repr`` of
    the double or of the float's shortest form).
    """
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    negative = value < 0
    mag = -value if negative else value
    bin_exp = math.frexp(mag)[1] - 1
    if mag.is_integer() and bin_exp <= 62 and mag >= 2.0 ** -1022:
        # FloatingDecimal's "easy" case: the value fits a long
        p2 = bin_exp - significant_bits - 1
        insignificant = len(str(2 ** p2)) - 1 if bin_exp > significant_bits and 1 < p2 < 64 else 0
        digits, exp10 = _long_digits(int(mag), insignificant)
        return _java_sci_or_plain(digits, exp10, negative)
    mantissa, _, exp = shortest.lstrip("-").partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    # as 0.<digits> x 10^exp10: the point moves left past the leading zeros
    exp10 = len(whole) + (int(exp) if exp else 0) - (len(whole + frac) - len(digits))
    digits = digits.rstrip("0") or "0"
    if len(digits) == 1 and not -3 < exp10 <= 8:
        # In E notation FloatingDecimal does not stop at the first digit: it goes on with
        # the exact value's digits (2e23 prints as 1.9999999999999998E23, 4.9E-324).
        digits, exp10 = _steele_white_two_digits(mag, significant_bits, exp10)
    return _java_sci_or_plain(digits, exp10, negative)


def _steele_white_two_digits(mag: float, significant_bits: int, exp10: int) -> tuple[str, int]:
    """The exact value's digits from the first, stopping (from the second on) once the rest
    is within half an ulp of either end, rounding up when nearer the upper one."""
    exact = Fraction(mag)
    bin_exp = max(math.frexp(mag)[1] - 1, -1022 if significant_bits == 53 else -126)
    half_ulp = Fraction(2) ** (bin_exp - significant_bits)
    point = exp10 - 1  # the first digit's power of ten
    while Fraction(10) ** point > exact:
        point -= 1
    while Fraction(10) ** (point + 1) <= exact:
        point += 1
    scale = Fraction(10) ** point
    b, m = exact / scale, half_ulp / scale
    q = int(b)
    b -= q
    out = [q]
    while True:
        b, m = b * 10, m * 10
        q = int(b)
        b -= q
        out.append(q)
        low, high = b < m, b + m > 1
        if low or high:
            break
    if high and (not low or 2 * b >= 1):
        i = len(out) - 1
        out[i] += 1
        while out[i] == 10 and i > 0:
            out[i] = 0
            i -= 1
            out[i] += 1
        if out[0] == 10:
            out[0:1] = [1, 0]
            point += 1
    digits = "".join(map(str, out)).rstrip("0") or "0"
    return digits, point + 1


def java_double_str(value: float) -> str:
    """``Double.toString`` (JDK 17): ``1.0E10``, ``1.0E-5``, ``0.001``, ``NaN``, ``Infinity``."""
    return _java_fp_str(float(value), 53, repr(float(value)))


def java_float32_str(value: float) -> str:
    """``Float.toString`` (JDK 17) of a 32-bit value: ``65.1`` for the float nearest 65.1."""
    value = float(value)
    if value != value or value in (math.inf, -math.inf) or value == 0:
        return _java_fp_str(value, 24, "")
    for precision in range(1, 10):
        text = f"{value:.{precision}g}"
        if f32(float(text)) == value:
            return _java_fp_str(value, 24, repr(float(text)))
    return _java_fp_str(value, 24, repr(value))


def java_float_str(value: float) -> str:
    """``Double.toString`` (kept under its old name for callers that format doubles)."""
    return java_double_str(value)


def python_type_ok(value: Any, type_: AttrType) -> bool:
    """Whether ``value`` is acceptable for an attribute of ``type_`` (None always is)."""
    if value is None or type_ is AttrType.OBJECT:
        return True
    if type_ is AttrType.STRING:
        return isinstance(value, str)
    if type_ is AttrType.BOOL:
        return isinstance(value, bool)
    if type_ in (AttrType.INT, AttrType.LONG):
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def type_of_value(value: Any) -> AttrType:
    """The Siddhi type of a Python value (used for ``object`` attributes)."""
    if isinstance(value, bool):
        return AttrType.BOOL
    if isinstance(value, int):
        return AttrType.LONG if not _INT_MIN <= value <= _INT_MAX else AttrType.INT
    if isinstance(value, float):
        return AttrType.DOUBLE
    if isinstance(value, str):
        return AttrType.STRING
    return AttrType.OBJECT


# ---------------------------------------------------------------------------- Java's HashMap order
def java_hash(key: Any) -> int:
    """``key.hashCode()`` as a 32-bit unsigned value (String, Integer/Long, Double, Boolean;
    0 for null, as ``HashMap.hash`` takes it)."""
    if key is None:
        return 0
    if isinstance(key, str):
        data = key.encode("utf-16-be")
        h = 0
        for i in range(0, len(data), 2):
            h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
        return h
    if isinstance(key, bool):
        return 1231 if key else 1237
    if isinstance(key, int):
        if -(2 ** 31) <= key < 2 ** 31:
            return key & 0xFFFFFFFF
        v = key & 0xFFFFFFFFFFFFFFFF
        return (v ^ (v >> 32)) & 0xFFFFFFFF
    if isinstance(key, float):
        bits = struct.unpack(">q", struct.pack(">d", key))[0] & 0xFFFFFFFFFFFFFFFF
        return (bits ^ (bits >> 32)) & 0xFFFFFFFF
    return hash(key) & 0xFFFFFFFF


def hashmap_order(keys: Sequence[Any], capacity: int = 16) -> list[int]:
    """Indexes of distinct ``keys`` in the order a ``java.util.HashMap`` they were put into, in
    this order, iterates them (Siddhi's outputs follow it where it keeps groups in one).

    ``capacity``: the map's table length before these keys (a map that held more keys once
    keeps its larger table after ``clear()``)."""
    cap = capacity
    while len(keys) > cap * 0.75:
        cap *= 2

    def slot(i: int) -> tuple[int, int]:
        h = java_hash(keys[i])
        return ((h ^ (h >> 16)) & (cap - 1), i)

    return sorted(range(len(keys)), key=slot)


def hashmap_keys(keys: Any, capacity: int = 16) -> list[Any]:
    """The keys in the order a ``java.util.HashMap`` filled in this order iterates them
    (``capacity``: see :func:`hashmap_order`; a map that knows its table length, a ``table``
    attribute, is iterated in that table)."""
    capacity = getattr(keys, "table", 0) or capacity
    keys = list(keys)
    return [keys[i] for i in hashmap_order(keys, capacity)]


def hashmap_table_for(size: int) -> int:
    """The table length of ``new HashMap<>(m)`` for a map of ``size`` entries (at least 1):
    ``tableSizeFor((int) (size / 0.75 + 1))``."""
    n = int(size / 0.75 + 1)
    return 1 << max(0, (n - 1).bit_length())


def hashmap_capacity(size: int, capacity: int = 16) -> int:
    """The table length of a ``java.util.HashMap`` of ``capacity`` once it holds ``size`` keys."""
    while size > capacity * 0.75:
        capacity *= 2
    return capacity
