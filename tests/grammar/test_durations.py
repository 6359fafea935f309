"""One duration parser for time literals, annotation values and the service config."""
from __future__ import annotations

import pytest
from srota.engine import SiddhiManager
from srota.grammar import parse, parse_time
from srota.grammar.durations import UNIT_MILLIS, parse_duration


@pytest.mark.parametrize(("text", "millis"), [
    ("100 ms", 100), ("100 millis", 100), ("100 millisecond", 100), ("100 milliseconds", 100),
    ("100 millisec", 100), ("2 sec", 2_000), ("2 s", 2_000), ("2 seconds", 2_000),
    ("1 min 30 sec", 90_000), ("1m30s", 90_000), ("2 HOURS", 7_200_000), ("1 h", 3_600_000),
    ("1 day", 86_400_000), ("1 week", 7 * 86_400_000), ("1 month", 30 * 86_400_000),
    ("1 year", 365 * 86_400_000), ("1.5 s", 1_500), (" 10 sec ", 10_000),
])
def test_parse_duration(text, millis):
    assert parse_duration(text) == millis
    assert parse_time(text) == millis  # the grammar's entry point is the same parser


@pytest.mark.parametrize("text", ["", "2", "10 parsecs", "30 sec 1 min", "1 sec 1 sec", "sec", "1 mo"])
def test_parse_duration_rejects(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_literal_units_and_strings_share_one_table():
    app = parse("define stream S (a int); from S#window.time(1 min 30 sec) select a insert into T;")
    assert app.execution_elements[0] is not None
    assert UNIT_MILLIS["MINUTES"] == parse_duration("1 min")


def test_100_ms_in_annotations_and_config(tmp_path):
    """'100 ms' was accepted by the config and @purge but rejected by @app:playback."""
    rt = SiddhiManager().create_siddhi_app_runtime(
        "@app:playback(idle.time='100 ms', increment='1 sec') define stream S (k string);"
        "@purge(enable='true', interval='100 ms', idle.period='1 sec') "
        "partition with (k of S) begin from S select k insert into T; end;")
    assert rt.context.clock.idle_millis == 100
    rt.shutdown()
    from srota.service.config import load_config
    cfg = tmp_path / "srota.yaml"
    cfg.write_text("persistence:\n  interval: 100 ms\n")
    assert load_config(cfg).persistence.interval_ms == 100
