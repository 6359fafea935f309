"""The commit tracker: what may be committed, per partition (DESIGN decision 12)."""
from __future__ import annotations

from srota.service.commits import CommitTracker

P0, P1 = ("t", 0), ("t", 1)


def _passed_up_to(n: int):
    return lambda barrier: barrier <= n


def test_without_persistence_commits_follow_flushed_outputs_in_order() -> None:
    t: CommitTracker[int] = CommitTracker(gated=False)
    t.consumed({P0: 10}, "a", 1)
    t.consumed({P1: 5}, "b", 2)
    t.consumed({P0: 20}, "c", 3)
    assert t.due() == {}
    # Chunk 3's outputs are out, chunk 2's are not: nothing after chunk 1 moves.
    assert t.flushed(lambda b: b in (1, 3)) == ["a"]
    assert t.due() == {P0: 10}
    t.committed({P0: 10})
    assert t.due() == {}
    assert t.flushed(_passed_up_to(3)) == ["b", "c"]
    assert t.due() == {P0: 20, P1: 5}
    assert t.positions() == {P0: 20, P1: 5}


def test_with_persistence_nothing_is_committed_before_a_snapshot_includes_it() -> None:
    t: CommitTracker[int] = CommitTracker(gated=True)
    t.consumed({P0: 10}, None, 1)
    t.flushed(_passed_up_to(1))
    assert t.due() == {}, "hole A: committed before any snapshot"
    t.saved(t.positions())
    assert t.due() == {P0: 10}
    t.committed({P0: 10})
    # Hole B: a partition first consumed after the last snapshot.
    t.consumed({P1: 7}, None, 2)
    t.consumed({P0: 15}, None, 3)
    t.flushed(_passed_up_to(3))
    assert t.due() == {}
    t.saved({P1: 7})  # a checkpoint of one partition (state per partition, issue 17)
    assert t.due() == {P1: 7}


def test_a_saved_snapshot_does_not_outrun_flushed_outputs() -> None:
    t: CommitTracker[int] = CommitTracker(gated=True)
    t.consumed({P0: 10}, None, 1)
    t.saved({P0: 10})
    assert t.due() == {}
    t.flushed(_passed_up_to(1))
    assert t.due() == {P0: 10}


def test_a_restored_snapshot_is_consumed_flushed_and_saved_and_kept_in_every_later_snapshot() -> None:
    t: CommitTracker[int] = CommitTracker(gated=True)
    t.restore({P0: 17, P1: 5})
    assert t.due() == {P0: 17, P1: 5}
    t.consumed({P0: 30}, None, 1)
    # Hole C: P1 is no longer assigned, or idle; it stays in what a snapshot records.
    assert t.positions() == {P0: 30, P1: 5}
    assert t.positions([P1]) == {P1: 5}


def test_with_persistence_acknowledgements_without_offsets_wait_for_a_snapshot_that_includes_them() -> None:
    """MQTT: a message acknowledged is never sent again, so its ack waits for the snapshot."""
    t: CommitTracker[int] = CommitTracker(gated=True)
    t.consumed({}, "m1", 1)
    t.consumed({}, "m2", 2)
    assert t.flushed(_passed_up_to(2)) == [] and t.held == 2
    taken = t.chunks()  # a snapshot taken now includes both
    t.consumed({}, "m3", 3)
    t.saved({}, taken)
    assert t.flushed(_passed_up_to(3)) == ["m1", "m2"] and t.held == 1
    t.saved({}, t.chunks())
    assert t.flushed(_passed_up_to(3)) == ["m3"] and t.held == 0


def test_acknowledgements_follow_the_flush_without_persistence_and_for_offset_sources() -> None:
    t: CommitTracker[int] = CommitTracker(gated=False)
    t.consumed({}, "m1", 1)
    assert t.flushed(_passed_up_to(1)) == ["m1"]
    k: CommitTracker[int] = CommitTracker(gated=True)
    k.consumed({P0: 10}, "kafka", 1)  # committed by due(), once saved; the token never waits
    assert k.flushed(_passed_up_to(1)) == ["kafka"] and k.held == 0


def test_held_counts_messages_not_chunks() -> None:
    """The broker's in-flight window is in messages; a chunk may hold several (before: chunks
    were counted, so a burst filled the window without an early snapshot)."""
    t: CommitTracker[int] = CommitTracker(gated=True)
    t.consumed({}, "burst", 1, messages=15)
    t.consumed({}, "one", 2)
    t.flushed(_passed_up_to(2))
    assert t.held == 16
    t.saved({}, t.chunks())
    assert t.flushed(_passed_up_to(2)) == ["burst", "one"] and t.held == 0
