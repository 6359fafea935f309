"""srota test's cases, in-process: payloads through mappers, sink payloads, order, tolerance."""
from __future__ import annotations

import pytest
from srota.service.testing import TestFileError, run_case

APP = """
@source(type='inMemory', topic='in', @map(type='json', @attributes(id='$.device.id', t='$.temp')))
define stream In (id string, t double);
@sink(type='inMemory', topic='out', @map(type='json'))
define stream Out (id string, avg double);
from In#window.time(10 sec) select id, avg(t) as avg group by id insert into Out;
"""


def test_payloads_in_and_sink_payloads_out():
    case = {
        "name": "json both ways",
        "payloads": {"In": [{"device": {"id": "d1"}, "temp": 10.0}, '{"device": {"id": "d1"}, "temp": 20.0}']},
        "expect": {"Out": [{"id": "d1", "avg": 10.0}, {"avg": 15.0}]},
        "expect_payloads": {"Out": ['{"event": {"id": "d1", "avg": 10.0}}', {"event": {"id": "d1", "avg": 15.0}}]},
    }
    result = run_case(APP, case)
    assert result.passed, result.diff


def test_playback_time_moves_with_the_events():
    case = {
        "input": {"In": [{"at": 1_700_000_000_000, "data": ["d1", 10.0]},
                         {"after": "11 sec", "data": ["d1", 30.0]}]},
        "expect": {"Out": [{"avg": 10.0}, {"avg": 30.0}]},  # the first reading left the window
    }
    assert run_case(APP, case).passed


def test_unordered_tolerance_and_a_failing_diff():
    case = {"input": {"In": [["a", 1.0], ["b", 2.0]]},
            "expect": {"Out": [{"id": "b", "avg": 2.0000000001}, {"id": "a", "avg": 1.0}]},
            "unordered": True}
    assert run_case(APP, case).passed
    case["unordered"] = False
    result = run_case(APP, case)
    assert not result.passed
    assert any(line.startswith("-id=b") for line in result.diff)
    assert "+id=b avg=2.0" in result.diff


@pytest.mark.parametrize("case, message", [
    ({"input": {"Nope": [[1]]}}, "no stream 'Nope'"),
    ({"input": {"In": [["a"]]}}, "list of 2 values"),
    ({"expect": {"Missing": []}}, "no stream 'Missing'"),
    ({"inputs": {}}, "unknown key"),
    ({"payloads": {"In": ["not json"]}}, "mapper rejects it"),
])
def test_invalid_cases_say_why(case, message):
    with pytest.raises(TestFileError, match=message):
        run_case(APP, case)
