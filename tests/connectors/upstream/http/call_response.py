"""The tests ``HttpRequestResponseTestCase`` and ``HttpCallResponseTestCase`` share (the first
with Siddhi's deprecated names ``http-request``/``http-response``, the second with
``http-call``/``http-call-response``); the test modules bind them to their Java method names.

The Java test server (``HttpServerListener``) answers each request with its body, so an
``http-call`` of a JSON payload gets the same JSON back, which the response source maps.
"""
from __future__ import annotations

import asyncio
from typing import Any

from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import AttrType
from srota.mappers._convert import format_value

from tests.conftest import free_port
from tests.connectors.upstream.http.support import Server, rows, until

PAYLOAD = '{"name":"wso2", "id":"1234"}'
HEADERS = "'comapny:wso2', country:sl'"


async def _responded(r: Any, got: list[Any], stream: str = "responseStream", timeout: float = 5.0) -> None:
    """Wait until ``stream`` has a row or its response failed to map (then fail at once: the
    source's mapping error is the reason), and a moment more to see that no others come."""
    await until(lambda: len(rows(got)) >= 1 or r.mapping_errors(stream) > 0, timeout)
    assert r.mapping_errors(stream) == 0, "the response did not map"
    await asyncio.sleep(0.1)


def _message_app(sink: str, source: str, url: str, extra: str = "") -> str:
    return ("define stream FooStream (message String,headers String);"
            f"@sink(type='{sink}',publisher.url='{url}', method='POST',{extra}"
            "headers='{{headers}}',sink.id='source-1',@map(type='json', @payload('{{message}}'))) "
            "Define stream BarStream (message String, headers String);"
            f"@source(type='{source}', sink.id='source-1', @map(type='json',@attributes(name='name', id='id')))"
            "define stream responseStream(name String, id int);"
            "@info(name = 'query') from FooStream select message,headers insert into BarStream;")


async def response1(run: Any, sink: str, source: str) -> None:
    """A JSON payload posted to the echoing server: one response, ``("wso2", 1234)``."""
    async with Server(echo=True) as server:
        r = await run(_message_app(sink, source, server.url()))
        got = r.watch("responseStream")
        r.send("FooStream", (PAYLOAD, HEADERS))
        await _responded(r, got)
    assert rows(got) == [("wso2", 1234)]


async def response2(run: Any, sink: str, source: str) -> None:
    """A ``@payload`` template posted; the response maps ``name``, ``id`` from the body and
    ``headers``, ``volume``, ``price`` from the request event (``trp:``)."""
    async with Server(echo=True) as server:
        r = await run("define stream FooStream (name String, id int, headers String, volume long, price float);"
                      f"@sink(type='{sink}',publisher.url='{server.url()}', method='POST',"
                      "headers='{{headers}}',sink.id='source-1',"
                      '@map(type=\'json\', @payload("""{"name":"{{name}}","id":{{id}}}"""))) '
                      "Define stream BarStream (name String, id int, headers String, volume long, price float);"
                      f"@source(type='{source}', sink.id='source-1', "
                      "@map(type='json',@attributes(name='name', id='id', headers='trp:headers', volume='trp:volume', "
                      "price='trp:price')))"
                      "define stream responseStream(name String, id int, headers String, volume long, price float);"
                      "@info(name = 'query') from FooStream select * insert into BarStream;")
        got = r.watch("responseStream")
        r.send("FooStream", ("wso2", 100, "'country:sri-lanka'", 1000, 111.11))
        await _responded(r, got)
    ((name, id_, headers, volume, price),) = rows(got)
    assert (name, id_, headers, volume) == ("wso2", 100, "'country:sri-lanka'", 1000)
    assert format_value(price, AttrType.FLOAT) == "111.11"  # Java: getData(4).toString() of a Float


def _download_app(sink: str, source: str, url: str, *codes: str) -> str:
    sources = "".join(
        f"@source(type='{source}', sink.id='source-1', http.status.code='{code}\\d+', "
        "@map(type='text', regex.A='((.|\\n)*)', @attributes(headers='trp:headers', fileName='A[1]'))) "
        f"define stream responseStream{code}xx(fileName string, headers string);" for code in codes)
    return ("define stream FooStream (name String, id int, headers String, downloadPath string);"
            f"@sink(type='{sink}',downloading.enabled='true',download.path='{{{{downloadPath}}}}',"
            f"publisher.url='{url}', method='GET',headers='{{{{headers}}}}',sink.id='source-1',@map(type='json')) "
            "Define stream BarStream (name String, id int, headers String, downloadPath string);" + sources +
            "@info(name = 'query') from FooStream select * insert into BarStream;")


async def response3(run: Any, sink: str, source: str, tmp_path: Any) -> None:
    """``downloading.enabled``: the GET's response is saved to ``download.path`` and the 2xx
    source gets the file's name."""
    path = tmp_path / "downloadedFile.txt"
    async with Server(body="file content") as server:
        r = await run(_download_app(sink, source, server.url("/files"), "2"))
        got = r.watch("responseStream2xx")
        r.send("FooStream", ("wso2", 100, "'country:sri-lanka'", str(path)))
        await until(lambda: len(rows(got)) >= 1)
    assert rows(got)[0][0] == str(path) and path.is_file()


async def response4(run: Any, sink: str, source: str, tmp_path: Any) -> None:
    """``downloading.enabled`` and a ``400``: nothing saved, the 4xx source gets the error."""
    path = tmp_path / "downloadedFile.txt"
    async with Server(status=400, body="bad") as server:
        r = await run(_download_app(sink, source, server.url("/files"), "2", "4"))
        ok, failed = r.watch("responseStream2xx"), r.watch("responseStream4xx")
        r.send("FooStream", ("wso2", 100, "'country:sri-lanka'", str(path)))
        await until(lambda: len(rows(failed)) >= 1)
    assert rows(ok) == [] and not path.is_file()


async def response5(run: Any, sink: str, source: str) -> None:
    """Nothing listens at ``publisher.url``: no response event."""
    r = await run(_message_app(sink, source, f"http://127.0.0.1:{free_port()}/abc"))
    got = r.watch("responseStream")
    r.send("FooStream", (PAYLOAD, HEADERS))
    await asyncio.sleep(1.0)
    assert rows(got) == []


async def response6(run: Any, sink: str, source: str) -> None:
    """``on.error='wait'``, the server starts after the event is sent: the request is retried
    until it is answered, and the response arrives."""
    port = free_port()
    r = await run(_message_app(sink, source, f"http://127.0.0.1:{port}/abc", extra=" on.error='wait',"))
    got = r.watch("responseStream")
    r.send("FooStream", (PAYLOAD, HEADERS))
    await asyncio.sleep(0.3)
    async with Server(echo=True, port=port):
        await _responded(r, got, timeout=10)
    assert rows(got) == [("wso2", 1234)]


__all__ = ["SiddhiAppCreationError", "response1",
           "response2", "response3", "response4", "response5", "response6"]
