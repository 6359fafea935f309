"""The generated fast paths of pattern states, planned on the expression model.

A plain state whose condition compares an attribute of its event for equality with one of an
earlier event (``symbol == e1.symbol``) files its pending partial matches in a dict by that
value (:class:`_StateKey`), so an event is tested against its own key's partial matches only;
the candidates are tested in one generated loop (:class:`_Test`).  What a condition reads
(which states, the candidate itself, impure functions) is found by walking its expression
model (:func:`_reads`) before any code is generated, never by reading generated text.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from srota.engine.codegen import CodeGen
from srota.engine.event import Event, StateEvent
from srota.engine.pattern.scope import _CURRENT, PatternScope, _StateInfo
from srota.engine.registry import Kind, registry
from srota.grammar.model import (
    And,
    AttrType,
    Compare,
    Constant,
    CountStateElement,
    EveryStateElement,
    Expression,
    FunctionCall,
    GroupStateElement,
    In,
    IsNull,
    IsNullStream,
    LogicalStateElement,
    MathOp,
    NextStateElement,
    Not,
    Or,
    StreamStateElement,
    TimeConstant,
    Variable,
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


@dataclass(frozen=True)
class _Reads:
    """What a condition reads, found on its expression model before any code is generated.

    ``states``: the states whose events it reads through their bindings (``d{sid}`` for a plain
    state, ``c{sid}`` for a counting one); ``candidate``: it reads the candidate partial match
    itself (``e.events[i]`` for ``e2 is null``, ``e.timestamp`` for ``eventTimestamp()``);
    ``impure``: it calls something that is not a function of its arguments alone (a table
    lookup with ``in``, or a function not declared ``pure``), so it must run per candidate.
    """

    states: frozenset[int] = frozenset()
    candidate: bool = False
    impure: bool = False

    def __or__(self, other: _Reads) -> _Reads:
        return _Reads(self.states | other.states, self.candidate or other.candidate,
                      self.impure or other.impure)

    def only(self, sid: int) -> bool:
        """Whether the condition is a pure function of state ``sid``'s arriving event alone."""
        return not self.candidate and not self.impure and self.states <= {sid}


_NOTHING = _Reads()


def _reads(expr: Expression, scope: PatternScope) -> _Reads:
    """:class:`_Reads` of ``expr`` as compiled in ``scope`` (mirrors :meth:`PatternScope.resolve`)."""
    if isinstance(expr, (Constant, TimeConstant)):
        return _NOTHING
    if isinstance(expr, Variable):
        s, pos = scope.locate(expr)
        if s.is_count:
            return _Reads(frozenset({s.state_id}))
        # A plain state is a chain of one event: any other position reads as null.
        return _Reads(frozenset({s.state_id})) if pos in (0, _CURRENT) else _NOTHING
    if isinstance(expr, IsNullStream):
        s, _ = scope.locate_stream(expr)
        return _Reads(frozenset({s.state_id})) if s.is_count else _Reads(candidate=True)
    if isinstance(expr, (MathOp, Compare, And, Or)):
        return _reads(expr.left, scope) | _reads(expr.right, scope)
    if isinstance(expr, (Not, IsNull)):
        return _reads(expr.expression, scope)
    if isinstance(expr, In):
        return _reads(expr.expression, scope) | _Reads(impure=True)
    if isinstance(expr, FunctionCall):
        if not expr.namespace and expr.name == "eventTimestamp":
            if not expr.args:
                return _Reads(candidate=True)
            s, _ = scope.locate_event(expr.args[0])
            return _Reads(frozenset({s.state_id})) if s.is_count else _Reads(candidate=True)
        ext = registry.get(Kind.FUNCTION, expr.namespace, expr.name)
        pure = ext is not None and bool(ext.meta.get("pure"))
        found = _Reads(impure=not pure)
        for arg in expr.args:
            found = found | _reads(arg, scope)
        return found
    return _Reads(impure=True)   # pragma: no cover - a node kind this analysis does not know


