"""Aggregate functions for selectors (``sum``, ``count``, ``avg``, ...).

An aggregator extension's factory checks the argument types and returns ``(result type,
state class)``.  The selector keeps one state object per aggregator and group key; events add
to it when current, remove from it when expired, and a reset event clears it (DESIGN.md
decision 6).  ``add``/``remove`` return the new value.  Nulls are ignored (but
``distinctCount`` counts null as a value, as Siddhi does).  State objects
hold only plain values, so snapshots can keep them as data (:mod:`engine.state_codec`; a
third-party aggregator's state class registers with ``register_state_type``).

Counts may go below zero: in a join an event that leaves one side's window takes back every
match it has with the other side's window *now*, which may be more than it made when it
came.  Siddhi's aggregators follow the arithmetic wherever it goes (``count()`` -2, ``sum``
-12) and Siddhi drops an aggregator's state only when its ``canDestroy`` holds after an
update, that is when the state is as a new one; ``can_destroy`` says the same here, and the
selector drops a group's states only when all of them can go.
"""
from __future__ import annotations

import math
from collections import deque
from typing import Any

from srota.engine.expression import ArgInfo
from srota.engine.registry import ANY_TYPE, NUMERIC_TYPES, Kind, Param, extension
from srota.engine.types import hashmap_capacity, hashmap_keys, java_float_hash, java_hash, java_key, key_value
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import AttrType


class AggregatorState:
    """Base of aggregator states: ``add``/``remove`` return the current value; ``reset`` clears."""

    __slots__ = ()

    def add(self, value: Any) -> Any:
        raise NotImplementedError

    def remove(self, value: Any) -> Any:
        raise NotImplementedError

    def reset(self) -> None:
        raise NotImplementedError

    def value(self) -> Any:
        raise NotImplementedError

    def can_destroy(self) -> bool:
        """Whether the state is as a new one (Siddhi's ``State.canDestroy``): the selector may
        then drop it with its group.  The default keeps the selector's older rule for
        states that do not say (their group goes when its window holds none of its events)."""
        return True

    def __getstate__(self) -> dict[str, Any]:
        return {s: getattr(self, s) for s in self._all_slots()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)

    @classmethod
    def _all_slots(cls) -> list[str]:
        out: list[str] = []
        for klass in cls.__mro__:
            out.extend(getattr(klass, "__slots__", ()))
        return out


def _one_arg(name: str, args: list[ArgInfo], types: tuple[AttrType, ...]) -> AttrType:
    if len(args) != 1:
        raise SiddhiAppCreationError(f"{name}() takes 1 argument, {len(args)} given")
    t = args[0].type
    if t not in types:
        raise SiddhiAppCreationError(
            f"{name}() cannot aggregate {t.value}; expected {', '.join(x.value for x in types)}")
    return t


def _inline_total_count(op: str, state: str, arg: str) -> list[str]:
    """Inline add/remove for states keeping ``total`` and ``count`` of non-null values."""
    sign = "+" if op == "add" else "-"
    return [f"_v = {arg}", "if _v is not None:", f"    _s = {state}",
            f"    _s.total {sign}= _v", f"    _s.count {sign}= 1"]


def _inline_total_count_replace(state: str, old: str, new: str) -> list[str]:
    """Inline remove of ``old`` then add of ``new`` for states keeping ``total`` and ``count``:
    when both are non-null the count stays and the total takes both steps in one statement
    (the same two float operations in the same order, so the same result)."""
    return [f"_o = {old}", f"_v = {new}", "if _o is not None and _v is not None:", f"    _s = {state}",
            "    _s.total = _s.total - _o + _v", "else:",
            *("    " + line for line in _inline_total_count("remove", state, old)),
            *("    " + line for line in _inline_total_count("add", state, new))]


