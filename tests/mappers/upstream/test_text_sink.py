"""siddhi-map-text ``TextDefaultSinkMapperTestCase`` and ``TextCustomSinkMapperTestCase``
(component/src/test/java/.../sinkmapper), ported.

Each Java ``@Test`` is one test here, named after it.  The apps are the upstream ones: events
sent into ``FooStream`` are copied into ``BarStream``, whose ``@sink`` has the ``text`` mapper.
The inMemory topics are ``{{symbol}}`` upstream; here they carry the test's name as a prefix
so that no other test sees their messages.  The Java subscribers mostly count messages per
topic; here the messages themselves are asserted too, as the mapper writes them.  The apps the
Java tests build with Siddhi's query API are built with :mod:`srota.query` (rendered to
SiddhiQL, which must parse back to the same app).
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from srota.grammar.errors import SiddhiAppCreationError

from srota.query import App, Query, Stream, annotation, col
from tests.mappers.harness import Running, Topic, until

STOCK = "symbol string, price float, volume long"


def _app(name: str, sink: str, types: str = STOCK) -> str:
    """The upstream app: ``sink`` on BarStream, FooStream copied into it."""
    return f"""
    @App:name('{name}')
    define stream FooStream ({types});
    {sink}
    define stream BarStream ({types});
    from FooStream select * insert into BarStream;
    """


def _in_memory(name: str, mapping: str) -> str:
    return f"@sink(type='inMemory', topic='{name}-{{{{symbol}}}}', @map(type='text'{mapping}))"


def _default(symbol: str, price: str, volume: str) -> str:
    return f'symbol:"{symbol}",\nprice:{price},\nvolume:{volume}'


def _ten() -> list[tuple[Any, ...]]:
    """Siddhi's ``send(Event[])`` of the upstream loops: WSO2 and IBM, five times each."""
    return [("WSO2", 55.6, 10), ("IBM", 75.6, 10)] * 5


async def _query_api_app(run: Any, name: str) -> Running:
    """The app Java builds with the query API: ``@sink(type='inMemory', topic='{{symbol}}',
    @map(type='text'))`` on BarStream, ``select symbol, price, volume`` from FooStream."""
    foo = Stream("FooStream").attr("symbol", "string").attr("price", "float").attr("volume", "int")
    bar = (Stream("BarStream").attr("symbol", "string").attr("price", "float").attr("volume", "int")
           .annotate("sink", type="inMemory", topic=f"{name}-{{{{symbol}}}}",
                     nested=[annotation("map", type="text")]))
    query = Query.from_("FooStream").select(col("symbol"), col("price"), col("volume")).insert_into("BarStream")
    text = App(name).stream(foo).stream(bar).query(query).to_siddhiql()
    assert App.from_siddhiql(text).to_siddhiql() == text
    return await run(text)


class _HttpListener:
    """Siddhi's ``HttpServerListenerHandler``: an HTTP server on loopback recording bodies."""

    def __init__(self) -> None:
        self.bodies: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.port = 0
        self._runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        self.bodies.append((await request.read()).decode())
        self.headers.append(dict(request.headers))
        return web.Response(text="ok")

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/abc", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


@pytest.fixture
async def listener() -> AsyncIterator[_HttpListener]:
    server = _HttpListener()
    await server.start()
    yield server
    await server.stop()


def _http_app(name: str, port: int, mapping: str) -> str:
    """The upstream http apps: ``method='{{method}}'`` upstream is ``method='POST'`` here (Srota's
    http sink takes a fixed method; every event of these tests says POST)."""
    return f"""
    @App:name('{name}')
    define stream FooStream (message string, method string, headers string);
    @sink(type='http', publisher.url='http://127.0.0.1:{port}/abc', method='POST', headers='{{{{headers}}}}',
          @map(type='text'{mapping}))
    define stream BarStream (message string, method string, headers string);
    from FooStream select message, method, headers insert into BarStream;
    """


# ------------------------------------------------------------------ TextDefaultSinkMapperTestCase
async def test_testTextSinkMapperWithDefaultMapping(run: Any) -> None:
    """Query-API app, default text mapping: two messages to WSO2, one to IBM."""
    name = "TextSinkDefaultQueryApi"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await _query_api_app(run, name)
    for row in (("WSO2", 55.6, 100), ("IBM", 75.6, 100), ("WSO2", 57.6, 100)):
        r.send("FooStream", row)
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == [_default("WSO2", "55.6", "100"), _default("WSO2", "57.6", "100")]
    assert ibm.text() == [_default("IBM", "75.6", "100")]


