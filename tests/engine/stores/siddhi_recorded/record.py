"""Record the fixtures of ``test_siddhi_recorded.py`` on real Siddhi 5.1.33 with siddhi-store-rdbms.

Not run in CI (siddhi-store-rdbms is built by hand, see docs/aggregation.md "Taking over a Siddhi
deployment"): ``python -m tests.engine.stores.siddhi_recorded.record CLASSPATH_FILE`` with the
class path of Siddhi, the store and its dependencies in CLASSPATH_FILE. It starts PostgreSQL and
MariaDB (tests/dbservers.py), and for each case runs ``RdbmsRecorder`` twice on one fresh database:
phase 1's events, the tables dumped; then phase 2's events on new runtimes (a restart), Siddhi's
answers to the queries, the tables dumped again. Each case is written to ``<case>.json`` here.
With ``--reverse`` nothing is recorded: Srota runs each recording's first run and real Siddhi
continues on Srota's tables, which must give Siddhi's recorded answers (a cut-over back).
"""
from __future__ import annotations

import base64
import datetime
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
T0 = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC
STREAM = "define stream stockStream (symbol string, price float, quantity int, timestamp long);\n"
SELECT = ("select symbol, avg(price) as avgPrice, sum(quantity) as total, count() as n, min(price) as minPrice, "
          "max(price) as maxPrice, (price * quantity) as lastTradeValue")
DURATIONS = ("SECONDS", "MINUTES", "HOURS", "DAYS", "MONTHS", "YEARS")
PERS = ("seconds", "minutes", "hours", "days", "months", "years")


def _app(sharded: bool, select: str = SELECT) -> str:
    # {store} is filled in per database by the recorder and by the test
    return ("@app:name('recorded') @app:playback\n" + STREAM + "@store({store})\n"
            + ("@PartitionById(enable='true')\n" if sharded else "")
            + "@purge(enable='false')\n"
            f"define aggregation stockAggregation from stockStream {select}\n"
            "group by symbol aggregate by timestamp every sec...year;\n")


def _queries(columns: str) -> list[str]:
    return [f"from stockAggregation within {T0 - 86_400_000}L, {T0 + 100_000_000}L per '{p}' select {columns}"
            for p in PERS]


_COLUMNS = "AGG_TIMESTAMP, symbol, avgPrice, total, n, minPrice, maxPrice, lastTradeValue"


def _ev(shard: int, dt: int, symbol: str, price: float, qty: int) -> list[Any]:
    return [shard, T0 + dt, [symbol, price, qty, T0 + dt]]


# Phase 1 ends inside minute 22:14 and hour 22 (open); phase 2 continues after a restart, with
# late events for buckets already written, and crosses an hour and a day.
PHASE1 = [_ev(0, 100, "IBM", 10.5, 2), _ev(0, 300, "WSO2", 20.25, 1), _ev(0, 900, "IBM", 11.0, 3),
          _ev(0, 1500, "IBM", 12.5, 1), _ev(0, 2200, "WSO2", 19.5, 4),
          _ev(0, 1800, "IBM", 9.75, 2),           # late: its second was written at 2200
          _ev(0, 39_500, "IBM", 8.5, 1), _ev(0, 40_100, "WSO2", 21.0, 2), _ev(0, 41_000, "IBM", 8.25, 5),
          _ev(0, 39_900, "WSO2", 22.5, 1),        # late: its minute closed at 40_100
          _ev(0, 45_200, "IBM", 7.5, 2)]
PHASE2 = [_ev(0, 45_700, "IBM", 7.25, 1),         # the second phase 1 left open (lost at shutdown)
          _ev(0, 47_000, "WSO2", 23.0, 2),
          _ev(0, 30_000, "IBM", 6.5, 3),          # late: minute 22:13, closed before the restart
          _ev(0, 2_800_500, "IBM", 5.5, 1), _ev(0, 2_801_000, "WSO2", 24.0, 1),   # hour 23
          _ev(0, 6_400_100, "IBM", 4.5, 2), _ev(0, 6_401_200, "IBM", 4.25, 1)]    # day 2023-11-15


def _two_shards(events: list[list[Any]]) -> list[list[Any]]:
    """The same events split over two nodes: every other event to node2."""
    return [[i % 2, *e[1:]] for i, e in enumerate(events)]


