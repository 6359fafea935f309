"""The columnar path: a stateless filter and projection over a whole chunk at once.

``from S[price >= 100 and volume > 10] select symbol, price * volume as value`` does per
event what the generated Python loop of :mod:`engine.selector` does: read the data, test,
compute, make an output event.  Over a chunk of events, this module does it a column at a
time instead: the compiled :mod:`engine._speedups` gathers the attributes the filter and
the computed outputs read into numpy arrays, numpy evaluates them for the whole chunk, and
``_speedups.emit`` makes the output events of the events that pass.

It takes what it can give exactly the Python loop's answers for (and so Siddhi's):

* attributes of the query's one stream and non-null constants, combined with ``+ - *``
  (``int`` and ``long`` wrap around as Java's do, as numpy's fixed-width integers do;
  ``float`` arithmetic rounds each operand and the result to 32 bits, as ``_f32`` does),
  comparisons of numbers in Java's promoted type, a string attribute ``==`` or ``!=`` a
  string constant, ``and``, ``or``, ``not``, and bool attributes;
* outputs that are such expressions, attributes of any type (passed as they are) or
  constants.

Anything else (a function, ``/`` and ``%`` whose zero divisor answers null, strings other
than a string attribute compared with a string constant, ``is null``) leaves the query to the Python loop (:func:`plan_columnar` answers
None).  So does, chunk by chunk, a chunk shorter than :data:`MIN_CHUNK` events or one where
a read attribute holds a null or a value of another type (``gather`` says so): then the
Python loop, which handles those, runs the chunk.

Without the compiled module (no C compiler when Srota was installed) or without numpy, or
with ``SROTA_PURE_PYTHON=1`` in the environment, nothing is planned here.

The module's other compiled loops are handed on from here too (None without it): the grouped
aggregation of a batching selector (:data:`group_plan`, :data:`group_add`; see
``selector._group_add_plan``) and the scan of an event-time batch window (:data:`batch_scan`).
"""
from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from srota.engine.event import Event, RawEvent
from srota.engine.types import NUMERIC_RANK, compared_as_float, f32, held_value, math_type
from srota.grammar.model import (
    And,
    AttrType,
    Compare,
    CompareOperator,
    Constant,
    Expression,
    MathOp,
    MathOperator,
    Not,
    Or,
    Variable,
)

#: The interface of engine/_speedups.c this module uses (its ``API``).
_API = 10

try:
    if os.environ.get("SROTA_PURE_PYTHON"):
        raise ImportError("SROTA_PURE_PYTHON is set")
    import numpy as np
    from srota.engine import _speedups  # type: ignore[attr-defined]

    if getattr(_speedups, "API", None) != _API:
        logging.getLogger("srota.engine").warning(
            "srota.engine._speedups is of another version (API %s, expected %s): a stale build? "
            "The columnar path is off; reinstall Srota to rebuild it", getattr(_speedups, "API", None), _API)
        raise ImportError("srota.engine._speedups is of another version")
except ImportError:  # the pure-Python loops only
    np = None  # type: ignore[assignment]
    _speedups = None
else:
    _speedups.configure(Event, RawEvent)

#: Chunks shorter than this run the Python loop: numpy's cost per call (about a microsecond
#: for each operation of the filter and outputs) is then more than the loop's per event.
#: Read when a query is planned; ``SROTA_COLUMNAR_MIN_CHUNK`` sets it (the tests set 1, so
#: that every chunk an eligible query gets takes the columnar path).
MIN_CHUNK = int(os.environ.get("SROTA_COLUMNAR_MIN_CHUNK", "32"))

#: How ``gather`` reads an attribute of each type (floats are read as they are held; the
#: arithmetic rounds them to 32 bits where Java's float arithmetic does).
_GATHER = {AttrType.DOUBLE: "d", AttrType.FLOAT: "d", AttrType.LONG: "q", AttrType.INT: "i", AttrType.BOOL: "b"}

#: The numpy type of each attribute type's values in arithmetic.
_DTYPES = {AttrType.DOUBLE: "float64", AttrType.FLOAT: "float32", AttrType.LONG: "int64", AttrType.INT: "int32",
           AttrType.BOOL: "bool"}

#: The numpy type of the buffer ``gather`` fills for each kind of read.
_KIND_DTYPES = {"d": "float64", "q": "int64", "i": "int32", "b": "uint8", "e": "uint8"}

