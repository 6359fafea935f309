"""An aggregation definition compiled: base values, row layout and generated per-event code.

Incremental aggregation needs decomposable values: a bucket of a coarser granularity is made
by combining the buckets of the finer one.  So every select item is split into base values
(Siddhi's ``IncrementalAttributeAggregator`` base attributes), stored per bucket and group:

=====================  ==========================================  ======================
select item            base values (table columns)                 read as
=====================  ==========================================  ======================
group-by attribute     the key column                              the key
``sum(x)``             ``AGG_SUM_x``                               the sum (long/double)
``count()``            ``AGG_COUNT`` (every event)                 the count (long)
``avg(x)``             ``AGG_SUM_x``, ``AGG_COUNT`` (shared)       sum / count (double)
``min(x)``/``max(x)``  ``AGG_MIN_x`` / ``AGG_MAX_x``               the value
``distinctCount(x)``   ``AGG_SET_x`` (a set)                       its size (long)
any other expression   a column named like the output              value of the latest event
=====================  ==========================================  ======================

These are siddhi-core 5.1's base attributes (``*IncrementalAttributeAggregator``), names and
sharing included: ``count(x)`` is ``count()`` (Siddhi warns and counts every event), and
``avg(x)`` divides the sum of the non-null values by ``AGG_COUNT``, the count of every event,
so a base value shared by several select items is stored once.

The latest event is the one with the greatest event time; on a tie the later arrival wins
(conformance note 18).  Its time is ``AGG_LAST_EVENT_TIMESTAMP``.

In memory a bucket is a list ``[last_ts, utc_offset, *latest values, *base values]`` keyed by
``(bucket start, group key tuple)``, a double or float of the key as its
:func:`~engine.types.java_key` (Siddhi's key is the values' text: -0.0 is a group of its own,
every NaN one group; so are a distinctCount set's elements); ``utc_offset`` is the latest event's (``AGG_TIMEZONE``,
information only: buckets align in GMT, see :mod:`.buckets`).  The functions that create, update, combine and read
these rows are generated once per aggregation (DESIGN.md decision 2).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from srota.engine.aggregation.buckets import parse_time
from srota.engine.aggregation.persisted import persisted_durations, persisted_enabled
from srota.engine.aggregation.store import JAVA_KEYED
from srota.engine.codegen import CodeGen
from srota.engine.expression import BASE_NAMESPACE, ExpressionCompiler, error_at
from srota.engine.scope import StreamScope
from srota.engine.types import java_key, key_value, wrap_long
from srota.grammar.model import (
    AggregationDefinition,
    Attribute,
    AttrType,
    Filter,
    FunctionCall,
    StreamDefinition,
    TimeDuration,
    Variable,
)

_NUMERIC = (AttrType.INT, AttrType.LONG, AttrType.FLOAT, AttrType.DOUBLE)
_INCREMENTAL = {"sum", "count", "avg", "min", "max", "distinctcount"}


@dataclass(frozen=True)
class BaseColumn:
    """One stored base value: ``op`` is ``sum``, ``count``, ``min``, ``max`` or ``distinct``."""

    name: str
    op: str
    type: AttrType
    arg: Any = None  # the argument expression (None for count())
    arg_type: AttrType | None = None


@dataclass(frozen=True)
class OutputColumn:
    """One attribute the aggregation exposes, and how it is read from a bucket row."""

    name: str
    type: AttrType
    kind: str  # key | latest | sum | count | avg | min | max | distinctCount
    refs: tuple[int, ...] = ()  # key index, latest index, or base indexes


@dataclass
class AggSpec:
    """Everything compiled for one aggregation definition (see the module docstring)."""

    id: str
    definition: AggregationDefinition
    stream: StreamDefinition
    durations: tuple[TimeDuration, ...]
    time_attribute: str | None  # None: arrival time
    time_type: AttrType | None
    group_by: list[tuple[str, AttrType]] = field(default_factory=list)
    latest: list[tuple[str, AttrType]] = field(default_factory=list)
    bases: list[BaseColumn] = field(default_factory=list)
    outputs: list[OutputColumn] = field(default_factory=list)
    # generated code
    keep: Callable[[list[Any]], list[Any]] | None = None  # input filters
    locate: Callable[[Any], tuple[int, int, tuple[Any, ...]]] = None  # type: ignore[assignment]
    fresh: Callable[[Any, int, int], list[Any]] = None  # type: ignore[assignment]
    absorb: Callable[[list[Any], Any, int, int], None] = None  # type: ignore[assignment]
    merge: Callable[[list[Any], list[Any]], None] = None  # type: ignore[assignment]
    copy_row: Callable[[list[Any]], list[Any]] = None  # type: ignore[assignment]
    finalize: Callable[[int, tuple[Any, ...], list[Any]], tuple[Any, ...]] = None  # type: ignore[assignment]

    @property
    def attributes(self) -> list[Attribute]:
        """The aggregation's schema as joins and on-demand queries see it."""
        return [Attribute("AGG_TIMESTAMP", AttrType.LONG), *[Attribute(o.name, o.type) for o in self.outputs]]

    @property
    def base_offset(self) -> int:
        """Index of the first base value in a row."""
        return 2 + len(self.latest)


