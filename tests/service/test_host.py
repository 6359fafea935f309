"""The service host end to end over in-process connectors (no broker needed)."""
from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp
import orjson
import pytest
from srota.connectors._inmemory import broker
from srota.grammar.errors import SiddhiAppCreationError
from srota.service.config import HttpConfig, ServiceConfig
from srota.service.host import ServiceHost

from tests.integration.support import wait_until

APP = """
@app:name('HostTest')
@OnError(action='STREAM')
@source(type='inMemory', topic='{prefix}-in', @map(type='json'))
define stream Readings (id string, temp double);

@sink(type='inMemory', topic='{prefix}-out-{{{{id}}}}', @map(type='json'))
define stream Alerts (id string, temp double);

@sink(type='inMemory', topic='{prefix}-faults', @map(type='passThrough'))
define stream Faults (temp double, error string);

from Readings[temp > 30] select id, temp insert into Alerts;
from !Readings select temp, convert(_error, 'string') as error insert into Faults;
"""


async def _collect(topic: str, n: int, timeout: float = 5.0) -> list[Any]:
    sub = broker.subscribe(topic)
    got: list[Any] = []
    try:
        async with asyncio.timeout(timeout):
            while len(got) < n:
                payload, _ = await sub.queue.get()
                got.append(payload)
    finally:
        broker.unsubscribe(sub)
    return got


@pytest.fixture
async def host(request):
    prefix = request.node.name
    config = ServiceConfig(http=HttpConfig(port=0, query_enabled=True, query_token="s3cret"))
    h = ServiceHost(config, app_texts=[APP.format(prefix=prefix)])
    await h.start()
    yield h, prefix
    await h.stop()


async def test_json_in_filter_json_out_with_templated_topic(host):
    h, prefix = host
    waiter = asyncio.create_task(_collect(f"{prefix}-out-d1", 1))
    await asyncio.sleep(0.05)
    await broker.publish(f"{prefix}-in", b'{"event": {"id": "d1", "temp": 35.5}}')
    await broker.publish(f"{prefix}-in", b'{"event": {"id": "d2", "temp": 20.0}}')
    out = await waiter
    assert orjson.loads(out[0]) == {"event": {"id": "d1", "temp": 35.5}}


async def test_malformed_payload_goes_to_the_fault_stream_and_the_service_goes_on(host):
    h, prefix = host
    faults = asyncio.create_task(_collect(f"{prefix}-faults", 1))
    good = asyncio.create_task(_collect(f"{prefix}-out-d3", 1))
    await asyncio.sleep(0.05)
    await broker.publish(f"{prefix}-in", b'{"event": {"id": "d1", "temp": ')
    await broker.publish(f"{prefix}-in", b'{"event": {"id": "d3", "temp": 31.0}}')
    (fault,) = await faults
    assert fault[0] is None and fault[1]
    assert orjson.loads((await good)[0])["event"]["id"] == "d3"
    text = h.metrics.render().decode()
    assert 'srota_mapping_errors_total{app="HostTest",stream="Readings"} 1.0' in text


async def test_admin_endpoints(host):
    h, prefix = host
    base = f"http://127.0.0.1:{h.admin.port}"
    # A query token is configured: reads need a token too, the probes do not.
    async with aiohttp.ClientSession() as session:
        for path in ("/apps", "/metrics", "/version"):
            async with session.get(f"{base}{path}") as r:
                assert r.status == 401, path
    async with aiohttp.ClientSession(headers={"Authorization": "Bearer s3cret"}) as session:
        async with session.get(f"{base}/health") as r:
            assert r.status == 200
        async with session.get(f"{base}/ready") as r:
            assert r.status == 200 and (await r.json())["ready"] is True
        async with session.get(f"{base}/apps") as r:
            apps = await r.json()
            assert apps[0]["name"] == "HostTest" and "Readings" in apps[0]["streams"]
        async with session.get(f"{base}/metrics") as r:
            assert "srota_stream_events_total" in await r.text()
        async with session.post(f"{base}/query", data=b"nonsense") as r:
            assert r.status == 400


