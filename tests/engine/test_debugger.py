"""The debugger, after Siddhi's own TestDebugger scenarios (siddhi-core debugger tests)."""
from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from srota import QueryTerminal, SiddhiManager

T0 = 1_700_000_000_000

APP = """
@app:name('debugged')
define stream cseEventStream (symbol string, price float, volume int);
@info(name = 'query1')
from cseEventStream select symbol, price, volume insert into OutputStream;
"""

TWO = """
define stream cseEventStream (symbol string, price float, volume int);
@info(name = 'query1')
from cseEventStream select symbol, price, volume insert into OutputStream;
@info(name = 'query2')
from OutputStream select * insert into OutputStream2;
"""


def _run(app: str) -> tuple[Any, Any, list[tuple[str, str, list[tuple[Any, ...]]]]]:
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    seen: list[tuple[str, str, list[tuple[Any, ...]]]] = []
    debugger = rt.debug()
    return rt, debugger, seen


def _send(rt: Any, *rows: list[Any]) -> None:
    h = rt.get_input_handler("cseEventStream")
    for i, r in enumerate(rows):
        h.send(r, timestamp=T0 + i)


def test_in_then_out_with_next() -> None:
    rt, debugger, seen = _run(APP)
    out: list[Any] = []
    rt.add_callback("OutputStream", lambda events: out.extend(e.data for e in events))
    debugger.acquire_break_point("query1", QueryTerminal.IN)

    def cb(events: Any, query: str, terminal: QueryTerminal, dbg: Any) -> None:
        seen.append((query, terminal.value, [e.data for e in events]))
        dbg.next()

    debugger.set_debugger_callback(cb)
    _send(rt, ["WSO2", 50.0, 60], ["WSO2", 70.0, 40])
    rt.shutdown()
    assert seen == [("query1", "in", [("WSO2", 50.0, 60)]), ("query1", "out", [("WSO2", 50.0, 60)]),
                    ("query1", "in", [("WSO2", 70.0, 40)]), ("query1", "out", [("WSO2", 70.0, 40)])]
    assert out == [("WSO2", 50.0, 60), ("WSO2", 70.0, 40)]  # nothing lost


@pytest.mark.parametrize("terminal", [QueryTerminal.IN, QueryTerminal.OUT])
def test_play_stops_only_at_the_acquired_terminal(terminal: QueryTerminal) -> None:
    rt, debugger, seen = _run(APP)
    debugger.acquire_break_point("query1", terminal)
    debugger.set_debugger_callback(lambda ev, q, t, d: (seen.append((q, t.value, [e.data for e in ev])), d.play()))
    _send(rt, ["WSO2", 50.0, 60], ["WSO2", 70.0, 40])
    rt.shutdown()
    assert [s[1] for s in seen] == [terminal.value, terminal.value]


def test_a_length_batch_out_is_one_chunk() -> None:
    rt, debugger, seen = _run("""
define stream cseEventStream (symbol string, price float, volume int);
@info(name = 'query1')
from cseEventStream#window.lengthBatch(3) select symbol, price, volume insert into OutputStream;""")
    debugger.acquire_break_point("query1", QueryTerminal.OUT)
    debugger.set_debugger_callback(lambda ev, q, t, d: (seen.append((q, t.value, [e.data for e in ev])), d.play()))
    _send(rt, ["WSO2", 50.0, 60], ["WSO2", 70.0, 40], ["WSO2", 60.0, 50])
    rt.shutdown()
    assert seen == [("query1", "out", [("WSO2", 50.0, 60), ("WSO2", 70.0, 40), ("WSO2", 60.0, 50)])]


def test_next_walks_into_the_downstream_query() -> None:
    rt, debugger, seen = _run(TWO)
    debugger.acquire_break_point("query1", QueryTerminal.IN)
    debugger.set_debugger_callback(lambda ev, q, t, d: (seen.append((q, t.value)), d.next()))
    _send(rt, ["WSO2", 50.0, 60])
    rt.shutdown()
    assert seen == [("query1", "in"), ("query1", "out"), ("query2", "in"), ("query2", "out")]


def test_a_window_state_is_readable_at_a_breakpoint() -> None:
    rt, debugger, _ = _run("""
define stream cseEventStream (symbol string, price float, volume int);
@info(name = 'query1')
from cseEventStream#window.length(3) select symbol, sum(volume) as total insert into OutputStream;""")
    states: list[Any] = []
    debugger.acquire_break_point("query1", QueryTerminal.OUT)
    debugger.set_debugger_callback(lambda ev, q, t, d: (states.append(d.get_query_state(q)), d.play()))
    _send(rt, ["WSO2", 50.0, 60], ["IBM", 70.0, 40])
    rt.shutdown()
    window = states[-1]["query1/window"]
    assert [e["data"] for e in window["buffer"]] == [["WSO2", 50.0, 60], ["IBM", 70.0, 40]]
    assert states[-1]["query1/selector"]["states"]["None"][0]["total"] == 100  # sum(volume) over the window


