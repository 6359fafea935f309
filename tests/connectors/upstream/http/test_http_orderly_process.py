"""Port of siddhi-io-http's ``HttpOrderlyProcessTestCase`` (its one ``@Test``).

Upstream: ``component/src/test/java/io/siddhi/extension/io/http/source/HttpOrderlyProcessTestCase.java``.
An ``xml`` source with ``worker.count='1'`` (and Carbon's bootstrap group sizes, left out:
Srota has one event loop and keeps a source's requests in order of arrival); five posts
one after the other arrive in order.
"""
from __future__ import annotations

from typing import Any

from tests.conftest import free_port
from tests.connectors.upstream.http.support import names, post, ready, until, xml_event


async def test_testCustomPoolConfig(run: Any) -> None:
    """A, B, C, D, A posted in turn: received A, B, C, D, A."""
    port = free_port()
    r = await run(f"@source(type='http', @map(type='xml'), receiver.url='http://localhost:{port}/endpoints/RecPro', "
                  "basic.auth.enabled='false')"
                  "define stream inputStream (name string, age int, country string);"
                  "@info(name = 'query') from inputStream select * insert into outputStream;")
    got = r.watch("outputStream")
    await ready(r, "inputStream")
    for name in "ABCDA":
        assert (await post(f"http://127.0.0.1:{port}/endpoints/RecPro", xml_event(name, 100, "USA")))[0] == 200
    await until(lambda: len(names(got)) >= 5)
    assert names(got) == ["A", "B", "C", "D", "A"]
