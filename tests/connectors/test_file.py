"""The file source (replay, pacing, tailing) and file sink."""
from __future__ import annotations

import asyncio
import time
from pathlib import Path

import orjson
import pytest
from srota.connectors import ConnectorError, FileSink, FileSource, Message
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Attribute, AttrType

from srota import connectors, mappers


class Collector:
    def __init__(self) -> None:
        self.chunks: list[list[Message]] = []
        self.times: list[float] = []

    async def __call__(self, messages: list[Message]) -> None:
        self.chunks.append(messages)
        self.times.extend(time.monotonic() for _ in messages)

    @property
    def payloads(self) -> list[bytes]:
        return [m.payload for c in self.chunks for m in c]


async def replay(options: dict, timeout: float = 5.0) -> Collector:
    got = Collector()
    src = connectors.create_source("file", options, name="F")
    await src.start(got)
    assert isinstance(src, FileSource)
    await src.wait_finished(timeout)
    await src.stop()
    return got


async def test_replays_lines_with_header_blank_lines_and_no_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_bytes(b"symbol,price\r\nA,1\r\n\r\nB,2\nC,3")
    got = await replay({"file.uri": f"file://{path}", "header.present": "true", "batch.size": "2"})
    assert got.payloads == [b"A,1", b"B,2", b"C,3"]
    assert [len(c) for c in got.chunks] == [2, 1] or [len(c) for c in got.chunks] == [1, 2]
    first = got.chunks[0][0]
    assert first.properties == {"file.uri": str(path), "line": 2}
    assert first.ack is not None