async def test_testTextSinkMapperDefaultEventGrouping(run: Any) -> None:
    """event.grouping.enabled='false': one message per event (WSO2 1, IBM 1)."""
    name = "TextSinkGroupingFalse"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await run(_app(name, _in_memory(name, ", event.grouping.enabled='false'")))
    r.send("FooStream", ("WSO2", 55.6, 10))
    r.send("FooStream", ("IBM", 55.6, 10))
    await wso2.take(1)
    await ibm.take(1)
    assert wso2.text() == [_default("WSO2", "55.6", "10")]
    assert ibm.text() == [_default("IBM", "55.6", "10")]


async def test_testTextSinkMapperDefaultEventGroupingTrue(run: Any) -> None:
    """event.grouping.enabled='true' with single events: one message each, no delimiter."""
    name = "TextSinkGroupingTrue"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await run(_app(name, _in_memory(name, ", event.grouping.enabled='true'")))
    r.send("FooStream", ("WSO2", 55.6, 10))
    r.send("FooStream", ("IBM", 55.6, 10))
    await wso2.take(1)
    await ibm.take(1)
    assert wso2.text() == [_default("WSO2", "55.6", "10")]
    assert ibm.text() == [_default("IBM", "55.6", "10")]


async def test_testTextSinkMapperEventGroupDefaultDecimeter(run: Any) -> None:
    """Ten events in one chunk, grouped by topic: one message per topic, events joined by the
    ``~~~~~~~~~~`` line."""
    name = "TextSinkGroupDefaultDelimiter"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await run(_app(name, _in_memory(name, ", event.grouping.enabled='true'")))
    r.send("FooStream", *_ten())
    await wso2.take(1)
    await ibm.take(1)
    assert wso2.text() == ["\n~~~~~~~~~~\n".join([_default("WSO2", "55.6", "10")] * 5)]
    assert ibm.text() == ["\n~~~~~~~~~~\n".join([_default("IBM", "75.6", "10")] * 5)]


async def test_testTextSinkMapperEventGroupCustomDelimiter(run: Any) -> None:
    """delimiter='#######': one message per topic, events joined by the ``#######`` line."""
    name = "TextSinkGroupCustomDelimiter"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await run(_app(name, _in_memory(name, ", event.grouping.enabled='true',delimiter='#######'")))
    r.send("FooStream", *_ten())
    await wso2.take(1)
    await ibm.take(1)
    assert wso2.text() == ["\n#######\n".join([_default("WSO2", "55.6", "10")] * 5)]
    assert ibm.text() == ["\n#######\n".join([_default("IBM", "75.6", "10")] * 5)]


async def test_testTextSinkMapperNewLineCharacter(run: Any) -> None:
    """new.line.character='\\n' given explicitly: one message per event (WSO2 1, IBM 1)."""
    name = "TextSinkNewLine"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await run(_app(name, _in_memory(name, ", event.grouping.enabled='false' , new.line.character='\\n'")))
    r.send("FooStream", ("WSO2", 55.6, 10))
    r.send("FooStream", ("IBM", 55.6, 10))
    await wso2.take(1)
    await ibm.take(1)
    assert wso2.text() == [_default("WSO2", "55.6", "10")]
    assert ibm.text() == [_default("IBM", "55.6", "10")]


async def test_testTextSinkMapperEventGroupSingleEvent(run: Any) -> None:
    """Grouping with events sent one by one: one message each (WSO2 1, IBM 1)."""
    name = "TextSinkGroupSingle"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await run(_app(name, _in_memory(name, ", event.grouping.enabled='true'")))
    r.send("FooStream", ("WSO2", 55.6, 10))
    r.send("FooStream", ("IBM", 75.6, 10))
    await wso2.take(1)
    await ibm.take(1)
    assert wso2.text() == [_default("WSO2", "55.6", "10")]
    assert ibm.text() == [_default("IBM", "75.6", "10")]


def _file_app(name: str, directory: Path, mapping: str) -> str:
    return _app(name, f"@sink(type='file', @map(type='text'{mapping}), append='false', "
                      f"file.uri='{directory}/{{{{symbol}}}}.txt')")


async def _files(directory: Path, names: list[str]) -> dict[str, str]:
    await until(lambda: all((directory / n).exists() for n in names))
    await asyncio.sleep(0.1)
    return {p.name: p.read_text() for p in directory.iterdir()}


