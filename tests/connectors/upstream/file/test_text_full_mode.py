"""siddhi-io-file ``FileSourceTextFullModeTestCase``, ported: each Java ``@Test`` is one test
here, named after it.  The cron tests wait for real firings of ``*/5 * * * * ?`` (up to ~10 s)."""
from __future__ import annotations

import shutil
import time
from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from tests.connectors.upstream.file.support import Files, app, events, rows, until

COMPANIES = {"redhat", "apache", "cloudbees", "ibm", "intel", "microsoft", "google", "wso2"}


async def test_siddhiIoFileTest1(run: Any, files: Files) -> None:
    """dir.uri, text.full, move: each of the 8 files is one event (a known company) and all 8
    are moved."""
    r = await run(app(f"@source(type='file',mode='text.full', dir.uri='{files.uri('text_full')}', "
                      f"action.after.process='move', move.after.process='{files.moved_uri()}', @map(type='json'))"))
    got = r.watch("BarStream")
    result = await events(got, 8)
    assert {row[0] for row in result} == COMPANIES and len(result) == 8
    await until(lambda: len(files.moved_listing()) == 8, 3)


async def test_siddhiIoFileTest2(run: Any, files: Files) -> None:
    """dir.uri, delete, timeout='100000': 8 events and the directory emptied."""
    r = await run(app(f"@source(type='file', mode='text.full', dir.uri='{files.uri('text_full')}', "
                      "action.after.process='delete', timeout='100000', @map(type='json'))"))
    got = r.watch("BarStream")
    result = await events(got, 8)
    assert {row[0] for row in result} == COMPANIES and len(result) == 8
    await until(lambda: files.listing("text_full") == [], 3)


async def test_siddhiIoFileTest3(run: Any, files: Files) -> None:
    """A directory of one file: one event ('apache') and the directory emptied."""
    r = await run(app(f"@source(type='file', mode='text.full', dir.uri='{files.uri('text_full_single')}', "
                      "action.after.process='delete', @map(type='json'))"))
    got = r.watch("BarStream")
    assert [row[0] for row in await events(got, 1)] == ["apache"]
    await until(lambda: files.listing("text_full_single") == [], 3)


async def test_siddhiIoFileTest4(run: Any, files: Files) -> None:
    """After the first file, a file copied into the watched directory is read too: 2 events,
    the directory emptied."""
    r = await run(app(f"@source(type='file', mode='text.full', dir.uri='{files.uri('text_full_single')}', "
                      "action.after.process='delete', @map(type='json'))"))
    got = r.watch("BarStream")
    await events(got, 1, settle=0)
    shutil.copyfile(files.new / "text_full/google.json", files.new / "text_full_single/google.json")
    result = await events(got, 2)
    assert [row[0] for row in result] == ["apache", "google"]
    await until(lambda: files.listing("text_full_single") == [], 3)


async def test_siddhiIoFileTest5(run: Any, files: Files) -> None:
    """file.uri, delete: one event, 'apache'."""
    r = await run(app(f"@source(type='file', mode='text.full', file.uri='{files.uri('text_full_single/apache.json')}', "
                      "action.after.process='delete', @map(type='json'))"))
    got = r.watch("BarStream")
    assert [row[0] for row in await events(got, 1)] == ["apache"]


async def test_siddhiIoFileTest6(run: Any, files: Files) -> None:
    """file.uri, move to a file path: one event, the directory emptied, the file moved."""
    r = await run(app(f"@source(type='file', mode='text.full', file.uri='{files.uri('text_full_single/apache.json')}', "
                      f"action.after.process='move', move.after.process='{files.moved_uri('apache.json')}', "
                      "@map(type='json'))"))
    got = r.watch("BarStream")
    assert [row[0] for row in await events(got, 1)] == ["apache"]
    await until(lambda: files.listing("text_full_single") == [] and files.moved_listing() == ["apache.json"], 3)


async def test_siddhiIoFileTest7(run: Any, files: Files) -> None:
    """file.uri, delete: one event and the file deleted."""
    r = await run(app(f"@source(type='file', mode='text.full', file.uri='{files.uri('text_full_single/apache.json')}', "
                      "action.after.process='delete',@map(type='json'))"))
    got = r.watch("BarStream")
    assert [row[0] for row in await events(got, 1)] == ["apache"]
    await until(lambda: files.listing("text_full_single") == [], 3)


