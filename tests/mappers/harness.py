"""What the ports of the upstream mapper suites share: a service host with one app, topics, payloads.

Siddhi's mapper tests run an app with ``inMemory`` sources and sinks, publish payloads to
``InMemoryBroker`` topics and subscribe to the topics the sinks write.  :class:`Running` and
:class:`Topic` do the same against a :class:`~srota.service.host.ServiceHost`, so a payload goes
through the real source, mapper, engine, sink mapper and sink path (error routes included).
"""
from __future__ import annotations

import asyncio
import struct
from typing import Any

from srota.connectors._inmemory import broker
from srota.engine.event import Event
from srota.service.config import HttpConfig, ServiceConfig
from srota.service.host import ServiceHost

START = 1_700_000_000_000


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


class Running:
    """A started host with one app, callbacks on its streams and subscriptions on topics."""

    def __init__(self, host: ServiceHost, name: str) -> None:
        self.host = host
        self.runtime = host.runtimes[name]
        self.app = name
        self.chunks: dict[str, list[list[tuple[Any, ...]]]] = {}

    def watch(self, stream: str) -> list[list[tuple[Any, ...]]]:
        """Record every chunk of ``stream`` (as lists of rows)."""
        got: list[list[tuple[Any, ...]]] = []

        def callback(events: list[Event]) -> None:
            got.append([tuple(e.data) for e in events])

        self.runtime.add_callback(stream, callback)
        return got

    def send(self, stream: str, *rows: tuple[Any, ...]) -> None:
        """One chunk into ``stream`` (one row: Siddhi's ``send(Object[])``, more: ``send(Event[])``)."""
        self.runtime.get_input_handler(stream).send_rows(list(rows), START)

    def mapping_errors(self, stream: str) -> float:
        for line in self.host.metrics.render().decode().splitlines():
            if line.startswith("srota_mapping_errors_total{") and f'stream="{stream}"' in line:
                return float(line.rsplit(" ", 1)[1])
        return 0.0


async def start(app: str, errors_database: str) -> Running:
    """A started host (no HTTP) running ``app``, its error store in ``errors_database``; the
    caller stops ``.host``."""
    host = ServiceHost(ServiceConfig(http=HttpConfig(enabled=False), errors_database=errors_database),
                       app_texts=[app])
    await host.start()
    name = next(iter(host.runtimes))
    return Running(host, name)


class Topic:
    """Everything published to an inMemory topic from now on."""

    def __init__(self, topic: str) -> None:
        self.sub = broker.subscribe(topic)
        self.messages: list[Any] = []

    async def take(self, n: int, timeout: float = 5.0) -> list[Any]:
        """Wait for ``n`` messages in all, then a moment more to see that no others come."""
        async with asyncio.timeout(timeout):
            while len(self.messages) < n:
                payload, _props = await self.sub.queue.get()
                self.messages.append(payload)
        await asyncio.sleep(0.1)
        while not self.sub.queue.empty():
            self.messages.append(self.sub.queue.get_nowait()[0])
        return self.messages

    def text(self) -> list[str]:
        return [m.decode() if isinstance(m, bytes) else m for m in self.messages]

    def close(self) -> None:
        broker.unsubscribe(self.sub)


async def publish(topic: str, *payloads: Any, properties: dict[str, Any] | None = None) -> None:
    for p in payloads:
        await broker.publish(topic, p, properties)


async def until(predicate: Any, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


def java_binary(events: list[tuple[int, tuple[Any, ...]]], types: str) -> bytes:
    """A message as siddhi-map-binary's ``BinaryEventConverter.convertToBinaryMessage`` writes it
    (written here from its Java, not with Srota's mapper): ``types`` are the attributes' types,
    space-separated (``"string int float long double bool"``), as Java's type array."""
    codes = {"int": ">i", "long": ">q", "float": ">f", "double": ">d"}
    out = [struct.pack(">i", len(events))]
    for timestamp, data in events:
        out.append(struct.pack(">q", timestamp))
        for value, type_ in zip(data, types.split(), strict=True):
            if type_ == "string":
                raw = value.encode("utf-8")
                out.append(struct.pack(">i", len(raw)) + raw)
            elif type_ == "bool":
                out.append(b"\x01" if value else b"\x00")
            elif type_ == "object":
                out.append(struct.pack(">i", 0))
            else:
                out.append(struct.pack(codes[type_], value))
    return b"".join(out)
