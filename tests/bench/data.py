"""The benchmark workload's data: the same seeded events for every system.

100 symbols, price 50..200 (two decimals), volume 1..1000, event time in ms increasing by 1
from :data:`START_TS` (a multiple of 1000, so one-second windows start on the first event).
Every row is ``(symbol, price, volume, ts)``; every system gets these tuples.

Pure Python without imports from the project: the peers' benchmark environment imports it too.
"""
from __future__ import annotations

import random
from collections.abc import Iterator

SYMBOLS = [f"S{i:03d}" for i in range(100)]
START_TS = 1_700_000_000_000

Row = tuple[str, float, int, int]


def iter_rows(n: int = 1_000_000, seed: int = 42) -> Iterator[Row]:
    """``n`` rows of (symbol, price, volume, ts), generated lazily (for long memory runs)."""
    rnd = random.Random(seed)
    choice, uniform, randint = rnd.choice, rnd.uniform, rnd.randint
    for ts in range(START_TS, START_TS + n):
        yield (choice(SYMBOLS), round(uniform(50.0, 200.0), 2), randint(1, 1000), ts)


def rows(n: int = 1_000_000, seed: int = 42) -> list[Row]:
    """``n`` rows of (symbol, price, volume, ts)."""
    return list(iter_rows(n, seed))


def timestamps(n: int = 1_000_000) -> range:
    """The event times of :func:`rows` (``row[3]``)."""
    return range(START_TS, START_TS + n)
