"""Hostile payloads through the running service (the mapper-level part is test_payloads.py).

Malformed, truncated, oversized, binary and unusual-unicode payloads arrive on Kafka for a
JSON and a CSV stream.  For every record: it is either mapped (its output carries its
offset) or on the error route -- counted, on the fault stream, and in the dead-letter topic
with its original bytes and the reason -- never both, never lost; the service goes on, and
every offset is committed (no payload is redelivered forever).
"""
from __future__ import annotations

import uuid
from typing import Any

import pytest
from srota.connectors._inmemory import broker

from tests.integration.support import (
    committed,
    config,
    kafka_sink,
    kafka_source,
    produce,
    read_topic,
    running_host,
    wait_until,
)

pytestmark = pytest.mark.integration

LIMIT = 64 * 1024
UNICODE_ID = "\u202e\u00e9\u4e2d\U0001f600 \u0000x"  # bidi override, accents, CJK, emoji, NUL
CSV_UNICODE_ID = UNICODE_ID.replace("\u0000", "")  # the csv mapper rejects NUL as binary data

MUST_FAIL = {
    "json": [b"", b"\x00\x01\x02\xff\xfe", b'{"id": "a", "n": ', b"{" * 10_000,
             '{"id": "\ud800", "n": 1}'.encode("utf-8", "surrogatepass"), b'{"id": "a", "n": "seven"}',
             b'{"id": "a"}', b'{"id": "a", "n": 1, "pad": "' + b"x" * LIMIT + b'"}'],
    "csv": [b"\xff\xfe,1", b"a", b"a,notanumber", f'"{UNICODE_ID}",2'.encode(), b'"unterminated,1', b"a," + b"9" * (LIMIT + 1)],
}
MUST_MAP = {
    "json": [b'{"id": "ok", "n": 1}', '{{"id": "{}", "n": 2}}'.format(UNICODE_ID.replace("\u0000", "\\u0000")).encode(),
             b'  {"n": 3, "id": "spaced"}\n'],
    "csv": [b"ok,1", f'"{CSV_UNICODE_ID}",2'.encode(), b'"quoted, with comma",3'],
}
# Outcome left to the mapper (either is fine here; the mapper tests pin them down).
EITHER = {
    "json": [b"[" * 10_000 + b"]" * 10_000, b'{"id": "a", "n": 99999999999999999999999}', b"[]",
             b'{"event": {"id": "wrapped", "n": 3}}'],
    "csv": [b"", b"a,1,extra,columns", b"\xef\xbb\xbfa,1", "a,\u0661".encode()],
}


