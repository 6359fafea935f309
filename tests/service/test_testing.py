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


TWO_SINKS = """
define stream In (id string, t double);
@sink(type='inMemory', topic='json', @map(type='json'))
@sink(type='inMemory', topic='csv', @map(type='csv'))
define stream Out (id string, t double);
from In select id, t insert into Out;
"""


def test_expect_payloads_compares_every_sink():
    json_payload = '{"event": {"id": "d1", "t": 1.5}}'
    # one sink by position (or by type when it is the only one of its type): each is checked
    case = {"input": {"In": [["d1", 1.5]]}, "expect_payloads": {"Out": {"0": [json_payload], "1": ["d1,1.5\n"]}}}
    assert run_case(TWO_SINKS, case).passed, run_case(TWO_SINKS, case).diff
    case["expect_payloads"] = {"Out": {"0": [json_payload], "1": ["d1,9.9\n"]}}
    failed = run_case(TWO_SINKS, case)
    assert not failed.passed and any("d1,9.9" in line for line in failed.diff)
    # a list is every sink's payloads: with two different mappers it cannot match both
    case["expect_payloads"] = {"Out": [json_payload]}
    failed = run_case(TWO_SINKS, case)
    assert not failed.passed and any("@sink 1" in line for line in failed.diff)
    with pytest.raises(TestFileError, match="no @sink 2"):
        run_case(TWO_SINKS, {"input": {"In": [["d1", 1.5]]}, "expect_payloads": {"Out": {"2": []}}})
