"""The benchmark suite's driver (``python -m tests.bench``): how it takes its runs.

No speed is measured here: a stand-in for the measuring subprocess records the order of
the runs and gives each a made-up duration.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from tests.bench import __main__ as bench
from tests.bench.harness import Result


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float]]:
    """Each run as ``(system, seconds)``: a system's k-th run takes ``10 - k`` seconds, except
    the chunked Srota's second, which catches a spell of load (99 s); ``pathway`` fails."""
    done: list[tuple[str, float]] = []

    def fake_run(python: Path | str, module: str, *args: Any, timeout: int = 1800) -> list[dict[str, Any]]:
        assert module == "tests.bench.run"
        system, workload, n = args[0], args[1], args[2]
        if system == "pathway":
            raise RuntimeError("pathway failed: no license")
        k = sum(1 for s, _ in done if s == system)
        seconds = 99.0 if (system, k) == ("srota", 1) else 10.0 - k
        done.append((system, seconds))
        return [asdict(Result(workload, system, n, seconds, 1.0, 1))]

    monkeypatch.setattr(bench, "_run", fake_run)
    return done


def test_every_system_runs_once_per_round_and_the_fastest_run_counts(runs: list[tuple[str, float]]) -> None:
    got = bench.run_workload("W3", 1000, 100, peers=True, repeat=3)

    systems = ["loop", "srota", "srota-1", "srota-1a", "bytewax", "quixstreams"]
    assert [s for s, _ in runs] == systems * 3  # interleaved, not each system's runs back to back
    by = {r.system: r for r in got}
    assert [r.system for r in got] == [*systems, "pathway"]
    assert by["loop"].seconds == 8.0 and by["srota"].seconds == 8.0  # the loaded run is not the one kept
    assert by["pathway"].seconds == 0.0 and by["pathway"].note.startswith("failed: ")


def test_a_failing_engine_run_fails_the_benchmark(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_run(python: Path | str, module: str, *args: Any, timeout: int = 1800) -> list[dict[str, Any]]:
        raise RuntimeError(f"{args[0]} failed")

    monkeypatch.setattr(bench, "_run", fake_run)
    with pytest.raises(RuntimeError, match="loop failed"):
        bench.run_workload("W1", 1000, 100, peers=False, repeat=2)


def test_the_x_workloads_run_without_peers(runs: list[tuple[str, float]]) -> None:
    got = bench.run_workload("X1", 1000, 100, peers=True, repeat=1)

    assert [r.system for r in got] == ["loop", "srota", "srota-1", "srota-1a"]
