"""Siddhi Runner's REST API on the admin server: its paths, methods, bodies, status codes and
JSON answers, taken from siddhi-io/distribution (``SiddhiAppsApi``, ``SiddhiAppsApiServiceImpl``,
``StoresApiServiceImpl``), so that the scripts and dashboards of a Siddhi deployment work
unchanged (docs/siddhi-runner-api.md).

==========================================  =================================================
``POST   /siddhi-apps``                      deploy a new app (text/plain): 201, 409, 400
``PUT    /siddhi-apps``                      deploy or update: 200 (updated), 201 (new), 400
``GET    /siddhi-apps[?isActive=]``           the names of the apps
``GET    /siddhi-apps/{name}``                ``{"content": text}``
``DELETE /siddhi-apps/{name}``                undeploy and delete its file: 200 (no body), 404
``GET    /siddhi-apps/{name}/status``         ``{"status": "active"|"inactive"}``
``GET    /siddhi-apps/{name}/elements``       its queries, aggregations, sources and sinks
``GET    /siddhi-apps/statistics``            per app: appName, status, age, isStatEnabled
``PUT    /siddhi-apps/statistics``            ``{"enabledStatLevel": "OFF"|"BASIC"|"DETAIL"}``
``PUT    /siddhi-apps/{name}/statistics``     ``{"statsEnable": true}`` (or ``enabledStatLevel``)
``POST   /siddhi-apps/{name}/backup``         snapshot now: 201 ``{"revision": ...}``
``POST   /siddhi-apps/{name}/restore``        the last (or ``?revision=``) snapshot
``DELETE /siddhi-apps/{name}/revisions``      delete its saved state (and restart it afresh)
``DELETE /siddhi-apps/revisions``             the same for every app
``POST   /stores/query``                      ``{"appName", "query", "details"}``: ``{"records"}``
==========================================  =================================================

Messages are Siddhi's, word for word (its typos too: clients match on them).  Apps deployed here
are written to the apps folder, and so run again after a restart; the admin server's guard
(token or basic auth) covers every route.
"""
from __future__ import annotations

import time
from typing import Any

import orjson
from aiohttp import web
from srota.engine.stores.database import StoreGoneError
from srota.grammar.errors import SiddhiAppCreationError
from srota.service._web import json_response

#: ApiResponseMessageWithCode's codes and the type each is shown with.
VALIDATION_ERROR = 800101
FILE_PROCESSING_ERROR = 800102
_CODE_TYPES = {VALIDATION_ERROR: "validation error", FILE_PROCESSING_ERROR: "file processing error"}
_SAVED = "Siddhi App saved successfully and will be deployed in next deployment cycle"
_UPDATED = "Siddhi App updated successfully and will be deployed in next deployment cycle"
_LEVELS = ("OFF", "BASIC", "DETAIL")


def _message(kind: str, message: str, status: int = 200) -> web.Response:
    """Siddhi's ``ApiResponseMessage`` (``{"type", "message"}``)."""
    return json_response({"type": kind, "message": message}, status)


def _coded(code: int, message: str, status: int, **extra: Any) -> web.Response:
    """Siddhi's ``ApiResponseMessageWithCode`` (``{"code", "type", "message"}``)."""
    return json_response({"code": code, "type": _CODE_TYPES[code], "message": message, **extra}, status)


def _not_found(name: str) -> web.Response:
    return _message("not-found", f"There is no Siddhi App exist with provided name : {name}", 404)


def _store_error(message: str, status: int) -> web.Response:
    """The stores API's ``ApiResponseMessage`` (code 1: ``error``)."""
    return json_response({"code": 1, "type": "error", "message": message}, status)


def validation_error(exc: SiddhiAppCreationError, name: str | None) -> web.Response:
    """A text that does not compile: 400 with Siddhi's wording of where (a syntax error: ``You
    have an error in your SiddhiQL at line L:C, ...``; another: ``Error on 'App' @ Line: L.
    Position: C, ...``); ``line`` and ``column`` are given as numbers too."""
    from srota.grammar.errors import SiddhiParserError

    if isinstance(exc, SiddhiParserError):
        where = f" at line {exc.line}:{exc.column}" if exc.line is not None else ""
        message = f"You have an error in your SiddhiQL{where}, {exc.message}"
    else:
        where = f" @ Line: {exc.line}. Position: {exc.column}" if exc.line is not None else ""
        message = f"Error on '{name or 'SiddhiApp'}'{where}, {exc.message}"
    return _coded(VALIDATION_ERROR, message, 400, line=exc.line, column=exc.column)


def _redeploys(request: web.Request) -> bool:
    """Siddhi's ``enabledRedeployment``: absent or ``true`` redeploys, anything else does not."""
    value = request.query.get("enabledRedeployment")
    return value is None or value == "true"


