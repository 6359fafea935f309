"""The ``unitconversion:`` namespace: Siddhi's siddhi-execution-unitconversion, as built-in extensions.

Every conversion of siddhi-execution-unitconversion 2.x (length, mass, time and volume; the
extension has no temperature conversions) takes one ``int``, ``long``, ``float`` or ``double``
(``tTog`` and ``tTokg`` an ``int`` or a ``double`` only, as their overloads say) and returns a
``double``.  A null input is an error, as in Siddhi ("Input to the UnitConversion function
cannot be null"): the event is dropped and logged (or goes to the fault stream).

Siddhi converts with the JSR 363 reference implementation 0.8 (tec.units:unit-ri), and the
digits are that library's: ``Number.doubleValue()`` of the input (an int or long rounds to the
nearest double, a float widens exactly, -0.0 stays -0.0), then each step of the converter
chain ``getConverterTo`` builds, one double multiplication each.  A ``RationalConverter``
multiplies by ``(double) dividend / divisor`` (centimetres to metres is ``v * 0.01``, not
``v / 100``); a ``MultiplyConverter`` by its factor, whose inverse is ``1.0 / factor`` (metres
to feet is ``v * (1.0 / 0.3048)``).  Two rational steps merge into one where the library
concatenates them directly, and stay apart where a pair of converters holds them: miles to
kilometres is ``v * 1.609344 * 1000.0 * 0.001`` and years to days ``v * 365.2525 * 86400.0 *
(1.0 / 86400)``, each product rounded.  ``_CHAINS`` holds those steps, as unit-ri 0.8 builds
them for each function.  Its ``YEAR`` is 365.2525 days (not 365.25), kept as Siddhi has it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from srota.engine.expression import ArgInfo
from srota.engine.extensions._checks import function
from srota.engine.registry import Param
from srota.engine.types import f32
from srota.grammar.model import AttrType

_NS = "unitconversion"
NUMBERS = (AttrType.INT, AttrType.LONG, AttrType.FLOAT, AttrType.DOUBLE)


def _r(dividend: int, divisor: int) -> float:
    """unit-ri's ``RationalConverter(dividend, divisor)``: it multiplies by ``dividend / divisor``."""
    return dividend / divisor


# The units the extension defines (their ``MultiplyConverter`` factors to the system unit):
# ``METRE.multiply(0.3048)`` (foot), ``KILO(METRE).multiply(1.609344)`` (mile),
# ``KILOGRAM.divide(0.157473)`` (stone: a factor ``1.0 / 0.157473``), and so on; converting
# *to* such a unit multiplies by the inverse, ``1.0 / factor``.
_FT, _IN, _YD, _MI = 1.0 / 0.3048, 1.0 / 0.0254, 1.0 / 0.9144, 1.0 / 1.609344
_OZ, _LB = 1.0 / 0.02834952, 1.0 / 0.4535924
_ST, _LT, _SHORT = 1.0 / (1.0 / 0.157473), 1.0 / (1.0 / 0.000984207), 1.0 / (1.0 / 0.00110231)

# Siddhi's function name -> the factors unit-ri's converter multiplies by, in the order it applies
# them (``Pair(left, right)`` converts with ``right`` first).
_CHAINS: dict[str, tuple[float, ...]] = {
    "cmToft": (_r(1, 100), _FT), "cmToin": (_r(1, 100), _IN), "cmTokm": (_r(1, 100000),),
    "cmTom": (_r(1, 100),), "cmToum": (_r(10000, 1),), "cmTomi": (_r(1, 100), _r(1, 1000), _MI),
    "cmTomm": (_r(10, 1),), "cmTonm": (_r(10**7, 1),), "cmToyd": (_r(1, 100), _YD),
    "kmTocm": (_r(100000, 1),), "kmToft": (_r(1000, 1), _FT), "kmToin": (_r(1000, 1), _IN),
    "kmTom": (_r(1000, 1),), "kmToum": (_r(10**9, 1),), "kmTomi": (_r(1000, 1), _r(1, 1000), _MI),
    "kmTomm": (_r(10**6, 1),), "kmTonm": (_r(10**12, 1),), "kmToyd": (_r(1000, 1), _YD),
    "MmTokm": (_r(1000, 1),), "mTocm": (_r(100, 1),), "mToft": (_FT,), "mTomm": (_r(1000, 1),),
    "mToyd": (_YD,), "miTokm": (1.609344, _r(1000, 1), _r(1, 1000)),
    "gTokg": (_r(1, 1000),), "gToug": (_r(10**6, 1),), "gTomg": (_r(1000, 1),), "kgTog": (_r(1000, 1),),
    "kgToLT": (_LT,), "kgTooz": (_OZ,), "kgTolb": (_LB,), "kgTost": (_ST,), "kgTot": (_r(1, 1000),),
    "kgToST": (_SHORT,), "tTog": (_r(10**6, 1),), "tTokg": (_r(1000, 1),),
    "dToh": (_r(24, 1),), "hTom": (_r(60, 1),), "hTos": (_r(3600, 1),), "mTos": (_r(60, 1),),
    "sTous": (_r(10**6, 1),), "sToms": (_r(1000, 1),), "sTons": (_r(10**9, 1),),
    "yTod": (365.2525, _r(86400, 1), _r(1, 86400)),
    "m3Tol": (_r(1000, 1),), "lTom3": (_r(1, 1000),), "lToml": (_r(1000, 1),), "mlTol": (_r(1, 1000),),
}

