"""siddhi-io-file ``FileHandlingTestCase``, ported: each Java ``@Test`` is one test here, named
after it.  The suite tests ``@source(type='fileeventlistener')`` (connectors/_file_listener.py):
a ``(filepath, filename, status)`` event per file or directory created, modified or removed in
``dir.uri``.  Java's ``newRoot`` is an empty directory made for each test (its ``@BeforeClass``
deletes it, the source tests' ``@BeforeMethod`` makes it); the Java callbacks count callbacks,
one per event here as there.  A change's event comes a second after it (Siddhi's wait that
tells ``modifying`` from ``modifyingCompleted``), within Java's 3 s waits.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from tests.connectors.upstream.file.support import events, rows

SCHEMA = "filepath string, filename string, status string"


def _app(source_options: str) -> str:
    return (f"@App:name('TestFileEventListener') @source(type='fileeventlistener', {source_options})\n"
            f"define stream FileListenerStream ({SCHEMA});\n"
            f"define stream ResultStream ({SCHEMA});\n"
            "from FileListenerStream select * insert into ResultStream;")


@pytest.fixture
def new_root(tmp_path: Path) -> Path:
    root = tmp_path / "files" / "new"
    root.mkdir(parents=True)
    return root


async def _listen(run: Any, options: str) -> tuple[Any, list[list[tuple[Any, ...]]]]:
    r = await run(_app(options))
    got = r.watch("ResultStream")
    await r.host.apps["TestFileEventListener"].sources[0].source.wait_ready(5)
    return r, got


async def test_siddhiIOFileTest1(run: Any, new_root: Path) -> None:
    """A directory created and deleted in the watched directory: 2 events with its path."""
    _, got = await _listen(run, f"dir.uri='file:{new_root}'")
    (new_root / "destination").mkdir()
    await events(got, 1)
    (new_root / "destination").rmdir()
    seen = await events(got, 2)
    assert seen == [(f"{new_root}/destination", "destination", "created"),
                    (f"{new_root}/destination", "destination", "removed")]


async def test_fileHandlerPauseAndResume(run: Any, new_root: Path) -> None:
    """Created/deleted folder gives 2 events; a file created and deleted while paused is
    reported after resume: 4 in all."""
    r, got = await _listen(run, f"dir.uri='file:{new_root}'")
    source = r.host.apps["TestFileEventListener"].sources[0].source
    (new_root / "destination").mkdir()
    await events(got, 1)
    (new_root / "destination").rmdir()
    await events(got, 2)
    source.pause()
    (new_root / "action.txt").touch()
    await events(got, 2, settle=0.5)  # (Java waits for a third here; Srota holds it while paused)
    (new_root / "action.txt").unlink()
    source.resume()
    seen = await events(got, 4)
    assert [row[0] for row in seen] == [f"{new_root}/destination"] * 2 + [f"{new_root}/action.txt"] * 2
    assert [row[2] for row in seen] == ["created", "removed", "created", "removed"]


async def test_siddhiIOFileTest3(run: Any, new_root: Path) -> None:
    """file.name.list='action.txt': the existing file, its modification and its deletion: 3 events."""
    action = new_root / "action.txt"
    action.touch()
    (new_root / "other.txt").touch()  # not listed: never reported
    _, got = await _listen(run, f"dir.uri='{new_root}', file.name.list = 'action.txt'")
    await events(got, 1)
    action.write_text("Hi this is added newly")
    (new_root / "other.txt").write_text("not listed")
    await events(got, 2)
    action.unlink()
    seen = await events(got, 3)
    assert seen == [(str(action), "action.txt", "created"), (str(action), "action.txt", "modifyingCompleted"),
                    (str(action), "action.txt", "removed")]


async def test_siddhiIOFileTest4(run: Any, new_root: Path) -> None:
    """A file created, renamed and deleted: Java asserts 3 events, the old name's, the new
    name's and the old name's (the rename is the new name's ``created`` and the old name's
    ``removed``, in name order), and it shuts down before the next poll could see the deletion
    (its last wait returns at once: it passes ``count.get()``, a number); here the deletion's
    ``removed`` is the fourth."""
    _, got = await _listen(run, f"dir.uri='{new_root}'")
    current, renamed = new_root / "destination.txt", new_root / "changedDestination.txt"
    current.touch()
    await events(got, 1)
    current.rename(renamed)
    await events(got, 3)  # (Java waits for 2; the rename's two events come together)
    renamed.unlink()
    seen = await events(got, 4)
    assert [(Path(p).name, s) for p, _n, s in seen] == [
        ("destination.txt", "created"), ("changedDestination.txt", "created"), ("destination.txt", "removed"),
        ("changedDestination.txt", "removed")]


async def test_siddhiIOFileTest5(run: Any, new_root: Path) -> None:
    """file.name.list of a folder and a file: 2 events at start, 1 when the file is deleted.
    (Java's ``destination`` is made with createNewFile, so it is a file too; Java's first two
    events come in the file system's listing order, here in name order.)"""
    (new_root / "destination.txt").touch()
    (new_root / "destination").touch()
    _, got = await _listen(run, f"dir.uri='{new_root}', file.name.list= 'destination, destination.txt'")
    first = await events(got, 2)
    assert sorted(first) == [(f"{new_root}/destination", "destination", "created"),
                             (f"{new_root}/destination.txt", "destination.txt", "created")]
    (new_root / "destination.txt").unlink()
    seen = await events(got, 3)
    assert seen[2] == (f"{new_root}/destination.txt", "destination.txt", "removed")
    assert len(rows(got)) == 3


async def test_siddhiIOFileTest6(run: Any, new_root: Path) -> None:
    """dir.uri that does not exist: SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="is not found"):
        await run(_app(f"dir.uri='file:{new_root}/destination'"))


async def test_siddhiIOFileTest7(run: Any, new_root: Path) -> None:
    """monitoring.interval='interval' (not a number): SiddhiAppValidationException."""
    with pytest.raises(SiddhiAppCreationError, match="monitoring.interval"):
        await run(_app(f"dir.uri='file:{new_root}', monitoring.interval='interval'"))


async def test_siddhiIOFileTest8(run: Any, new_root: Path) -> None:
    """dir.uri naming a file: SiddhiAppCreationException."""
    (new_root / "action.txt").touch()
    with pytest.raises(SiddhiAppCreationError, match="is a file, not a directory"):
        await run(_app(f"dir.uri='file:{new_root}/action.txt'"))


async def test_siddhiIOFileTest9(run: Any, new_root: Path) -> None:
    """file.name.list naming a file that does not exist: SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="which is not found"):
        await run(_app(f"dir.uri='file:{new_root}', file.name.list='destination.txt'"))


async def test_siddhiIOFileTest10(run: Any) -> None:
    """No dir.uri: SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="dir.uri"):
        await run(_app("monitoring.interval='100'"))


async def test_siddhiIOFileTest11(run: Any, new_root: Path) -> None:
    """file.name.list naming a file that does not exist (action.txt): SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="action.txt, which is not found"):
        await run(_app(f"dir.uri='{new_root}', file.name.list='action.txt'"))
