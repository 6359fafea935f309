"""siddhi-io-mqtt semantics its suite does not test, checked against ``MqttSink.java``.

``MqttSink.publish`` reads ``topic``, ``quality.of.service`` and ``message.retain`` per event
(``getSupportedDynamicOptions``) and throws ``MqttSinkRuntimeException`` for a QoS that is not
0, 1 or 2: that event is not published, the next ones are.
"""
from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from tests.connectors.upstream.mqtt.support import Subscriber, sink_errors, unique, until

pytestmark = pytest.mark.integration


async def test_dynamic_topic_and_qos_refuse_only_the_event_with_an_invalid_qos(run: Any, mqtt_broker: Any) -> None:
    """``topic='<root>/{{symbol}}'``, ``quality.of.service='{{qos}}'``: three events (sent together,
    so that the host publishes them in one call), the second with QoS 5; the first and third reach their topics, the second is refused
    (logged with Siddhi's reason, one sink error)."""
    root = unique("dynamic")
    async with Subscriber(mqtt_broker, f"{root}/#") as sub:
        with capture_logs() as logs:
            r = await run("define stream FooStream (symbol string, qos string, volume long); "
                          f"@sink(type='mqtt', url='{mqtt_broker.url}', topic='{root}/{{{{symbol}}}}', "
                          "quality.of.service='{{qos}}', @map(type='json'))"
                          "define stream BarStream (symbol string, qos string, volume long); "
                          "from FooStream select * insert into BarStream;")
            for row in (("WSO2", "1", 1), ("IBM", "5", 2), ("ORCL", "0", 3)):
                r.send("FooStream", row)
            await until(lambda: sink_errors(r, "BarStream") >= 1)
            await sub.take(2)
    assert sorted(sub.messages) == sorted(
        ['{"event":{"symbol":"WSO2","qos":"1","volume":1}}', '{"event":{"symbol":"ORCL","qos":"0","volume":3}}'])
    refused = [e for e in logs if e["event"] == "outputs refused by the transport"]
    assert [(e["events"], e["reason"].rsplit(". ", 1)[1]) for e in refused] == [
        (1, "Expected 0, 1 or 2 but received 5")]
