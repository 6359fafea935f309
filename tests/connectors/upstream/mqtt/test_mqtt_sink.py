"""Port of siddhi-io-mqtt's ``MqttSinkTestCase`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/io/mqtt/sink/MqttSinkTestCase.java``.
Each test runs the Java test's app (``FooStream`` into ``BarStream``, ``@sink(type='mqtt')``
with the same options) on a service host, with the session's Mosquitto broker for Moquette
on port 1883 and a topic of its own, and checks with :class:`Subscriber` (``MqttTestClient``)
what the Java test checks: how many messages arrived and what they contain.  The apps map with
``@map(type='xml')``, as the Java tests' do.
Moquette takes any ``username``/``password``, as the session's Mosquitto does.
"""
from __future__ import annotations

from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError
from structlog.testing import capture_logs

from tests.conftest import free_port
from tests.connectors.upstream.mqtt.support import IBM, WSO2, WSO2_2, Subscriber, sink_of, unique, until

pytestmark = pytest.mark.integration


def _app(sink_options: str) -> str:
    return ("define stream FooStream (symbol string, price float, volume long); "
            "@info(name = 'query1') "
            f"@sink(type='mqtt', {sink_options}, @map(type='xml'))"
            "Define stream BarStream (symbol string, price float, volume long);"
            "from FooStream select symbol, price, volume insert into BarStream;")


async def _publish_three(run: Any, broker: Any, topic: str, options: str) -> Subscriber:
    """The body most tests share: subscribe, start the app, send three events, take three."""
    async with Subscriber(broker, topic) as sub:
        r = await run(_app(f"url= '{broker.url}', topic='{topic}', {options}"))
        r.send("FooStream", WSO2)
        r.send("FooStream", IBM)
        r.send("FooStream", WSO2_2)
        await sub.take(3)
    return sub


async def test_mqttPublishSingleEvent(run: Any, mqtt_broker: Any) -> None:
    """Three events sent one by one: three messages arrive, containing WSO2, IBM and JAMES."""
    topic = unique("mqtt_publish_single_event")
    async with Subscriber(mqtt_broker, topic) as sub:
        r = await run(_app(f"url= '{mqtt_broker.url}', topic='{topic}',username='mqtt-user', "
                           "password='mqtt-password', clean.session='true', message.retain='false', "
                           "quality.of.service= '1', keep.alive= '60'"))
        r.send("FooStream", WSO2)
        r.send("FooStream", IBM)
        r.send("FooStream", ("JAMES", 75.6, 100))
        await sub.take(3)
    assert sub.count == 3
    assert sub.contains("WSO2") and sub.contains("IBM") and sub.contains("JAMES")


async def test_mqttPublishMultipleEvents(run: Any, mqtt_broker: Any) -> None:
    """An Event[] of one event: one message arrives, containing 'single_topic'."""
    topic = unique("mqtt_publish_multiple_event")
    async with Subscriber(mqtt_broker, topic) as sub:
        r = await run(_app(f"url= '{mqtt_broker.url}', topic='{topic}',username='mqtt-user', "
                           "password='mqtt-password', clean.session='true', message.retain='false', "
                           "quality.of.service= '1',keep.alive= '60'"))
        r.send("FooStream", ("single_topic", 55.6, 100))
        await sub.take(1)
    assert sub.count == 1
    assert sub.contains("single_topic")


async def test_mqttPublishWithoutUrlTest(run: Any) -> None:
    """No ``url``: app creation fails (Java: ``SiddhiAppValidationException``)."""
    with pytest.raises(SiddhiAppCreationError, match="'url' is required"):
        await run(_app("topic='mqtt_publish_without_url', clean.session='true',username='mqtt-user', "
                       "password='mqtt-password', message.retain='false', quality.of.service= '1',keep.alive= '60'"))


async def test_mqttPublishWithInvalidBrokerCredintials(run: Any) -> None:
    """A broker that is not there (Java: port 1889): the app starts and shuts down without an error.

    Siddhi retries the connection in the background; Srota's host logs that the sink cannot
    connect yet and retries in the background too.
    """
    with capture_logs() as logs:
        r = await run(_app(f"topic='mqtt_publish_with_invalid_url', url= 'tcp://127.0.0.1:{free_port()}', "
                           "clean.session='true',username='mqtt-user',password='mqtt-password', "
                           "message.retain='false', quality.of.service= '1',keep.alive= '60'"))
    assert not sink_of(r, "BarStream").connected
    assert any(e["event"] == "sink cannot connect yet, retrying" for e in logs)
    await run.stop(r)


