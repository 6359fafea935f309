"""The service host (ServiceHost) end to end against tansu: Kafka -> app -> Kafka.

Custom mappings both ways (JSONPath ``@attributes``, CSV column mapping, ``@payload``
templates, templated keys), malformed payloads on the fault route and the dead-letter
route, and a restart that resumes from the committed offsets with nothing lost and, after a
clean shutdown, nothing repeated.
"""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.integration.support import (
    TopicReader,
    check_running_totals,
    committed,
    config,
    kafka_sink,
    kafka_source,
    produce,
    read_topic,
    running_host,
    totals_reached,
    wait_until,
)

pytestmark = pytest.mark.integration


def _group() -> str:
    return f"g-{uuid.uuid4().hex[:8]}"


async def test_json_attributes_to_payload_template(kafka_broker: Any) -> None:
    """JSONPath in, a templated JSON payload and key out, transport properties as attributes."""
    kb = kafka_broker
    src, out = await kb.create_topic(partitions=2), await kb.create_topic(partitions=2)
    source = kafka_source(kb, src, _group(), "@map(type='json', @attributes(id='$.device.id', "
                                             "temp='$.reading.temp', part='trp:partition'))")
    payload = '{"dev":"{{id}}","t":{{temp}},"from":{{part}}}'
    sink = kafka_sink(kb, out, f'@map(type="json", event.grouping.enabled="false", @payload("""{payload}"""))',
                      key="{{id}}")
    app = f"""
    @app:name('JsonKafka')
    {source}
    define stream In (id string, temp double, part int);

    {sink}
    define stream Hot (id string, temp double, part int);

    from In[temp > 30.0] select id, temp, part insert into Hot;
    """
    readings = [("d1", 25.0, 0), ("d2", 31.5, 0), ("d1", 40.0, 1), ("d3", 29.9, 1), ("d3", 35.25, 1)]
    async with running_host(config(), app):
        for dev, temp, part in readings:
            await produce(kb.bootstrap_servers, src,
                          [orjson.dumps({"device": {"id": dev}, "reading": {"temp": temp}})], partition=part)
        records = await read_topic(kb.bootstrap_servers, out, min_count=3)
    got = sorted((r.key, r.json()) for r in records)
    assert got == [(b"d1", {"dev": "d1", "t": 40.0, "from": 1}),
                   (b"d2", {"dev": "d2", "t": 31.5, "from": 0}),
                   (b"d3", {"dev": "d3", "t": 35.25, "from": 1})]


async def test_csv_column_mapping_in_and_out(kafka_broker: Any) -> None:
    """CSV columns picked by index in, placed by index out, with a custom delimiter."""
    kb = kafka_broker
    src, out = await kb.create_topic(), await kb.create_topic()
    app = f"""
    @app:name('CsvKafka')
    {kafka_source(kb, src, _group(), "@map(type='csv', delimiter=';', @attributes(symbol='2', price='0'))")}
    define stream Trades (symbol string, price double);

    {kafka_sink(kb, out, "@map(type='csv', @payload(total='0', symbol='1'))")}
    define stream Totals (symbol string, total double);

    from Trades select symbol, price * 2 as total insert into Totals;
    """
    async with running_host(config(), app):
        await produce(kb.bootstrap_servers, src, [b"10.5;x;IBM", b"2.0;y;WSO2", b"4.5;z;IBM"])
        records = await read_topic(kb.bootstrap_servers, out, min_count=3)
    assert [r.value for r in records] == [b"21.0,IBM\n", b"4.0,WSO2\n", b"9.0,IBM\n"]


