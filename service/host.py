"""The service: every app, the admin server and persistence, and the process lifecycle.

:class:`ServiceHost` starts an :class:`~srota.service.apphost.AppHost` per app (a
:class:`~srota.service.scaleout.PartitionedAppHost` under scale-out), the admin server and
the state store, takes snapshots, and shuts down gracefully (:func:`serve`,
:func:`run_service`).  How one app moves its data, and what is guaranteed, is in
:mod:`srota.service.apphost`.
"""
from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import structlog
from srota.engine import SiddhiAppRuntime
from srota.engine.memory import release_free_memory
from srota.engine.stores.database import StoreGoneError
from srota.grammar.errors import SiddhiAppCreationError
from srota.service.apphost import AppHost, manager_for
from srota.service.bindings import import_extensions
from srota.service.config import ServiceConfig, substitute_env
from srota.service.metrics import Metrics
from srota.service.persistence import StateUnusableError

from srota import (
    connectors,  # noqa: F401 - registers the built-in connectors
    )

__all__ = ["AppHost", "ServiceHost", "import_extensions", "manager_for", "run_service", "serve"]

log = structlog.get_logger("srota.service")

#: Seconds between two returns of the C heap's free memory to the system
#: (:func:`~srota.engine.memory.release_free_memory`): without them a worker's RSS stays at
#: the height of its busiest moment (a rebalance, an outage's retries), not what it holds.
HEAP_TRIM_INTERVAL_S = 30.0


