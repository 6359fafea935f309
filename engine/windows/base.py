"""The window processor base class, window specs and parameter validation.

Every window kind registers a ``Kind.WINDOW`` extension whose factory takes a
:class:`WindowSpec` (the validated, compiled arguments plus what the query needs) and returns
a zero-argument callable that creates one processor per query instance.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence, Sized
from dataclasses import dataclass, field, replace
from typing import Any

from srota.engine.codegen import CodeGen
from srota.engine.event import EXPIRED, Event
from srota.engine.expression import ArgInfo, ExpressionCompiler, error_at
from srota.engine.registry import Extension, Param
from srota.grammar.model import AttrType, Constant, Expression, TimeConstant, Variable, WindowHandler

Emit = Callable[[list[Event]], None]


def _drop(chunk: list[Event]) -> None:
    return None


@dataclass
class WindowArg:
    """One validated window argument.

    ``value`` is set for constants; ``getter(e)`` reads a dynamic argument from an event;
    ``index`` is the data index when the argument is a plain attribute of the input stream.
    """

    info: ArgInfo
    param: Param | None
    getter: Callable[[Event], Any] | None = None
    index: int | None = None

    @property
    def node(self) -> Expression:
        return self.info.node

    @property
    def type(self) -> AttrType:
        return self.info.type

    @property
    def constant(self) -> bool:
        return self.info.constant

    @property
    def value(self) -> Any:
        return self.info.value


@dataclass
class WindowSpec:
    """What a window factory gets: the call, its arguments, and the query's needs.

    ``expired``: the query's output needs expired events (``insert expired|all events``);
    batch windows then emit the previous batch as expired events before a reset.
    ``findable``: a join, named window or on-demand query will scan :meth:`contents`.
    """

    handler: WindowHandler
    args: list[WindowArg]
    named: dict[str, WindowArg]
    scope: Any
    ctx: Any
    gen: CodeGen
    expired: bool = True
    findable: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    #: The rank of the window's timers (see :class:`engine.clock.Scheduler`): Siddhi gives
    #: each window its own Scheduler when the query is parsed, and under playback the
    #: schedulers fire one after another in that order.
    timer_rank: int | None = None

    def error(self, message: str, node: Any = None) -> Exception:
        """A creation error at ``node`` (default: the window call)."""
        return error_at(f"{self.handler.name} window: {message}", node if node is not None else self.handler)

    def arg(self, name: str, default: Any = None) -> Any:
        """The constant value of the named parameter (or ``default`` when it was not given)."""
        a = self.named.get(name)
        return default if a is None else a.value


class WindowProcessor:
    """Base of every window processor (one per query instance).

    ``process(chunk)`` takes a chunk of current events and calls ``next`` with what the
    window emits (expired events before the current one in sliding windows; expired, reset
    and current events for batch windows).  Timers call :meth:`on_timer`.
    """

    def __init__(self, spec: WindowSpec) -> None:
        self.ctx = spec.ctx
        self.clock = spec.ctx.clock
        self.scheduler = spec.ctx.scheduler
        #: Read by the scheduler for this window's timers (its Siddhi Scheduler's turn).
        self.timer_rank = spec.timer_rank
        self.expired = spec.expired
        self.findable = spec.findable
        self.next: Emit = _drop
        self._timer_at: int | None = None
        self.max_events: int = spec.ctx.limits.max_window_events if hasattr(spec.ctx, "limits") else 0

    # ------------------------------------------------------------------ interface
    def process(self, chunk: list[Event]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def contents(self) -> Iterable[Event]:
        """The events the window currently holds (what a join probes)."""
        return ()

    def held_count(self) -> int:
        """How many events :meth:`contents` answers, read without being a find (statistics).

        A batch window that a find scanned keeps those events' own timestamps when they expire
        (its ``found`` cursor, see :func:`expire_held`), so a mere count puts the cursor back.
        """
        found = getattr(self, "found", None)
        held = self.contents()
        n = len(held) if isinstance(held, Sized) else sum(1 for _ in held)
        if found is not None:
            self.found = found
        return n

    def enable_find(self) -> None:
        """Somebody (a join) will scan :meth:`contents`: keep what Siddhi's ``find`` scans.

        Siddhi builds such a window with ``findToBeExecuted``; a window planned as a plain
        input learns it here, before its first event.
        """
        self.findable = True

    def snapshot_state(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def restore_state(self, state: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def shed(self, held: Any, out: list[Event] | None, now: int) -> None:
        """Enforce the app's ``max_window_events`` on ``held`` (a deque or list, oldest first).

        The oldest events over the limit leave the window: as EXPIRED events appended to
        ``out`` (sliding windows), or dropped when ``out`` is None (a batch being collected).
        """
        over = len(held) - self.max_events
        if over <= 0:
            return
        if isinstance(held, list):
            gone, held[:over] = held[:over], []
        else:
            gone = [held.popleft() for _ in range(over)]
        if out is not None:
            out.extend(Event(now, e.data, EXPIRED) for e in gone)
        self.ctx.limit_breach(f"{type(self).__name__}", f"the window limit of {self.max_events} events", over)

    def stop(self) -> None:
        """Forget pending timers (the scheduler drops them when the app stops)."""
        self._timer_at = None

    @property
    def emits_expired(self) -> bool:
        """Whether ``next`` may get expired events (a selector then counts group sizes)."""
        return True

    # ------------------------------------------------------------------ timers
    def on_timer(self, at: int) -> None:
        """Called when a scheduled time is reached (Siddhi's TIMER event)."""

    def wake_at(self, at: int) -> None:
        """Ask for :meth:`on_timer` at ``at``.

        One timer is kept per window: an earlier request replaces the pending time (the later
        one fires harmlessly), so a busy time window does not fill the scheduler with one
        entry per event.
        """
        pending = self._timer_at
        if pending is not None and pending <= at:
            return
        self._timer_at = at
        self.scheduler.schedule(at, self._fire)

    def wake_after(self, at: int) -> None:
        """Like :meth:`wake_at` but always schedules (windows that need every tick)."""
        self.scheduler.schedule(at, self._fire)

    def _fire(self, at: int) -> None:
        if self._timer_at is not None and at >= self._timer_at:
            self._timer_at = None
        self.on_timer(at)

    def emit(self, out: list[Event]) -> None:
        if out:
            self.next(out)


# ---------------------------------------------------------------------------- validation
def expire_held(held: Sequence[Event], found: int, now: int) -> list[Event]:
    """The held batch leaving a batch window as EXPIRED events, stamped ``now``...

    ...except the first ``found``: Siddhi's lengthBatch, timeBatch and batch windows stamp
    the time walking their expiredEventQueue on from its cursor, without resetting it, and a
    find (a join's probe, an on-demand query) leaves that cursor past the events it scanned:
    those leave with their own timestamps.
    """
    if not found:
        return [Event(now, x.data, EXPIRED) for x in held]
    return [Event(x.timestamp if i < found else now, x.data, EXPIRED) for i, x in enumerate(held)]


def _accepts(param: Param, info: ArgInfo) -> str | None:
    """Why ``info`` does not fit ``param`` (None when it does)."""
    if info.type not in param.types:
        allowed = " or ".join(t.value for t in param.types)
        return f"parameter '{param.name}' should be {allowed}, but found {info.type.value}"
    if not param.dynamic and not (info.constant and isinstance(info.node, (Constant, TimeConstant))):
        # Siddhi wants a literal here: even a constant expression such as 1/2 is rejected
        what = "an expression" if info.constant else "a dynamic attribute"
        return f"parameter '{param.name}' should be a constant, but found {what}"
    return None


def _match(params: Sequence[Param], infos: Sequence[ArgInfo]) -> tuple[list[Param] | None, str | None, int]:
    """Params matched positionally to args, or the reason and index of the first misfit."""
    matched: list[Param] = []
    for i, info in enumerate(infos):
        if i < len(params):
            p = params[i]
        elif params and params[-1].repeat:
            p = params[-1]
        else:
            return None, f"takes at most {len(params)} parameter(s), but found {len(infos)}", i
        why = _accepts(p, info)
        if why is not None:
            return None, why, i
        matched.append(p)
    required = sum(1 for p in params if not p.optional and not p.repeat)
    if len(infos) < required:
        return None, f"needs at least {required} parameter(s), but found {len(infos)}", -1
    return matched, None, -1


def check_params(ext: Extension, handler: WindowHandler, infos: list[ArgInfo]) -> list[Param | None]:
    """Validate arguments against the extension's declared parameters (or overloads).

    Raises a creation error positioned at the offending argument (or at the call).
    """
    name = ext.name
    by_name = {p.name: p for p in ext.params}
    candidates: list[list[Param]] = []
    if ext.overloads:
        for names in ext.overloads:
            plist: list[Param] = []
            for n in names:
                if n == "...":
                    plist[-1] = replace(plist[-1], repeat=True)
                else:
                    plist.append(replace(by_name[n], optional=False))
            candidates.append(plist)
    else:
        candidates.append(list(ext.params))
    best: tuple[str, int] | None = None
    for plist in candidates:
        matched, why, at = _match(plist, infos)
        if matched is not None:
            return list(matched)
        # prefer the reason of an overload with the right arity
        if best is None or (at >= 0 and best[1] < 0):
            best = (why or "invalid parameters", at)
    why, at = best if best is not None else ("invalid parameters", -1)
    if ext.overloads and at < 0:
        shapes = "; ".join("(" + ", ".join(names) + ")" for names in ext.overloads)
        why = f"expects parameters {shapes}, but found {len(infos)}"
    node = infos[at].node if 0 <= at < len(infos) else handler
    raise error_at(f"{name} window: {why}", node)


def compile_args(handler: WindowHandler, params: list[Param | None], infos: list[ArgInfo],
                 compiled: list[Any], scope: Any, gen: CodeGen) -> list[WindowArg]:
    """Build :class:`WindowArg` objects: getters for dynamic arguments."""
    out: list[WindowArg] = []
    prologue = list(getattr(scope, "prologue", ()))
    for p, info, c in zip(params, infos, compiled, strict=True):
        getter = None
        index = None
        if not info.constant:
            getter = gen.function("_window_arg", "e", prologue + [f"return {c.code}"])
            if isinstance(info.node, Variable) and hasattr(scope, "index"):
                index = scope.index(info.node.attribute)
        out.append(WindowArg(info, p, getter, index))
    return out


def analyse_args(handler: WindowHandler, scope: Any, ctx: Any, gen: CodeGen) -> tuple[list[ArgInfo], list[Any]]:
    """Compile each argument once (type, constness) against the input scope."""
    compiler = ExpressionCompiler(ctx, scope, gen)
    infos: list[ArgInfo] = []
    compiled: list[Any] = []
    for a in handler.args:
        info, c = compiler.arg_info(a)
        infos.append(info)
        compiled.append(c)
    return infos, compiled


def require_attribute(spec: WindowSpec, arg: WindowArg, what: str) -> int:
    """The data index of an argument that must be a plain stream attribute."""
    if arg.constant or not isinstance(arg.node, Variable) or arg.index is None:
        raise spec.error(f"{what} should be a stream attribute", arg.node)
    return arg.index


def int_value(spec: WindowSpec, arg: WindowArg | None, what: str, minimum: int | None = 0) -> int | None:
    """A constant int/long argument, checked against ``minimum``."""
    if arg is None:
        return None
    v = arg.value
    if v is None:
        raise spec.error(f"{what} cannot be null", arg.node)
    v = int(v)
    if minimum is not None and v < minimum:
        raise spec.error(f"{what} should be at least {minimum}, but found {v}", arg.node)
    return v


class BufferWindow(WindowProcessor):
    """A window whose whole state is ``buffer``, a deque of the events it holds, oldest first.

    Time-driven subclasses set ``millis`` and implement :meth:`_due` (what leaves the buffer by
    ``now``); the timer and the re-arming after a restore are then shared.
    """

    millis: int | None = None

    def __init__(self, spec: WindowSpec) -> None:
        super().__init__(spec)
        self.buffer: deque[Event] = deque()

    def contents(self) -> Iterable[Event]:
        return self.buffer

    def snapshot_state(self) -> Any:
        return {"buffer": list(self.buffer)}

    def restore_state(self, state: Any) -> None:
        self.buffer = deque(state["buffer"])
        self._timer_at = None
        self._rearm()

    def _rearm(self) -> None:
        """Wake when the oldest event is due (time-driven windows only)."""
        if self.millis is not None and self.buffer:
            self.wake_at(self.buffer[0].timestamp + self.millis)

    def _due(self, now: int, out: list[Event]) -> None:
        """Move what is due by ``now`` from the buffer to ``out``."""

    def _pop_older(self, now: int, out: list[Event], etype: int) -> None:
        """Move the events older than ``millis`` at ``now`` to ``out``, as ``etype`` events."""
        buf = self.buffer
        limit = now - self.millis  # type: ignore[operator]
        while buf and buf[0].timestamp <= limit:
            out.append(Event(now, buf.popleft().data, etype))

    def on_timer(self, at: int) -> None:
        out: list[Event] = []
        self._due(self.clock.now(), out)
        self._rearm()
        if out:
            self.next(out)
