"""Siddhi Runner's REST API on the admin server (service/siddhi_api.py), over real HTTP against a
service started in the test: Siddhi's paths, status codes and JSON answers, the apps folder
(deployed apps run again after a restart), a bad app's 400 with line and column while the
running app goes on, and the credentials every route needs."""
from __future__ import annotations

import base64
import dataclasses
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from srota.service.config import DeploymentConfig, HttpConfig, PersistenceConfig, ServiceConfig
from srota.service.host import ServiceHost

from tests.integration.support import wait_until

APP = """@app:name('Stock')
define stream In (symbol string, price double);
define table Prices (symbol string, price double);
from In select symbol, price insert into Prices;
@info(name='avg') from In#window.length(3) select symbol, avg(price) as avgPrice insert into Avg;
"""

BASIC = {"Authorization": "Basic " + base64.b64encode(b"admin:admin").decode()}


def service_config(tmp_path: Path, *, persistence: bool = False, **http: Any) -> ServiceConfig:
    return ServiceConfig(
        http=HttpConfig(port=0, **http),
        persistence=PersistenceConfig(enabled=persistence, database=str(tmp_path / "state.db")),
        deployment=DeploymentConfig(dir=tmp_path / "siddhi-files", interval_ms=100),
        errors_database=str(tmp_path / "errors.db"))


class Service:
    """A started ServiceHost with an HTTP session on its admin port."""

    def __init__(self, cfg: ServiceConfig, *apps: str) -> None:
        self.host = ServiceHost(cfg, app_texts=list(apps))
        self.http: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Service:
        await self.host.start()
        self.http = aiohttp.ClientSession(f"http://127.0.0.1:{self.host.admin.port}")
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.http is not None
        await self.http.close()
        await self.host.stop()

    async def call(self, method: str, path: str, body: str | bytes | dict[str, Any] | None = None,
                   headers: dict[str, str] | None = None) -> tuple[int, Any]:
        assert self.http is not None
        kwargs: dict[str, Any] = {"headers": headers or {}}
        if isinstance(body, dict):
            kwargs["json"] = body
        elif body is not None:
            kwargs["data"] = body
            kwargs["headers"] = {"Content-Type": "text/plain", **kwargs["headers"]}
        async with self.http.request(method, path, **kwargs) as r:
            text = await r.text()
            return r.status, (await r.json() if text and r.content_type == "application/json" else text)


def send(host: ServiceHost, app: str, *rows: tuple[Any, ...]) -> None:
    handler = host.apps[app].runtime.get_input_handler("In")
    for row in rows:
        handler.send(list(row))


async def test_create_list_get_status_delete_as_siddhi_answers(tmp_path: Path) -> None:
    async with Service(service_config(tmp_path)) as s:
        status, body = await s.call("POST", "/siddhi-apps", APP)
        assert (status, body) == (201, {"type": "success", "message": "Siddhi App saved successfully and will be "
                                                                      "deployed in next deployment cycle"})
        assert (tmp_path / "siddhi-files" / "Stock.siddhi").read_text() == APP
        assert "Stock" in s.host.apps
        status, body = await s.call("POST", "/siddhi-apps", APP)
        assert (status, body) == (409, {"type": "conflict",
                                        "message": "There is a Siddhi App already exists with same name"})
        assert await s.call("GET", "/siddhi-apps") == (200, ["Stock"])
        assert await s.call("GET", "/siddhi-apps?isActive=true") == (200, ["Stock"])
        assert await s.call("GET", "/siddhi-apps?isActive=false") == (200, [])
        assert await s.call("GET", "/siddhi-apps/Stock") == (200, {"content": APP})
        assert await s.call("GET", "/siddhi-apps/Stock/status") == (200, {"status": "active"})
        missing = {"type": "not-found", "message": "There is no Siddhi App exist with provided name : Nope"}
        assert await s.call("GET", "/siddhi-apps/Nope") == (404, missing)
        assert await s.call("GET", "/siddhi-apps/Nope/status") == (404, missing)
        assert await s.call("DELETE", "/siddhi-apps/Nope") == (404, missing)

        send(s.host, "Stock", ("IBM", 10.0), ("WSO2", 20.0))
        status, body = await s.call("POST", "/stores/query",
                                    {"appName": "Stock", "query": "from Prices select symbol, price", "details": True})
        assert status == 200
        assert body == {"records": [["IBM", 10.0], ["WSO2", 20.0]],
                        "details": [{"name": "symbol", "dataType": "STRING"}, {"name": "price", "dataType": "DOUBLE"}]}
        status, body = await s.call("POST", "/stores/query", {"appName": "Stock", "query": "from Prices select *"})
        assert (status, list(body)) == (200, ["records"])
        assert await s.call("POST", "/stores/query", {"appName": "Nope", "query": "from Prices select *"}) == \
            (404, {"code": 1, "type": "error", "message": "Cannot find an active SiddhiApp with name: Nope"})
        assert await s.call("POST", "/stores/query", {"appName": "Stock"}) == \
            (400, {"code": 1, "type": "error", "message": "Query cannot be empty or null"})

        status, body = await s.call("DELETE", "/siddhi-apps/Stock")
        assert (status, body) == (200, "")
        assert "Stock" not in s.host.apps
        assert not (tmp_path / "siddhi-files" / "Stock.siddhi").exists()
        assert await s.call("GET", "/siddhi-apps") == (200, [])


