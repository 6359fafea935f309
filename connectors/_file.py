"""``file``: read files as Siddhi's siddhi-io-file does, and write payloads to files.

Source (options and defaults as in siddhi-io-file): ``file.uri`` names one file, ``dir.uri`` a
directory whose files are read in name order and which is then watched for new files
(``file.name.pattern`` filters them).  ``mode``: ``line`` (an event per non-blank line, trimmed),
``text.full`` / ``binary.full`` (a file is one event), ``binary.chunked`` (``buffer.size``
bytes an event) or ``regex`` (``begin.regex`` / ``end.regex`` cut the text into events).
``tailing`` (the default in line and regex mode) keeps following a file for appended text;
otherwise, once read, a file is deleted, moved (``move.after.process``, ``move.if.exist.mode``)
or kept (``action.after.process``; default keep, none when tailing), and a file that cannot be
read is handled by ``action.after.failure`` (default delete).  ``cron.expression`` reads and
moves the file(s) on a Quartz schedule instead.  Invalid combinations are refused when the app
is created, with siddhi-io-file's checks.  Only local files are read (no ftp/sftp/smb/webdav).
The files read to their end and left in place (``keep``, ``none``; not tailed) are the source's
state in the app's snapshots (``processedFileList``, as siddhi-io-file's ``FileSource``
keeps it): a restored app does not read them again.  So is the position in each file tailed
in line mode after the last line that entered the app (``filePointers``, siddhi-io-file's
``filePointer``): a restored app goes on from there (lines after the snapshot are read again,
at least once; a file now shorter than the position is read from its start).  Regex mode
tailing starts over (its partly read event is not kept).

Srota's own extras: line-mode replays can be paced, ``rate`` messages per second, or by a
timestamp in each line (``timestamp.field``: a JSON key such as ``ts`` / ``$.event.ts``, or a
column index of a delimited line) scaled by ``playback.speed``; pacing is the one place this
transport looks into payloads, and it only reads the timestamp.

Sink: appends each payload (bytes or text) to ``file.uri`` (which may be an ``{{attribute}}``
template, confined to ``base.dir``), or with ``append='false'`` replaces the file's content
with each payload (as siddhi-io-file does), adding a line separator unless the payload already
ends with one; ``flush()`` pushes the buffers to the OS.  File work runs on a worker thread, and
at most ``max.open.files`` files stay open.
"""
from __future__ import annotations

import asyncio
import codecs
import contextlib
import datetime as _dt
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn
from urllib.parse import unquote, urlparse

import orjson
from srota.connectors._file_source import CronError, QuartzCron, RegexSplitter, move_file, regex_pattern
from srota.connectors._options import creation_error
from srota.connectors.base import AckToken, ConnectorError, Message, Sink, Source
from srota.engine.registry import Kind, Param, extension
from srota.grammar.model import AttrType

_S = (AttrType.STRING,)
_B = (AttrType.BOOL,)
_I = (AttrType.INT,)
_D = (AttrType.DOUBLE,)


#: URI schemes of remote file systems siddhi-io-file reaches through Commons VFS.
_REMOTE_SCHEMES = frozenset({"ftp", "sftp", "smb", "webdav", "http", "https"})


def uri_to_path(uri: str) -> Path:
    """``file:///tmp/x.json``, ``file:/tmp/x.json`` or a plain path -> a :class:`Path`.

    ``file://tmp/x`` (what ``'file:/' + '/tmp/x'`` gives, as Siddhi apps often write) is
    ``/tmp/x``: a local file URI has no host, so, as Commons VFS does, the "host" is read as
    the first directory."""
    if uri.startswith("file:"):
        parsed = urlparse(uri)
        host = parsed.netloc
        if host and host.lower() != "localhost":
            return Path("/" + unquote(host + parsed.path))
        return Path(unquote(parsed.path))
    return Path(uri)


