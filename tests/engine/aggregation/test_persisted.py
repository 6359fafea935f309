"""``@persistedAggregation(enable='true')`` against real Siddhi 5.1.33 (engine/aggregation/persisted.py).

The fixtures in persisted_recorded/ are what Siddhi 5.1.33 with siddhi-store-rdbms did on a real
PostgreSQL and MariaDB (record.py; Java is not needed here): the tables after a first run and after
a second run on new runtimes (a restart), and its answers to ``within ... per ...`` reads at the
end.  Srota runs the same events on a fresh database.  The tables Siddhi computes in the database
(days, months, years) and the seconds, minutes and hours must hold Siddhi's rows, and the reads
per second, minute, hour, day, month and year Siddhi's answers, late events included: as Siddhi, Srota writes a late event as an hour row of its
own under the hour it was written in, so the day computed next counts it (with its own day in
AGG_EVENT_TIMESTAMP), and so do the month and the year (docs/aggregation.md, "Persisted aggregation").
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from srota.engine import SiddhiManager

from tests.engine.aggregation.persisted_recorded.record import PHASE2
from tests.engine.stores.siddhi_recorded.record import dump
from tests.engine.stores.siddhi_recorded.test_siddhi_recorded import _DB, _store

HERE = Path(__file__).resolve().parent / "persisted_recorded"
LATE = PHASE2[3]  # [runtime, ts, [symbol, price, quantity, ts]]: a Nov 14 event after Nov 16's
CASES = ["postgresql_group_by", "mariadb_group_by", "postgresql_day_month", "mariadb_day_month",
         "postgresql_arrival_time", "mariadb_arrival_time"]


def _load(name: str) -> dict[str, Any]:
    return dict(json.loads((HERE / f"{name}.json").read_text()))


def _url(case: str, request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue("pg_url" if case.startswith("postgresql") else "mysql_url"))


def _run(rec: dict[str, Any], url: str) -> tuple[list[dict[str, Any]], list[list[list[Any]]]]:
    """Each phase's events on new runtimes (a restart between): the tables after each phase and
    the answers to the queries at the end of the last."""
    app = rec["app"].replace("{store}", _store(rec["db"], url))
    db = _DB(rec["db"], url)
    tables: list[dict[str, Any]] = []
    answers: list[list[list[Any]]] = []
    try:
        for phase in rec["phases"]:
            rt = SiddhiManager().create_siddhi_app_runtime(app)
            rt.start()
            for _, ts, data in phase["events"]:
                rt.get_input_handler("stockStream").send(data, timestamp=ts)
            rt.context.aggregations["stockAggregation"].store.flush()
            if phase is rec["phases"][-1]:
                for q in rec["queries"]:
                    try:
                        answers.append([list(e.data) for e in (rt.query(q) or ())])
                    except Exception as exc:  # Siddhi refuses a granularity the aggregation lacks too
                        answers.append([["error", str(exc)]])
            rt.shutdown()
            tables.append(dump(db.conn, rec["db"]))
    finally:
        db.close()
    return tables, answers


def _same(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> bool:
    def eq(x: Any, y: Any) -> bool:
        if isinstance(x, float) or isinstance(y, float):
            return x is not None and y is not None and math.isclose(float(x), float(y), rel_tol=1e-9)
        return bool(x == y)
    return len(a) == len(b) and all(len(x) == len(y) and all(map(eq, x, y)) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("case", CASES)
def test_days_months_years_are_computed_in_the_database_as_siddhi_does(case: str,
                                                                        request: pytest.FixtureRequest) -> None:
    rec = _load(case)
    ours, _ = _run(rec, _url(case, request))
    for n, (mine, theirs) in enumerate(zip(ours, rec["phases"], strict=True)):
        # (all six: a late event's rows, second to hour, are written as Siddhi writes them)
        for d in ("SECONDS", "MINUTES", "HOURS", "DAYS", "MONTHS", "YEARS"):
            if d not in theirs["tables"]:
                assert d not in mine
                continue
            columns = [c[0].lower() for c in theirs["tables"][d]["columns"]]
            assert [c[0].lower() for c in mine[d]["columns"]] == columns
            got = sorted(tuple(r) for r in mine[d]["rows"])
            want = sorted(tuple(r) for r in theirs["tables"][d]["rows"])
            assert _same(got, want), (n, d, got, want)


def test_a_late_event_is_an_hour_row_of_its_own_that_the_next_day_counts(request: pytest.FixtureRequest) -> None:
    """Siddhi's late-event rows: the Nov 14 event of phase 2 (its day computed already) is written
    under the hour it arrived in (Nov 16 00:00) with its own hour, and Nov 16's day counts it."""
    rec = _load("postgresql_group_by")
    ours, _ = _run(rec, _url("postgresql_group_by", request))
    _, ts, (symbol, price, _q, _ts) = LATE
    hours = [r for r in ours[1]["HOURS"]["rows"] if r[0] != r[1]]
    assert [(r[0], r[1], r[2], r[3]) for r in hours if r[2] == symbol and r[1] == 1_699_999_200_000] == [
        (1_700_172_000_000, 1_699_999_200_000, symbol, price)]
    days = {(r[0], r[1], r[2]) for r in ours[1]["DAYS"]["rows"]}
    assert (1_700_092_800_000, ts - ts % 86_400_000, symbol) in days


