"""Port of siddhi-io-mqtt's ``MqttSourceQosTest`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/io/mqtt/source/MqttSourceQosTest.java``.
The apps map with ``xml``, as the Java tests' do.
"""
from __future__ import annotations

import asyncio
from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from tests.connectors.upstream.mqtt.support import IBM, WSO2, WSO2_2, ready, rows, unique, until
from tests.connectors.upstream.mqtt.test_mqtt_source import THREE, _sink_app

pytestmark = pytest.mark.integration


def _source_app(url: str, topic: str, qos: str) -> str:
    return ("@App:name('TestExecutionPlan2') "
            "define stream BarStream2 (symbol string, price float, volume long); "
            "@info(name = 'query1') "
            f"@source(type='mqtt',url= '{url}',topic = '{topic}',"
            f"username='mqtt-user',password='mqtt-password',{qos}"
            "clean.session='true', keep.alive= '60',@map(type='xml'))"
            "Define stream FooStream2 (symbol string, price float, volume long);"
            "from FooStream2 select symbol, price, volume insert into BarStream2;")


async def test_mqttRecieveEventsWithoutQos(run: Any, mqtt_broker: Any) -> None:
    """No ``quality.of.service`` (default 1): three events arrive."""
    topic = unique("mqtt_receive_event_without_qos")
    src = await run(_source_app(mqtt_broker.url, topic, ""))
    got = src.watch("BarStream2")
    await ready(src, "FooStream2")
    snk = await run(_sink_app(mqtt_broker.url, topic))
    snk.send("FooStream", WSO2)
    snk.send("FooStream", IBM)
    snk.send("FooStream", WSO2_2)
    await until(lambda: len(rows(got)) >= 3)
    await asyncio.sleep(0.2)
    assert rows(got) == THREE


async def test_mqttRecieveEventsWithInvalidQos(run: Any, mqtt_broker: Any) -> None:
    """``quality.of.service='3'``: the app does not run (Java: "Error starting Siddhi App
    'TestExecutionPlan2'" in the log -- paho refuses the subscription when the app starts).

    Srota checks a source's QoS when the app is created (a source's QoS cannot come per
    message): the host does not start, with a creation error naming the option.
    """
    with pytest.raises(SiddhiAppCreationError, match=r"quality\.of\.service must be 0, 1 or 2"):
        await run(_source_app(mqtt_broker.url, unique("mqtt_receive_event_with_invalid_qos"),
                              "quality.of.service= '3',"))
