"""``distinctCount`` sets as Siddhi stores them on MySQL/MariaDB: Java-serialized ``HashSet``s.

The codec is checked byte for byte against Java's own ``ObjectOutputStream`` (``java_hashsets.json``,
made by ``JavaHashSets.java``); the recording ``mariadb_distinct_count`` is real Siddhi's table, whose
sets Srota reads and continues (writing its own sets the same way). Siddhi itself cannot read
those sets back: its store queries on that table fail (``[B cannot be cast to java.util.Set``,
recorded in the fixture), so the answers are checked against Srota on the same rows in JSON.
"""
from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from srota.engine import SiddhiManager
from srota.engine.stores.java_serialized import dumps_hash_set, is_java_serialized, loads_hash_set
from srota.engine.types import java_key

from tests.engine.stores.siddhi_recorded.test_siddhi_recorded import (
    _DB,
    _answers,
    _dump,
    _same_rows,
    _store,
    create_as_siddhi_did,
)

HERE = Path(__file__).resolve().parent
JAVA = json.loads((HERE / "java_hashsets.json").read_text())


@pytest.mark.parametrize("name", sorted(JAVA))
def test_sets_read_and_write_as_java_serializes_them(name: str) -> None:
    case = JAVA[name]
    data = base64.b64decode(case["java"])
    # a double or float set holds each value as its java_key (-0.0 and NaN as the engine's sets do)
    keys = {java_key(v) for v in case["values"]}
    assert loads_hash_set(data) == keys
    assert dumps_hash_set(keys, case["type"]) == data  # byte for byte, element order too


def _rec() -> dict[str, Any]:
    return dict(json.loads((HERE / "mariadb_distinct_count.json").read_text()))


def test_siddhis_recorded_sets_hold_the_events_values() -> None:
    """Siddhi's SECONDS rows of each second and symbol (a late event's row included): their sets
    unite to the quantities of the events of that second."""
    rec = _rec()
    t = rec["phases"][0]["tables"]["SECONDS"]
    names = [c[0].lower() for c in t["columns"]]
    events = [e[2] for e in rec["phases"][0]["events"]]
    buckets: dict[tuple[int, str], tuple[set[Any], int]] = {}
    for raw in t["rows"]:
        row = dict(zip(names, raw, strict=True))
        data = base64.b64decode(row["agg_set_quantity"]["base64"])
        assert is_java_serialized(data)
        k = (row["agg_event_timestamp"], row["symbol"])
        have, total = buckets.get(k, (set(), 0))
        buckets[k] = (have | loads_hash_set(data), total + row["agg_sum_quantity"])
    assert buckets
    for (second, symbol), (values, total) in buckets.items():
        mine = [e for e in events if e[0] == symbol and e[3] // 1000 * 1000 == second]
        assert values == {e[2] for e in mine}
        assert total == sum(e[2] for e in mine)
    assert all(a["error"] and "cannot be cast" in a["error"] for a in rec["phases"][1]["answers"][:1])


def _continue(url: str, java: bool) -> tuple[list[list[list[Any]]], dict[str, Any]]:
    rec = _rec()
    tables = rec["phases"][0]["tables"]
    if not java:  # the same rows with the sets as JSON (Srota's own format)
        tables = json.loads(json.dumps(tables))
        for t in tables.values():
            at = [c[0].lower() for c in t["columns"]].index("agg_set_quantity")
            for row in t["rows"]:
                values = sorted(loads_hash_set(base64.b64decode(row[at]["base64"])))
                row[at] = {"base64": base64.b64encode(json.dumps(values).encode()).decode()}
    db = _DB("mariadb", url)
    try:
        create_as_siddhi_did(db, tables)
        rt = SiddhiManager().create_siddhi_app_runtime(rec["app"].replace("{store}", _store("mariadb", url)))
        rt.start()
        for _, ts, data in rec["phases"][1]["events"]:
            rt.get_input_handler("stockStream").send(data, timestamp=ts)
        rt.context.aggregations["stockAggregation"].store.flush()
        answers = _answers(rt, rec["queries"])
        rt.shutdown()
        return answers, _dump(db, rec["phases"][1]["tables"])
    finally:
        db.close()


def _sets(tables: dict[str, Any]) -> dict[str, list[tuple[Any, ...]]]:
    out = {}
    for d, t in tables.items():
        at = [c[0].lower() for c in t["columns"]].index("agg_set_quantity")
        rows = []
        for r in t["rows"]:
            raw = bytes(r[at])
            rows.append((*r[:at], frozenset(loads_hash_set(raw) if is_java_serialized(raw) else json.loads(raw)),
                         *r[at + 1:]))
        out[d] = sorted(rows, key=repr)
    return out


def test_srota_continues_siddhis_java_serialized_sets(mariadb_server: Any) -> None:
    """Srota reads Siddhi's sets, answers as it does on the same rows in JSON, and writes its
    own rows in Siddhi's format (the table's sets stay one format)."""
    java_answers, java_tables = _continue(str(mariadb_server.url(mariadb_server.create_database())), java=True)
    json_answers, json_tables = _continue(str(mariadb_server.url(mariadb_server.create_database())), java=False)
    for a, b in zip(java_answers, json_answers, strict=True):
        assert _same_rows(a, b)
    assert java_answers[0]  # per seconds: something was read
    assert _sets(java_tables) == _sets(json_tables)
    for t in java_tables.values():
        at = [c[0].lower() for c in t["columns"]].index("agg_set_quantity")
        assert all(is_java_serialized(bytes(r[at])) for r in t["rows"])
