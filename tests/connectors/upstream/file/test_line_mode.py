"""siddhi-io-file ``FileSourceLineModeTestCase``, ported.

Each Java ``@Test`` is one test here, named after it (``siddhiIoFileTest13`` and
``siddhiIoFileTest16`` are commented out upstream, so they are not ported), with the mapper the
Java app names (``json``, ``xml``, ``text``, ``csv``; ``binary`` only where the app is expected
to be refused).
"""
from __future__ import annotations

import asyncio
from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError
from srota.service.config import HttpConfig, PersistenceConfig, ServiceConfig
from srota.service.host import ServiceHost

from tests.connectors.upstream.file.support import Files, app, events, rows
from tests.mappers.harness import Running

VOLUMES = [10000, 10001, 10002, 10003, 10004]
#: The Java tests' text mapping of ``line/text`` (``wso2,10,100``), as the app text has it.
TEXT_MAP = ("@map(type='text',fail.on.missing.attribute='false', "
            "regex.A='(\\w+),([-.0-9]+),([-.0-9]+)', event.grouping.enabled='false', "
            "@attributes(symbol = 'A[1]', price = 'A[2]', volume = 'A[3]'))")


async def test_siddhiIoFileTest1(run: Any, files: Files) -> None:
    """dir.uri, line mode, delete, no tailing: 8 files x 5 JSON lines give 40 events (volumes
    10000..10004 in each file's order) and the directory is empty afterwards."""
    r = await run(app(f"@source(type='file', mode='line', dir.uri='{files.uri('line/json')}', "
                      "action.after.process='delete', tailing='false', @map(type='json'))"))
    got = r.watch("BarStream")
    result = await events(got, 40)
    assert len(result) == 40
    assert [row[2] for row in result] == VOLUMES * 8
    assert files.listing("line/json") == []


async def test_siddhiIoFileTest2(run: Any, files: Files) -> None:
    """As Test1 with action.after.process='move': 40 events, the directory empty, and the 8
    files in move.after.process."""
    r = await run(app(f"@source(type='file', mode='line', dir.uri='{files.uri('line/json')}', "
                      f"action.after.process='move', move.after.process='{files.moved_uri()}', "
                      "tailing='false', @map(type='json'))"))
    got = r.watch("BarStream")
    result = await events(got, 40)
    assert [row[2] for row in result] == VOLUMES * 8
    await_listing = files.listing("line/json")
    assert await_listing == []
    assert len(files.moved_listing()) == 8


async def test_siddhiIoFileTest3(run: Any, files: Files) -> None:
    """file.uri tailing an XML-lines file: 5 events, then 2 appended lines give 2 more
    (volumes 1000 and 2000)."""
    r = await run(app(f"@source(type='file', mode='line', file.uri='{files.uri('line/xml/xml_line.txt')}', "
                      "tailing='true', @map(type='xml'))"))
    got = r.watch("BarStream")
    assert [row[2] for row in await events(got, 5)] == VOLUMES
    with open(files.new / "line/xml/xml_line.txt", "a") as f:
        f.write("<events><event><symbol>GOOGLE</symbol><price>100</price><volume>1000</volume></event></events>\n"
                "<events><event><symbol>YAHOO</symbol><price>200</price><volume>2000</volume></event></events>\n")
    assert [row[2] for row in await events(got, 7)] == VOLUMES + [1000, 2000]


async def test_siddhiIoFileTest5(run: Any, files: Files) -> None:
    """The same as Test1 (dir.uri, delete, no tailing): 40 events, the directory emptied."""
    r = await run(app(f"@source(type='file', mode='line', dir.uri='{files.uri('line/json')}', "
                      "action.after.process='delete',tailing='false', @map(type='json'))"))
    got = r.watch("BarStream")
    result = await events(got, 40)
    assert [row[2] for row in result] == VOLUMES * 8
    assert files.listing("line/json") == []


async def test_siddhiIoFileTest6(run: Any, files: Files) -> None:
    """action.after.process='move' without move.after.process: SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="move.after.process"):
        await run(app(f"@source(type='file', mode='line', dir.uri='{files.uri('line/json')}', "
                      "action.after.process='move', tailing='false', @map(type='json'))"))


async def test_siddhiIoFileTest7(run: Any, files: Files) -> None:
    """A directory that does not exist, with 'move' but no move.after.process:
    SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="move.after.process"):
        await run(app(f"@source(type='file', mode='line', dir.uri='{files.uri('line/json_invalid_path')}', "
                      "action.after.process='move', tailing='false', @map(type='json'))"))


