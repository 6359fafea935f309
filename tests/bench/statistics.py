"""What statistics cost on W1: off, basic and detail, side by side in one process.

    python -m tests.bench.statistics [N]

W1 (filter and projection, ``tests/bench/workloads.py``) over the benchmark's trades, fed in
chunks of 1000 through ``send_events`` and one event at a time, five alternating rounds per
level; the best round of each is reported, with basic and detail as fractions of off.
Target (issue 24): basic costs at most 5 % of W1's chunked rate; off is the code path
every run takes (one attribute test per chunk), so its cost is in W1's own figures.
"""
from __future__ import annotations

import json
import sys
import time

from tests.bench.data import rows
from tests.bench.workloads import APPS


def _rate(level: str, events: list, one_by_one: bool) -> float:
    from srota.engine import Event

    from srota import SiddhiManager

    rt = SiddhiManager().create_siddhi_app_runtime("@app:playback\n" + APPS["W1"])
    if level != "off":
        rt.set_statistics_level(level)
    rt.add_callback("Out", lambda evs: None)
    rt.start()
    h = rt.get_input_handler("Trades")
    t0 = time.perf_counter()
    if one_by_one:
        for r in events:
            h.send(r, timestamp=r[3])
    else:
        chunk = [Event(r[3], r) for r in events]
        for i in range(0, len(chunk), 1000):
            h.send_events(chunk[i:i + 1000])
    elapsed = time.perf_counter() - t0
    rt.shutdown()
    return len(events) / elapsed


def main(n: int = 300_000) -> None:
    events = rows(n)
    for mode, one in (("chunks of 1000", False), ("one by one", True)):
        data = events if not one else events[: n // 3]
        best = {lvl: 0.0 for lvl in ("off", "basic", "detail")}
        for _ in range(5):
            for lvl in best:
                best[lvl] = max(best[lvl], _rate(lvl, data, one))
        line = {"workload": "W1", "mode": mode, **{f"{k}_events_per_s": round(v) for k, v in best.items()},
                "basic_of_off": round(best["basic"] / best["off"], 3),
                "detail_of_off": round(best["detail"] / best["off"], 3)}
        print(json.dumps(line), flush=True)
        if not one:
            cost = 1 - line["basic_of_off"]
            print(f"W1 chunked: statistics basic costs {cost:.1%} (target at most 5%): "
                  f"{'met' if cost <= 0.05 else 'NOT met'}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300_000)
