"""An aggregation's per-event expressions as Spark SQL, so that backfill rows never leave the JVM.

:func:`plan_columns` turns every per-event expression of an aggregation (input filters, event
time, group-by keys, latest-value expressions, base-value inputs) into a Spark SQL expression
with the live engine's semantics (:mod:`engine.expression`, :mod:`engine.types`):

* types follow Siddhi's promotion (``int < long < float < double``); float arithmetic is
  32-bit (Spark's ``FloatType`` arithmetic is IEEE binary32, which equals the engine's
  ``f32(a op b)`` of 32-bit operands); int and long arithmetic wraps around as Java's (the
  session runs with ANSI mode off);
* integer ``/`` truncates toward zero (``div``), ``%`` keeps the dividend's sign (Spark's
  ``%`` is Java's); ``/`` and ``%`` by zero are null for every type (Siddhi's executors);
* a null operand makes arithmetic null, ``!=`` true and the other comparisons false; an int or
  long compared with a float compares as floats, with a double as doubles; NaN equals nothing;
  ``and``/``or``/``not``, filters and bool functions treat null as false;
* constants are folded by the engine's own compiler, so they are the engine's values;
* a time string ``yyyy-MM-dd HH:mm:ss[.SSS][ Z]`` is parsed with the regular expression of
  :func:`engine.aggregation.buckets.parse_time`, with the same range checks; an event whose
  time is missing or malformed is dropped, as the live engine drops it.

What has no exact Spark SQL equivalent (a Python script function, an extension without a
translation, ``convert``, ``in Table``, ``eventTimestamp()``) is computed by the engine's own compiled code over Arrow batches
(``mapInArrow``); see :mod:`.backfill`.  Each :class:`Item` says which path it took and why.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from srota.engine.types import compared_as_float, math_type
from srota.grammar.model import (
    And,
    AttrType,
    Compare,
    Constant,
    Expression,
    Filter,
    FunctionCall,
    In,
    IsNull,
    IsNullStream,
    MathOp,
    MathOperator,
    Not,
    Or,
    TimeConstant,
    Variable,
)

SPARK_SQL = "Spark SQL"
PYTHON = "Python (Arrow, mapInArrow)"

_SQL_TYPE = {AttrType.STRING: "STRING", AttrType.INT: "INT", AttrType.LONG: "BIGINT",
             AttrType.FLOAT: "FLOAT", AttrType.DOUBLE: "DOUBLE", AttrType.BOOL: "BOOLEAN"}
_INTEGRAL = (AttrType.INT, AttrType.LONG)
_FLOATING = (AttrType.FLOAT, AttrType.DOUBLE)

# parse_time's pattern (engine/aggregation/buckets.py) without the '**' wildcards, in Java syntax
_TIME_RE = (r"(?i)^\\s*(\\d{4})-(\\d{1,2})-(\\d{1,2})\\s+(\\d{1,2}):(\\d{1,2}):(\\d{1,2})(?:\\.(\\d{1,3}))?"
            r"\\s*(Z|GMT|UTC|[+-]\\d{2}:?\\d{2})?\\s*$")


class Untranslatable(Exception):
    """The expression has no exact Spark SQL equivalent; the reason is the message."""


@dataclass
class Item:
    """One per-event expression of the aggregation and the path it takes."""

    kind: str  # filter | time | key | latest | base
    index: int
    label: str  # for the job output: "filter [volume > 0]"
    node: Any  # the grammar expression (None for count())
    type: AttrType | None  # None for filters only (they make no column)
    sql: str | None = None  # the Spark SQL of its raw value; None: computed in Python
    reason: str = ""

    @property
    def path(self) -> str:
        return SPARK_SQL if self.sql is not None else PYTHON

    @property
    def column(self) -> str:
        """The column holding the raw value when it is computed in Python."""
        return f"__py_{self.kind}{self.index}"


def sql_type(t: AttrType) -> str:
    """Spark SQL type name of an attribute type."""
    if t not in _SQL_TYPE:
        raise ValueError(f"attributes of type {t.value} cannot be backfilled")
    return _SQL_TYPE[t]


def quote_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def literal(value: Any, t: AttrType) -> str:
    """A Spark SQL literal of the engine's value ``value`` typed ``t``."""
    if value is None:
        return f"CAST(NULL AS {sql_type(t)})"
    if t is AttrType.BOOL:
        return "true" if value else "false"
    if t is AttrType.STRING:
        return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"
    if t is AttrType.INT:
        if not -2 ** 31 <= value < 2 ** 31:
            raise Untranslatable(f"int constant {value} out of range")
        return f"CAST({int(value)} AS INT)"
    if t is AttrType.LONG:
        if not -2 ** 63 <= value < 2 ** 63:
            raise Untranslatable(f"long constant {value} out of range")
        return f"CAST({int(value)} AS BIGINT)"
    if t in _FLOATING:
        f = float(value)
        text = "NaN" if f != f else ("Infinity" if f == float("inf") else "-Infinity" if f == float("-inf")
                                     else repr(f))
        return f"CAST('{text}' AS {sql_type(t)})"  # Java's parse of repr() is exact
    raise Untranslatable(f"constants of type {t.value}")


