"""Port of siddhi-io-mqtt's ``MqttSourceTestCase`` (every ``@Test``, one test each).

Upstream: ``component/src/test/java/io/siddhi/extension/io/mqtt/source/MqttSourceTestCase.java``.
Each Java test runs a source app (``@source(type='mqtt')`` on ``FooStream2``, a callback on
``BarStream2``), waits four seconds for it to subscribe, then a sink app publishing to the same
topic, and waits for the callback to count the events.  The ports run both apps on service
hosts, wait until the source is subscribed instead of sleeping, and assert the count (and the
rows, which follow from what was sent).  The apps map with ``xml``, as the Java tests' do.
"""
from __future__ import annotations

import asyncio
from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from tests.conftest import free_port
from tests.connectors.upstream.mqtt.support import (
    IBM,
    WSO2,
    WSO2_2,
    ready,
    rows,
    source_of,
    unique,
    until,
)
from tests.mappers.harness import f32

pytestmark = pytest.mark.integration

#: What BarStream2 receives for WSO2, IBM, WSO2 (floats as Siddhi's 32-bit floats).
THREE = [("WSO2", f32(55.6), 100), ("IBM", f32(75.6), 100), ("WSO2", f32(57.6), 100)]


def _source_app(options: str, mapping: str = "xml") -> str:
    return ("@App:name('TestExecutionPlan2') "
            "define stream BarStream2 (symbol string, price float, volume long); "
            "@info(name = 'query1') "
            f"@source(type='mqtt', {options}, @map(type='{mapping}'))"
            "Define stream FooStream2 (symbol string, price float, volume long);"
            "from FooStream2 select symbol, price, volume insert into BarStream2;")


def _sink_app(url: str, topic: str, mapping: str = "xml") -> str:
    return ("@App:name('TestExecutionPlan') "
            "define stream FooStream (symbol string, price float, volume long); "
            "@info(name = 'query1') "
            f"@sink(type='mqtt', url= '{url}', "
            f"topic='{topic}', clean.session='true', message.retain='false', "
            f"quality.of.service= '1',keep.alive= '60',@map(type='{mapping}'))"
            "Define stream BarStream (symbol string, price float, volume long);"
            "from FooStream select symbol, price, volume insert into BarStream;")


async def _receive(run: Any, source_options: str, sink_url: str, topic: str,
                   *chunks: tuple[tuple[Any, ...], ...]) -> list[tuple[Any, ...]]:
    """Start the source app, wait until it is subscribed, send ``chunks`` through the sink app
    (one ``send`` each: one row is ``send(Object[])``, more are ``send(Event[])``) and return
    what ``BarStream2`` received once it has all the rows (``waitForEvents``)."""
    src = await run(_source_app(source_options))
    got = src.watch("BarStream2")
    await ready(src, "FooStream2")
    snk = await run(_sink_app(sink_url, topic))
    for chunk in chunks:
        snk.send("FooStream", *chunk)
    expected = sum(len(c) for c in chunks)
    await until(lambda: len(rows(got)) >= expected, timeout=10)
    await asyncio.sleep(0.2)  # and no more
    return rows(got)


async def test_mqttReceiveSingleEvents(run: Any, mqtt_broker: Any) -> None:
    """Three events sent one by one reach the source app (the Java test waits for three)."""
    topic = unique("mqtt_receive_single_event")
    got = await _receive(run, f"url= '{mqtt_broker.url}',topic = '{topic}',clean.session='true', keep.alive= '60'",
                         mqtt_broker.url, topic, (WSO2,), (IBM,), (WSO2_2,))
    assert got == THREE


async def test_mqttReceiveMultipleEvents(run: Any, mqtt_broker: Any) -> None:
    """An Event[] of three: the callback counts three."""
    topic = unique("mqtt_receive_multiple_event")
    got = await _receive(run, f"url= '{mqtt_broker.url}',topic = '{topic}',clean.session='true', keep.alive= '60'",
                         mqtt_broker.url, topic, (WSO2, IBM, WSO2_2))
    assert len(got) == 3
    assert got == THREE


