"""Build Siddhi apps as Python objects (Siddhi's query API, in Python style).

    from srota.query import App, Query, Stream, col, lit, fn, window

    app = (App("Alerts")
           .stream(Stream("Readings").attr("device", "string").attr("temp", "double"))
           .query(Query.from_("Readings").filter(col("temp") > 40)
                  .window(window("time", "10 sec"))
                  .select(col("device"), fn("avg", col("temp")).as_("avgTemp"))
                  .group_by("device")
                  .insert_into("Alerts")
                  .named("hot")))
    print(app.to_siddhiql())          # SiddhiQL text
    runtime = SiddhiManager().create_siddhi_app_runtime(app)

Every builder makes the same frozen model objects the parser makes (``srota.grammar.model``),
so ``App.from_siddhiql(text).to_siddhiql()`` round-trips and a built app runs exactly like the
same text.  Expressions: :func:`col` (``col("price")``, ``col("e1.price")``), :func:`lit`,
:func:`fn`, :func:`time` and Python operators (``+ - * / %``, ``== != < <= > >=``, ``&`` for
``and``, ``|`` for ``or``, ``~`` for ``not``), ``.is_null()``, ``.in_(table)``,
``.as_(name)`` in a select.  Patterns and sequences: :func:`pattern`, :func:`sequence` over
:func:`event` states, with ``.followed_by()``/``>>``, ``every()``, ``count()``, ``absent()``,
``and_()``/``or_()``.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any, Union

from srota.grammar import model as m
from srota.grammar.render import render

__all__ = [
    "Aggregation", "App", "Expr", "Function", "Partition", "Query", "State", "Stream", "Table", "Trigger",
    "Window", "absent", "annotation", "col", "event", "every", "fn", "lit", "pattern", "sequence", "time", "window",
]

ExprLike = Union["Expr", m.Expression, int, float, str, bool]
_TYPES = {t.value: t for t in m.AttrType}
_UNITS = {"ms": 1, "millisec": 1, "millisecond": 1, "milliseconds": 1, "sec": 1000, "second": 1000,
          "seconds": 1000, "min": 60_000, "minute": 60_000, "minutes": 60_000, "hour": 3_600_000,
          "hours": 3_600_000, "day": 86_400_000, "days": 86_400_000, "week": 604_800_000, "weeks": 604_800_000}


# ------------------------------------------------------------------------------------ expressions
class Expr:
    """An expression under construction; ``.node`` is the model expression."""

    __slots__ = ("node", "alias")

    def __init__(self, node: m.Expression, alias: str | None = None) -> None:
        self.node = node
        self.alias = alias

    def _bin(self, op: m.MathOperator, other: ExprLike, swap: bool = False) -> Expr:
        a, b = self.node, _expr(other)
        return Expr(m.MathOp(op, b, a) if swap else m.MathOp(op, a, b))

    def __add__(self, o: ExprLike) -> Expr: return self._bin(m.MathOperator.ADD, o)
    def __radd__(self, o: ExprLike) -> Expr: return self._bin(m.MathOperator.ADD, o, True)
    def __sub__(self, o: ExprLike) -> Expr: return self._bin(m.MathOperator.SUBTRACT, o)
    def __rsub__(self, o: ExprLike) -> Expr: return self._bin(m.MathOperator.SUBTRACT, o, True)
    def __mul__(self, o: ExprLike) -> Expr: return self._bin(m.MathOperator.MULTIPLY, o)
    def __rmul__(self, o: ExprLike) -> Expr: return self._bin(m.MathOperator.MULTIPLY, o, True)
    def __truediv__(self, o: ExprLike) -> Expr: return self._bin(m.MathOperator.DIVIDE, o)
    def __rtruediv__(self, o: ExprLike) -> Expr: return self._bin(m.MathOperator.DIVIDE, o, True)
    def __mod__(self, o: ExprLike) -> Expr: return self._bin(m.MathOperator.MOD, o)

    def _cmp(self, op: m.CompareOperator, other: ExprLike) -> Expr:
        return Expr(m.Compare(self.node, op, _expr(other)))

    def __eq__(self, o: object) -> Expr: return self._cmp(m.CompareOperator.EQ, o)  # type: ignore[override,arg-type]
    def __ne__(self, o: object) -> Expr: return self._cmp(m.CompareOperator.NE, o)  # type: ignore[override,arg-type]
    def __lt__(self, o: ExprLike) -> Expr: return self._cmp(m.CompareOperator.LT, o)
    def __le__(self, o: ExprLike) -> Expr: return self._cmp(m.CompareOperator.LE, o)
    def __gt__(self, o: ExprLike) -> Expr: return self._cmp(m.CompareOperator.GT, o)
    def __ge__(self, o: ExprLike) -> Expr: return self._cmp(m.CompareOperator.GE, o)
    def __and__(self, o: ExprLike) -> Expr: return Expr(m.And(self.node, _expr(o)))
    def __or__(self, o: ExprLike) -> Expr: return Expr(m.Or(self.node, _expr(o)))
    def __invert__(self) -> Expr: return Expr(m.Not(self.node))
    __hash__ = None  # type: ignore[assignment]  # == builds an expression

    def is_null(self) -> Expr:
        return Expr(m.IsNull(self.node))

    def in_(self, table: str) -> Expr:
        """``self in Table``."""
        return Expr(m.In(self.node, table))

    def as_(self, name: str) -> Expr:
        """Name this expression in a select."""
        return Expr(self.node, name)

    def __repr__(self) -> str:
        from srota.grammar.render import render_expression
        return f"Expr({render_expression(self.node)})"


def _expr(value: ExprLike) -> m.Expression:
    if isinstance(value, Expr):
        return value.node
    if isinstance(value, bool):
        return m.Constant(value, m.AttrType.BOOL)
    if isinstance(value, int):
        return m.Constant(value, m.AttrType.INT if -2**31 <= value < 2**31 else m.AttrType.LONG)
    if isinstance(value, float):
        return m.Constant(value, m.AttrType.DOUBLE)
    if isinstance(value, str):
        return m.Constant(value, m.AttrType.STRING)
    return value  # already a model expression


def col(name: str) -> Expr:
    """An attribute: ``col("price")``, ``col("S.price")``, ``col("e1[last].price")``."""
    ref, _, attr = name.rpartition(".")
    if not ref:
        return Expr(m.Variable(attr))
    index: int | None = None
    if ref.endswith("]") and "[" in ref:
        ref, _, idx = ref[:-1].partition("[")
        index = m.LastIndex(int(idx[5:] or 0)) if idx.startswith("last") else int(idx)
    inner, fault = ref.startswith("#"), ref.startswith("!")
    return Expr(m.Variable(attr, ref.lstrip("#!"), index, inner, fault))


def lit(value: Any, type: str | None = None) -> Expr:
    """A constant; ``type`` forces ``long``, ``float`` ... (``lit(5, "long")`` is ``5L``)."""
    if type is None:
        return Expr(_expr(value))
    return Expr(m.Constant(value, _TYPES[type]))


def fn(name: str, *args: ExprLike, star: bool = False) -> Expr:
    """A function call: ``fn("avg", col("price"))``, ``fn("str:concat", a, b)``, ``fn("count")``."""
    ns, _, local = name.rpartition(":")
    return Expr(m.FunctionCall(ns, local, tuple(_expr(a) for a in args), star))


def time(text: str | int) -> Expr:
    """A time value: ``time("1 min 30 sec")`` or milliseconds."""
    return Expr(m.TimeConstant(_millis(text)))


def _millis(value: str | int) -> int:
    if isinstance(value, int):
        return value
    parts, total = value.split(), 0
    for i in range(0, len(parts) - 1, 2):
        total += int(parts[i]) * _UNITS[parts[i + 1].lower()]
    if len(parts) % 2:
        raise ValueError(f"'{value}' is not a time value such as '1 min 30 sec'")
    return total


def window(name: str, *args: ExprLike) -> m.WindowHandler:
    """``#window.name(args)``; a string argument with a time unit is a time (``"10 sec"``)."""
    ns, _, local = name.rpartition(":")
    return m.WindowHandler(ns, local, tuple(_window_arg(a) for a in args))