class FileAck(AckToken):
    """The position after a delivered chunk: ``line`` number and byte ``offset``.

    For a tailed file, ``pointers`` is the source's map of positions: once the chunk is in the
    app (:meth:`entered`) its position is the file's, kept in the app's snapshots.
    """

    __slots__ = ("line", "offset", "_pointers", "_path")

    def __init__(self, line: int, offset: int, pointers: dict[str, list[int]] | None = None,
                 path: str = "") -> None:
        self.line = line
        self.offset = offset
        self._pointers = pointers
        self._path = path

    def entered(self) -> None:
        if self._pointers is not None:
            self._pointers[self._path] = [self.offset, self.line]


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


_MODES = ("line", "text.full", "binary.full", "binary.chunked", "regex")
#: Modes that read a file whole (or in chunks of bytes): never tailed.
_WHOLE_FILE_MODES = ("text.full", "binary.full", "binary.chunked")
_ACTIONS = ("delete", "move", "keep", "none")

_SOURCE_PARAMS = (
    Param("file.uri", _S, optional=True, default=None,
          doc="The file to read: a file: URI or a path.  Give this or dir.uri, not both."),
    Param("dir.uri", _S, optional=True, default=None,
          doc="A directory whose files are read one by one, in name order, and then watched for new files."),
    Param("mode", _S, optional=True, default="line",
          doc="'line' (an event per line), 'text.full' / 'binary.full' (a file is one event), "
              "'binary.chunked' (buffer.size bytes an event) or 'regex' (begin.regex/end.regex cut the text)."),
    Param("tailing", _B, optional=True, default=None,
          doc="Keep reading what is appended to the file(s); default true in line and regex mode, "
              "false (and not allowed) in the whole-file modes."),
    Param("action.after.process", _S, optional=True, default=None,
          doc="'delete', 'move' (to move.after.process), 'keep' or 'none' once a file is read; default "
              "'none' when tailing, else 'keep'."),
    Param("action.after.failure", _S, optional=True, default="delete",
          doc="'delete', 'move' (to move.after.failure) or 'keep' when a file cannot be read."),
    Param("move.after.process", _S, optional=True, default=None,
          doc="Where action.after.process='move' puts a file: the new file path for file.uri, the "
              "directory for dir.uri."),
    Param("move.after.failure", _S, optional=True, default=None,
          doc="Where action.after.failure='move' puts a file that could not be read."),
    Param("move.if.exist.mode", _S, optional=True, default=None,
          doc="When the move target exists: 'OVERWRITE' it (the default) or 'KEEP' it and give the "
              "moved file a unique name."),
    Param("begin.regex", _S, optional=True, default=None, doc="regex mode: the start of an event."),
    Param("end.regex", _S, optional=True, default=None, doc="regex mode: the end of an event."),
    Param("file.polling.interval", _I, optional=True, default=1000,
          doc="Milliseconds between checks of a tailed file (and of a file that does not exist yet)."),
    Param("dir.polling.interval", _I, optional=True, default=1000,
          doc="Milliseconds between scans of dir.uri for new files."),
    Param("timeout", _I, optional=True, default=5000,
          doc="Accepted for siddhi-io-file apps: the file is read in-process, so there is nothing to wait for."),
    Param("file.read.wait.timeout", _I, optional=True, default=1000,
          doc="Accepted for siddhi-io-file apps; no effect (see timeout)."),
    Param("header.present", _B, optional=True, default=False, doc="Skip header.line.count lines at the start."),
    Param("header.line.count", _I, optional=True, default=1, doc="The header lines header.present skips."),
    Param("read.only.header", _B, optional=True, default=False,
          doc="line mode: deliver only the first line of each file."),
    Param("read.only.trailer", _B, optional=True, default=False,
          doc="line mode: deliver only the last line of each file."),
    Param("skip.trailer", _B, optional=True, default=False, doc="line mode: do not deliver the last line."),
    Param("buffer.size", _I, optional=True, default=65536, doc="binary.chunked mode: bytes per event."),
    Param("cron.expression", _S, optional=True, default=None,
          doc="A Quartz cron expression ('*/5 * * * * ?'): read (and move) the file(s) when it fires."),
    Param("file.name.pattern", _S, optional=True, default=None,
          doc="dir.uri: read only the files whose whole name matches this regex."),
    Param("file.system.options", _S, optional=True, default=None,
          doc="Accepted for siddhi-io-file apps; options of remote file systems, which Srota does not read."),
    # Srota's own options: replay pacing and batching.
    Param("batch.size", _I, optional=True, default=1000, doc="The largest chunk handed to the host."),
    Param("rate", _D, optional=True, default=0.0,
          doc="line mode: pace the replay at this many messages per second (0: as fast as possible)."),
    Param("timestamp.field", _S, optional=True, default=None,
          doc="line mode: pace the replay by this timestamp: a JSON key (ts, $.event.ts) or a column index."),
    Param("timestamp.unit", _S, optional=True, default="ms", doc="'ms', 's' or 'iso' (ISO-8601 text)."),
    Param("delimiter", _S, optional=True, default=",", doc="Column separator for a numeric timestamp.field."),
    Param("playback.speed", _D, optional=True, default=1.0,
          doc="Timestamp pacing speed-up: 10 replays ten times faster than recorded."),
    Param("poll.interval", _I, optional=True, default=None,
          doc="Srota's older name of file.polling.interval (milliseconds); wins when given."),
)


