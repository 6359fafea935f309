"""Every divergence found against real Siddhi 5.1.33, replayed on Srota from Siddhi's recorded answer."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.differential.harness import compare, run_srota
from tests.differential.recorded import recorded_cases


@pytest.mark.parametrize("path", recorded_cases(), ids=lambda p: p.stem)
def test_recorded_case_gives_siddhis_answer(path: Path) -> None:
    saved = json.loads(path.read_text())
    result = compare(saved["siddhi"], run_srota(saved["case"]), saved["case"].get("unordered", ()))
    assert result.agree, f"{saved['note']}\n" + "\n".join(result.differences)
