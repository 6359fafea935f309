"""The service's error store end to end: events that fail in a query, payloads that do not
map and outputs a sink cannot publish are kept; ``/errors`` and ``srota errors`` list, show,
replay (through the normal path) and purge them."""
from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import aiohttp
import orjson
import pytest
from srota.connectors._inmemory import broker
from srota.service.config import HttpConfig, ServiceConfig
from srota.service.host import ServiceHost

from tests.integration.support import gate, wait_until

APP = """
@app:name('Shares')
@source(type='inMemory', topic='{p}-in', @map(type='json'))
@OnError(action='STORE')
define stream Orders (id string, qty int);
@source(type='inMemory', topic='{p}-lots', @map(type='json'))
define stream Lots (size int);
@sink(type='testGated', gate='{p}', on.error='STORE', @map(type='passThrough'))
define stream Out (id string, lots int);
@PrimaryKey('k')
define table LotSize (k int, size int);
-- (Siddhi's qty / 0 is null, not an error: the failing division is a Python function's)
define function div[python] return int {{ int(data[0] / data[1]) }};
from Lots select 1 as k, size update or insert into LotSize on LotSize.k == k;
from Orders join LotSize select id, div(qty, size) as lots insert into Out;
"""


async def _start(tmp_path: Path, p: str, database: str | None = None) -> ServiceHost:
    config = ServiceConfig(http=HttpConfig(port=0), errors_database=database or str(tmp_path / "errors.db"))
    host = ServiceHost(config, app_texts=[APP.format(p=p)])
    await host.start()
    await wait_until(host.is_ready, 10, what="the host")
    return host


@pytest.mark.parametrize("where", ["sqlite", "postgresql"])
async def test_store_list_show_replay_and_purge(tmp_path: Path, where: str, request: pytest.FixtureRequest) -> None:
    """The same with the store in SQLite and in PostgreSQL (``errors.database`` a URL)."""
    p = f"errs-{where}"
    g = gate(p)
    g.open.set()
    host = await _start(tmp_path, p, request.getfixturevalue("pg_url") if where == "postgresql" else None)
    base = f"http://127.0.0.1:{host.admin.port}"
    try:
        async with aiohttp.ClientSession() as http:
            await broker.publish(f"{p}-lots", b'{"event": {"size": 0}}')
            await asyncio.sleep(0.2)
            await broker.publish(f"{p}-in", b'{"event": {"id": "o1", "qty": 10}}')  # 10 / 0: fails in the query
            await broker.publish(f"{p}-in", b'{"event": {"id": "o2", "qty": ')  # does not map
            await wait_until(lambda: host.error_store.count(app="Shares") == 2, 10, what="two stored errors")
            async with http.get(base + "/errors?app=Shares") as r:
                listed = await r.json()
            assert listed["count"] == 2
            # a chunk's payloads that did not map are routed before its events are processed
            failed, unmapped = sorted(listed["entries"], key=lambda e: e["kind"], reverse=True)
            assert (failed["kind"], failed["stream"], failed["events"]) == ("STREAM", "Orders", 1)
            assert failed["cause"] == "ZeroDivisionError: division by zero"
            assert (unmapped["kind"], unmapped["payload_bytes"]) == ("MAPPING", 30)
            async with http.get(f"{base}/errors/{unmapped['id']}") as r:
                assert (await r.json())["payload"] == '{"event": {"id": "o2", "qty": '

            # The cause is fixed (a lot size), then the failed event is replayed: it goes
            # through the query and out, and its entry is gone.
            await broker.publish(f"{p}-lots", b'{"event": {"size": 5}}')
            await asyncio.sleep(0.2)
            async with http.post(f"{base}/errors/{failed['id']}/replay") as r:
                assert r.status == 200 and (await r.json())["events"] == 1
            await wait_until(lambda: ("o1", 2) in g.published, 10, what="the replayed event's output")
            assert host.error_store.get(failed["id"]) is None

            # A payload that still does not map stays.
            async with http.post(f"{base}/errors/{unmapped['id']}/replay") as r:
                assert r.status == 409 and "still does not map" in (await r.json())["error"]

            # The sink fails: its outputs are stored, then replayed once it is back.
            g.failing = "broker down"
            await broker.publish(f"{p}-lots", b'{"event": {"size": -1}}')
            await asyncio.sleep(0.2)
            await broker.publish(f"{p}-in", b'{"event": {"id": "o3", "qty": 20}}')
            await wait_until(lambda: host.error_store.count(stream="Out") == 1, 10, what="the sink's failure stored")
            sink_error = host.error_store.entries(stream="Out")[0]
            assert sink_error.kind == "SINK" and sink_error.cause.startswith("ConnectionUnavailableError")
            assert [tuple(e["data"]) for e in sink_error.events] == [("o3", -20)]
            g.failing = None
            async with http.post(f"{base}/errors/{sink_error.id}/replay") as r:
                assert r.status == 200
            await wait_until(lambda: ("o3", -20) in g.published, 10, what="the replayed output")

            async with http.delete(base + "/errors") as r:
                assert r.status == 400  # purge says which
            left = host.error_store.count(app="Shares")
            assert left == 1  # the payload that does not map
            async with http.delete(base + "/errors?app=Shares") as r:
                assert (await r.json())["purged"] == left
            assert host.error_store.count(app="Shares") == 0
            text = host.metrics.render().decode()
            assert 'srota_errors_stored_total{app="Shares",kind="SINK",stream="Out"} 1.0' in text
    finally:
        await host.stop()


