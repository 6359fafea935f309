"""The playground's API and its sandbox, without a browser (the page: test_playground_page.py).

Files and random data are checked before anything is sent; apps run in a child process that
is stopped, with a reason, when it exceeds its limits; the service serves the playground
behind its admin token, and a browser signs in once with a form.
"""
from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web
from srota.service.config import load_config
from srota.service.playground import Playground, check, parse_file, random_rows
from srota.service.sandbox import Sandbox, SandboxGone, SandboxLimits

from tests.integration.support import config, running_host, wait_until

ATTRS = [{"name": "symbol", "type": "string"}, {"name": "price", "type": "double"},
         {"name": "volume", "type": "long"}]
T0 = 1_700_000_000_000


# ------------------------------------------------------------------ files and random data
def test_csv_with_a_header_maps_by_name_and_keeps_timestamps() -> None:
    text = f"ts,volume,symbol,price,extra\n{T0},10,IBM,1.5,x\n{T0 + 1000},20,WSO2,2,y\n"
    rows = parse_file("csv", text, ATTRS, "ts", 100)
    assert rows == [{"data": ["IBM", 1.5, 10], "timestamp": T0},
                    {"data": ["WSO2", 2.0, 20], "timestamp": T0 + 1000}]


def test_csv_without_a_header_is_positional() -> None:
    assert parse_file("csv", "IBM,1.5,10\n\nWSO2,2,20\n", ATTRS, None, 100)[1] == {"data": ["WSO2", 2.0, 20],
                                                                                   "timestamp": None}


@pytest.mark.parametrize(("text", "column", "message"), [
    ("symbol,price,volume\nIBM,1.5,10\nWSO2,x,20\n", None, "line 3, price (double): 'x' is not a number"),
    ("symbol,price,volume\nIBM,1.5\n", None, "line 2: 2 fields, the header has 3"),
    ("IBM,1.5\n", None, "line 1: 2 values for 3 attributes (symbol, price, volume)"),
    ("symbol,price,volume\nIBM,1.5,10\n", "ts", "line 1: no column 'ts' (columns: symbol, price, volume)"),
    ("symbol,price,volume,ts\nIBM,1.5,10,soon\n", "ts", "line 2: timestamp 'soon' in 'ts' is not epoch milliseconds"),
    ("symbol,price,vol\nIBM,1.5,10\n", None, "line 1: the header does not name every attribute of the stream "
                                             "(symbol, price, volume)"),
    ("", None, "the file has no rows"),
])
def test_a_csv_that_does_not_fit_names_the_line_and_attribute(text: str, column: str | None, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_file("csv", text, ATTRS, column, 100)
    assert str(info.value) == message


def test_json_files_take_objects_siddhi_envelopes_and_arrays() -> None:
    text = orjson.dumps([{"symbol": "IBM", "price": 1, "volume": 5, "t": T0},
                         {"event": {"symbol": "A", "price": 2.5, "volume": "7", "t": T0 + 5}}]).decode()
    assert [r["data"] for r in parse_file("json", text, ATTRS, "t", 10)] == [["IBM", 1.0, 5], ["A", 2.5, 7]]
    assert parse_file("json", '[["IBM", 1, 5]]', ATTRS, None, 10)[0]["data"] == ["IBM", 1.0, 5]
    with pytest.raises(ValueError, match="item 2: no volume"):
        parse_file("json", '[["IBM", 1, 5], {"symbol": "A", "price": 1}]', ATTRS, None, 10)
    with pytest.raises(ValueError, match="not JSON"):
        parse_file("json", "[{", ATTRS, None, 10)


def test_a_file_over_the_event_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="more than 3 events"):
        parse_file("csv", "IBM,1,1\n" * 4, ATTRS, None, 3)


def test_random_data_follows_ranges_and_lists() -> None:
    rows = random_rows(ATTRS, {"symbol": {"values": ["IBM", "WSO2"]}, "price": {"min": 10, "max": 20},
                               "volume": {"min": 1, "max": 3}}, seed=7)
    sample = [next(rows)["data"] for _ in range(200)]
    assert {s for s, _, _ in sample} == {"IBM", "WSO2"}
    assert all(10 <= p <= 20 for _, p, _ in sample) and {v for _, _, v in sample} == {1, 2, 3}
    ids = random_rows(ATTRS, {"symbol": {"pattern": "S-##?"}}, seed=1)
    assert all(re.fullmatch(r"S-\d\d[A-Z]", next(ids)["data"][0]) for _ in range(50))
    with pytest.raises(ValueError, match="a pattern makes strings; price is double"):
        next(random_rows(ATTRS, {"price": {"pattern": "##"}}))
    with pytest.raises(ValueError, match="min 5 is above max 1"):
        next(random_rows(ATTRS, {"price": {"min": 5, "max": 1}}))
    with pytest.raises(ValueError, match="volume value, volume \\(long\\): 'x' is not a long"):
        next(random_rows(ATTRS, {"volume": {"values": ["x"]}}))


