"""The columnar path (engine/columnar.py, engine/_speedups.c) gives the Python loop's answers.

Each app runs twice on the same chunks: with the columnar path taking every chunk
(``MIN_CHUNK`` 1) and without it (``plan_columnar`` answering None), and every output chunk
must be equal, float bits included.  Random expressions over every numeric type, bools and
edge values (wrap-around, 32-bit rounding, NaN, infinities, -0.0, longs beyond 2**53) check the
promotions; nulls and values of another type send a chunk back to the Python loop.
"""
from __future__ import annotations

import math
import os
import struct
import subprocess
import sys
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from srota.engine import Event, SiddhiManager, columnar, state_codec
from srota.engine.event import RawEvent

pytestmark = pytest.mark.skipif(not columnar.available(), reason="no compiled srota.engine._speedups or no numpy here")

_STATE_BIGINT = 6  # state_codec's tag of an integer beyond 64 bits: its text, not MessagePack
TS = 1_700_000_000_000
STREAM = "define stream S (i int, l long, f float, d double, b bool, s string);\n"


def _canonical(value: Any) -> Any:
    """Equal values compare equal; floats by their bits (-0.0 is not 0.0), every NaN alike."""
    if isinstance(value, float):
        return ("nan",) if math.isnan(value) else ("float", struct.pack("<d", value))
    return (type(value).__name__, value)


def _nans_alike(state: bytes) -> bytes:
    """``state`` with every NaN written as one NaN.

    Which NaN ``inf - inf`` or ``nan + -nan`` gives depends on the order of the operands, which
    a C compiler may swap (x86's NaN from ``inf - inf`` has the sign bit set; Python's
    ``nan`` has not), so the two runs' NaNs may differ in that bit and be the same value.
    """
    def canonical(value: Any) -> Any:
        if isinstance(value, float) and math.isnan(value):
            return math.nan
        if isinstance(value, list):
            return [canonical(v) for v in value]
        if isinstance(value, dict):
            return {canonical(k): canonical(v) for k, v in value.items()}
        return value

    def inner(code: int, data: bytes) -> msgpack.ExtType:
        return msgpack.ExtType(code, data if code == _STATE_BIGINT else _nans_alike(data))

    decoded = msgpack.unpackb(state, ext_hook=inner, strict_map_key=False, raw=False)
    return msgpack.packb(canonical(decoded), use_bin_type=True)


def _run(app: str, chunks: list[list[Any]], use_columnar: bool, monkeypatch: pytest.MonkeyPatch,
         ) -> tuple[list[Any], int]:
    """The output chunks of ``app`` and how many queries took the columnar path."""
    planned = []
    plan = columnar.plan_columnar

    def spy(*args: Any) -> Any:
        made = plan(*args) if use_columnar else None
        planned.append(made)
        return made

    with monkeypatch.context() as m:
        m.setattr(columnar, "MIN_CHUNK", 1)
        m.setattr(columnar, "plan_columnar", spy)
        runtime = SiddhiManager().create_siddhi_app_runtime("@app:playback\n" + app)
    got: list[Any] = []
    runtime.add_callback("O", lambda evs: got.append(
        [(e.timestamp, e.type, type(e) is RawEvent, [_canonical(v) for v in e.data]) for e in evs]))
    runtime.start()
    handler = runtime.get_input_handler("S")
    ts = TS
    for rows in chunks:
        events = []
        for row in rows:
            events.append(Event(ts, tuple(row)))
            ts += 7
        handler.send_events(events)
    runtime.shutdown()
    return got, sum(p is not None for p in planned)


def _agree(app: str, chunks: list[list[Any]], monkeypatch: pytest.MonkeyPatch, *,
           columnar_used: bool | None = True) -> None:
    """Both runs give the same outputs; the columnar one planned the query (or not; None: either)."""
    fast, used = _run(app, chunks, True, monkeypatch)
    slow, _ = _run(app, chunks, False, monkeypatch)
    assert fast == slow
    if columnar_used is not None:
        assert bool(used) is columnar_used


