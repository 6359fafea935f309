"""The benchmark's measurement runner (``python -m tests.bench.run``): its profiled run.

Speed is not tested here (benchmarks measure it); only that ``make bench --profile``'s
runner names the functions a workload spends its time in, generated code included.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: object, **env: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "tests.bench.run", *map(str, args)], cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), **env), capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(proc.stdout.splitlines()[-1])


def test_the_profiled_run_lists_the_top_functions_and_the_generated_source() -> None:
    # (on the pure-Python path: where the columnar path runs W1, the generated loop is idle)
    got = _run("profile", "W1", 5000, 500, SROTA_PURE_PYTHON="1")

    assert got["workload"] == "W1" and got["events"] == 5000
    where = [row[0] for row in got["top"]]
    assert any(w.startswith("<srota-generated-") and w.endswith("(_select_chunk)") for w in where), where
    assert any(w.startswith("engine/") for w in where), where  # the project's paths, relative
    for _, calls, own, cumulative in got["top"]:
        assert calls > 0 and 0 <= own <= cumulative + 1e-9
    (source,) = [s for s in got["generated"].values() if "def _select_chunk" in s]
    assert "d[1] >= 100" in source  # W1's filter, compiled


def test_the_profiled_run_measures_the_same_outputs_as_the_timed_one() -> None:
    timed = _run("srota", "W3", 5000, 500)
    profiled = _run("profile", "W3", 5000, 500)

    assert timed["outputs"] > 0 and profiled["outputs"] == timed["outputs"] and profiled["top"]
