"""siddhi-io-file ``FileSinkTestCase``, ported: each Java ``@Test`` is one test here, named after
it.  The Java tests send to FooStream, which is copied into BarStream, whose ``file`` sink writes
``files/sink`` (or the copied ``sink_repo`` files in ``files/new``).  ``Thread.sleep(100)``
becomes polling until the files hold what is expected."""
from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from srota.service.config import HttpConfig, PersistenceConfig, ServiceConfig
from srota.service.host import ServiceHost

from tests.connectors.upstream.file.support import RESOURCES, until
from tests.mappers.harness import Running

STOCKS = [("WSO2", 55.6, 100), ("IBM", 57.678, 100), ("GOOGLE", 50.0, 100), ("REDHAT", 50.0, 100)]


def _json(symbol: str, price: float, volume: int) -> str:
    return f'{{"event":{{"symbol":"{symbol}","price":{price},"volume":{volume}}}}}'


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    """(dirUri: sink_repo copied to files/new, sinkUri: files/sink)."""
    new = tmp_path / "files" / "new"
    shutil.copytree(RESOURCES / "sink_repo", new)
    return new, tmp_path / "files" / "sink"


def _app(sink: str) -> str:
    return ("@App:name('TestSiddhiApp') define stream FooStream (symbol string, price float, volume long); "
            f"{sink} define stream BarStream (symbol string, price float, volume long); "
            "from FooStream select * insert into BarStream;")


async def _send(run: Any, sink: str, stocks: list[tuple[str, float, int]] = STOCKS) -> Any:
    r = await run(_app(sink))
    for row in stocks:
        r.send("FooStream", row)
    return r


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def test_fileSinkTest1(run: Any, dirs: tuple[Path, Path]) -> None:
    """A {{symbol}} file.uri template, append='false': one file per symbol, 4 files."""
    _, sink = dirs
    await _send(run, f"@sink(type='file', @map(type='json'), append='false', file.uri='{sink}/{{{{symbol}}}}.json')")
    names = {"WSO2.json", "IBM.json", "GOOGLE.json", "REDHAT.json"}
    await until(lambda: sink.is_dir() and names <= {p.name for p in sink.iterdir()}, 5)


async def test_fileSinkTest2(run: Any, dirs: tuple[Path, Path]) -> None:
    """append='false' on an existing empty file: each event replaces the content, so the file
    holds one line, the last event's."""
    new, _ = dirs
    await _send(run, f"@sink(type='file', @map(type='json'), append='false', file.uri='{new}/empty.txt')")
    last = _json("REDHAT", 50.0, 100)
    await until(lambda: _lines(new / "empty.txt") == [last], 5)


async def test_fileSinkTest3(run: Any, dirs: tuple[Path, Path]) -> None:
    """append='false' on a file with content: it is replaced; one line, the last event's."""
    new, _ = dirs
    await _send(run, f"@sink(type='file', @map(type='json'), append='false', file.uri='{new}/apache.json')")
    last = _json("REDHAT", 50.0, 100)
    await until(lambda: _lines(new / "apache.json") == [last], 5)


async def test_fileSinkTest4(run: Any, dirs: tuple[Path, Path]) -> None:
    """append='true' to a new file: the 4 events, one a line."""
    new, _ = dirs
    await _send(run, f"@sink(type='file', @map(type='json'), append='true', file.uri='{new}/newFile.json')")
    await until(lambda: _lines(new / "newFile.json") == [_json(*s) for s in STOCKS], 5)


async def test_fileSinkTest5(run: Any, dirs: tuple[Path, Path]) -> None:
    """append='true' to an existing empty file: the 4 events."""
    new, _ = dirs
    await _send(run, f"@sink(type='file', @map(type='json'), append='true', file.uri='{new}/empty.txt')")
    await until(lambda: _lines(new / "empty.txt") == [_json(*s) for s in STOCKS], 5)


async def test_fileSinkTest6(run: Any, dirs: tuple[Path, Path]) -> None:
    """append='true' to a file with one line: that line and the 4 events, 5 lines."""
    new, _ = dirs
    await _send(run, f"@sink(type='file', @map(type='json'), append='true', file.uri='{new}/apache.json')")
    expected = [_json("apache", 80.0, 100)] + [_json(*s) for s in STOCKS]
    await until(lambda: _lines(new / "apache.json") == expected, 5)


async def test_fileSinkTest7(run: Any, dirs: tuple[Path, Path]) -> None:
    """A {{symbol}} template with append='true': 4 files; WSO2.json and IBM.json hold their two
    events in order."""
    _, sink = dirs
    stocks = STOCKS + [("WSO2", 56.6, 200), ("IBM", 58.678, 200)]
    await _send(run, f"@sink(type='file', @map(type='json'), append='true', file.uri='{sink}/{{{{symbol}}}}.json')",
                stocks)
    await until(lambda: len(_lines(sink / "WSO2.json")) == 2 and len(_lines(sink / "IBM.json")) == 2, 5)
    assert {p.name for p in sink.iterdir()} == {"WSO2.json", "IBM.json", "GOOGLE.json", "REDHAT.json"}
    assert _lines(sink / "WSO2.json") == [_json("WSO2", 55.6, 100), _json("WSO2", 56.6, 200)]
    assert _lines(sink / "IBM.json") == [_json("IBM", 57.678, 100), _json("IBM", 58.678, 200)]


