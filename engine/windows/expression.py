"""``expression('cond')`` (sliding) and ``expressionBatch('cond'[, include.triggering.event][, stream.current.event])``.

The condition is SiddhiQL text over the window's events: plain attributes read the event being
added or removed, ``first.x``/``last.x`` the oldest and newest events, ``eventTimestamp(first)``
their timestamps, and aggregators (``sum(price)``, ``count()``) run over the window contents.
The text may come from an attribute; the window then recompiles when it changes and
re-evaluates what it holds, as Siddhi does.
"""
from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from srota.engine.codegen import CodeGen
from srota.engine.event import CURRENT, EXPIRED, Event
from srota.engine.expression import BASE_NAMESPACE, Compiled, ExpressionCompiler, error_at
from srota.engine.registry import Kind, Param, extension
from srota.engine.windows.base import WindowProcessor, WindowSpec
from srota.grammar.errors import SiddhiAppCreationError, did_you_mean
from srota.grammar.model import And, AttrType, Expression, FunctionCall, IsNullStream, Or, Variable


class _WindowExpressionScope:
    """Attributes of the current (``e``), ``first`` and ``last`` events of an expression window."""

    prologue: tuple[str, ...] = ()

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.names = set(getattr(inner, "names", ()))

    def resolve(self, var: Variable) -> tuple[str, AttrType]:
        target = "e"
        if var.stream_id in ("first", "last"):
            target = var.stream_id
        elif var.stream_id is not None and var.stream_id not in self.names:
            raise error_at(f"'{var.stream_id}.{var.attribute}': use first.<attr> or last.<attr>", var)
        i = self.inner.index(var.attribute)
        if i is None:
            raise error_at(f"stream '{self.inner.stream_id}' has no attribute '{var.attribute}'"
                           f"{did_you_mean(var.attribute, (a.name for a in self.inner.attributes))}", var)
        return f"{target}.data[{i}]", self.inner.attributes[i].type

    def resolve_stream(self, node: IsNullStream) -> str:
        if node.stream_id in ("first", "last"):
            return node.stream_id
        raise error_at(f"'{node.stream_id} is null' is not supported in a window expression", node)

    def timestamp(self, node: Expression | None) -> str:
        if node is None:
            return "e.timestamp"
        if isinstance(node, Variable) and node.stream_id is None and node.attribute in ("first", "last"):
            return f"{node.attribute}.timestamp"
        raise error_at("eventTimestamp() takes first or last here", node)


def _reset_answer(name: str, rtype: AttrType, old: Any) -> Any:
    """What Siddhi's ``reset`` of the aggregator ``name`` returns: the value a condition that
    reaches it during a reset compares (``count() < 2`` sees 0; ``sum`` gives 0 over int/long
    and null over float/double; the ``*Forever`` ones answer their old value)."""
    if name in ("count", "distinctCount"):
        return 0
    if name == "sum":
        return 0 if rtype is AttrType.LONG else None
    if name in ("and", "or"):
        return False
    if name in ("maxForever", "minForever"):
        return old.value()
    if name == "unionSet":
        return set()
    return None