async def test_hostile_payloads_through_the_service(kafka_broker: Any) -> None:
    kb = kafka_broker
    topics = {kind: await kb.create_topic() for kind in ("json", "csv")}
    out, faults, dead = await kb.create_topic(), await kb.create_topic(), await kb.create_topic()
    group = f"g-{uuid.uuid4().hex[:8]}"
    refs = {"dead": {"type": "kafka", "bootstrap.servers": kb.bootstrap_servers, "topic": dead}}
    dl = {"dead.letter.ref": "dead"}
    json_source = kafka_source(kb, topics["json"], group, "@map(type='json', fail.on.missing.attribute='true', "
                               "@attributes(id='$.id', n='$.n', off='trp:offset'))", **dl)
    csv_source = kafka_source(kb, topics["csv"], group, "@map(type='csv', fail.on.unknown.attribute='true', "
                              "@attributes(id='0', n='1', off='trp:offset'))", **dl)
    app = f"""
    @app:name('Hostile')
    @OnError(action='STREAM')
    {json_source}
    define stream J (id string, n int, off long);
    @OnError(action='STREAM')
    {csv_source}
    define stream C (id string, n int, off long);

    {kafka_sink(kb, out)}
    define stream Out (kind string, id string, n int, off long);
    {kafka_sink(kb, faults)}
    define stream Faults (kind string, error string);

    from J select 'json' as kind, id, n, off insert into Out;
    from C select 'csv' as kind, id, n, off insert into Out;
    from !J select 'json' as kind, convert(_error, 'string') as error insert into Faults;
    from !C select 'csv' as kind, convert(_error, 'string') as error insert into Faults;
    """
    sent: dict[str, list[bytes]] = {}
    for kind in ("json", "csv"):
        # Interleaved, so good records follow bad ones: the service must go on after each.
        payloads = [p for group_ in zip(MUST_FAIL[kind], MUST_MAP[kind] * 3, strict=False) for p in group_]
        payloads += MUST_FAIL[kind][len(payloads) // 2:] + EITHER[kind] + MUST_MAP[kind]
        sent[kind] = payloads
    total = sum(len(v) for v in sent.values())
    async with running_host(config(max_payload_bytes=LIMIT, refs=refs), app) as host:
        for kind, payloads in sent.items():
            await produce(kb.bootstrap_servers, topics[kind], payloads)

        async def all_committed() -> bool:
            for k in sent:
                if (await committed(kb.bootstrap_servers, group, topics[k], 1))[0] != len(sent[k]):
                    return False
            return True

        await wait_until(all_committed, 30, what="every offset committed")
        outputs = [r.json()["event"] for r in await read_topic(kb.bootstrap_servers, out)]
        dead_letters = await read_topic(kb.bootstrap_servers, dead)
        fault_events = [r.json()["event"] for r in await read_topic(kb.bootstrap_servers, faults)]
        metrics = host.metrics.render().decode()

    mapped = {(o["kind"], o["off"]) for o in outputs}
    dead_by = {}
    for r in dead_letters:
        h = dict(r.headers)
        kind = "json" if h["srota.stream"] == b"J" else "csv"
        offset = int(h["srota.source.offset"])
        assert (kind, offset) not in dead_by, "a payload dead-lettered twice"
        assert h["srota.error"], "no reason"
        assert r.value == sent[kind][offset], "the dead letter is not the original bytes"
        dead_by[(kind, offset)] = h["srota.error"].decode()
    for kind, payloads in sent.items():
        for offset, payload in enumerate(payloads):
            key = (kind, offset)
            assert not (key in mapped and key in dead_by), f"{kind} {payload[:40]!r} both mapped and dead-lettered"
            if payload in MUST_FAIL[kind]:
                assert key in dead_by, f"{kind} {payload[:40]!r} should have failed"
            elif payload in MUST_MAP[kind]:
                assert key in mapped, f"{kind} {payload[:40]!r} should have mapped"
            else:
                assert payload in EITHER[kind]
    assert len(fault_events) == len(dead_by)
    assert any("exceeds the limit" in reason for reason in dead_by.values())
    unicode_out = {o["kind"]: o["id"] for o in outputs if o["n"] == 2}
    assert unicode_out == {"json": UNICODE_ID, "csv": CSV_UNICODE_ID}
    assert 'srota_mapping_errors_total{app="Hostile",stream="J"}' in metrics
    assert 'srota_oversized_payloads_total{app="Hostile",stream="C"} 1.0' in metrics
    assert len(mapped) + len(dead_by) <= total


async def test_a_mapper_bug_goes_to_the_error_route_instead_of_redelivering_forever(kafka_broker: Any) -> None:
    """A mapper that raises something other than MappingError (a bug) must not turn a record
    into a poison pill: before, the exception reached the Kafka source, which rewound and
    delivered the same chunk again, forever."""
    kb = kafka_broker
    src, out = await kb.create_topic(), await kb.create_topic()
    group = f"g-{uuid.uuid4().hex[:8]}"
    app = f"""
    @app:name('Buggy')
    {kafka_source(kb, src, group)}
    define stream In (n int);
    {kafka_sink(kb, out)}
    define stream Out (n int);
    from In select n insert into Out;
    """
    async with running_host(config(), app) as host:
        binding = host.apps["Buggy"].sources[0]
        real = binding.mapper.map

        def buggy(payload: Any, properties: Any) -> Any:
            if payload == b"boom":
                raise RuntimeError("mapper bug")
            return real(payload, properties)

        binding.mapper.map = buggy
        await produce(kb.bootstrap_servers, src, [b'{"n": 1}', b"boom", b'{"n": 2}'])
        records = await read_topic(kb.bootstrap_servers, out, min_count=2)
        await wait_until(lambda: committed(kb.bootstrap_servers, group, src, 1), what="the commit")
        assert (await committed(kb.bootstrap_servers, group, src, 1)) == {0: 3}
        assert 'srota_mapping_errors_total{app="Buggy",stream="In"} 1.0' in host.metrics.render().decode()
    assert [r.json()["event"]["n"] for r in records] == [1, 2]


async def test_pass_through_objects_that_do_not_fit_the_schema() -> None:
    """In-process payloads (Python objects) of the wrong shape go to the fault stream."""
    prefix = f"pt-{uuid.uuid4().hex[:6]}"
    app = f"""
    @app:name('Objects')
    @OnError(action='STREAM')
    @source(type='inMemory', topic='{prefix}-in', @map(type='passThrough'))
    define stream In (id string, n int);
    @sink(type='inMemory', topic='{prefix}-out', @map(type='passThrough'))
    define stream Out (id string, n int);
    @sink(type='inMemory', topic='{prefix}-faults', @map(type='passThrough'))
    define stream Faults (error string);
    from In select id, n insert into Out;
    from !In select convert(_error, 'string') as error insert into Faults;
    """
    outs, faults = broker.subscribe(f"{prefix}-out"), broker.subscribe(f"{prefix}-faults")
    try:
        async with running_host(config(), app):
            for payload in [("a", 1), None, 12345, ("only-one",), {"id": "x"}, b"\xff", ("b", 2)]:
                await broker.publish(f"{prefix}-in", payload)
            await wait_until(lambda: outs.queue.qsize() >= 2 and faults.queue.qsize() >= 5, 10,
                             what="outputs and faults")
    finally:
        broker.unsubscribe(outs)
        broker.unsubscribe(faults)
    got = [outs.queue.get_nowait()[0] for _ in range(outs.queue.qsize())]
    assert [tuple(r) for r in got] == [("a", 1), ("b", 2)]
    assert faults.queue.qsize() == 5


async def test_a_dead_letter_larger_than_the_broker_takes_is_logged_once_and_the_source_goes_on(
        kafka_broker: Any) -> None:
    """The dead-letter sink refuses records over 2,000 bytes (``max.request.size``, what a
    broker's ``message.max.bytes`` does): that dead letter is logged and counted with its
    reason, never retried; the others are published once each, and the source goes on."""
    kb = kafka_broker
    src, out, dead = await kb.create_topic(), await kb.create_topic(), await kb.create_topic()
    group = f"g-{uuid.uuid4().hex[:8]}"
    refs = {"dead": {"type": "kafka", "bootstrap.servers": kb.bootstrap_servers, "topic": dead,
                     "optional.configuration": "max.request.size:2000"}}
    app = f"""
    @app:name('BigDead')
    {kafka_source(kb, src, group, "@map(type='json')", **{"dead.letter.ref": "dead"})}
    define stream In (id string, n int);
    {kafka_sink(kb, out)}
    define stream Out (id string, n int);
    from In select id, n insert into Out;
    """
    payloads = [b"not json 1", b"x" * 5000, b"not json 2", b'{"id": "a", "n": 1}', b"not json 3",
                b'{"id": "b", "n": 2}']
    async with running_host(config(refs=refs), app) as host:
        await produce(kb.bootstrap_servers, src, payloads)
        await wait_until(lambda: committed(kb.bootstrap_servers, group, src, 1), 20, what="a commit")
        await wait_until(async_eq(lambda: committed(kb.bootstrap_servers, group, src, 1), {0: len(payloads)}), 20,
                         what="every offset committed")
        outputs = await read_topic(kb.bootstrap_servers, out, 2)
        metrics = host.metrics.render().decode()
    dead_letters = await read_topic(kb.bootstrap_servers, dead, 3)
    assert sorted(r.value for r in dead_letters) == [b"not json 1", b"not json 2", b"not json 3"]
    assert [r.json()["event"]["id"] for r in outputs] == ["a", "b"]
    assert ('srota_dead_letters_lost_total{app="BigDead",reason="MessageSizeTooLargeError",stream="In"} 1.0'
            in metrics), metrics
    assert 'srota_dead_letters_total{app="BigDead",stream="In"} 3.0' in metrics


def async_eq(fetch: Any, want: Any) -> Any:
    async def check() -> bool:
        return (await fetch()) == want
    return check


async def test_an_output_the_broker_can_never_take_does_not_take_its_neighbours_with_it(
        kafka_broker: Any) -> None:
    """One output too large for the sink (``max.request.size``) is refused alone: logged,
    counted and sent to the fault stream; the outputs around it in the same chunk go out."""
    kb = kafka_broker
    src, out, faults = await kb.create_topic(), await kb.create_topic(), await kb.create_topic()
    group = f"g-{uuid.uuid4().hex[:8]}"
    app = f"""
    @app:name('BigOut')
    {kafka_source(kb, src, group, "@map(type='json')")}
    define stream In (s string);
    @OnError(action='STREAM')
    {kafka_sink(kb, out, **{"optional.configuration": "max.request.size:2000", "on.error": "STREAM"})}
    define stream Out (s string);
    {kafka_sink(kb, faults)}
    define stream Faults (s string);
    from In select s insert into Out;
    from !Out select s insert into Faults;
    """
    payloads = [b'{"s": "small 1"}', b'{"s": "' + b"x" * 5000 + b'"}', b'{"s": "small 2"}']
    async with running_host(config(), app):
        await produce(kb.bootstrap_servers, src, payloads)
        outputs = await read_topic(kb.bootstrap_servers, out, 2)
        fault_events = await read_topic(kb.bootstrap_servers, faults, 1)
    assert [r.json()["event"]["s"] for r in outputs] == ["small 1", "small 2"]
    assert [len(r.json()["event"]["s"]) for r in fault_events] == [5000]
