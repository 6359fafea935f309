"""The http source and sink against real HTTP clients and servers on loopback."""
from __future__ import annotations

import asyncio
import base64
import subprocess
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from srota.connectors import ConnectionUnavailableError, HttpSink, HttpSource, Message
from srota.connectors._http import parse_headers
from srota.connectors._inmemory import broker
from srota.connectors.base import RejectedError
from srota.grammar.errors import SiddhiAppCreationError
from structlog.testing import capture_logs

from tests.conftest import free_port


def _basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


class Host:
    """Takes chunks like the service host: ``reject`` maps payloads to a mapping error."""

    def __init__(self, reject: bytes | None = None, delay: float = 0.0) -> None:
        self.chunks: list[list[bytes]] = []
        self.properties: list[dict[str, Any]] = []
        self.reject = reject
        self.delay = delay

    async def __call__(self, messages: list[Message]) -> None:
        await asyncio.sleep(self.delay)
        for m in messages:
            if m.payload == self.reject:
                m.rejected = "invalid JSON: unexpected end of data"
        self.chunks.append([m.payload for m in messages])
        self.properties.extend(m.properties for m in messages)


async def _source(host: Host, **options: Any) -> HttpSource:
    options.setdefault("receiver.url", f"http://127.0.0.1:{free_port()}/events")
    source = HttpSource(options, name="test")
    await source.start(host)
    return source


async def test_a_posted_body_is_delivered_and_answered_once_taken():
    host = Host()
    source = await _source(host)
    try:
        async with aiohttp.ClientSession() as client:
            async with client.post(source.options["receiver.url"], data=b'{"event": {"a": 1}}',
                                   headers={"X-Device": "d1"}) as r:
                assert r.status == 200
                assert await r.json() == {"status": "accepted"}
        assert host.chunks == [[b'{"event": {"a": 1}}']]
        assert host.properties[0]["X-Device"] == "d1" and host.properties[0]["path"] == "/events"
    finally:
        await source.stop()


async def test_concurrent_requests_arrive_together_and_in_order_of_arrival():
    host = Host(delay=0.05)
    source = await _source(host)
    try:
        async with aiohttp.ClientSession() as client:
            async def post(i: int) -> int:
                async with client.post(source.options["receiver.url"], data=str(i).encode()) as r:
                    return r.status

            first = asyncio.create_task(post(0))
            await asyncio.sleep(0.02)  # the first chunk is being taken: the rest queue up
            statuses = await asyncio.gather(first, *(post(i) for i in range(1, 20)))
        assert statuses == [200] * 20
        assert sorted(int(p) for c in host.chunks for p in c) == list(range(20))
        assert len(host.chunks) < 20  # queued requests went in together
    finally:
        await source.stop()


async def test_a_body_that_does_not_map_gets_400_with_the_reason():
    host = Host(reject=b'{"event": ')
    source = await _source(host)
    try:
        async with aiohttp.ClientSession() as client:
            async with client.post(source.options["receiver.url"], data=b'{"event": ') as r:
                assert r.status == 400
                assert "invalid JSON" in (await r.json())["error"]
            async with client.post(source.options["receiver.url"], data=b"{}") as r:
                assert r.status == 200  # the source goes on
    finally:
        await source.stop()


async def test_a_paused_source_answers_503_with_retry_after_and_then_takes_events_again():
    host = Host()
    source = await _source(host)
    try:
        source.pause()
        async with aiohttp.ClientSession() as client:
            async with client.post(source.options["receiver.url"], data=b"1") as r:
                assert r.status == 503 and r.headers["Retry-After"] == "1"
            source.resume()
            async with client.post(source.options["receiver.url"], data=b"2") as r:
                assert r.status == 200
        assert host.chunks == [[b"2"]]
    finally:
        await source.stop()