async def test_siddhiIoFileTest8(run: Any, files: Files) -> None:
    """Lines with an invalid root or event tag are dropped by the xml mapper: 3 events
    (10000, 10003, 10004), the directory emptied."""
    r = await run(app(f"@source(type='file', mode='line', dir.uri='{files.uri('line/invalid')}', "
                      "action.after.process='delete',tailing='false', @map(type='xml'))"))
    got = r.watch("BarStream")
    assert [row[2] for row in await events(got, 3)] == [10000, 10003, 10004]
    assert files.listing("line/invalid") == []


async def test_siddhiIoFileTest9(run: Any, files: Files) -> None:
    """action.after.process='delete' with move.after.process: SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="'move.after.process' can only be used"):
        await run(app(f"@source(type='file', mode='line', dir.uri='{files.uri('line/invalid')}', "
                      "tailing='false', action.after.process='delete', move.after.process='file://abc/def/', "
                      "@map(type='xml'))"))


async def test_siddhiIoFileTest10(run: Any, files: Files) -> None:
    """file.uri, delete, no tailing: 5 XML events and the file deleted."""
    r = await run(app(f"@source(type='file', mode='line', file.uri='{files.uri('line/xml/xml_line.txt')}', "
                      "action.after.process='delete', tailing='false', @map(type='xml'))"))
    got = r.watch("BarStream")
    assert [row[2] for row in await events(got, 5)] == VOLUMES
    assert files.listing("line/xml") == []


async def test_siddhiIoFileTest11(run: Any, files: Files) -> None:
    """dir.uri, move: 5 XML events, the directory emptied and the one file moved."""
    r = await run(app(f"@source(type='file', mode='line', dir.uri='{files.uri('line/xml')}', "
                      f"action.after.process='move', move.after.process='{files.moved_uri()}', "
                      "tailing='false', @map(type='xml'))"))
    got = r.watch("BarStream")
    assert [row[2] for row in await events(got, 5)] == VOLUMES
    assert files.listing("line/xml") == []
    assert len(files.moved_listing()) == 1


async def test_siddhiIoFileTest12(run: Any, files: Files) -> None:
    """dir.uri, move, the text mapper with a regex: 40 events (volumes 100..500 in each file),
    the directory emptied and the 8 files moved.  Each file ends with an empty line, which is
    no event."""
    r = await run(app(f"@source(type='file', mode='line', dir.uri='{files.uri('line/text')}', "
                      f"action.after.process='move', move.after.process='{files.moved_uri()}', "
                      f"tailing='false', {TEXT_MAP})"))
    got = r.watch("BarStream")
    assert [row[2] for row in await events(got, 40)] == [100, 200, 300, 400, 500] * 8
    assert files.listing("line/text") == []
    assert len(files.moved_listing()) == 8


async def test_siddhiIoFileTest14(run: Any, files: Files) -> None:
    """file.uri, move after process and after failure to a file path: 5 XML events."""
    r = await run(app(f"@source(type='file', mode='line', file.uri='{files.uri('line/xml/xml_line.txt')}', "
                      f"action.after.process='move', move.after.process='{files.moved_uri('xml_line.txt')}', "
                      f"action.after.failure='move', move.after.failure='{files.moved_uri('xml_line.txt')}', "
                      "tailing='false', @map(type='xml'))"))
    got = r.watch("BarStream")
    assert [row[2] for row in await events(got, 5)] == VOLUMES


async def test_siddhiIoFileTest15(run: Any, files: Files) -> None:
    """tailing='true' with move.after.process: SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="tailing"):
        await run(app(f"@source(type='file', mode='line', dir.uri='{files.uri('line/text')}', "
                      f"action.after.process='move', move.after.process='{files.moved_uri()}', "
                      f"tailing='true', {TEXT_MAP})"))


async def test_siddhiIoFileReadLineInBinaryFileTest(run: Any, files: Files) -> None:
    """The binary mapper in line mode: SiddhiAppCreationException.  Srota refuses the app too
    (the first error it meets is the source's other one: tailing, the line-mode default, with
    move.after.process)."""
    with pytest.raises(SiddhiAppCreationError):
        await run(app(f"@source(type='file',mode='line', dir.uri='{files.uri('binary')}', "
                      f"action.after.process='move', move.after.process='{files.moved_uri()}', "
                      "@map(type='binary'))"))


