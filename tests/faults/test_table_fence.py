"""A replaced owner of a scale-out partition is fenced out of the app's rdbms tables.

Found by the chaos soak (tests/soak): the app joins its stream with an ``rdbms`` table the
same stream upserts, and a join output saw a row older than the previous record's.  A worker
stopped (SIGSTOP) past the Kafka session timeout wrote, once it ran again, the rows of the
chunk it was in the middle of, over the rows the partition's new owner had written since:
unlike an aggregation's shards, tables had no writer lock.  Now each partition runtime's table
connections hold a lock of the partition (taken over by the new owner, which ends the
replaced owner's session) and the claim's epoch is kept beside them, so the replaced owner
cannot write again, not even after a database restart has freed every lock
(engine/stores/database.py ``OwnerFence``).  On PostgreSQL and MariaDB.
"""
from __future__ import annotations

import time
import urllib.parse
from typing import Any

import pytest
from srota.engine import SiddhiManager
from srota.engine.stores.database import Database, StoreLockedError, StoreReplacedError, parse_url
from srota.grammar.errors import SiddhiAppCreationError

from tests.faults.test_shard_lock_takeover import conflict_of

pytestmark = pytest.mark.integration

T0 = 1_700_000_000_000


def table_app(url: str) -> str:
    """The soak's join and upsert on an rdbms table in the database of ``url``."""
    p = urllib.parse.urlsplit(url)
    scheme = "postgresql" if p.scheme.startswith("postgres") else "mysql"
    return f"""@app:name('Fence')
define stream In (id string, seq long);
@store(type='rdbms', jdbc.url='jdbc:{scheme}://{p.hostname}:{p.port}{p.path}', username='{p.username}',
       password='{p.password}')
@PrimaryKey('id')
define table KeyState (id string, seq long);
@info(name='join')
from In join KeyState on KeyState.id == In.id select In.id as id, In.seq as seq, KeyState.seq as prev
insert into Joined;
@info(name='upsert')
from In select id, seq update or insert into KeyState on KeyState.id == id;
"""


def owner(app: str, epoch: int) -> Any:
    """The runtime a worker makes for partition 0 under a claim of ``epoch``."""
    return SiddhiManager(shard_id="p0", fence_epoch=epoch).create_siddhi_app_runtime(app)


def rows(url: str) -> dict[str, int]:
    db = Database(parse_url(url), "test")
    try:
        return dict(db.run(lambda cur: (cur.execute("SELECT id, seq FROM KeyState"), cur.fetchall())[1]))
    finally:
        db.close()


def take_over(app: str, epoch: int, meanwhile: Any = None) -> Any:
    """Create the new owner's runtime as the scale-out host does: refused while the replaced
    owner's session holds the lock, which it then ends (``meanwhile`` runs right after)."""
    with pytest.raises(SiddhiAppCreationError) as refused:
        owner(app, epoch)
    conflict = conflict_of(refused.value)
    assert conflict is not None, "the lock conflict is told apart from other creation errors"
    assert conflict.end_holder() is not None
    if meanwhile is not None:
        meanwhile()
    deadline = time.monotonic() + 10
    while True:
        try:
            return owner(app, epoch)
        except SiddhiAppCreationError:
            assert time.monotonic() < deadline, "the lock was not released by ending its session"
            time.sleep(0.1)


def test_a_replaced_owner_writes_no_row_over_the_new_owners(rdbms_url: str) -> None:
    app = table_app(rdbms_url)
    old = owner(app, epoch=1)
    old.start()
    joined: list[tuple[Any, ...]] = []
    new = None
    try:
        old.get_input_handler("In").send(["k", 1], timestamp=T0)
        new = take_over(app, epoch=2)
        new.add_callback("Joined", lambda events: joined.extend(tuple(e.data) for e in events))
        new.start()
        new.get_input_handler("In").send(["k", 2], timestamp=T0 + 1)
        # The replaced owner runs again, in the middle of its chunk: refused, nothing written.
        with pytest.raises(StoreReplacedError, match="replaced"):
            old.get_input_handler("In").send(["k", 1], timestamp=T0 + 2)
        assert rows(rdbms_url) == {"k": 2}
        new.get_input_handler("In").send(["k", 3], timestamp=T0 + 3)
        assert joined == [("k", 2, 1), ("k", 3, 2)]
    finally:
        if new is not None:
            new.shutdown()
        old.shutdown()


def test_a_replaced_owner_reconnecting_first_does_not_take_the_lock_back(rdbms_url: str) -> None:
    """The replaced owner, still processing, reconnects at once when its session is ended; it
    used to take the free lock again before the new owner could (the new owner then failed to
    start its partition for minutes).  The new owner's refused attempt wrote its epoch first."""
    app = table_app(rdbms_url)
    old = owner(app, epoch=1)
    old.start()
    old.get_input_handler("In").send(["k", 1], timestamp=T0)
    new = None
    refused: list[BaseException] = []

    def old_sends_first() -> None:
        try:
            old.get_input_handler("In").send(["k", 7], timestamp=T0 + 1)
        except StoreReplacedError as exc:
            refused.append(exc)

    try:
        new = take_over(app, epoch=2, meanwhile=old_sends_first)
        assert refused, "the replaced owner wrote again after its session was ended"
        new.start()
        new.get_input_handler("In").send(["k", 2], timestamp=T0 + 2)
        assert rows(rdbms_url) == {"k": 2}
    finally:
        if new is not None:
            new.shutdown()
        old.shutdown()


