"""State persistence in SQLite: app snapshots and source offsets, in one transaction.

Writing a snapshot and the offsets of the events it covers in the same transaction is what
makes recovery exact: after a restart the app state is the snapshot and the sources resume
right after the last event it includes, so every consumed event counts exactly once in the
state.  ``revisions`` snapshots are kept per app; older ones are deleted.

Connectors' own state (a kafka sink's sequence number, a file source's processed files; see
:meth:`srota.connectors.base.Source.state`) is saved with each revision in
``srota_connector_states``: one row per connector, keyed like ``sink:OutStream:0`` (kind,
stream id, position among that stream's sources or sinks), holding a JSON object
``{"format": 1, "type": <transport>, "state": {...}}``.  A database or revision from before
this table has no rows there: its snapshots restore, with every connector starting fresh.

aiosqlite runs every statement on its own thread, so a slow disk never blocks the event loop.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiosqlite
import orjson
from srota.engine.snapshot import read_snapshot

_log = logging.getLogger("srota.service.persistence")
_READ = read_snapshot

_SCHEMA = """
CREATE TABLE IF NOT EXISTS srota_snapshots (
    app TEXT NOT NULL,
    revision INTEGER NOT NULL,
    created_ms INTEGER NOT NULL,
    state BLOB NOT NULL,
    PRIMARY KEY (app, revision)
);
CREATE TABLE IF NOT EXISTS srota_offsets (
    app TEXT NOT NULL,
    revision INTEGER NOT NULL,
    source TEXT NOT NULL,
    topic TEXT NOT NULL,
    partition INTEGER NOT NULL,
    next_offset INTEGER NOT NULL,
    PRIMARY KEY (app, revision, source, topic, partition)
);
CREATE TABLE IF NOT EXISTS srota_marks (
    app TEXT NOT NULL,
    revision INTEGER NOT NULL,
    name TEXT NOT NULL,
    mark INTEGER NOT NULL,
    PRIMARY KEY (app, revision, name)
);
CREATE TABLE IF NOT EXISTS srota_connector_states (
    app TEXT NOT NULL,
    revision INTEGER NOT NULL,
    connector TEXT NOT NULL,
    state BLOB NOT NULL,
    PRIMARY KEY (app, revision, connector)
);
"""

_TABLES = ("srota_snapshots", "srota_offsets", "srota_marks", "srota_connector_states")

# source id -> {(topic, partition): next offset to consume}
Offsets = dict[str, dict[tuple[str, int], int]]
# aggregation id -> the watermark of its SQLite store taken with the snapshot
Marks = dict[str, int]
# connector key ("sink:OutStream:0") -> {"format": 1, "type": transport, "state": {...}}
ConnectorStates = dict[str, dict[str, Any]]


@dataclass
class Restored:
    """What the store holds for one app: the newest snapshot and its offsets."""

    revision: int | None = None
    state: bytes | None = None
    offsets: Offsets = field(default_factory=dict)
    marks: Marks = field(default_factory=dict)
    #: The connectors' own state saved with the snapshot (empty for revisions without it).
    connectors: ConnectorStates = field(default_factory=dict)
    #: Newer revisions that could not be restored (this one is a fall-back), newest first.
    skipped: list[int] = field(default_factory=list)


class StateUnusableError(RuntimeError):
    """The saved state cannot be used without losing acknowledged input (the service host
    refuses a fall-back to an older snapshot that an MQTT source cannot make whole)."""


class StateStore:
    """Snapshots and offsets of every app of one service, in one SQLite file."""

    def __init__(self, path: str | Path, revisions: int = 3) -> None:
        self.path = Path(path)
        self.revisions = revisions
        self._db: aiosqlite.Connection | None = None

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = await aiosqlite.connect(self.path)
        await self._db.execute("PRAGMA journal_mode=WAL")
        await self._db.executescript(_SCHEMA)
        await self._db.commit()

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise RuntimeError("state store is not open")
        return self._db

    async def save(self, app: str, state: bytes, offsets: Offsets, marks: Marks | None = None,
                   connectors: ConnectorStates | None = None) -> int:
        """Store a snapshot, its offsets, its store watermarks and its connectors' state
        atomically; returns the new revision."""
        db = self.db
        async with db.execute("SELECT COALESCE(MAX(revision), 0) FROM srota_snapshots WHERE app = ?",
                              (app,)) as cur:
            row = await cur.fetchone()
        revision = int(row[0]) + 1 if row else 1
        await db.execute("BEGIN")
        try:
            await db.execute("INSERT INTO srota_snapshots VALUES (?, ?, ?, ?)",
                             (app, revision, int(time.time() * 1000), state))
            await db.executemany(
                "INSERT INTO srota_offsets VALUES (?, ?, ?, ?, ?, ?)",
                [(app, revision, source, topic, partition, offset)
                 for source, parts in offsets.items() for (topic, partition), offset in parts.items()])
            await db.executemany("INSERT INTO srota_marks VALUES (?, ?, ?, ?)",
                                 [(app, revision, name, mark) for name, mark in (marks or {}).items()])
            await db.executemany("INSERT INTO srota_connector_states VALUES (?, ?, ?, ?)",
                                 [(app, revision, key, orjson.dumps(entry))
                                  for key, entry in (connectors or {}).items()])
            oldest_kept = revision - self.revisions + 1
            for table in _TABLES:
                await db.execute(f"DELETE FROM {table} WHERE app = ? AND revision < ?", (app, oldest_kept))
            await db.commit()
        except BaseException:
            await db.rollback()
            raise
        return revision

    async def load(self, app: str, check: Callable[[bytes], object] | None = _READ) -> Restored:
        """The newest readable snapshot of ``app`` and the offsets saved with it (empty if none).

        A revision that ``check`` (by default the engine's :func:`read_snapshot`) cannot read
        (corrupt, an old pickle, a class that no longer exists) is logged and the previous one
        is used, so start-up never loops on it.  ``check=None`` takes the newest as it is.
        """
        db = self.db
        async with db.execute("SELECT revision, state FROM srota_snapshots WHERE app = ? "
                              "ORDER BY revision DESC", (app,)) as cur:
            rows = [(int(r[0]), bytes(r[1])) async for r in cur]
        skipped: list[int] = []
        for revision, state in rows:
            try:
                if check is not None:
                    check(state)
                break
            except ValueError as exc:  # SnapshotError is one
                _log.warning("app %s: snapshot revision %d cannot be restored (%s); falling back to "
                             "the previous revision", app, revision, exc)
                skipped.append(revision)
        else:
            if rows:
                _log.warning("app %s: no snapshot revision can be restored; starting without state", app)
            return Restored(skipped=skipped)
        offsets: Offsets = {}
        async with db.execute("SELECT source, topic, partition, next_offset FROM srota_offsets "
                              "WHERE app = ? AND revision = ?", (app, revision)) as cur:
            async for source, topic, partition, offset in cur:
                offsets.setdefault(source, {})[(topic, int(partition))] = int(offset)
        marks: Marks = {}
        async with db.execute("SELECT name, mark FROM srota_marks WHERE app = ? AND revision = ?",
                              (app, revision)) as cur:
            async for name, mark in cur:
                marks[name] = int(mark)
        connectors: ConnectorStates = {}
        async with db.execute("SELECT connector, state FROM srota_connector_states WHERE app = ? AND revision = ?",
                              (app, revision)) as cur:
            async for key, blob in cur:
                try:
                    entry = orjson.loads(blob)
                except orjson.JSONDecodeError as exc:  # that connector starts fresh; the app still restores
                    _log.warning("app %s: state of connector %s in revision %d cannot be read (%s); ignored",
                                 app, key, revision, exc)
                    continue
                if isinstance(entry, dict):
                    connectors[key] = entry
        return Restored(revision, state, offsets, marks, connectors, skipped)

    async def oldest_marks(self, app: str) -> Marks:
        """The lowest watermark per store over the kept revisions: what a restore may rewind to."""
        async with self.db.execute("SELECT name, MIN(mark) FROM srota_marks WHERE app = ? GROUP BY name",
                                   (app,)) as cur:
            return {name: int(mark) async for name, mark in cur}

    async def state_of(self, app: str, revision: int) -> bytes | None:
        """The state saved as ``revision`` of ``app`` (None when that revision is not kept)."""
        async with self.db.execute("SELECT state FROM srota_snapshots WHERE app = ? AND revision = ?",
                                   (app, revision)) as cur:
            row = await cur.fetchone()
        return bytes(row[0]) if row else None

    async def clear(self, app: str) -> None:
        """Delete every revision of ``app`` (snapshots, offsets, watermarks, connector states):
        Siddhi's ``clearAllRevisions``.  The app's next start begins without state."""
        db = self.db
        await db.execute("BEGIN")
        try:
            for table in _TABLES:
                await db.execute(f"DELETE FROM {table} WHERE app = ?", (app,))
            await db.commit()
        except BaseException:
            await db.rollback()
            raise

    async def revisions_of(self, app: str) -> list[int]:
        async with self.db.execute("SELECT revision FROM srota_snapshots WHERE app = ? ORDER BY revision",
                                   (app,)) as cur:
            return [int(r[0]) async for r in cur]
