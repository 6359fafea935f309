"""An MQTT QoS 1 source while Mosquitto (persistence on) restarts under a steady stream.

The soak (tests/soak) lost QoS 1 messages around Mosquitto restarts: exactly those published
after the broker came back and before the bridge's source had subscribed again.  The source
was not at fault: under ``scaleout.partitioned`` the host rewrites a stateless app's MQTT topic
into a shared subscription (``$share/srota-<app>/<topic>``), and Mosquitto 2.0 does not keep
shared subscriptions across a restart (its persistence writes a session's plain subscriptions
only), so until a member subscribes again a message has no subscriber and is dropped.

* with a plain subscription and a persistent session, nothing is lost, also what is published
  while the source is away (the broker queues it for the restored session);
* with a shared subscription, what is published in that window is lost: pinned here so that
  docs/delivery.md stays true, and so a broker (or a Mosquitto) that keeps shared
  subscriptions shows up as this test failing.
"""
from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass, field
from typing import Any

import aiomqtt
import pytest
from srota.connectors import Message, MqttSource
from structlog.testing import capture_logs

from srota import connectors
from tests.conftest import free_port
from tests.integration.support import TcpProxy

pytestmark = pytest.mark.integration


def _persistent(broker: Any) -> Any:
    """Restart ``broker`` with persistence on, saved at every change (as the soak runs it)."""
    broker.stop()
    text = broker.config.read_text().replace("persistence false\n", "")
    broker.config.write_text(text + f"persistence true\npersistence_location {broker.workdir}/\n"
                             "autosave_interval 1\nautosave_on_changes true\n")
    broker.start()
    return broker


@dataclass
class _Flow:
    sent: list[bytes] = field(default_factory=list)
    #: Messages the broker acknowledged while the source was not subscribed.
    away: set[bytes] = field(default_factory=set)
    got: list[bytes] = field(default_factory=list)

    @property
    def lost(self) -> set[bytes]:
        return set(self.sent) - set(self.got)


async def _flow_through_restarts(broker: Any, subscribe_to: str, publish_to: str, restarts: int = 2) -> _Flow:
    """Publish QoS 1 messages at about 100 a second, each retried until the broker acknowledges
    it, into a source with a persistent session; restart the broker ``restarts`` times.

    The source reaches the broker through a proxy that stays shut for a second after each
    restart, so that every restart has messages published before the source is back (in the
    soak, the source's back-off made that window)."""
    flow = _Flow()
    proxy = TcpProxy(broker.port, free_port())
    await proxy.start()
    src = connectors.create_source("mqtt", {
        "url": f"tcp://127.0.0.1:{proxy.port}", "topic": subscribe_to, "quality.of.service": "1", "clean.session": "false",
        "client.id": f"restart-{uuid.uuid4().hex[:8]}"}, name="In")
    assert isinstance(src, MqttSource)

    async def take(messages: list[Message]) -> None:
        # As the host does: acknowledge once the chunk is processed, a little later.
        flow.got.extend(bytes(m.payload) for m in messages)
        await asyncio.sleep(0.01)
        await src.commit([messages[-1].ack])

    await src.start(take)
    await src.wait_ready(10)
    producing = True

    async def publish() -> None:
        i, pending = 0, None
        while producing or pending is not None:
            try:
                async with aiomqtt.Client(broker.host, broker.port, identifier=f"pub-{uuid.uuid4().hex[:8]}",
                                          clean_session=False, timeout=3) as client:
                    while producing or pending is not None:
                        if pending is None:
                            pending, i = f"m{i}".encode(), i + 1
                        # Not subscribed when the publish starts: the broker takes it with no
                        # subscription of this session in place (unless it queues for the session).
                        away = not src.ready
                        await asyncio.wait_for(client.publish(publish_to, pending, qos=1), 3)
                        if away or not src.ready:
                            flow.away.add(pending)
                        flow.sent.append(pending)
                        pending = None
                        await asyncio.sleep(0.01)
            except (aiomqtt.MqttError, TimeoutError, OSError):
                await asyncio.sleep(0.05)

    publisher = asyncio.create_task(publish())
    try:
        for _ in range(restarts):
            await asyncio.sleep(1.0)
            await asyncio.to_thread(broker.stop)  # with the source connected, as in the soak
            await proxy.cut()
            await asyncio.sleep(0.5)
            await asyncio.to_thread(broker.start)
            await asyncio.sleep(1.0)  # the publisher is back, the source not yet
            await proxy.restore()
            await src.wait_ready(15)
        await asyncio.sleep(1.0)
        producing = False
        await asyncio.wait_for(publisher, 15)
        async with asyncio.timeout(10):
            while flow.lost and not (flow.lost <= flow.away):
                await asyncio.sleep(0.05)  # what is not lost for good is still on its way
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(3):  # and what the broker queued for the session
                while flow.lost:
                    await asyncio.sleep(0.05)
    finally:
        producing = False
        publisher.cancel()
        await src.stop()
        await proxy.close()
    return flow


async def test_a_persistent_session_loses_nothing_published_while_mosquitto_restarts(
        mosquitto_factory: Any) -> None:
    broker = _persistent(mosquitto_factory())
    topic = f"restart/{uuid.uuid4().hex[:8]}"
    flow = await _flow_through_restarts(broker, topic, topic)
    assert flow.away, "no message was published while the source was away: the test did not test the window"
    assert not flow.lost, (f"{len(flow.lost)} of {len(flow.sent)} QoS 1 messages lost across Mosquitto restarts "
                           f"({len(flow.lost & flow.away)} of them published while the source was away)")


async def test_a_shared_subscription_loses_what_is_published_before_it_is_made_again(
        mosquitto_factory: Any) -> None:
    """Mosquitto's limitation, not the source's: a shared subscription is gone after a restart."""
    broker = _persistent(mosquitto_factory())
    topic = f"restart/{uuid.uuid4().hex[:8]}"
    with capture_logs() as logs:
        flow = await _flow_through_restarts(broker, f"$share/srota-test/{topic}", topic)
    assert any("shared subscription is not kept" in e["event"] for e in logs), "the source did not warn"
    assert flow.away, "no message was published while the source was away: the test did not test the window"
    assert flow.lost, "Mosquitto kept the shared subscription across its restart: docs/delivery.md needs updating"
    assert flow.lost <= flow.away, "a message published while the source was subscribed is lost"