async def test_requests_over_the_buffer_size_get_503_while_the_app_is_behind():
    host = Host(delay=0.3)
    source = await _source(host, **{"buffer.size": "1"})
    url = source.options["receiver.url"]
    try:
        async with aiohttp.ClientSession() as client:
            async def post(body: bytes) -> int:
                async with client.post(url, data=body) as r:
                    return r.status

            taken = asyncio.create_task(post(b"1"))  # being delivered (the app is slow)
            await asyncio.sleep(0.1)
            waiting = asyncio.create_task(post(b"2"))  # the one request the buffer holds
            await asyncio.sleep(0.05)
            async with client.post(url, data=b"3") as r:
                assert r.status == 503 and r.headers["Retry-After"] == "1"
            assert (await taken, await waiting) == (200, 200)
        assert [p for c in host.chunks for p in c] == [b"1", b"2"]
    finally:
        await source.stop()


async def test_a_request_not_taken_at_shutdown_gets_503():
    host = Host(delay=0.3)
    source = await _source(host)
    url = source.options["receiver.url"]
    async with aiohttp.ClientSession() as client:
        async def post(body: bytes) -> int:
            async with client.post(url, data=body) as r:
                return r.status

        taken = asyncio.create_task(post(b"1"))
        await asyncio.sleep(0.1)
        left = asyncio.create_task(post(b"2"))  # queued behind the chunk being processed
        await asyncio.sleep(0.05)
        await source.stop()  # the chunk in progress finishes; the queued request is refused
        assert (await taken, await left) == (200, 503)
    assert host.chunks == [[b"1"]]


async def test_basic_auth_and_methods():
    host = Host()
    source = await _source(host, **{"basic.auth.enabled": "true", "basic.auth.username": "iot",
                                    "basic.auth.password": "s3cret"})
    url = source.options["receiver.url"]
    try:
        async with aiohttp.ClientSession() as client:
            async with client.post(url, data=b"x") as r:
                assert r.status == 401 and "Basic" in r.headers["WWW-Authenticate"]
            async with client.post(url, data=b"x", headers=_basic("iot", "wrong")) as r:
                assert r.status == 401
            async with client.get(url, headers=_basic("iot", "s3cret")) as r:
                assert r.status == 405
            async with client.post(url, data=b"x", headers=_basic("iot", "s3cret")) as r:
                assert r.status == 200
            async with client.post(url.replace("/events", "/other"), data=b"x") as r:
                assert r.status == 404
    finally:
        await source.stop()


async def test_two_sources_share_a_port_on_different_paths():
    port = free_port()
    a, b = Host(), Host()
    sa = await _source(a, **{"receiver.url": f"http://127.0.0.1:{port}/a"})
    sb = await _source(b, **{"receiver.url": f"http://127.0.0.1:{port}/b"})
    try:
        async with aiohttp.ClientSession() as client:
            for path, body in (("a", b"1"), ("b", b"2")):
                async with client.post(f"http://127.0.0.1:{port}/{path}", data=body) as r:
                    assert r.status == 200
        assert (a.chunks, b.chunks) == ([[b"1"]], [[b"2"]])
        await sa.stop()
        async with aiohttp.ClientSession() as client:  # the other path still listens
            async with client.post(f"http://127.0.0.1:{port}/b", data=b"3") as r:
                assert r.status == 200
    finally:
        await sa.stop()
        await sb.stop()


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert, key


async def test_https_source_and_sink(tmp_path):
    cert, key = _self_signed(tmp_path)
    host = Host()
    url = f"https://127.0.0.1:{free_port()}/secure"
    source = await _source(host, **{"receiver.url": url, "ssl.cert.file": str(cert), "ssl.key.file": str(key)})
    sink = HttpSink({"publisher.url": url, "ssl.ca.file": str(cert)}, name="tls")
    try:
        await sink.connect()
        await sink.publish([(b'{"n": 1}', {})])
        assert host.chunks == [[b'{"n": 1}']]
        untrusting = HttpSink({"publisher.url": url}, name="untrusting")
        await untrusting.connect()
        with pytest.raises(ConnectionUnavailableError, match="certificate"):
            await untrusting.publish([(b"{}", {})])
        await untrusting.close()
    finally:
        await sink.close()
        await source.stop()