def _column_suffix(expr: Any, fallback: str) -> str:
    if isinstance(expr, Variable) and expr.stream_index is None:
        return expr.attribute
    return fallback


def compile_spec(ad: AggregationDefinition, stream: StreamDefinition, ctx: Any) -> AggSpec:
    """Validate ``ad`` against its input ``stream`` and generate its per-event code."""
    if not ad.durations:
        raise error_at("an aggregation needs at least one granularity", ad)
    inp = ad.input
    names = [inp.reference_id] if inp.reference_id else []
    scope = StreamScope(stream.id, stream.attributes, names)
    gen = CodeGen(BASE_NAMESPACE)
    compiler = ExpressionCompiler(ctx, scope, gen)
    durations = tuple(ad.durations)
    if persisted_enabled(ad):  # Siddhi fills in hours below a coarsest-only list (persisted.py)
        durations = persisted_durations(durations)
    spec = AggSpec(ad.id, ad, stream, durations, None, None)

    # ---- input filters (no windows or stream functions feed an aggregation)
    conds = []
    for h in inp.handlers:
        if not isinstance(h, Filter):
            raise error_at("an aggregation input can only be filtered ([condition]), not windowed or "
                           "processed by a stream function", h)
        conds.append(compiler.compile_condition(h.expression, "filter"))
    if conds:
        spec.keep = gen.function("_agg_keep", "chunk",
                                 [f"return [e for e in chunk for d in (e.data,) if {' and '.join(conds)}]"])

    # ---- event time
    if ad.aggregate_by is not None:
        code, t = scope.resolve(ad.aggregate_by)
        if t not in (AttrType.LONG, AttrType.STRING):
            raise error_at(f"aggregate by '{ad.aggregate_by.attribute}' must be a long (epoch ms) or a "
                           f"string 'yyyy-MM-dd HH:mm:ss[ Z]', not {t.value}", ad.aggregate_by)
        spec.time_attribute, spec.time_type = ad.aggregate_by.attribute, t
        gen.ns["_parse_time"] = _cached_parse_time()
        if t is AttrType.LONG:
            time_lines = [f"ts = {code}", "if ts is None:",
                          "    raise ValueError('aggregation: the event has no timestamp')", "off = 0"]
        else:
            time_lines = [f"ts, off = _parse_time({code})"]
    else:
        time_lines = ["ts = e.timestamp", "off = 0"]

    # ---- group by
    key_codes = []
    for var in ad.selector.group_by:
        code, t = scope.resolve(var)
        if var.attribute in [n for n, _ in spec.group_by]:
            raise error_at(f"'{var.attribute}' is grouped by twice", var)
        spec.group_by.append((var.attribute, t))
        # Siddhi's group key is the values' text: -0.0 a group of its own, every NaN one group
        key_codes.append(f"{gen.ref(java_key, 'java_key')}({code})" if t in JAVA_KEYED else code)
    key_expr = "(" + "".join(c + ", " for c in key_codes) + ")"
    spec.locate = gen.function("_agg_locate", "e", ["d = e.data", *time_lines, f"return ts, off, {key_expr}"])

    # ---- select items
    sel = ad.selector
    if sel.attributes is None:
        raise error_at("an aggregation needs a select clause naming its attributes", sel)
    if sel.having is not None or sel.order_by or sel.limit is not None or sel.offset is not None:
        raise error_at("an aggregation's select cannot have having, order by, limit or offset", sel)
    latest_codes: list[str] = []
    base_codes: list[str] = []
    base_index: dict[tuple[str, Any], int] = {}
    taken: set[str] = {"AGG_TIMESTAMP", "AGG_TIMEZONE", "AGG_LAST_EVENT_TIMESTAMP"}

    def base(op: str, arg: Any, arg_code: str | None, arg_type: AttrType | None, stored: AttrType,
             prefix: str, fallback: str) -> int:
        k = (op, arg)
        if k in base_index:
            return base_index[k]
        name = prefix if arg is None else f"{prefix}_{_column_suffix(arg, fallback)}"
        while name in taken:
            name += "_"
        taken.add(name)
        base_index[k] = len(spec.bases)
        spec.bases.append(BaseColumn(name, op, stored, arg, arg_type))
        base_codes.append(arg_code or "")
        return base_index[k]

    group_names = [n for n, _ in spec.group_by]
    out_names: set[str] = set()
    for oa in sel.attributes:
        if not oa.rename:
            raise error_at("a select expression needs a name: add 'as <name>'", oa)
        if oa.rename in out_names or oa.rename == "AGG_TIMESTAMP":
            raise error_at(f"duplicate output attribute '{oa.rename}'", oa)
        out_names.add(oa.rename)
        expr = oa.expression
        if isinstance(expr, FunctionCall) and ctx.is_aggregator(expr.namespace, expr.name):
            spec.outputs.append(_aggregate_output(oa.rename, expr, compiler, base))
            continue
        _reject_nested_aggregates(expr, ctx)
        if isinstance(expr, Variable) and expr.attribute in group_names and expr.stream_index is None:
            i = group_names.index(expr.attribute)
            spec.outputs.append(OutputColumn(oa.rename, spec.group_by[i][1], "key", (i,)))
            continue
        c = compiler.compile(expr)
        if oa.rename in taken or oa.rename in group_names:
            raise error_at(f"output '{oa.rename}' clashes with a column of the aggregation's tables", oa)
        taken.add(oa.rename)
        spec.outputs.append(OutputColumn(oa.rename, c.type, "latest", (len(spec.latest),)))
        spec.latest.append((oa.rename, c.type))
        latest_codes.append(c.code)
    for name in group_names:
        taken.add(name)

    _generate_row_code(spec, gen, latest_codes, base_codes)
    return spec


