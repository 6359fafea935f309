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
import orjson
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


# ---------------------------------------------------------------------------- under scale-out
def _scaled() -> Any:
    import dataclasses

    from srota.service.config import ScaleoutConfig

    from tests.integration.support import config
    return dataclasses.replace(config(), scaleout=ScaleoutConfig(
        partitioned=True, checkpoint_interval_ms=500, state_topic=f"srota-state-{uuid.uuid4().hex[:8]}"))


async def test_without_the_opt_in_a_scaled_out_mqtt_only_app_is_refused_in_one_line() -> None:
    from srota.grammar.errors import SiddhiAppCreationError
    from srota.service.host import ServiceHost

    app = """@app:name('MqttOnly')
    @source(type='mqtt', url='tcp://127.0.0.1:1', topic='x', @map(type='json'))
    define stream In (id string, n long);
    define stream Out (id string, n long);
    from In[n >= 0] select id, n insert into Out;
    """
    host = ServiceHost(_scaled(), app_texts=[app])
    with pytest.raises(SiddhiAppCreationError, match="every worker would receive each message") as info:
        await host.start()
    assert "shared.subscription='true'" in str(info.value) and "\n" not in str(info.value)


async def test_a_scaled_out_app_runs_its_mqtt_source_on_one_worker_across_restarts_and_a_takeover(
        mosquitto_factory: Any, kafka_broker: Any) -> None:
    """Two workers of an app with a kafka @source and an MQTT QoS 1 source (plain subscription,
    persistent session): only the owner of partition 0 subscribes, so each message comes out
    about once (not once per worker); Mosquitto restarts and the owner stops (partition 0 and
    the source move to the other worker): no message is lost."""
    from srota.service.host import ServiceHost

    from tests.integration.support import PER_EVENT_JSON, TopicReader, kafka_sink, kafka_source, wait_until

    broker = _persistent(mosquitto_factory())
    kb = kafka_broker
    src = await kb.create_topic(partitions=2)
    out = await kb.create_topic(partitions=1)
    topic = f"single/{uuid.uuid4().hex[:8]}"
    app = f"""
    @app:name('OneMqtt')
    {kafka_source(kb, src, f"g-{uuid.uuid4().hex[:8]}", **{"key.attribute": "id"})}
    define stream In (id string, n long);
    @source(type='mqtt', url='{broker.url}', topic='{topic}', quality.of.service='1', clean.session='false',
            client.id='one-mqtt-{uuid.uuid4().hex[:6]}', @map(type='json'))
    define stream MqttIn (id string, n long);
    {kafka_sink(kb, out, PER_EVENT_JSON)}
    define stream Out (id string, n long);
    from MqttIn select id, n insert into Out;
    from In select id, n insert into Out;
    """
    cfg = _scaled()
    hosts = [ServiceHost(cfg, app_texts=[app]), ServiceHost(cfg, app_texts=[app])]
    for h in hosts:
        await h.start()

    def owner() -> Any:
        found = [h for h in hosts if h.apps and getattr(h.apps["OneMqtt"], "_single_on", False)]
        return found[0] if len(found) == 1 else None

    def taken(h: Any) -> float:
        return float(h.metrics.source_messages.labels("OneMqtt", "MqttIn", "mqtt")._value.get())

    sent: list[int] = []
    producing = True

    async def publish() -> None:
        i, pending = 0, None
        while producing or pending is not None:
            try:
                async with aiomqtt.Client(broker.host, broker.port, identifier=f"pub-{uuid.uuid4().hex[:8]}",
                                          clean_session=False, timeout=3) as client:
                    while producing or pending is not None:
                        if pending is None:
                            pending, i = i, i + 1
                        await asyncio.wait_for(client.publish(topic, orjson.dumps({"id": f"k{pending % 7}",
                                                                                    "n": pending}), qos=1), 3)
                        sent.append(pending)
                        pending = None
                        await asyncio.sleep(0.01)
            except (aiomqtt.MqttError, TimeoutError, OSError):
                await asyncio.sleep(0.05)

    stopped: list[Any] = []
    try:
        async with TopicReader(kb.bootstrap_servers, out) as reader:
            await wait_until(lambda: owner() is not None and all(h.is_ready() for h in hosts), 60,
                             what="one worker to own partition 0 and run the mqtt source")
            first = owner()
            publisher = asyncio.create_task(publish())
            await asyncio.sleep(2.0)
            await asyncio.to_thread(broker.stop)
            await asyncio.sleep(1.0)
            await asyncio.to_thread(broker.start)
            await asyncio.sleep(2.0)
            assert [taken(h) > 0 for h in hosts] == [h is first for h in hosts], "both workers received mqtt"
            await first.stop()  # partition 0, and the mqtt source with it, go to the other worker
            stopped.append(first)
            await wait_until(lambda: owner() is not None, 60, what="the other worker to take the mqtt source over")
            await asyncio.sleep(2.0)
            producing = False
            await asyncio.wait_for(publisher, 30)
            records = await reader.until(lambda rs: {r.json()["event"]["n"] for r in rs} >= set(sent), 60,
                                         what="every mqtt message")
    finally:
        producing = False
        for h in hosts:
            if h not in stopped:
                await h.stop()
    got = [r.json()["event"]["n"] for r in records]
    repeated = len(got) - len(set(got))
    assert len(sent) > 100, "too few messages to test anything"
    # At least once: a message whose acknowledgement was not sent before the move comes again
    # (at most an in-flight window), never once per worker.
    assert repeated <= 40, f"{repeated} of {len(sent)} messages came out twice"


