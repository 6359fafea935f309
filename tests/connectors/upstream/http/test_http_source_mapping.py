"""Port of siddhi-io-http's ``HttpSourceMappingTestCase`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/io/http/source/HttpSourceMappingTestCase.java``.
Each Java test runs an ``http`` source with one mapper (xml, text, json) into ``inputStream``,
posts two payloads and checks the names the query callback received.  The ports run the app
on a service host with a free port and also check that each post was answered ``200``.
"""
from __future__ import annotations

from typing import Any

from tests.conftest import free_port
from tests.connectors.upstream.http.support import names, post, ready, until, xml_event

QUERY = "@info(name = 'query') from inputStream select * insert into outputStream;"


async def _receive(run: Any, mapping: str, *bodies: str) -> list[Any]:
    port = free_port()
    r = await run(f"@source(type='http', {mapping}, receiver.url='http://localhost:{port}/endpoints/RecPro', "
                  "basic.auth.enabled='false')"
                  "define stream inputStream (name string, age int, country string);" + QUERY)
    got = r.watch("outputStream")
    await ready(r, "inputStream")
    for body in bodies:
        assert (await post(f"http://127.0.0.1:{port}/endpoints/RecPro", body))[0] == 200
    await until(lambda: len(names(got)) >= len(bodies))
    return names(got)


async def test_testXmlMapping(run: Any) -> None:
    """Two ``<events><event>`` payloads: John, Mike."""
    assert await _receive(run, "@map(type='xml')", xml_event("John", 100, "AUS"),
                          xml_event("Mike", 20, "USA")) == ["John", "Mike"]


async def test_testTextMappingSingle(run: Any) -> None:
    """``name:'John',\\nage:100,\\ncountry:'USA'`` with the default text mapping: John, Mike."""
    assert await _receive(run, "@map(type='text')", "name:'John',\nage:100,\ncountry:'USA'",
                          "name:'Mike',\nage:100,\ncountry:'USA'") == ["John", "Mike"]


async def test_testTextMapping(run: Any) -> None:
    """Double-quoted strings, ``fail.on.missing.attribute='false'``: John, Mike."""
    assert await _receive(run, "@map(type='text',fail.on.missing.attribute='false')",
                          'name:"John",\nage:100,\ncountry:"USA"',
                          'name:"Mike",\nage:100,\ncountry:"USA"') == ["John", "Mike"]


async def test_testJsonMapping(run: Any) -> None:
    """Two ``{"event": {...}}`` payloads (with leading blanks and newlines): John, Mike."""
    body = ' {\n      "event":{\n         "name":"%s",\n         "age":55,\n         "country":"US"\n      }\n }'
    assert await _receive(run, "@map(type='json')", body % "John", body % "Mike") == ["John", "Mike"]
