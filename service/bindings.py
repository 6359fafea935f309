"""How the host wires an app's ``@source``/``@sink`` annotations to connectors: options,
``@distribution``, the per-stream bindings, and the small rules the host applies to them
(what a transient publish error is, payload sizes, connecting a sink with back-off)."""
from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import orjson
from srota.connectors._distribution import DistributedSink
from srota.connectors._options import creation_error
from srota.connectors.base import ConnectorError, RejectedError, Sink
from srota.engine.registry import Kind, registry
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Annotation
from srota.service.commits import CommitTracker

from srota import (
    connectors,  # noqa: F401 - registers the built-in connectors
    mappers,
)

# Options on @source/@sink that belong to the host, not to the transport.
_HOST_OPTIONS = {"type", "ref", "on.error", "dead.letter.ref", "key.attribute"}


def import_extensions() -> None:
    """Import every built-in connector and mapper module (each registers itself)."""
    import importlib
    import pkgutil

    for package in (connectors, mappers):
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("_") and info.name not in ("_options", "_base"):
                name = f"{package.__name__}.{info.name}"
                try:
                    importlib.import_module(name)
                except ImportError as exc:
                    # A broken built-in must not look like a connector that "does not exist".
                    raise ImportError(f"built-in extension module {name} cannot be imported: {exc}") from exc


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


def _rows_of(rows: list[tuple[Any, ...]], carried: list[list[int]]) -> tuple[list[tuple[Any, ...]], list[list[int]]]:
    """The rows the remaining items carry, and the items' row indexes into that list."""
    kept = sorted({r for rs in carried for r in rs})
    where = {r: i for i, r in enumerate(kept)}
    return [rows[r] for r in kept], [[where[r] for r in rs] for rs in carried]


def _distributed_sink(type_name: str, options: dict[str, str], name: str, distribution: Annotation) -> Sink:
    """``@sink(..., @distribution(strategy=..., @destination(...), ...))``: a sink per destination,
    with the ``@sink``'s options and the destination's own on top (connectors/_distribution.py)."""
    destinations = distribution.nested("destination")
    if not destinations:
        raise creation_error("@distribution needs at least one @destination(...)", distribution.pos)
    strategy = distribution.get("strategy") or ""
    if strategy.lower() == "partitioned" and not distribution.get("partitionKey"):
        raise creation_error("@distribution(strategy='partitioned') needs a partitionKey", distribution.pos)
    sinks = []
    dynamic: list[list[str]] = []
    for i, dest in enumerate(destinations):
        own = {el.key: el.value for el in dest.elements if el.key is not None}
        dynamic.append([k for k, v in own.items() if mappers.is_template(v)])
        sink = _connector(Kind.SINK, type_name, {**options, **own}, f"{name}/destination{i}", dest)
        if getattr(sink, "transactional", False):
            raise creation_error("@distribution cannot use transactional sinks", distribution.pos)
        sinks.append(sink)
    try:
        return DistributedSink(sinks, strategy, name=name, dynamic=dynamic)
    except ValueError as exc:
        raise creation_error(str(exc), distribution.pos) from None


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
    # queue, rows_queued and enqueued_seq change under AppHost._out_lock (outputs may come
    # from engine threads); the seqs count queue entries, so a chunk's outputs are "flushed"
    # once flushed_seq reaches the enqueued_seq noted at the chunk's end.
    queue: deque[list[tuple[Any, ...]]] = field(default_factory=deque)
    rows_queued: int = 0
    enqueued_seq: int = 0
    flushed_seq: int = 0
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    transactional: bool = False
    chunk_sizes: list[int] = field(default_factory=list)  # of the rows last taken (_take)
    #: Where the sink's own state goes in snapshots ("sink:<stream id>:<n>", see Sink.state).
    state_key: str = ""
    # A checkpoint's point in this queue (an enqueued_seq): the sink's state is taken once
    # flushed_seq reaches it, and _take does not take entries past it until then.
    state_at: int | None = None
    state_taken: dict[str, Any] | None = None


@dataclass
class _SourceBinding:
    stream_id: str
    source: Any
    mapper: Any
    transport: str
    name: str
    dead_letter: Any = None
    fault_stream: str | None = None
    #: What of this source may be committed (barriers: id(sink binding) -> enqueued_seq).
    commits: CommitTracker[dict[int, int]] = field(default_factory=lambda: CommitTracker(gated=False))
    #: Where the source's own state goes in snapshots ("source:<stream id>:<n>", see Source.state).
    state_key: str = ""


_background: set[asyncio.Task[None]] = set()


def _transient(exc: BaseException) -> bool:
    """Whether a publish error may go away by retrying (a connection, a broker acknowledgement)."""
    return isinstance(exc, (ConnectorError, OSError, TimeoutError)) and not isinstance(exc, RejectedError)


def _payload_size(payload: Any, limit: int) -> int:
    """The size of a payload in bytes (0 for objects from in-process transports)."""
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return len(payload)
    if isinstance(payload, str):
        # Characters are at most 4 UTF-8 bytes: encode only when the limit might be crossed.
        return len(payload.encode("utf-8", "surrogatepass")) if len(payload) * 4 > limit else len(payload)
    return 0


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
                task = asyncio.get_running_loop().create_task(_connect_with_retry(sink, logger, 10**9))
                _background.add(task)  # the loop keeps only a weak reference to tasks
                task.add_done_callback(_background.discard)
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)


def _payload_bytes(payload: Any) -> bytes:
    """A payload as bytes for the error store (objects of in-memory sources as JSON)."""
    if isinstance(payload, bytes | bytearray | memoryview):
        return bytes(payload)
    if isinstance(payload, str):
        return payload.encode("utf-8")
    return orjson.dumps(payload, default=str)
