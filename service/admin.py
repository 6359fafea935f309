"""The HTTP admin server (aiohttp), bound to loopback by default.

``GET /health`` (the process is alive), ``GET /ready`` (apps started, sources connected),
``/errors`` (the error store: :mod:`srota.service.errors_api`),
``GET /metrics`` (Prometheus text), ``GET /apps`` (what runs), ``GET /version``, the debugger,
pause and statistics endpoints under ``/apps/{app}`` (:mod:`srota.service.debug_api`), ``POST /query``
(on-demand queries: off unless ``http.query.enabled``; queries that change tables need the
configured query token as ``Authorization: Bearer <token>``).  When ``http.token`` or a query
token is configured, every endpoint but the probes (/health, /ready) needs a token: reads
accept either, changes only the query token.  Siddhi Runner's REST API (``/siddhi-apps``,
``/stores/query``: :mod:`srota.service.siddhi_api`) is served here too, and HTTP basic auth
(``http.username``/``http.password``, as ``curl -u admin:admin`` sends it) is accepted wherever
a token is.

Nothing that changes anything answers without credentials when the server listens beyond
loopback: with no token and no basic auth configured, the server makes a token for the
changing requests (every method but GET, HEAD and OPTIONS), writes it to a file only the
service's user can read, and logs where (``srota status`` and the probes keep working).

aiohttp serves from the service's own asyncio loop with no extra server process or ASGI
layer, which keeps the admin port in step with the host's lifecycle.
"""
from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import ipaddress
import os
import secrets
from pathlib import Path
from typing import Any, Protocol

import orjson
import structlog
from aiohttp import web
from srota.engine.stores.database import StoreGoneError, StoreReplacedError, StoreUnavailableError
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import OnDemandQueryType
from srota.service._web import json_response
from srota.service.config import HttpConfig
from srota.service.metrics import CONTENT_TYPE, Metrics


class Host(Protocol):
    """What the admin server needs from the service host."""

    @property
    def runtimes(self) -> dict[str, Any]: ...

    metrics: Metrics

    def is_ready(self) -> bool: ...

    def describe(self) -> list[dict[str, Any]]: ...


log = structlog.get_logger("srota.service.admin")

_LOGIN = "/playground/login"
#: Methods that only read; every other one may change something.
_READS = frozenset({"GET", "HEAD", "OPTIONS"})
#: The file a made-up admin token is written to (in the directory of the state database).
TOKEN_FILE = "admin-token"
_OPEN = frozenset({"/health", "/ready", _LOGIN})
#: The cookie a browser carries the admin token in, after the playground's login form.
_COOKIE = "srota_token"
_LOGIN_PAGE = """<!doctype html><meta charset="utf-8"><title>Srota playground: sign in</title>
<style>body{font:15px system-ui;margin:4em auto;max-width:28em}input{font:inherit;width:100%;margin:.5em 0}</style>
<h1>Srota playground</h1><p>This service needs its admin token (<code>http.token</code>).</p>
<form method="post"><input type="password" name="token" placeholder="token" autofocus>
<button>Sign in</button></form>"""


