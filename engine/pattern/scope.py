"""Where a pattern's attributes live: the states of a pattern and :class:`PatternScope`.

A partial match is a :class:`~srota.engine.event.StateEvent` whose ``events[i]`` is the event of
state ``i`` (None while absent) or, for a counting state, the list of collected events.
:class:`PatternScope` tells the expression compiler where ``e1.price``, ``e1[last].price`` and
unqualified attributes live.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from srota.engine.codegen import CodeGen
from srota.engine.event import Event
from srota.engine.expression import error_at
from srota.engine.scope import Column
from srota.grammar.errors import did_you_mean
from srota.grammar.model import (
    AttrType,
    Expression,
    IsNullStream,
    LastIndex,
    Variable,
)

Emit = Callable[[list[Any]], None]

# Positions inside a counting state's chain, as Siddhi numbers them (SiddhiConstants).
_CURRENT = -1   # the newest collected event
_LAST = -2      # Siddhi's LAST: one before the newest


@dataclass
class _StateInfo:
    """What the planner knows about one stream state."""

    state_id: int
    ref: str | None
    stream_id: str
    attributes: tuple[Any, ...]
    is_count: bool
    node: Any
    is_inner: bool = False
    is_fault: bool = False
    absent: bool = False


class PatternScope:
    """Resolves attributes over a pattern's :class:`StateEvent`.

    ``current`` is the state whose filter is being compiled (None for the selector): there an
    unqualified attribute is that state's own, and ``e2[last]`` inside ``e2``'s own filter
    skips the candidate event (Siddhi's ExpressionParser does the same).  ``default_index`` is
    the chain position of an unindexed reference to a counting state inside filters (the
    newest event), and of ``e1 is null`` and ``eventTimestamp(e1)`` in the selector (the first
    one); an unindexed attribute of a counting state in the selector is the list of its values.
    """

    def __init__(self, states: list[_StateInfo], gen: CodeGen, current: int | None = None,
                 default_index: int = 0) -> None:
        self.states = states
        self.current = current
        self.default_index = default_index
        # A plain state that has not arrived reads as an event of nulls.
        self._nulls = {s.state_id: gen.ref(Event(-1, (None,) * len(s.attributes)), "nul")
                       for s in states if not s.is_count}
        self.prologue: tuple[str, ...] = tuple(self.binding(s) for s in states)

    def binding(self, s: _StateInfo, events: str = "e.events") -> str:
        """The line binding state ``s`` (``d{id}``: its event's data, ``c{id}``: its chain)
        from the partial match's events list ``events``."""
        sid = s.state_id
        if s.is_count:
            return f"c{sid} = {events}[{sid}] or ()"
        return f"d{sid} = ({events}[{sid}] or {self._nulls[sid]}).data"

    # ------------------------------------------------------------------ lookup
    def _state_named(self, name: str, node: Any) -> _StateInfo:
        for s in self.states:
            if (s.ref is None and s.stream_id == name) or s.ref == name:
                return s
        raise error_at(f"'{name}' is not an event reference or stream of this pattern", node)

    def is_stream_reference(self, name: str) -> bool:
        return any(s.ref == name or (s.ref is None and s.stream_id == name) for s in self.states) \
            and not self._is_attribute(name)

    def _is_attribute(self, name: str) -> bool:
        if self.current is not None:
            return any(a.name == name for a in self.states[self.current].attributes)
        return any(a.name == name for s in self.states for a in s.attributes)

    def _position(self, s: _StateInfo, index: int | None, stream_id: str | None) -> int:
        """Siddhi's chain position for ``index`` (an int or a :class:`LastIndex`)."""
        if index is None:
            return self.default_index
        if isinstance(index, LastIndex):
            siddhi = _LAST - int(index)            # the compiler's LAST - k
            own = (self.current is not None and stream_id is not None
                   and self.states[self.current].ref is not None
                   and self.states[self.current].ref == stream_id and s.state_id == self.current)
            return siddhi if own else siddhi + 1
        return int(index)

    def locate(self, var: Variable) -> tuple[_StateInfo, int]:
        """The state ``var`` reads and its chain position."""
        s = self._state_of(var)
        return s, self._position(s, var.stream_index, var.stream_id)

    def locate_stream(self, node: IsNullStream) -> tuple[_StateInfo, int]:
        """The state and chain position ``e2 is null`` / ``e2[last] is null`` reads."""
        s = self._state_named(node.stream_id, node)
        index = node.stream_index
        if index is None:
            return s, self.default_index
        if isinstance(index, LastIndex):
            return s, _LAST - int(index) + 1
        return s, int(index)

    def locate_event(self, node: Expression) -> tuple[_StateInfo, int]:
        """The state and chain position ``eventTimestamp(e1)`` reads."""
        if isinstance(node, Variable) and node.stream_id is None:
            s = self._state_named(node.attribute, node)
            return s, self._position(s, node.stream_index, None)
        raise error_at("eventTimestamp() takes an event reference such as e1", node)

    def _state_of(self, var: Variable) -> _StateInfo:
        name = var.attribute
        if var.stream_id is not None:
            return self._state_named(var.stream_id, var)
        if self.current is not None:
            return self.states[self.current]
        found = [st for st in self.states if any(a.name == name for a in st.attributes)]
        if not found:
            raise error_at(f"no stream of this pattern has an attribute '{name}'", var)
        if len(found) > 1:
            raise error_at(f"'{name}' is ambiguous: qualify it with an event reference "
                           f"({', '.join(st.ref or st.stream_id for st in found)})", var)
        return found[0]

    def resolve(self, var: Variable) -> tuple[str, AttrType]:
        s, pos = self.locate(var)
        i = next((k for k, a in enumerate(s.attributes) if a.name == var.attribute), None)
        if i is None:
            raise error_at(f"stream '{s.stream_id}' has no attribute '{var.attribute}'"
                           f"{did_you_mean(var.attribute, (a.name for a in s.attributes))}", var)
        if s.is_count and self.current is None and var.stream_index is None:
            # In the selector, an unindexed attribute of a counting state is the list of its
            # values along the chain, [] for none (Siddhi's MultiValueVariableFunctionExecutor,
            # an OBJECT); inside a filter it is one event's (default_index).
            return f"[_x.data[{i}] for _x in c{s.state_id}]", AttrType.OBJECT
        return self._read(s, pos, f".data[{i}]", f"d{s.state_id}[{i}]"), s.attributes[i].type

    def _read(self, s: _StateInfo, pos: int, suffix: str, plain: str) -> str:
        sid = s.state_id
        if not s.is_count:
            # A plain state is a chain of one event.
            return plain if pos in (0, _CURRENT) else "None"
        c = f"c{sid}"
        if pos >= 0:
            return f"({c}[{pos}]{suffix} if len({c}) > {pos} else None)"
        return f"({c}[{pos}]{suffix} if len({c}) >= {-pos} else None)"

    def _event_code(self, s: _StateInfo, pos: int) -> str:
        sid = s.state_id
        if not s.is_count:
            return f"e.events[{sid}]" if pos in (0, _CURRENT) else "None"
        c = f"c{sid}"
        if pos >= 0:
            return f"({c}[{pos}] if len({c}) > {pos} else None)"
        return f"({c}[{pos}] if len({c}) >= {-pos} else None)"

    def resolve_stream(self, node: IsNullStream) -> str:
        return self._event_code(*self.locate_stream(node))

    def timestamp(self, node: Expression | None) -> str:
        if node is None:
            return "e.timestamp"
        ev = self._event_code(*self.locate_event(node))
        return f"(_ts.timestamp if (_ts := {ev}) is not None else None)"

    def columns(self) -> list[Column]:
        """``select *``: every attribute of every state (a repeated name is an error)."""
        cols: list[Column] = []
        seen: set[str] = set()
        for s in self.states:
            for i, a in enumerate(s.attributes):
                if a.name in seen:
                    raise error_at(f"select * is ambiguous: attribute '{a.name}' exists in several "
                                   "streams of the pattern", s.node)
                seen.add(a.name)
                cols.append(Column(a.name, a.type, self._read(s, self.default_index, f".data[{i}]",
                                                              f"d{s.state_id}[{i}]")))
        return cols
