"""``session(gap[, key][, allowed.latency])``: per-key sessions closed by inactivity.

A port of Siddhi's SessionWindowProcessor: event timestamps drive the sessions; a timer at
``last event + gap`` closes a session, which is then emitted as expired events (after the
``allowed.latency`` grace period, during which late events may still join it).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from srota.engine.event import CURRENT, EXPIRED, Event
from srota.engine.registry import Kind, Param, extension
from srota.engine.windows.base import WindowProcessor, WindowSpec, int_value
from srota.grammar.model import AttrType

_INT_LONG = (AttrType.INT, AttrType.LONG)
_DEFAULT_KEY = "default-key"


def _java_hash(s: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as an unsigned 32-bit value."""
    h = 0
    data = s.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] | data[i + 1] << 8)) & 0xFFFFFFFF
    return h


def _spread(key: Any) -> int:
    """The hash Java's hash maps place ``key`` by: ``h ^ (h >>> 16)`` of its ``hashCode``."""
    h = _java_hash(key) if isinstance(key, str) else hash(key) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & 0x7FFFFFFF


class _KeyOrder:
    """Where each session key sits in Siddhi's ``ConcurrentHashMap`` of sessions, whose
    iteration order (bin by bin, a bin's keys in insertion order, except that a resize moves
    the head of a bin's list in reverse, as ``ConcurrentHashMap.transfer`` does) decides which
    of several sessions closing at one time leaves first.  Keys are never removed (Siddhi's
    ``sessionMap`` keeps every key it has seen)."""

    __slots__ = ("bins", "count", "keys")

    def __init__(self) -> None:
        self.bins: list[list[tuple[int, Any]]] = [[] for _ in range(16)]
        self.count = 0
        self.keys: dict[Any, int] = {}  # key -> spread hash

    def add(self, key: Any) -> None:
        if key in self.keys:
            return
        h = _spread(key)
        self.keys[key] = h
        n = len(self.bins)
        self.bins[h & (n - 1)].append((h, key))
        self.count += 1
        if self.count >= n - (n >> 2):  # sizeCtl: 0.75 of the table
            self._transfer()

    def _transfer(self) -> None:
        n = len(self.bins)
        new: list[list[tuple[int, Any]]] = [[] for _ in range(2 * n)]
        for i, nodes in enumerate(self.bins):
            if not nodes:
                continue
            # the last run of nodes going to one side keeps its order; those before it are
            # put in front of their side's list one by one
            last = len(nodes) - 1
            bit = nodes[last][0] & n
            while last > 0 and nodes[last - 1][0] & n == bit:
                last -= 1
            lo: list[tuple[int, Any]] = []
            hi: list[tuple[int, Any]] = []
            (hi if bit else lo).extend(nodes[last:])
            for node in nodes[:last]:
                (hi if node[0] & n else lo).insert(0, node)
            new[i], new[i + n] = lo, hi
        self.bins = new

    def rank(self, key: Any) -> tuple[int, int]:
        """The key's place in iteration order: (bin, position in the bin)."""
        h = self.keys.get(key)
        if h is None:
            return (0, 0)
        i = h & (len(self.bins) - 1)
        return i, next(j for j, node in enumerate(self.bins[i]) if node[1] == key)


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
        # Sessions closing at one time leave in Siddhi's hash order (see _timeout_order): its
        # map of sessions, and the most sessions ever open at once (the HashMap of end times
        # it sorts keeps its grown table).
        self.key_order = _KeyOrder()
        self.most_open = 0
        self.notices: deque[int] = deque()  # the times asked for, in asking order (on_timer)

    # ------------------------------------------------------------------ processing
    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        for e in chunk:
            if e.type != CURRENT:
                continue
            if self._add(e):
                out.append(e)
        self._flush(out)

    def _notify_at(self, at: int) -> None:
        self.notices.append(at)
        self.wake_after(at)

    def on_timer(self, at: int) -> None:
        """Siddhi's ``Scheduler.sendTimerEvents``: the times the window asked for wait in a
        FIFO queue (not in time order: a closed session's ``alive`` time comes after the ends
        of sessions asked for before it), and each time the clock moves the queue is taken
        from its head while the head is due, one timer event, and one output chunk, per
        time; a due time behind one that is not waits for it.  ``at`` (the scheduler's order)
        only says that something may be due."""
        now = self.clock.now()
        notices = self.notices
        while notices and notices[0] <= now:
            t = notices.popleft()
            self._current_timeout(t)
            if self.latency > 0:
                self._previous_timeout(t)
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
            self.key_order.add(key)
        cur, prev = pair
        if not cur.events:
            cur.events.append(e)
            cur.set(ts, max_ts, alive)
            self._notify_at(max_ts)
        elif ts >= cur.start:
            if ts <= cur.end:
                cur.set(cur.start, max_ts, alive)
                cur.events.append(e)
                self._notify_at(max_ts)
            elif self.latency > 0:
                self._move_current_to_previous(cur, prev)
                cur.events = [e]
                cur.set(ts, max_ts, alive)
                self._notify_at(max_ts)
        else:
            return self._add_late(e, ts, cur, prev)
        return True

    def _move_current_to_previous(self, cur: _Session, prev: _Session) -> None:
        if prev.events:
            self.expired_out.extend(prev.events)
        prev.events = cur.events
        cur.events = []
        prev.set(cur.start, cur.end, cur.alive)
        self._notify_at(cur.alive)

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

    def _timeout_order(self, ends: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
        """``(end, key)`` of the open sessions in the order Siddhi checks them: by end time,
        ties in the iteration order of the ``HashMap`` it sorts from (``Map.Entry.
        comparingByValue`` is stable): by the HashMap's bin of the key, then in the order the
        keys were put, which is the iteration order of its map of sessions."""
        if len(ends) < 2:
            return ends
        self.most_open = most = max(self.most_open, len(ends))
        n = 16
        while most > n * 3 // 4:  # HashMap resizes past 0.75 of its table, and clear() keeps it
            n *= 2
        order = self.key_order

        def place(item: tuple[int, Any]) -> tuple[int, int, tuple[int, int]]:
            return item[0], _spread(item[1]) & (n - 1), order.rank(item[1])

        return sorted(ends, key=place)

    def _current_timeout(self, t: int) -> None:
        ends = self._timeout_order([(pair[0].end, key) for key, pair in self.sessions.items() if pair[0].events])
        for end, key in ends:
            cur, prev = self.sessions[key]
            if cur.events and t >= end:
                if self.latency > 0:
                    prev.events = prev.events + cur.events
                    prev.set(cur.start, cur.end, cur.alive)
                    self._notify_at(cur.alive)
                else:
                    self.expired_out.extend(cur.events)
                cur.events = []
            else:
                break
        self._release()

    def _previous_timeout(self, t: int) -> None:
        ends = self._timeout_order([(pair[1].end, key) for key, pair in self.sessions.items() if pair[1].events])
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
        return {"sessions": {k: (c.__getstate__(), p.__getstate__()) for k, (c, p) in self.sessions.items()},
                "keys": list(self.key_order.keys), "most_open": self.most_open, "notices": list(self.notices)}

    def restore_state(self, state: Any) -> None:
        self.sessions = {}
        self.notices = deque()
        self.key_order = _KeyOrder()
        for k in state.get("keys", ()):  # replayed in insertion order: the same table
            self.key_order.add(k)
        self.most_open = state.get("most_open", 0)
        for k, (c, p) in state["sessions"].items():
            self.key_order.add(k)
            cur, prev = _Session(), _Session()
            cur.__setstate__(c)
            prev.__setstate__(p)
            self.sessions[k] = (cur, prev)
            if "notices" not in state:  # (a snapshot of before 2026-11-29: the times asked again)
                if cur.events:
                    self._notify_at(cur.end)
                if prev.events:
                    self._notify_at(prev.alive)
        # the times asked for, in their asking order: the order they fire in (see on_timer)
        for at in state.get("notices", ()):
            self._notify_at(at)


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
