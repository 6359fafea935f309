"""The admin API's error-store endpoints (behind the admin token; docs/delivery.md).

=========================================  ===================================================
``GET    /errors?app=&stream=&limit=&after=``  ``{count, entries: [summary]}``, oldest first
``GET    /errors/{id}``                    one entry: events or payload, cause, stack
``POST   /errors/{id}/replay``             send it back where it failed; the entry is then
                                           discarded (a new failure is stored anew)
``DELETE /errors/{id}``                    discard one entry
``DELETE /errors?app=&stream=&before=``    purge (``app`` or ``all=true`` is required)
=========================================  ===================================================
"""
from __future__ import annotations

from typing import Any

from aiohttp import web
from srota.engine.stores.database import StoreGoneError
from srota.service._web import json_error, json_response


class ErrorsAPI:
    """Routes for one admin server (see the module docstring)."""

    def __init__(self, host: Any) -> None:
        self.host = host

    def add_routes(self, app: web.Application) -> None:
        r = app.router
        r.add_get("/errors", self._list)
        r.add_delete("/errors", self._purge)
        r.add_get("/errors/{id}", self._show)
        r.add_delete("/errors/{id}", self._discard)
        r.add_post("/errors/{id}/replay", self._replay)

    @property
    def _store(self) -> Any:
        return self.host.error_store

    def _entry(self, request: web.Request) -> Any:
        try:
            ident = int(request.match_info["id"])
        except ValueError:
            raise json_error(web.HTTPBadRequest, "an error id is a number") from None
        entry = self._store.get(ident)
        if entry is None:
            raise json_error(web.HTTPNotFound, f"no error {ident}")
        return entry

    async def _list(self, request: web.Request) -> web.Response:
        q = request.query
        try:
            limit = min(int(q.get("limit", "100")), 10_000)
            after = int(q.get("after", "0"))
        except ValueError:
            return json_response({"error": "limit and after are numbers"}, 400)
        filters = {"app": q.get("app"), "stream": q.get("stream")}
        entries = self._store.entries(limit=limit, after=after, **filters)
        return json_response({"count": self._store.count(**filters), "entries": [e.summary() for e in entries]})

    async def _show(self, request: web.Request) -> web.Response:
        return json_response(self._entry(request).detail())

    async def _discard(self, request: web.Request) -> web.Response:
        entry = self._entry(request)
        self._store.discard(entry.id)
        return json_response({"discarded": entry.id})

    async def _replay(self, request: web.Request) -> web.Response:
        entry = self._entry(request)
        app = self.host.apps.get(entry.app)
        if app is None:
            return json_response({"error": f"app '{entry.app}' is not running here"}, 409)
        try:
            sent = await app.replay(entry)
        except ValueError as exc:
            return json_response({"error": str(exc)}, 409)
        except StoreGoneError as exc:  # the entry stays
            return json_response({"error": str(exc)}, 503)
        self._store.discard(entry.id)
        return json_response({"replayed": entry.id, "events": sent})

    async def _purge(self, request: web.Request) -> web.Response:
        q = request.query
        if "app" not in q and q.get("all") != "true":
            return json_response({"error": "say which: ?app=NAME[&stream=S] or ?all=true"}, 400)
        try:
            before = int(q["before"]) if "before" in q else None
        except ValueError:
            return json_response({"error": "before is epoch milliseconds"}, 400)
        return json_response({"purged": self._store.purge(app=q.get("app"), stream=q.get("stream"), before=before)})