def test_a_float_equal_to_a_long_compares_as_doubles(monkeypatch: pytest.MonkeyPatch) -> None:
    # (as the Python path: test_expression.py, test_a_float_against_a_long_or_an_int_...)
    app = ("define stream S (f float, l long, i int);\n"
           "from S[f == l or (l != f and f == i)] select f, l insert into O;")
    edge = float(struct.unpack("f", struct.pack("f", 2147483647.0))[0])  # 2147483648f
    got, used = _run(app, [[[edge, 2147483647, 0], [edge, 2147483648, 0], [edge, 2147483647, 2147483647]]],
                     True, monkeypatch)
    assert used == 1
    expected = [[edge, 2147483648], [edge, 2147483647]]
    assert [row for chunk in got for _, _, _, row in chunk] == [[_canonical(v) for v in r] for r in expected]


# ----------------------------------------------------------------------------- values
INTS = st.one_of(st.sampled_from([0, 1, -1, 7, 2**31 - 1, -2**31, 46341, -46341]),
                 st.integers(-2**31, 2**31 - 1))
LONGS = st.one_of(st.sampled_from([0, -1, 2**63 - 1, -2**63, 2**53 + 1, -(2**53) - 1, 3037000500, 16777217]),
                  st.integers(-2**63, 2**63 - 1))
FLOATS = st.one_of(st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 0.1, 16777217.0, 3.4028235e38,
                                    1e39, 1.5]),
                   st.floats(width=32), st.floats())  # (a float attribute may hold a wider value, as sent)
DOUBLES = st.one_of(st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 1e308, 9007199254740993.0, 0.3]),
                    st.floats())
ROWS = st.tuples(INTS, LONGS, FLOATS, DOUBLES, st.booleans(), st.sampled_from(["IBM", "WSO2", "", "ibm", None]))

NUMERIC_LEAVES = ["i", "l", "f", "d", "7", "-3", "2147483647", "5L", "9223372036854775807L", "1.5f", "0.1f",
                  "0.3", "1e300", "-0.0"]


@st.composite
def numeric(draw: st.DrawFn, depth: int = 2) -> str:
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(NUMERIC_LEAVES))
    op = draw(st.sampled_from(["+", "-", "*"]))
    return f"({draw(numeric(depth - 1))} {op} {draw(numeric(depth - 1))})"


@st.composite
def condition(draw: st.DrawFn, depth: int = 2) -> str:
    kind = draw(st.sampled_from(["compare", "compare", "bool", "and", "or", "not"] if depth else ["compare", "bool"]))
    if kind == "compare":
        op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]))
        return f"({draw(numeric())} {op} {draw(numeric())})"
    if kind == "bool":
        return draw(st.sampled_from(["b", "(b == true)", "(b != b)", "true", "(s == 'IBM')", "('WSO2' != s)",
                                     "(s != '')"]))
    if kind == "not":
        return f"(not {draw(condition(depth - 1))})"
    return f"({draw(condition(depth - 1))} {kind} {draw(condition(depth - 1))})"


def test_snapshots_that_differ_only_in_a_nans_sign_bit_compare_alike() -> None:
    # the fast and slow runs' snapshots are compared this way (test_group_add, test_slide)
    def state(nan: float, one: float) -> bytes:
        return state_codec.dumps({"total": nan, "rest": (one, [nan, 2**70], {nan: "k"})})

    assert state(math.nan, 1.0) != state(-math.nan, 1.0)
    assert _nans_alike(state(math.nan, 1.0)) == _nans_alike(state(-math.nan, 1.0))
    assert _nans_alike(state(math.nan, 1.0)) != _nans_alike(state(math.nan, -1.0))
    assert _nans_alike(state(math.nan, 0.0)) != _nans_alike(state(math.nan, -0.0))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cond=condition(), outputs=st.lists(st.one_of(numeric(), condition(1)), min_size=1, max_size=3),
       rows=st.lists(ROWS, min_size=1, max_size=40))