def _local(uri: str, option: str, fail: Callable[[str], NoReturn]) -> Path:
    """The local path of a source URI option; other file systems are refused."""
    scheme = uri.split(":", 1)[0].lower() if ":" in uri else ""
    if scheme in _REMOTE_SCHEMES:
        fail(f"{option} '{uri}': Srota reads local files only ({scheme}:// is not supported)")
    return uri_to_path(uri)


@extension(Kind.SOURCE, "file", params=_SOURCE_PARAMS,
           doc="Read files as siddhi-io-file does (line, text.full, binary.full, binary.chunked, regex; "
               "a file or a directory; tailing; delete/move/keep after reading; cron), optionally paced.")
class FileSource(Source):
    """Reads ``file.uri`` or the files of ``dir.uri`` (see the module doc).

    Every message carries the transport properties ``file.path``, ``file.name``, ``file.uri``
    and ``eof`` (``'true'`` on a file's last event), ``line`` in line mode, and
    ``sequence.number`` and ``content.length`` in binary.chunked mode; a mapper reads them with
    ``trp:<name>``.
    """

    type_name = "file"
    PARAMS = _SOURCE_PARAMS

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "", **kw: Any) -> None:
        super().__init__(options, name=name, **kw)
        o = self.options
        pos = self._pos = kw.get("pos")
        where = f"file source '{self.name}'"

        def fail(message: str) -> NoReturn:
            raise creation_error(f"{where}: {message}", pos)

        mode = str(o["mode"]).lower()
        if mode not in _MODES:
            fail(f"mode must be one of {', '.join(_MODES)}, not {o['mode']!r}")
        whole = mode in _WHOLE_FILE_MODES
        self.tailing: bool = (not whole) if o["tailing"] is None else bool(o["tailing"])
        begin, end = o["begin.regex"], o["end.regex"]
        # The checks below are siddhi-io-file's (FileSource.init / validateParameters), in its words.
        if whole and self.tailing:
            fail(f"tailing has been enabled, but tailing can't be enabled in '{mode}' mode")
        if mode in ("binary.full", "binary.chunked") and begin is not None and end is not None:
            fail(f"'begin.regex' and 'end.regex' can be only provided if the mode is 'regex', not '{mode}'")
        if (o["file.uri"] is None) == (o["dir.uri"] is None):
            fail("give exactly one of 'file.uri' and 'dir.uri'")
        self.path: Path | None = _local(o["file.uri"], "file.uri", fail) if o["file.uri"] is not None else None
        self.dir: Path | None = _local(o["dir.uri"], "dir.uri", fail) if o["dir.uri"] is not None else None
        self.action = str(o["action.after.process"] or ("none" if self.tailing else "keep")).lower()
        self.failure_action = str(o["action.after.failure"]).lower()
        for option, value in (("action.after.process", self.action), ("action.after.failure", self.failure_action)):
            if value not in _ACTIONS:
                fail(f"{option} must be one of {', '.join(_ACTIONS)}, not {value!r}")
        self.move_to = (_local(o["move.after.process"], "move.after.process", fail)
                        if o["move.after.process"] is not None else None)
        self.move_failed_to = (_local(o["move.after.failure"], "move.after.failure", fail)
                               if o["move.after.failure"] is not None else None)
        only_header, only_trailer, skip_trailer = o["read.only.header"], o["read.only.trailer"], o["skip.trailer"]
        if self.tailing and (only_header or only_trailer or skip_trailer):
            fail("'tailing' cannot be combined with 'read.only.header', 'read.only.trailer' or 'skip.trailer'")
        if only_header and only_trailer:
            fail("either 'read.only.header' or 'read.only.trailer' can be true, not both")
        if only_trailer and skip_trailer:
            fail("either 'read.only.trailer' or 'skip.trailer' can be true, not both")
        cron = o["cron.expression"]
        if self.tailing and cron is not None:
            fail("'cron.expression' cannot be used when tailing is enabled (it is by default in line and regex mode)")
        if self.tailing and self.move_to is not None:
            fail("'move.after.process' cannot be used when tailing is enabled (it is by default in line and "
                 "regex mode)")
        if self.action == "delete" and self.move_to is not None:
            fail("'move.after.process' can only be used when 'action.after.process' is 'move'")
        if cron is not None and self.action != "move":
            fail("'cron.expression' can only be used when 'action.after.process' is 'move'")
        if o["move.if.exist.mode"] is not None and self.action != "move":
            fail("'move.if.exist.mode' can only be used when 'action.after.process' is 'move'")
        if self.action == "move" and self.move_to is None:
            fail("'move.after.process' is mandatory when 'action.after.process' is 'move'")
        if self.failure_action == "move" and self.move_failed_to is None:
            fail("'move.after.failure' is mandatory when 'action.after.failure' is 'move'")
        exist_mode = str(o["move.if.exist.mode"] or "OVERWRITE").upper()
        if exist_mode not in ("OVERWRITE", "KEEP"):
            fail(f"move.if.exist.mode must be 'OVERWRITE' or 'KEEP', not {o['move.if.exist.mode']!r}")
        self.keep_existing = exist_mode == "KEEP"
        if o["header.line.count"] < 0:
            fail("header.line.count must not be negative")
        if o["buffer.size"] < 1:
            fail("buffer.size must be at least 1")
        try:
            self.cron = QuartzCron(cron) if cron is not None else None
        except CronError as exc:
            fail(f"cron expression {cron!r} is not valid: {exc}")
        try:
            self.name_pattern = re.compile(o["file.name.pattern"]) if o["file.name.pattern"] is not None else None
            if mode == "regex":
                if begin is None and end is None:
                    mode = "line"  # as siddhi-io-file does: regex mode without a regex reads lines
                else:
                    regex_pattern(begin, end)
        except re.error as exc:
            fail(f"cannot compile the regex: {exc}")
        self.mode = mode
        if o["timestamp.unit"] not in ("ms", "s", "iso"):
            fail("timestamp.unit must be 'ms', 's' or 'iso'")
        if o["rate"] < 0 or o["playback.speed"] <= 0 or o["batch.size"] < 1:
            fail("rate must be >= 0, playback.speed > 0 and batch.size >= 1")
        self._poll = (o["poll.interval"] if o["poll.interval"] is not None else o["file.polling.interval"]) / 1000.0
        self._timestamp = (_timestamp_reader(o["timestamp.field"], o["timestamp.unit"], o["delimiter"])
                           if o["timestamp.field"] else None)
        self._finished = asyncio.Event()
        self._delivering = asyncio.Lock()  # directory tailing reads several files at once
        self.lines_read = 0
        #: Files read to their end (and then deleted, moved or kept).
        self.files_processed = 0
        #: Paths read to their end and left in place (keep/none, not tailed): not read again,
        #: also after a restore (siddhi-io-file's processedFileList).
        self._processed: dict[str, None] = {}
        #: Tailed files (line mode): ``[byte offset, line number]`` after the last line in the
        #: app, where a restored source goes on (siddhi-io-file's filePointer).
        self._pointers: dict[str, list[int]] = {}
        self._start_wall: float | None = None
        self._first_ts: float | None = None

    def check_map_type(self, map_type: str) -> None:
        """The binary mapper reads bytes: only the binary modes deliver them (Siddhi refuses
        it in line mode; text.full and regex deliver text just the same)."""
        if map_type.lower() == "binary" and not self.mode.startswith("binary"):
            raise creation_error(f"file source '{self.name}': 'binary' mapping cannot be used with mode "
                                 f"'{self.mode}' (binary.full or binary.chunked read bytes)", self._pos)

    async def start(self, on_messages: Any) -> None:
        """Check the file or directory exists (unless it is tailed or read on a schedule, which
        wait for it) and start reading."""
        if not self.tailing and self.cron is None:
            if self.path is not None and not self.path.is_file():
                raise ConnectorError(f"file source '{self.name}': {self.path} does not exist")
            if self.dir is not None and not self.dir.is_dir():
                raise ConnectorError(f"file source '{self.name}': {self.dir} is not a directory")
        self._finished.clear()
        await super().start(on_messages)

    @property
    def finished(self) -> bool:
        """True when ``file.uri`` has been read to its end (never when tailing, on a cron
        schedule or reading a directory, which is watched for new files)."""
        return self._finished.is_set()

    async def wait_finished(self, timeout: float | None = None) -> None:
        """Wait until the file was read to its end (raises ``TimeoutError``)."""
        async with asyncio.timeout(timeout):
            await self._finished.wait()

    async def _deliver(self, messages: list[Message]) -> bool:
        async with self._delivering:
            return await super()._deliver(messages)

    async def _run(self) -> None:
        if self.dir is not None or self.cron is not None or not self.tailing:
            self._ready.set()  # a tailed file.uri is ready once it exists (see _tail)
        if self.cron is not None:
            await self._run_on_schedule(self.cron)
        elif self.dir is not None:
            await self._watch_directory(self.dir)
        else:
            assert self.path is not None
            if self.tailing:
                await self._tail(self.path)
            elif str(self.path) in self._processed:  # read before the restore
                self._log.info("file source: file already processed (restored state)", path=str(self.path))
                self._finished.set()
            elif await self._process(self.path, self._move_target(self.path, self.move_to)):
                self._finished.set()

    # ------------------------------------------------------------------ files and directories
    def _move_target(self, path: Path, option: Path | None) -> Path | None:
        """Where a move sends ``path``: into the directory for dir.uri (or an existing
        directory), else the path given."""
        if option is None:
            return None
        return option / path.name if self.dir is not None or option.is_dir() else option

    def _list_directory(self, directory: Path) -> list[Path]:
        """The files of ``directory`` to read, in name order (siddhi-io-file sorts by name)."""
        if not directory.is_dir():
            return []
        return sorted((p for p in directory.iterdir()
                       if p.is_file() and (self.name_pattern is None or self.name_pattern.fullmatch(p.name))),
                      key=lambda p: p.name)

    async def _watch_directory(self, directory: Path) -> None:
        """Read every file of the directory, then scan it for new ones every dir.polling.interval."""
        seen: set[str] = set()  # files kept after reading, or being tailed: not read again
        tails: list[asyncio.Task[None]] = []
        try:
            while not self._stopping:
                for path in await asyncio.to_thread(self._list_directory, directory):
                    if self._stopping:
                        return
                    if path.name in seen or str(path) in self._processed:
                        continue
                    seen.add(path.name)
                    if self.tailing:
                        tails.append(asyncio.create_task(self._tail(path), name=f"srota-file-tail-{path.name}"))
                        continue
                    await self._process(path, self._move_target(path, self.move_to))
                    if path.exists() and path.name in seen and self.action in ("keep", "none"):
                        continue
                    seen.discard(path.name)  # deleted or moved: a new file of that name is read again
                await asyncio.sleep(self.options["dir.polling.interval"] / 1000.0)
        finally:
            for task in tails:
                task.cancel()
            for task in tails:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _run_on_schedule(self, cron: QuartzCron) -> None:
        """At each firing of the cron expression read the file (or the directory's files) and
        move it (siddhi-io-file's FileCronExecutor)."""
        while not self._stopping:
            now = _dt.datetime.now()
            due = cron.next_after(now)
            if due is None:
                self._log.info("cron expression fires no more", expression=self.options["cron.expression"])
                return
            await asyncio.sleep((due - now).total_seconds())
            if self.dir is not None:
                paths = await asyncio.to_thread(self._list_directory, self.dir)
            else:
                assert self.path is not None
                paths = [self.path] if self.path.is_file() else []
            for path in paths:
                if self._stopping:
                    return
                await self._process(path, self._move_target(path, self.move_to))

    async def _process(self, path: Path, target: Path | None) -> bool:
        """Read ``path`` to its end, then apply action.after.process (action.after.failure when
        it cannot be read).  False when it was not read to its end."""
        try:
            with open(path, "rb") as f:  # noqa: ASYNC230 - reads go through to_thread below
                self._log.info("file source reading", path=str(path), mode=self.mode)
                await self._read(f, path, follow=False)
        except OSError as exc:
            self._log.error("file source cannot read a file", path=str(path), error=str(exc),
                            action=self.failure_action)
            await asyncio.to_thread(self._after, path, self.failure_action,
                                    self._move_target(path, self.move_failed_to))
            return False
        if self._stopping:
            return False  # stopped half-way: the file stays where it is
        self.files_processed += 1
        if self.action in ("keep", "none") and not self.tailing and self.cron is None:
            # Noted once read to its end: a snapshot taken before then reads it again after a restore.
            self._processed[str(path)] = None
        await asyncio.to_thread(self._after, path, self.action, target)
        self._log.info("file source finished a file", path=str(path), action=self.action)
        return True

    def _after(self, path: Path, action: str, target: Path | None) -> None:
        try:
            if action == "delete":
                path.unlink(missing_ok=True)
            elif action == "move":
                assert target is not None
                move_file(path, target, self.keep_existing)
        except OSError as exc:
            self._log.error("file source cannot delete or move a file", path=str(path), action=action,
                            error=str(exc))

    async def _tail(self, path: Path) -> None:
        """Read ``path`` from its start and keep following it (waiting for it to appear)."""
        while not path.is_file():
            if self._stopping:
                return
            await asyncio.sleep(self._poll)
        with open(path, "rb") as f:  # noqa: ASYNC230 - reads go through to_thread below
            self._ready.set()
            at = self._pointers.get(str(path)) if self.mode == "line" else None
            if at is not None and at[0] > os.fstat(f.fileno()).st_size:
                self._log.warning("file source: the tailed file is shorter than the restored position "
                                  "(truncated or replaced); reading it from its start", path=str(path),
                                  position=at[0])
                at = None
            if at is not None:
                f.seek(at[0])
            self._log.info("file source tailing", path=str(path), mode=self.mode, position=at[0] if at else 0)
            await self._read(f, path, follow=True, start=(at[0], at[1]) if at else (0, 0))

    # ------------------------------------------------------------------ reading
    async def _read(self, f: IO[bytes], path: Path, follow: bool, start: tuple[int, int] = (0, 0)) -> None:
        props: dict[str, Any] = {"file.uri": str(path), "file.path": str(path), "file.name": path.name}
        if self.mode == "line":
            await self._read_lines(f, props, follow, start)
        elif self.mode == "regex":
            await self._read_regex(f, props, follow)
        elif self.mode == "binary.chunked":
            await self._read_chunks(f, props)
        else:  # text.full, binary.full: the file is one event
            data = await asyncio.to_thread(f.read)
            if data:
                await self._deliver([Message(data, {**props, "eof": "true"}, FileAck(1, len(data)))])

    async def _read_chunks(self, f: IO[bytes], props: dict[str, Any]) -> None:
        size = self.options["buffer.size"]
        offset = 0
        sequence = 0
        chunk = await asyncio.to_thread(f.read, size)
        while chunk and not self._stopping:
            following = await asyncio.to_thread(f.read, size)  # one ahead, to tell the last chunk
            sequence += 1
            offset += len(chunk)
            await self._deliver([Message(chunk, {**props, "sequence.number": sequence, "content.length": len(chunk),
                                                 "eof": "false" if following else "true"},
                                         FileAck(sequence, offset))])
            chunk = following

    async def _read_regex(self, f: IO[bytes], props: dict[str, Any], follow: bool) -> None:
        splitter = RegexSplitter(self.options["begin.regex"], self.options["end.regex"])
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending: str | None = None  # held back until we know whether it is the file's last event
        count = 0

        async def emit(text: str, eof: bool) -> None:
            nonlocal count
            count += 1
            await self._deliver([Message(text.encode(), {**props, "eof": "true" if eof else "false"},
                                         FileAck(count, f.tell()))])

        while not self._stopping:
            data = await asyncio.to_thread(f.read, 64 * 1024)
            if not data:
                if not follow:
                    break
                await asyncio.sleep(self._poll)
                continue
            for event in splitter.feed(decoder.decode(data)):
                if follow:
                    await emit(event, False)
                    continue
                if pending is not None:
                    await emit(pending, False)
                pending = event
        if self._stopping:
            return
        for event in splitter.feed(decoder.decode(b"", final=True)) + splitter.finish():
            if pending is not None:
                await emit(pending, False)
            pending = event
        if pending is not None:
            await emit(pending, True)

    async def _read_lines(self, f: IO[bytes], props: dict[str, Any], follow: bool,
                          start: tuple[int, int] = (0, 0)) -> None:
        """Lines from ``start`` (byte offset, lines before it: where a restored tail goes on)."""
        o = self.options
        limit = o["batch.size"]
        skip = o["header.line.count"] if o["header.present"] and not o["read.only.header"] else 0
        skip = max(0, skip - start[1])  # (a restored position is past the header's lines)
        only_header, only_trailer, skip_trailer = o["read.only.header"], o["read.only.trailer"], o["skip.trailer"]
        carry = b""
        offset, line_no = start
        # a tailed file's position goes into the app's snapshots once its line is in the app
        pointers, path = (self._pointers, str(props["file.path"])) if follow else (None, "")
        # Not following: a line is held back until the next one shows whether it is the last
        # (eof, read.only.trailer, skip.trailer).
        pending: tuple[bytes, int, int] | None = None
        chunk: list[Message] = []

        async def emit(text: bytes, number: int, end: int, eof: bool) -> None:
            nonlocal chunk
            delay = self._pace(text, number)
            if delay > 0:
                if chunk:
                    await self._deliver(chunk)
                    chunk = []
                await asyncio.sleep(delay)
            chunk.append(Message(text, {**props, "line": number, "eof": "true" if eof else "false"},
                                 FileAck(number, end, pointers, path)))
            self.lines_read += 1
            if len(chunk) >= limit:
                await self._deliver(chunk)
                chunk = []

        done = False
        while not self._stopping and not done:
            raw = await asyncio.to_thread(f.readlines, 64 * 1024)
            if not raw:
                if not follow:
                    if not carry.strip():
                        break
                    raw, carry = [carry], b""  # the last line has no line break
                else:
                    if chunk:
                        await self._deliver(chunk)
                        chunk = []
                    await asyncio.sleep(self._poll)
                    continue
            if carry:
                raw[0] = carry + raw[0]
                carry = b""
            if follow and not raw[-1].endswith(b"\n"):
                carry = raw.pop()  # a line still being written; finish it on the next read
            for line in raw:
                offset += len(line)
                line_no += 1
                if skip:
                    skip -= 1
                    continue
                text = line.strip()
                if not text:
                    continue
                if only_header:
                    await emit(text, line_no, offset, True)
                    done = True
                    break
                if follow:
                    await emit(text, line_no, offset, False)
                    continue
                if pending is not None and not only_trailer:
                    await emit(*pending, False)
                pending = (text, line_no, offset)
                if self._stopping:
                    return
            if chunk and (follow or len(chunk) >= limit):
                await self._deliver(chunk)
                chunk = []
        if self._stopping:
            return
        if pending is not None and not skip_trailer:
            await emit(*pending, True)
        if chunk:
            await self._deliver(chunk)

    def _pace(self, text: bytes, line_no: int) -> float:
        """Seconds to wait before delivering this line (rate or timestamp.field pacing)."""
        rate = self.options["rate"]
        if rate <= 0 and self._timestamp is None:
            return 0.0
        now = time.monotonic()
        if self._start_wall is None:
            self._start_wall = now
        if self._timestamp is not None:
            ts = self._line_timestamp(text, line_no)
            if ts is None:
                return 0.0
            if self._first_ts is None:
                self._first_ts = ts
            target = self._start_wall + (ts - self._first_ts) / 1000.0 / self.options["playback.speed"]
        else:
            target = self._start_wall + self.lines_read / rate
        return max(0.0, target - now)

    def _line_timestamp(self, text: bytes, line_no: int) -> float | None:
        assert self._timestamp is not None
        try:
            return self._timestamp(text)
        except (ValueError, IndexError, orjson.JSONDecodeError, UnicodeDecodeError):
            # Unpaced rather than dropped: the mapper decides whether the line is valid.
            self._log.debug("no timestamp in line; not paced", line=line_no)
            return None

    async def commit(self, tokens: Any) -> None:
        """No-op: a file cannot redeliver (a restored app reads again from the state's position)."""

    def state(self) -> dict[str, Any] | None:
        """``{"processedFileList": [path, ...], "filePointers": {path: [offset, line]}}``: the
        files read and kept, and where each tailed file's lines in the app end (each key only
        when it has entries; None when neither has)."""
        state: dict[str, Any] = {}
        if self._processed:
            state["processedFileList"] = list(self._processed)
        if self._pointers:
            state["filePointers"] = {p: list(at) for p, at in self._pointers.items()}
        return state or None

    def restore_state(self, state: dict[str, Any]) -> None:
        """Do not read again the files of the snapshot's ``processedFileList``; go on tailing a
        file from its ``filePointers`` position (a file now shorter is read from its start)."""
        files = state.get("processedFileList")
        if isinstance(files, list):
            self._processed.update((str(f), None) for f in files)
        pointers = state.get("filePointers")
        if isinstance(pointers, dict):
            for p, at in pointers.items():
                if isinstance(at, list) and len(at) == 2 and all(isinstance(v, int) and v >= 0 for v in at):
                    self._pointers[str(p)] = [at[0], at[1]]


