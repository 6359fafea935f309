"""Timing of the issue-13 acceptance app: ``@app:playback`` fed epoch-millisecond timestamps.

An app with an incremental aggregation (``every sec ... year``), a periodic trigger and a
partition with ``@purge`` handles 2,000 events stamped from 1_700_000_000_000.  Before the
playback clock started at the first event, this did not come back (timers caught up from
1970 one period at a time).  The behaviour is asserted in tests/engine/test_playback_time.py;
this prints how long it takes::

    python -m tests.bench.playback_epoch [events]
"""
from __future__ import annotations

import sys
import time

from srota import SiddhiManager

EPOCH = 1_700_000_000_000
APP = """
@app:playback
define stream S (sym string, price double, ts long);
define trigger T at every 1 sec;
define aggregation A from S select sym, sum(price) as total group by sym aggregate by ts every sec ... year;
from T select triggered_time as t insert into Ticks;
@purge(enable='true', interval='1 sec', idle.period='2 sec')
partition with (sym of S) begin
    from S select sym, count() as c insert into Counts;
end;
"""


def main(n: int = 2_000) -> float:
    """Seconds to create, start, feed ``n`` events (10 ms apart) and shut down the app."""
    t0 = time.perf_counter()
    rt = SiddhiManager().create_siddhi_app_runtime(APP)
    rt.start()
    h = rt.get_input_handler("S")
    for i in range(n):
        ts = EPOCH + i * 10
        h.send([f"s{i % 10}", 1.0, ts], ts)
    rt.shutdown()
    return time.perf_counter() - t0


if __name__ == "__main__":
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000
    print(f"{events} events from {EPOCH}: {main(events):.3f} s")
