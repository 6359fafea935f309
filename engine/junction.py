"""Stream junctions and input handlers: how chunks enter and fan out.

A :class:`StreamJunction` holds the receivers of one stream (queries, callbacks, output
sinks) and hands each chunk to all of them.  An exception raised while one receiver
processes a chunk is handled the way the stream's ``@OnError`` says: logged and dropped
(the default), or sent to the fault stream ``!S`` with an ``_error`` attribute.
"""
from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from srota.engine.codegen import CodeGen
from srota.engine.debugger import QueryTerminal
from srota.engine.event import CURRENT, Event
from srota.engine.types import f32
from srota.grammar.model import AttrType, StreamDefinition

if TYPE_CHECKING:
    from srota.engine.context import AppContext

_log = logging.getLogger("srota.engine")

Receiver = Callable[[list[Event]], None]
_new = object.__new__


class StreamJunction:
    """Fans chunks of one stream out to its receivers."""

    def __init__(self, definition: StreamDefinition, ctx: AppContext) -> None:
        self.definition = definition
        self.stream_id = definition.id
        self.ctx = ctx
        self.receivers: list[Receiver] = []
        #: The query each receiver belongs to (None: a callback, a sink), for the debugger's
        #: IN checkpoints and per-query statistics.
        self.owners: list[str | None] = []
        self.fault_junction: StreamJunction | None = None
        #: ``@OnError(action='STORE')``: failed events go to the app's error store.
        self.store_errors = False
        self.events_in = 0
        self.async_buffer: AsyncBuffer | None = None

    def subscribe(self, receiver: Receiver, owner: str | None = None) -> None:
        self.receivers.append(receiver)
        self.owners.append(owner)

    def unsubscribe(self, receiver: Receiver) -> None:
        if receiver in self.receivers:
            i = self.receivers.index(receiver)
            del self.receivers[i]
            del self.owners[i]

    def enable_async(self, buffer_size: int, workers: int, batch_max: int) -> None:
        """Decouple senders from processing (``@Async``): a bounded buffer and worker threads."""
        self.async_buffer = AsyncBuffer(self, buffer_size, workers, batch_max)
        self.ctx.start_hooks.append(self.async_buffer.start)
        self.ctx.stop_hooks.append(self.async_buffer.stop)

    def send(self, chunk: list[Event]) -> None:
        """Deliver a chunk to every receiver (or to the ``@Async`` buffer)."""
        if self.async_buffer is not None:
            self.async_buffer.put(chunk)
        else:
            self.dispatch(chunk)

    def dispatch(self, chunk: list[Event]) -> None:
        """Deliver a chunk to every receiver now, routing failures per ``@OnError``.

        A query stage that evaluates user expressions (filters, selectors of single-stream
        queries) reports the one event that raised through :meth:`AppContext.fault_event`
        and goes on with the rest of the chunk.  An exception that still reaches this loop
        comes from a stage that cannot tell which event failed; then a chunk of one event is
        faulted as such, and a longer one is faulted whole (replaying it event by event
        could apply the events that got through twice to stateful stages).
        """
        self.events_in += len(chunk)
        ctx = self.ctx
        outer = ctx.dispatching
        ctx.dispatching = self
        try:
            if ctx.inspector is None:
                for receiver in self.receivers:
                    try:
                        receiver(chunk)
                    except Exception as exc:  # one failing query must not stop the others
                        self.on_error(chunk, exc)
            else:
                self._dispatch_inspected(chunk)
        finally:
            ctx.dispatching = outer

    def _dispatch_inspected(self, chunk: list[Event]) -> None:
        """:meth:`dispatch` with a debugger or statistics attached (IN checkpoints, timings)."""
        ctx = self.ctx
        for receiver, owner in zip(self.receivers, self.owners, strict=True):
            if owner is None:
                try:
                    receiver(chunk)
                except Exception as exc:
                    self.on_error(chunk, exc)
                continue
            debugger = ctx.debugger  # read once: another thread may detach it meanwhile
            if debugger is not None:
                debugger.checkpoint(owner, QueryTerminal.IN, chunk)
            statistics = ctx.statistics
            try:
                if statistics is not None:
                    statistics.time_query(owner, receiver, chunk)
                else:
                    receiver(chunk)
            except Exception as exc:
                self.on_error(chunk, exc)

    def on_error(self, chunk: list[Event], exc: Exception) -> None:
        """Route events that failed in a query: to the fault stream ``!S``, the error store or the log."""
        self.ctx.metrics_error(self.stream_id)
        if self.store_errors:
            self.ctx.store_error(self.stream_id, chunk, exc)
            return
        if self.fault_junction is not None:
            faults = [Event(e.timestamp, (*e.data, exc), CURRENT) for e in chunk]
            self.fault_junction.send(faults)
            return
        _log.error("error processing events of stream %s in app %s: %s: %s (%d event(s) dropped)",
                   self.stream_id, self.ctx.name, type(exc).__name__, exc, len(chunk),
                   exc_info=exc, extra={"app": self.ctx.name, "stream": self.stream_id, "dropped": len(chunk)})



