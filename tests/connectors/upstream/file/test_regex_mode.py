"""siddhi-io-file ``FileSourceRegexModeTestCase``, ported: each Java ``@Test`` is one test here,
named after it, with the mapper the Java app names (most cut XML files and map them with
``xml``).  Srota's regex splitting (begin only, end only, tailing) is also tested on its own in
tests/connectors/test_file.py."""
from __future__ import annotations

from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from tests.connectors.upstream.file.support import Files, app, events, until

VOLUMES = [10000, 10001, 10002, 10003, 10004]
JSON_REGEX = "begin.regex='(\\{)', end.regex='(}})'"  # the app text: begin.regex='(\{)'
BEGIN = "begin.regex='(<events>)'"
END = "end.regex='(</events>)'"


async def _xml(run: Any, files: Files, directory: str, options: str) -> list[list[tuple[Any, ...]]]:
    """Start the upstream app reading ``directory`` in regex mode with ``options``, mapped with
    ``xml``; its BarStream chunks."""
    r = await run(app(f"@source(type='file', mode='regex', dir.uri='{files.uri(directory)}', {options}, "
                      "@map(type='xml'))"))
    return r.watch("BarStream")


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


async def test_siddhiIoFileTest3(run: Any, files: Files) -> None:
    """begin/end '<events>' regexes over an XML file, moved: 5 events, 1 file moved."""
    got = await _xml(run, files, "regex/xml", f"{BEGIN}, {END}, tailing='false', action.after.process='move', "
                                              f"move.after.process='{files.moved_uri()}'")
    assert [row[2] for row in await events(got, 5)] == VOLUMES
    await until(lambda: len(files.moved_listing()) == 1, 3)


async def test_siddhiIoFileTest4(run: Any, files: Files) -> None:
    """As Test1 with move: 40 events and the 8 files moved."""
    r = await run(app(f"@source(type='file', mode='regex', dir.uri='{files.uri('regex/json')}', {JSON_REGEX}, "
                      f"tailing='false', action.after.process='move', move.after.process='{files.moved_uri()}', "
                      "@map(type='json'))"))
    got = r.watch("BarStream")
    assert [row[2] for row in await events(got, 40)] == VOLUMES * 8
    await until(lambda: len(files.moved_listing()) == 8, 3)


async def test_siddhiIoFileTest5(run: Any, files: Files) -> None:
    """begin.regex only over an XML file, moved: 5 events, 1 file moved."""
    got = await _xml(run, files, "regex/xml", f"{BEGIN}, tailing='false', action.after.process='move', "
                                              f"move.after.process='{files.moved_uri()}'")
    assert [row[2] for row in await events(got, 5)] == VOLUMES
    await until(lambda: len(files.moved_listing()) == 1, 3)


async def test_siddhiIoFileTest6(run: Any, files: Files) -> None:
    """begin.regex only over 8 single-event XML files (``dir.uri`` ending in '/'), moved: 8
    events, all 10000, and the 8 files moved."""
    r = await run(app(f"@source(type='file', mode='regex', dir.uri='{files.uri('regex/xml_single')}/', {BEGIN}, "
                      f"tailing='false', action.after.process='move', move.after.process='{files.moved_uri()}', "
                      "@map(type='xml'))"))
    got = r.watch("BarStream")
    assert [row[2] for row in await events(got, 8)] == [10000] * 8
    await until(lambda: len(files.moved_listing()) == 8, 3)


async def test_siddhiIoFileTest7(run: Any, files: Files) -> None:
    """end.regex only over an XML file, moved: 5 events, 1 file moved."""
    got = await _xml(run, files, "regex/xml", f"{END}, tailing='false', action.after.process='move', "
                                              f"move.after.process='{files.moved_uri()}'")
    assert [row[2] for row in await events(got, 5, settle=1.0)] == VOLUMES
    await until(lambda: len(files.moved_listing()) == 1, 3)


