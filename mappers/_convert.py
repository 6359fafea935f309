"""Value conversion between payload values and Siddhi attribute types.

Inbound, a converter takes one decoded value (a JSON value, a CSV field, a transport
property) and returns it as the attribute's type, or raises :class:`_ConvertError` with a
reason the mapper turns into a :class:`MappingError`.  Outbound, formatters render a typed
value as text the way Siddhi (Java) does: ``55.6`` for a float, ``true`` for a bool.

Siddhi's rules, kept here: ``int`` is 32-bit and ``long`` 64-bit (out-of-range values are
errors, never wrapped); ``float`` values are rounded to 32 bits on the way in; numbers given
as strings (``"42"``) are accepted, as Siddhi parses ``toString()`` of the value; a bool is
only ``true``/``false``; a fractional number is never silently truncated to an integer.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import orjson
from srota.engine.javanumbers import parse_double, parse_float, parse_integer
from srota.engine.types import f32, java_double_str, java_float32_str
from srota.grammar.model import AttrType

INT_MIN, INT_MAX = -(2 ** 31), 2 ** 31 - 1
LONG_MIN, LONG_MAX = -(2 ** 63), 2 ** 63 - 1


class _Missing:
    """The marker for 'this value is absent' (distinct from an explicit null)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class _ConvertError(Exception):
    """A value does not convert; the message is the reason."""


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def with_article(type_name: str) -> str:
    """``an int``, ``a long``: the type with its article, for messages."""
    return f"an {type_name}" if type_name[0] in "aeiou" else f"a {type_name}"


def _to_integer(value: Any, lo: int, hi: int, type_name: str) -> int:
    cls = value.__class__
    if cls is int:
        result = value
    elif cls is str:
        try:
            result = int(value.strip())
        except ValueError:
            raise _ConvertError(f"{_describe(value)} is not {with_article(type_name)}") from None
    elif cls is bool:
        raise _ConvertError(f"a bool ({_describe(value)}) is not {with_article(type_name)}")
    elif cls is float:
        raise _ConvertError(f"{_describe(value)} is not {with_article(type_name)} (it has a fraction or exponent)")
    else:
        raise _ConvertError(f"{type(value).__name__} {_describe(value)} is not {with_article(type_name)}")
    if not lo <= result <= hi:
        raise _ConvertError(f"{result} is out of range for {type_name}")
    return result


def _to_double(value: Any) -> float:
    cls = value.__class__
    if cls is float:
        return value
    if cls is int:
        try:
            return float(value)
        except OverflowError:
            raise _ConvertError(f"{value} is out of range for double") from None
    if cls is str:
        try:
            return float(value.strip())
        except ValueError:
            raise _ConvertError(f"{_describe(value)} is not a number") from None
    if cls is bool:
        raise _ConvertError(f"a bool ({_describe(value)}) is not a number")
    raise _ConvertError(f"{type(value).__name__} {_describe(value)} is not a number")


def _to_bool(value: Any) -> bool:
    if value.__class__ is bool:
        return value
    if value.__class__ is str:
        low = value.strip().lower()
        if low == "true":
            return True
        if low == "false":
            return False
    raise _ConvertError(f"{_describe(value)} is not a bool (true or false)")


def _to_string(value: Any) -> str:
    cls = value.__class__
    if cls is str:
        return value
    if cls is bool:
        return "true" if value else "false"
    if cls is float:
        return format_double(value)
    if cls is int:
        return str(value)
    if cls is dict or cls is list:
        # A nested JSON value given to a string attribute keeps its JSON text.
        try:
            return orjson.dumps(value).decode()
        except TypeError:  # an integer beyond 64 bits, which orjson cannot write
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode()
        except UnicodeDecodeError:
            raise _ConvertError("bytes that are not UTF-8 text") from None
    return str(value)


