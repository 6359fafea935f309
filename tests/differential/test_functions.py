"""The function families' cases (tests/differential/functions*.py), without a JVM."""
from __future__ import annotations

import json
import random

import pytest

from tests.differential.functions import function_case
from tests.differential.generator import FUNCTION_FAMILIES, generate
from tests.differential.harness import run_srota


def test_each_expression_gets_its_own_query_and_output_stream() -> None:
    case = function_case(random.Random(1), [("s", "string")], ["str:upper(s)", "str:lower(s)"], [["a"], ["B"]])
    assert case["streams"] == ["O0", "O1"]
    assert "from S0\nselect str:upper(s) as r\ninsert into O0;" in case["app"]
    assert "from S1\nselect str:lower(s) as r\ninsert into O1;" in case["app"]
    # every row to each query's stream, alone unless chunks are asked for
    assert [(step["stream"], len(step["events"])) for step in case["steps"]] == [("S0", 1), ("S1", 1)] * 2
    answer = run_srota(case)
    rows = sorted((o["cb"], e[1]) for o in answer["outputs"] for e in o["events"])
    assert rows == [("stream:O0", ["A"]), ("stream:O0", ["B"]), ("stream:O1", ["a"]), ("stream:O1", ["b"])]


@pytest.mark.parametrize("family", FUNCTION_FAMILIES)
def test_generated_function_cases_run_on_srota(family: str) -> None:
    for index in range(15):
        case = generate(11, index, family)
        # the same seed and index, the same case (compared as text: a NaN is not equal to itself)
        assert json.dumps(case) == json.dumps(generate(11, index, family))
        answer = run_srota(case)
        assert answer["error"] is None or answer["created"] is False, answer.get("traceback", answer["error"])
