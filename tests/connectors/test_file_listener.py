"""The fileeventlistener source (connectors/_file_listener.py), driven directly."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest
from srota.connectors import _file_listener
from srota.connectors._file_listener import FileEventListenerSource
from srota.connectors.base import Message
from srota.grammar.errors import SiddhiAppCreationError


class Rows:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str]] = []

    async def __call__(self, messages: list[Message]) -> None:
        self.rows.extend(m.payload for m in messages)

    async def until(self, n: int, timeout: float = 5.0) -> list[tuple[str, str, str]]:
        async with asyncio.timeout(timeout):
            while len(self.rows) < n:
                await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)  # nothing more comes
        return self.rows


async def _started(directory: Path, **options: str) -> tuple[FileEventListenerSource, Rows]:
    src = FileEventListenerSource({"dir.uri": str(directory), "monitoring.interval": "20", **options}, name="L")
    got = Rows()
    await src.start(got)
    await src.wait_ready(5)
    return src, got


@pytest.fixture(autouse=True)
def quick_settle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_file_listener, "SETTLE_SECONDS", 0.5)


async def test_a_new_directory_reports_itself_then_its_entries_in_name_order(tmp_path: Path) -> None:
    watched = tmp_path / "watched"
    watched.mkdir()
    src, got = await _started(watched)
    staging = tmp_path / "staging"  # made outside, moved in: everything appears in one poll
    (staging / "b").mkdir(parents=True)
    (staging / "b" / "z.txt").touch()
    (staging / "a.txt").touch()
    staging.rename(watched / "in")
    rows = await got.until(4)
    await src.stop()
    assert [(Path(p).relative_to(watched).as_posix(), s) for p, _n, s in rows] == [
        ("in", "created"), ("in/a.txt", "created"), ("in/b", "created"), ("in/b/z.txt", "created")]


async def test_a_file_still_written_during_the_wait_is_modifying(tmp_path: Path) -> None:
    path = tmp_path / "grow.log"
    path.write_text("a\n")
    src, got = await _started(tmp_path)
    await got.until(1)
    path.write_text("a\nb\n")
    async with asyncio.timeout(5):  # until a poll saw the change (the wait starts then)
        while src._tree["grow.log"].mtime_ns != path.stat().st_mtime_ns:
            await asyncio.sleep(0.005)
    path.write_text("a\nb\nc\n")  # written again within the wait
    rows = await got.until(3, timeout=5)
    await src.stop()
    assert [s for _p, _n, s in rows[:3]] == ["created", "modifying", "modifyingCompleted"]


async def test_a_listed_directory_reports_what_is_inside_it_and_nothing_outside(tmp_path: Path) -> None:
    (tmp_path / "watched").mkdir()
    src, got = await _started(tmp_path, **{"file.name.list": "watched"})
    await got.until(1)
    (tmp_path / "watched" / "in.txt").touch()
    (tmp_path / "outside.txt").touch()  # Siddhi reports it too (see the module doc)
    rows = await got.until(3)
    await src.stop()
    names = [(n, s) for _p, n, s in rows]
    assert ("in.txt", "created") in names and all(n != "outside.txt" for n, _s in names)


async def test_a_restored_source_reports_only_what_changed_while_it_was_down(tmp_path: Path) -> None:
    (tmp_path / "kept.txt").touch()
    (tmp_path / "gone.txt").touch()
    src, got = await _started(tmp_path)
    await got.until(2)
    (tmp_path / "later.txt").touch()  # reported after the start: in the state too (not in Siddhi's)
    await got.until(3)
    await src.stop()
    state = src.state()
    assert state is not None and sorted(Path(p).name for p in state["files"]) == ["gone.txt", "kept.txt", "later.txt"]
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "new.txt").touch()
    again = FileEventListenerSource({"dir.uri": str(tmp_path), "monitoring.interval": "20"}, name="L")
    again.restore_state(orjson.loads(orjson.dumps(state)))
    got2 = Rows()
    await again.start(got2)
    rows = await got2.until(2)
    await again.stop()
    assert [(n, s) for _p, n, s in rows] == [("new.txt", "created"), ("gone.txt", "removed")]


@pytest.mark.parametrize("options, message", [
    ({"file.system.options": "PASSIVE_MODE:true"}, "local directories only"),
    ({"monitoring.interval": "0"}, "must be positive"),
    ({"dir.uri": ""}, "dir.uri must be given"),
])
def test_options_it_cannot_honour_refuse_the_app(tmp_path: Path, options: dict[str, Any], message: str) -> None:
    with pytest.raises(SiddhiAppCreationError, match=message):
        FileEventListenerSource({"dir.uri": str(tmp_path), **options}, name="L")


async def test_a_change_to_an_entry_not_listed_is_not_waited_for(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # (Siddhi's one-second wait is for the changes it reports: one per unlisted change held
    # the listed ones back)
    waited: list[str] = []
    settled = FileEventListenerSource._settled

    async def recording(self: FileEventListenerSource, entry: Any) -> str:
        waited.append(Path(entry.path).name)
        return await settled(self, entry)

    monkeypatch.setattr(FileEventListenerSource, "_settled", recording)
    (tmp_path / "listed.txt").touch()
    (tmp_path / "other.txt").touch()
    src, got = await _started(tmp_path, **{"file.name.list": "listed.txt"})
    await got.until(1)
    (tmp_path / "other.txt").write_text("x")
    (tmp_path / "listed.txt").write_text("y")
    rows = await got.until(2)
    await src.stop()
    assert [(n, s) for _p, n, s in rows] == [("listed.txt", "created"), ("listed.txt", "modifyingCompleted")]
    assert waited == ["listed.txt"]
