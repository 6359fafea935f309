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
