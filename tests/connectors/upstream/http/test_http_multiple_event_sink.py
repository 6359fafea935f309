"""Port of siddhi-io-http's ``HttpMultipleEventSinkTestCase`` (its one ``@Test``).

Upstream: ``component/src/test/java/io/siddhi/extension/io/http/sink/HttpMultipleEventSinkTestCase.java``.
Two streams of one app, each with an xml ``http`` sink to the same URL; one event into each:
the test server receives both payloads (Java reads them from the server's log).
"""
from __future__ import annotations

from typing import Any

from tests.connectors.upstream.http.support import Server
from tests.connectors.upstream.http.test_http_sink import sent

EVENT1 = "<events><event><symbol>WSO2</symbol><price>55.645</price><volume>100</volume></event></events>"
EVENT2 = "<events><event><symbol>IFS</symbol><price>55.645</price><volume>100</volume></event></events>"


async def test_testHTTPMultipleEvents(run: Any) -> None:
    """Both payloads arrive."""
    async with Server() as server:
        defs = "".join(
            f"Define stream FooStream{k} (message String,method String,headers String);"
            f"@sink(type='http',publisher.url='{server.url()}',method='{{{{method}}}}',headers='{{{{headers}}}}',"
            "@map(type='xml', @payload('{{message}}'))) "
            f"Define stream BarStream{k} (message String,method String,headers String);" for k in "AB")
        queries = "".join(f"@info(name = 'query{k}') from FooStream{k} select message,method,headers "
                          f"insert into BarStream{k};" for k in "AB")
        r = await run(defs + queries)
        r.send("FooStreamA", (EVENT1, "POST", "'Name:John','Age:23'"))
        r.send("FooStreamB", (EVENT2, "POST", "'Name:John','Age:23'"))
        await server.take(2)
    assert sorted(sent(request) for request in server.requests) == sorted([EVENT1, EVENT2])
