"""Timing and memory measurement shared by the benchmarks."""
from __future__ import annotations

import gc
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Result:
    name: str
    events: int
    seconds: float
    peak_rss_mb: float
    outputs: int

    @property
    def rate(self) -> float:
        return self.events / self.seconds if self.seconds else float("inf")

    def line(self) -> str:
        return (f"{self.name:<44} {self.rate:>12,.0f} ev/s  {self.seconds:7.2f} s  "
                f"outputs {self.outputs:>9,}  peak RSS {self.peak_rss_mb:7.1f} MB")


def measure(name: str, events: int, run: Callable[[], Any]) -> Result:
    """Run ``run()`` once and time it; ``run`` returns the number of outputs."""
    gc.collect()
    start = time.perf_counter()
    outputs = run()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    result = Result(name, events, seconds, peak, int(outputs or 0))
    print(result.line(), flush=True)
    return result