async def test_metrics_show_pattern_pending_and_limit_breaches():
    app = ("@app:name('Limits') @app:limits(max.window.events='2') define stream S (v long);"
           "from S#window.time(1 hour) select count() as n insert into Out;"
           "from every e1=S -> e2=S[v < 0] select e1.v as a insert into Out2;")
    host = ServiceHost(ServiceConfig(http=HttpConfig(enabled=False)), app_texts=[app])
    await host.start()
    try:
        h = host.runtimes["Limits"].get_input_handler("S")
        for i in range(5):
            h.send([i])
        text = host.metrics.render().decode()
        assert 'srota_limit_breaches_total{app="Limits",element="TimeWindow"} 3.0' in text
        assert 'srota_pattern_pending{app="Limits"' in text
    finally:
        await host.stop()


async def test_config_limits_reach_the_engine():
    from srota.service.config import LimitsConfig

    app = "@app:name('L') define stream S (v long); from S#window.time(1 hour) select count() as n insert into Out;"
    config = ServiceConfig(http=HttpConfig(enabled=False), limits=LimitsConfig(max_window_events=3,
                                                                                max_pending_matches=7))
    host = ServiceHost(config, app_texts=[app])
    await host.start()
    try:
        ctx = host.runtimes["L"].context
        assert ctx.limits.max_window_events == 3 and ctx.pattern_max_pending == 7
    finally:
        await host.stop()


async def test_the_collector_runs_at_the_configured_pace_while_the_service_runs():
    import gc

    before = gc.get_threshold()
    app = "@app:name('G') define stream S (v long); from S select v insert into Out;"
    host = ServiceHost(ServiceConfig(http=HttpConfig(enabled=False), gc_threshold=12_345), app_texts=[app])
    await host.start()
    try:
        assert gc.get_threshold() == (12_345, *before[1:])
    finally:
        await host.stop()
    assert gc.get_threshold() == before
    broken = ServiceHost(ServiceConfig(http=HttpConfig(enabled=False)), app_texts=["define stream S (v lng);"])
    with pytest.raises(SiddhiAppCreationError):
        await broken.start()
    assert gc.get_threshold() == before  # put back when the start fails too


async def test_a_slow_aggregation_store_pauses_the_sources(tmp_path: Any) -> None:
    """While an aggregation store's writer is stuck (a slow or failing disk), its write queue
    fills; the host pauses the sources at half of its bound, rather than blocking the event
    loop at the bound, and resumes them once it has drained."""
    import threading

    from srota.service.host import AppHost
    from srota.service.metrics import Metrics

    app = f"""
    @app:name('SlowStore')
    @source(type='inMemory', topic='slow-store-in', @map(type='json'))
    define stream In (k string, v long, ts long);
    @store(type='sqlite', database='{tmp_path / "agg.db"}')
    define aggregation A from In select k, sum(v) as total group by k aggregate by ts every sec;
    """
    host = AppHost(None, app, ServiceConfig(), Metrics())
    store = host.runtime.context.aggregations["A"].store
    store.max_queued = store._queue.maxsize = 8
    release = threading.Event()
    await host.start()
    source = host.sources[0].source
    await source.wait_ready(5)

    # event times ahead of the wall clock: the aggregation's timer (at the first event's second
    # end) stays pending and each event closes the previous second (past ones: all at once)
    t0 = (int(time.time()) + 86_400) * 1000

    async def send(i: int) -> None:
        event = {"event": {"k": "k", "v": 1, "ts": t0 + i * 1000}}
        await broker.publish("slow-store-in", orjson.dumps(event))

    await send(0)  # the first event reads the tables (a restart check): before the writer sticks
    junction = host.runtime.context.junctions["In"]
    for _ in range(500):
        if junction.events_in:
            break
        await asyncio.sleep(0.02)
    stuck = threading.Event()

    def stick(conn: Any) -> None:
        stuck.set()
        release.wait(20)

    store._put_job(stick)
    try:
        # the writer must be stuck before the writes come (it may still be busy with the
        # first event's restart check)
        assert await asyncio.to_thread(stuck.wait, 10), "the store's writer never took the job"
        for i in range(1, 8):  # each event completes the previous one-second bucket: one write each
            await send(i)
        for _ in range(500):
            if source.paused:
                break
            await asyncio.sleep(0.02)
        assert source.paused, f"backlog {store.backlog} seq {store._seq} in {host.runtime.context.junctions['In'].events_in} : the sources went on"
        release.set()
        for _ in range(500):
            if not source.paused:
                break
            await asyncio.sleep(0.02)
        assert not source.paused
    finally:
        release.set()
        await host.stop_sources()
        await host.close()