@pytest.mark.parametrize("options, message", [
    ({"receiver.url": "ftp://x/y"}, "http:// or https://"),
    ({"receiver.url": "https://127.0.0.1:1/x"}, "ssl.cert.file"),
    ({"receiver.url": "http://127.0.0.1:1/x", "basic.auth.enabled": "true"}, "basic.auth.username"),
])
def test_source_options_are_checked(options, message):
    with pytest.raises(SiddhiAppCreationError, match=message):
        HttpSource(options)


# ------------------------------------------------------------------ the sink
class Server:
    """A real aiohttp server recording requests; ``statuses`` answers them in turn."""

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.requests: list[tuple[str, str, bytes, dict[str, str]]] = []
        self.statuses = list(statuses or [])
        self.port = free_port()
        self.runner: web.AppRunner | None = None

    async def __aenter__(self) -> Server:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self.runner is not None
        await self.runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        self.requests.append((request.method, request.path, await request.read(), dict(request.headers)))
        status = self.statuses.pop(0) if self.statuses else 200
        return web.Response(status=status, text="nope" if status >= 400 else "ok")

    def url(self, path: str = "/in") -> str:
        return f"http://127.0.0.1:{self.port}{path}"


async def test_sink_posts_each_payload_in_order_with_headers_and_auth():
    async with Server() as server:
        sink = HttpSink({"publisher.url": server.url(), "headers": "'X-Api:1','X-Site:eu'",
                         "basic.auth.username": "u", "basic.auth.password": "p"}, name="out")
        await sink.connect()
        await sink.publish([(b'{"a": 1}', {}), (b'{"a": 2}', {}), ("x,y", {})])
        await sink.close()
    bodies = [body for _m, _p, body, _h in server.requests]
    assert bodies == [b'{"a": 1}', b'{"a": 2}', b"x,y"]
    method, path, _body, headers = server.requests[0]
    assert (method, path) == ("POST", "/in")
    assert headers["X-Api"] == "1" and headers["X-Site"] == "eu"
    assert headers["Content-Type"] == "application/json"
    assert server.requests[2][3]["Content-Type"].startswith("text/plain")
    assert headers["Authorization"].startswith("Basic ")


async def test_sink_templates_choose_the_url_per_event():
    async with Server() as server:
        sink = HttpSink({"publisher.url": server.url("/devices/{{id}}"), "method": "PUT"}, name="out")
        await sink.connect()
        await sink.publish([(b"1", {"publisher.url": server.url("/devices/d1")}),
                            (b"2", {"publisher.url": server.url("/devices/d2")})])
        await sink.close()
    assert [(m, p) for m, p, _b, _h in server.requests] == [("PUT", "/devices/d1"), ("PUT", "/devices/d2")]


async def test_sink_statuses_4xx_are_rejected_and_5xx_retried():
    async with Server(statuses=[200, 400, 200, 503]) as server:
        sink = HttpSink({"publisher.url": server.url()}, name="out")
        await sink.connect()
        with pytest.raises(RejectedError) as rejected:
            await sink.publish([(b"1", {}), (b"2", {}), (b"3", {})])
        assert list(rejected.value.rejected) == [1] and "400" in rejected.value.rejected[1]
        with pytest.raises(ConnectionUnavailableError) as unavailable:
            await sink.publish([(b"4", {}), (b"5", {})])
        assert unavailable.value.published == 0  # the host retries from the first unsent
        await sink.close()


