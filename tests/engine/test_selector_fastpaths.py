"""The selector's generated fast paths give what the general paths give.

``plan_selector`` generates one loop for stateless selectors (with the input's filter folded
in) and one for batching aggregation (rows made only for emitted events).  Each case here
runs an app twice on the same random chunks, once with the generated paths switched off,
and compares every output chunk.
"""
from __future__ import annotations

import random
from typing import Any

import pytest
from srota.engine import Event, SiddhiManager

STREAM = "@app:playback\ndefine stream S (sym string, price double, vol long, ts long);\n"

QUERIES = [
    "from S[price > 50 and vol < 800] select sym, price * vol as v insert {t} into Out;",
    "from S[price > 50][vol < 800] select * insert {t} into Out;",
    "from S select sym, price insert {t} into Out;",
    "from S#window.length(7) select sym, sum(vol) as v, count() as n, avg(price) as a group by sym insert {t} into Out;",
    "from S#window.length(7) select sum(vol) as v, max(price) as m insert {t} into Out;",
    "from S#window.lengthBatch(9) select sym, sum(vol) as v, count() as n group by sym insert {t} into Out;",
    "from S#window.externalTimeBatch(ts, 50) select sym, avg(price) as a, maxForever(vol) as m group by sym "
    "insert {t} into Out;",
    "from S#window.externalTime(ts, 40) select sym, count() as n, vol + 1 as w group by sym, vol "
    "insert {t} into Out;",
    "from S[vol > 100]#window.length(5) select sym, sum(price) as p insert {t} into Out;",
    # groups that leave the window (and their states) and come back within one chunk
    "from S#window.length(2) select sym, sum(vol) as v, count() as n group by sym insert {t} into Out;",
]


def _run(app: str, chunks: list[list[Event]], generated: bool) -> list[Any]:
    runtime = SiddhiManager().create_siddhi_app_runtime(app)
    if not generated:
        for q in runtime.queries.values():
            for element in q.elements.values():
                plan = getattr(element, "plan", None)
                if plan is not None and hasattr(plan, "deferred"):
                    plan.deferred = None
    got: list[Any] = []
    runtime.add_callback("Out", lambda evs: got.append([(e.timestamp, tuple(e.data), e.type) for e in evs]))
    runtime.start()
    handler = runtime.get_input_handler("S")
    for c in chunks:
        handler.send_events(c)
    runtime.shutdown()
    return got


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("out_type", ["", "expired events", "all events"])
def test_generated_paths_match_general_paths(query: str, out_type: str) -> None:
    rnd = random.Random(hash((query, out_type)) & 0xFFFF)
    ts = 1000
    chunks = []
    for _ in range(60):
        chunk = []
        for _ in range(rnd.randint(1, 12)):
            ts += rnd.randint(0, 9)
            chunk.append(Event(ts, (rnd.choice("abc"), rnd.uniform(0, 100), rnd.randint(1, 1000), ts)))
        chunks.append(chunk)
    app = STREAM + query.format(t=out_type)
    assert _run(app, chunks, True) == _run(app, chunks, False)


def test_stateless_selector_runs_the_filter_itself() -> None:
    runtime = SiddhiManager().create_siddhi_app_runtime(STREAM + QUERIES[0].format(t=""))
    query = next(iter(runtime.queries.values()))
    selector = next(e for e in query.elements.values() if hasattr(e, "plan"))
    assert selector.plan.fused


def _selector_of(runtime: Any) -> Any:
    query = next(iter(runtime.queries.values()))
    return next(e for e in query.elements.values() if hasattr(e, "plan"))


def _with_nulls(rnd: random.Random, p_null: float, chunks: int = 80) -> list[list[Event]]:
    ts = 1_700_000_000_000
    out = []
    for _ in range(chunks):
        chunk = []
        for _ in range(rnd.choice((1, 1, 3, 50, 200))):
            ts += rnd.randint(0, 9)
            sym = None if rnd.random() < p_null else rnd.choice("abc")
            price = None if rnd.random() < p_null else rnd.uniform(0, 100)
            vol = None if rnd.random() < p_null else rnd.randint(1, 1000)
            chunk.append(Event(ts, (sym, price, vol, ts)))
        out.append(chunk)
    return out


def _gt(a: Any, b: Any) -> bool:  # Siddhi: a comparison with null is false
    return a is not None and b is not None and a > b


def _mul(a: Any, b: Any) -> Any:  # Siddhi: arithmetic with null is null
    return None if a is None or b is None else a * b


NULL_CASES = [
    ("from S[price > 50 and vol < 800] select sym, price * vol as v, vol - 1 as w insert into Out;",
     lambda s, p, v: (_gt(p, 50) and _gt(800, v), (s, _mul(p, v), None if v is None else v - 1))),
    ("from S[vol >= 500 or price <= 20.0] select sym, price + vol as t, price > 60 as big insert into Out;",
     lambda s, p, v: (_gt(v, 499) or (p is not None and p <= 20.0),
                      (s, None if p is None or v is None else p + v, _gt(p, 60)))),
]


@pytest.mark.parametrize("p_null", [0.0, 0.002, 0.05, 0.5, 1.0])
@pytest.mark.parametrize("case", range(len(NULL_CASES)))
def test_the_unchecked_loop_gives_siddhi_nulls_wherever_they_come(case: int, p_null: float) -> None:
    # The select loop runs without null tests first and falls back to the checked loop at
    # the event where a null made it raise (and for the next chunks): outputs as Siddhi's.
    query, expect = NULL_CASES[case]
    runtime = SiddhiManager().create_siddhi_app_runtime(STREAM + query)
    assert "_chain" in _selector_of(runtime).plan.fast.__code__.co_names  # the unchecked loop is there
    got: list[Any] = []
    runtime.add_callback("Out", lambda evs: got.extend((e.timestamp, tuple(e.data)) for e in evs))
    runtime.start()
    chunks = _with_nulls(random.Random(f"{case}/{p_null}"), p_null)
    for chunk in chunks:
        runtime.get_input_handler("S").send_events(chunk)
    runtime.shutdown()
    want = []
    for e in (e for c in chunks for e in c):
        passes, row = expect(*e.data[:3])
        if passes:
            want.append((e.timestamp, row))
    assert got == want


def test_a_filter_that_calls_a_function_keeps_the_checked_loop_only() -> None:
    # (a function may have effects: running its event again after an unchecked raise would repeat them)
    for query in ("from S[math:abs(price) > 50] select sym, price * vol as v insert into Out;",
                  "from S[price > 50] select sym, math:abs(price * vol) as v insert into Out;"):
        runtime = SiddhiManager().create_siddhi_app_runtime(STREAM + query)
        assert "_chain" not in _selector_of(runtime).plan.fast.__code__.co_names, query
