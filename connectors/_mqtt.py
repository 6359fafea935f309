"""``mqtt``: source and sink on aiomqtt 2.x (options follow siddhi-io-mqtt).

Source
    Connects to ``url`` (``tcp://host:1883``; ``ssl://``/``mqtts://`` use TLS), subscribes to
    every topic of ``topic`` (comma-separated, wildcards ``+``/``#`` allowed) at
    ``quality.of.service``, and hands over what has queued up since the last chunk.  With
    ``clean.session='false'`` and a stable ``client.id`` the broker keeps the subscriptions
    and queues QoS 1/2 messages while the source is away (without a ``client.id`` one is
    generated, as siddhi-io-mqtt does, and the session lasts only as long as the process).
    On a lost connection the source reconnects with exponential back-off (up to
    ``max.reconnect.delay``) and subscribes again.  ``shared.subscription='true'`` is for
    scale-out (service/scaleout.py): every worker subscribes to ``$share/srota-<app>/<topic>``,
    so each message goes to one of them.  A shared subscription is not kept by Mosquitto (2.0)
    across a broker restart: what is published before the source subscribes again is lost
    (logged as a warning at start).  Without it, a scale-out app with a Kafka source runs its
    MQTT source on one worker only (the owner of partition 0), with a plain subscription.
    QoS 1/2 messages are acknowledged (PUBACK, PUBCOMP) only when the host commits their chunk,
    that is once the outputs they caused are flushed (paho's manual acknowledgements): with a
    persistent session (``clean.session='false'``, a stable ``client.id``) the broker sends
    again, after a reconnection or a restart, whatever was received but not processed -- at
    least once across a crash or a stop.  (QoS 2 is acknowledged to the broker with PUBREC on
    receipt, as the protocol requires, and paho keeps no copy across a restart: a QoS 2
    message received but not processed when the process dies is lost; use QoS 1 for at least
    once.)  Acknowledgements of a connection that has since dropped are not sent (the broker
    redelivers those messages).  ``pause()`` stops delivery and so holds the acknowledgements:
    once the broker's in-flight window (Mosquitto's ``max_inflight_messages``) is full it
    stops sending, which is the back-pressure.

Sink
    Publishes to ``topic`` (may be an ``{{attribute}}`` template) with
    ``quality.of.service`` and ``message.retain`` (both may also come per message).  As in
    siddhi-io-mqtt, a QoS given per event (``{{attribute}}``) is checked per event: one that is
    not 0, 1 or 2 refuses that event (:class:`RejectedError`, routed by the host's ``on.error``)
    and the others go out; a fixed value that is not 0, 1 or 2 refuses the app at creation.  Each
    ``publish`` waits for the QoS handshake of all its messages, so ``flush`` has nothing left
    to do.  When the connection drops, ``publish`` raises :class:`ConnectionUnavailableError`
    (with how many messages went out) and the sink reconnects in the background;
    ``wait_connected()`` waits for it.

``username``/``password`` authenticate (the password is never logged); ``tls.ca.file``,
``tls.cert.file``, ``tls.key.file`` and ``tls.insecure`` configure TLS.
"""
from __future__ import annotations

import asyncio
import ssl
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlparse

import aiomqtt
from srota.connectors._options import creation_error
from srota.connectors.base import (
    AckToken,
    Backoff,
    ConnectionUnavailableError,
    Message,
    RejectedError,
    Sink,
    Source,
)
from srota.engine.registry import Kind, Param, extension
from srota.grammar.model import AttrType

_S = (AttrType.STRING,)
_B = (AttrType.BOOL,)
_I = (AttrType.INT,)

_CONNECTION_PARAMS = (
    Param("url", _S, doc="Broker URL: tcp://host:port, or ssl://host:port (mqtts://) for TLS."),
    Param("client.id", _S, optional=True, default=None,
          doc="Client identifier (generated when absent); give a stable one with clean.session='false' "
              "so that the session outlives a restart."),
    Param("username", _S, optional=True, default=None, doc="User name."),
    Param("password", _S, optional=True, default=None, doc="Password (never logged)."),
    Param("clean.session", _B, optional=True, default=True,
          doc="false keeps subscriptions and queued messages on the broker between connections."),
    Param("keep.alive", _I, optional=True, default=60, doc="Keep-alive interval in seconds."),
    Param("connection.timeout", _I, optional=True, default=30,
          doc="Seconds to wait for the broker when connecting, subscribing or publishing."),
    Param("max.inflight", _I, optional=True, default=10,
          doc="QoS 1/2 messages sent without acknowledgement before the client waits."),
    Param("automatic.reconnect", _B, optional=True, default=True,
          doc="Reconnect with back-off after a lost connection (Siddhi's default is false)."),
    Param("max.reconnect.delay", _I, optional=True, default=128_000,
          doc="Longest wait between reconnection attempts, in milliseconds."),
    Param("tls.ca.file", _S, optional=True, default=None, doc="CA bundle to verify the broker."),
    Param("tls.cert.file", _S, optional=True, default=None, doc="Client certificate (mutual TLS)."),
    Param("tls.key.file", _S, optional=True, default=None, doc="Client private key (mutual TLS)."),
    Param("tls.insecure", _B, optional=True, default=False,
          doc="Do not verify the broker's host name (tests only)."),
)


