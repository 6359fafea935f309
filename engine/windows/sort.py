"""``sort(n, attr [, 'asc'|'desc'], ...)``: keeps the first ``n`` events in sort order."""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from srota.engine.event import CURRENT, EXPIRED, Event
from srota.engine.registry import ANY_TYPE, Kind, Param, extension
from srota.engine.types import java_order
from srota.engine.windows.base import WindowProcessor, WindowSpec, int_value
from srota.grammar.model import AttrType, Variable


def _compare(a: Any, b: Any) -> int:
    """``a.compareTo(b)``'s sign, as SortWindowProcessor's comparator takes it."""
    if a is None or b is None:  # Java would fail; nulls sort first here
        return (a is not None) - (b is not None)
    a, b = java_order(a), java_order(b)
    return (a > b) - (a < b)


class SortWindow(WindowProcessor):
    """When more than ``n`` events are held, the last one in sort order leaves.

    As in Siddhi, the window is sorted (stably, the new event last among equals) only when it
    overflows, and the event that leaves may be the one that just arrived.  The current event
    comes first in the output chunk, then the expired one.
    """

    def __init__(self, spec: WindowSpec, length: int, keys: list[tuple[int, int]]) -> None:
        super().__init__(spec)
        self.length = length
        self.events: list[Event] = []

        def cmp(x: Event, y: Event) -> int:
            for idx, direction in keys:
                c = _compare(x.data[idx], y.data[idx])
                if c:
                    return c * direction
            return 0

        self._key = functools.cmp_to_key(cmp)

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        events = self.events
        now = None
        for e in chunk:
            if e.type != CURRENT:
                continue
            out.append(e)
            events.append(e)
            if len(events) > self.length:
                events.sort(key=self._key)
                old = events.pop()
                if now is None:
                    now = self.clock.now()
                out.append(Event(now, old.data, EXPIRED))
        if out:
            self.next(out)

    def contents(self) -> Iterable[Event]:
        return self.events

    def snapshot_state(self) -> Any:
        return {"events": list(self.events)}

    def restore_state(self, state: Any) -> None:
        self.events = list(state["events"])


@extension(Kind.WINDOW, "sort",
           params=(Param("window.length", (AttrType.INT,), doc="Number of events to keep."),
                   Param("attribute", ANY_TYPE, dynamic=True, repeat=True,
                         doc="Sort attributes, each optionally followed by 'asc' or 'desc'.")),
           doc="Keeps the window.length first events in the given sort order.")
def _sort(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    length = int_value(spec, spec.args[0], "window.length")
    assert length is not None
    keys: list[tuple[int, int]] = []
    rest = spec.args[1:]
    if not rest:
        raise spec.error("needs at least one sort attribute: sort(window.length, attribute [, 'asc'|'desc'] ...)")
    i = 0
    while i < len(rest):
        a = rest[i]
        if a.constant or not isinstance(a.node, Variable) or a.index is None:
            raise spec.error("expected a sort attribute (a stream attribute), but found a constant", a.node)
        direction = 1
        if i + 1 < len(rest) and rest[i + 1].constant and rest[i + 1].type is AttrType.STRING:
            word = str(rest[i + 1].value).lower()
            if word not in ("asc", "desc"):
                raise spec.error(f"order must be 'asc' or 'desc', but found '{rest[i + 1].value}'", rest[i + 1].node)
            direction = -1 if word == "desc" else 1
            i += 1
        keys.append((a.index, direction))
        i += 1
    return lambda: SortWindow(spec, length, keys)
