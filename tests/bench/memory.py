"""Memory over a long run: ``python -m tests.bench.memory W2 10000000 [CHUNK]``.

Streams generated events (not held in memory) through Srota in chunks and samples the
resident size every million events.  Memory is flat when it grows by less than 10 MB from
the sample at one fifth of the run to the end: a window or pattern that keeps what it no
longer needs grows with time, at least 10 MB over millions of events.
"""
from __future__ import annotations

import gc
import json
import sys
from itertools import islice

from tests.bench.data import iter_rows
from tests.bench.harness import rss_mb
from tests.bench.workloads import APPS


def main(argv: list[str]) -> int:
    from srota.engine import Event, SiddhiManager

    workload = argv[0]
    n = int(argv[1]) if len(argv) > 1 else 10_000_000
    chunk = int(argv[2]) if len(argv) > 2 else 1000
    runtime = SiddhiManager().create_siddhi_app_runtime(APPS[workload])
    outputs = 0

    def count(events: list[Event]) -> None:
        nonlocal outputs
        outputs += len(events)

    runtime.add_callback("Out", count)
    runtime.start()
    send_events = runtime.get_input_handler("Trades").send_events
    source = iter_rows(n)
    samples: list[tuple[int, float]] = []
    done = 0
    step = 1_000_000
    while done < n:
        rows = list(islice(source, chunk))
        send_events([Event(r[3], r) for r in rows])
        done += len(rows)
        if done % step == 0 or done == n:
            gc.collect()
            samples.append((done, rss_mb()))
    runtime.shutdown()
    first_at, first = next(((k, v) for k, v in samples if k >= n // 5), samples[0])
    last = samples[-1][1]
    print(json.dumps({"workload": workload, "events": n, "outputs": outputs, "samples": samples,
                      "first_at": first_at, "first_mb": first, "last_mb": last,
                      "growth_mb": last - first, "flat": last - first < 10.0}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