async def test_sink_to_an_unreachable_server_is_unavailable():
    sink = HttpSink({"publisher.url": f"http://127.0.0.1:{free_port()}/x"}, name="out")
    await sink.connect()
    with pytest.raises(ConnectionUnavailableError, match="cannot reach"):
        await sink.publish([(b"1", {})])
    await sink.close()


def test_headers_option():
    assert parse_headers("'Content-Type:application/json','X-A: b:c'") == {"Content-Type": "application/json",
                                                                          "X-A": "b:c"}
    with pytest.raises(ValueError, match="Name:value"):
        parse_headers("'no-colon'")


# ------------------------------------------------------------------ end to end in the service
async def test_service_http_in_filter_http_out_and_a_bad_body(request):
    from srota.service.config import HttpConfig, ServiceConfig
    from srota.service.host import ServiceHost

    port = free_port()
    async with Server() as server:
        app = f"""
        @app:name('HttpEndToEnd')
        @OnError(action='STREAM')
        @source(type='http', receiver.url='http://127.0.0.1:{port}/readings', @map(type='json'))
        define stream Readings (id string, temp double);

        @sink(type='http', publisher.url='{server.url("/alerts/{{id}}")}', @map(type='json'))
        define stream Alerts (id string, temp double);

        @sink(type='http', publisher.url='{server.url("/faults")}', @map(type='json'))
        define stream Faults (temp double, error string);

        from Readings[temp > 30] select id, temp insert into Alerts;
        from !Readings select temp, convert(_error, 'string') as error insert into Faults;
        """
        host = ServiceHost(ServiceConfig(http=HttpConfig(port=0)), app_texts=[app])
        await host.start()
        try:
            url = f"http://127.0.0.1:{port}/readings"
            async with aiohttp.ClientSession() as client:
                for body in (b'{"event": {"id": "d1", "temp": 35.5}}', b'{"event": {"id": "d2", "temp": 20.0}}'):
                    async with client.post(url, data=body) as r:
                        assert r.status == 200
                async with client.post(url, data=b'{"event": {"id": "d3", "temp": ') as r:
                    assert r.status == 400
                    assert "JSON" in (await r.json())["error"]
            async with asyncio.timeout(10):
                while len(server.requests) < 2:
                    await asyncio.sleep(0.02)
        finally:
            await host.stop()
    paths = sorted(p for _m, p, _b, _h in server.requests)
    assert paths == ["/alerts/d1", "/faults"]
    alert = next(b for _m, p, b, _h in server.requests if p == "/alerts/d1")
    assert alert == b'{"event":{"id":"d1","temp":35.5}}'


async def test_a_sinks_content_type_follows_its_map_type_as_siddhis():
    # Siddhi's HttpSinkUtil.getContentType: text -> text/plain however the payload looks,
    # json -> application/json, xml -> application/xml; a header or content.type wins.
    async with Server() as server:
        app = """
        @app:name('ContentTypes')
        @sink(type='http', publisher.url='URL/text', @map(type='text', @payload(\"\"\"{"id": "{{id}}"}\"\"\")))
        @sink(type='http', publisher.url='URL/json', @map(type='json'))
        @sink(type='http', publisher.url='URL/xml', @map(type='xml'))
        @sink(type='http', publisher.url='URL/given', headers="'Content-Type:text/csv'", @map(type='text'))
        define stream Out (id string);
        """.replace("URL/", server.url("/"))
        host = await _service(app)
        try:
            host.apps["ContentTypes"].runtime.get_input_handler("Out").send(("d1",), 1_700_000_000_000)
            async with asyncio.timeout(10):
                while len(server.requests) < 4:
                    await asyncio.sleep(0.02)
        finally:
            await host.stop()
    got = {path: (body, headers["Content-Type"]) for _m, path, body, headers in server.requests}
    assert got["/text"] == (b'{"id": "d1"}', "text/plain")
    assert got["/json"][1] == "application/json"
    assert got["/xml"][1] == "application/xml"
    assert got["/given"][1] == "text/csv"


