"""Java's parsers of numbers in text, which Siddhi and its extensions call on strings.

``Character.digit``, ``Integer.parseInt`` / ``Long.parseLong`` (any radix), ``Double.parseDouble``
and ``Float.parseFloat``.  Python's ``int`` and ``float`` read other texts: ``int`` takes spaces
and underscores, ``float`` takes ``inf`` and ``1_0`` and refuses ``1d`` and ``0x1p3``, and a
float made from a double rounds twice.  Each parser raises ValueError with the message of
Java's ``NumberFormatException``; callers turn it into their own error or a null.
"""
from __future__ import annotations

import math
import re
import struct
import unicodedata
from fractions import Fraction

from srota.engine.types import f32

#: what Java's ``String.trim()`` removes: every character up to U+0020
JAVA_SPACE = "".join(chr(c) for c in range(33))

# Double.parseDouble: NaN, Infinity, a decimal (with an optional exponent) or a hexadecimal
# (``0x1.8p1``, its binary exponent required), the last two with an optional f/F/d/D suffix;
# ASCII digits only
_FLOATING = re.compile(r"[+-]?(?:NaN|Infinity|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                       r"|0[xX](?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)")
_ASCII_INTEGER = re.compile(r"[+-]?[0-9]+")
_F32_OVERFLOW = 3.4028235677973366e38  # Float.MAX_VALUE + half an ulp: the least value a float rounds to infinity
_F32, _U32 = struct.Struct("<f"), struct.Struct("<I")


def java_digit(c: str, radix: int) -> int:
    """``Character.digit(c, radix)`` of one UTF-16 unit: a Unicode decimal digit's value, 10-35
    for a Latin letter, ASCII or fullwidth (not the Kelvin sign); -1 for anything else or a
    value not below ``radix`` (a character past U+FFFF is two units, neither a digit)."""
    o = ord(c)
    if 0x41 <= o <= 0x5A or 0x61 <= o <= 0x7A:
        value = (o | 0x20) - 0x61 + 10
    elif 0xFF21 <= o <= 0xFF3A or 0xFF41 <= o <= 0xFF5A:
        value = (o - 0xFF21 if o <= 0xFF3A else o - 0xFF41) + 10
    elif o <= 0xFFFF:
        value = unicodedata.decimal(c, -1)
    else:
        value = -1
    return value if value < radix else -1


def parse_integer(text: str, low: float, high: float, radix: int = 10) -> int:
    """``Integer.parseInt`` (``low``, ``high`` an int's range) or ``Long.parseLong`` (a long's):
    a sign and at least one digit of ``radix`` (:func:`java_digit`), nothing else, in range."""
    if radix == 10 and _ASCII_INTEGER.fullmatch(text):  # (the common text, without a loop)
        value = int(text)
        if low <= value <= high:
            return value
        raise ValueError(f'For input string: "{text}"')
    body = text[1:] if text[:1] in "+-" else text
    value = 0
    for c in body:
        digit = java_digit(c, radix) if not ("0" <= c <= "9") else ord(c) - 48
        if not 0 <= digit < radix:
            value = -1
            break
        value = value * radix + digit
    if body and value >= 0:
        value = -value if text[0] == "-" else value
        if low <= value <= high:
            return value
    raise ValueError(f'For input string: "{text}"' + (f" under radix {radix}" if radix != 10 else ""))


def _floating_text(text: str) -> str:
    """``text`` trimmed and checked against Java's floating-point syntax, without its suffix."""
    s = text.strip(JAVA_SPACE)
    if not _FLOATING.fullmatch(s):
        raise ValueError(f'For input string: "{text}"' if s else "empty String")
    return s[:-1] if s[-1] in "fFdD" else s


def _hex_parts(s: str) -> tuple[bool, int, int]:
    """A hexadecimal floating-point text as (negative, mantissa, binary exponent): its exact value."""
    negative = s[0] == "-"
    digits, _, exponent = s.lstrip("+-")[2:].lower().partition("p")
    whole, _, fraction = digits.partition(".")
    return negative, int((whole + fraction) or "0", 16), int(exponent) - 4 * len(fraction)


def _double(s: str) -> float:
    if "x" in s or "X" in s:
        negative, mantissa, exponent = _hex_parts(s)
        try:
            value = float(Fraction(mantissa) * Fraction(2) ** exponent) if mantissa else 0.0
        except OverflowError:
            value = math.inf
        return -value if negative else value
    return float(s)  # (Python reads NaN, Infinity and decimals as Java does, correctly rounded)


def parse_double(text: str) -> float:
    """``Double.parseDouble``: ``text`` trimmed (characters up to U+0020), Java's syntax only."""
    return _double(_floating_text(text))


def _exact(s: str) -> Fraction:
    """The exact value of a finite floating-point text (its suffix removed)."""
    if "x" in s or "X" in s:
        negative, mantissa, exponent = _hex_parts(s)
        value = Fraction(mantissa) * Fraction(2) ** exponent
        return -value if negative else value
    return Fraction(s)


def _f32_step(value: float, up: bool) -> float:
    """The next 32-bit float after the non-negative 32-bit ``value``, up or down."""
    bits = _U32.unpack(_F32.pack(value))[0]
    return float(_F32.unpack(_U32.pack(bits + (1 if up else -1)))[0])


def parse_float(text: str) -> float:
    """``Float.parseFloat``: the text rounded once, to the nearest 32-bit float (not through a
    double, whose rounding can land on the midpoint of two floats and then round the wrong way:
    ``'1.00000005960464477540'`` is a float above 1.0)."""
    s = _floating_text(text)
    d = _double(s)
    result = f32(d)
    if result == d or d != d or d in (math.inf, -math.inf):
        return result
    a = abs(d)
    below = f32(a)
    if below > a:
        below = _f32_step(below, up=False)
    above = _f32_step(below, up=True)
    midpoint = _F32_OVERFLOW if above == math.inf else (below + above) / 2
    if a != midpoint:  # the double is no tie: it rounds as the text does
        return result
    exact = abs(_exact(s))
    if exact == Fraction(midpoint):
        return result  # a true tie: to even, as f32 rounds it
    return math.copysign(above if exact > Fraction(midpoint) else below, d)
