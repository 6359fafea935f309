"""Scale-out in process: per-partition runtimes, Kafka checkpoints, restore and seek, revoke order.

The process-level tests (several ``srota run`` workers, SIGKILL) are in
tests/faults/test_scaleout_kill.py.
"""
from __future__ import annotations

import asyncio
import dataclasses
import itertools
import uuid
from typing import Any

import orjson
import pytest
from srota.engine import SiddhiManager
from srota.service.config import ScaleoutConfig
from srota.service.host import ServiceHost

from tests.integration.support import (
    TopicReader,
    check_running_totals,
    config,
    kafka_sink,
    kafka_source,
    produce,
    running_host,
    totals_reached,
    wait_until,
)

pytestmark = pytest.mark.integration

QUERY = "from In select id, sum(n) as total, count() as count group by id insert into Out;"


def _app(kb: Any, src: str, out: str, group: str, name: str = "Totals") -> str:
    return f"""
    @app:name('{name}')
    {kafka_source(kb, src, group, **{"batch.size": "100", "key.attribute": "id"})}
    define stream In (id string, n long);
    {kafka_sink(kb, out, key='{{id}}')}
    define stream Out (id string, total long, count long);
    {QUERY}
    """


def _scaled(interval_ms: int = 500, topic: str | None = None) -> Any:
    cfg = config()
    return dataclasses.replace(cfg, scaleout=ScaleoutConfig(
        partitioned=True, checkpoint_interval_ms=interval_ms,
        state_topic=topic or f"srota-state-{uuid.uuid4().hex[:8]}"))


def _keyed_app(kb: Any, src: str, name: str, body: str) -> str:
    """App ``name`` reading ``In (id string, n long)`` from ``src`` keyed by ``id``, then ``body``."""
    return f"""
    @app:name('{name}')
    {kafka_source(kb, src, f"g-{uuid.uuid4().hex[:8]}", **{"key.attribute": "id"})}
    define stream In (id string, n long);
    {body}
    """


def _inputs(n: int, keys: int) -> list[dict[str, Any]]:
    return [{"id": f"k{i % keys}", "n": (i * 7919) % 101} for i in range(n)]


async def test_two_workers_split_partitions_and_state_moves_on_rebalance(kafka_broker: Any) -> None:
    kb = kafka_broker
    src, out = await kb.create_topic(partitions=6), await kb.create_topic(partitions=6)
    group = f"g-{uuid.uuid4().hex[:8]}"
    cfg = _scaled()
    inputs = _inputs(3000, 24)
    first, second = inputs[:1500], inputs[1500:]
    async with TopicReader(kb.bootstrap_servers, out) as reader:
        async with running_host(cfg, _app(kb, src, out, group)) as one:
            await produce(kb.bootstrap_servers, src, [(e["id"].encode(), orjson.dumps(e)) for e in first])
            await reader.until(totals_reached(first), 30, what="the first half")
            app = one.apps["Totals"]
            assert sorted(app.partitions.by_partition) == list(range(6))
            await app.checkpoint_partitions(set(range(6)))
            before = dict(app.partitions.by_partition)
            # A second worker joins: the partitions are split, the state goes with them.
            async with running_host(cfg, _app(kb, src, out, group)) as two:
                await wait_until(lambda: two.apps["Totals"].partitions.by_partition, 30,
                                 what="the second worker to own partitions")
                owned_one = set(app.partitions.by_partition)
                owned_two = set(two.apps["Totals"].partitions.by_partition)
                assert owned_one and owned_two and not owned_one & owned_two
                # The partitions that stayed kept their runtimes (before: every partition was
                # dropped and restored from its checkpoint at every rebalance).
                assert all(app.partitions.by_partition[p] is before[p] for p in owned_one)
                described = two.describe()[0]["scaleout"]
                assert set(described["partitions"]) == {str(p) for p in owned_two}
                # The partitions the first worker gave up were checkpointed and restored here.
                assert any(i["restored_from"] for i in described["partitions"].values())
                metrics = two.metrics.render().decode()
                for p in owned_two:
                    assert f'srota_partition_owned{{app="Totals",partition="{p}"}} 1.0' in metrics
                    assert f'srota_partition_restore_seconds{{app="Totals",partition="{p}"}}' in metrics
                assert 'srota_checkpoint_bytes{app="Totals"' in one.metrics.render().decode()
                # The engine's counters add up over the partition runtimes.
                line = next(x for x in one.metrics.render().decode().splitlines()
                            if x.startswith('srota_stream_events_total{app="Totals",stream="In"}'))
                assert float(line.rsplit(" ", 1)[1]) >= 1500
                await produce(kb.bootstrap_servers, src, [(e["id"].encode(), orjson.dumps(e)) for e in second])
                records = await reader.until(totals_reached(inputs), 30, what="the final totals")
    final = check_running_totals([r.json()["event"] for r in records], inputs)
    assert final == _reference(inputs)


