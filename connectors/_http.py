"""``http``: receive events from HTTP clients, and post events to HTTP servers (siddhi-io-http).

Source: ``@source(type='http', receiver.url='http://0.0.0.0:8280/stocks', @map(...))`` listens
for ``POST`` requests on the URL's host, port and path (several sources may share a port
with different paths); without ``receiver.url`` it listens on Siddhi's default,
``http://0.0.0.0:8280/<app name>/<stream id>``.  A URL another source holds (or a port that
cannot be bound) does not stop the app: the source logs ``Listener URL ... already connected``
and tries again with back-off, so it takes over once the URL is free.  The request body is the payload; the request's headers are its
transport properties (``trp:Content-Type``), with ``method`` and ``path``.  A request is
answered once its events are in the app: ``200`` then, ``400`` with the mapper's message
when the body does not map (the error also goes where the app routes mapping errors) or is
empty (not mapped: Siddhi drops an empty payload at the source too), ``405`` for methods
other than ``POST`` (Siddhi: ``400``) but ``OPTIONS``, a CORS preflight answered ``200`` with
``Access-Control-Allow-*`` headers as in Siddhi,
``503`` with ``Retry-After`` while the app is held or behind (the source is paused, or more
requests wait than ``buffer.size``), ``401`` without the credentials of
``basic.auth.enabled``.  Requests that arrive while a chunk is being processed are
delivered together as the next chunk (each its own chunk in the engine, as Siddhi does).
HTTPS with ``ssl.cert.file`` and ``ssl.key.file`` (PEM).

Sink: ``@sink(type='http', publisher.url='http://host:port/path', method='POST',
headers="'Content-Type:application/json','X-Key:v'", @map(...))`` sends each payload as
one request, in order; ``publisher.url`` and ``headers`` may be ``{{attribute}}``
templates.  Without a Content-Type header (or ``content.type``) a request carries Siddhi's by
the ``@map`` type (json, xml, text ``text/plain``, keyvalue a form), else one by what the
mapper wrote.  ``2xx`` is delivered; ``4xx`` (other than ``408``/``429``) can never succeed
and is reported as rejected; other statuses and network errors are retried by the host
(``on.error``).  Basic auth with ``basic.auth.username``/``basic.auth.password``; for HTTPS,
``ssl.ca.file`` trusts a private CA and ``ssl.verify='false'`` turns checking off.

Service style, as Siddhi 5 names it: an ``http-service`` source holds each request until an
``http-service-response`` sink of the same ``source.id`` publishes the event for its
``message.id`` (``trp:messageId``); an ``http-call`` sink hands every response to the
``http-call-response`` sources of its ``sink.id`` whose ``http.status.code`` matches.  Siddhi's deprecated names work too: ``http-request`` (source)
for ``http-service``, ``http-response`` (sink) for ``http-service-response``, ``http-request``
(sink) for ``http-call`` and ``http-response`` (source) for ``http-call-response``.
"""
from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hmac
import re
import ssl
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlencode, urlsplit

import aiohttp
from aiohttp import web
from srota.connectors._options import creation_error
from srota.connectors.base import (
    AckToken,
    Backoff,
    ConnectionUnavailableError,
    Message,
    RejectedError,
    Sink,
    Source,
    log,
    take_batch,
)
from srota.engine.registry import Kind, Param, extension
from srota.grammar.model import AttrType

_S = (AttrType.STRING,)
_I = (AttrType.INT,)
_B = (AttrType.BOOL,)


