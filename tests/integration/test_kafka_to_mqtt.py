"""End to end through the service host: Kafka -> json mapper -> app -> json mapper -> MQTT.

Checks that the pieces fit: annotations -> connectors and mappers, transport properties
into ``trp:`` attributes, ``{{attribute}}`` topics, explicitly assigned partitions, a bad
payload on the error route, and offsets committed once the outputs they caused were
acknowledged by the MQTT broker.
"""
from __future__ import annotations

import uuid
from typing import Any

import orjson
import pytest

from tests.integration.support import committed, config, produce, running_host, wait_until
from tests.integration.test_service_mqtt import Observer

pytestmark = pytest.mark.integration


async def test_kafka_json_to_app_to_mqtt(kafka_broker: Any, mqtt_broker: Any) -> None:
    kb = kafka_broker
    topic = await kb.create_topic(partitions=2)
    group = f"pipe-{uuid.uuid4().hex[:8]}"
    app = f"""
    @app:name('Pipe')
    @OnError(action='STREAM')
    @source(type='kafka', topic.list='{topic}', group.id='{group}', threading.option='single.thread',
            bootstrap.servers='{kb.bootstrap_servers}', partition.no.list='0,1', poll.timeout='100',
            @map(type='json', @attributes(id='$.device.id', temp='$.temp', part='trp:partition')))
    define stream In (id string, temp double, part int);

    @sink(type='mqtt', url='{mqtt_broker.url}', topic='pipe-{topic}/alerts/{{{{id}}}}', quality.of.service='1',
          @map(type='json', event.grouping.enabled='false', @payload(\"\"\"{{"id":"{{{{id}}}}","t":{{{{temp}}}},"p":{{{{part}}}}}}\"\"\")))
    define stream Out (id string, temp double, part int);

    @sink(type='mqtt', url='{mqtt_broker.url}', topic='pipe-{topic}/errors',
          @map(type='json', event.grouping.enabled='false'))
    define stream Errors (error string);

    from In[temp > 30.0] select id, temp, part insert into Out;
    from !In select convert(_error, 'string') as error insert into Errors;
    """
    async with Observer(mqtt_broker, f"pipe-{topic}/#") as observer, running_host(config(), app) as host:
        readings = [("d1", 25.0, 0), ("d2", 31.5, 0), ("d1", 40.0, 1), ("d3", 29.9, 1)]
        for dev, temp, partition in readings:
            await produce(kb.bootstrap_servers, topic, [orjson.dumps({"device": {"id": dev}, "temp": temp})],
                          partition=partition)
        await produce(kb.bootstrap_servers, topic, [b"{not json"], partition=0)
        messages = await observer.wait_for(3)
        # Everything, the bad payload included, was handled, so every offset is committed.
        await wait_until(lambda: committed(kb.bootstrap_servers, group, topic, 2), what="commits")
        await wait_until(lambda: _committed_is(kb, group, topic, {0: 3, 1: 2}), 10, what="every offset committed")
        source = host.apps["Pipe"].sources[0].source
        assert source.lag() == {f"{topic}[0]": 0, f"{topic}[1]": 0}
    alerts = sorted((m.properties["topic"], orjson.loads(m.payload)) for m in messages
                    if "/alerts/" in m.properties["topic"])
    assert alerts == [(f"pipe-{topic}/alerts/d1", {"id": "d1", "t": 40.0, "p": 1}),
                      (f"pipe-{topic}/alerts/d2", {"id": "d2", "t": 31.5, "p": 0})]
    errors = [orjson.loads(m.payload)["event"]["error"] for m in messages if m.properties["topic"].endswith("/errors")]
    assert len(errors) == 1 and errors[0]


async def _committed_is(kb: Any, group: str, topic: str, expected: dict[int, int]) -> bool:
    return await committed(kb.bootstrap_servers, group, topic, len(expected)) == expected
