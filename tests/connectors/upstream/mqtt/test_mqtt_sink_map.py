"""Port of siddhi-io-mqtt's ``MqttSinkMapTest`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/io/mqtt/sink/MqttSinkMapTest.java``.
"""
from __future__ import annotations

from typing import Any
from xml.etree import ElementTree

import orjson
import pytest

from tests.connectors.upstream.mqtt.support import IBM, WSO2, WSO2_2, Subscriber, unique

pytestmark = pytest.mark.integration


def _app(url: str, topic: str, mapping: str) -> str:
    return ("define stream FooStream (symbol string, price float, volume long); "
            "@info(name = 'query1') "
            f"@sink(type='mqtt', url= '{url}', "
            f"topic='{topic}',username='mqtt-user', "
            "password='mqtt-password',keep.alive='60', message.retain='false', "
            "quality.of.service= '1', clean.session='true',"
            f"@map(type='{mapping}'))"
            "Define stream BarStream (symbol string, price float, volume long);"
            "from FooStream select symbol, price, volume insert into BarStream;")


async def test_mqttPublishWithXmlMapping(run: Any, mqtt_broker: Any) -> None:
    """@map(type='xml'): three messages arrive, containing WSO2 and IBM (here also: each is
    siddhi-map-xml's default ``<events><event>...</event></events>``)."""
    topic = unique("mqtt_publish_xml_map")
    async with Subscriber(mqtt_broker, topic) as sub:
        r = await run(_app(mqtt_broker.url, topic, "xml"))
        r.send("FooStream", WSO2)
        r.send("FooStream", IBM)
        r.send("FooStream", WSO2_2)
        await sub.take(3)
    assert sub.count == 3
    assert sub.contains("WSO2") and sub.contains("IBM")
    symbols = [ElementTree.fromstring(m).findtext("event/symbol") for m in sub.messages]
    assert symbols == ["WSO2", "IBM", "WSO2"]


async def test_mqttPublishWithJsonMapping(run: Any, mqtt_broker: Any) -> None:
    """@map(type='json'): three messages arrive, containing WSO2 and IBM (here also: each is
    siddhi-map-json's default ``{"event": {...}}``)."""
    topic = unique("mqtt_publish_json_map")
    async with Subscriber(mqtt_broker, topic) as sub:
        r = await run(_app(mqtt_broker.url, topic, "json"))
        r.send("FooStream", WSO2)
        r.send("FooStream", IBM)
        r.send("FooStream", WSO2_2)
        await sub.take(3)
    assert sub.count == 3
    assert sub.contains("WSO2") and sub.contains("IBM")
    assert [orjson.loads(m)["event"]["symbol"] for m in sub.messages] == ["WSO2", "IBM", "WSO2"]