def _reject_nested_aggregates(expr: Any, ctx: Any) -> None:
    if isinstance(expr, FunctionCall):
        if ctx.is_aggregator(expr.namespace, expr.name):
            raise error_at(f"'{expr.name}' must be a whole select item in an aggregation", expr)
        for a in expr.args:
            _reject_nested_aggregates(a, ctx)
        return
    for attr in ("left", "right", "expression"):
        sub = getattr(expr, attr, None)
        if sub is not None and not isinstance(sub, (str, int)):
            _reject_nested_aggregates(sub, ctx)


def _aggregate_output(name: str, call: FunctionCall, compiler: ExpressionCompiler, base: Any) -> OutputColumn:
    fname = call.name.lower() if not call.namespace else f"{call.namespace}:{call.name}"
    if fname not in _INCREMENTAL:
        raise error_at(f"'{call.name}' cannot be used in an incremental aggregation (supported: sum, "
                       f"count, avg, min, max, distinctCount)", call)
    args = [compiler.compile(a) for a in call.args]
    if fname == "count":
        if len(args) > 1:
            raise error_at("count() takes at most one argument", call)
        # Siddhi's CountIncrementalAttributeAggregator: count(x) "will be considered as count()"
        return OutputColumn(name, AttrType.LONG, "count", (base("count", None, None, None, AttrType.LONG,
                                                                    "AGG_COUNT", name),))
    if len(args) != 1:
        raise error_at(f"{call.name}() takes exactly one argument, {len(args)} given", call)
    arg, c = call.args[0], args[0]
    if fname == "distinctcount":
        i = base("distinct", arg, c.code, c.type, AttrType.STRING, "AGG_SET", name)
        return OutputColumn(name, AttrType.LONG, "distinctCount", (i,))
    if c.type not in _NUMERIC:
        raise error_at(f"{call.name}() needs a numeric argument, found {c.type.value}", call)
    integral = c.type in (AttrType.INT, AttrType.LONG)
    if fname == "sum":
        t = AttrType.LONG if integral else AttrType.DOUBLE
        return OutputColumn(name, t, "sum", (base("sum", arg, c.code, c.type, t, "AGG_SUM", name),))
    if fname == "avg":
        s = base("sum", arg, c.code, c.type, AttrType.LONG if integral else AttrType.DOUBLE, "AGG_SUM", name)
        # AvgIncrementalAttributeAggregator: AGG_SUM_x over AGG_COUNT, the count of every event
        n = base("count", None, None, None, AttrType.LONG, "AGG_COUNT", name)
        return OutputColumn(name, AttrType.DOUBLE, "avg", (s, n))
    op = fname
    return OutputColumn(name, c.type, op, (base(op, arg, c.code, c.type, c.type, f"AGG_{op.upper()}", name),))


def _cached_parse_time() -> Callable[[str], tuple[int, int]]:
    """parse_time with a one-entry cache: event streams repeat the same second often."""
    last: list[Any] = [None, None]

    def parse(text: str) -> tuple[int, int]:
        if text == last[0]:
            return last[1]
        if text is None:
            raise ValueError("aggregation: the event has no timestamp")
        got = parse_time(text)
        last[0], last[1] = text, got
        return got

    return parse


def _summed(base: BaseColumn, a: str, b: str, gen: CodeGen) -> str:
    """The code of ``a + b`` for a sum base value: a long sum wraps as Java's long does."""
    if base.type is AttrType.LONG:
        return f"{gen.ref(wrap_long, 'wrap_long')}({a} + {b})"
    return f"{a} + {b}"


