"""``session(gap[, key][, allowed.latency])``: per-key sessions closed by inactivity.

A port of Siddhi's SessionWindowProcessor: event timestamps drive the sessions; a timer at
``last event + gap`` closes a session, which is then emitted as expired events (after the
``allowed.latency`` grace period, during which late events may still join it).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from srota.engine.event import CURRENT, EXPIRED, Event
from srota.engine.registry import Kind, Param, extension
from srota.engine.windows.base import WindowProcessor, WindowSpec, int_value
from srota.grammar.model import AttrType

_INT_LONG = (AttrType.INT, AttrType.LONG)
_DEFAULT_KEY = "default-key"


class _Session:
    """One session's events and times (Siddhi's SessionComplexEventChunk)."""

    __slots__ = ("events", "start", "end", "alive")

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.start = 0
        self.end = 0
        self.alive = 0

    def set(self, start: int, end: int, alive: int) -> None:
        self.start, self.end, self.alive = start, end, alive

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.events, self.start, self.end, self.alive)

    def __setstate__(self, s: tuple[Any, ...]) -> None:
        self.events, self.start, self.end, self.alive = s


class SessionWindow(WindowProcessor):
    """Session window with an optional session key and allowed latency."""

    def __init__(self, spec: WindowSpec, gap: int, key_getter: Callable[[Event], Any] | None,
                 latency: int) -> None:
        super().__init__(spec)
        self.gap = gap
        self.key_getter = key_getter
        self.latency = latency
        # key -> (current session, previous session)
        self.sessions: dict[Any, tuple[_Session, _Session]] = {}
        self.expired_out: list[Event] = []

    # ------------------------------------------------------------------ processing
    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        for e in chunk:
            if e.type != CURRENT:
                continue
            if self._add(e):
                out.append(e)
        self._flush(out)

    def on_timer(self, at: int) -> None:
        self._current_timeout(at)
        if self.latency > 0:
            self._previous_timeout(at)
        self._flush([])

    def _flush(self, out: list[Event]) -> None:
        if self.expired_out:
            out.extend(Event(x.timestamp, x.data, EXPIRED) for x in self.expired_out)
            self.expired_out = []
        if out:
            self.next(out)

    def _add(self, e: Event) -> bool:
        """Add a current event; False when it is too late for any session (it is dropped)."""
        ts = e.timestamp
        gap = self.gap
        max_ts = ts + gap
        alive = max_ts + self.latency
        key = self.key_getter(e) if self.key_getter is not None else _DEFAULT_KEY
        pair = self.sessions.get(key)
        if pair is None:
            pair = (_Session(), _Session())
            self.sessions[key] = pair
        cur, prev = pair
        if not cur.events:
            cur.events.append(e)
            cur.set(ts, max_ts, alive)
            self.wake_after(max_ts)
        elif ts >= cur.start:
            if ts <= cur.end:
                cur.set(cur.start, max_ts, alive)
                cur.events.append(e)
                self.wake_after(max_ts)
            elif self.latency > 0:
                self._move_current_to_previous(cur, prev)
                cur.events = [e]
                cur.set(ts, max_ts, alive)
                self.wake_after(max_ts)
        else:
            return self._add_late(e, ts, cur, prev)
        return True

    def _move_current_to_previous(self, cur: _Session, prev: _Session) -> None:
        if prev.events:
            self.expired_out.extend(prev.events)
        prev.events = cur.events
        cur.events = []
        prev.set(cur.start, cur.end, cur.alive)
        self.wake_after(cur.alive)

    def _add_late(self, e: Event, ts: int, cur: _Session, prev: _Session) -> bool:
        gap = self.gap
        if self.latency > 0:
            if ts >= cur.start - gap:
                cur.events.insert(0, e)
                cur.start = ts
                self._merge(prev, cur)
                return True
            if not prev.events and ts < cur.start - gap:
                return False
            if ts >= prev.start - gap:
                prev.events.append(e)
                if ts <= prev.end - gap and ts < prev.start:
                    prev.start = ts
                else:
                    prev.end = ts + gap
                    prev.alive = ts + gap + self.latency
                    self._merge(prev, cur)
                return True
            return False
        if ts >= cur.start - gap:
            cur.events.insert(0, e)
            cur.start = ts
            return True
        return False

    def _merge(self, prev: _Session, nxt: _Session) -> None:
        if prev.events and prev.end >= nxt.start - self.gap:
            nxt.events = prev.events + nxt.events
            nxt.start = prev.start
            prev.events = []

    def _current_timeout(self, t: int) -> None:
        ends = sorted(((pair[0].end, key) for key, pair in self.sessions.items() if pair[0].events),
                      key=lambda x: x[0])
        for end, key in ends:
            cur, prev = self.sessions[key]
            if cur.events and t >= end:
                if self.latency > 0:
                    prev.events = prev.events + cur.events
                    prev.set(cur.start, cur.end, cur.alive)
                    self.wake_after(cur.alive)
                else:
                    self.expired_out.extend(cur.events)
                cur.events = []
            else:
                break
        self._release()

    def _previous_timeout(self, t: int) -> None:
        ends = sorted(((pair[1].end, key) for key, pair in self.sessions.items() if pair[1].events),
                      key=lambda x: x[0])
        for _end, key in ends:
            prev = self.sessions[key][1]
            if prev.events and t >= prev.alive:
                self.expired_out.extend(prev.events)
                prev.events = []
            else:
                break
        self._release()

    def _release(self) -> None:
        # A key whose sessions are both closed keeps no state (unbounded key spaces stay small).
        empty = [k for k, (c, p) in self.sessions.items() if not c.events and not p.events]
        for k in empty:
            del self.sessions[k]

    # ------------------------------------------------------------------ state
    def contents(self) -> Iterable[Event]:
        """Nothing: Siddhi's find scans the session window's expiredEventChunk, which holds the
        closed sessions only while a chunk is processed (it is emitted and cleared before the
        chunk goes on), so a join or an on-demand query never finds a session window's events."""
        return ()

    def snapshot_state(self) -> Any:
        return {"sessions": {k: (c.__getstate__(), p.__getstate__()) for k, (c, p) in self.sessions.items()}}

    def restore_state(self, state: Any) -> None:
        self.sessions = {}
        for k, (c, p) in state["sessions"].items():
            cur, prev = _Session(), _Session()
            cur.__setstate__(c)
            prev.__setstate__(p)
            self.sessions[k] = (cur, prev)
            if cur.events:
                self.wake_after(cur.end)
            if prev.events:
                self.wake_after(prev.alive)


@extension(Kind.WINDOW, "session",
           params=(Param("window.session", _INT_LONG, doc="Session gap: inactivity that closes a session."),
                   Param("window.key", (AttrType.STRING,), dynamic=True, doc="The session key attribute."),
                   Param("window.allowed.latency", _INT_LONG,
                         doc="How long a closed session still accepts late events.")),
           overloads=(("window.session",), ("window.session", "window.key"),
                      ("window.session", "window.allowed.latency"),
                      ("window.session", "window.key", "window.allowed.latency")),
           doc="Groups events into sessions per key, closed after window.session of inactivity.")
def _session(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    gap = int_value(spec, spec.named["window.session"], "window.session")
    assert gap is not None
    key_arg = spec.named.get("window.key")
    key_getter = None
    if key_arg is not None:
        if key_arg.constant:
            raise spec.error("the session key should be a stream attribute, but found a constant", key_arg.node)
        key_getter = key_arg.getter
    latency = int_value(spec, spec.named.get("window.allowed.latency"), "window.allowed.latency") or 0
    if latency > gap:
        raise spec.error("allowed latency should not be greater than the session gap",
                         spec.named["window.allowed.latency"].node)
    return lambda: SessionWindow(spec, gap, key_getter, latency)
