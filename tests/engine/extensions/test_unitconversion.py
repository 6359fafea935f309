"""The ``unitconversion:`` namespace (siddhi-execution-unitconversion)."""
from __future__ import annotations

import math

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager
from srota.engine.extensions.unitconversion import _CONVERSIONS
from srota.engine.registry import Kind, registry

STREAM = "define stream S (i int, l long, f float, d double, s string);\n"


@pytest.mark.parametrize("call, row, expected", [
    ("cmToft(i)", [2147483647, 0, 0.0, 0.0, ""], 70455500.22965878),   # Siddhi's own test value
    ("kmToft(d)", [0, 0, 0.0, 1.0, ""], 3280.839895013123),
    ("cmTomi(l)", [0, 2147483647, 0.0, 0.0, ""], 13343.844740465678),
    ("yTod(d)", [0, 0, 0.0, 1.0, ""], 365.2525),                         # Siddhi's year
    ("kgToLT(i)", [2147483647, 0, 0.0, 0.0, ""], 2113568.437762929),
    ("kgTooz(d)", [0, 0, 0.0, 1.0, ""], 35.27396583786957),
    ("mlTol(d)", [0, 0, 0.0, 1.0, ""], 0.001),
    ("hTos(l)", [0, 2147483647, 0.0, 0.0, ""], 7730941129200.0),
    ("mTocm(f)", [0, 0, 1.1, 0.0, ""], 110.00000238418579),              # the float's 32-bit value
    # two names that differ in case alone (stones, US tons: KilogramToStoneTestCase); the
    # registry folded case, so the later one answered for both
    ("kgTost(d)", [0, 0, 0.0, 1.0, ""], 0.157473),
    ("kgToST(d)", [0, 0, 0.0, 1.0, ""], 0.00110231),
])
def test_conversions(select_all, call, row, expected):
    got = select_all(f"unitconversion:{call} as v", row)
    assert got == [[pytest.approx(expected, rel=1e-15)]]
    assert isinstance(got[0][0], float)


def test_every_siddhi_conversion_is_registered():
    assert len(_CONVERSIONS) == 48
    for name in _CONVERSIONS:
        ext = registry.get(Kind.FUNCTION, "unitconversion", name)
        assert ext is not None and ext.params[0].dynamic and ext.meta["returns"] == "double"


def test_null_input_is_an_error_and_the_event_is_dropped(select_all, caplog):
    assert select_all("unitconversion:kmTom(d) as v", [0, 0, 0.0, None, ""]) == []
    assert "cannot be null" in caplog.text


@pytest.mark.parametrize("call", ["kmTom()", "kmTom(s)", "kmTom(d, d)"])
def test_creation_errors_carry_the_position(call):
    with pytest.raises(SiddhiAppCreationError) as info:
        SiddhiManager().create_siddhi_app_runtime(STREAM + f"from S\nselect unitconversion:{call} as v insert into Out;")
    assert info.value.line == 3 and info.value.column == 8


# Real Siddhi 5.1.33 with siddhi-execution-unitconversion and unit-ri 0.8, to the last digit:
# each rational step multiplies by dividend / divisor (cm to m is v * 0.01, not v / 100), and
# steps a pair of converters holds stay apart (miles: v * 1.609344 * 1000.0 * 0.001).
@pytest.mark.parametrize("call, row, expected", [
    ("cmTom(i)", [-706, 0, 0.0, 0.0, ""], -7.0600000000000005),
    ("cmTokm(i)", [2147483647, 0, 0.0, 0.0, ""], 21474.836470000002),
    ("cmToft(i)", [665128677, 0, 0.0, 0.0, ""], 21821806.988188975),
    ("cmToin(i)", [-1176860712, 0, 0.0, 0.0, ""], -463330988.976378),
    ("cmTomi(i)", [-1005958464, 0, 0.0, 0.0, ""], -6250.736101169173),
    ("cmToyd(i)", [-879, 0, 0.0, 0.0, ""], -9.612860892388452),
    ("kmTomi(l)", [0, 99777814259924584, 0.0, 0.0, ""], 6.199905940552461e+16),
    ("miTokm(i)", [-599, 0, 0.0, 0.0, ""], -963.9970560000002),
    ("gTokg(i)", [-940, 0, 0.0, 0.0, ""], -0.9400000000000001),
    ("kgTot(i)", [955, 0, 0.0, 0.0, ""], 0.9550000000000001),
    ("lTom3(i)", [946, 0, 0.0, 0.0, ""], 0.9460000000000001),
    ("mlTol(i)", [568, 0, 0.0, 0.0, ""], 0.5680000000000001),
    ("yTod(i)", [2031830462, 0, 0.0, 0.0, ""], 742131155821.6549),
    ("yTod(d)", [0, 0, 0.0, 859.803, ""], 314045.19525749993),
])
def test_conversions_to_the_last_digit_as_unit_ri(select_all, call, row, expected):
    assert select_all(f"unitconversion:{call} as v", row) == [[expected]]


@pytest.mark.parametrize("call", ["kmTom(d)", "yTod(d)", "cmTom(d)", "gTomg(f)", "kgToLT(d)"])
def test_minus_zero_stays_minus_zero(select_all, call):
    (got,), = select_all(f"unitconversion:{call} as v", [0, 0, -0.0, -0.0, ""])
    assert got == 0.0 and math.copysign(1.0, got) == -1.0


@pytest.mark.parametrize("call", ["tTog(l)", "tTog(f)", "tTokg(l)", "tTokg(f)"])
def test_tonnes_take_an_int_or_a_double_only(call):
    with pytest.raises(SiddhiAppCreationError, match="no parameter overload"):
        SiddhiManager().create_siddhi_app_runtime(STREAM + f"from S select unitconversion:{call} as v insert into Out;")


@pytest.mark.parametrize("call, row, expected", [
    ("tTog(i)", [3, 0, 0.0, 0.0, ""], 3000000.0), ("tTokg(d)", [0, 0, 0.0, 3.5, ""], 3500.0),
])
def test_tonnes_of_an_int_or_a_double(select_all, call, row, expected):
    assert select_all(f"unitconversion:{call} as v", row) == [[expected]]


@pytest.mark.parametrize("call", ["kmTomi(d)", "miTokm(d)"])
def test_a_step_may_overflow_where_the_whole_ratio_would_not(select_all, call):
    # kmTomi is v * 1000.0 * 0.001 * (1 / 1.609344) and miTokm v * 1.609344 * 1000.0 * 0.001:
    # 1e308 * 1000.0 is already Infinity in Siddhi
    assert select_all(f"unitconversion:{call} as v", [0, 0, 0.0, 1e308, ""]) == [[math.inf]]
