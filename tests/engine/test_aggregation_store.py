"""The SQLite store of an incremental aggregation across a crash: watermarks, undo, retries.

A snapshot of the app and the store's watermark are taken together; after a crash the snapshot
is restored, the store rewound to the watermark, and the events after the snapshot are sent
again: the tables must equal those of an uninterrupted run (merges are not idempotent, so
without the rewind the replayed buckets are counted twice).  A failing write is retried, never
dropped, and the write queue is bounded.
"""
from __future__ import annotations

import gc
import random
import sqlite3
import threading
import time
from typing import Any

from srota.engine import SiddhiManager, collector
from srota.engine.aggregation.store import _STOP, QueuedWriter

T0 = 1_700_000_000_000


def _app(db) -> str:
    return ("define stream S (k string, v long, ts long);\n"
            f"@store(type='sqlite', database='{db}')\n"
            "define aggregation A from S select k, sum(v) as total, count() as n, max(v) as mx "
            "group by k aggregate by ts every sec ... hour;")


def _events(n: int) -> list[list]:
    rnd = random.Random(7)
    # Mostly in order, some late by up to 3 s: late events reopen stored buckets (merges).
    return [[f"k{rnd.randrange(4)}", rnd.randrange(100), T0 + i * 50 - rnd.choice((0, 0, 0, 3000))]
            for i in range(n)]


def _dump(db) -> dict:
    with sqlite3.connect(db) as conn:
        return {t: sorted(conn.execute(f'SELECT * FROM "A_{t}"').fetchall()) for t in ("SECONDS", "MINUTES", "HOURS")}


def _run(db, events) -> None:
    rt = SiddhiManager().create_siddhi_app_runtime(_app(db))
    h = rt.get_input_handler("S")
    for e in events:
        h.send(e)
    rt.context.aggregations["A"].complete_all()
    rt.shutdown()


def test_restore_rewinds_the_store_to_the_snapshot_so_a_replay_counts_once(tmp_path):
    events = _events(3000)
    _run(tmp_path / "whole.db", events)

    db = tmp_path / "crash.db"
    rt = SiddhiManager().create_siddhi_app_runtime(_app(db))
    h = rt.get_input_handler("S")
    for e in events[:1000]:
        h.send(e)
    store = rt.context.aggregations["A"].store
    with rt.context.lock:  # what the service host does at a checkpoint
        snap = rt.snapshot()
        mark = store.watermark()
    store.flush()
    for e in events[1000:2200]:  # processed and written after the snapshot, then a crash
        h.send(e)
    rt.shutdown()

    rt = SiddhiManager().create_siddhi_app_runtime(_app(db))
    rt.restore(snap)
    assert rt.context.aggregations["A"].store.rewind(mark) > 0
    h = rt.get_input_handler("S")
    for e in events[1000:]:  # the source resumes at the snapshot's offsets
        h.send(e)
    rt.context.aggregations["A"].complete_all()
    rt.shutdown()
    assert _dump(db) == _dump(tmp_path / "whole.db")


def test_a_failed_write_is_retried_not_dropped(tmp_path):
    db = tmp_path / "retry.db"
    rt = SiddhiManager().create_siddhi_app_runtime(_app(db))
    store = rt.context.aggregations["A"].store
    store._retry_delay = 0.01
    real = store._apply_once
    failures = [sqlite3.OperationalError("disk I/O error")] * 3

    def flaky(conn, writes):
        if failures:
            raise failures.pop()
        real(conn, writes)

    store._apply_once = flaky
    h = rt.get_input_handler("S")
    for i in range(10):
        h.send(["a", 1, T0 + i * 1000])
    rt.context.aggregations["A"].complete_all()
    rt.shutdown()
    assert store.errors == 3
    with sqlite3.connect(db) as conn:
        assert conn.execute('SELECT count(*), sum("AGG_SUM_v") FROM "A_SECONDS"').fetchone() == (10, 10)


