"""The ``unitconversion:`` namespace (siddhi-execution-unitconversion)."""
from __future__ import annotations

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