def test_after_a_database_restart_the_epoch_still_fences_the_replaced_owner(rdbms_url: str) -> None:
    """A restart frees every lock: whoever connects first may take it, but the replaced owner
    finds the newer epoch and lets go, and the new owner goes on."""
    app = table_app(rdbms_url)
    old = owner(app, epoch=1)
    old.start()
    new = None
    try:
        new = take_over(app, epoch=2)
        new.start()
        new.get_input_handler("In").send(["k", 5], timestamp=T0)
        # The new owner's session ends as a restart would end it; the lock is free.
        table = new.context.tables["KeyState"]
        assert StoreLockedError("", table.db.on_connect.__self__.lock).end_holder() is not None
        with pytest.raises(StoreReplacedError, match="newer owner"):
            old.get_input_handler("In").send(["k", 4], timestamp=T0 + 1)
        new.get_input_handler("In").send(["k", 6], timestamp=T0 + 2)  # connects again, takes the lock
        assert rows(rdbms_url) == {"k": 6}
    finally:
        if new is not None:
            new.shutdown()
        old.shutdown()


def test_without_a_claim_tables_take_no_lock(rdbms_url: str) -> None:
    """Outside scale-out (no epoch) two runtimes share a table as before."""
    app = table_app(rdbms_url)
    a = SiddhiManager(shard_id="p0").create_siddhi_app_runtime(app)
    b = SiddhiManager(shard_id="p0").create_siddhi_app_runtime(app)
    try:
        a.start()
        b.start()
        a.get_input_handler("In").send(["k", 1], timestamp=T0)
        b.get_input_handler("In").send(["k", 2], timestamp=T0 + 1)
        assert rows(rdbms_url) == {"k": 2}
    finally:
        a.shutdown()
        b.shutdown()


async def test_a_worker_whose_claim_was_overtaken_claims_the_partition_again(kafka_broker: Any, pg_url: str) -> None:
    """Found by the chaos soak: a worker restoring a partition found a later claim's epoch in
    the fence (the partition had gone to another worker and come back meanwhile) and retried
    with its stale claim until the restore timeout stopped the app.  It now claims again."""
    import uuid

    from srota.service.scaleout import _FAILED

    from tests.integration.support import kafka_source, running_host, wait_until
    from tests.service.test_scaleout import _scaled

    src = await kafka_broker.create_topic(partitions=1)
    p = urllib.parse.urlsplit(pg_url)
    app = f"""
    @app:name('Again')
    {kafka_source(kafka_broker, src, f"g-{uuid.uuid4().hex[:8]}", **{"key.attribute": "id"})}
    define stream In (id string, seq long);
    @store(type='rdbms', jdbc.url='jdbc:postgresql://{p.hostname}:{p.port}{p.path}', username='{p.username}',
           password='{p.password}')
    @PrimaryKey('id')
    define table KeyState (id string, seq long);
    from In select id, seq update or insert into KeyState on KeyState.id == id;
    """
    async with running_host(_scaled(interval_ms=3_600_000), app) as host:
        h = host.apps["Again"]
        await wait_until(lambda: 0 in h.partitions.by_partition, 30, what="partition 0 assigned")
        h._forget({0})
        real_create, real_claim = h.partitions.create, h._state.claim
        claims: list[int] = []

        def overtaken_once(partition: int, state: Any) -> Any:
            if len(claims) < 2:
                raise StoreReplacedError("table 'KeyState' for shard 'p0' has a newer owner")
            return real_create(partition, state)

        async def counted_claim(partition: int) -> int:
            claims.append(partition)
            return await real_claim(partition)

        h.partitions.create = overtaken_once
        h._state.claim = counted_claim
        got = await h._restore(0)
        assert got is not _FAILED and 0 in h.partitions.by_partition
        assert claims == [0, 0], "the partition was not claimed again"
        assert not h.failed


def test_a_revoked_owner_lets_go_of_its_locks_at_once(rdbms_url: str) -> None:
    """Found by the chaos soak: a revoked partition's runtime kept its connections, and with them
    its locks, until its worker's next assignment, so every move of a partition waited 2 s per
    lock before ending the holder's session; in series these waits outlasted the rebalance
    timeout.  At the revocation the idle connections now close: the next owner starts at once,
    and the revoked runtime, if the partition had stayed, would connect (and lock) again."""
    from srota.service.scaleout import PartitionRuntimes

    app = table_app(rdbms_url)
    # (the template, never started, under a shard of its own without a claim, as the host makes it)
    runtimes = PartitionRuntimes(lambda partition: owner(app, epoch=1) if partition is not None else
                                 SiddhiManager(shard_id="template").create_siddhi_app_runtime(app))
    old = runtimes.create(0, None)
    new = None
    try:
        old.get_input_handler("In").send(["k", 1], timestamp=T0)
        runtimes.release_locks(0)  # as the host does once the revoked partition's checkpoint is saved
        assert not old.context.tables["KeyState"].db.connected
        new = owner(app, epoch=2)  # not refused: nothing to wait for
        new.start()
        new.get_input_handler("In").send(["k", 2], timestamp=T0 + 1)
        with pytest.raises(StoreReplacedError, match="newer owner"):
            old.get_input_handler("In").send(["k", 1], timestamp=T0 + 2)
        assert rows(rdbms_url) == {"k": 2}
    finally:
        if new is not None:
            new.shutdown()
        runtimes.shutdown()