def value_converter(type_: AttrType) -> Callable[[Any], Any]:
    """Decoded value (JSON value, object, transport property) -> attribute type; None stays None."""
    if type_ is AttrType.STRING:
        conv: Callable[[Any], Any] = _to_string
    elif type_ is AttrType.INT:
        def conv(v: Any) -> int:
            return _to_integer(v, INT_MIN, INT_MAX, "int")
    elif type_ is AttrType.LONG:
        def conv(v: Any) -> int:
            return _to_integer(v, LONG_MIN, LONG_MAX, "long")
    elif type_ is AttrType.DOUBLE:
        conv = _to_double
    elif type_ is AttrType.FLOAT:
        def conv(v: Any) -> float:
            return f32(_to_double(v))
    elif type_ is AttrType.BOOL:
        conv = _to_bool
    else:
        def conv(v: Any) -> Any:
            return v

    def convert(value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, (bytes, bytearray)) and type_ is not AttrType.OBJECT:
            try:
                value = bytes(value).decode()
            except UnicodeDecodeError:
                raise _ConvertError("bytes that are not UTF-8 text") from None
        return conv(value)

    return convert


def _java_integer(lo: int, hi: int, type_name: str) -> Callable[[str], int]:
    def convert(text: str) -> int:
        try:
            value = parse_integer(text, -math.inf, math.inf)
        except ValueError:
            raise _ConvertError(f"{text!r} is not {with_article(type_name)}") from None
        if not lo <= value <= hi:
            raise _ConvertError(f"{value} is out of range for {type_name}")
        return value
    return convert


def _java_floating(parse: Callable[[str], float]) -> Callable[[str], float]:
    def convert(text: str) -> float:
        try:
            return parse(text)
        except ValueError:
            raise _ConvertError(f"{text!r} is not a number") from None
    return convert


_java_double = _java_floating(parse_double)
_java_float = _java_floating(parse_float)


def _java_bool(text: str) -> bool:
    # Boolean.parseBoolean: "true" in any case is true, anything else false.
    return text.lower() == "true"


def java_text_converter(type_: AttrType) -> Callable[[str], Any]:
    """A text field (CSV, XML, the text format) -> attribute type, by Java's parsers, as the
    siddhi-map-* mappers convert (``Integer.parseInt``, ``Double.parseDouble``, ``Boolean.parseBoolean``)."""
    if type_ is AttrType.STRING or type_ is AttrType.OBJECT:
        return str
    if type_ is AttrType.INT:
        return _java_integer(INT_MIN, INT_MAX, "int")
    if type_ is AttrType.LONG:
        return _java_integer(LONG_MIN, LONG_MAX, "long")
    if type_ is AttrType.DOUBLE:
        return _java_double
    if type_ is AttrType.FLOAT:
        return _java_float
    return _java_bool


# ------------------------------------------------------------------------------------ outbound
def format_double(value: float) -> str:
    """A double as text: the shortest round-trip form (``55.6``), and Java's ``NaN``/``Infinity``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def java_double_text(value: float) -> str:
    """A double as Java's ``Double.toString`` writes it (what Siddhi's text mappers write):
    ``55.6``, ``100.0``, ``1.0E-9``, ``1.2345678E7``, digit for digit as JDK 17's."""
    return java_double_str(value)


def shortest_float32(value: float) -> float:
    """The double with the shortest decimal form that rounds to the same 32-bit float.

    A ``float`` attribute holds a 32-bit value widened to a Python float
    (``55.6`` is ``55.599998474121094``); Java prints it as ``55.6``, and so must we, in JSON
    and in text.
    """
    if value != value or value in (math.inf, -math.inf) or value == 0.0:
        return value
    for digits in range(6, 10):
        candidate = float(f"{value:.{digits}g}")
        if f32(candidate) == value:
            return candidate
    return value


def format_value(value: Any, type_: AttrType, null: str = "null") -> str:
    """A typed value as text (CSV fields, templates of transport options), as Java's ``toString``."""
    if value is None:
        return null
    cls = value.__class__
    if cls is str:
        return value
    if cls is bool:
        return "true" if value else "false"
    if cls is float:
        # (Float.toString of a float attribute, Double.toString of a double)
        return java_float32_str(value) if type_ is AttrType.FLOAT else java_double_str(value)
    if cls is int:
        return str(value)
    if cls is dict or cls is list or cls is tuple:
        return orjson.dumps(value, default=json_default).decode()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def json_default(value: Any) -> Any:
    """orjson fallback for object attributes holding non-JSON Python values."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, (set, frozenset)):
        return list(value)
    return str(value)
