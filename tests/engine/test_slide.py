"""The compiled sliding runs of a fused partition query (``_speedups.slide``) give the Python
loop's answers, float bits included.

Each app runs twice on the same chunks: with the compiled slide (where the partition plans
it) and without it (``columnar.slide_plan`` None, so the generated fused loop takes every
run), and every output chunk must be equal, and so must the app's snapshot (the windows and
the aggregator states of every key).  Random partitioned length windows with count, sum and
avg, values with nulls and values of another type (which the compiled step leaves to the
loop, inside a run too), in random chunks, some runs restored from a snapshot midway.
"""
from __future__ import annotations

import math
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from srota.engine import Event, SiddhiManager, columnar

from tests.engine.test_columnar import _canonical, _nans_alike

pytestmark = pytest.mark.skipif(not columnar.available(), reason="no compiled srota.engine._speedups here")

TS = 1_700_000_000_000
STREAM = "define stream S (k string, j int, l long, f float, d double);\n"


def _app(columns: str, length: int = 3) -> str:
    return STREAM + (f"partition with (k of S) begin\n"
                     f"  @info(name='q') from S#window.length({length}) select {columns} insert into O;\n"
                     f"end;\n")


def _run(app: str, chunks: list[list[Any]], compiled: bool, monkeypatch: pytest.MonkeyPatch, *,
         merged: bool = True, restore_at: int | None = None, one_by_one: bool = False) -> tuple[list[Any], bytes, int]:
    """The output chunks of ``app``, its elements' snapshot at the end and how many events
    slide and slide_one took.

    ``restore_at``: after that many chunks the app is snapshotted, and restored into a new
    runtime that takes the rest.  ``one_by_one``: each event is sent alone.
    """
    got: list[Any] = []

    def start() -> Any:
        runtime = SiddhiManager().create_siddhi_app_runtime("@app:name('T')\n" + app)
        runtime.add_callback("O", lambda evs: got.append(
            [(e.timestamp, e.type, [_canonical(v) for v in e.data]) for e in evs]), merged_chunks=merged)
        runtime.start()
        return runtime

    with monkeypatch.context() as m:
        taken = _counting(m, compiled)
        runtime = start()
        ts = TS
        for n, rows in enumerate(chunks):
            if n == restore_at:
                snapshot = runtime.snapshot()
                runtime.shutdown()
                runtime = start()
                runtime.restore(snapshot)
            events = []
            for row in rows:
                events.append(Event(ts, tuple(row)))
                ts += 7
            handler = runtime.get_input_handler("S")
            if one_by_one:
                for event in events:
                    handler.send(event.data, event.timestamp)
            else:
                handler.send_events(events)
        snapshot = runtime.snapshot()
        runtime.shutdown()
    # (the keys' elements only: the snapshot's clock and the partition's times of its keys
    # are the wall clock's; a playback clock would keep the rows from going merged, which the
    # compiled slide needs)
    elements = _decoded(snapshot)["elements"]
    keyed = {name: element for name, element in elements.items() if element["kind"] != "PartitionRuntime"}
    return got, msgpack.packb(keyed), taken[0]


def _decoded(packed: bytes) -> Any:
    """A snapshot's data, the objects in it decoded too, each float by its bits but every NaN
    alike: which NaN a sum of two NaNs keeps is CPython's choice (its specialized float
    addition may take the operands in either order), not the engine's."""
    def canonical(value: Any) -> Any:
        if isinstance(value, float) and math.isnan(value):
            return "NaN"
        if isinstance(value, dict):
            return {k: canonical(v) for k, v in value.items()}
        if isinstance(value, list):
            return [canonical(v) for v in value]
        return value

    return canonical(msgpack.unpackb(packed, strict_map_key=False,
                                     ext_hook=lambda code, data: [code, _decoded(data)]))


def _counting(m: pytest.MonkeyPatch, compiled: bool) -> list[int]:
    """How many events the compiled slide and slide_one take from now on in ``m``'s context
    (its one item); without ``compiled`` the partitions plan neither."""
    taken = [0]
    slide, slide_one = columnar.slide, columnar.slide_one

    def counted(chunk: list[Event], start: int, *args: Any) -> int:
        stop = slide(chunk, start, *args)  # type: ignore[misc]
        taken[0] += stop - start
        return stop

    def counted_one(*args: Any) -> Any:
        out = slide_one(*args)  # type: ignore[misc]
        taken[0] += out is not None
        return out

    m.setattr(columnar, "slide", counted)
    m.setattr(columnar, "slide_one", counted_one)
    if not compiled:
        m.setattr(columnar, "slide_plan", None)
    return taken