async def test_siddhiIoFileTestForEOFAndFileName(run: Any, files: Files) -> None:
    """trp:eof is 'false' on the first 4 lines and 'true' on the 5th; trp:file.path is the
    file's path."""
    r = await run(app(
        f"@source(type='file', mode='line', file.uri='{files.uri('line/json/logs.txt')}', "
        "action.after.process='delete', tailing='false', "
        "@map(type='json', enclosing.element=\"$.event\", @attributes(symbol = \"symbol\", "
        "price = \"price\", volume = \"volume\", eof = 'trp:eof', fp = 'trp:file.path')))",
        "symbol string, price float, volume long, eof String, fp String"))
    got = r.watch("BarStream")
    result = await events(got, 5)
    assert [row[3] for row in result] == ["false"] * 4 + ["true"]
    assert all(row[4].endswith("files/new/line/json/logs.txt") for row in result)


def _header_app(source_options: str, types: str = "code string, serialNo string, amount double, "
                "fileName string, eof string", attributes: bool = True) -> str:
    mapping = ("@map( type='csv', delimiter='|', @attributes(code = '0', serialNo = '1', amount = '2', "
               "fileName = 'trp:file.path', eof = 'trp:eof'))" if attributes else "@map(type='csv', delimiter='|')")
    return (f"@App:name('TestSiddhiApp') @source(type='file', mode='line', {source_options}, {mapping}) "
            f"define stream FileReaderStream ({types}); define stream FileResultStream ({types}); "
            "from FileReaderStream select * insert into FileResultStream;")


async def test_siddhiIoFileTestForSkipHeader(run: Any, files: Files) -> None:
    """header.present='true' skips the first of the 7 lines: 6 events."""
    r = await run(_header_app(f"file.uri='file:{files.new}/line/header/test.txt', header.present='true', "
                              "action.after.process='delete', tailing='false'"))
    got = r.watch("FileResultStream")
    assert len(await events(got, 6)) == 6


async def test_siddhiIoFileTestWithoutSkipHeader(run: Any, files: Files) -> None:
    """Without header.present all 7 lines are events."""
    r = await run(_header_app(f"file.uri='file:{files.new}/line/header/test.txt', "
                              "action.after.process='delete', tailing='false'"))
    got = r.watch("FileResultStream")
    assert len(await events(got, 7)) == 7


async def test_siddhiIoFileTestForSkipMultilineHeader(run: Any, files: Files) -> None:
    """header.line.count='3' skips 3 lines: 4 events."""
    r = await run(_header_app(f"file.uri='file:{files.new}/line/header/test.txt', header.present='true', "
                              "header.line.count='3', action.after.process='delete', tailing='false'"))
    got = r.watch("FileResultStream")
    assert len(await events(got, 4)) == 4


async def test_siddhiIoFileTestForKeepAfterProcess(run: Any, files: Files) -> None:
    """dir.uri without action.after.process (and no tailing): 3 XML events (10000, 10003,
    10004), the file kept."""
    r = await run(app(f"@source(type='file', mode='line', dir.uri='file:/{files.new}/line/invalid', "
                      "tailing='false', @map(type='xml'))"))
    got = r.watch("BarStream")
    assert [row[2] for row in await events(got, 3)] == [10000, 10003, 10004]
    assert files.listing("line/invalid") == ["xml_logs.txt"]


async def test_siddhiIOFileTestForSkipReadOnlyHeader(run: Any, files: Files) -> None:
    """read.only.header='false': every line is read (Java waits for 7 events without asserting
    the count; asserted here)."""
    r = await run(_header_app(f"file.uri='file:{files.new}/line/header/test.txt', read.only.header='false', "
                              "tailing='false'", "code string, serialNo string, amount string", attributes=False))
    got = r.watch("FileResultStream")
    assert len(await events(got, 7)) == 7


async def test_siddhiIOFileTestForReadOnlyHeader(run: Any, files: Files) -> None:
    """read.only.header='true': only the first line is read (Java waits for 1 event; the count
    is asserted here), and action.after.process='keep' leaves the file."""
    r = await run(_header_app(f"file.uri='file:{files.new}/line/header/test.txt', read.only.header='true', "
                              "action.after.process='keep', tailing='false'",
                              "code string, serialNo string, amount string", attributes=False))
    got = r.watch("FileResultStream")
    assert await events(got, 1, settle=0.5) == [("DT", "Z220992770108", "774.05")]
    assert (files.new / "line/header/test.txt").exists()