class _Sum(AggregatorState):
    """Siddhi's ``SumAttributeAggregatorExecutor``: the sum is null only while the count of
    non-null values is exactly 0, after a removal or a null (a count below zero, in a join,
    gives the sum); an addition returns the sum whatever the count (a count back to 0 from -1
    gives the sum, 0 or not).  The state goes when count and sum are both 0."""

    __slots__ = ("total", "count", "integral")

    def chunk_kind(self) -> str:
        """How a chunk's additions go at once (``_speedups.group_add``): ``total`` an exact
        int (``l``) or a float summed in event order (``f``), and ``count``."""
        return "l" if self.integral else "f"

    @staticmethod
    def inline(op: str, state: str, arg: str) -> list[str] | None:
        """Generated code for add/remove whose value is not used (see the selector)."""
        return _inline_total_count(op, state, arg)

    @staticmethod
    def inline_replace(state: str, old: str, new: str) -> list[str]:
        """Generated code for remove(old) then add(new), values not used (a sliding window)."""
        return _inline_total_count_replace(state, old, new)

    def __init__(self, integral: bool) -> None:
        self.integral = integral
        self.total: Any = 0 if integral else 0.0
        self.count = 0

    # add/remove compute the value inline: they run once per event and aggregator.
    def add(self, value: Any) -> Any:
        if value is None:
            return self.total if self.count else None
        self.total += value
        self.count += 1
        return self.total

    def remove(self, value: Any) -> Any:
        if value is not None:
            self.total -= value
            self.count -= 1
        return self.total if self.count else None

    def reset(self) -> None:
        self.total = 0 if self.integral else 0.0
        self.count = 0

    def value(self) -> Any:
        return self.total if self.count else None

    def value_after(self, added: bool) -> Any:
        """What the last update returned: ``added`` says it added a non-null value."""
        return self.total if self.count or added else None

    def can_destroy(self) -> bool:
        return self.count == 0 and self.total == 0

    @staticmethod
    def inline_can_destroy(state: str) -> str:
        """An expression equal to ``can_destroy()`` of ``state``."""
        return f"{state}.count == 0 and {state}.total == 0"

    @staticmethod
    def inline_value(state: str, temp: str) -> str:
        """An expression equal to ``value()`` of ``state``, evaluated once (bound to ``temp``)."""
        return f"({temp}.total if ({temp} := {state}).count else None)"

    @staticmethod
    def inline_value_after(state: str, temp: str, added: str) -> str:
        """An expression equal to ``value_after(added)`` of ``state`` (``added`` is evaluated
        only when the count is 0)."""
        return f"({temp}.total if ({temp} := {state}).count or {added} else None)"


_LONG_MIN = -(1 << 63)
_LONG_MAX = (1 << 63) - 1
#: Two integers no larger than this subtract exactly in doubles too (the difference fits 53 bits).
_EXACT = 1 << 52


def _wrap_long(v: int) -> int:
    """``v`` as Java's 64-bit two's complement arithmetic leaves it."""
    return (v - _LONG_MIN) % (1 << 64) + _LONG_MIN


