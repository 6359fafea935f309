"""The ``reorder:`` namespace (siddhi-execution-reorder): ``#reorder:kslack`` and ``#reorder:akslack``.

Both hold out-of-order events in a buffer sorted by their timestamp attribute and release them
in timestamp order once the largest timestamp seen is ``K`` past them.  K-Slack grows ``K`` to
the largest disorder observed (bounded by ``max.k``); Alpha-K-Slack scales it with ``alpha``, a
factor tuned every ``batch.size`` events from the window coverage of a correlation field
(Siddhi's controller: kp 0.5, kd 0.8).  With a ``timeout`` the buffer is also flushed on the
app clock (the first flush ``timeout`` after the first event, then every second while events
wait), as Siddhi's scheduler does; ``discard.late.arrival`` drops events older than the last
one released.

Deliberate departure: Siddhi arms the first timeout when the app starts; here it is armed by
the first event (the same when events start flowing at once).
"""
from __future__ import annotations

import bisect
import math
import statistics
from collections.abc import Callable
from typing import Any

from srota.engine.event import Event
from srota.engine.expression import ArgInfo
from srota.engine.extensions._checks import BOOL, LONG, err, is_literal, stream_processor
from srota.engine.registry import Param
from srota.grammar.model import Attribute, AttrType

_MAX_LONG = 2 ** 63 - 1


def _java_round(x: float) -> int:
    """``Math.round``: halves go up."""
    return math.floor(x + 0.5)


class _Sorted:
    """A TreeMap<timestamp, [events]> (sorted keys plus a dict)."""

    __slots__ = ("keys", "items")

    def __init__(self) -> None:
        self.keys: list[int] = []
        self.items: dict[int, list[Event]] = {}

    def add(self, ts: int, events: list[Event]) -> None:
        got = self.items.get(ts)
        if got is None:
            bisect.insort(self.keys, ts)
            self.items[ts] = list(events)
        else:
            got.extend(events)

    def __len__(self) -> int:
        return len(self.keys)

    def pop_while(self, ok: Callable[[int], bool], out: list[Event]) -> int | None:
        """Move leading entries whose key satisfies ``ok`` to ``out``; return the last key moved."""
        last = None
        n = 0
        for ts in self.keys:
            if not ok(ts):
                break
            out.extend(self.items.pop(ts))
            last = ts
            n += 1
        del self.keys[:n]
        return last

    def state(self) -> list[tuple[int, list[Event]]]:
        return [(k, list(self.items[k])) for k in self.keys]

    @classmethod
    def restore(cls, entries: list[tuple[int, list[Event]]]) -> _Sorted:
        s = cls()
        for k, v in entries:
            s.add(k, v)
        return s