async def test_put_updates_or_creates(tmp_path: Path) -> None:
    async with Service(service_config(tmp_path)) as s:
        status, body = await s.call("PUT", "/siddhi-apps", APP)
        assert status == 201 and body["type"] == "success"
        changed = APP.replace("length(3)", "length(5)")
        assert await s.call("PUT", "/siddhi-apps", changed) == \
            (200, {"type": "success",
                   "message": "Siddhi App updated successfully and will be deployed in next deployment cycle"})
        assert (tmp_path / "siddhi-files" / "Stock.siddhi").read_text() == changed
        assert await s.call("GET", "/siddhi-apps/Stock") == (200, {"content": changed})


async def test_a_bad_app_gets_400_with_line_and_column_and_the_running_app_goes_on(tmp_path: Path) -> None:
    async with Service(service_config(tmp_path)) as s:
        assert (await s.call("POST", "/siddhi-apps", APP))[0] == 201
        runtime = s.host.apps["Stock"].runtime
        bad = APP.replace("select symbol, price insert", "select symbol, prize insert")
        status, body = await s.call("PUT", "/siddhi-apps", bad)
        assert status == 400
        assert body["code"] == 800101 and body["type"] == "validation error"
        assert body["line"] == 4 and body["column"] == 24, body
        assert "@ Line: 4. Position: 24" in body["message"] and "prize" in body["message"]
        assert s.host.apps["Stock"].runtime is runtime  # untouched
        assert (tmp_path / "siddhi-files" / "Stock.siddhi").read_text() == APP
        send(s.host, "Stock", ("IBM", 10.0))
        status, body = await s.call("POST", "/stores/query", {"appName": "Stock", "query": "from Prices select *"})
        assert body == {"records": [["IBM", 10.0]]}
        # a syntax error, and an app without a name
        status, body = await s.call("POST", "/siddhi-apps", "@app:name('X')\ndefine stream In (a int);\nfrom In selec a;")
        assert status == 400 and body["line"] == 3, body
        status, body = await s.call("POST", "/siddhi-apps", "define stream In (a int);")
        assert (status, body) == (400, {"code": 800101, "type": "validation error",
                                        "message": "Siddhi App name must be provided as @App:name('name')."})
        assert list(s.host.apps) == ["Stock"]


async def test_deployed_apps_run_again_after_a_restart(tmp_path: Path) -> None:
    cfg = service_config(tmp_path, persistence=True)
    async with Service(cfg) as s:
        assert (await s.call("POST", "/siddhi-apps", APP))[0] == 201
        send(s.host, "Stock", ("IBM", 10.0))
    async with Service(cfg) as s:
        assert list(s.host.apps) == ["Stock"]
        assert await s.call("GET", "/siddhi-apps/Stock/status") == (200, {"status": "active"})
        status, body = await s.call("POST", "/stores/query", {"appName": "Stock", "query": "from Prices select *"})
        assert body == {"records": [["IBM", 10.0]]}  # its state came back with it (persistence on)


