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
    for t in (3_000, 6_000, 12_000, 16_000):
        clock.advance(t)
    runtime.shutdown()
    assert [e.data[0] for e in got] == [6_000, 11_000, 16_000]
    assert [e.timestamp for e in got] == [6_000, 11_000, 16_000]


def test_disabled_triggers_send_nothing_and_start_only_keeps_the_periodic_ones():
    app = "define stream S (a int); define trigger T at every 5 sec; define trigger B at 'start';"
    for start_only, expected in ((False, ([], [])), (True, ([6_000, 11_000], []))):
        clock = PlaybackClock(1_000)
        runtime = SiddhiManager().create_siddhi_app_runtime(app, clock=clock)
        ticks, starts = collect(runtime, "T"), collect(runtime, "B")
        runtime.disable_triggers(start_only=start_only)
        runtime.start()
        for t in (6_000, 12_000):
            clock.advance(t)
        runtime.shutdown()
        assert ([e.data[0] for e in ticks], starts) == expected


def test_cron_trigger():
    clock = PlaybackClock(0)
    runtime = SiddhiManager().create_siddhi_app_runtime("define trigger T at '*/10 * * * * ?';", clock=clock)
    got = collect(runtime, "T")
    runtime.start()
    for t in (10_000, 25_000, 30_000, 35_000):
        clock.advance(t)
    runtime.shutdown()
    assert [e.data[0] for e in got] == [10_000, 20_000, 30_000]


EPOCH = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC, a Tuesday


def test_playback_trigger_starts_at_the_first_event():
    """The playback clock starts at the first event: no ticks from 1970 (decision 11)."""
    runtime = SiddhiManager().create_siddhi_app_runtime(
        "@app:playback define stream S (a int); define trigger T at every 1 sec;")
    got = collect(runtime, "T")
    runtime.start()
    h = runtime.get_input_handler("S")
    for i in range(50):
        h.send([i], EPOCH + i * 100)
    runtime.shutdown()
    assert [e.data[0] for e in got] == [EPOCH + 1_000 * k for k in range(1, 5)]


def test_trigger_that_fell_behind_fires_once():
    runtime = SiddhiManager().create_siddhi_app_runtime(
        "@app:playback define stream S (a int); define trigger T at every 1 sec;")
    got = collect(runtime, "T")
    runtime.start()
    h = runtime.get_input_handler("S")
    h.send([0], EPOCH)
    h.send([1], EPOCH + 86_400_000 + 500)  # a day without events
    h.send([2], EPOCH + 86_400_000 + 1_000)
    runtime.shutdown()
    # the first missed tick fires once, the rest of the day is skipped, then the grid goes on
    assert [e.data[0] for e in got] == [EPOCH + 1_000, EPOCH + 86_400_000 + 1_000]


@pytest.fixture
def utc(monkeypatch):
    """Cron runs in the local time zone: pin it for the test."""
    import time as _time
    monkeypatch.setenv("TZ", "UTC")
    _time.tzset()
    yield
    monkeypatch.undo()
    _time.tzset()


def test_cron_day_of_week_is_quartz_in_trigger_and_window(utc):
    """Quartz numbers days from Sunday = 1: '0 0 9 ? * 2' is Monday 09:00, in both places."""
    monday_9 = 1_700_470_800_000  # 2023-11-20 09:00:00 UTC
    clock = PlaybackClock(EPOCH)  # a Tuesday
    runtime = SiddhiManager().create_siddhi_app_runtime(
        "define stream S (a int); define trigger T at '0 0 9 ? * 2';"
        "from S#window.cron('0 0 9 ? * 2') select a insert into W;", clock=clock)
    got = collect(runtime, "T")
    window = collect(runtime, "W")
    runtime.start()
    runtime.get_input_handler("S").send([7])
    clock.advance(monday_9 - 1)
    assert got == [] and window == []
    clock.advance(monday_9)
    runtime.shutdown()
    assert [e.data[0] for e in got] == [monday_9]
    assert [e.data for e in window] == [(7,)]


@pytest.mark.parametrize("app", [
    "define stream T (a int); define trigger T at 'start';",
    # (each as Siddhi 5.1.33 refuses it: DuplicateDefinitionException)
    "@async(buffer.size='16') define stream T (triggered_time long); define trigger T at 'start';",
    "define stream T (triggered_time long); define trigger T at 'start'; define trigger T at 'start';",
    "define table T (triggered_time long); define trigger T at 'start';",
    "define stream S (a int); @async(buffer.size='16') define stream S (a int);",
    "define trigger T at 'not a cron';",
    "define trigger T at '0 9 * * 1';",         # Unix cron: Siddhi's is Quartz (seconds first)
    "define trigger T at '0 0 9 1 * 2';",       # both day fields: Quartz needs '?' in one
])
def test_trigger_creation_errors(app):
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(app)


@pytest.mark.parametrize("app", [
    "define stream T (triggered_time long); define trigger T at 'start'; from T select triggered_time insert into O;",
    "define trigger T at 'start'; define stream T (triggered_time long); from T select triggered_time insert into O;",
])
def test_a_trigger_may_share_its_id_with_a_stream_of_its_own_schema(app):
    """Siddhi's TriggerTestCase.testQuery4: a stream defined as the trigger's own, (triggered_time
    long) without annotations, is the trigger's stream (Siddhi 5.1.33 accepts it, and the start
    trigger fires into it); before, Srota refused the app."""
    runtime = SiddhiManager().create_siddhi_app_runtime(app)
    got = collect(runtime, "O")
    runtime.start()
    runtime.shutdown()
    assert len(got) == 1 and isinstance(got[0].data[0], int)