CASES: dict[str, dict[str, Any]] = {
    "postgresql_one_node": {"db": "postgresql", "app": _app(False), "shards": [None],
                            "phases": [PHASE1, PHASE2], "queries": _queries(_COLUMNS)},
    "postgresql_two_shards": {"db": "postgresql", "app": _app(True), "shards": ["node1", "node2"],
                              "phases": [_two_shards(PHASE1), _two_shards(PHASE2)], "queries": _queries(_COLUMNS)},
    "mariadb_one_node": {"db": "mariadb", "app": _app(False), "shards": [None],
                         "phases": [PHASE1, PHASE2], "queries": _queries(_COLUMNS)},
    "mariadb_two_shards": {"db": "mariadb", "app": _app(True), "shards": ["node1", "node2"],
                           "phases": [_two_shards(PHASE1), _two_shards(PHASE2)], "queries": _queries(_COLUMNS)},
    "mariadb_distinct_count": {
        "db": "mariadb", "shards": [None], "phases": [PHASE1, PHASE2],
        "app": _app(False, "select symbol, distinctCount(quantity) as kinds, sum(quantity) as total"),
        "queries": _queries("AGG_TIMESTAMP, symbol, kinds, total")},
}


def jdbc_store(db: str, host: str, port: int, database: str, java: bool) -> str:
    """The ``@store`` options for a database; Java's MariaDB driver is asked for MySQL's metadata
    (siddhi-store-rdbms picks its SQL by the product name, and has no "MariaDB" section)."""
    if db == "postgresql":
        url, driver = f"jdbc:postgresql://{host}:{port}/{database}", "org.postgresql.Driver"
    else:
        url = f"jdbc:mysql://{host}:{port}/{database}" + ("?useMysqlMetadata=true" if java else "")
        driver = "org.mariadb.jdbc.Driver"
    return f"type='rdbms', jdbc.url='{url}', username='srota', password='srota', jdbc.driver.name='{driver}'"


def _jsonable(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"base64": base64.b64encode(bytes(v)).decode()}
    return v


def dump(conn: Any, db: str) -> dict[str, Any]:
    """Every aggregation table: its columns (name, type, nullable, as the database describes
    them), primary key, indexes and rows."""
    pg = db == "postgresql"
    cur = conn.cursor()
    tables: dict[str, Any] = {}
    for d in DURATIONS:
        name = f"stockAggregation_{d}"
        if pg:
            cur.execute("SELECT column_name, CASE WHEN data_type = 'character varying' THEN 'VARCHAR(' || "
                        "character_maximum_length || ')' ELSE upper(data_type) END, is_nullable "
                        "FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = %s "
                        "ORDER BY ordinal_position", (name.lower(),))
        else:
            cur.execute("SELECT column_name, upper(column_type), is_nullable FROM information_schema.columns "
                        "WHERE table_schema = DATABASE() AND table_name = %s ORDER BY ordinal_position", (name,))
        columns = [[str(n), str(t), str(z) == "YES"] for n, t, z in cur.fetchall()]
        if not columns:
            continue
        schema = "current_schema()" if pg else "DATABASE()"
        cur.execute("SELECT k.column_name FROM information_schema.table_constraints c JOIN "
                    "information_schema.key_column_usage k ON c.constraint_name = k.constraint_name AND "
                    "c.table_name = k.table_name AND c.table_schema = k.table_schema WHERE "
                    f"c.constraint_type = 'PRIMARY KEY' AND c.table_schema = {schema} AND c.table_name = %s "
                    "ORDER BY k.ordinal_position", (name.lower() if pg else name,))
        key = [str(r[0]) for r in cur.fetchall()]
        if pg:
            cur.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s AND indexname NOT LIKE "
                        "'%%_pkey' ORDER BY indexname", (name.lower(),))
            indexes = [[str(n), str(s)] for n, s in cur.fetchall()]
        else:
            cur.execute(f"SHOW INDEX FROM {name} WHERE Key_name <> 'PRIMARY'")
            indexes = [list(i) for i in sorted({(str(r[2]), str(r[4])) for r in cur.fetchall()})]
        cur.execute(f"SELECT * FROM {name} ORDER BY 1, 2, 3")
        rows = [[_jsonable(v) for v in r] for r in cur.fetchall()]
        tables[d] = {"name": name, "columns": columns, "primary_key": key, "indexes": indexes, "rows": rows}
    cur.close()
    return tables


def _connect(db: str, server: Any, database: str) -> Any:
    if db == "postgresql":
        import psycopg

        return psycopg.connect(server.url(database), autocommit=True)
    import pymysql

    return pymysql.connect(host=server.host, port=server.port, user="srota", password="srota", database=database,
                           autocommit=True)


def _new_database(db: str, server: Any) -> str:
    if db == "postgresql":
        return str(server.create_database())
    import uuid

    import pymysql

    name = "t_" + uuid.uuid4().hex[:12]
    conn = pymysql.connect(host=server.host, port=server.port, user="srota", password="srota", autocommit=True)
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {name}")
    conn.close()
    return name


