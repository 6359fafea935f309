"""``batch([n])`` (each arriving chunk is a batch) and ``cron('expr')`` (batches cut by a cron schedule)."""
from __future__ import annotations

import time as _time
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from srota.engine.event import CURRENT, EXPIRED, RESET, Event
from srota.engine.registry import Kind, Param, extension
from srota.engine.windows.base import WindowProcessor, WindowSpec, int_value
from srota.grammar.model import AttrType


class BatchWindow(WindowProcessor):
    """Siddhi's BatchWindowProcessor: the events of one input chunk (split every ``n``) form a batch."""

    @property
    def emits_expired(self) -> bool:
        """Expired events only when the query asked for them (else a reset clears the batch)."""
        return self.expired

    def __init__(self, spec: WindowSpec, length: int) -> None:
        super().__init__(spec)
        self.length = length
        self.last: list[Event] = []       # the previous chunk, expired at the next one
        self.reset_event: Event | None = None
        self.keep_last = self.expired or self.findable

    def process(self, chunk: list[Event]) -> None:
        events = [e for e in chunk if e.type == CURRENT]
        if not events:
            return
        outs: list[list[Event]] = []
        out: list[Event] = []
        now = self.clock.now()
        if self.expired and self.last:
            out.extend(Event(now, x.data, EXPIRED) for x in self.last)
            if self.reset_event is not None:
                out.append(self.reset_event)
                self.reset_event = None
        self.last = list(events) if self.keep_last else []
        n = self.length
        pieces = [events] if n <= 0 else [events[i:i + n] for i in range(0, len(events), n)]
        for piece in pieces:
            if self.reset_event is not None:
                out.append(self.reset_event)
            first = piece[0]
            self.reset_event = Event(first.timestamp, first.data, RESET)
            out.extend(piece)
            outs.append(out)
            out = []
        for o in outs:
            self.next(o)

    def contents(self) -> Iterable[Event]:
        return self.last

    def snapshot_state(self) -> Any:
        return {"last": list(self.last), "reset": self.reset_event}

    def restore_state(self, state: Any) -> None:
        self.last = list(state["last"])
        self.reset_event = state["reset"]


@extension(Kind.WINDOW, "batch",
           params=(Param("window.length", (AttrType.INT,), optional=True,
                         doc="Split each arriving chunk into batches of at most this many events."),),
           doc="A batch window: each chunk of events that arrives together is one batch.")
def _batch(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    n = int_value(spec, spec.named.get("window.length"), "window.length") or 0
    return lambda: BatchWindow(spec, n)


# ---------------------------------------------------------------------------- cron
_MONTHS = {m: i for i, m in enumerate(("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP",
                                       "OCT", "NOV", "DEC"), start=1)}
_DAYS = {d: i for i, d in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"), start=1)}


def _field(text: str, lo: int, hi: int, names: dict[str, int] | None = None) -> set[int] | None:
    """The values a Quartz cron field allows (None for ``*``/``?``: any)."""
    text = text.strip().upper()
    if text in ("*", "?"):
        return None
    out: set[int] = set()
    for part in text.split(","):
        step = 1
        if "/" in part:
            part, step_s = part.split("/", 1)
            step = int(step_s)
            if step <= 0:
                raise ValueError(f"bad step in '{text}'")
        if part in ("*", "?", ""):
            a, b = lo, hi
        elif "-" in part:
            x, y = part.split("-", 1)
            a, b = _num(x, names), _num(y, names)
        else:
            a = _num(part, names)
            b = hi if "/" in text else a
        if not (lo <= a <= hi and lo <= b <= hi):
            raise ValueError(f"value out of range in '{text}'")
        out.update(range(a, b + 1, step))
    return out


def _num(s: str, names: dict[str, int] | None) -> int:
    if names and s in names:
        return names[s]
    return int(s)


class CronSchedule:
    """A Quartz-style cron expression: ``sec min hour day-of-month month day-of-week [year]``."""

    def __init__(self, expr: str) -> None:
        parts = expr.split()
        if len(parts) not in (6, 7):
            raise ValueError(f"'{expr}' should have 6 or 7 fields (sec min hour day month weekday [year])")
        self.seconds = _field(parts[0], 0, 59)
        self.minutes = _field(parts[1], 0, 59)
        self.hours = _field(parts[2], 0, 23)
        self.days = _field(parts[3], 1, 31)
        self.months = _field(parts[4], 1, 12, _MONTHS)
        self.weekdays = _field(parts[5], 1, 7, _DAYS)
        self.years = _field(parts[6], 1970, 2199) if len(parts) == 7 else None

    def _ok(self, values: set[int] | None, v: int) -> bool:
        return values is None or v in values

    def next_after(self, millis: int) -> int | None:
        """The first firing time (epoch ms, local time zone) strictly after ``millis``."""
        t = datetime.fromtimestamp(millis // 1000 + 1)
        limit = t + timedelta(days=366 * 5)
        while t < limit:
            if not (self._ok(self.years, t.year) and self._ok(self.months, t.month)
                    and self._ok(self.days, t.day)
                    and self._ok(self.weekdays, (t.weekday() + 1) % 7 + 1)):
                t = (t + timedelta(days=1)).replace(hour=0, minute=0, second=0)
                continue
            if not self._ok(self.hours, t.hour):
                t = (t + timedelta(hours=1)).replace(minute=0, second=0)
                continue
            if not self._ok(self.minutes, t.minute):
                t = (t + timedelta(minutes=1)).replace(second=0)
                continue
            if not self._ok(self.seconds, t.second):
                t = t + timedelta(seconds=1)
                continue
            return int(_time.mktime(t.timetuple())) * 1000
        return None


class CronWindow(WindowProcessor):
    """Collects events and emits them when the cron schedule fires (expiring the previous batch)."""

    def __init__(self, spec: WindowSpec, schedule: CronSchedule) -> None:
        super().__init__(spec)
        self.schedule = schedule
        self.current: list[Event] = []
        self.last: list[Event] = []
        self._arm()

    def _arm(self) -> None:
        at = self.schedule.next_after(self.clock.now())
        if at is not None:
            self.wake_after(at)

    def process(self, chunk: list[Event]) -> None:
        self.current.extend(e for e in chunk if e.type == CURRENT)

    def on_timer(self, at: int) -> None:
        self._arm()
        if not self.current:
            return
        now = self.clock.now()
        out = [Event(now, x.data, EXPIRED) for x in self.last]
        self.last = self.current
        out.extend(self.current)
        self.current = []
        self.next(out)

    def contents(self) -> Iterable[Event]:
        return self.last

    def snapshot_state(self) -> Any:
        return {"current": list(self.current), "last": list(self.last)}

    def restore_state(self, state: Any) -> None:
        self.current = list(state["current"])
        self.last = list(state["last"])


@extension(Kind.WINDOW, "cron",
           params=(Param("cron.expression", (AttrType.STRING,),
                         doc="Quartz cron expression: 'sec min hour day month weekday [year]'."),),
           doc="A batch window that emits the collected events whenever the cron expression fires.")
def _cron(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    arg = spec.named["cron.expression"]
    try:
        schedule = CronSchedule(str(arg.value))
    except ValueError as exc:
        raise spec.error(f"invalid cron expression: {exc}", arg.node) from None
    return lambda: CronWindow(spec, schedule)

