"""The ``log`` sink writes Siddhi's line: ``<app> : <stream> : <payload>`` (siddhi-core 5.1.33's
``LogSink``: ``logPrefix + " : " + payload``, the default prefix ``<app name> : <stream id>``,
an event printed by ``Event.toString``); ``format='fields'`` writes Srota's ``name=value`` pairs."""
from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from srota.connectors import LogSink
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import AttrType
from srota.mappers._base import TimedRow
from srota.service.host import ServiceHost
from structlog.testing import capture_logs

from tests.mappers.harness import START, Running, f32, until
from tests.mappers.harness import start as start_app


@pytest.fixture
async def run(tmp_path: Path) -> AsyncIterator[Any]:
    hosts: list[ServiceHost] = []

    async def start(app: str) -> Running:
        r = await start_app(app, str(tmp_path / f"errors-{len(hosts)}.db"))
        hosts.append(r.host)
        return r

    yield start
    for h in hosts:
        await h.stop()


def test_a_row_is_printed_as_siddhis_event_with_the_default_prefix() -> None:
    sink = LogSink({}, name="StockApp/BarStream/sink0")
    sink.set_attributes(["symbol", "price", "volume", "avg", "ok", "note"],
                        [AttrType.STRING, AttrType.FLOAT, AttrType.LONG, AttrType.DOUBLE, AttrType.BOOL,
                         AttrType.STRING])
    row = TimedRow.of(1767225600000, ("WSO2", f32(55.6), 100, 100.0, True, None))
    # Java: Event{timestamp=..., data=Arrays.toString(data), isExpired=false}; a float is
    # Float.toString (55.6), a double 100.0, null as null.
    assert sink.line(row) == ("StockApp : BarStream : Event{timestamp=1767225600000, "
                              "data=[WSO2, 55.6, 100, 100.0, true, null], isExpired=false}")
    assert sink.line(("IBM", 1e10, 5, 0.0001, False, "a b"), 7) == \
        "StockApp : BarStream : Event{timestamp=7, data=[IBM, 1.0E10, 5, 1.0E-4, false, a b], isExpired=false}"


def test_text_and_map_payloads_and_a_given_prefix() -> None:
    sink = LogSink({"prefix": "My Log"}, name="App/S/sink1")
    assert sink.line('{"event":{"a":1}}') == 'My Log : {"event":{"a":1}}'  # a mapped payload as it is
    assert sink.line(b"bytes") == "My Log : bytes"
    assert sink.line({"symbol": "WSO2", "price": 55.6}) == "My Log : {symbol=WSO2, price=55.6}"  # Map.toString
    # a @distribution destination keeps its stream's prefix
    assert LogSink({}, name="App/S/sink0/destination1").line("x") == "App : S : x"


def test_without_types_a_32_bit_value_prints_as_javas_float() -> None:
    sink = LogSink({}, name="App/S/sink0")
    sink.set_attributes(["p", "d"])  # names only: a value exactly a 32-bit float is taken for one
    assert sink.line((f32(55.6), 0.1), 1) == "App : S : Event{timestamp=1, data=[55.6, 0.1], isExpired=false}"


def test_priority_and_format_options() -> None:
    sink = LogSink({"priority": "debug"}, name="App/S/sink0")
    with capture_logs() as logs:
        asyncio.run(sink.publish([("x", {})]))
    assert logs == [{"event": "App : S : x", "log_level": "debug"}]
    with capture_logs() as logs:
        asyncio.run(LogSink({"priority": "OFF"}, name="App/S/sink0").publish([("x", {})]))
    assert logs == []
    with pytest.raises(SiddhiAppCreationError, match="priority"):
        LogSink({"priority": "LOUD"})
    with pytest.raises(SiddhiAppCreationError, match="format must be 'siddhi' or 'fields'"):
        LogSink({"format": "xml"})
    fields = LogSink({"format": "fields"}, name="App/S/sink0")
    fields.set_attributes(["a", "b"])
    assert fields.line(("x", 1.5)) == "App : S a=x b=1.5"


async def test_the_service_logs_siddhis_line(run: Any) -> None:
    app = ("@App:name('LogApp')\n"
           "define stream FooStream (symbol string, price float, volume long);\n"
           "@sink(type='log')\n"
           "define stream BarStream (symbol string, price float, volume long);\n"
           "@sink(type='log', prefix='JSON', priority='WARN', @map(type='json'))\n"
           "define stream JsonStream (symbol string, price float, volume long);\n"
           "from FooStream select * insert into BarStream;\n"
           "from FooStream select * insert into JsonStream;\n")
    r = await run(app)
    with capture_logs() as logs:
        r.send("FooStream", ("WSO2", f32(55.6), 100))
        await until(lambda: len([e for e in logs if " : " in str(e.get("event"))]) >= 2)
    lines = {e["log_level"]: e["event"] for e in logs if " : " in str(e.get("event"))}
    assert re.fullmatch(r"LogApp : BarStream : Event\{timestamp=\d+, data=\[WSO2, 55\.6, 100\], isExpired=false\}",
                        lines["info"]), lines
    assert lines["warning"] == 'JSON : {"event":{"symbol":"WSO2","price":55.6,"volume":100}}'


async def test_the_service_logs_the_events_own_timestamp(run: Any) -> None:
    r = await run("@App:name('LogTs')\ndefine stream FooStream (symbol string);\n"
                  "@sink(type='log')\ndefine stream BarStream (symbol string);\n"
                  "from FooStream select * insert into BarStream;\n")
    with capture_logs() as logs:
        r.send("FooStream", ("WSO2",))
        await until(lambda: any("LogTs : BarStream" in str(e.get("event")) for e in logs))
    assert [e["event"] for e in logs if "LogTs" in str(e.get("event"))] == \
        [f"LogTs : BarStream : Event{{timestamp={START}, data=[WSO2], isExpired=false}}"]
