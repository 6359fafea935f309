"""Siddhi's type rules, as used by the expression compiler and the mappers."""
from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
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


def compared_as_float(t: AttrType, other: AttrType, equality: bool) -> bool:
    """Whether Siddhi's compare executor takes a number of type ``t`` against one of type
    ``other`` as a 32-bit float: an int against a float always, a long against a float except
    in ``==`` and ``!=`` (``equality``), which take ``doubleValue()`` of each side
    (``EqualCompareConditionExpressionExecutorFloatLong``): 2147483647L is not 2147483648f,
    though it is not less than it either."""
    return other is AttrType.FLOAT and (t is AttrType.INT or (t is AttrType.LONG and not equality))


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


# FloatingDecimal's tables: N_5_BITS[i] is about ceil(log2(5^i)); it sizes B and 10*S to pick
# int, long or FDBigInteger arithmetic, and the choice changes the printed digits.
_N_5_BITS = (0, 3, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28, 31, 33, 35, 38, 40, 42, 45, 47,
             49, 52, 54, 56, 59, 61)
_SIGNIF_MASK = (1 << 52) - 1
_DOUBLE_BITS = struct.Struct("<d")
_DOUBLE_WORD = struct.Struct("<Q")
_FLOAT_BITS = struct.Struct("<f")
_FLOAT_WORD = struct.Struct("<I")
# java_double_str's fast path: |x| in [2^-6, 2^23), where Double.toString is repr (see there)
_FAST_LOW, _FAST_HIGH = 2.0 ** -6, 2.0 ** 23


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


def _estimate_dec_exp(fract_bits: int, bin_exp: int) -> int:
    """``estimateDecExp``: floor of a linear estimate of log10 (same double operations, same
    order, so the same rounding as Java); it is at most one too high, never too low."""
    d2 = 1.0 + (fract_bits & _SIGNIF_MASK) / 4503599627370496.0  # exact: 1 <= d2 < 2
    return math.floor((d2 - 1.5) * 0.289529654 + 0.176091259 + bin_exp * 0.301029995663981)


def _fd_scales(bin_exp: int, n_fract_bits: int, n_significant_bits: int,
               dec_exp: int) -> tuple[int, int, int, int, int, int, int]:
    """``dtoa``'s scaling of a value with ``n_fract_bits`` significant bits and (estimated)
    decimal exponent ``dec_exp``: ``B = fract * 5^b5 * 2^b2`` (the value), ``S = 5^s5 * 2^s2``
    (one unit of its first digit), ``M = 5^m5 * 2^m2`` (half an ulp), and the width of the
    Java arithmetic it picks from rough bit counts: 32 (int), 64 (long) or 0 (FDBigInteger).
    """
    n_tiny_bits = max(0, n_fract_bits - bin_exp - 1)
    b5 = max(0, -dec_exp)
    b2 = b5 + n_tiny_bits + bin_exp
    s5 = max(0, dec_exp)
    s2 = s5 + n_tiny_bits
    m2 = b2 - n_significant_bits
    b2 -= n_fract_bits - 1
    common = min(b2, s2)
    b2 -= common
    s2 -= common
    m2 -= common
    if n_fract_bits == 1:
        m2 -= 1  # a power of two: the gap below is half the gap above; Java uses it both ways
    if m2 < 0:
        b2 -= m2
        s2 -= m2
        m2 = 0
    b_bits = n_fract_bits + b2 + (_N_5_BITS[b5] if b5 < len(_N_5_BITS) else b5 * 3)
    ten_s_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 + 1 < len(_N_5_BITS) else (s5 + 1) * 3)
    if b_bits < 64 and ten_s_bits < 64:
        width = 32 if b_bits < 32 and ten_s_bits < 32 else 64
    else:
        width = 0
    return b5, b2, s5, s2, b5, m2, width


