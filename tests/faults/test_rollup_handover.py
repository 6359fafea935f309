"""Roll-ups across a change of a partition's owner: what the chaos soak's seed 77 found.

**A kept partition dropped its writes.**  Seven roll-up rows of one minute were missing from
the live database.  At a rebalance the worker owning the partition let go of its locks (a
revoked partition closes its idle connections, so that its next owner starts at once), and the
rebalance gave the partition back to it.  Its aggregation store connected again at its next
write, a few milliseconds later, while the server was still ending the session just closed,
which held the lock.  The store took that for another process holding it, judged itself
replaced, and dropped every write after, silently, while the partition ran on and was
checkpointed for another 80 s.  The checkpoints' watermarks covered writes that never reached
the database, so nobody wrote them again.  Now an owner that finds its lock held by an older
session, when no newer owner wrote its epoch, waits for that session to end (past a grace, it
ends it); and a scale-out store whose writes were dropped refuses a snapshot, so that its host
drops the partition instead of checkpointing it.

**A replaced owner's checkpoint was restored over a newer owner's rewind.** Five second rows
held only the events before a worker was stopped (SIGSTOP). The rows and undo rows left fit one
sequence only, which the test below replays: woken, the stopped worker closed the second with
all its events, and a checkpoint of it accounting for that write reached the state topic (most
likely saved after the partition was dropped, which forgot the claim, so it went out without an
epoch, as a pre-epoch checkpoint that readers take as it is: fixed in service/statetopic.py);
the partition's new owner, which had read the checkpoint before it, rewound the shard past that
write and wrote the second again with the events it had; the next owner then restored the
stopped worker's checkpoint, whose watermark the rewind had made meaningless (sequence numbers
after a rewind are used again). Every scale-out rewind is now recorded with its owner's epoch,
and a snapshot whose watermark a newer owner rewound below is refused
(``StaleCheckpointError``): its restorer takes the checkpoint before it.

On PostgreSQL and MariaDB.
"""
from __future__ import annotations

import threading
import time
import urllib.parse
from typing import Any

import pytest
from srota.engine import SiddhiManager
from srota.engine.stores.database import SessionLock, StoreReplacedError

from tests.faults.test_shard_lock_takeover import T0, feed, lock_app, stored
from tests.faults.test_table_fence import rows, table_app, take_over

pytestmark = pytest.mark.integration


def hold_for_a_moment(lock: SessionLock, seconds: float) -> threading.Timer:
    """Take ``lock`` on a session of its own (once free) and end that session ``seconds``
    later: the session a closed connection leaves behind for a moment, drawn out."""
    conn = lock.dialect.connect(lock.url, 5.0)
    cur = conn.cursor()
    deadline = time.monotonic() + 5
    while not lock.try_take(cur):  # the owner's connection was closed: its session ends soon
        assert time.monotonic() < deadline, "the closed connection's session kept the lock"
        time.sleep(0.01)
    conn.commit()
    timer = threading.Timer(seconds, conn.close)
    timer.start()
    return timer


def test_a_kept_aggregation_takes_its_lock_back_and_drops_no_write(rdbms_url: str) -> None:
    rt = SiddhiManager(shard_id="p0", fence_epoch=1).create_siddhi_app_runtime(lock_app(rdbms_url))
    rt.start()
    try:
        store = feed(rt, [("a", 1, T0)])
        assert store.db.disconnect()  # the revocation lets go of the locks; the partition stays
        holder = hold_for_a_moment(store._lock, 0.5)
        feed(rt, [("a", 2, T0 + 1000)])  # connects again while the old session holds the lock
        holder.join()
        assert store.failed_writes == 0, "the kept partition's writes were dropped"
        assert stored(rdbms_url) == [(T0, "p0", "a", 1), (T0 + 1000, "p0", "a", 1)]
        rt.snapshot()  # nothing was dropped: the checkpoint goes ahead
    finally:
        rt.shutdown()


def test_a_kept_table_takes_its_lock_back(rdbms_url: str) -> None:
    rt = SiddhiManager(shard_id="p0", fence_epoch=1).create_siddhi_app_runtime(table_app(rdbms_url))
    rt.start()
    try:
        rt.get_input_handler("In").send(["k", 1], timestamp=T0)
        db = rt.context.tables["KeyState"].db
        assert db.disconnect()
        holder = hold_for_a_moment(SessionLock(db.url, f"srota:table:{db.url.database}:KeyState:p0"), 0.5)
        rt.get_input_handler("In").send(["k", 2], timestamp=T0 + 1)  # used to raise StoreReplacedError
        holder.join()
        assert rows(rdbms_url) == {"k": 2}
    finally:
        rt.shutdown()


