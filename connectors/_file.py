"""``file``: replay a file as messages, and append payloads to files.

Source: in ``line`` mode each non-empty line is one message (JSON lines, CSV records ...; the
mapper decides), in ``text.full`` mode the whole file is one.  Replay runs as fast as
possible, or paced: ``rate`` messages per second, or by a timestamp in each line
(``timestamp.field``: a JSON key such as ``ts`` / ``$.event.ts``, or a column index of a
delimited line) scaled by ``playback.speed``.  With ``tailing`` the source then follows the
file for appended lines.  Pacing is the one place this transport looks into payloads, and it
only reads the timestamp.

Sink: appends each payload (bytes or text) to ``file.uri`` (which may be an
``{{attribute}}`` template, confined to ``base.dir``), adding a line separator unless the
payload already ends with one; ``flush()`` pushes the buffers to the OS.  File work runs on
a worker thread, and at most ``max.open.files`` files stay open.
"""
from __future__ import annotations

import asyncio
import datetime as _dt
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote, urlparse

import orjson
from srota.connectors._options import creation_error
from srota.connectors.base import AckToken, ConnectorError, Message, Sink, Source
from srota.engine.registry import Kind, Param, extension
from srota.grammar.model import AttrType

_S = (AttrType.STRING,)
_B = (AttrType.BOOL,)
_I = (AttrType.INT,)
_D = (AttrType.DOUBLE,)


def uri_to_path(uri: str) -> Path:
    """``file:///tmp/x.json`` or a plain path -> a :class:`Path`."""
    if uri.startswith("file:"):
        parsed = urlparse(uri)
        return Path(unquote(parsed.netloc + parsed.path))
    return Path(uri)


class FileAck(AckToken):
    """The position after a delivered chunk: ``line`` number and byte ``offset``."""

    __slots__ = ("line", "offset")

    def __init__(self, line: int, offset: int) -> None:
        self.line = line
        self.offset = offset


def _timestamp_reader(field: str, unit: str, delimiter: str) -> Callable[[bytes], float | None]:
    """Line -> timestamp in ms (None when the line has none)."""
    def to_ms(value: Any) -> float | None:
        if value is None or isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            return float(value) * (1000.0 if unit == "s" else 1.0)
        text = str(value).strip()
        if unit == "iso":
            stamp = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
            if stamp.tzinfo is None:
                stamp = stamp.replace(tzinfo=_dt.UTC)
            return stamp.timestamp() * 1000.0
        return float(text) * (1000.0 if unit == "s" else 1.0)

    if field.strip().lstrip("-").isdigit():
        column = int(field)
        sep = delimiter.encode()

        def from_column(line: bytes) -> float | None:
            parts = line.split(sep)
            return to_ms(parts[column].decode().strip().strip('"')) if -len(parts) <= column < len(parts) else None
        return from_column

    keys = [k for k in field.removeprefix("$").split(".") if k]

    def from_json(line: bytes) -> float | None:
        node: Any = orjson.loads(line)
        for key in keys:
            if not isinstance(node, dict) or key not in node:
                return None
            node = node[key]
        return to_ms(node)
    return from_json


_SOURCE_PARAMS = (
    Param("file.uri", _S, doc="The file to read: a path or a file:// URI."),
    Param("mode", _S, optional=True, default="line", doc="'line' (a message per line) or 'text.full'."),
    Param("header.present", _B, optional=True, default=False, doc="Skip the first line."),
    Param("tailing", _B, optional=True, default=False,
          doc="After the end of the file, keep reading lines appended to it."),
    Param("batch.size", _I, optional=True, default=1000, doc="The largest chunk handed to the host."),
    Param("rate", _D, optional=True, default=0.0,
          doc="Pace the replay at this many messages per second (0: as fast as possible)."),
    Param("timestamp.field", _S, optional=True, default=None,
          doc="Pace the replay by this timestamp: a JSON key (ts, $.event.ts) or a column index."),
    Param("timestamp.unit", _S, optional=True, default="ms", doc="'ms', 's' or 'iso' (ISO-8601 text)."),
    Param("delimiter", _S, optional=True, default=",", doc="Column separator for a numeric timestamp.field."),
    Param("playback.speed", _D, optional=True, default=1.0,
          doc="Timestamp pacing speed-up: 10 replays ten times faster than recorded."),
    Param("poll.interval", _I, optional=True, default=200, doc="Milliseconds between checks when tailing."),
)


@extension(Kind.SOURCE, "file", params=_SOURCE_PARAMS,
           doc="Replay a file (line by line or whole), optionally paced, optionally tailing.")
