"""The HTTP admin of a running service host: loopback by default, and on-demand queries that
change data only with the configured token (which reads then need as well)."""
from __future__ import annotations

import uuid
from typing import Any

import aiohttp
import pytest

from tests.integration.support import config, running_host

pytestmark = pytest.mark.integration

APP = """
@app:name('Admin')
@source(type='inMemory', topic='admin-{suffix}', @map(type='passThrough'))
define stream In (id string, n int);
@PrimaryKey('id')
define table T (id string, n int);
from In select id, n update or insert into T on T.id == id;
"""


async def _query(base: str, text: str, token: str | None = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with aiohttp.ClientSession() as s, \
            s.post(f"{base}/query", json={"app": "Admin", "query": text}, headers=headers) as r:
        return r.status, await r.json()


async def test_queries_that_change_data_need_the_token() -> None:
    token = f"tok-{uuid.uuid4().hex}"
    cfg = config(http=True, query_enabled=True, query_token=token)
    async with running_host(cfg, APP.format(suffix=uuid.uuid4().hex)) as host:
        assert host.admin.config.host == "127.0.0.1"
        base = f"http://127.0.0.1:{host.admin.port}"
        # With a token configured, reads need it too (issue 13); changes need the query token.
        assert (await _query(base, "from T select id, n"))[0] == 401
        assert await _query(base, "from T select id, n", token) == (200, {"events": []})
        insert = "select 'a' as id, 1 as n insert into T"
        assert (await _query(base, insert))[0] == 401
        assert (await _query(base, insert, "wrong"))[0] == 401
        assert (await _query(base, insert, token))[0] == 200
        status, body = await _query(base, "from T select id, n", token)
        assert status == 200 and [e["data"] for e in body["events"]] == [["a", 1]]
        assert (await _query(base, "delete T on T.id == 'a'"))[0] == 401
        assert (await _query(base, "delete T on T.id == 'a'", token))[0] == 200
        assert (await _query(base, "from T select id, n", token))[1] == {"events": []}


async def test_without_a_configured_token_no_query_may_change_data() -> None:
    async with running_host(config(http=True, query_enabled=True), APP.format(suffix=uuid.uuid4().hex)) as host:
        base = f"http://127.0.0.1:{host.admin.port}"
        assert (await _query(base, "select 'a' as id, 1 as n insert into T", ""))[0] == 401
        assert (await _query(base, "from T select id, n"))[0] == 200


async def test_queries_are_off_by_default() -> None:
    async with running_host(config(http=True), APP.format(suffix=uuid.uuid4().hex)) as host:
        assert (await _query(f"http://127.0.0.1:{host.admin.port}", "from T select id, n"))[0] == 403