class _Reorder:
    """Shared buffer handling, timer and snapshots of the two processors."""

    def __init__(self, ctx: Any, timestamp: Callable[[Event], Any], timeout: int, max_k: int,
                 discard: bool) -> None:
        self.ctx = ctx
        self.timestamp = timestamp
        self.timeout = timeout
        self.max_k = max_k
        self.discard = discard
        self.next: Callable[[list[Event]], None] = lambda chunk: None
        self.k = 0
        self.largest = 0
        self.last_sent = -1
        self.last_scheduled = -1
        self.need_scheduling = False
        self.primary = _Sorted()     # events since the largest timestamp last grew
        self.secondary = _Sorted()   # events waiting for largest - K to pass them
        if timeout != -1:
            # as Siddhi's start(): the first timer counts from the clock's time when the app (or
            # the partition instance) starts, 0 under playback before any event; later timers
            # keep to whole seconds from it
            ctx.start_hooks.append(self._arm_first_timer)

    def _arm_first_timer(self) -> None:
        if self.last_scheduled < 0:
            self.last_scheduled = self.ctx.clock.now() + self.timeout
            self.ctx.scheduler.schedule(self.last_scheduled, self._on_timer)

    # --------------------------------------------------------------- one event
    def _push(self, ts: int, e: Event, out: list[Event]) -> None:
        """Buffer an admitted event (arming the timeout first) and release what K lets go."""
        if self.timeout != -1:
            if self.need_scheduling:
                now = self.ctx.clock.now()
                self.last_scheduled += _java_round(math.ceil((now - self.last_scheduled) / 1000.0)) * 1000
                self.ctx.scheduler.schedule(self.last_scheduled, self._on_timer)
                self.need_scheduling = False
        self.primary.add(ts, [e])
        if ts > self.largest:
            self.largest = ts
            diff = ts - self.primary.keys[0]
            if diff > self.k:
                self.k = self._grown(diff)
            self._release(out)

    def _grown(self, diff: int) -> int:
        """K once a disorder of ``diff`` (more than K) was seen."""
        return diff if diff < self.max_k else self.max_k

    # --------------------------------------------------------------- timers

    def _on_timer(self, at: int) -> None:
        out: list[Event] = []
        limit = self.timeout + at
        self._flush_timeout(limit, out)
        if self._waiting():
            self.last_scheduled += 1000
            self.ctx.scheduler.schedule(self.last_scheduled, self._on_timer)
            self.need_scheduling = False
        else:
            self.need_scheduling = True
        if out:
            self.next(out)

    def _flush_timeout(self, limit: int, out: list[Event]) -> None:
        self.secondary.pop_while(lambda ts: ts < limit, out)

    def _waiting(self) -> bool:
        return len(self.secondary) > 0

    # --------------------------------------------------------------- release
    def _release(self, out: list[Event]) -> None:
        """Move the primary buffer into the secondary and release what is K behind the largest."""
        for ts in self.primary.keys:
            self.secondary.add(ts, self.primary.items[ts])
        self.primary = _Sorted()
        largest, k = self.largest, self.k
        last = self.secondary.pop_while(lambda ts: ts + k <= largest, out)
        if last is not None:
            self.last_sent = last

    # --------------------------------------------------------------- snapshots
    _FIELDS: tuple[str, ...] = ("k", "largest", "last_sent", "last_scheduled", "need_scheduling")

    def snapshot_state(self) -> Any:
        state = {f: getattr(self, f) for f in self._FIELDS}
        state.update(primary=self.primary.state(), secondary=self.secondary.state())
        return state

    def restore_state(self, state: Any) -> None:
        for f in self._FIELDS:
            setattr(self, f, state[f])
        self.primary = _Sorted.restore(state["primary"])
        self.secondary = _Sorted.restore(state["secondary"])
        if self.timeout != -1 and self.last_scheduled >= 0:
            self.ctx.scheduler.schedule(self.last_scheduled, self._on_timer)


class _KSlack(_Reorder):
    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        for e in chunk:
            if e.type > 1:
                continue
            ts = self.timestamp(e)
            if ts is None:
                raise ValueError("reorder:kslack: the timestamp is null")
            if self.discard and ts < self.last_sent:
                continue
            self._push(ts, e, out)
        if out:
            self.next(out)


@stream_processor("reorder", "kslack",
                  (Param("timestamp", LONG, dynamic=True, doc="The event-time attribute to order by."),
                   Param("timeout", LONG, optional=True, default=-1,
                         doc="Flush the buffer on the app clock after this many ms (-1: never)."),
                   Param("max.k", LONG, optional=True, default=_MAX_LONG, doc="The largest K (buffer span) allowed."),
                   Param("discard.late.arrival", BOOL, optional=True, default=False,
                         doc="Drop events older than the last released one.")),
                  overloads=(("timestamp",), ("timestamp", "timeout"), ("timestamp", "discard.late.arrival"),
                             ("timestamp", "timeout", "max.k"), ("timestamp", "timeout", "discard.late.arrival"),
                             ("timestamp", "timeout", "max.k", "discard.late.arrival")),
                  returns="the input attributes",
                  doc="Reorders out-of-order events by their timestamp with the K-Slack algorithm: "
                      "K grows to the largest disorder seen.",
                  examples=(("from StockStream#reorder:kslack(eventTime, 5000L) select eventTime, symbol, volume "
                             "insert into OrderedStream;", "events in eventTime order, flushed after 5 s at most"),))
def _kslack(infos: list[ArgInfo], getters: list[Any], attributes: list[Attribute],
            ctx: Any) -> tuple[list[Attribute], Callable[[], _KSlack]]:
    timeout, max_k, discard = -1, _MAX_LONG, False
    rest = infos[1:]
    for info in rest:
        if not is_literal(info):
            raise err("reorder:kslack(): timeout, max.k and discard.late.arrival should be constants")
    if len(rest) == 1:
        if rest[0].type is AttrType.BOOL:
            discard = bool(rest[0].value)
        else:
            timeout = int(rest[0].value)
    elif len(rest) == 2:
        timeout = int(rest[0].value)
        if rest[1].type is AttrType.BOOL:
            discard = bool(rest[1].value)
        else:
            max_k = int(rest[1].value)
    elif len(rest) == 3:
        timeout, max_k, discard = int(rest[0].value), int(rest[1].value), bool(rest[2].value)
    ts = getters[0]
    return [], lambda: _KSlack(ctx, ts, timeout, max_k, discard)


