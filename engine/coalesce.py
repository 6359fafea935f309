"""Which streams may take several senders' chunks merged into one (micro-batching).

A source that delivers one message at a time (an MQTT feed, a Kafka record, an ``@Async``
stream's single sends) pays the engine's per-chunk cost once per event.  Merging the chunks
that queued up meanwhile into one chunk is the cure, but chunk boundaries are visible in
Siddhi's semantics: an aggregating selector emits one row per chunk (per group), ``order by``
and ``limit`` apply per chunk, a partition hands each run of a key to its instance as one
chunk, a ``batch()`` window is the chunk, and a grouping sink mapper writes a chunk as one
message.  So chunks are merged only where the result is provably the same; everywhere else
each sender's chunk is dispatched on its own (still in one lock hold, which keeps part of
the gain).

A stream is *coalescible* when every receiver of its junction is:

* a stream callback that says it does not care how events are grouped into calls
  (``add_callback(..., merged_chunks=True)``: a sink whose mapper writes each event on its
  own); by default a callback gets each chunk as sent, as in Siddhi;
* a single-stream query whose output does not depend on its input's chunking (see
  :func:`chunk_invariance`); when its output chunks follow its input's, the stream it
  inserts into must be coalescible too, and it must have no query callbacks.

Anything else (joins, patterns, partitions, incremental aggregations, named windows,
queries inside partitions) makes the stream not coalescible.
With a playback clock nothing is merged: the clock advances per chunk, and windows and
``currentTimeMillis()`` see it.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from srota.grammar.model import (
    Filter,
    InsertIntoStream,
    Query,
    ReturnStream,
    SingleInputStream,
    WindowHandler,
)

#: Windows whose output chunks are their flushes, cut by the events' contents (counts,
#: timestamp attributes), not by how the input was chunked: each flush is its own chunk.
_FLUSH_CHUNKED_WINDOWS = {"lengthbatch": 2, "externaltimebatch": 3}


def chunk_invariance(query: Query, aggregates: bool, ctx: Any) -> tuple[bool, bool, str | None]:
    """Whether ``query``'s outputs are the same however its input chunks are cut, whether
    its output chunks follow its input's, and the stream it then inserts into (which must
    itself be coalescible).

    Two kinds qualify.  Behind a window of :data:`_FLUSH_CHUNKED_WINDOWS` the output chunks
    are the window's flushes, whatever the input chunks were: nothing downstream is
    affected.  Without a window, a selector emitting one row per event keeps the events but
    its output chunks follow the input's: the stream it inserts into must take merged chunks
    too.  ``aggregates``: the selector has aggregate functions.  Conservative: what is not
    known to be invariant is not.
    """
    inp = query.input
    out = query.output
    if not isinstance(inp, SingleInputStream) or inp.is_inner or query.output_rate is not None:
        return False, False, None
    window: WindowHandler | None = None
    for handler in inp.handlers:
        if isinstance(handler, Filter):
            continue
        if not isinstance(handler, WindowHandler) or window is not None:
            return False, False, None  # stream functions may emit per chunk; two windows: keep it simple
        window = handler
    if window is not None:
        max_args = _FLUSH_CHUNKED_WINDOWS.get(window.name.lower())
        if window.namespace or max_args is None or len(window.args) > max_args:
            return False, False, None
        return True, False, None
    if not _row_per_event(query, aggregates):
        return False, False, None
    if isinstance(out, ReturnStream):
        return True, True, None
    if isinstance(out, InsertIntoStream) and not out.is_inner and not out.is_fault:
        if out.target in ctx.tables:
            return True, True, None
        if out.target in ctx.windows or out.target in ctx.aggregations:
            return False, False, None
        return True, True, out.target
    return False, False, None


def _row_per_event(query: Query, aggregates: bool) -> bool:
    """Whether ``query``'s selector emits one row per event whatever its chunks (no aggregates,
    ``group by``, ``order by``, ``limit``, ``offset`` or output rate)."""
    sel = query.selector
    return not (aggregates or sel.group_by or sel.order_by or sel.limit is not None
                or sel.offset is not None or query.output_rate is not None)


def outputs_mergeable(query: Query, aggregates: bool, ctx: Any, output: Any) -> Callable[[], bool] | None:
    """For a query whose input hands the selector several outputs per input chunk one by one
    (a pattern's matches): a predicate saying when they may go as one chunk, or None when
    they never may.

    They may where the selector emits a row per event and inserts into a stream that takes
    merged chunks (:func:`plan_coalescing`), with no query callback and no debugger or
    statistics to see the chunks.  (A playback clock does not matter here: the pieces come
    from one input chunk, at one time.)
    """
    out = query.output
    if (not _row_per_event(query, aggregates) or not isinstance(out, InsertIntoStream) or out.is_inner
            or out.is_fault or out.target not in ctx.junctions):
        return None
    target = out.target

    def mergeable() -> bool:
        if ctx.inspector is not None or output.callbacks:
            return False
        if not ctx.coalescing_planned and ctx.replan_coalescing is not None:
            ctx.replan_coalescing()  # receivers changed since the last plan
        junction = ctx.junctions.get(target)
        return junction is not None and bool(junction.coalescible)

    return mergeable


def plan_coalescing(junctions: Mapping[str, Any], queries: Mapping[str, Any]) -> None:
    """Set ``coalescible`` on every junction (call again when receivers change)."""
    verdicts: dict[int, bool] = {}

    def coalescible(junction: Any, visiting: set[int]) -> bool:
        key = id(junction)
        if key in verdicts:
            return verdicts[key]
        if key in visiting:
            return False  # a cycle: keep it simple
        visiting.add(key)
        ok = True
        for receiver, owner in zip(junction.receivers, junction.owners, strict=True):
            if owner is None:
                ok = id(receiver) in junction.invariant_receivers
            else:
                query = queries.get(owner)
                ok = bool(getattr(query, "chunk_invariant", False))
                if ok and query is not None and query.follows_input and query.output.callbacks:
                    ok = False  # its callbacks would see merged chunks
                target = getattr(query, "output_stream", None)
                if ok and target is not None:
                    downstream = junctions.get(target)
                    ok = downstream is not None and coalescible(downstream, visiting)
            if not ok:
                break
        visiting.discard(key)
        verdicts[key] = ok
        return ok

    for junction in junctions.values():
        junction.coalescible = coalescible(junction, set())
