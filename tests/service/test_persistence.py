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


async def test_connector_states_are_saved_with_their_revision(tmp_path: Path):
    """Connectors' own state goes with the revision it was taken with, and is pruned with it."""
    store = StateStore(tmp_path / "state.db", revisions=2)
    await store.open()
    entry = {"format": 1, "type": "kafka", "state": {"lastSentSequenceNo": 1_700_000_000_000_000}}
    await store.save("app", b"one", {}, None, {"sink:Out:0": entry, "source:In:0": {"format": 1, "type": "file",
                                                                                    "state": {"processedFileList": []}}})
    await store.save("app", b"two", {}, None, {"sink:Out:0": {**entry, "state": {"lastSentSequenceNo": 5}}})
    assert (await store.load("app", check=None)).connectors == {
        "sink:Out:0": {"format": 1, "type": "kafka", "state": {"lastSentSequenceNo": 5}}}
    await store.save("app", b"three", {})  # no connector state: none restored with it
    assert (await store.load("app", check=None)).connectors == {}
    async with store.db.execute("SELECT DISTINCT revision FROM srota_connector_states") as cur:
        assert [r[0] async for r in cur] == [2]  # revision 1 pruned with its snapshot
    await store.close()
