"""Record the fixtures of ``tests/engine/aggregation/test_persisted.py`` on real Siddhi 5.1.33 with
siddhi-store-rdbms (``@persistedAggregation(enable='true')``).

Not run in CI (siddhi-store-rdbms is built by hand): ``python -m
tests.engine.aggregation.persisted_recorded.record CLASSPATH_FILE [case ...]``.  As
tests/engine/stores/siddhi_recorded/record.py (whose helpers it uses), each case runs
``PersistedRecorder`` once per phase on one fresh database, on new runtimes each time (a restart),
and dumps the tables after each phase; the last phase's answers are kept.
"""
from __future__ import annotations

import datetime
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.engine.stores.siddhi_recorded.record import _connect, _new_database, dump

HERE = Path(__file__).resolve().parent
DAY = 86_400_000
T0 = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC
STREAM = "define stream stockStream (symbol string, price float, quantity int, timestamp long);\n"
SELECT = ("select symbol, avg(price) as avgPrice, sum(quantity) as total, count() as n, min(price) as minPrice, "
          "max(price) as maxPrice")
PERS = ("seconds", "minutes", "hours", "days", "months", "years")
COLUMNS = "AGG_TIMESTAMP, symbol, avgPrice, total, n, minPrice, maxPrice"


def app(select: str = SELECT, group: str = "group by symbol ", every: str = "sec...year",
        by: str = "by timestamp ") -> str:
    """The app; ``{store}`` is filled in per database (recorder and test)."""
    return ("@app:name('persisted') @app:playback\n" + STREAM + "@store({store})\n"
            "@persistedAggregation(enable='true')\n@purge(enable='false')\n"
            f"define aggregation stockAggregation from stockStream {select}\n"
            f"{group}aggregate {by}every {every};\n")


def queries(columns: str = COLUMNS) -> list[str]:
    return [f"from stockAggregation within {T0 - 40 * DAY}L, {T0 + 400 * DAY}L per '{p}' select {columns}"
            for p in PERS]


def _ev(dt: int, symbol: str, price: float, qty: int) -> list[Any]:
    return [0, T0 + dt, [symbol, price, qty, T0 + dt]]


# Phase 1: two days (Nov 14, 15), a late event; phase 2 (after a restart): the rest of Nov 15,
# Nov 16, a late event for Nov 14, then December (closing November) and a last event in 2024.
PHASE1 = [_ev(100, "IBM", 10.5, 2), _ev(300, "WSO2", 20.25, 1), _ev(900, "IBM", 11.0, 3),
          _ev(65_000, "IBM", 12.5, 1), _ev(3_000_000, "WSO2", 19.5, 4),      # hour 23 of Nov 14
          _ev(2_000_000, "IBM", 9.75, 2),                                     # late (hour 22 written)
          _ev(DAY - 1_000, "IBM", 8.5, 1), _ev(DAY + 5_000, "WSO2", 21.0, 2),  # Nov 15
          _ev(DAY + 3_700_000, "IBM", 8.25, 5)]
PHASE2 = [_ev(DAY + 3_800_000, "IBM", 7.25, 1), _ev(DAY + 7_400_000, "WSO2", 23.0, 2),
          _ev(2 * DAY + 10_000, "IBM", 6.5, 3),                               # Nov 16
          _ev(500, "WSO2", 30.0, 1),                                          # late: Nov 14
          _ev(2 * DAY + 3_700_000, "WSO2", 5.5, 1),
          _ev(20 * DAY, "IBM", 4.5, 2), _ev(20 * DAY + 3_600_000, "IBM", 4.25, 1),   # Dec 4
          _ev(60 * DAY, "WSO2", 3.5, 1)]                                      # 2024-01-13

CASES: dict[str, dict[str, Any]] = {}
for _db in ("postgresql", "mariadb"):
    CASES[f"{_db}_group_by"] = {"db": _db, "app": app(), "phases": [PHASE1, PHASE2], "queries": queries()}
    CASES[f"{_db}_day_month"] = {"db": _db, "app": app(every="day, month"), "phases": [PHASE1 + PHASE2],
                                 "queries": queries()}
    CASES[f"{_db}_arrival_time"] = {"db": _db, "app": app(by=""), "phases": [PHASE1, PHASE2], "queries": queries()}
    CASES[f"{_db}_no_group_by"] = {"db": _db, "app": app(group=""), "phases": [PHASE1], "queries": []}


