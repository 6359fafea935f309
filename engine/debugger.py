"""The debugger: breakpoints at a query's IN and OUT, as Siddhi's ``SiddhiDebugger``.

``runtime.debug()`` attaches a :class:`SiddhiDebugger` (names in snake case).  Every query has
two checkpoints where its events already pass: **IN**, the chunk entering the query from one
of its input streams (before filters, windows, joins), and **OUT**, the chunk leaving it
(after the selector and rate limiter, before callbacks and the target).  With no debugger
attached each checkpoint costs one ``is None`` test per chunk (DESIGN.md decision 15).

At a checkpoint that has an acquired breakpoint (or right after :meth:`SiddhiDebugger.next`)
the debugger callback is called with the chunk's events, the query name, the terminal and
the debugger; then the thread that is processing the chunk **holds** until ``next()`` (go on
and stop at the very next checkpoint, of this query or a downstream one) or ``play()`` (go
on to the next acquired breakpoint) is called -- from the callback itself, or from any other
thread.  This is Siddhi's semantics: the callback may call ``next()``/``play()`` before it
returns, and a callback that returns without doing so leaves the sender held.  While held,
the app lock is held too (one writer per app): other senders of the app wait, and
:meth:`SiddhiDebugger.get_query_state` reads the state without the lock.

``runtime.pause()``/``resume()`` hold a whole app without breakpoints: the next chunk to enter
it waits until ``resume()`` (chunks already inside finish).
"""
from __future__ import annotations

import enum
import threading
from collections.abc import Callable
from typing import Any

from srota.engine import collector
from srota.engine.event import Event

DebuggerCallback = Callable[[list[Event], str, "QueryTerminal", "SiddhiDebugger"], None]


class QueryTerminal(enum.StrEnum):
    """Where in a query a breakpoint sits."""

    IN = "in"
    OUT = "out"


class SiddhiDebugger:
    """Breakpoints, holds and query state of one app (see the module docstring)."""

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime
        self._breakpoints: set[tuple[str, QueryTerminal]] = set()
        self._callback: DebuggerCallback | None = None
        self._enable_next = False
        # Siddhi's breakPointLock: a semaphore with no permits; next()/play() release one.
        self._release = threading.Semaphore(0)
        self._lock = threading.Lock()
        #: Set while a checkpoint holds: (query, terminal, events); None otherwise.
        self.held: tuple[str, QueryTerminal, list[Event]] | None = None
        #: How many times a checkpoint has held so far.
        self.stops = 0
        #: Called with ``(query, terminal, events)`` whenever a checkpoint starts holding
        #: (the service's admin API streams them to a browser).
        self.listeners: list[Callable[[str, QueryTerminal, list[Event]], None]] = []

    # ------------------------------------------------------------------ breakpoints
    def _check_query(self, query_name: str) -> None:
        if query_name not in self._runtime.queries:
            known = ", ".join(sorted(self._runtime.queries)) or "none"
            raise ValueError(f"no query named '{query_name}' in app '{self._runtime.name}' (queries: {known})")

    def acquire_break_point(self, query_name: str, terminal: QueryTerminal | str) -> None:
        """Stop at ``terminal`` (IN or OUT) of ``query_name``."""
        self._check_query(query_name)
        with self._lock:
            self._breakpoints.add((query_name, QueryTerminal(terminal)))

    def release_break_point(self, query_name: str, terminal: QueryTerminal | str) -> None:
        self._check_query(query_name)
        with self._lock:
            self._breakpoints.discard((query_name, QueryTerminal(terminal)))

    def release_all_break_points(self) -> None:
        with self._lock:
            self._breakpoints.clear()

    @property
    def break_points(self) -> list[tuple[str, QueryTerminal]]:
        """The acquired breakpoints, sorted."""
        with self._lock:
            return sorted(self._breakpoints)

    def set_debugger_callback(self, callback: DebuggerCallback | None) -> None:
        """``callback(events, query_name, terminal, debugger)`` at every stop."""
        self._callback = callback

    # ------------------------------------------------------------------ stepping
    def next(self) -> None:
        """Go on, and stop at the very next checkpoint (IN or OUT, this query or a downstream one)."""
        self._enable_next = True
        self._release.release()

    def play(self) -> None:
        """Go on to the next acquired breakpoint."""
        self._enable_next = False
        self._release.release()

    def checkpoint(self, query_name: str, terminal: QueryTerminal, chunk: list[Event]) -> None:
        """Called by the engine at a query's IN and OUT; holds when it must (module doc)."""
        if not (self._enable_next or (query_name, terminal) in self._breakpoints):
            return
        events = list(chunk)
        self._enable_next = False
        self.held = (query_name, terminal, events)
        self.stops += 1
        try:
            for listener in list(self.listeners):
                listener(query_name, terminal, events)
            callback = self._callback
            if callback is not None:
                callback(events, query_name, terminal, self)
            collector.let_run()  # a hold may last minutes: the rest of the process allocates meanwhile
            self._release.acquire()
        finally:
            self.held = None

    # ------------------------------------------------------------------ state
    def get_query_state(self, query_name: str) -> dict[str, Any]:
        """The state of a query's stateful elements (windows, aggregators, partial matches)
        as plain data: ``{element id: state}``.  Read without the app lock (a held sender
        holds it), so take it while the app is held or quiet."""
        self._check_query(query_name)
        return self._runtime.query_state(query_name)

    def detach(self) -> None:
        """Release every breakpoint and let a held sender go (the runtime's ``debug(False)``)."""
        self.release_all_break_points()
        self._enable_next = False
        if self.held is not None:
            self._release.release()