def _split_url(url: str, option: str) -> tuple[str, str, int, str]:
    """``(scheme, host, port, path)`` of an ``http(s)://host:port/path`` option."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{option} must be an http:// or https:// URL, not {url!r}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.scheme, parts.hostname, port, parts.path or "/"


#: Siddhi's Content-Type by the sink's map type (HttpSinkUtil.getContentType).
_MAP_CONTENT_TYPES = {"text": "text/plain", "xml": "application/xml", "json": "application/json",
                      "keyvalue": "application/x-www-form-urlencoded"}


def _content_type(payload: Any, given: str | None, map_type: str | None = None) -> str:
    """The Content-Type of a payload: ``given``, else by the sink's map type as Siddhi's,
    else (a map Siddhi has no type for, or none known) by what the mapper wrote: a mapping
    is a form, XML ``application/xml``, JSON ``application/json``, anything else ``text/plain``."""
    if given:
        return str(given)
    by_map = _MAP_CONTENT_TYPES.get((map_type or "").lower())
    if by_map is not None:
        return by_map
    if isinstance(payload, Mapping):
        return "application/x-www-form-urlencoded"
    head = payload.lstrip()[:1] if isinstance(payload, str | bytes) else ""
    if head in (b"{", b"[", "{", "["):
        return "application/json"
    if head in (b"<", "<"):
        return "application/xml"
    return "text/plain; charset=utf-8"


def _body(payload: Any) -> bytes:
    """A payload as a request body (a keyvalue mapping form-encoded)."""
    if isinstance(payload, Mapping):
        return urlencode({str(k): "" if v is None else str(v) for k, v in payload.items()}).encode()
    return payload.encode() if isinstance(payload, str) else bytes(payload)


def parse_headers(text: str | None) -> dict[str, str]:
    """Siddhi's ``headers`` option: ``"'Name:value','Other:value'"`` (quotes optional)."""
    headers: dict[str, str] = {}
    for part in (text or "").split("','"):
        part = part.strip().strip("'").strip()
        if not part:
            continue
        name, sep, value = part.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"headers: expected 'Name:value', got {part!r}")
        headers[name.strip()] = value.strip()
    return headers


# ---------------------------------------------------------------------------- the source
class _Reply(AckToken):
    """The waiting request of one message: answered when its chunk is processed."""

    __slots__ = ("future",)

    def __init__(self, future: asyncio.Future[None]) -> None:
        self.future = future


@dataclass
class _Listener:
    """One HTTP server (host, port) and the sources on its paths."""

    runner: web.AppRunner
    routes: dict[str, HttpSource] = field(default_factory=dict)


#: Listening servers by (host, port): sources on one port share its server.
_listeners: dict[tuple[str, int], _Listener] = {}
_listeners_lock = asyncio.Lock()


_KEY = web.AppKey("srota.listener", tuple)

#: Siddhi's default receiver.url: ``defaultScheme://defaultHost:defaultHttpPort/<app>/<stream>``.
DEFAULT_HOST, DEFAULT_HTTP_PORT = "0.0.0.0", 8280


def _default_receiver_url(name: str) -> str:
    """Siddhi's default ``receiver.url`` for a source the host named ``<app>/<stream>/source<n>``."""
    app, _, rest = name.partition("/")
    stream = rest.partition("/")[0]
    if not app or not stream:
        raise ValueError("receiver.url is required (the default needs the app name and the stream id)")
    return f"http://{DEFAULT_HOST}:{DEFAULT_HTTP_PORT}/{app}/{stream}"


async def _dispatch(request: web.Request) -> web.StreamResponse:
    key = request.app[_KEY]
    listener = _listeners.get(key)
    source = listener.routes.get(request.path) if listener is not None else None
    if source is None:
        return web.json_response({"error": f"no http source on {request.path}"}, status=404)
    return await source.handle(request)


_SOURCE_PARAMS = (
    Param("receiver.url", _S, optional=True,
          doc="Where to listen: http(s)://host:port/path (POST requests); default "
              "http://0.0.0.0:8280/<app name>/<stream id>, as in Siddhi."),
    Param("basic.auth.enabled", _B, optional=True, default=False,
          doc="Require HTTP basic auth with basic.auth.username and basic.auth.password."),
    Param("basic.auth.username", _S, optional=True, doc="The user name basic auth accepts."),
    Param("basic.auth.password", _S, optional=True, doc="The password basic auth accepts."),
    Param("buffer.size", _I, optional=True, default=1024,
          doc="Requests that may wait for the app; more are answered 503 with Retry-After."),
    Param("batch.size", _I, optional=True, default=1024, doc="The most requests delivered as one chunk."),
    Param("ssl.cert.file", _S, optional=True, doc="PEM certificate (chain) for https."),
    Param("ssl.key.file", _S, optional=True, doc="PEM private key for https."),
)