def _regions(expr: Any, region: int | None, out: dict[int, int | None], count: list[int]) -> Any:
    """``expr`` rebuilt for :class:`CompiledCondition`, noting the region of each function call.

    Siddhi's executors evaluate every operand of arithmetic, comparisons and function calls
    (an aggregator updates even where another operand is null), but ``and``/``or`` evaluate
    their right operand only when the left one has not decided, and ``ifThenElse`` only its
    chosen branch.  A region is what one evaluation reaches at once: the whole condition (0),
    or the right operand of an ``and``/``or``, which gets a marker call ``__wregion<k>()``
    in front (``marker and right``) that updates that region's aggregators.  Calls in an
    ``ifThenElse`` branch have no region (None): they stay inline.  ``out`` maps the id of each
    (new) call node to its region.
    """
    if isinstance(expr, (And, Or)):
        left = _regions(expr.left, region, out, count)
        k = count[0] = count[0] + 1
        right = _regions(expr.right, k, out, count)
        marker = FunctionCall("", f"__wregion{k}", pos=expr.pos)
        return dataclasses.replace(expr, left=left, right=And(marker, right, pos=expr.pos))
    if not dataclasses.is_dataclass(expr) or isinstance(expr, type):
        return expr
    lazy = isinstance(expr, FunctionCall) and not expr.namespace and expr.name == "ifThenElse"
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(expr):
        if f.name == "pos":
            continue
        value = getattr(expr, f.name)
        if isinstance(value, tuple):
            new = tuple(_regions(v, None if lazy and i > 0 else region, out, count) for i, v in enumerate(value))
        else:
            new = _regions(value, region, out, count)
        if new is not value:
            changes[f.name] = new
    rebuilt = dataclasses.replace(expr, **changes) if changes else expr
    if isinstance(rebuilt, FunctionCall):
        out[id(rebuilt)] = region
    return rebuilt


class CompiledCondition:
    """A window condition: ``add(e, first, last)``, ``remove(...)`` and ``reset(...)`` of its
    aggregators, each evaluating the condition as Siddhi's executor tree does: every
    aggregator it reaches updates (both sides of ``max(price) - min(price)``, even where one
    is null), and ``and``/``or`` short-circuit, so an aggregator behind a decided operand is
    neither updated nor reset (see :func:`_regions`)."""

    def __init__(self, text: str, scope: Any, ctx: Any, node: Any) -> None:
        from srota.engine.selector import AggregatorSlots
        from srota.grammar.parser import parse_expression

        try:
            expr = parse_expression(text)
        except SiddhiAppCreationError as exc:
            raise error_at(f"invalid window expression '{text}': {exc}", node) from None
        except Exception as exc:  # the parser's own error types
            raise error_at(f"invalid window expression '{text}': {exc}", node) from None
        call_regions: dict[int, int | None] = {}
        counter = [0]
        expr = _regions(expr, 0, call_regions, counter)
        count_regions = counter[0]
        gen = CodeGen(BASE_NAMESPACE)
        slots = AggregatorSlots()
        kinds: list[tuple[str, AttrType]] = []  # per slot: the aggregator's name and type
        slot_region: list[int | None] = []

        def hook(call: Any, compiler: ExpressionCompiler) -> Any:
            if not call.namespace and call.name.startswith("__wregion"):
                return Compiled(f"__WREGION{call.name[9:]}__", AttrType.BOOL, nullable=False)
            c = slots.hook(call, compiler)
            if c is None:
                return None
            kinds.append((call.name, c.type))
            region = call_regions.get(id(call))
            slot_region.append(region)
            if region is None:
                return c
            return dataclasses.replace(c, code=f"_V[{len(slot_region) - 1}]")

        compiler = ExpressionCompiler(ctx, _WindowExpressionScope(scope), gen, aggregator_hook=hook)
        try:
            code = compiler.compile_condition(expr, "window expression")
        except SiddhiAppCreationError as exc:
            raise error_at(f"window expression '{text}': {exc.message}", node) from None
        self.text = text
        self.factories = slots.factories
        # Siddhi's RESET event: each aggregator it reaches drops its state for a new one
        # (StateHolder.cleanGroupByStates) and answers its reset value.
        factories = self.factories

        def reset_slot(states: list[Any], slot: int) -> Any:
            old = states[slot]
            states[slot] = factories[slot]()
            return _reset_answer(kinds[slot][0], kinds[slot][1], old)

        rs = gen.ref(reset_slot, "_wreset")

        def update(op: str, slot: int) -> str:
            return f"{rs}(A, {slot})" if op == "reset" else slots.calls[slot].replace("{op}", op)

        def function(op: str) -> Callable[..., Any]:
            body = code
            by_length = sorted(range(len(slots.calls)), key=lambda i: -len(slots.calls[i]))
            for slot in by_length:  # the inline calls (ifThenElse branches)
                if slot_region[slot] is None:
                    body = body.replace(slots.calls[slot], update(op, slot))
            body = body.replace("{op}", op)
            for k in range(count_regions, 0, -1):  # (longest names first: __WREGION12__ before 1)
                sets = [f"_V.__setitem__({i}, {update(op, i)})" for i, r in enumerate(slot_region) if r == k]
                body = body.replace(f"__WREGION{k}__", f"(({', '.join(sets)},) and True)" if sets else "True")
            lines = [f"_V = [None] * {len(slot_region)}"] if slot_region else []
            lines += [f"_V[{i}] = {update(op, i)}" for i, r in enumerate(slot_region) if r == 0]
            return gen.function(f"_wexpr_{op}", "e, first, last, A", [*lines, f"return {body}"])

        self._add = function("add")
        self._remove = function("remove")
        self._reset = function("reset")
        self.states = [f() for f in self.factories]

    def fresh(self) -> CompiledCondition:
        """A copy with its own aggregator states (one per window instance)."""
        other = object.__new__(CompiledCondition)
        other.__dict__.update(self.__dict__)
        other.states = [f() for f in self.factories]
        return other

    def add(self, e: Event, first: Event, last: Event) -> bool:
        return self._add(e, first, last, self.states) is True

    def remove(self, e: Event, first: Event, last: Event) -> bool:
        return self._remove(e, first, last, self.states) is True

    def reset(self, e: Event, first: Event, last: Event) -> None:
        """Siddhi's RESET pass over the condition (its answer is not used)."""
        self._reset(e, first, last, self.states)