def _window_arg(value: ExprLike) -> m.Expression:
    if isinstance(value, str) and value.split()[-1].lower() in _UNITS and value.split()[0].isdigit():
        return m.TimeConstant(_millis(value))
    return _expr(value)


def _annotation(annotation: str, *positional: str, **options: Any) -> m.Annotation:
    nested = tuple(v for v in options.pop("_nested", ()) if isinstance(v, m.Annotation))
    els = [m.AnnotationElement(None, str(p)) for p in positional]
    els += [m.AnnotationElement(k.replace("__", "."), str(v).lower() if isinstance(v, bool) else str(v))
            for k, v in options.items()]
    return m.Annotation(annotation, tuple(els), nested)


def annotation(name: str, *positional: str, nested: Iterable[m.Annotation] = (), **options: Any) -> m.Annotation:
    """An annotation to nest in another, as Siddhi's ``Annotation.annotation("map").element(...)``:
    ``annotate("sink", type="kafka", nested=[annotation("map", type="json")])``.  Keys as in
    :meth:`annotate` (``jdbc__url`` is ``jdbc.url``)."""
    return _annotation(name, *positional, _nested=tuple(nested), **options)


class _Annotated:
    def __init__(self) -> None:
        self.annotations: list[m.Annotation] = []

    def annotate(self, annotation: str, *positional: str, nested: Iterable[m.Annotation] = (), **options: Any) -> Any:
        """Add ``@annotation(...)``; ``jdbc__url='...'`` style keys become ``jdbc.url``."""
        self.annotations.append(_annotation(annotation, *positional, _nested=tuple(nested), **options))
        return self