class _LongSum(_Sum):
    """``sum`` of long values with Siddhi's arithmetic (``AggregatorStateLong``).

    An addition is Java's ``long`` addition: it wraps around at 64 bits (the total is kept
    exact here and wrapped where it is read, which gives the same value).  A removal is
    ``sum -= value`` with ``processRemove(double)``: ``sum = (long) ((double) sum - value)``,
    which rounds once either is beyond 2**53 (and saturates at the long range).  Where both
    are within 2**52 the difference is exact either way, so the removal is a plain
    subtraction.  (An int sum also removes through a double, but its total stays within 2**52
    unless some two million values of 2**31 are summed: ``_Sum`` keeps it exact.)
    """

    __slots__ = ()

    def chunk_kind(self) -> str:
        """Additions are exact int additions (the wrap is where the total is read)."""
        return "l"

    @staticmethod
    def inline(op: str, state: str, arg: str) -> list[str] | None:
        """Generated code for add/remove whose value is not used (see the selector)."""
        if op == "add":
            return _inline_total_count("add", state, arg)
        return [f"_v = {arg}", "if _v is not None:", f"    _s = {state}",
                f"    if -{_EXACT} <= _s.total <= {_EXACT} and -{_EXACT} <= _v <= {_EXACT}:",
                "        _s.total -= _v", "    else:", "        _s.take(_v)", "    _s.count -= 1"]

    @staticmethod
    def inline_replace(state: str, old: str, new: str) -> list[str]:
        """Generated code for remove(old) then add(new), values not used (a sliding window)."""
        return [f"_o = {old}", f"_v = {new}", "if _o is not None and _v is not None:", f"    _s = {state}",
                f"    if -{_EXACT} <= _s.total <= {_EXACT} and -{_EXACT} <= _o <= {_EXACT}:",
                "        _s.total = _s.total - _o + _v", "    else:", "        _s.take(_o)",
                "        _s.total += _v", "else:",
                *("    " + line for line in _LongSum.inline("remove", state, old) or ()),
                *("    " + line for line in _inline_total_count("add", state, new))]

    def __init__(self) -> None:
        super().__init__(True)

    def take(self, value: int) -> None:
        """``total -= value`` as Java's ``long -= double`` does it."""
        t = self.total
        if -_EXACT <= t <= _EXACT and -_EXACT <= value <= _EXACT:
            self.total = t - value
            return
        r = float(_wrap_long(t)) - float(value)
        self.total = _LONG_MAX if r >= 2.0 ** 63 else _LONG_MIN if r <= -(2.0 ** 63) else int(r)

    def long_total(self) -> int:
        """The total as a Java long (wrapped at 64 bits)."""
        t = self.total
        return t if _LONG_MIN <= t <= _LONG_MAX else _wrap_long(t)

    def add(self, value: Any) -> Any:
        if value is None:
            return self.long_total() if self.count else None
        self.total += value
        self.count += 1
        return self.long_total()

    def remove(self, value: Any) -> Any:
        if value is not None:
            self.take(value)
            self.count -= 1
        return self.long_total() if self.count else None

    def value(self) -> Any:
        return self.long_total() if self.count else None

    def value_after(self, added: bool) -> Any:
        return self.long_total() if self.count or added else None

    def can_destroy(self) -> bool:
        return self.count == 0 and self.long_total() == 0

    @staticmethod
    def inline_can_destroy(state: str) -> str:
        """An expression equal to ``can_destroy()`` of ``state``."""
        return f"{state}.count == 0 and {state}.long_total() == 0"

    @staticmethod
    def inline_value(state: str, temp: str) -> str:
        """An expression equal to ``value()`` of ``state``, evaluated once (bound to ``temp``)."""
        return (f"({temp}.total if ({temp} := {state}).count and {_LONG_MIN} <= {temp}.total <= {_LONG_MAX} "
                f"else {temp}.value())")

    @staticmethod
    def inline_value_after(state: str, temp: str, added: str) -> str:
        """An expression equal to ``value_after(added)`` of ``state``."""
        return (f"({temp}.total if (({temp} := {state}).count or {added}) and {_LONG_MIN} <= {temp}.total <= "
                f"{_LONG_MAX} else {temp}.value_after({added}))")


@extension(Kind.AGGREGATOR, "sum", params=(Param("arg", NUMERIC_TYPES, dynamic=True),),
           doc="Sum of the values (long for int/long, double for float/double).")
def _sum(args: list[ArgInfo]) -> tuple[AttrType, Any]:
    t = _one_arg("sum", args, NUMERIC_TYPES)
    if t is AttrType.LONG:
        return AttrType.LONG, _LongSum
    integral = t is AttrType.INT
    return (AttrType.LONG if integral else AttrType.DOUBLE), lambda: _Sum(integral)


class _Count(AggregatorState):
    __slots__ = ("count",)

    def chunk_kind(self) -> str:
        """A chunk's additions add its number of events to ``count`` (``_speedups.group_add``)."""
        return "c"

    @staticmethod
    def inline(op: str, state: str, arg: str) -> list[str] | None:
        """Generated code for add/remove whose value is not used (see the selector)."""
        return [f"{state}.count {'+' if op == 'add' else '-'}= 1"]

    @staticmethod
    def inline_replace(state: str, old: str, new: str) -> list[str]:
        """Generated code for remove(old) then add(new): the count stays."""
        return []

    def __init__(self) -> None:
        self.count = 0

    def add(self, value: Any = None) -> int:
        self.count += 1
        return self.count

    def remove(self, value: Any = None) -> int:
        self.count -= 1
        return self.count

    def reset(self) -> None:
        self.count = 0

    def value(self) -> int:
        return self.count

    def can_destroy(self) -> bool:
        return self.count == 0

    @staticmethod
    def inline_can_destroy(state: str) -> str:
        """An expression equal to ``can_destroy()`` of ``state``."""
        return f"{state}.count == 0"

    @staticmethod
    def inline_value(state: str, temp: str) -> str:
        """An expression equal to ``value()`` of ``state``, evaluated once (bound to ``temp``)."""
        return f"{state}.count"


