"""The SiddhiQL app model: frozen dataclasses mirroring Siddhi's query API.

The parser (:mod:`grammar.parser`) turns app text into these nodes; programs may also build
them directly.  Every node carries ``pos`` (line and column of the text it came from, or
``None`` when built in code) so that the engine can report semantic errors at the right place.
The engine never sees lark trees, only this model.

Conventions:
* tuples, never lists, so that nodes stay hashable and immutable;
* time values are normalised to milliseconds (``TimeConstant``);
* names are stored without quotes or back-ticks.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Pos:
    """A position in the app text (1-based line and column)."""

    line: int
    column: int
    #: the offsets in the text where the element starts and ends (``text[start:end]`` is it)
    start: int | None = field(default=None, compare=False)
    end: int | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


class AttrType(enum.StrEnum):
    """Siddhi attribute types."""

    STRING = "string"
    INT = "int"
    LONG = "long"
    FLOAT = "float"
    DOUBLE = "double"
    BOOL = "bool"
    OBJECT = "object"

    @property
    def is_numeric(self) -> bool:
        return self in (AttrType.INT, AttrType.LONG, AttrType.FLOAT, AttrType.DOUBLE)


# ------------------------------------------------------------------------------------ annotations
@dataclass(frozen=True)
class AnnotationElement:
    """``key='value'`` inside an annotation; ``key`` is None for positional values (``@PrimaryKey('a')``)."""

    key: str | None
    value: str
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Annotation:
    """``@name(elements..., @nested(...))``.  ``name`` keeps its namespace: ``app:name``, ``map``."""

    name: str
    elements: tuple[AnnotationElement, ...] = ()
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = field(default=None, compare=False)

    def get(self, key: str, default: str | None = None) -> str | None:
        """The value of element ``key`` (case-insensitive), or ``default``."""
        lk = key.lower()
        for el in self.elements:
            if el.key is not None and el.key.lower() == lk:
                return el.value
        return default

    def positional(self) -> tuple[str, ...]:
        """Values given without a key, in order."""
        return tuple(el.value for el in self.elements if el.key is None)

    def nested(self, name: str) -> tuple[Annotation, ...]:
        """Nested annotations called ``name`` (case-insensitive)."""
        ln = name.lower()
        return tuple(a for a in self.annotations if a.name.lower() == ln)


def find_annotation(annotations: tuple[Annotation, ...], name: str) -> Annotation | None:
    """The first annotation called ``name`` (case-insensitive), or None."""
    ln = name.lower()
    for a in annotations:
        if a.name.lower() == ln:
            return a
    return None


# ------------------------------------------------------------------------------------ expressions
@dataclass(frozen=True)
class Constant:
    """A literal.  ``type`` follows Siddhi: ``5`` int, ``5l`` long, ``5f`` float, ``5.0``/``5d`` double."""

    value: Any
    type: AttrType
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TimeConstant:
    """A time literal such as ``1 min 30 sec``, normalised to milliseconds (a long)."""

    millis: int
    pos: Pos | None = field(default=None, compare=False)


class LastIndex(int):
    """Marker for ``e[last]`` / ``e[last-k]``: the value is k (0 for ``last``)."""


@dataclass(frozen=True)
class Variable:
    """An attribute reference: ``price``, ``S.price``, ``e1.price``, ``e1[0].price``, ``e1[last-1].price``.

    ``stream_id`` is the stream name, join alias or pattern event reference the text used
    (None when unqualified).  ``stream_index`` is an int index, a :class:`LastIndex`, or None.
    ``is_inner`` is true for ``#S.x`` (partition inner stream), ``is_fault`` for ``!S.x``.
    """

    attribute: str
    stream_id: str | None = None
    stream_index: int | None = None
    is_inner: bool = False
    is_fault: bool = False
    pos: Pos | None = field(default=None, compare=False)


class MathOperator(enum.StrEnum):
    ADD = "+"
    SUBTRACT = "-"
    MULTIPLY = "*"
    DIVIDE = "/"
    MOD = "%"


@dataclass(frozen=True)
class MathOp:
    """``left op right`` with one of ``+ - * / %``."""

    op: MathOperator
    left: Expression
    right: Expression
    pos: Pos | None = field(default=None, compare=False)


class CompareOperator(enum.StrEnum):
    EQ = "=="
    NE = "!="
    GT = ">"
    GE = ">="
    LT = "<"
    LE = "<="


@dataclass(frozen=True)
class Compare:
    """``left op right`` with one of ``== != > >= < <=``."""

    left: Expression
    op: CompareOperator
    right: Expression
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class And:
    left: Expression
    right: Expression
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Or:
    left: Expression
    right: Expression
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Not:
    expression: Expression
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class IsNull:
    """``expr is null``."""

    expression: Expression
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class IsNullStream:
    """``e2 is null`` / ``e2[last-1] is null`` on a pattern event reference (or a stream in a join)."""

    stream_id: str
    stream_index: int | None = None
    is_inner: bool = False
    is_fault: bool = False
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class In:
    """``expr in Table``: true when the table holds a row matching ``expr``."""

    expression: Expression
    source_id: str
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class FunctionCall:
    """``ns:name(args)`` or ``name(args)``; ``namespace`` is '' for built-ins.  ``count()`` has no args.

    ``star`` is true for ``count(*)``-style calls written with ``*``.
    """

    namespace: str
    name: str
    args: tuple[Expression, ...] = ()
    star: bool = False
    pos: Pos | None = field(default=None, compare=False)


Expression = (Constant | TimeConstant | Variable | MathOp | Compare | And | Or | Not | IsNull |
    IsNullStream | In | FunctionCall)


# ------------------------------------------------------------------------------------ definitions
@dataclass(frozen=True)
class Attribute:
    name: str
    type: AttrType
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class StreamDefinition:
    """``define stream S (a string, b int);``"""

    id: str
    attributes: tuple[Attribute, ...]
    annotations: tuple[Annotation, ...] = ()
    is_fault: bool = False
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TableDefinition:
    """``define table T (...);`` with ``@PrimaryKey``, ``@Index``, ``@store`` annotations."""

    id: str
    attributes: tuple[Attribute, ...]
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = field(default=None, compare=False)


class OutputEventType(enum.StrEnum):
    CURRENT = "current"
    EXPIRED = "expired"
    ALL = "all"


@dataclass(frozen=True)
class WindowHandler:
    """``#window.ns:name(args)`` on a stream, or the window of ``define window``."""

    namespace: str
    name: str
    args: tuple[Expression, ...] = ()
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class WindowDefinition:
    """``define window W (...) length(5) output all events;``"""

    id: str
    attributes: tuple[Attribute, ...]
    window: WindowHandler
    output_event_type: OutputEventType = OutputEventType.ALL
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TriggerDefinition:
    """``define trigger T at 'start' | at every 5 sec | at '<cron>'``.

    Exactly one of ``at`` ('start' or a cron expression) and ``every_millis`` is set.
    """

    id: str
    at: str | None = None
    every_millis: int | None = None
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class FunctionDefinition:
    """``define function f[python] return double { body };`` (body without the braces)."""

    id: str
    language: str
    return_type: AttrType
    body: str
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = field(default=None, compare=False)