def _test(scope: PatternScope, sid: int, cond: Expression | None, code: str,
          gates: Sequence[tuple[Expression, str]] = ()) -> _Test:
    """The :class:`_Test` of state ``sid``'s condition (``cond`` compiled to ``code``).

    ``gates`` are its conjuncts with their code: those that read the arriving event alone
    are tested once per event, before any candidate.
    """
    reads = _reads(cond, scope) if cond is not None else _NOTHING
    own = (f"d{sid} = _r_d",) if sid in reads.states else ()
    bindings = tuple(scope.binding(s, "_r_v") for s in scope.states
                     if s.state_id != sid and s.state_id in reads.states)
    if reads.only(sid):
        return _Test(sid, code, own, bindings, code, True)
    passing = [c for g, c in gates if _reads(g, scope).only(sid)]
    if passing and not own:
        own = (f"d{sid} = _r_d",)
    return _Test(sid, code, own, bindings, " and ".join(passing) if passing else None,
                 reads_state=reads.candidate)


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
    bound: _Bound | None = None


@dataclass(frozen=True)
class _Bound:
    """A test that no partial match filed under a key can pass, without scanning them.

    For a conjunct ``own < held`` of the condition (``own`` over the arriving event alone,
    ``held`` over the earlier events a waiting partial match holds, both doubles or floats;
    ``<=`` alike, and ``>``, ``>=`` with both sides negated), each bucket of the index keeps
    the greatest ``held`` of the partial matches filed in it since it was made: an arriving
    value at or above it passes none of them.  ``of_state(se)`` is a partial match's ``held``
    (None for a null, a NaN or a value of another kind, after which the bucket has no bound
    until it is made again); ``value`` is the source of the arriving ``own`` over ``d{sid}``
    (both negated for ``>`` and ``>=``), ``strict`` whether the comparison is strict.
    """

    value: str
    strict: bool
    of_state: Callable[[StateEvent], Any]

    def skip(self, bounds: str) -> str:
        """Source that is true where the bucket ``_r_key`` of ``bounds`` holds no partial match
        the arriving event (``d{sid}``, bound before) can pass: its bound is known and the
        value not under it."""
        op = "<" if self.strict else "<="
        return (f"(_r_bd := {bounds}.get(_r_key)) is not None "
                f"and (_r_bo := {self.value}) is not None and not (_r_bo {op} _r_bd)")


def _gen_bound(gen: CodeGen, scope: PatternScope, sid: int, held_code: str, own_code: str,
               sign: int, strict: bool) -> _Bound:
    """The :class:`_Bound` of a conjunct whose sides were compiled to ``own_code`` (over
    ``d{sid}``) and ``held_code`` (over the bindings of the earlier states it reads)."""
    bindings = [scope.binding(st, "_r_v") for st in scope.states if st.state_id != sid]
    neg = "-" if sign < 0 else ""
    of_state = gen.function("_state_bound", "e", [
        "_r_v = e.events",
        *bindings,
        f"_r_t = {held_code}",
        # (a bool is an int: not a number here; NaN compares false with anything)
        "if (_r_t.__class__ is float or _r_t.__class__ is int) and _r_t == _r_t:",
        f"    return {neg}_r_t",
        "return None",
    ])
    value = f"(None if (_r_bv := {own_code}) is None else {neg}_r_bv)" if neg else f"({own_code})"
    return _Bound(value, strict, of_state)


def _gen_key(gen: CodeGen, scope: PatternScope, parts: tuple[tuple[int, int, int], ...],
             test: _Test, found: _Test, bound: _Bound | None = None) -> _StateKey:
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
    own_attrs = scope.states[test.sid].attributes
    safe = []
    for i, _j, _i in parts:
        safe.append(f"_r_d[{i}] is not None")
        if own_attrs[i].type is not AttrType.STRING and own_attrs[i].type is not AttrType.BOOL:
            safe.append(f"_r_d[{i}] == _r_d[{i}]")   # NaN
    return _StateKey(parts, held_key, ev_key, of_state, probe, " and ".join(safe), found, bound)


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
    #: Whether a chunk's matches may go on as one chunk (set by the query planner where no
    #: output depends on it: see engine.query); None: each on its own, as Siddhi sends them.
    merge: Callable[[], bool] | None = None
    #: Inside a partition: each key's state machine (Siddhi keeps its states per key, and drops
    #: a key's state of a processor whenever it holds nothing: see _AbsentStreamPre._idle)
    partitioned: bool = False
