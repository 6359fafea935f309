"""An unreadable newest snapshot falls back to the previous revision (never a crash loop)."""
from __future__ import annotations

import asyncio
import logging
import pickle
from pathlib import Path

from srota.engine import SiddhiManager
from srota.service.persistence import StateStore

APP = "@app:name('A') define stream S (k string); from S select k, count() as n group by k insert into Out;"


def _snapshot(n: int) -> bytes:
    rt = SiddhiManager().create_siddhi_app_runtime(APP)
    rt.start()
    for _ in range(n):
        rt.get_input_handler("S").send(["a"])
    data = rt.snapshot()
    rt.shutdown()
    return data


async def test_newest_unreadable_falls_back_to_previous(tmp_path: Path, caplog):
    store = StateStore(tmp_path / "state.db", revisions=3)
    await store.open()
    await store.save("A", _snapshot(2), {"k": {("t", 0): 2}})
    await store.save("A", pickle.dumps({"format": 1}), {"k": {("t", 0): 3}})  # an old pickle
    with caplog.at_level(logging.WARNING, logger="srota.service.persistence"):
        got = await store.load("A")
    assert got.revision == 1 and got.offsets == {"k": {("t", 0): 2}}
    assert "revision 2 cannot be restored" in caplog.text and "falling back" in caplog.text
    rt = SiddhiManager().create_siddhi_app_runtime(APP)
    out: list = []
    rt.add_callback("Out", out.extend)
    assert rt.restore(got.state) == []
    rt.start()
    rt.get_input_handler("S").send(["a"])
    assert out[-1].data == ("a", 3)
    rt.shutdown()
    await store.save("A", b"garbage", {})
    await store.save("A", b"more garbage", {})
    await store.save("A", b"\x92\x01", {})
    assert (await store.load("A")).state is None  # nothing readable: start empty, said in the log
    await store.close()


# ------------------------------------------------------------------ through the service host
def _spoil_newest(database: Path, app: str) -> int:
    import sqlite3

    with sqlite3.connect(database) as db:
        (revision,) = db.execute("SELECT MAX(revision) FROM srota_snapshots WHERE app = ?", (app,)).fetchone()
        db.execute("UPDATE srota_snapshots SET state = ? WHERE app = ? AND revision = ?", (b"\x00spoilt", app, revision))
    return int(revision)


async def test_kafka_state_falls_back_and_re_reads_from_the_older_snapshots_offsets(kafka_broker, tmp_path: Path):
    """Nothing between the two snapshots is lost: the source seeks to the older one's offsets."""
    import uuid

    import orjson

    from tests.integration.support import TopicReader, config, kafka_sink, kafka_source, produce, running_host

    kb = kafka_broker
    src, out = await kb.create_topic(), await kb.create_topic()
    app = f"""
    @app:name('Counted')
    {kafka_source(kb, src, f"g-{uuid.uuid4().hex[:8]}")}
    define stream In (n long);
    {kafka_sink(kb, out)}
    define stream Out (seen long);
    from In select count() as seen insert into Out;
    """
    cfg = config(tmp_path, persistence=True, interval_ms=3_600_000)
    async with TopicReader(kb.bootstrap_servers, out) as reader:
        async with running_host(cfg, app) as host:
            await produce(kb.bootstrap_servers, src, [orjson.dumps({"n": i}) for i in range(100)])
            await reader.until(lambda rs: any(r.json()["event"]["seen"] == 100 for r in rs), 20, what="100 counted")
            await host.snapshot()
            await produce(kb.bootstrap_servers, src, [orjson.dumps({"n": i}) for i in range(100, 200)])
            await reader.until(lambda rs: any(r.json()["event"]["seen"] == 200 for r in rs), 20, what="200 counted")
        _spoil_newest(tmp_path / "state.db", "Counted")  # the stop's snapshot, at offset 200
        async with running_host(cfg, app):
            await produce(kb.bootstrap_servers, src, [orjson.dumps({"n": 200})])
            records = await reader.until(lambda rs: any(r.json()["event"]["seen"] >= 201 for r in rs), 20,
                                         what="the count after the restart")
            await asyncio.sleep(0.5)  # anything counted twice would have come by now
    assert max(r.json()["event"]["seen"] for r in records) == 201


async def test_an_mqtt_app_refuses_an_older_snapshot_unless_accepted(mqtt_broker, tmp_path: Path, caplog):
    """An MQTT source acknowledged what came after the older snapshot: starting from it would
    silently miss those messages (before: it did), so the service refuses, or says so when told
    to accept."""
    import dataclasses
    import uuid

    import pytest
    from srota.service.host import ServiceHost
    from srota.service.persistence import StateUnusableError

    from tests.integration.support import config, running_host

    tag = uuid.uuid4().hex[:8]
    app = f"""
    @app:name('Sensors')
    @source(type='mqtt', url='{mqtt_broker.url}', topic='s/{tag}', quality.of.service='1', clean.session='false',
            client.id='sensors-{tag}', @map(type='json'))
    define stream In (n int);
    from In select count() as seen insert into Out;
    """
    cfg = config(tmp_path, persistence=True, interval_ms=3_600_000)
    async with running_host(cfg, app) as host:
        await host.snapshot()
    spoilt = _spoil_newest(tmp_path / "state.db", "Sensors")
    host = ServiceHost(cfg, app_texts=[app])
    with pytest.raises(StateUnusableError, match=f"revision {spoilt} cannot be restored.*older_snapshot: accept"):
        await host.start()
    await host.stop()
    accepting = dataclasses.replace(cfg, persistence=dataclasses.replace(cfg.persistence, older_snapshot="accept"))
    async with running_host(accepting, app) as host:
        assert host.apps["Sensors"].started