async def test_siddhiIOFileKeepWithStatePersistence(tmp_path: Any, files: Files) -> None:
    """dir.uri, read.only.header, keep: 1 event; after a snapshot and a restore into a new
    runtime the kept file is not read again (no event)."""
    text = _header_app(f"dir.uri='file:{files.new}/line/header', read.only.header='true', "
                       "action.after.process='keep', tailing='false'",
                       "code string, serialNo string, amount string", attributes=False)
    config = ServiceConfig(http=HttpConfig(enabled=False), errors_database=str(tmp_path / "errors.db"),
                           persistence=PersistenceConfig(enabled=True, database=str(tmp_path / "state.db")))
    first = ServiceHost(config, app_texts=[text])
    await first.start()
    try:
        r = Running(first, next(iter(first.runtimes)))
        got = r.watch("FileResultStream")
        assert len(await events(got, 1)) == 1
    finally:
        await first.stop()  # stopping persists the state
    second = ServiceHost(config, app_texts=[text])
    await second.start()
    try:
        again = Running(second, next(iter(second.runtimes))).watch("FileResultStream")
        await asyncio.sleep(1.5)
        assert rows(again) == [], "When state persistence is enabled, the file should not be processed again."
    finally:
        await second.stop()


async def test_siddhiIOFileTestCronSupportForFile(run: Any, files: Files) -> None:
    """cron.expression='*/5 * * * * ?' with move: within 6 s the file is read (7 events) and
    moved to move.after.process."""
    r = await run(_header_app(f"file.uri='file:{files.new}/line/header/test.txt', "
                              "cron.expression='*/5 * * * * ?', action.after.process='move', tailing='false', "
                              f"move.after.process='{files.moved_uri('line/header/test.txt')}'",
                              "code string, serialNo string, amount double", attributes=False))
    got = r.watch("FileResultStream")
    assert len(await events(got, 7, timeout=6)) == 7
    assert (files.moved / "line/header/test.txt").exists()


async def test_regexFileNameTest(run: Any, files: Files) -> None:
    """file.name.pattern='^test-[\\d]+' reads test-1 and test-2 but not test: 2 events."""
    r = await run("@App:name('FileTest') @source(type='file', mode='line', action.after.process='NONE', "
                  f"tailing='true', dir.uri='file:/{files.new}/name_pattern', file.name.pattern='^test-[\\d]+', "
                  "@map(type='json')) define stream FooStream(symbol string, price float, volume long); "
                  "@sink(type='log') define stream BarStream(symbol string, price float, volume long); "
                  "from FooStream select * insert into BarStream;")
    got = r.watch("BarStream")
    # (each matching file is tailed on its own, so the two files' events come in either
    # order; the Java test counts them)
    assert sorted(row[1] for row in await events(got, 2, settle=0.5)) == [1.0, 2.0]


async def test_siddhiIOFileTestForReadOnlyTrailer(run: Any, files: Files) -> None:
    """read.only.trailer='true': only the last line, whose third field is 23122020172300."""
    r = await run(_header_app(f"header.present='true', file.uri='file:{files.new}/line/trailer/test.txt', "
                              "read.only.trailer='true', tailing='false'",
                              "RECORD_TYPE string, count int, SUBSCRIBER_MSISDN string", attributes=False))
    got = r.watch("FileResultStream")
    assert await events(got, 1, settle=0.5) == [("TD", 6, "23122020172300")]


@pytest.mark.xfail(strict=True, reason="a mapper difference, not the source's: Srota's csv mapper with "
                   "header='true' drops the first message it receives (as siddhi-map-csv's own suite asserts), so of "
                   "the 6 records the source delivers 5241 is dropped; here upstream siddhi-map-csv keeps it")
async def test_siddhiIOFileTestForSkipTrailer(run: Any, files: Files) -> None:
    """header.present and skip.trailer: the 6 records between header and trailer, with
    FEATURE_EXPIRY_DATE 5241..5246."""
    types = ("RECORD_TYPE string, FEATURE_EXPIRY_DATE string, FEATURE_EXPIRY_TIME string, "
             "SUBSCRIBER_MSISDN string, fp string, eof string")
    r = await run("@App:name('TestSiddhiApp') @source(type='file', mode='line', header.present='true', "
                  f"file.uri='file:{files.new}/line/trailer/test.txt', skip.trailer='true', tailing='false', "
                  "@map(type='csv', delimiter='|', header='true', @attributes(RECORD_TYPE = '0', "
                  "FEATURE_EXPIRY_DATE = '1', FEATURE_EXPIRY_TIME = '2', SUBSCRIBER_MSISDN = '3', "
                  "fp = 'trp:file.path', eof = 'trp:eof'))) "
                  f"define stream FileReaderStream ({types}); "
                  f"@sink(type='log') define stream FileResultStream ({types}); "
                  "from FileReaderStream select * insert into FileResultStream;")
    got = r.watch("FileResultStream")
    result = await events(got, 6, settle=0.5)
    assert [row[1] for row in result] == ["5241", "5242", "5243", "5244", "5245", "5246"]