async def test_statistics_on_and_off(tmp_path: Path) -> None:
    async with Service(service_config(tmp_path), APP) as s:
        runtime = s.host.apps["Stock"].runtime
        assert runtime.statistics() is None
        status, body = await s.call("PUT", "/siddhi-apps/Stock/statistics", {"statsEnable": "true"})
        assert (status, body) == (200, {"type": "success", "message": "Sucessfully updated Aiddhi App : Stock"})
        assert runtime.statistics() is not None
        status, body = await s.call("PUT", "/siddhi-apps/Stock/statistics", {"statsEnable": True})
        assert status == 200 and body["message"].startswith("Stats level is already set to :")
        status, body = await s.call("GET", "/siddhi-apps/statistics")
        assert status == 200 and body[0]["appName"] == "Stock" and body[0]["isStatEnabled"] is True
        assert body[0]["status"] == "active"
        status, body = await s.call("PUT", "/siddhi-apps/Stock/statistics", {"statsEnable": "false"})
        assert status == 200 and runtime.statistics() is None
        assert (await s.call("PUT", "/siddhi-apps/Nope/statistics", {"statsEnable": "true"}))[0] == 404
        assert await s.call("PUT", "/siddhi-apps/statistics", {"enabledStatLevel": "BASIC"}) == \
            (200, {"type": "success", "message": "All siddhi apps Sucessfully updated."})
        assert runtime.statistics() is not None


async def test_backup_and_restore(tmp_path: Path) -> None:
    async with Service(service_config(tmp_path), APP) as s:
        assert await s.call("POST", "/siddhi-apps/Stock/backup") == \
            (500, {"code": 800102, "type": "file processing error",
                   "message": "No persistence store assigned for siddhi app Stock"})
    async with Service(service_config(tmp_path, persistence=True), APP) as s:
        send(s.host, "Stock", ("IBM", 10.0))
        status, body = await s.call("POST", "/siddhi-apps/Stock/backup")
        assert status == 201 and set(body) == {"revision"}
        revision = body["revision"]
        send(s.host, "Stock", ("WSO2", 20.0))
        query = {"appName": "Stock", "query": "from Prices select symbol"}
        assert (await s.call("POST", "/stores/query", query))[1] == {"records": [["IBM"], ["WSO2"]]}
        assert await s.call("POST", f"/siddhi-apps/Stock/restore?revision={revision}") == \
            (200, {"type": "success", "message": f"State restored to revision {revision} for Siddhi App :Stock"})
        assert (await s.call("POST", "/stores/query", query))[1] == {"records": [["IBM"]]}
        assert (await s.call("POST", "/siddhi-apps/Nope/backup"))[0] == 404
        assert await s.call("POST", "/siddhi-apps/Stock/restore") == \
            (200, {"type": "success", "message": "State restored to last revision for Siddhi App :Stock"})


async def test_elements(tmp_path: Path) -> None:
    """``GET /siddhi-apps/{name}/elements`` over HTTP (the list itself: test_siddhi_elements.py)."""
    async with Service(service_config(tmp_path), APP) as s:
        status, body = await s.call("GET", "/siddhi-apps/Stock/elements")
        assert status == 200
        assert [(e["inputStreamId"], e["outputStreamId"], e["queryName"]) for e in body] == \
            [("In", "Prices", "query"), ("In", "Avg", "avg")]
        assert body[0]["outputStreamSiddhiApp"] == "define table Prices (symbol string, price double)"
        assert (await s.call("GET", "/siddhi-apps/Nope/elements"))[0] == 404


