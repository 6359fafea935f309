"""The transport interfaces: :class:`Source`, :class:`Sink`, :class:`Message`, acknowledgements.

Transports move opaque payloads; they know nothing of formats (mappers do that).

Flow and ownership, in one place:

* ``await source.start(on_messages)`` connects in the background (retrying with back-off) and
  calls ``await on_messages(messages)`` with each chunk it receives: what one ``getmany()`` or
  one drain of the MQTT queue returned, in partition order.  The source awaits the callback
  before fetching more, so a slow host slows the source down (natural back-pressure);
  :meth:`Source.pause`/:meth:`Source.resume` stop and restart delivery explicitly.
* Every :class:`Message` of one chunk carries the same :class:`AckToken` in ``message.ack``.
  When the host has processed the chunk's events *and flushed the outputs they caused*, it
  calls ``await source.commit([token, ...])``; sources that can (Kafka) commit offsets then,
  in one request for many tokens.  Tokens are cumulative per partition, so committing a later
  token covers earlier ones.  Sources that cannot redeliver (MQTT, in-memory) treat commit as
  a no-op.
* ``on_messages`` should not raise.  If it does, the source logs it and, where the transport
  allows (Kafka), rewinds to the first offset of the chunk and delivers it again after a
  back-off, so nothing is skipped silently.
* ``await sink.publish([(payload, properties), ...])`` sends a chunk; ``properties`` override
  static options per message (``topic``, ``key``, ``partition``, ``qos``, ``retain`` ...), as
  rendered from ``{{attribute}}`` templates by the host.  ``await sink.flush()`` returns when
  everything published so far is acknowledged by the broker or raises :class:`PublishError`.
  A sink that is not connected raises :class:`ConnectionUnavailableError`;
  ``await sink.wait_connected()`` waits for its background reconnection.
* A connector may keep state of its own in the app's snapshots, as Siddhi's sources and sinks
  do (``currentState()``/``restoreState()``): :meth:`Source.state` / :meth:`Sink.state` return
  it as a JSON-encodable dict (or None: nothing to keep, the default), and
  ``restore_state(state)`` gets it back when the app is restored, before the connector starts
  (before ``connect()`` for a sink, before ``start()`` for a source).  The service host
  takes a source's state with the engine state (no chunk half-way in) and a sink's once the
  sink has published exactly the outputs that engine state accounts for; a connector whose
  entry is missing (an older snapshot, a connector added since) keeps its fresh state.
"""
from __future__ import annotations

import asyncio
import contextlib
import random
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import structlog
from srota.connectors._options import resolve_options
from srota.engine.registry import Param
from srota.grammar.model import Pos

log = structlog.get_logger("srota.connectors")


class ConnectorError(Exception):
    """Base of the errors connectors raise."""


class ConnectionUnavailableError(ConnectorError):
    """The transport is not connected now; retry after ``wait_connected()``.

    ``published`` counts the leading items of the failed ``publish`` call that did go out,
    so a retry can resume with ``items[published:]``.
    """

    def __init__(self, message: str, published: int = 0) -> None:
        super().__init__(message)
        self.published = published


class RejectedError(ConnectorError):
    """The transport can never accept some messages (too large for the broker, an invalid
    topic): retrying cannot help.  ``rejected`` maps the index of each such item, in the
    ``publish`` call that sent it, to the reason; the other items went out (raised by
    ``publish``) or were acknowledged (raised by ``flush``)."""

    def __init__(self, message: str, rejected: dict[int, str]) -> None:
        super().__init__(message)
        self.rejected = rejected


class PublishError(ConnectorError):
    """Some published messages were not acknowledged by the broker (``failed`` of ``total``)."""

    def __init__(self, message: str, failed: int = 0, total: int = 0) -> None:
        super().__init__(message)
        self.failed = failed
        self.total = total


