"""The selector: per-chunk aggregation, group by, having, order by, limit and offset."""
from __future__ import annotations

import pytest
from srota.engine import Event, SiddhiAppCreationError, SiddhiManager

STREAM = "define stream S (sym string, price double, vol int);"


def _run(query: str, chunks: list[list[tuple]], callback: str = "query") -> list[list]:
    rt = SiddhiManager().create_siddhi_app_runtime(STREAM + "@info(name='q') " + query)
    got: list[list] = []
    rt.add_query_callback("q", lambda ts, i, r: got.append([list(e.data) for e in (i or []) + (r or [])]))
    rt.start()
    h = rt.get_input_handler("S")
    for chunk in chunks:
        h.send_events([Event(1, row) for row in chunk])
    rt.shutdown()
    return got


def test_aggregation_emits_last_event_of_chunk():
    got = _run("from S select sym, sum(vol) as v insert into O;", [[("a", 1.0, 1), ("b", 1.0, 2)], [("c", 1.0, 3)]])
    assert got == [[["b", 3]], [["c", 6]]]


def test_plain_projection_emits_every_event():
    got = _run("from S select sym insert into O;", [[("a", 1.0, 1), ("b", 1.0, 2)]])
    assert got == [[["a"], ["b"]]]


def test_group_by_last_per_key_in_first_appearance_order():
    got = _run("from S select sym, sum(vol) as v group by sym insert into O;",
               [[("a", 1.0, 1), ("b", 1.0, 2), ("a", 1.0, 3)]])
    assert got == [[["a", 4], ["b", 2]]]


def test_group_by_several_keys():
    got = _run("from S select sym, vol, count() as n group by sym, vol insert into O;",
               [[("a", 1.0, 1), ("a", 1.0, 2), ("a", 1.0, 1)]])
    assert got == [[["a", 1, 2], ["a", 2, 1]]]


def test_group_by_a_double_keys_as_java_does():
    # Siddhi groups by the value's text: -0.0 apart from 0.0, every NaN in one group
    nan = float("nan")
    got = _run("from S select price, count() as n group by price insert into O;",
               [[("a", 0.0, 1)], [("a", -0.0, 1)], [("a", nan, 1)], [("a", -0.0, 1)], [("a", float("nan"), 1)]])
    assert [r[0][1] for r in got] == [1, 1, 1, 2, 2]


def test_distinct_count_of_doubles_as_java_does():
    got = _run("from S select distinctCount(price) as n insert into O;",
               [[("a", 0.0, 1)], [("a", -0.0, 1)], [("a", float("nan"), 1)], [("a", float("nan"), 1)]])
    assert [r[0][0] for r in got] == [1, 2, 3, 3]


def test_order_by_a_double_in_compare_to_order():
    nan = float("nan")
    got = _run("from S#window.lengthBatch(5) select price order by price insert into O;",
               [[("a", nan, 1), ("a", 0.0, 1), ("a", 1.0, 1), ("a", -0.0, 1), ("a", -1.0, 1)]])
    assert [str(r[0]) for r in got[0]] == ["-1.0", "-0.0", "0.0", "1.0", "nan"]


def test_order_by_a_double_column_holding_an_int():
    # a double attribute may hold an int (sent as 100): it sorts with the doubles
    got = _run("from S#window.lengthBatch(3) select price order by price desc insert into O;",
               [[("a", 100, 1), ("a", 1.5, 1), ("a", 7.25, 1)]])
    assert got == [[[100], [7.25], [1.5]]]


def test_having_sees_output_names_and_aggregates():
    got = _run("from S select sym, sum(price) + 10 as price having price > 15 insert into O;",
               [[("a", 1.0, 1)], [("a", 5.0, 1)]])
    assert got == [[["a", 16.0]]]
    got = _run("from S select sym, vol having sum(vol) > 2 insert into O;", [[("a", 1.0, 1)], [("b", 1.0, 2)]])
    assert got == [[["b", 2]]]


def test_having_of_one_stream_sees_no_input_attribute():
    # Siddhi resolves a single-stream query's having against the output stream only
    # (AttributeNotExistException: 'vol' does not exist in 'O')
    with pytest.raises(SiddhiAppCreationError, match="vol"):
        _run("from S select sym having sum(vol) > 2 insert into O;", [])


