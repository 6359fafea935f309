"""The ``unitconversion:`` namespace: Siddhi's siddhi-execution-unitconversion, as built-in extensions.

Every conversion of siddhi-execution-unitconversion 2.x (length, mass, time and volume; the
extension has no temperature conversions) takes one ``int``, ``long``, ``float`` or ``double``
and returns a ``double``.  A null input is an error, as in Siddhi ("Input to the UnitConversion
function cannot be null"): the event is dropped and logged (or goes to the fault stream).

Siddhi converts with the JSR 363 reference implementation, whose converters apply the exact
(power of ten or integer) part of a conversion first and the decimal factors after; the
conversions here do the same, so results agree with Siddhi's to the last bit in the cases its
tests pin.  Its ``YEAR`` is 365.2525 days (not 365.25), kept as Siddhi has it.  A ``float``
input is widened from its 32-bit value, as Java's ``Float.doubleValue()`` does.
"""
from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from srota.engine.expression import ArgInfo
from srota.engine.extensions._checks import function
from srota.engine.registry import Param
from srota.engine.types import f32
from srota.grammar.model import AttrType

_NS = "unitconversion"
NUMBERS = (AttrType.INT, AttrType.LONG, AttrType.FLOAT, AttrType.DOUBLE)

# Each unit: (exact factor to the SI unit, decimal factor to the SI unit).
_U: dict[str, tuple[Fraction, float]] = {
    # length (metre)
    "nm": (Fraction(1, 10**9), 1.0), "um": (Fraction(1, 10**6), 1.0), "mm": (Fraction(1, 1000), 1.0),
    "cm": (Fraction(1, 100), 1.0), "m": (Fraction(1), 1.0), "km": (Fraction(1000), 1.0),
    "Mm": (Fraction(10**6), 1.0), "in": (Fraction(1), 2.54e-02), "ft": (Fraction(1), 3.048e-01),
    "yd": (Fraction(1), 9.144e-01), "mi": (Fraction(1000), 1.609344),
    # mass (kilogram; the gram is the JSR 363 system unit's 1/1000)
    "ug": (Fraction(1, 10**9), 1.0), "mg": (Fraction(1, 10**6), 1.0), "g": (Fraction(1, 1000), 1.0),
    "kg": (Fraction(1), 1.0), "t": (Fraction(1000), 1.0), "oz": (Fraction(1), 2.834952e-02),
    "lb": (Fraction(1), 4.535924e-01), "st": (Fraction(1), 1 / 0.157473),
    "LT": (Fraction(1), 1 / 0.000984207), "ST": (Fraction(1), 1 / 0.00110231),
    # time (second)
    "ns": (Fraction(1, 10**9), 1.0), "us": (Fraction(1, 10**6), 1.0), "ms": (Fraction(1, 1000), 1.0),
    "s": (Fraction(1), 1.0), "min": (Fraction(60), 1.0), "h": (Fraction(3600), 1.0),
    "d": (Fraction(86400), 1.0), "y": (Fraction(86400), 365.2525),
    # volume (cubic metre)
    "ml": (Fraction(1, 10**6), 1.0), "l": (Fraction(1, 1000), 1.0), "m3": (Fraction(1), 1.0),
}

