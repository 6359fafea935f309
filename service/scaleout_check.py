"""Which apps may run with their state split by Kafka partition (several workers).

With several workers, each input partition has its own app state (see docs/scaling.md).
That gives the same results as one process exactly when no state crosses the Kafka message
key: every event of a key is in one partition, so state kept per key sees all of them.  This
module reads the app model and refuses, before anything starts, an app whose state would
mix keys, naming the query and why:

* the key: ``key.attribute`` on the Kafka ``@source`` names the attribute the records are
  keyed by; it carries over to streams a query fills while selecting that attribute as is;
* per-key state: a ``partition with (<key> of S)`` block (anything goes inside), a
  ``group by`` that includes the key (no window), a pattern that starts with ``every`` and
  whose later events must have the key of an earlier one (``e2=S[id == e1.id]``);
* state across keys: windows, joins of streams, named windows, sequences, absent events,
  event-count output rates, aggregations, aggregators or ``group by`` without the key;
* stateless queries (filters, projections, functions) are always fine.

``@app:statePerPartition`` opts out of the check: the app accepts that each partition has
its own state (a global window then covers only the events of one partition).

MQTT has no partitions: with several workers a stateless app shares each subscription
(``$share/<group>/<topic>``); any state with an MQTT source is refused (bridge into Kafka).
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from srota.engine.registry import Kind, registry
from srota.grammar import model as m
from srota.grammar.errors import SiddhiAppCreationError

#: The app annotation that accepts per-partition state whatever the queries do.
OPT_IN = "app:statePerPartition"

_TIME_WINDOWS = {"time", "externaltime"}


@dataclass(frozen=True)
class SourceInfo:
    """What the check needs to know of a stream's source."""

    transport: str          # kafka, mqtt, ...
    key_attribute: str | None = None
    global_read: bool = False  # read whole by every worker (no consumer group)


def opted_in(app: m.SiddhiApp) -> bool:
    """True when the app carries ``@app:statePerPartition``."""
    return m.find_annotation(app.annotations, OPT_IN) is not None


def problems(app: m.SiddhiApp, sources: Mapping[str, SourceInfo]) -> list[str]:
    """Why ``app`` cannot run with state split by partition (empty: it can)."""
    if opted_in(app):
        return []
    keys: dict[str, str] = {s: i.key_attribute for s, i in sources.items()
                            if i.transport == "kafka" and i.key_attribute and not i.global_read}
    mqtt = {s for s, i in sources.items() if i.transport == "mqtt"}
    window_ids = {w.id for w in app.window_definitions}
    table_ids = {t.id for t in app.table_definitions}
    out: list[str] = []
    for agg in app.aggregation_definitions:
        if not shared_aggregation(agg):
            out.append(f"aggregation '{agg.id}' rolls up events of every key together in one process: give it "
                       "a store every worker shares, @store(type='rdbms', jdbc.url=...) with "
                       "@PartitionById(enable='true'), and each partition writes its own shard")
    # Two passes: a stream filled by a later query in the text may feed an earlier one.
    for final in (False, True):
        found: list[str] = []
        for element in app.execution_elements:
            if isinstance(element, m.Partition):
                found.extend(_partition(element, keys, mqtt, window_ids, table_ids))
            else:
                found.extend(_query(element, keys, mqtt, window_ids, table_ids, None))
        if final:
            out.extend(found)
    return out


def shared_aggregation(agg: m.AggregationDefinition) -> bool:
    """True when the aggregation's roll-ups live in a shared database, one shard per writer."""
    store = m.find_annotation(agg.annotations, "store")
    shards = m.find_annotation(agg.annotations, "PartitionById")
    return store is not None and (store.get("type") or "").lower() == "rdbms" and shards is not None \
        and (shards.get("enable") or "true").lower() != "false"


def check(app: m.SiddhiApp, sources: Mapping[str, SourceInfo]) -> None:
    """Raise :class:`SiddhiAppCreationError` when ``app`` cannot run with state split by partition."""
    found = problems(app, sources)
    if found:
        name = app.name or "app"
        raise SiddhiAppCreationError(
            f"app {name} cannot run with several workers: its state would be split by Kafka partition, "
            "and " + "; ".join(found) + ". Key the state by the records' Kafka key (declare "
            "key.attribute on the @source and use partition with (<key> of <stream>), or group by the key), "
            f"run one worker, or accept per-partition state with @{OPT_IN}")