async def test_text_full_mode(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_bytes(b'[{"a":1},\n{"a":2}]\n')
    got = await replay({"file.uri": str(path), "mode": "text.full"})
    assert got.payloads == [b'[{"a":1},\n{"a":2}]\n']


async def test_json_lines_through_a_mapper(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(orjson.dumps({"event": {"id": i, "v": i * 0.5}}).decode() for i in range(100)))
    got = await replay({"file.uri": str(path), "batch.size": 30})
    m = mappers.JsonSourceMapper((Attribute("id", AttrType.INT), Attribute("v", AttrType.DOUBLE)))
    rows = [r for p in got.payloads for r in m.map(p)]
    assert rows == [(i, i * 0.5) for i in range(100)]
    assert [len(c) for c in got.chunks] == [30, 30, 30, 10]


async def test_rate_pacing(tmp_path: Path) -> None:
    path = tmp_path / "r.txt"
    path.write_text("".join(f"{i}\n" for i in range(6)))
    got = await replay({"file.uri": str(path), "rate": "50"})
    assert got.payloads == [str(i).encode() for i in range(6)]
    assert got.times[-1] - got.times[0] >= 5 / 50 * 0.9


async def test_timestamp_pacing_json_and_column(tmp_path: Path) -> None:
    path = tmp_path / "ts.jsonl"
    path.write_text('{"event":{"ts":1000,"v":1}}\n{"event":{"ts":1100,"v":2}}\n'
                    '{"event":{"v":"no ts"}}\n{"event":{"ts":1300,"v":3}}\n')
    got = await replay({"file.uri": str(path), "timestamp.field": "$.event.ts", "playback.speed": "2"})
    assert len(got.payloads) == 4
    assert got.times[-1] - got.times[0] >= 0.3 / 2 * 0.9
    assert got.times[1] - got.times[0] >= 0.1 / 2 * 0.8

    csv_path = tmp_path / "ts.csv"
    csv_path.write_text("a;0.0\nb;0.1\nc;0.2\n")
    got = await replay({"file.uri": str(csv_path), "timestamp.field": "1", "timestamp.unit": "s",
                        "delimiter": ";"})
    assert got.payloads == [b"a;0.0", b"b;0.1", b"c;0.2"]
    assert got.times[-1] - got.times[0] >= 0.18

    iso = tmp_path / "iso.jsonl"
    iso.write_text('{"t":"2024-01-01T00:00:00Z"}\n{"t":"2024-01-01T00:00:00.150Z"}\n')
    got = await replay({"file.uri": str(iso), "timestamp.field": "t", "timestamp.unit": "iso"})
    assert got.times[-1] - got.times[0] >= 0.13


async def test_tailing_follows_appended_lines(tmp_path: Path) -> None:
    path = tmp_path / "tail.log"
    path.write_bytes(b"one\n")
    got = Collector()
    src = FileSource({"file.uri": str(path), "tailing": "true", "poll.interval": "20"})
    await src.start(got)
    await src.wait_ready(2)
    with open(path, "ab") as f:
        f.write(b"two\nthr")
        f.flush()
        await asyncio.sleep(0.1)
        f.write(b"ee\n")
    async with asyncio.timeout(3):
        while len(got.payloads) < 3:
            await asyncio.sleep(0.02)
    assert got.payloads == [b"one", b"two", b"three"]
    assert not src.finished
    await src.stop()


async def test_tailing_waits_for_the_file(tmp_path: Path) -> None:
    path = tmp_path / "later.log"
    got = Collector()
    src = FileSource({"file.uri": str(path), "tailing": "true", "poll.interval": "20"})
    await src.start(got)
    await asyncio.sleep(0.05)
    assert not src.ready
    path.write_bytes(b"x\n")
    async with asyncio.timeout(3):
        while not got.payloads:
            await asyncio.sleep(0.02)
    await src.stop()


async def test_missing_file_and_bad_options(tmp_path: Path) -> None:
    src = FileSource({"file.uri": str(tmp_path / "nope.txt")})
    with pytest.raises(ConnectorError, match="does not exist"):
        await src.start(Collector())
    with pytest.raises(SiddhiAppCreationError, match="mode"):
        FileSource({"file.uri": "x", "mode": "regex"})
    with pytest.raises(SiddhiAppCreationError, match="timestamp.unit"):
        FileSource({"file.uri": "x", "timestamp.unit": "days"})
    with pytest.raises(SiddhiAppCreationError, match="rate"):
        FileSource({"file.uri": "x", "rate": "-1"})


async def test_sink_appends_lines_and_dynamic_files(tmp_path: Path) -> None:
    out = tmp_path / "out" / "events.jsonl"
    sink = connectors.create_sink("file", {"file.uri": str(out)})
    assert isinstance(sink, FileSink)
    await sink.connect()
    await sink.publish([(b'{"a":1}', {}), ("text", {}), (b"csv,line\n", {})])
    await sink.flush()
    assert out.read_bytes() == b'{"a":1}\ntext\ncsv,line\n'
    await sink.close()

    again = FileSink({"file.uri": f"file://{out}"})
    await again.connect()
    await again.publish([(b"more", {})])
    await again.close()
    assert out.read_bytes().endswith(b"csv,line\nmore\n")

    truncate = FileSink({"file.uri": str(out), "append": "false", "add.line.separator": "false"})
    await truncate.connect()
    await truncate.publish([(b"a", {}), (b"b", {})])
    await truncate.close()
    assert out.read_bytes() == b"ab"

    dynamic = FileSink({"file.uri": str(tmp_path / "by-symbol" / "{{symbol}}.csv")})
    await dynamic.connect()
    await dynamic.publish([(b"A,1", {"file.uri": str(tmp_path / "by-symbol" / "A.csv")}),
                           (b"B,1", {"file.uri": str(tmp_path / "by-symbol" / "B.csv")}),
                           (b"A,2", {"file.uri": str(tmp_path / "by-symbol" / "A.csv")})])
    await dynamic.close()
    assert (tmp_path / "by-symbol" / "A.csv").read_bytes() == b"A,1\nA,2\n"
    assert (tmp_path / "by-symbol" / "B.csv").read_bytes() == b"B,1\n"

    with pytest.raises(TypeError, match="json or csv mapper"):
        await FileSink({"file.uri": str(out)}).publish([(("row",), {})])


async def test_file_round_trip_with_mappers(tmp_path: Path) -> None:
    attrs = (Attribute("s", AttrType.STRING), Attribute("n", AttrType.LONG))
    path = tmp_path / "rt.csv"
    sink = FileSink({"file.uri": str(path)})
    await sink.connect()
    rows = [("a,b", 1), ("multi\u00e9", 2), (None, 3)]
    await sink.publish(mappers.map_for_sink(mappers.CsvSinkMapper(attrs), rows))
    await sink.close()
    got = await replay({"file.uri": str(path)})
    src = mappers.CsvSourceMapper(attrs)
    # siddhi-map-csv writes a null as `null`, which reads back as that text for a string.
    assert [r for p in got.payloads for r in src.map(p)] == [("a,b", 1), ("multi\u00e9", 2), ("null", 3)]


async def test_sink_confines_templated_paths_to_the_base_directory(tmp_path: Path) -> None:
    """`{{attr}}` comes from the event: '../../x' must not write outside the sink's directory."""
    base = tmp_path / "by-symbol"
    sink = FileSink({"file.uri": str(base / "{{symbol}}.csv")})
    await sink.connect()
    outside = tmp_path / "escaped.csv"
    await sink.publish([(b"ok", {"file.uri": str(base / "A.csv")}),
                        (b"evil", {"file.uri": str(base / ".." / "escaped.csv")}),
                        (b"deep", {"file.uri": str(base / "sub" / ".." / ".." / ".." / "etc.csv")}),
                        (b"nested", {"file.uri": str(base / "x" / "B.csv")})])
    await sink.close()
    assert (base / "A.csv").read_bytes() == b"ok\n"
    assert (base / "x" / "B.csv").read_bytes() == b"nested\n"  # a subdirectory of the base is fine
    assert not outside.exists() and not (tmp_path.parent / "etc.csv").exists()
    assert sink.rejected == 2

    (base / "link").symlink_to(tmp_path)  # a symlink out of the base is refused too
    linked = FileSink({"file.uri": f"file://{base}/{{{{symbol}}}}.csv"})
    await linked.publish([(b"x", {"file.uri": f"file://{base}/link/escaped.csv"})])
    await linked.close()
    assert not outside.exists() and linked.rejected == 1

    explicit = FileSink({"file.uri": "{{path}}", "base.dir": str(base)})
    await explicit.publish([(b"p", {"file.uri": str(base / "C.csv")}), (b"q", {"file.uri": "/etc/passwd-x"})])
    await explicit.close()
    assert (base / "C.csv").read_bytes() == b"p\n" and explicit.rejected == 1


async def test_sink_bounds_open_files_and_keeps_appending(tmp_path: Path) -> None:
    sink = FileSink({"file.uri": str(tmp_path / "{{k}}.txt"), "max.open.files": "3", "append": "false"})
    for round_ in range(2):
        await sink.publish([(f"{round_}-{i}".encode(), {"file.uri": str(tmp_path / f"{i}.txt")}) for i in range(10)])
        assert len(sink._files) <= 3
    await sink.close()
    # a file closed for the bound is opened again for appending, not truncated again
    assert all((tmp_path / f"{i}.txt").read_bytes() == f"0-{i}\n1-{i}\n".encode() for i in range(10))


async def test_sink_writes_off_the_event_loop(tmp_path: Path, monkeypatch) -> None:
    import threading
    loop_thread = threading.get_ident()
    seen: list[int] = []
    sink = FileSink({"file.uri": str(tmp_path / "{{k}}.txt")})
    original = sink._open

    def spy(path):
        seen.append(threading.get_ident())
        return original(path)

    monkeypatch.setattr(sink, "_open", spy)
    await sink.publish([(b"a", {"file.uri": str(tmp_path / "a.txt")})])
    await sink.close()
    assert seen and loop_thread not in seen
