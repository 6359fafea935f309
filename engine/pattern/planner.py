"""The pattern planner (Siddhi's ``StateInputStreamParser``): a ``StateInputStream`` to a plan.

Every stream state gets a *pre* state processor (holding the partial matches that wait for
that state) and a *post* state processor (which forwards a match to the next state, re-arms
``every`` and marks the match as complete).  State ids are assigned in Siddhi's order (the
right side of a logical state first), which the processors rely on.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from srota.engine.codegen import CodeGen
from srota.engine.event import StateEvent
from srota.engine.expression import ExpressionCompiler, error_at
from srota.engine.pattern.every_scope import siddhi_every_scope
from srota.engine.pattern.fastpaths import (
    _HASHABLE_TYPES,
    _Bound,
    _gen_bound,
    _gen_key,
    _gen_scan,
    _plain_states,
    _Plan,
    _Reads,
    _reads,
    _StateKey,
    _Test,
    _test,
)
from srota.engine.pattern.runtime import PatternRuntime, _sides
from srota.engine.pattern.scope import _CURRENT, Emit, PatternScope, _StateInfo
from srota.grammar.model import (
    AbsentStreamStateElement,
    And,
    AttrType,
    Compare,
    CompareOperator,
    Constant,
    CountStateElement,
    EveryStateElement,
    Expression,
    Filter,
    GroupStateElement,
    LogicalStateElement,
    MathOp,
    NextStateElement,
    Not,
    Or,
    Query,
    StateInputStream,
    StateType,
    StreamStateElement,
    TimeConstant,
    Variable,
    find_annotation,
)


def _conjuncts(expr: Expression) -> list[Expression]:
    if isinstance(expr, And):
        return _conjuncts(expr.left) + _conjuncts(expr.right)
    return [expr]


def _all_of(conjuncts: list[Expression]) -> Expression | None:
    """The conjunction of ``conjuncts`` (None when there are none: always true)."""
    if not conjuncts:
        return None
    expr = conjuncts[0]
    for c in conjuncts[1:]:
        expr = And(expr, c)
    return expr


def _equality_parts(expr: Expression, scope: PatternScope, sid: int,
                    plain: set[int]) -> tuple[tuple[tuple[int, int, int], ...], list[int]]:
    """The conjuncts ``own.attr == ref.attr`` (either order) of state ``sid``'s condition.

    ``own`` is the arriving event of this state, ``ref`` an earlier plain state (lower id): a
    partial match waiting here already holds that event, so it can be filed under its value.
    Any other conjunct (or an ``or`` above the equality) is left to the condition.  Returns
    the parts (a key of several for several equalities) and the positions of the conjuncts
    they cover.
    """
    parts: list[tuple[int, int, int]] = []
    covered: list[int] = []
    for n, c in enumerate(_conjuncts(expr)):
        if not (isinstance(c, Compare) and c.op is CompareOperator.EQ
                and isinstance(c.left, Variable) and isinstance(c.right, Variable)):
            continue
        a, b = _locate(c.left, scope), _locate(c.right, scope)
        if a is None or b is None:
            continue
        if b[0] == sid:
            a, b = b, a
        if a[0] == sid and b[0] < sid and b[0] in plain \
                and a[2] in _HASHABLE_TYPES and b[2] in _HASHABLE_TYPES:
            part = (a[1], b[0], b[1])
            if part not in parts:
                parts.append(part)
            covered.append(n)
    return tuple(parts), covered


_FLIPPED = {CompareOperator.LT: CompareOperator.GT, CompareOperator.LE: CompareOperator.GE,
            CompareOperator.GT: CompareOperator.LT, CompareOperator.GE: CompareOperator.LE}


def _bound_part(conjuncts: list[Expression], scope: PatternScope, sid: int, plain: set[int],
                compiler: ExpressionCompiler, gen: CodeGen) -> _Bound | None:
    """The :class:`_Bound` of the first conjunct ``own < held`` (or ``<= > >=``, either order)
    of the condition left beside an equality index, or None.

    Only where every conjunct is operators over attributes and constants: skipping the
    candidates then skips nothing that could raise or have an effect.
    """
    if not all(_operators_only(c) for c in conjuncts):
        return None
    for c in conjuncts:
        if not (isinstance(c, Compare) and c.op in _FLIPPED):
            continue
        left, right = _reads(c.left, scope), _reads(c.right, scope)
        if _arriving_only(left, sid) and _held_only(right, sid, plain):
            own, held, op = c.left, c.right, c.op
        elif _arriving_only(right, sid) and _held_only(left, sid, plain):
            own, held, op = c.right, c.left, _FLIPPED[c.op]
        else:
            continue
        own_c, held_c = compiler.compile(own), compiler.compile(held)
        if own_c.type not in _FLOATING or held_c.type not in _FLOATING:
            continue
        less = op in (CompareOperator.LT, CompareOperator.LE)
        strict = op in (CompareOperator.LT, CompareOperator.GT)
        return _gen_bound(gen, scope, sid, held_c.code, own_c.code, 1 if less else -1, strict)
    return None


_FLOATING = (AttrType.DOUBLE, AttrType.FLOAT)


def _operators_only(expr: Expression) -> bool:
    """Whether ``expr`` is comparisons, arithmetic and logic over attributes and constants."""
    if isinstance(expr, (Constant, TimeConstant, Variable)):
        return True
    if isinstance(expr, (MathOp, Compare, And, Or)):
        return _operators_only(expr.left) and _operators_only(expr.right)
    if isinstance(expr, Not):
        return _operators_only(expr.expression)
    return False


def _arriving_only(reads: _Reads, sid: int) -> bool:
    return reads.states == {sid} and not reads.candidate and not reads.impure


def _held_only(reads: _Reads, sid: int, plain: set[int]) -> bool:
    """Whether it reads only events a partial match waiting at ``sid`` holds for good."""
    return bool(reads.states) and not reads.candidate and not reads.impure \
        and all(j < sid and j in plain for j in reads.states)


def _locate(var: Variable, scope: PatternScope) -> tuple[int, int, AttrType] | None:
    """``(state id, attribute index, type)`` of a variable that reads a plain state's event."""
    s, pos = scope.locate(var)
    if s.is_count or pos not in (0, _CURRENT):
        return None   # a chain, or e1[1].x of a plain state (null)
    for i, a in enumerate(s.attributes):
        if a.name == var.attribute:
            return s.state_id, i, a.type
    return None


