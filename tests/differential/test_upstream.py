"""Siddhi's own test methods (tests/differential/upstream.py), replayed on Srota from Siddhi's recorded answers."""
from __future__ import annotations

import json
from typing import Any

import pytest

from tests.differential.harness import compare, run_srota
from tests.differential.upstream import upstream_files


def _entries() -> list[Any]:
    return [pytest.param(entry, id=entry["id"]) for path in upstream_files() for entry in json.loads(path.read_text())]


@pytest.mark.parametrize("entry", _entries())
def test_upstream_case_gives_siddhis_answer(entry: dict[str, Any]) -> None:
    result = compare(entry["siddhi"], run_srota(entry["case"]))
    agree = result.errors and result.rows and result.chunks and (result.timestamps or not entry["timestamps"])
    assert agree, f"{entry['source']}\n" + "\n".join(result.differences)