@extension(Kind.AGGREGATOR, "count", params=(Param("arg", ANY_TYPE, optional=True, dynamic=True),),
           doc="Number of events (a long).")
def _count(args: list[ArgInfo]) -> tuple[AttrType, Any]:
    if len(args) > 1:
        raise SiddhiAppCreationError(f"count() takes at most 1 argument, {len(args)} given")
    return AttrType.LONG, _Count


class _Avg(AggregatorState):
    __slots__ = ("total", "count")

    def chunk_kind(self) -> str:
        """A chunk's additions go to the float ``total`` in event order, and ``count``."""
        return "f"

    @staticmethod
    def inline(op: str, state: str, arg: str) -> list[str] | None:
        """Generated code for add/remove whose value is not used (see the selector)."""
        return _inline_total_count(op, state, arg)

    @staticmethod
    def inline_replace(state: str, old: str, new: str) -> list[str]:
        """Generated code for remove(old) then add(new), values not used (a sliding window)."""
        return _inline_total_count_replace(state, old, new)

    def __init__(self) -> None:
        self.total = 0.0
        self.count = 0

    def add(self, value: Any) -> Any:
        if value is not None:
            self.total += value
            self.count += 1
        return self.total / self.count if self.count else None

    def remove(self, value: Any) -> Any:
        if value is not None:
            self.total -= value
            self.count -= 1
        return self.total / self.count if self.count else None

    def reset(self) -> None:
        self.total = 0.0
        self.count = 0

    def value(self) -> Any:
        return self.total / self.count if self.count else None

    def can_destroy(self) -> bool:
        return self.count == 0 and self.total == 0.0

    @staticmethod
    def inline_can_destroy(state: str) -> str:
        """An expression equal to ``can_destroy()`` of ``state``."""
        return f"{state}.count == 0 and {state}.total == 0.0"

    @staticmethod
    def inline_value(state: str, temp: str) -> str:
        """An expression equal to ``value()`` of ``state``, evaluated once (bound to ``temp``)."""
        return f"({temp}.total / {temp}.count if ({temp} := {state}).count else None)"


@extension(Kind.AGGREGATOR, "avg", params=(Param("arg", NUMERIC_TYPES, dynamic=True),),
           doc="Average of the values (a double).")
def _avg(args: list[ArgInfo]) -> tuple[AttrType, Any]:
    _one_arg("avg", args, NUMERIC_TYPES)
    return AttrType.DOUBLE, _Avg


class _MinMax(AggregatorState):
    """Min or max over a window: counts per value, so removals are exact.

    The values are counted by their :func:`~engine.types.java_key` (Siddhi's queue removes an
    expired value by ``Double.equals``: a NaN removes a NaN, -0.0 is not 0.0).  An added value
    replaces the answer as in Siddhi's ``processAdd``, by ``<`` or ``>``, false for a NaN: a NaN
    that comes first stays the answer until a removal, one that comes later is passed over.
    After a removal the answer is the window's least (greatest) number, NaN only when nothing
    else is left (Siddhi's queue may answer NaN there, docs/siddhi-differences.md).

    Where that number is zero and the window holds both -0.0 and 0.0, the answer is the one
    Siddhi's queue has first: ``zeros`` keeps the queue's zero entries in its order (see
    :meth:`_track_zero`).
    """

    __slots__ = ("counts", "best", "is_max", "zeros")

    def __init__(self, is_max: bool) -> None:
        self.is_max = is_max
        self.counts: dict[Any, int] = {}
        self.best: Any = None
        self.zeros: deque[float] | None = None

    def add(self, value: Any) -> Any:
        if value is not None:
            key = java_key(value)
            self.counts[key] = self.counts.get(key, 0) + 1
            if value == 0 or self.zeros:
                self._track_zero(value)
            best = self.best
            if best is None or (value > best if self.is_max else value < best):
                self.best = value
        return self.best

    def remove(self, value: Any) -> Any:
        if value is None:
            return self.best
        key = java_key(value)
        left = self.counts.get(key, 0) - 1
        if left > 0:
            self.counts[key] = left
        elif left == 0:
            del self.counts[key]
            best = self.best
            if value == best or best != best:
                self.best = self._best_left()
        zeros = self.zeros
        if zeros:
            if value == 0:
                _remove_first_zero(zeros, value)
            if zeros and self.best == 0:  # the queue's head: its first zero
                self.best = zeros[0]
        return self.best

    def _track_zero(self, value: Any) -> None:
        """Follow the zero entries of Siddhi's queue (``MinAttributeAggregatorExecutor``) as
        ``value`` comes in: a double zero is added at its end; a value below zero (above, for
        ``max``) pushes every zero out.  The queue keeps equal entries in the order they came
        (its comparison is ``>``, false for -0.0 against 0.0), and after a removal it answers
        its first entry: the older of -0.0 and 0.0 still in the window."""
        zeros = self.zeros
        if value.__class__ is float and value == 0.0:
            if zeros is None:
                zeros = self.zeros = deque()
            zeros.append(value)
        elif zeros and (value > 0 if self.is_max else value < 0):
            zeros.clear()

    def __getattr__(self, name: str) -> Any:
        # (only for a slot that was never set: a state restored from a snapshot taken before
        # ``zeros`` was kept)
        if name == "zeros":
            return None
        raise AttributeError(name)

    def _best_left(self) -> Any:
        values = [key_value(k) for k in self.counts]
        numbers = [v for v in values if v == v]
        if numbers:
            return max(numbers) if self.is_max else min(numbers)
        return values[0] if values else None

    def reset(self) -> None:
        self.counts = {}
        self.best = None
        self.zeros = None

    def value(self) -> Any:
        return self.best

    def can_destroy(self) -> bool:
        return not self.counts