#: How ``emit`` turns an element of a computed array of each numpy type into a value.
_EMIT = {"float64": "d", "float32": "f", "int64": "q", "int32": "i", "bool": "b"}

Columns = list[Any]  # the chunk's values of each read (numpy arrays), by the read's slot
Vector = Callable[[Columns], Any]


#: The compiled grouped aggregation of a chunk (``_speedups.group_add``, over what
#: ``_speedups.group_plan`` made of the query; see ``selector._group_add_plan``), or None
#: without the compiled module.
group_add: Callable[..., int] | None = None if _speedups is None else _speedups.group_add
group_plan: Callable[..., Any] | None = None if _speedups is None else _speedups.group_plan

#: A fused partition query's sliding runs (``_speedups.slide``, over what
#: ``_speedups.slide_plan`` made of the query; see ``partition._compiled_slide``), or None
#: without the compiled module.
slide: Callable[..., int] | None = None if _speedups is None else _speedups.slide
#: ``untracked(data) -> data``: a row of atomic values, no longer tracked by the cyclic collector
untracked: Callable[[Any], Any] | None = None if _speedups is None else _speedups.untracked
slide_one: Callable[..., Any] | None = None if _speedups is None else _speedups.slide_one
slide_plan: Callable[..., Any] | None = None if _speedups is None else _speedups.slide_plan


#: How far a chunk's events join an event-time batch (``_speedups.batch_scan``; see
#: ``windows.external``), or None without the compiled module.
batch_scan: Callable[..., tuple[int, int]] | None = None if _speedups is None else _speedups.batch_scan


def available() -> bool:
    """Whether the columnar path can run here (the compiled module and numpy are present)."""
    return _speedups is not None


#: ``make_event(timestamp, data, type)``: a RawEvent, which the cyclic collector stops
#: tracking where it holds only plain values (``_speedups.event``); None without the module.
make_event: Callable[[int, tuple[Any, ...], int], Event] | None = None if _speedups is None else _speedups.event


def plain_check() -> Callable[[list[Event]], bool] | None:
    """The compiled test of a sender's chunk, where the module is here: whether every event
    is an :class:`Event` of type CURRENT (0) whose data is a tuple (then the engine may take
    the chunk's events as they are; see ``InputHandler._prepare``)."""
    return None if _speedups is None else _speedups.plain


class _NotColumnar(Exception):
    """The expression has a part the columnar path does not take."""


@dataclass
class _Vec:
    """A compiled expression: ``run(columns)`` gives its values for the chunk (an array, or a
    numpy scalar for a constant); ``type`` is its Siddhi type."""

    run: Vector
    type: AttrType
    constant: Any = None
    is_constant: bool = False


def plan_columnar(conditions: Sequence[Expression], outputs: Sequence[Expression] | None,
                  scope: Any, event_type: int) -> Callable[[list[Event]], list[Event] | None] | None:
    """A function selecting a whole chunk at once, or None where the query is not for it.

    ``conditions``: the filters (all must hold); ``outputs``: the select list (None for
    ``select *``); ``scope``: the query's stream scope; ``event_type``: the output events'
    type.  The function answers None for a chunk it leaves to the Python loop.
    """
    if _speedups is None:
        return None
    compiler = _Compiler(scope)
    try:
        tests = [compiler.compile(c) for c in conditions]
        if any(t.type is not AttrType.BOOL for t in tests):
            return None
        if outputs is None:
            columns: list[tuple[str, Any]] = [("a", i) for i in range(len(scope.attributes))]
            computed: list[tuple[int, _Vec]] = []
        else:
            columns, computed = [], []
            for n, expr in enumerate(outputs):
                if isinstance(expr, Variable):
                    columns.append(("a", compiler.index(expr)))
                elif isinstance(expr, Constant):
                    columns.append(("c", held_value(expr.value, expr.type)))
                else:
                    vec = compiler.compile(expr)
                    columns.append(("", None))
                    computed.append((n, vec))
    except _NotColumnar:
        return None
    gathered = list(compiler.gathered)  # (in slot order)
    if not gathered:
        return None  # (nothing to compute: the Python loop only copies values)
    test = _all_of(tests)
    gather, emit, empty, errstate, full, asarray = (_speedups.gather, _speedups.emit, np.empty, np.errstate,
                                                     np.full, np.asarray)
    bool_, uint8 = np.bool_, np.uint8
    dtypes = [np.dtype(_KIND_DTYPES[kind]) for _, kind, _ in gathered]
    bools = [kind in "be" for _, kind, _ in gathered]
    # (an output's numpy type follows from its Siddhi type: numpy's own promotion never decides)
    outs = [(at, vec.run, np.dtype(_DTYPES[vec.type]), _EMIT[_DTYPES[vec.type]]) for at, vec in computed]

    def select(chunk: list[Event]) -> list[Event] | None:
        n = len(chunk)
        buffers = [empty(n, dtype) for dtype in dtypes]
        if not gather(chunk, tuple((index, kind, out, text)
                                   for (index, kind, text), out in zip(gathered, buffers, strict=True))):
            return None
        cols: Columns = [out.view(bool_) if is_bool else out for is_bool, out in zip(bools, buffers, strict=True)]
        specs = list(columns)
        with errstate(all="ignore"):
            mask = None
            if test is not None:
                mask = asarray(test(cols), bool_)
                if mask.ndim == 0:  # (a constant condition)
                    if not mask:
                        return []
                    mask = None
                else:
                    mask = mask.view(uint8)
            for at, run, dtype, kind in outs:
                values = asarray(run(cols), dtype)
                if values.ndim == 0:  # (a constant expression)
                    values = full(n, values, dtype)
                specs[at] = (kind, values.view(uint8) if kind == "b" else values)
        return emit(chunk, mask, tuple(specs), event_type)

    return select


