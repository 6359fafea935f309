"""The generated fast paths of pattern states, planned on the expression model.

A plain state whose condition compares an attribute of its event for equality with one of an
earlier event (``symbol == e1.symbol``) files its pending partial matches in a dict by that
value (:class:`_StateKey`), so an event is tested against its own key's partial matches only;
the candidates are tested in one generated loop (:class:`_Test`).  What a condition reads
(which states, the candidate itself, impure functions) is found by walking its expression
model (:func:`_reads`) before any code is generated, never by reading generated text.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from srota.engine.codegen import CodeGen
from srota.engine.event import Event, StateEvent
from srota.engine.expression import BASE_NAMESPACE
from srota.engine.pattern.scope import PatternScope, _StateInfo
from srota.grammar.model import (
    AttrType,
    CountStateElement,
    EveryStateElement,
    GroupStateElement,
    LogicalStateElement,
    NextStateElement,
    StreamStateElement,
)

if TYPE_CHECKING:
    from srota.engine.pattern.runtime import PatternRuntime


#: What a probe returns when the arriving event's key cannot be hashed (the index is dropped).
_UNHASHABLE = object()

#: Attribute types whose values hash consistently with the generated ``==`` (numbers of
#: different types compare and hash alike in Python); ``object`` values may be unhashable.
_HASHABLE_TYPES = frozenset({AttrType.STRING, AttrType.INT, AttrType.LONG, AttrType.FLOAT,
                             AttrType.DOUBLE, AttrType.BOOL})


@dataclass(frozen=True)
class _Test:
    """One state's condition, ready to be written into a loop over candidate partial matches.

    ``code`` reads the arriving event as ``d{sid}`` (bound once per event by ``own``) and the
    candidate's other events through ``bindings`` (lines over ``_r_v``, its events list).
    ``gate`` is the part of the condition that reads the arriving event only (its conjuncts
    over ``d{sid}`` alone, without function calls): it is tested once per event, before
    any candidate; ``whole`` says it is the whole condition, so every candidate passes.
    """

    sid: int
    code: str
    own: tuple[str, ...]
    bindings: tuple[str, ...]
    gate: str | None = None
    whole: bool = False
    reads_state: bool = True   # the code reads ``e`` (the candidate) itself, not only bindings

    def candidates(self, source: str) -> list[str]:
        """Lines setting ``_r_hits`` to the partial matches of ``source`` that pass (or None).

        ``own`` must be bound and ``gate`` true.  A passing partial match keeps the event
        (``events[sid]``), as Siddhi's does when its post processor runs; a failing one is
        left as it was.  The arriving event is ``_r_ev``.
        """
        sid = self.sid
        if self.whole:
            return [f"_r_hits = list({source})",
                    "for e in _r_hits:",
                    f"    e.events[{sid}] = _r_ev"]
        if not self.reads_state:
            # The condition reads the candidate through its bindings only: set the event on
            # the ones that pass.
            return ["_r_hits = None",
                    f"for e in {source}:",
                    *(["    _r_v = e.events"] if self.bindings else []),
                    *("    " + b for b in self.bindings),
                    f"    if {self.code}:",
                    f"        e.events[{sid}] = _r_ev",
                    "        if _r_hits is None:",
                    "            _r_hits = [e]",
                    "        else:",
                    "            _r_hits.append(e)"]
        return ["_r_hits = None",
                f"for e in {source}:",
                "    _r_v = e.events",
                f"    _r_v[{sid}] = _r_ev",
                *("    " + b for b in self.bindings),
                f"    if {self.code}:",
                "        if _r_hits is None:",
                "            _r_hits = [e]",
                "        else:",
                "            _r_hits.append(e)",
                "    else:",
                f"        _r_v[{sid}] = None"]

    def loop(self, source: str) -> list[str]:
        """:meth:`candidates` with ``own`` and ``gate`` (``_r_hits`` None when the gate fails)."""
        lines = self.candidates(source)
        if self.gate is not None:
            lines = ["_r_hits = None", f"if {self.gate} and {source}:", *("    " + x for x in lines)]
        return [*self.own, *lines]


#: Names a condition may use and still be a function of the arriving event alone.
_PURE_NAMES = frozenset({"None", "True", "False", "and", "or", "not", "is", "in", "if", "else",
                         *BASE_NAMESPACE})


_STRING_LITERAL = re.compile(r"'(?:[^'\\]|\\.)*'" r'|"(?:[^"\\]|\\.)*"')
_NAME = re.compile(r"(?<!\w)[A-Za-z_]\w*")


@functools.lru_cache(maxsize=1024)   # partitions plan the same conditions for every key
def _names(code: str) -> frozenset[str]:
    """The names (and attribute names) ``code`` uses, outside its string literals."""
    return frozenset(_NAME.findall(_STRING_LITERAL.sub("''", code)))


def _reads_only(code: str, name: str) -> bool:
    """Whether ``code`` reads nothing but the local ``name`` (no candidate, no function)."""
    return all(n in _PURE_NAMES or n == name or re.fullmatch(r"_t\d+", n) for n in _names(code))


def _test(scope: PatternScope, sid: int, code: str, gates: Sequence[str] = ()) -> _Test:
    """The :class:`_Test` of state ``sid``'s condition ``code`` (``gates``: its conjuncts)."""
    own = (f"d{sid} = _r_d",) if re.search(rf"\bd{sid}\b", code) else ()
    bindings = []
    for s, line in zip(scope.states, scope.prologue, strict=True):
        name = f"c{s.state_id}" if s.is_count else f"d{s.state_id}"
        if s.state_id != sid and re.search(rf"\b{name}\b", code):
            bindings.append(line.replace("e.events[", "_r_v["))
    if _reads_only(code, f"d{sid}"):
        return _Test(sid, code, own, tuple(bindings), code, True)
    gates = [g for g in gates if _reads_only(g, f"d{sid}")]
    if gates and not own:
        own = (f"d{sid} = _r_d",)
    return _Test(sid, code, own, tuple(bindings), " and ".join(gates) if gates else None,
                 reads_state="e" in _names(code))