# ---------------------------------------------------------------------------- Alpha-K-Slack
def _coverage_threshold(critical: float, data: list[float], error_threshold: float) -> float:
    """Siddhi's WindowCoverage.calculateWindowCoverageThreshold."""
    n = len(data)
    mean = sum(data) / n if n else math.nan
    variance = sum((mean - x) ** 2 for x in data) / n if n else math.nan
    try:
        temp1 = math.sqrt((mean ** 2 + variance ** 2) / (n * mean ** 2))
    except (ZeroDivisionError, ValueError):
        temp1 = math.nan if n == 0 or mean != 0 else math.inf
    temp2 = critical ** 2 * temp1 ** 2
    a1 = 1 + temp2
    b1 = 2 * error_threshold - 2 - temp2
    c1 = (1 - error_threshold) ** 2
    b2 = -(2 + 2 * error_threshold + temp2)
    c2 = (1 + error_threshold) ** 2
    sq1 = b1 ** 2 - 4 * a1 * c1
    sq2 = b2 ** 2 - 4 * a1 * c2
    t1 = t2 = t3 = t4 = 0.0
    if sq1 >= 0:
        t1, t2 = (-b1 - math.sqrt(sq1)) / (2 * a1), (-b1 + math.sqrt(sq1)) / (2 * a1)
    if sq2 >= 0:
        t3, t4 = (-b2 - math.sqrt(sq2)) / (2 * a1), (-b2 + math.sqrt(sq2)) / (2 * a1)
    if sq1 >= 0 and not sq2 >= 0:
        return min(t1, t2)
    if sq2 >= 0 and not sq1 >= 0:
        return min(t3, t4)
    if not sq1 >= 0 and not sq2 >= 0:
        return 0.0
    return min(t1, t2, t3, t4)


def _runtime_coverage(now: int, timestamps: list[int], lag: int, size: int) -> float:
    """Siddhi's WindowCoverage.calculateRuntimeWindowCoverage (prunes ``timestamps`` as it goes)."""
    high, low = now - lag, now - lag - size
    covered = total = 0
    low_met = high_met = False
    keep = []
    for ts in timestamps:
        if not low_met and low <= ts:
            low_met = True
        if not high_met and high <= ts:
            high_met = True
        if low_met and low <= ts <= high:
            if not high_met:
                covered += 1
            total += 1
        if ts > low:
            keep.append(ts)
    timestamps[:] = keep
    return covered / total if total else 1.0


class _AKSlack(_Reorder):
    _FIELDS = _Reorder._FIELDS + ("alpha", "lag", "counter", "prev_alpha", "prev_error", "data_items",
                                  "timestamps")

    def __init__(self, ctx: Any, timestamp: Callable[[Event], Any], field: Callable[[Event], Any],
                 batch_size: int, timeout: int, max_k: int, discard: bool, error_threshold: float,
                 critical: float) -> None:
        super().__init__(ctx, timestamp, timeout, max_k, discard)
        self.field = field
        self.batch_size = batch_size
        self.error_threshold = error_threshold
        self.critical = critical
        self.alpha = 1.0
        self.lag = 0            # Siddhi's l
        self.counter = 0
        self.prev_alpha = 0.0
        self.prev_error = 0.0
        self.data_items: list[float] = []
        self.timestamps: list[int] = []

    def _alpha(self, threshold: float, coverage: float) -> float:
        error = threshold - coverage
        delta = 0.5 * error + 0.8 * (error - self.prev_error)
        alpha = abs(self.prev_alpha + delta)
        self.prev_error = error
        self.prev_alpha = alpha
        return alpha

    def _flush_timeout(self, limit: int, out: list[Event]) -> None:
        # Siddhi releases the timed-out events of both buffers (not in one sorted pass)
        self.secondary.pop_while(lambda ts: ts < limit, out)
        self.primary.pop_while(lambda ts: ts < limit, out)

    def _waiting(self) -> bool:
        return len(self.secondary) > 0 or len(self.primary) > 0

    def _grown(self, diff: int) -> int:
        return _java_round(diff * self.alpha) if diff < self.max_k else self.max_k

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        for e in chunk:
            if e.type > 1:
                continue
            ts = self.timestamp(e)
            if ts is None:
                raise ValueError("reorder:akslack: the timestamp is null")
            self.timestamps.append(ts)
            value = self.field(e)
            self.data_items.append(0.0 if value is None else float(value))
            if self.discard and ts < self.last_sent:
                continue
            # tuned before buffering: alpha must be current when _push grows K
            self.counter += 1
            if self.counter > self.batch_size:
                threshold = _coverage_threshold(self.critical, self.data_items, self.error_threshold)
                if self.lag == 0:
                    self.alpha = self._alpha(threshold, 1.0)
                else:
                    self.alpha = self._alpha(threshold, _runtime_coverage(ts, self.timestamps, self.lag,
                                                                          10_000_000_000))
                self.lag = min(_java_round(self.alpha * self.k), self.k)
                self.counter = 0
                self.data_items = []
            self._push(ts, e, out)
        if out:
            self.next(out)


