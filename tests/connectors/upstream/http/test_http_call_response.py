"""Port of siddhi-io-http's ``HttpCallResponseTestCase`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/io/http/sink/HttpCallResponseTestCase.java``.
An ``http-call`` sink calls a test server and ``http-call-response`` sources of the same
``sink.id`` map the responses (see :mod:`tests.connectors.upstream.http.call_response`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.connectors.upstream.http import call_response as c

SINK, SOURCE = "http-call", "http-call-response"


async def test_testHTTPRequestResponse1(run: Any) -> None:
    """A JSON payload posted to the echoing server: one response, ``("wso2", 1234)``."""
    await c.response1(run, SINK, SOURCE)


async def test_testHTTPRequestResponse2(run: Any) -> None:
    """The response maps ``name``, ``id`` from the body and ``trp:headers``, ``trp:volume``,
    ``trp:price`` from the request event."""
    await c.response2(run, SINK, SOURCE)


async def test_testHTTPRequestResponse3(run: Any, tmp_path: Path) -> None:
    """``downloading.enabled``: the response is saved to ``download.path``; the 2xx source gets its name."""
    await c.response3(run, SINK, SOURCE, tmp_path)


async def test_testHTTPRequestResponse4(run: Any, tmp_path: Path) -> None:
    """``downloading.enabled`` and a 400: nothing saved; the 4xx source gets the error."""
    await c.response4(run, SINK, SOURCE, tmp_path)


async def test_testHTTPRequestResponse5(run: Any) -> None:
    """Nothing listens at ``publisher.url``: no response event."""
    await c.response5(run, SINK, SOURCE)


async def test_testHTTPRequestResponse6(run: Any) -> None:
    """``on.error='wait'``, the server starts after the send: the response arrives."""
    await c.response6(run, SINK, SOURCE)