class ServiceHost:
    """Every app of the process, the admin server and persistence."""

    def __init__(self, config: ServiceConfig, app_paths: Sequence[Path] = (), app_texts: Sequence[str] = ()) -> None:
        import_extensions()
        self.config = config
        self.apps: dict[str, AppHost] = {}
        self.metrics = Metrics(lambda: {name: a.runtime for name, a in self.apps.items()})
        self.admin: Any = None
        self.store: Any = None
        from srota.service.errors import ServiceErrorStore

        #: Failed events kept by ``@OnError(action='STORE')`` and ``on.error='STORE'`` (/errors).
        self.error_store = ServiceErrorStore(config.errors_database)
        #: Why an app stopped by itself (the process exits with code 1), and the event that stops it.
        self.failure: str | None = None
        self.stopping: asyncio.Event | None = None
        self._snapshotter: asyncio.Task[None] | None = None
        self._trimmer: asyncio.Task[None] | None = None
        self._save_lock = asyncio.Lock()  # one snapshot save at a time (revisions are numbered)
        self._texts: list[tuple[Path | None, str]] = [
            (p, substitute_env(p.read_text(encoding="utf-8"), str(p))) for p in app_paths]
        self._texts.extend((None, t) for t in app_texts)
        self._gc_before: tuple[int, ...] | None = None
        #: Apps added, replaced and removed while the service runs (the Siddhi Runner API, hot
        #: deploy: srota.service.hotdeploy); set by start().
        self.deployments: Any = None

    @property
    def runtimes(self) -> dict[str, SiddhiAppRuntime]:
        return {name: a.runtime for name, a in self.apps.items()}

    def is_ready(self) -> bool:
        # A service that deploys into a folder is ready with no app yet (Siddhi Runner starts
        # empty); one whose apps are given must have them all running.
        waits_for_deploys = self.deployments is not None and self.config.deployment.dir is not None
        return (bool(self.apps) or waits_for_deploys) and all(a.is_ready() for a in self.apps.values())

    def _app_failed(self, reason: str) -> None:
        """An app stopped by itself: the process stops (exit code 1) rather than run without it."""
        self.failure = reason
        if self.stopping is not None:
            self.stopping.set()

    def describe(self) -> list[dict[str, Any]]:
        return [a.describe() for a in self.apps.values()]

    def _check_fallback(self, app: AppHost, skipped: list[int], revision: int | None) -> None:
        """The newest snapshot cannot be restored: an older one (or none) would be.  Kafka
        sources re-read from the older snapshot's offsets, so nothing is lost; an MQTT source
        at QoS 1 or 2 acknowledged the messages after it, which its broker will not send again,
        so the state would silently miss them.  Refused unless ``persistence.older_snapshot``
        is ``accept``; said loudly either way."""
        lossy = [b for b in app.sources if getattr(b.source, "seek_on_start", None) is None
                 and getattr(b.source, "qos", 0) > 0]
        if not lossy:
            return
        older = f"revision {revision}" if revision is not None else "an empty state"
        gap = (f"app '{app.name}': snapshot revision {skipped[0]} cannot be restored; {older} can, but the "
               f"messages {', '.join(sorted(b.name for b in lossy))} acknowledged after it are not in it and the "
               "broker will not send them again")
        if self.config.persistence.older_snapshot == "accept":
            log.error(gap + "; starting from the older state anyway (persistence.older_snapshot: accept)")
            return
        raise StateUnusableError(gap + ". Set persistence.older_snapshot: accept to start from it with that gap, "
                                 "or restore the database from a backup")

    async def start(self) -> None:
        # The collector's pace is the process's: set while the service runs, put back after.
        self._gc_before = gc.get_threshold()
        gc.set_threshold(self.config.gc_threshold, *self._gc_before[1:])
        try:
            await self._start()
        except BaseException:
            self._restore_gc()
            raise

    def _restore_gc(self) -> None:
        if self._gc_before is not None:
            gc.set_threshold(*self._gc_before)
            self._gc_before = None

    async def _start(self) -> None:
        app_class = AppHost
        if self.config.scaleout.enabled:  # state per Kafka partition, checkpointed to Kafka
            from srota.service.scaleout import PartitionedAppHost as app_class
        from srota.service.hotdeploy import Deployments, deployment_folder

        self.deployments = Deployments(self)
        given = {p.resolve() for p, _text in self._texts if p is not None}
        folder = deployment_folder(self.config)
        for path, text in self._texts:
            try:
                app = app_class(path, text, self.config, self.metrics)
            except SiddhiAppCreationError as exc:
                exc.path = path  # type: ignore[attr-defined]  # for the file:line:col report
                raise
            if app.name in self.apps:
                raise SiddhiAppCreationError(f"two apps are named '{app.name}' (use @app:name)")
            app.on_failure = self._app_failed
            self.apps[app.name] = app
            self.deployments.note_started(app.name, path.read_text(encoding="utf-8") if path else text, path)
        if self.config.http.enabled:
            # First, so that /health answers (and /ready says not yet) while sinks connect.
            from srota.service.admin import AdminServer

            self.admin = AdminServer(self, self.config.http)
            await self.admin.start()
            log.info("admin server listening", host=self.config.http.host, port=self.admin.port)
        if self.config.persistence.enabled:
            from srota.service.persistence import StateStore

            self.store = StateStore(self.config.persistence.database, self.config.persistence.revisions)
            await self.store.open()
        for app in self.apps.values():
            if self.store is not None:
                app.checkpointer = self.checkpoint
            if self.store is not None:
                saved = await self.store.load(app.name)
                if saved.skipped:
                    self._check_fallback(app, saved.skipped, saved.revision)
                await app.start((saved.state, saved.offsets), saved.marks, saved.connectors)
            else:
                await app.start()
        if folder is not None and folder.is_dir():  # apps deployed earlier (the API, files dropped in)
            for path in sorted(folder.glob("*.siddhi")):
                if path.resolve() not in given:
                    await self.deployments.deploy_file(path, path.read_text(encoding="utf-8"))
        if self.store is not None:
            self._snapshotter = asyncio.create_task(self._snapshot_loop(), name="srota-snapshots")
        self._trimmer = asyncio.create_task(self._trim_loop(), name="srota-heap-trim")
        if folder is not None and self.config.deployment.hot and not self.config.scaleout.enabled:
            self.deployments.watch(folder, self.config.deployment.interval_ms)

    async def snapshot(self) -> None:
        """Persist every app's state with the offsets of the events it includes.

        Consumption goes on meanwhile: the state is captured at once, and saved when the
        outputs it already accounts for are flushed (see :meth:`AppHost.checkpoint`).
        """
        if self.store is None:
            return
        for app in list(self.apps.values()):  # (apps may be deployed or removed meanwhile)
            try:
                await self.checkpoint(app)
            except StoreGoneError as exc:  # that app stopped; the others' snapshots go on
                log.error("snapshot not taken", app=app.name, error=str(exc))

    async def checkpoint(self, app: AppHost) -> None:
        """Save one app's snapshot, then commit the offsets it covers (decision 12)."""
        if self.store is None:
            return
        async with self._save_lock:
            state, offsets, marks, connectors = await app.checkpoint_with_connectors()
            revision = await self.store.save(app.name, state, offsets, marks, connectors)
            log.debug("snapshot saved", app=app.name, revision=revision, bytes=len(state))
            app.saved(offsets)
            if marks:
                app.trim_stores(await self.store.oldest_marks(app.name))
        await app.commit()

    async def _snapshot_loop(self) -> None:
        interval = self.config.persistence.interval_ms / 1000.0
        while True:
            await asyncio.sleep(interval)
            try:
                await self.snapshot()
            except Exception:
                log.exception("snapshot failed")

    async def _trim_loop(self) -> None:
        while True:
            await asyncio.sleep(HEAP_TRIM_INTERVAL_S)
            try:
                # On a thread: a few milliseconds per 100 MB of heap, the loop goes on meanwhile.
                if not await asyncio.to_thread(release_free_memory):
                    return  # not glibc: nothing to call
            except Exception:
                log.exception("returning free memory to the system failed")

    async def stop(self) -> None:
        """Stop consuming, drain, flush, commit, snapshot and close, within the shutdown timeout."""
        timeout = self.config.shutdown_timeout_ms / 1000.0
        log.info("shutting down", timeout_s=timeout)
        if self.deployments is not None:
            await self.deployments.close()
        for task in (self._snapshotter, self._trimmer):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        try:
            async with asyncio.timeout(timeout):
                for app in self.apps.values():
                    await app.quiesce()
                # Commit while the sources are still connected: a Kafka consumer that has
                # left its group can no longer commit.
                for app in self.apps.values():
                    await app.drain()
                await self.snapshot()
        except TimeoutError:
            log.error("shutdown timed out: some outputs may not have been flushed (they stay uncommitted, "
                      "and no final snapshot was taken)")
        for app in self.apps.values():
            await app.stop_sources()
        for app in self.apps.values():
            await app.close()
        if self.store is not None:
            await self.store.close()
        if self.admin is not None:
            await self.admin.stop()
        self.error_store.close()  # after the apps and the admin API: nothing writes or reads it now
        self._restore_gc()
        log.info("stopped")


