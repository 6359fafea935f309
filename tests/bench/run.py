"""One measurement in a process of its own: ``python -m tests.bench.run SYSTEM WORKLOAD [N] [CHUNK]``.

Prints the :class:`~tests.bench.harness.Result` as one JSON line.  Systems: ``loop`` (the
hand-written Python loop), ``srota`` (chunks of CHUNK events through ``send_events``),
``srota-1`` (one event at a time through ``send``), ``srota-1a`` (one at a time into an
``@Async`` stream: the micro-batching path, whose worker takes what queued up), ``profile``
(the chunked run under cProfile: the top functions by own time), the peers of
:mod:`tests.bench.peers` (``bytewax``, ``quixstreams``, ``pathway``; run these with the
benchmark environment's Python), and ``siddhi`` / ``siddhi-1`` (Siddhi 5.1.33 on the JVM,
chunked / one by one: :mod:`tests.bench.siddhi`).
"""
from __future__ import annotations

import cProfile
import json
import linecache
import os
import pstats
import sys
from operator import attrgetter
from pathlib import Path
from typing import Any

from tests.bench import harness
from tests.bench.data import START_TS, rows
from tests.bench.harness import Result, measure
from tests.bench.workloads import APPS, LOOPS, canonical, chunked_subset, digest


def run_loop(workload: str, n: int, chunk: int) -> Result:
    data = rows(n)
    out, seconds, peak = measure(lambda: LOOPS[workload](data))
    canon = canonical(workload, out, n)
    in_order = [(s, round(a, 6)) for s, a in out] if workload == "W3" else canon
    check = digest(chunked_subset(workload, in_order, data, chunk))
    return Result(workload, "loop", n, seconds, peak, len(out), digest(canon), check)


#: ``@Async`` settings of the micro-batched one-by-one run (``srota-1a``): the buffer's bound
#: (256..4096 measured alike in throughput; docs/performance.md, Micro-batching).
#: ``SROTA_BENCH_ASYNC_SIZE`` overrides it.
ASYNC = "@Async(buffer.size='{size}', workers='1', batch.size.max='{size}')\n"
ASYNC_SIZE = 1024


def micro_batched(app: str) -> str:
    """``app`` with its ``Trades`` stream made ``@Async``."""
    size = int(os.environ.get("SROTA_BENCH_ASYNC_SIZE", ASYNC_SIZE))
    return app.replace("define stream Trades", ASYNC.format(size=size) + "define stream Trades", 1)