def _remove_first_zero(zeros: deque[float], value: float) -> None:
    """Remove the first entry of ``zeros`` that ``Double.equals`` ``value`` (of its sign), as
    the queue's ``removeFirstOccurrence`` does."""
    negative = math.copysign(1.0, value) < 0
    for i, z in enumerate(zeros):
        if (math.copysign(1.0, z) < 0) == negative:
            del zeros[i]
            return


def _min_max(name: str, is_max: bool) -> None:
    def factory(args: list[ArgInfo]) -> tuple[AttrType, Any]:
        t = _one_arg(name, args, NUMERIC_TYPES)
        return t, lambda: _MinMax(is_max)

    extension(Kind.AGGREGATOR, name, params=(Param("arg", NUMERIC_TYPES, dynamic=True),),
              doc=f"The {'largest' if is_max else 'smallest'} value in the window.")(factory)


_min_max("max", True)
_min_max("min", False)


class _Forever(AggregatorState):
    """minForever/maxForever: expired events count as new values (they never leave).

    A reset (a batch window's) clears them as it clears every aggregator: Siddhi's
    ``processReset`` drops all the states of the query (``cleanGroupByStates``).  What they
    outlive is a group's window emptying (their ``canDestroy`` is false once they hold a
    value), so the selector keeps their group's states then.
    """

    __slots__ = ("best", "is_max")

    def __init__(self, is_max: bool) -> None:
        self.is_max = is_max
        self.best: Any = None

    def add(self, value: Any) -> Any:
        if value is not None and (self.best is None or (value > self.best if self.is_max else value < self.best)):
            self.best = value
        return self.best

    def remove(self, value: Any) -> Any:
        return self.add(value)

    def reset(self) -> None:
        self.best = None

    def value(self) -> Any:
        return self.best

    def can_destroy(self) -> bool:
        return self.best is None


def _forever(name: str, is_max: bool) -> None:
    def factory(args: list[ArgInfo]) -> tuple[AttrType, Any]:
        t = _one_arg(name, args, NUMERIC_TYPES)
        return t, lambda: _Forever(is_max)

    extension(Kind.AGGREGATOR, name, params=(Param("arg", NUMERIC_TYPES, dynamic=True),),
              doc=f"The {'largest' if is_max else 'smallest'} value ever seen (until a batch window's reset).")(factory)


_forever("maxForever", True)
_forever("minForever", False)


