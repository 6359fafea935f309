"""The comparison's rules, without a JVM."""
from __future__ import annotations

from tests.differential.harness import _plain, compare, run_srota, same_value


def test_a_java_float_and_srotas_32_bit_value_are_the_same() -> None:
    assert same_value(65.1, 65.0999984741211)
    assert not same_value(65.1, 65.2)
    assert not same_value(1, True)
    assert same_value({"$set": ["a", "b"]}, ["b", "a"])  # a Java set prints in hash order
    assert not same_value(["a", "b"], ["b", "a"])  # a list keeps its order
    assert same_value([{"$set": [1.5, 2.5]}], [[2.5, 1.5]])


def test_a_zeros_sign_counts() -> None:
    # Java prints -0.0 and a sink writes it so; math:sin(-0.0) is -0.0 in Siddhi
    assert not same_value(-0.0, 0.0)
    assert not same_value([0.0], [-0.0])
    assert same_value(-0.0, -0.0) and same_value(0.0, 0.0)
    assert same_value(0, 0.0)  # an int and a double of the same value: the types are checked elsewhere


def test_a_nan_or_an_infinity_in_a_list_is_the_text_java_prints() -> None:
    # the runner writes a row's NaN as "NaN", Gson a list's as the number
    assert same_value([float("nan"), float("-inf")], ["NaN", "-Infinity"])
    assert same_value("Infinity", float("inf")) and not same_value("NaN", float("inf"))


def _answer(*chunks: list[list[object]]) -> dict[str, object]:
    return {"error": None, "outputs": [{"cb": "stream:O", "events": [[ts, data, False] for ts, data in c]}
                                       for c in chunks]}


def test_compare_tells_rows_timestamps_and_chunks_apart() -> None:
    one = _answer([[1, ["a"]], [2, ["b"]]])
    assert compare(one, _answer([[1, ["a"]], [2, ["b"]]])).agree
    split = compare(one, _answer([[1, ["a"]]], [[2, ["b"]]]))
    assert split.rows and split.timestamps and not split.chunks
    late = compare(one, _answer([[1, ["a"]], [3, ["b"]]]))
    assert late.rows and not late.timestamps
    assert not compare(one, _answer([[1, ["a"]]])).rows


def test_both_engines_refusing_an_app_agree() -> None:
    refused = {"error": "SiddhiParserException: bad", "outputs": []}
    srota = run_srota({"app": "define stream S (a int); from S select nope insert into O;", "steps": []})
    assert srota["error"]
    assert compare(refused, srota).agree


def test_run_srota_reports_callbacks_in_the_runners_shape() -> None:
    case = {"app": "@app:playback define stream S (a int); @info(name='q1') from S#window.length(1) "
                   "select a insert all events into O;",
            "streams": ["O"], "queries": ["q1"],
            "steps": [{"stream": "S", "events": [[1_700_000_000_000, [1]]]},
                      {"stream": "S", "events": [[1_700_000_000_001, [2]], [1_700_000_000_002, [3]]]}]}
    answer = run_srota(case)
    assert answer["error"] is None
    cbs = [o["cb"] for o in answer["outputs"]]
    assert "query:q1" in cbs and "stream:O" in cbs


def test_a_restore_step_goes_on_in_a_new_runtime_restored_from_a_snapshot() -> None:
    app = ("@app:name('r') @app:playback define stream S (a int); "
           "from S#window.length(2) select sum(a) as total insert into O;")
    steps = [{"stream": "S", "events": [[1_700_000_000_000 + i, [i]]]} for i in range(1, 5)]
    whole = run_srota({"app": app, "streams": ["O"], "steps": steps})
    restored = run_srota({"app": app, "streams": ["O"], "steps": [*steps[:2], {"restore": True}, *steps[2:]]})
    assert restored["error"] is None and restored["outputs"] == whole["outputs"]
    assert [o["events"][0][1] for o in whole["outputs"]] == [[1], [3], [5], [7]]


def test_with_restore_puts_the_step_inside_and_names_the_app() -> None:
    from tests.differential.__main__ import with_restore

    case = {"id": "x-1-window", "app": "@app:playback define stream S (a int);",
            "steps": [{"stream": "S", "events": []}] * 3}
    restored = with_restore(case)
    at = [i for i, step in enumerate(restored["steps"]) if "restore" in step]
    assert len(at) == 1 and 1 <= at[0] <= 2 and len(restored["steps"]) == 4
    assert restored["app"].startswith("@app:name(") and restored == with_restore(case)
    one = dict(case, steps=case["steps"][:1])
    assert with_restore(one) is one


def test_unordered_callbacks_compare_each_chunk_as_a_multiset() -> None:
    siddhi = _answer([[1, ["a"]], [1, ["b"]]], [[2, ["c"]]])
    srota = _answer([[1, ["b"]], [1, ["a"]]], [[2, ["c"]]])
    assert not compare(siddhi, srota).agree
    assert compare(siddhi, srota, ["stream:O"]).agree
    assert not compare(siddhi, _answer([[1, ["b"]]], [[1, ["a"]], [2, ["c"]]]), ["stream:O"]).agree


def test_a_fault_streams_error_compares_as_a_marker() -> None:
    # the runner writes Siddhi's Throwable as "$error"; Srota's exception must meet it there
    case = {"id": "fault", "app": "@app:playback\n@OnError(action='STREAM')\n"
            "define stream S (a int, b long);\n"
            "from S select list:sort(list:create(a, b), 'ASC') as l insert into O;\n"
            "from !S select a, _error insert into F;\n",
            "streams": ["F"], "queries": [], "steps": [{"stream": "S", "events": [[1, [1, 2]]]}]}
    rows = [row for out in run_srota(case)["outputs"] for _, row, *_ in out["events"]]
    assert rows == [[1, "$error"]]  # (Integer and Long do not compare: the event faults)


def test_a_maps_keys_are_written_as_gson_writes_them() -> None:
    # String.valueOf of each key: null, true, Double.toString, as the runner's Gson writes them
    assert _plain({None: 1, True: 2, 1e10: 3, "a": 4}) == {"null": 1, "true": 2, "1.0E10": 3, "a": 4}
