"""A Kafka app held at a breakpoint through the admin API: the event loop goes on, nothing is
committed past the held chunk, and after a hold longer than the consumer's session timeout
every record comes out once."""
from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from tests.integration.support import (
    committed,
    config,
    kafka_sink,
    kafka_source,
    produce,
    read_topic,
    running_host,
    wait_until,
)

pytestmark = pytest.mark.integration


async def test_a_breakpoint_holds_the_app_not_the_service(kafka_broker: Any, tmp_path: Path) -> None:
    kb = kafka_broker
    src, out = await kb.create_topic(partitions=1), await kb.create_topic(partitions=1)
    group = f"g-{uuid.uuid4().hex[:8]}"
    app = f"""@app:name('held')
{kafka_source(kb, src, group)}
define stream In (id string, n long);
{kafka_sink(kb, out)}
define stream Out (id string, n long);
@info(name='copy') from In select id, n insert into Out;
"""
    async with running_host(config(tmp_path, http=True), app) as host, aiohttp.ClientSession() as http:
        base = f"http://127.0.0.1:{host.admin.port}/apps/held"
        async with http.post(f"{base}/debug") as r:
            assert r.status == 200
        async with http.put(f"{base}/debug/breakpoints/copy/in") as r:
            assert (await r.json())["breakpoints"] == [{"query": "copy", "terminal": "in"}]
        async with http.put(f"{base}/debug/breakpoints/nope/in") as r:
            assert r.status == 404 and "queries: copy" in (await r.json())["error"]

        await produce(kb.bootstrap_servers, src, [orjson.dumps({"id": f"e{i}", "n": i}) for i in range(20)])

        async def held() -> Any:
            async with http.get(f"{base}/debug") as r:
                return (await r.json())["held"]

        stop = await wait_until(held, 30, what="the breakpoint to hold a chunk")
        assert stop["query"] == "copy" and stop["terminal"] == "in" and stop["events"]
        # the hold outlasts the consumer's session timeout (2 s in the fixtures); meanwhile the
        # loop serves the admin API at once and nothing is committed past the held chunk
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            t = time.monotonic()
            async with http.get(f"http://127.0.0.1:{host.admin.port}/health") as r:
                assert r.status == 200
            assert time.monotonic() - t < 0.5
            await asyncio.sleep(0.5)
        offsets = await committed(kb.bootstrap_servers, group, src, 1)
        assert offsets[0] is None or offsets[0] == 0
        async with http.get(f"{base}/queries/copy/state") as r:
            assert r.status == 200
        async with http.delete(f"{base}/debug/breakpoints/copy/in") as r:
            assert r.status == 200
        async with http.post(f"{base}/debug/play") as r:
            assert r.status == 200
        records = await read_topic(kb.bootstrap_servers, out, 20)
        ids = [orjson.loads(r.value)["event"]["id"] for r in records]
        assert sorted(ids, key=lambda x: int(x[1:])) == [f"e{i}" for i in range(20)]  # each once
        await wait_until(lambda: _committed_all(kb, group, src), 30, what="the commit after the hold")


async def _committed_all(kb: Any, group: str, topic: str) -> bool:
    return (await committed(kb.bootstrap_servers, group, topic, 1))[0] == 20


async def test_pause_resume_and_statistics_through_the_admin_api(kafka_broker: Any, tmp_path: Path) -> None:
    kb = kafka_broker
    src = await kb.create_topic(partitions=1)
    app = f"""@app:name('counted')
{kafka_source(kb, src, f"g-{uuid.uuid4().hex[:8]}")}
define stream In (id string, n long);
@info(name='big') from In[n > 4] select id insert into Big;
"""
    async with running_host(config(tmp_path, http=True), app) as host, aiohttp.ClientSession() as http:
        base = f"http://127.0.0.1:{host.admin.port}/apps/counted"
        async with http.get(f"{base}/statistics") as r:
            assert r.status == 404
        async with http.put(f"{base}/statistics", data=orjson.dumps({"level": "basic"})) as r:
            assert r.status == 200
        async with http.post(f"{base}/pause") as r:
            assert (await r.json()) == {"paused": True}
        await produce(kb.bootstrap_servers, src, [orjson.dumps({"id": f"e{i}", "n": i}) for i in range(10)])
        await asyncio.sleep(1.0)
        runtime = host.apps["counted"].runtime
        assert runtime.context.junctions["In"].events_in == 0  # held at the app's entry
        async with http.post(f"{base}/resume") as r:
            assert (await r.json()) == {"paused": False}
        await wait_until(lambda: runtime.context.junctions["In"].events_in == 10, 30, what="the events")

        async def report() -> Any:
            async with http.get(f"{base}/statistics") as r:
                return await r.json()

        got = await report()
        assert got["queries"]["big"]["events_in"] == 10 and got["queries"]["big"]["events_out"] == 5
        async with http.get(f"http://127.0.0.1:{host.admin.port}/metrics") as r:
            text = await r.text()
        assert 'srota_statistics_query_events_in_total{app="counted",query="big"} 10.0' in text


