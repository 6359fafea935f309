"""W1: filter and projection over a million events.

``price >= 100 and volume > 10``, output ``symbol, price * volume``: Srota with chunks of
1000 through ``send_events``, Srota one event at a time, and a hand-written Python loop
(the ceiling for pure Python).
"""
from __future__ import annotations

import sys

from engine import Event, SiddhiManager
from tests.bench.data import rows, timestamps
from tests.bench.harness import measure

APP = """
define stream Trades (symbol string, price double, volume long);
@info(name='w1') from Trades[price >= 100 and volume > 10]
select symbol, price * volume as value insert into Out;
"""


def hand_loop(data: list[tuple[str, float, int]]) -> int:
    out = []
    for symbol, price, volume in data:
        if price >= 100 and volume > 10:
            out.append((symbol, price * volume))
    return len(out)


def srota(data: list[tuple[str, float, int]], chunk: int) -> int:
    runtime = SiddhiManager().create_siddhi_app_runtime(APP)
    count = 0

    def on_out(events: list[Event]) -> None:
        nonlocal count
        count += len(events)

    runtime.add_callback("Out", on_out)
    runtime.start()
    handler = runtime.get_input_handler("Trades")
    ts = timestamps(len(data))
    if chunk == 1:
        send = handler.send
        for i, row in enumerate(data):
            send(row, ts[i])
    else:
        for start in range(0, len(data), chunk):
            handler.send_events([Event(ts[i], data[i]) for i in range(start, min(start + chunk, len(data)))])
    runtime.shutdown()
    return count


def main(n: int = 1_000_000) -> None:
    data = rows(n)
    base = measure("W1 hand-written loop", n, lambda: hand_loop(data))
    chunked = measure("W1 srota send_events(1000)", n, lambda: srota(data, 1000))
    single = measure("W1 srota send() one by one", n, lambda: srota(data, 1))
    print(f"W1 ratio chunked/loop {chunked.rate / base.rate:.2f}, one-by-one/loop {single.rate / base.rate:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
