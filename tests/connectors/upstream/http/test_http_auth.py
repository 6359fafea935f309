"""Port of siddhi-io-http's ``HttpAuthTestCase`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/io/http/sink/HttpAuthTestCase.java``.
The app of ``HttpSinkTestCase`` with and without ``basic.auth.username``/``basic.auth.password``;
the test server keeps the body and headers.
"""
from __future__ import annotations

from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from tests.connectors.upstream.http.support import Server
from tests.connectors.upstream.http.test_http_sink import PAYLOAD, sent

#: ``Constants.BASIC_AUTH_HEADER_VALUE``: admin:admin.
ADMIN = "Basic YWRtaW46YWRtaW4="


def _app(url: str | None, auth: str = "", sink: str = "http", extra: str = "") -> str:
    where = f"publisher.url='{url}'," if url is not None else ""
    return ("Define stream FooStream (message String,method String,headers String);"
            f"@sink(type='{sink}',{where}method='{{{{method}}}}',headers='{{{{headers}}}}',{auth}"
            "@map(type='xml', @payload('{{message}}'))) "
            "Define stream BarStream (message String,method String,headers String);" + extra +
            "@info(name = 'query') from FooStream select message,method,headers insert into BarStream;")


async def test_testHTTPTextAuthFalse(run: Any) -> None:
    """No credentials: the payload arrives (without an Authorization header)."""
    async with Server() as server:
        r = await run(_app(server.url()))
        r.send("FooStream", (PAYLOAD, "POST", "'Name:John','Age:23','Country:USA'"))
        (request,) = await server.take(1)
    assert sent(request) == PAYLOAD
    assert "Authorization" not in request["headers"]


async def test_testHTTPTextMappingBasicAuthTrue(run: Any) -> None:
    """``admin``/``admin``: the payload arrives (with ``Authorization: Basic YWRtaW46YWRtaW4=``)."""
    async with Server() as server:
        r = await run(_app(server.url(), "basic.auth.username='admin',basic.auth.password='admin',"))
        r.send("FooStream", (PAYLOAD, "POST", "'Name:John','Age:23'"))
        (request,) = await server.take(1)
    assert sent(request) == PAYLOAD
    assert request["headers"]["Authorization"] == ADMIN


async def test_testHTTPTextMappingBasicAuthTrueIncorrectCredential(run: Any) -> None:
    """``basic.auth.password`` without ``basic.auth.username``: app creation fails (Java:
    ``SiddhiAppCreationException`` "Please provide user name and password")."""
    with pytest.raises(SiddhiAppCreationError, match="basic.auth.username and basic.auth.password"):
        await run(_app("http://localhost:8005/abc", "basic.auth.password='admin',"))


async def test_testHTTPWithoutURL(run: Any) -> None:
    """No ``publisher.url``: app creation fails (Java: ``SiddhiAppValidationException``)."""
    with pytest.raises(SiddhiAppCreationError, match="'publisher.url' is required"):
        await run(_app(None))


async def test_testHttpCallSinkBasicAuthTrue(run: Any) -> None:
    """An ``http-call`` sink with ``admin``/``admin`` (and an ``http-call-response`` source):
    the request carries ``Authorization: Basic YWRtaW46YWRtaW4=`` and the payload."""
    async with Server() as server:
        r = await run(_app(server.url(), "basic.auth.username='admin',basic.auth.password='admin',",
                           sink="http-call", extra="@source(type='http-call-response', sink.id='foo', "
                           "@map(type='text', regex.A='(.*)', @attributes(message='A')))"
                           "define stream ResponseStream(message string);").replace(
                               "type='http-call',", "type='http-call',sink.id='foo',"))
        r.send("FooStream", (PAYLOAD, "POST", "'Name:John','Age:23'"))
        (request,) = await server.take(1)
    assert request["headers"].get("Authorization") == ADMIN
    assert sent(request) == PAYLOAD