class _Connection:
    """Connection settings shared by the MQTT source and sink."""

    def __init__(self, o: Mapping[str, Any], where: str, pos: Any) -> None:
        url = urlparse(o["url"] if "://" in o["url"] else f"tcp://{o['url']}")
        scheme = url.scheme.lower()
        if scheme not in ("tcp", "mqtt", "ssl", "mqtts", "tls"):
            raise creation_error(f"{where}: url scheme must be tcp:// or ssl://, not {scheme}://", pos)
        self.tls = scheme in ("ssl", "mqtts", "tls") or bool(o["tls.ca.file"])
        self.host = url.hostname or "localhost"
        self.port = url.port or (8883 if self.tls else 1883)
        self.o = o
        # As siddhi-io-mqtt (paho's generateClientId): the id is generated once, so reconnections
        # of this process resume the session; a restart starts a new one.
        self.client_id = o["client.id"] or f"srota-{uuid.uuid4().hex[:12]}"
        #: Why the persistent session will not outlive a restart (the source or sink logs it).
        self.session_warning: str | None = None
        if not o["clean.session"] and not o["client.id"]:
            self.session_warning = (f"{where}: clean.session='false' without a client.id: the id is generated, "
                                    "so what the broker keeps for this session is not received after a restart")
        self.backoff = Backoff(initial=0.2, maximum=max(0.2, o["max.reconnect.delay"] / 1000.0))

    def client(self, **kw: Any) -> aiomqtt.Client:
        o = self.o
        tls_context = None
        if self.tls:
            tls_context = ssl.create_default_context(cafile=o["tls.ca.file"])
            if o["tls.cert.file"]:
                tls_context.load_cert_chain(o["tls.cert.file"], o["tls.key.file"])
            if o["tls.insecure"]:
                tls_context.check_hostname = False
        client = aiomqtt.Client(
            self.host, self.port, username=o["username"], password=o["password"],
            identifier=self.client_id, clean_session=o["clean.session"], keepalive=o["keep.alive"],
            timeout=float(o["connection.timeout"]), max_inflight_messages=o["max.inflight"],
            tls_context=tls_context, tls_insecure=True if o["tls.insecure"] and self.tls else None, **kw)
        # aiomqtt warns above 10 concurrent calls; a chunk published at once is normal here.
        client.pending_calls_threshold = 1_000_000
        return client

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


def _qos(value: Any) -> int | None:
    """``value`` as a QoS level, None when it is not 0, 1 or 2."""
    try:
        qos = int(str(value).strip())
    except ValueError:
        return None
    return qos if qos in (0, 1, 2) else None


def _static_qos(value: Any, where: str, pos: Any) -> int:
    qos = _qos(value)
    if qos is None:
        raise creation_error(f"{where}: quality.of.service must be 0, 1 or 2, not {value!r}", pos)
    return qos


class MqttAck(AckToken):
    """The QoS 1/2 messages of one delivered chunk: ``(mid, qos)`` on one connection."""

    __slots__ = ("client", "mids")

    def __init__(self, client: aiomqtt.Client, mids: list[tuple[int, int]]) -> None:
        self.client = client
        self.mids = mids

    def __repr__(self) -> str:
        return f"MqttAck({len(self.mids)} messages)"


_SOURCE_PARAMS = (
    Param("topic", _S, doc="Comma-separated topics or wildcard filters (+, #)."),
    Param("quality.of.service", _I, optional=True, default=1, doc="0, 1 or 2."),
    Param("batch.size", _I, optional=True, default=1024, doc="The largest chunk handed to the host."),
    Param("shared.subscription", _B, optional=True, default=False,
          doc="Under scale-out: every worker subscribes with $share/srota-<app>/<topic>, each message goes to "
              "one of them. Mosquitto 2.0 does not keep shared subscriptions across its restart: QoS 1 messages "
              "published before the workers subscribe again are lost. Without it a scale-out app runs this source "
              "on one worker (with a kafka @source) or is refused."),
    *_CONNECTION_PARAMS,
)


@extension(Kind.SOURCE, "mqtt", params=_SOURCE_PARAMS,
           doc="Subscribe to MQTT topics (wildcards, QoS 0-2, persistent sessions), reconnecting with back-off.")
