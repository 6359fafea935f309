"""The mqtt source and sink against a real (Mosquitto) broker."""
from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from srota.connectors import ConnectionUnavailableError, Message, MqttSink, MqttSource
from srota.grammar.errors import SiddhiAppCreationError

from srota import connectors

pytestmark = pytest.mark.integration


class Collector:
    """Takes chunks like a host: with ``source`` set, commits (acknowledges) each one at once."""

    def __init__(self, source: Any = None) -> None:
        self.messages: list[Message] = []
        self.source = source

    async def __call__(self, messages: list[Message]) -> None:
        self.messages.extend(messages)
        if self.source is not None and messages:
            await self.source.commit([messages[-1].ack])

    @property
    def payloads(self) -> list[Any]:
        return [m.payload for m in self.messages]

    async def wait_for(self, n: int, timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while len(self.messages) < n:
                await asyncio.sleep(0.01)


def prefix() -> str:
    return f"srota-{uuid.uuid4().hex[:8]}"


async def started(url: str, topic: str, **extra: Any) -> tuple[MqttSource, Collector]:
    src = connectors.create_source("mqtt", {"url": url, "topic": topic, **extra}, name="In")
    assert isinstance(src, MqttSource)
    got = Collector(src)
    await src.start(got)
    await src.wait_ready(10)
    return src, got


async def connected_sink(url: str, **options: Any) -> MqttSink:
    sink = connectors.create_sink("mqtt", {"url": url, **options}, name="Out")
    assert isinstance(sink, MqttSink)
    await sink.connect()
    return sink


async def test_qos1_wildcards_and_dynamic_topic(mqtt_broker: Any) -> None:
    p = prefix()
    src, got = await started(mqtt_broker.url, f"{p}/sensors/+/temp, {p}/alerts/#", **{"quality.of.service": "1"})
    sink = await connected_sink(mqtt_broker.url, topic="{{topic}}", **{"quality.of.service": "1"})
    await sink.publish([
        (b'{"t":1}', {"topic": f"{p}/sensors/d1/temp"}),
        (b'{"t":2}', {"topic": f"{p}/sensors/d2/temp"}),
        (b"ignored", {"topic": f"{p}/sensors/d1/humidity"}),
        ("a\u00e9", {"topic": f"{p}/alerts/x/y"}),
    ])
    await sink.flush()
    await got.wait_for(3)
    await asyncio.sleep(0.2)
    assert sorted(got.payloads) == sorted([b'{"t":1}', b'{"t":2}', "a\u00e9".encode()])
    first = next(m for m in got.messages if m.payload == b'{"t":1}')
    assert first.properties == {"topic": f"{p}/sensors/d1/temp", "qos": 1, "retain": False}
    await sink.close()
    await src.stop()


@pytest.mark.parametrize("qos", [0, 2])
async def test_other_qos_levels_keep_order(mqtt_broker: Any, qos: int) -> None:
    topic = f"{prefix()}/q"
    src, got = await started(mqtt_broker.url, topic, **{"quality.of.service": qos})
    sink = await connected_sink(mqtt_broker.url, topic=topic, **{"quality.of.service": qos})
    await sink.publish([(f"m{i}".encode(), {}) for i in range(50)])
    await got.wait_for(50)
    assert got.payloads == [f"m{i}".encode() for i in range(50)]
    assert {m.properties["qos"] for m in got.messages} == {qos}
    await sink.close()
    await src.stop()


async def test_retained_message_reaches_late_subscriber(mqtt_broker: Any) -> None:
    topic = f"{prefix()}/status"
    sink = await connected_sink(mqtt_broker.url, topic=topic, **{"message.retain": "true"})
    await sink.publish([(b"online", {})])
    await sink.close()
    src, got = await started(mqtt_broker.url, topic)
    await got.wait_for(1)
    assert got.messages[0].payload == b"online" and got.messages[0].properties["retain"] is True
    await src.stop()
    # A per-message override: retain off (clears nothing, delivered live).
    src2, got2 = await started(mqtt_broker.url, topic)
    await got2.wait_for(1)
    sink2 = await connected_sink(mqtt_broker.url, topic=topic, **{"message.retain": "true"})
    await sink2.publish([(b"live", {"message.retain": "false"})])
    await got2.wait_for(2)
    assert got2.messages[1].properties["retain"] is False
    await sink2.close()
    await src2.stop()


async def test_persistent_session_gets_messages_sent_while_away(mqtt_broker: Any) -> None:
    topic = f"{prefix()}/persist"
    client_id = f"srota-test-{uuid.uuid4().hex[:8]}"
    options = {"client.id": client_id, "clean.session": "false", "quality.of.service": "1"}
    src, got = await started(mqtt_broker.url, topic, **options)
    await src.stop()
    sink = await connected_sink(mqtt_broker.url, topic=topic, **{"quality.of.service": "1"})
    await sink.publish([(b"while-away-1", {}), (b"while-away-2", {})])
    await sink.close()
    src2, got2 = await started(mqtt_broker.url, topic, **options)
    await got2.wait_for(2)
    assert got2.payloads == [b"while-away-1", b"while-away-2"]
    await src2.stop()


async def test_reconnects_and_resubscribes_after_broker_restart(mosquitto_factory: Any) -> None:
    broker = mosquitto_factory()
    topic = f"{prefix()}/r"
    src, got = await started(broker.url, topic, **{"max.reconnect.delay": "500"})
    sink = await connected_sink(broker.url, topic=topic, **{"max.reconnect.delay": "500"})
    await sink.publish([(b"before", {})])
    await got.wait_for(1)

    broker.stop()
    async with asyncio.timeout(5):
        while src.ready:
            await asyncio.sleep(0.02)
    with pytest.raises(ConnectionUnavailableError):
        await sink.publish([(b"lost", {})])
    assert not sink.connected
    broker.start()
    await src.wait_ready(10)
    await sink.wait_connected(10)
    await sink.publish([(b"after", {})])
    await got.wait_for(2)
    assert got.payloads == [b"before", b"after"]
    assert src.connections == 2
    await sink.close()
    await src.stop()


async def test_username_and_password(mosquitto_factory: Any) -> None:
    broker = mosquitto_factory(users={"srota": "s3cret"})
    topic = f"{prefix()}/auth"
    with pytest.raises(ConnectionUnavailableError):
        await connected_sink(broker.url, topic=topic)  # anonymous is refused
    src, got = await started(broker.url, topic, username="srota", password="s3cret")
    sink = await connected_sink(broker.url, topic=topic, username="srota", password="s3cret")
    await sink.publish([(b"authorised", {})])
    await got.wait_for(1)
    assert got.payloads == [b"authorised"]
    await sink.close()
    await src.stop()
    wrong = MqttSource({"url": broker.url, "topic": topic, "username": "srota", "password": "guess"})
    await wrong.start(Collector())
    await asyncio.sleep(0.3)
    assert not wrong.ready
    await wrong.stop()


async def test_tls(mosquitto_factory: Any) -> None:
    broker = mosquitto_factory(tls=True)
    topic = f"{prefix()}/tls"
    with pytest.raises(ConnectionUnavailableError):
        await connected_sink(broker.url, topic=topic)  # the self-signed certificate is not trusted
    tls = {"tls.ca.file": str(broker.ca_file)}
    src, got = await started(broker.url, topic, **tls)
    sink = await connected_sink(broker.url, topic=topic, **tls)
    await sink.publish([(b"encrypted", {})])
    await got.wait_for(1)
    assert got.payloads == [b"encrypted"]
    await sink.close()
    await src.stop()


async def test_unreachable_broker() -> None:
    from tests.conftest import free_port

    url = f"tcp://127.0.0.1:{free_port()}"
    sink = MqttSink({"url": url, "topic": "t", "connection.timeout": "2"})
    with pytest.raises(ConnectionUnavailableError):
        await sink.connect()
    with pytest.raises(ConnectionUnavailableError):
        await sink.publish([(b"x", {})])
    src = MqttSource({"url": url, "topic": "t", "connection.timeout": "2"})
    await src.start(Collector())
    await asyncio.sleep(0.3)
    assert not src.ready
    async with asyncio.timeout(5):
        await src.stop()
    await sink.close()


def test_option_errors() -> None:
    # clean.session='false' without a client.id: generated, as siddhi-io-mqtt does (see
    # tests/connectors/upstream/mqtt); the warning says that the session ends with the process.
    generated = MqttSource({"url": "tcp://h:1", "topic": "t", "clean.session": "false"})
    assert generated._conn.client_id and "client.id" in str(generated._conn.session_warning)
    with pytest.raises(SiddhiAppCreationError, match="0, 1 or 2"):
        MqttSource({"url": "tcp://h:1", "topic": "t", "quality.of.service": "3"})
    with pytest.raises(SiddhiAppCreationError, match="0, 1 or 2"):  # a fixed sink QoS too
        MqttSink({"url": "tcp://h:1", "topic": "t", "quality.of.service": "3"})
    assert MqttSink({"url": "tcp://h:1", "topic": "t", "quality.of.service": "{{qos}}"})  # per event
    with pytest.raises(SiddhiAppCreationError, match="scheme"):
        MqttSink({"url": "http://h:1", "topic": "t"})
    with pytest.raises(SiddhiAppCreationError, match="topic is empty"):
        MqttSource({"url": "tcp://h:1", "topic": " , "})
    tls = MqttSink({"url": "ssl://broker.example", "topic": "t"})
    assert tls._conn.tls and tls._conn.port == 8883
    plain = MqttSource({"url": "broker.example", "topic": "a,b"})
    assert plain._conn.port == 1883 and plain.topics == ["a", "b"]


async def test_unacknowledged_messages_hold_the_broker_back_and_come_again_after_a_stop(mqtt_broker: Any) -> None:
    """QoS 1 messages are acknowledged only by ``commit``: the broker stops sending when its
    in-flight window is full (back-pressure), and what was received but never committed is
    sent again to the next connection of the same persistent session."""
    topic = f"{prefix()}/acks"
    options = {"url": mqtt_broker.url, "topic": topic, "quality.of.service": 1, "clean.session": "false",
               "client.id": f"acks-{uuid.uuid4().hex[:8]}"}
    src = connectors.create_source("mqtt", options, name="In")
    got = Collector()  # takes chunks, never commits
    await src.start(got)
    await src.wait_ready(10)
    sink = await connected_sink(mqtt_broker.url, topic=topic, **{"quality.of.service": 1})
    await sink.publish([(f"m{i}".encode(), {}) for i in range(100)])
    await asyncio.sleep(1.0)
    held = len(got.messages)
    assert 0 < held < 100, f"{held} messages arrived without a single acknowledgement"
    tokens = {id(m.ack): m.ack for m in got.messages[:10]}  # a token stands for its whole chunk
    await src.commit(tokens.values())
    acked = {m.payload for m in got.messages if id(m.ack) in tokens}
    await got.wait_for(held + len(acked))  # each acknowledgement lets one more in
    await src.stop()

    src2 = connectors.create_source("mqtt", options, name="In")
    again = Collector(src2)
    await src2.start(again)
    await again.wait_for(100 - len(acked))
    assert acked | set(again.payloads) == {f"m{i}".encode() for i in range(100)}
    assert not acked & set(again.payloads), "an acknowledged message came again"
    await sink.close()
    await src2.stop()


async def test_the_private_paho_seam_for_manual_acks_is_there() -> None:
    """Acknowledging after the commit needs paho's manual acks, which aiomqtt (2.5) does not
    expose: the source reaches ``Client._client``. This pins that seam (and pyproject pins
    aiomqtt below 2.6): a release that moves it fails here, not in production."""
    import aiomqtt
    import paho.mqtt.client as paho

    client = aiomqtt.Client("127.0.0.1", 1883)
    inner = client._client  # noqa: SLF001 - the seam under test
    assert isinstance(inner, paho.Client)
    assert callable(inner.manual_ack_set) and callable(inner.ack)
    inner.manual_ack_set(True)