async def serve(config: ServiceConfig, app_paths: Sequence[Path], stop: asyncio.Event | None = None) -> str | None:
    """Run until ``stop`` is set (or SIGTERM/SIGINT when it is None); returns why an app
    stopped by itself (the process then exits with code 1), or None."""
    host = ServiceHost(config, app_paths)
    stop = stop or asyncio.Event()
    host.stopping = stop
    with _stopping_on_signals(stop):
        try:
            await host.start()
        except BaseException:
            if host.admin is not None:  # it started first: free its port
                await host.admin.stop()
            raise
        from srota.service.logs import log_banner

        log_banner(host)
        try:
            await stop.wait()
        finally:
            await host.stop()
    return host.failure


@contextlib.contextmanager
def _stopping_on_signals(stop: asyncio.Event) -> Iterator[None]:
    """SIGTERM and SIGINT set ``stop`` while the block runs; afterwards the handlers the
    process had before are back.

    (asyncio's own removal, which ``loop.close()`` does, leaves ``SIG_DFL`` behind: a process
    that ran the service in-process, a test runner say, would then die on its next SIGTERM
    without running its own handler.)
    """
    loop = asyncio.get_running_loop()
    installed: dict[signal.Signals, Any] = {}
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(sig)
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread, Windows
            loop.add_signal_handler(sig, stop.set)
            installed[sig] = previous
    try:
        yield
    finally:
        for sig, previous in installed.items():
            loop.remove_signal_handler(sig)
            if previous is not None:  # (None: a handler not installed from Python)
                signal.signal(sig, previous)


def run_service(config: ServiceConfig, app_paths: Sequence[Path]) -> int:
    """The ``srota run`` entry point: returns the process exit code."""
    try:
        failure = asyncio.run(serve(config, app_paths))
    except SiddhiAppCreationError as exc:
        where = getattr(exc, "path", None) or "app"
        if exc.line is not None:
            where = f"{where}:{exc.line}:{exc.column}"
        print(f"srota: {where}: {exc.message}", file=sys.stderr)
        return 2
    except OSError as exc:  # an app file that cannot be read, a port in use
        print(f"srota: {exc}", file=sys.stderr)
        return 2
    if failure:
        print(f"srota: {failure}", file=sys.stderr)
        return 1
    return 0
