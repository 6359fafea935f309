"""Port of siddhi-io-http's ``HttpSinkMappingTestCase`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/io/http/sink/HttpSinkMappingTestCase.java``.
An ``http`` sink with an xml, json or text mapper (custom ``@payload`` or the default
format); the test server's body is compared (without the ``\\n`` Java's line reader adds).
"""
from __future__ import annotations

from typing import Any

from tests.connectors.upstream.http.support import Server
from tests.connectors.upstream.http.test_http_sink import PAYLOAD

TEMPLATED = "method='{{method}}',headers='{{headers}}',"


def _app(url: str, options: str, mapping: str,
         attributes: str = "message String,method String,headers String", select: str = "message,method,headers") -> str:
    return (f"Define stream FooStream ({attributes});"
            f"@sink(type='http',publisher.url='{url}',{options}@map({mapping})) "
            f"Define stream BarStream ({attributes});"
            f"@info(name = 'query') from FooStream select {select} insert into BarStream;")


async def _body(run: Any, options: str, mapping: str, row: tuple[Any, ...], **app: str) -> str:
    async with Server() as server:
        r = await run(_app(server.url(), options, mapping, **app))
        r.send("FooStream", row)
        (request,) = await server.take(1)
    return str(request["body"])


async def test_testHTTPTextMappingXML(run: Any) -> None:
    """xml ``@payload('{{message}}')``: the XML as sent."""
    assert await _body(run, TEMPLATED, "type='xml', @payload('{{message}}')",
                       (PAYLOAD, "POST", "'Name:John','Age:23'")) == PAYLOAD


async def test_testHTTPTextMappingJson(run: Any) -> None:
    """json ``@payload('{{message}}')``: the JSON as sent."""
    message = '{"event":{"symbol":"WSO2","price":55.6,"volume":100}}'
    assert await _body(run, TEMPLATED, "type='json', @payload('{{message}}')",
                       (message, "POST", "Name:John,Age:23")) == message


async def test_testHTTPTextMappingText(run: Any) -> None:
    """text ``@payload('{{message}}')``: ``WSO2,55.6,100``."""
    assert await _body(run, TEMPLATED, "type='text', @payload('{{message}}')",
                       ("WSO2,55.6,100", "POST", "'Name:John','Age:23'")) == "WSO2,55.6,100"


async def test_testHTTPTextMappingText2(run: Any) -> None:
    """Default text format of ``(name, age int, country, method, headers)``; Java sends the
    ``double`` 55.6 into the ``int`` attribute and expects ``age:55.6``; the port sends 55
    (Srota's input handler does not take a double for an int) and expects ``age:55``."""
    body = await _body(run, TEMPLATED, "type='text'", ("WSO2", 55, "USA", "POST", "'Name:John','Age:23'"),
                       attributes="name String, age int,country String,method String,headers String", select="*")
    assert body == ('name:"WSO2",\nage:55,\ncountry:"USA",\nmethod:"POST",\n'
                    "headers:\"'Name:John','Age:23'\"")


async def test_testHTTPTextMappingText3(run: Any) -> None:
    """No ``method`` or ``headers`` (POST by default): ``WSO2,55.6,100``."""
    assert await _body(run, "", "type='text', @payload('{{message}}')",
                       ("WSO2,55.6,100", "POST", "'Name:John','Age:23'")) == "WSO2,55.6,100"


async def test_testHTTPTextMappingText4(run: Any) -> None:
    """Static ``method='POST'`` and ``headers``, default text format of the three strings."""
    body = await _body(run, "method='POST',headers=\"'Name:John','Age:23'\",", "type='text'",
                       ("WSO2,55.6,100", "POST", "'Name:John','Age:23'"))
    assert body == "message:\"WSO2,55.6,100\",\nmethod:\"POST\",\nheaders:\"'Name:John','Age:23'\""
