"""Output rate limiting: ``output [all|first|last] every N events | <time>`` and ``output snapshot every <time>``.

Ports of Siddhi's ``OutputRateLimiter`` family (conformance note 15):

* per events: ``all`` releases groups of N events (an incomplete group never leaves);
  ``first`` lets the first event of each block of N through at once; ``last`` emits the
  N-th.  With ``group by``, ``first`` counts per group key and ``last`` emits the latest
  event of every key at each N-th event.
* per time: a timer ticks every period from the start; ``all`` and ``last`` emit at ticks,
  ``first`` lets an event through when a period has passed since the last one it let
  through (per key with ``group by``).
* snapshot: the selector runs unbatched and the limiter keeps a view of the query's current
  result (the window's rows, the latest aggregate, the latest row per group) and re-emits it
  at every tick.

Limiters receive the selector's output chunks (events typed CURRENT or EXPIRED, RESET when
unbatched or passed on by a selector without aggregation or ``group by`` in a
:class:`~engine.output.WithResets` chunk, :class:`~engine.selector.GroupedEvent` when
grouped) and call ``next`` with what to emit.  Ticks use the app clock and scheduler (in
playback they start with the first event, so event time does not have to crawl up from
zero).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from srota.engine.clock import next_period
from srota.engine.event import CURRENT, EXPIRED, RESET, Event
from srota.engine.expression import error_at
from srota.engine.output import WithResets
from srota.engine.registry import Kind, registry
from srota.grammar.model import (
    EventOutputRate,
    FunctionCall,
    JoinInputStream,
    Query,
    RateType,
    SingleInputStream,
    SnapshotOutputRate,
    TimeOutputRate,
    WindowHandler,
)

Emit = Callable[[list[Event]], None]


def _drop(chunk: list[Event]) -> None:
    return None


def _key(e: Event) -> Any:
    return getattr(e, "group_key", None)


class RateLimiter:
    """Base: ``process(chunk)``, ``next``, ``stop()``, ``snapshot_state()``/``restore_state()``."""

    #: Where this limiter's timers fire among the app's under playback (engine/clock.py)
    timer_rank: int | None = None

    def __init__(self) -> None:
        self.next: Emit = _drop

    def process(self, chunk: list[Event]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def stop(self) -> None:
        """Stop ticking (time-based limiters)."""

    def snapshot_state(self) -> Any:
        return {}

    def restore_state(self, state: Any) -> None:
        return None


# ---------------------------------------------------------------------------- per events
class AllPerEvents(RateLimiter):
    """``output [all] every N events``: groups of N events, in order."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n
        self.held: list[Event] = []

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        held = self.held
        for e in chunk:
            if e.type == CURRENT or e.type == EXPIRED:
                held.append(e)
                if len(held) == self.n:
                    out.extend(held)
                    held.clear()
        if out:
            self.next(out)

    def snapshot_state(self) -> Any:
        return {"held": list(self.held)}

    def restore_state(self, state: Any) -> None:
        self.held = list(state["held"])


class FirstPerEvents(RateLimiter):
    """``output first every N events``: the first event of each block of N.

    As Siddhi's FirstPerEventOutputRateLimiter, every event of the selector's chunks counts,
    a reset too (the selector of a batch window without aggregation passes them on), and a
    block's first event goes out whatever its type: a reset reaches the query callbacks
    (called with neither list when it is alone) but no target.  (Siddhi never restarts
    the count for N = 1 and lets only the very first event through: a plain defect, not
    copied.)
    """

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n
        self.counter = 0

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = WithResets() if chunk.__class__ is WithResets else []
        n = self.n
        counter = self.counter
        for e in chunk:
            if counter == 0:
                out.append(e)
            counter += 1
            if counter == n:
                counter = 0
        self.counter = counter
        if out:
            self.next(out)

    def snapshot_state(self) -> Any:
        return {"counter": self.counter}

    def restore_state(self, state: Any) -> None:
        self.counter = state["counter"]