async def test_fileSinkTestSingle(run: Any, tmp_path: Path) -> None:
    """A file sink with ``file.uri='.../{{symbol}}.txt'``: four events make four files."""
    name = "TextSinkFileSingle"
    r = await run(_file_app(name, tmp_path, ""))
    for row in (("WSO2", 55.6, 100), ("IBM", 57.678, 100), ("GOOGLE", 50.0, 100), ("REDHAT", 50.0, 100)):
        r.send("FooStream", row)
    files = await _files(tmp_path, ["WSO2.txt", "IBM.txt", "GOOGLE.txt", "REDHAT.txt"])
    assert sorted(files) == ["GOOGLE.txt", "IBM.txt", "REDHAT.txt", "WSO2.txt"]
    assert files["IBM.txt"].startswith(_default("IBM", "57.678", "100"))


async def test_fileSinkTestGroup(run: Any, tmp_path: Path) -> None:
    """Grouping into files: two chunks of five events make two files, each one grouped message."""
    name = "TextSinkFileGroup"
    r = await run(_file_app(name, tmp_path, ",event.grouping.enabled='true'"))
    r.send("FooStream", *[("WSO2", 55.6, 10)] * 5)
    r.send("FooStream", *[("IBM", 75.6, 10)] * 5)
    files = await _files(tmp_path, ["WSO2.txt", "IBM.txt"])
    assert sorted(files) == ["IBM.txt", "WSO2.txt"]
    assert files["WSO2.txt"].startswith("\n~~~~~~~~~~\n".join([_default("WSO2", "55.6", "10")] * 5))


async def test_fileSinkTestNewLineCharacter(run: Any, tmp_path: Path) -> None:
    """new.line.character='\\r\\n' and delimiter='#######' into files: four files.

    (Siddhi's sink writes the option's backslashes as they are; Srota writes CR LF, see
    docs/mappers.md.)
    """
    name = "TextSinkFileNewLine"
    r = await run(_file_app(name, tmp_path, ",event.grouping.enabled='true',delimiter='#######',"
                                            "new.line.character='\\r\\n'"))
    for row in (("WSO2", 55.6, 100), ("IBM", 57.678, 100), ("GOOGLE", 50.0, 100), ("REDHAT", 50.0, 100)):
        r.send("FooStream", row)
    files = await _files(tmp_path, ["WSO2.txt", "IBM.txt", "GOOGLE.txt", "REDHAT.txt"])
    assert sorted(files) == ["GOOGLE.txt", "IBM.txt", "REDHAT.txt", "WSO2.txt"]
    assert (tmp_path / "WSO2.txt").read_bytes().startswith(b'symbol:"WSO2",\r\nprice:55.6,\r\nvolume:100')


async def test_testHTTPTextMappingText(run: Any, listener: _HttpListener) -> None:
    """An http sink with the text mapper: the body is the default format of the event.

    (Java's listener reads the body line by line and ends each line with ``\\n``, hence the
    trailing line break of its expected text.)
    """
    r = await run(_http_app("TextSinkHttp", listener.port, ""))
    r.send("FooStream", ("WSO2,55.6,100", "POST", "'Name:John','Age:23'"))
    await until(lambda: len(listener.bodies) >= 1)
    assert listener.bodies == ['message:"WSO2,55.6,100",\nmethod:"POST",\nheaders:"\'Name:John\',\'Age:23\'"']
    assert listener.headers[0]["Name"] == "John" and listener.headers[0]["Age"] == "23"


async def test_testTextSinkMapperEventGroupHTTP(run: Any, listener: _HttpListener) -> None:
    """An http sink with grouping: five events in one chunk are one body, joined by ``~~~~~~~~~~``."""
    r = await run(_http_app("TextSinkHttpGroup", listener.port, " , event.grouping.enabled='true'"))
    r.send("FooStream", *[("WSO2", "POST", "'place:office'")] * 5)
    await until(lambda: len(listener.bodies) >= 1)
    await asyncio.sleep(0.1)
    one = 'message:"WSO2",\nmethod:"POST",\nheaders:"\'place:office\'"'
    assert listener.bodies == ["\n~~~~~~~~~~\n".join([one] * 5)]


async def test_testCustomTextMapperWithLogSink(run: Any) -> None:
    """A log sink next to an inMemory sink whose @payload is the constant ``Test Mapping``."""
    name = "TextSinkWithLog"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await run(_app(name, "@sink(type = 'log')\n" + _in_memory(name, ' , @payload("""Test Mapping""")')))
    r.send("FooStream", ("WSO2", 55.6, 10))
    r.send("FooStream", ("IBM", 75.6, 10))
    await wso2.take(1)
    await ibm.take(1)
    assert wso2.text() == ["Test Mapping"] and ibm.text() == ["Test Mapping"]


# ------------------------------------------------------------------ TextCustomSinkMapperTestCase
_STOCK_PAYLOAD = ', @payload("Stock price of {{symbol}} is {{price}}")'


