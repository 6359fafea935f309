"""Hot deploy of the apps folder (service/hotdeploy.py), in a service started in the test: a
``.siddhi`` file added, changed or removed deploys, redeploys or undeploys its app; the state
carries over when its shape is unchanged, and is reset (the log says why) when it is not; a
file that does not compile leaves the running version in place and logs line and column."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import structlog
from srota.service.hotdeploy import state_shape_change

from tests.integration.support import wait_until
from tests.service.test_siddhi_api import APP, Service, send, service_config


def rows(host: Any, app: str) -> list[list[Any]]:
    return [list(e.data) for e in host.apps[app].runtime.query("from Prices select symbol, price")]


def write(path: Path, text: str) -> None:
    """Write as an editor would, and make sure the mtime moves even on a coarse clock."""
    before = path.stat().st_mtime_ns if path.exists() else None
    path.write_text(text, encoding="utf-8")
    while before is not None and path.stat().st_mtime_ns == before:
        time.sleep(0.01)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def logs() -> Any:
    with structlog.testing.capture_logs() as captured:
        yield captured


async def test_add_change_remove(tmp_path: Path, logs: list[dict[str, Any]]) -> None:
    folder = tmp_path / "siddhi-files"
    folder.mkdir()
    async with Service(service_config(tmp_path)) as s:
        host = s.host
        write(folder / "Stock.siddhi", APP)
        await wait_until(lambda: "Stock" in host.apps, 10, what="the app to deploy")
        assert await s.call("GET", "/siddhi-apps/Stock/status") == (200, {"status": "active"})
        send(host, "Stock", ("IBM", 10.0), ("WSO2", 20.0))
        first = host.apps["Stock"]

        # the same stateful elements (a comment and a stateless query added): the state carries over
        same_shape = "-- version 2\n" + APP + "from In[price > 100] select symbol insert into Big;\n"
        write(folder / "Stock.siddhi", same_shape)
        await wait_until(lambda: host.apps["Stock"] is not first, 10, what="the redeploy")
        assert rows(host, "Stock") == [["IBM", 10.0], ["WSO2", 20.0]]
        carried = [e for e in logs if e["event"] == "app redeployed; state carried over"]
        assert len(carried) == 1 and carried[0]["started_empty"] == ["query_3/selector"]
        averages: list[float] = []
        host.apps["Stock"].runtime.add_callback("Avg", lambda events: averages.extend(e.data[1] for e in events))
        send(host, "Stock", ("IBM", 30.0))
        assert averages == [20.0]  # the window kept the two events of the version before
        assert await s.call("GET", "/siddhi-apps/Stock") == (200, {"content": same_shape})

        # the window's length changed: its state cannot carry over, so the whole state is reset
        second = host.apps["Stock"]
        write(folder / "Stock.siddhi", same_shape.replace("length(3)", "length(5)"))
        await wait_until(lambda: host.apps["Stock"] is not second, 10, what="the second redeploy")
        assert rows(host, "Stock") == []
        reset = [e for e in logs if e["event"] == "app redeployed; state reset"]
        assert len(reset) == 1 and reset[0]["app"] == "Stock"
        assert reset[0]["reason"].startswith("the app's state changed in shape: avg/selector, avg/window changed")

        (folder / "Stock.siddhi").unlink()
        await wait_until(lambda: "Stock" not in host.apps, 10, what="the undeploy")
        assert await s.call("GET", "/siddhi-apps") == (200, [])


async def test_a_file_that_does_not_compile_leaves_the_running_version(tmp_path: Path,
                                                                       logs: list[dict[str, Any]]) -> None:
    folder = tmp_path / "siddhi-files"
    folder.mkdir()
    write(folder / "Stock.siddhi", APP)
    async with Service(service_config(tmp_path)) as s:
        host = s.host
        assert "Stock" in host.apps  # in the folder at start
        send(host, "Stock", ("IBM", 10.0))
        running = host.apps["Stock"]
        write(folder / "Stock.siddhi", APP.replace("select symbol, price insert", "select symbol, prize insert"))
        await wait_until(lambda: any(e["event"].startswith("app not redeployed") for e in logs), 10,
                         what="the compile error")
        error = next(e for e in logs if e["event"].startswith("app not redeployed"))
        assert (error["line"], error["column"]) == (4, 24) and error["file"].endswith("Stock.siddhi:4:24")
        assert host.apps["Stock"] is running
        send(host, "Stock", ("WSO2", 20.0))  # still processing
        assert rows(host, "Stock") == [["IBM", 10.0], ["WSO2", 20.0]]
        assert await s.call("GET", "/siddhi-apps/Stock/status") == (200, {"status": "active"})

        # a new file that does not compile: listed as inactive, as Siddhi Runner lists it
        write(folder / "Broken.siddhi", "@app:name('Broken')\ndefine stream In (a int);\nfrom In selec a;\n")
        await wait_until(lambda: "Broken" in host.deployments.inactive, 10, what="the failed deploy")
        assert await s.call("GET", "/siddhi-apps/Broken/status") == (200, {"status": "inactive"})
        assert await s.call("GET", "/siddhi-apps?isActive=false") == (200, ["Broken"])
        # fixed: it deploys
        write(folder / "Broken.siddhi", "@app:name('Broken')\ndefine stream In (a int);\nfrom In select a insert into O;\n")
        await wait_until(lambda: "Broken" in host.apps, 10, what="the fixed app")
        assert await s.call("GET", "/siddhi-apps?isActive=false") == (200, [])


async def test_an_api_deploy_is_not_deployed_again_by_the_watcher(tmp_path: Path,
                                                                  logs: list[dict[str, Any]]) -> None:
    async with Service(service_config(tmp_path)) as s:
        assert (await s.call("POST", "/siddhi-apps", APP))[0] == 201
        app = s.host.apps["Stock"]
        await s.host.deployments.watcher.scan()
        assert s.host.apps["Stock"] is app
        assert not any(e["event"].startswith("hot deploy: app file") for e in logs)


def test_state_shape_change_names_what_changed() -> None:
    from srota import SiddhiManager

    manager = SiddhiManager()
    old = manager.create_siddhi_app_runtime(APP)
    same = state_shape_change(old.snapshot(), manager.create_siddhi_app_runtime(APP))
    assert same.reset_reason is None and not same.added and not same.removed
    added = manager.create_siddhi_app_runtime(APP + "@info(name='n') from In#window.length(2) select * "
                                                    "insert into N;\n")
    grown = state_shape_change(old.snapshot(), added)
    assert grown.reset_reason is None and grown.added == ("n/selector", "n/window")
    assert state_shape_change(added.snapshot(), old).removed == ("n/selector", "n/window")
    longer = manager.create_siddhi_app_runtime(APP.replace("length(3)", "length(4)"))
    change = state_shape_change(old.snapshot(), longer)
    assert change.changed == ("avg/selector", "avg/window")
    assert change.reset_reason is not None and "avg/window" in change.reset_reason


async def test_a_service_deploying_into_an_empty_folder_is_ready(tmp_path: Path) -> None:
    (tmp_path / "siddhi-files").mkdir()
    async with Service(service_config(tmp_path)) as s:
        assert s.host.apps == {} and s.host.is_ready()  # as Siddhi Runner, it starts empty
        assert (await s.call("GET", "/ready"))[0] == 200


def test_srota_run_takes_a_config_whose_deployment_folder_is_empty(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "apps").mkdir()
    cfg = tmp_path / "srota.yaml"
    cfg.write_text("deployment:\n  dir: apps\nhttp:\n  port: 0\npersistence:\n  enabled: false\n")
    proc = subprocess.Popen([sys.executable, "-m", "srota.service.cli", "run", "--config", str(cfg)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.wait(timeout=4)
    except subprocess.TimeoutExpired:  # still running: it started and waits for apps
        proc.terminate()
        proc.wait(timeout=30)
        return
    raise AssertionError(f"srota run exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")


async def test_a_redeploy_whose_checkpoint_meets_a_database_outage_stops_the_app_and_discards_the_new_version(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The running version's last checkpoint meets a store that stays unreachable: that version
    stops as for a chunk, the new version is closed without running (its runtime and engine
    thread were made), and the API answers 500 with the reason."""
    from srota.engine.stores.database import StoreUnavailableError
    from srota.service import hotdeploy

    discarded: list[Any] = []
    discard = hotdeploy._discard

    async def spy(app: Any) -> None:
        discarded.append(app)
        await discard(app)

    monkeypatch.setattr(hotdeploy, "_discard", spy)

    def unreachable() -> Any:
        raise StoreUnavailableError("aggregation 'A': the database stayed unreachable for more than 30 s")

    async with Service(service_config(tmp_path, persistence=True), APP) as s:
        running = s.host.apps["Stock"]
        monkeypatch.setattr(running.runtime, "snapshot", unreachable)
        status, body = await s.call("PUT", "/siddhi-apps", "-- version 2\n" + APP)
        assert status == 500 and "stayed unreachable" in body["message"]
        assert running.failed and "stayed unreachable" in running.failed
        assert [app.name for app in discarded] == ["Stock"] and discarded[0] is not running
        assert s.host.apps["Stock"] is running