def test_a_released_breakpoint_stops_nothing_and_unknown_queries_are_named() -> None:
    rt, debugger, seen = _run(APP)
    debugger.acquire_break_point("query1", QueryTerminal.IN)
    debugger.release_break_point("query1", QueryTerminal.IN)
    debugger.set_debugger_callback(lambda ev, q, t, d: seen.append((q, t.value)))
    _send(rt, ["WSO2", 50.0, 60])
    with pytest.raises(ValueError, match="no query named 'query9' .*queries: query1"):
        debugger.acquire_break_point("query9", QueryTerminal.IN)
    rt.shutdown()
    assert seen == []


def test_a_callback_that_returns_holds_the_sender_until_another_thread_plays() -> None:
    rt, debugger, seen = _run(APP)
    out: list[Any] = []
    rt.add_callback("OutputStream", lambda events: out.extend(e.data for e in events))
    debugger.acquire_break_point("query1", QueryTerminal.IN)
    debugger.set_debugger_callback(lambda ev, q, t, d: seen.append((q, t.value)))
    sender = threading.Thread(target=_send, args=(rt, ["WSO2", 50.0, 60]))
    sender.start()
    time.sleep(0.3)
    assert sender.is_alive() and out == [] and debugger.held is not None
    debugger.play()
    sender.join(5)
    assert not sender.is_alive() and out == [("WSO2", 50.0, 60)]
    rt.shutdown()


def test_pause_and_resume_hold_the_whole_app() -> None:
    rt = SiddhiManager().create_siddhi_app_runtime(APP)
    out: list[Any] = []
    rt.add_callback("OutputStream", lambda events: out.extend(e.data for e in events))
    rt.start()
    rt.pause()
    sender = threading.Thread(target=_send, args=(rt, ["WSO2", 50.0, 60]))
    sender.start()
    time.sleep(0.2)
    assert rt.paused and out == []
    rt.resume()
    sender.join(5)
    assert out == [("WSO2", 50.0, 60)]
    rt.shutdown()


def test_statistics_count_and_time_each_query() -> None:
    rt = SiddhiManager().create_siddhi_app_runtime(
        "@app:statistics(reporter='prometheus', interval='5')\n" + TWO)
    rt.start()
    _send(rt, *[["WSO2", 50.0, i] for i in range(10)])
    report = rt.statistics()
    assert report["streams"]["cseEventStream"]["events_in"] == 10
    assert report["queries"]["query1"]["events_in"] == 10 and report["queries"]["query1"]["events_out"] == 10
    assert report["queries"]["query2"]["chunks"] == 10
    assert report["queries"]["query1"]["latency_ms"]["p99"] > 0
    rt.set_statistics_level("off")
    assert rt.statistics() is None and rt.context.inspector is None
    rt.set_statistics_level("detail")
    _send(rt, ["WSO2", 1.0, 1])
    assert "max" in rt.statistics()["queries"]["query1"]["latency_ms"]
    rt.shutdown()


def test_console_reporter_prints_at_its_interval() -> None:
    rt = SiddhiManager().create_siddhi_app_runtime(
        "@app:statistics(reporter='console', interval='100 ms')\n" + APP)
    lines: list[str] = []
    rt.context.statistics.printer = lines.append
    rt.start()
    _send(rt, ["WSO2", 50.0, 60])
    time.sleep(0.35)
    rt.shutdown()
    assert len(lines) >= 2 and "query query1: 1 in, 1 out" in lines[-1]


def test_statistics_report_held_events_and_store_latency(tmp_path: Any) -> None:
    rt = SiddhiManager().create_siddhi_app_runtime(f"""@app:statistics(reporter='prometheus')
define stream S (k string, v long, ts long);
@store(type='sqlite', database='{tmp_path / "agg.db"}')
define aggregation A from S select k, sum(v) as total group by k aggregate by ts every sec ... min;
@info(name='win') from S#window.length(3) select k, sum(v) as total insert into O;""")
    rt.start()
    for i in range(5):
        rt.get_input_handler("S").send(["a", i, T0 + i * 1000], timestamp=T0 + i * 1000)
    rt.context.aggregations["A"].complete_all()
    report = rt.statistics()
    rt.shutdown()
    assert report["queries"]["win"]["events_held"] == 3
    assert report["aggregations"]["A"]["store_latency_ms"]["p99"] > 0
