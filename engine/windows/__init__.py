"""Windows: Siddhi's built-in window processors, and how other planners use them.

Entry point::

    factory = build_window(handler, scope, ctx, gen, expired=True, findable=True)
    window = factory()            # one processor per query (or partition-key) instance

``build_window`` finds the ``Kind.WINDOW`` extension named by ``handler`` (``#window.name(...)``),
validates the arguments against its declared :class:`~engine.registry.Param` list (count, type,
constant or attribute) and the window's own rules, and raises
:class:`~grammar.errors.SiddhiAppCreationError` with the line and column of the offending
argument.  ``expired`` says whether the query's output needs expired events (``insert
expired|all events``); ``findable`` whether somebody will scan the window's contents (joins,
named windows, on-demand queries).  Both only let a window keep less; the events it emits for
aggregation are the same.

The processor interface (what joins and named windows build on)
----------------------------------------------------------------

``window.next``
    A callable taking a chunk (``list[Event]``); set it before the first event.  It is called
    only with non-empty chunks, possibly several times for one input chunk (a batch flush and
    the events that follow it are separate chunks, as in Siddhi).
``window.process(chunk)``
    Feed a chunk of CURRENT events (typed ``engine.event.CURRENT``).  The window calls
    ``next`` with what it emits:

    * sliding windows (length, time, timeLength, externalTime, sort, frequent, lossyFrequent,
      expression, session): the CURRENT event, preceded in the same chunk by the EXPIRED
      events it pushed out (``Event(now, data, EXPIRED)``; sort puts the expired one after);
    * batch windows (lengthBatch, timeBatch, externalTimeBatch, batch, expressionBatch,
      cron): at each flush, the previous batch as EXPIRED events (only when ``expired``),
      then one RESET event (``engine.event.RESET``; selectors clear their aggregates), then
      the new batch as CURRENT events;
    * delay emits the delayed events as CURRENT events, nothing expired.

    Time-driven output (timers) arrives on ``next`` outside any ``process`` call, with the
    app lock held.  Downstream receivers must ignore event types they do not know
    (``e.type > 1`` are TIMER/RESET).
``window.contents()``
    An iterable of the events the window holds now (what Siddhi's ``find`` scans): the
    sliding window's events, the last emitted batch for batch windows (the accumulating
    batch for ``stream.current.event`` modes), the delayed events for delay.  The events
    are the original CURRENT events (never mutate them); take ``list(...)`` before sending
    anything downstream.
``window.snapshot_state()`` / ``window.restore_state(state)``
    Picklable state; restoring re-arms the window's timers.
``window.stop()``
    Forget pending timers.

Time: windows read ``ctx.clock.now()`` (wall time live, event time under ``@app:playback``)
and ask ``ctx.scheduler`` for timers, as Siddhi's windows use the app's timestamp generator
and scheduler.  Event-time windows (externalTime, externalTimeBatch) read the timestamp
attribute instead.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from srota.engine.codegen import CodeGen
from srota.engine.expression import error_at
from srota.engine.registry import Kind, registry
from srota.engine.windows import batch as _batch  # noqa: F401 - registers batch, cron
from srota.engine.windows import expression as _expression  # noqa: F401 - registers expression, expressionBatch
from srota.engine.windows import external as _external  # noqa: F401 - registers externalTime, externalTimeBatch
from srota.engine.windows import frequent as _frequent  # noqa: F401 - registers frequent, lossyFrequent
from srota.engine.windows import length as _length  # noqa: F401 - registers length, lengthBatch
from srota.engine.windows import session as _session  # noqa: F401 - registers session
from srota.engine.windows import sort as _sort  # noqa: F401 - registers sort
from srota.engine.windows import time as _time  # noqa: F401 - registers time, timeBatch, timeLength, delay
from srota.engine.windows.base import WindowProcessor, WindowSpec, analyse_args, check_params, compile_args
from srota.grammar.errors import did_you_mean
from srota.grammar.model import WindowHandler

__all__ = ["WindowProcessor", "WindowSpec", "build_window"]


def build_window(handler: WindowHandler, scope: Any, ctx: Any, gen: CodeGen, *,
                 expired: bool = True, findable: bool = True) -> Callable[[], WindowProcessor]:
    """Validate ``#window.name(args)`` and return a factory of fresh window processors."""
    ext = registry.get(Kind.WINDOW, handler.namespace, handler.name)
    if ext is None:
        qual = f"{handler.namespace}:{handler.name}" if handler.namespace else handler.name
        known = [w.qualified_name for w in registry.all(Kind.WINDOW)]
        raise error_at(f"unknown window '{qual}'{did_you_mean(qual, known)}", handler)
    infos, compiled = analyse_args(handler, scope, ctx, gen)
    params = check_params(ext, handler, infos)
    args = compile_args(handler, params, infos, compiled, scope, gen)
    named = {a.param.name: a for a in args if a.param is not None and not a.param.repeat}
    spec = WindowSpec(handler, args, named, scope, ctx, gen, expired, findable)
    # The window's timers take their turn in planning order (one rank per window handler,
    # shared by every partition key's instance), as Siddhi creates one Scheduler per window.
    rank_of = getattr(getattr(ctx, "scheduler", None), "rank_of", None)
    if rank_of is not None:
        spec.timer_rank = rank_of(handler)
    return ext.factory(spec)
