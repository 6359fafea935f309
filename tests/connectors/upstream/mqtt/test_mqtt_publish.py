"""Port of siddhi-io-mqtt's ``MqttPublishTestCase`` (its one ``@Test``).

Upstream: ``component/src/test/java/io/siddhi/extension/io/mqtt/sink/MqttPublishTestCase.java``.
The Java test stops its Moquette broker in the middle; here the broker is one the test owns
(``mosquitto_factory``).  The app maps with ``xml``, as the Java test's does.
"""
from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from tests.connectors.upstream.mqtt.support import IBM, WSO2, WSO2_2, Subscriber, sink_errors, unique, until

pytestmark = pytest.mark.integration


async def test_mqttPublishTest(run: Any, mosquitto_factory: Any) -> None:
    """Publishing while the broker is stopped: three events arrive, the broker stops, a fourth
    is sent; the subscriber counts three, with WSO2 and IBM among them.

    Siddhi's sink logs the failed publish ("Error occurred when publishing message to the MQTT
    broker") and drops the event; Srota's host does the same with the default
    ``on.error='LOG'`` ("publish failed, events dropped", one sink error counted).
    """
    broker = mosquitto_factory()
    topic = unique("mqtt_publish_event")
    async with Subscriber(broker, topic) as sub:
        r = await run("define stream FooStream (symbol string, price float, volume long); "
                      "@info(name = 'query1') "
                      f"@sink(type='mqtt', url= '{broker.url}', "
                      f"topic='{topic}',username='mqtt-user', "
                      "password='mqtt-password', clean.session='true', message.retain='false', "
                      "quality.of.service= '1', keep.alive= '60',@map(type='xml'))"
                      "Define stream BarStream (symbol string, price float, volume long);"
                      "from FooStream select symbol, price, volume insert into BarStream;")
        r.send("FooStream", WSO2)
        r.send("FooStream", IBM)
        r.send("FooStream", WSO2_2)
        await until(lambda: sub.count >= 3)
        broker.stop()
        with capture_logs() as logs:
            r.send("FooStream", IBM)
            await until(lambda: sink_errors(r, "BarStream") >= 1, timeout=15)
        assert sub.count == 3
        assert sub.contains("WSO2") and sub.contains("IBM")
        dropped = [e for e in logs if e["event"] == "publish failed, events dropped"]
        assert [e["events"] for e in dropped] == [1]
