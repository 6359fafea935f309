"""Window benchmarks (a plain script, not collected by pytest).

    .venv/bin/python tests/bench/bench_windows.py [--events 1000000] [--chunk 1000]

1. a sliding ``length(100)`` window, ``avg(price)`` per key (``group by sym``);
2. a one-second event-time tumbling window (``externalTimeBatch(ts, 1 sec, 0)``),
   ``sum/count/avg`` per key.

Events are generated up front (100 keys, 1000 events per second of event time) and sent in
chunks through ``InputHandler.send_events``; the figures are events per second of wall time
and the process's peak resident memory.
"""
from __future__ import annotations

import argparse
import random
import resource
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine import Event, SiddhiManager  # noqa: E402
from tests.bench.harness import measure  # noqa: E402

STREAM = "define stream Trades (sym string, price double, vol int, ts long);"

BENCHES = {
    "sliding length(100) avg per key":
        "@info(name='q') from Trades#window.length(100) "
        "select sym, avg(price) as ap group by sym insert into Out;",
    "externalTimeBatch(1 sec) sum/count/avg per key":
        "@info(name='q') from Trades#window.externalTimeBatch(ts, 1 sec, 0) "
        "select sym, sum(price) as total, count() as n, avg(price) as ap group by sym insert into Out;",
}


def _events(n: int, keys: int) -> list[Event]:
    rnd = random.Random(7)
    names = [f"K{i:03d}" for i in range(keys)]
    base = 1_700_000_000_000
    return [Event(base + i, (names[rnd.randrange(keys)], rnd.uniform(1, 100), rnd.randrange(1, 500), base + i))
            for i in range(n)]


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run(name: str, query: str, events: list[Event], chunk: int) -> None:
    rt = SiddhiManager().create_siddhi_app_runtime(STREAM + query)
    out = [0]
    rt.add_callback("Out", lambda evs: out.__setitem__(0, out[0] + len(evs)))
    rt.start()
    h = rt.get_input_handler("Trades")

    def feed() -> int:
        for i in range(0, len(events), chunk):
            h.send_events(events[i:i + chunk])
        return out[0]

    measure(name, len(events), feed)
    rt.shutdown()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--chunk", type=int, default=1000)
    ap.add_argument("--keys", type=int, default=100)
    args = ap.parse_args(argv if argv is not None else [])
    events = _events(args.events, args.keys)
    print(f"{args.events:,} events, {args.keys} keys, chunks of {args.chunk}; generated (peak RSS {_peak_mb():.1f} MB)")
    for name, query in BENCHES.items():
        run(name, query, events, args.chunk)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