# ------------------------------------------------------------------------------------ definitions
class _Attributes(_Annotated):
    def __init__(self, id: str) -> None:
        super().__init__()
        self.id = id
        self.attributes: list[m.Attribute] = []

    def attr(self, name: str, type: str) -> Any:
        """Add an attribute (``string int long float double bool object``)."""
        self.attributes.append(m.Attribute(name, _TYPES[type]))
        return self


class Stream(_Attributes):
    """``define stream``."""

    def build(self) -> m.StreamDefinition:
        return m.StreamDefinition(self.id, tuple(self.attributes), tuple(self.annotations))


class Table(_Attributes):
    """``define table`` (``.annotate("PrimaryKey", "symbol")``, ``.annotate("store", type="rdbms", ...)``)."""

    def build(self) -> m.TableDefinition:
        return m.TableDefinition(self.id, tuple(self.attributes), tuple(self.annotations))


class Window(_Attributes):
    """``define window W (...) <window> output <type> events``."""

    def __init__(self, id: str, handler: m.WindowHandler, output: str = "all") -> None:
        super().__init__(id)
        self.handler = handler
        self.output = m.OutputEventType(output)

    def build(self) -> m.WindowDefinition:
        return m.WindowDefinition(self.id, tuple(self.attributes), self.handler, self.output, tuple(self.annotations))


class Trigger(_Annotated):
    """``define trigger T at 'start' | every <time> | '<cron>'``."""

    def __init__(self, id: str, at: str | None = None, every: str | int | None = None) -> None:
        super().__init__()
        self.id, self.at, self.every = id, at, every

    def build(self) -> m.TriggerDefinition:
        return m.TriggerDefinition(self.id, self.at, _millis(self.every) if self.every is not None else None,
                                   tuple(self.annotations))


class Function(_Annotated):
    """``define function f[language] return type { body }``."""

    def __init__(self, id: str, language: str, returns: str, body: str) -> None:
        super().__init__()
        self.id, self.language, self.returns, self.body = id, language, returns, body

    def build(self) -> m.FunctionDefinition:
        return m.FunctionDefinition(self.id, self.language, _TYPES[self.returns], self.body, tuple(self.annotations))


