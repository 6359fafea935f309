"""A second replica joins the consumer group in the middle of a stream, and later leaves.

Both rebalances move partitions between two running service hosts.  Before partitions are
revoked, the Kafka source stops delivering and the host flushes the outputs of what it
processed and commits it, so the next owner starts exactly there: every input is processed
once, by one replica.  Each replica keeps its own count per key (state does not move with a
partition, as in Siddhi), so the counts over both replicas add up to the inputs.
"""
from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaProducer

from tests.integration.support import (
    TopicReader,
    config,
    kafka_sink,
    kafka_source,
    running_host,
    wait_until,
)

pytestmark = pytest.mark.integration

KEYS = 12
PARTITIONS = 4
# Outputs take a second to be acknowledged, so at any moment some processed chunks are not
# committed yet: what a rebalance must not hand to the next owner.
SLOW_FLUSH = {"optional.configuration": "linger.ms:1000"}


def _app(kb: Any, replica: str, src: str, group: str, seen: str, counts: str) -> str:
    return f"""
    @app:name('Counts')
    {kafka_source(kb, src, group, **{"batch.size": "50"})}
    define stream In (id string, n long);

    {kafka_sink(kb, seen, **SLOW_FLUSH)}
    define stream Seen (replica string, n long);

    {kafka_sink(kb, counts, key='{{id}}', **SLOW_FLUSH)}
    define stream Counts (replica string, id string, count long);

    from In select '{replica}' as replica, n insert into Seen;
    from In select '{replica}' as replica, id, count() as count group by id insert into Counts;
    """


@pytest.mark.parametrize("persistence", [False, True], ids=["no-persistence", "persistence"])
async def test_second_replica_joins_and_leaves_mid_stream(kafka_broker: Any, tmp_path: Path, persistence: bool) -> None:
    """With persistence, commits follow saved snapshots (decision 12): before a revocation each
    replica saves a snapshot and commits it, so the next owner still starts where it stopped."""
    kb = kafka_broker
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    cfg_a = config(tmp_path / "a", persistence=persistence)
    cfg_b = config(tmp_path / "b", persistence=persistence)
    src = await kb.create_topic(partitions=PARTITIONS)
    seen, counts = await kb.create_topic(), await kb.create_topic()
    group = f"g-{uuid.uuid4().hex[:8]}"
    inputs: list[dict[str, Any]] = []
    stop = asyncio.Event()
    producer = AIOKafkaProducer(bootstrap_servers=kb.bootstrap_servers, acks="all")
    await producer.start()

    async def produce() -> None:
        """A steady stream, 50 records every 50 ms, until told to stop."""
        while not stop.is_set():
            batch = [{"id": f"k{i % KEYS}", "n": i} for i in range(len(inputs), len(inputs) + 50)]
            await asyncio.gather(*[await producer.send(src, orjson.dumps(e), key=e["id"].encode()) for e in batch])
            inputs.extend(batch)
            await asyncio.sleep(0.05)

    def replicas(records: list[Any]) -> Counter[str]:
        return Counter(r.json()["event"]["replica"] for r in records)

    try:
        async with TopicReader(kb.bootstrap_servers, seen) as seen_reader, \
                running_host(cfg_a, _app(kb, "A", src, group, seen, counts)) as a:
            stream = asyncio.create_task(produce())
            await seen_reader.until(lambda rs: len(rs) >= 100, what="replica A at work")
            async with running_host(cfg_b, _app(kb, "B", src, group, seen, counts)) as b:
                # B got partitions (A gave some up in the rebalance) and processes them.
                await seen_reader.until(lambda rs: replicas(rs)["B"] >= 100, what="replica B at work")
                assert b.apps["Counts"].sources[0].source.assignment()
            # B left cleanly (a second rebalance); A owns every partition again and goes on.
            source_a = a.apps["Counts"].sources[0].source
            await wait_until(lambda: len(source_a.assignment()) == PARTITIONS, 20, what="A to own every partition")
            after = len(inputs)
            await seen_reader.until(lambda rs: len(rs) >= after + 100, what="A at work after B left")
            stop.set()
            await stream
            records = await seen_reader.until(lambda rs: {r.json()["event"]["n"] for r in rs} >= set(range(len(inputs))),
                                              60, what="every input")
        async with TopicReader(kb.bootstrap_servers, counts) as counts_reader:
            count_records = await counts_reader.until(lambda rs: True)
    finally:
        stop.set()
        await producer.stop()

    ns = Counter(r.json()["event"]["n"] for r in records)
    assert set(ns) == set(range(len(inputs))), "inputs lost"
    assert [n for n, c in ns.items() if c > 1] == [], "inputs processed twice across the rebalances"
    by_replica = replicas(records)
    assert by_replica["A"] > 0 and by_replica["B"] > 0
    # Each replica's last count per key is what it consumed of that key; together: every input.
    final: dict[tuple[str, str], int] = {}
    for r in count_records:
        e = r.json()["event"]
        final[(e["replica"], e["id"])] = max(final.get((e["replica"], e["id"]), 0), e["count"])
    per_key: Counter[str] = Counter()
    for (_replica, key), count in final.items():
        per_key[key] += count
    assert per_key == Counter(e["id"] for e in inputs)