class AdminServer:
    """Serves the admin endpoints for one host."""

    def __init__(self, host: Host, config: HttpConfig) -> None:
        self.host = host
        self.config = config
        self._runner: web.AppRunner | None = None
        self.port: int | None = None
        #: The token this server made for changing requests (beyond loopback, nothing configured).
        self.made_token: str | None = None
        self.made_token_file: Path | None = None
        if not _loopback(config.host) and not (config.token or config.query_token or config.username):
            self._make_token()
        app = web.Application(client_max_size=1 << 20)
        app.router.add_get("/health", self._health)
        app.router.add_get("/ready", self._ready)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/apps", self._apps)
        app.router.add_get("/version", self._version)
        app.router.add_post("/query", self._query)
        if getattr(host, "deployments", None) is not None:
            from srota.service.siddhi_api import SiddhiRunnerAPI

            SiddhiRunnerAPI(host).add_routes(app)  # /siddhi-apps, /stores/query (docs/siddhi-runner-api.md)
        from srota.service.debug_api import DebugAPI

        DebugAPI(host).add_routes(app)  # /apps/{app}/debug..., /pause, /statistics (docs/debugging.md)
        if hasattr(host, "error_store"):
            from srota.service.errors_api import ErrorsAPI

            ErrorsAPI(host).add_routes(app)  # /errors: the error store (srota errors)
        if config.playground_enabled:
            from srota.service.playground import Playground

            # apps may attach the service's own connectors (docs/playground.md)
            Playground(service_config=getattr(getattr(host, "config", None), "source", None)).add_routes(
                app, "/playground")
            app.router.add_get(_LOGIN, self._login_page)
            app.router.add_post(_LOGIN, self._login)
        app.middlewares.append(self._guard)
        self.app = app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """With ``http.token`` (or a query token) set, every read but the probes needs a token.

        /health and /ready stay open: orchestrators probe them without credentials, and they
        say nothing about the data.
        """
        if request.path in _OPEN:
            return await handler(request)
        if self._read_token() or self.config.username:
            if not self._authorised(request, read=True):
                if request.path.startswith("/playground") and "/api/" not in request.path:
                    raise web.HTTPFound(_LOGIN)  # a browser: sign in once, then the cookie carries the token
                return _refused("this endpoint needs 'Authorization: Bearer TOKEN' (http.token) or basic auth "
                                "(http.username, http.password)")
        elif self.made_token is not None and request.method not in _READS \
                and not self._authorised(request, read=True):
            return _refused(f"the admin server listens beyond loopback with no http.token: changes need "
                            f"'Authorization: Bearer TOKEN' with the token in {self.made_token_file}")
        return await handler(request)

    def _make_token(self) -> None:
        """Make a token for changing requests and write it where the service's user can read it."""
        database = getattr(getattr(getattr(self.host, "config", None), "persistence", None), "database", None)
        folder = Path(database).parent if database else Path("data")
        self.made_token = secrets.token_urlsafe(24)
        self.made_token_file = (folder / TOKEN_FILE).absolute()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.made_token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(self.made_token + "\n")
        except OSError as exc:  # nowhere to say the token: refuse to start rather than run unguarded
            raise OSError(f"the admin server listens on {self.config.host} without http.token, and the token made "
                          f"for it cannot be written to {self.made_token_file} ({exc.strerror or exc}): set "
                          "http.token, or bind http.host to 127.0.0.1") from None
        log.warning("admin server listens beyond loopback without http.token: requests that change anything "
                    "need the token written to the file named here (or set http.token)",
                    host=self.config.host, token_file=str(self.made_token_file))

    async def _login_page(self, request: web.Request) -> web.Response:
        return web.Response(text=_LOGIN_PAGE, content_type="text/html")

    async def _login(self, request: web.Request) -> web.Response:
        """Check the token from the form and keep it in an HttpOnly, same-site cookie."""
        token = str((await request.post()).get("token", ""))
        tokens = [t for t in (self.config.token, self.config.query_token, self.made_token) if t]
        if not any(hmac.compare_digest(token.encode(), t.encode()) for t in tokens):
            return web.Response(text=_LOGIN_PAGE.replace("<form", "<p><b>Wrong token.</b></p><form"),
                                content_type="text/html", status=401)
        response = web.HTTPFound("/playground/")
        response.set_cookie(_COOKIE, token, httponly=True, samesite="Strict", path="/")
        raise response

    def _read_token(self) -> str | None:
        return self.config.token or self.config.query_token

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.config.host, self.config.port)
        await site.start()
        addresses = self._runner.addresses  # the bound sockets: the real port when it was 0
        self.port = addresses[0][1] if addresses else self.config.port

    @property
    def url(self) -> str:
        """The base URL of the server (``http://host:port``)."""
        host = self.config.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _health(self, request: web.Request) -> web.Response:
        return json_response({"status": "ok"})

    async def _ready(self, request: web.Request) -> web.Response:
        ready = self.host.is_ready()
        return json_response({"ready": ready}, 200 if ready else 503)

    async def _metrics(self, request: web.Request) -> web.Response:
        body = await asyncio.get_running_loop().run_in_executor(None, self.host.metrics.render)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})

    async def _version(self, request: web.Request) -> web.Response:
        return json_response(version_info())

    async def _apps(self, request: web.Request) -> web.Response:
        return json_response(self.host.describe())

    async def _query(self, request: web.Request) -> web.Response:
        if not self.config.query_enabled:
            return json_response({"error": "on-demand queries are disabled (http.query.enabled)"}, 403)
        raw = await request.read()
        try:
            body = orjson.loads(raw)
            if isinstance(body, dict) and "appName" in body and "app" not in body:
                from srota.service.siddhi_api import store_query

                return await store_query(self.host, request, raw)  # Siddhi Runner's POST /query
            app_name, text = body["app"], body["query"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return json_response({"error": 'expected {"app": NAME, "query": TEXT}'}, 400)
        runtime = self.host.runtimes.get(app_name)
        if runtime is None:
            return json_response({"error": f"no app named {app_name!r}"}, 404)
        from srota.grammar.parser import parse_on_demand_query

        try:
            parsed = parse_on_demand_query(text)
        except SiddhiAppCreationError as exc:
            return json_response({"error": str(exc), "line": exc.line, "column": exc.column}, 400)
        if parsed.type is not OnDemandQueryType.FIND and not self._authorised(request):
            return json_response({"error": "queries that change data need the configured token"}, 401)
        try:
            events = await on_demand(runtime, text)
        except SiddhiAppCreationError as exc:
            return json_response({"error": str(exc), "line": exc.line, "column": exc.column}, 400)
        except ValueError as exc:  # a query the app cannot answer (under scale-out: an insert, an aggregation)
            return json_response({"error": str(exc)}, 400)
        except StoreGoneError as exc:
            return json_response({"error": str(exc)}, 503)
        return json_response({"events": [{"timestamp": e.timestamp, "data": list(e.data)} for e in events]})

    def authorised_to_change(self, request: web.Request) -> bool:
        """Whether the request may change tables (the query token, or basic auth)."""
        return self._authorised(request)

    def _authorised(self, request: web.Request, read: bool = False) -> bool:
        """Whether the request carries the query token (or, for reads, the read token), or
        the basic-auth credentials (which may do anything, as Siddhi Runner's admin user)."""
        tokens = [self.config.query_token, self.config.token if read else None, self.made_token]
        given = request.headers.get("Authorization", "")
        if given.startswith("Basic "):
            return self._basic(given[6:])
        if given.startswith("Bearer "):
            given = given[7:]
        elif read and _COOKIE in request.cookies:  # the playground's pages and calls from a browser
            given = request.cookies[_COOKIE]
        else:
            return False
        # Compare against every configured token: the time taken says nothing about which matched.
        results = [hmac.compare_digest(given.encode(), t.encode()) for t in tokens if t]
        return any(results)

    def _basic(self, encoded: str) -> bool:
        """``Authorization: Basic`` against ``http.username``/``http.password``."""
        username, password = self.config.username, self.config.password
        if not username or password is None:
            return False
        try:
            user, _, given = base64.b64decode(encoded.strip(), validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return False
        # Both compared every time: the time taken says nothing about which one differed.
        ok_user = hmac.compare_digest(user.encode(), username.encode())
        ok_password = hmac.compare_digest(given.encode(), password.encode())
        return ok_user and ok_password


async def on_demand(runtime: Any, text: str) -> list[Any]:
    """``runtime.query(text)`` in a worker thread; ``StoreGoneError`` where its store is gone
    (instead of a ``BaseException`` that would end the request's task with no answer)."""
    try:
        return await asyncio.get_running_loop().run_in_executor(None, runtime.query, text)
    except (StoreReplacedError, StoreUnavailableError) as exc:
        log.warning("on-demand query failed: its store is gone", app=getattr(runtime, "name", None),
                    reason=type(exc).__name__, error=str(exc))
        raise StoreGoneError(f"the store cannot answer now: {exc}") from exc


def _refused(message: str) -> web.Response:
    response = json_response({"error": message}, 401)
    response.headers["WWW-Authenticate"] = 'Basic realm="srota"'
    return response


def _loopback(host: str) -> bool:
    """Whether ``host`` (a bind address or name) is only reachable from this machine."""
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve beyond loopback


def version_info() -> dict[str, str]:
    """The version of srota and of the Python running it (``srota --version``, ``GET /version``)."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    try:
        srota_version = version("srota")
    except PackageNotFoundError:
        srota_version = "unknown"
    return {"version": srota_version, "python": platform.python_version(),
            "implementation": platform.python_implementation()}