class FileSource(Source):
    """Reads ``file.uri`` and delivers its lines (see the module doc)."""

    type_name = "file"
    PARAMS = _SOURCE_PARAMS

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "", **kw: Any) -> None:
        super().__init__(options, name=name, **kw)
        o = self.options
        self.path = uri_to_path(o["file.uri"])
        where = f"file source '{self.name}'"
        if o["mode"].lower() not in ("line", "text.full"):
            raise creation_error(f"{where}: mode must be 'line' or 'text.full', not {o['mode']!r}", kw.get("pos"))
        if o["timestamp.unit"] not in ("ms", "s", "iso"):
            raise creation_error(f"{where}: timestamp.unit must be 'ms', 's' or 'iso'", kw.get("pos"))
        if o["rate"] < 0 or o["playback.speed"] <= 0 or o["batch.size"] < 1:
            raise creation_error(f"{where}: rate must be >= 0, playback.speed > 0 and batch.size >= 1",
                                 kw.get("pos"))
        self._timestamp = (_timestamp_reader(o["timestamp.field"], o["timestamp.unit"], o["delimiter"])
                           if o["timestamp.field"] else None)
        self._finished = asyncio.Event()
        self.lines_read = 0

    async def start(self, on_messages: Any) -> None:
        """Check the file exists (unless tailing, which waits for it) and start the replay."""
        if not self.options["tailing"] and not self.path.is_file():
            raise ConnectorError(f"file source '{self.name}': {self.path} does not exist")
        self._finished.clear()
        await super().start(on_messages)

    @property
    def finished(self) -> bool:
        """True when the whole file has been delivered (never while tailing)."""
        return self._finished.is_set()

    async def wait_finished(self, timeout: float | None = None) -> None:
        """Wait until the replay reached the end of the file (raises ``TimeoutError``)."""
        async with asyncio.timeout(timeout):
            await self._finished.wait()

    async def _run(self) -> None:
        o = self.options
        poll = o["poll.interval"] / 1000.0
        while not self.path.is_file():  # only when tailing: wait for the file to appear
            await asyncio.sleep(poll)
        with open(self.path, "rb") as f:  # noqa: ASYNC230 - reads go through to_thread below
            self._ready.set()
            self._log.info("file source reading", path=str(self.path))
            if o["mode"].lower() == "text.full":
                data = await asyncio.to_thread(f.read)
                await self._deliver([Message(data, {"file.uri": str(self.path)}, FileAck(1, len(data)))])
                self._finished.set()
                return
            await self._replay_lines(f, poll)

    async def _replay_lines(self, f: IO[bytes], poll: float) -> None:
        o = self.options
        limit = o["batch.size"]
        skip_header = o["header.present"]
        carry = b""
        offset = 0
        line_no = 0
        rate = o["rate"]
        speed = o["playback.speed"]
        start_wall: float | None = None
        first_ts: float | None = None
        path = str(self.path)
        while not self._stopping:
            raw = await asyncio.to_thread(f.readlines, 64 * 1024)
            if not raw:
                if not o["tailing"]:
                    if carry.strip():  # the last line has no newline
                        raw, carry = [carry], b""
                    else:
                        break
                else:
                    await asyncio.sleep(poll)
                    continue
            if carry:
                raw[0] = carry + raw[0]
                carry = b""
            if o["tailing"] and not raw[-1].endswith(b"\n"):
                carry = raw.pop()  # a line still being written; finish it on the next read
            chunk: list[Message] = []
            for line in raw:
                offset += len(line)
                line_no += 1
                if skip_header:
                    skip_header = False
                    continue
                text = line.rstrip(b"\r\n")
                if not text.strip():
                    continue
                target = None
                if rate > 0 or self._timestamp is not None:
                    now = time.monotonic()
                    if start_wall is None:
                        start_wall = now
                    if self._timestamp is not None:
                        ts = self._line_timestamp(text, line_no)
                        if ts is not None:
                            if first_ts is None:
                                first_ts = ts
                            target = start_wall + (ts - first_ts) / 1000.0 / speed
                    else:
                        target = start_wall + self.lines_read / rate
                    if target is not None and target > now:
                        if chunk:
                            await self._deliver(chunk)
                            chunk = []
                        await asyncio.sleep(target - now)
                chunk.append(Message(text, {"file.uri": path, "line": line_no}, FileAck(line_no, offset)))
                self.lines_read += 1
                if len(chunk) >= limit:
                    await self._deliver(chunk)
                    chunk = []
                if self._stopping:
                    return
            if chunk:
                await self._deliver(chunk)
        self._finished.set()
        self._log.info("file source finished", path=path, lines=self.lines_read)

    def _line_timestamp(self, text: bytes, line_no: int) -> float | None:
        assert self._timestamp is not None
        try:
            return self._timestamp(text)
        except (ValueError, IndexError, orjson.JSONDecodeError, UnicodeDecodeError):
            # Unpaced rather than dropped: the mapper decides whether the line is valid.
            self._log.debug("no timestamp in line; not paced", line=line_no)
            return None

    async def commit(self, tokens: Any) -> None:
        """No-op: a replayed file is read from its start on every run."""