def show(e: Any) -> str:
    """Compact SiddhiQL text of an expression (for the job output)."""
    if isinstance(e, Constant):
        return repr(e.value) if e.type is AttrType.STRING else str(e.value).lower() if isinstance(e.value, bool) \
            else str(e.value) + ("L" if e.type is AttrType.LONG else "f" if e.type is AttrType.FLOAT else "")
    if isinstance(e, TimeConstant):
        return f"{e.millis} ms"
    if isinstance(e, Variable):
        return f"{e.stream_id}.{e.attribute}" if e.stream_id else e.attribute
    if isinstance(e, MathOp):
        return f"{show(e.left)} {e.op.value} {show(e.right)}"
    if isinstance(e, Compare):
        return f"{show(e.left)} {e.op.value} {show(e.right)}"
    if isinstance(e, And):
        return f"({show(e.left)} and {show(e.right)})"
    if isinstance(e, Or):
        return f"({show(e.left)} or {show(e.right)})"
    if isinstance(e, Not):
        return f"not {show(e.expression)}"
    if isinstance(e, IsNull):
        return f"{show(e.expression)} is null"
    if isinstance(e, FunctionCall):
        name = f"{e.namespace}:{e.name}" if e.namespace else e.name
        return f"{name}({', '.join(show(a) for a in e.args)})"
    if isinstance(e, In):
        return f"{show(e.expression)} in {e.source_id}"
    return type(e).__name__


