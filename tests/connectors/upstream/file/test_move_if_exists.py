"""siddhi-io-file ``FileSourceMoveIfExistsTestcase``, ported: each Java ``@Test`` is one test
here, named after it."""
from __future__ import annotations

import shutil
from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from tests.connectors.upstream.file.support import Files, app, events, until

COMPANIES = {"redhat", "apache", "cloudbees", "ibm", "intel", "microsoft", "google", "wso2"}


async def test_fileSourceMoveIfExistsTest1(run: Any, files: Files) -> None:
    """move.if.exist.mode with action.after.process='delete': SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError):
        await run(app(f"@source(type='file', mode='line', dir.uri='{files.uri('line/json')}', "
                      f"action.after.process='delete', move.after.process='{files.moved_uri()}', tailing='false', "
                      "move.if.exist.mode='KEEP', @map(type='json'))"))


def _seed(files: Files) -> str:
    """An apache.json already in the move directory (content differs from the one moved)."""
    files.moved.mkdir(parents=True, exist_ok=True)
    shutil.copy(files.new / "move_if_exists/apache.json", files.moved)
    return (files.moved / "apache.json").read_text()


async def test_fileSourceMoveIfExistsTest2(run: Any, files: Files) -> None:
    """KEEP: 8 events; 9 files in the move directory: the existing apache.json unchanged and the
    moved one under another name containing 'apache.json', with the original content."""
    original = (files.new / "text_full/apache.json").read_text()
    before = _seed(files)
    r = await run(app(f"@source(type='file',mode='text.full', dir.uri='{files.uri('text_full')}', "
                      f"action.after.process='move', move.after.process='{files.moved_uri()}', "
                      "move.if.exist.mode='KEEP', @map(type='json'))"))
    got = r.watch("BarStream")
    result = await events(got, 8)
    assert {row[0] for row in result} == COMPANIES and len(result) == 8
    await until(lambda: len(files.moved_listing()) == 9, 3)
    assert (files.moved / "apache.json").read_text() == before
    renamed = [n for n in files.moved_listing() if n != "apache.json" and "apache.json" in n]
    assert len(renamed) == 1 and (files.moved / renamed[0]).read_text() == original


async def test_fileSourceMoveIfExistsTest3(run: Any, files: Files) -> None:
    """OVERWRITE: 8 events; 8 files in the move directory, apache.json replaced by the moved one."""
    original = (files.new / "text_full/apache.json").read_text()
    _seed(files)
    r = await run(app(f"@source(type='file',mode='text.full', dir.uri='{files.uri('text_full')}', "
                      f"action.after.process='move', move.after.process='{files.moved_uri()}', "
                      "move.if.exist.mode='OVERWRITE', @map(type='json'))"))
    got = r.watch("BarStream")
    result = await events(got, 8)
    assert {row[0] for row in result} == COMPANIES and len(result) == 8
    await until(lambda: len(files.moved_listing()) == 8, 3)
    assert (files.moved / "apache.json").read_text() == original
