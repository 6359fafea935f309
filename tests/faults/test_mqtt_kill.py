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


def _counting_app(mb: Any, tag: str, out: str) -> str:
    return f"""
    @app:name('Counts')
    @source(type='mqtt', url='{mb.url}', topic='in/{tag}', quality.of.service='1', clean.session='false',
            client.id='counts-{tag}', @map(type='json'))
    define stream In (n int);
    @sink(type='mqtt', url='{mb.url}', topic='{out}', quality.of.service='1', @map(type='json'))
    define stream Out (n int, seen long);
    from In select n, count() as seen insert into Out;
    """


async def _publish_each(mb: Any, topic: str, numbers: range, gap: float = 0.02) -> None:
    async with aiomqtt.Client(mb.host, mb.port, identifier=f"writer-{uuid.uuid4().hex[:8]}") as writer:
        for i in numbers:
            await writer.publish(topic, orjson.dumps({"event": {"n": i}}), qos=1)
            if gap:
                await asyncio.sleep(gap)


async def test_with_persistence_a_message_is_acknowledged_once_a_snapshot_includes_it(
        mqtt_broker: Any, tmp_path: Path) -> None:
    """Acknowledged after the flush only, a message the snapshot did not include was gone for
    good after a crash (the broker does not send it again): the state missed it (before: acks
    went out at the flush)."""
    import dataclasses

    from tests.integration.support import config, running_host

    mb = mqtt_broker
    tag = uuid.uuid4().hex[:8]
    cfg = config(tmp_path, persistence=True, interval_ms=3_600_000)
    cfg = dataclasses.replace(cfg, persistence=dataclasses.replace(cfg.persistence, held_acks=4))
    async with running_host(cfg, _counting_app(mb, tag, f"out/{tag}")) as host:
        app = host.apps["Counts"]
        source = app.sources[0].source
        outputs: list[Any] = []
        app.runtime.add_callback("Out", lambda events: outputs.extend(events))
        await _publish_each(mb, f"in/{tag}", range(3))
        await wait_until(lambda: len(outputs) == 3, 10, what="three outputs")
        await asyncio.sleep(0.5)  # outputs flushed; the commit loop ran
        assert source.acknowledged == 0, "acknowledged before a snapshot included the messages"
        await host.snapshot()
        await wait_until(lambda: source.acknowledged == 3, 5, what="the acknowledgements after the snapshot")
        # Held acknowledgements reaching persistence.held_acks take a snapshot early (the broker
        # would stop sending at its in-flight window).
        await _publish_each(mb, f"in/{tag}", range(3, 10))
        await wait_until(lambda: source.acknowledged >= 7, 10, what="snapshots taken for held acknowledgements")
        # A burst (several messages in one chunk) counts by messages too.
        await _publish_each(mb, f"in/{tag}", range(10, 40), gap=0)
        await wait_until(lambda: source.acknowledged >= 37, 10, what="snapshots taken for a burst")
        assert len(await host.store.revisions_of("Counts")) >= 2  # type: ignore[union-attr]


async def test_with_persistence_a_kill_neither_loses_nor_repeats_acknowledged_messages(
        mqtt_broker: Any, tmp_path: Path) -> None:
    """SIGKILL with messages processed but not yet in a snapshot: the broker sends them again
    and the restored state counts every message once (before: those acknowledged at the flush
    were lost to the state)."""
    mb = mqtt_broker
    tag = uuid.uuid4().hex[:8]
    out = f"out/{tag}"
    settings = {"persistence": {"enabled": True, "database": "state.db", "interval": "1 hour", "held_acks": 10},
                "shutdown": {"timeout": "20 sec"}}
    srota = SrotaProcess(tmp_path, _counting_app(mb, tag, out), settings, free_port())
    seen: list[int] = []

    async def collect(client: aiomqtt.Client) -> None:
        async for m in client.messages:
            body = orjson.loads(m.payload)
            seen.extend(item["event"]["seen"] for item in (body if isinstance(body, list) else [body]))

    async with aiomqtt.Client(mb.host, mb.port, identifier=f"reader-{tag}") as reader:
        await reader.subscribe(out, qos=1)
        collecting = asyncio.create_task(collect(reader))
        try:
            srota.start()
            await srota.wait_ready()
            # 30 messages: a snapshot is taken early whenever 10 acknowledgements wait.
            await _publish_each(mb, f"in/{tag}", range(30))
            await wait_until(lambda: max(seen, default=0) >= 30, 20, what="30 messages counted")
            await asyncio.sleep(2.0)  # the early snapshot saved, its acknowledgements out
            srota.kill()
            srota.start()
            await srota.wait_ready()
            await _publish_each(mb, f"in/{tag}", range(30, 31))
            # The snapshot's state plus the messages the broker sent again, each once.
            await wait_until(lambda: 31 in seen, 20, what=f"the count to reach 31 (seen {sorted(set(seen))[-5:]})")
            await asyncio.sleep(0.5)
            assert max(seen) == 31, f"counted twice: {sorted(seen)[-10:]}"
        finally:
            collecting.cancel()
            srota.stop()