def _reference(inputs: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    runtime = SiddhiManager().create_siddhi_app_runtime(f"define stream In (id string, n long); {QUERY}")
    final: dict[str, tuple[int, int]] = {}
    runtime.add_callback("Out", lambda events: final.update({e.data[0]: (e.data[1], e.data[2]) for e in events}))
    runtime.start()
    for e in inputs:
        runtime.get_input_handler("In").send([e["id"], e["n"]])
    runtime.shutdown()
    return final


async def test_global_table_is_read_whole_by_every_worker_and_seen_by_every_partition(kafka_broker: Any) -> None:
    kb = kafka_broker
    src, owners, out = (await kb.create_topic(partitions=6), await kb.create_topic(partitions=2),
                        await kb.create_topic(partitions=1))
    group = f"g-{uuid.uuid4().hex[:8]}"
    keys = [f"k{i}" for i in range(24)]
    await produce(kb.bootstrap_servers, owners,
                  [(k.encode(), orjson.dumps({"id": k, "owner": f"owner-{k}"})) for k in keys])
    app = f"""
    @app:name('Owners')
    {kafka_source(kb, src, group, **{"key.attribute": "id"})}
    define stream In (id string, n long);
    {kafka_source(kb, owners, group + "-owners")}
    define stream OwnerUpdates (id string, owner string);
    @global @PrimaryKey('id')
    define table Owners (id string, owner string);
    {kafka_sink(kb, out)}
    define stream Out (id string, owner string, n long);
    from OwnerUpdates select * update or insert into Owners on Owners.id == id;
    from In join Owners on Owners.id == In.id select In.id as id, Owners.owner as owner, In.n as n insert into Out;
    """
    cfg = _scaled()
    inputs = [{"id": keys[i % len(keys)], "n": i} for i in range(600)]
    async with TopicReader(kb.bootstrap_servers, out) as reader:
        async with running_host(cfg, app) as one, running_host(cfg, app) as two:
            await wait_until(lambda: one.apps["Owners"].partitions.by_partition and
                             two.apps["Owners"].partitions.by_partition, 30, what="both workers to own partitions")
            await produce(kb.bootstrap_servers, src, [(e["id"].encode(), orjson.dumps(e)) for e in inputs])
            records = await reader.until(lambda rs: len(rs) >= len(inputs), 30, what="every joined output")
    got = sorted((e["id"], e["owner"], e["n"]) for e in (r.json()["event"] for r in records))
    assert got == sorted((e["id"], f"owner-{e['id']}", e["n"]) for e in inputs)


async def test_stateless_mqtt_app_shares_its_subscription_among_workers(mqtt_broker: Any, kafka_broker: Any) -> None:
    from srota import connectors

    kb = kafka_broker
    out = await kb.create_topic(partitions=1)
    topic = f"scale/{uuid.uuid4().hex[:8]}"
    app = f"""
    @app:name('Shared')
    @source(type='mqtt', url='{mqtt_broker.url}', topic='{topic}', shared.subscription='true', @map(type='json'))
    define stream In (id string, n long);
    {kafka_sink(kb, out)}
    define stream Out (id string, n long);
    from In[n >= 0] select id, n insert into Out;
    """
    cfg = _scaled()
    async with TopicReader(kb.bootstrap_servers, out) as reader:
        async with running_host(cfg, app) as one, running_host(cfg, app) as two:
            await asyncio.sleep(0.5)  # both subscriptions in place
            sink = connectors.create_sink("mqtt", {"url": mqtt_broker.url, "topic": topic}, name="publisher")
            await sink.connect()
            try:
                for start in range(0, 400, 50):
                    await sink.publish([(orjson.dumps({"id": f"k{i}", "n": i}), {}) for i in range(start, start + 50)])
                    await asyncio.sleep(0.02)
            finally:
                await sink.close()
            records = await reader.until(lambda rs: len(rs) >= 400, 30, what="every message once")
            taken = [h.metrics.source_messages.labels("Shared", "In", "mqtt")._value.get() for h in (one, two)]
    assert sorted(r.json()["event"]["n"] for r in records) == list(range(400))
    assert all(t > 0 for t in taken) and sum(taken) == 400, taken


async def test_stateful_mqtt_app_is_refused_with_several_workers(mqtt_broker: Any) -> None:
    from srota.grammar.errors import SiddhiAppCreationError

    app = f"""
    @app:name('MqttCounts')
    @source(type='mqtt', url='{mqtt_broker.url}', topic='x', @map(type='json'))
    define stream In (id string, n long);
    @info(name='counts') from In select id, count() as c group by id insert into Out;
    """
    host = ServiceHost(_scaled(), app_texts=[app])
    with pytest.raises(SiddhiAppCreationError, match="bridge the topic into Kafka"):
        await host.start()


async def test_sequence_numbers_are_refused_on_sinks_and_warned_of_on_the_source(kafka_broker: Any) -> None:
    """A kafka sink's sequence.id would be numbered by every worker on its own (a consumer
    dropping duplicates by number would drop the other workers' records): refused, also as a
    @distribution destination.  A source's seq.enabled loses what it saw when a partition
    moves: a warning."""
    from srota.grammar.errors import SiddhiAppCreationError
    from structlog.testing import capture_logs

    kb = kafka_broker
    src, out = await kb.create_topic(partitions=2), await kb.create_topic(partitions=2)
    plain = _app(kb, src, out, f"g-{uuid.uuid4().hex[:8]}")
    numbered = plain.replace(f"topic='{out}'", f"topic='{out}', sequence.id='relay'")
    distributed = plain.replace(f"@sink(type='kafka', topic='{out}', ", "@sink(type='kafka', ").replace(
        "@map(type='json', event.grouping.enabled='false'))",
        "@map(type='json', event.grouping.enabled='false'), @distribution(strategy='roundRobin', "
        f"@destination(topic='{out}'), @destination(topic='{out}', sequence.id='relay')))")
    for text in (numbered, distributed):
        host = ServiceHost(_scaled(), app_texts=[text])
        with pytest.raises(SiddhiAppCreationError, match=r"@sink of Out keeps state of its own .*lastSentSequenceNo.*sequence.id"):
            await host.start()
        await host.stop()
    with capture_logs() as logs:
        async with running_host(_scaled(), plain.replace("key.attribute='id'", "key.attribute='id', seq.enabled='true'")):
            pass
    assert any(e["event"].startswith("seq.enabled under scale-out") for e in logs)


async def test_a_checkpoint_that_cannot_be_restored_falls_back_to_the_one_before(kafka_broker: Any) -> None:
    from srota.service.scaleout import Checkpoint, StateTopic

    kb = kafka_broker
    src, out = await kb.create_topic(partitions=1), await kb.create_topic(partitions=1)
    group = f"g-{uuid.uuid4().hex[:8]}"
    cfg = _scaled(interval_ms=3_600_000)
    inputs = _inputs(300, 5)
    await produce(kb.bootstrap_servers, src, [(e["id"].encode(), orjson.dumps(e)) for e in inputs])
    # A good checkpoint covering the first 200 records, then a newer one that cannot be read.
    reference = SiddhiManager().create_siddhi_app_runtime(f"define stream In (id string, n long); {QUERY}")
    reference.start()
    reference.get_input_handler("In").send_rows([(e["id"], e["n"]) for e in inputs[:200]])
    state = StateTopic(cfg.scaleout.state_topic, kb.bootstrap_servers, {})
    await state.open([src])
    try:
        good = Checkpoint(0, reference.snapshot(), {src: 200})
        await state.save(good)
        await state.save(Checkpoint(0, b"not a snapshot", {src: 300}))
    finally:
        await state.close()
        reference.shutdown()
    async with TopicReader(kb.bootstrap_servers, out) as reader, running_host(cfg, _app(kb, src, out, group)) as host:
        records = await reader.until(totals_reached(inputs), 30, what="the totals from the older checkpoint on")
        assert host.describe()[0]["scaleout"]["partitions"]["0"]["restored_from"] == good.id
    # Only the records after the good checkpoint were processed, on top of its state.
    assert min(r.json()["event"]["count"] for r in records) > 200 // 5
    check_running_totals([r.json()["event"] for r in records], inputs)


async def test_co_partitioned_topics_share_a_partition_runtime(kafka_broker: Any) -> None:
    """Two topics in one topic.list: partition p of each goes to the same worker and runtime
    (the range assignor), so a key's records from both topics meet one state."""
    kb = kafka_broker
    a, b, out = (await kb.create_topic(partitions=3), await kb.create_topic(partitions=3),
                 await kb.create_topic(partitions=1))
    group = f"g-{uuid.uuid4().hex[:8]}"
    app = f"""
    @app:name('Both')
    {kafka_source(kb, f"{a},{b}", group, **{"key.attribute": "id"})}
    define stream In (id string, n long);
    {kafka_sink(kb, out)}
    define stream Out (id string, total long, count long);
    {QUERY}
    """
    cfg = _scaled()
    inputs = _inputs(1200, 12)
    async with TopicReader(kb.bootstrap_servers, out) as reader:
        async with running_host(cfg, app) as one, running_host(cfg, app) as two:
            await wait_until(lambda: one.apps["Both"].partitions.by_partition and
                             two.apps["Both"].partitions.by_partition, 30, what="both workers to own partitions")
            owned = [set(h.apps["Both"].partitions.by_partition) for h in (one, two)]
            assert not owned[0] & owned[1] and owned[0] | owned[1] == {0, 1, 2}
            # Each key's records alternate between the two topics (same key: same partition).
            await produce(kb.bootstrap_servers, a, [(e["id"].encode(), orjson.dumps(e)) for e in inputs[0::2]])
            await produce(kb.bootstrap_servers, b, [(e["id"].encode(), orjson.dumps(e)) for e in inputs[1::2]])
            records = await reader.until(totals_reached(inputs), 30, what="the totals over both topics")
    finals: dict[str, tuple[int, int]] = {}
    for r in records:
        e = r.json()["event"]
        if e["count"] >= finals.get(e["id"], (0, 0))[1]:
            finals[e["id"]] = (e["total"], e["count"])
    assert finals == _reference(inputs)


async def test_a_checkpoint_of_a_dropped_claim_is_not_written_without_an_epoch(kafka_broker: Any) -> None:
    """Chaos soak seed 77: a worker woken from SIGSTOP took a checkpoint, and while it waited
    for its outputs the partition was dropped (a store found the newer owner), which forgot the
    claim; the save then wrote it with no epoch, as a checkpoint from before epochs, which every
    reader takes as it is: the next owner restored it over the newer owner's work.  A checkpoint
    taken under a claim is now refused once that claim is gone."""
    from srota.service.scaleout import Checkpoint, FencedError, StateTopic

    kb = kafka_broker
    src = await kb.create_topic(partitions=1)
    topic = f"srota-state-{uuid.uuid4().hex[:8]}"
    old, reader = (StateTopic(topic, kb.bootstrap_servers, {}) for _ in range(2))
    for state in (old, reader):
        await state.open([src])
    try:
        epoch = await old.claim(0)
        await old.save(Checkpoint(0, b"owner", {src: 100}, epoch=epoch))
        taken = Checkpoint(0, b"zombie", {src: 200}, epoch=epoch)  # snapshot taken ...
        old.release(0)  # ... the partition dropped while the save waited
        with pytest.raises(FencedError, match="no longer this worker's"):
            await old.save(taken)
        latest = await reader.load(0)
        assert latest is not None and latest.state == b"owner"
    finally:
        for state in (old, reader):
            await state.close()


async def test_a_replaced_worker_cannot_overwrite_the_new_owners_checkpoint(kafka_broker: Any) -> None:
    """A zombie (a worker replaced while it was paused, still running) is fenced: its save
    after the new owner's claim is refused, and a save that raced the claim is skipped by
    readers (before: the newest checkpoint won, whoever wrote it)."""
    from srota.service.scaleout import Checkpoint, FencedError, StateTopic

    kb = kafka_broker
    src = await kb.create_topic(partitions=1)
    topic = f"srota-state-{uuid.uuid4().hex[:8]}"
    old, new, reader = (StateTopic(topic, kb.bootstrap_servers, {}) for _ in range(3))
    for state in (old, new, reader):
        await state.open([src])
    try:
        old_epoch = await old.claim(0)
        await old.save(Checkpoint(0, b"old owner", {src: 100}))
        new_epoch = await new.claim(0)
        assert new_epoch > old_epoch
        restored = await new.load(0)
        assert restored is not None and restored.offsets == {src: 100}
        # The old owner wakes up and checkpoints what it processed meanwhile: refused.
        with pytest.raises(FencedError, match="another worker claimed"):
            await old.save(Checkpoint(0, b"zombie", {src: 200}))
        await new.save(Checkpoint(0, b"new owner", {src: 150}))
        latest = await reader.load(0)
        assert latest is not None and (latest.state, latest.offsets, latest.epoch) == (b"new owner", {src: 150},
                                                                                      new_epoch)
        # A write that raced a claim (checked just before the claim landed, written after it).
        racer = StateTopic(topic, kb.bootstrap_servers, {})
        await racer.open([src])
        try:
            await racer.claim(0)
            await racer.save(Checkpoint(0, b"racer", {src: 160}))
            before_claim = (await reader.load(0)).id  # type: ignore[union-attr]
            claimed_at = await _end_offset(kb, topic)
            await new.claim(0)  # the racer is replaced ...

            async def checked_before_the_claim(partition: int, claim: list[int]) -> int:
                return claimed_at
            racer._check_claim = checked_before_the_claim  # type: ignore[method-assign]
            await racer.save(Checkpoint(0, b"raced", {src: 400}))  # ... and writes once more
        finally:
            await racer.close()
        after = await reader.load(0)
        assert after is not None and after.id == before_claim and after.state == b"racer"
        await new.save(Checkpoint(0, b"new owner again", {src: 170}))
        assert (await reader.load(0)).state == b"new owner again"  # type: ignore[union-attr]
    finally:
        for state in (old, new, reader):
            await state.close()


async def _end_offset(kb: Any, topic: str) -> int:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=kb.bootstrap_servers)
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        return int((await consumer.end_offsets([tp]))[tp])
    finally:
        await consumer.stop()


