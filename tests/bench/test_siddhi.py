"""Siddhi 5.1.33 on the JVM as a benchmark peer (:mod:`tests.bench.siddhi`, ``python -m tests.bench``).

No speed is measured here: that the Java side gives Srota's outputs (count and digest) on a
few thousand events, chunked and one by one (skipped where Java or the jars are missing), and
how the driver runs, checks and tabulates the Siddhi rows (with a stand-in for the runs).
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from tests.bench import __main__ as bench
from tests.bench.harness import Result
from tests.bench.run import run_loop, run_srota
from tests.bench.siddhi import run_siddhi, unavailable_reason

N = 5000
CHUNK = 1000

needs_siddhi = pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))


@needs_siddhi
@pytest.mark.parametrize(("workload", "chunk"), [("W2", CHUNK), ("W3", CHUNK), ("W4", 1)])
def test_siddhi_gives_srotas_outputs(workload: str, chunk: int) -> None:
    siddhi = run_siddhi(workload, N, chunk, warmup_rounds=0, timeout=120)
    srota = run_srota(workload, N, chunk)
    loop = run_loop(workload, N, CHUNK)

    assert siddhi.system == ("siddhi" if chunk > 1 else "siddhi-1") and siddhi.events == N
    assert siddhi.outputs > 0 and (siddhi.outputs, siddhi.digest) == (srota.outputs, srota.digest)
    # chunks of 1000 change W3's rows in Siddhi as in Srota (a partition's per-chunk runs)
    assert siddhi.digest == (loop.check_digest if chunk > 1 else loop.digest)
    assert siddhi.seconds > 0 and siddhi.process_mb > 0 and "JVM" in siddhi.note


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The systems run, in order; ``siddhi-1`` fails; every run gives digest ``d`` and 1 output."""
    done: list[str] = []

    def fake_run(python: Path | str, module: str, *args: Any, timeout: int = 1800) -> list[dict[str, Any]]:
        system, workload, n = args[0], args[1], args[2]
        done.append(system)
        if system == "siddhi-1":
            raise RuntimeError("SiddhiBench W1 failed (status 1): OutOfMemoryError")
        return [asdict(Result(workload, system, n, 1.0, 1.0, 1, "d", "d"))]

    monkeypatch.setattr(bench, "_run", fake_run)
    return done


def test_siddhi_runs_in_the_rounds_and_a_failure_is_noted(runs: list[str]) -> None:
    got = bench.run_workload("W1", 1000, 100, peers=False, repeat=2, siddhi=True)

    systems = ["loop", "srota", "srota-1", "srota-1a", "siddhi", "siddhi-1"]
    assert runs == [*systems, *systems[:-1]]  # a failed one is not run again
    by = {r.system: r for r in got}
    assert by["siddhi"].seconds == 1.0
    assert by["siddhi-1"].seconds == 0.0 and "OutOfMemoryError" in by["siddhi-1"].note


def test_siddhi_is_not_run_without_the_flag_nor_on_other_workloads(runs: list[str]) -> None:
    bench.run_workload("W1", 1000, 100, peers=False, repeat=1)
    bench.run_workload("X1", 1000, 100, peers=False, repeat=1, siddhi=True)

    assert "siddhi" not in runs and "siddhi-1" not in runs


def _results(siddhi_digest: str) -> list[Result]:
    return [Result("W3", "loop", 1000, 1.0, 1.0, 1000, "one", "chunked", process_mb=50),
            Result("W3", "srota", 1000, 2.0, 1.0, 990, "chunked", process_mb=60),
            Result("W3", "srota-1", 1000, 4.0, 1.0, 1000, "one", process_mb=60),
            Result("W3", "srota-1a", 1000, 5.0, 1.0, 1000, "one", process_mb=60),
            Result("W3", "siddhi", 1000, 4.0, 1.0, 990, siddhi_digest, process_mb=400),
            Result("W3", "siddhi-1", 1000, 2.0, 1.0, 1000, "one", process_mb=400)]


def test_a_siddhi_run_is_checked_against_srotas() -> None:
    good, bad = _results("chunked"), _results("other")
    bench.check(good)
    bench.check(bad)

    assert good[4].note == "outputs match Srota's (chunked)" and good[5].note == "outputs match Srota's (one)"
    assert "OUTPUTS DIFFER from the loop's" in bad[4].note
    assert "OUTPUTS DIFFER from Srota's (srota: 990 outputs, digest chunked; siddhi: 990, other)" in bad[4].note


def test_the_siddhi_table_gives_each_rate_against_the_loop_and_siddhi() -> None:
    results = _results("chunked")
    table = bench.siddhi_table(results, {"W3": results[0]})

    rows = table.splitlines()[2:]
    assert rows[0] == "| W3 | chunks | 500 | 0.50 | 2.00 | 60 | 250 | 0.25 | 400 | 990 / 990: match |"
    assert rows[1] == "| W3 | one by one | 250 | 0.25 | 0.50 | 60 | 500 | 0.50 | 400 | 1,000 / 1,000: match |"
    assert rows[2].startswith("| W3 | one by one, `@Async` | 200 | 0.20 | 0.40 |")
    assert bench.siddhi_table(results[:4], {"W3": results[0]}) == ""  # no Siddhi rows, no table