async def test_testMqttWithoutUrl(run: Any) -> None:
    """No ``url``: app creation fails (Java: ``SiddhiAppValidationException``)."""
    with pytest.raises(SiddhiAppCreationError, match="'url' is required"):
        await run(_source_app("topic = 'mqtt_receive_without_url',clean.session='true', keep.alive= '60'"))


async def test_testMqttWithoutTopic(run: Any) -> None:
    """No ``topic``: app creation fails (Java: ``SiddhiAppValidationException``)."""
    with pytest.raises(SiddhiAppCreationError, match="'topic' is required"):
        await run(_source_app("url= 'tcp://localhost:1883',clean.session='true', keep.alive= '60'"))


async def test_mqttReceiveWithInvalidBrokerCredintials(run: Any) -> None:
    """A broker that is not there (Java: port 1887), and ``topic`` given twice (the last one
    counts, as in Siddhi): the app starts and shuts down without an error; the source keeps
    trying to connect meanwhile."""
    r = await run(_source_app(f"topic='mqtt_receive_with_invalid_url',url= 'tcp://127.0.0.1:{free_port()}',"
                              "topic = 'mqtt_topic51',clean.session='true', keep.alive= '60'"))
    source = source_of(r, "FooStream2")
    assert source.topics == ["mqtt_topic51"]
    await asyncio.sleep(0.3)
    assert source.running and not source.ready
    await run.stop(r)


async def test_mqttReceiveWithoutCleanSession(run: Any, mqtt_broker: Any) -> None:
    """``clean.session`` left at its default (true): three events arrive."""
    topic = unique("mqtt_receive_without_clean_session")
    got = await _receive(run, f"url= '{mqtt_broker.url}',topic = '{topic}', keep.alive= '60'",
                         mqtt_broker.url, topic, (WSO2, IBM, WSO2_2))
    assert len(got) == 3


async def test_mqttReceiveWithoutKeepAlive(run: Any, mqtt_broker: Any) -> None:
    """``keep.alive`` left at its default (60): three events arrive."""
    topic = unique("mqtt_receive_without_keep_alive")
    got = await _receive(run, f"url= '{mqtt_broker.url}',topic = '{topic}',clean.session='true'",
                         mqtt_broker.url, topic, (WSO2, IBM, WSO2_2))
    assert len(got) == 3


async def test_mqttReceiveWithCleanSessionFalse(run: Any, mqtt_broker: Any) -> None:
    """``clean.session='false'`` without a ``client.id`` (Siddhi generates one): three events arrive."""
    topic = unique("mqtt_receive_with_clean_session_false")
    got = await _receive(run, f"url= '{mqtt_broker.url}',topic = '{topic}',clean.session='false'",
                         mqtt_broker.url, topic, (WSO2, IBM, WSO2_2))
    assert len(got) == 3


async def test_mqttRecieveEventsWithMultipleTopics(run: Any, mqtt_broker: Any) -> None:
    """A topic with levels (``mqtt/receives/MultipleTopics``; the sink gives
    ``quality.of.service`` twice, the last counts): three events arrive."""
    topic = unique("mqtt/receives/MultipleTopics")
    src = await run(_source_app(f"url= '{mqtt_broker.url}',topic = '{topic}',"
                                "quality.of.service='1',clean.session='true', keep.alive= '60'"))
    got = src.watch("BarStream2")
    await ready(src, "FooStream2")
    snk = await run("@App:name('TestExecutionPlan') "
                    "define stream FooStream (symbol string, price float, volume long); "
                    "@info(name = 'query1') "
                    f"@sink(type='mqtt', url= '{mqtt_broker.url}', "
                    f"topic='{topic}',quality.of.service='1', clean.session='true',"
                    " message.retain='false', quality.of.service= '1',keep.alive= '60',@map(type='xml'))"
                    "Define stream BarStream (symbol string, price float, volume long);"
                    "from FooStream select symbol, price, volume insert into BarStream;")
    snk.send("FooStream", WSO2)
    snk.send("FooStream", IBM)
    snk.send("FooStream", WSO2_2)
    await until(lambda: len(rows(got)) >= 3)
    await asyncio.sleep(0.2)
    assert rows(got) == THREE