def test_order_by_several_keys_stable_with_limit_offset():
    rows = [("a", 2.0, 1), ("b", 1.0, 2), ("c", 2.0, 0), ("d", 1.0, 2)]
    got = _run("from S select sym, price, vol order by price desc, vol insert into O;", [rows])
    assert got == [[["c", 2.0, 0], ["a", 2.0, 1], ["b", 1.0, 2], ["d", 1.0, 2]]]
    got = _run("from S select sym, price, vol order by price desc, vol limit 2 offset 1 insert into O;", [rows])
    assert got == [[["a", 2.0, 1], ["b", 1.0, 2]]]


def test_offset_applies_per_chunk():
    got = _run("from S#window.length(5) select sym limit 1 offset 1 insert into O;", [[("a", 1.0, 1)], [("b", 1.0, 1)]])
    assert got == []


def test_group_state_released_when_window_empties():
    rt = SiddhiManager().create_siddhi_app_runtime(
        STREAM + "@info(name='q') from S#window.length(1) select sym, count() as n group by sym insert into O;")
    rt.start()
    h = rt.get_input_handler("S")
    for s in "abcdef":
        h.send([s, 1.0, 1])
    selector = rt.context.elements["q/selector"]
    assert list(selector.states) == ["f"]
    rt.shutdown()


def test_insert_all_events_turns_expired_into_current():
    rt = SiddhiManager().create_siddhi_app_runtime(
        STREAM + "from S#window.length(1) select sym insert all events into O;")
    got = []
    rt.add_callback("O", lambda evs: got.append([(e.data[0], e.is_expired) for e in evs]))
    rt.start()
    for s in "ab":
        rt.get_input_handler("S").send([s, 1.0, 1])
    rt.shutdown()
    assert got == [[("a", False)], [("a", False), ("b", False)]]


@pytest.mark.parametrize("bad", ["select sym limit -1", "select sym offset -2", "select sym order by nope",
                                 "select sym, vol as sym", "select sym having vol"])
def test_selector_errors(bad):
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(STREAM + f"from S {bad} insert into O;")


@pytest.mark.parametrize("clause", [
    "select sym order by price",                     # not selected
    "select price as p, sym order by price",         # selected under another name
    "select sym, price order by S.price",            # qualified by its stream
    "select * order by S.price",
    "select sym, count() as n group by sym order by price",
])
def test_a_single_stream_query_orders_by_its_output_only(clause):
    """Siddhi 5.1.33 resolves the order by of a query over one stream against the output only:
    AttributeNotExistException, or "Id 'S' not defined within the current scope" when qualified."""
    with pytest.raises(SiddhiAppCreationError, match="orders by its output attributes") as info:
        SiddhiManager().create_siddhi_app_runtime(STREAM + f"from S#window.lengthBatch(2) {clause} insert into O;")
    assert info.value.line is not None


@pytest.mark.parametrize("query", [
    "from S#window.lengthBatch(2) select price as p, sym order by p insert into O;",
    "from S#window.lengthBatch(2) select * order by price insert into O;",
    "from S#window.length(2) as a join S#window.length(2) as b on a.sym == b.sym "
    "select a.sym, b.vol order by a.price insert into O;",  # a join falls back to its inputs
    "from e1=S -> e2=S select e2.sym order by e1.price insert into O;",
])
def test_order_by_that_siddhi_takes(query):
    SiddhiManager().create_siddhi_app_runtime(STREAM + query).shutdown()


def test_selector_snapshot_state_roundtrip():
    rt = SiddhiManager().create_siddhi_app_runtime(
        STREAM + "@info(name='q') from S select sym, sum(vol) as v group by sym insert into O;")
    rt.start()
    h = rt.get_input_handler("S")
    h.send(["a", 1.0, 2])
    sel = rt.context.elements["q/selector"]
    import pickle
    state = pickle.loads(pickle.dumps(sel.snapshot_state()))
    h.send(["a", 1.0, 5])
    sel.restore_state(state)
    got = []
    rt.add_query_callback("q", lambda ts, i, r: got.extend(list(e.data) for e in i or ()))
    h.send(["a", 1.0, 1])
    assert got == [["a", 3]]
    rt.shutdown()
