"""Benchmark: a pattern over a million generated events (plain script; prints events/s).

    every e1=S[price > 190] -> e2=S[symbol == e1.symbol and price < e1.price * 0.3] within 10 sec

Events are sent in chunks through ``InputHandler.send_events`` under ``@app:playback`` with one
millisecond between events, so ``within`` expires partial matches on event time.

    .venv/bin/python tests/bench/bench_pattern.py [events] [chunk]
"""
from __future__ import annotations

import random
import sys
import time

from engine import Event, SiddhiManager

APP = """
@app:playback
define stream S (symbol string, price double, volume long);
@info(name = 'q')
from every e1=S[price > 190] -> e2=S[symbol == e1.symbol and price < e1.price * 0.3] within 10 sec
select e1.symbol as symbol, e1.price as high, e2.price as low
insert into Out;
"""


def main(n: int = 1_000_000, chunk: int = 1000) -> None:
    rnd = random.Random(42)
    symbols = [f"SYM{i}" for i in range(100)]
    t0 = 1_700_000_000_000
    events = [Event(t0 + i, (rnd.choice(symbols), rnd.uniform(0.0, 200.0), rnd.randrange(1000)))
              for i in range(n)]
    runtime = SiddhiManager().create_siddhi_app_runtime(APP)
    matches = 0

    def on_out(batch: list[Event]) -> None:
        nonlocal matches
        matches += len(batch)

    runtime.add_callback("Out", on_out)
    runtime.start()
    handler = runtime.get_input_handler("S")
    pattern = runtime.context.elements["q/pattern"]
    start = time.perf_counter()
    for i in range(0, n, chunk):
        handler.send_events(events[i:i + chunk])
    elapsed = time.perf_counter() - start
    runtime.shutdown()
    print(f"{n} events in {elapsed:.2f} s: {n / elapsed:,.0f} events/s; {matches} matches; "
          f"{pattern.pending} partial matches pending, {pattern.dropped} dropped")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