class Translator:
    """Spark SQL for expressions over one stream, typed and folded by the engine's compiler."""

    def __init__(self, compiler: Any, attribute_names: list[str]) -> None:
        self.compiler = compiler
        self.names = set(attribute_names)

    def raw(self, e: Expression) -> tuple[str, AttrType]:
        """``(sql, type)`` of ``e``'s value; raises :class:`Untranslatable`."""
        c = self.compiler.compile(e)
        if c.type not in _SQL_TYPE:
            raise Untranslatable(f"values of type {c.type.value}")
        if c.constant:
            return literal(c.value, c.type), c.type
        method = getattr(self, "_t_" + type(e).__name__, None)
        if method is None:
            raise Untranslatable(f"{type(e).__name__} has no Spark SQL translation")
        return method(e, c.type), c.type

    def condition(self, e: Expression) -> str:
        """A boolean expression that is never null (null counts as false, as in the engine)."""
        sql, t = self.raw(e)
        if t is not AttrType.BOOL:
            raise Untranslatable("not a condition")
        return f"coalesce({sql}, false)"

    def _cast(self, e: Expression, t: AttrType) -> str:
        sql, have = self.raw(e)
        return sql if have is t else f"CAST({sql} AS {sql_type(t)})"

    # ---------------------------------------------------------------- nodes
    def _t_Variable(self, e: Variable, t: AttrType) -> str:
        if e.stream_index is not None or e.is_inner or e.is_fault or e.attribute not in self.names:
            raise Untranslatable(f"'{show(e)}' is not an attribute of the input stream")
        return quote_ident(e.attribute)

    def _t_MathOp(self, e: MathOp, t: AttrType) -> str:
        """Siddhi's arithmetic (engine/expression.py): a zero divisor makes ``/`` and ``%`` null
        for every type, int and long wrap around (Spark's non-ANSI arithmetic is Java's), and a
        float operation converts each operand to float first."""
        op = e.op
        a, b = self._operand(e.left, t), self._operand(e.right, t)
        if op in (MathOperator.DIVIDE, MathOperator.MOD):
            # null, not an error or Infinity, whatever spark.sql.ansi.enabled says
            b = f"NULLIF({b}, 0)"
        if t in _INTEGRAL and op is MathOperator.DIVIDE:
            if t is AttrType.INT:  # MIN / -1 wraps to MIN, as Java's int division
                return f"CAST((CAST({a} AS BIGINT) div CAST({b} AS BIGINT)) AS INT)"
            return f"({a} div {b})"
        if t is AttrType.FLOAT and op in (MathOperator.DIVIDE, MathOperator.MOD):
            # Spark divides floats as doubles: the engine's f32(a / b) of 32-bit operands.
            return f"CAST((CAST({a} AS DOUBLE) {op.value} CAST({b} AS DOUBLE)) AS FLOAT)"
        return f"({a} {op.value} {b})"

    def _operand(self, e: Expression, t: AttrType) -> str:
        """``e`` converted to the operation's type ``t`` as the engine converts it: an int or a
        long becomes a float through a double (the engine's ``f32(float(v))``; and Spark's
        optimizer folds ``CAST(CAST(int AS FLOAT) AS DOUBLE)`` into ``CAST(int AS DOUBLE)``,
        which loses the rounding a comparison with a float needs)."""
        sql, have = self.raw(e)
        if have is t:
            return sql
        if t is AttrType.FLOAT and have in _INTEGRAL:
            return f"CAST(CAST({sql} AS DOUBLE) AS FLOAT)"
        return f"CAST({sql} AS {sql_type(t)})"

    def _t_Compare(self, e: Compare, t: AttrType) -> str:
        """Siddhi's comparisons: a null operand makes ``!=`` true and the others false; an int or
        long against a float compares as floats (but ``==`` and ``!=`` of a long and a float as
        doubles), anything against a double as doubles; NaN
        equals nothing and orders with nothing (Spark's NaN equals itself and sorts last)."""
        lt = self.compiler.compile(e.left).type
        rt = self.compiler.compile(e.right).type
        if AttrType.OBJECT in (lt, rt):
            raise Untranslatable("comparison of object values")
        if lt in _INTEGRAL + _FLOATING and rt in _INTEGRAL + _FLOATING:
            ct = math_type(lt, rt)
            equality = e.op.value in ("==", "!=")
            if ct is AttrType.FLOAT and lt is not rt and not (compared_as_float(lt, rt, equality)
                                                              or compared_as_float(rt, lt, equality)):
                ct = AttrType.DOUBLE  # (a long against a float in == and !=: doubleValue() of each)
            a, b = self._operand(e.left, ct), self._operand(e.right, ct)
            if ct in _FLOATING:
                # a float is exactly a double: compare as doubles, NaN as null
                a = f"nanvl(CAST({a} AS DOUBLE), CAST(NULL AS DOUBLE))"
                b = f"nanvl(CAST({b} AS DOUBLE), CAST(NULL AS DOUBLE))"
        else:
            a, b = self.raw(e.left)[0], self.raw(e.right)[0]
        if e.op.value == "!=":
            return f"(NOT coalesce(({a} = {b}), false))"
        op = "=" if e.op.value == "==" else e.op.value
        return f"coalesce(({a} {op} {b}), false)"

    def _t_And(self, e: And, t: AttrType) -> str:
        return f"({self.condition(e.left)} AND {self.condition(e.right)})"

    def _t_Or(self, e: Or, t: AttrType) -> str:
        return f"({self.condition(e.left)} OR {self.condition(e.right)})"

    def _t_Not(self, e: Not, t: AttrType) -> str:
        return f"(NOT {self.condition(e.expression)})"

    def _t_IsNull(self, e: IsNull, t: AttrType) -> str:
        return f"({self.raw(e.expression)[0]} IS NULL)"

    def _t_IsNullStream(self, e: IsNullStream, t: AttrType) -> str:
        raise Untranslatable("stream references")

    def _function(self, e: FunctionCall, t: AttrType) -> str:
        name = e.name if not e.namespace else f"{e.namespace}:{e.name}"
        args = e.args
        if name == "coalesce":
            return f"coalesce({', '.join(self._cast(a, t) for a in args)})"
        if name == "default" and len(args) == 2:
            return f"coalesce({self._cast(args[0], t)}, {self._cast(args[1], t)})"
        if name == "ifThenElse" and len(args) == 3:
            return (f"(CASE WHEN {self.condition(args[0])} THEN {self._cast(args[1], t)} "
                    f"ELSE {self._cast(args[2], t)} END)")
        raise Untranslatable(f"function '{name}' has no Spark SQL translation")

    def _t_FunctionCall(self, e: FunctionCall, t: AttrType) -> str:
        sql = self._function(e, t)
        # Siddhi wraps a bool function in a BoolConditionExpressionExecutor: null is false
        return f"coalesce({sql}, false)" if t is AttrType.BOOL else sql


