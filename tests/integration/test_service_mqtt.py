"""The service host between Mosquitto and tansu: MQTT -> app -> Kafka, and Kafka -> app -> MQTT.

Also over TLS with user names and passwords (Mosquitto with a self-signed certificate), and
checks that the password never reaches the logs.
"""
from __future__ import annotations

import uuid
from typing import Any

import orjson
import pytest
from srota.connectors import Message

from srota import connectors
from tests.integration.support import (
    config,
    kafka_sink,
    kafka_source,
    produce,
    read_topic,
    running_host,
    wait_until,
)

pytestmark = pytest.mark.integration


def _mqtt_options(broker: Any, **extra: str) -> str:
    options = {"url": broker.url, **extra}
    if getattr(broker, "ca_file", None):
        options["tls.ca.file"] = str(broker.ca_file)
    return ", ".join(f"{k}='{v}'" for k, v in options.items())


class Observer:
    """An MQTT subscriber outside the service."""

    def __init__(self, broker: Any, topic: str, **options: str) -> None:
        opts = {"url": broker.url, "topic": topic, **options}
        if getattr(broker, "ca_file", None):
            opts["tls.ca.file"] = str(broker.ca_file)
        self.source = connectors.create_source("mqtt", opts, name="observer")
        self.messages: list[Message] = []

    async def __aenter__(self) -> Observer:
        async def take(messages: list[Message]) -> None:
            self.messages.extend(messages)

        await self.source.start(take)
        await self.source.wait_ready(10)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.source.stop()

    async def wait_for(self, n: int, timeout: float = 20.0) -> list[Message]:
        await wait_until(lambda: len(self.messages) >= n, timeout, what=f"{n} MQTT messages")
        return self.messages


async def _publish_mqtt(broker: Any, items: list[tuple[str, bytes]], **options: str) -> None:
    opts = {"url": broker.url, "topic": "{{topic}}", **options}
    if getattr(broker, "ca_file", None):
        opts["tls.ca.file"] = str(broker.ca_file)
    sink = connectors.create_sink("mqtt", opts, name="publisher")
    await sink.connect()
    try:
        await sink.publish([(payload, {"topic": topic}) for topic, payload in items])
    finally:
        await sink.close()


def _bridge_app(mqtt: Any, kb: Any, prefix: str, to_kafka: str, commands: str, **mqtt_extra: str) -> str:
    return f"""
    @app:name('Bridge')
    @source(type='mqtt', {_mqtt_options(mqtt, topic=f'{prefix}/readings/+', **{'quality.of.service': '1'}, **mqtt_extra)},
            @map(type='json', @attributes(topic='trp:topic', temp='$.temp')))
    define stream Readings (topic string, temp double);

    {kafka_sink(kb, to_kafka, key='{{topic}}')}
    define stream Hot (topic string, temp double);

    {kafka_source(kb, commands, f'g-{uuid.uuid4().hex[:8]}', "@map(type='json')")}
    define stream Commands (device string, action string);

    @sink(type='mqtt', {_mqtt_options(mqtt, topic=f'{prefix}/commands/{{{{device}}}}', **{'quality.of.service': '1'},
                                      **mqtt_extra)},
          @map(type='json', event.grouping.enabled='false', @payload('{{{{action}}}}')))
    define stream ToDevices (device string, action string);

    from Readings[temp > 40.0] select topic, temp insert into Hot;
    from Commands select device, action insert into ToDevices;
    """


async def _round_trip(mqtt: Any, kb: Any, **mqtt_extra: str) -> None:
    prefix = f"it-{uuid.uuid4().hex[:8]}"
    to_kafka, commands = await kb.create_topic(), await kb.create_topic()
    app = _bridge_app(mqtt, kb, prefix, to_kafka, commands, **mqtt_extra)
    async with running_host(config(), app), Observer(mqtt, f"{prefix}/commands/#", **mqtt_extra) as observer:
        await _publish_mqtt(mqtt, [(f"{prefix}/readings/d1", b'{"temp": 41.5}'),
                                   (f"{prefix}/readings/d2", b'{"temp": 20.0}'),
                                   (f"{prefix}/readings/d3", b'{"temp": 45.0}')], **mqtt_extra)
        records = await read_topic(kb.bootstrap_servers, to_kafka, min_count=2)
        await produce(kb.bootstrap_servers, commands, [orjson.dumps({"device": "d1", "action": "cool"}),
                                                       orjson.dumps({"device": "d3", "action": "stop"})])
        messages = await observer.wait_for(2)
    assert sorted((r.key, r.json()["event"]["temp"]) for r in records) == [
        (f"{prefix}/readings/d1".encode(), 41.5), (f"{prefix}/readings/d3".encode(), 45.0)]
    assert sorted((m.properties["topic"], m.payload) for m in messages) == [
        (f"{prefix}/commands/d1", b"cool"), (f"{prefix}/commands/d3", b"stop")]


async def test_mqtt_to_kafka_and_back(mqtt_broker: Any, kafka_broker: Any) -> None:
    await _round_trip(mqtt_broker, kafka_broker)


async def test_mqtt_over_tls_with_credentials_keeps_the_password_out_of_the_logs(
        mosquitto_factory: Any, kafka_broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    password = f"pw-{uuid.uuid4().hex}"
    mqtt = mosquitto_factory(users={"svc": password}, tls=True)
    await _round_trip(mqtt, kafka_broker, username="svc", password=password)
    out = capsys.readouterr()
    assert "svc" in out.out or "mqtt" in out.out  # the service did log
    assert password not in out.out and password not in out.err


async def test_wrong_mqtt_password_is_not_ready_and_not_logged(
        mosquitto_factory: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A rejected login keeps the source unready (and retrying); the password stays out of the logs."""
    password = f"wrong-{uuid.uuid4().hex}"
    mqtt = mosquitto_factory(users={"svc": "right"})
    app = f"""
    @app:name('Denied')
    @source(type='mqtt', {_mqtt_options(mqtt, topic='x/#', username='svc', password=password,
                                        **{'max.reconnect.delay': '200'})}, @map(type='json'))
    define stream In (n int);
    @sink(type='log') define stream Out (n int);
    from In select n insert into Out;
    """
    from srota.service.host import ServiceHost

    logged: list[str] = []

    def read() -> str:
        out = capsys.readouterr()
        logged.extend((out.out, out.err))
        return "".join(logged)

    host = ServiceHost(config(), app_texts=[app])
    await host.start()
    try:
        await wait_until(lambda: "mqtt source disconnected" in read(), 10, what="a refused connection")
        assert not host.is_ready()
    finally:
        await host.stop()
    assert password not in read()
