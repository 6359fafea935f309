"""A sink that stalls for seconds, or fails: back-pressure, bounded memory, on.error routes,
and a shutdown while outputs are still in flight.

The sink is ``testGated`` (tests/integration/support.py): it publishes while its gate is
open, waits while it is closed (a broker that stopped acknowledging), and fails while told
to (a broker that went away).  The source is Kafka (tansu), so commits can be checked.
"""
from __future__ import annotations

import asyncio
import uuid
from typing import Any

import orjson
import pytest
from srota.service.host import ServiceHost

from tests.integration.support import (
    committed,
    config,
    gate,
    kafka_source,
    produce,
    running_host,
    wait_until,
)

pytestmark = pytest.mark.integration

BATCH = 100
SINK_BUFFER = 300


def _app(kb: Any, src: str, group: str, gate_name: str, on_error: str = "LOG", fault_gate: str | None = None) -> str:
    faults, fault_query = "", ""
    if fault_gate is not None:
        faults = f"""
        @sink(type='testGated', gate='{fault_gate}', @map(type='passThrough'))
        define stream Failed (n int, error string);
        """
        fault_query = "from !Out select n, convert(_error, 'string') as error insert into Failed;"
    return f"""
    @app:name('Stall')
    {kafka_source(kb, src, group, **{"batch.size": str(BATCH)})}
    define stream In (n int);
    {"@OnError(action='STREAM')" if on_error == "STREAM" else ""}
    @sink(type='testGated', gate='{gate_name}', on.error='{on_error}', @map(type='passThrough'))
    define stream Out (n int);
    {faults}
    from In select n insert into Out;
    {fault_query}
    """


def _consumed(host: ServiceHost) -> int:
    return sum(sum(parts.values()) for parts in host.apps["Stall"].consumed.values())


async def _wait_for_lag(host: ServiceHost, series: str, expected: int) -> None:
    """Wait for the lag gauge (updated once a second) to read ``expected``; on a timeout say
    what it read instead (a CI run once timed out here without telling)."""
    def lines() -> list[str]:
        return [line for line in host.metrics.render().decode().splitlines() if line.startswith(series)]
    try:
        await wait_until(lambda: f"{series} {expected}.0" in lines(), 10, what="the lag gauge")
    except TimeoutError:
        source = host.apps["Stall"].sources[0].source
        raise AssertionError(f"lag gauge {lines()} never read {expected}; source.lag()={source.lag()}, "
                             f"consumed={host.apps['Stall'].consumed}, paused={source.paused}") from None


async def test_stalled_sink_pauses_the_source_and_memory_stays_bounded(kafka_broker: Any) -> None:
    kb = kafka_broker
    src, group, name = await kb.create_topic(), f"g-{uuid.uuid4().hex[:8]}", f"stall-{uuid.uuid4().hex[:6]}"
    g = gate(name)
    g.open.clear()
    async with running_host(config(sink_buffer=SINK_BUFFER), _app(kb, src, group, name)) as host:
        app = host.apps["Stall"]
        source = app.sources[0].source
        await produce(kb.bootstrap_servers, src, [orjson.dumps({"n": i}) for i in range(3000)])
        await wait_until(lambda: source.paused, 20, what="the source to pause")
        consumed_at_pause = _consumed(host)
        await asyncio.sleep(2.0)  # the stall itself: nothing may move while it lasts
        assert _consumed(host) == consumed_at_pause, "the source kept consuming while paused"
        assert app.max_rows_queued <= SINK_BUFFER + BATCH, app.max_rows_queued
        assert consumed_at_pause <= SINK_BUFFER + BATCH
        assert (await committed(kb.bootstrap_servers, group, src, 1)) == {0: None}, "committed before the flush"
        lag = f'srota_consumer_lag{{app="Stall",partition="0",topic="{src}"}}'
        await _wait_for_lag(host, lag, 3000 - consumed_at_pause)
        g.open.set()
        await wait_until(lambda: len(g.published) >= 3000, 30, what="every output after the stall")
        await wait_until(lambda: committed(kb.bootstrap_servers, group, src, 1), what="the commit")
        assert (await committed(kb.bootstrap_servers, group, src, 1)) == {0: 3000}
        assert not source.paused
        await _wait_for_lag(host, lag, 0)
    assert sorted(p[0] for p in g.published) == list(range(3000))
    assert app.max_rows_queued <= SINK_BUFFER + BATCH


async def test_shutdown_commits_what_it_flushed_before_leaving_the_group(kafka_broker: Any) -> None:
    """SIGTERM while the sink holds outputs: the shutdown waits for them, then commits, and only
    then closes the consumer (a consumer that left its group can no longer commit)."""
    kb = kafka_broker
    src, group, name = await kb.create_topic(), f"g-{uuid.uuid4().hex[:8]}", f"stall-{uuid.uuid4().hex[:6]}"
    g = gate(name)
    g.open.clear()
    host = ServiceHost(config(), app_texts=[_app(kb, src, group, name)])
    await host.start()
    try:
        await wait_until(host.is_ready, 30, what="the service")
        await produce(kb.bootstrap_servers, src, [orjson.dumps({"n": i}) for i in range(200)])
        await wait_until(lambda: _consumed(host) == 200 and g.waiting, 20, what="outputs held by the sink")
    finally:
        stopping = asyncio.create_task(host.stop())
        await asyncio.sleep(0.2)  # the shutdown is now waiting for the sink
        g.open.set()
        await stopping
    assert len(g.published) == 200
    assert (await committed(kb.bootstrap_servers, group, src, 1)) == {0: 200}