@pytest.mark.parametrize("case", CASES)
def test_reads_answer_as_siddhi(case: str, request: pytest.FixtureRequest) -> None:
    rec = _load(case)
    _, answers = _run(rec, _url(case, request))
    theirs = rec["phases"][-1]["answers"]
    for q, mine, want in zip(rec["queries"], answers, theirs, strict=True):
        if want["error"] is not None:
            assert "does not contain" in want["error"] and mine[0][0] == "error" and "does not keep" in mine[0][1]
            continue
        rows = sorted(tuple(r) for r in want["rows"])
        got = sorted(tuple(r) for r in mine)
        assert _same(got, rows), (q, got, rows)


@pytest.mark.parametrize("case", ["postgresql_no_group_by", "mariadb_no_group_by"])
def test_event_time_without_group_by_is_refused_as_siddhi_refuses_it(case: str,
                                                                      request: pytest.FixtureRequest) -> None:
    rec = _load(case)
    assert "SiddhiAppCreationException" in rec["phases"][0]["creation_error"]
    app = rec["app"].replace("{store}", _store(rec["db"], _url(case, request)))
    with pytest.raises(Exception, match="needs a group by"):
        SiddhiManager().create_siddhi_app_runtime(app)


def test_without_an_rdbms_store_it_is_refused() -> None:
    app = _load("postgresql_group_by")["app"].replace("@store({store})\n", "")
    with pytest.raises(Exception, match="persistedAggregation needs @store"):
        SiddhiManager().create_siddhi_app_runtime(app)


def test_distinct_count_is_refused_with_siddhis_message() -> None:
    app = _load("postgresql_group_by")["app"].replace("@store({store})\n", "").replace(
        "count() as n", "distinctCount(quantity) as n")
    with pytest.raises(Exception, match="distinctCount' does not supported with persisted"):
        SiddhiManager().create_siddhi_app_runtime(app)


def test_without_the_annotation_nothing_changes() -> None:
    app = _load("postgresql_group_by")["app"].replace("@store({store})\n", "").replace(
        "@persistedAggregation(enable='true')\n", "@persistedAggregation(enable='false')\n")
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    assert rt.context.aggregations["stockAggregation"].persisted is None


def test_a_late_event_still_in_an_open_hour_survives_a_restart(request: pytest.FixtureRequest) -> None:
    """A late event whose hour row waits for the hour it was written in to close: a restart then
    recreates that hour from the minutes as Siddhi does (the late minute row is written under the
    open hour), still as a late row, so the next day counts it."""
    day0, hour, day = 1_699_920_000_000, 3_600_000, 86_400_000

    def ev(ts: int, price: float) -> list[Any]:
        return [0, ts, ["A", price, 1, ts]]

    rec = {"db": "postgresql", "app": _load("postgresql_group_by")["app"], "queries": [], "phases": [
        {"events": [ev(day0 + 10 * hour, 1.0), ev(day0 + day + 10 * hour, 2.0),  # Nov 14 rolled up
                    ev(day0 + 11 * hour, 4.0),                                   # late: Nov 14 11:00
                    ev(day0 + day + 10 * hour + 300_000, 8.0)]},                 # its minute written
        {"events": [ev(day0 + 2 * day + hour, 16.0), ev(day0 + 2 * day + hour + 1_000, 32.0)]}]}
    ours, _ = _run(rec, _url("postgresql_group_by", request))
    days = {(r[0], r[1]): (r[3], r[4]) for r in ours[1]["DAYS"]["rows"]}
    assert days[(day0 + day, day0)] == (4.0, 1)  # Nov 15's day computation counts it
    assert days[(day0 + day, day0 + day)] == (2.0, 1)  # (8.0: the root's open second, lost as in Siddhi)
    assert days[(day0, day0)] == (1.0, 1)