# The functions whose parameter is an ``int`` or a ``double`` only (TonneToGram, TonneToKilogram).
_INT_OR_DOUBLE = ("tTog", "tTokg")

# Siddhi's function name -> what it converts.
_CONVERSIONS: dict[str, str] = {
    "cmToft": "centimetres into feet", "cmToin": "centimetres into inches",
    "cmTokm": "centimetres into kilometres", "cmTom": "centimetres into metres",
    "cmToum": "centimetres into micrometres", "cmTomi": "centimetres into miles",
    "cmTomm": "centimetres into millimetres", "cmTonm": "centimetres into nanometres",
    "cmToyd": "centimetres into yards", "kmTocm": "kilometres into centimetres",
    "kmToft": "kilometres into feet", "kmToin": "kilometres into inches",
    "kmTom": "kilometres into metres", "kmToum": "kilometres into micrometres",
    "kmTomi": "kilometres into miles", "kmTomm": "kilometres into millimetres",
    "kmTonm": "kilometres into nanometres", "kmToyd": "kilometres into yards",
    "MmTokm": "megametres into kilometres", "mTocm": "metres into centimetres",
    "mToft": "metres into feet", "mTomm": "metres into millimetres",
    "mToyd": "metres into yards", "miTokm": "miles into kilometres",
    "gTokg": "grams into kilograms", "gToug": "grams into micrograms",
    "gTomg": "grams into milligrams", "kgTog": "kilograms into grams",
    "kgToLT": "kilograms into imperial (long) tons",
    "kgTooz": "kilograms into ounces", "kgTolb": "kilograms into pounds",
    "kgTost": "kilograms into stones", "kgTot": "kilograms into tonnes",
    "kgToST": "kilograms into US (short) tons", "tTog": "tonnes into grams",
    "tTokg": "tonnes into kilograms", "dToh": "days into hours",
    "hTom": "hours into minutes", "hTos": "hours into seconds",
    "mTos": "minutes into seconds", "sTous": "seconds into microseconds",
    "sToms": "seconds into milliseconds", "sTons": "seconds into nanoseconds",
    "yTod": "years into days", "m3Tol": "cubic metres into litres",
    "lTom3": "litres into cubic metres", "lToml": "litres into millilitres",
    "mlTol": "millilitres into litres",
}


class UnitConversionError(ValueError):
    """A unit conversion got a null input (Siddhi's SiddhiAppRuntimeException)."""


def converter(name: str) -> Callable[[Any], float]:
    """Siddhi's function ``name`` on a (non-null) number, as unit-ri computes it.

    ``float()`` is Java's ``Number.doubleValue()`` of an int or a long (the nearest double) and
    keeps a -0.0 (``v + 0.0`` would make it 0.0).
    """
    chain = _CHAINS[name]
    if len(chain) == 1:
        (a,) = chain
        return lambda v: float(v) * a
    if len(chain) == 2:
        a, b = chain
        return lambda v: float(v) * a * b
    a, b, c = chain
    return lambda v: float(v) * a * b * c


def _null() -> Any:
    raise UnitConversionError("Input to the UnitConversion function cannot be null")


def _declare(name: str, what: str) -> None:
    convert = converter(name)
    types = (AttrType.INT, AttrType.DOUBLE) if name in _INT_OR_DOUBLE else NUMBERS

    @function(_NS, name, (Param("p1", types, dynamic=True, doc=f"The value in {what.split()[0]}."),),
              returns=AttrType.DOUBLE, doc=f"Converts {what}; a null input is an error.", pure=True,
              examples=((f"unitconversion:{name}(10)", f"{what.split()[0].capitalize()} 10 in "
                         f"{what.split()[-1]}: {convert(10)!r}."),))
    def _build(infos: list[ArgInfo], ctx: Any) -> Any:
        if infos[0].type is AttrType.FLOAT:
            def unit_conversion_float(value: Any) -> float:
                return _null() if value is None else convert(f32(value))

            return AttrType.DOUBLE, unit_conversion_float

        # One Python call per event: each length of chain written out.
        chain = _CHAINS[name]
        if len(chain) == 1:
            (a,) = chain

            def unit_conversion(value: Any) -> float:
                return _null() if value is None else float(value) * a
        elif len(chain) == 2:
            a, b = chain

            def unit_conversion(value: Any) -> float:
                return _null() if value is None else float(value) * a * b
        else:
            a, b, c = chain

            def unit_conversion(value: Any) -> float:
                return _null() if value is None else float(value) * a * b * c
        return AttrType.DOUBLE, unit_conversion


for _name, _what in _CONVERSIONS.items():
    _declare(_name, _what)