class MqttSource(Source):
    """MQTT subscriber (see the module doc)."""

    type_name = "mqtt"
    PARAMS = _SOURCE_PARAMS

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "", **kw: Any) -> None:
        super().__init__(options, name=name, **kw)
        where = f"mqtt source '{self.name}'"
        self._conn = _Connection(self.options, where, kw.get("pos"))
        self.topics = [t.strip() for t in self.options["topic"].split(",") if t.strip()]
        if not self.topics:
            raise creation_error(f"{where}: topic is empty", kw.get("pos"))
        self.qos = _static_qos(self.options["quality.of.service"], where, kw.get("pos"))
        self._queue: asyncio.Queue[aiomqtt.Message] | None = None
        self._client: aiomqtt.Client | None = None
        self.connections = 0
        #: QoS 1/2 messages acknowledged to the broker (tests and metrics read it).
        self.acknowledged = 0
        self._log = self._log.bind(broker=self._conn.address, topics=self.topics, client_id=self._conn.client_id)
        if self._conn.session_warning:
            self._log.warning(self._conn.session_warning)

    def _make_queue(self, maxsize: int = 0) -> asyncio.Queue[aiomqtt.Message]:
        # aiomqtt builds its incoming queue from this factory; keeping a reference lets us
        # drain everything already received into one chunk.
        self._queue = asyncio.Queue(maxsize)
        return self._queue

    async def _run(self) -> None:
        backoff = self._conn.backoff
        shared = [t for t in self.topics if t.startswith("$share/")]
        if shared and not self.options["clean.session"]:
            # Checked here, not at creation: scale-out makes the topics shared after that.
            self._log.warning("a shared subscription is not kept by Mosquitto (2.0) across a broker restart: "
                              "QoS 1 messages published after the restart and before this source subscribes "
                              "again are dropped by the broker (docs/delivery.md)", shared=shared)
        while not self._stopping:
            client = self._conn.client(queue_type=self._make_queue)
            # Acknowledge when the host commits, not on receipt (aiomqtt exposes no option for
            # it; its paho client does).
            client._client.manual_ack_set(True)  # noqa: SLF001
            try:
                async with client:
                    self._client = client
                    for topic in self.topics:
                        await client.subscribe(topic, qos=self.qos)
                    self.connections += 1
                    backoff.reset()
                    self._ready.set()
                    self._log.info("mqtt source connected")
                    await self._consume(client)
            except aiomqtt.MqttError as exc:
                self._ready.clear()
                if self._stopping:
                    return
                if not self.options["automatic.reconnect"] and self.connections:
                    self._log.error("mqtt source disconnected; automatic.reconnect is off", error=str(exc))
                    return
                delay = backoff.next_delay()
                self._log.warning("mqtt source disconnected; reconnecting", error=str(exc), retry_in=round(delay, 2))
                await asyncio.sleep(delay)
            finally:
                self._client = None

    async def _consume(self, client: aiomqtt.Client) -> None:
        limit = self.options["batch.size"]
        async for first in client.messages:  # raises MqttError when the connection drops
            batch = [first]
            queue = self._queue
            while queue is not None and len(batch) < limit and not queue.empty():
                batch.append(queue.get_nowait())
            token = MqttAck(client, [(m.mid, m.qos) for m in batch if m.qos > 0])
            messages = [Message(m.payload, {"topic": m.topic.value, "qos": m.qos, "retain": m.retain}, token)
                        for m in batch]
            await self._deliver(messages)
            if self._stopping:
                return

    async def commit(self, tokens: Iterable[AckToken]) -> None:
        """Acknowledge the QoS 1/2 messages of processed chunks, in the order received."""
        client = self._client
        for token in tokens:
            if not isinstance(token, MqttAck) or not token.mids:
                continue
            if token.client is not client or client is None:
                continue  # that connection is gone: the broker sends these messages again
            paho = client._client  # noqa: SLF001
            for mid, qos in token.mids:
                paho.ack(mid, qos)
            self.acknowledged += len(token.mids)


_SINK_PARAMS = (
    Param("topic", _S, dynamic=True, doc="The topic to publish to; may be an {{attribute}} template."),
    # A string, as siddhi-io-mqtt declares it: an {{attribute}} value is checked per event, so an
    # invalid one refuses that event rather than the publish (a fixed value at creation).
    Param("quality.of.service", _S, optional=True, default="1", dynamic=True, doc="0, 1 or 2."),
    Param("message.retain", _B, optional=True, default=False, dynamic=True,
          doc="Ask the broker to retain the last message of the topic."),
    *_CONNECTION_PARAMS,
)