def test_the_write_queue_is_bounded(tmp_path):
    db = tmp_path / "bound.db"
    rt = SiddhiManager().create_siddhi_app_runtime(_app(db))
    agg = rt.context.aggregations["A"]
    from srota.engine.aggregation.store import SqliteStore

    store = SqliteStore(agg.spec, str(db), max_queued=2)
    release = threading.Event()
    store._put_job(lambda conn: release.wait(10))  # the writer is stuck (a slow disk)
    time.sleep(0.1)
    row = (T0, ("a",), [T0, 0, *([1] * len(agg.spec.bases))])
    seconds = agg.spec.durations[0]
    done = []

    def writer() -> None:
        for _ in range(5):
            store.write(seconds, [row])
            done.append(1)

    t = threading.Thread(target=writer)
    t.start()
    time.sleep(0.3)
    assert len(done) == 2, "write() went on past the bound while the writer was stuck"
    release.set()
    t.join(5)
    assert len(done) == 5
    store.close()
    rt.shutdown()


def test_a_write_retrying_cannot_mend_is_reported_and_the_writer_goes_on(tmp_path):
    """A constraint the rows break (here a CHECK an operator added to the table) cannot succeed
    by retrying: the batch is logged and counted, and later writes are still stored."""
    db = tmp_path / "clash.db"
    rt = SiddhiManager().create_siddhi_app_runtime(_app(db))
    store = rt.context.aggregations["A"].store
    with sqlite3.connect(db) as conn:  # an operator's constraint: no sums over 1000 in SECONDS
        conn.execute('CREATE TRIGGER cap BEFORE INSERT ON "A_SECONDS" WHEN NEW."AGG_SUM_v" > 1000 '
                     "BEGIN SELECT RAISE(ABORT, 'sum over the cap'); END")
    h = rt.get_input_handler("S")
    h.send(["a", 5000, T0])          # its second breaks the constraint
    h.send(["a", 1, T0 + 1000])      # completes the first second: a write that must fail
    h.send(["a", 2, T0 + 2000])      # completes the second one: a write that must succeed
    done = threading.Event()
    threading.Thread(target=lambda: (store.flush(), done.set()), daemon=True).start()
    assert done.wait(10), "the writer is stuck retrying a write that can never succeed"
    rt.shutdown()
    assert store.failed_writes == 1
    with sqlite3.connect(db) as conn:
        assert conn.execute('SELECT "AGG_SUM_v" FROM "A_SECONDS"').fetchall() == [(1,)]


def test_stored_rows_read_back_as_the_rows_written(tmp_path):
    """``to_params`` and ``from_params`` are generated from the spec: every kind of column
    (bool and string keys, latest values, sums, min/max of doubles, distinct sets, the time
    zone) reads back as it was written, and trailing columns (a shard id) are ignored."""
    from srota.engine.aggregation.store import SqliteSchema

    app = ("define stream S (k string, flag bool, price double, n int, ts long);\n"
           "define aggregation A from S select k, flag, price as last, sum(n) as total, "
           "min(price) as low, distinctCount(n) as kinds group by k, flag aggregate by ts every sec;")
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    spec = rt.context.aggregations["A"].spec
    schema = SqliteSchema(spec)
    row = rt.context.aggregations["A"].spec.copy_row
    blank = [T0 + 999, 19_800_000]
    blank += [12.5] * len(spec.latest)
    for b in spec.bases:
        blank.append({1, 2} if b.op == "distinct" else 3 if b.type.value in ("int", "long") else 1.25)
    written = (T0, ("IBM", True), row(blank))
    params = schema.to_params(*written)
    assert params[2] == 1  # booleans are stored 0/1 ...
    read = schema.from_params(params)
    assert read == written and read[1][1] is True  # ... and read back as booleans
    assert schema.from_params((*params, "shard-a")) == written
    rt.shutdown()