def test_check_reports_problems_and_names() -> None:
    result = check("define stream S (a int, b string);\nfrom S select a, b insert into O;\n")
    assert result["problems"] == []
    assert result["names"]["streams"] == {"S": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}],
                                          "O": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}]}
    assert any(f["name"] == "str:concat" for f in result["extensions"]["functions"])
    assert any(w["name"] == "lengthBatch" for w in result["extensions"]["windows"])
    broken = check("define stream S (a int);\nfrom S select c insert into O;\n")
    assert broken["problems"] == [{"line": 2, "column": 15, "message": "stream 'S' has no attribute 'c' (valid: a)"}]


# ------------------------------------------------------------------ the sandbox
async def test_an_app_that_runs_out_of_memory_is_stopped_with_the_reason() -> None:
    notices: list[dict[str, Any]] = []
    sandbox = Sandbox(SandboxLimits(memory_mb=400), notices.append)
    await sandbox.start()
    try:
        await sandbox.request("run", text="define stream S (s string); define table T (s string);"
                                          "from S select str:repeat(s, 1000000) as s insert into T;",
                              limits={"memory_mb": 400})
        with pytest.raises(SandboxGone, match="ran out of its 400 MiB"):
            for _ in range(50):
                await sandbox.request("send", busy=True, stream="S", events=[["x"]] * 20)
    finally:
        await sandbox.stop()
    assert notices[-1]["event"] == "stopped"