# ------------------------------------------------------------------------------------ queries
def _stream_input(source: str | m.SingleInputStream) -> m.SingleInputStream:
    if isinstance(source, m.SingleInputStream):
        return source
    return m.SingleInputStream(source.lstrip("#!"), is_inner=source.startswith("#"), is_fault=source.startswith("!"))


def _selector(items: Iterable[ExprLike | str]) -> tuple[m.OutputAttribute, ...]:
    out = []
    for item in items:
        e = col(item) if isinstance(item, str) else item if isinstance(item, Expr) else Expr(_expr(item))
        name = e.alias
        if name is None:
            if not isinstance(e.node, m.Variable):
                raise ValueError("name a computed select item with .as_('name')")
            name = e.node.attribute
        out.append(m.OutputAttribute(name, e.node))
    return tuple(out)


class Query(_Annotated):
    """A query: ``Query.from_("S")...insert_into("O")`` (see the module docstring)."""

    def __init__(self, input: m.InputStream) -> None:
        super().__init__()
        self.input = input
        self._selector = m.Selector()
        self.output: m.OutputStream = m.ReturnStream()
        self.rate: m.OutputRate | None = None

    # inputs
    @classmethod
    def from_(cls, stream: str | m.SingleInputStream, alias: str | None = None) -> Query:
        s = _stream_input(stream)
        return cls(replace(s, reference_id=alias) if alias else s)

    @classmethod
    def join(cls, left: str | m.SingleInputStream, right: str | m.SingleInputStream, on: ExprLike | None = None,
             kind: str = "join", unidirectional: str | None = None, within: Iterable[ExprLike] = (),
             per: ExprLike | None = None) -> Query:
        """``kind``: ``join``, ``left outer``, ``right outer`` or ``full outer``;
        ``unidirectional``: ``left`` or ``right``."""
        join_type = {"join": m.JoinType.JOIN, "inner": m.JoinType.JOIN, "left outer": m.JoinType.LEFT_OUTER,
                     "right outer": m.JoinType.RIGHT_OUTER, "full outer": m.JoinType.FULL_OUTER}[kind]
        trigger = m.JoinTrigger(unidirectional) if unidirectional else m.JoinTrigger.ALL
        return cls(m.JoinInputStream(_stream_input(left), join_type, _stream_input(right),
                                     _expr(on) if on is not None else None, trigger,
                                     tuple(_expr(w) for w in within), _expr(per) if per is not None else None))

    @classmethod
    def from_pattern(cls, state: m.StateInputStream) -> Query:
        return cls(state)

    def _single(self) -> m.SingleInputStream:
        if not isinstance(self.input, m.SingleInputStream):
            raise ValueError("filters, stream functions and windows go on a single-stream input; build joined "
                             "sides with stream(...)")
        return self.input

    def filter(self, condition: ExprLike) -> Query:
        s = self._single()
        self.input = replace(s, handlers=(*s.handlers, m.Filter(_expr(condition))))
        return self

    def window(self, handler: m.WindowHandler) -> Query:
        s = self._single()
        self.input = replace(s, handlers=(*s.handlers, handler))
        return self

    def function(self, name: str, *args: ExprLike) -> Query:
        ns, _, local = name.rpartition(":")
        s = self._single()
        self.input = replace(s, handlers=(*s.handlers, m.StreamFunction(ns, local, tuple(_expr(a) for a in args))))
        return self

    # selector
    def select(self, *items: ExprLike | str) -> Query:
        self._selector = replace(self._selector, attributes=_selector(items) if items else None)
        return self

    def group_by(self, *names: str) -> Query:
        self._selector = replace(self._selector, group_by=tuple(col(n).node for n in names))  # type: ignore[misc]
        return self

    def having(self, condition: ExprLike) -> Query:
        self._selector = replace(self._selector, having=_expr(condition))
        return self

    def order_by(self, *names: str) -> Query:
        """``order_by("price desc", "symbol")``."""
        items = []
        for n in names:
            name, _, order = n.partition(" ")
            items.append(m.OrderByAttribute(col(name).node, m.Order(order or "asc")))  # type: ignore[arg-type]
        self._selector = replace(self._selector, order_by=tuple(items))
        return self

    def limit(self, n: int) -> Query:
        self._selector = replace(self._selector, limit=_expr(n))
        return self

    def offset(self, n: int) -> Query:
        self._selector = replace(self._selector, offset=_expr(n))
        return self

    # output
    def output_every(self, what: str | int, rate: str = "all") -> Query:
        """``output [all|first|last] every N events | <time>``; ``rate='snapshot'`` for snapshots."""
        if rate == "snapshot":
            self.rate = m.SnapshotOutputRate(_millis(what))
        elif isinstance(what, int) or str(what).endswith("events"):
            self.rate = m.EventOutputRate(int(str(what).split()[0]), m.RateType(rate))
        else:
            self.rate = m.TimeOutputRate(_millis(what), m.RateType(rate))
        return self

    def insert_into(self, target: str, events: str = "current") -> Query:
        self.output = m.InsertIntoStream(target.lstrip("#!"), m.OutputEventType(events), target.startswith("#"),
                                         target.startswith("!"))
        return self

    def delete(self, table: str, on: ExprLike) -> Query:
        self.output = m.DeleteStream(table, _expr(on))
        return self

    def update(self, table: str, on: ExprLike, **set: ExprLike) -> Query:
        self.output = m.UpdateStream(table, _expr(on), _sets(table, set))
        return self

    def update_or_insert(self, table: str, on: ExprLike, **set: ExprLike) -> Query:
        self.output = m.UpdateOrInsertStream(table, _expr(on), _sets(table, set))
        return self

    def named(self, name: str) -> Query:
        """``@info(name='...')``."""
        return self.annotate("info", name=name)

    def build(self) -> m.Query:
        return m.Query(self.input, self._selector, self.output, self.rate, tuple(self.annotations))