async def test_a_state_topic_that_stays_unreadable_stops_the_app_clearly(kafka_broker: Any, monkeypatch: Any) -> None:
    """Restoring an assigned partition is retried for scaleout.restore_timeout, then the app
    stops with an error and consumes nothing (before: retried forever, silently to the operator)."""
    from aiokafka.errors import KafkaConnectionError
    from srota.service.scaleout import StateTopic

    kb = kafka_broker
    src, out = await kb.create_topic(partitions=1), await kb.create_topic(partitions=1)
    await produce(kb.bootstrap_servers, src, [(b"k0", orjson.dumps({"id": "k0", "n": 1}))])

    async def unreadable(self: StateTopic, partition: int, exclude: frozenset[str] = frozenset()) -> None:
        raise KafkaConnectionError("state topic leader unavailable (test)")
    monkeypatch.setattr(StateTopic, "load", unreadable)
    cfg = _scaled()
    cfg = dataclasses.replace(cfg, scaleout=dataclasses.replace(cfg.scaleout, restore_timeout_ms=1500))
    host = ServiceHost(cfg, app_texts=[_app(kb, src, out, f"g-{uuid.uuid4().hex[:8]}")])
    await host.start()
    try:
        await wait_until(lambda: host.failure is not None, 30, what="the app to stop")
        assert "cannot read the state of partition 0" in host.failure  # type: ignore[operator]
        assert "restart" in host.failure  # type: ignore[operator]
        assert host.apps["Totals"].consumed == {}
    finally:
        await host.stop()