# ---------------------------------------------------------------------------- the aggregation
def event_time_sql(column: str, t: AttrType) -> tuple[str, str]:
    """``(epoch ms, UTC offset ms)`` of the ``aggregate by`` attribute; null when unusable."""
    col = quote_ident(column)
    if t is AttrType.LONG:
        return col, "0L"

    def g(i: int) -> str:
        return f"regexp_extract({col}, '{_TIME_RE}', {i})"

    def num(i: int) -> str:
        return f"CAST({g(i)} AS INT)"

    y, mo, d, h, mi, s = (num(i) for i in range(1, 7))
    millis = f"CAST(rpad(if({g(7)} = '', '0', {g(7)}), 3, '0') AS INT)"
    z = f"upper({g(8)})"
    zd = f"replace({g(8)}, ':', '')"
    off = (f"(CASE WHEN {z} IN ('', 'Z', 'GMT', 'UTC') THEN 0L ELSE "
           f"(if(substr({zd}, 1, 1) = '-', -1L, 1L) * (CAST(substr({zd}, 2, 2) AS BIGINT) * 3600000L "
           f"+ CAST(substr({zd}, 4, 2) AS BIGINT) * 60000L)) END)")
    valid = (f"({col} RLIKE '{_TIME_RE}' AND {mo} BETWEEN 1 AND 12 AND {d} BETWEEN 1 AND 31 "
             f"AND {h} < 24 AND {mi} < 60 AND {s} < 60)")
    # days of the civil date as parse_time counts them (day 31 of a short month runs on)
    days = f"(CAST(datediff(make_date({y}, {mo}, 1), DATE'1970-01-01') AS BIGINT) + {d} - 1)"
    local = f"({days} * 86400000L + ((CAST({h} AS BIGINT) * 60 + {mi}) * 60 + {s}) * 1000 + {millis})"
    ts = f"(CASE WHEN {valid} THEN {local} - {off} END)"
    return ts, f"(CASE WHEN {valid} THEN {off} END)"


def plan_items(spec: Any, ctx: Any) -> list[Item]:
    """Every per-event expression of ``spec``, translated where Spark SQL can do it exactly."""
    from srota.engine.codegen import CodeGen
    from srota.engine.expression import BASE_NAMESPACE, ExpressionCompiler
    from srota.engine.scope import StreamScope

    ad = spec.definition
    inp = ad.input
    names = [inp.reference_id] if inp.reference_id else []
    scope = StreamScope(spec.stream.id, spec.stream.attributes, names)
    compiler = ExpressionCompiler(ctx, scope, CodeGen(BASE_NAMESPACE))
    tr = Translator(compiler, [a.name for a in spec.stream.attributes])
    items: list[Item] = []

    def add(kind: str, i: int, label: str, node: Any, t: AttrType | None, condition: bool = False) -> None:
        item = Item(kind, i, label, node, t)
        try:
            item.sql = tr.condition(node) if condition else tr.raw(node)[0]
        except Untranslatable as exc:
            item.reason = str(exc)
        items.append(item)

    for i, h in enumerate(h for h in inp.handlers if isinstance(h, Filter)):
        add("filter", i, f"filter [{show(h.expression)}]", h.expression, AttrType.BOOL, condition=True)
    if spec.time_attribute is not None:
        items.append(Item("time", 0, f"event time {spec.time_attribute} ({spec.time_type.value})", None,
                          spec.time_type, sql="parsed"))
    for i, var in enumerate(ad.selector.group_by):
        add("key", i, f"group by {show(var)}", var, spec.group_by[i][1])
    latest_nodes = {oa.rename: oa.expression for oa in ad.selector.attributes or ()}
    for i, (name, t) in enumerate(spec.latest):
        add("latest", i, f"latest value {name} = {show(latest_nodes[name])}", latest_nodes[name], t)
    for i, b in enumerate(spec.bases):
        if b.arg is None:
            items.append(Item("base", i, f"base {b.name} = count()", None, None, sql="1L"))
            continue
        add("base", i, f"base {b.name} = {b.op}({show(b.arg)})", b.arg, b.arg_type)
    return items