def datasource(db: str, host: str, port: int, database: str) -> dict[str, str]:
    """The datasource AGG_DS as the Java recorder sets it up (MariaDB: MySQL metadata, as record.py)."""
    if db == "postgresql":
        return {"name": "AGG_DS", "url": f"jdbc:postgresql://{host}:{port}/{database}", "username": "srota",
                "password": "srota", "driver": "org.postgresql.Driver"}
    return {"name": "AGG_DS", "url": f"jdbc:mysql://{host}:{port}/{database}?useMysqlMetadata=true",
            "username": "srota", "password": "srota", "driver": "org.mariadb.jdbc.Driver"}


def record_case(name: str, case: dict[str, Any], server: Any, classpath: str, classes: Path) -> dict[str, Any]:
    db = case["db"]
    database = _new_database(db, server)
    run_app = case["app"].replace("{store}", "type='rdbms', datasource='AGG_DS'")
    out: dict[str, Any] = {"case": name, "db": db, "app": case["app"], "queries": case["queries"], "phases": []}
    for n, events in enumerate(case["phases"], 1):
        last = n == len(case["phases"])
        with tempfile.TemporaryDirectory() as tmp:
            spec, answers = Path(tmp) / "phase.json", Path(tmp) / "answers.json"
            spec.write_text(json.dumps({"app": run_app, "stream": "stockStream", "shards": [None],
                                        "events": events, "queries": case["queries"] if last else [],
                                        "datasource": datasource(db, server.host, server.port, database),
                                        "settle_ms": 3000}))
            run = subprocess.run(["java", "-Duser.timezone=UTC", "-cp", f"{classes}:{classpath}",
                                  "PersistedRecorder", str(spec), str(answers)],
                                 capture_output=True, text=True, timeout=300)
            (HERE.parent / f".{name}.{n}.log").write_text(run.stdout + run.stderr) if "-v" in sys.argv else None
            error = None
            if run.returncode != 0 or not answers.exists():
                lines = [ln for ln in run.stderr.splitlines() if "Exception" in ln]
                error = lines[0] if lines else run.stderr[-2000:]
                result: dict[str, Any] = {"answers": []}
            else:
                result = json.loads(answers.read_text())
            errors = [ln for ln in run.stderr.splitlines() if " ERROR " in ln or "ERROR" in ln[:40]]
        conn = _connect(db, server, database)
        try:
            tables = dump(conn, db)
        finally:
            conn.close()
        phase: dict[str, Any] = {"events": events, "tables": tables, "siddhi_errors": errors,
                                 "creation_error": error}
        if last:
            phase["answers"] = result["answers"]
        out["phases"].append(phase)
        if error:
            break
    return out


def main(argv: list[str]) -> None:
    from tests.dbservers import MariaDBServer, PostgresServer, mariadb_bin, postgres_bin

    classpath = Path(argv[0]).read_text().strip()
    only = {a for a in argv[1:] if not a.startswith("-")}
    tmp = Path(tempfile.mkdtemp(prefix="siddhi-persisted-"))
    classes = tmp / "classes"
    subprocess.run(["javac", "-nowarn", "-cp", classpath, "-d", str(classes), str(HERE / "PersistedRecorder.java"), str(HERE / "osgi" / "FrameworkUtil.java")],
                   check=True)
    pg_bin, mb = postgres_bin(), mariadb_bin()
    assert pg_bin is not None and mb is not None
    pg, my = PostgresServer(tmp / "pg", pg_bin), MariaDBServer(tmp / "my", *mb)
    pg.start()
    my.start()
    try:
        for name, case in CASES.items():
            if only and name not in only:
                continue
            recorded = record_case(name, case, pg if case["db"] == "postgresql" else my, classpath, classes)
            recorded["recorded"] = datetime.date.today().isoformat()
            (HERE / f"{name}.json").write_text(json.dumps(recorded, indent=1) + "\n")
            print(name, "recorded")
    finally:
        pg.stop()
        my.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