async def test_triggers_fire_once_per_app_not_once_per_partition(kafka_broker: Any) -> None:
    """Four partition runtimes, one periodic and one start trigger: each fires once per app
    (before: once per partition runtime, four ticks per period and four start events)."""
    kb = kafka_broker
    src, out = await kb.create_topic(partitions=4), await kb.create_topic(partitions=1)
    app = _keyed_app(kb, src, "Ticks", f"""
    define trigger Tick at every 400 millisec;
    define trigger Boot at 'start';
    {kafka_sink(kb, out)}
    define stream Out (what string, t long);
    from Tick select 'tick' as what, triggered_time as t insert into Out;
    from Boot select 'start' as what, triggered_time as t insert into Out;
    """)
    async with TopicReader(kb.bootstrap_servers, out) as reader:
        async with running_host(_scaled(), app) as host:
            await wait_until(lambda: len(host.apps["Ticks"].partitions.by_partition) == 4, 30,
                             what="four partition runtimes")
            await asyncio.sleep(2.0)
        records = await reader.until(lambda rs: len(rs) >= 2, 10, what="the ticks")
    events = [r.json()["event"] for r in records]
    ticks = [e["t"] for e in events if e["what"] == "tick"]
    assert [e["what"] for e in events].count("start") == 1, events
    # One tick per period (a tick carries its scheduled time), not one per partition runtime
    # a few milliseconds apart; counted by spacing, so a slow machine cannot make it flaky.
    ticks.sort()
    assert len(ticks) >= 2, ticks
    assert all(b - a >= 400 for a, b in itertools.pairwise(ticks)), ticks


