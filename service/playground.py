"""The browser playground: write, validate, feed, watch and debug an app (docs/playground.md).

``srota playground [APP]`` serves it on a free loopback port; a running service serves it at
``/playground`` when ``http.playground.enabled`` is set (behind the admin token).  The page is
static (``playground_static/``: plain ES modules and the vendored CodeMirror 6 bundle, no
network at run time); everything it does goes through the JSON API below.

Each browser tab is a *session* (an id the page makes up); a session runs at most one app, in
a sandbox process of its own (:mod:`srota.service.sandbox`) so that a runaway query is
stopped with a message while the server and the service's apps go on.

=================================================  ==========================================
``POST /api/validate`` ``{text}``                  problems (line, column, message) and the
                                                   names the editor completes
``GET  /api/examples``, ``/api/examples/{name}``   the shipped example apps
``POST /api/sessions/{s}/run`` ``{text}``          run (stops the session's previous app)
``POST /api/sessions/{s}/stop``                    stop
``POST /api/sessions/{s}/send`` ``{stream, events}``  one chunk of events (``[values]`` or
                                                   ``{data, timestamp}``)
``POST /api/sessions/{s}/simulations``             replay a CSV/JSON file or random data
``POST /api/sessions/{s}/simulations/{id}/{action}``  ``pause``, ``resume``, ``stop``
``POST /api/sessions/{s}/query`` ``{text}``        an on-demand query
``PUT|DELETE /api/sessions/{s}/breakpoints/{query}/{in|out}``, ``POST .../debug/{next|play}``
``GET  /api/sessions/{s}/queries/{query}/state``   a query's state (while held, too)
``GET  /api/sessions/{s}/events``                  server-sent events: output, held, stopped,
                                                   statistics, simulation
=================================================  ==========================================
"""
from __future__ import annotations

import asyncio
import contextlib
import csv
import functools
import io
import itertools
import random
import string
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import structlog
from aiohttp import web
from srota.grammar.model import AttrType
from srota.mappers._convert import value_converter
from srota.service._web import event_stream, json_error, json_response
from srota.service.sandbox import Sandbox, SandboxError, SandboxGone, SandboxLimits

_log = structlog.get_logger("srota.playground")

STATIC = Path(__file__).parent / "playground_static"
#: Largest request body (an uploaded file included).
MAX_BODY = 16 << 20
#: Sessions one server keeps; the least recently used is stopped beyond this.
MAX_SESSIONS = 8
#: Events one simulation sends per tick at most (one chunk).
_MAX_CHUNK = 5000
_TICK = 0.05
_SIMULATION_KINDS = ("csv", "json", "random")


def _error(message: str, status: int = 400, **extra: Any) -> web.Response:
    return json_response({"error": message, **extra}, status)


async def _body(request: web.Request) -> dict[str, Any]:
    """The JSON object of a request body (at most :data:`MAX_BODY` bytes).

    The body is read from the stream rather than with ``request.read()``, whose limit is the
    admin server's (1 MiB, for its small control requests); uploads here may be larger.
    """
    data = bytearray()
    async for chunk in request.content.iter_chunked(1 << 16):
        data.extend(chunk)
        if len(data) > MAX_BODY:
            raise web.HTTPRequestEntityTooLarge(max_size=MAX_BODY, actual_size=len(data))
    try:
        body = orjson.loads(bytes(data))
    except orjson.JSONDecodeError as exc:
        raise json_error(web.HTTPBadRequest, f"the body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise json_error(web.HTTPBadRequest, "the body must be a JSON object")
    return body


# ============================================================================ simulations
@dataclass
class Simulation:
    """One feed into a stream: rows replayed at a rate or by their timestamps, or random data."""

    id: str
    stream: str
    kind: str
    rows: Iterator[dict[str, Any]]
    rate: float | None = None  #: events per second; None: by the rows' timestamps
    speed: float = 1.0  #: with timestamps: 2.0 replays twice as fast
    total: int | None = None
    sent: int = 0
    state: str = "running"
    error: str | None = None
    resume: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, "stream": self.stream, "kind": self.kind, "sent": self.sent,
                "total": self.total, "state": self.state, "error": self.error}


def _converters(attributes: list[dict[str, str]]) -> list[Callable[[Any], Any]]:
    return [value_converter(AttrType(a["type"])) for a in attributes]


