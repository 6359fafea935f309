"""An MQTT QoS 1 source across a SIGKILL and a SIGTERM: at least once, nothing lost.

``srota run`` relays a stream from one Mosquitto topic to another, with a persistent session
(``clean.session='false'``, a stable ``client.id``).  The source acknowledges a message only
once the output it caused is published, so the messages the client had received but not
processed when the process died (or was stopped) are sent again by the broker after the
restart.  Every input must come out at least once.
"""
from __future__ import annotations

import asyncio
import signal
import uuid
from pathlib import Path
from typing import Any

import aiomqtt
import orjson
import pytest

from tests.conftest import free_port
from tests.integration.support import SrotaProcess, wait_until

pytestmark = pytest.mark.integration

N = 3000


async def test_qos1_source_loses_nothing_across_a_kill_and_a_stop(mqtt_broker: Any, tmp_path: Path) -> None:
    mb = mqtt_broker
    tag = uuid.uuid4().hex[:8]
    src, out = f"in/{tag}", f"out/{tag}"
    app = f"""
    @app:name('Relay')
    @source(type='mqtt', url='{mb.url}', topic='{src}', quality.of.service='1', clean.session='false',
            client.id='relay-{tag}', @map(type='json'))
    define stream In (n int);
    @sink(type='mqtt', url='{mb.url}', topic='{out}', quality.of.service='1', @map(type='json'))
    define stream Out (n int);
    from In select n insert into Out;
    """
    srota = SrotaProcess(tmp_path, app, {"shutdown": {"timeout": "20 sec"}}, free_port())
    seen: list[int] = []

    async def collect(client: aiomqtt.Client) -> None:
        async for m in client.messages:
            body = orjson.loads(m.payload)
            # Siddhi's JSON sink: one event is an object, a chunk of several an array of them.
            seen.extend(item["event"]["n"] for item in (body if isinstance(body, list) else [body]))

    async def publish(client: aiomqtt.Client, start: int, stop: int) -> None:
        for i in range(start, stop):
            await client.publish(src, orjson.dumps({"event": {"n": i}}), qos=1)
            if i % 100 == 99:
                await asyncio.sleep(0.03)  # about 3,000 messages a second

    async with aiomqtt.Client(mb.host, mb.port, identifier=f"reader-{tag}") as reader, \
            aiomqtt.Client(mb.host, mb.port, identifier=f"writer-{tag}") as writer:
        await reader.subscribe(out, qos=1)
        collecting = asyncio.create_task(collect(reader))
        try:
            srota.start()
            await srota.wait_ready()
            # A SIGKILL while messages stream in: those received and not yet relayed come again.
            stream = asyncio.create_task(publish(writer, 0, N // 2))
            await wait_until(lambda: len(seen) >= 300, 20, what="the relay at work")
            srota.kill()
            await stream
            srota.start()
            await srota.wait_ready()
            # A SIGTERM mid-stream: a clean stop leaves what it did not process to the broker.
            stream = asyncio.create_task(publish(writer, N // 2, N))
            await wait_until(lambda: max(seen, default=0) >= N // 2 + 300, 20, what="the relay at work again")
            srota.signal(signal.SIGTERM)
            assert await srota.wait_exit(30) == 0, srota.log()
            await stream
            srota.start()
            await srota.wait_ready()
            await wait_until(lambda: set(seen) >= set(range(N)), 30,
                             what=f"every input relayed (missing {len(set(range(N)) - set(seen))})")
        finally:
            collecting.cancel()
            srota.stop()
    assert set(seen) == set(range(N))