# ---------------------------------------------------------------------------- queries
def _name(q: m.Query, n: int | None = None) -> str:
    return f"query '{q.name}'" if q.name else f"the query at line {q.pos.line}" if q.pos else "a query"


def _partition(p: m.Partition, keys: dict[str, str], mqtt: set[str], window_ids: set[str],
               table_ids: set[str]) -> list[str]:
    keyed = all(isinstance(t, m.ValuePartitionType) and isinstance(t.expression, m.Variable)
                and keys.get(t.stream_id) == t.expression.attribute for t in p.partition_types)
    if keyed:
        inner = dict(keys)
        for t in p.partition_types:
            inner[f"#{t.stream_id}"] = keys[t.stream_id]
        out = []
        for q in p.queries:  # per-key state; only propagate keys (and refuse MQTT state)
            out.extend(_query(q, inner, mqtt, window_ids, table_ids, "partition", keys))
        return out
    out = []
    by = ", ".join(f"{_expr_text(t.expression) if isinstance(t, m.ValuePartitionType) else 'a range'} of "
                   f"{t.stream_id}" for t in p.partition_types)
    for q in p.queries:
        reason = _state(q, keys, window_ids, table_ids)
        if reason:
            out.append(f"{_name(q)} in 'partition with ({by})' {reason} (the partition is not by the "
                       "key.attribute of its @source)")
    return out


def _query(q: m.Query, keys: dict[str, str], mqtt: set[str], window_ids: set[str], table_ids: set[str],
           scope: str | None, outer: dict[str, str] | None = None) -> list[str]:
    streams = list(_input_streams(q.input))
    reason = None if scope == "partition" else _state(q, keys, window_ids, table_ids)
    stateful = _state(q, {}, window_ids, table_ids) is not None
    if stateful and any(s in mqtt for s in streams):
        return [f"{_name(q)} keeps state over the MQTT stream {', '.join(s for s in streams if s in mqtt)} "
                "(MQTT has no partitions to move state with: bridge the topic into Kafka and consume it there)"]
    # The output stream is keyed when every input is keyed the same and the key is selected as is.
    target = getattr(q.output, "target", None)
    if target and isinstance(q.output, m.InsertIntoStream):
        in_keys = {keys.get(s) for s in streams}
        key = in_keys.pop() if len(in_keys) == 1 else None
        if key and _selects(q.selector, key):
            name = f"#{target}" if q.output.is_inner else target
            keys.setdefault(name, key)
            if outer is not None and not q.output.is_inner:
                outer.setdefault(target, key)
    return [f"{_name(q)} {reason}"] if reason else []


def _state(q: m.Query, keys: dict[str, str], window_ids: set[str], table_ids: set[str]) -> str | None:
    """Why ``q`` keeps state across keys (None: it does not)."""
    inp = q.input
    if isinstance(inp, m.JoinInputStream):
        sides = [s for s in (inp.left, inp.right) if s.stream_id not in table_ids]
        if len(sides) == 2 or any(s.stream_id in window_ids for s in sides):
            return "joins streams, which matches events of different keys"
        single: m.SingleInputStream | None = sides[0] if sides else None
    elif isinstance(inp, m.StateInputStream):
        return _pattern(inp, keys)
    else:
        single = inp
    if single is not None:
        if single.stream_id in window_ids:
            return f"reads the named window {single.stream_id}, which holds events of every key"
        w = single.window
        key = keys.get(single.stream_id)
        per_key_time = w is not None and w.name.lower() in _TIME_WINDOWS and key is not None \
            and key in {v.attribute for v in q.selector.group_by}
        if w is not None and not per_key_time:
            # A time window grouped by the key expires each event by time alone, so each group
            # sees the same events in any partition; a length window counts every key's events.
            return f"uses #window.{w.name}(...), which holds the events of every key together"
    if isinstance(q.output_rate, m.EventOutputRate):
        return f"limits its output every {q.output_rate.events} events, counted across keys"
    if _has_aggregation(q.selector) or q.selector.group_by:
        key = keys.get(single.stream_id) if single is not None else None
        grouped = {v.attribute for v in q.selector.group_by}
        if key is None:
            return ("aggregates events whose stream has no key.attribute (declare the attribute the records "
                    "are keyed by on the @source)") if single is not None and not grouped else \
                f"groups by {', '.join(sorted(grouped)) or 'nothing'}, and its input has no key.attribute"
        if key not in grouped:
            what = f"groups by {', '.join(sorted(grouped))}" if grouped else "aggregates without group by"
            return f"{what}, not by the key {key}, so its groups mix keys"
    return None