class AsyncBuffer:
    """The bounded buffer of an ``@Async`` stream.

    Senders that do not hold the app lock wait while the buffer is full (back-pressure).
    A sender that holds it (a query inserting into this stream) drains the buffer itself
    instead of waiting, since the workers need that lock.  Chunks are taken out and
    processed under the app lock only, so their order is kept.
    """

    def __init__(self, junction: StreamJunction, size: int, workers: int, batch_max: int) -> None:
        self.junction = junction
        self.size = size
        self.batch_max = batch_max
        self.workers = workers
        self._events: deque[Event] = deque()
        self._cond = threading.Condition()
        self._running = False
        self._threads: list[threading.Thread] = []

    def __len__(self) -> int:
        return len(self._events)

    def put(self, chunk: list[Event]) -> None:
        # A non-blocking acquire of the re-entrant app lock succeeds exactly when this thread
        # holds it already (a query inserting into this stream) or nobody does: either way this
        # thread may process the buffer itself, and must, rather than wait for workers that
        # need the lock it holds.
        lock = self.junction.ctx.lock
        locked = False
        with self._cond:
            while self._running and len(self._events) + len(chunk) > self.size and self._events:
                if lock.acquire(blocking=False):
                    locked = True
                    break
                self._cond.wait(0.1)
            self._events.extend(chunk)
            self._cond.notify_all()
        if not locked and len(self._events) > self.size:
            locked = lock.acquire(blocking=False)
        if locked:
            try:
                if len(self._events) > self.size:
                    self._drain()
            finally:
                lock.release()

    def _take(self) -> list[Event]:
        with self._cond:
            n = min(len(self._events), self.batch_max)
            batch = [self._events.popleft() for _ in range(n)]
            self._cond.notify_all()
        return batch

    def drain(self) -> None:
        """Process every buffered chunk now (the caller holds the app lock)."""
        self._drain()

    def _drain(self) -> None:
        while True:
            batch = self._take()
            if not batch:
                return
            self.junction.dispatch(batch)

    def _work(self) -> None:
        lock = self.junction.ctx.lock
        while self._running:
            with self._cond:
                while self._running and not self._events:
                    self._cond.wait(0.2)
            with lock:
                batch = self._take()
                if batch:
                    self.junction.dispatch(batch)

    def start(self) -> None:
        self._running = True
        for n in range(self.workers):
            t = threading.Thread(target=self._work, name=f"srota-async-{self.junction.stream_id}-{n}",
                                 daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self) -> None:
        """Process what is buffered, then tell the workers to stop.

        Runs as a stop hook, under the app lock, so the workers (which need that lock) end
        once it is released; :meth:`join` waits for them.
        """
        with self.junction.ctx.lock:
            self._drain()
        self._running = False
        with self._cond:
            self._cond.notify_all()

    def join(self, timeout: float = 2.0) -> None:
        """Wait for the stopped workers to end (call without holding the app lock)."""
        for t in self._threads:
            t.join(timeout=timeout)
        self._threads.clear()