@extension(Kind.SOURCE, "http", params=_SOURCE_PARAMS, doc="Receive events in HTTP POST requests.")
class HttpSource(Source):
    """Listens on ``receiver.url``; see the module doc."""

    type_name = "http"
    PARAMS: ClassVar[tuple[Param, ...]] = _SOURCE_PARAMS

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "", pos: Any = None) -> None:
        super().__init__(options, name=name, pos=pos)
        o = self.options
        try:
            if not o.get("receiver.url"):
                o["receiver.url"] = _default_receiver_url(name)
            self.scheme, self.host, self.port, self.path = _split_url(o["receiver.url"], "receiver.url")
        except ValueError as exc:
            raise creation_error(f"http source: {exc}", pos) from None
        if self.scheme == "https" and not (o.get("ssl.cert.file") and o.get("ssl.key.file")):
            raise creation_error("http source: an https receiver.url needs ssl.cert.file and ssl.key.file", pos)
        if o["basic.auth.enabled"] and not (o.get("basic.auth.username") and o.get("basic.auth.password")):
            raise creation_error("http source: basic.auth.enabled needs basic.auth.username and "
                                 "basic.auth.password", pos)
        self._pending: asyncio.Queue[Message] | None = None
        self._key: tuple[str, int] | None = None

    @property
    def bound_port(self) -> int:
        """The port listened on (the one asked for, or the one given for port 0)."""
        listener = _listeners.get(self._key) if self._key is not None else None
        if listener is None:
            return self.port
        server = listener.runner.addresses
        return int(server[0][1]) if server else self.port

    async def start(self, on_messages: Any) -> None:
        """Listen now (so a request sent after ``start`` returns is served), then deliver.
        A URL that is taken (or a port that cannot be bound) is logged and tried again in
        the background, with back-off (see the module doc)."""
        self._pending = asyncio.Queue()
        try:
            await self._listen()
        except ConnectionUnavailableError as exc:
            self._log.error("http source cannot listen; retrying", error=str(exc))
        else:
            self._ready.set()
        await super().start(on_messages)

    async def _listen_until_done(self) -> None:
        """Try to listen again until it works (or the source stops)."""
        backoff = Backoff(initial=0.2, maximum=10.0)
        while not self._stopping and self._key is None:
            await backoff.sleep()
            try:
                await self._listen()
            except ConnectionUnavailableError as exc:
                self._log.debug("http source still cannot listen", error=str(exc))
            else:
                self._ready.set()

    async def _listen(self) -> None:
        async with _listeners_lock:
            key = (self.host, self.port)
            listener = _listeners.get(key)
            if listener is None:
                app = web.Application(client_max_size=64 << 20)
                app[_KEY] = key
                app.router.add_route("*", "/{tail:.*}", _dispatch)
                runner = web.AppRunner(app, access_log=None, handle_signals=False)
                await runner.setup()
                site = web.TCPSite(runner, self.host, self.port, ssl_context=self._ssl_context())
                try:
                    await site.start()
                except OSError as exc:
                    await runner.cleanup()
                    raise ConnectionUnavailableError(f"http source cannot listen on {self.host}:{self.port}: "
                                                     f"{exc.strerror or exc}") from None
                listener = _listeners[key] = _Listener(runner)
            if self.path in listener.routes:
                raise ConnectionUnavailableError(f"Listener URL {self.options['receiver.url']} already connected "
                                                 f"(another http source listens on {self.host}:{self.port}"
                                                 f"{self.path})")
            listener.routes[self.path] = self
            self._key = key
        self._log.info("http source listening", url=f"{self.scheme}://{self.host}:{self.bound_port}{self.path}")

    def _ssl_context(self) -> ssl.SSLContext | None:
        if self.scheme != "https":
            return None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.options["ssl.cert.file"], self.options["ssl.key.file"])
        return context

    def _authorized(self, request: web.Request) -> bool:
        if not self.options["basic.auth.enabled"]:
            return True
        scheme, _, value = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            user, _, password = base64.b64decode(value, validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return False
        return (hmac.compare_digest(user, self.options["basic.auth.username"])
                & hmac.compare_digest(password, self.options["basic.auth.password"]))

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """One request: queued for the next chunk, answered when its events are in the app."""
        return await self._accept(request, {})

    async def _accept(self, request: web.Request, extra: dict[str, Any]) -> web.Response:
        """Queue the request's body as a message (with ``extra`` properties) and wait until
        its chunk is taken: 200, or the error status to answer with."""
        if request.method == "OPTIONS":  # a CORS preflight, answered as Siddhi does
            cors = {"Allow": "POST", "Access-Control-Allow-Methods": "POST",
                    "Access-Control-Allow-Headers": "Content-Type,User-Agent,Origin,Referer,Accept"}
            if request.headers.get("Origin"):
                cors["Access-Control-Allow-Origin"] = request.headers["Origin"]
            return web.Response(status=200, headers=cors)
        if request.method != "POST":
            return web.json_response({"error": "send events with POST"}, status=405, headers={"Allow": "POST"})
        if not self._authorized(request):
            return web.json_response({"error": "unauthorized"}, status=401,
                                     headers={"WWW-Authenticate": 'Basic realm="srota"'})
        pending = self._pending
        if self._stopping or pending is None or self.paused or pending.qsize() >= self.options["buffer.size"]:
            return web.json_response({"error": "the app is not taking events now; retry later"}, status=503,
                                     headers={"Retry-After": "1"})
        body = await request.read()
        if not body:  # Siddhi drops an empty payload before mapping (and answers 405)
            return web.json_response({"error": "empty payload: nothing to map"}, status=400)
        properties: dict[str, Any] = dict(request.headers)
        properties.update(method=request.method, path=request.path, **extra)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        message = Message(body, properties, _Reply(future))
        pending.put_nowait(message)
        try:
            await future
        except ConnectionUnavailableError as exc:
            return web.json_response({"error": str(exc)}, status=503, headers={"Retry-After": "1"})
        if message.rejected is not None:
            return web.json_response({"error": message.rejected}, status=400)
        return web.json_response({"status": "accepted"})

    async def _run(self) -> None:
        queue = self._pending
        assert queue is not None
        if self._key is None:
            await self._listen_until_done()
        limit = self.options["batch.size"]
        while not self._stopping:
            await self._resumed.wait()
            messages = await take_batch(queue, limit)
            delivered = False
            try:
                delivered = await self._deliver(messages)
            finally:  # (also when stopped mid-chunk: no client waits for ever)
                for m in messages:
                    reply = m.ack
                    if isinstance(reply, _Reply) and not reply.future.done():
                        if delivered:
                            reply.future.set_result(None)
                        else:
                            reply.future.set_exception(ConnectionUnavailableError("the app did not take the events"))

    async def _close(self) -> None:
        queue, self._pending = self._pending, None
        while queue is not None and not queue.empty():  # not delivered: the client may retry
            reply = queue.get_nowait().ack
            if isinstance(reply, _Reply) and not reply.future.done():
                reply.future.set_exception(ConnectionUnavailableError("the service is shutting down"))
        async with _listeners_lock:
            key = self._key
            listener = _listeners.get(key) if key is not None else None
            if listener is None:
                return
            listener.routes.pop(self.path, None)
            if not listener.routes:
                for k in [k for k, v in _listeners.items() if v is listener]:
                    del _listeners[k]
                await listener.runner.cleanup()
            self._key = None


# ---------------------------------------------------------------------------- the sink
_SINK_PARAMS = (
    Param("publisher.url", _S, dynamic=True, doc="Where to send: http(s)://host:port/path; may be a template."),
    Param("method", _S, optional=True, default="POST", dynamic=True,
          doc="The HTTP method (may be a template); GET requests carry no body, as in Siddhi."),
    Param("headers", _S, optional=True, dynamic=True,
          doc="Extra headers as \"'Name:value','Name:value'\"; may hold templates."),
    Param("content.type", _S, optional=True, doc="Content-Type (default: by the mapper's payload)."),
    Param("basic.auth.username", _S, optional=True, doc="User for HTTP basic auth."),
    Param("basic.auth.password", _S, optional=True, doc="Password for HTTP basic auth."),
    Param("ssl.verify", _B, optional=True, default=True, doc="Check the server's certificate (https)."),
    Param("ssl.ca.file", _S, optional=True, doc="A PEM CA bundle to trust (https with a private CA)."),
    Param("request.timeout", _I, optional=True, default=30_000, doc="Milliseconds for one request."),
)


@extension(Kind.SINK, "http", params=_SINK_PARAMS, doc="Send each event as an HTTP request.")
class HttpSink(Sink):
    """Sends each payload as one request to ``publisher.url``; see the module doc."""

    type_name = "http"
    PARAMS: ClassVar[tuple[Param, ...]] = _SINK_PARAMS

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "", pos: Any = None) -> None:
        super().__init__(options, name=name, pos=pos)
        o = self.options
        url = o["publisher.url"]
        if "{{" not in url:
            try:
                _split_url(url, "publisher.url")
            except ValueError as exc:
                raise creation_error(f"http sink: {exc}", pos) from None
        headers = o.get("headers")
        self._static_headers = parse_headers(headers) if headers and "{{" not in headers else None
        self._session: aiohttp.ClientSession | None = None
        user, password = o.get("basic.auth.username"), o.get("basic.auth.password")
        if bool(user) != bool(password):  # as Siddhi: both or neither
            raise creation_error(f"{self.type_name} sink: basic auth needs both basic.auth.username and "
                                 "basic.auth.password", pos)
        self._auth = ("Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()) if user else None

    def _ssl(self) -> ssl.SSLContext | bool:
        if not self.options["ssl.verify"]:
            return False
        if self.options.get("ssl.ca.file"):
            return ssl.create_default_context(cafile=self.options["ssl.ca.file"])
        return True

    async def connect(self) -> None:
        """Open the client session (requests connect per destination, kept alive)."""
        if self._session is None:
            timeout = aiohttp.ClientTimeout(total=self.options["request.timeout"] / 1000)
            self._session = aiohttp.ClientSession(timeout=timeout, connector=aiohttp.TCPConnector(ssl=self._ssl()))

    @property
    def connected(self) -> bool:
        return self._session is not None and not self._session.closed

    async def publish(self, items: Sequence[tuple[Any, Mapping[str, Any]]]) -> None:
        """Send each payload as a request, in order (see the module doc for the statuses)."""
        if self._session is None:
            raise ConnectionUnavailableError(f"{self.type_name} sink is not connected")
        session = self._session
        rejected: dict[int, str] = {}
        for i, (payload, props) in enumerate(items):
            url = str(self._option(props, "publisher.url"))
            method = str(self._option(props, "method") or "POST").upper()
            headers = dict(self._static_headers) if self._static_headers is not None else \
                parse_headers(self._option(props, "headers"))
            if not any(k.lower() == "content-type" for k in headers):  # a given header wins, any case
                headers["Content-Type"] = _content_type(payload, self.options.get("content.type"), self.map_type)
            if self._auth is not None:
                headers["Authorization"] = self._auth
            data = None if method == "GET" else _body(payload)
            try:
                async with session.request(method, url, data=data, headers=headers) as response:
                    status = response.status
                    reason = f"{status} {response.reason or ''}".strip()
                    body, taken = await self._read(response, props)
                    answer_headers = dict(response.headers)
            except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                raise ConnectionUnavailableError(f"{self.type_name} sink cannot reach {url}: {exc}",
                                                 published=i) from None
            refused = await self._answered(i, status, reason, body, answer_headers,
                                           {**props, "publisher.url": url, **taken})
            if refused is not None:
                rejected[i] = refused
        if rejected:
            raise RejectedError(f"{self.type_name} sink: {len(rejected)} request(s) refused", rejected)

    async def _read(self, response: aiohttp.ClientResponse, props: Mapping[str, Any]) -> tuple[bytes, dict[str, Any]]:
        """A response's body, and properties saying what was done with it (none here)."""
        return await response.read(), {}

    async def _answered(self, index: int, status: int, reason: str, body: bytes,
                        headers: Mapping[str, str], props: Mapping[str, Any]) -> str | None:
        """What a response means: None when delivered, the reason when refused for good;
        raises :class:`ConnectionUnavailableError` when worth retrying."""
        if status < 300:
            return None
        text = body[:200].decode(errors="replace")
        if 400 <= status < 500 and status not in (408, 429):
            return f"{reason}: {text}" if text else reason
        raise ConnectionUnavailableError(f"{self.type_name} sink: {props.get('publisher.url')} answered {reason}",
                                         published=index)

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            with contextlib.suppress(Exception):
                await session.close()




# ---------------------------------------------------------------------------- service style
#: Requests of ``http-service`` sources waiting for their ``http-service-response``:
#: source.id -> message id -> the future of (payload, headers).
_waiting: dict[str, dict[str, asyncio.Future[tuple[Any, dict[str, str]]]]] = {}


_SERVICE_PARAMS = (*_SOURCE_PARAMS,
                   Param("source.id", _S, doc="The id an http-service-response sink answers through."),
                   Param("connection.timeout", _I, optional=True, default=120_000,
                         doc="Milliseconds a request waits for its response before it gets 504."))


@extension(Kind.SOURCE, "http-service", params=_SERVICE_PARAMS,
           doc="Receive HTTP requests and answer each with an http-service-response sink's event.")
class HttpServiceSource(HttpSource):
    """``http-service``: a request's events carry ``trp:messageId``; the request is answered
    with the payload an ``http-service-response`` sink of the same ``source.id`` publishes for
    that ``message.id`` (``504`` after ``connection.timeout``; ``400`` when the body does not
    map)."""

    type_name = "http-service"
    PARAMS = _SERVICE_PARAMS

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Take the request like ``http``, then wait for the app's response to it."""
        message_id = uuid.uuid4().hex
        waiting = _waiting.setdefault(self.options["source.id"], {})
        reply: asyncio.Future[tuple[Any, dict[str, str]]] = asyncio.get_running_loop().create_future()
        waiting[message_id] = reply  # before the events go in: the app may answer at once
        try:
            accepted = await self._accept(request, {"messageId": message_id})
            if accepted.status != 200:
                return accepted
            try:
                async with asyncio.timeout(self.options["connection.timeout"] / 1000):
                    payload, headers = await reply
            except TimeoutError:
                return web.json_response({"error": "no response from the app in time"}, status=504)
            body = _body(payload)
            headers = {"Content-Type": _content_type(payload, None), **headers}
            return web.Response(body=body, headers=headers)
        finally:
            waiting.pop(message_id, None)


_SERVICE_RESPONSE_PARAMS = (
    Param("source.id", _S, doc="The http-service source whose requests this answers."),
    Param("message.id", _S, dynamic=True, doc="The request answered: '{{messageId}}' of the event."),
    Param("headers", _S, optional=True, dynamic=True, doc="Response headers as \"'Name:value',...\"."),
)


@extension(Kind.SINK, "http-service-response", params=_SERVICE_RESPONSE_PARAMS,
           doc="Answer the requests of an http-service source.")
class HttpServiceResponseSink(Sink):
    """Answers a waiting ``http-service`` request with each payload (see the source)."""

    type_name = "http-service-response"
    PARAMS = _SERVICE_RESPONSE_PARAMS

    async def connect(self) -> None:
        """Nothing to connect: the requests are in this process."""

    async def publish(self, items: Sequence[tuple[Any, Mapping[str, Any]]]) -> None:
        """Answer each payload's request; one that is gone (timed out) is logged and skipped."""
        waiting = _waiting.get(self.options["source.id"], {})
        for payload, props in items:
            message_id = str(self._option(props, "message.id"))
            reply = waiting.get(message_id)
            if reply is None or reply.done():
                self._log.warning("no request waits for this response (answered or timed out)",
                                  message_id=message_id)
                continue
            headers = parse_headers(self._option(props, "headers"))
            if self.map_type and not any(k.lower() == "content-type" for k in headers):
                headers["Content-Type"] = _content_type(payload, None, self.map_type)
            reply.set_result((payload, headers))

    async def close(self) -> None:
        """Nothing to close."""


#: ``http-call-response`` sources by the ``sink.id`` of the ``http-call`` sinks they hear.
_responders: dict[str, list[HttpCallResponseSource]] = {}

_CALL_PARAMS = (*_SINK_PARAMS, Param("sink.id", _S, doc="The id http-call-response sources take responses by."),
                Param("downloading.enabled", (AttrType.BOOL,), optional=True, default=False,
                      doc="Save a 2xx response's body to download.path; the response sources get the file's path."),
                Param("download.path", _S, optional=True, dynamic=True,
                      doc="The file a downloaded response is written to (may be a template)."))


@extension(Kind.SINK, "http-call", params=_CALL_PARAMS,
           doc="Call an HTTP endpoint per event; its responses go to http-call-response sources.")
class HttpCallSink(HttpSink):
    """``http-call``: each payload is a request as for ``http``; every response (whatever its
    status) goes to the ``http-call-response`` sources of the same ``sink.id`` whose
    ``http.status.code`` matches it, with the request's rendered options, the response's
    headers, the request event's attributes (``trp:<attribute>``, as Siddhi's) and
    ``trp:http.status.code`` as properties (the later win).  With ``downloading.enabled`` a
    2xx response's body is written to ``download.path`` and the sources get that path: it
    streams into a ``.part`` file beside it (a piece at a time, never whole in memory),
    renamed when complete, so the path never shows a partial download.  A network error
    (also in the middle of a body) is retried; a file that cannot be written is logged and
    the response dropped."""

    type_name = "http-call"
    PARAMS = _CALL_PARAMS
    wants_events = True

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "", pos: Any = None) -> None:
        super().__init__(options, name=name, pos=pos)
        self._download = bool(self.options["downloading.enabled"])
        if self._download and not self.options.get("download.path"):
            raise creation_error(f"{self.type_name} sink: downloading.enabled='true' needs download.path", pos)

    async def _read(self, response: aiohttp.ClientResponse, props: Mapping[str, Any]) -> tuple[bytes, dict[str, Any]]:
        if not (self._download and 200 <= response.status < 300):
            return await super()._read(response, props)
        # Siddhi's HttpResponseProcessor: the body goes to the file, the sources get its path
        path = str(self._option(props, "download.path"))
        try:
            await _download(response, Path(path))
        except _UnsavedError as exc:
            self._log.error("http-call: cannot save the response", path=path, error=str(exc))
            return b"", {"_unsaved": True}
        return path.encode(), {"download.path": path}

    async def _answered(self, index: int, status: int, reason: str, body: bytes,
                        headers: Mapping[str, str], props: Mapping[str, Any]) -> str | None:
        if props.get("_unsaved"):
            return None  # logged by _read; nothing to hand on
        event = props.get("_event") or {}
        properties = {**{k: v for k, v in props.items() if not k.startswith("_")}, **headers, **event,
                      "http.status.code": str(status)}
        taken = False
        for source in list(_responders.get(self.options["sink.id"], ())):
            taken |= source.offer(status, Message(body, properties))
        if not taken:
            self._log.warning("no http-call-response source takes this response", status=status,
                              sink_id=self.options["sink.id"])
        return None  # answered: delivered, whatever the status