class LastPerEvents(RateLimiter):
    """``output last every N events``: the N-th event of each block."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n
        self.counter = 0

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        for e in chunk:
            if e.type == CURRENT or e.type == EXPIRED:
                self.counter += 1
                if self.counter == self.n:
                    self.counter = 0
                    out.append(e)
        if out:
            self.next(out)

    def snapshot_state(self) -> Any:
        return {"counter": self.counter}

    def restore_state(self, state: Any) -> None:
        self.counter = state["counter"]


class FirstGroupByPerEvents(RateLimiter):
    """``group by ... output first every N events``: per key, the first of each N events of that key."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n
        self.counts: dict[Any, int] = {}

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        counts = self.counts
        for e in chunk:
            if e.type != CURRENT and e.type != EXPIRED:
                continue
            k = _key(e)
            c = counts.get(k)
            if c is None:
                counts[k] = 1
                out.append(e)
                if self.n == 1:
                    del counts[k]
            elif c == self.n - 1:
                del counts[k]
            else:
                counts[k] = c + 1
        if out:
            self.next(out)

    def snapshot_state(self) -> Any:
        return {"counts": dict(self.counts)}

    def restore_state(self, state: Any) -> None:
        self.counts = dict(state["counts"])


class LastGroupByPerEvents(RateLimiter):
    """``group by ... output last every N events``: every N events, the latest event of each key."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n
        self.counter = 0
        self.latest: dict[Any, Event] = {}

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        for e in chunk:
            if e.type != CURRENT and e.type != EXPIRED:
                continue
            self.latest[_key(e)] = e
            self.counter += 1
            if self.counter == self.n:
                self.counter = 0
                out.extend(self.latest.values())
                self.latest.clear()
        if out:
            self.next(out)

    def snapshot_state(self) -> Any:
        return {"counter": self.counter, "latest": dict(self.latest)}

    def restore_state(self, state: Any) -> None:
        self.counter = state["counter"]
        self.latest = dict(state["latest"])


# ---------------------------------------------------------------------------- per time
class _Ticking(RateLimiter):
    """A limiter with a periodic tick on the app scheduler."""

    def __init__(self, ctx: Any, millis: int) -> None:
        super().__init__()
        self.ctx = ctx
        self.millis = millis
        self.scheduled = -1
        self._stopped = False
        if ctx.playback:
            pass  # ticks start with the first event (see _ensure_ticking)
        else:
            ctx.start_hooks.append(self._start)
            if getattr(ctx.scheduler, "_running", False):  # created after start (a partition key)
                self._start()

    def _start(self) -> None:
        if self.scheduled < 0:
            self.scheduled = self.ctx.clock.now() + self.millis
            self.ctx.scheduler.schedule(self.scheduled, self._tick)

    def _ensure_ticking(self) -> None:
        if self.scheduled < 0:
            self._start()

    def _tick(self, at: int) -> None:
        if self._stopped or at < self.scheduled:
            return
        # a tick that fell behind fires once, then the next due one (DESIGN.md decision 11)
        self.scheduled = next_period(self.scheduled, self.millis, self.ctx.clock.now())
        self.ctx.scheduler.schedule(self.scheduled, self._tick)
        out = self.on_tick(at)
        if out:
            self.next(out)

    def on_tick(self, at: int) -> list[Event]:
        return []

    def stop(self) -> None:
        self._stopped = True


class AllPerTime(_Ticking):
    """``output [all] every <time>``: everything since the last tick."""

    def __init__(self, ctx: Any, millis: int) -> None:
        super().__init__(ctx, millis)
        self.held: list[Event] = []

    def process(self, chunk: list[Event]) -> None:
        self._ensure_ticking()
        self.held.extend(e for e in chunk if e.type == CURRENT or e.type == EXPIRED)

    def on_tick(self, at: int) -> list[Event]:
        out, self.held = self.held, []
        return out

    def snapshot_state(self) -> Any:
        return {"held": list(self.held)}

    def restore_state(self, state: Any) -> None:
        self.held = list(state["held"])


class LastPerTime(_Ticking):
    """``output last every <time>``: the last event before each tick."""

    def __init__(self, ctx: Any, millis: int) -> None:
        super().__init__(ctx, millis)
        self.last: Event | None = None

    def process(self, chunk: list[Event]) -> None:
        self._ensure_ticking()
        for e in chunk:
            if e.type == CURRENT or e.type == EXPIRED:
                self.last = e

    def on_tick(self, at: int) -> list[Event]:
        if self.last is None:
            return []
        out, self.last = [self.last], None
        return out

    def snapshot_state(self) -> Any:
        return {"last": self.last}

    def restore_state(self, state: Any) -> None:
        self.last = state["last"]


class LastGroupByPerTime(_Ticking):
    """``group by ... output last every <time>``: the latest event of each key at each tick."""

    def __init__(self, ctx: Any, millis: int) -> None:
        super().__init__(ctx, millis)
        self.latest: dict[Any, Event] = {}

    def process(self, chunk: list[Event]) -> None:
        self._ensure_ticking()
        for e in chunk:
            if e.type == CURRENT or e.type == EXPIRED:
                self.latest[_key(e)] = e

    def on_tick(self, at: int) -> list[Event]:
        out = list(self.latest.values())
        self.latest.clear()
        return out

    def snapshot_state(self) -> Any:
        return {"latest": dict(self.latest)}

    def restore_state(self, state: Any) -> None:
        self.latest = dict(state["latest"])


class FirstPerTime(RateLimiter):
    """``output first every <time>``: the first event of a chunk once a period has passed."""

    def __init__(self, ctx: Any, millis: int) -> None:
        super().__init__()
        self.ctx = ctx
        self.millis = millis
        self.output_time: int | None = None

    def process(self, chunk: list[Event]) -> None:
        # Siddhi's FirstPerTimeOutputRateLimiter takes the chunk's first event of any type:
        # a leading reset (a batch window's, passed on by its selector) starts the period
        # and goes out alone (the query callbacks are called with neither list)
        if not chunk:
            return  # (an aggregating selector's chunk that offset/limit emptied: Siddhi's
            # next() throws there, after starting the period; its defect, not copied)
        now = self.ctx.clock.now()
        if self.output_time is None or self.output_time + self.millis <= now:
            self.output_time = now
            e = chunk[0]
            self.next(WithResets((e,)) if e.type == RESET else [e])

    def snapshot_state(self) -> Any:
        return {"output_time": self.output_time}

    def restore_state(self, state: Any) -> None:
        self.output_time = state["output_time"]


class FirstGroupByPerTime(RateLimiter):
    """``group by ... output first every <time>``: per key, the first event of each period."""

    def __init__(self, ctx: Any, millis: int) -> None:
        super().__init__()
        self.ctx = ctx
        self.millis = millis
        self.times: dict[Any, int] = {}

    def process(self, chunk: list[Event]) -> None:
        now = self.ctx.clock.now()
        out: list[Event] = []
        for e in chunk:
            if e.type != CURRENT and e.type != EXPIRED:
                continue
            k = _key(e)
            t = self.times.get(k)
            if t is None or t + self.millis <= now:
                self.times[k] = now
                out.append(e)
        if out:
            self.next(out)

    def snapshot_state(self) -> Any:
        return {"times": dict(self.times)}

    def restore_state(self, state: Any) -> None:
        self.times = dict(state["times"])


# ---------------------------------------------------------------------------- snapshot
class SnapshotLimiter(_Ticking):
    """``output snapshot every <time>``: re-emit the query's current result at every tick.

    ``mode``:
    * ``"rows"`` (window, no aggregation): the window's rows (expired rows leave, a reset clears);
    * ``"aggregate"`` (window, aggregation, no group by): the rows with the aggregate columns
      (``agg_positions``) set to their latest values, or the latest row when every column
      aggregates;
    * ``"groups"`` (group by): the latest row of each live key;
    * ``"last"`` (no window, no group by): the latest event.
    """

    def __init__(self, ctx: Any, millis: int, mode: str, agg_positions: list[int], width: int) -> None:
        super().__init__(ctx, millis)
        self.mode = mode
        self.agg_positions = agg_positions
        self.all_aggregate = bool(agg_positions) and len(agg_positions) == width
        self.rows: list[Event] = []
        self.last: Event | None = None
        self.groups: dict[Any, Event] = {}
        self.live: dict[Any, int] = {}

    def process(self, chunk: list[Event]) -> None:
        self._ensure_ticking()
        mode = self.mode
        for e in chunk:
            t = e.type
            if t == RESET:
                self.rows.clear()
                self.groups.clear()
                self.live.clear()
                self.last = None
                continue
            if t != CURRENT and t != EXPIRED:
                continue
            if mode == "groups":
                k = _key(e)
                n = self.live.get(k, 0) + (1 if t == CURRENT else -1)
                if t == CURRENT or n > 0:
                    self.groups[k] = e
                if n <= 0 and t == EXPIRED:
                    self.groups.pop(k, None)
                    self.live.pop(k, None)
                else:
                    self.live[k] = n
            elif mode == "last":
                self.last = e if t == CURRENT else self.last
            else:
                if t == CURRENT:
                    self.rows.append(e)
                    self.last = e
                else:
                    self.last = None if self.all_aggregate else e
                    for i, r in enumerate(self.rows):
                        if self._same_row(r, e):
                            del self.rows[i]
                            break

    def _same_row(self, a: Event, b: Event) -> bool:
        if not self.agg_positions:
            return tuple(a.data) == tuple(b.data)
        skip = set(self.agg_positions)
        return all(x == y for i, (x, y) in enumerate(zip(a.data, b.data, strict=False)) if i not in skip)

    def on_tick(self, at: int) -> list[Event]:
        mode = self.mode
        if mode == "groups":
            return [Event(at, e.data, CURRENT) for e in self.groups.values()]
        if mode == "last" or self.all_aggregate:
            return [Event(at, self.last.data, CURRENT)] if self.last is not None else []
        if mode == "aggregate" and self.last is not None:
            latest = self.last.data
            out = []
            for r in self.rows:
                data = list(r.data)
                for i in self.agg_positions:
                    data[i] = latest[i]
                out.append(Event(at, tuple(data), CURRENT))
            return out
        return [Event(at, r.data, CURRENT) for r in self.rows]

    def snapshot_state(self) -> Any:
        return {"rows": list(self.rows), "last": self.last, "groups": dict(self.groups), "live": dict(self.live)}

    def restore_state(self, state: Any) -> None:
        self.rows = list(state["rows"])
        self.last = state["last"]
        self.groups = dict(state["groups"])
        self.live = dict(state["live"])


# ---------------------------------------------------------------------------- planning
def _has_aggregator(expr: Any) -> bool:
    if isinstance(expr, FunctionCall):
        if registry.get(Kind.AGGREGATOR, expr.namespace, expr.name) is not None:
            return True
        return any(_has_aggregator(a) for a in expr.args)
    for name in ("left", "right", "expression"):
        sub = getattr(expr, name, None)
        if sub is not None and not isinstance(sub, (str, int, float)) and _has_aggregator(sub):
            return True
    return False


def _is_windowed(query: Query) -> bool:
    inp = query.input
    if isinstance(inp, JoinInputStream):
        return True
    if isinstance(inp, SingleInputStream):
        return any(isinstance(h, WindowHandler) for h in inp.handlers)
    return False


def build_rate_limiter(rate: Any, query: Query, selector: Any, ctx: Any, element_prefix: str) -> RateLimiter:
    """The limiter for ``query.output_rate`` (one per query instance)."""
    group_by = bool(query.selector.group_by)
    if isinstance(rate, EventOutputRate):
        if rate.events <= 0:
            raise error_at("output rate needs a positive number of events", rate)
        if rate.type is RateType.FIRST:
            return FirstGroupByPerEvents(rate.events) if group_by else FirstPerEvents(rate.events)
        if rate.type is RateType.LAST:
            return LastGroupByPerEvents(rate.events) if group_by else LastPerEvents(rate.events)
        return AllPerEvents(rate.events)
    if isinstance(rate, TimeOutputRate):
        if rate.millis <= 0:
            raise error_at("output rate needs a positive time", rate)
        if rate.type is RateType.FIRST:
            return FirstGroupByPerTime(ctx, rate.millis) if group_by else FirstPerTime(ctx, rate.millis)
        if rate.type is RateType.LAST:
            return LastGroupByPerTime(ctx, rate.millis) if group_by else LastPerTime(ctx, rate.millis)
        return AllPerTime(ctx, rate.millis)
    if isinstance(rate, SnapshotOutputRate):
        if rate.millis <= 0:
            raise error_at("output snapshot needs a positive time", rate)
        attrs = query.selector.attributes or ()
        agg_positions = [i for i, oa in enumerate(attrs) if _has_aggregator(oa.expression)]
        width = len(selector.plan.output_attributes) if hasattr(selector, "plan") else len(attrs)
        windowed = _is_windowed(query)
        if group_by and (agg_positions or not windowed):
            mode = "groups"
        elif windowed:
            mode = "aggregate" if agg_positions else "rows"
        else:
            mode = "last"
        return SnapshotLimiter(ctx, rate.millis, mode, agg_positions, width)
    raise error_at(f"unsupported output rate {type(rate).__name__}", query)


__all__ = [
    "AllPerEvents", "AllPerTime", "FirstGroupByPerEvents", "FirstGroupByPerTime", "FirstPerEvents",
    "FirstPerTime", "LastGroupByPerEvents", "LastGroupByPerTime", "LastPerEvents", "LastPerTime",
    "RateLimiter", "SnapshotLimiter", "build_rate_limiter",
]
