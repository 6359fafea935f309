"""One measurement in a process of its own: ``python -m tests.bench.run SYSTEM WORKLOAD [N] [CHUNK]``.

Prints the :class:`~tests.bench.harness.Result` as one JSON line.  Systems: ``loop`` (the
hand-written Python loop), ``srota`` (chunks of CHUNK events through ``send_events``),
``srota-1`` (one event at a time through ``send``), and the peers of
:mod:`tests.bench.peers` (``bytewax``, ``quixstreams``, ``pathway``; run these with the
benchmark environment's Python).
"""
from __future__ import annotations

import json
import sys
from operator import attrgetter
from typing import Any

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


def run_srota(workload: str, n: int, chunk: int) -> Result:
    from srota.engine import Event, SiddhiManager

    data = rows(n)
    runtime = SiddhiManager().create_siddhi_app_runtime(APPS[workload])
    got: list[Any] = []
    # The callback keeps what a sink would keep, the rows (as the loop keeps its tuples);
    # W2 also needs the event time, to tell the window.
    if workload == "W2":
        runtime.add_callback("Out", lambda events: got.extend([(e.timestamp, e.data) for e in events]))
    else:
        data_of = attrgetter("data")
        runtime.add_callback("Out", lambda events: got.extend(map(data_of, events)))
    runtime.start()
    handler = runtime.get_input_handler("Trades")
    if chunk > 1:
        # The events are built before timing: a source hands the engine ready chunks.
        events = [Event(r[3], r) for r in data]
        del data

        def feed() -> None:
            send_events = handler.send_events
            for i in range(0, n, chunk):
                send_events(events[i:i + chunk])
    else:
        def feed() -> None:
            send = handler.send
            for r in data:
                send(r, r[3])

    _, seconds, peak = measure(feed)
    runtime.shutdown()
    if workload == "W2":
        out = [((ts - START_TS) // 1000, *data) for ts, data in got]
    else:
        out = got
    canon = canonical(workload, out, n)
    system = "srota" if chunk > 1 else "srota-1"
    return Result(workload, system, n, seconds, peak, len(out), digest(canon))


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
    else:
        from tests.bench.peers import run_peer
        result = run_peer(system, workload, n, chunk)
    print(json.dumps(result.to_dict()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