def _pattern(inp: m.StateInputStream, keys: dict[str, str]) -> str | None:
    if inp.type == m.StateType.SEQUENCE:
        return "is a sequence, which follows the events of every key in one order"
    top = inp.element
    while isinstance(top, m.GroupStateElement):
        top = top.element
    first = top.first if isinstance(top, m.NextStateElement) else top
    if not isinstance(first, m.EveryStateElement) and not (
            isinstance(top, m.EveryStateElement)):
        return "is a pattern without every, which matches once across all keys"
    elements = list(_state_elements(inp.element))
    if any(isinstance(e, m.AbsentStreamStateElement) for e in elements):
        return "waits for absent events, which cannot be told apart per key"
    streams = [e for e in elements if isinstance(e, m.StreamStateElement)]
    if not streams:
        return None
    first_key = keys.get(streams[0].stream.stream_id)
    if first_key is None:
        return "is a pattern over a stream with no key.attribute"
    refs = [streams[0].stream.reference_id]
    for e in streams[1:]:
        key = keys.get(e.stream.stream_id)
        if key is None:
            return f"is a pattern over {e.stream.stream_id}, which has no key.attribute"
        filters = [h.expression for h in e.stream.handlers if isinstance(h, m.Filter)]
        if not any(_key_equal(f, key, first_key, refs) for f in filters):
            return (f"is a pattern whose event {e.stream.reference_id or e.stream.stream_id} need not have the "
                    f"key of the events before it (add [{key} == {refs[0] or 'e1'}.{first_key}])")
        refs.append(e.stream.reference_id)
    return None


def _key_equal(expr: m.Expression, key: str, earlier_key: str, refs: list[str | None]) -> bool:
    if isinstance(expr, m.And):
        return _key_equal(expr.left, key, earlier_key, refs) or _key_equal(expr.right, key, earlier_key, refs)
    if isinstance(expr, m.Compare) and expr.op == m.CompareOperator.EQ:
        for own, other in ((expr.left, expr.right), (expr.right, expr.left)):
            if isinstance(own, m.Variable) and isinstance(other, m.Variable) and own.attribute == key \
                    and own.stream_id is None and other.stream_id in refs and other.attribute == earlier_key:
                return True
    return False


def _state_elements(e: m.StateElement) -> Iterator[m.StateElement]:
    if isinstance(e, (m.StreamStateElement, m.AbsentStreamStateElement)):
        yield e
    elif isinstance(e, m.CountStateElement):
        yield e.element
    elif isinstance(e, m.LogicalStateElement):
        yield from _state_elements(e.left)
        yield from _state_elements(e.right)
    elif isinstance(e, m.NextStateElement):
        yield from _state_elements(e.first)
        yield from _state_elements(e.next)
    elif isinstance(e, (m.EveryStateElement, m.GroupStateElement)):
        yield from _state_elements(e.element)


def _input_streams(inp: m.InputStream) -> Iterator[str]:
    if isinstance(inp, m.SingleInputStream):
        yield f"#{inp.stream_id}" if inp.is_inner else inp.stream_id
    elif isinstance(inp, m.JoinInputStream):
        yield from _input_streams(inp.left)
        yield from _input_streams(inp.right)
    else:
        for e in _state_elements(inp.element):
            s = e.stream if isinstance(e, (m.StreamStateElement, m.AbsentStreamStateElement)) else None
            if s is not None:
                yield f"#{s.stream_id}" if s.is_inner else s.stream_id


def _selects(selector: m.Selector, key: str) -> bool:
    if selector.attributes is None:
        return True
    return any(a.rename == key and isinstance(a.expression, m.Variable) and a.expression.attribute == key
               for a in selector.attributes)


def _has_aggregation(selector: m.Selector) -> bool:
    exprs = [a.expression for a in selector.attributes or ()]
    if selector.having is not None:
        exprs.append(selector.having)
    return any(_aggregates(e) for e in exprs)


def _aggregates(e: m.Expression) -> bool:
    if isinstance(e, m.FunctionCall):
        if registry.get(Kind.AGGREGATOR, e.namespace, e.name) is not None:
            return True
        return any(_aggregates(a) for a in e.args)
    for child in ("left", "right", "expression"):
        sub = getattr(e, child, None)
        if sub is not None and not isinstance(sub, str) and _aggregates(sub):
            return True
    return False


def _expr_text(e: m.Expression) -> str:
    return e.attribute if isinstance(e, m.Variable) else "an expression"