async def test_a_request_to_a_child_that_just_died_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child can end between the liveness check of a request and its write: the request
    fails with the reason, not with the pipe's ConnectionResetError (which the playground's
    API answered with a 500).  The race is made certain by a liveness check that still says
    alive after the exit."""
    sandbox = Sandbox(SandboxLimits(), lambda _: None)
    await sandbox.start()
    try:
        await sandbox.request("run", text="define stream S (n long); from S select n insert into O;", limits={})
        assert sandbox._proc is not None
        sandbox._proc.kill()
        await sandbox._proc.wait()
        for _ in range(100):  # the reader sees the end of the output and says why
            if sandbox.gone_reason:
                break
            await asyncio.sleep(0.01)
        monkeypatch.setattr(Sandbox, "alive", property(lambda self: True))
        with pytest.raises(SandboxGone, match="signal 9"):
            await sandbox.request("send", busy=True, stream="S", events=[[1]] * 2000)
    finally:
        monkeypatch.undo()
        await sandbox.stop()


async def test_the_event_limit_per_run() -> None:
    sandbox = Sandbox(SandboxLimits(), lambda _: None)
    await sandbox.start()
    try:
        await sandbox.request("run", text="define stream S (n long); from S select n insert into O;",
                              limits={"max_events": 5})
        await sandbox.request("send", stream="S", events=[[1]] * 5)
        with pytest.raises(Exception, match="limit of 5 input events per run"):
            await sandbox.request("send", stream="S", events=[[1]])
    finally:
        await sandbox.stop()


# ------------------------------------------------------------------ the API
@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[tuple[aiohttp.ClientSession, str]]:
    playground = Playground(SandboxLimits(busy_seconds=5), examples=[])
    app = web.Application()
    playground.add_routes(app)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    base = f"http://127.0.0.1:{runner.addresses[0][1]}/playground/api/sessions/t1"
    async with aiohttp.ClientSession() as http:
        yield http, base
    await playground.close()
    await runner.cleanup()


async def _events(http: aiohttp.ClientSession, base: str, into: list[dict[str, Any]]) -> None:
    async with http.get(base + "/events") as r:
        kind = None
        async for raw in r.content:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind != "hello":
                into.append(orjson.loads(line[6:]))


async def test_a_simulation_pauses_resumes_and_finishes(api: tuple[aiohttp.ClientSession, str]) -> None:
    http, base = api
    seen: list[dict[str, Any]] = []
    listener = asyncio.create_task(_events(http, base, seen))
    try:
        async with http.post(base + "/run", json={"text": "define stream S (n long, ts long); "
                                                          "from S select n insert into O;"}) as r:
            assert r.status == 200, await r.text()
        content = "n,ts\n" + "".join(f"{i},{T0 + i * 100}\n" for i in range(20))
        async with http.post(base + "/simulations", json={"stream": "S", "kind": "csv", "content": content,
                                                           "timestamp_column": "ts", "speed": 2}) as r:
            sim = await r.json()
        assert sim["total"] == 20
        await asyncio.sleep(0.3)
        async with http.post(f"{base}/simulations/{sim['id']}/pause") as r:
            paused = await r.json()
        assert paused["state"] == "paused" and 0 < paused["sent"] < 20
        await asyncio.sleep(0.5)
        async with http.post(f"{base}/simulations/{sim['id']}/resume") as r:
            assert (await r.json())["sent"] == paused["sent"]  # nothing went while paused
        await wait_until(lambda: any(m.get("state") == "done" for m in seen), 10, what="the replay to finish")
        outputs = [e for m in seen if m.get("stream") == "O" for e in m["events"]]
        assert [e["data"][0] for e in outputs] == list(range(20))
        assert [e["timestamp"] for e in outputs] == [T0 + i * 100 for i in range(20)]  # event time kept
    finally:
        listener.cancel()


async def test_bad_requests_get_clear_errors(api: tuple[aiohttp.ClientSession, str]) -> None:
    http, base = api
    async with http.post(base + "/send", json={"stream": "S", "events": [[1]]}) as r:
        assert r.status == 409 and (await r.json())["error"] == "no app is running: press Run"
    async with http.post(base + "/run", json={"text": "define stream S (n long);\nfrom S select x insert into O;"}) as r:
        assert r.status == 400
        assert await r.json() == {"error": "stream 'S' has no attribute 'x' (valid: n)", "line": 2, "column": 15}
    async with http.post(base + "/run", data=b"{not json") as r:
        assert r.status == 400 and "not JSON" in (await r.json())["error"]
    async with http.post(base + "/run", json={"text": "define stream S (n long); from S select n insert into O;"}) as r:
        assert r.status == 200
    async with http.post(base + "/send", json={"stream": "S", "events": [[1, 2]]}) as r:
        assert (await r.json())["error"] == "event 1: S has 1 attributes, got 2 values"
    async with http.post(base + "/simulations", json={"stream": "Nope", "kind": "random"}) as r:
        assert r.status == 404 and "no stream named 'Nope'" in (await r.json())["error"]
    async with http.post(base + "/simulations", json={"stream": "S", "kind": "csv",
                                                       "content": "x" * (17 << 20)}) as r:
        assert r.status == 413
    async with http.put(base + "/breakpoints/nope/in") as r:
        assert r.status == 400 and "no query named 'nope'" in (await r.json())["error"]


# ------------------------------------------------------------------ in the service
APP = "@app:name('svc') define stream In (id string); from In select id insert into Out;"


def test_the_config_turns_the_playground_on(tmp_path: Path) -> None:
    path = tmp_path / "srota.yaml"
    path.write_text("http:\n  playground:\n    enabled: true\n")
    assert load_config(path).http.playground_enabled
    path.write_text("http:\n  playground:\n    enable: true\n")
    with pytest.raises(Exception, match="http.playground"):
        load_config(path)


async def test_the_service_serves_it_behind_the_token_with_a_sign_in_form(tmp_path: Path) -> None:
    jar = aiohttp.CookieJar(unsafe=True)  # keep cookies of an IP address (127.0.0.1), as a browser does
    async with running_host(config(tmp_path, http=True, token="s3cret", playground_enabled=True), APP) as host, \
            aiohttp.ClientSession(cookie_jar=jar) as http:
        base = f"http://127.0.0.1:{host.admin.port}"
        async with http.get(base + "/playground/", allow_redirects=False) as r:
            assert r.status == 302 and r.headers["Location"] == "/playground/login"
        async with http.post(base + "/playground/api/validate", json={"text": "define stream S (a int);"}) as r:
            assert r.status == 401
        async with http.post(base + "/playground/login", data={"token": "wrong"}, allow_redirects=False) as r:
            assert r.status == 401 and "Wrong token" in await r.text()
        async with http.post(base + "/playground/login", data={"token": "s3cret"}, allow_redirects=False) as r:
            assert r.status == 302
            cookie = r.cookies["srota_token"]
            assert cookie["httponly"] and cookie["samesite"] == "Strict"
        async with http.get(base + "/playground/") as r:  # the session's cookie now carries the token
            assert r.status == 200 and "static/app.js" in await r.text()
        async with http.post(base + "/playground/api/validate", json={"text": "define stream S (a int);"}) as r:
            assert r.status == 200 and (await r.json())["problems"] == []
        async with http.get(base + "/playground/api/info") as r:
            assert (await r.json())["attach"] is False  # a config built in code has no file to hand over
        async with http.get(base + "/apps", headers={"Authorization": "Bearer s3cret"}) as r:
            assert [a["name"] for a in await r.json()] == ["svc"]  # the service's apps are not the sandbox's


async def test_off_unless_configured(tmp_path: Path) -> None:
    async with running_host(config(tmp_path, http=True), APP) as host, aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{host.admin.port}/playground/") as r:
            assert r.status == 404


def test_srota_playground_prints_its_url(tmp_path: Path) -> None:
    app = Path(__file__).resolve().parents[2] / "examples" / "stock.siddhi"
    proc = subprocess.Popen([sys.executable, "-m", "srota.service.cli", "playground", str(app)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("srota playground: http://127.0.0.1:"), line + (proc.stderr.read() if proc.poll() else "")
        url = line.split()[2]
        import urllib.request

        with urllib.request.urlopen(url.replace("/playground/", "/playground/api/examples"), timeout=10) as r:  # noqa: S310
            examples = __import__("json").loads(r.read())
        assert examples[0] == {"name": "stock.siddhi", "title": examples[0]["title"], "initial": True}
    finally:
        proc.terminate()
        proc.wait(10)
    missing = subprocess.run([sys.executable, "-m", "srota.service.cli", "playground", str(tmp_path / "no.siddhi")],
                             capture_output=True, text=True, timeout=30)
    assert missing.returncode == 2 and "no.siddhi: No such file or directory" in missing.stderr


@pytest.mark.integration
async def test_an_app_may_attach_the_service_connectors(kafka_broker: Any, tmp_path: Path) -> None:
    """With ``attach``, the sandboxed app's @source/@sink connect through the service config's
    refs: records on the input topic come out on the page and on the output topic; without it
    the same app reaches nothing outside."""
    from tests.integration.support import TopicReader, produce

    kb = kafka_broker
    src, out = await kb.create_topic(), await kb.create_topic()
    config = tmp_path / "srota.yaml"
    config.write_text("refs:\n  bus:\n    type: kafka\n    properties:\n"
                      f"      bootstrap.servers: {kb.bootstrap_servers}\n")
    app_text = (f"@source(ref='bus', topic.list='{src}', group.id='pg-{src}', poll.timeout='100', "
                f"optional.configuration='{kb.fast_group}', @map(type='json'))\n"
                "define stream In (id string, n long);\n"
                f"@sink(ref='bus', topic='{out}', @map(type='json', event.grouping.enabled='false'))\n"
                "define stream Out (id string, twice long);\n"
                "from In select id, n * 2 as twice insert into Out;\n")
    playground = Playground(SandboxLimits(), examples=[], service_config=config)
    app = web.Application()
    playground.add_routes(app)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    api = f"http://127.0.0.1:{runner.addresses[0][1]}/playground/api"
    base = api + "/sessions/attached"
    seen: list[dict[str, Any]] = []
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(api + "/info") as r:
                assert (await r.json())["attach"] is True
            listener = asyncio.create_task(_events(http, base, seen))
            async with http.post(base + "/run", json={"text": app_text, "attach": True}) as r:
                assert r.status == 200, await r.text()
            await produce(kb.bootstrap_servers, src, [b'{"event": {"id": "a", "n": 21}}'])
            await wait_until(lambda: any(m.get("stream") == "Out" for m in seen), 30, what="the output on the page")
            assert [e["data"] for m in seen if m.get("stream") == "Out" for e in m["events"]] == [["a", 42]]
            async with TopicReader(kb.bootstrap_servers, out) as reader:
                records = await reader.until(lambda rs: len(rs) >= 1, 30, what="the output on the topic")
            assert records[0].json() == {"event": {"id": "a", "twice": 42}}

            # Not attached: the same app only runs; what arrives on the topic is not read.
            seen.clear()
            async with http.post(base + "/run", json={"text": app_text}) as r:
                assert r.status == 200
            await produce(kb.bootstrap_servers, src, [b'{"event": {"id": "b", "n": 1}}'])
            await asyncio.sleep(2)
            assert not any(m.get("stream") == "In" for m in seen)
            listener.cancel()
    finally:
        await playground.close()
        await runner.cleanup()


async def test_attach_needs_a_service_config(api: tuple[aiohttp.ClientSession, str]) -> None:
    http, base = api
    async with http.post(base + "/run", json={"text": "define stream S (n long);", "attach": True}) as r:
        assert r.status == 400 and "no service config to attach" in (await r.json())["error"]
