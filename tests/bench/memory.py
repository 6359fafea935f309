"""Memory over a long run: ``python -m tests.bench.memory W2|W4|A 10000000 [CHUNK]``.

Streams generated events (not held in memory) through Srota in chunks and samples the
resident size every million events.  ``A`` is an incremental aggregation (sec ... year per
symbol) whose roll-ups go to a PostgreSQL server started for the run (``rdbms`` store).  Memory is flat when it grows by less than 10 MB from
the sample at one fifth of the run to the end: a window or pattern that keeps what it no
longer needs grows with time, at least 10 MB over millions of events.
"""
from __future__ import annotations

import contextlib
import gc
import json
import sys
from collections.abc import Iterator
from itertools import islice

from tests.bench.data import iter_rows
from tests.bench.harness import rss_mb
from tests.bench.workloads import APPS


def main(argv: list[str]) -> int:
    workload = argv[0]
    n = int(argv[1]) if len(argv) > 1 else 10_000_000
    chunk = int(argv[2]) if len(argv) > 2 else 1000
    if workload == "A":
        from tests.dbservers import postgres_bin

        if postgres_bin() is None:
            print(json.dumps({"workload": workload, "skipped": "PostgreSQL is not installed (make deps)"}))
            return 0
        with _postgres() as jdbc:
            return _run(workload, ROLLUP_APP.format(url=jdbc), n, chunk)
    return _run(workload, APPS[workload], n, chunk)


#: Roll-ups of every symbol from seconds to years in PostgreSQL (the stream of the workloads).
ROLLUP_APP = """define stream Trades (symbol string, price double, volume long, ts long);
@store(type='rdbms', jdbc.url='{url}', username='srota', password='srota')
define aggregation TradeAgg from Trades
select symbol, sum(volume) as vol, avg(price) as ap group by symbol
aggregate by ts every sec ... year;
define stream Out (symbol string);
"""


@contextlib.contextmanager
def _postgres() -> Iterator[str]:
    from tests.dbservers import running_postgres

    with running_postgres("srota-bench-pg-") as server:
        yield server.jdbc_url(server.create_database())


def _run(workload: str, app: str, n: int, chunk: int) -> int:
    from srota.engine import Event, SiddhiManager

    runtime = SiddhiManager().create_siddhi_app_runtime(app)
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