class _Writer(QueuedWriter):
    """A QueuedWriter with nothing to write: jobs only."""

    def __init__(self) -> None:
        self._start_writer("test-writer", 10, 2)

    def _open_writer(self) -> Any:
        return None

    def _write_batch(self, resource: Any, writes: list[tuple[Any, ...]]) -> None:
        pass

    def _run_on_writer(self, resource: Any, fn: Any) -> Any:
        return fn(resource)

    def _close_writer(self, resource: Any) -> None:
        pass

    def stop(self) -> None:
        self._queue.put(_STOP)
        self._thread.join(5)


def test_a_chunk_waiting_long_for_the_writer_lets_the_collector_run() -> None:
    """A read inside a chunk waits for the queued writes; a long wait (a writer retrying an
    outage) must not keep the process's collector off with it; a quick one leaves it off."""
    was = gc.isenabled()
    gc.enable()
    writer = _Writer()
    try:
        assert collector.hold_off()
        try:
            assert writer._call(lambda r: "quick") == "quick"
            assert not gc.isenabled()
            assert writer._call(lambda r: time.sleep(0.3) or "slow") == "slow"
            assert gc.isenabled()
        finally:
            collector.release()
    finally:
        writer.stop()
        if not was:
            gc.disable()


def test_distinct_sets_keep_java_equality_through_their_json() -> None:
    # a double set's elements are java_keys in memory and numbers in the table; the SQLite
    # merge of two rows' sets (srota_union) unites them as Java's HashSet does
    from srota.engine.aggregation.store import _union, decode_distinct, encode_distinct
    from srota.engine.types import java_key

    doubles = {java_key(v) for v in (0.0, -0.0, float("nan"), 2.5)}
    text = encode_distinct(doubles, real=True)
    assert text == "[-0.0,0.0,2.5,NaN]"
    assert decode_distinct(text) == doubles
    assert encode_distinct({"NaN", "-0.0"}) == '["-0.0","NaN"]'  # a string set's text stays text
    assert decode_distinct(_union("[0.0,NaN]", "[-0.0,NaN,0.0]")) == doubles - {2.5}


def test_a_memory_store_keeps_a_late_events_row_apart_as_siddhis_table_does() -> None:
    # (recorded: aggregation-late-row-kept-apart-in-the-table) the late row is written under the
    # bucket the store was in; scan adds it to its own bucket's row, entries lists it apart
    from srota.engine.aggregation.store import MemoryStore
    from srota.grammar.model import TimeDuration

    rt = SiddhiManager().create_siddhi_app_runtime(
        "@app:playback\ndefine stream S (k string, v double, ts long);\n"
        "define aggregation A from S select k, sum(v) as t, count() as n group by k aggregate by ts every sec, min;")
    store = rt.context.aggregations["A"].store
    assert isinstance(store, MemoryStore)
    sec = TimeDuration.SECONDS
    row = rt.context.aggregations["A"].spec.fresh
    t0 = 1_700_000_009_000

    class _E:
        def __init__(self, data: tuple[Any, ...]) -> None:
            self.data = data

    first, late = row(_E(("a", 1.0, t0 + 10)), t0 + 10, 0), row(_E(("a", 2.0, t0 + 20)), t0 + 20, 0)
    store.write(sec, [(t0, ("a",), first)], under=t0)
    store.write(sec, [(t0, ("a",), late)], under=t0 + 1000)
    assert [(u, ts) for u, ts, _, _ in store.entries(sec)] == [(t0, t0), (t0 + 1000, t0)]
    [(ts, key, merged)] = store.scan(sec)
    assert (ts, key, rt.context.aggregations["A"].spec.finalize(ts, key, merged)[-2:]) == (t0, ("a",), (3.0, 2))
    assert store.size(sec) == 2 and store.latest(sec) == t0
    state = store.snapshot_state()
    store.restore_state(state["tables"])  # a snapshot from before: the tables alone
    assert store.size(sec) == 1
    store.restore_state(state)
    assert store.size(sec) == 2
    assert store.delete_before(sec, t0 + 1) == 2 and store.scan(sec) == []
    rt.shutdown()