def _collect_states(el: Any, out: list[Any], counted: bool = False) -> None:
    """Stream states in Siddhi's numbering order (the right side of a logical state first)."""
    if isinstance(el, (StreamStateElement, AbsentStreamStateElement)):
        out.append((el, counted))
    elif isinstance(el, NextStateElement):
        _collect_states(el.first, out)
        _collect_states(el.next, out)
    elif isinstance(el, (EveryStateElement, GroupStateElement)):
        _collect_states(el.element, out, counted)
    elif isinstance(el, LogicalStateElement):
        left, right = _sides(el)
        _collect_states(right, out)
        _collect_states(left, out)
    elif isinstance(el, CountStateElement):
        _collect_states(el.element, out, True)
    else:
        raise error_at(f"unsupported pattern element {type(el).__name__}", el)


def _max_pending(inp: StateInputStream, ctx: Any) -> int:
    """The bound on pending partial matches per state (0: unbounded)."""
    limit = getattr(ctx, "pattern_max_pending", 0) or 0
    app = getattr(ctx, "app", None)
    if app is not None:
        a = find_annotation(app.annotations, "app:pattern")
        if a is not None and (setting := a.get("max.pending")):
            limit = _int_setting(setting, a)
        for q in getattr(app, "execution_elements", ()):
            for query in (q,) if isinstance(q, Query) else getattr(q, "queries", ()):
                if query.input is inp:
                    qa = find_annotation(query.annotations, "pattern")
                    if qa is not None and (setting := qa.get("max.pending")):
                        limit = _int_setting(setting, qa)
    return limit


def _int_setting(value: str, node: Any) -> int:
    try:
        n = int(value)
    except ValueError:
        raise error_at(f"max.pending must be an integer, not '{value}'", node) from None
    if n < 0:
        raise error_at("max.pending cannot be negative", node)
    return n