async def test_siddhiIoFileTestForEOFAndFileNameForTextFull(run: Any, files: Files) -> None:
    """The one event of a text.full file has trp:eof 'true' and trp:file.path the file's path."""
    r = await run(app(
        f"@source(type='file', mode='text.full', file.uri='{files.uri('text_full/google.json')}', "
        "action.after.process='delete', tailing='false', @map(type='json', enclosing.element=\"$.event\", "
        "@attributes(symbol = \"symbol\", price = \"price\", volume = \"volume\", eof = 'trp:eof', "
        "fp = 'trp:file.path')))", "symbol string, price float, volume long, eof String, fp String"))
    got = r.watch("BarStream")
    result = await events(got, 1, settle=0.5)
    assert len(result) == 1 and result[0][3] == "true"
    assert result[0][4].endswith("files/new/text_full/google.json")


async def test_siddhiIoFileTest8(run: Any, files: Files) -> None:
    """tailing='true' in text.full mode: SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="tailing"):
        await run(app(f"@source(type='file', mode='text.full', file.uri='{files.uri('text_full_single/apache.json')}', "
                      "tailing='true', @map(type='json'))"))


async def test_siddhiIoFileTest9(run: Any, files: Files) -> None:
    """tailing='true' in text.full mode (and a timeout that is not a number):
    SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError):
        await run(app(f"@source(type='file', mode='text.full', file.uri='{files.uri('text_full_single/apache.json')}', "
                      "tailing='true', timeout='100000x', @map(type='json'))"))


async def test_siddhiIoFileTestCronSupportForDirectory(run: Any, files: Files) -> None:
    """cron every 5 s over a directory: the file there is read and moved; a file copied in
    later is read and moved at a later firing: 2 events, 2 files in the move directory."""
    r = await run(app(f"@source(type='file',mode='text.full', dir.uri='{files.uri('text_full_single')}', "
                      "action.after.process='move', tailing='false', cron.expression='*/5 * * * * ?', "
                      f"move.after.process='{files.moved_uri('text_full')}', @map(type='json'))"))
    got = r.watch("BarStream")
    await events(got, 1, timeout=7, settle=0)
    shutil.copyfile(files.new / "text_full/cloudbees.json", files.new / "text_full_single/cloudbees.json")
    result = await events(got, 2, timeout=7, settle=0)
    assert {row[0] for row in result} == {"apache", "cloudbees"}
    await until(lambda: len(files.moved_listing("text_full")) == 2, 3)


async def test_siddhiIOFileTestCronExpressionInDirectory(run: Any, files: Files) -> None:
    """As above in line mode: the second event comes at least 4 s after the first (the next
    firing)."""
    r = await run(app(f"@source(type='file', dir.uri='{files.uri('text_full_single')}', "
                      "action.after.process='move', tailing='false', cron.expression='*/5 * * * * ?', "
                      f"move.after.process='{files.moved_uri('text_full')}', @map(type='json'))"))
    got = r.watch("BarStream")
    await events(got, 1, timeout=7, settle=0)
    first = time.monotonic()
    shutil.copyfile(files.new / "text_full/cloudbees.json", files.new / "text_full_single/cloudbees.json")
    await events(got, 2, timeout=7, settle=0)
    assert time.monotonic() - first >= 4.0, "Cron Time is not satisfied"
    assert len(rows(got)) == 2


async def test_siddhiIoFileTest10(run: Any, files: Files) -> None:
    """cron.expression without action.after.process='move': SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="cron"):
        await run(app(f"@source(type='file', file.uri='{files.uri('text_full_single/apache.json')}', "
                      f"move.after.process='{files.moved_uri('apache.json')}', cron.expression='*/5 * * * * ?', "
                      "tailing='false', @map(type='csv'))"))


async def test_siddhiIoFileTest11(run: Any, files: Files) -> None:
    """cron.expression with tailing='true': SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="tailing"):
        await run(app(f"@source(type='file', file.uri='{files.uri('text_full_single/apache.json')}', "
                      "action.after.process='MOVE', cron.expression='*/5 * * * * ?', "
                      f"move.after.process='{files.moved_uri('apache.json')}', tailing='true', @map(type='csv'))"))


async def test_siddhiIoFileTest12(run: Any, files: Files) -> None:
    """MOVE and cron.expression without move.after.process: SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="move.after.process"):
        await run(app(f"@source(type='file', file.uri='{files.uri('text_full_single/apache.json')}', "
                      "action.after.process='MOVE', cron.expression='*/5 * * * * ?', tailing='false', "
                      "@map(type='csv'))"))


async def test_siddhiIoFileTest13(run: Any, files: Files) -> None:
    """An invalid cron expression ('* 5 * * * * ?'): SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="cron expression"):
        await run(app(f"@source(type='file', file.uri='{files.uri('text_full_single/apache.json')}', "
                      f"action.after.process='MOVE', move.after.process='{files.moved_uri('apache.json')}', "
                      "cron.expression='* 5 * * * * ?', tailing='false', @map(type='csv'))"))