_SINK_PARAMS = (
    Param("file.uri", _S, dynamic=True, doc="The file to append to; may be an {{attribute}} template."),
    Param("append", _B, optional=True, default=True,
          doc="Append each payload (true), or replace the file's content with each payload (false)."),
    Param("add.line.separator", _B, optional=True, default=True,
          doc="End each payload with a newline unless it already ends with one (a csv payload does, "
              "which is why siddhi-io-file turns this off for the csv mapper)."),
    Param("file.system.options", _S, optional=True, default=None,
          doc="Accepted for siddhi-io-file apps; options of remote file systems, which Srota does not write."),
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
        f = open(path, "ab")  # noqa: SIM115 - kept open until evicted or close()
        self._files[path] = f
        return f

    def _write(self, batch: list[tuple[str, bytes]]) -> None:
        with self._io:
            latest: dict[Path, bytes] = {}  # append=false: each payload replaces the file
            for uri, data in batch:
                try:
                    path = self._path(uri)
                except _Outside as exc:
                    self.rejected += 1
                    self._log.error("file sink refused a path", reason=str(exc), rejected=self.rejected)
                    continue
                if self.options["append"]:
                    self._open(path).write(data)
                else:
                    latest[path] = data
            for path, data in latest.items():
                # Only the last payload of the chunk survives, so only it is written.
                path.parent.mkdir(parents=True, exist_ok=True)
                with open(path, "wb") as f:
                    f.write(data)

    async def connect(self) -> None:
        """Open the file now when its name is static and appended to (so permission problems
        show early)."""
        uri = self.options["file.uri"]
        if "{{" not in uri and self.options["append"]:
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