MESSAGE_CHUNKS_APP = """
@app:name('MessageChunks')
@source(type='inMemory', topic='{prefix}-in', @map(type='json'))
define stream Readings (id string, temp double);

@sink(type='inMemory', topic='{prefix}-totals', @map(type='passThrough'))
define stream Totals (n long, total double);

@sink(type='inMemory', topic='{prefix}-hot', @map(type='json'))
define stream Hot (id string, temp double);

from Readings select count() as n, sum(temp) as total insert into Totals;
from Readings[temp > 30] select id, temp insert into Hot;
"""


async def test_each_message_of_a_delivery_is_a_chunk_of_its_own(request):
    """Siddhi sends each message's events as one chunk: an aggregating query emits a row per
    message, and a grouping sink writes a message per input message, however many messages
    a source delivers at once (they used to go in as one chunk: one row, one JSON array)."""
    from srota.connectors.base import Message

    prefix = request.node.name
    h = ServiceHost(ServiceConfig(http=HttpConfig(port=0)), app_texts=[MESSAGE_CHUNKS_APP.format(prefix=prefix)])
    await h.start()
    try:
        totals = asyncio.create_task(_collect(f"{prefix}-totals", 3))
        hot = asyncio.create_task(_collect(f"{prefix}-hot", 2))
        await asyncio.sleep(0.05)
        app = h.apps["MessageChunks"]
        payloads = [b'{"event": {"id": "a", "temp": 31.0}}', b'{"event": {"id": "b", "temp": 20.0}}',
                    b'{"event": {"id": "c", "temp": 40.0}}']
        await app._take_chunk(app.sources[0], [Message(p, {}) for p in payloads])
        assert [tuple(p) for p in await totals] == [(1, 31.0), (2, 51.0), (3, 91.0)]
        assert [orjson.loads(p) for p in await hot] == [{"event": {"id": "a", "temp": 31.0}},
                                                        {"event": {"id": "c", "temp": 40.0}}]
    finally:
        await h.stop()


REJECTING_APP = """
@app:name('RejectGrouped')
@OnError(action='STREAM')
@source(type='inMemory', topic='{prefix}-in', @map(type='json'))
define stream Readings (id string, temp double);

@OnError(action='STREAM')
@sink(type='refusing', on.error='STREAM', @map(type='json'))
define stream Out (id string, temp double);

@sink(type='inMemory', topic='{prefix}-refused', @map(type='passThrough'))
define stream Refused (id string);

from Readings select id, temp insert into Out;
from !Out select id insert into Refused;
"""


async def test_a_refused_grouped_message_routes_the_rows_it_carried(request):
    """The json sink mapper writes a chunk of several events as one message: when the
    transport refuses that message, the rows routed are that message's, not the rows at the
    message's index (which belonged to another message)."""
    from srota.connectors.base import Message, RejectedError, Sink
    from srota.engine.registry import Kind, extension

    @extension(Kind.SINK, "refusing", doc="test: refuses the second item of a publish")
    class Refusing(Sink):
        type_name = "refusing"

        async def connect(self) -> None:
            pass

        async def publish(self, items: Any) -> None:
            if len(items) > 1:
                raise RejectedError("refused", {1: "too large"})

        async def close(self) -> None:
            pass

    prefix = request.node.name
    h = ServiceHost(ServiceConfig(http=HttpConfig(port=0)), app_texts=[REJECTING_APP.format(prefix=prefix)])
    await h.start()
    try:
        refused = asyncio.create_task(_collect(f"{prefix}-refused", 2))
        await asyncio.sleep(0.05)
        app = h.apps["RejectGrouped"]
        first = b'[{"event": {"id": "a1", "temp": 1.0}}, {"event": {"id": "a2", "temp": 2.0}}]'
        second = b'[{"event": {"id": "b1", "temp": 3.0}}, {"event": {"id": "b2", "temp": 4.0}}]'
        await app._take_chunk(app.sources[0], [Message(first, {}), Message(second, {})])
        assert sorted(tuple(p)[0] for p in await refused) == ["b1", "b2"]
    finally:
        await h.stop()


