"""The scale-out benchmark's choice among a worker count's runs (no broker, no timing)."""
from __future__ import annotations

from tests.bench.scaleout import _fastest, summary


def _row(workers: int, rate: int) -> dict:
    return {"system": f"workers-{workers}", "rate": rate, "end_to_end_rate": rate // 2}


def test_the_fastest_run_of_each_count_is_reported_with_every_runs_rate() -> None:
    runs = [_row(2, 300_000), _row(2, 390_000), _row(2, 350_000)]

    got = _fastest(runs)

    assert got["rate"] == 390_000 and got["rates_of_runs"] == [300_000, 390_000, 350_000]
    assert "rates_of_runs" not in runs[1]  # the runs themselves are left as measured


def test_the_summary_compares_the_reported_runs() -> None:
    by = {r["system"]: r for r in (_fastest([_row(1, 200_000), _row(1, 190_000)]),
                                   _fastest([_row(2, 340_000), _row(2, 380_000)]),
                                   _fastest([_row(4, 370_000)]))}

    lines = summary(by)

    assert lines[0] == "workers: 2 / 1 = 1.90 (target 1.8): met"
    assert lines[1].startswith("workers: 4 / 1 = 1.85 on ")