def plan_state_input(inp: StateInputStream, ctx: Any, sources: Any, gen: CodeGen,
                     element_prefix: str) -> Any:
    """Plan a pattern or sequence input; ``connect(emit)`` builds one state machine instance."""
    from srota.engine.planning import EmitChunks, InputPlan

    sequence = inp.type is StateType.SEQUENCE
    # A sequence's leading 'every' reaches as far as Siddhi's grammar has it (see every_scope).
    element = siddhi_every_scope(inp.element) if sequence else inp.element
    found: list[Any] = []
    _collect_states(element, found)
    states: list[_StateInfo] = []
    ids: dict[int, int] = {}
    for n, (node, counted) in enumerate(found):
        stream = node.stream
        kind, obj = sources.lookup(stream.stream_id, stream.is_inner, stream.is_fault, stream)
        if kind != "stream":
            raise error_at(f"'{stream.stream_id}' is a {kind}: patterns and sequences read streams only",
                           stream)
        for h in stream.handlers:
            if not isinstance(h, Filter):
                raise error_at("only filters can be used on a stream inside a pattern or sequence", h)
        absent = isinstance(node, AbsentStreamStateElement)
        states.append(_StateInfo(n, None if absent else stream.reference_id, stream.stream_id,
                                 tuple(obj.attributes), counted, node, stream.is_inner,
                                 stream.is_fault, absent))
        ids[id(node)] = n
    plain = _plain_states(element, ids)
    conds: dict[int, Callable[[StateEvent], bool] | None] = {}
    tests: dict[int, _Test] = {}
    keys: dict[int, _StateKey] = {}
    for s in states:
        sid = s.state_id
        scope = PatternScope(states, gen, current=sid, default_index=_CURRENT)
        filters = [h.expression for h in s.node.stream.handlers]
        if not filters:
            conds[sid] = None
            tests[sid] = _test(scope, sid, None, "True")
            continue
        expr = filters[0]
        for f in filters[1:]:
            expr = And(expr, f, pos=getattr(f, "pos", None))
        compiler = ExpressionCompiler(ctx, scope, gen)
        code = compiler.compile_condition(expr, "pattern condition")
        conds[sid] = gen.function("_state_cond", "e", list(scope.prologue) + [f"return {code}"])
        if s.is_count:
            continue   # counting states keep their own loop (chains, min and max)
        conjuncts = _conjuncts(expr)
        gates = ([(c, compiler.compile_condition(c, "pattern condition")) for c in conjuncts]
                 if len(conjuncts) > 1 else [(expr, code)])
        tests[sid] = test = _test(scope, sid, expr, code, gates if len(gates) > 1 else [])
        # Sequences drop every partial match an event does not extend, so an index would not
        # spare them the scan: only patterns index.
        if not sequence and sid in plain:
            parts, covered = _equality_parts(expr, scope, sid, plain)
            if parts:
                rest = [g for n, g in enumerate(gates) if n not in covered]
                residue = _test(scope, sid, _all_of([g for g, _ in rest]),
                                " and ".join(f"({c})" for _, c in rest) or "True", rest)
                bound = _bound_part([g for g, _ in rest], scope, sid, plain, compiler, gen)
                keys[sid] = _gen_key(gen, scope, parts, test, residue, bound)
    plan = _Plan(element, sequence, states, ids, conds, inp.within_millis,
                 _max_pending(inp, ctx), tests, {sid: _gen_scan(gen, t) for sid, t in tests.items()},
                 keys, gen, partitioned=bool(sources.prefix))
    scope = PatternScope(states, gen, current=None, default_index=0)
    elements: dict[str, Any] = {}

    def connect(emit: Emit, emit_chunks: Callable[[list[list[Any]]], None] | None = None) -> None:
        rt = PatternRuntime(plan, ctx, emit, emit_chunks)
        plan.instances.append(rt)
        eid = f"{element_prefix}/pattern"
        elements[eid] = rt
        ctx.register_element(eid, rt)
        for key in rt.receivers:
            sources.subscribe(key[0], key[1], key[2], rt.receiver(key))
        if rt.startup:
            # A leading absent state starts waiting when the app (or partition key) starts;
            # a partition runs the hooks its instances add once it has started.
            ctx.start_hooks.append(rt.start)

    def merge_outputs(mergeable: Callable[[], bool]) -> None:
        plan.merge = mergeable

    def connect_chunks(emit_chunks: EmitChunks) -> None:
        # The selector's process_chunks: its own process() selects one chunk (a match).
        selector = getattr(emit_chunks, "__self__", None)
        process = getattr(selector, "process", None)
        if process is None:
            def process(chunk: list[Any]) -> None:
                emit_chunks([chunk], None)

        def chunks(groups: list[list[Any]]) -> None:
            emit_chunks(groups, None)

        connect(process, chunks)

    return InputPlan(scope, connect, scope.columns, elements, merge_outputs=merge_outputs,
                     connect_chunks=connect_chunks)