async def test_delete_revisions_with_and_without_redeployment(tmp_path: Path) -> None:
    """Siddhi's ``DELETE /siddhi-apps/{name}/revisions`` and ``/siddhi-apps/revisions``: every saved
    revision goes; with redeployment (the default) the app restarts afresh, without it the running
    state stays. Messages word for word, Siddhi's inverted 'with redeployment.' included."""
    query = {"appName": "Stock", "query": "from Prices select symbol"}
    async with Service(service_config(tmp_path), APP) as s:
        assert await s.call("DELETE", "/siddhi-apps/Stock/revisions") == \
            (500, {"code": 800102, "type": "file processing error",
                   "message": "No persistence store assigned for siddhi app Stock"})
    async with Service(service_config(tmp_path, persistence=True), APP) as s:
        store = s.host.store
        assert store is not None
        send(s.host, "Stock", ("IBM", 10.0))
        assert (await s.call("POST", "/siddhi-apps/Stock/backup"))[0] == 201
        assert await s.call("DELETE", "/siddhi-apps/Stock/revisions?enabledRedeployment=false") == \
            (200, {"type": "success", "message": "All revisions of the state persistence are deleted for "
                                                 "Siddhi App :Stock with redeployment."})
        assert await store.revisions_of("Stock") == []
        assert (await s.call("POST", "/stores/query", query))[1] == {"records": [["IBM"]]}  # still running as it was
        assert (await s.call("POST", "/siddhi-apps/Stock/backup"))[0] == 201
        running = s.host.apps["Stock"]
        assert await s.call("DELETE", "/siddhi-apps/Stock/revisions") == \
            (200, {"type": "success", "message": "All revisions of the state persistence are deleted for "
                                                 "Siddhi App :Stock"})
        assert len(await store.revisions_of("Stock")) <= 1  # at most the fresh app's own first snapshot
        assert s.host.apps["Stock"] is not running  # redeployed, and without its old state
        assert (await s.call("POST", "/stores/query", query))[1] == {"records": []}
        send(s.host, "Stock", ("WSO2", 20.0))
        assert (await s.call("POST", "/siddhi-apps/Stock/backup"))[0] == 201
        assert await s.call("DELETE", "/siddhi-apps/revisions?enabledRedeployment=false") == \
            (200, {"type": "success", "message": "All revisions of the state persistence is deleted for Siddhi Apps"})
        assert await store.revisions_of("Stock") == []
        assert await s.call("DELETE", "/siddhi-apps/revisions") == \
            (200, {"type": "success", "message": "All revisions of the state persistence is deleted for Siddhi Apps "
                                                 "with redeployment"})
        assert (await s.call("POST", "/stores/query", query))[1] == {"records": []}
        assert (await s.call("DELETE", "/siddhi-apps/Nope/revisions"))[0] == 404


CHANGING = [("POST", "/siddhi-apps"), ("PUT", "/siddhi-apps"), ("DELETE", "/siddhi-apps/Stock"),
            ("PUT", "/siddhi-apps/Stock/statistics"), ("PUT", "/siddhi-apps/statistics"),
            ("POST", "/siddhi-apps/Stock/backup"), ("POST", "/siddhi-apps/Stock/restore"),
            ("DELETE", "/siddhi-apps/Stock/revisions"), ("DELETE", "/siddhi-apps/revisions"),
            ("POST", "/stores/query")]


async def test_with_credentials_configured_every_route_needs_them_and_basic_auth_is_accepted(tmp_path: Path) -> None:
    cfg = service_config(tmp_path, token="s3cret", username="admin", password="admin")
    async with Service(cfg, APP) as s:
        wrong = {"Authorization": "Basic " + base64.b64encode(b"admin:nope").decode()}
        for method, path in [*CHANGING, ("GET", "/siddhi-apps"), ("GET", "/siddhi-apps/Stock"),
                             ("GET", "/siddhi-apps/Stock/status"), ("GET", "/siddhi-apps/statistics")]:
            for headers in ({}, wrong, {"Authorization": "Bearer nope"}):
                status, _ = await s.call(method, path, APP if method in ("POST", "PUT") else None, headers)
                assert status == 401, (method, path, headers)
        assert list(s.host.apps) == ["Stock"]
        assert await s.call("GET", "/siddhi-apps", headers=BASIC) == (200, ["Stock"])
        assert await s.call("GET", "/siddhi-apps", headers={"Authorization": "Bearer s3cret"}) == (200, ["Stock"])
        assert (await s.call("PUT", "/siddhi-apps", APP.replace("(3)", "(4)"), BASIC))[0] == 200
        assert (await s.call("DELETE", "/siddhi-apps/Stock", headers=BASIC))[0] == 200


@pytest.mark.parametrize("bind", ["0.0.0.0"])
async def test_beyond_loopback_no_changing_route_answers_without_credentials(tmp_path: Path, bind: str) -> None:
    """No token configured and the server listens beyond loopback: the server makes a token for
    changes (written to a file), every changing route refuses without it; reads stay open."""
    cfg = dataclasses.replace(service_config(tmp_path), http=HttpConfig(host=bind, port=0))
    async with Service(cfg, APP) as s:
        routes = [(r.method, r.resource.canonical) for r in s.host.admin.app.router.routes()
                  if r.method not in ("GET", "HEAD", "OPTIONS", "*") and r.resource is not None]
        assert len(routes) > len(CHANGING)
        for method, canonical in routes:
            path = canonical.replace("{name}", "Stock").replace("{app}", "Stock")
            path = path.replace("{query}", "avg").replace("{id}", "1")
            path = "/".join("x" if p.startswith("{") else p for p in path.split("/"))
            status, _ = await s.call(method, path, APP if method in ("POST", "PUT") else None)
            assert status == 401, (method, path, status)
        assert list(s.host.apps) == ["Stock"] and not s.host.apps["Stock"].runtime.paused
        assert await s.call("GET", "/siddhi-apps") == (200, ["Stock"])
        token_file = tmp_path / "admin-token"
        token = token_file.read_text().strip()
        assert token_file.stat().st_mode & 0o077 == 0
        ok = {"Authorization": f"Bearer {token}"}
        assert (await s.call("PUT", "/siddhi-apps", APP.replace("(3)", "(4)"), ok))[0] == 200
        assert (await s.call("POST", "/apps/Stock/pause", headers=ok))[0] == 200