# ------------------------------------------------------------------ service-style http
async def _service(app: str) -> Any:
    from srota.service.config import HttpConfig, ServiceConfig
    from srota.service.host import ServiceHost

    host = ServiceHost(ServiceConfig(http=HttpConfig(port=0)), app_texts=[app])
    await host.start()
    return host


async def test_http_service_answers_each_request_with_the_apps_response():
    port = free_port()
    host = await _service(f"""
    @app:name('Adder')
    @source(type='http-service', receiver.url='http://127.0.0.1:{port}/add', source.id='adder',
            connection.timeout='500',
            @map(type='json', @attributes(messageId='trp:messageId', value1='$.event.value1',
                                          value2='$.event.value2')))
    define stream AddStream (messageId string, value1 long, value2 long);

    @sink(type='http-service-response', source.id='adder', message.id='{{{{messageId}}}}',
          headers="'X-Adder:1'", @map(type='json'))
    define stream ResultStream (messageId string, results long);

    from AddStream[value1 >= 0] select messageId, value1 + value2 as results insert into ResultStream;
    """)
    url = f"http://127.0.0.1:{port}/add"
    try:
        async with aiohttp.ClientSession() as client:
            async def add(a: int, b: int) -> tuple[int, Any]:
                async with client.post(url, json={"event": {"value1": a, "value2": b}}) as r:
                    return r.status, (await r.json() if r.status == 200 else await r.text())

            answers = await asyncio.gather(*(add(i, 100) for i in range(5)))
            assert [(s, body["event"]["results"]) for s, body in answers] == [(200, i + 100) for i in range(5)]
            async with client.post(url, json={"event": {"value1": 1, "value2": 1}}) as r:
                assert r.headers["X-Adder"] == "1"
            status, _ = await add(-1, 1)  # filtered out: no response comes
            assert status == 504
            async with client.post(url, data=b'{"event": ') as r:
                assert r.status == 400
    finally:
        await host.stop()


async def test_http_call_routes_responses_by_status_code():
    async def echo(request: web.Request) -> web.Response:
        doc = await request.json()
        n = doc["event"]["n"]
        if n >= 10:
            return web.json_response({"error": f"no item {n}"}, status=404)
        return web.json_response({"id": doc["event"]["id"], "square": n * n})

    app = web.Application()
    app.router.add_post("/square", echo)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    host = await _service(f"""
    @app:name('Caller')
    @source(type='inMemory', topic='Caller-in', @map(type='passThrough'))
    define stream Items (id string, n long);

    @sink(type='http-call', publisher.url='http://127.0.0.1:{port}/square', sink.id='squarer', @map(type='json'))
    define stream Calls (id string, n long);

    @source(type='http-call-response', sink.id='squarer', http.status.code='2\\d+',
            @map(type='json', @attributes(id='$.id', square='$.square', status='trp:http.status.code')))
    define stream Squares (id string, square long, status string);

    @source(type='http-call-response', sink.id='squarer', http.status.code='4\\d+',
            @map(type='json', @attributes(error='$.error', status='trp:http.status.code')))
    define stream Failures (error string, status string);

    from Items select id, n insert into Calls;
    """)
    try:
        squares, failures = [], []
        rt = host.apps["Caller"].runtime
        rt.add_callback("Squares", lambda evs: squares.extend(tuple(e.data) for e in evs))
        rt.add_callback("Failures", lambda evs: failures.extend(tuple(e.data) for e in evs))
        for item in [("a", 3), ("b", 12), ("c", 4)]:
            await broker.publish("Caller-in", [item])
        async with asyncio.timeout(10):
            while len(squares) + len(failures) < 3:
                await asyncio.sleep(0.02)
        assert squares == [("a", 9, "200"), ("c", 16, "200")]
        assert failures == [("no item 12", "404")]
    finally:
        await host.stop()
        await runner.cleanup()


