"""Triggers: at 'start', at every <time>, cron; events carry triggered_time."""
from __future__ import annotations

import pytest
from srota.engine import PlaybackClock, SiddhiAppCreationError, SiddhiManager


def collect(runtime, stream):
    got = []
    runtime.add_callback(stream, lambda events: got.extend(events))
    return got


def test_start_trigger_fires_once_on_start():
    runtime = SiddhiManager().create_siddhi_app_runtime(
        "define trigger T at 'start'; from T select triggered_time as t insert into Out;")
    got = collect(runtime, "Out")
    runtime.start()
    runtime.shutdown()
    assert len(got) == 1 and isinstance(got[0].data[0], int)


def test_periodic_trigger_follows_the_clock():
    clock = PlaybackClock(1_000)
    runtime = SiddhiManager().create_siddhi_app_runtime(
        "define stream S (a int); define trigger T at every 5 sec;", clock=clock)
    got = collect(runtime, "T")
    runtime.start()
    clock.advance(16_000)
    runtime.shutdown()
    assert [e.data[0] for e in got] == [6_000, 11_000, 16_000]
    assert [e.timestamp for e in got] == [6_000, 11_000, 16_000]


def test_cron_trigger():
    clock = PlaybackClock(0)
    runtime = SiddhiManager().create_siddhi_app_runtime("define trigger T at '*/10 * * * * ?';", clock=clock)
    got = collect(runtime, "T")
    runtime.start()
    clock.advance(35_000)
    runtime.shutdown()
    assert [e.data[0] for e in got] == [10_000, 20_000, 30_000]


@pytest.mark.parametrize("app", [
    "define stream T (a int); define trigger T at 'start';",
    "define trigger T at 'not a cron';",
])
def test_trigger_creation_errors(app):
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(app)