def test_an_older_owner_still_holding_the_lock_is_ended(rdbms_url: str) -> None:
    """The holder does not let go within the grace: a replaced owner's session, which the
    newest owner (its epoch is the stored one) ends."""
    rt = SiddhiManager(shard_id="p0", fence_epoch=1).create_siddhi_app_runtime(lock_app(rdbms_url))
    rt.start()
    try:
        store = feed(rt, [("a", 1, T0)])
        assert store.db.disconnect()
        holder = hold_for_a_moment(store._lock, 60.0)  # never lets go by itself
        try:
            feed(rt, [("a", 2, T0 + 1000)])
        finally:
            holder.cancel()
        assert store.failed_writes == 0
        assert stored(rdbms_url) == [(T0, "p0", "a", 1), (T0 + 1000, "p0", "a", 1)]
    finally:
        rt.shutdown()


def test_a_replaced_aggregation_refuses_a_snapshot(rdbms_url: str) -> None:
    """Its partition moved while it was stopped: the writes it makes after are dropped, and
    no snapshot covers them (the host drops the partition instead of checkpointing it)."""
    app = lock_app(rdbms_url)
    old = SiddhiManager(shard_id="p0", fence_epoch=1).create_siddhi_app_runtime(app)
    old.start()
    new = None
    try:
        feed(old, [("a", 1, T0)])
        new = take_over(app, epoch=2)
        new.start()
        store = old.context.aggregations["Agg"].store
        handler = old.get_input_handler("S")
        handler.send(["a", 5, T0 + 3000], timestamp=T0 + 3000)
        handler.send(["a", 6, T0 + 4000], timestamp=T0 + 4000)  # closes second T0+3000: a dropped write
        store.flush()
        assert store.failed_writes >= 1
        with pytest.raises(StoreReplacedError, match="no snapshot"):
            old.snapshot()
        assert stored(rdbms_url) == [(T0, "p0", "a", 1)]
    finally:
        if new is not None:
            new.shutdown()
        old.shutdown()


def _sharded_rollup_app(name: str, broker: Any, src: str, pg_url: str) -> str:
    """A scale-out app: a Kafka source keyed by ``k`` and a sharded roll-up on PostgreSQL."""
    import uuid

    from tests.integration.support import kafka_source

    p = urllib.parse.urlsplit(pg_url)
    return f"""
    @app:name('{name}')
    {kafka_source(broker, src, f"g-{uuid.uuid4().hex[:8]}", **{"key.attribute": "k"})}
    define stream S (k string, n long, ts long);
    @store(type='rdbms', jdbc.url='jdbc:postgresql://{p.hostname}:{p.port}{p.path}', username='{p.username}',
           password='{p.password}')
    @PartitionById(enable='true')
    @purge(enable='false')
    define aggregation Agg from S select k, sum(n) as total group by k aggregate by ts every sec;
    """


async def test_a_partition_whose_writes_were_dropped_is_not_checkpointed(kafka_broker: Any, pg_url: str) -> None:
    """The host side: a checkpoint finding a replaced store drops that partition (as a fenced
    checkpoint does) and saves nothing for it."""

    from srota.engine.stores.database import StoreLockedError

    from tests.integration.support import running_host, wait_until
    from tests.service.test_scaleout import _scaled

    src = await kafka_broker.create_topic(partitions=1)
    app = _sharded_rollup_app("Dropped", kafka_broker, src, pg_url)
    async with running_host(_scaled(interval_ms=3_600_000), app) as host:
        h = host.apps["Dropped"]
        await wait_until(lambda: 0 in h.partitions.by_partition, 30, what="partition 0 assigned")
        await h.checkpoint_partitions({0})
        before = await h._state.load(0)
        store = h.partitions.by_partition[0].context.aggregations["Agg"].store
        store._lost_lock(StoreLockedError("another process holds the lock (test)", store._lock))
        await h.checkpoint_partitions({0})
        assert 0 not in h.partitions.by_partition, "a partition whose writes were dropped ran on"
        after = await h._state.load(0)
        assert before is not None and after is not None and after.id == before.id, "a checkpoint was saved"



