"""Every conformance app that Siddhi accepts must parse; Siddhi's syntax errors mostly fail."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from srota.grammar import SiddhiParserError, parse
from srota.grammar.model import SiddhiApp

CASES = Path(__file__).parents[2] / ".." / "shared" / "conformance" / "cases"

# Apps Siddhi rejects with SiddhiParserException for reasons outside the grammar (the app
# text itself is valid SiddhiQL): here a join with an undefined aggregation.
KNOWN_VALID_SYNTAX = {"Aggregation1TestCase.incrementalStreamProcessorTest19"}


def _cases() -> list[dict]:
    if not CASES.is_dir():
        return []
    out: list[dict] = []
    for path in sorted(CASES.glob("*.json")):
        out.extend(json.loads(path.read_text()))
    return out


CASES_ALL = _cases()
pytestmark = pytest.mark.skipif(not CASES_ALL, reason="conformance cases not found")


@pytest.mark.parametrize("case", [c for c in CASES_ALL if c["error"] is None], ids=lambda c: c["id"])
def test_valid_app_parses(case: dict) -> None:
    assert isinstance(parse(case["app"]), SiddhiApp)


@pytest.mark.parametrize("case", [c for c in CASES_ALL if c["error"] == "SiddhiParserException"],
                         ids=lambda c: c["id"])
def test_siddhi_syntax_errors_fail(case: dict) -> None:
    if case["id"] in KNOWN_VALID_SYNTAX:
        parse(case["app"])
        return
    with pytest.raises(SiddhiParserError):
        parse(case["app"])


@pytest.mark.parametrize("case", [c for c in CASES_ALL if c["error"] not in (None, "SiddhiParserException")],
                         ids=lambda c: c["id"])
def test_other_errors_never_crash_the_parser(case: dict) -> None:
    try:
        parse(case["app"])
    except SiddhiParserError:
        pass