_SINK_PARAMS = (
    Param("file.uri", _S, dynamic=True, doc="The file to append to; may be an {{attribute}} template."),
    Param("append", _B, optional=True, default=True, doc="Append (true) or truncate the file on connect."),
    Param("add.line.separator", _B, optional=True, default=True,
          doc="End each payload with a newline unless it already ends with one."),
    Param("base.dir", _S, optional=True, default=None,
          doc="The directory a templated file.uri must stay in (default: the directory of the "
              "template's text before its first {{attribute}}); a path outside it is refused."),
    Param("max.open.files", _I, optional=True, default=64,
          doc="Files kept open at once; the least recently written is closed beyond that."),
)


class _Outside(ValueError):
    """A rendered path that leaves the sink's base directory."""


@extension(Kind.SINK, "file", params=_SINK_PARAMS, doc="Append payloads to files.")
class FileSink(Sink):
    """Writes payloads to files, one file per distinct ``file.uri``.

    A templated ``file.uri`` (``/data/{{symbol}}.csv``) is rendered from each event, so the
    event decides the path: the rendered path must resolve inside ``base.dir`` (``../`` or a
    symlink out of it is refused, logged and counted in :attr:`rejected`).  At most
    ``max.open.files`` files stay open (least recently written closed first), and every file
    operation runs on a worker thread, never on the event loop.
    """

    type_name = "file"
    PARAMS = _SINK_PARAMS

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "", **kw: Any) -> None:
        super().__init__(options, name=name, **kw)
        o = self.options
        self._files: OrderedDict[Path, IO[bytes]] = OrderedDict()
        self._truncated: set[Path] = set()  # (append=false: each file is truncated once only)
        self._io = threading.Lock()
        self.rejected = 0
        if o["max.open.files"] < 1:
            raise creation_error(f"file sink '{self.name}': max.open.files must be at least 1", kw.get("pos"))
        template = str(o["file.uri"])
        self._base: Path | None = None
        if o["base.dir"]:
            self._base = uri_to_path(o["base.dir"]).resolve()
        elif "{{" in template:
            static = template.split("{{", 1)[0]
            prefix = uri_to_path(static) if static not in ("", "file:", "file://") else Path(".")
            self._base = (prefix if static.endswith(("/", "\\")) or not static else prefix.parent).resolve()

    def _path(self, uri: str) -> Path:
        if "\x00" in uri:
            raise _Outside(f"{uri!r} contains a NUL byte")
        path = uri_to_path(uri)
        if self._base is None:
            return path
        resolved = path.resolve()
        if not resolved.is_relative_to(self._base):
            raise _Outside(f"{uri!r} resolves to {resolved}, outside {self._base}")
        return resolved

    def _open(self, path: Path) -> IO[bytes]:
        """The open file for ``path`` (called on a worker thread, under ``_io``)."""
        f = self._files.get(path)
        if f is not None:
            self._files.move_to_end(path)
            return f
        while len(self._files) >= self.options["max.open.files"]:
            _, old = self._files.popitem(last=False)
            old.close()
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = "ab"
        if not self.options["append"] and path not in self._truncated:
            mode = "wb"
            self._truncated.add(path)
        f = open(path, mode)  # noqa: SIM115 - kept open until evicted or close()
        self._files[path] = f
        return f

    def _write(self, batch: list[tuple[str, bytes]]) -> None:
        with self._io:
            for uri, data in batch:
                try:
                    path = self._path(uri)
                except _Outside as exc:
                    self.rejected += 1
                    self._log.error("file sink refused a path", reason=str(exc), rejected=self.rejected)
                    continue
                self._open(path).write(data)

    async def connect(self) -> None:
        """Open the file now when its name is static (so permission problems show early)."""
        uri = self.options["file.uri"]
        if "{{" not in uri:
            def open_static() -> None:
                with self._io:
                    self._open(self._path(uri))
            try:
                await asyncio.to_thread(open_static)
            except OSError as exc:
                raise ConnectorError(f"file sink '{self.name}': cannot open {uri}: {exc}") from exc

    async def publish(self, items: Sequence[tuple[Any, Mapping[str, Any]]]) -> None:
        """Append each payload (bytes or text), on a worker thread."""
        newline = self.options["add.line.separator"]
        batch: list[tuple[str, bytes]] = []
        for payload, props in items:
            if isinstance(payload, str):
                data = payload.encode()
            elif isinstance(payload, (bytes, bytearray, memoryview)):
                data = bytes(payload)
            else:
                raise TypeError(f"file sink '{self.name}' writes bytes or text, not {type(payload).__name__}; "
                                "map the stream with a json or csv mapper")
            if newline and not data.endswith(b"\n"):
                data += b"\n"
            batch.append((str(self._option(props, "file.uri")), data))
        if batch:
            await asyncio.to_thread(self._write, batch)

    async def flush(self) -> None:
        """Push the buffered bytes to the OS."""
        def flush_all() -> None:
            with self._io:
                for f in self._files.values():
                    f.flush()
        if self._files:
            await asyncio.to_thread(flush_all)

    async def close(self) -> None:
        """Flush and close every file."""
        def close_all() -> None:
            with self._io:
                for f in self._files.values():
                    f.close()
                self._files.clear()
        await asyncio.to_thread(close_all)
