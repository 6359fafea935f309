"""Timing and memory measurement shared by the benchmarks.

Each measurement runs in a process of its own (see :mod:`tests.bench.run`), so that its peak
memory is its own: ``peak_mb`` is the peak resident size during the timed run minus the size
before it (the generated input is already in memory then, and is the same for every system).
"""
from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any


def rss_mb() -> float:
    """The resident size of this process now (Linux)."""
    return _status_kb("VmRSS") / 1024.0


def peak_rss_mb() -> float:
    """The peak resident size of this process so far (Linux)."""
    return _status_kb("VmHWM") / 1024.0


def reset_peak() -> None:
    """Start a new peak (``VmHWM``) from the current size, where the kernel allows it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


@dataclass
class Result:
    """One measurement: a system running a workload."""

    workload: str
    system: str
    events: int
    seconds: float
    peak_mb: float
    outputs: int
    digest: str = ""
    check_digest: str = ""  # what a chunked Siddhi run must produce (differs for W3 only)
    note: str = ""
    process_mb: float = 0.0  # the whole process's peak resident size during the timed run (0: not taken)

    @property
    def rate(self) -> float:
        return self.events / self.seconds if self.seconds else float("inf")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: The whole process's peak resident size (MB) during the last :func:`measure`.
last_process_peak_mb = 0.0


def measure(run: Callable[[], Any]) -> tuple[Any, float, float]:
    """Run ``run()`` once: ``(its result, seconds, peak MB above the size before)``.

    The input, built before, is moved out of the garbage collector's sight (``gc.freeze``)
    for every system alike: otherwise each full collection during the run would scan the
    million input objects, a cost of the benchmark's set-up, not of the system measured.
    """
    gc.collect()
    gc.freeze()
    reset_peak()
    before = rss_mb()
    start = time.perf_counter()
    result = run()
    seconds = time.perf_counter() - start
    global last_process_peak_mb
    last_process_peak_mb = peak_rss_mb()
    return result, seconds, max(0.0, last_process_peak_mb - before)