def _all_of(tests: list[_Vec]) -> Vector | None:
    runs = [t.run for t in tests]
    if not runs:
        return None
    if len(runs) == 1:
        return runs[0]

    def all_of(cols: Columns) -> Any:
        mask = runs[0](cols)
        for run in runs[1:]:
            mask = np.logical_and(mask, run(cols))
        return mask

    return all_of


class _Compiler:
    """Siddhi expressions to functions over the chunk's columns, as :mod:`engine.expression`
    compiles them to Python (the same promotions, the same rounding)."""

    def __init__(self, scope: Any) -> None:
        self.scope = scope
        #: what ``gather`` reads, (attribute index, kind, string compared with) -> its slot
        self.gathered: dict[tuple[int, str, str | None], int] = {}

    def index(self, var: Variable) -> int:
        self.scope.resolve(var)  # (raises as the Python compiler does for a wrong name)
        index = self.scope.index(var.attribute)
        if index is None or var.stream_index is not None:
            raise _NotColumnar
        return int(index)

    def compile(self, expr: Expression) -> _Vec:
        if isinstance(expr, Constant):
            return self._constant(expr)
        if isinstance(expr, Variable):
            return self._variable(expr)
        if isinstance(expr, MathOp):
            return self._math(expr)
        if isinstance(expr, Compare):
            return self._compare(expr)
        if isinstance(expr, (And, Or)):
            left, right = self.compile(expr.left), self.compile(expr.right)
            if left.type is not AttrType.BOOL or right.type is not AttrType.BOOL:
                raise _NotColumnar
            op = np.logical_and if isinstance(expr, And) else np.logical_or
            lrun, rrun = left.run, right.run
            return _Vec(lambda c: op(lrun(c), rrun(c)), AttrType.BOOL)
        if isinstance(expr, Not):
            inner = self.compile(expr.expression)
            if inner.type is not AttrType.BOOL:
                raise _NotColumnar
            run = inner.run
            return _Vec(lambda c: np.logical_not(run(c)), AttrType.BOOL)
        raise _NotColumnar

    def _constant(self, e: Constant) -> _Vec:
        if e.value is None or e.type not in _DTYPES:
            raise _NotColumnar
        value = held_value(e.value, e.type)
        scalar = np.asarray(value, dtype=_DTYPES[e.type])[()]
        return _Vec(lambda c: scalar, e.type, value, True)

    def _variable(self, e: Variable) -> _Vec:
        index = self.index(e)
        _, type_ = self.scope.resolve(e)
        kind = _GATHER.get(type_)
        if kind is None:
            raise _NotColumnar
        slot = self._read(index, kind)
        return _Vec(lambda c: c[slot], type_)

    def _read(self, index: int, kind: str, text: str | None = None) -> int:
        return self.gathered.setdefault((index, kind, text), len(self.gathered))

    def _math(self, e: MathOp) -> _Vec:
        if e.op not in (MathOperator.ADD, MathOperator.SUBTRACT, MathOperator.MULTIPLY):
            raise _NotColumnar  # (a zero divisor answers null)
        left, right = self.compile(e.left), self.compile(e.right)
        if left.type not in NUMERIC_RANK or right.type not in NUMERIC_RANK:
            raise _NotColumnar
        rtype = math_type(left.type, right.type)
        a, b = _as_type(left, rtype), _as_type(right, rtype)
        op = {MathOperator.ADD: np.add, MathOperator.SUBTRACT: np.subtract, MathOperator.MULTIPLY: np.multiply}[e.op]
        return _Vec(lambda c: op(a(c), b(c)), rtype)

    def _compare(self, e: Compare) -> _Vec:
        texts = self._text_compare(e)
        if texts is not None:
            return texts
        left, right = self.compile(e.left), self.compile(e.right)
        lt, rt = left.type, right.type
        if lt in NUMERIC_RANK and rt in NUMERIC_RANK:
            if AttrType.FLOAT in (lt, rt) or AttrType.DOUBLE in (lt, rt):
                # as doubles; an int or long against a float first becomes a float where
                # Siddhi's executor makes it one (compared_as_float)
                equality = e.op in (CompareOperator.EQ, CompareOperator.NE)
                a = _as_double(left, compared_as_float(lt, rt, equality))
                b = _as_double(right, compared_as_float(rt, lt, equality))
            else:
                a, b = _as_type(left, AttrType.LONG), _as_type(right, AttrType.LONG)
        elif lt is AttrType.BOOL and rt is AttrType.BOOL and e.op in (CompareOperator.EQ, CompareOperator.NE):
            a, b = left.run, right.run
        else:
            raise _NotColumnar
        op = {CompareOperator.EQ: np.equal, CompareOperator.NE: np.not_equal, CompareOperator.GT: np.greater,
              CompareOperator.GE: np.greater_equal, CompareOperator.LT: np.less,
              CompareOperator.LE: np.less_equal}[e.op]
        return _Vec(lambda c: op(a(c), b(c)), AttrType.BOOL)


    def _text_compare(self, e: Compare) -> _Vec | None:
        """``s == 'IBM'`` (or ``!=``, either way round) for a string attribute ``s``: compared
        while gathering (an exact string equal to the constant, as Java's ``equals``)."""
        if e.op not in (CompareOperator.EQ, CompareOperator.NE):
            return None
        pairs = [(var, const) for var, const in ((e.left, e.right), (e.right, e.left))
                 if isinstance(var, Variable) and isinstance(const, Constant) and const.type is AttrType.STRING
                 and isinstance(const.value, str)]
        if not pairs:
            return None
        var, const = pairs[0]
        index = self.index(var)
        if self.scope.resolve(var)[1] is not AttrType.STRING:
            return None  # (the Python compiler reports the mismatch)
        slot = self._read(index, "e", const.value)
        if e.op is CompareOperator.EQ:
            return _Vec(lambda c: c[slot], AttrType.BOOL)
        return _Vec(lambda c: np.logical_not(c[slot]), AttrType.BOOL)


