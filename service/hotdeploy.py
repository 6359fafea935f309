"""Apps added, replaced and removed while the service runs: the Siddhi Runner API's deployments
and hot deploy of the apps folder (docs/siddhi-runner-api.md).

:class:`Deployments` changes the apps of a running :class:`~srota.service.host.ServiceHost`
one at a time.  A new text is compiled first: one that does not compile raises its
:class:`~srota.grammar.errors.SiddhiAppCreationError` (line and column) and leaves the running
version as it was.  A replaced app is quiesced, drained and checkpointed; its state goes to the
new version when the state is unchanged in shape (the same stateful elements, each built from
the same definition: :func:`state_shape_change`), otherwise the new version starts empty and the
log says why (``state reset``).

:class:`FolderWatcher` polls the apps folder (every ``deployment.interval``): a ``.siddhi`` file
added, changed (mtime and size, then a hash of the text) or removed deploys, redeploys or
undeploys its app, as Siddhi Runner's deployer does with its ``deployment/siddhi-files``.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
from srota.grammar.errors import SiddhiAppCreationError
from srota.service.config import ConfigError, ServiceConfig, substitute_env

log = structlog.get_logger("srota.service.deploy")

__all__ = ["Deployments", "FolderWatcher", "ShapeChange", "deployment_folder", "state_shape_change"]


def deployment_folder(config: ServiceConfig) -> Path | None:
    """The apps folder: ``deployment.dir``, else the first directory listed under ``apps``."""
    if config.deployment.dir is not None:
        return config.deployment.dir
    for p in config.apps:
        path = p if p.is_absolute() else config.base_dir / p
        if path.is_dir():
            return path
    return None


@dataclass(frozen=True)
class ShapeChange:
    """How the stateful elements of a new version differ from a snapshot of the running one
    (element ids of :mod:`srota.engine.snapshot`)."""

    #: Elements in both whose kind or definition changed: their state cannot be carried over.
    changed: tuple[str, ...] = ()
    #: Elements only the new version has (they start empty).
    added: tuple[str, ...] = ()
    #: Elements only the snapshot has (their state is dropped).
    removed: tuple[str, ...] = ()

    @property
    def reset_reason(self) -> str | None:
        """Why the state must be reset as a whole, or None when it carries over."""
        if not self.changed:
            return None
        return "the app's state changed in shape: " + ", ".join(self.changed) + \
            " changed (a definition, window or query of a stateful element)"


def state_shape_change(snapshot: bytes, runtime: Any) -> ShapeChange:
    """Compare the stateful elements of ``snapshot`` with those of ``runtime``.

    An element is its stable id with the kind and the fingerprint of the definition it was
    built from (:mod:`srota.engine.snapshot`).  Where one changed (a window of another length,
    unnamed queries renumbered), restoring the others would leave the state inconsistent (a
    selector's sums over another window), so the state is reset as a whole; elements only
    added or removed leave the others' state consistent.
    """
    from srota.engine.snapshot import read_snapshot

    old = read_snapshot(snapshot)["elements"]
    new = read_snapshot(runtime.snapshot())["elements"]
    return ShapeChange(
        changed=tuple(sorted(e for e in old.keys() & new.keys()
                             if (old[e]["kind"], old[e]["fingerprint"]) != (new[e]["kind"], new[e]["fingerprint"]))),
        added=tuple(sorted(new.keys() - old.keys())),
        removed=tuple(sorted(old.keys() - new.keys())))


def app_name_of(text: str) -> str | None:
    """The ``@app:name`` of an app text (None without one); raises its syntax error."""
    from srota.grammar.parser import parse

    return parse(text).name


@dataclass
class Deployed:
    """What the service knows of one deployed (or failed) app beyond its runtime."""

    text: str
    path: Path | None
    #: Why the newest text of the file did not deploy (the app is then inactive, as Siddhi says).
    error: str | None = None
    deployed_at: float = field(default=0.0)


class Deployments:
    """Adds, replaces and removes apps of a running service host, one change at a time."""

    def __init__(self, host: Any) -> None:
        self.host = host
        self.folder = deployment_folder(host.config)
        #: Texts (as written, before ``${ENV}``) of the apps by name, active or not.
        self.known: dict[str, Deployed] = {}
        #: App files that did not compile and have no running version, by app (file) name.
        self.inactive: dict[str, Deployed] = {}
        self.watcher: FolderWatcher | None = None
        self._lock = asyncio.Lock()

    # ---------------------------------------------------------------- queries
    def text_of(self, name: str) -> str | None:
        """The app's text as deployed (or as its file says, for an inactive app)."""
        entry = self.known.get(name) or self.inactive.get(name)
        return entry.text if entry else None

    def is_active(self, name: str) -> bool | None:
        """True for a running app, False for a file that failed to deploy, None when unknown."""
        if name in self.host.apps:
            return True
        return False if name in self.inactive else None

    def names(self) -> list[str]:
        return [*self.host.apps, *(n for n in self.inactive if n not in self.host.apps)]

    def note_started(self, name: str, text: str, path: Path | None) -> None:
        """Record an app the host started itself (at start-up)."""
        self.known[name] = Deployed(text, path)

    def watch(self, folder: Path, interval_ms: int) -> None:
        """Start hot deploy of ``folder`` (the files there now are taken as deployed)."""
        self.watcher = FolderWatcher(self, folder, interval_ms)
        self.watcher.start()
        log.info("hot deploy: watching the apps folder", folder=str(folder), interval_ms=interval_ms)

    async def close(self) -> None:
        """Stop hot deploy (the service is stopping)."""
        if self.watcher is not None:
            await self.watcher.stop()

    # ---------------------------------------------------------------- changes
    async def deploy(self, text: str, path: Path | None = None, save: bool = False) -> tuple[str, bool]:
        """Deploy ``text`` as a new app or a new version of the app of the same name.

        Returns ``(name, created)``.  Raises :class:`SiddhiAppCreationError` (nothing running is
        touched) for a text that does not compile.  With ``save``, the text is written to the
        app's file (its own, or ``<name>.siddhi`` in the apps folder) once it runs.
        """
        async with self._lock:
            return await self._deploy(text, path, save)

    async def _deploy(self, text: str, path: Path | None, save: bool) -> tuple[str, bool]:
        host = self.host
        try:
            resolved = substitute_env(text, str(path or "app"))
        except ConfigError as exc:
            raise SiddhiAppCreationError(exc.message) from None
        app_class = _app_class(host.config)
        new = app_class(path, resolved, host.config, host.metrics)  # raises: nothing touched
        name = new.name
        old = host.apps.get(name)
        if old is not None and path is None:
            path = old.path
        if save:
            try:
                path = self._target(name, path)
            except OSError:
                await _discard(new)
                raise
            new.path = path
        if old is not None and self.known.get(name) is not None and self.known[name].text == text:
            await _discard(new)  # the same text again: nothing to do
            if save and path is not None:
                self._save(path, text)
            return name, False
        if old is None:
            await self._start(new, restore_saved=True)
            log.info("app deployed", app=name, file=str(path) if path else None)
        else:
            await self._replace(old, new)
        if save and path is not None:
            self._save(path, text)  # once it runs: a file in the folder is an app that deploys
        self.known[name] = Deployed(text, path)
        self.inactive.pop(name, None)
        if path is not None:
            self.inactive.pop(path.stem, None)
            for other, entry in list(self.known.items()):  # the file now holds another app
                if other != name and entry.path == path:
                    await self._undeploy(other, delete=False)
        return name, old is None

    async def undeploy(self, name: str, delete: bool = False) -> bool:
        """Stop and remove an app (and with ``delete`` its file in the apps folder); False when
        there is no such app."""
        async with self._lock:
            return await self._undeploy(name, delete)

    async def _undeploy(self, name: str, delete: bool) -> bool:
        app = self.host.apps.get(name)
        entry = self.known.pop(name, None) or self.inactive.pop(name, None)
        if app is None and entry is None:
            return False
        if app is not None:
            await self._retire(app)
            del self.host.apps[name]
            log.info("app undeployed", app=name)
        path = entry.path if entry else None
        if delete and path is not None:
            if self._in_folder(path):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                if self.watcher is not None:
                    self.watcher.forget(path)
            else:
                log.warning("app file outside the apps folder kept: the app runs again at the next start",
                            app=name, file=str(path))
        return True

    async def restart_without_state(self, name: str, clear: Callable[[], Awaitable[None]]) -> bool:
        """Undeploy ``name``, run ``clear`` (which deletes its saved state), and deploy the same
        text again, so the app starts afresh: Siddhi Runner's revision delete with redeployment.
        False when there is no running app of that name."""
        async with self._lock:
            entry = self.known.get(name)
            if self.host.apps.get(name) is None or entry is None:
                return False
            await self._undeploy(name, delete=False)
            try:
                await clear()
            finally:  # the app runs again even if its state could not be deleted
                await self._deploy(entry.text, entry.path, save=False)
            return True

    async def deploy_file(self, path: Path, text: str) -> None:
        """Hot deploy: a file of the apps folder was added or changed."""
        async with self._lock:
            try:
                await self._deploy(text, path, save=False)
            except SiddhiAppCreationError as exc:
                running = next((n for n, e in self.known.items() if e.path == path), None)
                where = f"{path}:{exc.line}:{exc.column}" if exc.line is not None else str(path)
                if running is not None:
                    log.error("app not redeployed: it does not compile; the running version goes on",
                              app=running, file=where, line=exc.line, column=exc.column, error=exc.message)
                else:
                    self.inactive[path.stem] = Deployed(text, path, error=str(exc))
                    log.error("app not deployed: it does not compile", file=where, line=exc.line,
                              column=exc.column, error=exc.message)

    async def remove_file(self, path: Path) -> None:
        """Hot deploy: a file of the apps folder was removed."""
        async with self._lock:
            for name, entry in list(self.known.items()):
                if entry.path == path:
                    await self._undeploy(name, delete=False)
            if path.stem in self.inactive and self.inactive[path.stem].path == path:
                del self.inactive[path.stem]

    # ---------------------------------------------------------------- helpers
    def _in_folder(self, path: Path) -> bool:
        return self.folder is not None and path.resolve().parent == self.folder.resolve()

    def _target(self, name: str, path: Path | None) -> Path:
        """The file an app deployed through the API is saved to: its own, or the apps folder's
        ``<name>.siddhi``."""
        if path is not None:
            return path
        if self.folder is None:
            raise OSError("no apps folder to save the app in: set deployment.dir (or list a directory under apps)")
        return self.folder / f"{name}.siddhi"

    def _save(self, path: Path, text: str) -> None:
        """Write the text to the app's file (atomically: the watcher never reads half of it)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        if self.watcher is not None:
            self.watcher.note(path, text)

    async def _start(self, app: Any, restore_saved: bool, state: tuple[Any, ...] | None = None) -> None:
        """Start ``app`` as one of the host's apps (with its saved state when ``restore_saved``
        and persistence is on, as Siddhi Runner restores the last revision on deploy)."""
        host = self.host
        app.on_failure = host._app_failed
        host.apps[app.name] = app
        try:
            if host.store is not None:
                app.checkpointer = host.checkpoint
            if state is not None:
                await app.start(*state)
            elif restore_saved and host.store is not None:
                saved = await host.store.load(app.name)
                await app.start((saved.state, saved.offsets), saved.marks, saved.connectors)
            else:
                await app.start()
        except BaseException:
            host.apps.pop(app.name, None)
            await _discard(app)
            raise

    async def _retire(self, app: Any) -> tuple[bytes, dict[str, Any], dict[str, int], dict[str, Any]]:
        """Stop taking input, flush, checkpoint (with persistence) and close ``app``; returns its
        final state (snapshot, offsets, store marks, connectors' state)."""
        await app.quiesce()
        await app.drain()
        if self.host.store is not None:
            await self.host.checkpoint(app)
        final = await app.checkpoint_with_connectors()
        await app.stop_sources()
        await app.close()
        return final

    async def _replace(self, old: Any, new: Any) -> None:
        name = old.name
        try:
            state, offsets, marks, connectors = await self._retire(old)
        except BaseException:  # the old version could not be retired (a store outage): the new one never runs
            await _discard(new)
            raise
        shape = ShapeChange()
        try:
            shape = state_shape_change(state, new.runtime)
            why = shape.reset_reason
        except ValueError as exc:  # an unreadable snapshot: start empty rather than not at all
            why = f"the running version's snapshot cannot be read ({exc})"
        if why is None:
            await self._start(new, restore_saved=False, state=((state, offsets), marks, connectors))
            log.info("app redeployed; state carried over", app=name, started_empty=list(shape.added),
                     dropped=list(shape.removed))
        else:
            await self._start(new, restore_saved=False)
            log.warning("app redeployed; state reset", app=name, reason=why)


async def _discard(app: Any) -> None:
    """Close an app host that was created but never ran (its runtime, its engine thread)."""
    with contextlib.suppress(Exception):
        await app.close()


def _app_class(config: ServiceConfig) -> Any:
    if config.scaleout.enabled:
        raise SiddhiAppCreationError("apps cannot be deployed while the service runs under scale-out "
                                     "(workers > 1 or scaleout.partitioned): restart it with the app instead")
    from srota.service.apphost import AppHost

    return AppHost


class FolderWatcher:
    """Polls the apps folder and hands added, changed and removed ``.siddhi`` files to
    :class:`Deployments` (no dependency: a stat per file per poll, a hash when it changed)."""

    def __init__(self, deployments: Deployments, folder: Path, interval_ms: int) -> None:
        self.deployments = deployments
        self.folder = folder
        self.interval = interval_ms / 1000.0
        #: path -> (mtime_ns, size, sha256 of the text) as last seen.
        self._seen: dict[Path, tuple[int, int, str]] = {}
        self._task: asyncio.Task[None] | None = None

    def note(self, path: Path, text: str | None = None) -> None:
        """Take ``path`` as seen as it is now (a file the service wrote or started with)."""
        try:
            st = path.stat()
            if text is None:
                text = path.read_text(encoding="utf-8")
        except OSError:
            return
        self._seen[path] = (st.st_mtime_ns, st.st_size, _digest(text))

    def forget(self, path: Path) -> None:
        self._seen.pop(path, None)

    def start(self) -> None:
        for path in self._files():
            self.note(path)
        self._task = asyncio.create_task(self._run(), name="srota-hot-deploy")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def _files(self) -> list[Path]:
        try:
            return sorted(p for p in self.folder.glob("*.siddhi") if p.is_file())
        except OSError:
            return []

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.scan()
            except Exception:  # the next poll tries again; the service goes on
                log.exception("hot deploy: scanning the apps folder failed", folder=str(self.folder))

    async def scan(self) -> None:
        """One poll: deploy what was added or changed, undeploy what was removed."""
        current = self._files()
        for path in sorted(self._seen.keys() - set(current)):
            del self._seen[path]
            log.info("hot deploy: app file removed", file=str(path))
            await self.deployments.remove_file(path)
        for path in current:
            try:
                st = path.stat()
            except OSError:
                continue
            seen = self._seen.get(path)
            if seen is not None and seen[:2] == (st.st_mtime_ns, st.st_size):
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                log.error("hot deploy: app file cannot be read", file=str(path), error=str(exc))
                continue
            digest = _digest(text)
            self._seen[path] = (st.st_mtime_ns, st.st_size, digest)
            if seen is not None and seen[2] == digest:
                continue  # touched, not changed
            log.info("hot deploy: app file " + ("changed" if seen else "added"), file=str(path))
            await self.deployments.deploy_file(path, text)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
