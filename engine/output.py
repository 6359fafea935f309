"""The end of a query: query callbacks and the output target.

A query's rate limiter hands its chunks to :class:`QueryOutput`, which calls the query
callbacks with ``(timestamp, in_events, remove_events)`` and then the target (a stream
junction, a table, a named window).  ``insert ... into`` a stream turns expired events into
current ones (Siddhi's ``InsertIntoStreamCallback``, conformance note 3).

A batch window's RESET events reach here where Siddhi lets them (a selector without
aggregation or ``group by`` keeps them in its chunk, ``output first`` limiters may pick one),
in chunks marked :class:`WithResets`: the callbacks see the chunk (its time, and a call when
only resets are left), the target never sees a reset.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from typing import Any

from srota.engine.debugger import QueryTerminal
from srota.engine.event import CURRENT, EXPIRED, RESET, Event

_OUT = QueryTerminal.OUT

_log = logging.getLogger("srota.engine")

QueryCallback = Callable[[int, "list[Event] | None", "list[Event] | None"], None]


class WithResets(list):
    """An output chunk that holds RESET events among its rows.

    Made only where a reset can be in the chunk (the stateless selector's rare branch, an
    ``output first`` limiter letting one out), so that :class:`QueryOutput` tells such a
    chunk by its class and other chunks pay no scan for resets.
    """

    __slots__ = ()


class QueryOutput:
    """Delivers a query's output chunks to its callbacks and target."""

    def __init__(self, query_name: str, ctx: Any = None) -> None:
        self.query_name = query_name
        self.callbacks: list[QueryCallback] = []
        self.target: Callable[[list[Event]], None] | None = None
        self.events_out = 0
        self.ctx = ctx  # for the debugger's OUT checkpoint

    def __call__(self, chunk: list[Event], removed: Collection[int] = ()) -> None:
        """Deliver ``chunk``; the callbacks see the rows whose ids are in ``removed`` as
        removed events, the target as current ones (see PatternRuntime._send_captured)."""
        if not chunk:
            # Siddhi's aggregating selector hands on an empty chunk when offset or limit
            # removed its row(s) (processInBatchNoGroupBy/processInBatchGroupBy return it, not
            # null): the query callbacks are called with neither list and timestamp -1, a
            # target gets nothing (OutputRateLimiter.sendToCallBacks, QueryCallback)
            for cb in self.callbacks:
                cb(-1, None, None)
            return
        rows = chunk
        if chunk.__class__ is WithResets:
            rows = [e for e in chunk if e.type != RESET]
        self.events_out += len(rows)
        ctx = self.ctx
        if rows and ctx is not None and ctx.inspector is not None:
            debugger = ctx.debugger  # read once: another thread may detach it meanwhile
            if debugger is not None:
                debugger.checkpoint(self.query_name, _OUT, rows)
        if self.callbacks:
            # (a chunk of resets only still calls the callbacks, with neither list, at the
            # last event's time: Siddhi's QueryCallback.receiveStreamEvent)
            if removed:
                current = [e for e in rows if e.type == CURRENT and id(e) not in removed]
                expired = [e for e in rows if e.type == EXPIRED or id(e) in removed]
            else:
                current = [e for e in rows if e.type == CURRENT]
                expired = [e for e in rows if e.type == EXPIRED]
            ts = chunk[-1].timestamp
            for cb in self.callbacks:
                cb(ts, current or None, expired or None)
        if self.target is not None and rows:
            # (Siddhi's sendToCallBacks removes the resets before any output callback: a
            # stream, table or named window)
            self.target(rows)


def insert_into_stream(junction: Any) -> Callable[[list[Event]], None]:
    """A target that sends output chunks into a stream as current events.

    Resets (a batch window's, which a selector without aggregation passes on) stay out, and
    a chunk left empty is not sent (Siddhi's ``OutputRateLimiter.sendToCallBacks``).
    """
    send = junction.send

    def target(chunk: list[Event]) -> None:
        for e in chunk:
            if e.type != CURRENT:
                rows = [Event(x.timestamp, x.data) for x in chunk if x.type <= EXPIRED]
                if rows:
                    send(rows)
                return
        send(chunk)

    return target
