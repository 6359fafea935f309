"""A rebalance while a chunk is held on the engine thread (a database outage): counted once.

Found by the chaos soak (tests/soak: running sums, windows and roll-ups that counted every
record of one chunk twice, at a PostgreSQL stop).  The chunk outlasted the revocation's wait
for it (half the rebalance timeout), so the revocation did not run; the assignment then gave
the partition back to the same worker, which kept its runtime (state with the chunk in it) but
sought the partition to before the chunk, still in flight: once done, it was delivered again.
Now the assignment waits for the chunk in flight, and a runtime whose revocation did not run is
kept only if no other worker claimed its partition meanwhile.
"""
from __future__ import annotations

import asyncio
import time
import urllib.parse
import uuid
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from srota.engine.stores.database import Database, parse_url

from tests.integration.support import kafka_source, produce, running_host, wait_until
from tests.service.test_scaleout import _scaled

pytestmark = pytest.mark.integration


async def test_a_chunk_held_through_a_rebalance_is_counted_once(kafka_broker: Any, pg_url: str) -> None:
    kb = kafka_broker
    src, other = await kb.create_topic(partitions=1), await kb.create_topic()
    group = f"g-{uuid.uuid4().hex[:8]}"
    p = urllib.parse.urlsplit(pg_url)
    app = f"""
    @app:name('Held')
    {kafka_source(kb, src, group, **{"key.attribute": "id"})}
    define stream In (id string, n long);
    @store(type='rdbms', jdbc.url='jdbc:postgresql://{p.hostname}:{p.port}{p.path}', username='{p.username}',
           password='{p.password}')
    @PrimaryKey('id')
    define table Totals (id string, total long);
    from In select id, sum(n) as total group by id update or insert into Totals on Totals.id == id;
    """
    member = None
    async with running_host(_scaled(interval_ms=3_600_000), app) as host:
        h = host.apps["Held"]
        await wait_until(lambda: 0 in h.partitions.by_partition, 30, what="partition 0 assigned")
        real_send = h._send
        inside = asyncio.Event()
        loop = asyncio.get_running_loop()

        def held_send(b: Any, rows: Any) -> Any:
            out = real_send(b, rows)  # in the runtime's state now
            loop.call_soon_threadsafe(inside.set)
            time.sleep(4.0)  # held past the revocation's wait, as by a database outage
            return out

        h._send = held_send
        try:
            await produce(kb.bootstrap_servers, src, [(b"a", orjson.dumps({"id": "a", "n": 1}))])
            await asyncio.wait_for(inside.wait(), 30)
            # Another member joins the group (for another topic): partition 0 stays with this worker.
            member = AIOKafkaConsumer(other, bootstrap_servers=kb.bootstrap_servers, group_id=group,
                                      session_timeout_ms=2000, heartbeat_interval_ms=500, rebalance_timeout_ms=3000,
                                      partition_assignment_strategy=(RangePartitionAssignor,))
            await member.start()
            await asyncio.sleep(6.0)
            h._send = real_send
            await asyncio.sleep(3.0)  # a redelivery would have been processed by now
        finally:
            if member is not None:
                await member.stop()
    db = Database(parse_url(pg_url), "test")
    try:
        totals = dict(db.run(lambda cur: (cur.execute("SELECT id, total FROM Totals"), cur.fetchall())[1]))
    finally:
        db.close()
    assert totals == {"a": 1}, "the held chunk was processed twice"
