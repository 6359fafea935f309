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
    """Read a file once (tailing off: Siddhi's default tails line-mode files) to its end."""
    got = Collector()
    src = connectors.create_source("file", {"tailing": "false", **options}, name="F")
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
    assert first.properties == {"file.uri": str(path), "file.path": str(path), "file.name": "in.csv",
                                "line": 2, "eof": "false"}
    assert got.chunks[-1][-1].properties["eof"] == "true"
    assert first.ack is not None


async def test_text_full_mode(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_bytes(b'[{"a":1},\n{"a":2}]\n')
    got = Collector()
    src = FileSource({"file.uri": str(path), "mode": "text.full"})  # tailing is off by default here
    await src.start(got)
    await src.wait_finished(5)
    await src.stop()
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
    src = FileSource({"file.uri": str(tmp_path / "nope.txt"), "tailing": "false"})
    with pytest.raises(ConnectorError, match="does not exist"):
        await src.start(Collector())
    with pytest.raises(SiddhiAppCreationError, match="mode"):
        FileSource({"file.uri": "x", "mode": "xml"})
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

    # append=false: each payload replaces the file's content (siddhi-io-file's FileSinkTestCase 2/3)
    replace = FileSink({"file.uri": str(out), "append": "false", "add.line.separator": "false"})
    await replace.connect()
    await replace.publish([(b"a", {}), (b"b", {})])
    await replace.publish([(b"c", {})])
    await replace.close()
    assert out.read_bytes() == b"c"

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
    sink = FileSink({"file.uri": str(tmp_path / "{{k}}.txt"), "max.open.files": "3"})
    for round_ in range(2):
        await sink.publish([(f"{round_}-{i}".encode(), {"file.uri": str(tmp_path / f"{i}.txt")}) for i in range(10)])
        assert len(sink._files) <= 3
    await sink.close()
    # a file closed for the bound is opened again for appending
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


# ---------------------------------------------------------------- siddhi-io-file options and defaults

async def _collect(src: FileSource, n: int, timeout: float = 5.0) -> Collector:
    got = Collector()
    await src.start(got)
    async with asyncio.timeout(timeout):
        while len(got.payloads) < n:
            await asyncio.sleep(0.02)
    return got


async def test_line_mode_tails_by_default_and_keeps_the_file(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"one\n")
    src = FileSource({"file.uri": str(path), "file.polling.interval": "20"})
    assert src.tailing and src.action == "none"
    got = await _collect(src, 1)
    with open(path, "ab") as f:
        f.write(b"two\n")
    async with asyncio.timeout(3):
        while len(got.payloads) < 2:
            await asyncio.sleep(0.02)
    await src.stop()
    assert got.payloads == [b"one", b"two"] and path.exists()
    # the whole-file modes do not tail; not tailing, a file is kept by default
    full = FileSource({"file.uri": str(path), "mode": "text.full"})
    assert not full.tailing and full.action == "keep"


async def test_binary_full_and_binary_chunked(tmp_path: Path) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(bytes(range(256)) * 3)
    full = await _collect(FileSource({"file.uri": str(path), "mode": "binary.full"}), 1)
    assert full.payloads == [bytes(range(256)) * 3]
    chunked = FileSource({"file.uri": str(path), "mode": "binary.chunked", "buffer.size": "300"})
    got = await _collect(chunked, 3)
    await chunked.wait_finished(2)
    assert b"".join(got.payloads) == path.read_bytes()
    props = [m.properties for c in got.chunks for m in c]
    assert [(p["sequence.number"], p["content.length"], p["eof"]) for p in props] == [
        (1, 300, "false"), (2, 300, "false"), (3, 168, "true")]
    assert props[0]["file.name"] == "blob.bin"


async def test_regex_mode_begin_end_and_tailing(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_bytes(b"junk <e>1</e>\n<e>\n2\n</e> <e>3</e>")
    both = await replay({"file.uri": str(path), "mode": "regex", "begin.regex": "<e>", "end.regex": "</e>"})
    assert both.payloads == [b"<e>1</e>", b"<e>\n2\n</e>", b"<e>3</e>"]
    assert [m.properties["eof"] for c in both.chunks for m in c] == ["false", "false", "true"]
    begin = await replay({"file.uri": str(path), "mode": "regex", "begin.regex": "<e>"})
    assert begin.payloads == [b"<e>1</e>", b"<e>\n2\n</e>", b"<e>3</e>"]
    end = await replay({"file.uri": str(path), "mode": "regex", "end.regex": "</e>"})
    assert end.payloads == [b"junk <e>1</e>", b"<e>\n2\n</e>", b"<e>3</e>"]
    # tailing (the default in regex mode): an event is delivered once its end is written
    src = FileSource({"file.uri": str(path), "mode": "regex", "begin.regex": "<e>", "end.regex": "</e>",
                      "file.polling.interval": "20"})
    got = await _collect(src, 3)
    with open(path, "ab") as f:
        f.write(b"<e>4")
        f.flush()
        await asyncio.sleep(0.1)
        assert len(got.payloads) == 3
        f.write(b"</e>")
    async with asyncio.timeout(3):
        while len(got.payloads) < 4:
            await asyncio.sleep(0.02)
    await src.stop()
    assert got.payloads[-1] == b"<e>4</e>"


async def test_directory_delete_move_keep_and_new_files(tmp_path: Path) -> None:
    d = tmp_path / "in"
    d.mkdir()
    (d / "b.txt").write_bytes(b"b1\nb2\n")
    (d / "a.txt").write_bytes(b"a1\n")
    keep = FileSource({"dir.uri": f"file:{d}", "tailing": "false", "dir.polling.interval": "20"})
    got = await _collect(keep, 3)
    (d / "c.txt").write_bytes(b"c1\n")  # a new file is picked up; the kept ones are not read again
    async with asyncio.timeout(3):
        while len(got.payloads) < 4:
            await asyncio.sleep(0.02)
    await asyncio.sleep(0.1)
    await keep.stop()
    assert got.payloads == [b"a1", b"b1", b"b2", b"c1"]
    assert sorted(p.name for p in d.iterdir()) == ["a.txt", "b.txt", "c.txt"]

    moved = tmp_path / "done"
    (moved).mkdir()
    (moved / "a.txt").write_bytes(b"old")
    mover = FileSource({"dir.uri": str(d), "tailing": "false", "action.after.process": "move",
                        "move.after.process": str(moved), "move.if.exist.mode": "KEEP", "file.name.pattern": "[ab].txt"})
    await _collect(mover, 3)
    async with asyncio.timeout(3):
        while mover.files_processed < 2:
            await asyncio.sleep(0.02)
    await mover.stop()
    assert (moved / "a.txt").read_bytes() == b"old"  # KEEP: the existing file stays, the moved one is renamed
    assert sorted(p.name.split("-", 1)[-1] for p in moved.iterdir()) == ["a.txt", "a.txt", "b.txt"]
    assert sorted(p.name for p in d.iterdir()) == ["c.txt"]

    deleter = FileSource({"file.uri": str(d / "c.txt"), "tailing": "false", "action.after.process": "delete"})
    await _collect(deleter, 1)
    await deleter.wait_finished(2)
    await deleter.stop()
    assert not (d / "c.txt").exists()


async def test_unreadable_file_follows_action_after_failure(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"x\n")
    failed = tmp_path / "failed" / "bad.txt"
    src = FileSource({"file.uri": str(path), "tailing": "false", "action.after.failure": "move",
                      "move.after.failure": str(failed)})

    async def broken(*_a: object, **_k: object) -> None:
        raise OSError("disk error")

    monkeypatch.setattr(src, "_read", broken)
    await src.start(Collector())
    async with asyncio.timeout(3):
        while not failed.exists():
            await asyncio.sleep(0.02)
    await src.stop()
    assert not path.exists() and not src.finished


@pytest.mark.parametrize(("options", "message"), [
    ({"mode": "text.full", "tailing": "true"}, "tailing can't be enabled"),
    ({"mode": "binary.full", "begin.regex": "a", "end.regex": "b"}, "begin.regex"),
    ({"dir.uri": "/tmp"}, "exactly one of"),
    ({"file.uri": None}, "exactly one of"),
    ({"action.after.process": "move", "tailing": "false"}, "move.after.process' is mandatory"),
    ({"action.after.process": "delete", "move.after.process": "/x", "tailing": "false"}, "can only be used"),
    ({"move.after.process": "/x"}, "tailing"),
    ({"tailing": "false", "move.if.exist.mode": "KEEP"}, "move.if.exist.mode"),
    ({"tailing": "false", "cron.expression": "*/5 * * * * ?"}, "cron.expression"),
    ({"tailing": "false", "action.after.process": "move", "move.after.process": "/x",
      "cron.expression": "* 5 * * * * ?"}, "cron expression"),
    ({"read.only.header": "true"}, "tailing"),
    ({"tailing": "false", "read.only.trailer": "true", "skip.trailer": "true"}, "read.only.trailer"),
    ({"mode": "regex", "begin.regex": "(*<events>)"}, "regex"),
    ({"action.after.failure": "move"}, "move.after.failure"),
    ({"file.uri": "sftp://host/x"}, "local files only"),
    ({"foo": "bar"}, "unknown option 'foo'"),
])
def test_invalid_combinations_are_refused_at_creation(options: dict, message: str) -> None:
    given = {"file.uri": "file:/tmp/x.txt", **options}
    given = {k: v for k, v in given.items() if v is not None}
    with pytest.raises(SiddhiAppCreationError, match=message):
        FileSource(given)


def test_file_uris_as_siddhi_apps_write_them() -> None:
    from srota.connectors._file import uri_to_path
    assert uri_to_path("file://tmp/a/b.txt") == Path("/tmp/a/b.txt")  # 'file:/' + '/tmp/a/b.txt'
    assert uri_to_path("file:///tmp/a") == uri_to_path("file:/tmp/a") == Path("/tmp/a")
    assert uri_to_path("file://localhost/tmp/a") == Path("/tmp/a")
    assert uri_to_path("data/x.jsonl") == Path("data/x.jsonl")


def test_quartz_cron_schedule() -> None:
    import datetime as dt

    from srota.connectors._file_source import QuartzCron
    at = dt.datetime(2024, 1, 1, 10, 0, 3)  # a Monday
    assert QuartzCron("*/5 * * * * ?").next_after(at) == dt.datetime(2024, 1, 1, 10, 0, 5)
    assert QuartzCron("0 30 9 ? * MON-FRI").next_after(at) == dt.datetime(2024, 1, 2, 9, 30)
    assert QuartzCron("0 0 0 1 JAN ? 2025").next_after(at) == dt.datetime(2025, 1, 1)


async def test_kept_files_are_the_source_state_and_a_restored_source_skips_them(tmp_path: Path) -> None:
    """siddhi-io-file's FileSource keeps its processedFileList in the app's snapshot: a
    restored source does not read the kept files again, and reads new ones."""
    d = tmp_path / "in"
    d.mkdir()
    (d / "a.txt").write_bytes(b'{"ts": 1700000000000}\n')
    (d / "b.txt").write_bytes(b'{"ts": 1700000000001}\n')
    options = {"dir.uri": f"file:{d}", "tailing": "false", "dir.polling.interval": "20"}
    first = FileSource(options)
    assert first.state() is None  # nothing read yet: nothing to keep
    await _collect(first, 2)
    async with asyncio.timeout(3):
        while first.files_processed < 2:
            await asyncio.sleep(0.02)
    await first.stop()
    state = first.state()
    assert state == {"processedFileList": [str(d / "a.txt"), str(d / "b.txt")]}
    assert orjson.loads(orjson.dumps(state)) == state  # saved as JSON

    (d / "c.txt").write_bytes(b'{"ts": 1700000000002}\n')
    restored = FileSource(options)
    restored.restore_state(orjson.loads(orjson.dumps(state)))
    got = await _collect(restored, 1)
    await asyncio.sleep(0.2)  # several polls: a.txt and b.txt are not read again
    await restored.stop()
    assert got.payloads == [b'{"ts": 1700000000002}']
    assert restored.state() == {"processedFileList": [str(d / f) for f in ("a.txt", "b.txt", "c.txt")]}

    # One file (file.uri), kept: a restored source reads nothing and is finished at once.
    one = FileSource({"file.uri": str(d / "a.txt"), "tailing": "false"})
    one.restore_state({"processedFileList": [str(d / "a.txt")], "filePointer": "0"})  # unknown keys ignored
    nothing = Collector()
    await one.start(nothing)
    await one.wait_finished(2)
    await one.stop()
    assert nothing.payloads == []


async def test_only_files_kept_in_place_are_state(tmp_path: Path) -> None:
    """A moved or deleted file is not in the state (a new file of that name is read), nor is a
    tailed one (its position is, once its lines enter an app: see the next test)."""
    d = tmp_path / "in"
    d.mkdir()
    (d / "a.txt").write_bytes(b"a1\n")
    deleter = FileSource({"dir.uri": str(d), "tailing": "false", "action.after.process": "delete",
                          "dir.polling.interval": "20"})
    await _collect(deleter, 1)
    async with asyncio.timeout(3):
        while deleter.files_processed < 1:
            await asyncio.sleep(0.02)
    await deleter.stop()
    assert deleter.state() is None
    (d / "t.txt").write_bytes(b"t1\n")
    tailer = FileSource({"dir.uri": str(d), "dir.polling.interval": "20"})  # line mode tails
    await _collect(tailer, 1)
    await tailer.stop()
    assert tailer.state() is None


async def _entered(got: Collector, n: int) -> None:
    """Wait for ``n`` payloads and tell their chunks entered the app (as the host does)."""
    async with asyncio.timeout(5):
        while len(got.payloads) < n:
            await asyncio.sleep(0.02)
    for chunk in got.chunks:
        chunk[-1].ack.entered()


async def test_a_tailed_files_position_is_state_and_a_restored_source_goes_on_from_it(tmp_path: Path) -> None:
    """siddhi-io-file keeps a tailed file's filePointer in the app's snapshot: only lines that
    entered the app count; a restored source reads what came after them."""
    path = tmp_path / "a.log"
    path.write_bytes(b"h\none\ntwo\n")
    options = {"file.uri": str(path), "file.polling.interval": "20", "header.present": "true"}
    first = FileSource(options)
    got = await _collect(first, 2)
    assert first.state() is None  # delivered, but not in the app yet
    await _entered(got, 2)
    with open(path, "ab") as f:
        f.write(b"three\n")
    await _entered(got, 3)
    with open(path, "ab") as f:
        f.write(b"four\n")  # delivered, but the app never took it (a crash before its snapshot)
    async with asyncio.timeout(5):
        while len(got.payloads) < 4:
            await asyncio.sleep(0.02)
    await first.stop()
    state = first.state()
    assert state == {"filePointers": {str(path): [len(b"h\none\ntwo\nthree\n"), 4]}}
    assert orjson.loads(orjson.dumps(state)) == state

    with open(path, "ab") as f:
        f.write(b"five\n")
    restored = FileSource(options)
    restored.restore_state(orjson.loads(orjson.dumps(state)))
    again = await _collect(restored, 2)
    await asyncio.sleep(0.1)
    await restored.stop()
    assert again.payloads == [b"four", b"five"]  # at least once: "four" again, nothing before it
    assert [m.properties["line"] for c in again.chunks for m in c] == [5, 6]


async def test_a_tailed_file_shorter_than_its_restored_position_is_read_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"new\n")  # rotated: the old file was longer
    src = FileSource({"file.uri": str(path), "file.polling.interval": "20"})
    src.restore_state({"filePointers": {str(path): [1_000, 40], "other": "x"}, "processedFileList": "bad"})
    got = await _collect(src, 1)
    await src.stop()
    assert got.payloads == [b"new"]
    assert got.chunks[0][0].properties["line"] == 1