def _gen_scan(gen: CodeGen, test: _Test) -> Callable[[Any, Event], list[StateEvent] | None]:
    """``scan(candidates, ev)``: the passing partial matches (or None), in one loop."""
    return gen.function("_state_scan", "_r_cands, _r_ev",
                        ["_r_d = _r_ev.data", *test.loop("_r_cands"), "return _r_hits"])


@dataclass(frozen=True)
class _StateKey:
    """The equality index of one state's pending partial matches.

    ``of_state(se)`` is the key a pending partial match is filed under (the values of the
    earlier events its condition compares with for equality); ``arriving`` is the source of
    the arriving event's key over its data ``_r_d``; ``probe(index, ev)`` tests the partial
    matches filed under that key as ``scan`` would (``_UNHASHABLE`` for an unhashable key).
    """

    parts: tuple[tuple[int, int, int], ...]   # (own attribute, earlier state, its attribute)
    held: str       # the source of ``of_state`` over the events list ``_r_v``
    arriving: str
    of_state: Callable[[StateEvent], Any]
    probe: Callable[[dict[Any, list[StateEvent]], Event], Any]
    # For the generated receiver: when ``safe`` holds (no part of the arriving key is null or
    # NaN), the partial matches filed under the key are exactly those whose equalities hold,
    # so they only need ``found``, the condition without those equalities.  When it does not
    # hold, no partial match can pass (a null or NaN equals nothing).
    safe: str = "True"
    found: _Test | None = None


def _gen_key(gen: CodeGen, scope: PatternScope, parts: tuple[tuple[int, int, int], ...],
             test: _Test, found: _Test) -> _StateKey:
    """The key functions of a state's equality index (a tuple key for several equalities)."""
    held, arriving = [], []
    for own, j, i in parts:
        null = gen.ref(Event(-1, (None,) * len(scope.states[j].attributes)), "nul")
        held.append(f"(_r_v[{j}] or {null}).data[{i}]")
        arriving.append(f"_r_d[{own}]")
    if len(parts) == 1:
        held_key, ev_key = held[0], arriving[0]
    else:
        held_key, ev_key = f"({', '.join(held)})", f"({', '.join(arriving)})"
    of_state = gen.function("_state_key", "e", ["_r_v = e.events", f"return {held_key}"])
    probe = gen.function("_state_probe", "_r_index, _r_ev", [
        "_r_d = _r_ev.data",
        "try:",
        f"    _r_cands = _r_index.get({ev_key})",
        "except TypeError:",
        f"    return {gen.ref(_UNHASHABLE, 'unhashable')}",
        "if _r_cands is None:",
        "    return None",
        *test.loop("_r_cands"),
        "return _r_hits",
    ])
    own = scope.states[test.sid].attributes
    safe = []
    for i, _j, _i in parts:
        safe.append(f"_r_d[{i}] is not None")
        if own[i].type is not AttrType.STRING and own[i].type is not AttrType.BOOL:
            safe.append(f"_r_d[{i}] == _r_d[{i}]")   # NaN
    return _StateKey(parts, held_key, ev_key, of_state, probe, " and ".join(safe), found)


def _plain_states(el: Any, ids: dict[int, int], plain: bool = True, out: set[int] | None = None) -> set[int]:
    """Ids of the states run by a plain :class:`_StreamPre` (not counting, logical or absent).

    Only these can be indexed, and only their events can be part of a key: once a partial
    match has passed such a state, the state's event never changes again (a counting chain
    grows while the match waits further on, a logical side can be filled later).
    """
    if out is None:
        out = set()
    if isinstance(el, StreamStateElement):
        if plain:
            out.add(ids[id(el)])
    elif isinstance(el, NextStateElement):
        _plain_states(el.first, ids, plain, out)
        _plain_states(el.next, ids, plain, out)
    elif isinstance(el, (EveryStateElement, GroupStateElement)):
        _plain_states(el.element, ids, plain, out)
    elif isinstance(el, LogicalStateElement):
        _plain_states(el.left, ids, False, out)
        _plain_states(el.right, ids, False, out)
    elif isinstance(el, CountStateElement):
        _plain_states(el.element, ids, False, out)
    return out




@dataclass
class _Plan:
    element: Any
    sequence: bool
    states: list[_StateInfo]
    ids: dict[int, int]
    conds: dict[int, Callable[[StateEvent], bool] | None]
    within: int | None
    max_pending: int = 0
    tests: dict[int, _Test] = field(default_factory=dict)
    scans: dict[int, Callable[[Any, Event], list[StateEvent] | None]] = field(default_factory=dict)
    keys: dict[int, _StateKey] = field(default_factory=dict)
    gen: CodeGen | None = None
    # Generated receivers by stream key (made for the first instance, shared by the others).
    receivers: dict[tuple[str, bool, bool], Callable[..., Any] | None] = field(default_factory=dict)
    instances: list[PatternRuntime] = field(default_factory=list)
