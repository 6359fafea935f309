"""engine/collector.py: chunks are processed with the cyclic garbage collector held off."""
from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from srota.engine import Event, SiddhiManager, collector
from srota.engine.collector import MIN_EVENTS
from srota.engine.debugger import QueryTerminal

T0 = 1_700_000_000_000

APP = """
define stream S (symbol string, price double);
define stream Inner (n long);
from S[price > 0] select symbol, price insert into Out;
from Inner select n insert into InnerOut;
"""


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    """Each test starts with the collector on and leaves it as it was."""
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def _runtime(app: str = APP, **manager: Any) -> tuple[Any, list[bool]]:
    """A started runtime and, per chunk reaching ``Out``, whether the collector was on."""
    rt = SiddhiManager(**manager).create_siddhi_app_runtime(app)
    seen: list[bool] = []
    rt.add_callback("Out", lambda events: seen.append(gc.isenabled()))
    rt.start()
    return rt, seen


def _events(n: int) -> list[Event]:
    return [Event(T0 + i, ("IBM", 1.0 + i)) for i in range(n)]


def test_a_chunk_is_processed_with_the_collector_held_off_and_turned_on_after() -> None:
    rt, seen = _runtime()
    h = rt.get_input_handler("S")
    n = MIN_EVENTS
    h.send_events(_events(n))
    assert gc.isenabled()
    h.send_rows([("IBM", 2.0)] * n, T0)
    h.send_row_groups([[("IBM", 3.0)]] * n, T0)  # n one-row messages of a source: n chunks
    h.send_chunks([_events(n // 2), _events(n // 2)])  # two chunks
    h.send_events(_events(n - 1))  # smaller chunks: left alone
    h.send(("IBM", 4.0), T0)
    rt.shutdown()
    assert seen == [False] * (1 + 1 + n + 2) + [True, True]
    assert gc.isenabled()


def test_defer_gc_false_and_an_application_that_turned_the_collector_off_are_respected() -> None:
    rt, seen = _runtime(defer_gc=False)
    rt.get_input_handler("S").send_events(_events(1000))
    rt.shutdown()
    assert seen == [True]

    rt, seen = _runtime()
    gc.disable()  # the application's choice: it stays so
    rt.get_input_handler("S").send_events(_events(1000))
    rt.shutdown()
    assert seen == [False]
    assert not gc.isenabled()


class _Stop(BaseException):
    """Not an Exception: it goes through the engine's error handling, as a KeyboardInterrupt would."""


def test_the_collector_is_on_again_when_processing_is_interrupted() -> None:
    rt = SiddhiManager().create_siddhi_app_runtime(APP)

    def interrupt(events: list[Event]) -> None:
        raise _Stop

    rt.add_callback("Out", interrupt)
    rt.start()
    with pytest.raises(_Stop):
        rt.get_input_handler("S").send_events(_events(1000))
    rt.shutdown()
    assert gc.isenabled()


def test_a_send_from_a_callback_leaves_the_collector_off_until_the_outer_chunk_is_done() -> None:
    rt = SiddhiManager().create_siddhi_app_runtime(APP)
    seen: list[tuple[str, bool]] = []
    inner = rt.get_input_handler("Inner")

    def outer(events: list[Event]) -> None:
        inner.send_events([Event(T0, (i,)) for i in range(1000)])
        seen.append(("outer", gc.isenabled()))

    rt.add_callback("Out", outer)
    rt.add_callback("InnerOut", lambda events: seen.append(("inner", gc.isenabled())))
    rt.start()
    rt.get_input_handler("S").send_events(_events(1000))
    rt.shutdown()
    assert seen == [("inner", False), ("outer", False)]
    assert gc.isenabled()


def test_an_async_streams_worker_holds_the_collector_off_for_a_large_batch() -> None:
    rt, seen = _runtime("@Async(buffer.size='4096', batch.size.max='4096')\n" + APP)
    rt.get_input_handler("S").send_events(_events(1000))
    deadline = time.monotonic() + 5
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    rt.shutdown()
    assert seen and not any(seen)
    assert gc.isenabled()


def test_a_debugger_hold_lets_the_collector_run_while_it_waits() -> None:
    """A hold may last minutes; the rest of the process must not go without collections."""
    rt = SiddhiManager().create_siddhi_app_runtime(APP.replace("from S[", "@info(name='q') from S[", 1))
    seen: list[bool] = []
    rt.add_callback("Out", lambda events: seen.append(gc.isenabled()))
    debugger = rt.debug()
    held = threading.Event()
    debugger.set_debugger_callback(lambda events, query, terminal, d: held.set())
    debugger.acquire_break_point("q", QueryTerminal.IN)
    sender = threading.Thread(target=rt.get_input_handler("S").send_events, args=(_events(1000),))
    sender.start()
    assert held.wait(5)
    time.sleep(0.05)  # (the callback runs just before the hold)
    assert gc.isenabled()  # held inside the chunk, the collector runs
    debugger.play()
    sender.join(5)
    rt.shutdown()
    assert seen == [True]  # the rest of that chunk ran with it on
    assert gc.isenabled()


def test_let_run_is_for_the_thread_whose_chunk_holds_the_collector_off() -> None:
    assert collector.hold_off()
    try:
        other = threading.Thread(target=collector.let_run)
        other.start()
        other.join()
        assert not gc.isenabled()  # another thread's let_run: not its chunk
        collector.let_run()
        assert gc.isenabled()
    finally:
        collector.release()
    collector.let_run()  # nothing held: nothing to do
    assert gc.isenabled()
