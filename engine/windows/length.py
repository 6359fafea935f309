"""``length(n)`` (sliding) and ``lengthBatch(n[, stream.current.event])`` (tumbling) windows."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from srota.engine.event import CURRENT, EXPIRED, RESET, Event
from srota.engine.registry import Kind, Param, extension
from srota.engine.windows.base import BufferWindow, WindowProcessor, WindowSpec, expire_held, int_value
from srota.grammar.model import AttrType


class LengthWindow(BufferWindow):
    """Keeps the last ``n`` events; each new event beyond ``n`` pushes the oldest out first."""

    def __init__(self, spec: WindowSpec, length: int) -> None:
        super().__init__(spec)
        self.length = length

    def process(self, chunk: list[Event]) -> None:
        buf = self.buffer
        n = self.length
        out: list[Event] = []
        append = out.append
        now = None
        for e in chunk:
            if e.type != CURRENT:
                continue
            if len(buf) < n:
                buf.append(e)
                append(e)
            elif n > 0:
                old = buf.popleft()
                if now is None:
                    now = self.clock.now()
                append(Event(now, old.data, EXPIRED))
                buf.append(e)
                append(e)
            else:
                # length(0): the event passes and leaves at once, then the aggregates reset
                append(e)
                append(Event(e.timestamp, e.data, EXPIRED))
                append(Event(e.timestamp, e.data, RESET))
        if out:
            self.next(out)


@extension(Kind.WINDOW, "length",
           params=(Param("window.length", (AttrType.INT,), doc="Number of events to keep."),),
           doc="A sliding window that keeps the last window.length events.")
def _length(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    n = int_value(spec, spec.named["window.length"], "window.length")
    assert n is not None
    return lambda: LengthWindow(spec, n)


class LengthBatchWindow(WindowProcessor):
    """Collects ``n`` events and emits them together (Siddhi's LengthBatchWindowProcessor).

    With ``stream.current.event`` every event passes at once and the batch boundary emits the
    expired batch and a reset before the event that opens the next batch.
    """

    @property
    def emits_expired(self) -> bool:
        """Expired events only when the query asked for them (else a reset clears the batch)."""
        return self.expired

    def __init__(self, spec: WindowSpec, length: int, stream_current: bool) -> None:
        super().__init__(spec)
        self.length = length
        self.stream_current = stream_current
        self.count = 0
        self.current: list[Event] = []          # the accumulating batch (non-streaming mode)
        # What a flush will expire and what find scans: Siddhi's expiredEventQueue, which it
        # keeps when the query outputs expired events or a join finds in it, and clears only
        # when it emits it: for a join with current-only output it holds every batch so far.
        self.last: list[Event] = []
        self.found = 0  # how many of `last` a find has scanned since the last flush (see expire_held)
        self.keep_last = self.expired or self.findable

    def enable_find(self) -> None:
        """A join scans :meth:`contents`: keep the batches (see ``last``)."""
        super().enable_find()
        self.keep_last = True

    def process(self, chunk: list[Event]) -> None:
        if self.length == 0:
            self._zero(chunk)
            return
        outs: list[list[Event]] = []
        out: list[Event] = []
        for e in chunk:
            if e.type != CURRENT:
                continue
            if self.stream_current:
                self.count += 1
                if self.count == self.length + 1:
                    now = self.clock.now()
                    if self.expired:
                        out += expire_held(self.last, self.found, now)
                        self.last = []
                        self.found = 0
                    out.append(Event(now, e.data, RESET))
                    self.count = 1
                out.append(e)
                if self.keep_last:
                    self.last.append(e)
                outs.append(out)
                out = []
            else:
                self.current.append(e)
                self.count += 1
                if self.count == self.length:
                    now = self.clock.now()
                    if self.expired and self.last:
                        out += expire_held(self.last, self.found, now)
                        self.found = 0
                    out.append(Event(now, e.data, RESET))
                    out.extend(self.current)
                    if self.expired:
                        self.last = self.current
                    elif self.keep_last:
                        self.last += self.current  # never cleared (see __init__)
                    self.current = []
                    self.count = 0
                    outs.append(out)
                    out = []
        for o in outs:
            self.next(o)

    def _zero(self, chunk: list[Event]) -> None:
        now = self.clock.now()
        for e in chunk:
            if e.type != CURRENT:
                continue
            out = [e]
            if self.expired:
                out.append(Event(now, e.data, EXPIRED))
            out.append(Event(now, e.data, RESET))
            self.next(out)

    def contents(self) -> Iterable[Event]:
        self.found = len(self.last)  # a find walks the whole queue (see expire_held)
        return self.last

    def snapshot_state(self) -> Any:
        return {"count": self.count, "current": list(self.current), "last": list(self.last), "found": self.found}

    def restore_state(self, state: Any) -> None:
        self.count = state["count"]
        self.current = list(state["current"])
        self.last = list(state["last"])
        self.found = state.get("found", 0)  # (Siddhi's restored queue keeps the find's place)


@extension(Kind.WINDOW, "lengthBatch",
           params=(Param("window.length", (AttrType.INT,), doc="Number of events per batch."),
                   Param("stream.current.event", (AttrType.BOOL,), optional=True, default=False,
                         doc="Emit events as they arrive and expire them in batches.")),
           doc="A tumbling window that emits every window.length events as one batch.")
def _length_batch(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    n = int_value(spec, spec.named["window.length"], "window.length")
    assert n is not None
    stream_current = bool(spec.arg("stream.current.event", False))
    return lambda: LengthBatchWindow(spec, n, stream_current)