class TimeDuration(enum.StrEnum):
    """Granularities of incremental aggregation, finest first."""

    SECONDS = "seconds"
    MINUTES = "minutes"
    HOURS = "hours"
    DAYS = "days"
    MONTHS = "months"
    YEARS = "years"


@dataclass(frozen=True)
class AggregationDefinition:
    """``define aggregation A from S select ... group by ... aggregate [by ts] every sec ... year;``

    ``durations`` lists every granularity kept, finest first (a range ``sec ... year`` is
    expanded; a comma list is kept as written, sorted).
    """

    id: str
    input: SingleInputStream
    selector: Selector
    aggregate_by: Variable | None
    durations: tuple[TimeDuration, ...]
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = field(default=None, compare=False)


Definition = (StreamDefinition | TableDefinition | WindowDefinition | TriggerDefinition |
    FunctionDefinition | AggregationDefinition)


# ------------------------------------------------------------------------------------ inputs
@dataclass(frozen=True)
class Filter:
    """``[condition]`` after a stream."""

    expression: Expression
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class StreamFunction:
    """``#ns:name(args)`` stream processor (not a window); ``star`` for ``#fn(*)`` (every attribute)."""

    namespace: str
    name: str
    args: tuple[Expression, ...] = ()
    star: bool = False
    pos: Pos | None = field(default=None, compare=False)


StreamHandler = (Filter | StreamFunction | WindowHandler)


@dataclass(frozen=True)
class SingleInputStream:
    """``[#|!]S[filter]#fn()#window.w()[filter] [as alias]`` or, in patterns, ``e1=S[...]``.

    ``reference_id`` is the alias (``as b``) or the pattern event reference (``e1=``).
    """

    stream_id: str
    handlers: tuple[StreamHandler, ...] = ()
    reference_id: str | None = None
    is_inner: bool = False
    is_fault: bool = False
    pos: Pos | None = field(default=None, compare=False)

    @property
    def window(self) -> WindowHandler | None:
        for h in self.handlers:
            if isinstance(h, WindowHandler):
                return h
        return None


class JoinType(enum.StrEnum):
    JOIN = "join"  # inner join
    LEFT_OUTER = "left_outer"
    RIGHT_OUTER = "right_outer"
    FULL_OUTER = "full_outer"


