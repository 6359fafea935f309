"""A partition restored while the rest of its assignment is still restoring is checkpointed
with its offsets, or not at all.

Found by the chaos soak (seed 66: running sums of partitions 0 and 1 counted 23-32 records
twice).  Restores within one assignment run at once, and a restored partition's runtime
was in place before its offsets were recorded, which happened only once every restore of the
assignment was done.  A periodic checkpoint in between saved the restored state with no
offsets; the partition's next owner restored that state and started at the group's
committed offset, behind it, and processed those records again.
"""
from __future__ import annotations

import asyncio
import uuid
from typing import Any

import orjson
import pytest
from aiokafka.partitioner import murmur2

from tests.integration.support import kafka_source, produce, running_host, wait_until
from tests.service.test_scaleout import _scaled

pytestmark = pytest.mark.integration


def _key_in(partition: int, partitions: int) -> bytes:
    """A key the default partitioner sends to ``partition``."""
    for i in range(1000):
        key = f"k{i}".encode()
        if (murmur2(key) & 0x7FFFFFFF) % partitions == partition:
            return key
    raise AssertionError("no key found")


async def test_a_checkpoint_during_the_assignments_other_restores_keeps_the_offsets(kafka_broker: Any) -> None:
    kb = kafka_broker
    src = await kb.create_topic(partitions=2)
    app = f"""
    @app:name('Midway')
    {kafka_source(kb, src, f"g-{uuid.uuid4().hex[:8]}", **{"key.attribute": "id"})}
    define stream In (id string, n long);
    from In select id, sum(n) as total group by id insert into Totals;
    """
    async with running_host(_scaled(interval_ms=3_600_000), app) as host:
        h = host.apps["Midway"]
        await wait_until(lambda: {0, 1} <= set(h.partitions.by_partition), 30, what="both partitions assigned")
        key = _key_in(0, 2)
        await produce(kb.bootstrap_servers, src, [(key, orjson.dumps({"id": key.decode(), "n": n}))
                                                  for n in range(1, 6)])
        await wait_until(lambda: h._consumed.get((src, 0)) == 5, 30, what="the records consumed")
        await h.checkpoint_partitions({0, 1})
        assert h._info[0].offsets == {src: 5}

        # The partitions move and come back: partition 1's restore waits (for its previous
        # owner's locks, say) while partition 0's is done.
        h._forget({0, 1})
        real_restore = h._restore
        release = asyncio.Event()

        async def restore(p: int) -> Any:
            if p == 1:
                await release.wait()
            return await real_restore(p)

        h._restore = restore  # type: ignore[method-assign]
        assignment = asyncio.create_task(h._assign({(src, 0), (src, 1)}))
        try:
            await wait_until(lambda: 0 in h.partitions.by_partition, 30, what="partition 0 restored")
            # The periodic checkpoint, while partition 1 still restores.
            await h.checkpoint_partitions(set(h.partitions.by_partition), skip_unchanged=True)
        finally:
            release.set()
        starts = await assignment
        assert starts.get((src, 0)) == 5
        newest = await h._state.load(0)
        assert newest is not None and newest.offsets == {src: 5}, (
            f"partition 0's newest checkpoint has offsets {newest and newest.offsets}: its next owner would "
            "process its records again on top of its restored state")
