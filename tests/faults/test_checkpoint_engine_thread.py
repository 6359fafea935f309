"""A scale-out checkpoint is never taken half-way through a chunk sent on the engine thread.

Found by the chaos soak (tests/soak: running sums that counted a record twice after a worker
was killed).  An app with a server-database store processes chunks on an engine thread, off the
event loop, and the partition's offsets are recorded once the chunk is in.  The periodic
checkpoint ran on the loop meanwhile: its snapshot held the chunk's records, its offsets did
not, so the partition's next owner processed them again on top of the restored state.
"""
from __future__ import annotations

import asyncio
import time
import urllib.parse
import uuid
from typing import Any

import orjson
import pytest

from tests.integration.support import kafka_source, produce, running_host, wait_until
from tests.service.test_scaleout import _scaled

pytestmark = pytest.mark.integration


async def test_a_checkpoint_waits_for_the_chunk_on_the_engine_thread(kafka_broker: Any, pg_url: str) -> None:
    kb = kafka_broker
    src = await kb.create_topic(partitions=1)
    p = urllib.parse.urlsplit(pg_url)
    app = f"""
    @app:name('Gate')
    {kafka_source(kb, src, f"g-{uuid.uuid4().hex[:8]}", **{"key.attribute": "id"})}
    define stream In (id string, n long);
    @store(type='rdbms', jdbc.url='jdbc:postgresql://{p.hostname}:{p.port}{p.path}', username='{p.username}',
           password='{p.password}')
    @PrimaryKey('id')
    define table Last (id string, n long);
    from In select id, n update or insert into Last on Last.id == id;
    """
    async with running_host(_scaled(interval_ms=3_600_000), app) as host:
        h = host.apps["Gate"]
        assert h._engine_thread is not None, "the app must run on an engine thread"
        await wait_until(lambda: 0 in h.partitions.by_partition, 30, what="partition 0 assigned")
        real_send = h._send
        inside = asyncio.Event()
        loop = asyncio.get_running_loop()

        def slow_send(b: Any, rows: Any) -> Any:
            out = real_send(b, rows)  # the records are in the runtime's state now
            loop.call_soon_threadsafe(inside.set)
            time.sleep(1.0)
            return out

        h._send = slow_send
        await produce(kb.bootstrap_servers, src, [(b"a", orjson.dumps({"id": "a", "n": 1}))])
        await asyncio.wait_for(inside.wait(), 30)
        await h.checkpoint_partitions({0})  # as the periodic checkpoint does, mid-chunk
        saved = h._info[0].offsets.get(src, 0)
        assert saved == 1, (f"a checkpoint whose snapshot holds the record saved offset {saved}: the next owner "
                            "would process the record again")
