"""Ports of siddhi-io-http's ``HttpSyncRequestResponseTestCase`` and ``HttpSyncServiceResponseTestCase``
(one ``@Test`` each, both called ``testHTTPTextMappingXML``).

Upstream: ``component/src/test/java/io/siddhi/extension/io/http/source/HttpSyncRequestResponseTestCase.java``
and ``.../HttpSyncServiceResponseTestCase.java``.  An ``xml`` request source with
``source.id='testsource'`` takes ``trp:messageId`` into ``messageId``; the query passes
``messageId, param1`` to a response sink of the same ``source.id`` with
``message.id='{{messageId}}'`` and a custom ``@payload``; the client's request is answered
with ``<event><param1>param1</param1></event>``.  The first test uses the deprecated names
``http-request``/``http-response``, the second ``http-service``/``http-service-response``.
"""
from __future__ import annotations

from typing import Any

from tests.conftest import free_port
from tests.connectors.upstream.http.support import post, ready

REQUEST = "<event>\n  <param1>param1</param1>\n  <param2>param2</param2>\n</event>"


async def _exchange(run: Any, source: str, sink: str) -> tuple[int, str]:
    port = free_port()
    r = await run(f"@Source(type = '{source}', source.id='testsource', basic.auth.enabled='false',"
                  f"receiver.url='http://localhost:{port}/TestHTTPRequestResponse/InputStream', @map"
                  "(type='xml', @attributes(messageId='trp:messageId',param1='/event/param1',"
                  "param2='/event/param2')))\n"
                  "define stream InputStream (messageId string, param1 string, param2 string);\n"
                  f"@sink(type='{sink}', source.id='testsource', message.id='{{{{messageId}}}}', @map(type='xml', "
                  "@payload('<event><param1>{{param1}}</param1></event>')))\n"
                  "define stream OutputStream (messageId string, param1 string);\n"
                  "from InputStream\nselect messageId, param1\ninsert into OutputStream;")
    await ready(r, "InputStream")
    return await post(f"http://127.0.0.1:{port}/TestHTTPRequestResponse/InputStream", REQUEST,
                      headers={"Content-Type": "application/xml"})


async def test_HttpSyncRequestResponseTestCase_testHTTPTextMappingXML(run: Any) -> None:
    """``http-request`` + ``http-response`` (Siddhi's deprecated names): the response body is
    ``<event><param1>param1</param1></event>``."""
    assert await _exchange(run, "http-request", "http-response") == (200, "<event><param1>param1</param1></event>")


async def test_HttpSyncServiceResponseTestCase_testHTTPTextMappingXML(run: Any) -> None:
    """``http-service`` + ``http-service-response``: the response body is
    ``<event><param1>param1</param1></event>``."""
    assert await _exchange(run, "http-service", "http-service-response") == (
        200, "<event><param1>param1</param1></event>")
