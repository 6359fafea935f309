"""A seeded random generator of SiddhiQL apps and their input events, for differential tests.

``generate(seed, index)`` makes one case (the shape ``runner/SiddhiRunner.java`` reads): an app
whose first line is ``@app:playback``, the stream and query callbacks to register, and steps
(chunks of events, one event sent alone or 2-6 as one chunk, and on-demand queries). The same
``(seed, index)`` always makes the same case: every choice comes from
``random.Random(f"{seed}:{index}")``. ``family=`` forces a family; by default ``index`` picks
one in turn, so any ``len(FAMILIES)`` consecutive indexes cover them all.

Events: timestamps start near 1_700_000_000_000 (2023-11-14 22:13:20 UTC) and never go back;
gaps are 0 ms to a few seconds, now and then a jump past every window length (and, for
aggregations, past a minute), so time windows, ``within``, absent patterns and aggregation
buckets fire. Values come from a few symbols (so joins, patterns and group-bys match), ints,
longs, floats and doubles with one decimal, bools, and in some families an occasional null.
In half the apps of each family a number is now and then at its type's
limits instead: Integer and Long MIN and MAX, longs past 2**53, Float and Double MAX, -0.0,
subnormals, infinities and NaN (``_EDGES``; the families whose answers then depend on the order
Siddhi merges or queues values draw fewer of them: ``_NO_NAN``, ``_FINITE``).

Nothing whose output depends on more than the app and its events (checked by running every
case twice on Siddhi 5.1.33): no UUID(), no cron, no ``select *`` or several-row join on an
``@Index`` table without an ``order by`` over every column (its rows sit in identity hash
sets), and these Siddhi 5.1.33 behaviours are kept out of the way:

* a periodic trigger ticks on the wall clock even under playback (``PeriodicTrigger`` is a
  ``scheduleAtFixedRate``): triggers here are ``at 'start'`` and ``at every 10 min|1 hour``,
  which never ticks during a run;
* a closed second's or minute's aggregation bucket is written to its table on another thread,
  so a read right after it races the write: the runner has those writes made on the sending
  thread (``SiddhiRunner.writeAggregationTablesInline``), and reads here may be per seconds and
  minutes too;
* a time-based output rate (``output ... every 2 sec``, ``output snapshot ...``) starts its
  period at ``System.currentTimeMillis()``, so under playback with these timestamps it never
  emits: it is generated (it is valid SiddhiQL, and Siddhi's silence is its answer) but only
  as an app's second query, after one counting events;
* an aggregation ``from S[filter]`` aggregates nothing: aggregations here have no filter;
* a join on a ``delay`` window, and a chunk reaching a ``delay`` window while an earlier event
  is still delayed, hang: no joins on delay windows, and an app with one sends events alone;
* an on-demand query on a batch named window that outputs current events fails (a
  NullPointerException): batch named windows here output all or expired events;
* ``hopping`` is no window of Siddhi 5.1.33 (``HopingWindowProcessor`` is an abstract base
  class, no extension is named ``hopping``): not generated.

Families (``FAMILIES``):

* ``filter``: filters and projections: arithmetic on every pair of int/long/float/double
  (``+ - * / %``), comparisons, ``and``/``or``/``not``, ``is null``, and the core functions
  convert, cast, ifThenElse, coalesce, instanceOf*, maximum, minimum, default, eventTimestamp(),
  currentTimeMillis() (the playback clock); chained queries through an intermediate stream.
* ``window``: every core window: length, lengthBatch (and its stream-current flag), time,
  timeBatch (start time, stream-current flag), timeLength, externalTime, externalTimeBatch
  (start time, timeout), sort, frequent, lossyFrequent, session (key, allowed latency), batch,
  delay, expression, expressionBatch; ``insert current|expired|all events into``.
* ``aggregate``: every core aggregator (sum, count, avg, min, max, stdDev, distinctCount,
  maxForever, minForever, and, or, unionSet with createSet/sizeOfSet) with group by, having,
  order by, limit and offset, over a window or none.
* ``rate``: output rate limiting: ``output [all|first|last] every N events``, ``... every N sec``,
  ``output snapshot every N sec``, with and without group by and windows.
* ``join``: stream-stream joins: ``join``, ``left|right|full outer join``, ``unidirectional``,
  sliding and batch windows on both sides, windowless unidirectional sides, cross joins,
  aggregates over joins.
* ``join_store``: a stream joined with a table, a named window (inner and outer joins) or an
  incremental aggregation (``within ... per ...``).
* ``pattern``: patterns (``->``): counts ``<n:m>``, logical ``and``/``or``, absent
  ``not S[...] for t`` (alone and with ``and``), ``within``, ``every`` at the start, around a
  group, later, or nowhere.
* ``sequence``: sequences (``,``): ``+ * ?`` and ``<n:m>``, logical and absent elements,
  ``within``, ``every`` or not.
* ``partition``: value partitions (one or two streams, or a named window's output) and range
  partitions (disjoint or overlapping), with inner streams (``#Inner``), windows, aggregates,
  joins and patterns.
  Their queries are named but get no query callback (Siddhi finds none inside a partition).
* ``table``: tables (plain, ``@PrimaryKey`` on a string, an int or two columns, ``@Index``):
  insert, ``update`` (with and without ``set``), ``update or insert into``, ``delete``, ``in``
  conditions, joins, and on-demand queries (select, ``on``, group by; insert, delete, update,
  update or insert).
* ``named_window``: ``define window`` with its output events kind, read by queries, joins and
  on-demand queries.
* ``trigger``: ``define trigger Boot at 'start'`` (its one event, at the playback clock's time
  then, read alone and kept in a window that stream events join) and a periodic trigger
  (above), read alone and in a unidirectional join.
* ``aggregation``: ``define aggregation`` (group by or not, ``aggregate by ts`` or the event
  time, duration ranges and lists) read by on-demand ``within ... per ...`` queries (select,
  ``on``, group by) and by stream joins ``within ... per ...``.

Extension families (``EXTENSION_FAMILIES``), drawn only when named: Siddhi runs them only with
the siddhi-execution jars on its class path (``python -m tests.differential --family unique
--classpath JARS``), which the project does not build:

* ``unique``: every ``unique:`` window but ``length`` (its defects, docs/siddhi-differences.md),
  keyed by a string or a number that may be null, read by ``select *`` or aggregates, current,
  expired or all events out; the windows whose defects chunks show get their events alone.
* ``reorder``: ``#reorder:kslack`` and ``#reorder:akslack`` with and without a timeout and a
  largest K, over a ``ts`` attribute up to 3 s late.
* ``json_map``, ``csv_map``, ``text_map`` and ``xml_map`` (siddhi-map-json's, -csv's, -text's
  and -xml's jars, with their libraries): messages published through a source mapper and a
  sink mapper, the sink's messages compared (:mod:`tests.differential.mappings`).
* ``string_fn``, ``math_fn``, ``time_fn``, ``regex_fn`` and ``collection_fn`` (json, list and
  map): the functions of siddhi-execution-string, -math, -time, -regex, -json, -list and -map
  over the edge cases of their arguments, one query per call
  (:mod:`tests.differential.functions`).
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.differential import (
    functions_collection,
    functions_math,
    functions_regex,
    functions_string,
    functions_time,
    mappings,
)

Case = dict[str, Any]

BASE_TS = 1_700_000_000_000
_ALL_SYMBOLS = ("IBM", "WSO2", "GOOG", "ORCL")
_NUMERIC = ("int", "long", "float", "double")
_RANK = {"int": 0, "long": 1, "float": 2, "double": 3}
_COMPARE = (">", "<", ">=", "<=", "==", "!=")


# ---------------------------------------------------------------------------------------------
# Streams, values and events


@dataclass(frozen=True)
class _Stream:
    """An input or inner stream's definition and how its events' values are made."""

    name: str
    attrs: tuple[tuple[str, str], ...]
    nullable: frozenset[str] = frozenset()

    def define(self, kind: str = "stream") -> str:
        body = ", ".join(f"{a} {t}" for a, t in self.attrs)
        return f"define {kind} {self.name} ({body});"

    def type_of(self, attr: str) -> str:
        return dict(self.attrs)[attr]

    def numeric(self) -> list[str]:
        return [a for a, t in self.attrs if t in _NUMERIC]

    def of_type(self, *types: str) -> list[str]:
        return [a for a, t in self.attrs if t in types]

    def names(self) -> list[str]:
        return [a for a, _ in self.attrs]


def _stock(rng: random.Random, name: str, *, ts: bool = False, flag: bool | None = None,
           extra: bool | None = None, nulls: bool = False) -> _Stream:
    """``name (sym string, price float|double, vol int|long[, qty <numeric>][, ok bool][, ts long])``."""
    attrs: list[tuple[str, str]] = [("sym", "string"), ("price", rng.choice(("double", "double", "float"))),
                                    ("vol", rng.choice(("int", "int", "long")))]
    if extra if extra is not None else rng.random() < 0.5:
        attrs.append(("qty", rng.choice(_NUMERIC)))
    if flag if flag is not None else rng.random() < 0.4:
        attrs.append(("ok", "bool"))
    if ts:
        attrs.append(("ts", "long"))
    nullable = frozenset(a for a, _ in attrs[1:] if nulls and a != "ts" and rng.random() < 0.5)
    return _Stream(name, tuple(attrs), nullable)


def _same_as(stream: _Stream, name: str) -> _Stream:
    return _Stream(name, stream.attrs, stream.nullable)


#: Values at the limits of each numeric type (``_Values.edge_rate``): wrap-around, 32-bit
#: rounding, longs past 2**53, the zeros' signs, subnormals, infinities and NaN.
_EDGES: dict[str, tuple[Any, ...]] = {
    "int": (2147483647, -2147483648, 0, -1, 16777217, 46341),
    "long": (9223372036854775807, -9223372036854775808, 0, -1, 9007199254740993, 3037000500, 2147483648),
    "float": (3.4028234663852886e38, -3.4028234663852886e38, -0.0, 0.0, 1.401298464324817e-45, 16777216.0,
              0.10000000149011612, math.inf, math.nan),
    "double": (1.7976931348623157e308, -0.0, 0.0, 5e-324, 9007199254740993.0, 0.1, -1e-300, -math.inf, math.nan),
}


def _order_sensitive(value: Any) -> bool:
    """A double or float whose sums and minimums depend on the order of adding: an infinity, a
    NaN, -0.0, or one so large that adding it cancels the others' digits."""
    return isinstance(value, float) and (not abs(value) < 1e15 or value == 0 and math.copysign(1.0, value) < 0)


