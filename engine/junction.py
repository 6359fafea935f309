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
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from srota.engine import collector
from srota.engine.codegen import CodeGen
from srota.engine.columnar import make_event, plain_check
from srota.engine.debugger import QueryTerminal
from srota.engine.event import CURRENT, Event, RawEvent
from srota.engine.types import f32
from srota.grammar.model import AttrType, StreamDefinition

if TYPE_CHECKING:
    from srota.engine.context import AppContext

_log = logging.getLogger("srota.engine")
#: the compiled test of a sender's chunk (engine/_speedups.c), or None
_plain_check = plain_check()

Receiver = Callable[[list[Event]], None]


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
        #: Receivers without an owner that do not care how events are grouped into chunks
        #: (callbacks), by id; and whether senders' chunks may be merged (engine.coalesce).
        self.invariant_receivers: set[int] = set()
        self.coalescible = False
        #: Receivers that read the fields of the events they get and make output events of
        #: their own (see :meth:`mark_copying`), by id; and whether a sender's events must be
        #: checked and copied before they are sent here (``InputHandler._prepare``): not when
        #: every receiver is such a reader.
        self.copying_receivers: set[int] = set()
        self.checks_senders = True

    def subscribe(self, receiver: Receiver, owner: str | None = None, chunk_invariant: bool = False) -> None:
        """Add a receiver; ``chunk_invariant``: it does not care how events are grouped."""
        self.receivers.append(receiver)
        self.owners.append(owner)
        if chunk_invariant:
            self.invariant_receivers.add(id(receiver))
        self.ctx.coalescing_planned = False
        self.checks_senders = True

    def unsubscribe(self, receiver: Receiver) -> None:
        if receiver in self.receivers:
            i = self.receivers.index(receiver)
            removed = self.receivers.pop(i)
            del self.owners[i]
            if receiver not in self.receivers:
                self.invariant_receivers.discard(id(receiver))
            self.copying_receivers.discard(id(removed))
            self.ctx.coalescing_planned = False
            self._plan_sender_checks()

    def mark_copying(self, receiver: Receiver) -> None:
        """Note that ``receiver`` (already subscribed) only reads its events' fields.

        Such a receiver (a single-stream query's generated select loop without a type test
        or ``select *``) keeps no event it gets and passes none on: every output event and
        row is made anew from the fields it reads, and an event that fails is copied before
        it is routed (``AppContext.fault_event``).  A sender's list for a tuple, or an
        expired event, gives it the same outputs as the engine's checked copy would, so
        where every receiver is one, senders' events go through unchecked.
        """
        for r in self.receivers:
            if r == receiver:
                self.copying_receivers.add(id(r))
        self._plan_sender_checks()

    def _plan_sender_checks(self) -> None:
        copying = self.copying_receivers
        self.checks_senders = not all(id(r) in copying for r in self.receivers)

    def chunks_mergeable(self) -> bool:
        """Whether senders' chunks may go through as one now (engine/coalesce.py; not with a
        playback clock, which advances per chunk, nor with a debugger or statistics, which
        show chunks as sent)."""
        ctx = self.ctx
        if ctx.playback or ctx.inspector is not None:
            return False
        if not ctx.coalescing_planned and ctx.replan_coalescing is not None:
            ctx.replan_coalescing()  # receivers changed since the last plan
        return self.coalescible

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
    """The bounded buffer of an ``@Async`` stream: micro-batching of one-by-one senders.

    A sender hands its chunk over and returns.  A worker takes everything that queued up
    meanwhile (whole chunks, up to ``batch.size.max`` events) and processes it in one hold
    of the app lock: as one chunk where the stream is coalescible (no output depends on
    where chunks are cut, :mod:`srota.engine.coalesce`), chunk by chunk otherwise, so the
    outputs are those of sending synchronously.  No timer: a worker sleeps only while the
    buffer is empty and the sender that finds it asleep wakes it, so an idle stream's
    event is processed at once, and a busy stream's events pile up while the worker is
    busy with the previous batch.

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
        # deque.append and popleft are atomic: senders and workers share no lock on the hot
        # path, so a sender never waits for a worker (which would hand the GIL back and forth
        # and cut the batches to a few events).
        self._chunks: deque[list[Event] | tuple[int, tuple[Any, ...]]] = deque()
        # Events queued = items + the extra events of multi-event chunks (kept under
        # _extra_lock; single events, the hot path, need no lock: len() of a deque is atomic).
        self._extra = 0
        self._extra_lock = threading.Lock()
        self._room = threading.Condition()   # senders waiting for room
        self._senders_waiting = 0
        self._wake = threading.Event()       # set for a sleeping worker when chunks arrive
        self._sleeping = False
        self._running = False
        self._threads: list[threading.Thread] = []

    def __len__(self) -> int:
        return len(self._chunks) + self._extra

    def put(self, chunk: list[Event]) -> None:
        """Queue a sender's chunk (kept whole: its events are processed together)."""
        first = chunk[0] if len(chunk) == 1 else None
        if first is not None and first.type == CURRENT and isinstance(first.data, tuple):
            self.put_one(first.timestamp, first.data)
            return
        if self._running and self._chunks and len(self) + len(chunk) > self.size:
            self._wait_for_room(len(chunk))
        with self._extra_lock:
            self._extra += len(chunk) - 1
        self._append(chunk)

    def sender(self, clock: Any, convert: Callable[[Sequence[Any]], tuple[Any, ...]] | None
               ) -> Callable[[Sequence[Any], int | None], None]:
        """``InputHandler.send`` for this stream: :meth:`put_one` of the row, with the checks
        of the common case inline (one call per event instead of three)."""
        chunks = self._chunks
        put_one = self.put_one
        size = self.size

        def send(data: Sequence[Any], timestamp: int | None = None) -> None:
            """Send one event (timestamp defaults to the app clock's now)."""
            row = (data if data.__class__ is tuple else tuple(data)) if convert is None else convert(data)
            if timestamp is None:
                timestamp = clock.now()
            if len(chunks) < size - self._extra and self._running:
                chunks.append((timestamp, row))
                if self._sleeping:
                    self._wake_worker()
            else:
                put_one(timestamp, row)

        return send

    def put_one(self, timestamp: int, row: tuple[Any, ...]) -> None:
        """Queue a single sent event as ``(timestamp, row)``: a tuple of plain values that the
        garbage collector stops tracking, where an :class:`Event` (made when it is taken)
        would be promoted through the generations while it waits and bring on full
        collections."""
        if self._running and self._chunks and len(self._chunks) + self._extra >= self.size:
            self._wait_for_room(1)
        self._append((timestamp, row))

    def _append(self, item: list[Event] | tuple[int, tuple[Any, ...]]) -> None:
        self._chunks.append(item)
        if self._sleeping:
            self._wake_worker()
        if not self._running and len(self) > self.size:
            self._drain_if_lock_free()  # no workers (not started, or stopped)

    def _wake_worker(self) -> None:
        # The flag is cleared here, by the first sender to see it: the worker wakes only when
        # it gets the GIL, and until then every send would see it asleep and set the event
        # again (a lock and a notify per event: it cost a third of a fast sender's time).
        self._sleeping = False
        self._wake.set()

    def _wait_for_room(self, n: int) -> None:
        # A non-blocking acquire of the re-entrant app lock succeeds exactly when this thread
        # holds it already (a query inserting into this stream) or nobody does: either way this
        # thread may process the buffer itself, and must, rather than wait for workers that
        # need the lock it holds.
        lock = self.junction.ctx.lock
        with self._room:
            while self._running and self._chunks and len(self) + n > self.size:
                if lock.acquire(blocking=False):
                    try:
                        self._drain()
                    finally:
                        lock.release()
                    return
                self._senders_waiting += 1
                self._room.wait(0.1)
                self._senders_waiting -= 1

    def _drain_if_lock_free(self) -> None:
        lock = self.junction.ctx.lock
        if lock.acquire(blocking=False):
            try:
                self._drain()
            finally:
                lock.release()

    def _take(self) -> list[list[Event] | tuple[int, tuple[Any, ...]]]:
        """The next batch (the caller holds the app lock): whole chunks (single events as
        :meth:`put_one` queued them), up to ``batch_max`` events, at least one."""
        taken: list[list[Event] | tuple[int, tuple[Any, ...]]] = []
        n = 0
        extra = 0
        chunks = self._chunks
        batch_max = self.batch_max
        while chunks:
            item = chunks[0]
            size = 1 if item.__class__ is tuple else len(item)
            if taken and n + size > batch_max:
                break
            taken.append(chunks.popleft())
            n += size
            extra += size - 1
        self._taken(extra)
        return taken

    def _taken(self, extra: int) -> None:
        """Account for the extra events of the multi-event chunks just taken, and tell the
        senders waiting for room."""
        if extra:
            with self._extra_lock:
                self._extra -= extra
        if self._senders_waiting:
            with self._room:
                self._room.notify_all()

    def _process(self, items: list[list[Event] | tuple[int, tuple[Any, ...]]]) -> None:
        """One batch (the caller holds the app lock), chunk by chunk: the stream does not merge
        them (merged batches are :meth:`_take_merged`'s)."""
        junction = self.junction
        playback = junction.ctx.playback
        for item in items:
            chunk = [Event(*item)] if isinstance(item, tuple) else item
            if playback:  # the clock moves when the events are processed, as for a synchronous send
                advance_clock(junction.ctx.clock, chunk)
            junction.dispatch(chunk)

    def drain(self) -> None:
        """Process every buffered chunk now (the caller holds the app lock)."""
        self._drain()

    def _drain(self) -> None:
        while self._step():
            pass

    def _step(self) -> bool:
        """Process the next batch (the caller holds the app lock); False when there was none."""
        junction = self.junction
        with collector.holding_off(junction.ctx.defer_gc and len(self) >= collector.MIN_EVENTS):
            if junction.chunks_mergeable():
                merged = self._take_merged()
                if merged:
                    junction.dispatch(merged)
                return bool(merged)
            batch = self._take()
            if batch:
                self._process(batch)
            return bool(batch)

    def _take_merged(self) -> list[Event]:
        """:meth:`_take` and :meth:`_process` in one pass, for a stream whose chunks merge:
        the next batch as one chunk, events made as they are taken (the micro-batching hot
        path, where the two loops cost as much as the queries)."""
        merged: list[Event] = []
        append = merged.append
        chunks = self._chunks
        popleft = chunks.popleft
        room = self.batch_max
        extra = 0
        while room > 0 and chunks:
            item = popleft()
            if item.__class__ is tuple:
                # (no __init__ call, as InputHandler.send)
                e = RawEvent()
                e.timestamp, e.data = item
                e.type = CURRENT
                append(e)
                room -= 1
                continue
            size = len(item)
            if merged and size > room:
                chunks.appendleft(item)  # whole chunks only; only one taker runs (app lock)
                break
            merged.extend(item)  # type: ignore[arg-type]
            room -= size
            extra += size - 1
        self._taken(extra)
        return merged

    def _work(self) -> None:
        lock = self.junction.ctx.lock
        wake = self._wake
        chunks = self._chunks
        while self._running:
            if not chunks:
                # Announce the sleep before the last look: a sender that appends after the
                # look sees _sleeping and sets the event, one that appended before is seen.
                wake.clear()
                self._sleeping = True
                if not chunks:
                    wake.wait(0.2)
                self._sleeping = False
                continue
            with lock:
                self._step()

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
        self._wake.set()
        with self._room:
            self._room.notify_all()

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
        if junction.async_buffer is not None:
            self.send = junction.async_buffer.sender(ctx.clock, self._convert)  # type: ignore[assignment]
        else:
            self.send = self._sender()  # type: ignore[assignment]

    def send(self, data: Sequence[Any], timestamp: int | None = None) -> None:
        """Send one event (timestamp defaults to the app clock's now)."""
        self._sender()(data, timestamp)  # (each handler has its own, made in __init__)

    def _sender(self) -> Callable[[Sequence[Any], int | None], None]:
        """:meth:`send` for this handler: the hot path of one-by-one senders, a closure over
        what never changes after the handler is made (the app's lock, clock and playback
        flag, the converter, the junction's dispatch), read as cells instead of attributes."""
        ctx = self._ctx
        convert = self._convert
        dispatch = self._dispatch
        acquire = ctx.lock.acquire
        release = ctx.lock.release
        clock = ctx.clock
        playback = ctx.playback
        new_event = RawEvent
        junction = self._junction
        if type(junction) is not StreamJunction:  # a named window: its send() only
            def send(data: Sequence[Any], timestamp: int | None = None) -> None:
                """Send one event (timestamp defaults to the app clock's now)."""
                row = (data if data.__class__ is tuple else tuple(data)) if convert is None else convert(data)
                e = new_event()
                e.data = row
                e.type = 0  # CURRENT
                if ctx.pause_gate is not None:  # runtime.pause(): the next chunk waits here
                    ctx.pause_gate.wait()
                acquire()
                try:
                    if timestamp is None:
                        timestamp = clock.now()
                    elif playback:
                        clock.advance(timestamp)
                    e.timestamp = timestamp
                    dispatch([e])
                finally:
                    release()

            return send

        # the compiled maker, which leaves an event of plain values untracked by the cyclic
        # collector (a window keeps it a while: otherwise each full collection walks it)
        make = make_event

        def send_to_junction(data: Sequence[Any], timestamp: int | None = None) -> None:
            """Send one event (timestamp defaults to the app clock's now)."""
            row = (data if data.__class__ is tuple else tuple(data)) if convert is None else convert(data)
            if ctx.pause_gate is not None:  # runtime.pause(): the next chunk waits here
                ctx.pause_gate.wait()
            acquire()
            try:
                if timestamp is None:
                    timestamp = clock.now()
                elif playback:
                    clock.advance(timestamp)
                if make is None:
                    # the event is made without __init__'s call
                    e = new_event()
                    e.data = row
                    e.type = 0  # CURRENT
                    e.timestamp = timestamp
                    chunk = [e]
                else:
                    chunk = [make(timestamp, row, 0)]
                # StreamJunction.dispatch, inline (one call less per event)
                junction.events_in += 1
                outer = ctx.dispatching
                ctx.dispatching = junction
                try:
                    if ctx.inspector is None:
                        for receiver in junction.receivers:
                            try:
                                receiver(chunk)
                            except Exception as exc:  # one failing query must not stop the others
                                junction.on_error(chunk, exc)
                    else:
                        junction._dispatch_inspected(chunk)
                finally:
                    ctx.dispatching = outer
            finally:
                release()

        return send_to_junction

    def send_events(self, events: Sequence[Event]) -> None:
        """Send several events as one chunk."""
        if not events:
            return
        ctx = self._ctx
        chunk = self._prepare(events)
        if self._junction.async_buffer is not None:
            self._junction.send(chunk)
            return
        if ctx.pause_gate is not None:  # runtime.pause(): the next chunk waits here
            ctx.pause_gate.wait()
        with ctx.lock, collector.holding_off(ctx.defer_gc and len(chunk) >= collector.MIN_EVENTS):
            if ctx.playback:
                advance_clock(ctx.clock, chunk)
            self._junction.send(chunk)

    def send_rows(self, rows: Sequence[Sequence[Any]], timestamp: int | None = None) -> None:
        """Send many rows as one chunk, all with one timestamp (the fast path for sources)."""
        if rows:
            self.send_row_groups([rows], timestamp)

    def send_row_groups(self, groups: Sequence[Sequence[Sequence[Any]]], timestamp: int | None = None) -> None:
        """Send each group of rows as a chunk of its own (one per message of a source), all
        with one timestamp, merged into one chunk where that changes no output (see
        :meth:`send_chunks`).

        A group with ``timestamps`` (one per row: :class:`mappers.TimedRows`, a format that
        carries its events' times) sends its events with those; under ``@app:playback`` the
        clock then follows them chunk by chunk, as :meth:`send_chunks` does.
        """
        ctx = self._ctx
        if ctx.pause_gate is not None:  # runtime.pause(): the next chunk waits here
            ctx.pause_gate.wait()
        with ctx.lock, collector.holding_off(ctx.defer_gc and sum(map(len, groups)) >= collector.MIN_EVENTS):
            if timestamp is None:
                timestamp = ctx.clock.now()
            elif ctx.playback:
                ctx.clock.advance(timestamp)
            convert = self._convert or tuple
            # (a plain list is the usual group: its test costs the hot path nothing more)
            chunks = [[Event(timestamp, convert(r)) for r in rows] if rows.__class__ is list
                      else _timed_chunk(rows, timestamp, convert) for rows in groups if rows]
            if ctx.playback and any(rows.__class__ is not list for rows in groups):
                self._send_each_on_its_time(chunks)
                return
            self._send_chunks(chunks)

    def send_chunks(self, chunks: Sequence[Sequence[Event]]) -> None:
        """Send several chunks in order, as :meth:`send_events` would one after another.

        Where the stream is coalescible (:mod:`srota.engine.coalesce`: no output depends on
        where its chunks are cut) they go through as one chunk, which costs the engine's
        per-chunk work once instead of once per chunk: the micro-batching of sources that
        deliver one message at a time.
        """
        ctx = self._ctx
        prepared = [self._prepare(c) for c in chunks if c]
        if not prepared:
            return
        if self._junction.async_buffer is not None:  # the buffer keeps each chunk's bounds
            for chunk in prepared:
                self._junction.send(chunk)
            return
        if ctx.pause_gate is not None:
            ctx.pause_gate.wait()
        with ctx.lock, collector.holding_off(ctx.defer_gc and sum(map(len, prepared)) >= collector.MIN_EVENTS):
            if ctx.playback:
                self._send_each_on_its_time(prepared)
                return
            self._send_chunks(prepared)

    def _prepare(self, events: Sequence[Event]) -> list[Event]:
        """The engine's own copy of a sender's events: tuples of converted values, CURRENT."""
        convert = self._convert
        if convert is None:
            junction = self._junction
            if not junction.checks_senders and junction.async_buffer is None and self._ctx.inspector is None:
                # Every receiver only reads the events' fields (StreamJunction.mark_copying):
                # the check costs a quarter of a filter's time and changes none of their
                # outputs.  (Not where a buffer keeps the events for later, nor where a
                # debugger or statistics show them.)
                return list(events)
            # (looking for an event to copy first is cheaper than a conditional per event,
            # and the usual chunk has none; the compiled test, where it is here, is a tenth of
            # the Python one)
            plain = _plain_check
            if plain is not None and events.__class__ is list and plain(events):
                return list(events)
            if [e for e in events if e.type or e.data.__class__ is not tuple]:
                return [e if e.data.__class__ is tuple and e.type == CURRENT
                        else Event(e.timestamp, tuple(e.data)) for e in events]
            return list(events)
        return [Event(e.timestamp, convert(e.data)) for e in events]

    def _send_each_on_its_time(self, chunks: list[list[Event]]) -> None:
        """Send ``chunks`` one by one, the playback clock advanced to each (the caller holds
        the app lock): nothing is merged."""
        for chunk in chunks:
            advance_clock(self._ctx.clock, chunk)
            self._junction.send(chunk)

    def _send_chunks(self, chunks: list[list[Event]]) -> None:
        """Send ``chunks`` (the caller holds the app lock), merged where no output changes."""
        if not chunks:
            return
        junction = self._junction
        if len(chunks) > 1:
            # (a named window stands in for a junction here: it never merges)
            if getattr(junction, "chunks_mergeable", bool)():
                junction.send([e for chunk in chunks for e in chunk])
                return
        for chunk in chunks:
            junction.send(chunk)


