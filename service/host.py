"""The asyncio host: sources -> mappers -> app -> mappers -> sinks, and the process lifecycle.

One :class:`AppHost` per app wires the ``@source``/``@sink`` annotations of its streams to
connectors and mappers; :class:`ServiceHost` runs every app, the admin server and
persistence, and shuts down gracefully.

Delivery (README, "Delivery guarantees"):

* A source chunk is mapped and sent into the app as one chunk, on the event loop thread.
* Outputs go to per-sink queues; a worker per sink maps, publishes and flushes them.
* A source chunk is committed (Kafka offsets) only once every output enqueued up to the end
  of that chunk has been flushed by its sink: at-least-once output, nothing committed early.
* When a sink queue holds more than ``limits.sink_buffer`` rows the app's sources pause,
  and resume when it has drained to half (bounded memory under a slow sink).
* A payload that does not map, or is larger than ``limits.max_payload_bytes``, goes to the
  stream's error route: its fault stream (``@OnError(action='STREAM')``), else a dead-letter
  sink (``dead.letter.ref`` on the ``@source``), else it is logged; it is always counted.
"""
from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

import connectors  # noqa: F401 - registers the built-in connectors
import mappers
from engine import SiddhiAppRuntime, SiddhiManager
from engine.registry import Kind, registry
from grammar.errors import SiddhiAppCreationError
from grammar.model import Annotation, AnnotationElement, StreamDefinition

from .config import ServiceConfig, substitute_env
from .metrics import Metrics

log = structlog.get_logger("srota.service")

# Options on @source/@sink that belong to the host, not to the transport.
_HOST_OPTIONS = {"type", "ref", "on.error", "dead.letter.ref"}


def import_extensions() -> None:
    """Import every built-in connector and mapper module (each registers itself)."""
    import importlib
    import pkgutil

    for package in (connectors, mappers):
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("_") and info.name not in ("_options", "_base"):
                with contextlib.suppress(ImportError):
                    importlib.import_module(f"{package.__name__}.{info.name}")


def _options(annotation: Annotation, refs: dict[str, dict[str, str]]) -> tuple[str, dict[str, str]]:
    """The connector type and options of a ``@source``/``@sink``, with ``ref=`` merged in."""
    own = {el.key: el.value for el in annotation.elements if el.key is not None}
    options: dict[str, str] = {}
    ref = own.get("ref")
    if ref is not None:
        if ref not in refs:
            pos = annotation.pos
            known = ", ".join(sorted(refs)) or "none configured"
            raise SiddhiAppCreationError(f"@{annotation.name}(ref='{ref}'): no such connector ref ({known})",
                                         pos.line if pos else None, pos.column if pos else None)
        options.update(refs[ref])
    options.update(own)
    kind = options.get("type")
    if not kind:
        pos = annotation.pos
        raise SiddhiAppCreationError(f"@{annotation.name} needs a type (or a ref to a configured connector)",
                                     pos.line if pos else None, pos.column if pos else None)
    return kind, options


def _connector(kind: Kind, type_name: str, options: dict[str, str], name: str, annotation: Annotation) -> Any:
    ext = registry.get(kind, "", type_name)
    pos = annotation.pos
    if ext is None:
        known = ", ".join(e.qualified_name for e in registry.all(kind))
        raise SiddhiAppCreationError(f"no {kind.value} called '{type_name}' (known: {known})",
                                     pos.line if pos else None, pos.column if pos else None)
    transport = {k: v for k, v in options.items() if k not in _HOST_OPTIONS}
    return ext.factory(transport, name=name, pos=pos)


# ---------------------------------------------------------------------------- bindings
@dataclass
class _SinkBinding:
    stream_id: str
    sink: Any
    mapper: Any
    templates: dict[str, Any]
    on_error: str
    transport: str
    queue: deque[list[tuple[Any, ...]]] = field(default_factory=deque)
    rows_queued: int = 0
    enqueued_seq: int = 0
    flushed_seq: int = 0
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


@dataclass
class _SourceBinding:
    stream_id: str
    source: Any
    mapper: Any
    transport: str
    name: str
    dead_letter: Any = None
    fault_stream: str | None = None