class AckToken:
    """Opaque acknowledgement of one delivered chunk; give it back to ``Source.commit``."""

    __slots__ = ()

    def entered(self) -> None:
        """Called by the host once the chunk's events are in the app's state (under the engine
        lock, before a snapshot can see it): from then on a source's :meth:`Source.state` may
        count the chunk as consumed.  A chunk the host leaves unconsumed (at shutdown) never
        gets this call.  No-op by default."""


class Message:
    """One received payload: ``payload`` (``bytes`` from network transports), its transport
    ``properties`` (``topic``, ``partition``, ``offset``, ``key``, ``timestamp``, ``qos``,
    ``retain`` ... as the transport provides), and ``ack``, the token of its chunk.  The host
    sets ``rejected`` to the reason when the payload does not map (a request-reply transport
    answers the sender with it)."""

    __slots__ = ("payload", "properties", "ack", "rejected")

    def __init__(self, payload: Any, properties: dict[str, Any], ack: AckToken | None = None) -> None:
        self.payload = payload
        self.properties = properties
        self.ack = ack
        self.rejected: str | None = None

    def __repr__(self) -> str:
        return f"Message({self.payload!r}, {self.properties!r})"


OnMessages = Callable[[list[Message]], Awaitable[None]]

_T = TypeVar("_T")


async def take_batch(queue: asyncio.Queue[_T], limit: int) -> list[_T]:
    """Wait for one item, then take what else is queued, up to ``limit``: a source's chunk is
    what arrived while the previous one was processed, with no timer (an idle source's
    message goes in at once)."""
    batch = [await queue.get()]
    while len(batch) < limit and not queue.empty():
        batch.append(queue.get_nowait())
    return batch

#: Option keys that belong to the host, not to the transport; factories ignore them.
HOST_OPTIONS = frozenset({"type", "on.error"})


class Backoff:
    """Exponential back-off with jitter: ``initial``, doubling up to ``maximum`` seconds."""

    def __init__(self, initial: float = 0.2, maximum: float = 30.0, factor: float = 2.0,
                 jitter: float = 0.2) -> None:
        self.initial = initial
        self.maximum = maximum
        self.factor = factor
        self.jitter = jitter
        self._next = initial

    def next_delay(self) -> float:
        """The delay to wait now; the following one grows."""
        delay = self._next
        self._next = min(self.maximum, self._next * self.factor)
        # Jitter keeps many clients that lost the same broker from reconnecting in lockstep.
        return delay * (1 + random.uniform(-self.jitter, self.jitter))

    def reset(self) -> None:
        """Start again from ``initial`` (after a success)."""
        self._next = self.initial

    async def sleep(self) -> float:
        """Sleep for the next delay; returns it."""
        delay = self.next_delay()
        await asyncio.sleep(delay)
        return delay


class _Configured:
    """Options checked against the class's declared ``PARAMS`` when constructed."""

    type_name: ClassVar[str] = ""
    PARAMS: ClassVar[tuple[Param, ...]] = ()

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "",
                 pos: Pos | None = None) -> None:
        given = {k: v for k, v in (options or {}).items() if k.lower() not in HOST_OPTIONS}
        self.name = name or self.type_name
        where = f"{self.type_name} {'source' if isinstance(self, Source) else 'sink'}"
        if name:
            where += f" '{name}'"
        self.options: dict[str, Any] = resolve_options(self.PARAMS, given, where, pos,
                                                       dynamic_ok=isinstance(self, Sink))