async def test_srota_errors_cli(tmp_path: Path) -> None:
    p = "errcli"
    gate(p).open.set()
    host = await _start(tmp_path, p)
    config = tmp_path / "srota.yaml"
    config.write_text(f"http:\n  port: {host.admin.port}\nerrors:\n  database: {tmp_path / 'errors.db'}\n")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "srota.service.cli", "errors", *args, "--config", str(config)],
                              capture_output=True, text=True, timeout=60)

    try:
        await broker.publish(f"{p}-in", b"not json at all")
        await wait_until(lambda: host.error_store.count() == 1, 10, what="a stored error")
        ident = host.error_store.entries()[0].id
        listed = await asyncio.to_thread(cli, "list")
        assert listed.returncode == 0, listed.stderr
        assert f"{ident}  Shares/Orders  MAPPING  payload of 15 bytes:" in listed.stdout
        assert listed.stdout.strip().endswith("1 error(s)")
        shown = await asyncio.to_thread(cli, "show", str(ident))
        assert orjson.loads(shown.stdout)["payload"] == "not json at all"
        replayed = await asyncio.to_thread(cli, "replay", str(ident))
        assert replayed.returncode == 1 and "still does not map" in replayed.stderr
        assert (await asyncio.to_thread(cli, "purge")).returncode == 2  # needs --app or --all
        purged = await asyncio.to_thread(cli, "purge", "--all")
        assert purged.stdout.strip() == "purged 1 error(s)"
    finally:
        await host.stop()


async def test_a_replay_that_meets_a_database_outage_stops_the_app_and_keeps_the_entry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store that stays unreachable while a replayed event is processed stops the app, as it
    does for a source's chunk, and the API answers 503 with the reason (not a dropped
    connection); the entry stays, and a replay into the stopped app is refused."""
    from srota.engine.stores.database import StoreUnavailableError

    p = "errs-outage"
    gate(p).open.set()
    host = await _start(tmp_path, p)
    base = f"http://127.0.0.1:{host.admin.port}"
    try:
        await broker.publish(f"{p}-lots", b'{"event": {"size": 0}}')
        await asyncio.sleep(0.2)
        await broker.publish(f"{p}-in", b'{"event": {"id": "o1", "qty": 10}}')  # 10 / 0: fails in the query
        await wait_until(lambda: host.error_store.count(app="Shares") == 1, 10, what="the stored error")
        failed = host.error_store.entries(app="Shares")[0]
        app = host.apps["Shares"]

        class _Unreachable:
            def send_events(self, events: list) -> None:
                raise StoreUnavailableError("table 'LotSize': the database stayed unreachable for 30 s")

        monkeypatch.setattr(app.runtime, "get_input_handler", lambda stream: _Unreachable())
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{base}/errors/{failed.id}/replay") as r:
                assert r.status == 503
                assert "stayed unreachable" in (await r.json())["error"]
            assert host.error_store.get(failed.id) is not None
            assert app.failed and "stayed unreachable" in app.failed
            async with http.post(f"{base}/errors/{failed.id}/replay") as r:
                assert r.status == 409 and "takes no events now" in (await r.json())["error"]
            async with http.get(f"{base}/health") as r:
                assert r.status == 200
    finally:
        await host.stop()
