"""Port of siddhi-io-http's ``HttpSinkMethodTypeTestCase`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/io/http/sink/HttpSinkMethodTypeTestCase.java``.
The app of ``HttpSinkTestCase`` (``method='{{method}}'``); one event per test with GET, PUT,
DELETE or POST: a GET carries no body, the others the payload.
"""
from __future__ import annotations

from typing import Any

from tests.connectors.upstream.http.support import Server
from tests.connectors.upstream.http.test_http_sink import PAYLOAD, sent, sink_app


async def _send(run: Any, method: str, headers: str) -> dict[str, Any]:
    async with Server() as server:
        r = await run(sink_app(server.url()))
        r.send("FooStream", (PAYLOAD, method, headers))
        (request,) = await server.take(1)
    assert request["method"] == method
    return request


async def test_testHTTPTestGetMethod(run: Any) -> None:
    """GET: the server reads an empty body."""
    assert (await _send(run, "GET", "Name:John,Age:23"))["body"] == ""


async def test_testHTTPTestPutMethod(run: Any) -> None:
    """PUT: the payload."""
    assert sent(await _send(run, "PUT", "Name:John,Age:23")) == PAYLOAD


async def test_testHTTPTestDeleteMethod(run: Any) -> None:
    """DELETE: the payload."""
    assert sent(await _send(run, "DELETE", "'Name:John','Age:23'")) == PAYLOAD


async def test_testHTTPTestPOSTMethod(run: Any) -> None:
    """POST: the payload."""
    assert sent(await _send(run, "POST", "Name:John,Age:23")) == PAYLOAD