def test_a_replaced_owners_checkpoint_is_refused_after_a_newer_owners_rewind(rdbms_url: str) -> None:
    """Seed 77's second, replayed: A closes the second with both events after the checkpoint
    that B restores; B rewinds that write away and closes the second with the first event
    only; C is handed A's later checkpoint, refuses it, and restores the one before it."""
    from srota.engine.stores.aggregation import StaleCheckpointError

    app = lock_app(rdbms_url)
    a = SiddhiManager(shard_id="p0", fence_epoch=1).create_siddhi_app_runtime(app)
    a.start()
    b = c = None
    try:
        handler = a.get_input_handler("S")
        handler.send(["a", 1, T0], timestamp=T0)
        first = a.snapshot()  # what B reads before A runs again
        handler.send(["a", 2, T0 + 500], timestamp=T0 + 500)
        feed(a, [])  # A closes second T0 with both events
        zombies = a.snapshot()  # A's later checkpoint, whose watermark covers that write
        assert stored(rdbms_url) == [(T0, "p0", "a", 2)]
        b = take_over(app, epoch=2)
        b.restore(first)  # rewinds A's write
        b.start()
        feed(b, [])  # B closes the second with what it has (its timer, at once)
        assert stored(rdbms_url) == [(T0, "p0", "a", 1)]
        b.shutdown()
        b = None
        c = SiddhiManager(shard_id="p0", fence_epoch=3).create_siddhi_app_runtime(app)
        with pytest.raises(StaleCheckpointError, match="replaced owner"):
            c.restore(zombies)
        c.shutdown()
        c = SiddhiManager(shard_id="p0", fence_epoch=3).create_siddhi_app_runtime(app)
        c.restore(first)
        c.start()
        feed(c, [("a", 2, T0 + 500)])  # the records after the checkpoint, again
        assert stored(rdbms_url) == [(T0, "p0", "a", 2)]
    finally:
        for rt in (a, b, c):
            if rt is not None:
                rt.shutdown()


async def test_the_host_restores_the_checkpoint_before_a_stale_one(kafka_broker: Any, pg_url: str) -> None:
    """The host side: a checkpoint refused as stale is skipped for the one before it."""
    import uuid

    from srota.engine.snapshot import StaleSnapshotError

    from tests.integration.support import kafka_source, running_host, wait_until
    from tests.service.test_scaleout import _scaled

    src = await kafka_broker.create_topic(partitions=1)
    app = f"""
    @app:name('Stale')
    {kafka_source(kafka_broker, src, f"g-{uuid.uuid4().hex[:8]}", **{"key.attribute": "k"})}
    define stream S (k string, n long);
    from S select k, sum(n) as total group by k insert into Out;
    """
    async with running_host(_scaled(interval_ms=3_600_000), app) as host:
        h = host.apps["Stale"]
        await wait_until(lambda: 0 in h.partitions.by_partition, 30, what="partition 0 assigned")
        await h.checkpoint_partitions({0})
        older = await h._state.load(0)
        await h.checkpoint_partitions({0})
        newest = await h._state.load(0)
        assert older is not None and newest is not None and older.id != newest.id
        h._forget({0})
        real_create = h.partitions.create

        def stale_newest(partition: int, state: Any) -> Any:
            if state == newest.state:
                raise StaleSnapshotError("a newer owner rewound the shard (test)")
            return real_create(partition, state)

        h.partitions.create = stale_newest
        got = await h._restore(0)
        assert got is not None and getattr(got, "id", None) == older.id
        assert 0 in h.partitions.by_partition and not h.failed


async def test_undo_rows_go_once_a_later_checkpoint_is_saved(kafka_broker: Any, pg_url: str) -> None:
    """Found reading seed 77's database: the scale-out undo tables kept every write (4,185 rows
    of one shard in 10 minutes), and each restore reads them.  Once a checkpoint is saved, the
    undo rows up to the checkpoint before it go (a restore falls back to that one at most)."""

    from srota.engine.stores.database import Database, parse_url

    from tests.integration.support import produce, running_host, wait_until
    from tests.service.test_scaleout import _scaled

    src = await kafka_broker.create_topic(partitions=1)
    app = _sharded_rollup_app("Trim", kafka_broker, src, pg_url)

    def undo_seqs() -> list[int]:
        db = Database(parse_url(pg_url), "test")
        try:
            return db.run(lambda cur: (cur.execute("SELECT srota_seq FROM Agg_SECONDS__undo ORDER BY 1"),
                                       [int(r[0]) for r in cur.fetchall()])[1])
        finally:
            db.close()

    async with running_host(_scaled(interval_ms=3_600_000), app) as host:
        h = host.apps["Trim"]
        await wait_until(lambda: 0 in h.partitions.by_partition, 30, what="partition 0 assigned")
        store = h.partitions.by_partition[0].context.aggregations["Agg"].store
        marks = []
        for round_ in range(3):
            second = T0 + round_ * 10_000
            before = store.watermark()
            await produce(kafka_broker.bootstrap_servers, src, [
                f'{{"event": {{"k": "a", "n": 1, "ts": {second + i * 1000}}}}}'.encode() for i in range(3)])
            agg = h.partitions.by_partition[0].context.aggregations["Agg"]
            # the seconds close at the bucket timer's next tick (wall clock: these are late events)
            await wait_until(lambda b=before, a=agg: store.watermark() > b and not a._levels[0].buckets, 30,
                             what="buckets written")
            await h.checkpoint_partitions({0})
            marks.append(store.snapshot_mark)
        store.flush()
        left = undo_seqs()
        assert left and min(left) > marks[1], f"undo rows up to {marks[1]} were kept: {left}"