#: The pieces a downloaded body is read and written in.
DOWNLOAD_PIECE_BYTES = 1 << 18


class _UnsavedError(Exception):
    """A downloaded body could not be written (the file system's error, not the network's)."""


async def _on_disk(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a worker thread (a slow disk does not hold up the event
    loop), its OSError an :class:`_UnsavedError`."""
    try:
        return await asyncio.to_thread(fn, *args, **kwargs)
    except OSError as exc:
        raise _UnsavedError(str(exc)) from exc


async def _download(response: aiohttp.ClientResponse, target: Path) -> None:
    """Stream ``response``'s body into ``target`` (see :class:`HttpCallSink`); the ``.part``
    file goes whatever fails (a network error is raised as it is, to be retried)."""
    part = target.with_name(target.name + ".part")
    await _on_disk(target.parent.mkdir, parents=True, exist_ok=True)
    file = await _on_disk(part.open, "wb")
    try:
        try:
            async for piece in response.content.iter_chunked(DOWNLOAD_PIECE_BYTES):
                await _on_disk(file.write, piece)
        finally:
            await _on_disk(file.close)
        await _on_disk(part.replace, target)
    except BaseException:
        with contextlib.suppress(OSError):
            part.unlink(missing_ok=True)
        raise


_CALL_RESPONSE_PARAMS = (
    Param("sink.id", _S, doc="The http-call sink whose responses this source takes."),
    Param("http.status.code", _S, optional=True, default="200",
          doc="A regular expression the response's status code must match (e.g. '2\\\\d+')."),
    Param("batch.size", _I, optional=True, default=1024, doc="The largest chunk handed to the host."),
)


@extension(Kind.SOURCE, "http-call-response", params=_CALL_RESPONSE_PARAMS,
           doc="Receive the responses of an http-call sink.")
class HttpCallResponseSource(Source):
    """The responses of the ``http-call`` sink with the same ``sink.id`` (see the sink)."""

    type_name = "http-call-response"
    PARAMS = _CALL_RESPONSE_PARAMS

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "", pos: Any = None) -> None:
        super().__init__(options, name=name, pos=pos)
        try:
            self._status = re.compile(self.options["http.status.code"])
        except re.error as exc:
            raise creation_error(f"http-call-response: http.status.code is not a regular expression: {exc}",
                                 pos) from None
        self._queue: asyncio.Queue[Message] = asyncio.Queue()

    def offer(self, status: int, message: Message) -> bool:
        """Take a response whose status matches (called by the sink); whether it did."""
        if not self._status.fullmatch(str(status)):
            return False
        self._queue.put_nowait(message)
        return True

    async def start(self, on_messages: Any) -> None:
        """Listen to the sink's responses from now on, then deliver."""
        _responders.setdefault(self.options["sink.id"], []).append(self)
        self._ready.set()
        await super().start(on_messages)

    async def _run(self) -> None:
        queue = self._queue
        limit = self.options["batch.size"]
        while not self._stopping:
            await self._resumed.wait()
            await self._deliver(await take_batch(queue, limit))

    async def _close(self) -> None:
        listeners = _responders.get(self.options["sink.id"], [])
        if self in listeners:
            listeners.remove(self)


# ---------------------------------------------------------------------------- Siddhi's deprecated names
@extension(Kind.SOURCE, "http-request", params=_SERVICE_PARAMS,
           doc="Deprecated name of http-service (as in Siddhi).")
class HttpRequestSource(HttpServiceSource):
    """``http-request``: Siddhi's deprecated name of ``http-service``."""

    type_name = "http-request"


@extension(Kind.SINK, "http-response", params=_SERVICE_RESPONSE_PARAMS,
           doc="Deprecated name of http-service-response (as in Siddhi).")
class HttpResponseSink(HttpServiceResponseSink):
    """``http-response``: Siddhi's deprecated name of ``http-service-response``."""

    type_name = "http-response"


@extension(Kind.SINK, "http-request", params=_CALL_PARAMS,
           doc="Deprecated name of http-call (as in Siddhi).")
class HttpRequestSink(HttpCallSink):
    """``http-request``: Siddhi's deprecated name of ``http-call``."""

    type_name = "http-request"


@extension(Kind.SOURCE, "http-response", params=_CALL_RESPONSE_PARAMS,
           doc="Deprecated name of http-call-response (as in Siddhi).")
class HttpResponseSource(HttpCallResponseSource):
    """``http-response``: Siddhi's deprecated name of ``http-call-response``."""

    type_name = "http-response"


__all__ = ["HttpCallResponseSource", "HttpCallSink", "HttpRequestSink", "HttpRequestSource", "HttpResponseSink",
           "HttpResponseSource", "HttpServiceResponseSink", "HttpServiceSource", "HttpSink", "HttpSource", "log",
           "parse_headers"]
