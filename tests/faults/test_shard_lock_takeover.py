"""A replaced writer of an rdbms aggregation shard: its lock is taken over, and it writes no more.

The chaos soak (tests/soak) stopped a worker (SIGSTOP) past the Kafka session timeout.  Its
PostgreSQL connection stayed open, and with it the advisory lock on each of its partitions'
shards (``@PartitionById``): the partitions' new owners could not create their runtimes.  The
fix (engine/stores/database.py ``SessionLock``): the new owner, which knows it owns the
partition now, ends the holder's session; the replaced writer, when it runs again, finds its
connection gone and cannot take the lock again, so its writes are dropped, never written over
the new owner's rows.  Here the replaced writer is a runtime in this process whose connection
is idle (as a stopped process's is); tests/service/test_scaleout_shard_lock.py stops a real
process under a scale-out host.  On PostgreSQL and MariaDB (the lock code is shared).
"""
from __future__ import annotations

import time
import urllib.parse
from typing import Any

import pytest
from srota.engine import SiddhiManager
from srota.engine.stores.database import Database, StoreLockedError, parse_url
from srota.grammar.errors import SiddhiAppCreationError

pytestmark = pytest.mark.integration

T0 = 1_700_000_000_000


def lock_app(url: str) -> str:
    """A sharded roll-up on the database of ``url`` (a test fixture's URL)."""
    p = urllib.parse.urlsplit(url)
    scheme = "postgresql" if p.scheme.startswith("postgres") else "mysql"
    return f"""@app:name('Locks')
@app:playback
define stream S (k string, n long, ts long);
@store(type='rdbms', jdbc.url='jdbc:{scheme}://{p.hostname}:{p.port}{p.path}', username='{p.username}',
       password='{p.password}')
@PartitionById(enable='true')
@purge(enable='false')
define aggregation Agg from S select k, sum(n) as total, count() as events group by k aggregate by ts every sec;
"""


def feed(rt: Any, rows: list[tuple[str, int, int]]) -> Any:
    """Send ``rows`` and write every bucket out; the aggregation's store."""
    handler = rt.get_input_handler("S")
    for r in rows:
        handler.send(list(r), timestamp=r[2])
    agg = rt.context.aggregations["Agg"]
    agg.complete_all()
    agg.store.flush()
    return agg.store


def stored(url: str) -> list[tuple[Any, ...]]:
    """Every row of the seconds table: (second, shard, key, events)."""
    db = Database(parse_url(url), "test")
    q = db.q

    def read(cur: Any) -> list[tuple[Any, ...]]:
        cur.execute(f"SELECT {q('AGG_TIMESTAMP')}, {q('SHARD_ID')}, {q('k')}, {q('AGG_COUNT')} "
                    f"FROM {q('Agg_SECONDS')} ORDER BY 1, 2, 3")
        return [(int(a), s, k, int(c)) for a, s, k, c in cur.fetchall()]

    try:
        return db.run(read)
    finally:
        db.close()


def conflict_of(exc: BaseException) -> StoreLockedError | None:
    e: BaseException | None = exc
    while e is not None:
        if isinstance(e, StoreLockedError):
            return e
        e = e.__cause__ or e.__context__
    return None


def test_a_replaced_writers_session_is_ended_and_it_writes_no_more(rdbms_url: str) -> None:
    app = lock_app(rdbms_url)
    old = SiddhiManager(shard_id="p0").create_siddhi_app_runtime(app)
    old.start()
    new = None
    try:
        feed(old, [("a", 1, T0), ("a", 2, T0 + 10)])
        # The new owner of the shard is refused while the old one's session holds the lock...
        with pytest.raises(SiddhiAppCreationError, match="already written by another process") as refused:
            SiddhiManager(shard_id="p0").create_siddhi_app_runtime(app)
        conflict = conflict_of(refused.value)
        assert conflict is not None, "the lock conflict is told apart from other creation errors"
        # ...until it ends that session (the scale-out host does, once it owns the partition).
        assert conflict.end_holder() is not None
        deadline = time.monotonic() + 10
        while new is None:
            try:
                new = SiddhiManager(shard_id="p0").create_siddhi_app_runtime(app)
            except SiddhiAppCreationError:
                assert time.monotonic() < deadline, "the lock was not released by ending its session"
                time.sleep(0.1)
        new.start()
        assert conflict_of(refused.value) is not None
        # The replaced writer runs on: its connection is gone, and it cannot take the lock back.
        old_store = feed(old, [("a", 100, T0 + 5000)])
        assert old_store.failed_writes >= 1
        feed(new, [("a", 7, T0 + 6000)])
        assert stored(rdbms_url) == [(T0, "p0", "a", 2), (T0 + 6000, "p0", "a", 1)]
    finally:
        if new is not None:
            new.shutdown()
        old.shutdown()


def test_a_lost_connection_takes_the_lock_again_before_writing(rdbms_url: str) -> None:
    """A connection lost for another reason (the server restarted, a proxy reset it) is made
    again with the lock: the owner goes on writing, and a second writer is still refused."""
    app = lock_app(rdbms_url)
    rt = SiddhiManager(shard_id="p0").create_siddhi_app_runtime(app)
    rt.start()
    try:
        store = feed(rt, [("a", 1, T0)])
        # Cut the writer's connection (its session and lock end with it).
        assert StoreLockedError("", store._lock).end_holder() is not None
        feed(rt, [("a", 2, T0 + 1000)])  # reconnects, takes the lock again, writes
        assert store.failed_writes == 0
        assert stored(rdbms_url) == [(T0, "p0", "a", 1), (T0 + 1000, "p0", "a", 1)]
        with pytest.raises(SiddhiAppCreationError, match="already written by another process"):
            SiddhiManager(shard_id="p0").create_siddhi_app_runtime(app)
    finally:
        rt.shutdown()


def test_a_replaced_writer_reconnecting_first_does_not_take_the_lock_back(rdbms_url: str) -> None:
    """Under scale-out (the claim's epoch given): the replaced writer, still writing, reconnects
    at once when its session is ended.  It used to take the free lock again before the new owner
    could, which then failed to start the partition for minutes (the chaos soak); the new owner's
    refused attempt now writes its epoch first, and the replaced writer lets go."""
    app = lock_app(rdbms_url)
    old = SiddhiManager(shard_id="p0", fence_epoch=1).create_siddhi_app_runtime(app)
    old.start()
    new = None
    try:
        feed(old, [("a", 1, T0)])
        with pytest.raises(SiddhiAppCreationError) as refused:
            SiddhiManager(shard_id="p0", fence_epoch=2).create_siddhi_app_runtime(app)
        conflict = conflict_of(refused.value)
        assert conflict is not None
        assert conflict.end_holder() is not None
        old_store = feed(old, [("a", 100, T0 + 5000)])  # reconnects first
        assert old_store.failed_writes >= 1, "the replaced writer wrote again after its session was ended"
        new = SiddhiManager(shard_id="p0", fence_epoch=2).create_siddhi_app_runtime(app)
        new.start()
        feed(new, [("a", 7, T0 + 6000)])
        assert stored(rdbms_url) == [(T0, "p0", "a", 1), (T0 + 6000, "p0", "a", 1)]
    finally:
        if new is not None:
            new.shutdown()
        old.shutdown()