async def test_fileSinkTest8(run: Any, dirs: tuple[Path, Path]) -> None:
    """A {{symbol}} template with the text mapper: 4 files."""
    _, sink = dirs
    await _send(run, f"@sink(type='file', @map(type='text'), append='false', file.uri='{sink}/{{{{symbol}}}}.txt')")
    names = {"WSO2.txt", "IBM.txt", "GOOGLE.txt", "REDHAT.txt"}
    await until(lambda: sink.is_dir() and names <= {p.name for p in sink.iterdir()}, 5)


async def test_fileSinkTest9(run: Any, dirs: tuple[Path, Path]) -> None:
    """A {{symbol}} template with the xml mapper: 4 files."""
    _, sink = dirs
    await _send(run, f"@sink(type='file', @map(type='xml'), append='false', file.uri='{sink}/{{{{symbol}}}}.xml')")
    names = {"WSO2.xml", "IBM.xml", "GOOGLE.xml", "REDHAT.xml"}
    await until(lambda: sink.is_dir() and names <= {p.name for p in sink.iterdir()}, 5)


async def test_fileSinkTest10(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    """xml files by symbol across a snapshot and a restore: two events, the app shut down and
    its state restored into a new runtime, two more events: 4 files.

    Srota's host persists on its own: stopping the host saves the snapshot, and a new host on
    the same state database restores it when it starts."""
    _, sink = dirs
    text = _app(f"@sink(type='file', @map(type='xml'), append='false', file.uri='{sink}/{{{{symbol}}}}.xml')")
    config = ServiceConfig(http=HttpConfig(enabled=False), errors_database=str(tmp_path / "errors.db"),
                           persistence=PersistenceConfig(enabled=True, database=str(tmp_path / "state.db")))
    for stocks in (STOCKS[:2], STOCKS[2:]):
        host = ServiceHost(config, app_texts=[text])
        await host.start()
        try:
            r = Running(host, next(iter(host.runtimes)))
            for row in stocks:
                r.send("FooStream", row)
            names = {f"{symbol}.xml" for symbol, _, _ in stocks}
            await until(lambda names=names: sink.is_dir() and names <= {p.name for p in sink.iterdir()}, 5)
        finally:
            await host.stop()
    assert {p.name for p in sink.iterdir()} == {"WSO2.xml", "IBM.xml", "GOOGLE.xml", "REDHAT.xml"}


async def test_fileSinkTest11(run: Any, dirs: tuple[Path, Path]) -> None:
    """add.line.separator='false' (append given twice, 'true' then 'false'): every file in the
    sink directory has one line."""
    _, sink = dirs
    await _send(run, "@sink(type='file', append='true', add.line.separator='false', @map(type='xml'), "
                     f"append='false', file.uri='{sink}/test1.xml')")
    await until(lambda: "REDHAT" in ((sink / "test1.xml").read_text() if (sink / "test1.xml").exists() else ""), 5)
    await asyncio.sleep(0.3)
    assert [p.name for p in sink.iterdir()] == ["test1.xml"]
    assert len(_lines(sink / "test1.xml")) == 1


async def test_fileSinkTest12(run: Any, dirs: tuple[Path, Path]) -> None:
    """xml with append: 4 lines (one message a line)."""
    _, sink = dirs
    await _send(run, f"@sink(type='file', @map(type='xml'), append='true', file.uri='{sink}/test2.xml')")
    await until(lambda: len(_lines(sink / "test2.xml")) == 4, 5)
    await asyncio.sleep(0.3)
    assert [p.name for p in sink.iterdir()] == ["test2.xml"]
    assert len(_lines(sink / "test2.xml")) == 4


async def test_fileSinkTest13(run: Any, dirs: tuple[Path, Path]) -> None:
    """csv with add.line.separator='false': the csv payloads end with a line break, so 4 lines."""
    _, sink = dirs
    await _send(run, f"@sink(type='file', add.line.separator='false', @map(type='csv'), append='true', "
                     f"file.uri='{sink}/test3.xml')")
    await until(lambda: len(_lines(sink / "test3.xml")) == 4, 5)
    assert [p.name for p in sink.iterdir()] == ["test3.xml"]


async def test_fileSinkTest14(run: Any, dirs: tuple[Path, Path]) -> None:
    """csv with the default add.line.separator (off for csv in Siddhi; Srota adds none to a
    payload that ends with one): 4 lines."""
    _, sink = dirs
    await _send(run, f"@sink(type='file', @map(type='csv'), append='true', file.uri='{sink}/test4.xml')")
    await until(lambda: len(_lines(sink / "test4.xml")) == 4, 5)
    assert (sink / "test4.xml").read_text().count("\n") == 4
