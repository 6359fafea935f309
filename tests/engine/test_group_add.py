"""The compiled grouped aggregation (``_speedups.group_add``) and event-time batch scan
(``_speedups.batch_scan``) give the Python loops' answers, float bits included.

Each app runs twice on the same chunks: with the compiled paths taking every chunk they can
(``MIN_CHUNK`` 1) and without them (``columnar.group_add`` and the window's ``batch_scan``
None), and every output chunk must be equal, and so must the app's snapshot (the
aggregator states, the live counts and the window).  Random grouped aggregations over
windows that send resets, expired events or neither, random values with nulls, values of
another type, floats whose sums depend on their order and longs that wrap around, in random
chunks.
"""
from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from srota.engine import Event, SiddhiManager, columnar, selector
from srota.engine.aggregators import _Avg, _Count, _LongSum, _Sum
from srota.engine.windows import external

from tests.engine.test_columnar import _canonical, _nans_alike

pytestmark = pytest.mark.skipif(not columnar.available(), reason="no compiled srota.engine._speedups here")

TS = 1_700_000_000_000
STREAM = "define stream S (k string, j int, i int, l long, f float, d double, t long);\n"


def _run(app: str, chunks: list[list[Any]], compiled: bool, monkeypatch: pytest.MonkeyPatch,
         ) -> tuple[list[Any], bytes, int]:
    """The output chunks of ``app``, its snapshot at the end and how many events group_add took."""
    taken = [0]
    add = columnar.group_add

    def counted(chunk: list[Event], start: int, *args: Any) -> int:
        stop = add(chunk, start, *args)  # type: ignore[misc]
        taken[0] += stop - start
        return stop

    with monkeypatch.context() as m:
        m.setattr(columnar, "MIN_CHUNK", 1)
        m.setattr(columnar, "group_add", counted if compiled else None)
        if not compiled:
            m.setattr(external, "_batch_scan", None)
        runtime = SiddhiManager().create_siddhi_app_runtime("@app:name('T')\n@app:playback\n" + app)
        got: list[Any] = []
        runtime.add_callback("O", lambda evs: got.append(
            [(e.timestamp, e.type, [_canonical(v) for v in e.data]) for e in evs]))
        runtime.start()
        handler = runtime.get_input_handler("S")
        ts = TS
        for rows in chunks:
            events = []
            for row in rows:
                events.append(Event(ts, tuple(row)))
                ts += 7
            handler.send_events(events)
        snapshot = runtime.snapshot()
        runtime.shutdown()
    return got, snapshot, taken[0]


def _agree(app: str, chunks: list[list[Any]], monkeypatch: pytest.MonkeyPatch, *,
           compiled_used: bool | None = True) -> None:
    """Both runs give the same outputs and snapshot; the compiled one took events (or not)."""
    fast, fast_state, taken = _run(app, chunks, True, monkeypatch)
    slow, slow_state, _ = _run(app, chunks, False, monkeypatch)
    assert fast == slow
    assert _nans_alike(fast_state) == _nans_alike(slow_state)
    if compiled_used is not None:
        assert (taken > 0) is compiled_used


# ----------------------------------------------------------------------------- values
KEYS = st.sampled_from(["IBM", "WSO2", "ORCL", "A", "", None])
INTS = st.one_of(st.sampled_from([0, 1, -1, 2**31 - 1, -2**31]), st.integers(-2**31, 2**31 - 1))
LONGS = st.one_of(st.sampled_from([0, 1, -1, 2**63 - 1, -2**63, 2**62, 2**53 + 1, -2**52 - 3]),
                  st.integers(-2**63, 2**63 - 1))
FLOATS = st.one_of(st.sampled_from([0.0, -0.0, 1e300, -1e300, 1e-300, 0.1, 1e16, -1e16, math.inf, -math.inf,
                                    math.nan, 3.0]),
                   st.floats(allow_nan=True, allow_infinity=True, width=32).map(float),
                   st.floats(-1e20, 1e20))
#: Now and then a null, or a value of another type (an int where a double is held, a float
#: where a long is, a bool, a string): the compiled path leaves the event to the loop.
ODD = st.sampled_from([None, None, 7, 2.5, True, "x", 2**70])


