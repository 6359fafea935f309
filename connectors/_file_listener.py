"""``fileeventlistener``: events for files created, modified and removed in a directory
(siddhi-io-file's ``FileHandler``).

``@source(type='fileeventlistener', dir.uri='file:/data/in', file.name.list='a.txt,b.csv',
monitoring.interval='100')`` watches ``dir.uri`` and everything below it and sends one event
per change, ``(filepath, filename, status)`` by position (the passThrough mapper, as Siddhi's
source hands over ``Event`` objects), with ``status`` one of Siddhi's words:

* ``created``: a file or directory appeared; when the source starts, every entry directly in
  the directory that the app's state does not know yet (all of them on a first start);
* ``modifying`` / ``modifyingCompleted``: an entry changed (its time or size; a directory's
  time changes as entries come and go in it).  As Siddhi's, the source then waits a second
  and says ``modifying`` if the entry changed again meanwhile, else ``modifyingCompleted``;
* ``removed``: an entry went; when the source starts, also an entry the state knew that is
  gone.

The directory is polled every ``monitoring.interval`` ms (Siddhi's commons-io monitor polls
too).  The changes of one poll are reported in name order, directory by directory (commons-io's
order: a rename is the new name's ``created`` and the old name's ``removed``, in name order).
``file.name.list`` names the entries to report, relative to ``dir.uri`` (each must exist when
the app is created); an entry that is a directory reports what happens inside it too; without
the option everything under ``dir.uri`` is reported.

The entries directly in the directory that the source has reported are its state in the app's
snapshots, as Siddhi's ``FileHandlerState`` keeps them: a restored app reports only what
changed while it was down (``created``, ``removed``).

Differences from siddhi-io-file, on purpose: Siddhi reports *every* change once any listed
entry is a directory (its check does not look at where the change is); Srota reports the
listed files and what is inside the listed directories.  Siddhi's state holds only the entries
found when the source started, so after a restart it reports entries created later as
``created`` again; Srota keeps the entries reported since too.  Local directories only
(``file.system.options`` is accepted for Siddhi's apps and must be empty).  While the host
holds the source (back-pressure, ``pause``) it keeps polling and reports what it found once
resumed; Siddhi's ``pause`` does nothing.
"""
from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from srota.connectors._file import uri_to_path
from srota.connectors._options import creation_error
from srota.connectors.base import Message, Source
from srota.engine.registry import Kind, Param, extension
from srota.grammar.model import AttrType

#: Siddhi waits this long after a change before it tells ``modifying`` from ``modifyingCompleted``.
SETTLE_SECONDS = 1.0

_PARAMS = (
    Param("dir.uri", (AttrType.STRING,), doc="The local directory to watch ('file:/path' or a path)."),
    Param("monitoring.interval", (AttrType.LONG,), optional=True, default=100,
          doc="Milliseconds between polls of the directory."),
    Param("file.name.list", (AttrType.STRING,), optional=True, default="",
          doc="Comma-separated entries of dir.uri to report (a directory: what happens inside it too); "
              "default: everything."),
    Param("file.system.options", (AttrType.STRING,), optional=True, default="",
          doc="Accepted for siddhi-io-file apps; remote file systems are not supported, so it must be empty."),
)


@dataclass
class _Entry:
    """One file or directory as polled: what tells a change (commons-io's FileEntry)."""

    path: str
    is_dir: bool
    mtime_ns: int
    size: int
    children: dict[str, _Entry] = field(default_factory=dict)


def _scan(directory: str) -> dict[str, _Entry]:
    """The entries under ``directory``, by name, each directory's own entries inside it."""
    found: dict[str, _Entry] = {}
    try:
        with os.scandir(directory) as it:
            items = list(it)
    except OSError:  # gone or unreadable meanwhile: nothing under it
        return found
    for item in items:
        try:
            st = item.stat(follow_symlinks=False)
        except OSError:
            continue
        is_dir = item.is_dir(follow_symlinks=False)
        entry = _Entry(item.path, is_dir, st.st_mtime_ns, 0 if is_dir else st.st_size)
        if is_dir:
            entry.children = _scan(item.path)
        found[item.name] = entry
    return found


def _changes(before: dict[str, _Entry], after: dict[str, _Entry],
             out: list[tuple[str, _Entry]]) -> None:
    """What differs, in commons-io's order: name order, a directory's own change before its
    entries'; a new directory's entries are created with it."""
    for name in sorted(before.keys() | after.keys()):
        old, new = before.get(name), after.get(name)
        if old is not None and new is not None:
            if (old.is_dir, old.mtime_ns, old.size) != (new.is_dir, new.mtime_ns, new.size):
                out.append(("changed", new))
            _changes(old.children, new.children, out)
        elif new is not None:
            _created(new, out)
        else:
            assert old is not None
            out.append(("removed", old))


def _created(entry: _Entry, out: list[tuple[str, _Entry]]) -> None:
    out.append(("created", entry))
    for name in sorted(entry.children):
        _created(entry.children[name], out)


