"""Incremental aggregation on ``@store(type='rdbms')``: the seed's example, shards, restarts."""
from __future__ import annotations

import random
import urllib.parse
from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from srota import SiddhiManager

T0 = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC


def _store_annotation(url: str) -> str:
    """The seed's ``@store`` line for a test database's URL."""
    p = urllib.parse.urlsplit(url)
    scheme = "postgresql" if p.scheme.startswith("postgres") else "mysql"
    driver = "org.postgresql.Driver" if scheme == "postgresql" else "com.mysql.jdbc.Driver"
    return (f'@store(type=\'rdbms\', jdbc.url="jdbc:{scheme}://{p.hostname}:{p.port}{p.path}", '
            f'username="{p.username}", password="{p.password}" ,"{driver}")')


def seed_app(url: str | None, name: str = "trades", sharded: bool = False, purge: bool = False) -> str:
    """The aggregation seed's TradeAggregation, with its @store line as written there (URL aside)."""
    store = "" if url is None else _store_annotation(url) + "\n"
    shard = "@PartitionById(enable='true')\n" if sharded else ""
    if not purge:  # Siddhi purges seconds older than 120 s by default; keep them to compare
        shard += "@purge(enable='false')\n"
    return f"""@app:name('{name}')
@app:playback
define stream TradeStream (symbol string, price double, quantity long, timestamp long);

{store}{shard}define aggregation TradeAggregation
from TradeStream
select symbol, avg(price) as avgPrice, sum(quantity) as total, max(price) as maxPrice,
       (price * quantity) as lastTradeValue, distinctCount(quantity) as kinds
group by symbol
aggregate by timestamp every sec ... year;
"""


def trades(n: int, seed: int = 7) -> list[list[Any]]:
    rnd = random.Random(seed)
    out = []
    ts = T0
    for _ in range(n):
        ts += rnd.choice((1, 150, 400, 1000, 61_000))  # distinct times: "latest" is one event
        out.append([rnd.choice(("IBM", "WSO2", "ORCL")), round(rnd.uniform(50, 200), 2), rnd.randint(1, 5), ts])
    return out


QUERIES = [
    f"from TradeAggregation within {T0 - 3_600_000}L, {T0 + 86_400_000}L per 'seconds' "
    "select AGG_TIMESTAMP, symbol, avgPrice, total, maxPrice, lastTradeValue, kinds",
    f"from TradeAggregation within {T0 - 3_600_000}L, {T0 + 86_400_000}L per 'minutes' "
    "select AGG_TIMESTAMP, symbol, avgPrice, total, maxPrice, lastTradeValue, kinds",
    f"from TradeAggregation within {T0 - 86_400_000 * 40}L, {T0 + 86_400_000 * 40}L per 'months' "
    "select AGG_TIMESTAMP, symbol, avgPrice, total, maxPrice, lastTradeValue, kinds",
]


def _feed(rt: Any, rows: list[list[Any]]) -> None:
    handler = rt.get_input_handler("TradeStream")
    for r in rows:
        handler.send(r, timestamp=r[3])
    agg = rt.context.aggregations["TradeAggregation"]
    agg.complete_all()  # what is still open goes to the store (end of input)


def _answers(rt: Any) -> list[list[tuple[Any, ...]]]:
    out = []
    for q in QUERIES:
        rows = sorted(tuple(e.data) for e in rt.query(q))
        out.append([tuple(round(v, 6) if isinstance(v, float) else v for v in r) for r in rows])
    return out


def _one_process(events: list[list[Any]]) -> list[list[tuple[Any, ...]]]:
    """What one process with in-memory tables answers for ``events``."""
    rt = SiddhiManager().create_siddhi_app_runtime(seed_app(None))
    rt.start()
    _feed(rt, events)
    try:
        return _answers(rt)
    finally:
        rt.shutdown()


@pytest.fixture(scope="module")
def one_process() -> list[list[tuple[Any, ...]]]:
    return _one_process(trades(400))


def test_seed_example_runs_unchanged_apart_from_the_url(rdbms_url: str, one_process: Any) -> None:
    # the seed's app as it is (default purging on: minutes and months outlive this test's events)
    rt = SiddhiManager().create_siddhi_app_runtime(seed_app(rdbms_url, purge=True))
    rt.start()
    _feed(rt, trades(400))
    assert _answers(rt)[1:] == one_process[1:]
    rt.shutdown()
    # after a restart the roll-ups are read back from the database
    again = SiddhiManager().create_siddhi_app_runtime(seed_app(rdbms_url, purge=True))
    again.start()
    assert _answers(again)[1:] == one_process[1:]
    again.shutdown()


def test_every_granularity_equals_one_process(rdbms_url: str, one_process: Any) -> None:
    rt = SiddhiManager().create_siddhi_app_runtime(seed_app(rdbms_url))
    rt.start()
    _feed(rt, trades(400))
    assert _answers(rt) == one_process
    rt.shutdown()


