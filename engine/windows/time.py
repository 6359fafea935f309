"""Clock-driven windows: ``time``, ``timeBatch``, ``timeLength`` and ``delay``.

They read the app clock (wall time live, event time under ``@app:playback``) exactly where
Siddhi's processors read the timestamp generator: a stored event expires when
``event.timestamp + window <= now``; batch boundaries are multiples of the window from the
first event's arrival time (or from ``start.time``).  Timers fire what happens while no
events arrive; arriving events also check expiry, so playback is deterministic.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from srota.engine.event import CURRENT, EXPIRED, RESET, Event
from srota.engine.registry import Kind, Param, extension
from srota.engine.windows.base import BufferWindow, WindowProcessor, WindowSpec, expire_held, int_value
from srota.grammar.model import AttrType

_INT_LONG = (AttrType.INT, AttrType.LONG)


def java_rem(a: int, b: int) -> int:
    """Java's ``a % b`` (the sign follows the dividend)."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


class TimeWindow(BufferWindow):
    """Sliding time window: keeps the events of the last ``millis`` ms (by their timestamps)."""

    millis: int

    def __init__(self, spec: WindowSpec, millis: int) -> None:
        super().__init__(spec)
        self.millis = millis

    def _due(self, now: int, out: list[Event]) -> None:
        self._pop_older(now, out, EXPIRED)

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        buf = self.buffer
        now_fn = self.clock.now
        millis = self.millis
        for e in chunk:
            if buf:
                self._due(now_fn(), out)
            if e.type == CURRENT:
                buf.append(e)
                out.append(e)
        if self.max_events and len(buf) > self.max_events:
            self.shed(buf, out, now_fn())
        if buf:
            self.wake_at(buf[0].timestamp + millis)
        if out:
            self.next(out)

def _time_param(name: str = "window.time") -> Param:
    return Param(name, _INT_LONG, doc="Window duration (a time value or milliseconds).")


@extension(Kind.WINDOW, "time", params=(_time_param(),),
           doc="A sliding window holding the events that arrived in the last window.time.")