async def test_a_revocation_cut_short_while_the_mqtt_source_stops_leaves_no_partition_running_on(
        mosquitto_factory: Any, kafka_broker: Any) -> None:
    """Found by the soak: the owner of partition 0 stopped its MQTT source before the revocation's
    checkpoint.  A slow stop ran into the rebalance timeout, which cancels the revocation; the
    cancellation came before the code that forgets (or marks as revoked) the partitions, so the
    worker went on with them as if the rebalance had kept them, without asking whether another
    worker had owned them meanwhile: records counted twice.  Every partition of a revocation,
    cut short or not, is now forgotten or marked revoked, and the MQTT source stops after it."""
    from srota.service.host import ServiceHost

    from tests.integration.support import kafka_source, wait_until

    broker = mosquitto_factory()
    kb = kafka_broker
    src = await kb.create_topic(partitions=2)
    app = f"""
    @app:name('CutShort')
    {kafka_source(kb, src, f"g-{uuid.uuid4().hex[:8]}", **{"key.attribute": "id"})}
    define stream In (id string, n long);
    @source(type='mqtt', url='{broker.url}', topic='cut/{uuid.uuid4().hex[:8]}', clean.session='false',
            client.id='cut-{uuid.uuid4().hex[:6]}', @map(type='json'))
    define stream MqttIn (id string, n long);
    define stream Out (id string, n long);
    from MqttIn select id, n insert into Out;
    from In select id, n insert into Out;
    """
    host = ServiceHost(_scaled(), app_texts=[app])
    await host.start()
    try:
        h = host.apps["CutShort"]
        await wait_until(lambda: h._single_on and set(h.partitions.by_partition) == {0, 1}, 60,
                         what="both partitions and the mqtt source here")
        mqtt = h._single[0].source
        real_stop = mqtt.stop

        async def slow_stop() -> None:
            await asyncio.sleep(2.0)
            await real_stop()

        mqtt.stop = slow_stop
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(h._revoke({(src, 0), (src, 1)}), 0.5)  # as the rebalance timeout does
        left = {p for p in h.partitions.by_partition if p not in h._revoked}
        assert not left, f"partitions {left} would go on after the rebalance without checking their claim"
        await wait_until(lambda: not h._single_on and not mqtt.running, 10, what="the mqtt source to stop")
    finally:
        await host.stop()