def run_srota(workload: str, n: int, chunk: int, micro_batch: bool = False,
              profile: cProfile.Profile | None = None) -> Result:
    """Srota on ``workload``: chunks of ``chunk`` events, or one by one (``chunk`` 1); the
    timed part runs under ``profile`` when one is given."""
    from srota.engine import Event, SiddhiManager

    data = rows(n)
    app = micro_batched(APPS[workload]) if micro_batch else APPS[workload]
    runtime = SiddhiManager().create_siddhi_app_runtime(app)
    got: list[Any] = []
    # The callback keeps what a sink would keep, the rows (as the loop keeps its tuples);
    # W2 also needs the event time, to tell the window.
    if workload == "W2":
        runtime.add_callback("Out", lambda events: got.extend([(e.timestamp, e.data) for e in events]),
                             merged_chunks=True)
    else:
        data_of = attrgetter("data")
        runtime.add_callback("Out", lambda events: got.extend(map(data_of, events)), merged_chunks=True)
    runtime.start()
    handler = runtime.get_input_handler("Trades")
    if chunk > 1:
        # The chunks are built before timing: a source hands the engine ready chunks (and
        # Siddhi's runner makes its Event[] chunks before its clock starts too).
        events = [Event(r[3], r) for r in data]
        del data
        chunks = [events[i:i + chunk] for i in range(0, n, chunk)]
        del events

        def feed() -> None:
            send_events = handler.send_events
            for c in chunks:
                send_events(c)
    else:
        def feed() -> None:
            send = handler.send
            for r in data:
                send(r, r[3])
            if micro_batch:  # the clock stops when the last output is out
                runtime.drain()

    _, seconds, peak = measure(feed if profile is None else lambda: profile.runcall(feed))
    runtime.shutdown()
    if workload == "W2":
        out = [((ts - START_TS) // 1000, *data) for ts, data in got]
    else:
        out = got
    canon = canonical(workload, out, n)
    system = "srota" if chunk > 1 else "srota-1a" if micro_batch else "srota-1"
    return Result(workload, system, n, seconds, peak, len(out), digest(canon))


_ROOT = Path(__file__).resolve().parents[2]


def run_profile(workload: str, n: int, chunk: int, top: int = 12) -> dict[str, Any]:
    """Srota's chunked run of ``workload`` under cProfile: the ``top`` functions by own time.

    Each is ``[where, calls, own seconds, cumulative seconds]``; generated code shows as
    ``<srota-generated-N>`` (one per compiled query function), and ``generated`` has the
    source of those among the top.  cProfile slows the Python functions it sees more than
    the builtins, so the shares are a guide, not a measurement.
    """
    profile = cProfile.Profile()
    result = run_srota(workload, n, chunk, profile=profile)
    stats = pstats.Stats(profile)
    ranked = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]  # type: ignore[attr-defined]
    generated = {filename: "".join(linecache.getlines(filename))
                 for (filename, _, _), _ in ranked if filename.startswith("<srota-generated-")}
    return {"workload": workload, "events": n, "seconds": round(result.seconds, 4), "outputs": result.outputs,
            "top": [[_where(func), calls, round(own, 4), round(cumulative, 4)]
                    for func, (_, calls, own, cumulative, _) in ranked],
            "generated": generated}


def _where(func: tuple[str, int, str]) -> str:
    """``path:line(name)`` with the project's paths relative to its root."""
    filename, line, name = func
    if filename.startswith(str(_ROOT)):
        filename = os.path.relpath(filename, _ROOT)
    return f"{filename}:{line}({name})" if line else name


def run_latency(n: int, rate: float | None, micro_batch: bool) -> dict[str, Any]:
    """Send-to-callback latency of W1 events sent one at a time: p50/p99/max in microseconds.

    ``rate``: events per second, sent in bursts each millisecond (None: as fast as the sender
    can, which keeps the buffer full: then the latency is the time to work through it).  Every input that
    passes W1's filter is matched with its output by position (the outputs keep the order).
    """
    import time

    from srota.engine import SiddhiManager

    data = rows(n)
    app = micro_batched(APPS["W1"]) if micro_batch else APPS["W1"]
    runtime = SiddhiManager().create_siddhi_app_runtime(app)
    received: list[float] = []
    clock = time.perf_counter
    runtime.add_callback("Out", lambda events: received.extend([clock()] * len(events)), merged_chunks=True)
    runtime.start()
    send = runtime.get_input_handler("Trades").send
    sent: list[float] = []
    # Paced the way a network feed is: the sender waits (and releases the GIL) between
    # bursts of messages, here every millisecond's worth of events.
    burst = max(1, int(rate / 1000)) if rate else 0
    start = clock()
    for i, r in enumerate(data):
        if burst and i % burst == 0:
            pause = start + i / rate - clock()  # type: ignore[operator]
            if pause > 0:
                time.sleep(pause)
        if r[1] >= 100 and r[2] > 10:
            sent.append(clock())
        send(r, r[3])
    if micro_batch:
        runtime.drain()
    runtime.shutdown()
    delays = sorted((b - a) * 1e6 for a, b in zip(sent, received, strict=True))
    pick = lambda q: round(delays[min(len(delays) - 1, int(q * len(delays)))], 1)  # noqa: E731
    return {"system": "srota-1a" if micro_batch else "srota-1", "rate": rate, "events": n,
            "p50_us": pick(0.5), "p99_us": pick(0.99), "max_us": round(delays[-1], 1)}


def main(argv: list[str]) -> int:
    system, workload = argv[0], argv[1]
    n = int(argv[2]) if len(argv) > 2 else 1_000_000
    chunk = int(argv[3]) if len(argv) > 3 else 1000
    if system == "loop":
        result = run_loop(workload, n, chunk)
    elif system == "srota":
        result = run_srota(workload, n, chunk)
    elif system == "srota-1":
        result = run_srota(workload, n, 1)
    elif system == "srota-1a":
        result = run_srota(workload, n, 1, micro_batch=True)
    elif system == "profile":  # python -m tests.bench.run profile W1 [N] [CHUNK]
        print(json.dumps(run_profile(workload, n, chunk)), flush=True)
        return 0
    elif system == "latency":  # python -m tests.bench.run latency sync|async N [RATE]
        rate = float(argv[3]) if len(argv) > 3 and float(argv[3]) > 0 else None
        print(json.dumps(run_latency(n, rate, workload == "async")), flush=True)
        return 0
    elif system in ("siddhi", "siddhi-1"):  # Siddhi 5.1.33 in a JVM of its own
        from tests.bench.siddhi import run_siddhi
        result = run_siddhi(workload, n, chunk if system == "siddhi" else 1)
    else:
        from tests.bench.peers import run_peer
        result = run_peer(system, workload, n, chunk)
    if not result.process_mb and result.seconds:
        result.process_mb = harness.last_process_peak_mb
    print(json.dumps(result.to_dict()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