def _fd_dtoa(bin_exp: int, fract_bits: int, n_significant_bits: int) -> tuple[str, int]:
    """``FloatingDecimal.BinaryToASCIIBuffer.dtoa`` (JDK 8 to 18) of the positive value
    ``fract_bits * 2^(bin_exp - 52)`` (bit 52 of ``fract_bits`` set), as ``(digits, exp10)``
    meaning ``0.<digits> x 10^exp10``.

    Steele and White's digit generation with a symmetric half-ulp stopping test, but with
    Java's quirks kept, since they show in the output: the decimal exponent is estimated, E
    notation always takes a second digit, an exact power of two uses the narrower gap on both
    sides, ``int``/``long`` arithmetic (chosen from rough bit counts) tests the upper bound
    strictly and lets the half-ulp overflow, while the FDBigInteger path tests it inclusively.
    """
    tail_zeros = (fract_bits & -fract_bits).bit_length() - 1
    n_fract_bits = 53 - tail_zeros
    n_tiny_bits = max(0, n_fract_bits - bin_exp - 1)
    if n_tiny_bits == 0 and bin_exp <= 62:
        # the "easy" case: an integer that fits a long, all its digits but those past the
        # binary precision (1.23456792E8 for the float 123456792)
        p2 = bin_exp - n_significant_bits - 1
        insignificant = len(str(1 << p2)) - 1 if bin_exp > n_significant_bits and p2 > 1 else 0
        shift = bin_exp - 52
        return _long_digits(fract_bits << shift if shift >= 0 else fract_bits >> -shift,
                            insignificant)
    dec_exp = _estimate_dec_exp(fract_bits, bin_exp)
    b5, b2, s5, s2, m5, m2, width = _fd_scales(bin_exp, n_fract_bits, n_significant_bits, dec_exp)
    b = (fract_bits >> tail_zeros) * 5 ** b5 << b2
    s = 5 ** s5 << s2
    m = 5 ** m5 << m2
    tens = s * 10
    fixed = width != 0
    if fixed:
        # int or long arithmetic: b, s and tens fit, the half-ulp m (times 10 a digit) and
        # b + m may wrap around, as in Java
        half, mod = 1 << (width - 1), 1 << width
    digits: list[int] = []
    q, b = divmod(b, s)
    b *= 10
    m *= 10
    if fixed:
        m = (m + half) % mod - half
        low, high = b < m, (b + m + half) % mod - half > tens
    else:
        low, high = b < m, b + m >= tens
    if q == 0 and not high:
        dec_exp -= 1  # the estimate was one too high
    else:
        digits.append(q)
    if dec_exp < -3 or dec_exp >= 8:
        low = high = False  # E notation: at least two digits
    while not low and not high:
        q, b = divmod(b, s)
        b *= 10
        m *= 10
        if fixed:
            m = (m + half) % mod - half
            if m > 0:
                low, high = b < m, (b + m + half) % mod - half > tens
            else:
                low = high = True  # Java's guard for an m that wrapped negative
        else:
            low, high = b < m, b + m >= tens
        digits.append(q)
    exp10 = dec_exp + 1
    if high and (not low or 2 * b > tens or (2 * b == tens and digits[-1] & 1)):
        # roundup(): a carry out of all nines leaves the zeros in place ("1.00E10")
        i = len(digits) - 1
        while digits[i] == 9 and i > 0:
            digits[i] = 0
            i -= 1
        if digits[i] == 9:
            digits[0] = 1
            exp10 += 1
        else:
            digits[i] += 1
    return "".join(map(str, digits)), exp10


def _java_fp_str_bits(negative: bool, bin_exp: int, fract_bits: int, float_bits: bool) -> str:
    """``Double.toString``/``Float.toString`` (``FloatingDecimal.toJavaFormatString``) of a
    finite non-zero value given by its biased exponent field and stored fraction bits."""
    if float_bits:
        exp_shift, bias, all_bits = 23, 127, 24
    else:
        exp_shift, bias, all_bits = 52, 1023, 53
    if bin_exp == 0:  # subnormal: normalise, fewer significant bits
        shift = exp_shift + 1 - fract_bits.bit_length()
        fract_bits <<= shift
        bin_exp = 1 - shift
        n_significant_bits = all_bits - shift
    else:
        fract_bits |= 1 << exp_shift
        n_significant_bits = all_bits
    digits, exp10 = _fd_dtoa(bin_exp - bias, fract_bits << (52 - exp_shift), n_significant_bits)
    return _java_sci_or_plain(digits, exp10, negative)


def java_double_str(value: float) -> str:
    """``Double.toString`` (JDK 17): ``1.0E10``, ``1.0E-5``, ``0.001``, ``NaN``, ``Infinity``."""
    value = float(value)
    if _FAST_LOW <= (value if value > 0 else -value) < _FAST_HIGH:
        # Here Java prints Python's shortest repr, in the same layout: dtoa takes its long
        # path without overflow or the FDBigInteger path (tests/engine/test_types.py checks
        # every binade), so it stops at the shortest length; no decimal of 17 digits or
        # fewer lies exactly half an ulp away, so the open and closed intervals agree; and
        # both round a tie between two candidates to the even digit.
        return repr(value)
    special = _special_text(value)
    if special is not None:
        return special
    bits = _DOUBLE_WORD.unpack(_DOUBLE_BITS.pack(value))[0]
    return _java_fp_str_bits(bits >> 63 == 1, (bits >> 52) & 0x7FF, bits & _SIGNIF_MASK, False)