class Source(_Configured, ABC):
    """A transport that delivers chunks of :class:`Message` to an async callback.

    Subclasses implement :meth:`_run` (connect, receive, reconnect until stopped) and call
    :meth:`_deliver` for each chunk.  Construct with the ``@source`` options (strings or
    native values); unknown or invalid options raise ``SiddhiAppCreationError``.
    """

    #: "bytes" for network transports, "any" when payloads may be Python objects (inMemory).
    payload_kind: ClassVar[str] = "bytes"

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "",
                 pos: Pos | None = None) -> None:
        super().__init__(options, name=name, pos=pos)
        self._on_messages: OnMessages | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._stopping = False
        self._in_callback = False
        self._error: BaseException | None = None
        self._log = log.bind(source=self.type_name, name=self.name)

    def check_map_type(self, map_type: str) -> None:
        """Refuse (:class:`SiddhiAppCreationError`) a ``@map`` type whose payloads this source
        cannot deliver; the host asks before the app runs.  Any, by default."""

    async def start(self, on_messages: OnMessages) -> None:
        """Begin delivering to ``on_messages`` (connects in the background, with back-off)."""
        if self._task is not None:
            raise RuntimeError(f"{self.type_name} source '{self.name}' is already started")
        self._on_messages = on_messages
        self._stopping = False
        self._task = asyncio.create_task(self._guarded_run(), name=f"srota-source-{self.name}")

    async def _guarded_run(self) -> None:
        try:
            await self._run()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # kept for the host's health check rather than lost in a task
            self._error = exc
            self._ready.clear()
            self._log.exception("source stopped on an unexpected error")

    @property
    def running(self) -> bool:
        """True from :meth:`start` until the source stopped or failed (a finished replay is not running)."""
        return self._task is not None and not self._task.done()

    @property
    def error(self) -> BaseException | None:
        """The unexpected error that ended the source, if any."""
        return self._error

    @abstractmethod
    async def _run(self) -> None:
        """Connect, receive and deliver until :attr:`_stopping`; reconnect on failures."""

    async def wait_ready(self, timeout: float | None = None) -> None:
        """Wait until the source is connected and subscribed (raises ``TimeoutError``)."""
        async with asyncio.timeout(timeout):
            await self._ready.wait()

    @property
    def ready(self) -> bool:
        """True once connected and subscribed (and again after each reconnection)."""
        return self._ready.is_set()

    @property
    def paused(self) -> bool:
        """True between :meth:`pause` and :meth:`resume`."""
        return not self._resumed.is_set()

    def pause(self) -> None:
        """Stop delivering after the chunk in progress (back-pressure from the host)."""
        if self._resumed.is_set():
            self._resumed.clear()
            self._log.debug("source paused")
            self._on_pause()

    def resume(self) -> None:
        """Deliver again after :meth:`pause`."""
        if not self._resumed.is_set():
            self._resumed.set()
            self._log.debug("source resumed")
            self._on_resume()

    def _on_pause(self) -> None:
        """Transport-specific pausing (Kafka pauses its partitions)."""

    def _on_resume(self) -> None:
        """Transport-specific resuming."""

    async def commit(self, tokens: Iterable[AckToken]) -> None:
        """Acknowledge processed chunks.  No-op unless the transport can redeliver (Kafka)."""

    def state(self) -> dict[str, Any] | None:
        """The source's own state to keep in the app's snapshot (Siddhi's ``Source.currentState``):
        a JSON-encodable dict, a copy the source will not change, or None (the default: nothing).

        Called on the event loop with no chunk half-way into the app: what the state says has
        been consumed is what the engine state includes, or less (then a restore reads it again).
        """
        return None

    def restore_state(self, state: dict[str, Any]) -> None:
        """Take back what :meth:`state` returned, before :meth:`start` (the default ignores it).

        ``state`` may come from an older version of the source: ignore keys it does not know.
        """

    async def _deliver(self, messages: list[Message]) -> bool:
        """Hand one chunk to the host; False if the callback raised (already logged)."""
        await self._resumed.wait()
        assert self._on_messages is not None
        self._in_callback = True
        try:
            await self._on_messages(messages)
            # A transport with records buffered (a Kafka fetch holds tens of thousands) hands
            # chunk after chunk without waiting on anything: give the loop's other tasks
            # (HTTP probes, heartbeats, timers, sinks' senders) a turn after each chunk.
            # Still inside the callback, so a rebalance waiting for it sees the chunk as
            # not yet done until the source has noted its position.
            await asyncio.sleep(0)
            return True
        except asyncio.CancelledError:
            raise
        except Exception:
            self._log.exception("the host failed to take a chunk", messages=len(messages))
            return False
        finally:
            self._in_callback = False

    async def stop(self) -> None:
        """Stop receiving and disconnect; a chunk being delivered is allowed to finish."""
        self._stopping = True
        self._resumed.set()
        task, self._task = self._task, None
        if task is None:
            return
        # Let a callback in progress finish (the host may be mid-way through a chunk); a task
        # waiting on the network is cancelled at once.
        for _ in range(600):
            if not self._in_callback or task.done():
                break
            await asyncio.sleep(0.05)
        if not task.done():
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        self._ready.clear()
        await self._close()
        self._log.info("source stopped")

    async def _close(self) -> None:
        """Release transport resources after the run task ended."""