# Siddhi's function name -> (from unit, to unit, what it measures).
_CONVERSIONS: dict[str, tuple[str, str, str]] = {
    "cmToft": ("cm", "ft", "centimetres into feet"), "cmToin": ("cm", "in", "centimetres into inches"),
    "cmTokm": ("cm", "km", "centimetres into kilometres"), "cmTom": ("cm", "m", "centimetres into metres"),
    "cmToum": ("cm", "um", "centimetres into micrometres"), "cmTomi": ("cm", "mi", "centimetres into miles"),
    "cmTomm": ("cm", "mm", "centimetres into millimetres"), "cmTonm": ("cm", "nm", "centimetres into nanometres"),
    "cmToyd": ("cm", "yd", "centimetres into yards"), "kmTocm": ("km", "cm", "kilometres into centimetres"),
    "kmToft": ("km", "ft", "kilometres into feet"), "kmToin": ("km", "in", "kilometres into inches"),
    "kmTom": ("km", "m", "kilometres into metres"), "kmToum": ("km", "um", "kilometres into micrometres"),
    "kmTomi": ("km", "mi", "kilometres into miles"), "kmTomm": ("km", "mm", "kilometres into millimetres"),
    "kmTonm": ("km", "nm", "kilometres into nanometres"), "kmToyd": ("km", "yd", "kilometres into yards"),
    "MmTokm": ("Mm", "km", "megametres into kilometres"), "mTocm": ("m", "cm", "metres into centimetres"),
    "mToft": ("m", "ft", "metres into feet"), "mTomm": ("m", "mm", "metres into millimetres"),
    "mToyd": ("m", "yd", "metres into yards"), "miTokm": ("mi", "km", "miles into kilometres"),
    "gTokg": ("g", "kg", "grams into kilograms"), "gToug": ("g", "ug", "grams into micrograms"),
    "gTomg": ("g", "mg", "grams into milligrams"), "kgTog": ("kg", "g", "kilograms into grams"),
    "kgToLT": ("kg", "LT", "kilograms into imperial (long) tons"),
    "kgTooz": ("kg", "oz", "kilograms into ounces"), "kgTolb": ("kg", "lb", "kilograms into pounds"),
    "kgTost": ("kg", "st", "kilograms into stones"), "kgTot": ("kg", "t", "kilograms into tonnes"),
    "kgToST": ("kg", "ST", "kilograms into US (short) tons"), "tTog": ("t", "g", "tonnes into grams"),
    "tTokg": ("t", "kg", "tonnes into kilograms"), "dToh": ("d", "h", "days into hours"),
    "hTom": ("h", "min", "hours into minutes"), "hTos": ("h", "s", "hours into seconds"),
    "mTos": ("min", "s", "minutes into seconds"), "sTous": ("s", "us", "seconds into microseconds"),
    "sToms": ("s", "ms", "seconds into milliseconds"), "sTons": ("s", "ns", "seconds into nanoseconds"),
    "yTod": ("y", "d", "years into days"), "m3Tol": ("m3", "l", "cubic metres into litres"),
    "lTom3": ("l", "m3", "litres into cubic metres"), "lToml": ("l", "ml", "litres into millilitres"),
    "mlTol": ("ml", "l", "millilitres into litres"),
}


class UnitConversionError(ValueError):
    """A unit conversion got a null input (Siddhi's SiddhiAppRuntimeException)."""


def converter(source: str, target: str) -> Callable[[Any], float]:
    """The conversion ``source -> target`` of a (non-null) number, as Siddhi computes it.

    ``+ 0.0`` widens an int or long to double first, as Java's ``Number.doubleValue()`` does.
    """
    exact = _U[source][0] / _U[target][0]
    decimal = _U[source][1] * (1.0 / _U[target][1])
    num, den = exact.numerator, exact.denominator
    if decimal == 1.0:
        if den == 1:
            return lambda v: (v + 0.0) * num
        if num == 1:
            return lambda v: (v + 0.0) / den
        return lambda v: (v + 0.0) * num / den
    return lambda v: (v + 0.0) * num / den * decimal


def _null() -> Any:
    raise UnitConversionError("Input to the UnitConversion function cannot be null")


def _declare(name: str, source: str, target: str, what: str) -> None:
    convert = converter(source, target)

    @function(_NS, name, (Param("p1", NUMBERS, dynamic=True, doc=f"The value in {what.split()[0]}."),),
              returns=AttrType.DOUBLE, doc=f"Converts {what}; a null input is an error.", pure=True,
              examples=((f"unitconversion:{name}(10)", f"{what.split()[0].capitalize()} 10 in "
                         f"{what.split()[-1]}: {converter(source, target)(10)!r}."),))
    def _build(infos: list[ArgInfo], ctx: Any) -> Any:
        if infos[0].type is AttrType.FLOAT:
            def unit_conversion_float(value: Any) -> float:
                return _null() if value is None else convert(f32(value))

            return AttrType.DOUBLE, unit_conversion_float
        # One Python call per event: the arithmetic of each shape of conversion written out.
        exact = _U[source][0] / _U[target][0]
        decimal = _U[source][1] * (1.0 / _U[target][1])
        num, den = exact.numerator, exact.denominator
        if decimal != 1.0:
            def unit_conversion(value: Any) -> float:
                return _null() if value is None else (value + 0.0) * num / den * decimal
        elif den == 1:
            def unit_conversion(value: Any) -> float:
                return _null() if value is None else (value + 0.0) * num
        elif num == 1:
            def unit_conversion(value: Any) -> float:
                return _null() if value is None else (value + 0.0) / den
        else:
            def unit_conversion(value: Any) -> float:
                return _null() if value is None else (value + 0.0) * num / den
        return AttrType.DOUBLE, unit_conversion


for _name, (_source, _target, _what) in _CONVERSIONS.items():
    _declare(_name, _source, _target, _what)
