"""#reorder:kslack and #reorder:akslack."""
from __future__ import annotations

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager

T0 = 1_700_000_000_000


def run(processor: str, stamps: list[int], playback: bool = True, advance: int | None = None) -> list[int]:
    text = (("@app:playback " if playback else "") + "define stream S (t long, d double);\n"
            f"from S#reorder:{processor} select t insert into O;")
    rt = SiddhiManager().create_siddhi_app_runtime(text)
    got: list[int] = []
    rt.add_callback("O", lambda events: got.extend(e.data[0] - T0 for e in events))
    rt.start()
    h = rt.get_input_handler("S")
    for i, t in enumerate(stamps):
        h.send([T0 + t, float(i)], timestamp=T0 + i)
    if advance is not None:
        rt.context.clock.advance(T0 + advance)
    snapshot = rt.snapshot()
    rt.shutdown()
    run.snapshot = snapshot  # type: ignore[attr-defined]
    return got


def test_kslack_orders_by_timestamp_once_k_is_learnt():
    # K grows to the disorder seen (2 after 5 arrives behind 3): 5, 6 wait for 7/9
    assert run("kslack(t)", [1, 4, 3, 5, 6, 9, 7, 8, 10]) == [1, 4, 3, 5, 6, 7]


def test_kslack_discards_late_arrivals():
    assert run("kslack(t, true)", [1, 4, 3, 5, 2, 9]) == [1, 4, 5, 9]  # 3 and 2 arrive after 4 left


def test_kslack_timeout_flushes_on_the_clock():
    got = run("kslack(t, 1000L)", [10, 5, 20], advance=5000)
    assert got == [10, 5, 20]


def test_kslack_max_k_bounds_the_buffer():
    assert run("kslack(t, -1L, 1L)", [1, 10, 3, 11, 12]) == [1, 10, 3, 11]


def test_akslack_reorders():
    got = run("akslack(t, d, 20L)", [1, 4, 3, 5, 6, 9, 7, 8, 10, 12, 13, 14, 11, 15])
    assert got == [1, 4, 3, 5, 6, 7, 8, 9, 10, 11]


@pytest.mark.parametrize("call", ["kslack(s)", "kslack(t, 1000L, s)", "kslack(t, 12L, 'maxK', true)",
                                  "akslack(s, d)", "akslack(t, d, 'batch')", "akslack(t, d, 20L, t)",
                                  "kslack(t, 1000)"])
def test_creation_errors(call):
    with pytest.raises(SiddhiAppCreationError) as info:
        SiddhiManager().create_siddhi_app_runtime(
            f"define stream S (t long, d double, s string);\nfrom S#reorder:{call} select t insert into O;")
    assert info.value.line == 2


def test_kslack_buffer_is_in_snapshots():
    text = "@app:playback define stream S (t long, d double);\nfrom S#reorder:kslack(t) select t insert into O;"
    rt = SiddhiManager().create_siddhi_app_runtime(text)
    rt.start()
    h = rt.get_input_handler("S")
    for i, t in enumerate([1, 4, 3, 5, 6]):   # 5 and 6 wait in the buffer (K = 2)
        h.send([T0 + t, 0.0], timestamp=T0 + i)
    snap = rt.snapshot()
    rt.shutdown()
    rt2 = SiddhiManager().create_siddhi_app_runtime(text)
    got: list[int] = []
    rt2.add_callback("O", lambda events: got.extend(e.data[0] - T0 for e in events))
    rt2.start()
    rt2.restore(snap)
    rt2.get_input_handler("S").send([T0 + 9, 0.0], timestamp=T0 + 10)
    rt2.shutdown()
    assert got == [5, 6]