def record_case(name: str, case: dict[str, Any], server: Any, classpath: str, classes: Path) -> dict[str, Any]:
    db = case["db"]
    database = _new_database(db, server)
    app = case["app"].replace("{store}", jdbc_store(db, server.host, server.port, database, java=True))
    out: dict[str, Any] = {"case": name, "db": db, "app": case["app"], "shards": case["shards"],
                           "queries": case["queries"], "phases": []}
    for n, events in enumerate(case["phases"], 1):
        last = n == len(case["phases"])
        with tempfile.TemporaryDirectory() as tmp:
            spec, answers = Path(tmp) / "phase.json", Path(tmp) / "answers.json"
            spec.write_text(json.dumps({"app": app, "stream": "stockStream", "shards": case["shards"],
                                        "events": events, "queries": case["queries"] if last else []}))
            run = subprocess.run(["java", "-Duser.timezone=UTC", "-cp", f"{classes}:{classpath}", "RdbmsRecorder",
                                  str(spec), str(answers)], capture_output=True, text=True, timeout=300)
            if run.returncode != 0 or not answers.exists():
                raise RuntimeError(f"{name} phase {n}: {run.stderr[-4000:]}")
            errors = [ln for ln in run.stderr.splitlines() if " ERROR " in ln]
            result = json.loads(answers.read_text())
        conn = _connect(db, server, database)
        try:
            tables = dump(conn, db)
        finally:
            conn.close()
        phase = {"events": events, "tables": tables, "siddhi_errors": errors}
        if last:
            phase["answers"] = result["answers"]
        out["phases"].append(phase)
    return out


def check_reverse(servers: dict[str, Any], classpath: str, classes: Path) -> bool:
    """The other way round: Srota runs each recording's first run, real Siddhi continues on the
    tables Srota left (the second run, after a restart); Siddhi must then answer as it did after
    its own first run. Prints one line per query; True when all agree."""
    from srota.engine import SiddhiManager

    from tests.engine.stores.siddhi_recorded.test_siddhi_recorded import _same_rows

    ok = True
    for path in sorted(HERE.glob("*.json")):
        rec = json.loads(path.read_text())
        if "phases" not in rec or rec["case"] not in CASES or "distinct" in rec["case"]:
            continue
        server = servers[rec["db"]]
        database = _new_database(rec["db"], server)
        store = jdbc_store(rec["db"], server.host, server.port, database, java=False)
        runtimes = []
        for shard in rec["shards"]:
            manager = SiddhiManager(shard_id=shard) if shard else SiddhiManager()
            runtimes.append(manager.create_siddhi_app_runtime(rec["app"].replace("{store}", store)))
            runtimes[-1].start()
        for i, ts, data in rec["phases"][0]["events"]:
            runtimes[i].get_input_handler("stockStream").send(data, timestamp=ts)
        for rt in runtimes:
            rt.shutdown()
        app = rec["app"].replace("{store}", jdbc_store(rec["db"], server.host, server.port, database, java=True))
        with tempfile.TemporaryDirectory() as tmp:
            spec, answers = Path(tmp) / "phase.json", Path(tmp) / "answers.json"
            spec.write_text(json.dumps({"app": app, "stream": "stockStream", "shards": rec["shards"],
                                        "events": rec["phases"][1]["events"], "queries": rec["queries"]}))
            subprocess.run(["java", "-Duser.timezone=UTC", "-cp", f"{classes}:{classpath}", "RdbmsRecorder",
                            str(spec), str(answers)], capture_output=True, check=True, timeout=300)
            got = json.loads(answers.read_text())["answers"]
        for q, a, b in zip(rec["queries"], got, rec["phases"][1]["answers"], strict=True):
            same = a["error"] is None and _same_rows(a["rows"], b["rows"])
            ok = ok and same
            print(rec["case"], q[q.index("per "):q.index(" select")], "same" if same else f"differs: {a}")
    return ok


def main(argv: list[str]) -> None:
    from tests.dbservers import MariaDBServer, PostgresServer, mariadb_bin, postgres_bin

    classpath = Path(argv[0]).read_text().strip()
    reverse = "--reverse" in argv
    only = set(argv[1:]) - {"--reverse"}
    tmp = Path(tempfile.mkdtemp(prefix="siddhi-recorded-"))
    classes = tmp / "classes"
    subprocess.run(["javac", "-nowarn", "-cp", classpath, "-d", str(classes), str(HERE / "RdbmsRecorder.java")],
                   check=True)
    pg_bin, mb = postgres_bin(), mariadb_bin()
    assert pg_bin is not None and mb is not None
    pg, my = PostgresServer(tmp / "pg", pg_bin), MariaDBServer(tmp / "my", *mb)
    pg.start()
    my.start()
    try:
        if reverse:
            sys.exit(0 if check_reverse({"postgresql": pg, "mariadb": my}, classpath, classes) else 1)
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