async def test_siddhiIoFileTest8(run: Any, files: Files) -> None:
    """Tailing with begin/end regexes: 5 XML events, then 2 appended ones (1000, 2000)."""
    got = await _xml(run, files, "regex/xml", f"{BEGIN}, {END}, tailing='true'")
    assert [row[2] for row in await events(got, 5)] == VOLUMES
    appended = "".join(f"<events>\n<event>\n<symbol>{symbol}</symbol>\n<price>{price}</price>\n"
                       f"<volume>{volume}</volume>\n</event>\n</events>\n"
                       for symbol, price, volume in [("GOOGLE", 100, 1000), ("YAHOO", 200, 2000)])
    with open(files.new / "regex/xml/xml_logs.txt", "a") as f:
        f.write(appended + "\n")
    assert [row[2] for row in await events(got, 7)] == VOLUMES + [1000, 2000]


async def test_siddhiIoFileTest9(run: Any, files: Files) -> None:
    """begin.regex only, delete: 5 XML events, the directory emptied."""
    got = await _xml(run, files, "regex/xml", f"{BEGIN}, tailing='false', action.after.process='delete'")
    assert [row[2] for row in await events(got, 5)] == VOLUMES
    await until(lambda: files.listing("regex/xml") == [], 3)


async def test_siddhiIoFileTest10(run: Any, files: Files) -> None:
    """Neither dir.uri nor file.uri: SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="file.uri"):
        await run(app("@source(type='file', mode='regex', begin.regex='(<events>)', tailing='false', "
                      "action.after.process='delete', @map(type='xml'))"))


async def test_siddhiIoFileTest11(run: Any, files: Files) -> None:
    """begin/end regexes, delete: 5 XML events, the directory emptied."""
    got = await _xml(run, files, "regex/xml", f"action.after.process='delete',{BEGIN}, {END}, tailing='false'")
    assert [row[2] for row in await events(got, 5)] == VOLUMES
    await until(lambda: files.listing("regex/xml") == [], 3)


async def test_siddhiIoFileTest12(run: Any, files: Files) -> None:
    """action.after.process='move' without move.after.process: SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="move.after.process"):
        await run(app(f"@source(type='file', mode='regex', dir.uri='{files.uri('regex/xml')}', "
                      "begin.regex='(<events>)', end.regex='(</events>)', action.after.process='move' ,"
                      "tailing='false', @map(type='xml'))"))


async def test_siddhiIoFileTest13(run: Any, files: Files) -> None:
    """Between the regexes, the pieces with an invalid root or event tag are dropped by the
    xml mapper: 3 events (10000, 10003, 10004), the directory emptied."""
    got = await _xml(run, files, "regex/invalid", f"action.after.process='delete',{BEGIN}, {END}, tailing='false'")
    assert [row[2] for row in await events(got, 3)] == [10000, 10003, 10004]
    await until(lambda: files.listing("regex/invalid") == [], 3)


async def test_siddhiIoFileTest14(run: Any, files: Files) -> None:
    """begin.regex only over the same invalid XML: 3 events, the directory emptied."""
    got = await _xml(run, files, "regex/invalid", f"action.after.process='delete',{BEGIN}, tailing='false'")
    assert [row[2] for row in await events(got, 3)] == [10000, 10003, 10004]
    await until(lambda: files.listing("regex/invalid") == [], 3)


async def test_siddhiIoFileTest15(run: Any, files: Files) -> None:
    """end.regex only, delete: 5 XML events, the directory emptied."""
    got = await _xml(run, files, "regex/xml", f"action.after.process='delete',{END}, tailing='false'")
    assert [row[2] for row in await events(got, 5)] == VOLUMES
    await until(lambda: files.listing("regex/xml") == [], 3)


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


async def test_siddhiIoFileTest16(run: Any, files: Files) -> None:
    """begin.regex only, delete: 5 XML events, the directory emptied."""
    got = await _xml(run, files, "regex/xml", f"action.after.process='delete',{BEGIN}, tailing='false'")
    assert [row[2] for row in await events(got, 5)] == VOLUMES
    await until(lambda: files.listing("regex/xml") == [], 3)


async def test_siddhiIoFileTest17(run: Any, files: Files) -> None:
    """A begin.regex that does not compile ('(*<events>)'): SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="regex"):
        await run(app(f"@source(type='file', mode='regex', dir.uri='{files.uri('regex/xml')}', "
                      "begin.regex='(*<events>)', tailing='false', @map(type='xml'))"))