def _agree(app: str, chunks: list[list[Any]], monkeypatch: pytest.MonkeyPatch, *,
           compiled_used: bool | None = True, **options: Any) -> None:
    """Both runs give the same outputs and snapshot; the compiled one took events (or not)."""
    fast, fast_state, taken = _run(app, chunks, True, monkeypatch, **options)
    slow, slow_state, slow_taken = _run(app, chunks, False, monkeypatch, **options)
    assert slow_taken == 0
    assert fast == slow
    assert _nans_alike(fast_state) == _nans_alike(slow_state)
    if compiled_used is not None:
        assert (taken > 0) is compiled_used


# ----------------------------------------------------------------------------- values
KEYS = st.sampled_from(["IBM", "WSO2", "ORCL", "A", "", None])
FLOATS = st.one_of(st.sampled_from([0.0, -0.0, 1e300, -1e300, 1e-300, 0.1, 1e16, -1e16, math.inf, -math.inf,
                                    math.nan, 3.0]),
                   st.floats(allow_nan=True, allow_infinity=True, width=32).map(float),
                   st.floats(-1e20, 1e20))
#: Now and then a null, or a value of another type (an int where a double is held).
ODD = st.sampled_from([None, None, 7, True])


@st.composite
def row(draw: st.DrawFn) -> list[Any]:
    value = st.one_of(FLOATS, FLOATS, FLOATS, FLOATS, FLOATS, FLOATS, FLOATS, FLOATS, ODD)
    return [draw(st.one_of(KEYS, KEYS, KEYS, KEYS, st.just(3))), draw(st.integers(-5, 5)),
            draw(st.integers(-2**40, 2**40)), draw(value), draw(value)]


COLUMNS = ["k", "j", "d", "f", "count()", "sum(d)", "avg(d)", "sum(f)", "avg(f)", "avg(j)", "sum(l)", "count(d)"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(columns=st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=5), length=st.integers(1, 6),
       merged=st.booleans(), restore=st.one_of(st.none(), st.integers(1, 5)), one_by_one=st.booleans(),
       chunks=st.lists(st.lists(row(), min_size=0, max_size=40), min_size=1, max_size=8))
