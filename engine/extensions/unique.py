"""The ``unique:`` namespace (siddhi-execution-unique): windows that keep one event per key, and
the ``#unique:deduplicate`` stream processor.

Windows build on :mod:`srota.engine.windows` (the :class:`WindowProcessor` base, its timers,
snapshots and ``limits.max_window_events``) and follow Siddhi's processors:

* ``ever`` / ``first`` keep the latest / first event of every key forever; ``ever`` expires the
  event a newer one of its key replaces, ``first`` drops later events of a known key.
* ``length`` / ``time`` are sliding windows where a new event of a key also expires the older
  event of that key.
* ``lengthBatch`` / ``timeBatch`` / ``timeLengthBatch`` / ``externalTimeBatch`` collect the latest
  event per key (``first*``: the first) and emit them as a batch, expiring the previous batch
  first, then a reset, as Siddhi does (the batch is emitted in Java ``HashMap`` key order, the
  order Siddhi's output has).

Keys are the ``toString`` of the key value (several key attributes of ``ever``/``first`` are
concatenated), so ``1`` and ``'1'`` are one key, as in Siddhi.

Deliberate departures: ``unique:length`` and ``unique:time`` forget a key when its event leaves
the window (Siddhi keeps the stale entry, so a later event of that key emits the long-gone
event as expired again and the length window grows past its length); ``unique:deduplicate``
purges its memory when events arrive rather than on a timer (the output is the same).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from srota.engine.event import CURRENT, EXPIRED, RESET, Event
from srota.engine.expression import ArgInfo
from srota.engine.extensions._checks import (
    INT,
    INT_LONG,
    LONG,
    REPEAT,
    err,
    is_literal,
    java_str,
    stream_processor,
    window,
)
from srota.engine.registry import Param
from srota.engine.types import hashmap_capacity, hashmap_keys
from srota.engine.windows.base import WindowProcessor, WindowSpec, int_value, require_attribute
from srota.engine.windows.time import java_rem
from srota.grammar.model import Attribute, AttrType

_KEY_TYPES = (AttrType.INT, AttrType.LONG, AttrType.FLOAT, AttrType.BOOL, AttrType.DOUBLE, AttrType.STRING)
_KEY = Param("unique.key", _KEY_TYPES, dynamic=True, doc="The attribute (or value) events are unique by.")
_LENGTH = Param("window.length", INT, doc="The number of unique events.")
_TIME = Param("window.time", INT_LONG, doc="The window (or batch) duration.")
_START = Param("start.time", INT_LONG, optional=True, doc="Align batches to start.time + k * window.time.")


def _key_fn(spec: WindowSpec, count: int | None = None, raw: bool = False,
            null_key: bool = False) -> Callable[[Event], Any]:
    """The key of an event: ``toString`` of the key value(s) (``raw``: the value itself).

    A single null key fails the event (Java's ``toString`` of null), except with ``null_key``:
    the windows that build the key in a ``StringBuilder`` (``ever``, ``first``) key it ``null``.
    """
    args = [a for a in spec.args if a.param is not None and a.param.name == "unique.key"]
    if count is not None:
        args = args[:count]
    getters = [a.getter if a.getter is not None else (lambda e, _v=a.value: _v) for a in args]
    if raw:
        g = getters[0]
        return g
    if len(getters) == 1 and not null_key:
        g = getters[0]

        def key(e: Event) -> str:
            v = g(e)
            if v is None:
                raise ValueError("unique window: the unique key is null")
            return java_str(v)
        return key
    return lambda e: "".join(java_str(g(e)) for g in getters)


def _given(spec: WindowSpec, name: str, minimum: int = 0) -> int:
    """The constant int/long argument ``name`` (a required one)."""
    value = int_value(spec, spec.named[name], name, minimum)
    assert value is not None
    return value


def _start(spec: WindowSpec) -> int | None:
    """The optional ``start.time`` batches align to."""
    return int_value(spec, spec.named.get("start.time"), "start.time", minimum=None)


def _sliding(cls: Callable[[WindowSpec, Callable[[Event], Any], int], WindowProcessor],
             size: str) -> Callable[[WindowSpec], Callable[[], WindowProcessor]]:
    """The factory of a sliding window ``cls(spec, key, <the size argument>)``."""
    def factory(spec: WindowSpec) -> Callable[[], WindowProcessor]:
        n = _given(spec, size)
        key = _key_fn(spec)
        return lambda: cls(spec, key, n)
    return factory


class _Window(WindowProcessor):
    """Shared parts: the key function and the shedding of an over-full key map."""

    def __init__(self, spec: WindowSpec, key: Callable[[Event], Any]) -> None:
        super().__init__(spec)
        self.key = key

    def _shed_map(self, held: dict[Any, Event], out: list[Event] | None, now: int) -> None:
        over = len(held) - self.max_events
        if self.max_events and over > 0:
            for k in list(held)[:over]:
                e = held.pop(k)
                if out is not None:
                    out.append(Event(now, e.data, EXPIRED))
            self.ctx.limit_breach(type(self).__name__, f"the window limit of {self.max_events} events", over)


# ---------------------------------------------------------------------------- ever / first
class UniqueEverWindow(_Window):
    """The latest event of every key, kept forever; a replaced event leaves as expired."""

    def __init__(self, spec: WindowSpec, key: Callable[[Event], Any]) -> None:
        super().__init__(spec, key)
        self.held: dict[Any, Event] = {}

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        now = None
        for e in chunk:
            if e.type != CURRENT:
                continue
            k = self.key(e)
            old = self.held.pop(k, None)
            self.held[k] = e
            if old is not None:
                now = self.clock.now() if now is None else now
                out.append(Event(now, old.data, EXPIRED))
            out.append(e)
        if self.max_events and len(self.held) > self.max_events:
            self._shed_map(self.held, out, self.clock.now())
        self.emit(out)

    def contents(self) -> Iterable[Event]:
        return self.held.values()

    def snapshot_state(self) -> Any:
        return {"held": dict(self.held)}

    def restore_state(self, state: Any) -> None:
        self.held = dict(state["held"])


class UniqueFirstWindow(UniqueEverWindow):
    """The first event of every key, kept forever; later events of a known key are dropped."""

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        held = self.held
        for e in chunk:
            if e.type != CURRENT:
                continue
            k = self.key(e)
            if k not in held:
                held[k] = e
                out.append(e)
        if self.max_events and len(held) > self.max_events:
            self._shed_map(held, None, self.clock.now())
        self.emit(out)

    @property
    def emits_expired(self) -> bool:
        """A first window never expires anything."""
        return False


_EVER_DOC = ("A window holding the latest event of every unique key, forever: an event replaces (and "
             "expires) the earlier event of its key.")


@window("unique", "ever", (_KEY,), overloads=(("unique.key",), ("unique.key", REPEAT)), doc=_EVER_DOC,
        examples=(("from LoginEvents#window.unique:ever(ip) select count(ip) as ipCount insert into UniqueIps;",
                   "the number of distinct IPs seen"),))
def _ever(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    key = _key_fn(spec, null_key=True)
    return lambda: UniqueEverWindow(spec, key)


@window("unique", "first", (_KEY,), overloads=(("unique.key",), ("unique.key", REPEAT)),
        doc="A window holding the first event of every unique key, forever; later events of a key are dropped.",
        examples=(("from LoginEvents#window.unique:first(ip) select ip insert into FirstLogins;",
                   "the first login of every IP"),))
def _first(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    key = _key_fn(spec, null_key=True)
    return lambda: UniqueFirstWindow(spec, key)


# ---------------------------------------------------------------------------- length / time
class UniqueLengthWindow(_Window):
    """The latest ``length`` unique events; a new event of a held key expires the older one."""

    def __init__(self, spec: WindowSpec, key: Callable[[Event], Any], length: int) -> None:
        super().__init__(spec, key)
        self.length = length
        self.held: dict[Any, Event] = {}    # key -> event, oldest first

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        held = self.held
        for e in chunk:
            if e.type != CURRENT:
                continue
            k = self.key(e)
            old = held.pop(k, None)
            if old is not None:
                out.append(Event(self.clock.now(), old.data, EXPIRED))
            elif len(held) >= self.length:
                if held:
                    first = next(iter(held))
                    out.append(Event(self.clock.now(), held.pop(first).data, EXPIRED))
                else:  # length 0: the event passes and leaves at once
                    out.append(Event(self.clock.now(), e.data, EXPIRED))
                    out.append(e)
                    continue
            held[k] = e
            out.append(e)
        if self.max_events and len(held) > self.max_events:
            self._shed_map(held, out, self.clock.now())
        self.emit(out)

    def contents(self) -> Iterable[Event]:
        return self.held.values()

    def snapshot_state(self) -> Any:
        return {"held": dict(self.held)}

    def restore_state(self, state: Any) -> None:
        self.held = dict(state["held"])


window("unique", "length", (_KEY, _LENGTH),
       doc="A sliding window of the latest window.length unique events: a new event expires the "
           "held event of its key, or else the oldest event when the window is full.",
       examples=(("from LoginEvents#window.unique:length(ip, 3) select count(ip) as ipCount insert into UniqueIps;",
                  "counts over the last 3 distinct IPs"),))(_sliding(UniqueLengthWindow, "window.length"))


class UniqueTimeWindow(_Window):
    """The unique events of the last ``millis``; a new event of a held key expires the older one."""

    def __init__(self, spec: WindowSpec, key: Callable[[Event], Any], millis: int) -> None:
        super().__init__(spec, key)
        self.millis = millis
        self.buffer: deque[tuple[Any, Event]] = deque()
        self.held: dict[Any, Event] = {}

    def _wake_for_oldest(self) -> None:
        """Arm the timer for when the oldest held event leaves (per chunk, not per event)."""
        if self.buffer:
            self.wake_at(self.buffer[0][1].timestamp + self.millis)

    def _expire(self, now: int, out: list[Event]) -> None:
        buf = self.buffer
        limit = now - self.millis
        while buf and buf[0][1].timestamp <= limit:
            k, e = buf.popleft()
            if self.held.get(k) is e:
                del self.held[k]
            out.append(Event(now, e.data, EXPIRED))

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        for e in chunk:
            now = self.clock.now()
            if e.type == CURRENT:
                k = self.key(e)
                old = self.held.get(k)
                self.held[k] = e
                if old is not None:
                    for i, (_, x) in enumerate(self.buffer):
                        if x is old:
                            del self.buffer[i]
                            break
                    out.append(Event(now, old.data, EXPIRED))
                self.buffer.append((k, e))
                self._expire(now, out)
                out.append(e)
            else:
                self._expire(now, out)
        if self.max_events and len(self.buffer) > self.max_events:
            now = self.clock.now()
            while len(self.buffer) > self.max_events:
                k, x = self.buffer.popleft()
                if self.held.get(k) is x:
                    del self.held[k]
                out.append(Event(now, x.data, EXPIRED))
                self.ctx.limit_breach(type(self).__name__, f"the window limit of {self.max_events} events", 1)
        self._wake_for_oldest()
        self.emit(out)

    def on_timer(self, at: int) -> None:
        out: list[Event] = []
        self._expire(self.clock.now(), out)
        self._wake_for_oldest()
        self.emit(out)

    def contents(self) -> Iterable[Event]:
        return [e for _, e in self.buffer]

    def snapshot_state(self) -> Any:
        return {"buffer": list(self.buffer)}

    def restore_state(self, state: Any) -> None:
        self.buffer = deque(state["buffer"])
        self.held = {k: e for k, e in self.buffer}
        self._timer_at = None
        self._wake_for_oldest()


window("unique", "time", (_KEY, _TIME),
       doc="A sliding window of the unique events that arrived in the last window.time: a new event "
           "expires the held event of its key.",
       examples=(("from LoginEvents#window.unique:time(ip, 1 sec) select count(ip) as ipCount insert into UniqueIps;",
                  "distinct IPs of the last second"),))(_sliding(UniqueTimeWindow, "window.time"))


# ---------------------------------------------------------------------------- batches
class _Batch(_Window):
    """Collects one event per key and flushes batches: [expired previous batch], reset, current batch."""

    def __init__(self, spec: WindowSpec, key: Callable[[Event], Any], first: bool) -> None:
        super().__init__(spec, key)
        self.first = first
        self.pending: dict[Any, Event] = {}
        self.last: list[Event] = []         # the emitted batch, expired at the next flush
        self.reset_event: Event | None = None
        # the table length of Siddhi's HashMap of pending events, which clear() never shrinks:
        # a batch comes out in that map's order
        self.capacity = 16

    def _collect(self, e: Event) -> None:
        k = self.key(e)
        if self.first:
            if k not in self.pending:
                self.pending[k] = e
        else:
            self.pending[k] = e
        self.capacity = hashmap_capacity(len(self.pending), self.capacity)
        if self.max_events and len(self.pending) > self.max_events:
            self._shed_map(self.pending, None, self.clock.now())

    def _flush(self, now: int, out: list[Event]) -> None:
        batch = [self.pending[k] for k in hashmap_keys(self.pending, self.capacity)]
        self.pending = {}
        out.extend(Event(now, x.data, EXPIRED) for x in self.last)
        self.last = []
        if batch:
            if self.reset_event is not None:
                out.append(self.reset_event)
            self.last = batch
            self.reset_event = Event(now, batch[0].data, RESET)
            out.extend(Event(now, x.data, CURRENT) for x in batch)

    def contents(self) -> Iterable[Event]:
        return self.last

    def snapshot_state(self) -> Any:
        return {"pending": dict(self.pending), "last": list(self.last), "reset": self.reset_event}

    def restore_state(self, state: Any) -> None:
        self.pending = dict(state["pending"])
        self.last = list(state["last"])
        self.reset_event = state["reset"]


class UniqueLengthBatchWindow(_Batch):
    """Emits a batch whenever ``length`` unique keys have been collected."""

    def __init__(self, spec: WindowSpec, key: Callable[[Event], Any], first: bool, length: int) -> None:
        super().__init__(spec, key, first)
        self.length = length

    def contents(self) -> Iterable[Event]:
        """Siddhi's length batch windows let joins find the events still being collected."""
        return self.pending.values()

    def process(self, chunk: list[Event]) -> None:
        outs: list[list[Event]] = []
        for e in chunk:
            if e.type != CURRENT:
                continue
            self._collect(e)
            if len(self.pending) == self.length:
                out: list[Event] = []
                self._flush(self.clock.now(), out)
                if out:
                    outs.append(out)
        for out in outs:
            self.next(out)


def _length_batch(first: bool) -> Callable[[WindowSpec], Callable[[], WindowProcessor]]:
    def factory(spec: WindowSpec) -> Callable[[], WindowProcessor]:
        n = _given(spec, "window.length")
        key = _key_fn(spec, raw=not first)
        return lambda: UniqueLengthBatchWindow(spec, key, first, n)
    return factory


window("unique", "lengthBatch", (_KEY, _LENGTH),
       doc="A batch window that emits the latest event of each key once window.length unique keys "
           "have arrived.",
       examples=(("from StockStream#window.unique:lengthBatch(symbol, 10) select symbol, sum(price) as total "
                  "insert into OutputStream;", "one total per 10 distinct symbols"),))(_length_batch(False))
window("unique", "firstLengthBatch", (_KEY, _LENGTH),
       doc="A batch window that emits the first event of each key once window.length unique keys have arrived.",
       examples=(("from StockStream#window.unique:firstLengthBatch(symbol, 10) select symbol, price "
                  "insert into OutputStream;", "the first event of 10 distinct symbols per batch"),))(_length_batch(True))


class UniqueTimeBatchWindow(_Batch):
    """Emits the collected unique events every ``millis`` (aligned to ``start`` when given)."""

    def __init__(self, spec: WindowSpec, key: Callable[[Event], Any], first: bool, millis: int,
                 start: int | None, length: int | None = None) -> None:
        super().__init__(spec, key, first)
        self.millis = millis
        self.start = start
        self.length = length
        self.next_emit = -1
        self.sent = False  # timeLengthBatch: the batch went out by length; skip events until the next period

    def process(self, chunk: list[Event]) -> None:
        self._run(chunk)

    def on_timer(self, at: int) -> None:
        self._run(None)

    def _run(self, chunk: list[Event] | None) -> None:
        now = self.clock.now()
        if self.next_emit == -1:
            if self.start is not None:
                self.next_emit = now + (self.millis - java_rem(now - self.start, self.millis))
            else:
                self.next_emit = now + self.millis
            self.wake_after(self.next_emit)
        by_time = False
        if now >= self.next_emit:
            self.next_emit += self.millis
            self.wake_after(self.next_emit)
            if self.length is not None and self.sent:
                self.sent = False
                return
            by_time = True
        if self.length is not None and self.sent:
            return
        by_length = False
        for e in chunk or ():
            if e.type != CURRENT:
                continue
            self._collect(e)
            if self.length is not None and len(self.pending) == self.length:
                by_length = True
                break
        out: list[Event] = []
        if by_time or by_length:
            self._flush(now, out)
        if by_length:
            self.sent = True
        self.emit(out)

    def snapshot_state(self) -> Any:
        state = super().snapshot_state()
        state.update(next_emit=self.next_emit, sent=self.sent)
        return state

    def restore_state(self, state: Any) -> None:
        super().restore_state(state)
        self.next_emit = state["next_emit"]
        self.sent = state["sent"]
        if self.next_emit != -1:
            self.wake_after(self.next_emit)


def _time_batch(first: bool) -> Callable[[WindowSpec], Callable[[], WindowProcessor]]:
    def factory(spec: WindowSpec) -> Callable[[], WindowProcessor]:
        millis = _given(spec, "window.time", minimum=1)
        start = _start(spec)
        key = _key_fn(spec, raw=not first)
        return lambda: UniqueTimeBatchWindow(spec, key, first, millis, start)
    return factory


window("unique", "timeBatch", (_KEY, _TIME, _START),
       overloads=(("unique.key", "window.time"), ("unique.key", "window.time", "start.time")),
       doc="A batch window that emits the latest event of each key every window.time.",
       examples=(("from StockStream#window.unique:timeBatch(symbol, 1 sec) select symbol, sum(price) as total "
                  "insert into OutputStream;", "per second, the latest event of each symbol"),))(_time_batch(False))
window("unique", "firstTimeBatch", (_KEY, _TIME, _START),
       overloads=(("unique.key", "window.time"), ("unique.key", "window.time", "start.time")),
       doc="A batch window that emits the first event of each key every window.time.",
       examples=(("from StockStream#window.unique:firstTimeBatch(symbol, 1 sec) select symbol, price "
                  "insert into OutputStream;", "per second, the first event of each symbol"),))(_time_batch(True))


@window("unique", "timeLengthBatch",
        (_KEY, _TIME, _START, Param("window.length", INT_LONG, doc="The number of unique events per batch.")),
        overloads=(("unique.key", "window.time", "window.length"),
                   ("unique.key", "window.time", "start.time", "window.length")),
        doc="A batch window that emits the latest event of each key every window.time, or as soon as "
            "window.length unique keys arrived (then events are skipped until the period ends).",
        examples=(("from StockStream#window.unique:timeLengthBatch(symbol, 1 sec, 20) select symbol, price "
                   "insert into OutputStream;", "per second (or per 20 symbols) the latest event of each symbol"),))
def _time_length_batch(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    millis = _given(spec, "window.time", minimum=1)
    length = _given(spec, "window.length")
    start = _start(spec)
    key = _key_fn(spec, raw=True)
    return lambda: UniqueTimeBatchWindow(spec, key, False, millis, start, length)


# ---------------------------------------------------------------------------- externalTimeBatch
class UniqueExternalTimeBatchWindow(_Window):
    """Siddhi's UniqueExternalTimeBatchWindowProcessor: batches over the ``ts`` attribute, one event per key."""

    def __init__(self, spec: WindowSpec, key: Callable[[Event], Any], ts_index: int, millis: int,
                 start: int | None, timeout: int, replace_ts: bool) -> None:
        super().__init__(spec, key)
        self.ts_index = ts_index
        self.millis = millis
        self.start_enabled = start is not None
        self.start_time = start or 0
        self.timeout = timeout
        self.replace_ts = replace_ts
        self.keep_expired = self.expired or timeout > 0
        self.end_time = -1
        self.last_event_time = 0
        self.last_scheduled = 0
        self.flushed = False
        self.current: dict[Any, Event] = {}
        self.expired_events: dict[Any, Event] = {}
        self.reset_event: Event | None = None

    def _end_for(self, t: int) -> int:
        return t + (self.millis - java_rem(t - self.start_time, self.millis))

    def _init_timing(self, first: Event) -> None:
        if self.end_time >= 0:
            return
        t = first.data[self.ts_index]
        if self.start_enabled:
            self.end_time = self._end_for(t)
        else:
            self.start_time = t
            self.end_time = t + self.millis
        if self.timeout > 0:
            self.last_scheduled = self.clock.now() + self.timeout
            self.wake_after(self.last_scheduled)

    def process(self, chunk: list[Event]) -> None:
        events = [e for e in chunk if e.type == CURRENT]
        if not events:
            return
        self._init_timing(events[0])
        outs: list[list[Event]] = []
        for e in events:
            t = e.data[self.ts_index]
            if t is None:
                raise ValueError("unique:externalTimeBatch: the timestamp is null")
            if self.last_event_time < t:
                self.last_event_time = t
            if t < self.end_time:
                self._append(e)
            else:
                if self.flushed:
                    self._append_out(outs, False)
                    self.flushed = False
                else:
                    self._flush_out(outs, False)
                self.end_time = self._end_for(self.last_event_time)
                self._append(e)
                if self.timeout > 0:
                    self.last_scheduled = self.clock.now() + self.timeout
                    self.wake_after(self.last_scheduled)
        if self.max_events and len(self.current) > self.max_events:
            self._shed_map(self.current, None, self.clock.now())
        for out in outs:
            self.next(out)

    def on_timer(self, at: int) -> None:
        if self.end_time < 0 or self.last_scheduled > at:
            return
        outs: list[list[Event]] = []
        if not self.flushed:
            self._flush_out(outs, True)
            self.flushed = True
        elif self.current:
            self._append_out(outs, True)
        self.last_scheduled = self.clock.now() + self.timeout
        self.wake_after(self.last_scheduled)
        for out in outs:
            self.next(out)

    def _append(self, e: Event) -> None:
        data = e.data
        if self.replace_ts:
            data = (*data[:self.ts_index], self.end_time, *data[self.ts_index + 1:])
            e = Event(e.timestamp, data, e.type)
        self.current[self.key(e)] = e
        if self.reset_event is None:
            self.reset_event = Event(e.timestamp, e.data, RESET)

    def _flush_out(self, outs: list[list[Event]], preserve: bool) -> None:
        out: list[Event] = []
        stamp = self.last_event_time
        if self.expired:
            out.extend(Event(stamp, x.data, EXPIRED) for x in self.expired_events.values())
        self.expired_events = {}
        if self.current:
            if self.reset_event is not None:
                out.append(Event(stamp, self.reset_event.data, RESET))
            self.reset_event = None
            for k, x in self.current.items():
                if preserve or self.keep_expired:
                    self.expired_events[k] = x
                out.append(x)
        self.current = {}
        if out:
            outs.append(out)

    def _append_out(self, outs: list[list[Event]], preserve: bool) -> None:
        out: list[Event] = []
        sent: dict[Any, Event] = {}
        stamp = self.last_event_time
        if self.current:
            for k, x in self.expired_events.items():
                if self.expired:
                    out.append(Event(stamp, x.data, EXPIRED))
                sent[k] = Event(x.timestamp, x.data, CURRENT)
            reset = self.reset_event
            if reset is not None:
                out.append(Event(stamp, reset.data, RESET))
            for k, x in self.current.items():
                if preserve or self.keep_expired:
                    self.expired_events[k] = x
                sent[k] = x
            out.extend(sent.values())
        self.current = {}
        if out:
            outs.append(out)

    def contents(self) -> Iterable[Event]:
        return self.expired_events.values()

    def snapshot_state(self) -> Any:
        return {k: getattr(self, k) for k in ("end_time", "last_event_time", "last_scheduled", "flushed",
                                               "current", "expired_events", "reset_event", "start_time")}

    def restore_state(self, state: Any) -> None:
        for k, v in state.items():
            setattr(self, k, dict(v) if isinstance(v, dict) else v)
        if self.timeout > 0 and self.end_time >= 0:
            self.wake_after(self.last_scheduled)


@window("unique", "externalTimeBatch",
        (_KEY, Param("time.stamp", LONG, dynamic=True, doc="The event-time attribute (ms)."), _TIME,
         Param("start.time", INT_LONG, optional=True, doc="Align batches to start.time + k * window.time "
                                                          "(default: the first event's time)."),
         Param("time.out", INT_LONG, optional=True,
               doc="Flush the open batch after this long without a new batch (default: wait for the next batch)."),
         Param("replace.time.stamp.with.batch.end.time", (AttrType.BOOL,), optional=True, default=False,
               doc="Replace the timestamp attribute with the batch end time.")),
        overloads=(("unique.key", "time.stamp", "window.time"),
                   ("unique.key", "time.stamp", "window.time", "start.time"),
                   ("unique.key", "time.stamp", "window.time", "start.time", "time.out"),
                   ("unique.key", "time.stamp", "window.time", "start.time", "time.out",
                    "replace.time.stamp.with.batch.end.time")),
        doc="A batch window over the event time in time.stamp that emits the latest event of each key "
            "per window.time period.",
        examples=(("from LoginEvents#window.unique:externalTimeBatch(ip, timestamp, 1 sec, 0, 2 sec) "
                   "select timestamp, ip, count() as total insert into UniqueIps;",
                   "per second of event time, the distinct IPs"),))
def _external_time_batch(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    ts_arg = spec.named["time.stamp"]
    idx = require_attribute(spec, ts_arg, "time.stamp")
    millis = _given(spec, "window.time", minimum=1)
    start = _start(spec)
    timeout = int_value(spec, spec.named.get("time.out"), "time.out", minimum=None) or 0
    replace_ts = bool(spec.arg("replace.time.stamp.with.batch.end.time", False))
    key = _key_fn(spec, raw=True)
    return lambda: UniqueExternalTimeBatchWindow(spec, key, idx, millis, start, timeout, replace_ts)


# ---------------------------------------------------------------------------- deduplicate
class _Deduplicate:
    """Drops an event when one with the same key passed within the interval (by event timestamps)."""

    def __init__(self, key: Callable[[Event], Any], interval: int) -> None:
        self.key = key
        self.interval = interval
        self.seen: dict[str, int] = {}   # key -> timestamp, oldest first
        self.next: Callable[[list[Event]], None] = lambda chunk: None

    def process(self, chunk: list[Event]) -> None:
        out = []
        seen = self.seen
        for e in chunk:
            while seen:
                k0 = next(iter(seen))
                if e.timestamp - seen[k0] > self.interval:
                    del seen[k0]
                else:
                    break
            if e.type > EXPIRED:
                continue
            v = self.key(e)
            if v is None:
                raise ValueError("unique:deduplicate: the unique key is null")
            k = java_str(v)
            if k not in seen:
                seen[k] = e.timestamp
                out.append(e)
        if out:
            self.next(out)

    def snapshot_state(self) -> Any:
        return {"seen": dict(self.seen)}

    def restore_state(self, state: Any) -> None:
        self.seen = dict(state["seen"])


@stream_processor("unique", "deduplicate",
                  (_KEY, Param("time.interval", INT_LONG, doc="How long a key is remembered.")),
                  returns="the input attributes",
                  doc="Drops events whose key was already seen within time.interval (by event timestamps).",
                  examples=(("from TemperatureStream#unique:deduplicate(sensorId, 30 sec) select * "
                             "insert into UniqueTemperatureStream;",
                             "one event per sensor per 30 seconds"),))
def _deduplicate(infos: list[ArgInfo], getters: list[Any], attributes: list[Attribute],
                 ctx: Any) -> tuple[list[Attribute], Callable[[], _Deduplicate]]:
    if not is_literal(infos[1]) or infos[1].value is None:
        raise err("unique:deduplicate(): time.interval should be a constant")
    interval = int(infos[1].value)
    key = getters[0]
    return [], lambda: _Deduplicate(key, interval)