_timestamp = attrgetter("timestamp")


def _timed_chunk(rows: Sequence[Sequence[Any]], timestamp: int, convert: Callable[[Any], Any]) -> list[Event]:
    """The events of a group that is not a plain list: with its ``timestamps`` if it has them."""
    stamps = getattr(rows, "timestamps", None)
    if stamps is None:
        return [Event(timestamp, convert(r)) for r in rows]
    if len(stamps) != len(rows):
        raise ValueError(f"{len(rows)} rows came with {len(stamps)} timestamps")
    return [Event(t, convert(r)) for t, r in zip(stamps, rows, strict=True)]


def advance_clock(clock: Any, chunk: list[Event]) -> None:
    """Move a playback clock to the time of a chunk's last event (it starts at the chunk's
    earliest), as Siddhi's ``InputHandler.send(Event[])`` does: the clock never goes back, so
    a chunk whose last event is not its latest leaves time at the last one's or where it was."""
    if not clock.started:
        clock.advance(min(map(_timestamp, chunk)))
    clock.advance(chunk[-1].timestamp)


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
    n = len(attributes)

    def short(data: Sequence[Any]) -> ValueError:
        return ValueError(f"an event of stream '{definition.id}' has {len(data)} value(s), "
                          f"the stream has {n} attributes")

    gen = CodeGen({"_r": _f32_or_none, "_short": short})
    parts = "".join((f"_r(d[{i}]), " if i in floats else f"d[{i}], ") for i in range(n))
    return gen.function("_round_floats", "d", ["try:", f"    return ({parts})",
                                               "except IndexError:", "    raise _short(d) from None"])