def test_two_shards_and_a_reader_agree_with_one_process(rdbms_url: str, one_process: Any) -> None:
    events = trades(400)
    shards = []
    for shard_id, part in (("node-a", events[0::2]), ("node-b", events[1::2])):
        rt = SiddhiManager(shard_id=shard_id).create_siddhi_app_runtime(seed_app(rdbms_url, sharded=True))
        rt.start()
        _feed(rt, part)
        shards.append(rt)
    reader = SiddhiManager(shard_id="reader").create_siddhi_app_runtime(seed_app(rdbms_url, sharded=True))
    reader.start()
    try:
        assert _answers(reader) == one_process
        assert _answers(shards[0]) == one_process  # a writer reads every shard too
    finally:
        for rt in (*shards, reader):
            rt.shutdown()


def test_a_shard_restarts_from_its_own_rows(pg_url: str) -> None:
    events = trades(400)
    b = SiddhiManager(shard_id="b").create_siddhi_app_runtime(seed_app(pg_url, sharded=True))
    b.start()
    _feed(b, events[1::2])
    first_half = events[0::2][:100]
    a = SiddhiManager(shard_id="a").create_siddhi_app_runtime(seed_app(pg_url, sharded=True))
    a.start()
    handler = a.get_input_handler("TradeStream")
    for r in first_half:
        handler.send(r, timestamp=r[3])
    # Open buckets of the coarser granularities are rebuilt from a's own rows; the finest
    # open bucket (the last second before the stop) is lost without a state snapshot, as in
    # Siddhi, so one process without those events is the reference.
    a.shutdown()
    last_second = first_half[-1][3] // 1000
    lost = [r for r in first_half if r[3] // 1000 == last_second]
    a = SiddhiManager(shard_id="a").create_siddhi_app_runtime(seed_app(pg_url, sharded=True))
    a.start()
    _feed(a, events[0::2][100:])
    try:
        assert _answers(a) == _one_process([r for r in events if r not in lost])
    finally:
        a.shutdown()
        b.shutdown()


def test_a_second_writer_without_shards_is_refused(rdbms_url: str) -> None:
    first = SiddhiManager().create_siddhi_app_runtime(seed_app(rdbms_url))
    try:
        with pytest.raises(SiddhiAppCreationError, match="already written by another process"):
            SiddhiManager().create_siddhi_app_runtime(seed_app(rdbms_url))
    finally:
        first.shutdown()
    # once the owner is gone, a new writer may take over
    SiddhiManager().create_siddhi_app_runtime(seed_app(rdbms_url)).shutdown()


def test_partition_by_id_needs_a_shard_id_and_a_shared_store(pg_url: str) -> None:
    with pytest.raises(SiddhiAppCreationError, match="needs a shard id"):
        SiddhiManager().create_siddhi_app_runtime(seed_app(pg_url, sharded=True))
    with pytest.raises(SiddhiAppCreationError, match="needs a store every shard can reach"):
        SiddhiManager(shard_id="x").create_siddhi_app_runtime(seed_app(None, sharded=True))


def test_restoring_a_snapshot_rewinds_the_shard_so_a_replay_counts_once(rdbms_url: str, one_process: Any) -> None:
    events = trades(400)
    a = SiddhiManager(shard_id="a").create_siddhi_app_runtime(seed_app(rdbms_url, sharded=True))
    a.start()
    handler = a.get_input_handler("TradeStream")
    for r in events[:200]:
        handler.send(r, timestamp=r[3])
    snapshot = a.snapshot()  # carries the store's watermark; the writes before it are committed
    for r in events[200:300]:  # written after the snapshot: a crash would replay them
        handler.send(r, timestamp=r[3])
    a.context.aggregations["TradeAggregation"].complete_all()
    a.shutdown()
    b = SiddhiManager(shard_id="a").create_siddhi_app_runtime(seed_app(rdbms_url, sharded=True))
    b.restore(snapshot)
    b.start()
    _feed(b, events[200:])
    try:
        assert _answers(b) == one_process
    finally:
        b.shutdown()


def test_shards_starting_at_once_create_the_tables_once(pg_url: str) -> None:
    """Workers start together: their CREATE TABLE IF NOT EXISTS ran at once and one failed
    with a unique violation on pg_type (seen in CI with two workers); DDL now waits its turn."""
    import threading

    from srota.engine.stores.database import Database, parse_url

    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def create(n: int) -> None:
        db = Database(parse_url(pg_url), f"worker {n}")
        try:
            def work(cur: Any) -> None:
                barrier.wait(10)
                db.dialect.serialize_ddl(cur)
                for t in range(8):
                    cur.execute(f'CREATE TABLE IF NOT EXISTS "T{t}__undo" (k BIGINT, v TEXT)')
            db.run(work)
        except BaseException as exc:  # noqa: BLE001 -- collected for the assertion
            errors.append(exc)
        finally:
            db.close()

    threads = [threading.Thread(target=create, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []


def test_a_row_that_breaks_a_constraint_is_dropped_alone(pg_url: str) -> None:
    """A CHECK an operator added: the batch is applied again row by row, so only the row that
    breaks it is dropped and counted (before: the whole batch, good rows included)."""
    import psycopg

    app = f"""@app:playback
define stream S (k string, v long, ts long);
@store(type='rdbms', url='{pg_url}')
@purge(enable='false')
define aggregation A from S select k, sum(v) as total group by k aggregate by ts every sec ... min;
"""
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    rt.start()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE A_SECONDS ADD CONSTRAINT cap CHECK (AGG_SUM_v <= 1000)")  # (names fold)
    h = rt.get_input_handler("S")
    for row in (["good", 1, T0], ["bad", 5000, T0], ["also", 2, T0], ["good", 3, T0 + 1000]):
        h.send(row, timestamp=row[2])
    agg = rt.context.aggregations["A"]
    agg.complete_all()
    agg.store.flush()
    try:
        assert agg.store.failed_writes == 1
        with psycopg.connect(pg_url) as conn:
            rows = conn.execute("SELECT AGG_TIMESTAMP, k, AGG_SUM_v FROM A_SECONDS ORDER BY 1, 2").fetchall()
        assert rows == [(T0, "also", 2), (T0, "good", 1), (T0 + 1000, "good", 3)]
    finally:
        rt.shutdown()


def test_a_shard_reads_the_finer_rows_of_buckets_other_shards_keep_open(rdbms_url: str) -> None:
    """Siddhi's distributed read: the requested table and, of every finer table, each shard's rows
    of the buckets its next coarser granularity still holds open; no shard's memory."""
    per_minute = (f"from TradeAggregation within {T0 - 3_600_000}L, {T0 + 3_600_000}L per 'minutes' "
                  "select AGG_TIMESTAMP, symbol, total")
    minute = T0 - 20_000  # T0 is 22:13:20
    shards = []
    for shard_id, quantity in (("a", 1), ("b", 10)):
        rt = SiddhiManager(shard_id=shard_id).create_siddhi_app_runtime(seed_app(rdbms_url, sharded=True))
        rt.start()
        h = rt.get_input_handler("TradeStream")
        # the second event's time passes the end of the first one's second: the timer writes it
        h.send(["IBM", 10.0, quantity, T0 + 100], timestamp=T0 + 100)
        h.send(["IBM", 10.0, 2 * quantity, T0 + 1_100], timestamp=T0 + 1_100)
        shards.append(rt)
    reader = SiddhiManager(shard_id="reader").create_siddhi_app_runtime(seed_app(rdbms_url, sharded=True))
    reader.start()
    try:
        # the minute is open in both shards: its closed seconds come from the seconds table; the
        # open seconds are only in the shards' memory, which a distributed read does not see
        for rt in (reader, *shards):
            assert [tuple(e.data) for e in rt.query(per_minute)] == [(minute, "IBM", 11)]
        for rt in shards:
            rt.context.aggregations["TradeAggregation"].complete_all()
        # every bucket written: the minute rows now count, their seconds no longer (not twice)
        for rt in (reader, *shards):
            assert [tuple(e.data) for e in rt.query(per_minute)] == [(minute, "IBM", 33)]
    finally:
        for rt in (*shards, reader):
            rt.shutdown()


@pytest.mark.parametrize("first", ["a", "b"])
def test_arrival_time_latest_value_is_the_shard_whose_events_came_last(rdbms_url: str, first: str) -> None:
    """Siddhi's arrival-time tables keep no last event time: the minute rows of two shards carry
    the same bucket start. The latest value must still be that of the shard whose last event came
    later (its newest second row says so), in whichever order the database returns the tied rows
    (``first``'s rows first)."""
    app = ("@app:playback\ndefine stream S (v double);\n"
           f"{_store_annotation(rdbms_url)}\n@PartitionById(enable='true')\n@purge(enable='false')\n"
           "define aggregation A from S select sum(v) as total, v as lastV aggregate every sec ... year;\n")
    shards = {}
    # T0 is 22:13:20: both events in the same minute, a second apart
    for shard_id, (value, at) in {"a": (1.0, T0 + 100), "b": (2.0, T0 + 1_100)}.items():
        rt = SiddhiManager(shard_id=shard_id).create_siddhi_app_runtime(app)
        rt.start()
        rt.get_input_handler("S").send([value], timestamp=at)
        rt.context.aggregations["A"].complete_all()  # every granularity's row written
        shards[shard_id] = rt
    store = shards["a"].context.aggregations["A"].store
    scan_shards = store.scan_shards
    rank = {first: 0, "b" if first == "a" else "a": 1}
    store.scan_shards = lambda *args: sorted(scan_shards(*args), key=lambda r: (r[0], rank[r[2]]))
    try:
        for per in ("minutes", "years"):  # (arrival time: a year counts if its own start is within)
            got = [tuple(e.data) for e in shards["a"].query(
                f"from A within 0L, {T0 + 3_600_000}L per '{per}' select AGG_TIMESTAMP, total, lastV")]
            assert [g[1:] for g in got] == [(3.0, 2.0)], (per, got)
        assert got[0][0] == 1_672_531_200_000  # 2023's year row
    finally:
        for rt in shards.values():
            rt.shutdown()