def _two_sinks_app(url: str, topic1: str, topic2: str) -> str:
    """The Java tests' sink app with two sinks: FooStream -> topic1, FooStream2 -> topic2."""
    sink = ("@sink(type='mqtt', url= '{url}', topic='{topic}',quality.of.service='1', clean.session='true',"
            " message.retain='false', quality.of.service= '1',keep.alive= '60',@map(type='xml'))")
    return ("@App:name('TestExecutionPlan') "
            "define stream FooStream (symbol string, price float, volume long); "
            "define stream FooStream2 (symbol string, price float, volume long); "
            "@info(name = 'query1') " + sink.format(url=url, topic=topic1) +
            "Define stream BarStream (symbol string, price float, volume long);"
            "@info(name = 'query2') " + sink.format(url=url, topic=topic2) +
            "Define stream BarStream2 (symbol string, price float, volume long);"
            "from FooStream select symbol, price, volume insert into BarStream; "
            "from FooStream2 select symbol, price, volume insert into BarStream2; ")


async def test_mqttRecieveEventsWithMultiLevel(run: Any, mqtt_broker: Any) -> None:
    """A multi-level wildcard (``mqtt/receive/#``) receives from ``mqtt/receive/MultipleTopics``
    and ``mqtt/receive/SingleTopics``: the callback counts three."""
    root = unique("mqtt")
    src = await run(_source_app(f"url= '{mqtt_broker.url}',topic = '{root}/receive/#',"
                                "quality.of.service='1',clean.session='true', keep.alive= '60'"))
    got = src.watch("BarStream2")
    await ready(src, "FooStream2")
    snk = await run(_two_sinks_app(mqtt_broker.url, f"{root}/receive/MultipleTopics", f"{root}/receive/SingleTopics"))
    snk.send("FooStream", WSO2)
    snk.send("FooStream2", IBM)
    snk.send("FooStream2", WSO2_2)
    await until(lambda: len(rows(got)) >= 3)
    await asyncio.sleep(0.2)
    # Two topics: the broker keeps the order within each, not across them.
    assert sorted(rows(got)) == sorted(THREE)


async def test_mqttRecieveEventsWithSingleLevel(run: Any, mqtt_broker: Any) -> None:
    """A single-level wildcard (``mqtt/+/Topic``) receives from ``mqtt/multiple/Topic`` and
    ``mqtt/single/Topic``: the callback counts three."""
    root = unique("mqtt")
    src = await run(_source_app(f"url= '{mqtt_broker.url}',topic = '{root}/+/Topic',"
                                "quality.of.service='1',clean.session='true', keep.alive= '60'"))
    got = src.watch("BarStream2")
    await ready(src, "FooStream2")
    snk = await run(_two_sinks_app(mqtt_broker.url, f"{root}/multiple/Topic", f"{root}/single/Topic"))
    snk.send("FooStream", WSO2)
    snk.send("FooStream2", IBM)
    snk.send("FooStream2", WSO2_2)
    await until(lambda: len(rows(got)) >= 3)
    await asyncio.sleep(0.2)
    assert sorted(rows(got)) == sorted(THREE)


async def test_mqttReceiveEvents(run: Any, mqtt_broker: Any) -> None:
    """Pause and resume: the sources are paused, one event is sent, they are resumed, two more
    are sent; the callback counts three in the end.

    (Siddhi's ``MqttConsumer`` does not actually hold messages while paused -- its wait loop
    waits only once resumed -- so the Java test asserts only the final count.  Srota's source
    holds them: the port also checks that nothing arrives while paused, and that the held
    event comes first after the resume.)
    """
    topic = unique("mqtt_pause_resume")
    src = await run(_source_app(f"url= '{mqtt_broker.url}',topic = '{topic}',clean.session='true', keep.alive= '60'"))
    got = src.watch("BarStream2")
    await ready(src, "FooStream2")
    snk = await run(_sink_app(mqtt_broker.url, topic))
    source = source_of(src, "FooStream2")
    source.pause()
    snk.send("FooStream", WSO2)
    await asyncio.sleep(0.5)
    assert rows(got) == []
    source.resume()
    snk.send("FooStream", IBM)
    await until(lambda: len(rows(got)) >= 2)
    snk.send("FooStream", WSO2_2)
    await until(lambda: len(rows(got)) >= 3)
    await asyncio.sleep(0.2)
    assert rows(got) == THREE
