"""End to end: Kafka -> json mapper -> Siddhi app -> json mapper -> MQTT, committing after flush.

This is the smallest faithful host loop; ``service/`` does the same with lifecycle, metrics and
error routes.  It checks that the pieces fit: annotations -> connectors and mappers, transport
properties into ``trp:`` attributes, ``{{attribute}}`` topics, and offsets committed only after
the outputs they caused were acknowledged by the MQTT broker.
"""
from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

import connectors
import mappers
from connectors import Message
from engine import SiddhiManager
from grammar.model import Annotation, StreamDefinition, find_annotation

pytestmark = pytest.mark.integration


def _options(ann: Annotation) -> dict[str, str]:
    return {el.key: el.value for el in ann.elements if el.key is not None}


def _map_annotation(ann: Annotation) -> Annotation | None:
    nested = ann.nested("map")
    return nested[0] if nested else None


async def test_kafka_json_to_app_to_mqtt(kafka_broker: Any, mqtt_broker: Any) -> None:
    topic = await kafka_broker.create_topic(partitions=2)
    app = f"""
    @app:name('Pipe')
    @source(type='kafka', topic.list='{topic}', group.id='pipe', threading.option='single.thread',
            bootstrap.servers='{kafka_broker.bootstrap_servers}', partition.no.list='0,1',
            @map(type='json', @attributes(id='$.device.id', temp='$.temp', part='trp:partition')))
    define stream In (id string, temp double, part int);

    @sink(type='mqtt', url='{mqtt_broker.url}', topic='pipe-{topic}/alerts/{{{{id}}}}', quality.of.service='1',
          @map(type='json', @payload(\"\"\"{{"id":"{{{{id}}}}","t":{{{{temp}}}},"p":{{{{part}}}}}}\"\"\")))
    define stream Out (id string, temp double, part int);

    from In[temp > 30.0] select id, temp, part insert into Out;
    """
    runtime = SiddhiManager().create_siddhi_app_runtime(app)
    in_def: StreamDefinition = runtime.stream_definitions["In"]
    out_def: StreamDefinition = runtime.stream_definitions["Out"]
    src_ann = find_annotation(in_def.annotations, "source")
    sink_ann = find_annotation(out_def.annotations, "sink")
    assert src_ann is not None and sink_ann is not None

    source_mapper = mappers.create_source_mapper(in_def.attributes, _map_annotation(src_ann), "In")
    sink_mapper = mappers.create_sink_mapper(out_def.attributes, _map_annotation(sink_ann), "Out")
    sink_type = str(sink_ann.get("type"))
    sink_options = _options(sink_ann)
    templates = mappers.option_templates(
        {k: v for k, v in sink_options.items() if k in connectors.dynamic_options(sink_type)}, out_def.attributes)
    source = connectors.create_source(str(src_ann.get("type")), _options(src_ann), name="In")
    sink = connectors.create_sink(sink_type, sink_options, name="Out")

    outputs: list[tuple[Any, ...]] = []
    runtime.add_callback("Out", lambda events: outputs.extend(tuple(e.data) for e in events))
    handler = runtime.get_input_handler("In")
    errors: list[bytes] = []

    async def on_messages(messages: list[Message]) -> None:
        for m in messages:
            try:
                rows = source_mapper.map(m.payload, m.properties)
            except mappers.MappingError:
                errors.append(m.payload)  # the host's error route
                continue
            for row in rows:
                handler.send(row)
        ready, outputs[:] = list(outputs), []
        await sink.publish(mappers.map_for_sink(sink_mapper, ready, templates))
        await sink.flush()
        await source.commit([messages[-1].ack] if messages[-1].ack else [])

    # An observer on the MQTT side.
    observer = connectors.create_source("mqtt", {"url": mqtt_broker.url, "topic": f"pipe-{topic}/alerts/#"})
    seen: list[Message] = []

    async def observe(messages: list[Message]) -> None:
        seen.extend(messages)

    await observer.start(observe)
    await observer.wait_ready(10)
    runtime.start()
    await sink.connect()
    await source.start(on_messages)

    producer = AIOKafkaProducer(bootstrap_servers=kafka_broker.bootstrap_servers, acks="all")
    await producer.start()
    readings = [("d1", 25.0, 0), ("d2", 31.5, 0), ("d1", 40.0, 1), ("d3", 29.9, 1)]
    for dev, temp, partition in readings:
        await producer.send_and_wait(topic, orjson.dumps({"device": {"id": dev}, "temp": temp}), partition=partition)
    await producer.send_and_wait(topic, b"{not json", partition=0)
    await producer.stop()

    async with asyncio.timeout(20):
        while len(seen) < 2 or not errors:
            await asyncio.sleep(0.05)
    await asyncio.sleep(0.2)
    got = sorted((m.properties["topic"], orjson.loads(m.payload)) for m in seen)
    assert got == [(f"pipe-{topic}/alerts/d1", {"id": "d1", "t": 40.0, "p": 1}),
                   (f"pipe-{topic}/alerts/d2", {"id": "d2", "t": 31.5, "p": 0})]
    assert errors == [b"{not json"]
    assert source.lag() == {f"{topic}[0]": 0, f"{topic}[1]": 0}
    # Everything, the bad payload included, was handled, so every offset is committed.
    checker = AIOKafkaConsumer(bootstrap_servers=kafka_broker.bootstrap_servers, group_id="pipe",
                               enable_auto_commit=False)
    await checker.start()
    try:
        assert [await checker.committed(TopicPartition(topic, p)) for p in (0, 1)] == [3, 2]
    finally:
        await checker.stop()

    await source.stop()
    await sink.close()
    await observer.stop()
    runtime.shutdown()