def _value(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(values, values, values, values, values, values, ODD)


@st.composite
def row(draw: st.DrawFn) -> list[Any]:
    return [draw(st.one_of(KEYS, KEYS, KEYS, st.just(3))), draw(st.sampled_from([1, 2, 3])),
            draw(_value(INTS)), draw(_value(LONGS)), draw(_value(FLOATS)), draw(_value(FLOATS)),
            draw(st.integers(0, 2500))]


def _timed(chunks: list[list[list[Any]]]) -> list[list[list[Any]]]:
    """The rows with a rising event time in ``t`` (some a little late)."""
    now = TS
    for rows in chunks:
        for r in rows:
            now += r[6] % 400
            r[6] = now - (r[6] % 3) * 150
    return chunks


AGGREGATES = ["count()", "count(d)", "sum(i)", "sum(l)", "sum(f)", "sum(d)", "avg(i)", "avg(l)", "avg(f)", "avg(d)"]
WINDOWS = ["#window.externalTimeBatch(t, 1 sec)", "#window.externalTimeBatch(t, 1 sec, 0, 500)",
           "#window.lengthBatch(4)", "#window.batch()", "#window.length(3)", "#window.externalTime(t, 1 sec)",
           "#window.timeBatch(50 millisec)", ""]
OUTPUTS = ["insert into O", "insert all events into O", "insert expired events into O",
           "insert current events into O"]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(aggregates=st.lists(st.sampled_from(AGGREGATES), min_size=1, max_size=4),
       window=st.sampled_from(WINDOWS), output=st.sampled_from(OUTPUTS),
       keys=st.sampled_from(["k", "k, j", "j", "j, k"]), extra=st.sampled_from(["", "order by k limit 3"]),
       chunks=st.lists(st.lists(row(), min_size=0, max_size=40), min_size=1, max_size=8))
def test_random_grouped_aggregations_match_the_python_loop(aggregates: list[str], window: str, output: str,
                                                           keys: str, extra: str, chunks: list[list[Any]],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    columns = ", ".join(f"{a} as a{n}" for n, a in enumerate(aggregates))
    app = STREAM + f"from S{window} select k, j, {columns} group by {keys} {extra} {output};"
    _agree(app, _timed(chunks), monkeypatch, compiled_used=None)


def _rows(n: int, key: Any = "IBM", value: Any = 1.5) -> list[list[Any]]:
    return [[key, 1, n, n * 3, value, value * n, TS + n * 300] for n in range(n)]


def test_the_benchmark_query_takes_the_compiled_path(monkeypatch: pytest.MonkeyPatch) -> None:
    app = STREAM + ("from S#window.externalTimeBatch(t, 1 sec) select k, count() as n, sum(l) as vol, "
                    "avg(d) as ap group by k insert into O;")
    rows = [[("IBM", "WSO2", "ORCL")[n % 3], 1, n, n * 7, 0.1 * n, 1.0 / (n + 1), TS + n * 45] for n in range(400)]
    _agree(app, [rows[:150], rows[150:151], rows[151:]], monkeypatch)


def test_float_sums_add_in_event_order(monkeypatch: pytest.MonkeyPatch) -> None:
    # 1e16 + 1.0 + 1.0 is 1e16 added one at a time, 1e16 + 2.0 summed pairwise
    app = STREAM + "from S#window.lengthBatch(3) select k, sum(d) as s, avg(d) as a group by k insert into O;"
    rows = [["A", 1, 0, 0, 0.0, d, TS] for d in (1e16, 1.0, 1.0)]
    _agree(app, [rows], monkeypatch)
    got, _, _ = _run(app, [rows], True, monkeypatch)
    assert got[-1][-1][2][1] == _canonical(1e16)


def test_long_sums_wrap_as_java_longs(monkeypatch: pytest.MonkeyPatch) -> None:
    app = STREAM + "from S select k, sum(l) as s group by k insert into O;"
    rows = [["A", 1, 0, 2**63 - 1, 0.0, 0.0, TS], ["A", 1, 0, 2**63 - 1, 0.0, 0.0, TS], ["A", 1, 0, 5, 0.0, 0.0, TS]]
    _agree(app, [rows], monkeypatch)
    got, _, _ = _run(app, [rows], True, monkeypatch)
    assert got[-1][-1][2][1] == _canonical(3)  # 2 * (2**63 - 1) + 5 wrapped


@pytest.mark.parametrize("query", [
    "from S#window.lengthBatch(3) select k, sum(d) * 2 as s group by k insert into O;",  # a computed column
    "from S#window.lengthBatch(3) select k, sum(d) as s group by k having s > 1.0 insert into O;",
    "from S#window.lengthBatch(3) select k, max(d) as s group by k insert into O;",  # no chunk_kind
    "from S#window.lengthBatch(3) select k, sum(d + 1.0) as s group by k insert into O;",  # not an attribute
    "from S#window.lengthBatch(3) select k, sum(d) as s, count() + 1 as c group by k insert into O;",
    "from S#window.lengthBatch(3) select k, sum(d) as s group by k insert expired events into O;",
    "from S#window.lengthBatch(3) select sum(d) as s insert into O;",  # no group by
])
def test_what_the_compiled_path_leaves_to_the_python_loop(query: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _agree(STREAM + query, [_rows(7)], monkeypatch, compiled_used=False)


def test_without_the_compiled_module_nothing_is_planned(monkeypatch: pytest.MonkeyPatch) -> None:
    app = STREAM + "from S#window.lengthBatch(3) select k, sum(d) as s group by k insert into O;"
    _agree(app, [_rows(7)], monkeypatch)  # (the compiled run takes them)
    _, _, taken = _run(app, [_rows(7)], False, monkeypatch)
    assert taken == 0


# ----------------------------------------------------------------------------- the C functions
def _plan(factories: list[Any], args: list[str], keys: str = "d[0]") -> Any:
    """What the selector plans for these aggregators: ``(keys, specs, fresh)``."""
    slots = selector.AggregatorSlots()
    slots.factories = factories
    slots.args = args
    slots.calls = [f"A[{n}].{{op}}({a})" for n, a in enumerate(args)]
    plan = selector.SelectorPlan()
    plan.factories = factories
    return selector._group_add_plan(plan, ("d = e.data",), keys, list(slots.calls), slots)


def test_group_add_updates_states_live_and_pending_in_order() -> None:
    keys, specs, fresh = _plan([_Count, lambda: _Sum(False), _LongSum, _Avg], ["", "d[1]", "d[2]", "d[1]"])
    assert keys == (0,) and [s[:2] for s in specs] == [("c", -1), ("f", 1), ("l", 2), ("f", 1)]
    plan = columnar.group_plan(keys, specs, fresh)
    chunk = [Event(TS, ("b", 0.1, 2**63 - 1)), Event(TS + 1, ("a", None, 1)), Event(TS + 2, ("b", 0.2, 2**63 - 1)),
             Event(TS + 3, ("a", 3.0, None)), Event(TS + 4, ("c", 1.0, 1), 3), Event(TS + 5, ("c", 1.0, 1))]
    states: dict[Any, Any] = {}
    live: dict[Any, int] = {"a": 2}
    pending: dict[Any, Any] = {"z": (None,), "a": "old"}
    assert columnar.group_add(chunk, 0, plan, states, live, pending) == 4  # (a reset stops it)
    assert list(states) == ["b", "a"] and list(pending) == ["z", "a", "b"] and list(live) == ["a", "b"]
    assert pending["a"] is chunk[3] and pending["b"] is chunk[2]
    assert live == {"a": 4, "b": 2}
    count, fsum, lsum, avg = states["b"]
    assert (count.count, fsum.total, fsum.count, lsum.total, lsum.count) == (2, 0.1 + 0.2, 2, 2**64 - 2, 2)
    assert lsum.value() == -2 and avg.value() == (0.1 + 0.2) / 2 and type(fsum) is _Sum and fsum.integral is False
    count, fsum, lsum, avg = states["a"]
    assert (count.count, fsum.total, fsum.count, lsum.total, lsum.count, avg.count) == (2, 3.0, 1, 1, 1, 1)
    # from the start given, and without live counts
    assert columnar.group_add(chunk, 5, plan, states, None, pending) == 6
    assert states["c"][0].count == 1 and "c" not in live


def test_group_add_stops_at_what_the_loop_must_see() -> None:
    keys, specs, fresh = _plan([_Count, _LongSum, _Avg], ["", "d[2]", "d[1]"], "(d[0], d[3],)")
    assert keys == (0, 3)
    plan = columnar.group_plan(keys, specs, fresh)

    def stop(*events: Event, states: dict[Any, Any] | None = None) -> int:
        return columnar.group_add(list(events), 0, plan, {} if states is None else states, None, {})

    ok = Event(TS, ("a", 1.0, 1, 0))
    assert stop(ok, Event(TS, ("a", 1.0, 1.0, 0))) == 1  # a float for a long
    assert stop(ok, Event(TS, ("a", "1", 1, 0))) == 1  # a string for a double
    assert stop(ok, Event(TS, ("a", 1.0, 2**64, 0))) == 1  # beyond a long
    assert stop(ok, Event(TS, ("a", 1.0, True, 0))) == 1  # a bool
    assert stop(ok, Event(TS, ("a", 1.0, 1, 0), 1)) == 1  # an expired event
    assert stop(ok, Event(TS, ("a", 1.0, 1))) == 1  # data too short
    assert stop(ok, Event(TS, (["a"], 1.0, 1, 0)), ok) == 1  # an unhashable key
    assert stop(ok, Event(TS, ("a", 7, 1, 0)), ok) == 3  # an int where a double is held: as float + int
    assert stop(ok, Event(TS, ("a", 1.0, 1, 0), 2), ok) == 3  # (a timer event is skipped)
    assert stop(ok, states={("a", 0): [_Count(), _Sum(False), _Avg()]}) == 0  # states of other classes


def test_group_add_folds_long_sums_beyond_64_bits() -> None:
    plan = columnar.group_plan(*_plan([_LongSum], ["d[1]"]))
    chunk = [Event(TS, ("a", v)) for v in [2**63 - 1] * 5 + [-2**63] * 3 + [12]]
    states: dict[Any, Any] = {}
    assert columnar.group_add(chunk, 0, plan, states, None, {}) == len(chunk)
    assert states["a"][0].total == 5 * (2**63 - 1) - 3 * 2**63 + 12


def test_group_plan_checks_what_it_is_given() -> None:
    keys, specs, fresh = _plan([_Count, _Avg], ["", "d[1]"])
    plan = columnar.group_plan
    assert plan is not None
    with pytest.raises(ValueError):
        plan(keys, specs, fresh[:1])  # (a prototype per aggregator)
    with pytest.raises(ValueError):
        plan((), specs, fresh)
    with pytest.raises(ValueError):
        plan(keys, (("z", 1, _Avg), specs[1]), fresh)
    with pytest.raises(ValueError):
        plan(keys, (specs[0], ("f", -1, _Avg)), fresh)  # (a sum reads an attribute)
    with pytest.raises(TypeError):
        plan(keys, (specs[0], ("f", 1, list)), fresh)  # `count` not a slot
    with pytest.raises(AttributeError):
        plan(keys, specs, (fresh[0], (("nothing", 0),)))  # no such slot
    with pytest.raises(ValueError):
        columnar.group_add([], 0, "not a plan", {}, None, {})


def test_batch_scan_finds_the_events_joining_the_batch() -> None:
    scan = columnar.batch_scan
    assert scan is not None
    chunk = [Event(TS, ("a", 5)), Event(TS, ("a", 3)), Event(TS, ("a", 9)), Event(TS, ("a", 10)), Event(TS, ("a", 1))]
    assert scan(chunk, 0, 1, 10, 0) == (3, 9)
    assert scan(chunk, 1, 1, 10, 4) == (3, 9)
    assert scan(chunk, 3, 1, 10, 4) == (3, 4)
    assert scan(chunk, 4, 1, 10, 4) == (5, 4)
    assert scan(chunk, 0, 1, 2**64, 0) == (0, 0)  # (beyond a long: the window's loop compares)
    assert scan([Event(TS, ("a", 1), 1)], 0, 1, 10, 0) == (0, 0)  # an expired event
    assert scan([Event(TS, ("a", None))], 0, 1, 10, 0) == (0, 0)
    assert scan([Event(TS, ("a",))], 0, 1, 10, 0) == (0, 0)


# ----------------------------------------------------------------------------- the collector
def test_states_and_rows_of_a_grouped_batch_are_not_tracked_by_the_collector() -> None:
    """A group's states (numbers only) and the rows made of them cannot be in a reference cycle:
    untracked, they never reach the collector's older generations, whose growth sets off full
    collections over the whole heap (W2 one by one: three in a million events before, none)."""
    import gc

    runtime = SiddhiManager().create_siddhi_app_runtime(
        "@app:playback\n" + STREAM + "from S#window.externalTimeBatch(t, 1 sec) "
        "select k, count() as n, sum(l) as total, avg(d) as mean group by k insert into O;")
    got: list[Any] = []
    runtime.add_callback("O", got.extend)
    runtime.start()
    handler = runtime.get_input_handler("S")

    def states_in_sight() -> int:
        return sum(type(o) in (_Count, _LongSum, _Avg) for o in gc.get_objects())

    before = states_in_sight()
    rows = [("IBM" if n % 2 else "ORCL", 1, 2, n, 1.5, 2.5, TS + n) for n in range(64)]
    handler.send_events([Event(TS + n, row) for n, row in enumerate(rows)])
    assert states_in_sight() == before  # (two groups' three states each, made by group_add)
    handler.send(("IBM", 1, 2, 3, 1.5, 2.5, TS + 5000), TS + 5000)  # closes the batch
    assert [e.data[:2] for e in got] == [("ORCL", 32), ("IBM", 32)]
    assert not any(gc.is_tracked(e.data) for e in got)
    runtime.shutdown()


def test_untracked_leaves_a_row_holding_a_container_tracked() -> None:
    import gc

    untracked = columnar.untracked
    assert untracked is not None
    plain = ("a", 1, 2.5, None, True, b"x", 2**70)
    assert untracked(plain) is plain and not gc.is_tracked(plain)
    held = ("a", [1])
    assert untracked(held) is held and gc.is_tracked(held)
    assert untracked([1]) == [1]  # (anything else is handed back as it is)