class JoinTrigger(enum.StrEnum):
    """Which side's arrivals trigger the join (``unidirectional``)."""

    ALL = "all"
    LEFT = "left"
    RIGHT = "right"


@dataclass(frozen=True)
class JoinInputStream:
    """``from L [unidirectional] join R [unidirectional] on cond [within a[, b]] [per p]``."""

    left: SingleInputStream
    join_type: JoinType
    right: SingleInputStream
    on: Expression | None = None
    trigger: JoinTrigger = JoinTrigger.ALL
    within: tuple[Expression, ...] = ()
    per: Expression | None = None
    pos: Pos | None = field(default=None, compare=False)


# State elements of patterns and sequences.
@dataclass(frozen=True)
class StreamStateElement:
    """One state: ``e1=S[cond]``."""

    stream: SingleInputStream
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class AbsentStreamStateElement:
    """``not S[cond] [for <time>]``; ``waiting_millis`` is None when no ``for`` is given."""

    stream: SingleInputStream
    waiting_millis: int | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class CountStateElement:
    """``e1=S[cond]<min:max>`` (patterns) or ``*``/``+``/``?`` (sequences).

    ``max_count`` is -1 for no upper bound (``<2:>``, ``*``, ``+``); ``min_count`` 0 allows none.
    """

    element: StreamStateElement
    min_count: int
    max_count: int
    pos: Pos | None = field(default=None, compare=False)


class LogicalOperator(enum.StrEnum):
    AND = "and"
    OR = "or"


@dataclass(frozen=True)
class LogicalStateElement:
    """``e1=A and e2=B`` / ``e1=A or e2=B`` / ``not A and e2=B``."""

    left: StateElement
    op: LogicalOperator
    right: StateElement
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class NextStateElement:
    """``first -> next`` (pattern) or ``first, next`` (sequence)."""

    first: StateElement
    next: StateElement
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class EveryStateElement:
    """``every element`` (a single state or a parenthesised group)."""

    element: StateElement
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class GroupStateElement:
    """A parenthesised group ``( ... ) [within t]``; kept so that ``within`` can bind to it."""

    element: StateElement
    within_millis: int | None = None
    pos: Pos | None = field(default=None, compare=False)


StateElement = (StreamStateElement | AbsentStreamStateElement | CountStateElement |
    LogicalStateElement | NextStateElement | EveryStateElement | GroupStateElement)


class StateType(enum.StrEnum):
    PATTERN = "pattern"
    SEQUENCE = "sequence"


@dataclass(frozen=True)
class StateInputStream:
    """A pattern (``->``) or sequence (``,``) with an optional ``within`` over the whole."""

    type: StateType
    element: StateElement
    within_millis: int | None = None
    pos: Pos | None = field(default=None, compare=False)


InputStream = (SingleInputStream | JoinInputStream | StateInputStream)


# ------------------------------------------------------------------------------------ selector
@dataclass(frozen=True)
class OutputAttribute:
    """``expr [as rename]``; ``rename`` is the output name (the attribute name for a bare variable)."""

    rename: str
    expression: Expression
    pos: Pos | None = field(default=None, compare=False)


class Order(enum.StrEnum):
    ASC = "asc"
    DESC = "desc"


@dataclass(frozen=True)
class OrderByAttribute:
    variable: Variable
    order: Order = Order.ASC
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Selector:
    """``select ... group by ... having ... order by ... limit ... offset ...``.

    ``attributes`` is None for ``select *`` (or no select clause).
    """

    attributes: tuple[OutputAttribute, ...] | None = None
    group_by: tuple[Variable, ...] = ()
    having: Expression | None = None
    order_by: tuple[OrderByAttribute, ...] = ()
    limit: Expression | None = None
    offset: Expression | None = None
    pos: Pos | None = field(default=None, compare=False)


# ------------------------------------------------------------------------------------ outputs
@dataclass(frozen=True)
class SetAttribute:
    """``T.col = expr`` in ``update ... set``."""

    table_column: Variable
    expression: Expression
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class InsertIntoStream:
    """``insert [current|expired|all events] into [#|!]Target``."""

    target: str
    event_type: OutputEventType = OutputEventType.CURRENT
    is_inner: bool = False
    is_fault: bool = False
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ReturnStream:
    """``return [events]`` (in on-demand queries and ``@info`` query callbacks)."""

    event_type: OutputEventType = OutputEventType.CURRENT
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class DeleteStream:
    """``delete T [for ... events] on cond``."""

    target: str
    on: Expression | None
    event_type: OutputEventType = OutputEventType.CURRENT
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class UpdateStream:
    """``update T [for ... events] [set T.a = x, ...] on cond``; empty ``set`` updates every selected column."""

    target: str
    on: Expression | None
    set: tuple[SetAttribute, ...] = ()
    event_type: OutputEventType = OutputEventType.CURRENT
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class UpdateOrInsertStream:
    """``update or insert into T [for ... events] [set ...] on cond``."""

    target: str
    on: Expression | None
    set: tuple[SetAttribute, ...] = ()
    event_type: OutputEventType = OutputEventType.CURRENT
    pos: Pos | None = field(default=None, compare=False)


