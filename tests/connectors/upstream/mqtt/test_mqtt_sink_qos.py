"""Port of siddhi-io-mqtt's ``MqttSinkQosTestCase`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/io/mqtt/sink/MqttSinkQosTestCase.java``.
The apps map with ``xml``, as the Java tests' do.
"""
from __future__ import annotations

from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from tests.connectors.upstream.mqtt.support import IBM, WSO2, WSO2_2, Subscriber, unique

pytestmark = pytest.mark.integration


def _app(url: str, topic: str, qos: str) -> str:
    return ("define stream FooStream (symbol string, price float, volume long); "
            "@info(name = 'query1') "
            f"@sink(type='mqtt', url= '{url}', "
            f"topic='{topic}',username='mqtt-user', "
            f"password='mqtt-password', clean.session='true', message.retain='false', {qos}"
            "keep.alive= '60',"
            "@map(type='xml'))"
            "Define stream BarStream (symbol string, price float, volume long);"
            "from FooStream select symbol, price, volume insert into BarStream;")


async def test_mqttPublishEventsWithoutQos(run: Any, mqtt_broker: Any) -> None:
    """No ``quality.of.service`` (default 1): three messages arrive (the subscriber asks for QoS 1)."""
    topic = unique("mqtt_publish_event_without_qos")
    async with Subscriber(mqtt_broker, topic) as sub:
        r = await run(_app(mqtt_broker.url, topic, ""))
        r.send("FooStream", WSO2)
        r.send("FooStream", IBM)
        r.send("FooStream", WSO2_2)
        await sub.take(3)
    assert sub.count == 3
    assert sub.contains("WSO2") and sub.contains("IBM")


async def test_mqttPublishEventsWithInvalidQos(run: Any, mqtt_broker: Any) -> None:
    """``quality.of.service='3'``: the app is created and starts; publishing the event fails
    with "Invalid QOS value received for MQTT Sink associated to stream 'BarStream' . Expected
    0, 1 or 2 but received 3" in the log, and nothing is published (Siddhi checks the value per
    event, as it may be an ``{{attribute}}``).

    Srota differs on purpose for a fixed value, which can never be right: the app is refused at
    creation with the option named, as a source's invalid QoS is (fail fast). A per-event value
    is checked per event as in Siddhi (``test_siddhi_semantics``).
    """
    topic = unique("mqtt_publish_event_differ_qos")
    async with Subscriber(mqtt_broker, topic) as sub:
        with pytest.raises(SiddhiAppCreationError, match=r"quality\.of\.service must be 0, 1 or 2, not '3'"):
            await run(_app(mqtt_broker.url, topic, "quality.of.service= '3', "))
    assert sub.count == 0
