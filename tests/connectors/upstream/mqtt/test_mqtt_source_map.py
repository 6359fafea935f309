"""Port of siddhi-io-mqtt's ``MqttSourceMapTest`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/io/mqtt/source/MqttSourceMapTest.java``.
"""
from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.connectors.upstream.mqtt.support import IBM, WSO2, WSO2_2, ready, rows, unique, until
from tests.connectors.upstream.mqtt.test_mqtt_source import THREE, _sink_app, _source_app

pytestmark = pytest.mark.integration


async def test_mqttRecieveWithJSONMapping(run: Any, mqtt_broker: Any) -> None:
    """A json sink app publishes three events; the json source app receives three."""
    topic = unique("mqtt_recieve_json_map")
    assert await _three(run, mqtt_broker, topic, "json") == THREE


async def test_mqttRecieveWithXmlMapping(run: Any, mqtt_broker: Any) -> None:
    """@map(type='xml') on both apps: three events arrive."""
    topic = unique("mqtt_recieve_xml_map")
    assert await _three(run, mqtt_broker, topic, "xml") == THREE


async def _three(run: Any, mqtt_broker: Any, topic: str, mapping: str) -> list[tuple[Any, ...]]:
    """Start the source app, wait until it is subscribed, publish WSO2, IBM, WSO2 through the
    sink app, and return what BarStream2 received (once it has three rows, and a moment more)."""
    src = await run(_source_app(f"url= '{mqtt_broker.url}',topic = '{topic}',clean.session='true', keep.alive= '60'",
                                mapping))
    got = src.watch("BarStream2")
    await ready(src, "FooStream2")
    snk = await run(_sink_app(mqtt_broker.url, topic, mapping))
    snk.send("FooStream", WSO2)
    snk.send("FooStream", IBM)
    snk.send("FooStream", WSO2_2)
    await until(lambda: len(rows(got)) >= 3)
    await asyncio.sleep(0.2)
    return rows(got)