async def test_sink_form_encodes_a_keyvalue_mapping_and_sends_get_without_a_body():
    """A keyvalue mapper's dict is sent form-encoded (Siddhi: application/x-www-form-urlencoded);
    ``method`` may be a template; GET carries no body; a Content-Type header in any case wins."""
    async with Server() as server:
        sink = HttpSink({"publisher.url": server.url(), "method": "{{m}}"}, name="out")
        await sink.connect()
        await sink.publish([({"a": 1, "b": "x y"}, {"method": "POST"}), (b"<e/>", {"method": "GET"}),
                            (b"<e/>", {"method": "PUT", "headers": "'content-type:text/x'"})])
        await sink.close()
    (m1, _, body1, h1), (m2, _, body2, h2), (m3, _, _, h3) = server.requests
    assert (m1, body1, h1["Content-Type"]) == ("POST", b"a=1&b=x+y", "application/x-www-form-urlencoded")
    assert (m2, body2, h2["Content-Type"]) == ("GET", b"", "application/xml")
    assert (m3, h3["Content-Type"]) == ("PUT", "text/x")


async def test_a_source_whose_url_is_taken_listens_once_the_other_one_stops():
    first, second = Host(), Host()
    url = f"http://127.0.0.1:{free_port()}/events"
    a = await _source(first, **{"receiver.url": url})
    b = await _source(second, **{"receiver.url": url})  # taken: logged, retried in the background
    try:
        assert a.ready and not b.ready and b.running
        await a.stop()
        await b.wait_ready(5)
        async with aiohttp.ClientSession() as client, client.post(url, data=b"1") as r:
            assert r.status == 200
        assert second.chunks == [[b"1"]] and first.chunks == []
    finally:
        await a.stop()
        await b.stop()


def test_source_receiver_url_defaults_to_siddhis():
    source = HttpSource({}, name="App/inStream/source0")
    assert source.options["receiver.url"] == "http://0.0.0.0:8280/App/inStream"
    with pytest.raises(SiddhiAppCreationError, match="receiver.url is required"):
        HttpSource({})


async def test_source_answers_a_cors_preflight_like_siddhi():
    """OPTIONS (even with basic auth on) gets 200 with Siddhi's Access-Control-Allow-* headers; no event."""
    host = Host()
    source = await _source(host, **{"basic.auth.enabled": "true", "basic.auth.username": "u",
                                    "basic.auth.password": "p"})
    try:
        async with aiohttp.ClientSession() as client, client.options(
                source.options["receiver.url"], headers={"Origin": "http://ui.example"}) as r:
            assert r.status == 200
            assert r.headers["Access-Control-Allow-Origin"] == "http://ui.example"
            assert r.headers["Access-Control-Allow-Methods"] == "POST"
            assert "Content-Type" in r.headers["Access-Control-Allow-Headers"]
        assert host.chunks == []
    finally:
        await source.stop()


def test_http_call_downloading_needs_a_download_path():
    from srota.connectors._http import HttpCallSink

    with pytest.raises(SiddhiAppCreationError, match="downloading.enabled='true' needs download.path"):
        HttpCallSink({"publisher.url": "http://127.0.0.1:9/x", "sink.id": "d", "downloading.enabled": "true"})
    HttpCallSink({"publisher.url": "http://127.0.0.1:9/x", "sink.id": "d", "downloading.enabled": "true",
                  "download.path": "{{path}}"})