async def test_malformed_payloads_reach_the_fault_stream_and_the_dead_letter_topic(kafka_broker: Any) -> None:
    kb = kafka_broker
    src, out, faults, dead = [await kb.create_topic() for _ in range(4)]
    group = _group()
    refs = {"dead-letters": {"type": "kafka", "bootstrap.servers": kb.bootstrap_servers, "topic": dead}}
    source = kafka_source(kb, src, group, "@map(type='json', fail.on.missing.attribute='true')",
                          **{"dead.letter.ref": "dead-letters"})
    app = f"""
    @app:name('Faulty')
    @OnError(action='STREAM')
    {source}
    define stream In (id string, n int);

    {kafka_sink(kb, out)}
    define stream Out (id string, n int);

    {kafka_sink(kb, faults)}
    define stream Faults (error string);

    from In select id, n insert into Out;
    from !In select convert(_error, 'string') as error insert into Faults;
    """
    bad = [b'{"event": {"id": "a", "n": ', b"\xff\xfe\x00binary", b'{"event": {"id": "b"}}']
    async with running_host(config(refs=refs), app):
        await produce(kb.bootstrap_servers, src, [b'{"id": "ok1", "n": 1}', *bad, b'{"id": "ok2", "n": 2}'])
        outs = await read_topic(kb.bootstrap_servers, out, min_count=2)
        fault_records = await read_topic(kb.bootstrap_servers, faults, min_count=3)
        dead_records = await read_topic(kb.bootstrap_servers, dead, min_count=3)
        await wait_until(lambda: committed(kb.bootstrap_servers, group, src, 1), what="a commit")
        assert (await committed(kb.bootstrap_servers, group, src, 1)) == {0: 5}
    assert [r.json()["event"] for r in outs] == [{"id": "ok1", "n": 1}, {"id": "ok2", "n": 2}]
    assert len(fault_records) == 3 and all(r.json()["event"]["error"] for r in fault_records)
    # The dead letters are the original bytes, with the reason and the origin as headers.
    assert [r.value for r in dead_records] == bad
    for offset, r in enumerate(dead_records, start=1):
        headers = dict(r.headers)
        assert headers["srota.error"]
        assert headers["srota.source.topic"] == src.encode() and headers["srota.source.offset"] == str(offset).encode()
        assert headers["srota.stream"] == b"In"


async def test_restart_resumes_from_committed_offsets(kafka_broker: Any) -> None:
    """Stop, produce while stopped, start again: every input once, none lost, none repeated
    (a clean shutdown commits everything it flushed)."""
    kb = kafka_broker
    src, out = await kb.create_topic(partitions=3), await kb.create_topic()
    group = _group()
    app = f"""
    @app:name('Resume')
    {kafka_source(kb, src, group)}
    define stream In (n int);
    {kafka_sink(kb, out)}
    define stream Out (n int);
    from In select n insert into Out;
    """

    def batch(lo: int, hi: int) -> list[bytes]:
        return [orjson.dumps({"n": i}) for i in range(lo, hi)]

    async with running_host(config(), app):
        await produce(kb.bootstrap_servers, src, batch(0, 150))
        await read_topic(kb.bootstrap_servers, out, min_count=150)
    await produce(kb.bootstrap_servers, src, batch(150, 300))
    async with running_host(config(), app):
        await produce(kb.bootstrap_servers, src, batch(300, 320))
        records = await read_topic(kb.bootstrap_servers, out, min_count=320)
    assert sorted(r.json()["event"]["n"] for r in records) == list(range(320))
    offsets = await committed(kb.bootstrap_servers, group, src, 3)
    assert sum(o or 0 for o in offsets.values()) == 320


async def test_state_snapshot_and_offsets_survive_a_restart(kafka_broker: Any, tmp_path: Path) -> None:
    """With persistence on, a running total continues across a restart from its snapshot."""
    kb = kafka_broker
    src, out = await kb.create_topic(partitions=2), await kb.create_topic()
    group = _group()
    app = f"""
    @app:name('Running')
    {kafka_source(kb, src, group)}
    define stream In (id string, n long);
    {kafka_sink(kb, out)}
    define stream Out (id string, total long, count long);
    from In select id, sum(n) as total, count() as count group by id insert into Out;
    """
    cfg = config(tmp_path, persistence=True)
    inputs = [{"id": f"k{i % 3}", "n": i} for i in range(60)]
    events = [(e["id"].encode(), orjson.dumps(e)) for e in inputs]
    async with TopicReader(kb.bootstrap_servers, out) as reader:
        async with running_host(cfg, app):
            await produce(kb.bootstrap_servers, src, events[:30])
            await reader.until(totals_reached(inputs[:30]), what="the first half")
        async with running_host(cfg, app):
            await produce(kb.bootstrap_servers, src, events[30:])
            records = await reader.until(totals_reached(inputs), what="every input")
    check_running_totals([r.json()["event"] for r in records], inputs)