def _sets(table: str, values: dict[str, ExprLike]) -> tuple[m.SetAttribute, ...]:
    return tuple(m.SetAttribute(m.Variable(k, table), _expr(v)) for k, v in values.items())


# ------------------------------------------------------------------------------------ patterns
class State:
    """A pattern or sequence state; combine with ``>>`` (followed by), ``&``, ``|``."""

    __slots__ = ("node",)

    def __init__(self, node: m.StateElement) -> None:
        self.node = node

    def followed_by(self, other: State) -> State:
        return State(m.NextStateElement(self.node, other.node))

    __rshift__ = followed_by

    def and_(self, other: State) -> State:
        return State(m.LogicalStateElement(self.node, m.LogicalOperator.AND, other.node))

    def or_(self, other: State) -> State:
        return State(m.LogicalStateElement(self.node, m.LogicalOperator.OR, other.node))

    __and__ = and_
    __or__ = or_

    def count(self, at_least: int, at_most: int = -1) -> State:
        """``<n:m>`` (``at_most=-1``: no bound)."""
        if not isinstance(self.node, m.StreamStateElement):
            raise ValueError("only a single event state can be counted")
        return State(m.CountStateElement(self.node, at_least, at_most))

    def group(self, within: str | int | None = None) -> State:
        """``( ... ) [within <time>]``."""
        return State(m.GroupStateElement(self.node, _millis(within) if within is not None else None))


def event(stream: str, condition: ExprLike | None = None, ref: str | None = None) -> State:
    """A state ``ref=Stream[condition]``."""
    s = _stream_input(stream)
    if condition is not None:
        s = replace(s, handlers=(m.Filter(_expr(condition)),))
    return State(m.StreamStateElement(replace(s, reference_id=ref)))


def absent(stream: str, condition: ExprLike | None = None, for_: str | int | None = None) -> State:
    """``not Stream[condition] [for <time>]``."""
    s = _stream_input(stream)
    if condition is not None:
        s = replace(s, handlers=(m.Filter(_expr(condition)),))
    return State(m.AbsentStreamStateElement(s, _millis(for_) if for_ is not None else None))


def every(state: State) -> State:
    return State(m.EveryStateElement(state.node))


def pattern(state: State, within: str | int | None = None) -> m.StateInputStream:
    return m.StateInputStream(m.StateType.PATTERN, state.node, _millis(within) if within is not None else None)