class _Values:
    """Attribute values: a few symbols, small numbers with one decimal, now and then a null,
    and as often as ``edge_rate`` says a number at its type's limits (``_EDGES``; no NaN
    without ``edge_nan``, none that the order of adding decides with ``edge_finite``)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.symbols = rng.sample(_ALL_SYMBOLS, rng.choice((2, 3, 3, 4)))
        self.null_rate = rng.choice((0.03, 0.06, 0.1))
        self.edge_rate = 0.0
        self.edge_nan = True
        self.edge_finite = False

    def value(self, attr: str, typ: str, ts: int, nullable: bool) -> Any:
        rng = self.rng
        if nullable and rng.random() < self.null_rate:
            return None
        if attr == "ts":
            return ts
        if self.edge_rate and typ in _EDGES and rng.random() < self.edge_rate:
            value = rng.choice(_EDGES[typ])
            if value != value and not self.edge_nan or self.edge_finite and _order_sensitive(value):
                return 1e-300
            return value
        if typ == "string":
            return rng.choice(self.symbols)
        if typ == "bool":
            return rng.random() < 0.5
        if typ in ("int", "long"):
            hi = 60 if attr == "vol" else 100
            return rng.randint(1, hi) if rng.random() < 0.9 else rng.randint(1, 5)
        return round(rng.uniform(1.0, 100.0), 1)

    def row(self, stream: _Stream, ts: int) -> list[Any]:
        return [self.value(a, t, ts, a in stream.nullable) for a, t in stream.attrs]


def _gap(rng: random.Random, long_gaps: bool = False) -> int:
    r = rng.random()
    if r < 0.2:
        return 0
    if r < 0.7:
        return rng.randint(1, 900)
    if r < 0.93:
        return rng.randint(900, 3000)
    if long_gaps and r < 0.97:
        return rng.randint(20_000, 70_000)  # past a minute's bucket
    return rng.randint(3000, 9000)


# ---------------------------------------------------------------------------------------------
# The app under construction


@dataclass
class _App:
    """An app's text, its queries' names and the callbacks to register."""

    rng: random.Random
    values: _Values
    definitions: list[str] = field(default_factory=list)
    elements: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    streams: list[str] = field(default_factory=list)
    named: int = 0
    #: send every event alone: Siddhi 5.1.33 hangs on a chunk (send(Event[])) that reaches a
    #: delay window while an earlier event is still delayed
    singles: bool = False

    def define(self, text: str) -> None:
        self.definitions.append(text)

    def query_text(self, body: str, callback: bool = True) -> str:
        """``body`` as a named query (``@info(name='qN')``), without adding it to the app;
        ``callback=False`` for a query in a partition (Siddhi finds no query callback there)."""
        self.named += 1
        name = f"q{self.named}"
        if callback:
            self.queries.append(name)
        return f"@info(name='{name}')\n{body};"

    def query(self, body: str) -> None:
        self.elements.append(self.query_text(body))

    def watch(self, *streams: str) -> None:
        for s in streams:
            if s not in self.streams:
                self.streams.append(s)

    def text(self) -> str:
        return "\n".join(["@app:playback", *self.definitions, "", *self.elements]) + "\n"


def _steps(app: _App, inputs: Sequence[tuple[_Stream, float]], *, count: tuple[int, int] = (10, 40),
           ondemand: Sequence[str] = (), long_gaps: bool = False,
           distinct_times: bool = False) -> list[dict[str, Any]]:
    """Steps sending ``count`` events to ``inputs`` (stream, weight), alone or in chunks of 2-6
    (alone only when ``app.singles``), with the on-demand queries now and then in between and
    each once at the end. ``distinct_times``: no two events share a millisecond."""
    rng, values = app.rng, app.values
    total = rng.randint(*count)
    ts = start = BASE_TS + rng.randint(0, 5000)
    streams = [s for s, _ in inputs]
    weights = [w for _, w in inputs]
    chunk_rate = 0.0 if app.singles else rng.choice((0.15, 0.3, 0.5))
    steps: list[dict[str, Any]] = []
    sent = 0
    while sent < total:
        stream = rng.choices(streams, weights)[0]
        size = rng.randint(2, 6) if rng.random() < chunk_rate else 1
        size = min(size, total - sent) or 1
        ts += _gap(rng, long_gaps and ts - start < 30 * 60_000) or int(distinct_times)
        events = []
        for i in range(size):
            if i:
                ts += rng.choice((0, 0, rng.randint(1, 300))) or int(distinct_times)
            events.append([ts, values.row(stream, ts)])
        steps.append({"stream": stream.name, "events": events})
        sent += size
        if ondemand and rng.random() < 0.12:
            steps.append({"query": rng.choice(ondemand)})
    for q in ondemand:
        steps.append({"query": q})
    return steps


# ---------------------------------------------------------------------------------------------
# Expressions


def _const(rng: random.Random, typ: str, lo: int = 1, hi: int = 20) -> str:
    if typ == "int":
        return str(rng.randint(lo, hi))
    if typ == "long":
        return f"{rng.randint(lo, hi)}L"
    if typ == "float":
        return f"{rng.randint(lo * 10, hi * 10) / 10}f"
    if typ == "double":
        return f"{rng.randint(lo * 10, hi * 10) / 10}"
    if typ == "bool":
        return rng.choice(("true", "false"))
    return f"'{rng.choice(_ALL_SYMBOLS)}'"


def _promote(a: str, b: str) -> str:
    return a if _RANK[a] >= _RANK[b] else b


def _arith(rng: random.Random, s: _Stream, depth: int = 2, prefix: str = "") -> tuple[str, str]:
    """A numeric expression over ``s``'s attributes and its type (Siddhi's promotion)."""
    nums = s.numeric()
    if depth <= 0 or rng.random() < 0.3:
        if rng.random() < 0.75:
            a = rng.choice(nums)
            return prefix + a, s.type_of(a)
        typ = rng.choice(_NUMERIC)
        return _const(rng, typ), typ
    op = rng.choice("+-*/%")
    left, lt = _arith(rng, s, depth - 1, prefix)
    if op in "/%":  # the divisor is an attribute (never 0 unless null) or a constant, not a difference
        if rng.random() < 0.7:
            a = _other(rng, nums, left.removeprefix(prefix))
            right, rt = prefix + a, s.type_of(a)
        else:
            rt = rng.choice(_NUMERIC)
            right = _const(rng, rt)
    else:
        right, rt = _arith(rng, s, depth - 1, prefix)
        if right == left and len(nums) > 1 and right.removeprefix(prefix) in nums:
            a = _other(rng, nums, right.removeprefix(prefix))
            right, rt = prefix + a, s.type_of(a)
    return f"({left} {op} {right})", _promote(lt, rt)


def _other(rng: random.Random, items: Sequence[str], avoid: str) -> str:
    """One of ``items``, not ``avoid`` when there is another."""
    rest = [x for x in items if x != avoid]
    return rng.choice(rest or list(items))


def _cond(rng: random.Random, s: _Stream, depth: int = 2, prefix: str = "") -> str:
    """A boolean condition over ``s``'s attributes."""
    if depth > 0 and rng.random() < 0.45:
        kind = rng.random()
        if kind < 0.45:
            return f"({_cond(rng, s, depth - 1, prefix)} and {_cond(rng, s, depth - 1, prefix)})"
        if kind < 0.85:
            return f"({_cond(rng, s, depth - 1, prefix)} or {_cond(rng, s, depth - 1, prefix)})"
        return f"not ({_cond(rng, s, depth - 1, prefix)})"
    r = rng.random()
    nums = s.numeric()
    if r < 0.2:
        return f"{prefix}sym {rng.choice(('==', '!='))} '{rng.choice(_ALL_SYMBOLS)}'"
    if r < 0.3 and s.nullable:
        a = rng.choice(sorted(s.nullable))
        return f"{prefix}{a} is null" if rng.random() < 0.5 else f"not ({prefix}{a} is null)"
    if r < 0.38 and s.of_type("bool"):
        return rng.choice((f"{prefix}ok", f"{prefix}ok == {_const(rng, 'bool')}", f"not {prefix}ok"))
    if r < 0.5:
        a = rng.choice(nums)
        b = _other(rng, nums, a)
        return f"{prefix}{a} {rng.choice(_COMPARE)} {prefix}{b}"
    if r < 0.6:
        expr, _ = _arith(rng, s, 1, prefix)
        return f"{expr} {rng.choice(_COMPARE)} {_const(rng, rng.choice(_NUMERIC), 5, 80)}"
    a = rng.choice(nums)
    hi = 60 if a == "vol" else 90
    return f"{prefix}{a} {rng.choice(_COMPARE[:4])} {_const(rng, rng.choice(_NUMERIC), 5, hi)}"