@stream_processor("reorder", "akslack",
                  (Param("timestamp", LONG, dynamic=True, doc="The event-time attribute to order by."),
                   Param("correlation.field", (AttrType.INT, AttrType.FLOAT, AttrType.LONG, AttrType.DOUBLE),
                         dynamic=True, doc="The numeric attribute whose accuracy the buffer size is tuned for."),
                   Param("batch.size", LONG, optional=True, default=10_000,
                         doc="How many events between two tunings of alpha."),
                   Param("timeout", LONG, optional=True, default=-1,
                         doc="Flush the buffer on the app clock after this many ms (-1: never)."),
                   Param("max.k", LONG, optional=True, default=_MAX_LONG,
                         doc="The largest K allowed (-1: no limit)."),
                   Param("discard.late.arrival", BOOL, optional=True, default=False,
                         doc="Drop events older than the last released one."),
                   Param("error.threshold", (AttrType.DOUBLE,), optional=True, default=0.03,
                         doc="The error bound of the query results."),
                   Param("confidence.level", (AttrType.DOUBLE,), optional=True, default=0.95,
                         doc="The confidence of that bound.")),
                  overloads=(("timestamp", "correlation.field"),
                             ("timestamp", "correlation.field", "batch.size"),
                             ("timestamp", "correlation.field", "batch.size", "timeout"),
                             ("timestamp", "correlation.field", "batch.size", "timeout", "max.k"),
                             ("timestamp", "correlation.field", "batch.size", "timeout", "max.k",
                              "discard.late.arrival"),
                             ("timestamp", "correlation.field", "batch.size", "timeout", "max.k",
                              "discard.late.arrival", "error.threshold", "confidence.level")),
                  returns="the input attributes",
                  doc="Reorders out-of-order events by their timestamp with the Alpha-K-Slack algorithm: "
                      "K follows the observed disorder scaled by alpha, tuned to the accuracy wanted on "
                      "the correlation field.",
                  examples=(("from StockStream#reorder:akslack(eventTime, price, 20L) select eventTime, price "
                             "insert into OrderedStream;", "events in eventTime order"),))
def _akslack(infos: list[ArgInfo], getters: list[Any], attributes: list[Attribute],
             ctx: Any) -> tuple[list[Attribute], Callable[[], _AKSlack]]:
    for info in infos[2:]:
        if not is_literal(info):
            raise err("reorder:akslack(): the parameters after correlation.field should be constants")
    values = [i.value for i in infos]
    batch_size = int(values[2]) if len(values) > 2 else 10_000
    timeout = int(values[3]) if len(values) > 3 else -1
    max_k = int(values[4]) if len(values) > 4 else _MAX_LONG
    if max_k == -1:
        max_k = _MAX_LONG
    discard = bool(values[5]) if len(values) > 5 else False
    error_threshold = float(values[6]) if len(values) > 7 else 0.03
    confidence = float(values[7]) if len(values) > 7 else 0.95
    critical = abs(statistics.NormalDist().inv_cdf((1 - confidence) / 2))
    ts, field = getters[0], getters[1]
    return [], lambda: _AKSlack(ctx, ts, field, batch_size, timeout, max_k, discard, error_threshold, critical)