@extension(Kind.SINK, "mqtt", params=_SINK_PARAMS, doc="Publish to MQTT with QoS and retain, reconnecting.")
class MqttSink(Sink):
    """MQTT publisher (see the module doc)."""

    type_name = "mqtt"
    PARAMS = _SINK_PARAMS

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "", **kw: Any) -> None:
        super().__init__(options, name=name, **kw)
        where = f"mqtt sink '{self.name}'"
        self._conn = _Connection(self.options, where, kw.get("pos"))
        self._client: aiomqtt.Client | None = None
        self._reconnect_task: asyncio.Task[None] | None = None
        self._closing = False
        self._log = self._log.bind(broker=self._conn.address, client_id=self._conn.client_id)
        if self._conn.session_warning:
            self._log.warning(self._conn.session_warning)
        qos = self.options["quality.of.service"]
        if "{{" not in qos:
            # Siddhi creates the app and refuses every event; a fixed value that can never be
            # right is refused here, as the source's is (fail fast). A template is checked per event.
            _static_qos(qos, where, kw.get("pos"))

    @property
    def connected(self) -> bool:
        """True while the client is connected."""
        return self._client is not None

    async def connect(self) -> None:
        """Connect once; raises :class:`ConnectionUnavailableError` when the broker is unreachable."""
        if self._client is not None:
            return
        client = self._conn.client()
        try:
            await client.__aenter__()
        except aiomqtt.MqttError as exc:
            raise ConnectionUnavailableError(f"mqtt sink '{self.name}': cannot connect to "
                                             f"{self._conn.address}: {exc}") from exc
        self._client = client
        self._conn.backoff.reset()
        self._log.info("mqtt sink connected")

    async def _reconnect(self) -> None:
        while not self._closing and self._client is None:
            delay = self._conn.backoff.next_delay()
            await asyncio.sleep(delay)
            try:
                await self.connect()
            except ConnectionUnavailableError as exc:
                self._log.warning("mqtt sink still disconnected", error=str(exc.__cause__ or exc),
                                  retry_in=round(delay, 2))

    async def _lost(self, client: aiomqtt.Client, exc: BaseException) -> None:
        if self._client is client:
            self._client = None
            try:
                await client.__aexit__(None, None, None)
            except Exception:  # the connection is already gone; only local state is left
                pass
        self._log.warning("mqtt sink connection lost", error=str(exc))
        if self.options["automatic.reconnect"] and not self._closing and (
                self._reconnect_task is None or self._reconnect_task.done()):
            self._reconnect_task = asyncio.create_task(self._reconnect(), name=f"srota-mqtt-reconnect-{self.name}")

    async def publish(self, items: Sequence[tuple[Any, Mapping[str, Any]]]) -> None:
        """Publish all items concurrently and wait for their QoS handshakes."""
        client = self._client
        if client is None:
            raise ConnectionUnavailableError(f"mqtt sink '{self.name}' is not connected")
        calls = []
        indexes: list[int] = []  # the item each call publishes
        rejected: dict[int, str] = {}
        for n, (payload, props) in enumerate(items):
            topic = str(self._option(props, "topic"))
            value = self._option(props, "quality.of.service")
            qos = _qos(value)
            if qos is None:
                # siddhi-io-mqtt's MqttSinkRuntimeException, per event.
                rejected[n] = (f"Invalid QOS value received for mqtt sink '{self.name}'. "
                               f"Expected 0, 1 or 2 but received {value}")
                continue
            retain = self._option(props, "message.retain")
            if isinstance(retain, str):
                retain = retain.strip().lower() == "true"
            if isinstance(payload, memoryview):
                payload = bytes(payload)
            elif not isinstance(payload, (bytes, bytearray, str)):
                raise TypeError(f"mqtt sink '{self.name}' publishes bytes, not {type(payload).__name__}; "
                                "map the stream with a json or csv mapper")
            calls.append(client.publish(topic, payload, qos=qos, retain=bool(retain)))
            indexes.append(n)
        results = await asyncio.gather(*calls, return_exceptions=True)
        for n, result in enumerate(results):
            if isinstance(result, BaseException):
                await self._lost(client, result)
                # Only the items before both this one and any refused one count as out: a
                # refused item is then refused again (and routed) when the host retries.
                published = min([indexes[n], *rejected])
                raise ConnectionUnavailableError(f"mqtt sink '{self.name}': publish failed: {result}",
                                                 published=published) from result
        if rejected:
            raise RejectedError(f"mqtt sink '{self.name}': {len(rejected)} of {len(items)} messages refused: "
                                f"{next(iter(rejected.values()))}", rejected)

    async def close(self) -> None:
        """Stop reconnecting and disconnect."""
        self._closing = True
        task, self._reconnect_task = self._reconnect_task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.__aexit__(None, None, None)
            except aiomqtt.MqttError as exc:
                self._log.warning("mqtt sink disconnect was not clean", error=str(exc))