class SiddhiRunnerAPI:
    """The routes of Siddhi Runner's ``/siddhi-apps`` and ``/stores`` APIs for one service host."""

    def __init__(self, host: Any) -> None:
        self.host = host
        self._deployed_at: dict[str, float] = {}

    @property
    def _deployments(self) -> Any:
        return self.host.deployments

    def add_routes(self, app: web.Application) -> None:
        r = app.router
        # The fixed paths first: /siddhi-apps/statistics is not an app named "statistics".
        r.add_get("/siddhi-apps/statistics", self._all_statistics)
        r.add_put("/siddhi-apps/statistics", self._set_all_statistics)
        r.add_post("/siddhi-apps", self._post)
        r.add_put("/siddhi-apps", self._put)
        r.add_get("/siddhi-apps", self._list)
        r.add_get("/siddhi-apps/{name}", self._get)
        r.add_delete("/siddhi-apps/{name}", self._delete)
        r.add_get("/siddhi-apps/{name}/status", self._status)
        r.add_get("/siddhi-apps/{name}/elements", self._elements)
        r.add_put("/siddhi-apps/{name}/statistics", self._set_statistics)
        r.add_post("/siddhi-apps/{name}/backup", self._backup)
        r.add_post("/siddhi-apps/{name}/restore", self._restore)
        r.add_delete("/siddhi-apps/revisions", self._delete_all_revisions)
        r.add_delete("/siddhi-apps/{name}/revisions", self._delete_revisions)
        r.add_post("/stores/query", self._store_query)

    # ------------------------------------------------------------------ artifacts
    async def _name_of(self, text: str) -> tuple[str | None, web.Response | None]:
        """The ``@app:name`` of a posted app, or the 400 Siddhi answers without one."""
        from srota.service.hotdeploy import app_name_of

        try:
            name = app_name_of(text)
        except SiddhiAppCreationError as exc:
            return None, validation_error(exc, None)
        if not name:
            return None, _coded(VALIDATION_ERROR, "Siddhi App name must be provided as @App:name('name').", 400)
        return name, None

    async def _deploy(self, request: web.Request, update: bool) -> web.Response:
        text = await request.text()
        name, refused = await self._name_of(text)
        if refused is not None:
            return refused
        assert name is not None
        deployments = self._deployments
        exists = deployments.is_active(name) is not None
        if exists and not update:
            return _message("conflict", "There is a Siddhi App already exists with same name", 409)
        try:
            await deployments.deploy(text, save=True)
        except SiddhiAppCreationError as exc:
            return validation_error(exc, name)
        except OSError as exc:  # the apps folder cannot be written (or there is none)
            return _coded(FILE_PROCESSING_ERROR, f"Error while saving the Siddhi App : {name}: {exc}", 500)
        except StoreGoneError as exc:  # the running version's last checkpoint met a database outage
            return _coded(FILE_PROCESSING_ERROR, f"Error while redeploying the Siddhi App : {name}: {exc}", 500)
        self._deployed_at[name] = time.time()
        if exists:
            return _message("success", _UPDATED)
        response = _message("success", _SAVED, 201)
        response.headers["Location"] = f"siddhi-apps/{name}"
        return response

    async def _post(self, request: web.Request) -> web.Response:
        return await self._deploy(request, update=False)

    async def _put(self, request: web.Request) -> web.Response:
        return await self._deploy(request, update=True)

    async def _list(self, request: web.Request) -> web.Response:
        deployments = self._deployments
        wanted = request.query.get("isActive", "").strip()
        names = deployments.names()
        if wanted:
            active = wanted.lower() == "true"  # Boolean.parseBoolean: anything else is false
            names = [n for n in names if deployments.is_active(n) is active]
        return json_response(names)

    async def _get(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        text = self._deployments.text_of(name)
        if text is None:
            return _not_found(name)
        return json_response({"content": text})

    async def _delete(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if "../" in name or "..\\" in name:
            return _coded(VALIDATION_ERROR, f"File name contains restricted path elements. : {name}", 400)
        if not await self._deployments.undeploy(name, delete=True):
            return _not_found(name)
        return web.Response(status=200)

    async def _status(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        active = self._deployments.is_active(name)
        if active is None:
            return _not_found(name)
        return json_response({"status": "active" if active else "inactive"})

    async def _elements(self, request: web.Request) -> web.Response:
        """The runner's element list of an app (service/siddhi_elements.py); an app that does not
        compile answers 500, as the runner's attempt to create it fails."""
        from srota.service.siddhi_elements import app_elements

        name = request.match_info["name"]
        app = self.host.apps.get(name)
        if app is None:
            if self._deployments.is_active(name) is None:
                return _not_found(name)
            return _coded(FILE_PROCESSING_ERROR, f"Siddhi App {name} is not active: it does not compile", 500)
        runtime = app.runtime
        text = runtime.text if runtime.text is not None else self._deployments.text_of(name)
        return json_response(app_elements(runtime.app, text or "", runtime.stream_definitions))

    # ------------------------------------------------------------------ statistics
    def _level(self, app: Any) -> str:
        stats = getattr(app.runtime.context, "statistics", None)
        return "OFF" if stats is None else str(stats.level).upper()

    def _set_level(self, app: Any, level: str) -> None:
        config = self.host.config.statistics
        if level == "OFF" or getattr(app.runtime.context, "statistics", None) is not None:
            app.runtime.set_statistics_level(level.lower())
        else:  # switched on: with the service's reporter and interval
            app.runtime.set_statistics_level(level.lower(), config.reporter, config.interval_ms)

    async def _stats_body(self, request: web.Request) -> tuple[str | None, bool | None, web.Response | None]:
        """``(enabledStatLevel, statsEnable)`` of a StatsEnable body, or the 400 for a bad one."""
        try:
            body = orjson.loads(await request.read())
            if not isinstance(body, dict):
                raise TypeError
        except (orjson.JSONDecodeError, TypeError):
            return None, None, _message("error", 'expected {"statsEnable": true|false} or '
                                                 '{"enabledStatLevel": "OFF"|"BASIC"|"DETAIL"}', 400)
        level = body.get("enabledStatLevel")
        enable = body.get("statsEnable")
        if isinstance(enable, str):  # Gson reads "true" as true, anything else as false
            enable = enable.strip().lower() == "true"
        if level is not None and str(level).upper() not in _LEVELS:
            return None, None, _message("error", f"No enum constant Level.{level}", 400)
        if level is None and not isinstance(enable, bool):
            return None, None, _message("error", 'expected {"statsEnable": true|false}', 400)
        return (str(level).upper() if level is not None else None), enable, None

    async def _set_statistics(self, request: web.Request) -> web.Response:
        """Siddhi's ``siddhiAppStatsEnable``: the level given, or DETAIL/OFF for statsEnable."""
        name = request.match_info["name"]
        level, enable, refused = await self._stats_body(request)
        if refused is not None:
            return refused
        app = self.host.apps.get(name)
        if app is None:
            return _not_found(name)
        wanted = level if level is not None else ("DETAIL" if enable else "OFF")
        if enable is not None and level is None:
            changed = (self._level(app) != "OFF") != enable
        else:
            changed = self._level(app) != wanted
        if changed:
            self._set_level(app, wanted)
            return _message("success", f"Sucessfully updated Aiddhi App : {name}")
        shown = f"class StatsEnable {{\n    enabledStatLevel: {wanted}\n}}"
        return _message("success", f"Stats level is already set to :{shown} for siddhi app{name}")

    async def _set_all_statistics(self, request: web.Request) -> web.Response:
        level, enable, refused = await self._stats_body(request)
        if refused is not None:
            return refused
        wanted = level if level is not None else ("DETAIL" if enable else "OFF")
        for app in list(self.host.apps.values()):
            if self._level(app) != wanted:
                self._set_level(app, wanted)
        return _message("success", "All siddhi apps Sucessfully updated.")

    async def _all_statistics(self, request: web.Request) -> web.Response:
        deployments = self._deployments
        names = deployments.names()
        if not names:
            return _message("not-found", "There are no any Siddhi App exist.", 404)
        wanted = request.query.get("isActive", "").strip()
        out = []
        now = time.time()
        for name in names:
            app = self.host.apps.get(name)
            if wanted and (app is not None) != (wanted.lower() == "true"):
                continue
            out.append({"appName": name, "status": "active" if app is not None else "inactive",
                        "age": int((now - self._deployed_at.get(name, getattr(self.host, "started_at", now))) * 1000)
                        if app is not None else 0,
                        "isStatEnabled": app is not None and self._level(app) != "OFF"})
        return json_response(out)

    # ------------------------------------------------------------------ state
    def _app_and_store(self, name: str) -> tuple[Any, Any, web.Response | None]:
        """The running app and the state store for a backup or restore, or Siddhi's refusal."""
        app = self.host.apps.get(name)
        if app is None:
            return None, None, _not_found(name)
        store = self.host.store
        if store is None:
            return app, None, _coded(FILE_PROCESSING_ERROR,
                                     f"No persistence store assigned for siddhi app {name}", 500)
        return app, store, None

    async def _backup(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        app, store, refused = self._app_and_store(name)
        if refused is not None:
            return refused
        try:
            await self.host.checkpoint(app)
            revisions = await store.revisions_of(name)
        except Exception as exc:
            return _coded(FILE_PROCESSING_ERROR, str(exc), 500)
        return json_response({"revision": str(revisions[-1])}, 201)

    async def _restore(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        revision = request.query.get("revision")
        app, store, refused = self._app_and_store(name)
        if refused is not None:
            return refused
        try:
            if revision is None:
                state = (await store.load(name)).state
            else:
                state = await store.state_of(name, int(revision))
                if state is None:
                    raise ValueError(f"No revision {revision} of the state of Siddhi App {name}")
            if state is not None:
                await app.restore_state(state)
        except Exception as exc:
            return _coded(FILE_PROCESSING_ERROR, str(exc), 500)
        if revision is None:
            return _message("success", f"State restored to last revision for Siddhi App :{name}")
        return _message("success", f"State restored to revision {revision} for Siddhi App :{name}")

    async def _clear_revisions(self, name: str, redeploy: bool) -> None:
        """Siddhi's ``clearAllRevisions`` for one running app; with ``redeploy`` the app is
        undeployed first and deployed again after, so it starts without state."""
        store = self.host.store
        if store is None:
            raise RuntimeError(f"No persistence store assigned for siddhi app {name}")
        if redeploy:
            await self._deployments.restart_without_state(name, lambda: store.clear(name))
        else:
            await store.clear(name)

    async def _delete_revisions(self, request: web.Request) -> web.Response:
        """``DELETE /siddhi-apps/{name}/revisions[?enabledRedeployment=]``; the messages are
        Siddhi's, whose ``with redeployment.`` is on the answer given *without* one."""
        name = request.match_info["name"]
        if self.host.apps.get(name) is None:
            return _not_found(name)
        redeploy = _redeploys(request)
        try:
            await self._clear_revisions(name, redeploy)
        except Exception as exc:
            return _coded(FILE_PROCESSING_ERROR, str(exc), 500)
        message = f"All revisions of the state persistence are deleted for Siddhi App :{name}"
        return _message("success", message if redeploy else f"{message} with redeployment.")

    async def _delete_all_revisions(self, request: web.Request) -> web.Response:
        """``DELETE /siddhi-apps/revisions[?enabledRedeployment=]``: every running app."""
        redeploy = _redeploys(request)
        try:
            for name in list(self.host.apps):
                await self._clear_revisions(name, redeploy)
        except Exception as exc:
            return _coded(FILE_PROCESSING_ERROR, str(exc), 500)
        message = "All revisions of the state persistence is deleted for Siddhi Apps"
        return _message("success", f"{message} with redeployment" if redeploy else message)

    # ------------------------------------------------------------------ stores
    async def _store_query(self, request: web.Request) -> web.Response:
        return await store_query(self.host, request, await request.read())


async def store_query(host: Any, request: web.Request, raw: bytes) -> web.Response:
    """Siddhi's ``POST /stores/query`` (and ``POST /query``): ``{"appName", "query", "details"}``
    answered ``{"records": [[...], ...]}`` (with ``"details": [{"name", "dataType"}]`` when
    asked), 400 / 404 / 500 with the stores API's ``{"code", "type": "error", "message"}``."""
    try:
        body = orjson.loads(raw)
        if not isinstance(body, dict):
            raise TypeError
    except (orjson.JSONDecodeError, TypeError):
        return _store_error('expected {"appName": NAME, "query": TEXT}', 400)
    query, app_name = body.get("query"), body.get("appName")
    if not query:
        return _store_error("Query cannot be empty or null", 400)
    if not app_name:
        return _store_error("Siddhi app name cannot be empty or null", 400)
    runtime = host.runtimes.get(app_name)
    if runtime is None:
        return _store_error(f"Cannot find an active SiddhiApp with name: {app_name}", 404)
    from srota.grammar.model import OnDemandQueryType
    from srota.grammar.parser import parse_on_demand_query
    from srota.service.admin import on_demand

    try:
        if parse_on_demand_query(query).type is not OnDemandQueryType.FIND and \
                not host.admin.authorised_to_change(request):
            return _store_error("Cannot query: queries that change data need the configured token", 401)
        events = await on_demand(runtime, query)
        out: dict[str, Any] = {"records": [list(e.data) for e in events]}
        if body.get("details") is True:
            attributes = runtime.get_on_demand_query_output_attributes(query)
            out["details"] = [{"name": a.name, "dataType": str(a.type).upper()} for a in attributes]
    except (SiddhiAppCreationError, ValueError) as exc:
        return _store_error(f"Cannot query: {exc}", 500)
    except StoreGoneError as exc:
        return _store_error(f"Cannot query: {exc}", 503)
    return json_response(out)
