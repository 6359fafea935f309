"""Random changes of a roll-up shard's owner keep every row exact.

A model of what scale-out does to one partition's ``define aggregation`` on a shared database,
without Kafka: events arrive in live mode (a wall clock the test moves), the bucket timer fires
when it likes, checkpoints are taken now and then, and the partition changes owner at random
moments: a crash (the next owner restores the last checkpoint and the records after it come
again), a revocation (checkpoint first), or a rebalance that gives the partition back to the
same owner after its connections were closed.  Each new owner claims with a higher epoch, as
the state topic's claims do.  Whatever the schedule, every second's and minute's row must equal
the plain sums of the events (written during the search for soak seed 77's lost rows).
"""
from __future__ import annotations

import random
import time
import urllib.parse
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
import srota.engine.clock as clock_module
from srota.engine import SiddhiManager

pytestmark = pytest.mark.integration

START = 1_795_848_525_000  # a second in 2026, where the soak found the loss


class _FakeTime:
    """``time`` for the engine's wall clock: the test says what time it is."""

    def __init__(self) -> None:
        self.ms = 0

    def time_ns(self) -> int:
        return self.ms * 1_000_000

    monotonic = staticmethod(time.monotonic)
    sleep = staticmethod(time.sleep)


@pytest.fixture
def wall() -> Iterator[_FakeTime]:
    fake = _FakeTime()
    real = clock_module.time
    clock_module.time = fake  # type: ignore[assignment]
    try:
        yield fake
    finally:
        clock_module.time = real


def _app(url: str, name: str) -> str:
    p = urllib.parse.urlsplit(url)
    scheme = "postgresql" if p.scheme.startswith("postgres") else "mysql"
    return f"""@app:name('{name}')
define stream In (id string, n long, ts long);
@store(type='rdbms', jdbc.url='jdbc:{scheme}://{p.hostname}:{p.port}{p.path}', username='{p.username}',
       password='{p.password}')
@PartitionById(enable='true')
@purge(enable='false')
define aggregation Agg{name} from In
select id, sum(n) as total, count() as events
group by id aggregate by ts every sec ... min;
"""


def _fire(rt: Any, agg: str, now: int) -> None:
    """The bucket timer's thread, when it gets round to it."""
    a = rt.context.aggregations[agg]
    with rt.context.lock:
        at = a._timer_at
        if at is not None and at <= now:
            a._cancel_bucket_timer()
            a._on_bucket_timer(at)


def _schedule(url: str, wall: _FakeTime, seed: int) -> tuple[dict[Any, list[int]], dict[Any, list[int]], list[str]]:
    """Run one random schedule; (rows found, rows wanted, what happened)."""
    rnd = random.Random(seed)
    name, agg = f"S{seed}", f"AggS{seed}"
    app = _app(url, name)
    events = []
    ts = START - 5000 + rnd.randint(0, 999)
    for _ in range(rnd.randint(40, 90)):
        ts += rnd.choice((50, 100, 200, 300, 700, 1500))
        events.append((f"k{rnd.randint(0, 3)}", rnd.randint(0, 99), ts))
    want: dict[Any, list[int]] = defaultdict(lambda: [0, 0])
    for k, n, t in events:
        for unit, per in ((1000, "seconds"), (60_000, "minutes")):
            row = want[(per, t - t % unit, k)]
            row[0] += n
            row[1] += 1
    wall.ms = events[0][2]
    epoch = 1
    rt = SiddhiManager(shard_id="p", fence_epoch=epoch).create_siddhi_app_runtime(app)
    rt.start()
    checkpoint = (0, rt.snapshot())
    at = 0
    log: list[str] = []
    while at < len(events) or rnd.random() < 0.3:
        r = rnd.random()
        if r < 0.5 and at < len(events):
            handler = rt.get_input_handler("In")
            for e in events[at:at + rnd.randint(1, 6)]:
                wall.ms = max(wall.ms, e[2] + rnd.randint(0, 50))
                handler.send(list(e))
                at += 1
            log.append(f"send->{at}")
        elif r < 0.65:
            wall.ms += rnd.choice((100, 500, 1500, 4000))
            _fire(rt, agg, wall.ms)
            log.append(f"timer@{wall.ms - START}")
        elif r < 0.8:
            checkpoint = (at, rt.snapshot())
            log.append(f"checkpoint@{at}")
        elif r < 0.9:
            # a rebalance gives the partition back: its connections were closed at the revocation
            checkpoint = (at, rt.snapshot())
            rt.context.aggregations[agg].store.db.disconnect()
            log.append(f"kept@{at}")
        else:
            if rnd.random() < 0.5:
                checkpoint = (at, rt.snapshot())
                log.append(f"revoked@{at}")
            else:
                log.append("crash")
            rt.shutdown()
            wall.ms += rnd.choice((100, 1000, 5000))
            epoch += 1
            rt = SiddhiManager(shard_id="p", fence_epoch=epoch).create_siddhi_app_runtime(app)
            rt.restore(checkpoint[1])
            at = checkpoint[0]
            rt.start()
            log.append(f"restored@{at}")
            if rnd.random() < 0.5:
                _fire(rt, agg, wall.ms)  # the restored timer is due at once
    wall.ms += 100_000
    _fire(rt, agg, wall.ms)
    rt.context.aggregations[agg].complete_all()
    got = {}
    for per in ("seconds", "minutes"):
        q = f"from {agg} within {START - 3_600_000}L, {START + 3_600_000}L per '{per}' select AGG_TIMESTAMP, id, total, events"
        got.update({(per, e.data[0], e.data[1]): [e.data[2], e.data[3]] for e in rt.query(q)})
    rt.shutdown()
    return got, dict(want), log


def test_random_owner_changes_keep_every_roll_up_row(rdbms_url: str, wall: _FakeTime) -> None:
    for seed in range(12):
        got, want, log = _schedule(rdbms_url, wall, seed)
        wrong = {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
        assert not wrong, f"seed {seed}: {sorted(wrong.items())[:5]} after {' '.join(log)}"
