"""``define function f[javascript]``: Siddhi's JavaScript script functions, on QuickJS."""
from __future__ import annotations

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from srota import SiddhiManager

pytest.importorskip("quickjs", reason="the optional extra srota[js] (quickjs-ng) is not installed")

T0 = 1_700_000_000_000


def _run(functions: str, select: str, rows: list[list[object]], attrs: str = "a string, b double, c long") -> list:
    app = (f"@OnError(action='STREAM') define stream S ({attrs});\n{functions}\n"
           f"from S select {select} insert into Out;\nfrom !S select * insert into Faults;")
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    out: list = []
    faults: list = []
    rt.add_callback("Out", lambda evs: out.extend(e.data for e in evs))
    rt.add_callback("Faults", lambda evs: faults.extend((e.data[:-1], str(e.data[-1])) for e in evs))
    rt.start()
    for i, r in enumerate(rows):
        rt.get_input_handler("S").send(r, timestamp=T0 + i)
    rt.shutdown()
    return [out, faults]


def test_siddhi_samples_concat_and_arithmetic() -> None:
    # the body of siddhi-script-js' own example, unchanged
    functions = """
define function concatFn[javascript] return string {
    var str1 = data[0];
    var str2 = data[1];
    var str3 = data[2];
    var res = str1.concat(str2, str3);
    return res;
};
define function half[JavaScript] return int { return data[0] / 2; };
define function big[javascript] return bool { return data[0] > 10; };
"""
    out, faults = _run(functions, "concatFn(a, 'x', 'y') as s, half(c) as h, big(b) as g",
                       [["IBM", 12.5, 7], ["WSO2", 3.0, 10]])
    assert out == [("IBMxy", 3, True), ("WSO2xy", 5, False)] and faults == []


def test_objects_in_and_out_nulls_and_types() -> None:
    functions = """
define function tags[javascript] return object { return {symbol: data[0], n: data[1] * 2, all: [data[0], data[1]]}; };
define function nothing[javascript] return double { return undefined; };
define function name[javascript] return string { return data[0] === null ? 'none' : typeof data[0]; };
"""
    out, _ = _run(functions, "tags(a, c) as t, nothing(b) as n, name(a) as k", [["IBM", 1.0, 2], [None, 2.0, 3]])
    assert out == [({"symbol": "IBM", "n": 4, "all": ["IBM", 2]}, None, "string"),
                   ({"symbol": None, "n": 6, "all": [None, 3]}, None, "none")]


def test_a_runaway_or_throwing_script_faults_its_event_only() -> None:
    functions = """
define function slow[javascript] return long { if (data[0] > 5) { while (true) {} } return data[0]; };
define function picky[javascript] return long { if (data[0] == 3) throw new Error('three!'); return data[0]; };
"""
    out, faults = _run(functions, "slow(c) as s, picky(c) as p", [["a", 0.0, 1], ["b", 0.0, 9], ["c", 0.0, 3],
                                                                   ["d", 0.0, 4]])
    assert out == [(1, 1), (4, 4)]
    assert [f[0][0] for f in faults] == ["b", "c"]
    assert "ran longer than 1 s" in faults[0][1] and "three!" in faults[1][1]


def test_a_body_that_does_not_compile_is_a_creation_error_with_its_line() -> None:
    with pytest.raises(SiddhiAppCreationError, match="function 'bad' does not compile: SyntaxError") as info:
        SiddhiManager().create_siddhi_app_runtime(
            "define stream S (a int);\n\ndefine function bad[javascript] return int { return data[0] +; };\n"
            "from S select bad(a) as b insert into Out;")
    assert info.value.line == 3
