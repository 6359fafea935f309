"""Limits that stop one bad input or app from taking the process down."""
from __future__ import annotations

import pytest
from srota.engine import Limits, SiddhiAppCreationError, SiddhiManager


def _run(app: str, n: int, limits: Limits | None = None):
    runtime = SiddhiManager(limits=limits).create_siddhi_app_runtime(app)
    out: list = []
    runtime.add_callback("Out", lambda evs: out.extend(evs))
    runtime.start()
    h = runtime.get_input_handler("S")
    for i in range(n):
        h.send([i], timestamp=1000 + i)
    runtime.shutdown()
    return runtime, out


TIME = "@app:playback define stream S (v long); from S#window.time(1 hour) select count() as n insert all events into Out;"


def test_sliding_window_sheds_its_oldest_events_over_the_limit():
    runtime, out = _run(TIME, 50, Limits(max_window_events=10))
    assert out[-1].data[0] == 10                 # never more than 10 events held
    assert runtime.context.breaches["TimeWindow"] == 40


def test_no_limit_by_default():
    runtime, out = _run(TIME, 50)
    assert out[-1].data[0] == 50
    assert not runtime.context.breaches


def test_batch_window_drops_from_the_batch_over_the_limit():
    app = ("@app:playback @app:limits(max.window.events='5') define stream S (v long);"
           "from S#window.externalTimeBatch(v, 100) select count() as n insert into Out;")
    runtime, out = _run(app, 250)
    assert [e.data[0] for e in out] == [5, 5]
    # batches of 100 (v 0-99, 100-199) and the open one (200-249) each keep only 5
    assert runtime.context.breaches["ExternalTimeBatchWindow"] == 95 + 95 + 45


def test_app_annotation_overrides_and_is_checked():
    with pytest.raises(SiddhiAppCreationError, match="max.window.events"):
        SiddhiManager().create_siddhi_app_runtime("@app:limits(max.window.events='lots') define stream S (v long);")


def test_pending_partial_matches_are_bounded():
    app = ("@app:limits(max.pending.matches='20') define stream S (v long);"
           "from every e1=S[v >= 0] -> e2=S[v < 0] select e1.v as a insert into Out;")
    runtime, out = _run(app, 100)
    assert runtime.context.pattern_max_pending == 20
    pattern = next(el for eid, el in runtime.context.elements.items() if eid.endswith("/pattern"))
    # the bound holds per pattern state; the oldest partial matches are the ones dropped
    assert pattern.pending < 30 and pattern.dropped >= 70