async def test_on_error_wait_holds_until_the_sink_recovers(kafka_broker: Any) -> None:
    kb = kafka_broker
    src, group, name = await kb.create_topic(), f"g-{uuid.uuid4().hex[:8]}", f"wait-{uuid.uuid4().hex[:6]}"
    g = gate(name)
    g.failing = ConnectionError("broker gone (test)")
    async with running_host(config(sink_buffer=SINK_BUFFER), _app(kb, src, group, name, "WAIT")) as host:
        source = host.apps["Stall"].sources[0].source
        await produce(kb.bootstrap_servers, src, [orjson.dumps({"n": i}) for i in range(1000)])
        await wait_until(lambda: source.paused, 20, what="the publishers to be held")
        assert (await committed(kb.bootstrap_servers, group, src, 1)) == {0: None}
        await wait_until(lambda: host.metrics.sink_errors.labels("Stall", "Out")._value.get() >= 3, 10,
                         what="retries")
        g.failing = None
        await wait_until(lambda: len(g.published) >= 1000, 30, what="every output after the recovery")
        await wait_until(lambda: committed(kb.bootstrap_servers, group, src, 1), what="the commit")
        assert (await committed(kb.bootstrap_servers, group, src, 1)) == {0: 1000}
    assert sorted(p[0] for p in g.published) == list(range(1000))


async def test_on_error_stream_sends_failed_outputs_to_the_fault_stream(kafka_broker: Any) -> None:
    kb = kafka_broker
    src, group = await kb.create_topic(), f"g-{uuid.uuid4().hex[:8]}"
    name, faults = f"stream-{uuid.uuid4().hex[:6]}", f"faults-{uuid.uuid4().hex[:6]}"
    g = gate(name)
    g.failing = ConnectionError("broker gone (test)")
    async with running_host(config(), _app(kb, src, group, name, "STREAM", fault_gate=faults)):
        await produce(kb.bootstrap_servers, src, [orjson.dumps({"n": i}) for i in range(100)])
        await wait_until(lambda: len(gate(faults).published) >= 100, 20, what="the failed outputs")
        g.failing = None
        await produce(kb.bootstrap_servers, src, [orjson.dumps({"n": i}) for i in range(100, 110)])
        await wait_until(lambda: len(g.published) >= 10, 20, what="outputs after the recovery")
        await wait_until(lambda: committed(kb.bootstrap_servers, group, src, 1), what="the commit")
        assert (await committed(kb.bootstrap_servers, group, src, 1)) == {0: 110}
    failed = gate(faults).published
    assert sorted(n for n, _error in failed) == list(range(100))
    assert all("broker gone" in error for _n, error in failed)
    assert sorted(p[0] for p in g.published) == list(range(100, 110))


async def test_dead_letters_wait_for_an_unreachable_dead_letter_sink(kafka_broker: Any) -> None:
    """A bad payload while the dead-letter sink is down: the source waits (nothing of the chunk
    enters the app, nothing is committed), and once the sink is back the dead letter goes out
    and the stream goes on."""
    kb = kafka_broker
    src, group = await kb.create_topic(), f"g-{uuid.uuid4().hex[:8]}"
    out, dead = f"out-{uuid.uuid4().hex[:6]}", f"dead-{uuid.uuid4().hex[:6]}"
    gate(dead).failing = ConnectionError("dead-letter broker gone (test)")
    refs = {"dead": {"type": "testGated", "gate": dead}}
    source = kafka_source(kb, src, group, **{"dead.letter.ref": "dead"})
    app = f"""
    @app:name('Stall')
    {source}
    define stream In (n int);
    @sink(type='testGated', gate='{out}', @map(type='passThrough'))
    define stream Out (n int);
    from In select n insert into Out;
    """
    async with running_host(config(refs=refs), app) as host:
        await produce(kb.bootstrap_servers, src, [b'{"n": 1}', b"not json", b'{"n": 2}'])
        await wait_until(lambda: host.metrics.sink_errors.labels("Stall", "In")._value.get() >= 2, 10,
                         what="dead-letter retries")
        assert gate(out).published == [] and _consumed(host) == 0
        assert (await committed(kb.bootstrap_servers, group, src, 1)) == {0: None}
        gate(dead).failing = None
        await wait_until(lambda: len(gate(out).published) == 2, 20, what="the stream to go on")
        await wait_until(lambda: committed(kb.bootstrap_servers, group, src, 1), what="the commit")
        assert (await committed(kb.bootstrap_servers, group, src, 1)) == {0: 3}
    assert gate(dead).published == [b"not json"]
    assert [p[0] for p in gate(out).published] == [1, 2]