def _checked_row(values: list[Any], attributes: list[dict[str, str]], converters: list[Callable[[Any], Any]],
                 where: str) -> list[Any]:
    """``values`` as the attributes' types, or a 400 that names the row and the attribute."""
    if len(values) != len(attributes):
        raise ValueError(f"{where}: {len(values)} values for {len(attributes)} attributes "
                         f"({', '.join(a['name'] for a in attributes)})")
    out: list[Any] = []
    for value, attr, convert in zip(values, attributes, converters, strict=True):
        if value is None or value == "" and attr["type"] != "string":
            out.append(None)
            continue
        try:
            out.append(convert(value))
        except Exception as exc:  # noqa: BLE001 -- the converter's reason is the message
            raise ValueError(f"{where}, {attr['name']} ({attr['type']}): {exc}") from None
    return out


def parse_file(kind: str, content: str, attributes: list[dict[str, str]],
               timestamp_column: str | None, max_rows: int) -> list[dict[str, Any]]:
    """The rows of an uploaded CSV or JSON file as ``{data, timestamp}``, every value checked.

    CSV: a header row naming every attribute (in any order, other columns ignored) or no
    header (values in the stream's order).  JSON: an array of objects keyed by attribute
    (Siddhi's ``{"event": {...}}`` form too) or of arrays.  ``timestamp_column`` names the
    column (or key) holding each event's epoch-millisecond time.  Raises ``ValueError`` with
    the line (or item) and attribute of the first value that does not fit.
    """
    names = [a["name"] for a in attributes]
    converters = _converters(attributes)
    rows: list[dict[str, Any]] = []

    def add(values: list[Any], ts: Any, where: str) -> None:
        if len(rows) >= max_rows:
            raise ValueError(f"the file has more than {max_rows:,} events (the playground's limit per run)")
        stamp = None
        if timestamp_column:
            try:
                stamp = int(float(ts))
            except (TypeError, ValueError):
                raise ValueError(f"{where}: timestamp {ts!r} in {timestamp_column!r} is not epoch milliseconds") from None
        rows.append({"data": _checked_row(values, attributes, converters, where), "timestamp": stamp})

    if kind == "csv":
        records = list(csv.reader(io.StringIO(content)))
        records = [r for r in records if r and any(c.strip() for c in r)]
        if not records:
            raise ValueError("the file has no rows")
        header = [c.strip() for c in records[0]]
        if set(names) <= set(header):
            index = [header.index(n) for n in names]
            ts_index = None
            if timestamp_column:
                if timestamp_column not in header:
                    raise ValueError(f"line 1: no column {timestamp_column!r} (columns: {', '.join(header)})")
                ts_index = header.index(timestamp_column)
            for line, record in enumerate(records[1:], start=2):
                if len(record) != len(header):
                    raise ValueError(f"line {line}: {len(record)} fields, the header has {len(header)}")
                add([record[i] for i in index], record[ts_index] if ts_index is not None else None, f"line {line}")
        else:
            if timestamp_column:
                raise ValueError("a timestamp column needs a header row naming the stream's attributes")
            if len(header) == len(names) and all(not _is_value(c) for c in header) and \
                    any(h.lower() in {n.lower() for n in names} for h in header):
                raise ValueError(f"line 1: the header does not name every attribute of the stream ({', '.join(names)})")
            for line, record in enumerate(records, start=1):
                add(record, None, f"line {line}")
        return rows
    if kind == "json":
        try:
            items = orjson.loads(content)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"the file is not JSON: {exc}") from None
        if isinstance(items, dict):
            items = [items]
        if not isinstance(items, list):
            raise ValueError("the file must hold a JSON array of events")
        for n, item in enumerate(items, start=1):
            if isinstance(item, dict) and isinstance(item.get("event"), dict):
                item = item["event"]
            if isinstance(item, dict):
                missing = [k for k in names if k not in item]
                if missing:
                    raise ValueError(f"item {n}: no {', '.join(missing)}")
                add([item[k] for k in names], item.get(timestamp_column) if timestamp_column else None, f"item {n}")
            elif isinstance(item, list):
                add(item, None, f"item {n}")
            else:
                raise ValueError(f"item {n}: an event is an object or an array, not {type(item).__name__}")
        return rows
    raise ValueError(f"unknown file kind {kind!r} (csv or json)")


