"""``batch([n])`` (each arriving chunk is a batch) and ``cron('expr')`` (batches cut by a cron schedule)."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from srota.engine.cron import CronSchedule
from srota.engine.event import CURRENT, EXPIRED, RESET, Event
from srota.engine.registry import Kind, Param, extension
from srota.engine.windows.base import WindowProcessor, WindowSpec, expire_held, int_value
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
        self.found = 0  # how many of `last` a find has scanned since the last chunk (see expire_held)
        # Siddhi keeps the chunk (what find scans) only when the query outputs expired events:
        # a join with current-only output finds nothing in a batch() window.
        self.keep_last = self.expired

    def process(self, chunk: list[Event]) -> None:
        events = [e for e in chunk if e.type == CURRENT]
        if not events:
            return
        outs: list[list[Event]] = []
        out: list[Event] = []
        now = self.clock.now()
        if self.expired and self.last:
            out += expire_held(self.last, self.found, now)
            if self.reset_event is not None:
                out.append(self.reset_event)
                self.reset_event = None
        self.last = list(events) if self.keep_last else []
        self.found = 0
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
        self.found = len(self.last)  # a find walks the whole queue (see expire_held)
        return self.last

    def snapshot_state(self) -> Any:
        return {"last": list(self.last), "reset": self.reset_event, "found": self.found}

    def restore_state(self, state: Any) -> None:
        self.last = list(state["last"])
        self.reset_event = state["reset"]
        self.found = state.get("found", 0)  # (Siddhi's restored queue keeps the find's place)


@extension(Kind.WINDOW, "batch",
           params=(Param("window.length", (AttrType.INT,), optional=True,
                         doc="Split each arriving chunk into batches of at most this many events."),),
           doc="A batch window: each chunk of events that arrives together is one batch.")
def _batch(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    n = int_value(spec, spec.named.get("window.length"), "window.length") or 0
    return lambda: BatchWindow(spec, n)


# ---------------------------------------------------------------------------- cron
class CronWindow(WindowProcessor):
    """Collects events and emits them when the cron schedule fires (expiring the previous batch)."""

    def __init__(self, spec: WindowSpec, schedule: CronSchedule) -> None:
        super().__init__(spec)
        self.schedule = schedule
        self.current: list[Event] = []
        self.last: list[Event] = []
        # armed from the app's start (under playback: from the first event's time)
        self.clock.on_start(self._arm)

    def _arm(self, after: int) -> None:
        at = self.schedule.next_after(after)
        if at is not None:
            self.wake_after(at)

    def process(self, chunk: list[Event]) -> None:
        self.current.extend(e for e in chunk if e.type == CURRENT)

    def on_timer(self, at: int) -> None:
        # the next cron time at or after now: times missed while behind are skipped
        self._arm(max(at, self.clock.now() - 1))
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
                         doc="Quartz cron expression: 'sec min hour day-of-month month day-of-week "
                             "[year]' (day-of-week 1 = Sunday), in the local time zone."),),
           doc="A batch window that emits the collected events whenever the cron expression fires.")
def _cron(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    arg = spec.named["cron.expression"]
    try:
        schedule = CronSchedule(str(arg.value))
    except ValueError as exc:
        raise spec.error(f"invalid cron expression: {exc}", arg.node) from None
    return lambda: CronWindow(spec, schedule)