class _ConditionSource:
    """The window's condition: a constant text, or text read from each event (recompiled on change)."""

    def __init__(self, spec: WindowSpec) -> None:
        arg = spec.args[0]
        self.scope = spec.scope
        self.ctx = spec.ctx
        self.node = arg.node
        self.getter = None if arg.constant else arg.getter
        self.compiled = None
        if arg.constant:
            if arg.type is AttrType.STRING:
                self.compiled = CompiledCondition(str(arg.value), spec.scope, spec.ctx, arg.node)
            else:
                raise spec.error("the expression should be a string", arg.node)
        elif arg.type is not AttrType.STRING:
            raise spec.error("the expression should be a string (a constant or a string attribute)", arg.node)
        self._cache: dict[str, CompiledCondition] = {}

    def initial(self) -> CompiledCondition | None:
        return self.compiled.fresh() if self.compiled is not None else None

    def for_text(self, text: str) -> CompiledCondition:
        c = self._cache.get(text)
        if c is None:
            c = CompiledCondition(text, self.scope, self.ctx, self.node)
            self._cache[text] = c
        return c.fresh()


class ExpressionWindow(WindowProcessor):
    """Sliding window that keeps the newest events for which the condition holds."""

    def __init__(self, spec: WindowSpec, source: _ConditionSource) -> None:
        super().__init__(spec)
        self.source = source
        self.cond = source.initial()
        self.text: str | None = None
        self.queue: deque[Event] = deque()

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        now = self.clock.now()
        for e in chunk:
            if e.type != CURRENT:
                continue
            if self.source.getter is not None:
                text = self.source.getter(e)
                if text != self.text:
                    cond = self.source.for_text(text)  # first: see ExpressionBatchWindow.process
                    self.text, self.cond = text, cond
                    held = list(self.queue)
                    self.queue.clear()
                    for old in held:
                        self._add(old, now, out)
            self._add(e, now, out)
            out.append(e)
        if out:
            self.next(out)

    def _add(self, e: Event, now: int, out: list[Event]) -> None:
        cond = self.cond
        assert cond is not None
        q = self.queue
        q.append(e)
        if cond.add(e, q[0], e):
            return
        while q:
            old = q.popleft()
            out.append(Event(now, old.data, EXPIRED))
            first = q[0] if q else old
            if cond.remove(old, first, e):
                break

    def contents(self) -> Iterable[Event]:
        return self.queue

    def snapshot_state(self) -> Any:
        # The aggregators' states go as they are: adding the held events again from nothing
        # does not always give them back (a prefix of the queue may fail the condition where
        # the whole passed, and its events would leave), and removals are not exact in floats.
        return {"queue": list(self.queue), "text": self.text,
                "states": self.cond.states if self.cond is not None else None}

    def restore_state(self, state: Any) -> None:
        self.text = state["text"]
        self.cond = self.source.for_text(self.text) if self.text is not None else self.source.initial()
        states = state.get("states")
        if states is not None and self.cond is not None:
            self.queue = deque(state["queue"])
            self.cond.states = states
            return
        self.queue = deque()  # (a snapshot of before 2026-11-29: the states made again)
        out: list[Event] = []
        for e in state["queue"]:
            self._add(e, self.clock.now(), out)


