"""Siddhi's type rules, as used by the expression compiler and the mappers."""
from __future__ import annotations

import math
import struct
from collections.abc import Sequence
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


def math_type(left: AttrType, right: AttrType) -> AttrType:
    """The result type of ``left op right`` for numeric operands (Java promotion)."""
    return left if NUMERIC_RANK[left] >= NUMERIC_RANK[right] else right


_INT_MIN, _INT_MAX = -(2 ** 31), 2 ** 31 - 1
_LONG_MIN, _LONG_MAX = -(2 ** 63), 2 ** 63 - 1


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
            return java_float_str(value)
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


def java_float_str(value: float) -> str:
    """Format a float the way Java's ``Double.toString`` does for common values."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == int(value) and abs(value) < 1e7:
        return f"{value:.1f}"
    return repr(value)


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
    """``key.hashCode()`` as a 32-bit unsigned value (String, Integer/Long, Double, Boolean)."""
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


def hashmap_order(keys: Sequence[Any]) -> list[int]:
    """Indexes of distinct ``keys`` in the order a ``java.util.HashMap`` they were put into, in
    this order, iterates them (Siddhi's outputs follow it where it keeps groups in one)."""
    cap = 16
    while len(keys) > cap * 0.75:
        cap *= 2

    def slot(i: int) -> tuple[int, int]:
        h = java_hash(keys[i])
        return ((h ^ (h >> 16)) & (cap - 1), i)

    return sorted(range(len(keys)), key=slot)


def hashmap_keys(keys: Any) -> list[Any]:
    """The keys in the order a ``java.util.HashMap`` filled in this order iterates them."""
    keys = list(keys)
    return [keys[i] for i in hashmap_order(keys)]
