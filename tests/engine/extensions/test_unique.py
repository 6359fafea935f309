"""The unique: windows and #unique:deduplicate, under playback time (deterministic)."""
from __future__ import annotations

from typing import Any

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager
from srota.engine.context import Limits

T0 = 1_700_000_000_000
STREAM = "@app:playback define stream S (k string, v int, ts long);\n"


class _Out:
    def __init__(self) -> None:
        self.calls: list[tuple[list[Any], list[Any]]] = []

    def __call__(self, ts: int, ins: Any, rem: Any) -> None:
        self.calls.append(([list(e.data[:2]) for e in ins or ()], [list(e.data[:2]) for e in rem or ()]))

    @property
    def current(self) -> list[Any]:
        return [r for c in self.calls for r in c[0]]

    @property
    def expired(self) -> list[Any]:
        return [r for c in self.calls for r in c[1]]


def app(window: str, select: str = "k, v, ts", out: str = "all", limits: Limits | None = None):
    text = STREAM + f"@info(name='q') from S#window.unique:{window} select {select} insert {out} events into O;"
    rt = SiddhiManager(limits=limits).create_siddhi_app_runtime(text)
    got = _Out()
    rt.add_query_callback("q", got)
    rt.start()
    h = rt.get_input_handler("S")

    def send(k: str, v: int, at: int) -> None:
        h.send([k, v, T0 + at], timestamp=T0 + at)

    return rt, send, got


def test_ever_expires_the_replaced_event():
    rt, send, got = app("ever(k)")
    send("a", 1, 0)
    send("b", 2, 10)
    send("a", 3, 20)
    assert got.current == [["a", 1], ["b", 2], ["a", 3]]
    assert got.expired == [["a", 1]]
    rt.shutdown()


def test_ever_counts_distinct_keys():
    rt, send, got = app("ever(k)", select="count() as n, k")
    for i, k in enumerate("aabac"):
        send(k, i, i)
    assert [r[0] for r in got.current][-1] == 3
    rt.shutdown()


def test_first_keeps_the_first_event_of_each_key():
    rt, send, got = app("first(k, v)")  # two key attributes are concatenated
    send("a", 1, 0)
    send("a", 1, 1)
    send("a", 2, 2)
    assert got.current == [["a", 1], ["a", 2]] and got.expired == []
    rt.shutdown()


def test_length_expires_the_same_key_or_the_oldest():
    rt, send, got = app("length(k, 2)")
    send("a", 1, 0)
    send("b", 2, 1)
    send("a", 3, 2)   # replaces a
    send("c", 4, 3)   # window full: the oldest (b) leaves
    assert got.expired == [["a", 1], ["b", 2]]
    rt.shutdown()


def test_time_window_expires_on_the_clock_and_on_replacement():
    rt, send, got = app("time(k, 1 sec)")
    send("a", 1, 0)
    send("a", 2, 500)
    assert got.expired == [["a", 1]]
    rt.context.clock.advance(T0 + 2000)
    assert got.expired == [["a", 1], ["a", 2]]
    rt.shutdown()


def test_length_batch_emits_the_latest_event_of_each_key():
    rt, send, got = app("lengthBatch(k, 2)", select="k, v, sum(v) as s")
    send("a", 1, 0)
    send("a", 2, 1)
    send("b", 3, 2)
    assert got.calls[-1][0][-1] == ["b", 3] and got.current[-1][:2] == ["b", 3]
    rt.shutdown()


def test_first_length_batch_keeps_the_first():
    rt, send, got = app("firstLengthBatch(k, 2)")
    send("a", 1, 0)
    send("a", 2, 1)
    send("b", 3, 2)
    assert sorted(got.current) == [["a", 1], ["b", 3]]
    rt.shutdown()


def test_time_batch_flushes_per_period_and_expires_the_previous_batch():
    rt, send, got = app("timeBatch(k, 1 sec)")
    send("a", 1, 0)
    send("a", 2, 100)
    send("b", 3, 200)
    rt.context.clock.advance(T0 + 1000)
    assert sorted(got.current) == [["a", 2], ["b", 3]]
    send("c", 4, 1500)
    rt.context.clock.advance(T0 + 2000)
    assert sorted(got.expired) == [["a", 2], ["b", 3]]
    assert got.current[-1] == ["c", 4]
    rt.shutdown()


def test_time_length_batch_flushes_on_length_then_skips_to_the_next_period():
    rt, send, got = app("timeLengthBatch(k, 1 sec, 2)")
    send("a", 1, 0)
    send("b", 2, 100)   # two keys: flush by length
    send("c", 3, 200)   # skipped until the period ends
    assert sorted(got.current) == [["a", 1], ["b", 2]]
    rt.context.clock.advance(T0 + 2500)
    assert ["c", 3] not in got.current
    rt.shutdown()


def test_external_time_batch():
    rt, send, got = app("externalTimeBatch(k, ts, 1 sec)", select="k, v, count() as n", out="current")
    send("a", 1, 0)
    send("a", 2, 100)
    send("b", 3, 200)
    send("c", 4, 1200)   # closes the first batch
    assert got.calls[-1][0][-1] == ["b", 3]
    rt.shutdown()


def test_snapshot_restores_the_window():
    rt, send, got = app("ever(k)")
    send("a", 1, 0)
    snap = rt.snapshot()
    rt.shutdown()
    rt2, send2, got2 = app("ever(k)")
    rt2.restore(snap)
    send2("a", 2, 10)
    assert got2.expired == [["a", 1]]
    rt2.shutdown()


def test_max_window_events_sheds_the_oldest_key():
    rt, send, got = app("ever(k)", limits=Limits(max_window_events=2))
    for i, k in enumerate("abc"):
        send(k, i, i)
    assert got.expired == [["a", 0]]
    assert sum(rt.context.breaches.values()) == 1
    rt.shutdown()


def test_deduplicate_drops_repeats_within_the_interval():
    text = STREAM + "@info(name='q') from S#unique:deduplicate(k, 1 sec) select k, v insert into O;"
    rt = SiddhiManager().create_siddhi_app_runtime(text)
    got = _Out()
    rt.add_query_callback("q", got)
    rt.start()
    h = rt.get_input_handler("S")
    for k, v, at in [("a", 1, 0), ("a", 2, 500), ("b", 3, 600), ("a", 4, 1600)]:
        h.send([k, v, T0 + at], timestamp=T0 + at)
    assert got.current == [["a", 1], ["b", 3], ["a", 4]]
    rt.shutdown()


@pytest.mark.parametrize("window, message", [
    ("length(k)", "parameter"),
    ("time(k, '2 sec')", "should be int or long"),
    ("timeBatch(k, v)", "constant"),
    ("timeLengthBatch(k, 1 sec, 0, v)", "parameter"),
    ("externalTimeBatch(k, v, 1 sec)", "should be long"),
])
def test_creation_errors(window, message):
    with pytest.raises(SiddhiAppCreationError) as info:
        SiddhiManager().create_siddhi_app_runtime(
            STREAM + f"from S#window.unique:{window}\nselect k insert into O;")
    assert message in str(info.value)
    assert info.value.line == 2