async def test_on_demand_queries_answer_as_one_process_would(kafka_broker: Any) -> None:
    """Aggregates, group by, order by and limit over every partition's rows (before: each
    partition's answer, concatenated: four 'totals' rows and four top-2 lists)."""
    kb = kafka_broker
    src = await kb.create_topic(partitions=4)
    app = _keyed_app(kb, src, "Tables", """
    define table Seen (id string, n long);
    from In select id, n insert into Seen;
    """)
    inputs = _inputs(400, 12)
    async with running_host(_scaled(), app) as host:
        runtimes = host.apps["Tables"].partitions
        await produce(kb.bootstrap_servers, src, [(e["id"].encode(), orjson.dumps(e)) for e in inputs])
        await wait_until(lambda: len(runtimes.by_partition) == 4 and
                         sum(len(rt.query("from Seen select id")) for rt in runtimes.by_partition.values()) == 400,
                         30, what="every row in the partitions' tables")
        totals = runtimes.query("from Seen select count() as rows, sum(n) as total")
        assert [e.data for e in totals] == [(400, sum(e["n"] for e in inputs))]
        by_key: dict[str, int] = {}
        for e in inputs:
            by_key[e["id"]] = by_key.get(e["id"], 0) + e["n"]
        top = runtimes.query("from Seen select id, sum(n) as total group by id order by total desc limit 2")
        assert [e.data for e in top] == sorted(by_key.items(), key=lambda kv: -kv[1])[:2]
        assert len(runtimes.query("from Seen on n > 50 select id, n")) == sum(e["n"] > 50 for e in inputs)
        with pytest.raises(ValueError, match="cannot know the row's partition"):
            runtimes.query("select 'k0' as id, 1L as n insert into Seen")
        runtimes.query("delete Seen on n > 50")
        assert runtimes.query("from Seen select count() as rows")[0].data == (sum(e["n"] <= 50 for e in inputs),)


