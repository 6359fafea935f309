"""siddhi-io-file ``FileSourceRegexModeTestCase``, ported: each Java ``@Test`` is one test here,
named after it.  Most upstream regex tests cut XML files and map them with ``xml``, which Srota
does not implement: those are skipped, except where only the source's options are expected to
be refused (the ``json`` mapper stands in).  Srota's regex splitting (begin only, end only,
tailing) is also tested on its own in tests/connectors/test_file.py."""
from __future__ import annotations

from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from tests.connectors.upstream.file.support import Files, app, events, until

NO_XML = "needs @map(type='xml') (siddhi-map-xml), which Srota does not implement"
VOLUMES = [10000, 10001, 10002, 10003, 10004]
JSON_REGEX = "begin.regex='(\\{)', end.regex='(}})'"  # the app text: begin.regex='(\{)'


async def test_siddhiIoFileTest1(run: Any, files: Files) -> None:
    """begin '(\\{)' and end '(}})' cut each JSON object out of 8 files: 40 events, the
    directory emptied (delete)."""
    r = await run(app(f"@source(type='file', mode='regex', dir.uri='{files.uri('regex/json')}', {JSON_REGEX}, "
                      "tailing='false', action.after.process='delete', @map(type='json'))"))
    got = r.watch("BarStream")
    assert [row[2] for row in await events(got, 40)] == VOLUMES * 8
    await until(lambda: files.listing("regex/json") == [], 3)


async def test_siddhiIoFileTest2(run: Any, files: Files) -> None:
    """regex mode without begin.regex/end.regex reads lines: 40 events, the directory emptied."""
    r = await run(app(f"@source(type='file', mode='regex', dir.uri='{files.uri('regex/json')}', "
                      "tailing='false', action.after.process='delete', @map(type='json'))"))
    got = r.watch("BarStream")
    assert [row[2] for row in await events(got, 40)] == VOLUMES * 8
    await until(lambda: files.listing("regex/json") == [], 3)


@pytest.mark.skip(reason=NO_XML)
async def test_siddhiIoFileTest3() -> None:
    """begin/end '<events>' regexes over an XML file, moved: 5 events."""


async def test_siddhiIoFileTest4(run: Any, files: Files) -> None:
    """As Test1 with move: 40 events and the 8 files moved."""
    r = await run(app(f"@source(type='file', mode='regex', dir.uri='{files.uri('regex/json')}', {JSON_REGEX}, "
                      f"tailing='false', action.after.process='move', move.after.process='{files.moved_uri()}', "
                      "@map(type='json'))"))
    got = r.watch("BarStream")
    assert [row[2] for row in await events(got, 40)] == VOLUMES * 8
    await until(lambda: len(files.moved_listing()) == 8, 3)


@pytest.mark.skip(reason=NO_XML)
async def test_siddhiIoFileTest5() -> None:
    """begin.regex only over an XML file, moved: 5 events."""


@pytest.mark.skip(reason=NO_XML)
async def test_siddhiIoFileTest6() -> None:
    """begin.regex only over 8 single-event XML files, moved: 8 events."""


@pytest.mark.skip(reason=NO_XML)
async def test_siddhiIoFileTest7() -> None:
    """end.regex only over an XML file, moved: 5 events."""


@pytest.mark.skip(reason=NO_XML)
async def test_siddhiIoFileTest8() -> None:
    """Tailing with begin/end regexes: 5 XML events, then 2 appended ones."""


@pytest.mark.skip(reason=NO_XML)
async def test_siddhiIoFileTest9() -> None:
    """begin.regex only, delete: 5 XML events, the directory emptied."""


async def test_siddhiIoFileTest10(run: Any, files: Files) -> None:
    """Neither dir.uri nor file.uri: SiddhiAppCreationException.  (Upstream maps with xml; the
    json mapper stands in, the error is the source's.)"""
    with pytest.raises(SiddhiAppCreationError, match="file.uri"):
        await run(app("@source(type='file', mode='regex', begin.regex='(<events>)', tailing='false', "
                      "action.after.process='delete', @map(type='json'))"))


@pytest.mark.skip(reason=NO_XML)
async def test_siddhiIoFileTest11() -> None:
    """begin/end regexes, delete: 5 XML events, the directory emptied."""


async def test_siddhiIoFileTest12(run: Any, files: Files) -> None:
    """action.after.process='move' without move.after.process: SiddhiAppCreationException.
    (json stands in for xml.)"""
    with pytest.raises(SiddhiAppCreationError, match="move.after.process"):
        await run(app(f"@source(type='file', mode='regex', dir.uri='{files.uri('regex/xml')}', "
                      "begin.regex='(<events>)', end.regex='(</events>)', action.after.process='move' ,"
                      "tailing='false', @map(type='json'))"))


@pytest.mark.skip(reason=NO_XML)
async def test_siddhiIoFileTest13() -> None:
    """Invalid XML between the regexes is dropped by the mapper: 3 events."""


@pytest.mark.skip(reason=NO_XML)
async def test_siddhiIoFileTest14() -> None:
    """begin.regex only over invalid XML: 3 events."""


@pytest.mark.skip(reason=NO_XML)
async def test_siddhiIoFileTest15() -> None:
    """end.regex only, delete: 5 XML events."""


async def test_siddhiIoFileTestForEOFAndFileNameForRegex(run: Any, files: Files) -> None:
    """file.uri in regex mode: trp:eof 'false' on the first 4 events, 'true' on the 5th, and
    trp:file.path the file's path."""
    r = await run(app(
        f"@source(type='file', mode='regex', file.uri='{files.uri('regex/json/logs.txt')}', {JSON_REGEX}, "
        "tailing='false', action.after.process='delete', @map(type='json', enclosing.element=\"$.event\", "
        "@attributes(symbol = \"symbol\", price = \"price\", volume = \"volume\", eof = 'trp:eof', "
        "fp = 'trp:file.path')))", "symbol string, price float, volume long, eof String, fp String"))
    got = r.watch("BarStream")
    result = await events(got, 5)
    assert [row[3] for row in result] == ["false"] * 4 + ["true"]
    assert all(row[4].endswith("files/new/regex/json/logs.txt") for row in result)


@pytest.mark.skip(reason=NO_XML)
async def test_siddhiIoFileTest16() -> None:
    """begin.regex only, delete: 5 XML events, the directory emptied."""


async def test_siddhiIoFileTest17(run: Any, files: Files) -> None:
    """A begin.regex that does not compile ('(*<events>)'): SiddhiAppCreationException.  (json
    stands in for xml.)"""
    with pytest.raises(SiddhiAppCreationError, match="regex"):
        await run(app(f"@source(type='file', mode='regex', dir.uri='{files.uri('regex/xml')}', "
                      "begin.regex='(*<events>)', tailing='false', @map(type='json'))"))