async def test_mqttPublishWithoutTopic(run: Any) -> None:
    """No ``topic``: app creation fails (Java: ``SiddhiAppValidationException``)."""
    with pytest.raises(SiddhiAppCreationError, match="'topic' is required"):
        await run(_app("url= 'tcp://localhost:1883', clean.session='true', message.retain='false', "
                       "quality.of.service= '1',keep.alive= '60',username='mqtt-user',password='mqtt-password'"))


async def test_mqttPublishWithoutCleanSession(run: Any, mqtt_broker: Any) -> None:
    """``clean.session`` left at its default (true): three messages arrive."""
    topic = unique("mqtt_publish_without_clean_session")
    sub = await _publish_three(run, mqtt_broker, topic, "message.retain='false', quality.of.service= '1',"
                                                        "username='mqtt-user',password='mqtt-password', "
                                                        "keep.alive= '60'")
    assert sub.count == 3
    assert sub.contains("WSO2") and sub.contains("IBM")


async def test_mqttPublishWithoutKeepAlive(run: Any, mqtt_broker: Any) -> None:
    """``keep.alive`` left at its default (60): three messages arrive."""
    topic = unique("mqtt_publish_without_keep_alive")
    sub = await _publish_three(run, mqtt_broker, topic, "message.retain='false', quality.of.service= '1',"
                                                        "username='mqtt-user',password='mqtt-password', "
                                                        "clean.session='true'")
    assert sub.count == 3
    assert sub.contains("WSO2") and sub.contains("IBM")


async def test_mqttPublishWithCleanSessionFalse(run: Any, mqtt_broker: Any) -> None:
    """``clean.session='false'`` without a ``client.id``: Siddhi generates the id (paho's
    ``generateClientId``) and publishes; three messages arrive."""
    topic = unique("mqtt_publish_with_clean_session_false")
    sub = await _publish_three(run, mqtt_broker, topic, "message.retain='false', quality.of.service= '1',"
                                                        "username='mqtt-user',password='mqtt-password', "
                                                        "clean.session='false'")
    assert sub.count == 3
    assert sub.contains("WSO2") and sub.contains("IBM")


async def test_mqttPublishWithDifferentValueKeepAlive(run: Any, mqtt_broker: Any) -> None:
    """``keep.alive='80'`` (and ``clean.session='false'`` without a ``client.id``): three messages arrive."""
    topic = unique("mqtt_publish_with_different_keep_alive")
    sub = await _publish_three(run, mqtt_broker, topic, "message.retain='false', quality.of.service= '1', "
                                                        "clean.session='false', keep.alive= '80'")
    assert sub.count == 3
    assert sub.contains("WSO2") and sub.contains("IBM")


async def test_mqttPublishWithoutBrokerCredentials(run: Any, mqtt_broker: Any) -> None:
    """No ``username``/``password`` (and ``clean.session='false'`` without a ``client.id``):
    three messages arrive."""
    topic = unique("mqtt_publish_without_broker_credentials")
    sub = await _publish_three(run, mqtt_broker, topic, "message.retain='false', quality.of.service= '1', "
                                                        "clean.session='false', keep.alive= '60'")
    assert sub.count == 3
    assert sub.contains("WSO2") and sub.contains("IBM")


async def test_mqttPublishTest(run: Any, mqtt_broker: Any) -> None:
    """Persist and restore: three events, ``persist()``, shutdown, start, ``restoreLastRevision()``,
    a fourth event: four messages arrive (WSO2, IBM, JAMES, MIKE).

    Srota's host persists on its own: stopping the host saves a snapshot, a new host on the
    same state database restores it when it starts (the app is stateless; what matters is that
    the sink publishes again after the restart).
    """
    topic = unique("mqtt_publish_event_persist")
    app = _app(f"url= '{mqtt_broker.url}', topic='{topic}',username='mqtt-user', password='mqtt-password', "
               "clean.session='true', message.retain='false', quality.of.service= '1', keep.alive= '60'")
    async with Subscriber(mqtt_broker, topic) as sub:
        r = await run(app, persistence=True)
        r.send("FooStream", WSO2)
        r.send("FooStream", IBM)
        r.send("FooStream", ("JAMES", 57.6, 100))
        await until(lambda: sub.count >= 3)
        await run.stop(r)
        r = await run(app, persistence=True)
        r.send("FooStream", ("MIKE", 75.6, 100))
        await sub.take(4)
    assert sub.count == 4
    assert all(sub.contains(s) for s in ("WSO2", "IBM", "JAMES", "MIKE"))