async def test_errors_replay_through_the_partition_they_belong_to(kafka_broker: Any) -> None:
    """A stored payload goes back to the source topic keyed by key.attribute: its key's
    partition runtime counts it on top of the key's state (before: refused under scale-out)."""
    from srota.engine.errorstore import MAPPING, entry_for

    kb = kafka_broker
    src, out = await kb.create_topic(partitions=4), await kb.create_topic(partitions=1)
    inputs = _inputs(200, 8)
    async with TopicReader(kb.bootstrap_servers, out) as reader, \
            running_host(_scaled(), _app(kb, src, out, f"g-{uuid.uuid4().hex[:8]}")) as host:
        await produce(kb.bootstrap_servers, src, [(e["id"].encode(), orjson.dumps(e)) for e in inputs])
        await reader.until(totals_reached(inputs), 30, what="the totals")
        app = host.apps["Totals"]
        payload = orjson.dumps({"id": "k3", "n": 1000})
        entry = entry_for("Totals", "In", MAPPING, "did not map (before a fix)", [], payload)
        assert await app.replay(entry) == 1
        replayed = [*inputs, {"id": "k3", "n": 1000}]
        records = await reader.until(totals_reached(replayed), 30, what="the replayed payload counted")
        with pytest.raises(ValueError, match="only failed outputs and payloads"):
            await app.replay(entry_for("Totals", "Out", "stream", "failed inside", [], None))
    check_running_totals([r.json()["event"] for r in records], replayed)


