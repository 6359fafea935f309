"""The admin server's on-demand queries: off by default, reads open, changes need the token."""
from __future__ import annotations

import aiohttp
import pytest
from srota.service.config import HttpConfig, ServiceConfig
from srota.service.host import ServiceHost

APP = """
@app:name('Stock')
define stream StockStream (symbol string, price double);
@PrimaryKey('symbol')
define table StockTable (symbol string, price double);
from StockStream insert into StockTable;
"""


async def _start(http: HttpConfig) -> ServiceHost:
    host = ServiceHost(ServiceConfig(http=http), app_texts=[APP])
    await host.start()
    return host


async def _post(host: ServiceHost, query: str, token: str | None = None) -> tuple[int, dict]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as s, s.post(
            f"http://127.0.0.1:{host.admin.port}/query", json={"app": "Stock", "query": query},
            headers=headers) as r:
        return r.status, await r.json()


async def test_queries_are_off_unless_enabled():
    host = await _start(HttpConfig(port=0))
    try:
        status, body = await _post(host, "from StockTable select *")
        assert status == 403 and "disabled" in body["error"]
    finally:
        await host.stop()


async def test_reads_are_open_without_tokens():
    host = await _start(HttpConfig(port=0, query_enabled=True))
    try:
        host.runtimes["Stock"].get_input_handler("StockStream").send(["IBM", 75.5])
        status, body = await _post(host, "from StockTable select symbol, price")
        assert status == 200 and body["events"][0]["data"] == ["IBM", 75.5]
        insert = "select 'WSO2' as symbol, 55.0 as price insert into StockTable"
        assert (await _post(host, insert))[0] == 401  # changes need a configured query token
    finally:
        await host.stop()


async def test_with_a_token_configured_reads_need_it_too_and_changes_need_the_query_token():
    host = await _start(HttpConfig(port=0, query_enabled=True, query_token="s3cret"))
    try:
        host.runtimes["Stock"].get_input_handler("StockStream").send(["IBM", 75.5])
        assert (await _post(host, "from StockTable select symbol, price"))[0] == 401
        status, body = await _post(host, "from StockTable select symbol, price", token="s3cret")
        assert status == 200 and body["events"][0]["data"] == ["IBM", 75.5]

        insert = "select 'WSO2' as symbol, 55.0 as price insert into StockTable"
        assert (await _post(host, insert))[0] == 401
        assert (await _post(host, insert, token="wrong"))[0] == 401
        assert (await _post(host, insert, token="s3cret"))[0] == 200
        status, body = await _post(host, "from StockTable on symbol == 'WSO2' select price", token="s3cret")
        assert body["events"][0]["data"] == [55.0]

        status, body = await _post(host, "from Nope select *", token="s3cret")
        assert status == 400 and body["line"] == 1
    finally:
        await host.stop()


@pytest.mark.parametrize("token", [None, ""])
async def test_without_a_configured_token_changes_are_refused(token):
    host = await _start(HttpConfig(port=0, query_enabled=True, query_token=token))
    try:
        status, _ = await _post(host, "delete StockTable on StockTable.symbol == 'IBM'", token="anything")
        assert status == 401
    finally:
        await host.stop()


async def test_a_read_token_opens_reads_but_not_changes():
    host = await _start(HttpConfig(port=0, token="r34d", query_enabled=True, query_token="wr1te"))
    try:
        async with aiohttp.ClientSession() as s:
            base = f"http://127.0.0.1:{host.admin.port}"
            for path, status in (("/health", 200), ("/ready", 200), ("/apps", 401), ("/metrics", 401)):
                async with s.get(base + path) as r:
                    assert r.status == status, path
            for token in ("r34d", "wr1te"):
                async with s.get(base + "/version", headers={"Authorization": f"Bearer {token}"}) as r:
                    assert r.status == 200 and (await r.json())["version"]
        assert (await _post(host, "from StockTable select *", token="r34d"))[0] == 200
        insert = "select 'WSO2' as symbol, 55.0 as price insert into StockTable"
        assert (await _post(host, insert, token="r34d"))[0] == 401
        assert (await _post(host, insert, token="wr1te"))[0] == 200
    finally:
        await host.stop()


async def test_the_port_chosen_by_the_system_is_known():
    host = await _start(HttpConfig(port=0))
    try:
        assert host.admin.port and host.admin.port != 0
        assert host.admin.url == f"http://127.0.0.1:{host.admin.port}"
    finally:
        await host.stop()
