"""The app context's lock (engine/context.py): fastrlock's, or ``threading.RLock`` where that is
missing; the engine asks the same of both."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import srota.engine.context as context
from srota.engine import Event, SiddhiManager

T0 = 1_700_000_000_000


@pytest.fixture(params=["fastrlock", "threading"])
def lock_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each test once with each lock an app may get."""
    if request.param == "threading":
        monkeypatch.setattr(context, "_FastRLock", None)
    yield request.param


def test_an_app_gets_fastrlock_where_it_is_installed() -> None:
    from fastrlock.rlock import FastRLock

    runtime = SiddhiManager().create_siddhi_app_runtime("define stream S (a int);")
    assert isinstance(runtime.context.lock, FastRLock)


def test_the_lock_is_re_entrant_and_a_non_blocking_acquire_fails_only_in_another_thread(lock_kind: str) -> None:
    lock = context.app_lock()
    assert (lock_kind == "threading") == isinstance(lock, type(threading.RLock()))
    with lock:
        assert lock.acquire(blocking=False)  # (the async buffer's test: held by this thread)
        lock.release()
        other: list[bool] = []
        t = threading.Thread(target=lambda: other.append(lock.acquire(blocking=False)))
        t.start()
        t.join()
        assert other == [False]
    got: list[bool] = []

    def take() -> None:
        got.append(lock.acquire(blocking=False))
        lock.release()

    t = threading.Thread(target=take)
    t.start()
    t.join()
    assert got == [True]


def test_a_sender_waits_for_the_thread_that_holds_the_lock(lock_kind: str) -> None:
    runtime = SiddhiManager().create_siddhi_app_runtime("define stream S (a int); from S select a insert into Out;")
    rows: list[int] = []
    runtime.add_callback("Out", lambda evs: rows.extend(e.data[0] for e in evs))
    runtime.start()
    sent = threading.Event()

    def send() -> None:
        runtime.get_input_handler("S").send([2], T0 + 1)
        sent.set()

    with runtime.context.lock:
        t = threading.Thread(target=send)
        t.start()
        assert not sent.wait(0.2), "a send went in while another thread held the app lock"
        rows.append(1)
    t.join(5)
    runtime.shutdown()
    assert rows == [1, 2]


def test_sends_from_threads_timers_and_async_workers_share_the_lock(lock_kind: str) -> None:
    # Four sending threads into a stream whose query fills an @Async stream (whose worker
    # takes the lock, and whose full buffer the inserting thread drains itself), and a time
    # window whose timer thread expires events under the lock.
    app = """
    define stream S (t int, n int);
    @Async(buffer.size='8', workers='1') define stream A (t int, n int);
    from S select t, n insert into A;
    from A select t, n insert into Out;
    from S#window.time(20 millisec) select count() as c insert expired events into Expired;
    """
    runtime = SiddhiManager().create_siddhi_app_runtime(app)
    rows: list[tuple[int, int]] = []
    expired: list[int] = []
    runtime.add_callback("Out", lambda evs: rows.extend(tuple(e.data) for e in evs))
    runtime.add_callback("Expired", lambda evs: expired.extend(e.data[0] for e in evs))
    runtime.start()
    handler = runtime.get_input_handler("S")

    def send(t: int) -> None:
        seq = 0
        for n in range(300):
            if n % 50 == 0:
                handler.send_events([Event(int(time.time() * 1000), (t, seq + k)) for k in range(3)])
                seq += 3
            else:
                handler.send((t, seq))
                seq += 1

    threads = [threading.Thread(target=send, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    runtime.drain()
    deadline = time.monotonic() + 5
    total = 4 * (300 + 6 * 2)  # every 50th send is a chunk of three
    while not (expired and expired[-1] == 0) and time.monotonic() < deadline:
        time.sleep(0.02)
    runtime.shutdown()
    assert len(rows) == total
    for t in range(4):  # each thread's events in the order it sent them
        mine = [n for (tt, n) in rows if tt == t]
        assert mine == list(range(300 + 6 * 2))
    assert expired[-1] == 0  # the timer thread expired every event (one row per timer's chunk)


def _outputs(app: str, events: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    runtime = SiddhiManager().create_siddhi_app_runtime(app)
    got: list[tuple[Any, ...]] = []
    runtime.add_callback("Out", lambda evs: got.extend(tuple(e.data) for e in evs))
    runtime.start()
    handler = runtime.get_input_handler("S")
    for i, row in enumerate(events):
        handler.send(row, T0 + i * 100)
    runtime.shutdown()
    return got


def test_answers_are_the_same_with_either_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    app = """@app:playback
    define stream S (k string, v double);
    partition with (k of S) begin
      from S#window.length(3) select k, avg(v) as a insert into #P;
      from #P select k, a insert into Out;
    end;
    """
    events = [(f"k{i % 3}", float(i)) for i in range(60)]
    fast = _outputs(app, events)
    monkeypatch.setattr(context, "_FastRLock", None)
    assert _outputs(app, events) == fast and len(fast) == 60
