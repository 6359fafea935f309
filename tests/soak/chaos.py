"""The chaos schedule: seeded, printed, replayable; and the faults themselves.

:func:`schedule` draws every fault of a run from the seed before the run starts (the time, the
kind, the worker, how long), so the same ``--seed`` and ``--seconds`` give the same schedule.
What the faults meet (which records are in flight) still depends on timing.
"""
from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from dataclasses import dataclass, field
from typing import Any

KINDS = ("kill", "zombie", "broker", "postgres", "mosquitto", "backfill", "purge")


@dataclass
class Fault:
    """One fault of the schedule; ``at`` is seconds after the producer starts."""

    at: float
    kind: str
    worker: int = 0
    duration: float = 0.0
    #: Filled in as it runs: monotonic start and end (the end: everything is back up).
    started: float = 0.0
    ended: float = 0.0
    note: str = ""
    #: Seconds from ``ended`` until outputs caught up with what was sent by then (None: not yet).
    recovery: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        what = {"kill": f"SIGKILL worker w{self.worker}, restart it",
                "zombie": f"SIGSTOP worker w{self.worker} for {self.duration:.1f}s, then SIGCONT",
                "broker": f"broker restart: connections reset, refused for {self.duration:.1f}s",
                "postgres": f"PostgreSQL stopped (immediate) for {self.duration:.1f}s",
                "mosquitto": f"Mosquitto stopped for {self.duration:.1f}s",
                "backfill": f"srota aggregation backfill of a past minute of partition p{self.worker} (scratch database)",
                "purge": "srota aggregation purge (retention) while the workers write"}[self.kind]
        return f"t+{self.at:6.1f}s {self.kind:9s} {what}"


def schedule(seed: int, seconds: float, warmup: float, tail: float, gap: tuple[float, float],
             workers: int, kinds: tuple[str, ...] = KINDS) -> list[Fault]:
    """Every fault of a run of ``seconds`` (faults between ``warmup`` and ``seconds - tail``)."""
    rng = random.Random(seed)
    faults: list[Fault] = []
    t = warmup + rng.uniform(0, gap[0] / 2)
    while t < seconds - tail:
        kind = rng.choice(kinds)
        duration = {"zombie": rng.uniform(2.5, 3.5) * 2.0, "broker": rng.uniform(2, 6),
                    "postgres": rng.uniform(2, 8), "mosquitto": rng.uniform(1, 4)}.get(kind, 0.0)
        faults.append(Fault(at=round(t, 1), kind=kind, worker=rng.randrange(workers if kind != "backfill" else 6),
                            duration=round(duration, 1)))
        t += rng.uniform(*gap)
    return faults


async def inject(fault: Fault, soak: Any) -> None:
    """Run one fault against the soak's processes; returns once everything is back up (a Spark
    job is only started: it runs on while the schedule goes on, and :attr:`Soak.jobs` waits)."""
    fault.started = time.monotonic()
    if fault.kind == "kill":
        w = soak.workers[fault.worker]
        w.kill()
        await asyncio.sleep(0.5)
        w.start()
        await w.wait_ready()
    elif fault.kind == "zombie":
        w = soak.workers[fault.worker]
        assert w.proc is not None
        os.kill(w.proc.pid, signal.SIGSTOP)
        try:
            await asyncio.sleep(fault.duration)
        finally:
            os.kill(w.proc.pid, signal.SIGCONT)
    elif fault.kind == "broker":
        await soak.broker.proxy.cut()
        await asyncio.sleep(fault.duration)
        await soak.broker.proxy.restore()
    elif fault.kind == "postgres":
        await asyncio.to_thread(soak.pg.stop, "immediate")
        await asyncio.sleep(fault.duration)
        await asyncio.to_thread(soak.pg.resume)
    elif fault.kind == "mosquitto":
        await asyncio.to_thread(soak.mqtt.stop)
        await asyncio.sleep(fault.duration)
        await asyncio.to_thread(soak.mqtt.start)
    elif fault.kind == "backfill":
        fault.note = await soak.start_backfill(fault.worker)
    elif fault.kind == "purge":
        fault.note = await soak.start_purge()
    else:  # pragma: no cover - schedule() draws from KINDS
        raise ValueError(fault.kind)
    fault.ended = time.monotonic()