def test_serve_gives_back_the_signal_handlers_the_process_had(tmp_path: Any) -> None:
    """While it runs, SIGTERM stops the service; after it, in a run that stopped and in one
    whose app failed to start, the process's own handlers are back (not SIG_DFL, which
    would end a test runner on its next SIGTERM without teardown)."""
    import signal

    from srota.service.host import serve

    good = tmp_path / "good.siddhi"
    good.write_text("define stream S (a int);\nfrom S select a insert into O;\n")
    bad = tmp_path / "bad.siddhi"
    bad.write_text("define stream S (a int);\nfrom S select b insert into O;\n")
    config = ServiceConfig(http=HttpConfig(port=0))

    def own(signum: int, frame: Any) -> None:
        raise AssertionError("the service's handler should be the one called")

    async def stopped_by_sigterm() -> str | None:
        async def send_term() -> None:
            await asyncio.sleep(0.3)
            signal.raise_signal(signal.SIGTERM)

        kill = asyncio.create_task(send_term())
        try:
            return await serve(config, [good])
        finally:
            await kill

    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    signal.signal(signal.SIGTERM, own)
    try:
        assert asyncio.run(asyncio.wait_for(stopped_by_sigterm(), 30)) is None
        assert signal.getsignal(signal.SIGTERM) is own
        assert signal.getsignal(signal.SIGINT) is before[signal.SIGINT]
        with pytest.raises(SiddhiAppCreationError):
            asyncio.run(serve(config, [bad]))
        assert signal.getsignal(signal.SIGTERM) is own
        assert signal.getsignal(signal.SIGINT) is before[signal.SIGINT]
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


@pytest.mark.parametrize("error", ["StoreReplacedError", "StoreUnavailableError"])
async def test_an_on_demand_query_whose_store_is_gone_answers_503_and_the_admin_goes_on(host, error):
    """A store that was replaced (another process owns it now) or stayed unreachable raises a
    BaseException, which must stop event processing; from an on-demand query (the admin's
    thread) it is the answer's failure only: 503 with the reason, on both query APIs, and the
    admin serves the next request."""
    from srota.engine.stores import database

    h, _ = host
    runtime = h.runtimes["HostTest"]
    gone = getattr(database, error)

    def failing_query(text: str) -> list[Any]:
        raise gone("table 'T' has a newer owner: this process was replaced")

    runtime.query = failing_query  # (an instance attribute: the next test's runtime is a new one)
    base = f"http://127.0.0.1:{h.admin.port}"
    async with aiohttp.ClientSession(headers={"Authorization": "Bearer s3cret"}) as session:
        async with session.post(f"{base}/query", json={"app": "HostTest", "query": "from T select *"}) as r:
            assert r.status == 503
            assert "newer owner" in (await r.json())["error"]
        async with session.post(f"{base}/stores/query", json={"appName": "HostTest", "query": "from T select *"}) as r:
            assert r.status == 503
            body = await r.json()
            assert body["type"] == "error" and "newer owner" in body["message"]
        async with session.get(f"{base}/health") as r:
            assert r.status == 200


async def test_a_timer_that_meets_a_database_outage_stops_the_app_as_a_chunk_does(host):
    """A timer's work (a time window's expiry, a trigger, an aggregation's roll-up) that meets
    a store unreachable past its max.outage raises a BaseException on the scheduler's thread.
    It was logged and the app went on, untouched until a chunk met the same store; an idle
    stream could run on so for good.  Now the app stops as for a chunk; other failures of a
    timer are logged and the timers go on."""
    from srota.engine.stores.database import StoreUnavailableError

    h, _ = host
    app = h.apps["HostTest"]
    scheduler = app.runtime.context.scheduler
    ran: list[int] = []

    def failing(at: int) -> None:
        raise ValueError("a timer's own bug")

    def outage(at: int) -> None:
        raise StoreUnavailableError("aggregation 'A': the database stayed unreachable for more than 30 s")

    now = app.runtime.context.clock.now()
    scheduler.schedule(now, failing)
    scheduler.schedule(now + 50, ran.append)
    await wait_until(lambda: ran, 5, what="the timer after the failing one")
    assert not app.failed  # the timers go on after an ordinary failure
    scheduler.schedule(app.runtime.context.clock.now(), outage)
    await wait_until(lambda: app.failed, 5, what="the app to stop")
    assert "stayed unreachable" in app.failed