async def test_testTextSinkCustomMapping(run: Any) -> None:
    """@payload template: 'Stock price of WSO2 is 55.6', '... IBM is 75.6', '... WSO2 is 57.6'."""
    name = "TextSinkCustom"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await run(_app(name, _in_memory(name, _STOCK_PAYLOAD)))
    for row in (("WSO2", 55.6, 100), ("IBM", 75.6, 100), ("WSO2", 57.6, 100)):
        r.send("FooStream", row)
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text() == ["Stock price of WSO2 is 55.6", "Stock price of WSO2 is 57.6"]
    assert ibm.text() == ["Stock price of IBM is 75.6"]


async def test_testTextSinkMapperEventGroupDefaultDelimiter(run: Any) -> None:
    """Custom payload, grouping: one message per topic, texts joined by the ``~~~~~~~~~~`` line."""
    name = "TextSinkCustomGroup"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await run(_app(name, _in_memory(name, " , event.grouping.enabled='true' " + _STOCK_PAYLOAD)))
    r.send("FooStream", *_ten())
    await wso2.take(1)
    await ibm.take(1)
    assert wso2.text() == ["\n~~~~~~~~~~\n".join(["Stock price of WSO2 is 55.6"] * 5)]
    assert ibm.text() == ["\n~~~~~~~~~~\n".join(["Stock price of IBM is 75.6"] * 5)]


async def test_testTextSinkMapperEventGroupCustomDelimiter_custom(run: Any) -> None:
    """``TextCustomSinkMapperTestCase.testTextSinkMapperEventGroupCustomDelimiter``: custom payload,
    grouping with delimiter='#######': one message per topic.  (Suffixed: the name is shared with
    the default case.)"""
    name = "TextSinkCustomGroupDelimiter"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await run(_app(name, _in_memory(name, " , event.grouping.enabled='true',delimiter='#######' "
                                              + _STOCK_PAYLOAD)))
    r.send("FooStream", *_ten())
    await wso2.take(1)
    await ibm.take(1)
    assert wso2.text() == ["\n#######\n".join(["Stock price of WSO2 is 55.6"] * 5)]
    assert ibm.text() == ["\n#######\n".join(["Stock price of IBM is 75.6"] * 5)]


async def test_testTextSinkMapperWithoutPayload(run: Any) -> None:
    """Query-API app without @payload: the default format (WSO2 2 messages, IBM 1)."""
    name = "TextSinkWithoutPayload"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await _query_api_app(run, name)
    for row in (("WSO2", 55.6, 100), ("IBM", 75.6, 100), ("WSO2", 57.6, 100)):
        r.send("FooStream", row)
    await wso2.take(2)
    await ibm.take(1)
    assert len(wso2.text()) == 2 and ibm.text() == [_default("IBM", "75.6", "100")]


async def test_testTextSinkMapperEventGroupSingleEvent_custom(run: Any) -> None:
    """``TextCustomSinkMapperTestCase.testTextSinkMapperEventGroupSingleEvent``: custom payload,
    grouping, events one by one: one plain message each.  (The Java method name is shared with
    the default-mapping case above, hence the suffix.)"""
    name = "TextSinkCustomGroupSingle"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await run(_app(name, _in_memory(name, " , event.grouping.enabled='true' " + _STOCK_PAYLOAD)))
    r.send("FooStream", ("WSO2", 55.6, 10))
    r.send("FooStream", ("IBM", 75.6, 10))
    await wso2.take(1)
    await ibm.take(1)
    assert wso2.text() == ["Stock price of WSO2 is 55.6"] and ibm.text() == ["Stock price of IBM is 75.6"]


async def test_testTextSinkWrongMapping(run: Any) -> None:
    """``{{id}}`` is not an attribute: the app is not created (SiddhiAppCreationException)."""
    name = "TextSinkWrongMapping"
    with pytest.raises(SiddhiAppCreationError, match="id"):
        await run(_app(name, _in_memory(name, ', @payload("Stock price of {{id}} is {{price}}")')))


async def test_testTextSinkMapperNotEventGroupWithCustomDelimiter(run: Any) -> None:
    """A delimiter without grouping changes nothing: five messages per topic."""
    name = "TextSinkNotGroupDelimiter"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await run(_app(name, _in_memory(name, " , event.grouping.enabled='false',delimiter='#######' "
                                              + _STOCK_PAYLOAD)))
    r.send("FooStream", *_ten())
    await wso2.take(5)
    await ibm.take(5)
    assert wso2.text() == ["Stock price of WSO2 is 55.6"] * 5 and ibm.text() == ["Stock price of IBM is 75.6"] * 5


