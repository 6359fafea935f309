"""On-demand (store) queries: ``runtime.query("from T on price > 10 select symbol, price")``.

Like Siddhi's ``OnDemandQueryRuntime``s:

* ``from T|W [as t] [on cond] select ... [group by/having/order by/limit]`` reads a table or
  a named window and returns the selected events (one chunk through the selector, so an
  aggregate without ``group by`` gives one row);
* ``select ... insert into T``, ``[select ...] delete T on ...``, ``select ... update T [set
  ...] on ...`` and ``select ... update or insert into T [set ...] on ...`` evaluate the
  select once (over no input, or over the rows ``from`` found) and change the table the way
  the same output of a streaming query would; they return ``[]``;
* an aggregation is asked itself (``on_demand(query)``).

A query text is planned once per runtime and kept (keyed by its text), so an admin endpoint
that repeats a query pays only for running it.
"""
from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple

from srota.engine.codegen import CodeGen
from srota.engine.event import Event
from srota.engine.expression import BASE_NAMESPACE, error_at
from srota.engine.scope import StreamScope
from srota.engine.selector import plan_selector
from srota.engine.table import TableScope, compile_matcher
from srota.grammar.model import (
    Attribute,
    DeleteStream,
    InsertIntoStream,
    OnDemandQuery,
    OnDemandQueryType,
    OutputEventType,
    ReturnStream,
    UpdateOrInsertStream,
    UpdateStream,
)


class _Plan(NamedTuple):
    """A planned on-demand query: how to run it, and the attributes of what it returns."""

    run: Callable[[], list[Event]]
    attributes: list[Attribute]


_plans: weakref.WeakKeyDictionary[Any, OrderedDict[str, _Plan]] = weakref.WeakKeyDictionary()


#: Plans kept per app (least recently used first out).
PLAN_CACHE_SIZE = 256


def run_on_demand_query(ctx: Any, text: str) -> list[Event]:
    """Parse (once), plan (once) and run an on-demand query under the app lock.

    Plans are kept per app in a bounded LRU: every distinct query text makes one.
    """
    got = _cached(ctx, text)
    with ctx.lock:
        if isinstance(got, _Plan):
            return got.run()
        return list(ctx.aggregations[got.input_store].on_demand(got))


def on_demand_output_attributes(ctx: Any, query: str | OnDemandQuery) -> list[Attribute]:
    """The attributes (names and types) an on-demand query returns, planned but not run, as
    Siddhi's ``getOnDemandQueryOutputAttributes``; a query that does not plan raises the
    creation error running it would raise."""
    got = _cached(ctx, query) if isinstance(query, str) else query
    with ctx.lock:
        if isinstance(got, OnDemandQuery) and not _reads_aggregation(ctx, got):
            got = _plan(ctx, got)
        if isinstance(got, _Plan):
            return list(got.attributes)
        from srota.engine.aggregation.retrieval import on_demand_output_attributes as aggregation_attributes

        return aggregation_attributes(ctx.aggregations[got.input_store], got)


def _reads_aggregation(ctx: Any, query: OnDemandQuery) -> bool:
    return query.input_store is not None and query.input_store in ctx.aggregations


def _cached(ctx: Any, text: str) -> _Plan | OnDemandQuery:
    """The plan of ``text`` from the app's cache (made and kept on a miss); for a query of an
    aggregation (which keeps its own plans), the parsed query."""
    cache = _plans.setdefault(ctx, OrderedDict())
    plan = cache.get(text)
    if plan is not None:
        cache.move_to_end(text)
        return plan
    from srota.grammar.parser import parse_on_demand_query

    query = parse_on_demand_query(text)
    if _reads_aggregation(ctx, query):
        return query
    with ctx.lock:
        plan = _plan(ctx, query)
    cache[text] = plan
    while len(cache) > PLAN_CACHE_SIZE:
        cache.popitem(last=False)
    return plan


class _Empty:
    """The scope of a ``select`` with no ``from``: there are no attributes."""

    prologue: tuple[str, ...] = ()

    def resolve(self, var: Any) -> Any:
        raise error_at(f"'{var.attribute}': this query reads no table (add 'from <table>')", var)

    def resolve_stream(self, node: Any) -> str:
        raise error_at("no event references here", node)

    def timestamp(self, node: Any) -> str:
        return "e.timestamp"

    def columns(self) -> list[Any]:
        return []