class AppHost:
    """One app with its sources and sinks."""

    def __init__(self, path: Path | None, text: str, config: ServiceConfig, metrics: Metrics) -> None:
        self.path = path
        self.config = config
        self.metrics = metrics
        self.runtime: SiddhiAppRuntime = SiddhiManager().create_siddhi_app_runtime(text)
        self.name = self.runtime.name
        self.sources: list[_SourceBinding] = []
        self.sinks: list[_SinkBinding] = []
        self.dead_letters: list[Any] = []
        self._pending_commits: deque[tuple[_SourceBinding, Any, dict[int, int]]] = deque()
        self._commit_wakeup = asyncio.Event()
        self._committer: asyncio.Task[None] | None = None
        self._paused = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self.consumed: dict[str, dict[tuple[str, int], int]] = {}
        self.started = False
        self._log = log.bind(app=self.name)
        self._bind()

    # ------------------------------------------------------------------ wiring
    def _bind(self) -> None:
        for _stream_id, definition in self.runtime.stream_definitions.items():
            if definition.is_fault:
                continue
            for n, ann in enumerate(a for a in definition.annotations if a.name.lower() == "source"):
                self.sources.append(self._bind_source(definition, ann, n))
            for n, ann in enumerate(a for a in definition.annotations if a.name.lower() == "sink"):
                self.sinks.append(self._bind_sink(definition, ann, n))

    def _bind_source(self, definition: StreamDefinition, ann: Annotation, n: int) -> _SourceBinding:
        type_name, options = _options(ann, self.config.refs)
        name = f"{self.name}/{definition.id}/source{n}"
        source = _connector(Kind.SOURCE, type_name, options, name, ann)
        maps = ann.nested("map")
        mapper = mappers.create_source_mapper(definition.attributes, maps[0] if maps else None, definition.id)
        fault = f"!{definition.id}" if f"!{definition.id}" in self.runtime.stream_definitions else None
        dead_letter = None
        if options.get("dead.letter.ref"):
            dl_ann = Annotation("sink", (AnnotationElement("ref", options["dead.letter.ref"]),), (), ann.pos)
            dl_type, dl_options = _options(dl_ann, self.config.refs)
            dead_letter = _connector(Kind.SINK, dl_type, dl_options, f"{name}/dead-letter", dl_ann)
            self.dead_letters.append(dead_letter)
        return _SourceBinding(definition.id, source, mapper, type_name, name, dead_letter, fault)

    def _bind_sink(self, definition: StreamDefinition, ann: Annotation, n: int) -> _SinkBinding:
        type_name, options = _options(ann, self.config.refs)
        name = f"{self.name}/{definition.id}/sink{n}"
        sink = _connector(Kind.SINK, type_name, options, name, ann)
        maps = ann.nested("map")
        mapper = mappers.create_sink_mapper(definition.attributes, maps[0] if maps else None, definition.id)
        templates = mappers.option_templates({k: v for k, v in options.items() if k not in _HOST_OPTIONS},
                                             definition.attributes)
        on_error = options.get("on.error", "LOG").upper()
        if on_error not in ("LOG", "WAIT", "STREAM"):
            raise SiddhiAppCreationError(f"@sink on.error must be LOG, WAIT or STREAM, not '{on_error}'",
                                         ann.pos.line if ann.pos else None, ann.pos.column if ann.pos else None)
        if on_error == "STREAM" and f"!{definition.id}" not in self.runtime.stream_definitions:
            raise SiddhiAppCreationError(
                f"@sink on.error='STREAM' needs a fault stream: add @OnError(action='STREAM') to {definition.id}",
                ann.pos.line if ann.pos else None, ann.pos.column if ann.pos else None)
        binding = _SinkBinding(definition.id, sink, mapper, templates, on_error, type_name)
        self.runtime.add_callback(definition.id, lambda events, b=binding: self._on_output(b, events))
        return binding

    # ------------------------------------------------------------------ outputs
    def _on_output(self, binding: _SinkBinding, events: list[Any]) -> None:
        """Engine callback (any thread): queue the rows for the sink's worker."""
        rows = [e.data for e in events]
        if threading.get_ident() == self._loop_thread or self._loop is None:
            self._enqueue(binding, rows)
        else:  # a timer thread: hand over to the loop
            self._loop.call_soon_threadsafe(self._enqueue, binding, rows)

    def _enqueue(self, binding: _SinkBinding, rows: list[tuple[Any, ...]]) -> None:
        binding.queue.append(rows)
        binding.rows_queued += len(rows)
        binding.enqueued_seq += 1
        binding.wakeup.set()
        self.metrics.buffer_depth.labels(self.name, binding.stream_id, "out").set(binding.rows_queued)
        if binding.rows_queued > self.config.limits.sink_buffer and not self._paused:
            self._paused = True
            self._log.warning("sink is slow: pausing sources", stream=binding.stream_id,
                              queued=binding.rows_queued)
            for s in self.sources:
                s.source.pause()

    async def _sink_worker(self, b: _SinkBinding) -> None:
        backoff_initial = 0.1
        while True:
            await b.wakeup.wait()
            b.wakeup.clear()
            while b.queue:
                batch: list[tuple[Any, ...]] = []
                taken = 0
                while b.queue and len(batch) < 1000:
                    batch.extend(b.queue.popleft())
                    taken += 1
                await self._publish(b, batch, backoff_initial)
                b.rows_queued -= len(batch)
                b.flushed_seq += taken
                self.metrics.buffer_depth.labels(self.name, b.stream_id, "out").set(b.rows_queued)
                self._commit_wakeup.set()
                if self._paused and all(s.rows_queued <= self.config.limits.sink_buffer // 2 for s in self.sinks):
                    self._paused = False
                    self._log.info("sinks caught up: resuming sources")
                    for s in self.sources:
                        s.source.resume()

    async def _publish(self, b: _SinkBinding, rows: list[tuple[Any, ...]], backoff: float) -> None:
        try:
            items = mappers.map_for_sink(b.mapper, rows, b.templates)
        except mappers.MappingError as exc:
            self.metrics.sink_errors.labels(self.name, b.stream_id).inc()
            self._log.error("output could not be mapped", stream=b.stream_id, reason=str(exc), rows=len(rows))
            return
        delay = backoff
        while True:
            try:
                await b.sink.publish(items)
                await b.sink.flush()
                self.metrics.sink_messages.labels(self.name, b.stream_id, b.transport).inc(len(items))
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.metrics.sink_errors.labels(self.name, b.stream_id).inc()
                if b.on_error == "WAIT":
                    self._log.warning("publish failed, retrying", stream=b.stream_id, error=str(exc),
                                      retry_in=round(delay, 2))
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 10.0)
                    with contextlib.suppress(Exception):
                        await b.sink.wait_connected(timeout=delay)
                    continue
                if b.on_error == "STREAM":
                    handler = self.runtime.get_input_handler(f"!{b.stream_id}")
                    for row in rows:
                        handler.send([*row, exc])
                    return
                self._log.error("publish failed, events dropped", stream=b.stream_id, error=str(exc),
                                events=len(rows))
                return

    # ------------------------------------------------------------------ inputs
    async def _on_messages(self, b: _SourceBinding, messages: list[Any]) -> None:
        started = time.perf_counter()
        limit = self.config.limits.max_payload_bytes
        rows: list[tuple[Any, ...]] = []
        self.metrics.source_messages.labels(self.name, b.stream_id, b.transport).inc(len(messages))
        for m in messages:
            payload = m.payload
            if isinstance(payload, (bytes, bytearray, str)) and len(payload) > limit:
                self.metrics.oversized.labels(self.name, b.stream_id).inc()
                await self._error_route(b, m, f"payload of {len(payload)} bytes exceeds the limit of {limit}")
                continue
            try:
                rows.extend(b.mapper.map(payload, m.properties))
            except mappers.MappingError as exc:
                await self._error_route(b, m, str(exc), exc)
        if rows:
            self.runtime.get_input_handler(b.stream_id).send_rows(rows)
        self._note_consumed(b, messages)
        if messages and messages[-1].ack is not None:
            seqs = {id(s): s.enqueued_seq for s in self.sinks}
            self._pending_commits.append((b, messages[-1].ack, seqs))
            self._commit_wakeup.set()
        self.metrics.latency.labels(self.name).observe(time.perf_counter() - started)

    def _note_consumed(self, b: _SourceBinding, messages: list[Any]) -> None:
        parts = self.consumed.setdefault(b.name, {})
        for m in messages:
            props = m.properties
            offset = props.get("offset")
            if offset is not None and "partition" in props:
                parts[(str(props.get("topic", "")), int(props["partition"]))] = int(offset) + 1

    async def _error_route(self, b: _SourceBinding, message: Any, reason: str,
                           exc: Exception | None = None) -> None:
        self.metrics.mapping_errors.labels(self.name, b.stream_id).inc()
        where = {k: message.properties.get(k) for k in ("topic", "partition", "offset") if k in message.properties}
        if b.fault_stream is not None:
            attributes = self.runtime.stream_definitions[b.stream_id].attributes
            error = exc if exc is not None else ValueError(reason)
            self.runtime.get_input_handler(b.fault_stream).send([*([None] * len(attributes)), error])
        if b.dead_letter is not None:
            await b.dead_letter.publish([(message.payload, {"error": reason, **{k: str(v) for k, v in where.items()}})])
            await b.dead_letter.flush()
        self._log.warning("payload could not be mapped", stream=b.stream_id, reason=reason, **where)

    async def _commit_loop(self) -> None:
        while True:
            await self._commit_wakeup.wait()
            self._commit_wakeup.clear()
            await self._commit_ready()

    async def _commit_ready(self) -> None:
        """Commit every leading chunk whose outputs all sinks have flushed."""
        flushed = {id(s): s.flushed_seq for s in self.sinks}
        ready: dict[int, tuple[_SourceBinding, list[Any]]] = {}
        while self._pending_commits:
            b, token, seqs = self._pending_commits[0]
            if any(flushed[k] < v for k, v in seqs.items()):
                break
            self._pending_commits.popleft()
            ready.setdefault(id(b), (b, []))[1].append(token)
        for b, tokens in ready.values():
            try:
                await b.source.commit(tokens)
            except Exception as exc:  # the next commit covers these offsets again
                self._log.warning("commit failed", stream=b.stream_id, error=str(exc))

    # ------------------------------------------------------------------ lifecycle
    async def start(self, restore: tuple[bytes | None, dict[str, Any]] | None = None) -> None:
        """Open sinks, restore state, start the app, then start consuming."""
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        for sink in [*(b.sink for b in self.sinks), *self.dead_letters]:
            await _connect_with_retry(sink, self._log)
        for b in self.sinks:
            b.task = asyncio.create_task(self._sink_worker(b), name=f"srota-sink-{b.stream_id}")
        self._committer = asyncio.create_task(self._commit_loop(), name=f"srota-commit-{self.name}")
        if restore is not None and restore[0] is not None:
            skipped = self.runtime.restore(restore[0])
            self._log.info("state restored", skipped=skipped)
            for b in self.sources:
                offsets = restore[1].get(b.name)
                seek = getattr(b.source, "seek_on_start", None)
                if offsets and seek is not None:
                    seek(offsets)
        self.runtime.start()
        for b in self.sources:
            await b.source.start(lambda msgs, b=b: self._on_messages(b, msgs))
        self.started = True
        self._log.info("app started", sources=len(self.sources), sinks=len(self.sinks))

    def is_ready(self) -> bool:
        return self.started and all(getattr(b.source, "ready", True) for b in self.sources) and \
            all(getattr(b.sink, "connected", True) for b in self.sinks)

    async def stop_sources(self) -> None:
        for b in self.sources:
            with contextlib.suppress(Exception):
                await b.source.stop()

    async def drain(self) -> None:
        """Wait until every sink has published what was queued, then commit."""
        while any(b.queue for b in self.sinks) or any(b.flushed_seq < b.enqueued_seq for b in self.sinks):
            await asyncio.sleep(0.02)
        await self._commit_ready()

    async def close(self) -> None:
        self.runtime.shutdown()
        for b in self.sinks:
            if b.task is not None:
                b.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await b.task
        if self._committer is not None:
            self._committer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._committer
        for sink in [*(b.sink for b in self.sinks), *self.dead_letters]:
            with contextlib.suppress(Exception):
                await sink.close()
        self.started = False

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "file": str(self.path) if self.path else None,
            "streams": sorted(s for s in self.runtime.stream_definitions if not s.startswith("!")),
            "queries": sorted(self.runtime.queries),
            "sources": [{"stream": b.stream_id, "type": b.transport, "ready": getattr(b.source, "ready", True)}
                        for b in self.sources],
            "sinks": [{"stream": b.stream_id, "type": b.transport, "queued": b.rows_queued}
                      for b in self.sinks],
        }