class Sink(_Configured, ABC):
    """A transport that publishes payloads.

    Construct with the ``@sink`` options; options declared ``dynamic`` may hold
    ``{{attribute}}`` templates, which the host renders per event and passes as properties.
    """

    payload_kind: ClassVar[str] = "bytes"
    #: Whether the host adds to each item's properties, under ``_event``, the attribute values
    #: (by name) of the event the item carries (its first, for an array): a transport whose
    #: replies answer requests passes them on (http-call, as Siddhi's ``getTrpProperties``).
    wants_events: ClassVar[bool] = False
    #: Whether the sink's payloads of row mappers (passThrough) carry their events' own
    #: timestamps (``mappers.TimedRow``): the log sink prints them, as Siddhi's does.
    wants_timestamps: ClassVar[bool] = False

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "",
                 pos: Pos | None = None) -> None:
        super().__init__(options, name=name, pos=pos)
        self._log = log.bind(sink=self.type_name, name=self.name)
        #: The type of the sink's ``@map`` (``json``, ``passThrough``, ...), set by the host
        #: before it connects: a transport may describe its payloads by it (http's
        #: Content-Type, as Siddhi's ``getMapper().getType()``).
        self.map_type: str | None = None

    @abstractmethod
    async def connect(self) -> None:
        """Connect; raises :class:`ConnectionUnavailableError` if the transport is unreachable."""

    @abstractmethod
    async def publish(self, items: Sequence[tuple[Any, Mapping[str, Any]]]) -> None:
        """Send ``(payload, properties)`` pairs in order (see the module doc)."""

    async def flush(self) -> None:
        """Wait until everything published is acknowledged; raises :class:`PublishError`."""

    @abstractmethod
    async def close(self) -> None:
        """Flush what can be flushed and disconnect."""

    def state(self) -> dict[str, Any] | None:
        """The sink's own state to keep in the app's snapshot (Siddhi's ``Sink.currentState``):
        a JSON-encodable dict, a copy the sink will not change, or None (the default: nothing).

        The host calls it on the event loop between two ``publish`` calls, once the sink has
        been handed exactly the outputs of the events that the snapshot's engine state includes
        (a transactional sink: at least those).
        """
        return None

    def restore_state(self, state: dict[str, Any]) -> None:
        """Take back what :meth:`state` returned, before :meth:`connect` (the default ignores it).

        ``state`` may come from an older version of the sink: ignore keys it does not know.
        """

    @property
    def connected(self) -> bool:
        """Whether ``publish`` can send now."""
        return True

    async def wait_connected(self, timeout: float | None = None) -> None:
        """Wait until connected (raises ``TimeoutError``)."""
        async with asyncio.timeout(timeout):
            while not self.connected:
                await asyncio.sleep(0.05)

    def _option(self, props: Mapping[str, Any], key: str) -> Any:
        """A per-message property, else the static option; a template left unrendered is an error."""
        value = props.get(key)
        if value is None:
            value = self.options.get(key)
            if isinstance(value, str) and "{{" in value:
                raise ValueError(f"{self.type_name} sink '{self.name}': option '{key}' is a template "
                                 "but the message has no rendered value for it")
        return value