async def test_the_siddhi_name_check_runs_before_the_folder_is_needed(tmp_path: Path) -> None:
    """Without an apps folder a deploy is refused with Siddhi's file processing error (500),
    and nothing changes."""
    cfg = dataclasses.replace(service_config(tmp_path), deployment=DeploymentConfig())
    async with Service(cfg) as s:
        status, body = await s.call("POST", "/siddhi-apps", APP)
        assert status == 500 and body["code"] == 800102 and "deployment.dir" in body["message"]
        assert s.host.apps == {}
        await wait_until(lambda: True)


async def test_siddhi_docs_curl_examples(tmp_path: Path) -> None:
    """The curl commands of Siddhi's REST API guide (siddhi.io, rest-guides/siddhi-app-api and
    store-api), with http:// and the service's port for https://localhost:9443."""
    import asyncio
    import json
    import shlex

    (tmp_path / "TestSiddhiApp.siddhi").write_text(APP.replace("'Stock'", "'TestSiddhiApp'"))
    cfg = service_config(tmp_path, persistence=True, username="admin", password="admin")
    async with Service(cfg) as s:
        base = f"http://127.0.0.1:{s.host.admin.port}"

        async def curl(command: str) -> tuple[int, Any]:
            args = shlex.split(command.replace("https://localhost:9443", base)
                               .replace("https://localhost:7443", base).replace("http://localhost:9090", base))
            proc = await asyncio.create_subprocess_exec(*args, "-s", "-w", "\n%{http_code}", cwd=tmp_path,
                                                        stdout=asyncio.subprocess.PIPE)
            out, _ = await proc.communicate()
            body, _, code = out.decode().rpartition("\n")
            return int(code), (json.loads(body) if body else "")

        assert await curl('curl -X POST "https://localhost:9443/siddhi-apps" -H "accept: application/json" '
                          '-H "Content-Type: text/plain" --data-binary @TestSiddhiApp.siddhi -u admin:admin -k') \
            == (201, {"type": "success",
                      "message": "Siddhi App saved successfully and will be deployed in next deployment cycle"})
        status, body = await curl('curl -X POST "https://localhost:9443/siddhi-apps" -H "accept: application/json" '
                                  '-H "Content-Type: text/plain" --data-binary @TestSiddhiApp.siddhi -u admin:wrong -k')
        assert status == 401
        assert await curl('curl -X GET "https://localhost:9443/siddhi-apps" -H "accept: application/json" '
                          '-u admin:admin -k') == (200, ["TestSiddhiApp"])
        assert await curl('curl -X GET "https://localhost:9443/siddhi-apps?isActive=true" '
                          '-H "accept: application/json" -u admin:admin -k') == (200, ["TestSiddhiApp"])
        status, body = await curl('curl -X GET "https://localhost:9443/siddhi-apps/TestSiddhiApp" '
                                  '-H "accept: application/json" -u admin:admin -k')
        assert status == 200 and body["content"].startswith("@app:name('TestSiddhiApp')")
        assert await curl('curl -X GET "https://localhost:9443/siddhi-apps/TestSiddhiApp/status" '
                          '-H "accept: application/json" -u admin:admin -k') == (200, {"status": "active"})
        assert (await curl('curl -X PUT "https://localhost:9443/siddhi-apps/TestSiddhiApp/statistics" '
                           '-H "accept: application/json" -H "Content-Type: application/json" '
                           '-d "{\\"statsEnable\\":\\"true\\"}" -u admin:admin -k'))[0] == 200
        send(s.host, "TestSiddhiApp", ("IBM", 10.0))
        assert await curl('curl -X POST https://localhost:7443/stores/query -H "content-type: application/json" '
                          '-u "admin:admin" -d \'{"appName" : "TestSiddhiApp", "query" : "from Prices select *" }\' '
                          '-k') == (200, {"records": [["IBM", 10.0]]})
        # the runner's siddhi-apps-api.yaml (x-wso2-curl), with the credentials added
        assert await curl("curl -k -X DELETE http://localhost:9090/siddhi-apps/TestSiddhiApp/revisions "
                          "-u admin:admin") == \
            (200, {"type": "success", "message": "All revisions of the state persistence are deleted for "
                                                 "Siddhi App :TestSiddhiApp"})
        assert await curl("curl -k -X DELETE http://localhost:9090/siddhi-apps/revisions -u admin:admin") == \
            (200, {"type": "success", "message": "All revisions of the state persistence is deleted for Siddhi Apps "
                                                 "with redeployment"})
        status, body = await curl("curl -k -X GET http://localhost:9090/siddhi-apps/TestSiddhiApp/elements "
                                  "-u admin:admin")
        assert status == 200 and body[0]["outputStreamId"] == "Prices"
        assert await curl('curl -X DELETE "https://localhost:9443/siddhi-apps/TestSiddhiApp" '
                          '-H "accept: application/json" -u admin:admin -k') == (200, "")
        assert s.host.apps == {}


