"""The benchmark workload's data: the same seeded events for every system.

100 symbols, price 50..200, volume 1..1000, event time in ms increasing by 1.
"""
from __future__ import annotations

import random

SYMBOLS = [f"S{i:03d}" for i in range(100)]
START_TS = 1_700_000_000_000


def rows(n: int = 1_000_000, seed: int = 42) -> list[tuple[str, float, int]]:
    """``n`` rows of (symbol, price, volume)."""
    rnd = random.Random(seed)
    choice, uniform, randint = rnd.choice, rnd.uniform, rnd.randint
    return [(choice(SYMBOLS), round(uniform(50.0, 200.0), 2), randint(1, 1000)) for _ in range(n)]


def timestamps(n: int = 1_000_000) -> range:
    return range(START_TS, START_TS + n)
