"""The admin API's debugger, pause and statistics endpoints (behind the admin token).

All paths are under ``/apps/{app}``; bodies and answers are JSON (docs/debugging.md):

=========================================  ===================================================
``GET    /debug``                          ``{attached, paused, breakpoints: [{query, terminal}],
                                           held: null | {query, terminal, events}}``
``POST   /debug``                          attach a debugger (the app's chunks then run on a
                                           thread of their own: a hold never blocks the loop)
``DELETE /debug``                          detach (breakpoints released, a held chunk goes on)
``PUT    /debug/breakpoints/{query}/{in|out}``  acquire a breakpoint (``DELETE``: release)
``POST   /debug/next`` / ``/debug/play``   step / go on to the next breakpoint
``GET    /debug/events``                   server-sent events: one ``held`` event per stop
``GET    /queries/{query}/state``          the query's state as plain data
``POST   /pause`` / ``/resume``            hold the whole app / let it go on
``GET    /statistics``                     the statistics report (404 when off)
``PUT    /statistics``                     ``{"level": "off"|"basic"|"detail"}``
=========================================  ===================================================

A hold pauses the app's sources (their chunk in flight waits, nothing is fetched, acked or
committed past it) and never the event loop: the admin API, the metrics and the other apps
go on, and ``next``/``play`` may come from here or from any thread.
"""
from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import orjson
from aiohttp import web
from srota.engine.debugger import QueryTerminal
from srota.service._web import event_stream, json_error, json_response


def _events(events: list[Any]) -> list[dict[str, Any]]:
    return [{"timestamp": e.timestamp, "data": list(e.data)} for e in events]


class DebugAPI:
    """Routes for one admin server (see the module docstring)."""

    def __init__(self, host: Any) -> None:
        self.host = host

    def add_routes(self, app: web.Application) -> None:
        r = app.router
        r.add_get("/apps/{app}/debug", self._state)
        r.add_post("/apps/{app}/debug", self._attach)
        r.add_delete("/apps/{app}/debug", self._detach)
        r.add_put("/apps/{app}/debug/breakpoints/{query}/{terminal}", self._breakpoint)
        r.add_delete("/apps/{app}/debug/breakpoints/{query}/{terminal}", self._breakpoint)
        r.add_post("/apps/{app}/debug/next", self._next)
        r.add_post("/apps/{app}/debug/play", self._play)
        r.add_get("/apps/{app}/debug/events", self._stream)
        r.add_get("/apps/{app}/queries/{query}/state", self._query_state)
        r.add_post("/apps/{app}/pause", self._pause)
        r.add_post("/apps/{app}/resume", self._resume)
        r.add_get("/apps/{app}/statistics", self._statistics)
        r.add_put("/apps/{app}/statistics", self._set_statistics)

    def _app(self, request: web.Request) -> Any:
        name = request.match_info["app"]
        app = getattr(self.host, "apps", {}).get(name)
        if app is None:
            raise json_error(web.HTTPNotFound, f"no app named {name!r}")
        return app

    def _debugger(self, request: web.Request) -> Any:
        debugger = self._app(request).runtime.debugger
        if debugger is None:
            raise json_error(web.HTTPConflict, "no debugger attached (POST /apps/{app}/debug)")
        return debugger

    async def _state(self, request: web.Request) -> web.Response:
        app = self._app(request)
        rt = app.runtime
        debugger = rt.debugger
        held = debugger.held if debugger is not None else None
        return json_response({"attached": debugger is not None, "paused": rt.paused,
                      "breakpoints": [{"query": q, "terminal": t.value} for q, t in
                                      (debugger.break_points if debugger is not None else [])],
                      "held": None if held is None else {"query": held[0], "terminal": held[1].value,
                                                         "events": _events(held[2])},
                      "queries": sorted(rt.queries)})

    async def _attach(self, request: web.Request) -> web.Response:
        app = self._app(request)
        app.use_engine_thread()  # before any hold: holds must not block the event loop
        app.runtime.debug()
        return await self._state(request)

    async def _detach(self, request: web.Request) -> web.Response:
        self._app(request).runtime.undebug()
        return await self._state(request)

    def _terminal(self, request: web.Request) -> QueryTerminal:
        try:
            return QueryTerminal(request.match_info["terminal"].lower())
        except ValueError:
            raise json_error(web.HTTPBadRequest, "terminal must be 'in' or 'out'") from None

    async def _breakpoint(self, request: web.Request) -> web.Response:
        """``PUT`` acquires the breakpoint, ``DELETE`` releases it."""
        debugger = self._debugger(request)
        change = debugger.acquire_break_point if request.method == "PUT" else debugger.release_break_point
        try:
            change(request.match_info["query"], self._terminal(request))
        except ValueError as exc:
            return json_response({"error": str(exc)}, 404)
        return await self._state(request)

    async def _next(self, request: web.Request) -> web.Response:
        self._debugger(request).next()
        return json_response({"ok": True})

    async def _play(self, request: web.Request) -> web.Response:
        self._debugger(request).play()
        return json_response({"ok": True})

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        """Server-sent events: ``event: held`` with ``{query, terminal, events}`` per stop."""
        debugger = self._debugger(request)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue(maxsize=1000)

        def listener(query: str, terminal: QueryTerminal, events: list[Any]) -> None:
            item = ("held", {"query": query, "terminal": terminal.value, "events": _events(events)})
            loop.call_soon_threadsafe(lambda: None if queue.full() else queue.put_nowait(item))

        debugger.listeners.append(listener)
        held = debugger.held
        if held is not None:  # a stop that began before the browser connected
            listener(*held)
        try:
            return await event_stream(request, queue)
        finally:
            with contextlib.suppress(ValueError):
                debugger.listeners.remove(listener)

    async def _query_state(self, request: web.Request) -> web.Response:
        rt = self._app(request).runtime
        try:
            state = rt.query_state(request.match_info["query"])
        except KeyError as exc:
            return json_response({"error": str(exc).strip('"')}, 404)
        return json_response({"query": request.match_info["query"], "state": state})

    async def _pause(self, request: web.Request) -> web.Response:
        app = self._app(request)
        app.use_engine_thread()
        app.runtime.pause()
        return json_response({"paused": True})

    async def _resume(self, request: web.Request) -> web.Response:
        self._app(request).runtime.resume()
        return json_response({"paused": False})

    async def _statistics(self, request: web.Request) -> web.Response:
        report = self._app(request).runtime.statistics()
        if report is None:
            return json_response({"error": "statistics are off (PUT {\"level\": \"basic\"})"}, 404)
        return json_response(report)

    async def _set_statistics(self, request: web.Request) -> web.Response:
        rt = self._app(request).runtime
        try:
            level = orjson.loads(await request.read())["level"]
            rt.set_statistics_level(str(level))
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            return json_response({"error": f'expected {{"level": "off"|"basic"|"detail"}} ({exc})'}, 400)
        return json_response({"level": level})