@extension(Kind.SOURCE, "fileeventlistener", params=_PARAMS,
           doc="Events (filepath, filename, status) for files created, modified and removed in a local "
               "directory, as siddhi-io-file's fileeventlistener.")
class FileEventListenerSource(Source):
    """Polls ``dir.uri`` and delivers a ``(filepath, filename, status)`` row per change (module doc)."""

    type_name = "fileeventlistener"
    payload_kind: ClassVar[str] = "any"
    PARAMS = _PARAMS

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "", **kw: Any) -> None:
        super().__init__(options, name=name, **kw)
        o = self.options
        pos = kw.get("pos")
        where = f"fileeventlistener source '{self.name}'"
        if o["file.system.options"]:
            raise creation_error(f"{where}: file.system.options is for remote file systems, which Srota does "
                                 "not watch (local directories only)", pos)
        uri = str(o["dir.uri"])
        if not uri:
            raise creation_error(f"{where}: dir.uri must be given", pos)
        self.directory = uri_to_path(uri)
        if not self.directory.exists():
            raise creation_error(f"{where}: directory {self.directory} is not found", pos)
        if not self.directory.is_dir():
            raise creation_error(f"{where}: dir.uri {self.directory} is a file, not a directory", pos)
        self.interval = int(o["monitoring.interval"]) / 1000
        if self.interval <= 0:
            raise creation_error(f"{where}: monitoring.interval must be positive, not {o['monitoring.interval']}",
                                 pos)
        #: The listed entries (absolute paths); None: report everything.
        self.listed: tuple[str, ...] | None = None
        names = [n.strip() for n in str(o["file.name.list"]).split(",") if n.strip()]
        if names:
            listed = []
            for n in names:
                path = self.directory / n
                if not path.exists():
                    raise creation_error(f"{where}: file.name.list names {path}, which is not found", pos)
                listed.append(os.path.abspath(path))
            self.listed = tuple(listed)
        #: Entries directly in the directory that were reported (path -> mtime in ms): the state.
        self._known: dict[str, int] = {}
        self._tree: dict[str, _Entry] = {}

    def _wanted(self, path: str) -> bool:
        if self.listed is None:
            return True
        return any(path == p or path.startswith(p + os.sep) for p in self.listed)

    def _message(self, path: str, status: str) -> Message:
        return Message((path, os.path.basename(path), status), {"file.path": path, "status": status})

    async def _emit(self, events: list[tuple[str, str]]) -> None:
        messages = [self._message(p, s) for p, s in events if self._wanted(p)]
        for m in messages:  # an event a chunk, as Siddhi's listener calls onEvent per change
            await self._deliver([m])

    async def _run(self) -> None:
        top = str(self.directory)
        self._tree = await asyncio.to_thread(_scan, top)
        # Siddhi's connect(): what is directly in the directory and not yet known, and what
        # the state knew that is gone
        now = {e.path: e for e in self._tree.values()}
        first = [(p, "created") for p in sorted(now) if p not in self._known]
        first += [(p, "removed") for p in sorted(self._known) if p not in now]
        self._known = {p: e.mtime_ns // 1_000_000 for p, e in now.items()}
        self._ready.set()
        self._log.info("watching a directory", directory=top, interval_ms=int(self.interval * 1000))
        await self._emit(first)
        while not self._stopping:
            await asyncio.sleep(self.interval)
            tree = await asyncio.to_thread(_scan, top)
            found: list[tuple[str, _Entry]] = []
            _changes(self._tree, tree, found)
            self._tree = tree
            for what, entry in found:
                if self._stopping:
                    return
                if os.path.dirname(entry.path) == top:
                    if what == "removed":
                        self._known.pop(entry.path, None)
                    else:
                        self._known[entry.path] = entry.mtime_ns // 1_000_000
                if not self._wanted(entry.path):
                    continue  # (an entry not listed costs no wait)
                if what == "changed":
                    what = await self._settled(entry)
                await self._emit([(entry.path, what)])

    async def _settled(self, entry: _Entry) -> str:
        """Siddhi's wait after a change: ``modifying`` if the entry changed again within it."""
        await asyncio.sleep(SETTLE_SECONDS)
        try:
            later = os.stat(entry.path, follow_symlinks=False).st_mtime_ns
        except OSError:
            later = 0  # gone: Java's lastModified() of a missing file is 0
        return "modifying" if later > entry.mtime_ns else "modifyingCompleted"

    def state(self) -> dict[str, Any] | None:
        """``{"files": {path: mtime ms}}``: the entries directly in the directory reported so far."""
        return {"files": dict(self._known)} if self._known else None

    def restore_state(self, state: dict[str, Any]) -> None:
        """A restored source reports only the entries created or removed since."""
        files = state.get("files")
        if isinstance(files, dict):
            self._known.update((str(p), int(t)) for p, t in files.items() if isinstance(t, int))