def test_random_partitioned_sliding_windows_match_the_python_loop(
        columns: list[str], length: int, merged: bool, restore: int | None, one_by_one: bool,
        chunks: list[list[Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    app = _app(", ".join(f"{c} as c{n}" for n, c in enumerate(columns)), length)
    _agree(app, chunks, monkeypatch, compiled_used=None, merged=merged, restore_at=restore, one_by_one=one_by_one)


def _rows(n: int, keys: tuple[Any, ...] = ("IBM", "WSO2", "ORCL")) -> list[list[Any]]:
    return [[keys[i % len(keys)], i % 5, i * 3, float(i) / 3, 100.0 + i * 0.1] for i in range(n)]


def test_the_benchmark_query_takes_the_compiled_path(monkeypatch: pytest.MonkeyPatch) -> None:
    app = _app("k, avg(d) as ap", 100)
    _agree(app, [_rows(500)[i:i + 50] for i in range(0, 500, 50)], monkeypatch)


def test_float_totals_add_and_leave_in_event_order(monkeypatch: pytest.MonkeyPatch) -> None:
    # (1e16 + 1.0) - 1e16 is 0.0, not 1.0: the order of the float steps shows in the sums
    values = [1e16, 1.0, -1e16, 3.0, 0.1, 0.2, 0.3, 1e-300, math.inf, -math.inf, 5.0, 6.0, 7.0]
    rows = [["IBM", 1, 1, v, v] for v in values]
    _agree(_app("k, sum(d) as s, avg(d) as a, count() as n, sum(f) as sf", 3), [rows[:5], rows[5:]], monkeypatch)


@pytest.mark.parametrize("odd", [None, 7, True])
def test_a_value_the_compiled_step_does_not_take_goes_to_the_loop_inside_a_run(
        odd: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # one key only, so the value it stops at is inside a run: the loop ends that run (the
    # first chunk makes the key's record, which the compiled slide does not)
    rows = [["IBM", 1, 1, 1.0, 2.0 + i] for i in range(10)]
    rows[6][4] = odd
    _agree(_app("k, avg(d) as a, sum(d) as s, count(d) as n", 3), [rows[:2], rows[2:]], monkeypatch)


def test_without_merged_output_the_loop_takes_every_run(monkeypatch: pytest.MonkeyPatch) -> None:
    _agree(_app("k, avg(d) as a", 4), [_rows(60)], monkeypatch, compiled_used=False, merged=False)


@pytest.mark.parametrize("merged", [True, False])
def test_events_sent_one_by_one_take_the_compiled_step(merged: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows(60)
    rows[31][4] = None  # (one the generated step takes)
    _agree(_app("k, avg(d) as a, sum(d) as s, count() as n", 4), [rows[:30], rows[30:]], monkeypatch,
           merged=merged, one_by_one=True)


def test_a_query_callback_sees_what_the_compiled_step_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    def seen(compiled: bool) -> list[Any]:
        with monkeypatch.context() as m:
            if not compiled:
                m.setattr(columnar, "slide_plan", None)
            runtime = SiddhiManager().create_siddhi_app_runtime(_app("k, avg(d) as a", 3))
            got: list[Any] = []
            # (the partitioned query's own callbacks: add_query_callback refuses them, as Siddhi does)
            runtime.queries["q"].add_callback(lambda ts, cur, exp: got.append((ts, [e.data for e in cur or []], exp)))
            runtime.start()
            for row in _rows(20):
                runtime.get_input_handler("S").send(tuple(row), TS)
            runtime.shutdown()
        return got

    assert seen(True) == seen(False)


@pytest.mark.parametrize("columns", ["k, sum(l) as s", "k, avg(j) as a", "k, max(d) as m", "k, avg(d) + 1 as a"])
def test_what_the_compiled_slide_leaves_to_the_loop(columns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _agree(_app(columns, 4), [_rows(60)], monkeypatch, compiled_used=False)


def test_a_restored_window_is_read_as_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows(90)
    _agree(_app("k, avg(d) as a, count() as n", 5), [rows[:30], rows[30:60], rows[60:]], monkeypatch,
           restore_at=1)


def test_without_the_compiled_module_nothing_is_planned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columnar, "slide_plan", None)
    _, _, taken = _run(_app("k, avg(d) as a", 4), [_rows(30)], True, monkeypatch)
    assert taken == 0


def test_slide_plan_checks_what_it_is_given() -> None:
    from collections import deque

    from srota.engine.aggregators import _Avg
    assert columnar.slide_plan is not None
    with pytest.raises(ValueError):
        columnar.slide_plan(0, 1, ((0, "x", 1, _Avg),), (("a", 0),), deque)
    with pytest.raises(ValueError):
        columnar.slide_plan(0, 1, ((3, "f", 1, _Avg),), (("a", 0),), deque)
    with pytest.raises(ValueError):
        columnar.slide_plan(0, 1, ((0, "f", 1, _Avg),), (("v", 0, "q", _Avg),), deque)
    with pytest.raises(AttributeError):
        columnar.slide_plan(0, 1, ((0, "f", 1, int),), (("a", 0),), deque)  # (no total or count slot)


def test_a_window_holding_the_same_event_twice_reads_each_leaving_event(monkeypatch: pytest.MonkeyPatch) -> None:
    # A sender may send one Event object again (the engine takes a sender's plain events as
    # they are): the window then holds it twice, and the Python loop steps it between the
    # compiled runs (the null), which the compiled step's memo of the window must notice.
    def sends(compiled: bool) -> tuple[list[Any], int]:
        with monkeypatch.context() as m:
            taken = _counting(m, compiled)
            runtime = SiddhiManager().create_siddhi_app_runtime(_app("k, avg(d) as a, sum(d) as s", 3))
            got: list[Any] = []
            runtime.add_callback("O", lambda evs: got.append([[_canonical(v) for v in e.data] for e in evs]),
                                 merged_chunks=True)
            runtime.start()
            send = runtime.get_input_handler("S").send_events
            same = Event(TS, ("IBM", 1, 1, 1.0, 5.0))
            other = [Event(TS + n, ("IBM", 1, 1, 1.0, 10.0 * n)) for n in range(1, 9)]
            send([Event(TS, ("IBM", 1, 1, 1.0, 0.5))])
            send([same, other[0], same])
            send([other[1], Event(TS, ("IBM", 1, 1, 1.0, None)), same, other[2]])
            send([same, other[3], other[4], same, other[5]])
            send([other[6], other[7], same])
            runtime.shutdown()
        return got, taken[0]

    fast, taken = sends(True)
    slow, _ = sends(False)
    assert taken > 0
    assert fast == slow


@pytest.mark.parametrize("one_by_one", [False, True])
def test_output_events_of_plain_values_are_not_tracked_by_the_collector(one_by_one: bool) -> None:
    """As ``emit``'s (tests/engine/test_columnar.py): the outputs a callback keeps cost the
    collector's generation-0 passes nothing (W3 chunked about 4 % faster)."""
    import gc

    kept: list[Any] = []
    with pytest.MonkeyPatch.context() as m:
        taken = _counting(m, compiled=True)
        runtime = SiddhiManager().create_siddhi_app_runtime(_app("k, avg(d) as ap", 3))
        runtime.add_callback("O", kept.extend, merged_chunks=True)
        runtime.start()
        handler = runtime.get_input_handler("S")
        events = [Event(TS + i, tuple(row)) for i, row in enumerate(_rows(60))]
        if one_by_one:
            for e in events:
                handler.send(e.data, e.timestamp)
        else:
            handler.send_events(events[:30])
            handler.send_events(events[30:])
    runtime.shutdown()
    assert taken[0] > 0 and len(kept) >= 20
    compiled = kept[-20:]  # (the first events of each key make its record in the Python loop)
    assert not any(gc.is_tracked(e) or gc.is_tracked(e.data) for e in compiled)
