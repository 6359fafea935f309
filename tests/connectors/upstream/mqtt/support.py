"""What the ports of siddhi-io-mqtt's tests share: apps on service hosts, a test subscriber.

Siddhi's tests start an embedded Moquette broker on port 1883, run a sink app and/or a source
app, and check what arrived with ``MqttTestClient`` (a paho subscriber counting messages in a
``ResultContainer``) or with a ``StreamCallback``.  Here the broker is the session's Mosquitto
(``mqtt_broker``; ``mosquitto_factory`` where a test stops it), each test uses topics of its
own (:func:`unique`), :class:`Subscriber` plays ``MqttTestClient``, and the apps run on
service hosts (``run`` fixture), so every event goes through the real source, mapper, engine,
sink mapper and sink.  ``Thread.sleep`` waits become polls with timeouts.
"""
from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

import aiomqtt

from tests.mappers.harness import Running, until

#: The events every upstream test sends (``FooStream (symbol string, price float, volume long)``).
WSO2, IBM, WSO2_2 = ("WSO2", 55.6, 100), ("IBM", 75.6, 100), ("WSO2", 57.6, 100)


def unique(topic: str) -> str:
    """``topic`` made unique to this test run (the session's broker is shared by all tests)."""
    return f"{topic}-{uuid.uuid4().hex[:8]}"


def rows(got: list[list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    """The rows of every chunk a callback recorded, in order."""
    return [row for chunk in got for row in chunk]


def sink_errors(r: Running, stream: str) -> float:
    """The host's ``srota_sink_errors_total`` for ``stream`` (publishes that failed)."""
    for line in r.host.metrics.render().decode().splitlines():
        if line.startswith("srota_sink_errors_total{") and f'stream="{stream}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def source_of(r: Running, stream: str) -> Any:
    """The (first) source object feeding ``stream`` in the app of ``r``."""
    app = r.host.apps[r.app]
    return next(b.source for b in app.sources if b.stream_id == stream)


def sink_of(r: Running, stream: str) -> Any:
    """The (first) sink object publishing ``stream`` in the app of ``r``."""
    app = r.host.apps[r.app]
    return next(b.sink for b in app.sinks if b.stream_id == stream)


async def ready(r: Running, stream: str, timeout: float = 10.0) -> None:
    """Wait until the source of ``stream`` is connected and subscribed (Java: ``Thread.sleep(4000)``)."""
    await source_of(r, stream).wait_ready(timeout)


class Subscriber:
    """``MqttTestClient`` + ``ResultContainer``: subscribes to a topic, keeps every payload (as text).

    Use as ``async with Subscriber(broker, topic) as sub:``; the subscription is made before
    the body runs.
    """

    def __init__(self, broker: Any, topic: str, qos: int = 1) -> None:
        self.client = aiomqtt.Client(broker.host, broker.port, identifier=f"test-{uuid.uuid4().hex[:10]}",
                                     keepalive=60, timeout=10)
        self.topic = topic
        self.qos = qos
        self.messages: list[str] = []
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Subscriber:
        await self.client.__aenter__()
        await self.client.subscribe(self.topic, qos=self.qos)
        self._task = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        # A stopped broker ends the loop with MqttError: what arrived so far is kept.
        with contextlib.suppress(aiomqtt.MqttError):
            async for message in self.client.messages:
                payload = message.payload
                self.messages.append(payload.decode() if isinstance(payload, bytes | bytearray) else str(payload))

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        with contextlib.suppress(aiomqtt.MqttError):
            await self.client.__aexit__(None, None, None)

    @property
    def count(self) -> int:
        """``getCount()``: messages received."""
        return len(self.messages)

    async def take(self, n: int, timeout: float = 10.0) -> list[str]:
        """Wait for ``n`` messages (``ResultContainer``'s latch), then a moment more to see
        that no others come."""
        await until(lambda: self.count >= n, timeout)
        await asyncio.sleep(0.2)
        return self.messages

    def contains(self, content: str) -> bool:
        """``assertMessageContent``: some message contains ``content``."""
        return any(content in m for m in self.messages)
