"""What the pattern planner learns from a condition's expression model (engine/pattern/fastpaths).

The fast paths decide, per state, which conjuncts read the arriving event alone (tested once
per event, the *gate*), which other states a condition reads (their bindings), and whether it
reads the candidate partial match itself.  These facts come from the expression model, so text
that merely looks like a name inside a string literal, or a function call, cannot fool them.
"""
from __future__ import annotations

from srota.engine import Event, SiddhiManager

STREAMS = """
@app:playback
define stream A (k string, p double);
define stream B (k string, p double);
"""


def _plan(condition: str):
    app = STREAMS + f"@info(name='q') from every e1=A -> e2=B[{condition}] select e1.k, e2.p insert into Out;"
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    rt.start()
    return rt, rt.context.elements["q/pattern"].plan.tests[1]


def test_a_condition_on_the_arriving_event_alone_is_a_whole_gate():
    rt, test = _plan("p > 10 and k == 'e1'")   # 'e1' is a string, not the event reference
    assert test.whole and test.bindings == ()
    rt.shutdown()


def test_the_conjuncts_on_the_arriving_event_gate_the_rest():
    rt, test = _plan("p > 10 and e1.p < p")
    assert not test.whole
    assert test.gate is not None and "d0" not in test.gate
    assert len(test.bindings) == 1 and test.bindings[0].startswith("d0 = (_r_v[0]")
    rt.shutdown()


def test_an_impure_function_is_never_a_gate():
    rt, test = _plan("p > 10 and UUID() != ''")
    assert not test.whole and "UUID" not in (test.gate or "") and "_fn" not in (test.gate or "")
    rt.shutdown()


def test_a_pure_function_of_the_arriving_event_is_a_gate():
    rt, test = _plan("coalesce(p, 0.0) > 10 and e1.p < p")
    assert test.gate is not None and "coalesce" not in test.gate and "d1" in test.gate
    rt.shutdown()


def test_event_timestamp_reads_the_candidate():
    rt, test = _plan("eventTimestamp(e1) < eventTimestamp()")
    assert test.reads_state and test.gate is None
    rt.shutdown()


def test_gated_and_ungated_conditions_give_the_same_matches():
    base = 1_700_000_000_000
    events = [("A", base + i, ["ab"[i % 2], float(i)]) for i in range(20)] + \
             [("B", base + 100 + i, ["ab"[i % 2], float(i * 3)]) for i in range(20)]

    def run(condition: str) -> list[tuple]:
        app = STREAMS + ("@info(name='q') from every e1=A -> e2=B[" + condition +
                         "] select e1.p as a, e2.p as b insert into Out;")
        rt = SiddhiManager().create_siddhi_app_runtime(app)
        rows: list[tuple] = []
        rt.add_callback("Out", lambda evs: rows.extend(tuple(e.data) for e in evs))
        rt.start()
        for s, t, d in events:
            rt.get_input_handler(s).send_events([Event(t, d)])
        rt.shutdown()
        return rows

    gated = run("p > 20 and e1.p < p")
    # The same condition in a form the planner cannot split into conjuncts.
    ungated = run("not (p <= 20 or e1.p >= p)")
    assert gated == ungated and gated
