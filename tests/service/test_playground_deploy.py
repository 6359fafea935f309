"""The playground's "Deploy to server" in a real headless Chromium, against a running service
whose admin server serves the playground: the app lands in the service (and its apps folder)
through Siddhi Runner's API; a bad app gets its line and column on the page and changes nothing."""
from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from srota.service.config import DeploymentConfig, HttpConfig, PersistenceConfig, ServiceConfig
from srota.service.host import ServiceHost

from tests.service.test_playground_page import CHROMIUM, CHROMIUM_ARGS

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (make deps)")
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason="Chromium is not installed (make deps installs Debian's chromium)")

APP = """@app:name('Deployed')
define stream In (symbol string, price double);
from In[price > 10] select symbol insert into Out;
"""


@pytest.fixture
def service(tmp_path: Path) -> Iterator[ServiceHost]:
    """A service with the playground on its admin server, in a thread of its own."""
    cfg = ServiceConfig(http=HttpConfig(port=0, playground_enabled=True),
                        persistence=PersistenceConfig(database=str(tmp_path / "state.db")),
                        deployment=DeploymentConfig(dir=tmp_path / "siddhi-files", interval_ms=200),
                        errors_database=str(tmp_path / "errors.db"))
    host = ServiceHost(cfg)
    loop = asyncio.new_event_loop()
    started = threading.Event()
    stop = asyncio.Event()

    async def main() -> None:
        await host.start()
        started.set()
        await stop.wait()
        await host.stop()

    thread = threading.Thread(target=lambda: loop.run_until_complete(main()), daemon=True)
    thread.start()
    assert started.wait(30), "the service did not start"
    yield host
    loop.call_soon_threadsafe(stop.set)
    thread.join(30)


def _set_text(page: Any, text: str) -> None:
    page.evaluate("""(text) => { const e = window.srota.editor;
        e.dispatch({changes: {from: 0, to: e.state.doc.length, insert: text}}); }""", text)


def test_deploy_to_server(service: ServiceHost, tmp_path: Path) -> None:
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"http://127.0.0.1:{service.admin.port}/playground/")
            page.wait_for_selector("body[data-ready=true]", timeout=20_000)
            page.wait_for_selector("#deploy:not([hidden])", timeout=10_000)

            _set_text(page, APP)
            page.click("#deploy")
            page.wait_for_function("document.getElementById('deploy-status').textContent === "
                                   "'deployed to the server'", timeout=20_000)
            assert "Deployed" in service.apps
            assert (tmp_path / "siddhi-files" / "Deployed.siddhi").read_text() == APP

            running = service.apps["Deployed"]
            _set_text(page, APP.replace("select symbol", "select symbl"))
            page.click("#deploy")
            page.wait_for_function("document.getElementById('deploy-status').textContent.startsWith('not deployed')",
                                   timeout=20_000)
            shown = page.text_content("#deploy-status") or ""
            assert shown.startswith("not deployed (line 3, column 28): Error on 'Deployed' @ Line: 3. Position: 28"), shown
            assert service.apps["Deployed"] is running

            _set_text(page, APP.replace("price > 10", "price > 20"))
            page.click("#deploy")
            page.wait_for_function("document.getElementById('deploy-status').textContent === "
                                   "'updated on the server'", timeout=20_000)
            assert service.apps["Deployed"] is not running
            assert errors == []
        finally:
            browser.close()