async def _connect_with_retry(sink: Any, logger: Any, foreground_attempts: int = 4) -> None:
    """Connect a sink, retrying with back-off.

    After a few quick attempts the retries go on in the background, so that one broker that
    is down does not stop the service from starting (its outputs wait, and ``/ready`` says so).
    """
    delay = 0.2
    attempt = 0
    while True:
        try:
            await sink.connect()
            return
        except Exception as exc:
            attempt += 1
            if attempt == 1:
                logger.warning("sink cannot connect yet, retrying", sink=getattr(sink, "name", "?"), error=str(exc))
            if attempt == foreground_attempts:
                asyncio.get_running_loop().create_task(_connect_with_retry(sink, logger, 10**9))
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)


# ---------------------------------------------------------------------------- the service
class ServiceHost:
    """Every app of the process, the admin server and persistence."""

    def __init__(self, config: ServiceConfig, app_paths: Sequence[Path] = (), app_texts: Sequence[str] = ()) -> None:
        import_extensions()
        self.config = config
        self.apps: dict[str, AppHost] = {}
        self.metrics = Metrics(lambda: {name: a.runtime for name, a in self.apps.items()})
        self.admin: Any = None
        self.store: Any = None
        self._snapshotter: asyncio.Task[None] | None = None
        self._texts: list[tuple[Path | None, str]] = [
            (p, substitute_env(p.read_text(encoding="utf-8"), str(p))) for p in app_paths]
        self._texts.extend((None, t) for t in app_texts)

    @property
    def runtimes(self) -> dict[str, SiddhiAppRuntime]:
        return {name: a.runtime for name, a in self.apps.items()}

    def is_ready(self) -> bool:
        return bool(self.apps) and all(a.is_ready() for a in self.apps.values())

    def describe(self) -> list[dict[str, Any]]:
        return [a.describe() for a in self.apps.values()]

    async def start(self) -> None:
        for path, text in self._texts:
            app = AppHost(path, text, self.config, self.metrics)
            if app.name in self.apps:
                raise SiddhiAppCreationError(f"two apps are named '{app.name}' (use @app:name)")
            self.apps[app.name] = app
        if self.config.persistence.enabled:
            from .persistence import StateStore

            self.store = StateStore(self.config.persistence.database, self.config.persistence.revisions)
            await self.store.open()
        for app in self.apps.values():
            restore = None
            if self.store is not None:
                saved = await self.store.load(app.name)
                restore = (saved.state, saved.offsets)
            await app.start(restore)
        if self.config.http.enabled:
            from .admin import AdminServer

            self.admin = AdminServer(self, self.config.http)
            await self.admin.start()
            log.info("admin server listening", host=self.config.http.host, port=self.admin.port)
        if self.store is not None:
            self._snapshotter = asyncio.create_task(self._snapshot_loop(), name="srota-snapshots")

    async def snapshot(self) -> None:
        """Persist every app's state with the offsets of the events it includes."""
        if self.store is None:
            return
        for app in self.apps.values():
            await app.drain()
            state = app.runtime.snapshot()
            offsets = {k: dict(v) for k, v in app.consumed.items()}
            revision = await self.store.save(app.name, state, offsets)
            log.debug("snapshot saved", app=app.name, revision=revision, bytes=len(state))

    async def _snapshot_loop(self) -> None:
        interval = self.config.persistence.interval_ms / 1000.0
        while True:
            await asyncio.sleep(interval)
            try:
                await self.snapshot()
            except Exception:
                log.exception("snapshot failed")

    async def stop(self) -> None:
        """Stop consuming, drain, flush, commit, snapshot and close, within the shutdown timeout."""
        timeout = self.config.shutdown_timeout_ms / 1000.0
        log.info("shutting down", timeout_s=timeout)
        try:
            async with asyncio.timeout(timeout):
                for app in self.apps.values():
                    await app.stop_sources()
                for app in self.apps.values():
                    await app.drain()
                if self._snapshotter is not None:
                    self._snapshotter.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await self._snapshotter
                await self.snapshot()
        except TimeoutError:
            log.error("shutdown timed out: some outputs may not have been flushed (they stay uncommitted)")
        for app in self.apps.values():
            await app.close()
        if self.store is not None:
            await self.store.close()
        if self.admin is not None:
            await self.admin.stop()
        log.info("stopped")


async def serve(config: ServiceConfig, app_paths: Sequence[Path], stop: asyncio.Event | None = None) -> None:
    """Run until ``stop`` is set (or SIGTERM/SIGINT when it is None)."""
    host = ServiceHost(config, app_paths)
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    await host.start()
    try:
        await stop.wait()
    finally:
        await host.stop()


def run_service(config: ServiceConfig, app_paths: Sequence[Path]) -> int:
    """The ``srota run`` entry point: returns the process exit code."""
    try:
        asyncio.run(serve(config, app_paths))
    except SiddhiAppCreationError as exc:
        log.error("app is invalid", error=str(exc))
        return 2
    return 0