class InputHandler:
    """Sends events into one stream: ``send(data[, timestamp])`` or ``send_events([Event...])``.

    Thread-safe: each call holds the app lock, so events and timer ticks never interleave
    mid-chunk (DESIGN.md decision 5).
    """

    def __init__(self, junction: StreamJunction, ctx: AppContext) -> None:
        self._junction = junction
        self._ctx = ctx
        self.stream_id = junction.stream_id
        self._convert = _float_converter(junction.definition)
        # a named window stands in for a junction here: it has send() only
        self._dispatch = getattr(junction, "dispatch", junction.send)

    def send(self, data: Sequence[Any], timestamp: int | None = None) -> None:
        """Send one event (timestamp defaults to the app clock's now)."""
        ctx = self._ctx
        junction = self._junction
        row = (data if data.__class__ is tuple else tuple(data)) if self._convert is None else self._convert(data)
        # The hot path of one-by-one senders: the event is made without __init__'s call.
        e = _new(Event)
        e.data = row
        e.type = CURRENT
        if junction.async_buffer is not None:
            e.timestamp = ctx.clock.now() if timestamp is None else timestamp
            junction.send([e])
            return
        if ctx.pause_gate is not None:  # runtime.pause(): the next chunk waits here
            ctx.pause_gate.wait()
        with ctx.lock:
            if timestamp is None:
                timestamp = ctx.clock.now()
            elif ctx.playback:
                ctx.clock.advance(timestamp)
            e.timestamp = timestamp
            self._dispatch([e])

    def send_events(self, events: Sequence[Event]) -> None:
        """Send several events as one chunk."""
        if not events:
            return
        ctx = self._ctx
        convert = self._convert
        if convert is None:
            chunk = [e if e.data.__class__ is tuple and e.type == CURRENT
                     else Event(e.timestamp, tuple(e.data)) for e in events]
        else:
            chunk = [Event(e.timestamp, convert(e.data)) for e in events]
        if self._junction.async_buffer is not None:
            self._junction.send(chunk)
            return
        if ctx.pause_gate is not None:  # runtime.pause(): the next chunk waits here
            ctx.pause_gate.wait()
        with ctx.lock:
            if ctx.playback:
                clock = ctx.clock
                if not clock.started:  # the clock starts at the chunk's first time
                    clock.advance(min(e.timestamp for e in events))
                clock.advance(max(e.timestamp for e in events))
            self._junction.send(chunk)

    def send_rows(self, rows: Sequence[Sequence[Any]], timestamp: int | None = None) -> None:
        """Send many rows as one chunk, all with one timestamp (the fast path for sources)."""
        if not rows:
            return
        ctx = self._ctx
        if ctx.pause_gate is not None:  # runtime.pause(): the next chunk waits here
            ctx.pause_gate.wait()
        with ctx.lock:
            if timestamp is None:
                timestamp = ctx.clock.now()
            elif ctx.playback:
                ctx.clock.advance(timestamp)
            convert = self._convert or tuple
            self._junction.send([Event(timestamp, convert(r)) for r in rows])


def _f32_or_none(value: Any) -> Any:
    return value if value is None or not isinstance(value, (int, float)) else f32(value)


def _float_converter(definition: Any) -> Callable[[Sequence[Any]], tuple[Any, ...]] | None:
    """A row converter rounding ``float`` attributes to 32 bits, or None when there are none.

    A ``float`` attribute holds a Java float; senders give Python (64-bit) floats, so they are
    rounded once on the way in and every comparison and join sees the value Siddhi would.
    """
    attributes = getattr(definition, "attributes", ())
    floats = [i for i, a in enumerate(attributes) if a.type is AttrType.FLOAT]
    if not floats:
        return None
    gen = CodeGen({"_r": _f32_or_none})
    parts = "".join((f"_r(d[{i}]), " if i in floats else f"d[{i}], ") for i in range(len(attributes)))
    return gen.function("_round_floats", "d", [f"return ({parts})"])
