"""Output rate limiting (conformance note 15)."""
from __future__ import annotations

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager

STREAM = "define stream S (ip string, n int);"


def _run(query: str, ips: str, playback: bool = False, times: list[int] | None = None,
         advance: int | None = None) -> list[list]:
    rt = SiddhiManager().create_siddhi_app_runtime(("@app:playback " if playback else "") + STREAM +
                                                   "@info(name='q') " + query)
    got: list[list] = []
    rt.add_query_callback("q", lambda ts, i, r: got.extend([list(e.data) for e in (i or []) + (r or [])]))
    rt.start()
    h = rt.get_input_handler("S")
    for k, ip in enumerate(ips):
        h.send([ip, k], timestamp=times[k] if times else None)
    if advance is not None:
        rt.context.clock.advance(advance)
    rt.shutdown()
    return got


def test_all_every_n_events_drops_incomplete_group():
    assert len(_run("from S select ip output every 2 events insert into O;", "abcde")) == 4


def test_first_every_n_events_emits_partial_block():
    assert [r[0] for r in _run("from S select ip output first every 2 events insert into O;", "abcde")] == \
        ["a", "c", "e"]
    assert len(_run("from S select ip output first every 3 events insert into O;", "abcde")) == 2


def test_last_every_n_events():
    assert [r[0] for r in _run("from S select ip output last every 2 events insert into O;", "abcde")] == ["b", "d"]
    assert len(_run("from S select ip output last every 4 events insert into O;", "abcde")) == 1


def test_first_every_n_events_counts_per_group():
    got = _run("from S select ip group by ip output first every 5 events insert into O;", "abcaadebb")
    assert [r[0] for r in got] == ["a", "b", "c", "d", "e"]


def test_last_every_n_events_group_by_emits_latest_per_key():
    got = _run("from S select ip, n group by ip output last every 3 events insert into O;", "abaccc")
    assert got == [["a", 2], ["b", 1], ["c", 5]]


def test_time_based_rates_under_playback():
    times = [1000, 1100, 1200, 2500, 2600]
    all_ = _run("from S select ip output every 1 sec insert into O;", "abcde", True, times, advance=5000)
    assert [r[0] for r in all_] == ["a", "b", "c", "d", "e"]
    first = _run("from S select ip output first every 1 sec insert into O;", "abcde", True, times, advance=5000)
    assert [r[0] for r in first] == ["a", "d"]
    last = _run("from S select ip output last every 1 sec insert into O;", "abcde", True, times, advance=5000)
    assert [r[0] for r in last] == ["c", "e"]


def test_time_based_group_by():
    times = [1000, 1100, 1200, 2500]
    first = _run("from S select ip group by ip output first every 1 sec insert into O;", "aaba", True, times, 5000)
    assert [r[0] for r in first] == ["a", "b", "a"]
    last = _run("from S select ip, n group by ip output last every 1 sec insert into O;", "aaba", True, times, 5000)
    assert last == [["a", 1], ["b", 2], ["a", 3]]


def test_snapshot_reemits_window_rows():
    got = _run("from S#window.length(2) select ip output snapshot every 1 sec insert all events into O;",
               "abc", True, [1000, 1100, 1200], advance=2100)
    assert got == [["b"], ["c"]]


def test_snapshot_group_by_latest_aggregate_per_key():
    got = _run("from S#window.length(10) select ip, count() as c group by ip output snapshot every 1 sec "
               "insert all events into O;", "aab", True, [1000, 1100, 1200], advance=2100)
    assert got == [["a", 2], ["b", 1]]


def test_a_snapshot_query_inserts_all_events_unless_it_says_otherwise():
    """Siddhi's Query.updateOutputEventType: with ``output snapshot`` a plain ``insert into``
    inserts all events, so a window's expired events leave the snapshot (before: current
    events only, and the snapshot kept every event the window ever held).  Saying current or
    expired events is refused, as Siddhi's QueryParser refuses it."""
    got = _run("from S#window.length(1) select ip output snapshot every 1 sec insert into O;",
               "abcd", True, [1000, 2000, 3000, 4000])
    assert got == [["a"], ["b"], ["c"]]
    for kind in ("current", "expired"):
        with pytest.raises(SiddhiAppCreationError, match="snapshot rate limiting"):
            _run(f"from S#window.length(1) select ip output snapshot every 1 sec insert {kind} events into O;", "")


def test_rate_limiter_state_roundtrip():
    rt = SiddhiManager().create_siddhi_app_runtime(
        STREAM + "@info(name='q') from S select ip output every 3 events insert into O;")
    rt.start()
    h = rt.get_input_handler("S")
    h.send(["a", 0])
    limiter = rt.context.elements["q/rate"]
    state = limiter.snapshot_state()
    h.send(["b", 1])
    limiter.restore_state(state)
    got = []
    rt.add_query_callback("q", lambda ts, i, r: got.extend(e.data[0] for e in i or ()))
    h.send(["c", 2])
    h.send(["d", 3])
    assert got == ["a", "c", "d"]
    rt.shutdown()


def test_zero_events_rate_is_rejected():
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(STREAM + "from S select ip output every 0 events insert into O;")
