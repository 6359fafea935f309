"""The playground's page, driven in a real headless Chromium (Debian's, through Playwright).

A newcomer's session: the stock example opens; a broken query typed at the end gets its
diagnostic at the right line; fixed, the app runs; a single event and a CSV file go in; the
output tables and the plot follow; a breakpoint holds a query's output and Next/Play step on;
bad input (a CSV value that does not fit, a runaway query) gets a message on the page.

Screenshots go to ``$SROTA_SCREENSHOTS`` when set (docs/playground.md's images are made so:
``SROTA_SCREENSHOTS=docs/images .venv/bin/pytest tests/service/test_playground_page.py``).
"""
from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from srota.service.playground import serve
from srota.service.sandbox import SandboxLimits

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Flags that keep Chromium off the (closed) network and fit a container run as root.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (make deps)")
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason="Chromium is not installed (make deps installs Debian's chromium)")


@pytest.fixture(scope="module")
def playground_url() -> Iterator[str]:
    """``srota playground examples/stock.siddhi`` on a free loopback port, in a thread."""
    ready = threading.Event()
    url: list[str] = []
    loop = asyncio.new_event_loop()

    def main() -> None:
        limits = SandboxLimits(busy_seconds=3)
        task = loop.create_task(serve(ROOT / "examples" / "stock.siddhi", limits=limits,
                                      ready=lambda u: (url.append(u), ready.set())))
        try:
            loop.run_until_complete(task)
        except asyncio.CancelledError:
            pass

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    assert ready.wait(30), "the playground did not start"
    yield url[0]
    for task in asyncio.all_tasks(loop):
        loop.call_soon_threadsafe(task.cancel)
    thread.join(15)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, playground_url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda exc: errors.append(str(exc)))
    p.goto(playground_url)
    p.wait_for_selector("body[data-ready=true]", timeout=20_000)
    yield p
    context.close()
    assert errors == [], f"errors in the page's JavaScript: {errors}"