OutputStream = (InsertIntoStream | ReturnStream | DeleteStream | UpdateStream | UpdateOrInsertStream)


class RateType(enum.StrEnum):
    ALL = "all"
    FIRST = "first"
    LAST = "last"
    SNAPSHOT = "snapshot"


@dataclass(frozen=True)
class EventOutputRate:
    """``output [all|first|last] every N events``."""

    events: int
    type: RateType = RateType.ALL
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TimeOutputRate:
    """``output [all|first|last] every <time>``."""

    millis: int
    type: RateType = RateType.ALL
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class SnapshotOutputRate:
    """``output snapshot every <time>``."""

    millis: int
    pos: Pos | None = field(default=None, compare=False)


OutputRate = (EventOutputRate | TimeOutputRate | SnapshotOutputRate)


# ------------------------------------------------------------------------------------ queries
@dataclass(frozen=True)
class Query:
    """``[@info(name='q')] from <input> [select ...] [output rate] <output>;``"""

    input: InputStream
    selector: Selector
    output: OutputStream
    output_rate: OutputRate | None = None
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = field(default=None, compare=False)

    @property
    def name(self) -> str | None:
        info = find_annotation(self.annotations, "info")
        return info.get("name") if info else None


@dataclass(frozen=True)
class ValuePartitionType:
    """``expr of Stream`` in ``partition with (...)``."""

    stream_id: str
    expression: Expression
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class RangePartitionProperty:
    """``condition as 'label'`` in a range partition."""

    label: str
    condition: Expression
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class RangePartitionType:
    """``cond as 'a' or cond as 'b' of Stream``."""

    stream_id: str
    ranges: tuple[RangePartitionProperty, ...]
    pos: Pos | None = field(default=None, compare=False)


PartitionType = (ValuePartitionType | RangePartitionType)


@dataclass(frozen=True)
class Partition:
    """``[@purge(...)] partition with (...) begin query; ... end;``"""

    partition_types: tuple[PartitionType, ...]
    queries: tuple[Query, ...]
    annotations: tuple[Annotation, ...] = ()
    pos: Pos | None = field(default=None, compare=False)


ExecutionElement = (Query | Partition)


class OnDemandQueryType(enum.StrEnum):
    FIND = "find"
    INSERT = "insert"
    DELETE = "delete"
    UPDATE = "update"
    UPDATE_OR_INSERT = "update_or_insert"


@dataclass(frozen=True)
class OnDemandQuery:
    """A store query: ``from T [on cond] [within a, b per p] select ...`` or
    ``select ... insert into T`` / ``delete T on ...`` / ``update T set ... on ...`` /
    ``update or insert into T set ... on ...``.

    ``input_store`` is None for the ``select ... insert into T`` form.
    """

    type: OnDemandQueryType
    input_store: str | None
    on: Expression | None
    selector: Selector
    output: OutputStream | None = None
    within: tuple[Expression, ...] = ()
    per: Expression | None = None
    reference_id: str | None = None  # the alias of ``from T as t ...`` (None when not given)
    pos: Pos | None = field(default=None, compare=False)


@dataclass(frozen=True)
class SiddhiApp:
    """A whole app: annotations, definitions and execution elements, in text order."""

    annotations: tuple[Annotation, ...] = ()
    stream_definitions: tuple[StreamDefinition, ...] = ()
    table_definitions: tuple[TableDefinition, ...] = ()
    window_definitions: tuple[WindowDefinition, ...] = ()
    trigger_definitions: tuple[TriggerDefinition, ...] = ()
    function_definitions: tuple[FunctionDefinition, ...] = ()
    aggregation_definitions: tuple[AggregationDefinition, ...] = ()
    execution_elements: tuple[ExecutionElement, ...] = ()

    @property
    def name(self) -> str | None:
        a = find_annotation(self.annotations, "app:name")
        if a is None:
            return None
        vals = a.positional()
        return vals[0] if vals else a.get("name")

    @property
    def definitions(self) -> tuple[Definition, ...]:
        """Every definition, grouped by kind."""
        return (
            *self.stream_definitions, *self.table_definitions, *self.window_definitions,
            *self.trigger_definitions, *self.function_definitions, *self.aggregation_definitions,
        )
