"""Event-time windows: ``externalTime(ts, t)`` and ``externalTimeBatch(ts, t[, start, timeout, replace])``.

Time is the value of the ``ts`` attribute of arriving events, not the app clock, so these
windows move only when events arrive (``externalTimeBatch`` with a ``timeout`` also flushes
on the app clock when no events come).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import islice as _islice
from typing import Any

from srota.engine.columnar import batch_scan as _batch_scan
from srota.engine.event import CURRENT, EXPIRED, RESET, Event
from srota.engine.registry import Kind, Param, extension
from srota.engine.windows.base import BufferWindow, WindowProcessor, WindowSpec, int_value, require_attribute
from srota.engine.windows.time import java_rem
from srota.grammar.model import AttrType, Constant, TimeConstant

_INT_LONG = (AttrType.INT, AttrType.LONG)


class ExternalTimeWindow(BufferWindow):
    """Sliding window over the ``ts`` attribute: an event expires when one with ``ts >= old + t`` arrives."""

    def __init__(self, spec: WindowSpec, ts_index: int, millis: int) -> None:
        super().__init__(spec)
        self.ts_index = ts_index
        self.span = millis  # event-time span: expiry follows the timestamps, not the clock

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        buf = self.buffer
        i = self.ts_index
        millis = self.span
        for e in chunk:
            now = e.data[i]
            limit = now - millis
            while buf and buf[0].data[i] <= limit:
                out.append(Event(now, buf.popleft().data, EXPIRED))
            if e.type == CURRENT:
                buf.append(e)
                out.append(e)
        if self.max_events and len(buf) > self.max_events:
            self.shed(buf, out, chunk[-1].data[i])
        if out:
            self.next(out)


def _timestamp_index(spec: WindowSpec) -> int:
    arg = spec.args[0]
    if arg.type is not AttrType.LONG:
        raise spec.error(f"timestamp parameter should be a long attribute, but found {arg.type.value}", arg.node)
    return require_attribute(spec, arg, "timestamp parameter")


@extension(Kind.WINDOW, "externalTime",
           params=(Param("timestamp", (AttrType.LONG,), dynamic=True, doc="The event-time attribute (ms)."),
                   Param("window.time", _INT_LONG, doc="Window duration.")),
           doc="A sliding window over the event time in the timestamp attribute.")
def _external_time(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    idx = _timestamp_index(spec)
    millis = int_value(spec, spec.named["window.time"], "window.time")
    assert millis is not None
    return lambda: ExternalTimeWindow(spec, idx, millis)


class ExternalTimeBatchWindow(WindowProcessor):
    """Tumbling window over the ``ts`` attribute (Siddhi's ExternalTimeBatchWindowProcessor).

    A batch closes when an event with ``ts >= end`` arrives; a late event (``ts < end``) joins
    the open batch.  With a ``timeout`` the open batch is also flushed after ``timeout`` ms of
    app-clock time without a batch change; events of that batch arriving later are re-sent
    with the next flush.
    """

    @property
    def emits_expired(self) -> bool:
        """Expired events only when the query asked for them (else a reset clears the batch)."""
        return self.expired

    def __init__(self, spec: WindowSpec, ts_index: int, millis: int, start: int | None,
                 start_getter: Callable[[Event], Any] | None, timeout: int, replace: bool) -> None:
        super().__init__(spec)
        self.ts_index = ts_index
        self.millis = millis
        self.start_enabled = start is not None or start_getter is not None
        self.start_getter = start_getter
        self.start_time = start or 0
        self.timeout = timeout
        self.replace = replace
        self.store_expired = self.expired or self.findable or timeout > 0
        self.end_time = -1
        self.current: list[Event] = []
        self.expired_events: list[Event] = []
        self.reset_event: Event | None = None
        self.last_scheduled = 0
        self.last_event_time = 0
        self.flushed = False

    def enable_find(self) -> None:
        """A join scans :meth:`contents`: keep the last batch."""
        super().enable_find()
        self.store_expired = True

    # ------------------------------------------------------------------ processing
    def process(self, chunk: list[Event]) -> None:
        if len(chunk) == 1 and self.end_time >= 0 and not self.replace and not self.max_events:
            # An event sent alone that joins the open batch (what one-by-one senders do
            # between batch changes): the loop's per-event step without its set-up.
            e = chunk[0]
            if e.type == CURRENT:
                ts = e.data[self.ts_index]
                newer = self.last_event_time < ts  # (compared first, as the loop does)
                if ts < self.end_time:
                    if newer:
                        self.last_event_time = ts
                    self.current.append(e)
                    if self.reset_event is None:
                        self.reset_event = Event(e.timestamp, e.data, RESET)
                    return
        if not chunk:
            return
        outs: list[list[Event]] = []
        self._init_timing(chunk[0])
        i = self.ts_index
        # Locals for the per-event path (an event joining the open batch); the batch change
        # below works on the attributes and reloads them.
        last = self.last_event_time
        end = self.end_time
        current = self.current
        inline = not self.replace
        # With the compiled module, a run of events joining the open batch is found by
        # batch_scan and appended at once (the loop's step for each, but for the appends);
        # the loop takes the events from where it stopped up to the next batch change.
        scan = _batch_scan if inline else None
        pos = 0
        n = len(chunk)
        while pos < n:
            if scan is not None:
                stop, last = scan(chunk, pos, i, end, last)
                if stop > pos:
                    if self.reset_event is None:
                        first = chunk[pos]
                        self.reset_event = Event(first.timestamp, first.data, RESET)
                    current += chunk[pos:stop]
                    pos = stop
            for e in _islice(chunk, pos, None) if pos else chunk:
                pos += 1
                if e.type != CURRENT:
                    continue
                ts = e.data[i]
                if last < ts:
                    last = ts
                if ts < end:
                    if inline:
                        current.append(e)
                        if self.reset_event is None:
                            self.reset_event = Event(e.timestamp, e.data, RESET)
                    else:
                        self._append(e)
                else:
                    self.last_event_time = last
                    if self.flushed:
                        self._append_to_output(outs, last, False)
                        self.flushed = False
                    else:
                        self._flush(outs, last, False)
                    self.end_time = end = self._find_end(last)
                    self._append(e)
                    current = self.current
                    if self.timeout > 0:
                        self._schedule_timeout()
                    if scan is not None:
                        break  # (the next batch's events: the scan again)
        self.last_event_time = last
        if self.max_events and len(self.current) > self.max_events:
            self.shed(self.current, None, last)
        for o in outs:
            self.next(o)

    def on_timer(self, at: int) -> None:
        if self.timeout <= 0 or self.last_scheduled > at:
            return
        outs: list[list[Event]] = []
        if not self.flushed:
            self._flush(outs, self.last_event_time, True)
            self.flushed = True
        elif self.current:
            self._append_to_output(outs, self.last_event_time, True)
        self._schedule_timeout()
        for o in outs:
            self.next(o)

    def _schedule_timeout(self) -> None:
        self.last_scheduled = self.clock.now() + self.timeout
        self.wake_after(self.last_scheduled)

    def _init_timing(self, first: Event) -> None:
        if self.end_time >= 0:
            return
        ts = first.data[self.ts_index]
        if self.start_enabled:
            if self.start_getter is None:
                self.end_time = self._find_end(ts)
            else:
                self.start_time = self.start_getter(first)
                self.end_time = self.start_time + self.millis
        else:
            self.start_time = ts
            self.end_time = ts + self.millis
        if self.timeout > 0:
            self._schedule_timeout()

    def _find_end(self, t: int) -> int:
        return t + (self.millis - java_rem(t - self.start_time, self.millis))

    def _append(self, e: Event) -> None:
        if self.replace:
            data = list(e.data)
            data[self.ts_index] = self.end_time
            e = Event(e.timestamp, tuple(data))
        self.current.append(e)
        if self.reset_event is None:
            self.reset_event = Event(e.timestamp, e.data, RESET)

    def _flush(self, outs: list[list[Event]], now: int, preserve: bool) -> None:
        out: list[Event] = []
        if self.expired and self.expired_events:
            out.extend(Event(now, x.data, EXPIRED) for x in self.expired_events)
        self.expired_events = []
        if self.current:
            assert self.reset_event is not None
            out.append(Event(now, self.reset_event.data, RESET))
            self.reset_event = None
            if preserve or self.store_expired:
                self.expired_events = list(self.current)
            out.extend(self.current)
        self.current = []
        if out:
            outs.append(out)

    def _append_to_output(self, outs: list[list[Event]], now: int, preserve: bool) -> None:
        # The batch was flushed by the timeout and late events of it arrived since: emit the
        # whole batch again (the flushed events as current events) after a reset.
        out: list[Event] = []
        if self.current:
            sent: list[Event] = []
            for x in self.expired_events:
                if self.expired:
                    out.append(Event(now, x.data, EXPIRED))
                sent.append(Event(x.timestamp, x.data, CURRENT))
            reset = self.reset_event if self.reset_event is not None else self.current[0]
            out.append(Event(now, reset.data, RESET))
            out.extend(sent)
            if preserve or self.store_expired:
                self.expired_events.extend(self.current)
            out.extend(self.current)
        self.current = []
        if out:
            outs.append(out)

    # ------------------------------------------------------------------ state
    def contents(self) -> Iterable[Event]:
        return self.expired_events

    def snapshot_state(self) -> Any:
        return {"start": self.start_time, "end": self.end_time, "last_scheduled": self.last_scheduled,
                "last_event_time": self.last_event_time, "current": list(self.current),
                "expired": list(self.expired_events), "reset": self.reset_event, "flushed": self.flushed}

    def restore_state(self, state: Any) -> None:
        self.start_time = state["start"]
        self.end_time = state["end"]
        self.last_scheduled = state["last_scheduled"]
        self.last_event_time = state["last_event_time"]
        self.current = list(state["current"])
        self.expired_events = list(state["expired"])
        self.reset_event = state["reset"]
        self.flushed = state["flushed"]
        if self.timeout > 0 and self.end_time >= 0:
            self.wake_after(self.last_scheduled)


@extension(Kind.WINDOW, "externalTimeBatch",
           params=(Param("timestamp", (AttrType.LONG,), dynamic=True, doc="The event-time attribute (ms)."),
                   Param("window.time", _INT_LONG, doc="Batch duration."),
                   Param("start.time", _INT_LONG, optional=True, dynamic=True,
                         doc="Align batches to start.time (a constant, or a long attribute of the first event)."),
                   Param("timeout", _INT_LONG, optional=True,
                         doc="Flush the open batch after this much app time without new batches."),
                   Param("replace.with.batchtime", (AttrType.BOOL,), optional=True, default=False,
                         doc="Replace the timestamp attribute with the batch end time.")),
           doc="A tumbling window over the event time in the timestamp attribute.")
def _external_time_batch(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    idx = _timestamp_index(spec)
    millis = int_value(spec, spec.named["window.time"], "window.time", minimum=1)
    assert millis is not None
    start_arg = spec.named.get("start.time")
    start = None
    start_getter = None
    if start_arg is not None:
        # Siddhi takes a literal int/long, or else any long expression evaluated on the first
        # event: a constant expression such as 1/2 is an int expression, rejected at creation.
        if start_arg.constant and isinstance(start_arg.node, (Constant, TimeConstant)):
            start = int_value(spec, start_arg, "start.time", minimum=None)
        elif start_arg.type is not AttrType.LONG:
            raise spec.error("start.time should be an int or long constant or a long attribute, but found "
                             f"an {start_arg.type.value} expression", start_arg.node)
        elif start_arg.constant:
            start = int_value(spec, start_arg, "start.time", minimum=None)
        else:
            start_getter = start_arg.getter
    timeout = int_value(spec, spec.named.get("timeout"), "timeout") or 0
    replace = bool(spec.arg("replace.with.batchtime", False))
    return lambda: ExternalTimeBatchWindow(spec, idx, millis, start, start_getter, timeout, replace)