async def test_testTextSinkMapperNewLineCharacter_custom(run: Any) -> None:
    """``TextCustomSinkMapperTestCase.testTextSinkMapperNewLineCharacter``: new.line.character='\\n'
    without grouping: five messages per topic.  (Suffixed: the name is shared with the default case.)"""
    name = "TextSinkCustomNewLine"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await run(_app(name, _in_memory(name, " , event.grouping.enabled='false',new.line.character='\\n' "
                                              + _STOCK_PAYLOAD)))
    r.send("FooStream", *_ten())
    await wso2.take(5)
    await ibm.take(5)
    assert len(wso2.text()) == 5 and len(ibm.text()) == 5


async def test_testTextSinkMapperNewLineCharacterWrong(run: Any) -> None:
    """new.line.character='\\r' without grouping is never written: five messages per topic."""
    name = "TextSinkNewLineWrong"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await run(_app(name, _in_memory(name, " , event.grouping.enabled='false',new.line.character='\\r' "
                                              + _STOCK_PAYLOAD)))
    r.send("FooStream", *_ten())
    await wso2.take(5)
    await ibm.take(5)
    assert wso2.text() == ["Stock price of WSO2 is 55.6"] * 5 and ibm.text() == ["Stock price of IBM is 75.6"] * 5


async def test_fileSinkTest(run: Any, tmp_path: Path) -> None:
    """Custom payload into ``{{symbol}}.txt`` files: four files."""
    name = "TextSinkCustomFile"
    r = await run(_file_app(name, tmp_path, " , @payload('Stock price of {{symbol}} is {{price}}')"))
    for row in (("WSO2", 55.6, 100), ("IBM", 57.678, 100), ("GOOGLE", 50.0, 100), ("REDHAT", 50.0, 100)):
        r.send("FooStream", row)
    files = await _files(tmp_path, ["WSO2.txt", "IBM.txt", "GOOGLE.txt", "REDHAT.txt"])
    assert sorted(files) == ["GOOGLE.txt", "IBM.txt", "REDHAT.txt", "WSO2.txt"]
    assert files["GOOGLE.txt"].startswith("Stock price of GOOGLE is 50.0")


async def test_fileSinkTestGroup_custom(run: Any, tmp_path: Path) -> None:
    """``TextCustomSinkMapperTestCase.fileSinkTestGroup``: custom payload, grouping, two chunks of
    five events: two files.  (Suffixed: the name is shared with the default case.)"""
    name = "TextSinkCustomFileGroup"
    r = await run(_file_app(name, tmp_path, ",event.grouping.enabled='true', "
                                            "@payload('Stock price of {{symbol}} is {{price}}')"))
    r.send("FooStream", *[("WSO2", 55.6, 10)] * 5)
    r.send("FooStream", *[("IBM", 75.6, 10)] * 5)
    files = await _files(tmp_path, ["WSO2.txt", "IBM.txt"])
    assert sorted(files) == ["IBM.txt", "WSO2.txt"]
    assert files["IBM.txt"].startswith("\n~~~~~~~~~~\n".join(["Stock price of IBM is 75.6"] * 5))


async def test_testHTTPTextMappingText_custom(run: Any, listener: _HttpListener) -> None:
    """``TextCustomSinkMapperTestCase.testHTTPTextMappingText``: Mustache ``{{{message}}}`` (not
    escaped) over http: the body is ``WSO2,55.6,100``.  (Suffixed: the name is shared with the
    default case; Java's listener adds the trailing line break.)"""
    r = await run(_http_app("TextSinkHttpMustache", listener.port,
                            ", mustache.enabled='true', @payload('{{{message}}}')"))
    r.send("FooStream", ("WSO2,55.6,100", "POST", "'Name:John','Age:23'"))
    await until(lambda: len(listener.bodies) >= 1)
    assert listener.bodies == ["WSO2,55.6,100"]


async def test_testHTTPTextMappingTextMultiple(run: Any, listener: _HttpListener) -> None:
    """Mustache with grouping over http: one body of five ``WSO2`` joined by ``~~~~~~~~~~``."""
    r = await run(_http_app("TextSinkHttpMustacheGroup", listener.port,
                            ", mustache.enabled='true', event.grouping.enabled='true', @payload('{{{message}}}')"))
    r.send("FooStream", *[("WSO2", "POST", "'place:office'")] * 5)
    await until(lambda: len(listener.bodies) >= 1)
    await asyncio.sleep(0.1)
    assert listener.bodies == ["\n~~~~~~~~~~\n".join(["WSO2"] * 5)]