def run_find_query_across(ctxs: list[Any], text: str) -> list[Event]:
    """A ``from T [on ...] select ...`` query over the same table or named window of several
    runtimes of one app (one per input partition, under scale-out), answered as one runtime
    holding all their rows would: the rows each runtime finds go through one selector, so
    ``group by``, aggregates, ``having``, ``order by`` and ``limit`` see them all."""
    from srota.grammar.parser import parse_on_demand_query

    query = parse_on_demand_query(text)
    if query.type != OnDemandQueryType.FIND or query.input_store is None \
            or any(query.input_store in ctx.aggregations for ctx in ctxs):
        raise ValueError("only 'from <table or window> ... select ...' queries can be answered across runtimes")
    if not ctxs:
        return []
    gen = CodeGen(BASE_NAMESPACE)
    finds: list[tuple[Any, Callable[[], list[Event]]]] = []
    for ctx in ctxs:
        with ctx.lock:  # each runtime's own finder: its table's indexes and primary key
            find, scope_here = _plan_find(ctx, query, gen if not finds else CodeGen(BASE_NAMESPACE))
        if not finds:
            scope = scope_here
        finds.append((ctx, find))
    selector_plan = plan_selector(query.selector, scope, ctxs[0], gen, OutputEventType.CURRENT, True, scope.columns)
    rows: list[Event] = []
    for ctx, find in finds:
        with ctx.lock:
            rows.extend(Event(-1, r.data) for r in find())
    got: list[Event] = []
    if rows:
        selector = selector_plan.instantiate()
        selector.next = got.extend
        selector.process(rows)
    return got


def _plan_find(ctx: Any, query: OnDemandQuery, gen: CodeGen) -> tuple[Callable[[], list[Event]], Any]:
    """What the query reads (the rows its ``on`` condition keeps) and the scope its select sees."""
    store_id = query.input_store
    find: Callable[[], list[Event]]
    if store_id is not None:
        source = ctx.tables.get(store_id)
        if source is None:
            source = ctx.windows.get(store_id)
        if source is None:
            raise error_at(f"'{store_id}' is not a table, named window or aggregation", query)
        if query.within or query.per is not None:
            raise error_at("'within' and 'per' are only allowed when reading an aggregation", query)
        names = [store_id] + ([query.reference_id] if query.reference_id else [])
        match_scope = TableScope(source, names, "_td", None, "_r")
        table = source if hasattr(source, "lookup_pk") else None
        matcher = compile_matcher(query.on, match_scope, "_td", "_r", "_src", gen, ctx, table,
                                  params="e, _src", what="on condition")
        contents = source.contents

        def find() -> list[Event]:
            return matcher(None, contents())

        scope: Any = StreamScope(store_id, source.definition.attributes, names)
    else:
        now = ctx.clock.now

        def find() -> list[Event]:
            return [Event(now(), ())]

        scope = _Empty()
    return find, scope


def _plan(ctx: Any, query: OnDemandQuery) -> _Plan:
    gen = CodeGen(BASE_NAMESPACE)
    find, scope = _plan_find(ctx, query, gen)
    out = query.output
    event_type = OutputEventType.CURRENT
    selector_plan = plan_selector(query.selector, scope, ctx, gen, event_type, True, scope.columns)
    attributes: list[Attribute] = selector_plan.output_attributes
    target = _target(ctx, out, attributes, gen)

    def run() -> list[Event]:
        rows = find()
        got: list[Event] = []
        if rows:
            selector = selector_plan.instantiate()
            selector.next = got.extend
            # Siddhi selects over a fresh StateEvent per row whose time is never set, so every
            # row a store query answers has timestamp -1 (OnDemandQueryRuntimeUtil.executeSelector)
            selector.process([Event(-1, r.data) for r in rows])
        if target is not None:
            if got:
                target(got)
            return []
        return got

    return _Plan(run, attributes)


def _target(ctx: Any, out: Any, attributes: list[Attribute],
            gen: CodeGen) -> Callable[[list[Event]], None] | None:
    if out is None or isinstance(out, ReturnStream):
        return None
    from srota.engine.table import plan_table_insert, plan_table_output

    if isinstance(out, InsertIntoStream):
        if out.target not in ctx.tables:
            raise error_at(f"an on-demand query can insert only into a table; '{out.target}' is not one", out)
        return plan_table_insert(out, attributes, ctx, gen)
    if isinstance(out, (DeleteStream, UpdateStream, UpdateOrInsertStream)):
        return plan_table_output(out, attributes, ctx, gen)
    raise error_at(f"unsupported on-demand output {type(out).__name__}", out)
