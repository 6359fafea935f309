"""The HTTP admin server (aiohttp), bound to loopback by default.

``GET /health`` (the process is alive), ``GET /ready`` (apps started, sources connected),
``GET /metrics`` (Prometheus text), ``GET /apps`` (what runs), ``POST /query`` (on-demand
queries: off unless ``http.query.enabled``; queries that change tables need the configured
token as ``Authorization: Bearer <token>``).

aiohttp serves from the service's own asyncio loop with no extra server process or ASGI
layer, which keeps the admin port in step with the host's lifecycle.
"""
from __future__ import annotations

import asyncio
import hmac
from typing import Any, Protocol

import orjson
from aiohttp import web
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import OnDemandQueryType
from srota.service.config import HttpConfig
from srota.service.metrics import CONTENT_TYPE, Metrics


class Host(Protocol):
    """What the admin server needs from the service host."""

    runtimes: dict[str, Any]
    metrics: Metrics

    def is_ready(self) -> bool: ...

    def describe(self) -> list[dict[str, Any]]: ...


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data, default=str), status=status, content_type="application/json")


class AdminServer:
    """Serves the admin endpoints for one host."""

    def __init__(self, host: Host, config: HttpConfig) -> None:
        self.host = host
        self.config = config
        self._runner: web.AppRunner | None = None
        self.port: int | None = None
        app = web.Application(client_max_size=1 << 20)
        app.router.add_get("/health", self._health)
        app.router.add_get("/ready", self._ready)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/apps", self._apps)
        app.router.add_post("/query", self._query)
        self.app = app

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.config.host, self.config.port)
        await site.start()
        server = site._server  # noqa: SLF001 - the only way to learn an ephemeral port
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else self.config.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _health(self, request: web.Request) -> web.Response:
        return _json({"status": "ok"})

    async def _ready(self, request: web.Request) -> web.Response:
        ready = self.host.is_ready()
        return _json({"ready": ready}, 200 if ready else 503)

    async def _metrics(self, request: web.Request) -> web.Response:
        body = await asyncio.get_running_loop().run_in_executor(None, self.host.metrics.render)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})

    async def _apps(self, request: web.Request) -> web.Response:
        return _json(self.host.describe())

    async def _query(self, request: web.Request) -> web.Response:
        if not self.config.query_enabled:
            return _json({"error": "on-demand queries are disabled (http.query.enabled)"}, 403)
        try:
            body = orjson.loads(await request.read())
            app_name, text = body["app"], body["query"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return _json({"error": 'expected {"app": NAME, "query": TEXT}'}, 400)
        runtime = self.host.runtimes.get(app_name)
        if runtime is None:
            return _json({"error": f"no app named {app_name!r}"}, 404)
        from srota.grammar.parser import parse_on_demand_query

        try:
            parsed = parse_on_demand_query(text)
        except SiddhiAppCreationError as exc:
            return _json({"error": str(exc), "line": exc.line, "column": exc.column}, 400)
        if parsed.type is not OnDemandQueryType.FIND and not self._authorised(request):
            return _json({"error": "queries that change data need the configured token"}, 401)
        try:
            events = await asyncio.get_running_loop().run_in_executor(None, runtime.query, text)
        except SiddhiAppCreationError as exc:
            return _json({"error": str(exc), "line": exc.line, "column": exc.column}, 400)
        return _json({"events": [{"timestamp": e.timestamp, "data": list(e.data)} for e in events]})

    def _authorised(self, request: web.Request) -> bool:
        token = self.config.query_token
        if not token:
            return False
        given = request.headers.get("Authorization", "")
        return given.startswith("Bearer ") and hmac.compare_digest(given[7:].encode(), token.encode())