def _set_element(b: BaseColumn, value: str, gen: CodeGen) -> str:
    """A distinctCount set's element: Siddhi's set is a ``HashSet`` of the boxed values."""
    return f"{gen.ref(java_key, 'java_key')}({value})" if b.arg_type in JAVA_KEYED else value


def _generate_row_code(spec: AggSpec, gen: CodeGen, latest_codes: list[str], base_codes: list[str]) -> None:
    n_latest = len(latest_codes)
    b0 = 2 + n_latest
    # fresh(e, ts, off): the row of a bucket holding only e
    fresh = ["d = e.data"]
    vals = ["ts", "off", *latest_codes]
    for i, (b, code) in enumerate(zip(spec.bases, base_codes, strict=True)):
        t = f"_v{i}"
        if b.op == "count":
            vals.append(code or "1")
            continue
        fresh.append(f"{t} = {code}")
        if b.op == "distinct":
            vals.append(f"(set() if {t} is None else {{{_set_element(b, t, gen)}}})")
        elif b.op == "sum" and b.type is AttrType.DOUBLE:
            # Siddhi's sum starts from 0.0: a bucket of one -0.0 sums to 0.0
            vals.append(f"(None if {t} is None else 0.0 + {t})")
        else:
            vals.append(t)
    fresh.append("return [" + ", ".join(vals) + "]")
    spec.fresh = gen.function("_agg_fresh", "e, ts, off", fresh)

    # absorb(row, e, ts, off): add e to a bucket row
    body = ["d = e.data", "if ts >= row[0]:", "    row[0] = ts", "    row[1] = off"]
    body += [f"    row[{2 + i}] = {c}" for i, c in enumerate(latest_codes)]
    for i, (b, code) in enumerate(zip(spec.bases, base_codes, strict=True)):
        k = b0 + i
        if b.op == "count":
            body.append(f"row[{k}] += {code or '1'}")
            continue
        body.append(f"v = {code}")
        body.append("if v is not None:")
        if b.op == "sum":
            start = "0.0 + v" if b.type is AttrType.DOUBLE else "v"
            body += [f"    r = row[{k}]", f"    row[{k}] = {start} if r is None else {_summed(b, 'r', 'v', gen)}"]
        elif b.op in ("min", "max"):
            cmp = "<" if b.op == "min" else ">"
            body += [f"    r = row[{k}]", f"    if r is None or v {cmp} r:", f"        row[{k}] = v"]
        else:
            body.append(f"    row[{k}].add({_set_element(b, 'v', gen)})")
    spec.absorb = gen.function("_agg_absorb", "row, e, ts, off", body)

    # merge(dst, src): combine two rows of the same bucket and key
    body = ["if src[0] >= dst[0]:", f"    dst[0:{b0}] = src[0:{b0}]"]
    for i, b in enumerate(spec.bases):
        k = b0 + i
        if b.op == "count":
            body.append(f"dst[{k}] += src[{k}]")
            continue
        body += [f"s = src[{k}]", "if s is not None:", f"    r = dst[{k}]"]
        if b.op == "sum":
            body.append(f"    dst[{k}] = s if r is None else {_summed(b, 'r', 's', gen)}")
        elif b.op in ("min", "max"):
            cmp = "<" if b.op == "min" else ">"
            body += [f"    if r is None or s {cmp} r:", f"        dst[{k}] = s"]
        else:
            body.append(f"    dst[{k}] = r | s")
    spec.merge = gen.function("_agg_merge", "dst, src", body)

    distinct = [b0 + i for i, b in enumerate(spec.bases) if b.op == "distinct"]
    copy = ["r = list(row)", *[f"r[{k}] = set(r[{k}])" for k in distinct], "return r"]
    spec.copy_row = gen.function("_agg_copy", "row", copy)

    # finalize(start, key, row): the attributes joins and on-demand queries read
    outs = ["start"]
    for o in spec.outputs:
        if o.kind == "key":
            i = o.refs[0]
            outs.append(f"{gen.ref(key_value, 'key_value')}(key[{i}])" if spec.group_by[i][1] in JAVA_KEYED else f"key[{i}]")
        elif o.kind == "latest":
            outs.append(f"row[{2 + o.refs[0]}]")
        elif o.kind == "avg":
            s, n = (b0 + r for r in o.refs)
            outs.append(f"(None if not row[{n}] or row[{s}] is None else row[{s}] / row[{n}])")
        elif o.kind == "distinctCount":
            outs.append(f"len(row[{b0 + o.refs[0]}])")
        else:
            outs.append(f"row[{b0 + o.refs[0]}]")
    spec.finalize = gen.function("_agg_finalize", "start, key, row", ["return (" + ", ".join(outs) + ",)"])