def _shot(page: Any, name: str, tmp_path: Path) -> None:
    folder = Path(os.environ.get("SROTA_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"playground-{name}.png"))


def _editor_text(page: Any) -> str:
    return str(page.evaluate("window.srota.editor.state.doc.toString()"))


def _run(page: Any) -> None:
    page.click("#run")
    page.wait_for_function("document.getElementById('run-status').textContent.startsWith('running')", timeout=20_000)


def _send_trade(page: Any, symbol: str, price: float, volume: int, ts: int) -> None:
    page.click("#tabs button[data-tab=simulate]")
    page.select_option("#sim-stream", "Trades")
    for name, value in (("symbol", symbol), ("price", price), ("volume", volume), ("ts", ts)):
        page.fill(f"#single-fields input[name={name}]", str(value))
    page.click("#single-form button[type=submit]")


def test_write_validate_run_feed_and_watch(page: Any, tmp_path: Path) -> None:
    # The example given on the command line is open, and it checks clean.
    assert "define stream Trades" in _editor_text(page)
    assert page.is_hidden("#attach-box")  # no service config given: apps run alone
    page.wait_for_function("document.getElementById('check-status').textContent === 'no problems'", timeout=20_000)
    _shot(page, "editor", tmp_path)

    # A broken query typed at the end: the diagnostic names its line, in the list and the editor.
    page.click(".cm-content")
    page.keyboard.press("Control+End")
    page.keyboard.type("\nfrom Trades[price > ] select symbol insert into Cheap;")
    broken_line = _editor_text(page).count("\n") + 1
    page.wait_for_selector("#problems .error", timeout=20_000)
    problem = page.inner_text("#problems .error")
    assert problem.startswith(f"{broken_line}:21:"), problem  # at the "]"
    assert "unexpected ']'" in problem
    page.wait_for_selector(".cm-lintRange-error")
    _shot(page, "diagnostic", tmp_path)

    # Completion offers the app's names: a stream's attribute after typing its first letters.
    page.keyboard.press("Enter")
    page.keyboard.type("from Trades select vol")
    page.keyboard.press("Control+Space")
    page.wait_for_selector(".cm-tooltip-autocomplete")
    assert "volume" in page.inner_text(".cm-tooltip-autocomplete")
    page.keyboard.press("Escape")

    # Fixed (the two typed lines replaced by a correct query), the app checks clean and runs.
    text = _editor_text(page)
    fixed = text[:text.index("\nfrom Trades[price > ]")] + "\nfrom Trades[price < 50.0] select symbol, price insert into Cheap;\n"
    page.evaluate("t => { const v = window.srota.editor; v.dispatch({changes: {from: 0, to: v.state.doc.length, insert: t}}); }",
                  fixed)
    page.wait_for_function("document.getElementById('check-status').textContent === 'no problems'", timeout=20_000)
    _run(page)

    # A single event from the form: it shows in the output tables.
    _send_trade(page, "IBM", 101.5, 2500, 1_700_000_000_000)
    page.click("#tabs button[data-tab=output]")
    page.wait_for_selector("#outputs .output[data-stream=BigTrades] td:text('IBM')", timeout=10_000)
    assert "2500" in page.inner_text("#outputs .output[data-stream=BigTrades]")

    # A CSV file replayed at 10 events a second (one event per chunk, so one average per trade):
    # the averages fill in, and the plot draws them.
    page.click("#tabs button[data-tab=simulate]")
    page.select_option("#sim-stream", "Trades")
    page.set_input_files("#sim-file", str(ROOT / "examples" / "trades.csv"))
    page.fill("#sim-rate", "10")
    page.click("#file-form button[type=submit]")
    rows = sum(1 for line in (ROOT / "examples" / "trades.csv").read_text().splitlines()[1:] if line.strip())
    page.wait_for_function(f"document.querySelector('#simulations tbody tr')?.cells[3].textContent === 'done'"
                           f" && document.querySelector('#simulations tbody tr').cells[2].textContent === '{rows} / {rows}'",
                           timeout=20_000)
    page.click("#tabs button[data-tab=output]")
    page.wait_for_function(f"window.srota.state.outputs.get('Averages')?.total === {rows + 1}", timeout=10_000)
    page.select_option("#out-stream", "Averages")
    assert "WSO2" in page.inner_text("#outputs")
    _shot(page, "output", tmp_path)
    page.click("#tabs button[data-tab=plot]")
    page.select_option("#plot-stream", "Averages")
    page.select_option("#plot-y", "avgPrice")
    page.select_option("#plot-group", "symbol")
    assert page.evaluate("window.srota.plot.points") == rows + 1
    assert page.evaluate("window.srota.plot.series.size") == len({line.split(',')[0] for line in
                                                                   (ROOT / "examples" / "trades.csv").read_text().splitlines()[1:] if line})
    before = page.evaluate("window.srota.plot.points")
    _send_trade(page, "IBM", 99.0, 10, 1_700_000_100_000)
    page.click("#tabs button[data-tab=plot]")
    page.wait_for_function(f"window.srota.plot.points === {before + 1}", timeout=10_000)
    _shot(page, "plot", tmp_path)

    # An on-demand query against the table.
    page.click("#tabs button[data-tab=query]")
    page.fill("#query-text", "from LastPrice on symbol == 'IBM' select symbol, price")
    page.click("#query-run")
    page.wait_for_selector("#query-result td:text-is('99')", timeout=10_000)

    # Statistics per stream and query while the app runs.
    page.click("#tabs button[data-tab=statistics]")
    page.wait_for_selector("#statistics td:text('avgPrice')", timeout=10_000)


def test_breakpoint_holds_and_steps(page: Any, tmp_path: Path) -> None:
    _run(page)
    page.click("#tabs button[data-tab=debug]")
    page.check("#breakpoints tr[data-query=avgPrice] input[data-terminal=out]")
    _send_trade(page, "WSO2", 56.0, 100, 1_700_000_000_000)
    page.wait_for_selector("#held-title:text('Held at avgPrice OUT: 1 event(s)')", timeout=10_000)
    assert "WSO2" in page.inner_text("#held-events")
    page.wait_for_function("document.getElementById('query-state').textContent.includes('WSO2')", timeout=10_000)
    _shot(page, "debugger", tmp_path)
    # Held: nothing reached the output yet.
    assert page.evaluate("window.srota.state.outputs.get('Averages')") is None

    # Next goes on and stops at the very next checkpoint: the output reaches Averages, and the
    # same chunk stops at the IN of the next query that reads Trades.
    page.click("#debug-next")
    page.wait_for_function("window.srota.state.outputs.get('Averages')?.total === 1", timeout=10_000)
    page.wait_for_selector("#held-title:text('Held at lastPrice IN: 1 event(s)')", timeout=10_000)
    page.click("#debug-play")

    # Play runs to the next breakpoint: the next event stops again at avgPrice OUT.
    _send_trade(page, "WSO2", 57.0, 100, 1_700_000_001_000)
    page.wait_for_selector("#held-title:text('Held at avgPrice OUT')", timeout=10_000)
    page.click("#tabs button[data-tab=debug]")
    page.uncheck("#breakpoints tr[data-query=avgPrice] input[data-terminal=out]")
    page.click("#debug-play")
    page.wait_for_function("window.srota.state.outputs.get('Averages')?.total === 2", timeout=10_000)


def test_bad_input_gets_a_message_and_the_page_goes_on(page: Any, tmp_path: Path) -> None:
    # A run of a broken app: the error names its line.
    page.evaluate("t => { const v = window.srota.editor; v.dispatch({changes: {from: 0, to: v.state.doc.length, insert: t}}); }",
                  "define stream S (n long);\nfrom S select m insert into O;\n")
    page.click("#run")
    page.wait_for_selector("#message.error", timeout=20_000)
    assert page.inner_text("#message").startswith("line 2, column 15: stream 'S' has no attribute 'm'")

    # A CSV value that does not fit the stream: the line and the attribute, nothing sent.
    page.evaluate("t => { const v = window.srota.editor; v.dispatch({changes: {from: 0, to: v.state.doc.length, insert: t}}); }",
                  "define stream S (name string, n long);\nfrom S select name, n * 2 as twice insert into O;\n")
    _run(page)
    bad = tmp_path / "bad.csv"
    bad.write_text("name,n\na,1\nb,two\n")
    page.set_input_files("#sim-file", str(bad))
    page.click("#file-form button[type=submit]")
    page.wait_for_selector("#message.error", timeout=10_000)
    assert page.inner_text("#message") == "line 3, n (long): 'two' is not a long"
    assert page.evaluate("window.srota.state.outputs.size") == 0

    # A runaway query (a join that takes longer than the busy limit): stopped with a message.
    page.evaluate("t => { const v = window.srota.editor; v.dispatch({changes: {from: 0, to: v.state.doc.length, insert: t}}); }",
                  "define stream S (n long);\ndefine stream T (n long);\ndefine window W (n long) length(100000);\n"
                  "from S select n insert into W;\nfrom T join W select T.n as a, W.n as b insert into O;\n")
    _run(page)
    send = ("([stream, n]) => fetch(`api/sessions/${sessionStorage.getItem('srota-session')}/send`, {method: 'POST', "
            "headers: {'Content-Type': 'application/json'}, body: JSON.stringify({stream, "
            "events: Array.from({length: n}, (_, i) => [i])})}).then(async r => r.status === 200 ? 200 : "
            "`${r.status} ${await r.text()}`)")  # the reason, should it fail
    # The window's fill stays small (~10 ms in the sandbox; a loaded machine reached the 3 s
    # busy limit with 20,000 events once) ...
    assert page.evaluate(send, ["S", 2000]) == 200
    page.evaluate(send, ["T", 50_000])  # ... the join does not: 100 million rows, far over the busy limit
    # (or over the memory limit first, where the rows pile up faster than the busy limit's
    # three seconds: each stops the app and says which)
    page.wait_for_function("/(the app|memory and) was stopped/.test(document.getElementById('message').textContent)",
                           timeout=30_000)
    assert page.inner_text("#run-status") == "not running"
    _shot(page, "runaway", tmp_path)

    # The server goes on: the next run works.
    page.evaluate("t => { const v = window.srota.editor; v.dispatch({changes: {from: 0, to: v.state.doc.length, insert: t}}); }",
                  "define stream S (n long);\nfrom S select n insert into O;\n")
    _run(page)


def test_random_data_feed(page: Any) -> None:
    _run(page)
    page.select_option("#sim-stream", "Trades")
    page.fill("#random-fields input[name=symbol]", "R-#")
    page.fill("#random-fields input[name=price]", "10..20")
    page.fill("#random-rate", "200")
    page.fill("#random-count", "25")
    page.click("#random-form button[type=submit]")
    page.wait_for_function("document.querySelector('#simulations tbody tr')?.cells[3].textContent === 'done'",
                           timeout=20_000)
    assert page.inner_text("#simulations tbody tr td:nth-child(3)") == "25 / 25"
    page.wait_for_function("window.srota.state.outputs.get('Trades')?.total === 25", timeout=10_000)
    rows = page.evaluate("window.srota.state.outputs.get('Trades').rows.map(e => e.data)")
    assert all(r[0].startswith("R-") and len(r[0]) == 3 and 10 <= r[1] <= 20 for r in rows)


def test_the_status_says_starting_until_the_new_app_runs(page: Any) -> None:
    # A restart replaces the app: until the new one runs the old one takes no sends, so the
    # status must not go on saying "running" (a send in between got 409 "no app is running").
    set_text = "t => { const v = window.srota.editor; v.dispatch({changes: {from: 0, to: v.state.doc.length, insert: t}}); }"
    page.evaluate(set_text, "@app:name('First')\ndefine stream S (n long);\nfrom S select n insert into O;\n")
    _run(page)
    held: list[Any] = []
    page.route("**/run", lambda route: held.append(route))  # the next run's request waits here
    page.evaluate(set_text, "@app:name('Second')\ndefine stream S (n long);\nfrom S select n insert into O;\n")
    page.click("#run")
    page.wait_for_function("document.getElementById('run-status').textContent === 'starting…'", timeout=10_000)
    page.wait_for_function("true")  # (lets the route handler be called)
    assert held, "the run request was not held"
    held[0].continue_()
    page.unroute("**/run")
    page.wait_for_function("document.getElementById('run-status').textContent === 'running Second'", timeout=20_000)