def test_random_filters_and_projections_match_the_python_loop(cond: str, outputs: list[str], rows: list[Any],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    select = ", ".join(f"{expr} as o{n}" for n, expr in enumerate(outputs))
    app = STREAM + f"from S[{cond}] select s, {select}, i insert into O;"
    _agree(app, [rows[: len(rows) // 2], rows[len(rows) // 2:]], monkeypatch, columnar_used=None)


# ----------------------------------------------------------------------------- shapes
ROW = (3, 40, 2.5, 120.0, True, "IBM")


def _chunks(*rows: Any) -> list[list[Any]]:
    return [[ROW, *rows, (9, -4, 0.5, 99.5, False, "WSO2")]]


def test_the_benchmark_filter_takes_the_columnar_path(monkeypatch: pytest.MonkeyPatch) -> None:
    app = STREAM + "from S[d >= 100 and l > 10] select s, d * l as value insert into O;"
    _agree(app, _chunks((1, 11, 1.0, 100.0, True, "X"), (1, 10, 1.0, 100.0, True, "X")), monkeypatch)


@pytest.mark.parametrize("cond", ["s == 'IBM'", "'IBM' == s", "s != 'IBM' and d > 100.0", "not (s == 'WSO2')"])
def test_a_string_attribute_against_a_string_constant(cond: str, monkeypatch: pytest.MonkeyPatch) -> None:
    app = STREAM + f"from S[{cond}] select s, d + 1.0 as x insert into O;"
    _agree(app, _chunks((1, 2, 3.0, 101.0, True, "WSO2"), (1, 2, 3.0, 101.0, True, "IBMX")), monkeypatch)
    _agree(app, _chunks((1, 2, 3.0, 101.0, True, None)), monkeypatch)  # (a null: the Python loop)


def test_select_star_with_a_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    _agree(STREAM + "from S[b and i > 2] select * insert into O;", _chunks(), monkeypatch)


def test_constants_and_attributes_of_every_type_pass_through(monkeypatch: pytest.MonkeyPatch) -> None:
    app = STREAM + "from S[i > 0] select 'k' as k, 2.5f as c, 9L as n, s, b, f, i + 1 as j insert into O;"
    _agree(app, _chunks(), monkeypatch)


@pytest.mark.parametrize("value", [None, 5, "x"])
def test_a_null_or_another_type_sends_the_chunk_to_the_python_loop(value: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    app = STREAM + "from S[d > 1.0] select s, d * 2.0 as x insert into O;"
    _agree(app, _chunks((1, 2, 1.0, value, True, "NULLY")), monkeypatch)


def test_an_int_out_of_range_goes_to_the_python_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    app = STREAM + "from S[i > 1] select s, i * 3 as x insert into O;"
    _agree(app, _chunks((2**40, 2, 1.0, 1.0, True, "WIDE")), monkeypatch)


def test_a_row_given_as_a_list_goes_to_the_python_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    app = STREAM + "from S[i > 1] select s, i * 3 as x insert into O;"
    runtime = SiddhiManager().create_siddhi_app_runtime(app)
    got: list[Any] = []
    runtime.add_callback("O", lambda evs: got.extend(tuple(e.data) for e in evs))
    runtime.start()
    with monkeypatch.context() as m:
        m.setattr(columnar, "MIN_CHUNK", 1)
        runtime.get_input_handler("S").send_events([Event(TS, [5, 1, 1.0, 1.0, True, "L"]), Event(TS, ROW)])
    runtime.shutdown()
    assert got == [("L", 15), ("IBM", 9)]


@pytest.mark.parametrize("query", [
    "from S[d / 2.0 > 1.0] select s insert into O;",  # a division's zero divisor answers null
    "from S[s == s] select s, i + 1 as j insert into O;",  # strings other than against a constant
    "from S[s == 'IBM'] select s, str:length(s) as j insert into O;",
    "from S[d > 1.0] select s, math:abs(d) as a insert into O;",  # a function
    "from S[d is null] select s, i + 1 as j insert into O;",
    "from S select s, i insert into O;",  # nothing to compute
    "from S[d > 1.0] select s, i + 1 as j insert all events into O;",
    "from S#window.length(2) select s, i + 1 as j insert into O;",
    "from S[d > 1.0] select s, i + 1 as j having j > 2 insert into O;",
])
def test_what_the_columnar_path_leaves_to_the_python_loop(query: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _agree(STREAM + query, _chunks((1, 2, 3.0, 0.0, False, "Z")), monkeypatch, columnar_used=False)


def test_without_the_compiled_module_nothing_is_planned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columnar, "_speedups", None)
    assert not columnar.available()
    app = STREAM + "from S[d >= 100] select s, d * l as value insert into O;"
    fast, used = _run(app, _chunks(), True, monkeypatch)
    assert used == 0 and fast == _run(app, _chunks(), False, monkeypatch)[0]


def test_a_chunk_below_the_threshold_runs_the_python_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    plan = columnar.plan_columnar

    def spy(*args: Any) -> Any:
        select = plan(*args)

        def counted(chunk: list[Event]) -> Any:
            calls.append(len(chunk))
            return select(chunk)  # type: ignore[misc]
        return counted

    monkeypatch.setattr(columnar, "MIN_CHUNK", 3)
    monkeypatch.setattr(columnar, "plan_columnar", spy)
    runtime = SiddhiManager().create_siddhi_app_runtime(STREAM + "from S[i > 0] select s, i + 1 as j insert into O;")
    got: list[Any] = []
    runtime.add_callback("O", lambda evs: got.extend(tuple(e.data) for e in evs))
    runtime.start()
    handler = runtime.get_input_handler("S")
    handler.send_events([Event(TS, ROW)] * 2)
    handler.send_events([Event(TS, ROW)] * 3)
    runtime.shutdown()
    assert calls == [3] and got == [("IBM", 4)] * 5


# ----------------------------------------------------------------------------- the C module
def _speedups() -> Any:
    return columnar._speedups


def test_gather_reads_attributes_of_every_event() -> None:
    np = pytest.importorskip("numpy")
    chunk = [Event(TS, (1, 2.5, True)), RawEvent()]
    chunk[1].timestamp, chunk[1].data, chunk[1].type = TS, (-7, -0.0, False), 0
    ints, floats, bools = np.empty(2, "int64"), np.empty(2, "float64"), np.empty(2, "uint8")
    gather = _speedups().gather
    assert gather(chunk, ((0, "q", ints), (1, "d", floats), (2, "b", bools)))
    assert list(ints) == [1, -7] and list(floats) == [2.5, -0.0] and list(bools) == [1, 0]
    assert not gather(chunk, ((1, "q", ints),))  # a float is not a long
    assert not gather(chunk, ((0, "d", floats),))  # nor an int a double
    assert not gather(chunk, ((0, "q", ints), (3, "q", ints)))  # beyond the data
    assert not gather([Event(TS, (2**31,))], ((0, "i", np.empty(1, "int32")),))
    assert not gather(["not an event"], ((0, "q", ints),))
    assert not gather([Event(TS, [1])], ((0, "q", ints),))  # (a list, not a tuple)
    with pytest.raises(ValueError):
        gather(chunk * 2, ((0, "q", ints),))  # a buffer too small
    with pytest.raises(ValueError):
        gather(chunk, ((0, "z", ints),))
    with pytest.raises(TypeError):
        gather(chunk, ((0, "q"),))
    texts = [Event(TS, ("IBM",)), Event(TS, ("WSO2",))]
    assert gather(texts, ((0, "e", bools, "IBM"),)) and list(bools) == [1, 0]
    assert not gather([Event(TS, (None,))], ((0, "e", bools, "IBM"),))
    with pytest.raises(TypeError):
        gather(texts, ((0, "e", bools),))  # (which string?)


def test_emit_makes_raw_events_of_the_kept_events() -> None:
    np = pytest.importorskip("numpy")
    chunk = [Event(TS + n, ("a", n)) for n in range(3)]
    out = _speedups().emit(chunk, np.array([1, 0, 1], "uint8"),
                           (("a", 0), ("c", None), ("q", np.array([7, 8, 9], "int64")),
                            ("f", np.array([0.1, 0, 2], "float32")), ("b", np.array([0, 1, 1], "uint8"))), 0)
    assert [type(e) for e in out] == [RawEvent, RawEvent]
    assert [(e.timestamp, e.data, e.type) for e in out] == [
        (TS, ("a", None, 7, float(np.float32(0.1)), False), 0), (TS + 2, ("a", None, 9, 2.0, True), 0)]
    assert _speedups().emit(chunk, None, (), 1)[2].data == ()
    with pytest.raises(IndexError):
        _speedups().emit(chunk, None, (("a", 5),), 0)
    with pytest.raises(ValueError):
        _speedups().emit(chunk, None, (("d", np.zeros(2)),), 0)  # a column shorter than the chunk


def test_emitted_events_of_plain_values_are_not_tracked_by_the_collector() -> None:
    """An output row of atomic values, and its event, cannot be in a reference cycle: the
    collector need not walk them (its gen-0 passes over the rows cost W1 a tenth of its time)."""
    import gc

    np = pytest.importorskip("numpy")
    held: list[Any] = []
    chunk = [Event(TS, ("a", 1)), Event(TS + 1, (held, 2)), Event(TS + 2, ("c", 3))]
    out = _speedups().emit(chunk, None, (("a", 0), ("d", np.array([1.0, 2.0, 3.0])), ("c", "k")), 0)
    assert [gc.is_tracked(e) for e in out] == [False, True, False]
    assert [gc.is_tracked(e.data) for e in out] == [False, True, False]
    held.append(out[1])  # a cycle through the one that holds a container: the collector's to find
    boxed = _speedups().emit(chunk, None, (("c", []),), 0)  # a constant that is a container
    assert gc.is_tracked(boxed[0]) and gc.is_tracked(boxed[0].data)



def test_srota_pure_python_turns_the_columnar_path_off() -> None:
    probe = "from srota.engine import columnar; print(columnar.available())"
    got = subprocess.run([sys.executable, "-c", probe], env=dict(os.environ, SROTA_PURE_PYTHON="1"),
                         capture_output=True, text=True, check=True, timeout=60)
    assert got.stdout.strip() == "False"


def test_plain_tells_a_chunk_the_engine_may_take_as_it_is() -> None:
    plain = columnar.plain_check()
    assert plain is not None
    assert plain([Event(TS, (1,)), Event(TS, ())]) and plain([])
    assert not plain([Event(TS, [1])])  # a list: the engine copies it
    assert not plain([Event(TS, (1,), 1)])  # an expired event
    assert not plain([Event(TS, (1,)), "not an event"])


# ----------------------------------------------------------------------------- make_event
def test_an_event_of_plain_values_is_not_tracked_by_the_collector() -> None:
    import gc

    assert columnar.make_event is not None
    plain = columnar.make_event(TS, ("IBM", 1, 2**70, 1.5, None, True, b"x"), 0)
    assert (plain.timestamp, plain.data, plain.type) == (TS, ("IBM", 1, 2**70, 1.5, None, True, b"x"), 0)
    assert isinstance(plain, Event) and not gc.is_tracked(plain)
    # one that holds a container (an object attribute's list) stays tracked: a cycle through
    # it is the collector's to find
    held: list[Any] = []
    kept = columnar.make_event(TS, ("IBM", held), 0)
    held.append(kept)
    assert gc.is_tracked(kept)
    assert gc.is_tracked(columnar.make_event(TS, ["IBM"], 0))  # (data that is not a tuple)
    odd_time = columnar.make_event(1.5, ("IBM",), 0)  # plain data, a timestamp that is no int
    assert gc.is_tracked(odd_time) and not gc.is_tracked(odd_time.data)


def test_a_cycle_through_an_event_is_collected() -> None:
    import gc

    # the compiled maker leaves a plain event out of the collector's sight from the start; one
    # that holds a container must be in it, or a cycle through it would never be freed
    freed: list[bool] = []

    class Held(list[Any]):
        def __del__(self) -> None:
            freed.append(True)

    held = Held()
    held.append(columnar.make_event(TS, ("IBM", held), 0))
    del held
    gc.collect()
    assert freed == [True]


def test_sent_events_are_made_untracked_and_still_freed() -> None:
    import gc
    import sys

    runtime = SiddhiManager().create_siddhi_app_runtime(
        "define stream S (k string, d double);\nfrom S#window.length(2) select k, avg(d) as a insert into O;")
    runtime.start()
    for i in range(5):
        runtime.get_input_handler("S").send(("IBM", float(i)), TS + i)
    window = next(w for w in runtime._ctx.elements.values() if hasattr(w, "buffer"))
    window_events = list(window.buffer)
    assert window_events and not any(gc.is_tracked(e) for e in window_events)
    rows = [e.data for e in window_events]
    del window_events, window
    runtime.shutdown()
    del runtime
    gc.collect()  # (the runtime's own objects form cycles)
    # only this list holds the rows now: the untracked events went with their window
    alone = [("IBM", float(len(rows)))]
    assert {sys.getrefcount(row) for row in rows} == {sys.getrefcount(row) for row in alone}