@extension(Kind.WINDOW, "expression",
           params=(Param("expression", (AttrType.STRING,), dynamic=True,
                         doc="Condition the retained events must satisfy."),),
           doc="A sliding window that retains the latest events while the expression holds.")
def _expression(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    source = _ConditionSource(spec)
    return lambda: ExpressionWindow(spec, source)


class ExpressionBatchWindow(WindowProcessor):
    """Batch window that collects events while the condition holds and flushes when it fails."""

    def __init__(self, spec: WindowSpec, source: _ConditionSource, include: bool,
                 include_getter: Callable[[Event], Any] | None, stream_current: bool) -> None:
        super().__init__(spec)
        self.source = source
        self.cond = source.initial()
        self.text: str | None = None
        self.include = include
        self.include_getter = include_getter
        self.stream_current = stream_current
        self.current: list[Event] = []
        self.expired_q: list[Event] = []
        # How many of `current` a find (which scans it) has walked past since it was last
        # cleared: Siddhi's flush walks currentEventQueue on from that cursor without a
        # reset(), so those events leave with their own timestamps and never expire.
        self.found = 0

    def _includes(self, e: Event) -> bool:
        if self.include_getter is not None:
            return self.include_getter(e) is True
        return self.include

    def process(self, chunk: list[Event]) -> None:
        outs: list[list[Event]] = []
        now = self.clock.now()
        for e in chunk:
            if e.type != CURRENT:
                continue
            if self.source.getter is not None:
                text = self.source.getter(e)
                if text != self.text:
                    # Compiled first: an expression that does not compile faults this event with
                    # its error, and the next event with the same text tries again (noting the
                    # text first left no condition, and later events failed an assertion).
                    cond = self.source.for_text(text)
                    self.text, self.cond = text, cond
                    self._reevaluate(now, outs)
            if self.stream_current:
                self._as_stream(e, now, outs, True)
            else:
                self._batch(e, now, outs)
        for o in outs:
            self.next(o)

    def _reevaluate(self, now: int, outs: list[list[Event]]) -> None:
        if not self.stream_current:
            held, self.current = self.current, []
            self.found = 0
            for e in held:
                self._batch(e, now, outs)
        else:
            held, self.expired_q = self.expired_q, []
            for e in held:
                self._as_stream(e, now, outs, False)

    def _batch(self, e: Event, now: int, outs: list[list[Event]]) -> None:
        cond = self.cond
        assert cond is not None
        first = self.current[0] if self.current else e
        if cond.add(e, first, e):
            self.current.append(e)
            return
        cond.reset(e, first, e)
        cond.add(e, first, e)
        out: list[Event] = []
        if self.expired_q:
            out.extend(Event(now, x.data, EXPIRED) for x in self.expired_q)
            self.expired_q = []
        if self.current:
            found = self.found
            if found:
                # (see `found`) the events a find walked past go on as they are, unexpired
                out.extend(self.current[:found])
                batch = [Event(now, x.data, CURRENT) for x in self.current[found:]]
            else:
                batch = [Event(now, x.data, CURRENT) for x in self.current]
            self.expired_q = list(batch)
            out.extend(batch)
            self.current = []
            self.found = 0
            if self._includes(e):
                out.append(e)
                self.expired_q.append(Event(now, e.data, CURRENT))
            else:
                self.current.append(e)
        else:
            out.append(Event(now, e.data, EXPIRED))
            out.append(Event(now, e.data, CURRENT))
        outs.append(out)

    def _as_stream(self, e: Event, now: int, outs: list[list[Event]], output: bool) -> None:
        cond = self.cond
        assert cond is not None
        first = self.expired_q[0] if self.expired_q else e
        out: list[Event] = []
        if output and self.current:
            out.extend(self.current)
            self.current = []
        if cond.add(e, first, e):
            self.expired_q.append(Event(e.timestamp, e.data, EXPIRED))
            if output:
                out.append(e)
                outs.append(out)
            return
        cond.reset(e, first, e)
        cond.add(e, first, e)
        if self.expired_q:
            held = [Event(now, x.data, EXPIRED) for x in self.expired_q]
            if self._includes(e):
                out.append(e)
                if output:
                    out.extend(held)
                    out.append(Event(now, e.data, EXPIRED))
                else:
                    self.current.extend(held)
                    self.current.append(Event(e.timestamp, e.data, EXPIRED))
                self.expired_q = []
            else:
                if output:
                    out.extend(held)
                else:
                    self.current.extend(held)
                out.append(e)
                self.expired_q = [Event(e.timestamp, e.data, EXPIRED)]
        elif output:
            out.append(Event(now, e.data, EXPIRED))
            out.append(Event(now, e.data, CURRENT))
        else:
            self.current.append(e)
        if output:
            outs.append(out)

    def contents(self) -> Iterable[Event]:
        if not self.stream_current:
            self.found = len(self.current)  # a find walks the whole queue (see `found`)
        return self.current

    def snapshot_state(self) -> Any:
        # (the aggregators' states as they are: see ExpressionWindow.snapshot_state; after a
        # flush they hold the event that broke the condition, which no queue holds)
        return {"current": list(self.current), "expired": list(self.expired_q), "text": self.text,
                "states": self.cond.states if self.cond is not None else None, "found": self.found}

    def restore_state(self, state: Any) -> None:
        self.text = state["text"]
        self.cond = self.source.for_text(self.text) if self.text is not None else self.source.initial()
        self.current = list(state["current"])
        self.expired_q = list(state["expired"])
        self.found = state.get("found", 0)
        assert self.cond is not None
        states = state.get("states")
        if states is not None:
            self.cond.states = states
            return
        # (a snapshot of before 2026-11-29: the states made again from the held events)
        held = self.current if not self.stream_current else self.expired_q
        if held:
            for e in held:
                self.cond.add(e, held[0], e)


@extension(Kind.WINDOW, "expressionBatch",
           params=(Param("expression", (AttrType.STRING,), dynamic=True,
                         doc="Condition the batch must satisfy; the batch is emitted when it fails."),
                   Param("include.triggering.event", (AttrType.BOOL,), optional=True, default=False, dynamic=True,
                         doc="Put the event that broke the condition into the emitted batch."),
                   Param("stream.current.event", (AttrType.BOOL,), optional=True, default=False,
                         doc="Emit events as they arrive and expire them in batches.")),
           doc="A batch window that grows while the expression holds and is emitted when it fails.")
def _expression_batch(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    source = _ConditionSource(spec)
    inc_arg = spec.named.get("include.triggering.event")
    include = bool(inc_arg.value) if inc_arg is not None and inc_arg.constant else False
    include_getter = inc_arg.getter if inc_arg is not None and not inc_arg.constant else None
    stream_current = bool(spec.arg("stream.current.event", False))
    return lambda: ExpressionBatchWindow(spec, source, include, include_getter, stream_current)
