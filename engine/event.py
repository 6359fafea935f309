"""Events: the unit that flows through junctions and processors, always in chunks (lists).

One class serves the public API (``Event(timestamp, data)``, ``.is_expired``) and the engine,
which also uses the TIMER and RESET types of Siddhi's ComplexEvent.  Events are never mutated
after creation by the engine: a window that expires an event creates an EXPIRED copy, so one
event object can be shared safely by every receiver of a junction.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

CURRENT = 0
EXPIRED = 1
TIMER = 2
RESET = 3

_TYPE_NAMES = ("CURRENT", "EXPIRED", "TIMER", "RESET")


class Event:
    """An event: ``timestamp`` in ms, ``data`` (a tuple of attribute values), and its type.

    ``Event(ts, data)`` is a current event; ``is_expired`` tells an expired one.
    """

    __slots__ = ("timestamp", "data", "type")

    def __init__(self, timestamp: int, data: Sequence[Any], type: int = CURRENT) -> None:  # noqa: A002
        self.timestamp = timestamp
        self.data = data
        self.type = type

    @property
    def is_expired(self) -> bool:
        """True for an event that left a window (Siddhi's EXPIRED type)."""
        return self.type == EXPIRED

    @is_expired.setter
    def is_expired(self, value: bool) -> None:
        self.type = EXPIRED if value else CURRENT

    def __repr__(self) -> str:
        kind = "" if self.type == CURRENT else f", {_TYPE_NAMES[self.type]}"
        return f"Event({self.timestamp}, {list(self.data)!r}{kind})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return (self.timestamp == other.timestamp and self.type == other.type
                and tuple(self.data) == tuple(other.data))

    __hash__ = None  # type: ignore[assignment]  # events are compared by value but not hashed


class RawEvent(Event):
    """An :class:`Event` that the engine's hot paths make by setting its three slots.

    ``RawEvent()`` takes no arguments: its ``__init__`` is ``object.__init__``, so making
    one runs no Python code, a quarter cheaper than ``object.__new__(Event)`` in CPython
    3.11, and an output row's event is the largest cost a filter has per event.  To every
    reader it is an Event (``isinstance``, ``==``, ``repr``); it pickles as one and state
    snapshots keep it as one (``state_codec`` writes the class in ``_state_class``).
    """

    __slots__ = ()
    __init__ = object.__init__
    _state_class = Event

    def __reduce__(self) -> Any:
        return (Event, (self.timestamp, self.data, self.type))


class StateEvent:
    """A combination of events from several streams: a join pair or a pattern match.

    ``events[i]`` is the Event at position i (None when absent), or, for counting pattern
    states, a list of Events.
    """

    __slots__ = ("timestamp", "events", "type")

    def __init__(self, timestamp: int, events: list[Any], type: int = CURRENT) -> None:  # noqa: A002
        self.timestamp = timestamp
        self.events = events
        self.type = type

    @property
    def is_expired(self) -> bool:
        return self.type == EXPIRED

    def __repr__(self) -> str:
        return f"StateEvent({self.timestamp}, {self.events!r}, {_TYPE_NAMES[self.type]})"