def sequence(state: State, within: str | int | None = None) -> m.StateInputStream:
    return m.StateInputStream(m.StateType.SEQUENCE, state.node, _millis(within) if within is not None else None)


# ------------------------------------------------------------------------------------ aggregation, partition
class Aggregation(_Annotated):
    """``define aggregation A from S select ... group by ... aggregate [by ts] every ...``."""

    def __init__(self, id: str, source: str, *select: ExprLike | str, group_by: Iterable[str] = (),
                 by: str | None = None, every: Iterable[str] = ("seconds", "minutes", "hours", "days")) -> None:
        super().__init__()
        self.id = id
        self.input = _stream_input(source)
        self.selector = m.Selector(_selector(select), tuple(col(g).node for g in group_by))  # type: ignore[misc]
        self.by = col(by).node if by else None
        self.every = tuple(m.TimeDuration(d) for d in every)

    def build(self) -> m.AggregationDefinition:
        return m.AggregationDefinition(self.id, self.input, self.selector, self.by,  # type: ignore[arg-type]
                                       self.every, tuple(self.annotations))


class Partition(_Annotated):
    """``partition with (attr of S, ...) begin ... end``."""

    def __init__(self, *by: tuple[str, str]) -> None:
        super().__init__()
        self.types = [m.ValuePartitionType(stream, col(attr).node) for attr, stream in by]
        self.queries: list[Query] = []

    def by_range(self, stream: str, **ranges: ExprLike) -> Partition:
        """A range partition: ``by_range("S", low=col("v") < 10, high=col("v") >= 10)``."""
        self.types.append(m.RangePartitionType(stream, tuple(m.RangePartitionProperty(label, _expr(c))
                                                             for label, c in ranges.items())))
        return self

    def query(self, q: Query) -> Partition:
        self.queries.append(q)
        return self

    def build(self) -> m.Partition:
        return m.Partition(tuple(self.types), tuple(q.build() for q in self.queries), tuple(self.annotations))


# ------------------------------------------------------------------------------------ the app
class App(_Annotated):
    """A whole app: ``App("Name").stream(...).query(...)``; ``.build()`` gives the model."""

    def __init__(self, name: str | None = None) -> None:
        super().__init__()
        if name:
            self.annotate("app:name", name)
        self._definitions: list[Any] = []
        self._elements: list[Query | Partition | m.Query | m.Partition] = []
        self._model: m.SiddhiApp | None = None

    def stream(self, s: Stream) -> App:
        self._definitions.append(s)
        return self

    table = window = trigger = function = aggregation = define = stream

    def query(self, q: Query | Partition) -> App:
        self._elements.append(q)
        return self

    partition = query

    def build(self) -> m.SiddhiApp:
        if self._model is not None and not self._definitions and not self._elements:
            return self._model
        base = self._model or m.SiddhiApp()
        built = [d.build() for d in self._definitions]

        def of(kind: type) -> tuple[Any, ...]:
            return tuple(d for d in built if isinstance(d, kind))

        elements = tuple(e.build() if hasattr(e, "build") else e for e in self._elements)
        return m.SiddhiApp(
            annotations=base.annotations + tuple(self.annotations),
            stream_definitions=base.stream_definitions + of(m.StreamDefinition),
            table_definitions=base.table_definitions + of(m.TableDefinition),
            window_definitions=base.window_definitions + of(m.WindowDefinition),
            trigger_definitions=base.trigger_definitions + of(m.TriggerDefinition),
            function_definitions=base.function_definitions + of(m.FunctionDefinition),
            aggregation_definitions=base.aggregation_definitions + of(m.AggregationDefinition),
            execution_elements=base.execution_elements + elements)

    def to_siddhiql(self) -> str:
        """The app as SiddhiQL text (parses back to the same model)."""
        return render(self.build())

    @classmethod
    def from_siddhiql(cls, text: str) -> App:
        """An app parsed from text, to extend with more definitions and queries."""
        from srota.grammar.parser import parse

        app = cls()
        app._model = parse(text)
        return app
