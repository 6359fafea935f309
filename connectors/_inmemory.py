"""``inMemory``: a process-wide topic broker for app-to-app wiring and tests.

Like Siddhi's ``InMemoryBroker``: a sink publishes to a topic and every source subscribed to
that topic receives the payload, which may be any Python object (rows from the passThrough
mapper, bytes, text).  Each subscriber has a bounded queue; a publisher waits when a
subscriber's queue is full, so a slow app slows its producers instead of growing memory.
"""
from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from srota.connectors.base import Message, OnMessages, Sink, Source, log, take_batch
from srota.engine.registry import Kind, Param, extension
from srota.grammar.model import AttrType

_S = (AttrType.STRING,)
_I = (AttrType.INT,)


class Subscription:
    """One subscriber's queue on a topic (see :meth:`InMemoryBroker.subscribe`)."""

    def __init__(self, topic: str, maxsize: int) -> None:
        self.topic = topic
        self.queue: asyncio.Queue[tuple[Any, dict[str, Any]]] = asyncio.Queue(maxsize)
        self.loop = asyncio.get_running_loop()


class InMemoryBroker:
    """Topics -> subscriptions, shared by everything in the process."""

    def __init__(self) -> None:
        self._subs: dict[str, list[Subscription]] = {}

    def subscribe(self, topic: str, maxsize: int = 10_000) -> Subscription:
        """A new subscription to ``topic`` (call from the event loop that will read it)."""
        sub = Subscription(topic, maxsize)
        self._subs.setdefault(topic, []).append(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        """Remove a subscription (idempotent)."""
        subs = self._subs.get(sub.topic, [])
        with contextlib.suppress(ValueError):
            subs.remove(sub)
        if not subs:
            self._subs.pop(sub.topic, None)

    def subscribers(self, topic: str) -> int:
        """How many subscriptions ``topic`` has."""
        return len(self._subs.get(topic, ()))

    def backlog(self, topic: str) -> int:
        """How many payloads published to ``topic`` its subscribers have not taken yet."""
        return sum(sub.queue.qsize() for sub in self._subs.get(topic, ()))

    async def publish(self, topic: str, payload: Any, properties: Mapping[str, Any] | None = None) -> int:
        """Deliver to every subscriber of ``topic`` (waiting while a queue is full); returns their count."""
        subs = list(self._subs.get(topic, ()))
        props = dict(properties or {})
        props["topic"] = topic
        for sub in subs:
            await sub.queue.put((payload, props))
        return len(subs)

    def publish_threadsafe(self, topic: str, payload: Any, properties: Mapping[str, Any] | None = None) -> int:
        """Deliver from any thread (e.g. an engine timer callback); a full queue drops the payload."""
        subs = list(self._subs.get(topic, ()))
        props = dict(properties or {})
        props["topic"] = topic
        for sub in subs:
            sub.loop.call_soon_threadsafe(_put_nowait, sub, payload, props)
        return len(subs)


def _put_nowait(sub: Subscription, payload: Any, props: dict[str, Any]) -> None:
    try:
        sub.queue.put_nowait((payload, props))
    except asyncio.QueueFull:
        log.warning("in-memory subscriber queue full; payload dropped", topic=sub.topic)


#: The process-wide broker used by the ``inMemory`` source and sink.
broker = InMemoryBroker()

_SOURCE_PARAMS = (
    Param("topic", _S, doc="The topic to subscribe to."),
    Param("buffer.size", _I, optional=True, default=10_000,
          doc="Payloads queued for this source before publishers wait."),
    Param("batch.size", _I, optional=True, default=1024, doc="The largest chunk handed to the host."),
)

_SINK_PARAMS = (
    Param("topic", _S, dynamic=True, doc="The topic to publish to; may be an {{attribute}} template."),
)


@extension(Kind.SOURCE, "inMemory", params=_SOURCE_PARAMS, doc="Receive from an in-process topic.")
class InMemorySource(Source):
    """Receives what ``inMemory`` sinks (or :data:`broker`) publish to ``topic``."""

    type_name = "inMemory"
    PARAMS = _SOURCE_PARAMS
    payload_kind = "any"

    _sub: Subscription | None = None

    async def start(self, on_messages: OnMessages) -> None:
        """Subscribe now (so nothing published after ``start`` returns is missed), then deliver."""
        self._sub = broker.subscribe(self.options["topic"], self.options["buffer.size"])
        self._ready.set()
        await super().start(on_messages)

    async def _run(self) -> None:
        assert self._sub is not None
        queue = self._sub.queue
        limit = self.options["batch.size"]
        while not self._stopping:
            await self._resumed.wait()
            await self._deliver([Message(payload, props) for payload, props in await take_batch(queue, limit)])

    async def _close(self) -> None:
        if self._sub is not None:
            broker.unsubscribe(self._sub)
            self._sub = None


@extension(Kind.SINK, "inMemory", params=_SINK_PARAMS, doc="Publish to an in-process topic.")
class InMemorySink(Sink):
    """Publishes payloads (any object) to a topic of :data:`broker`."""

    type_name = "inMemory"
    PARAMS = _SINK_PARAMS
    payload_kind = "any"

    async def connect(self) -> None:
        """Nothing to connect."""

    async def publish(self, items: Sequence[tuple[Any, Mapping[str, Any]]]) -> None:
        """Deliver each payload to the subscribers of its topic."""
        for payload, props in items:
            await broker.publish(str(self._option(props, "topic")), payload)

    async def close(self) -> None:
        """Nothing to close."""
