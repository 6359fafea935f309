"""An unreadable newest snapshot falls back to the previous revision (never a crash loop)."""
from __future__ import annotations

import logging
import pickle
from pathlib import Path

from srota.engine import SiddhiManager
from srota.service.persistence import StateStore

APP = "@app:name('A') define stream S (k string); from S select k, count() as n group by k insert into Out;"


def _snapshot(n: int) -> bytes:
    rt = SiddhiManager().create_siddhi_app_runtime(APP)
    rt.start()
    for _ in range(n):
        rt.get_input_handler("S").send(["a"])
    data = rt.snapshot()
    rt.shutdown()
    return data


async def test_newest_unreadable_falls_back_to_previous(tmp_path: Path, caplog):
    store = StateStore(tmp_path / "state.db", revisions=3)
    await store.open()
    await store.save("A", _snapshot(2), {"k": {("t", 0): 2}})
    await store.save("A", pickle.dumps({"format": 1}), {"k": {("t", 0): 3}})  # an old pickle
    with caplog.at_level(logging.WARNING, logger="srota.service.persistence"):
        got = await store.load("A")
    assert got.revision == 1 and got.offsets == {"k": {("t", 0): 2}}
    assert "revision 2 cannot be restored" in caplog.text and "falling back" in caplog.text
    rt = SiddhiManager().create_siddhi_app_runtime(APP)
    out: list = []
    rt.add_callback("Out", out.extend)
    assert rt.restore(got.state) == []
    rt.start()
    rt.get_input_handler("S").send(["a"])
    assert out[-1].data == ("a", 3)
    rt.shutdown()
    await store.save("A", b"garbage", {})
    await store.save("A", b"more garbage", {})
    await store.save("A", b"\x92\x01", {})
    assert (await store.load("A")).state is None  # nothing readable: start empty, said in the log
    await store.close()
