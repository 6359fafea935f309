"""Statistics read what a query holds without changing what it outputs."""
from __future__ import annotations

from typing import Any

import pytest

from srota import SiddhiManager

B = 1_700_000_000_000
WINDOWS = ["lengthBatch(2)", "timeBatch(1 sec)", "batch()", "expressionBatch('count() <= 2')"]


def _run(window: str, statistics: bool) -> list[tuple[int, tuple[Any, ...], bool]]:
    app = ("@app:playback " + ("@app:statistics(reporter='prometheus', interval='5') " if statistics else "")
           + "define stream S (sym string, vol int); "
           f"@info(name='q1') from S#window.{window} select sym, vol insert all events into O;")
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    out: list[tuple[int, tuple[Any, ...], bool]] = []
    rt.add_callback("O", lambda events: out.extend((e.timestamp, tuple(e.data), e.is_expired) for e in events))
    rt.start()
    handler = rt.get_input_handler("S")
    for i in range(7):
        handler.send(["A", i], timestamp=B + i * 600)
        if statistics:
            report = rt.statistics()
            assert report["queries"]["q1"]["events_held"] >= 0
    rt.shutdown()
    return out


@pytest.mark.parametrize("window", WINDOWS)
def test_reading_events_held_is_not_a_find(window: str) -> None:
    # A batch window that a find scanned keeps its events' own timestamps when they expire
    # (Siddhi's cursor); the statistics' count of the events held must not count as one.
    assert _run(window, statistics=True) == _run(window, statistics=False)
