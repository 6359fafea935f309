"""Port of siddhi-io-http's ``HttpMultipleFormatSourcesTestCase`` (its one ``@Test``).

Upstream: ``component/src/test/java/io/siddhi/extension/io/http/source/HttpMultipleFormatSourcesTestCase.java``.
Four ``xml`` ``http`` sources in one app: three paths on one port, one on another port (the
first with Carbon's ``server.bootstrap.boss.group.size``/``worker.group.size``, which Srota
has no use for and which are left out); two posts to each reach its own stream only.
"""
from __future__ import annotations

from typing import Any

from tests.conftest import free_port
from tests.connectors.upstream.http.support import names, post, ready, until, xml_event


async def test_testHTTPInputTransportDifferentFormat(run: Any) -> None:
    """A, B, D share a port (paths RecPro, RecPro1, RecPro2), C has its own; each stream gets
    its two names."""
    port, port_c = free_port(), free_port()
    urls = {"A": f"http://localhost:{port}/endpoints/RecPro", "B": f"http://localhost:{port}/endpoints/RecPro1",
            "C": f"http://localhost:{port_c}/endpoints/RecPro", "D": f"http://localhost:{port}/endpoints/RecPro2"}
    app = "".join(f"@source(type='http', @map(type='xml'), receiver.url='{url}', basic.auth.enabled='false')"
                  f"define stream inputStream{k} (name string, age int, country string);"
                  for k, url in urls.items())
    app += "".join(f"@info(name = 'query{k}') from inputStream{k} select * insert into outputStream{k};"
                   for k in urls)
    r = await run(app)
    got = {k: r.watch(f"outputStream{k}") for k in urls}
    await ready(r, *(f"inputStream{k}" for k in urls))
    for k, url in urls.items():
        for name, age, country in ((f"John{k}", 100, "AUS"), (f"Mike{k}", 20, "USA")):
            assert (await post(url.replace("localhost", "127.0.0.1"), xml_event(name, age, country)))[0] == 200
        await until(lambda k=k: len(names(got[k])) >= 2)
        assert names(got[k]) == [f"John{k}", f"Mike{k}"]
    assert sum(len(names(g)) for g in got.values()) == 8