class _DistinctCount(AggregatorState):
    """Number of distinct values; null is one of them (Siddhi counts in a HashMap, whose
    keys may be null, and whose double keys are equal as ``Double.equals`` says: -0.0 is
    not 0.0, a NaN is every NaN)."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts: dict[Any, int] = {}

    def add(self, value: Any) -> int:
        value = java_key(value)
        self.counts[value] = self.counts.get(value, 0) + 1
        return len(self.counts)

    def remove(self, value: Any) -> int:
        value = java_key(value)
        if value in self.counts:
            left = self.counts[value] - 1
            if left:
                self.counts[value] = left
            else:
                del self.counts[value]
        return len(self.counts)

    def reset(self) -> None:
        self.counts = {}

    def value(self) -> int:
        return len(self.counts)

    def can_destroy(self) -> bool:
        return not self.counts


#: What ``distinctCount`` counts in a query (DistinctCountAttributeAggregatorExecutor: no bool or
#: object; the incremental one of ``define aggregation`` takes a bool, engine/aggregation/spec.py).
_DISTINCT_TYPES = (*NUMERIC_TYPES, AttrType.STRING)


@extension(Kind.AGGREGATOR, "distinctCount", params=(Param("arg", _DISTINCT_TYPES, dynamic=True),),
           doc="Number of distinct values (a long).")
def _distinct_count(args: list[ArgInfo]) -> tuple[AttrType, Any]:
    _one_arg("distinctCount", args, _DISTINCT_TYPES)
    return AttrType.LONG, _DistinctCount


class _StdDev(AggregatorState):
    """Population standard deviation, step by step as Siddhi's ``StdDevAttributeAggregatorExecutor``.

    Siddhi keeps the running sum, the mean as ``sum / count`` and the sum of squared
    deviations updated by ``(v - old mean) * (v - new mean)``; the same float operations in
    the same order give the same digits, and the same NaN where rounding drives the sum of
    squares below zero (Java's ``Math.sqrt`` of a negative number).  The sum of squares is not
    cleared when a removal leaves one value (the answer is then 0.0, but the next addition
    goes on from what is left), only when it leaves none.  The count may go below zero (a
    join): an addition that brings it back to 0 changes nothing else and answers null, as
    Siddhi's ``processAdd`` does.
    """

    __slots__ = ("count", "mean", "m2", "total")

    def __init__(self) -> None:
        self.count = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.total = 0.0

    def add(self, value: Any) -> Any:
        if value is not None:
            value = float(value)
            self.count += 1
            if self.count == 1:
                self.total = self.mean = value
                self.m2 = 0.0
            elif self.count == 0:
                return None
            else:
                old = self.mean
                self.total += value
                self.mean = self.total / self.count
                self.m2 += (value - old) * (value - self.mean)
        return self.value()

    def remove(self, value: Any) -> Any:
        if value is not None:
            value = float(value)
            self.count -= 1
            if self.count == 0:
                self.total = self.mean = self.m2 = 0.0
            else:
                old = self.mean
                self.total -= value
                self.mean = self.total / self.count
                self.m2 -= (value - old) * (value - self.mean)
        return self.value()

    def reset(self) -> None:
        self.count = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.total = 0.0

    def can_destroy(self) -> bool:
        return self.count == 0 and self.total == 0.0 and self.mean == 0.0 and self.m2 == 0.0

    def value(self) -> Any:
        if self.count == 0:
            return None
        if self.count == 1:
            return 0.0
        v = self.m2 / self.count
        return math.sqrt(v) if v >= 0.0 else math.nan  # (Java's Math.sqrt of a negative)


@extension(Kind.AGGREGATOR, "stdDev", params=(Param("arg", NUMERIC_TYPES, dynamic=True),),
           doc="Population standard deviation (a double).")
def _std_dev(args: list[ArgInfo]) -> tuple[AttrType, Any]:
    _one_arg("stdDev", args, NUMERIC_TYPES)
    return AttrType.DOUBLE, _StdDev


class _BoolAgg(AggregatorState):
    """``and``/``or`` over a window: counts of true and false values."""

    __slots__ = ("trues", "falses", "is_and")

    def __init__(self, is_and: bool) -> None:
        self.is_and = is_and
        self.trues = 0
        self.falses = 0

    def _bump(self, value: Any, step: int) -> None:
        if value is True:
            self.trues += step
        elif value is False:
            self.falses += step

    def add(self, value: Any) -> bool:
        self._bump(value, 1)
        return self.value()

    def remove(self, value: Any) -> bool:
        self._bump(value, -1)
        return self.value()

    def reset(self) -> None:
        self.trues = self.falses = 0

    def can_destroy(self) -> bool:
        # (Siddhi's ``or`` counts the true values only)
        return self.trues == 0 and (self.falses == 0 or not self.is_and)

    def value(self) -> bool:
        if self.is_and:
            return self.falses == 0 and self.trues > 0
        return self.trues > 0


def _bool_agg(name: str, is_and: bool) -> None:
    def factory(args: list[ArgInfo]) -> tuple[AttrType, Any]:
        _one_arg(name, args, (AttrType.BOOL,))
        return AttrType.BOOL, lambda: _BoolAgg(is_and)

    extension(Kind.AGGREGATOR, name, params=(Param("arg", (AttrType.BOOL,), dynamic=True),),
              doc=f"Logical {name} of the values.")(factory)


_bool_agg("and", True)
_bool_agg("or", False)


class JavaHashSet(set[Any]):
    """A set that also knows its elements as a Java ``HashSet`` holds and iterates them
    (``java_order``): Siddhi's order when it prints one (``convert(unionSet(...), 'string')``),
    and its size (``sizeOfSet``), where Java tells -0.0 from 0.0 and takes every NaN for one, as
    ``Double.equals`` does (the Python set itself holds them as Python's equality does).
    ``float32``: its elements are a float attribute's, which Java hashes as ``Float``."""

    __slots__ = ("java_order", "float32")
    java_order: tuple[Any, ...]
    float32: bool


def java_set(values: list[Any], float32: bool = False) -> JavaHashSet:
    """A :class:`JavaHashSet` of the distinct ``values`` (by ``Double.equals``), put into a new
    HashSet in this order."""
    out = JavaHashSet(values)
    out.java_order = tuple(hashmap_keys(values, 16, java_float_hash if float32 else java_hash))
    out.float32 = float32
    return out


def set_elements(value: Any) -> Any:
    """The elements of a set as Java holds them (a :class:`JavaHashSet`'s ``java_order``)."""
    if value.__class__ is JavaHashSet:
        return value.java_order
    return value


def _set_key(value: Any) -> Any:
    """``value`` as a dict key equal where Java's ``equals`` is: -0.0 apart from 0.0, one NaN
    (a tuple: no element of a set of one attribute's values is one)."""
    if value.__class__ is float and (value != value or (value == 0.0 and math.copysign(1.0, value) < 0)):
        return ("NaN",) if value != value else ("-0.0",)
    return value


def _set_value(key: Any) -> Any:
    if key.__class__ is tuple:
        return math.nan if key == ("NaN",) else -0.0
    return key


class _UnionSet(AggregatorState):
    # ``counts``: each element's count (by _set_key), in the order the elements came into
    # Siddhi's set; ``table``: that HashSet's table length (it grows with the elements, never
    # shrinks); ``float32``: the sets are a float attribute's
    __slots__ = ("counts", "table", "float32")

    def __init__(self) -> None:
        self.counts: dict[Any, int] = {}
        self.table = 16
        self.float32 = False

    def add(self, value: Any) -> set[Any]:
        if value:
            if getattr(value, "float32", False):
                self.float32 = True
            for v in set_elements(value):
                k = _set_key(v)
                self.counts[k] = self.counts.get(k, 0) + 1
        return self.value()

    def remove(self, value: Any) -> set[Any]:
        for v in set_elements(value) if value else ():
            k = _set_key(v)
            left = self.counts.get(k, 0) - 1
            if left > 0:
                self.counts[k] = left
            else:
                self.counts.pop(k, None)
        return self.value()

    def reset(self) -> None:
        self.counts = {}

    def value(self) -> set[Any]:
        """A new HashSet of the union (``returnSet.addAll(state.set)``): the state's elements in
        the state set's order, put into a set of its own."""
        # (a state restored from a snapshot taken before the table or float32 was kept: 16, False)
        self.table = hashmap_capacity(len(self.counts), getattr(self, "table", 16))
        float32 = getattr(self, "float32", False)
        hash_of = java_float_hash if float32 else java_hash
        return java_set(hashmap_keys([_set_value(k) for k in self.counts], self.table, hash_of), float32)

    def can_destroy(self) -> bool:
        return not self.counts


@extension(Kind.AGGREGATOR, "unionSet", params=(Param("set", (AttrType.OBJECT,), dynamic=True),),
           doc="Union of the sets (made with createSet).")
def _union_set(args: list[ArgInfo]) -> tuple[AttrType, Any]:
    _one_arg("unionSet", args, (AttrType.OBJECT,))
    return AttrType.OBJECT, _UnionSet
