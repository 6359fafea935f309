"""A partition whose shard lock a stopped process still holds: the new owner takes it over.

Found by the chaos soak (tests/soak): a worker SIGSTOPped past the session timeout kept its
PostgreSQL connection and, with it, the lock on its partition's shard of a ``@PartitionById``
aggregation.  The partition's new owner took the refused runtime creation for an unreadable
checkpoint and walked back through older ones (restoring state the roll-ups were already
past), and the group kept rebalancing.  Now the lock conflict is temporary: the same checkpoint
is tried again, and past a grace the stopped holder's database session is ended; when the
stopped process runs again it cannot write.
"""
from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from srota.engine.stores.database import Database, parse_url
from srota.service import scaleout

from tests.integration.support import (
    TopicReader,
    check_running_totals,
    kafka_sink,
    kafka_source,
    produce,
    running_host,
    totals_reached,
    wait_until,
)
from tests.service.test_scaleout import _scaled

pytestmark = pytest.mark.integration

T0 = 1_700_000_000_000

ZOMBIE = textwrap.dedent("""
    import sys
    from srota.engine import SiddhiManager
    rt = SiddhiManager(shard_id="p0").create_siddhi_app_runtime(open(sys.argv[1]).read())
    rt.start()
    print("ready", flush=True)
    sys.stdin.readline()  # (stopped here, then continued)
    rt.get_input_handler("In").send(["zombie", 1000, 0], timestamp=0)
    agg = rt.context.aggregations["Agg"]
    agg.complete_all()
    agg.store.flush()
    # refused: dropped writes, or events whose roll-up could not read the shard's rows
    print(agg.store.failed_writes + sum(rt.context.errors.values()), flush=True)
    rt.shutdown()
""")


def _aggregation(pg_url: str) -> str:
    p = urllib.parse.urlsplit(pg_url)
    return f"""
    @store(type='rdbms', jdbc.url='jdbc:postgresql://{p.hostname}:{p.port}{p.path}', username='{p.username}',
           password='{p.password}')
    @PartitionById(enable='true')
    @purge(enable='false')
    define aggregation Agg from In select id, sum(n) as total, count() as events group by id aggregate by ts every sec;
    """


def _counted(pg_url: str) -> dict[str, int]:
    """Events per key in the seconds table (every shard)."""
    db = Database(parse_url(pg_url), "test")
    try:
        def read(cur: Any) -> dict[str, int]:
            cur.execute('SELECT id, SUM("agg_count") FROM "agg_seconds" GROUP BY id')
            return {k: int(n) for k, n in cur.fetchall()}
        return db.run(read)
    finally:
        db.close()


async def test_a_stopped_worker_holding_the_shard_lock_is_taken_over(kafka_broker: Any, pg_url: str,
                                                                     tmp_path: Path) -> None:
    kb = kafka_broker
    src, out = await kb.create_topic(partitions=1), await kb.create_topic(partitions=1)
    group = f"g-{uuid.uuid4().hex[:8]}"
    cfg = _scaled(interval_ms=3_600_000)
    app = f"""
    @app:name('Rollups')
    {kafka_source(kb, src, group, **{"batch.size": "100", "key.attribute": "id"})}
    define stream In (id string, n long, ts long);
    {kafka_sink(kb, out, key='{{id}}')}
    define stream Out (id string, total long, count long);
    {_aggregation(pg_url)}
    from In select id, sum(n) as total, count() as count group by id insert into Out;
    """
    inputs = [{"id": f"k{i % 5}", "n": (i * 7919) % 101, "ts": T0 + i * 1000} for i in range(300)]
    await produce(kb.bootstrap_servers, src, [(e["id"].encode(), orjson.dumps(e)) for e in inputs[:200]])
    async with TopicReader(kb.bootstrap_servers, out) as reader:
        async with running_host(cfg, app):
            first = len(await reader.until(totals_reached(inputs[:200]), 30, what="the first 200 records' totals"))
        # (stopped cleanly: partition 0's checkpoint covers the 200 records)

        # The zombie: a process holding partition 0's shard lock, stopped.
        zombie_app = tmp_path / "zombie.siddhi"
        zombie_app.write_text(f"@app:playback\ndefine stream In (id string, n long, ts long);\n"
                              f"{_aggregation(pg_url)}", encoding="utf-8")
        zombie = subprocess.Popen([sys.executable, "-c", ZOMBIE, str(zombie_app)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert zombie.stdout is not None and zombie.stdin is not None
            assert zombie.stdout.readline().strip() == "ready"
            os.kill(zombie.pid, signal.SIGSTOP)
            await produce(kb.bootstrap_servers, src, [(e["id"].encode(), orjson.dumps(e)) for e in inputs[200:]])
            started = time.monotonic()
            async with running_host(cfg, app) as host:
                records = await reader.until(totals_reached(inputs), 30, what="every record's totals")
                took = time.monotonic() - started
                # (a tick closes the buckets the restored runtime reopened: rows within a second or so)
                await wait_until(lambda: sum(_counted(pg_url).values()) == len(inputs), 20,
                                 what="every event in the roll-up table")
                part = host.describe()[0]["scaleout"]["partitions"]["0"]
                assert part["restored_from"] is not None, "restored from the newest checkpoint, not started empty"
                # The zombie runs again: its connection is gone and the lock is the new owner's.
                os.kill(zombie.pid, signal.SIGCONT)
                zombie.stdin.write("go\n")
                zombie.stdin.flush()
                dropped = await asyncio.to_thread(zombie.stdout.readline)
                assert int(dropped) >= 1, "the zombie's event is refused"
                assert await asyncio.to_thread(zombie.wait, 30) == 0
            # Waited the grace, ended the zombie's session, went on with the same checkpoint.
            assert scaleout.SHARD_LOCK_GRACE_S <= took < scaleout.SHARD_LOCK_GRACE_S + 20
        finally:
            if zombie.poll() is None:
                os.kill(zombie.pid, signal.SIGCONT)
                zombie.kill()
                zombie.wait()
    events = [r.json()["event"] for r in records]
    check_running_totals(events, inputs)
    # The second host went on from the checkpoint (not from an older one, nor empty).
    assert min(e["count"] for e in events[first:]) > 200 // 5
    # Every event once in the roll-ups, the zombie's not at all.
    assert _counted(pg_url) == {f"k{i}": 60 for i in range(5)}