async def test_an_mqtt_app_held_past_its_keepalive_loses_and_doubles_nothing(mqtt_broker: Any,
                                                                             tmp_path: Path) -> None:
    from tests.integration.test_service_mqtt import _mqtt_options, _publish_mqtt

    prefix = f"hold-{uuid.uuid4().hex[:8]}"
    app = f"""@app:name('mqttHeld')
@source(type='mqtt', {_mqtt_options(mqtt_broker, topic=f'{prefix}/in', **{'quality.of.service': '1', 'keep.alive': '1'})},
        @map(type='json'))
define stream In (id string, n long);
@info(name='copy') from In select id, n insert into Out;
"""
    async with running_host(config(tmp_path, http=True), app) as host, aiohttp.ClientSession() as http:
        got: list[Any] = []
        host.apps["mqttHeld"].runtime.add_callback("Out", lambda evs: got.extend(e.data[0] for e in evs))
        base = f"http://127.0.0.1:{host.admin.port}/apps/mqttHeld"
        async with http.post(f"{base}/debug") as r:
            assert r.status == 200
        async with http.put(f"{base}/debug/breakpoints/copy/in") as r:
            assert r.status == 200
        await _publish_mqtt(mqtt_broker, [(f"{prefix}/in", orjson.dumps({"id": f"m{i}", "n": i})) for i in range(10)],
                            **{"quality.of.service": "1"})

        async def held() -> Any:
            async with http.get(f"{base}/debug") as r:
                return (await r.json())["held"]

        await wait_until(held, 30, what="the breakpoint to hold a chunk")
        await asyncio.sleep(3.5)  # several keep-alive periods (1 s): the client must stay connected
        async with http.get(f"http://127.0.0.1:{host.admin.port}/health") as r:
            assert r.status == 200
        async with http.delete(f"{base}/debug") as r:  # detach: the held chunk goes on
            assert r.status == 200
        await wait_until(lambda: len(got) >= 10, 30, what="every MQTT message after the hold")
        await asyncio.sleep(0.5)
    assert sorted(got, key=lambda x: int(x[1:])) == [f"m{i}" for i in range(10)]


async def test_held_events_stream_to_a_browser_as_server_sent_events(tmp_path: Path) -> None:
    app = """@app:name('sse')
define stream In (id string, n long);
@info(name='copy') from In select id, n insert into Out;
"""
    async with running_host(config(tmp_path, http=True), app) as host, aiohttp.ClientSession() as http:
        base = f"http://127.0.0.1:{host.admin.port}/apps/sse"
        await (await http.post(f"{base}/debug")).release()
        await (await http.put(f"{base}/debug/breakpoints/copy/out")).release()
        runtime = host.apps["sse"].runtime
        feeder = asyncio.get_running_loop().run_in_executor(
            None, lambda: runtime.get_input_handler("In").send_rows([("x", 1), ("y", 2)]))
        async with http.get(f"{base}/debug/events") as stream:
            assert stream.headers["Content-Type"].startswith("text/event-stream")
            lines = []
            while not any(line.startswith(b"data: ") for line in lines):
                lines.append(await asyncio.wait_for(stream.content.readline(), 10))
        event = orjson.loads(next(line for line in lines if line.startswith(b"data: "))[6:])
        assert b"event: held\n" in lines
        assert event["query"] == "copy" and event["terminal"] == "out"
        assert [e["data"] for e in event["events"]] == [["x", 1], ["y", 2]]
        await (await http.post(f"{base}/debug/play")).release()
        await asyncio.wait_for(feeder, 10)