class Inspector:
    """What the hot paths call when a debugger or statistics is attached (``ctx.inspector``)."""

    __slots__ = ("ctx",)

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx

    def query_in(self, query_name: str, chunk: list[Event]) -> None:
        debugger = self.ctx.debugger
        if debugger is not None:
            debugger.checkpoint(query_name, QueryTerminal.IN, chunk)

    def query_out(self, query_name: str, chunk: list[Event]) -> None:
        debugger = self.ctx.debugger
        if debugger is not None:
            debugger.checkpoint(query_name, QueryTerminal.OUT, chunk)


def update_inspector(ctx: Any) -> None:
    """Set ``ctx.inspector`` exactly when a debugger or statistics is attached."""
    ctx.inspector = Inspector(ctx) if ctx.debugger is not None or ctx.statistics is not None else None


class Pause:
    """An app-wide hold without breakpoints (``runtime.pause()``/``resume()``)."""

    def __init__(self) -> None:
        self._open = threading.Event()
        self._open.set()

    @property
    def paused(self) -> bool:
        return not self._open.is_set()

    def pause(self) -> None:
        self._open.clear()

    def resume(self) -> None:
        self._open.set()

    def wait(self) -> None:
        self._open.wait()


def plain(value: Any, depth: int = 0) -> Any:
    """State as plain data (JSON-ready): events become ``{timestamp, data, type}``, tuples and
    deques lists, sets sorted lists, other objects their public attributes (or repr)."""
    if depth > 12:
        return repr(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Event):
        return {"timestamp": value.timestamp, "data": [plain(v, depth + 1) for v in value.data],
                "type": ("current", "expired", "timer", "reset")[value.type]}
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else repr(k) if not isinstance(k, int | float | bool) else k):
                plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        items = [plain(v, depth + 1) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return items
    if isinstance(value, list | tuple) or hasattr(value, "__iter__") and hasattr(value, "__len__") \
            and not isinstance(value, bytes | bytearray):
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, bytes | bytearray):
        return value.hex()
    fields = getattr(value, "__dict__", None)
    if fields is None and hasattr(value, "__slots__"):
        fields = {k: getattr(value, k) for k in value.__slots__ if hasattr(value, k)}
    if fields:
        return {k: plain(v, depth + 1) for k, v in fields.items() if not k.startswith("_") and not callable(v)}
    return repr(value)