def _as_type(vec: _Vec, rtype: AttrType) -> Vector:
    """``vec``'s values as an operand of ``rtype`` arithmetic (Java's widening; a float
    operand rounded to 32 bits as ``_f32`` rounds it: through a double)."""
    if vec.is_constant:
        value = f32(float(vec.constant)) if rtype is AttrType.FLOAT else vec.constant
        scalar = np.asarray(value, dtype=_DTYPES[rtype])[()]
        return lambda c: scalar
    run = vec.run
    if vec.type is rtype and rtype is not AttrType.FLOAT:
        return run
    dtype = _DTYPES[rtype]
    if rtype is AttrType.FLOAT and vec.type in (AttrType.INT, AttrType.LONG):
        return lambda c: run(c).astype(np.float64).astype(np.float32)
    return lambda c: run(c).astype(dtype)


def _as_double(vec: _Vec, against_float: bool) -> Vector:
    """``vec``'s values compared as doubles: an int or long against a float goes through a
    32-bit float first, as Java's promotion (and ``_f32``) does."""
    if vec.is_constant:
        value = float(vec.constant)
        if against_float and vec.type in (AttrType.INT, AttrType.LONG):
            value = f32(value)
        scalar = np.float64(value)
        return lambda c: scalar
    run = vec.run
    if vec.type in (AttrType.INT, AttrType.LONG):
        if against_float:
            return lambda c: run(c).astype(np.float64).astype(np.float32).astype(np.float64)
        return lambda c: run(c).astype(np.float64)
    return run  # (a float attribute as held: the Python loop compares it unrounded too)