def _time(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    millis = int_value(spec, spec.named["window.time"], "window.time")
    assert millis is not None
    return lambda: TimeWindow(spec, millis)


class TimeBatchWindow(WindowProcessor):
    """Tumbling time window (Siddhi's TimeBatchWindowProcessor)."""

    @property
    def emits_expired(self) -> bool:
        """Expired events only when the query asked for them (else a reset clears the batch)."""
        return self.expired

    def __init__(self, spec: WindowSpec, millis: int, start: int | None, stream_current: bool) -> None:
        super().__init__(spec)
        self.millis = millis
        self.start = start
        self.stream_current = stream_current
        self.next_emit = -1
        self.current: list[Event] = []      # batch being collected (non-streaming mode)
        # To expire at the next flush, and what find scans: Siddhi's expiredEventQueue, kept
        # when the query outputs expired events or a join finds in it, and cleared only when
        # emitted: for a join with current-only output it holds every batch so far.
        self.last: list[Event] = []
        self.found = 0  # how many of `last` a find has scanned since the last flush (see expire_held)
        self.reset_event: Event | None = None
        self.keep_last = self.expired or self.findable

    def enable_find(self) -> None:
        """A join scans :meth:`contents`: keep the batches (see ``last``)."""
        super().enable_find()
        self.keep_last = True

    def process(self, chunk: list[Event]) -> None:
        self._run(chunk)

    def on_timer(self, at: int) -> None:
        self._run(None)

    def _run(self, chunk: list[Event] | None) -> None:
        clock = self.clock
        if self.next_emit == -1:
            now = clock.now()
            if self.start is not None:
                self.next_emit = now + (self.millis - java_rem(now - self.start, self.millis))
            else:
                self.next_emit = now + self.millis
            self.wake_at(self.next_emit)
        now = clock.now()
        send = False
        if now >= self.next_emit:
            self.next_emit += self.millis
            send = True
        out: list[Event] = []
        if chunk:
            for e in chunk:
                if e.type != CURRENT:
                    continue
                if self.reset_event is None:
                    self.reset_event = Event(e.timestamp, e.data, RESET)
                if self.stream_current:
                    out.append(e)
                    if self.keep_last:
                        self.last.append(e)
                else:
                    self.current.append(e)
            if self.max_events and len(self.current) > self.max_events:
                self.shed(self.current, None, now)
        if send:
            if self.expired and self.last:
                out += expire_held(self.last, self.found, now)
                self.last = []
                self.found = 0
            if self.reset_event is not None:
                out.append(self.reset_event)
                self.reset_event = None
            if self.current:
                if self.keep_last:
                    self.last += self.current  # cleared only when emitted (see __init__)
                out.extend(self.current)
                self.current = []
            if now >= self.next_emit and not (self.current or (self.expired and self.last) or self.reset_event):
                # Behind (a gap in event time, a late timer) with nothing left to flush or
                # expire: the batches in between would all be empty, so skip to the batch
                # that holds now instead of ticking through each (DESIGN.md decision 11).
                self.next_emit += ((now - self.next_emit) // self.millis + 1) * self.millis
            self.wake_at(self.next_emit)
        if out:
            self.next(out)

    def contents(self) -> Iterable[Event]:
        self.found = len(self.last)  # a find walks the whole queue (see expire_held)
        return self.last

    def snapshot_state(self) -> Any:
        return {"next_emit": self.next_emit, "current": list(self.current), "last": list(self.last),
                "reset": self.reset_event, "found": self.found}

    def restore_state(self, state: Any) -> None:
        self.next_emit = state["next_emit"]
        self.current = list(state["current"])
        self.last = list(state["last"])
        self.found = state.get("found", 0)  # (Siddhi's restored queue keeps the find's place)
        self.reset_event = state["reset"]
        self._timer_at = None
        if self.next_emit != -1:
            self.wake_at(self.next_emit)


@extension(Kind.WINDOW, "timeBatch",
           params=(_time_param(),
                   Param("start.time", _INT_LONG, optional=True,
                         doc="Align batches to start.time + k * window.time."),
                   Param("stream.current.event", (AttrType.BOOL,), optional=True, default=False,
                         doc="Emit events as they arrive and expire them in batches.")),
           overloads=(("window.time",), ("window.time", "start.time"), ("window.time", "stream.current.event"),
                      ("window.time", "start.time", "stream.current.event")),
           doc="A tumbling window that emits the events of each window.time period together.")
def _time_batch(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    millis = int_value(spec, spec.named["window.time"], "window.time", minimum=1)
    assert millis is not None
    start = int_value(spec, spec.named.get("start.time"), "start.time", minimum=None)
    stream_current = bool(spec.arg("stream.current.event", False))
    return lambda: TimeBatchWindow(spec, millis, start, stream_current)


class TimeLengthWindow(WindowProcessor):
    """Sliding window bounded both by time and by a number of events."""

    def __init__(self, spec: WindowSpec, millis: int, length: int) -> None:
        super().__init__(spec)
        self.millis = millis
        self.length = length
        self.buffer: deque[Event] = deque()

    def _expire(self, now: int, out: list[Event]) -> None:
        buf = self.buffer
        limit = now - self.millis
        while buf and buf[0].timestamp <= limit:
            out.append(Event(now, buf.popleft().data, EXPIRED))

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        buf = self.buffer
        now = self.clock.now()  # Siddhi reads the time once per chunk here
        for e in chunk:
            self._expire(now, out)
            if e.type != CURRENT:
                continue
            if len(buf) < self.length:
                buf.append(e)
                out.append(e)
            elif buf:
                out.append(Event(now, buf.popleft().data, EXPIRED))
                buf.append(e)
                out.append(e)
            else:  # timeLength(t, 0): Siddhi lets the event through and keeps nothing
                out.append(e)
            self.wake_after(e.timestamp + self.millis)
        if out:
            self.next(out)

    def on_timer(self, at: int) -> None:
        out: list[Event] = []
        self._expire(self.clock.now(), out)
        if out:
            self.next(out)

    def contents(self) -> Iterable[Event]:
        return self.buffer

    def snapshot_state(self) -> Any:
        return {"buffer": list(self.buffer)}

    def restore_state(self, state: Any) -> None:
        self.buffer = deque(state["buffer"])
        for e in self.buffer:
            self.wake_after(e.timestamp + self.millis)


@extension(Kind.WINDOW, "timeLength",
           params=(_time_param(), Param("window.length", (AttrType.INT,), doc="Maximum number of events.")),
           doc="A sliding window holding at most window.length events of the last window.time.")
def _time_length(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    millis = int_value(spec, spec.named["window.time"], "window.time")
    length = int_value(spec, spec.named["window.length"], "window.length")
    assert millis is not None and length is not None
    return lambda: TimeLengthWindow(spec, millis, length)


class DelayWindow(BufferWindow):
    """Holds each event for ``millis`` and then emits it as a current event."""

    millis: int

    def __init__(self, spec: WindowSpec, millis: int) -> None:
        super().__init__(spec)
        self.millis = millis

    def _due(self, now: int, out: list[Event]) -> None:
        self._pop_older(now, out, CURRENT)  # a delayed event leaves as a current one

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        buf = self.buffer
        for e in chunk:
            if buf:
                self._due(self.clock.now(), out)
            if e.type == CURRENT:
                buf.append(e)
        if self.max_events and len(buf) > self.max_events:
            self.shed(buf, None, self.clock.now())
        if buf:
            self.wake_at(buf[0].timestamp + self.millis)
        if out:
            self.next(out)


@extension(Kind.WINDOW, "delay", params=(Param("window.delay", _INT_LONG, doc="How long to hold each event."),),
           doc="Holds events for window.delay and then emits them.")
def _delay(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    millis = int_value(spec, spec.named["window.delay"], "window.delay")
    assert millis is not None
    return lambda: DelayWindow(spec, millis)
