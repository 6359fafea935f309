"""Snapshots and offsets saved together, revisions pruned, restored after reopening."""
from __future__ import annotations

from pathlib import Path

from srota.service.persistence import StateStore


async def test_save_and_load_round_trip(tmp_path: Path):
    store = StateStore(tmp_path / "state.db", revisions=2)
    await store.open()
    assert (await store.load("app")).state is None
    r1 = await store.save("app", b"one", {"kafka-0": {("t", 0): 5, ("t", 1): 7}})
    r2 = await store.save("app", b"two", {"kafka-0": {("t", 0): 9}})
    r3 = await store.save("app", b"three", {"kafka-0": {("t", 0): 11}})
    assert (r1, r2, r3) == (1, 2, 3)
    assert await store.revisions_of("app") == [2, 3]
    await store.close()

    reopened = StateStore(tmp_path / "state.db")
    await reopened.open()
    got = await reopened.load("app", check=None)  # (these states are not snapshots)
    assert got.revision == 3 and got.state == b"three"
    assert got.offsets == {"kafka-0": {("t", 0): 11}}
    assert (await reopened.load("other")).offsets == {}
    await reopened.close()