def _is_value(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return text.lower() in ("true", "false")


def _from_pattern(rng: random.Random, pattern: str) -> str:
    """A string like ``pattern``: each ``#`` a random digit, each ``?`` a random capital."""
    return "".join(rng.choice(string.digits) if c == "#" else rng.choice(string.ascii_uppercase) if c == "?" else c
                   for c in pattern)


def _rounded_uniform(rng: random.Random, low: float, high: float) -> float:
    return round(rng.uniform(low, high), 2)


def random_rows(attributes: list[dict[str, str]], spec: dict[str, Any], seed: int | None = None) -> Iterator[dict[str, Any]]:
    """Endless random events: per attribute ``{"min", "max"}`` (numbers), ``{"values": [...]}``
    (picked from a list), ``{"pattern": "sensor-##"}`` (a string, ``#`` a random digit and ``?``
    a random capital letter) or nothing (a default range: 0..100, strings of 5 letters, either
    bool)."""
    rng = random.Random(seed)
    makers: list[Callable[[], Any]] = []
    for attr in attributes:
        options = spec.get(attr["name"]) or {}
        if not isinstance(options, dict):
            raise ValueError(f"{attr['name']}: expected {{min, max}} or {{values: [...]}}")
        pattern = options.get("pattern")
        if pattern:
            if attr["type"] != "string" or not isinstance(pattern, str):
                raise ValueError(f"{attr['name']}: a pattern makes strings; {attr['name']} is {attr['type']}")
            makers.append(functools.partial(_from_pattern, rng, pattern))
            continue
        values = options.get("values")
        if values:
            if not isinstance(values, list):
                raise ValueError(f"{attr['name']}: values must be a list")
            checked = [_checked_row([v], [attr], _converters([attr]), f"{attr['name']} value")[0] for v in values]
            makers.append(functools.partial(rng.choice, checked))
            continue
        low, high = options.get("min", 0), options.get("max", 100)
        try:
            low, high = float(low), float(high)
        except (TypeError, ValueError):
            raise ValueError(f"{attr['name']}: min and max must be numbers") from None
        if low > high:
            raise ValueError(f"{attr['name']}: min {low:g} is above max {high:g}")
        kind = attr["type"]
        if kind in ("int", "long"):
            makers.append(functools.partial(rng.randint, int(low), int(high)))
        elif kind in ("float", "double"):
            makers.append(functools.partial(_rounded_uniform, rng, low, high))
        elif kind == "bool":
            makers.append(lambda: rng.random() < 0.5)
        else:
            makers.append(lambda: "".join(rng.choices(string.ascii_uppercase, k=5)))
    while True:
        yield {"data": [make() for make in makers], "timestamp": None}


# ============================================================================ sessions
class _Session:
    """One tab's app: its sandbox, simulations and event-stream listeners."""

    def __init__(self, ident: str, limits: SandboxLimits) -> None:
        self.id = ident
        self.limits = limits
        self.sandbox: Sandbox | None = None
        self.app: dict[str, Any] | None = None
        self.simulations: dict[str, Simulation] = {}
        self.listeners: list[asyncio.Queue[tuple[str, Any]]] = []
        self._statistics: asyncio.Task[None] | None = None

    def publish(self, message: dict[str, Any]) -> None:
        """Hand a message (its ``event`` names it) to every open event stream; a slow page
        loses the oldest messages, never blocks the server."""
        for q in self.listeners:
            if q.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    q.get_nowait()  # drop the oldest: the newest outputs matter more
                q.put_nowait(("dropped", {"event": "dropped"}))
            with contextlib.suppress(asyncio.QueueFull):
                q.put_nowait((message["event"], message))

    def _notice(self, message: dict[str, Any]) -> None:
        if message.get("event") == "stopped":
            self.app = None
            for sim in self.simulations.values():
                if sim.task is not None:
                    sim.task.cancel()
        self.publish(message)

    async def run(self, text: str, attach: str | None = None) -> dict[str, Any]:
        """Run ``text`` in a new sandbox (``attach``: a service config whose connectors it uses)."""
        await self.stop()
        sandbox = Sandbox(self.limits, self._notice)
        await sandbox.start()
        self.sandbox = sandbox
        try:
            self.app = await sandbox.request("run", text=text, limits=self.limits.__dict__, attach=attach)
        except (SandboxError, SandboxGone):
            await self.stop()
            raise
        self._statistics = asyncio.create_task(self._report_statistics())
        return self.app

    async def stop(self) -> None:
        for sim in list(self.simulations.values()):
            if sim.task is not None:
                sim.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await sim.task
        self.simulations.clear()
        if self._statistics is not None:
            self._statistics.cancel()
            self._statistics = None
        if self.sandbox is not None:
            await self.sandbox.stop()
            self.sandbox = None
        self.app = None

    def require(self) -> Sandbox:
        if self.sandbox is None or not self.sandbox.alive:
            reason = self.sandbox.gone_reason if self.sandbox is not None else None
            raise SandboxGone(reason if reason and reason != "stopped" else "no app is running: press Run")
        return self.sandbox

    async def _report_statistics(self) -> None:
        while True:
            await asyncio.sleep(1)
            sandbox = self.sandbox
            if sandbox is None or not sandbox.alive:
                return
            with contextlib.suppress(SandboxError, SandboxGone, TimeoutError):
                report = await asyncio.wait_for(sandbox.request("statistics"), 2)
                self.publish({"event": "statistics", "report": report})

    def attributes(self, stream: str) -> list[dict[str, str]]:
        if self.app is None:
            raise SandboxGone("no app is running: press Run")
        for s in self.app["streams"]:
            if s["name"] == stream:
                return list(s["attributes"])
        raise SandboxError(f"no stream named {stream!r} in the running app")

    async def simulate(self, sim: Simulation) -> None:
        """Feed ``sim``'s rows into its stream in chunks, paced by rate or timestamps."""
        sandbox = self.require()
        started = time.monotonic()
        first_ts: int | None = None
        pending: dict[str, Any] | None = None
        self.publish({"event": "simulation", **sim.describe()})
        try:
            while True:
                if not sim.resume.is_set():
                    paused_at = time.monotonic()
                    await sim.resume.wait()
                    started += time.monotonic() - paused_at
                elapsed = time.monotonic() - started
                chunk: list[dict[str, Any]] = []
                while len(chunk) < _MAX_CHUNK:
                    if pending is None:
                        pending = next(sim.rows, None)
                        if pending is None:
                            break
                    if sim.rate is not None:
                        due = sim.sent + len(chunk) < sim.rate * elapsed + 1
                    else:
                        ts = pending["timestamp"]
                        first_ts = ts if first_ts is None else first_ts
                        due = ts is None or (ts - first_ts) / 1000 / sim.speed <= elapsed
                    if not due:
                        break
                    chunk.append(pending)
                    pending = None
                if chunk:
                    await sandbox.request("send", busy=True, stream=sim.stream, events=chunk)
                    sim.sent += len(chunk)
                    self.publish({"event": "simulation", **sim.describe()})
                if pending is None and not chunk:
                    sim.state = "done"
                    break
                await asyncio.sleep(_TICK)
        except (SandboxError, SandboxGone) as exc:
            sim.state, sim.error = "failed", str(exc)
        except asyncio.CancelledError:
            sim.state = "stopped"
            raise
        finally:
            self.publish({"event": "simulation", **sim.describe()})


# ============================================================================ routes
class Playground:
    """The playground's page and API, for one aiohttp application (see the module docstring)."""

    def __init__(self, limits: SandboxLimits | None = None, initial_app: Path | None = None,
                 examples: list[Path] | None = None, service_config: Path | None = None) -> None:
        self.limits = limits or SandboxLimits()
        self.initial_app = initial_app
        #: A service config whose connectors an app may attach (its @source/@sink, ref=s).
        self.service_config = service_config
        self.examples = examples if examples is not None else default_examples()
        self._sessions: OrderedDict[str, _Session] = OrderedDict()

    def add_routes(self, app: web.Application, prefix: str = "/playground") -> None:
        r = app.router
        api = prefix + "/api"
        s = api + "/sessions/{session}"
        r.add_get(prefix, self._redirect)
        r.add_get(prefix + "/", self._index)
        r.add_static(prefix + "/static", STATIC, append_version=False)
        r.add_get(api + "/info", self._info)
        r.add_post(api + "/validate", self._validate)
        r.add_get(api + "/examples", self._examples)
        r.add_get(api + "/examples/{name}", self._example)
        r.add_post(s + "/run", self._run)
        r.add_post(s + "/stop", self._stop)
        r.add_post(s + "/send", self._send)
        r.add_post(s + "/simulations", self._simulate)
        r.add_post(s + "/simulations/{id}/{action}", self._simulation_action)
        r.add_post(s + "/query", self._query)
        r.add_put(s + "/breakpoints/{query}/{terminal}", self._breakpoint)
        r.add_delete(s + "/breakpoints/{query}/{terminal}", self._breakpoint)
        r.add_post(s + "/debug/{action}", self._step)
        r.add_get(s + "/queries/{query}/state", self._query_state)
        r.add_get(s + "/events", self._events)
        app.on_shutdown.append(self._shutdown)

    async def _shutdown(self, app: web.Application) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop every session's app."""
        for session in list(self._sessions.values()):
            await session.stop()
        self._sessions.clear()

    # ------------------------------------------------------------------ page
    async def _redirect(self, request: web.Request) -> web.Response:
        raise web.HTTPFound(request.path + "/")

    async def _index(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def _info(self, request: web.Request) -> web.Response:
        config = self.service_config
        return json_response({"attach": config is not None, "config": None if config is None else config.name,
                              "limits": self.limits.__dict__})

    async def _examples(self, request: web.Request) -> web.Response:
        items = []
        if self.initial_app is not None:
            items.append({"name": self.initial_app.name, "title": _title(self.initial_app), "initial": True})
        items.extend({"name": p.name, "title": _title(p), "initial": False} for p in self.examples
                     if self.initial_app is None or p.resolve() != self.initial_app.resolve())
        return json_response(items)

    async def _example(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        for path in ([self.initial_app] if self.initial_app else []) + self.examples:
            if path.name == name:
                return web.Response(text=path.read_text(encoding="utf-8"), content_type="text/plain")
        return _error(f"no example named {name!r}", 404)

    # ------------------------------------------------------------------ validate
    async def _validate(self, request: web.Request) -> web.Response:
        text = (await _body(request)).get("text")
        if not isinstance(text, str):
            return _error('expected {"text": APP}')
        result = await asyncio.get_running_loop().run_in_executor(None, check, text)
        return json_response(result)

    # ------------------------------------------------------------------ run
    def _session(self, request: web.Request) -> _Session:
        ident = request.match_info["session"]
        session = self._sessions.get(ident)
        if session is None:
            session = _Session(ident, self.limits)
            self._sessions[ident] = session
            while len(self._sessions) > MAX_SESSIONS:
                _, oldest = self._sessions.popitem(last=False)
                oldest.publish({"event": "stopped", "reason": "too many playground sessions: this one was closed"})
                asyncio.get_running_loop().create_task(oldest.stop())
        self._sessions.move_to_end(ident)
        return session

    async def _run(self, request: web.Request) -> web.Response:
        body = await _body(request)
        text = body.get("text")
        if not isinstance(text, str):
            return _error('expected {"text": APP, "attach": false}')
        attach = None
        if body.get("attach"):
            if self.service_config is None:
                return _error("there is no service config to attach (srota playground --config FILE)")
            attach = str(self.service_config)
        session = self._session(request)
        try:
            described = await session.run(text, attach)
        except SandboxError as exc:
            return _error(exc.message, line=exc.line, column=exc.column)
        except SandboxGone as exc:
            return _error(str(exc), 503)
        _log.info("playground app started", session=session.id, app=described["name"])
        return json_response(described)

    async def _stop(self, request: web.Request) -> web.Response:
        await self._session(request).stop()
        return json_response({"stopped": True})

    async def _send(self, request: web.Request) -> web.Response:
        body = await _body(request)
        session = self._session(request)
        stream, events = body.get("stream"), body.get("events")
        if not isinstance(stream, str) or not isinstance(events, list):
            return _error('expected {"stream": NAME, "events": [[values...], ...]}')
        return await self._call(session, "send", busy=True, stream=stream, events=events)

    async def _call(self, session: _Session, op: str, busy: bool = False, **fields: Any) -> web.Response:
        try:
            return json_response(await session.require().request(op, busy=busy, **fields))
        except SandboxError as exc:
            return _error(exc.message, line=exc.line, column=exc.column)
        except SandboxGone as exc:
            return _error(str(exc), 409)

    async def _simulate(self, request: web.Request) -> web.Response:
        body = await _body(request)
        session = self._session(request)
        stream, kind = body.get("stream"), body.get("kind")
        if not isinstance(stream, str) or kind not in _SIMULATION_KINDS:
            return _error(f'expected {{"stream": NAME, "kind": {"|".join(_SIMULATION_KINDS)}, ...}}')
        try:
            attributes = session.attributes(stream)
            rate = body.get("rate")
            rate = None if rate in (None, "") else float(rate)
            if rate is not None and not 0 < rate <= 1_000_000:
                raise ValueError("rate must be between 0 and 1,000,000 events per second")
            if kind == "random":
                rows = random_rows(attributes, body.get("attributes") or {}, body.get("seed"))
                limit = body.get("count")
                total = int(limit) if limit not in (None, "") else None
                if total is not None:
                    rows = itertools.islice(rows, total)
                sim_rate: float | None = rate or 10.0
            else:
                content = body.get("content")
                if not isinstance(content, str):
                    raise ValueError("expected the file's text as content")
                column = body.get("timestamp_column") or None
                parsed = parse_file(kind, content, attributes, column, self.limits.max_events)
                rows, total = iter(parsed), len(parsed)
                sim_rate = rate if rate is not None or column else 100.0
        except SandboxError as exc:
            return _error(exc.message, 404)
        except SandboxGone as exc:
            return _error(str(exc), 409)
        except (ValueError, TypeError) as exc:
            return _error(str(exc))
        sim = Simulation(uuid.uuid4().hex[:8], stream, kind, rows, rate=sim_rate,
                         speed=float(body.get("speed") or 1.0), total=total)
        sim.resume.set()
        session.simulations[sim.id] = sim
        sim.task = asyncio.create_task(session.simulate(sim))
        return json_response(sim.describe())

    async def _simulation_action(self, request: web.Request) -> web.Response:
        session = self._session(request)
        sim = session.simulations.get(request.match_info["id"])
        if sim is None:
            return _error("no such simulation", 404)
        action = request.match_info["action"]
        if action == "pause" and sim.state == "running":
            sim.resume.clear()
            sim.state = "paused"
        elif action == "resume" and sim.state == "paused":
            sim.resume.set()
            sim.state = "running"
        elif action == "stop":
            if sim.task is not None:
                sim.task.cancel()
        elif action not in ("pause", "resume"):
            return _error("action must be pause, resume or stop", 404)
        session.publish({"event": "simulation", **sim.describe()})
        return json_response(sim.describe())

    async def _query(self, request: web.Request) -> web.Response:
        text = (await _body(request)).get("text")
        if not isinstance(text, str):
            return _error('expected {"text": QUERY}')
        return await self._call(self._session(request), "query", text=text)

    # ------------------------------------------------------------------ debugger
    async def _breakpoint(self, request: web.Request) -> web.Response:
        terminal = request.match_info["terminal"].lower()
        if terminal not in ("in", "out"):
            return _error("terminal must be 'in' or 'out'")
        action = "acquire" if request.method == "PUT" else "release"
        return await self._call(self._session(request), "debug", action=action,
                                query=request.match_info["query"], terminal=terminal)

    async def _step(self, request: web.Request) -> web.Response:
        action = request.match_info["action"]
        if action not in ("next", "play", "state"):
            return _error("action must be next, play or state", 404)
        session = self._session(request)
        response = await self._call(session, "debug", action=action)
        if action != "state" and session.sandbox is not None:
            session.sandbox.resumed()
        return response

    async def _query_state(self, request: web.Request) -> web.Response:
        return await self._call(self._session(request), "query_state", query=request.match_info["query"])

    # ------------------------------------------------------------------ events
    async def _events(self, request: web.Request) -> web.StreamResponse:
        session = self._session(request)
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue(maxsize=2000)
        session.listeners.append(queue)
        try:
            return await event_stream(request, queue, first=("hello", {"app": session.app}))
        finally:
            with contextlib.suppress(ValueError):
                session.listeners.remove(queue)


async def _to_playground(request: web.Request) -> web.Response:
    raise web.HTTPFound("/playground/")


def _title(path: Path) -> str:
    """The app's first comment line, else its file name."""
    try:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("--"):
                return line.lstrip("- ").strip()
            if line.strip():
                break
    except OSError:
        pass
    return path.stem


def default_examples() -> list[Path]:
    """The example apps shipped in the source tree (``examples/``, ``config/apps/``)."""
    root = Path(__file__).resolve().parent.parent
    found: list[Path] = []
    for folder in (root / "examples", root / "config" / "apps", Path.cwd() / "examples"):
        found.extend(p for p in sorted(folder.glob("*.siddhi")) if p.resolve() not in {f.resolve() for f in found})
    return found


# ============================================================================ checking
def check(text: str) -> dict[str, Any]:
    """What the editor shows for ``text``: problems as ``srota validate`` finds them, and the
    names to complete (streams with attributes, tables, windows, aggregations, queries, and
    the installed functions, windows and stream processors)."""
    from srota.grammar.errors import SiddhiAppCreationError
    from srota.grammar.parser import parse
    from srota.service.config import ServiceConfig
    from srota.service.validate import validate_text

    planned: dict[str, list[dict[str, str]]] = {}

    def streams_of(runtime: Any) -> None:
        planned.update({name: [{"name": a.name, "type": a.type.value} for a in d.attributes]
                        for name, d in runtime.stream_definitions.items() if not name.startswith("!")})

    problems = [{"line": p.line, "column": p.column, "message": p.message}
                for p in validate_text(text, "app.siddhi", ServiceConfig(), on_planned=streams_of)]
    names: dict[str, Any] | None = None
    try:
        names = _names(parse(text))
    except SiddhiAppCreationError:
        pass
    if names is not None and planned:
        names["streams"] = planned  # with the attributes of inferred outputs
    return {"problems": problems, "names": names, "extensions": extension_names()}


def _names(model: Any) -> dict[str, Any]:
    def attrs(d: Any) -> list[dict[str, str]]:
        return [{"name": a.name, "type": a.type.value} for a in getattr(d, "attributes", ())]

    from srota.grammar.model import Query

    streams = {d.id: attrs(d) for d in model.stream_definitions}
    queries = []
    for element in model.execution_elements:
        for q in ([element] if isinstance(element, Query) else getattr(element, "queries", ())):
            output = getattr(getattr(q, "output", None), "target", None)
            if isinstance(output, str) and output not in streams and not output.startswith("#"):
                streams[output] = []
            name = getattr(q, "name", None)
            if name:
                queries.append(name)
    return {"streams": streams,
            "tables": {d.id: attrs(d) for d in model.table_definitions},
            "windows": {d.id: attrs(d) for d in model.window_definitions},
            "aggregations": {d.id: [] for d in model.aggregation_definitions},
            "functions": [d.id for d in model.function_definitions],
            "queries": queries}


_EXTENSIONS: dict[str, list[dict[str, str]]] | None = None


def extension_names() -> dict[str, list[dict[str, str]]]:
    """Installed functions, aggregators, windows and stream processors, with their docs."""
    global _EXTENSIONS
    if _EXTENSIONS is None:
        import srota.engine.extensions  # noqa: F401 -- registers the namespaces
        from srota.engine.registry import Kind, registry

        def entry(e: Any) -> dict[str, str]:
            params = ", ".join(p.name for p in e.params)
            return {"name": e.qualified_name, "detail": f"({params})", "doc": (e.doc or "").split("\n")[0]}

        _EXTENSIONS = {
            "functions": [entry(e) for kind in (Kind.FUNCTION, Kind.AGGREGATOR) for e in registry.all(kind)],
            "windows": [entry(e) for e in registry.all(Kind.WINDOW)],
            "stream_processors": [entry(e) for e in registry.all(Kind.STREAM_PROCESSOR)],
        }
    return _EXTENSIONS


# ============================================================================ standalone
async def serve(app_file: Path | None, host: str = "127.0.0.1", port: int = 0,
                limits: SandboxLimits | None = None, ready: Callable[[str], None] | None = None,
                service_config: Path | None = None) -> None:
    """Serve the playground alone (``srota playground``) until cancelled."""
    for path in (app_file, service_config):
        if path is not None and not path.is_file():
            raise FileNotFoundError(2, "No such file or directory", str(path))
    playground = Playground(limits, app_file, service_config=service_config)
    app = web.Application()
    playground.add_routes(app, "/playground")
    app.router.add_get("/", _to_playground)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0][1] if runner.addresses else port
    url = f"http://{host}:{bound}/playground/"
    if ready is not None:
        ready(url)
    try:
        await asyncio.Event().wait()
    finally:
        await playground.close()
        await runner.cleanup()
