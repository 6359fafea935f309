"""Port of siddhi-io-http's ``HttpSinkTestCase`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/io/http/sink/HttpSinkTestCase.java``.
``FooStream (message, method, headers)`` goes to an ``http`` sink with ``method='{{method}}'``,
``headers='{{headers}}'`` and an ``xml`` ``@payload('{{message}}')``; a test HTTP server
(``HttpServerListenerHandler``, here :class:`Server` on a free port) keeps the request's body
and headers.  Java's server reads the body line by line adding ``\\n``: the ports compare the
body itself.  A ``@payload`` that is one placeholder writes its value as it is, as Siddhi's
(docs/mappers.md), so the XML held in ``message`` is the body.
"""
from __future__ import annotations

import asyncio
from typing import Any

from structlog.testing import capture_logs

from tests.conftest import free_port
from tests.connectors.upstream.http.support import Server

PAYLOAD = "<events><event><symbol>WSO2</symbol><price>55.645</price><volume>100</volume></event></events>"


def sent(request: dict[str, Any]) -> str:
    """The body of a request (the ``message`` the app sent)."""
    return str(request["body"])


def sink_app(url: str) -> str:
    return ("Define stream FooStream (message String,method String,headers String);"
            f"@sink(type='http',publisher.url='{url}',method='{{{{method}}}}',headers='{{{{headers}}}}',"
            "@map(type='xml', @payload('{{message}}'))) "
            "Define stream BarStream (message String,method String,headers String);"
            "@info(name = 'query') from FooStream select message,method,headers insert into BarStream;")


async def test_testHTTPContentTypeNotIncluded(run: Any) -> None:
    """No Content-Type among the headers: the xml mapper's ``application/xml`` is sent, with
    ``Name: John`` and ``Age: 23``."""
    async with Server() as server:
        r = await run(sink_app(server.url()))
        r.send("FooStream", (PAYLOAD, "POST", "'Name:John','Age:23'"))
        (request,) = await server.take(1)
    assert sent(request) == PAYLOAD
    assert request["headers"]["Name"] == "John" and request["headers"]["Age"] == "23"
    assert request["headers"]["Content-Type"] == "application/xml"


async def test_testHTTPContentTypeAtHeaders(run: Any) -> None:
    """``'Content-Type:text'`` among the headers is sent as given."""
    async with Server() as server:
        r = await run(sink_app(server.url()))
        r.send("FooStream", (PAYLOAD, "POST", "'Name:John','Age:23','Content-Type:text'"))
        (request,) = await server.take(1)
    assert sent(request) == PAYLOAD
    assert request["headers"]["Name"] == "John" and request["headers"]["Age"] == "23"
    assert request["headers"]["Content-Type"] == "text"


async def test_testHTTPConnectionFailure(run: Any) -> None:
    """Nothing listens at ``publisher.url``: the app keeps running, the event is not
    delivered and the failure is logged for ``BarStream`` (Siddhi logs "Dropping event at
    Sink 'http' at 'BarStream' as its still trying to reconnect!")."""
    url = f"http://127.0.0.1:{free_port()}/abcd"
    r = await run(sink_app(url))
    with capture_logs() as logs:
        r.send("FooStream", (PAYLOAD, "POST", "'Name:John','Age:23'"))
        await asyncio.sleep(1.0)
    failed = [e for e in logs if e.get("log_level") in ("warning", "error") and "cannot reach" in str(e)]
    assert failed, logs
    assert any(e.get("stream") == "BarStream" for e in failed), failed
    assert r.host.apps[r.app].started
