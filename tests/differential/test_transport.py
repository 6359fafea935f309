"""Cases with inMemory topics run on Srota's service host (tests/differential/transport.py)."""
from __future__ import annotations

import pytest

from tests.differential.generator import MAPPING_FAMILIES, generate
from tests.differential.harness import run_srota
from tests.differential.transport import uses_transports

APP = """@app:name('T')
@source(type='inMemory', topic='in', @map(type='json'))
define stream S (symbol string, price double);
@sink(type='inMemory', topic='out', @map(type='json'))
define stream O (symbol string, price double);
from S select * insert into O;
"""


def test_only_cases_with_topics_or_publishes_go_through_the_service() -> None:
    assert uses_transports({"topics": ["out"], "steps": []})
    assert uses_transports({"steps": [{"publish": "in", "message": "x"}]})
    assert not uses_transports({"streams": ["O"], "steps": [{"stream": "S", "events": []}]})


def test_published_messages_come_out_of_the_sink_in_order() -> None:
    steps = [{"publish": "in", "message": '{"event":{"symbol":"A","price":1.5}}'},
             {"publish": "in", "message": "not json"},  # fails to map: nothing comes out
             {"publish": "in", "message": '[{"event":{"symbol":"B","price":2.5}},{"symbol":"C","price":1.0E7}]'},
             {"stream": "S", "events": [[1_700_000_000_000, ["D", 0.5]]]}]
    answer = run_srota({"app": APP, "topics": ["out"], "streams": ["O"], "steps": steps})
    assert answer["error"] is None and answer["created"]
    topic = [o["events"][0][1][0] for o in answer["outputs"] if o["cb"] == "topic:out"]
    assert topic == ['{"event":{"symbol":"A","price":1.5}}',
                     '[{"event":{"symbol":"B","price":2.5}},{"event":{"symbol":"C","price":1.0E7}}]',
                     '{"event":{"symbol":"D","price":0.5}}']
    rows = [[e[1] for e in o["events"]] for o in answer["outputs"] if o["cb"] == "stream:O"]
    assert rows == [[["A", 1.5]], [["B", 2.5], ["C", 1e7]], [["D", 0.5]]]


def test_a_refused_app_is_an_answer() -> None:
    answer = run_srota({"app": APP.replace("@map(type='json'))\ndefine stream S", "@map(type='nope'))\ndefine stream S"),
                        "topics": ["out"], "steps": []})
    assert answer["created"] is False and "nope" in answer["error"]


@pytest.mark.parametrize("family", MAPPING_FAMILIES)
def test_generated_mapping_cases_run_on_srota(family: str) -> None:
    for index in range(15):
        answer = run_srota(generate(11, index, family))
        # (an @attributes that maps only some attributes is refused, as Siddhi refuses it)
        assert answer["error"] is None or answer["created"] is False, answer.get("traceback", answer["error"])
