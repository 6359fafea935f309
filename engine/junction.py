"""Stream junctions and input handlers: how chunks enter and fan out.

A :class:`StreamJunction` holds the receivers of one stream (queries, callbacks, output
sinks) and hands each chunk to all of them.  An exception raised while one receiver
processes a chunk is handled the way the stream's ``@OnError`` says: logged and dropped
(the default), or sent to the fault stream ``!S`` with an ``_error`` attribute.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from grammar.model import StreamDefinition

from .event import CURRENT, Event

if TYPE_CHECKING:
    from .context import AppContext

_log = logging.getLogger("srota.engine")

Receiver = Callable[[list[Event]], None]


class StreamJunction:
    """Fans chunks of one stream out to its receivers."""

    def __init__(self, definition: StreamDefinition, ctx: AppContext) -> None:
        self.definition = definition
        self.stream_id = definition.id
        self.ctx = ctx
        self.receivers: list[Receiver] = []
        self.fault_junction: StreamJunction | None = None
        self.events_in = 0

    def subscribe(self, receiver: Receiver) -> None:
        self.receivers.append(receiver)

    def unsubscribe(self, receiver: Receiver) -> None:
        if receiver in self.receivers:
            self.receivers.remove(receiver)

    def send(self, chunk: list[Event]) -> None:
        """Deliver a chunk to every receiver, routing failures per ``@OnError``."""
        self.events_in += len(chunk)
        for receiver in self.receivers:
            try:
                receiver(chunk)
            except Exception as exc:  # one failing query must not stop the others
                self._on_error(chunk, exc)

    def _on_error(self, chunk: list[Event], exc: Exception) -> None:
        self.ctx.metrics_error(self.stream_id)
        if self.fault_junction is not None:
            faults = [Event(e.timestamp, (*e.data, exc), CURRENT) for e in chunk]
            self.fault_junction.send(faults)
            return
        _log.error("error processing events of stream %s in app %s: %s: %s (%d event(s) dropped)",
                   self.stream_id, self.ctx.name, type(exc).__name__, exc, len(chunk),
                   exc_info=exc)


class InputHandler:
    """Sends events into one stream: ``send(data[, timestamp])`` or ``send_events([Event...])``.

    Thread-safe: each call holds the app lock, so events and timer ticks never interleave
    mid-chunk (DESIGN.md decision 5).
    """

    def __init__(self, junction: StreamJunction, ctx: AppContext) -> None:
        self._junction = junction
        self._ctx = ctx
        self.stream_id = junction.stream_id

    def send(self, data: Sequence[Any], timestamp: int | None = None) -> None:
        """Send one event (timestamp defaults to the app clock's now)."""
        ctx = self._ctx
        with ctx.lock:
            if timestamp is None:
                timestamp = ctx.clock.now()
            elif ctx.playback:
                ctx.clock.advance(timestamp)
            self._junction.send([Event(timestamp, tuple(data))])

    def send_events(self, events: Sequence[Event]) -> None:
        """Send several events as one chunk."""
        if not events:
            return
        ctx = self._ctx
        with ctx.lock:
            if ctx.playback:
                ctx.clock.advance(max(e.timestamp for e in events))
            chunk = [e if isinstance(e.data, tuple) and e.type == CURRENT
                     else Event(e.timestamp, tuple(e.data)) for e in events]
            self._junction.send(chunk)

    def send_rows(self, rows: Sequence[Sequence[Any]], timestamp: int | None = None) -> None:
        """Send many rows as one chunk, all with one timestamp (the fast path for sources)."""
        if not rows:
            return
        ctx = self._ctx
        with ctx.lock:
            if timestamp is None:
                timestamp = ctx.clock.now()
            elif ctx.playback:
                ctx.clock.advance(timestamp)
            self._junction.send([Event(timestamp, tuple(r)) for r in rows])