def _special_text(value: float) -> str | None:
    """Java's text of NaN, the infinities and the zeros (None for any other value)."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    return None


def java_float32_str(value: float) -> str:
    """``Float.toString`` (JDK 17) of a 32-bit value: ``65.1`` for the float nearest 65.1."""
    value = float(value)
    special = _special_text(value)
    if special is not None:
        return special
    try:
        bits = _FLOAT_WORD.unpack(_FLOAT_BITS.pack(value))[0]
    except OverflowError:  # a double beyond the float range: Java's (float) cast overflows
        return "Infinity" if value > 0 else "-Infinity"
    return _java_fp_str_bits(bits >> 31 == 1, (bits >> 23) & 0xFF, bits & 0x7FFFFF, True)


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


# ------------------------------------------------------------- Java's equality and order of values
#: The keys :func:`java_key` gives -0.0 and NaN. Only ever in a key of a double or float slot,
#: where no string can meet them; text, so snapshots keep them as they keep any key.
NEGATIVE_ZERO_KEY = "-0.0"
NAN_KEY = "NaN"


def java_key(value: Any) -> Any:
    """A double or float as a hash key equal where Java's ``Double.equals`` is (a ``HashMap``
    key, Siddhi's group-by key text, a ``TreeMap`` key): -0.0 is a key of its own, though
    Python's ``-0.0 == 0.0``, and every NaN is the same key, though ``nan != nan``. Any other
    value as it is."""
    if value.__class__ is not float:
        return value
    if value != value:
        return NAN_KEY
    if value == 0.0 and math.copysign(1.0, value) < 0:
        return NEGATIVE_ZERO_KEY
    return value


def key_value(key: Any) -> Any:
    """The value of a :func:`java_key` key of a double or float slot."""
    if key.__class__ is str:
        return -0.0 if key == NEGATIVE_ZERO_KEY else math.nan
    return key


def java_order(value: Any) -> Any:
    """A sort key that orders values as Java's ``compareTo`` does (``Comparable``, as Siddhi's
    ``order by``, sort window and ``TreeMap`` keys use it), where Python's order differs:
    doubles and floats in ``Double.compareTo``'s total order (-0.0 before 0.0, NaN after
    infinity, NaN equal to NaN), strings by their UTF-16 code units (a character beyond the
    BMP before U+E000..U+FFFF). Keys of one type compare with each other only."""
    cls = value.__class__
    if cls is float:
        if value != value:
            return (1, 0.0, 0.0)
        return (0, value, math.copysign(1.0, value))
    if isinstance(value, int) and cls is not bool:
        return (0, value, 1.0)  # (comparable with a float's key: a double column may hold an int)
    if cls is str and not value.isascii():
        units = value.encode("utf-16-be", "surrogatepass")
        if len(units) != 2 * len(value):  # a character beyond the BMP: its surrogates instead
            return "".join(chr(units[i] << 8 | units[i + 1]) for i in range(0, len(units), 2))
    return value


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
        # Double.hashCode: doubleToLongBits, every NaN as the one canonical NaN
        bits = 0x7FF8000000000000 if key != key else struct.unpack(">Q", struct.pack(">d", key))[0]
        return (bits ^ (bits >> 32)) & 0xFFFFFFFF
    return hash(key) & 0xFFFFFFFF


def java_float_hash(value: float) -> int:
    """``Float.hashCode`` of a float attribute's value: ``floatToIntBits``, every NaN as the one
    canonical NaN (a ``Float`` in a HashSet or HashMap orders by it, not by the double's hash);
    0 for null, as ``HashMap.hash`` takes it."""
    if value is None:
        return 0
    if value != value:
        return 0x7FC00000
    return int(struct.unpack(">I", struct.pack(">f", value))[0])


def hashmap_order(keys: Sequence[Any], capacity: int = 16, hash_of: Callable[[Any], int] = java_hash) -> list[int]:
    """Indexes of distinct ``keys`` in the order a ``java.util.HashMap`` they were put into, in
    this order, iterates them (Siddhi's outputs follow it where it keeps groups in one).

    ``capacity``: the map's table length before these keys (a map that held more keys once
    keeps its larger table after ``clear()``); ``hash_of``: the keys' ``hashCode``
    (:func:`java_float_hash` for a float attribute's values)."""
    cap = capacity
    while len(keys) > cap * 0.75:
        cap *= 2

    def slot(i: int) -> tuple[int, int]:
        h = hash_of(keys[i])
        return ((h ^ (h >> 16)) & (cap - 1), i)

    return sorted(range(len(keys)), key=slot)


def hashmap_keys(keys: Any, capacity: int = 16, hash_of: Callable[[Any], int] = java_hash) -> list[Any]:
    """The keys in the order a ``java.util.HashMap`` filled in this order iterates them
    (``capacity``, ``hash_of``: see :func:`hashmap_order`; a map that knows its table length, a
    ``table`` attribute, is iterated in that table)."""
    capacity = getattr(keys, "table", 0) or capacity
    keys = list(keys)
    return [keys[i] for i in hashmap_order(keys, capacity, hash_of)]


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