async def test_state_topic_checks_fetch_only_what_they_read(kafka_broker: Any, monkeypatch: Any) -> None:
    """Found by the chaos soak (workers' memory grew by ~10 MB a minute with no fault at all):
    each claim check assigned the state topic's consumer to the partition, which reset its
    position to the earliest record, and the consumer fetched the partition's oldest
    megabytes before the check's own seek; the same old checkpoints were fetched again, and
    allocated again, at every checkpoint of every partition.  A check reads only what was
    appended since the last one."""
    import random

    import aiokafka.consumer.fetcher as fetcher
    from srota.service.scaleout import Checkpoint, StateTopic

    kb = kafka_broker
    src = await kb.create_topic(partitions=2)
    state = StateTopic(f"srota-state-{uuid.uuid4().hex[:8]}", kb.bootstrap_servers, {})
    await state.open([src])
    fetched: list[int] = []
    real_records = fetcher.MemoryRecords

    def counted(data: bytes) -> Any:
        fetched.append(len(data))
        return real_records(data)

    try:
        for p in (0, 1):
            await state.claim(p)
        history = random.Random(7).randbytes(50_000)  # 50 kB a checkpoint: random bytes do not compress
        for n in range(20):  # a history of checkpoints in both partitions
            for p in (0, 1):
                await state.save(Checkpoint(p, history + n.to_bytes(2, "big"), {src: n}))
        monkeypatch.setattr(fetcher, "MemoryRecords", counted)
        for n in range(20, 30):  # checkpoints as a worker owning both partitions writes them, in turn
            for p in (0, 1):
                await state.save(Checkpoint(p, history + n.to_bytes(2, "big"), {src: n}))
                await asyncio.sleep(0.2)  # what the consumer fetches on its own meanwhile counts too
        # Each check reads at most the checkpoint written since the last one.
        assert sum(fetched) < 20 * 60_000, f"{sum(fetched)} bytes fetched in {len(fetched)} fetches for 20 saves"
        newest = await state.load(0)
        assert newest is not None and newest.offsets == {src: 29}
    finally:
        await state.close()


async def test_a_partition_timer_that_meets_a_newer_owner_drops_the_partition_at_once(kafka_broker: Any) -> None:
    """A timer of a partition runtime (a window's expiry, a roll-up) whose store found a newer
    owner of the partition raised StoreReplacedError on the scheduler's thread: it was logged,
    and the partition ran on here, its timers still emitting, until its next checkpoint (every
    10 s by default).  Now the partition is dropped at once, as a chunk meeting the newer owner
    drops it; a store outage stops the app, as in one process; any other failure is logged and
    the timers go on."""
    from srota.engine.stores.database import StoreReplacedError, StoreUnavailableError

    kb = kafka_broker
    src = await kb.create_topic(partitions=2)
    app = _keyed_app(kb, src, "Timers", "from In#window.time(1 min) select id, sum(n) as total group by id insert into Out;")
    async with running_host(_scaled(interval_ms=600_000), app) as host:
        app_host = host.apps["Timers"]
        runtimes = app_host.partitions.by_partition
        await wait_until(lambda: len(runtimes) == 2, 30, what="two partition runtimes")
        one, other = runtimes[1], runtimes[0]
        ran: list[int] = []

        def failing(at: int) -> None:
            raise ValueError("a timer's own bug")

        def replaced(at: int) -> None:
            raise StoreReplacedError("table 'T': partition 1 was claimed by another worker (epoch 7)")

        def outage(at: int) -> None:
            raise StoreUnavailableError("aggregation 'A': the database stayed unreachable for more than 30 s")

        scheduler = one.context.scheduler
        scheduler.schedule(one.context.clock.now(), failing)
        scheduler.schedule(one.context.clock.now() + 50, ran.append)
        await wait_until(lambda: ran, 5, what="the timer after the failing one")
        assert runtimes.get(1) is one and not app_host.failed
        scheduler.schedule(one.context.clock.now(), replaced)
        await wait_until(lambda: 1 not in runtimes, 5, what="partition 1 to be dropped")
        assert runtimes.get(0) is other and not app_host.failed
        other.context.scheduler.schedule(other.context.clock.now(), outage)
        await wait_until(lambda: app_host.failed, 5, what="the app to stop")
        assert "stayed unreachable" in app_host.failed