class _Downloads:
    """An ``http-call`` sink saving 2xx bodies, its ``http-call-response`` source, and a
    server whose ``/file`` answers ``pieces`` (pausing after the first until ``go`` is set,
    or breaking the connection there with ``cut``)."""

    def __init__(self, pieces: list[bytes], cut: bool = False) -> None:
        self.pieces, self.cut = pieces, cut
        self.go = asyncio.Event()
        self.first_sent = asyncio.Event()

    async def _file(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.content_length = sum(map(len, self.pieces))
        await response.prepare(request)
        await response.write(self.pieces[0])
        self.first_sent.set()
        if self.cut:
            assert request.transport is not None
            request.transport.close()
            return response
        await self.go.wait()
        for piece in self.pieces[1:]:
            await response.write(piece)
        await response.write_eof()
        return response

    async def __aenter__(self) -> _Downloads:
        from srota.connectors._http import HttpCallResponseSource

        app = web.Application()
        app.router.add_get("/file", self._file)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        self.port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        self.host = Host()
        self.source = HttpCallResponseSource({"sink.id": f"dl{self.port}", "http.status.code": "2\\d+"})
        await self.source.start(self.host)
        return self

    def sink(self, path: Path) -> HttpSink:
        from srota.connectors._http import HttpCallSink

        return HttpCallSink({"publisher.url": f"http://127.0.0.1:{self.port}/file", "method": "GET",
                             "sink.id": f"dl{self.port}", "downloading.enabled": "true",
                             "download.path": str(path)})

    async def __aexit__(self, *exc: object) -> None:
        self.go.set()
        await self.source.stop()
        await self._runner.cleanup()


async def test_http_call_streams_a_download_to_a_part_file_renamed_when_complete(tmp_path):
    """A 2xx body is written as it arrives (the first piece is on disk while the rest is on
    its way), under ``.part`` until complete; the response source then gets the path."""
    pieces = [bytes([i]) * (1 << 20) for i in range(1, 5)]  # 4 MiB in four pieces
    target = tmp_path / "out" / "big.bin"
    part = target.with_name("big.bin.part")
    async with _Downloads(pieces) as dl:
        sink = dl.sink(target)
        await sink.connect()
        try:
            call = asyncio.create_task(sink.publish([(b"", {})]))
            async with asyncio.timeout(10):
                await dl.first_sent.wait()
                while not part.exists() or part.stat().st_size < len(pieces[0]):
                    await asyncio.sleep(0.01)
            assert not target.exists()  # the path never shows a partial download
            dl.go.set()
            await asyncio.wait_for(call, 10)
        finally:
            await sink.close()
        async with asyncio.timeout(5):
            while not dl.host.chunks:
                await asyncio.sleep(0.01)
    assert target.read_bytes() == b"".join(pieces)
    assert not part.exists()
    assert dl.host.chunks == [[str(target).encode()]]
    assert dl.host.properties[0]["download.path"] == str(target)
    assert dl.host.properties[0]["http.status.code"] == "200"


async def test_http_call_download_cut_off_is_retried_and_leaves_no_file(tmp_path):
    """A connection broken in the middle of a body: the call is unavailable (the host retries
    it) and neither the file nor its ``.part`` stays."""
    target = tmp_path / "big.bin"
    async with _Downloads([b"x" * 100_000, b"y" * 100_000], cut=True) as dl:
        sink = dl.sink(target)
        await sink.connect()
        try:
            with pytest.raises(ConnectionUnavailableError):
                await asyncio.wait_for(sink.publish([(b"", {})]), 10)
        finally:
            await sink.close()
        assert dl.host.chunks == []
    assert list(tmp_path.iterdir()) == []


async def test_http_call_download_that_cannot_be_written_is_dropped_and_logged(tmp_path):
    """``download.path`` under a plain file: the response is logged and dropped, the call done."""
    (tmp_path / "plain").write_text("not a directory")
    async with _Downloads([b"body"]) as dl:
        dl.go.set()
        sink = dl.sink(tmp_path / "plain" / "x.bin")
        await sink.connect()
        try:
            with capture_logs() as logs:
                await asyncio.wait_for(sink.publish([(b"", {})]), 10)
        finally:
            await sink.close()
        await asyncio.sleep(0.1)
        assert dl.host.chunks == []
    assert [e["event"] for e in logs if e["log_level"] == "error"] == ["http-call: cannot save the response"]
