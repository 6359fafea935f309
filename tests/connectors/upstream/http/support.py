"""What the ports of siddhi-io-http's tests share: HTTP clients and servers, app helpers.

Siddhi's source tests start an app listening on a fixed port (8005, 8006, 8280...) and post
with ``HttpURLConnection`` (``HttpTestUtil``), logging the response code; its sink tests start
a ``com.sun.net.httpserver`` (``HttpServerListenerHandler``) that keeps the last request's body
and headers.  Here the ports are free ones, :func:`post` is the client (it returns the status
and body, so a test can assert the response code Java only logs), :class:`Server` is the
aiohttp test server, and the apps run on service hosts (``run`` fixture), so every request goes
through the real source, mapper, engine, sink mapper and sink.
"""
from __future__ import annotations

import asyncio
import base64
from typing import Any

import aiohttp
from aiohttp import web

from tests.mappers.harness import Running, until

__all__ = ["Running", "Server", "post", "ready", "rows", "source_of", "until", "xml_event"]


def xml_event(name: str, age: int, country: str) -> str:
    """The ``<events><event>...`` payload of the Java tests."""
    return (f"<events><event><name>{name}</name><age>{age}</age>"
            f"<country>{country}</country></event></events>")


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


async def post(url: str, body: str | bytes | None, method: str = "POST",
               headers: dict[str, str] | None = None) -> tuple[int, str]:
    """``HttpTestUtil.httpPublishEvent``: one request; its status and body."""
    async with aiohttp.ClientSession() as client:
        data = body.encode() if isinstance(body, str) else body
        async with client.request(method, url, data=data, headers=headers or {}) as r:
            return r.status, await r.text()


def rows(got: list[list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    """The rows of every chunk a callback recorded, in order."""
    return [row for chunk in got for row in chunk]


def names(got: list[list[tuple[Any, ...]]]) -> list[Any]:
    """``receivedEventNameList``: the first attribute of every row."""
    return [row[0] for row in rows(got)]


def source_of(r: Running, stream: str) -> Any:
    app = r.host.apps[r.app]
    return next(b.source for b in app.sources if b.stream_id == stream)


def sink_of(r: Running, stream: str) -> Any:
    app = r.host.apps[r.app]
    return next(b.sink for b in app.sinks if b.stream_id == stream)


async def ready(r: Running, *streams: str, timeout: float = 5.0) -> None:
    """Wait until the sources of ``streams`` listen."""
    for stream in streams:
        await source_of(r, stream).wait_ready(timeout)


class Server:
    """``HttpServerListenerHandler``: an HTTP server on a free port keeping every request
    (method, path, headers, body); answers ``status`` with ``body`` (may be changed)."""

    def __init__(self, status: int = 200, body: str = "", headers: dict[str, str] | None = None,
                 echo: bool = False, port: int = 0) -> None:
        self.status = status
        self.body = body
        self.echo = echo  # answer with the request's body (HttpServerListener does)
        self.headers = headers or {}
        self.requests: list[dict[str, Any]] = []
        self._runner: web.AppRunner | None = None
        self.port = port  # 0: a free one

    async def _handle(self, request: web.Request) -> web.Response:
        body = (await request.read()).decode()
        self.requests.append({"method": request.method, "path": request.path_qs,
                              "headers": dict(request.headers), "body": body})
        return web.Response(status=self.status, text=body if self.echo else self.body, headers=self.headers)

    async def __aenter__(self) -> Server:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def url(self, path: str = "/abc") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    @property
    def bodies(self) -> list[str]:
        return [r["body"] for r in self.requests]

    async def take(self, n: int, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Wait for ``n`` requests, then a moment more to see that no others come."""
        await until(lambda: len(self.requests) >= n, timeout)
        await asyncio.sleep(0.1)
        return self.requests