def _simple_cond(rng: random.Random, s: _Stream) -> str:
    """A condition that about half the events pass."""
    r = rng.random()
    if r < 0.3:
        return f"sym {rng.choice(('==', '!='))} '{rng.choice(_ALL_SYMBOLS)}'"
    a = rng.choice(s.numeric())
    hi = 60 if a == "vol" else 100
    bound = _const(rng, rng.choice(_NUMERIC), hi // 4, hi * 3 // 4)
    return f"{a} {rng.choice(('>', '<', '>=', '<='))} {bound}"


def _function(rng: random.Random, s: _Stream, edges: bool = False) -> str:
    """A core function call over ``s``'s attributes (no UUID()). ``edges``: values at the
    limits of their types come: no maximum() or minimum(), whose Siddhi answers for negative
    values and longs past 2**53 are defects Srota does not copy (docs/siddhi-differences.md)."""
    nums = s.numeric()
    a = rng.choice(nums)
    t = s.type_of(a)
    kind = rng.randrange(11)
    if edges and kind in (6, 7):
        kind = 10
    if kind == 0:
        target = rng.choice(("string", "int", "long", "float", "double"))
        return f"convert({a}, '{target}')"
    if kind == 1:
        b = rng.choice(s.names())
        return f"convert({b}, 'string')" if rng.random() < 0.5 else f"cast({b}, '{s.type_of(b)}')"
    if kind == 2:
        same = [b for b in nums if s.type_of(b) == t]
        other = rng.choice(same) if rng.random() < 0.5 else _const(rng, t)
        return f"ifThenElse({_cond(rng, s, 1)}, {a}, {other})"
    if kind == 3:
        return f"ifThenElse({_cond(rng, s, 0)}, sym, '{rng.choice(_ALL_SYMBOLS)}')"
    if kind == 4:
        same = [b for b in nums if s.type_of(b) == t and b != a]
        rest = ", ".join([*same[:1], _const(rng, t)])
        return f"coalesce({a}, {rest})"
    if kind == 5:
        fn = rng.choice(("instanceOfInteger", "instanceOfLong", "instanceOfFloat", "instanceOfDouble",
                         "instanceOfString", "instanceOfBoolean"))
        return f"{fn}({rng.choice(s.names())})"
    if kind in (6, 7):
        same = [b for b in nums if s.type_of(b) == t and b != a]
        args = [a, *same[:1], _const(rng, t, 10, 60)]
        return f"{'maximum' if kind == 6 else 'minimum'}({', '.join(args)})"
    if kind == 8:
        return f"default({a}, {_const(rng, t)})"
    if kind == 9:
        return "eventTimestamp()" if rng.random() < 0.7 else "currentTimeMillis()"
    expr, _ = _arith(rng, s, 1)
    return f"convert({expr}, 'double')"


def _projection(rng: random.Random, s: _Stream, count: int | None = None, edges: bool = False) -> str:
    """``sym, <expression> as e1, <function> as f2, ...`` or ``*`` (``edges``: see _function)."""
    if rng.random() < 0.12:
        return "*"
    items = ["sym"] if rng.random() < 0.8 else []
    for i in range(count or rng.randint(1, 4)):
        r = rng.random()
        if r < 0.4:
            items.append(f"{_arith(rng, s)[0]} as e{i}")
        elif r < 0.8:
            items.append(f"{_function(rng, s, edges)} as f{i}")
        elif r < 0.9:
            items.append(f"{_cond(rng, s, 1)} as c{i}")
        else:
            items.append(rng.choice(s.names()[1:]))
    return ", ".join(dict.fromkeys(items))


# ---------------------------------------------------------------------------------------------
# Windows and aggregators


def _time(rng: random.Random, options: Sequence[str] = ("500 millisec", "1 sec", "2 sec", "3 sec")) -> str:
    return rng.choice(options)


def _window(rng: random.Random, s: _Stream, kinds: Sequence[str] | None = None) -> tuple[str, str]:
    """``#window.x(...)`` over ``s`` and its kind (the window's name)."""
    all_kinds = ["length", "lengthBatch", "time", "timeBatch", "timeLength", "sort", "frequent",
                 "lossyFrequent", "session", "batch", "delay", "expression", "expressionBatch"]
    if s.of_type("long") and "ts" in s.names():
        all_kinds += ["externalTime", "externalTimeBatch"]
    kind = rng.choice(list(kinds) if kinds else all_kinds)
    n = rng.randint(2, 5)
    num = rng.choice(s.numeric())
    if kind == "length":
        args = str(n)
    elif kind == "lengthBatch":
        args = f"{n}, true" if rng.random() < 0.3 else str(n)
    elif kind == "time":
        args = _time(rng)
    elif kind == "timeBatch":
        r = rng.random()
        t = _time(rng, ("1 sec", "2 sec", "3 sec"))
        args = f"{t}, {rng.randint(0, 999)}" if r < 0.3 else f"{t}, true" if r < 0.45 else t
    elif kind == "timeLength":
        args = f"{_time(rng)}, {n}"
    elif kind == "externalTime":
        args = f"ts, {_time(rng)}"
    elif kind == "externalTimeBatch":
        t = _time(rng, ("1 sec", "2 sec", "3 sec"))
        r = rng.random()
        start = f"{BASE_TS + rng.randint(0, 999)}L"
        args = (f"ts, {t}, {start}" if r < 0.3 else f"ts, {t}, {start}, {_time(rng, ('1 sec', '2 sec'))}"
                if r < 0.5 else f"ts, {t}")
    elif kind == "sort":
        # never by an attribute that may be null: Java's comparator throws on it inside Siddhi
        # and the query emits nothing more (docs/siddhi-differences.md)
        keys = [a for a in s.numeric() if a not in s.nullable] or ["sym"]
        second = f", {rng.choice(keys)}, '{rng.choice(('asc', 'desc'))}'" if rng.random() < 0.4 else ""
        args = f"{n}, {rng.choice(keys)}, '{rng.choice(('asc', 'desc'))}'{second}"
    elif kind == "frequent":
        args = f"{rng.randint(2, 3)}, sym" if rng.random() < 0.6 else str(rng.randint(2, 4))
    elif kind == "lossyFrequent":
        sup, err = rng.choice(((0.1, 0.01), (0.3, 0.05), (0.25, 0.1), (0.5, 0.1)))
        args = f"{sup}, {err}, sym" if rng.random() < 0.6 else f"{sup}, {err}"
    elif kind == "session":
        t = _time(rng, ("1 sec", "2 sec"))
        r = rng.random()
        latency = _time(rng, ("500 millisec", "1 sec"))
        args = f"{t}, sym" if r < 0.4 else f"{t}, sym, {latency}" if r < 0.6 else t
    elif kind == "batch":
        args = str(n) if rng.random() < 0.5 else ""
    elif kind == "delay":
        args = _time(rng, ("500 millisec", "1 sec", "2 sec"))
    elif kind == "expression":
        expr = rng.choice((f"count() <= {n}", f"sum({num}) < 150", f"count() < {n} and sum({num}) < 200",
                           "eventTimestamp(last) - eventTimestamp(first) < 2000"))
        args = f"'{expr}'"
    else:  # expressionBatch
        expr = rng.choice((f"count() <= {n}", f"sum({num}) < 150", f"count() < {n} and sum({num}) < 200"))
        args = f"'{expr}'" + (f", {rng.choice(('true', 'false'))}" if rng.random() < 0.3 else "")
    return f"#window.{kind}({args})", kind


# Siddhi's min and max keep a queue that assumes the oldest event leaves first, and lose the
# value where a session ends: over these windows their answers are not the window's minimum or
# maximum (a defect kept out of Srota, docs/siddhi-differences.md; so is their forgetting in a
# query that neither slides nor outputs expired events, see _named_window_family)
_NOT_FIFO = ("sort", "frequent", "lossyFrequent", "session", "expression", "expressionBatch", "delay")


def kind_of(window: str) -> str:
    """The window's name in ``#window.name(...)`` ('' for none)."""
    return window[len("#window."):].split("(", 1)[0] if window else ""


def _no_min_max_over(kind: str, kinds: Sequence[str]) -> tuple[str, ...]:
    """``kinds`` without min and max where the window ``kind`` does not expire in arrival order."""
    return tuple(k for k in kinds if not (kind in _NOT_FIFO and k in ("min", "max")))


_AGGREGATOR_KINDS = ("sum", "count", "avg", "min", "max", "stdDev", "distinctCount", "maxForever", "minForever",
                     "and", "or", "unionSet")


def _aggregators(rng: random.Random, s: _Stream, count: int, prefix: str = "",
                 kinds: Sequence[str] | None = None, windowed: bool = False) -> list[tuple[str, str]]:
    """``count`` distinct core aggregators over ``s`` as (expression, output name).

    ``windowed``: they read a window, whose events leave: there ``min`` and ``max`` read a
    floating-point attribute (below).
    """
    nums = s.numeric()
    # Siddhi's min and max queue removes the first *equal* value when an event leaves, which
    # may be a later event's (docs/siddhi-differences.md, a defect kept out of Srota): over a
    # window they read doubles, of which the generator draws 991 values, not ints of a few dozen
    extremes = (s.of_type("double", "float") or nums) if windowed else nums

    def num() -> str:
        return prefix + rng.choice(nums)

    def extreme() -> str:
        return prefix + rng.choice(extremes)

    table: dict[str, Callable[[], str]] = {
        "sum": lambda: f"sum({num()})",
        "count": lambda: "count()" if rng.random() < 0.7 else f"count({num()})",
        "avg": lambda: f"avg({num()})",
        "min": lambda: f"min({extreme()})",
        "max": lambda: f"max({extreme()})",
        "stdDev": lambda: f"stdDev({num()})",
        "distinctCount": lambda: f"distinctCount({rng.choice((prefix + 'sym', num()))})",
        "maxForever": lambda: f"maxForever({num()})",
        "minForever": lambda: f"minForever({num()})",
        "and": lambda: f"and({prefix}ok)" if s.of_type("bool") else f"and({num()} > 30)",
        "or": lambda: f"or({prefix}ok)" if s.of_type("bool") else f"or({num()} > 70)",
        "unionSet": lambda: f"sizeOfSet(unionSet(createSet({rng.choice((prefix + 'sym', num())) })))",
    }
    names = rng.sample(list(kinds or table), min(count, len(kinds or table)))
    assert set(names) <= set(_AGGREGATOR_KINDS)
    return [(table[k](), f"{k.lower()}{i}") for i, k in enumerate(names)]


# ---------------------------------------------------------------------------------------------
# Families


def _filter(app: _App) -> list[dict[str, Any]]:
    rng = app.rng
    s = _stock(rng, "S", flag=rng.random() < 0.5, nulls=rng.random() < 0.5)
    app.define(s.define())
    app.values.edge_rate = rng.choice((0.0, 0.0, 0.1, 0.3))
    edges = bool(app.values.edge_rate)
    outs = []
    for i in range(rng.randint(1, 3)):
        out = f"O{i + 1}"
        where = f"[{_cond(rng, s)}]" if rng.random() < 0.8 else ""
        app.query(f"from S{where}\nselect {_projection(rng, s, edges=edges)}\ninsert into {out}")
        outs.append(out)
    if rng.random() < 0.35:
        # a second step over an intermediate stream of known attributes
        mid = _Stream("Mid", (("sym", "string"), ("x", rng.choice(_NUMERIC)), ("y", rng.choice(_NUMERIC))))
        x, _ = _arith(rng, s, 1)
        y, _ = _arith(rng, s, 1)
        app.query(f"from S[{_cond(rng, s, 1)}]\nselect sym, convert({x}, '{mid.type_of('x')}') as x, "
                  f"convert({y}, '{mid.type_of('y')}') as y\ninsert into Mid")
        app.query(f"from Mid[{_cond(rng, mid, 1)}]\nselect {_projection(rng, mid, 2, edges)}\ninsert into O9")
        outs.append("O9")
        if rng.random() < 0.5:
            app.watch("Mid")
    app.watch(*outs)
    if rng.random() < 0.1:
        app.watch("S")
    return _steps(app, [(s, 1.0)])


def _insert_kind(rng: random.Random, current_only: bool = False) -> str:
    if current_only:
        return rng.choice(("insert into", "insert current events into"))
    return rng.choice(("insert into", "insert into", "insert current events into",
                       "insert expired events into", "insert all events into"))


def _window_family(app: _App) -> list[dict[str, Any]]:
    rng = app.rng
    s = _stock(rng, "S", ts=rng.random() < 0.3, nulls=rng.random() < 0.2)
    app.define(s.define())
    for i in range(rng.randint(1, 2)):
        window, kind = _window(rng, s)
        app.singles = app.singles or kind == "delay"
        where = f"[{_cond(rng, s, 1)}]" if rng.random() < 0.25 else ""
        r = rng.random()
        group = ""
        if r < 0.4:
            select = "*"
        elif r < 0.6:
            select = ", ".join(["sym", *rng.sample(s.names()[1:], rng.randint(1, 2))])
        else:
            aggs = _aggregators(rng, s, rng.randint(1, 3),
                                kinds=_no_min_max_over(kind, ("sum", "count", "avg", "min", "max")), windowed=bool(kind))
            select = ", ".join(["sym", *(f"{e} as {n}" for e, n in aggs)])
            if rng.random() < 0.5:
                group = "\ngroup by sym"
        out = f"O{i + 1}"
        app.query(f"from S{where}{window}\nselect {select}{group}\n{_insert_kind(rng)} {out}")
        app.watch(out)
    return _steps(app, [(s, 1.0)])


def _aggregate_family(app: _App) -> list[dict[str, Any]]:
    rng = app.rng
    s = _stock(rng, "S", flag=rng.random() < 0.5, nulls=rng.random() < 0.2)
    app.define(s.define())
    # no NaN: Siddhi's min and max over a window answer NaN while their queue's head is one,
    # though the window holds numbers; Srota passes over a NaN (docs/siddhi-differences.md)
    app.values.edge_rate, app.values.edge_nan = rng.choice((0.0, 0.0, 0.1, 0.3)), False
    for i in range(rng.randint(1, 2)):
        window = ""
        if rng.random() < 0.8:
            window, _ = _window(rng, s, ("length", "lengthBatch", "time", "timeBatch", "timeLength", "batch"))
        # Siddhi 5.1.33 defects kept out of Srota (docs/siddhi-differences.md): unionSet keeps
        # values that left a window; and/or of a null throw inside Siddhi
        kinds = [k for k in _AGGREGATOR_KINDS if not (k == "unionSet" and window)
                 and not (k in ("and", "or") and s.nullable)]
        aggs = _aggregators(rng, s, rng.randint(2, 5), kinds=kinds, windowed=bool(window))
        grouped = rng.random() < 0.7
        select = ", ".join([*(["sym"] if grouped else []), *(f"{e} as {n}" for e, n in aggs)])
        tail = "\ngroup by sym" if grouped else ""
        if rng.random() < 0.4:
            e, n = rng.choice(aggs)
            if e.startswith(("and(", "or(")):
                tail += f"\nhaving {n} == {rng.choice(('true', 'false'))}"
            else:
                tail += f"\nhaving {n} {rng.choice(('>', '>=', '<'))} {_threshold(rng, n, e)}"
        if rng.random() < 0.5:
            keys = [f"{n} {rng.choice(('asc', 'desc'))}" for _, n in rng.sample(aggs, 1)]
            if grouped:
                keys.insert(rng.randint(0, 1), "sym" + rng.choice(("", " desc")))
            tail += "\norder by " + ", ".join(keys)
        limited = rng.random() < 0.35
        if limited:
            tail += f"\nlimit {rng.randint(1, 3)}"
            if rng.random() < 0.5:
                tail += f"\noffset {rng.randint(0, 2)}"
        elif rng.random() < 0.1:
            tail += f"\noffset {rng.randint(1, 2)}"
        out = f"O{i + 1}"
        # Siddhi 5.1.33 defects kept out of Srota (docs/siddhi-differences.md): its limit lets
        # every expired event through; a batch(n) window expires the whole of a chunk of more
        # than n events at the next chunk, after the aggregators were reset at each n, so
        # distinctCount is asked to remove values it never counted and throws
        uncounted = (kind_of(window) == "batch" and window != "#window.batch()"
                     and any(e.startswith("distinctCount(") for e, _ in aggs))
        insert = _insert_kind(rng, current_only=limited or uncounted)
        app.query(f"from S{window}\nselect {select}{tail}\n{insert} {out}")
        app.watch(out)
    return _steps(app, [(s, 1.0)])


def _threshold(rng: random.Random, name: str, expr: str) -> int:
    """A threshold that some values of aggregator ``expr`` (output as ``name``) pass and some
    do not (vol is 1-60, the other numbers 1-100)."""
    if name.startswith(("count", "distinctcount", "unionset")):
        return rng.randint(1, 3)
    if name.startswith("stddev"):
        return rng.randint(5, 30)
    hi = 60 if "vol" in expr else 100
    if name.startswith("sum"):
        return rng.randint(hi // 3, hi * 2)
    return rng.randint(hi // 5, hi * 3 // 4)


def _rate_family(app: _App) -> list[dict[str, Any]]:
    rng = app.rng
    s = _stock(rng, "S")
    app.define(s.define())
    for i in range(rng.choice((1, 2, 2))):
        window = ""
        if rng.random() < 0.6:
            window, _ = _window(rng, s, ("length", "lengthBatch", "time", "timeBatch"))
        grouped = rng.random() < 0.5
        if rng.random() < 0.5:
            aggs = _aggregators(rng, s, rng.randint(1, 2), kinds=("sum", "count", "avg", "max"), windowed=bool(window))
            select = ", ".join(["sym", *(f"{e} as {n}" for e, n in aggs)])
        else:
            select = ", ".join(["sym", *rng.sample(s.numeric(), rng.randint(1, 2))])
        group = "\ngroup by sym" if grouped else ""
        # Siddhi 5.1.33 never emits a time-based rate under playback with these timestamps (its
        # rate limiters start their period at System.currentTimeMillis(): a defect kept out of
        # Srota, docs/siddhi-differences.md), so an app's first query counts events, and a
        # second one that counts time runs on both engines with its output not compared
        r = 0.0 if i == 0 else rng.random()
        if r < 0.45:
            rate = f"output {rng.choice(('all ', 'first ', 'last ', ''))}every {rng.randint(2, 4)} events"
        elif r < 0.8:
            period = _time(rng, ("1 sec", "2 sec", "3 sec"))
            rate = f"output {rng.choice(('all ', 'first ', 'last ', ''))}every {period}"
        else:
            rate = f"output snapshot every {_time(rng, ('1 sec', '2 sec', '3 sec'))}"
        if rate.startswith("output snapshot"):  # Siddhi: a snapshot can only insert all events
            insert = rng.choice(("insert into", "insert all events into"))
        else:
            insert = _insert_kind(rng)
        out = f"O{i + 1}"
        by_time = r >= 0.45
        app.elements.append(app.query_text(f"from S{window}\nselect {select}{group}\n{rate}\n{insert} {out}",
                                           callback=not by_time))
        if not by_time:
            app.watch(out)
    return _steps(app, [(s, 1.0)])


# no delay(): Siddhi 5.1.33 hangs (the runner times out) on a join with a delay window
_JOIN_WINDOWS = ("length", "lengthBatch", "time", "timeBatch", "timeLength", "sort", "batch", "session")


def _join_family(app: _App) -> list[dict[str, Any]]:
    rng = app.rng
    s = _stock(rng, "S", extra=False, flag=False, nulls=rng.random() < 0.2)
    r_ = _stock(rng, "R", extra=False, flag=False)
    app.define(s.define())
    app.define(r_.define())
    for i in range(rng.randint(1, 2)):
        join = rng.choice(("join", "join", "left outer join", "right outer join", "full outer join"))
        uni = rng.random()
        left_uni = " unidirectional" if uni < 0.2 and join in ("join", "left outer join") else ""
        right_uni = " unidirectional" if 0.2 <= uni < 0.35 and join in ("join", "right outer join") else ""
        lw = _window(rng, s, _JOIN_WINDOWS)[0] if not (left_uni and rng.random() < 0.3) else ""
        rw = _window(rng, r_, _JOIN_WINDOWS)[0] if not (right_uni and rng.random() < 0.3) else ""
        on = ""
        c = rng.random()
        if c < 0.55:
            on = "\non a.sym == b.sym"
        elif c < 0.85:
            on = (f"\non a.sym == b.sym and a.{rng.choice(s.numeric())} {rng.choice(_COMPARE[:4])} "
                  f"b.{rng.choice(r_.numeric())}")
        elif c < 0.93:
            on = f"\non a.{rng.choice(s.numeric())} > b.{rng.choice(r_.numeric())}"
        group = ""
        if rng.random() < 0.3:
            select = f"a.sym as sym, count() as n, sum(b.{rng.choice(r_.numeric())}) as total"
            group = "\ngroup by a.sym"
        else:
            select = (f"a.sym as asym, b.sym as bsym, a.{rng.choice(s.numeric())} as av, "
                      f"b.{rng.choice(r_.numeric())} as bv")
            if rng.random() < 0.3:
                select += ", a.price + b.price as both"
        out = f"O{i + 1}"
        app.query(f"from S{lw} as a{left_uni} {join} R{rw} as b{right_uni}{on}\nselect {select}{group}\n"
                  f"{_insert_kind(rng)} {out}")
        app.watch(out)
    return _steps(app, [(s, 1.0), (r_, 1.0)])


def _join_store_family(app: _App) -> list[dict[str, Any]]:
    rng = app.rng
    store = rng.choice(("table", "window", "aggregation"))
    s = _stock(rng, "S", extra=False, flag=False, ts=store == "aggregation" and rng.random() < 0.5)
    r_ = _Stream("R", (("sym", "string"), ("vol", rng.choice(("int", "long")))))
    app.define(s.define())
    app.define(r_.define())
    ondemand: list[str] = []
    rw = _window(rng, r_, ("length", "time", "lengthBatch"))[0] if rng.random() < 0.3 else ""
    if store == "table":
        # a keyed table is read in its key map's order; `t.vol > r.vol` looks an int up in the
        # long key's TreeMap, which Siddhi fails on (docs/siddhi-differences.md)
        keys = ["", "@PrimaryKey('sym') "] + (["@PrimaryKey('vol') "] if r_.type_of("vol") == "long" else [])
        app.define(f"{rng.choice(keys)}define table T (sym string, price double, vol long);")
        app.query("from S select sym, convert(price, 'double') as price, convert(vol, 'long') as vol\n"
                  "insert into T")
        join = rng.choice(("join", "left outer join"))
        on = rng.choice(("on r.sym == t.sym", "on r.sym == t.sym and t.price > 20.0", "on t.vol > r.vol", ""))
        app.query(f"from R{rw} as r {join} T as t {on}\n"
                  "select r.sym as sym, r.vol as rv, t.price as price, t.vol as tv\ninsert into O1")
        ondemand.append("from T on price > 50.0 select sym, price, vol")
    elif store == "window":
        window, kind = _window(rng, s, ("length", "time", "lengthBatch", "timeBatch", "timeLength"))
        output = _window_output(rng, kind)
        app.define(f"define window W ({', '.join(f'{a} {t}' for a, t in s.attrs)}) {window[8:]}{output};")
        app.query("from S insert into W")
        join = rng.choice(("join", "join", "left outer join", "right outer join", "full outer join"))
        uni = " unidirectional" if join == "join" and rng.random() < 0.4 else ""
        app.query(f"from R{rw if not uni else ''} as r{uni} {join} W as w on r.sym == w.sym\n"
                  "select r.sym as rsym, w.sym as wsym, w.price as price, r.vol as rv\n"
                  f"{_insert_kind(rng)} O1")
        ondemand.append("from W select *")
    else:
        read, _ = _aggregation(app, s, True, [("sum(price)", "total"), ("count()", "n"), ("max(vol)", "mv")])
        on = "on r.sym == a.sym " if rng.random() < 0.8 else ""
        app.query(f"from R as r join A as a {on}{read}\n"
                  "select a.AGG_TIMESTAMP as bucket, r.sym as rsym, a.sym as sym, a.total as total, "
                  "a.n as n\norder by bucket, sym\ninsert into O1")
        ondemand.append(f"from A {read} select AGG_TIMESTAMP, sym, total, n order by AGG_TIMESTAMP, sym")
    app.watch("O1")
    return _steps(app, [(s, 2.0), (r_, 1.0)], ondemand=ondemand[: rng.randint(0, 1)],
                  long_gaps=store == "aggregation")


# Patterns and sequences --------------------------------------------------------------------


@dataclass
class _Element:
    """One element of a pattern or sequence: its text and what the select clause may read."""

    text: str
    selects: list[str]
    alias: str | None = None  # the alias later filters may refer to (not for counted elements)


def _state_filter(rng: random.Random, s: _Stream, earlier: list[str], lenient: bool) -> str:
    """``[...]`` for a state element (maybe empty when ``lenient``, as a sequence needs its
    elements to match one after another)."""
    parts = []
    if earlier and rng.random() < (0.4 if lenient else 0.6):
        ref = rng.choice(earlier)
        parts.append(rng.choice((f"sym == {ref}.sym", f"price > {ref}.price", f"vol != {ref}.vol",
                                 # (an equality with a range beside it: the index and its bounds)
                                 f"sym == {ref}.sym and price {rng.choice(('<', '<=', '>', '>='))} "
                                 f"{ref}.price {rng.choice(('* 0.9', '* 1.1', '- 5.0', '+ 5.0'))}")))
    if not parts and (not lenient or rng.random() < 0.5) or rng.random() < (0.15 if lenient else 0.4):
        parts.append(_simple_cond(rng, s) if rng.random() < 0.85 else _cond(rng, s, 0))
    return f"[{' and '.join(parts)}]" if parts else ""


def _state_element(rng: random.Random, streams: list[_Stream], i: int, earlier: list[str], *,
                   sequence: bool, first: bool, last: bool, absent: bool = True) -> _Element:
    """Element ``i``: plain, counted, logical, or (when ``absent``) absent."""
    s = rng.choice(streams)
    alias = f"e{i}"
    r = rng.random()
    if r < 0.5 or r >= 0.85 and not absent:
        return _Element(f"{alias}={s.name}{_state_filter(rng, s, earlier, sequence)}",
                        [f"{alias}.sym", f"{alias}.price"], alias)
    if r < 0.7:
        if sequence:
            mark = rng.choice(("+", "*", "?", f"<{rng.randint(1, 2)}:{rng.randint(2, 4)}>"))
        else:
            lo = rng.randint(1, 2)
            mark = rng.choice((f"<{lo}:{lo + rng.randint(0, 3)}>", f"<{lo}:>", f"<:{rng.randint(2, 3)}>",
                               f"<{lo}>"))
        if last and mark in ("*", "?", "<:2>", "<:3>") or first and mark in ("*", "?"):
            mark = "+" if sequence else "<1:3>"
        return _Element(f"{alias}={s.name}{_state_filter(rng, s, earlier, sequence)}{mark}",
                        # (unindexed, a counting state's attribute is the list of its values)
                        [f"{alias}[0].price", f"{alias}[1].price", f"{alias}[last].price", f"{alias}.price",
                         f"{alias}.sym"])
    if r < 0.85:
        other = rng.choice(streams)
        op = rng.choice(("and", "or"))
        a2 = f"e{i}b"
        return _Element(f"{alias}={s.name}{_state_filter(rng, s, earlier, sequence)} {op} {a2}={other.name}"
                        f"{_state_filter(rng, other, earlier, sequence)}", [f"{alias}.price", f"{a2}.price"],
                        alias if op == "and" else None)
    # absent
    if last or rng.random() < 0.5:
        wait = _time(rng, ("500 millisec", "1 sec", "2 sec"))
        return _Element(f"not {s.name}{_state_filter(rng, s, earlier, sequence)} for {wait}", [])
    other = rng.choice(streams)
    return _Element(f"not {s.name}{_state_filter(rng, s, earlier, sequence)} and {alias}={other.name}"
                    f"{_state_filter(rng, other, earlier, sequence)}", [f"{alias}.price"], alias)


def _states(app: _App, sequence: bool) -> list[dict[str, Any]]:
    rng = app.rng
    count = rng.choice((1, 2, 2) if sequence else (1, 2, 2, 3))
    base = _stock(rng, "S1", extra=False, flag=False)
    streams = [_same_as(base, f"S{k + 1}") for k in range(count)]
    for st in streams:
        app.define(st.define())
    for q in range(rng.randint(1, 2)):
        out = f"O{q + 1}"
        app.query(f"{_state_query(rng, streams, sequence)}\ninsert into {out}")
        app.watch(out)
    return _steps(app, [(st, 1.0) for st in streams], count=(30, 50) if sequence else (20, 40))


def _state_query(rng: random.Random, streams: list[_Stream], sequence: bool) -> str:
    """A pattern (or ``sequence``) query over ``streams``, from ``from`` to its select (no insert)."""
    n = rng.choice((2, 2, 2, 3))
    elements: list[_Element] = []
    earlier: list[str] = []
    for i in range(1, n + 1):
        # Siddhi's grammar takes no two absent elements in a row (in a sequence, no second one)
        absent_ok = not any(e.text.startswith("not ") for e in (elements if sequence else elements[-1:]))
        el = _state_element(rng, streams, i, earlier, sequence=sequence, first=i == 1, last=i == n,
                            absent=absent_ok)
        elements.append(el)
        if el.alias:
            earlier.append(el.alias)
    if not any(e.selects for e in elements):
        alias = f"e{n + 1}"
        elements.append(_Element(f"{alias}={streams[0].name}", [f"{alias}.sym", f"{alias}.price"], alias))
    joiner = ", " if sequence else " -> "
    texts = [e.text for e in elements]
    where = rng.random()
    absent_first = texts[0].startswith("not ")
    if where < (0.75 if sequence else 0.55) and not absent_first:
        logical = " and " in texts[0] or " or " in texts[0]
        texts[0] = f"every ({texts[0]})" if logical and not sequence else f"every {texts[0]}"
        body = joiner.join(texts)
    elif where < 0.75 and not absent_first and not sequence:
        body = f"every ({texts[0]}{joiner}{texts[1]})" + "".join(joiner + t for t in texts[2:])
    elif where < 0.85 and not sequence and not texts[1].startswith("not "):
        t1 = texts[1] if " and " not in texts[1] and " or " not in texts[1] else f"({texts[1]})"
        body = joiner.join([texts[0], f"every {t1}", *texts[2:]])
    else:
        body = joiner.join(texts)
    within = f"\nwithin {_time(rng, ('2 sec', '3 sec', '5 sec'))}" if rng.random() < 0.4 else ""
    selects = [x for e in elements for x in e.selects]
    chosen = rng.sample(selects, min(len(selects), rng.randint(1, 4)))
    select = ", ".join(f"{x} as v{k}" for k, x in enumerate(chosen))
    tail = ""
    if rng.random() < 0.25:
        # aggregates over the matches (a count state matched again within a chunk hands
        # on its later row for both: PatternRuntime._send_captured)
        select += ", count() as n"
        # (a count state's plain ``e2.price`` is the list of its events' prices)
        counted = {x.split("[")[0] for x in selects if "[" in x}
        prices = [x for x in selects if x.endswith(".price") and ("[" in x or x.split(".")[0] not in counted)]
        if prices:
            select += f", {rng.choice(('sum', 'max', 'min', 'avg'))}({rng.choice(prices)}) as a"
        if rng.random() < 0.4:
            tail += f"\ngroup by {chosen[0]}"
        if rng.random() < 0.3:
            # (a state event selected again in one chunk whose later row fails: its earlier
            # row goes out with the refused one's values, PatternRuntime._send_captured)
            tail += f"\nhaving n {rng.choice(('>=', '<', '!='))} {rng.randint(1, 3)}"
    return f"from {body}{within}\nselect {select}{tail}"


def _pattern_family(app: _App) -> list[dict[str, Any]]:
    return _states(app, sequence=False)


def _sequence_family(app: _App) -> list[dict[str, Any]]:
    return _states(app, sequence=True)


def _partition_family(app: _App) -> list[dict[str, Any]]:
    rng = app.rng
    s = _stock(rng, "S", extra=False, ts=rng.random() < 0.3)
    app.define(s.define())
    inputs = [(s, 1.0)]
    inner: list[str] = []
    overlapping = False
    w_output = ""
    kind = rng.random()
    source = "S"  # what the partition's single-stream queries read
    if kind < 0.45:
        key = "sym of S"
        if rng.random() < 0.3:
            # keyed on a named window: each key reads what W emits, current and expired
            wdef, wkind = _window(rng, s, ("length", "lengthBatch", "time"))
            w_output = _window_output(rng, wkind)
            app.define(f"define window W ({', '.join(f'{a} {t}' for a, t in s.attrs)}) {wdef[8:]}{w_output};")
            app.elements.append(app.query_text("from S insert into W", callback=False))
            key, source = "sym of W", "W"
    elif kind < 0.7:
        r_ = _same_as(s, "R")
        app.define(r_.define())
        inputs.append((r_, 1.0))
        key = "sym of S, sym of R"
    else:
        attr = rng.choice(s.numeric())
        hi = 60 if attr == "vol" else 100
        cut = rng.randint(hi // 4, hi * 3 // 4)
        overlapping = rng.random() < 0.5
        if not overlapping:
            key = f"{attr} < {cut} as 'low' or {attr} >= {cut} as 'high' of S"
        else:  # an event in both ranges goes to both keys at one millisecond
            key = f"{attr} < {cut} as 'low' or {attr} >= {cut // 2} as 'high' of S"
    two = len(inputs) == 2
    r = rng.random()
    if two and r < 0.35:
        left, right = (_window(rng, s, ("length", "time"))[0] for _ in range(2))
        inner.append(app.query_text(
            f"from S{left} as a join R{right} as b on a.price > b.price\n"
            "select a.sym as sym, a.price as ap, b.price as bp\ninsert into O1", callback=False))
    elif two and r < 0.7:
        inner.append(app.query_text(
            f"from every e1=S -> e2=R[price > e1.price]{rng.choice(('', ' within 3 sec'))}\n"
            f"select e1.sym as sym, e1.price as p1, e2.price as p2\ninsert into O1", callback=False))
    else:
        # no timeBatch: Siddhi 5.1.33 keeps its next emit time on the window processor, not per
        # key, so only the first key's batches come out (docs/siddhi-differences.md)
        kinds = ["length", "lengthBatch", "time", "session"]
        if overlapping:  # no timers: Siddhi collapses several keys' timers due at one millisecond
            kinds = ["length", "lengthBatch"]
        window = _window(rng, s, [*kinds, "externalTime"] if "ts" in s.names() and not overlapping else kinds)[0]
        window = window if rng.random() < 0.8 and source == "S" else ""  # (W takes no other window)
        # (min and max over W forget a value that leaves W: docs/siddhi-differences.md)
        # (distinctCount of a value it never counted, as W's expired events are to a key:
        # Siddhi throws, and the keys after it are not made; docs/siddhi-differences.md)
        agg_kinds = ("sum", "count", "avg", *(() if "expired" in w_output or "all" in w_output
                                              else ("distinctCount",))) if source == "W" else \
            _no_min_max_over(kind_of(window), ("sum", "count", "avg", "min", "max", "distinctCount"))
        aggs = _aggregators(rng, s, rng.randint(1, 3), kinds=agg_kinds, windowed=bool(window))
        select = ", ".join(f"{e} as {n}" for e, n in aggs)
        inner.append(app.query_text(f"from {source}{window}\nselect sym, {select}\ninsert into #Inner",
                                    callback=False))
        expr, first = aggs[0]
        cond = f"{first} {rng.choice(('>', '>=', '<='))} {_threshold(rng, first, expr)}"
        inner.append(app.query_text(f"from #Inner[{cond}]\nselect *\ninsert into O1", callback=False))
        if rng.random() < 0.4:
            inner.append(app.query_text(
                f"from #Inner#window.length({rng.randint(2, 3)})\nselect sym, count() as c\ninsert into O2",
                callback=False))
            app.watch("O2")
        if two:
            inner.append(app.query_text(f"from R[{_cond(rng, s, 1)}]\nselect sym, price\ninsert into O3",
                                        callback=False))
            app.watch("O3")
    if source == "S" and not overlapping and rng.random() < 0.25:
        # A pattern or sequence of its own per key, over the partitioned streams.  Not over a
        # stream every key reads (keyed on W) nor with keys that share events (overlapping
        # ranges): their keys' timers would come due at one millisecond, which Siddhi
        # 5.1.33's playback scheduler collapses (docs/siddhi-differences.md); for the same
        # reason an absent state gets one event per chunk (keys made in one chunk start their
        # waits at its time).
        query = _state_query(rng, [st for st, _ in inputs], rng.random() < 0.4)
        app.singles = app.singles or "not " in query
        inner.append(app.query_text(f"{query}\ninsert into O5", callback=False))
        app.watch("O5")
    if source == "S" and rng.random() < 0.25:
        # a named window every key reads: each window chunk goes to the keys in Siddhi's order
        app.define(f"define window W ({', '.join(f'{a} {t}' for a, t in s.attrs)}) length({rng.randint(2, 4)});")
        app.elements.append(app.query_text("from S insert into W", callback=False))
        inner.append(app.query_text("from W select sym, sum(price) as total\ninsert into O4", callback=False))
        app.watch("O4")
    if rng.random() < 0.25:
        # an output rate per key, counting events (a rate by time never fires under playback in
        # Siddhi 5.1.33: see the rate family)
        window = _window(rng, s, ("length", "lengthBatch"))[0] if rng.random() < 0.5 else ""
        num = rng.choice(s.numeric())
        select = rng.choice((f"sym, {num}", f"sym, sum({num}) as total, count() as n"))
        rate = f"output {rng.choice(('all ', 'first ', 'last ', ''))}every {rng.randint(2, 3)} events"
        inner.append(app.query_text(f"from S{window}\nselect {select}\n{rate}\ninsert into O6", callback=False))
        app.watch("O6")
    ondemand: list[str] = []
    if rng.random() < 0.25:
        # a table every key writes, read by a join outside and on demand
        num = rng.choice(s.numeric())
        app.define(f"@PrimaryKey('sym')\ndefine table T (sym string, v {s.type_of(num)}, n long);")
        write = rng.choice((f"from S select sym, {num} as v, count() as n\nupdate or insert into T\n"
                            "set T.v = v, T.n = n\non T.sym == sym",
                            f"from S select sym, {num} as v, count() as n\ninsert into T",
                            f"from S[{_cond(rng, s, 1)}] select sym\ndelete T on T.sym == sym"))
        if "\ndelete T" in write:  # (rows to delete)
            inner.append(app.query_text(f"from S select sym, {num} as v, 1L as n\nupdate or insert into T\n"
                                        "on T.sym == sym", callback=False))
        inner.append(app.query_text(write, callback=False))
        app.query("from S join T on S.sym == T.sym\nselect S.sym as sym, T.v as v, T.n as n\ninsert into O7")
        app.watch("O7")
        ondemand.append("from T select sym, v, n order by sym")
    app.watch("O1")
    app.elements.append(f"partition with ({key})\nbegin\n" + "\n".join(inner) + "\nend;")
    if rng.random() < 0.3:
        app.query("from O1 select * insert into Outside")
        app.watch("Outside")
    # distinct times: Siddhi 5.1.33's playback scheduler collapses the timers of several keys
    # due at one millisecond into one (docs/siddhi-differences.md)
    return _steps(app, inputs, distinct_times=True, ondemand=ondemand)


def _table_family(app: _App) -> list[dict[str, Any]]:
    rng = app.rng
    s = _Stream("S", (("sym", "string"), ("price", "double"), ("vol", "int")))
    u = _same_as(s, "U")
    d = _Stream("D", (("sym", "string"), ("price", "double")))
    q = _Stream("Q", (("sym", "string"), ("price", "double")))
    for st in (s, u, d, q):
        app.define(st.define())
    key = rng.random()
    # a keyed table is read in its key map's order (a TreeMap for the int key, a HashMap for
    # the others); an @Index alone reads from hash sets of events, in no repeatable order
    primary = key < 0.45
    annotation = ("@PrimaryKey('sym')\n" if key < 0.25 else "@PrimaryKey('vol')\n" if key < 0.37
                  else "@PrimaryKey('sym', 'vol')\n" if primary
                  else "@Index('sym')\n" if key < 0.6 else "")
    app.define(f"{annotation}define table T (sym string, price double, vol int);")
    inputs: list[tuple[_Stream, float]] = [(s, 2.0), (q, 1.5)]
    app.query(rng.choice(("from S insert into T", "from S select sym, price, vol insert into T",
                          "from S[vol > 5] select sym, price * 2 as price, vol insert into T")))
    # Siddhi 5.1.33's table defects, kept out of Srota (docs/siddhi-differences.md), stay out of
    # the apps: a keyed table's `set` reads its own columns as null; a delete whose key lookup
    # works with another condition deletes nothing; a primary key's `update or insert ... set`
    # overwrites the whole row; an @Index table's rows are hash-set members that updates change
    # in place; a plain table loses the inserts after its last row is deleted; a composite key
    # updated in place stays under its old key
    indexed = annotation.startswith("@Index")
    updates = ["from U select sym, price, vol\nupdate T\non T.sym == sym",
               "from U\nupdate T set T.price = price, T.vol = vol\non T.sym == sym",
               "from U\nupdate or insert into T\non T.sym == sym"]
    if "'sym', 'vol'" in annotation:
        # a composite key's columns stay as they are: Siddhi changes such a row in place and its
        # key map keeps the old key (docs/siddhi-differences.md, In-memory tables)
        updates = ["from U\nupdate T set T.price = price\non T.sym == sym",
                   "from U\nupdate or insert into T\non T.sym == sym and T.vol == vol"]
    if not annotation:
        updates += ["from U\nupdate T set T.price = T.price + price\non T.sym == sym and T.vol < vol",
                    "from U select sym, price, vol\nupdate or insert into T set T.price = price\non T.sym == sym"]
    if not indexed and rng.random() < 0.7:
        inputs.append((u, 1.0))
        app.query(rng.choice(updates))
    if annotation and rng.random() < 0.6:
        inputs.append((d, 0.6))
        app.query("from D\ndelete T\non T.sym == sym")
    # an @Index table keeps its rows in hash sets of events: their order is Siddhi's own
    # accident, so what reads several rows of one sorts them fully
    hashed = annotation != "" and not primary
    reads = rng.sample(("in", "not in", "join", "outer"), rng.randint(1, 2))
    for i, read in enumerate(reads):
        out = f"O{i + 1}"
        if read == "in":
            app.query(f"from Q[(sym == T.sym) in T]\nselect sym, price\ninsert into {out}")
        elif read == "not in":
            app.query(f"from Q[not ((sym == T.sym and T.price > price) in T)]\nselect sym, price\n"
                      f"insert into {out}")
        else:
            join = "left outer join" if read == "outer" and not (hashed and not primary) else "join"
            on = "q.sym == t.sym" if rng.random() < 0.7 else "q.price < t.price"
            order = "\norder by sym, qp, tp, tv" if hashed else ""
            app.query(f"from Q as q {join} T as t on {on}\n"
                      "select q.sym as sym, q.price as qp, t.price as tp, "
                      f"t.vol as tv{order}\ninsert into {out}")
        app.watch(out)
    ondemand = ["from T select sym, price, vol order by sym, price, vol" if hashed else "from T select *"]
    ondemand.append(rng.choice((
        "from T on price > 50.0 select sym, price" + (" order by sym, price" if hashed else ""),
        "from T select sym, sum(price) as total, count() as n group by sym order by sym",
        "from T on sym == 'IBM' select vol, price" + (" order by vol, price" if hashed else ""))))
    # on-demand writes, now and then between the events and before the reads at the end, clear
    # of the defects above: no delete from a plain table, no update of an @Index table's rows
    # or of a composite key's columns, and no insert into an @Index table (the same row, put
    # again, is one member of its hash set)
    sym, vol, price = rng.choice(app.values.symbols), rng.randint(1, 60), rng.randint(10, 999) / 10
    writes = [] if indexed else [f"select '{sym}' as sym, {price} as price, {vol} as vol insert into T"]
    if annotation:
        writes.append(f"delete T on T.sym == '{sym}'")
    if not indexed:
        writes.append(f"select '{sym}' as s, {price} as p update T set T.price = p on T.sym == s")
        key = "T.sym == sym and T.vol == vol" if "'sym', 'vol'" in annotation else "T.sym == sym"
        writes.append(f"select '{sym}' as sym, {price} as price, {vol} as vol update or insert into T on {key}")
    return _steps(app, inputs, ondemand=rng.sample(writes, rng.randint(0, min(2, len(writes)))) + ondemand)


def _window_output(rng: random.Random, kind: str) -> str:
    """A named window's ``output ... events`` (not ``current`` for a batch window: Siddhi 5.1.33
    fails every on-demand query on one with a NullPointerException)."""
    batch = kind in ("lengthBatch", "timeBatch", "batch", "externalTimeBatch")
    return rng.choice(("", " output all events", " output expired events",
                       *(() if batch else (" output current events",))))


def _named_window_family(app: _App) -> list[dict[str, Any]]:
    rng = app.rng
    s = _stock(rng, "S", extra=False, ts=rng.random() < 0.2)
    r_ = _Stream("R", (("sym", "string"), ("vol", s.type_of("vol"))))
    app.define(s.define())
    app.define(r_.define())
    reads = rng.sample(("plain", "agg", "join"), rng.randint(1, 2))
    # no session: Siddhi 5.1.33's session window inside a named window throws on every event
    # (a NullPointerException on its onAfterWindowData; docs/siddhi-differences.md)
    kinds = ["length", "lengthBatch", "time", "timeBatch", "timeLength", "sort", "batch", "expression"]
    if "ts" in s.names():
        kinds.append("externalTime")
    if "join" not in reads:  # Siddhi 5.1.33 hangs on a join with a delay window
        kinds.append("delay")
    window, kind = _window(rng, s, kinds)
    app.singles = kind == "delay"
    output = _window_output(rng, kind)
    app.define(f"define window W ({', '.join(f'{a} {t}' for a, t in s.attrs)}) {window[8:]}{output};")
    app.query(rng.choice(("from S insert into W", f"from S[{_cond(rng, s, 1)}] insert into W")))
    inputs: list[tuple[_Stream, float]] = [(s, 2.0)]
    for i, read in enumerate(reads):
        out = f"O{i + 1}"
        if read == "plain":
            app.query(f"from W[{_cond(rng, s, 1)}]\nselect *\n{_insert_kind(rng)} {out}")
        elif read == "agg":
            insert = _insert_kind(rng)
            # ``from W`` has no window of its own, so it does not slide: with current events
            # out, Siddhi's min and max forget a value that leaves (docs/siddhi-differences.md)
            forgets = insert in ("insert into", "insert current events into")
            kinds = (("sum", "count", "avg") if forgets
                     else _no_min_max_over(kind, ("sum", "count", "avg", "min", "max")))
            aggs = _aggregators(rng, s, rng.randint(1, 3), kinds=kinds, windowed=True)
            group = "\ngroup by sym" if rng.random() < 0.5 else ""
            select = ", ".join(f"{e} as {n}" for e, n in aggs)
            app.query(f"from W\nselect sym, {select}{group}\n{insert} {out}")
        else:
            inputs.append((r_, 1.0))
            join = rng.choice(("join", "left outer join"))
            app.query(f"from R as r {join} W as w on r.sym == w.sym\n"
                      "select r.sym as sym, r.vol as rv, w.price as wp\n"
                      f"insert into {out}")
        app.watch(out)
    if kind != "delay" and rng.random() < 0.3:
        # more named windows with timers, all read into one stream: of their timers due at one
        # instant, Siddhi fires the windows' in the order of a HashMap of their ids
        for name in rng.sample(("W2", "Wa", "Q", "Zz", "win"), rng.randint(1, 2)):
            other, other_kind = _window(rng, s, ("time", "timeBatch", "timeLength"))
            app.define(f"define window {name} ({', '.join(f'{a} {t}' for a, t in s.attrs)}) "
                       f"{other[8:]}{_window_output(rng, other_kind)};")
            app.query(f"from S insert into {name}")
            app.query(f"from {name} select '{name}' as w, sym, price\n{_insert_kind(rng)} OW")
        app.query(f"from W select 'W' as w, sym, price\n{_insert_kind(rng)} OW")
        app.watch("OW")
    ondemand = rng.sample(["from W select *", "from W on price > 50.0 select sym, price",
                           "from W select sym, count() as n group by sym order by sym"], rng.randint(1, 2))
    return _steps(app, inputs, ondemand=ondemand)


def _trigger_family(app: _App) -> list[dict[str, Any]]:
    """Siddhi 5.1.33's ``at every`` trigger ticks on the wall clock even under playback
    (``PeriodicTrigger`` is a ``scheduleAtFixedRate`` on the app's executor), so its output
    would depend on how fast the run is: a periodic trigger here has a period (10 min, 1 hour)
    longer than any run's event time, and never ticks on either engine. ``at 'start'`` sends
    one event when the app starts, at the playback clock's time then (0 in Siddhi), and that
    event is kept in a window that the stream's events join."""
    rng = app.rng
    s = _stock(rng, "S", extra=False, flag=False)
    app.define(s.define())
    app.define("define trigger Boot at 'start';")
    app.define(f"define trigger T at every {rng.choice(('10 min', '1 hour'))};")
    uses = rng.sample(("start", "join_start", "periodic", "periodic_join"), rng.randint(2, 3))
    if not {"start", "join_start"} & set(uses):
        uses.append("join_start")
    for i, use in enumerate(uses):
        out = f"O{i + 1}"
        if use == "start":
            app.query(f"from Boot\nselect triggered_time, eventTimestamp() as et, 'boot' as tag\n"
                      f"insert into {out}")
        elif use == "join_start":
            window = _window(rng, s, ("length", "time", "lengthBatch"))[0] if rng.random() < 0.5 else ""
            uni = " unidirectional" if not window else ""
            app.query(f"from S{window} as s{uni} join Boot#window.length(1) as b\n"
                      f"select s.sym as sym, s.price as price, b.triggered_time as boot\ninsert into {out}")
        elif use == "periodic":
            app.query(f"from T\nselect triggered_time\ninsert into {out}")
        else:
            window = _window(rng, s, ("length", "time", "lengthBatch", "timeBatch"))[0]
            app.query(f"from T unidirectional join S{window} as s\n"
                      "select T.triggered_time as tt, s.sym as sym, sum(s.price) as total\n"
                      f"insert into {out}")
        app.watch(out)
    if rng.random() < 0.4:
        # more 'start' triggers into one stream: Siddhi fires them in the order of a HashMap of
        # their ids
        names = ["Boot", *rng.sample(("Go", "Init", "Kick", "Tstart", "A1"), rng.randint(1, 3))]
        for name in names[1:]:
            app.define(f"define trigger {name} at 'start';")
        for name in rng.sample(names, len(names)):
            app.query(f"from {name}\nselect '{name}' as name, triggered_time\ninsert into Starts")
        app.watch("Starts")
    if rng.random() < 0.5:
        app.query(f"from S[{_cond(rng, s, 1)}]\nselect sym, price\ninsert into Plain")
        app.watch("Plain")
    return _steps(app, [(s, 1.0)], count=(10, 30))


# (durations, the ``per`` values a read may use): Siddhi 5.1.33 writes each closed bucket to its
# table on another thread (IncrementalExecutor's executorService); the runner has those writes
# made on the sending thread (SiddhiRunner.writeAggregationTablesInline), so a read per 'seconds'
# or 'minutes' right after a bucket closed sees its rows, as a read a moment later does.
_AGGREGATION_PLANS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("sec ... hour", ("seconds", "minutes", "hours")),
    ("sec ... day", ("minutes", "hours", "days")),
    ("min ... day", ("minutes", "hours", "days")),
    ("sec, min, hour", ("seconds", "minutes", "hours")),
    ("sec, hour, day", ("seconds", "hours", "days")),
    ("hour ... year", ("hours", "days", "months", "years")),
    ("sec ... year", ("seconds", "hours", "days", "months", "years")),
)


def _aggregation(app: _App, s: _Stream, grouped: bool, aggs: list[tuple[str, str]],
                 key: str = "sym") -> tuple[str, str]:
    """Defines aggregation A over ``s``, grouped by ``key`` if ``grouped`` (no filter: Siddhi
    5.1.33's aggregation ``from S[...]`` aggregates nothing); returns a ``within ... per ...``
    clause for reading it."""
    rng = app.rng
    select = ", ".join([*([key] if grouped else []), *(f"{e} as {n}" for e, n in aggs)])
    by = " by ts" if "ts" in s.names() and rng.random() < 0.7 else ""
    durations, pers = rng.choice(_AGGREGATION_PLANS)
    group = f"\ngroup by {key}" if grouped else ""
    app.define(f"define aggregation A\nfrom S\nselect {select}{group}\naggregate{by} every {durations};")
    per = rng.choice(pers)
    within = rng.choice(("within 1672531200000L, 1704067200000L",) if per in ("months", "years") else
                        ("within 1672531200000L, 1704067200000L", "within 1699920000000L, 1700006400000L",
                         "within 1699999200000L, 1700002800000L" if per == "hours" else
                         "within 1699920000000L, 1700006400000L"))
    return f"{within} per '{per}'", per


def _aggregation_family(app: _App) -> list[dict[str, Any]]:
    rng = app.rng
    s = _stock(rng, "S", ts=rng.random() < 0.5, extra=False, flag=False)
    r_ = _Stream("R", (("sym", "string"), ("n", "int")))
    app.define(s.define())
    app.define(r_.define())
    grouped = rng.random() < 0.75
    # now and then grouped by a number: a double's key tells -0.0 from 0.0 and takes the NaNs
    # for one group, as Siddhi's key text does
    key = "sym" if not grouped or rng.random() < 0.8 else rng.choice(("price", "vol"))
    aggs = [("sum(price)", "total"), ("count()", "n")]
    aggs += rng.sample([("avg(price)", "ap"), ("min(price)", "lo"), ("max(price)", "hi"), ("sum(vol)", "sv"),
                        ("max(vol)", "mv"), ("distinctCount(vol)", "dv")], rng.randint(1, 3))
    read, _ = _aggregation(app, s, grouped, aggs, key)
    names = ", ".join(n for _, n in aggs)
    order = f"AGG_TIMESTAMP, {key}" if grouped else "AGG_TIMESTAMP"
    cols = f"AGG_TIMESTAMP, {key + ', ' if grouped else ''}{names}"
    # (now and then no order by: the rows then come in the order of Siddhi's maps; not over an
    # arrival-time aggregation without group by: its table's one numeric key is a TreeMap, and a
    # read's range over it comes back as a HashSet of events, whose order follows identity hash
    # codes, docs/siddhi-differences.md; nor the sum of its rows, which adds them in that order)
    hashed = grouped or " by ts" in app.definitions[-1]
    ondemand = [f"from A {read} select {cols}" + ("" if hashed and rng.random() < 0.3 else f" order by {order}")]
    if rng.random() < 0.3 and hashed:
        ondemand.append(f"from A {read} select sum(total) as total" +
                        (f", {key} group by {key} order by {key}" if grouped else ""))
    if grouped and key == "sym" and rng.random() < 0.3:
        ondemand.append(f"from A on sym == '{rng.choice(app.values.symbols)}' {read} "
                        "select AGG_TIMESTAMP, sym, total order by AGG_TIMESTAMP")
    inputs: list[tuple[_Stream, float]] = [(s, 3.0)]
    if rng.random() < 0.6:
        inputs.append((r_, 1.0))
        match = {"sym": "r.sym == a.sym", "vol": "r.n == a.vol"}.get(key)
        on = f"on {match} " if grouped and match and rng.random() < 0.8 else ""
        sym = f", a.{key} as {key}" if grouped else ""
        app.query(f"from R as r join A as a {on}{read}\n"
                  f"select a.AGG_TIMESTAMP as bucket, r.sym as rsym{sym}, a.total as total, a.n as n\n"
                  f"order by bucket{', ' + key if grouped else ''}\ninsert into O1")
        app.watch("O1")
    return _steps(app, inputs, ondemand=ondemand, long_gaps=True)


_FAMILY_BUILDERS: dict[str, Callable[[_App], list[dict[str, Any]]]] = {
    "filter": _filter,
    "window": _window_family,
    "aggregate": _aggregate_family,
    "rate": _rate_family,
    "join": _join_family,
    "join_store": _join_store_family,
    "pattern": _pattern_family,
    "sequence": _sequence_family,
    "partition": _partition_family,
    "table": _table_family,
    "named_window": _named_window_family,
    "trigger": _trigger_family,
    "aggregation": _aggregation_family,
}

FAMILIES: tuple[str, ...] = tuple(_FAMILY_BUILDERS)

#: Families whose values are now and then at their types' limits (``_EDGES``; the filter and
#: aggregate families draw that themselves), and those of them without NaN: their queries take
#: min and max over windows, where Siddhi's queue answers NaN while a NaN is its head
#: (docs/siddhi-differences.md, "min, max over windows that do not expire in arrival order").
_EDGE_FAMILIES = frozenset(FAMILIES) - {"filter", "aggregate"}
_NO_NAN = frozenset({"window", "rate", "join", "partition", "named_window", "trigger"})
#: ... and without infinities, -0.0 or doubles past 1e15 (none now: an aggregation's reads add
#: their buckets in Siddhi's order, engine/aggregation/runtime.py, ``_merge_open_event_time``)
_FINITE: frozenset[str] = frozenset()


# Extension families ---------------------------------------------------------------------------


def _unique_family(app: _App) -> list[dict[str, Any]]:
    rng = app.rng
    s = _stock(rng, "S", ts=True, nulls=rng.random() < 0.2)
    app.define(s.define())
    # no unique:length: Siddhi's takes a chunk's first event only and expires a replaced event
    # twice; lengthBatch and firstLengthBatch repeat the batches a chunk completes, and time
    # keeps expired events while their keys come again in a chunk: those get events alone
    kind = rng.choice(("ever", "first", "time", "lengthBatch", "firstLengthBatch", "timeBatch",
                       "firstTimeBatch", "timeLengthBatch", "externalTimeBatch"))
    app.singles = kind in ("time", "lengthBatch", "firstLengthBatch")
    key = rng.choice(("sym", "sym", "vol"))
    n, t = rng.randint(2, 5), _time(rng, ("500 millisec", "1 sec", "2 sec"))
    args = {"ever": key, "first": key, "time": f"{key}, {t}", "lengthBatch": f"{key}, {n}",
            "firstLengthBatch": f"{key}, {n}", "timeLengthBatch": f"{key}, {t}, {n}",
            "externalTimeBatch": f"{key}, ts, {t}"}.get(kind)
    if args is None:  # timeBatch, firstTimeBatch: a start time now and then
        args = f"{key}, {t}" + (f", {rng.randint(0, 999)}" if rng.random() < 0.3 else "")
    if rng.random() < 0.5:
        select, group = "*", ""
    else:
        select = "sym, count() as n, sum(price) as total"
        group = "\ngroup by sym" if rng.random() < 0.5 else ""
    app.query(f"from S#window.unique:{kind}({args})\nselect {select}{group}\n{_insert_kind(rng)} O1")
    app.watch("O1")
    return _steps(app, [(s, 1.0)])


def _reorder_family(app: _App) -> list[dict[str, Any]]:
    rng = app.rng
    s = _stock(rng, "S", ts=True)
    app.define(s.define())
    timeout, max_k = f"{rng.randint(1, 3) * 1000}L", f"{rng.randint(1, 3) * 1000}L"
    if rng.random() < 0.5:
        args = rng.choice(("ts", f"ts, {timeout}", f"ts, {timeout}, {max_k}", f"ts, -1L, {max_k}"))
        processor = f"kslack({args})"
    else:
        batch = f"{rng.randint(2, 20)}L"
        args = rng.choice(("ts, price", f"ts, price, {batch}", f"ts, price, {batch}, {timeout}",
                           f"ts, price, {batch}, -1L, {max_k}"))
        processor = f"akslack({args})"
    app.query(f"from S#reorder:{processor}\nselect {rng.choice(('*', 'sym, ts'))}\ninsert into O1")
    app.watch("O1")
    steps = _steps(app, [(s, 1.0)])
    at = [a for a, _ in s.attrs].index("ts")
    for step in steps:  # the event time runs late by up to 3 s, now and then
        for event in step.get("events", ()):
            event[1][at] = event[0] - rng.choice((0, 0, rng.randint(0, 3000)))
    return steps


_EXTENSION_BUILDERS: dict[str, Callable[[_App], list[dict[str, Any]]]] = {
    "unique": _unique_family,
    "reorder": _reorder_family,
}

#: Families whose cases go through a source and a sink mapper (tests/differential/mappings.py);
#: their builders make the whole case, with ``inMemory`` topics instead of callbacks.
_MAPPING_BUILDERS: dict[str, Callable[[random.Random], Case]] = {
    "json_map": mappings.json_family,
    "csv_map": mappings.csv_family,
    "text_map": mappings.text_family,
    "xml_map": mappings.xml_family,
}

#: Families of extension functions (tests/differential/functions.py), one namespace or three each;
#: their builders make the whole case too.
_FUNCTION_BUILDERS: dict[str, Callable[[random.Random], Case]] = {
    "string_fn": functions_string.family,
    "math_fn": functions_math.family,
    "time_fn": functions_time.family,
    "regex_fn": functions_regex.family,
    "collection_fn": functions_collection.family,
}

MAPPING_FAMILIES: tuple[str, ...] = tuple(_MAPPING_BUILDERS)
FUNCTION_FAMILIES: tuple[str, ...] = tuple(_FUNCTION_BUILDERS)
EXTENSION_FAMILIES: tuple[str, ...] = tuple(_EXTENSION_BUILDERS) + MAPPING_FAMILIES + FUNCTION_FAMILIES


def generate(seed: int, index: int, family: str | None = None) -> Case:
    """The case ``(seed, index)``: an app and its events; ``family`` forces the family
    (by default the index picks one in turn)."""
    if family is None:
        family = FAMILIES[index % len(FAMILIES)]
    whole_case = _MAPPING_BUILDERS.get(family) or _FUNCTION_BUILDERS.get(family)  # type: ignore[arg-type]
    if whole_case is not None:
        case = whole_case(random.Random(f"{seed}:{index}"))
        return {"id": f"{seed}-{index}-{family}", "family": family, **case}
    builder = _FAMILY_BUILDERS.get(family) or _EXTENSION_BUILDERS.get(family)  # type: ignore[arg-type]
    if builder is None:
        raise ValueError(f"unknown family {family!r}; the families are "
                         f"{', '.join(FAMILIES + EXTENSION_FAMILIES)}")
    rng = random.Random(f"{seed}:{index}")
    app = _App(rng, _Values(rng))
    if family in _EDGE_FAMILIES:  # (drawn apart, so the apps without edge values stay as they were)
        edges = random.Random(f"{seed}:{index}:edges")
        app.values.edge_rate = edges.choice((0.0, 0.0, 0.1, 0.3))
        app.values.edge_nan = family not in _NO_NAN
        app.values.edge_finite = family in _FINITE
    steps = builder(app)
    return {"id": f"{seed}-{index}-{family}", "family": family, "app": app.text(),
            "streams": list(app.streams), "queries": list(app.queries), "steps": steps}
