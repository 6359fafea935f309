"""engine/javanumbers.py: Java's parsers of numbers in text."""
from __future__ import annotations

import math

import pytest
from srota.engine.javanumbers import java_digit, parse_double, parse_float, parse_integer

INT = (-2**31, 2**31 - 1)


def test_java_digit_is_character_digit() -> None:
    assert [java_digit(c, 16) for c in "7aF\uff21\u0661"] == [7, 10, 15, 10, 1]  # fullwidth A, Arabic-Indic 1
    assert java_digit("g", 16) == -1 and java_digit("\u212a", 36) == -1  # the Kelvin sign is no letter
    assert java_digit("\U0001d7ce", 10) == -1  # a digit past U+FFFF is two UTF-16 units


@pytest.mark.parametrize("text, radix, value", [
    ("42", 10, 42), ("+7", 10, 7), ("-2147483648", 10, -2**31), ("\u0661\u0662", 10, 12), ("ff", 16, 255),
    ("-ZZ", 36, -1295),
])
def test_parse_integer(text: str, radix: int, value: int) -> None:
    assert parse_integer(text, *INT, radix) == value


@pytest.mark.parametrize("text", ["", "+", " 1", "1_000", "2147483648", "1.0", "0x10", "\U0001d7cf"])
def test_parse_integer_refuses_what_java_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="For input string"):
        parse_integer(text, *INT)


@pytest.mark.parametrize("text, value", [
    (" 1.5 ", 1.5), ("1d", 1.0), ("2F", 2.0), ("0x1p3", 8.0), ("-0x1.8p1", -3.0), ("\t.5e1\n", 5.0),
    ("0x1p2000", math.inf), ("-Infinity", -math.inf), ("1e400", math.inf), ("-0", -0.0),
])
def test_parse_double(text: str, value: float) -> None:
    got = parse_double(text)
    assert got == value and math.copysign(1, got) == math.copysign(1, value)


@pytest.mark.parametrize("text", ["inf", "1_0", "0x10", "1e", "\u00a01", "١"])
def test_parse_double_refuses_what_java_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        parse_double(text)


def test_parse_float_rounds_once() -> None:
    # the double of this text lies halfway between two floats: through it, 1.0
    assert parse_float("1.00000005960464477540") == 1.0000001192092896
    assert parse_float("1.0000000596046447753906250") == 1.0  # a true tie: to even
    assert math.isnan(parse_float("NaN")) and parse_float("3.5e38") == math.inf
    assert parse_float("3.4028235677973366e38") == 3.4028234663852886e38  # (Java: Float.MAX_VALUE)