async def test_post_query_answers_siddhi_shaped_bodies_as_siddhi_does(tmp_path: Path) -> None:
    """Siddhi Runner's ``POST /query`` takes the stores API's body; Srota's own ``{"app", ...}``
    body keeps its answer."""
    async with Service(service_config(tmp_path, query_enabled=True), APP) as s:
        send(s.host, "Stock", ("IBM", 10.0))
        assert await s.call("POST", "/query", {"appName": "Stock", "query": "from Prices select symbol"}) == \
            (200, {"records": [["IBM"]]})
        status, body = await s.call("POST", "/query", {"app": "Stock", "query": "from Prices select symbol"})
        assert status == 200 and body["events"][0]["data"] == ["IBM"]


async def test_beyond_loopback_without_a_place_for_the_token_the_service_refuses_to_start(tmp_path: Path) -> None:
    blocked = tmp_path / "ro"
    blocked.write_text("a file, not a directory")
    cfg = dataclasses.replace(service_config(tmp_path), http=HttpConfig(host="0.0.0.0", port=0),
                              persistence=PersistenceConfig(database=str(blocked / "state.db")))
    host = ServiceHost(cfg, app_texts=[APP])
    with pytest.raises(OSError, match="without http.token, and the token made for it cannot be written"):
        await host.start()
    await host.stop()


async def test_a_database_outage_met_by_a_snapshot_or_a_restore_stops_that_app_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store that stays unreachable past its max.outage raises a BaseException, which stops
    the app that met it (as a source's chunk does).  Met by a snapshot, it ended the periodic
    snapshots of every app; by the Runner API's backup or restore, the request with no
    answer.  Now that app stops, the other apps' snapshots go on, and the API answers 500
    with the reason."""
    from srota.engine.stores.database import StoreUnavailableError

    other = APP.replace("@app:name('Stock')", "@app:name('Other')")
    assert other != APP

    def unreachable(*_args: Any) -> Any:
        raise StoreUnavailableError("aggregation 'A': the database stayed unreachable for more than 30 s")

    async with Service(service_config(tmp_path, persistence=True), APP, other) as s:
        stock, others = s.host.apps["Stock"], s.host.apps["Other"]
        status, body = await s.call("POST", "/siddhi-apps/Stock/backup")
        assert status == 201
        monkeypatch.setattr(stock.runtime, "restore", unreachable)
        status, body = await s.call("POST", f"/siddhi-apps/Stock/restore?revision={body['revision']}")
        assert status == 500 and "stayed unreachable" in body["message"]
        assert stock.failed and "stayed unreachable" in stock.failed

    async with Service(service_config(tmp_path / "again", persistence=True), APP, other) as s:
        stock, others = s.host.apps["Stock"], s.host.apps["Other"]
        monkeypatch.setattr(stock.runtime, "snapshot", unreachable)
        before = len(await s.host.store.revisions_of("Other"))
        await s.host.snapshot()  # the periodic snapshot: no BaseException out of it
        assert stock.failed and "stayed unreachable" in stock.failed
        assert len(await s.host.store.revisions_of("Other")) == before + 1
        status, body = await s.call("POST", "/siddhi-apps/Stock/backup")
        assert status == 500 and "stopped" in body["message"]
        assert not others.failed
