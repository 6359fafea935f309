"""The app model back to SiddhiQL text: ``render(app)``, ``render_query(q)``, ``render_expression(e)``.

The text parses back to an equal model (positions aside): every binary expression is
parenthesised (the parser drops parentheses), a pattern group is parenthesised exactly where
the model has a :class:`~grammar.model.GroupStateElement`, time values are written in
milliseconds, and strings take the quote that their text lacks.  ``tests/grammar/test_render.py``
checks the round trip over every app of the conformance corpus.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

from srota.grammar import model as m

_JOIN = {m.JoinType.JOIN: "join", m.JoinType.LEFT_OUTER: "left outer join",
         m.JoinType.RIGHT_OUTER: "right outer join", m.JoinType.FULL_OUTER: "full outer join"}
_DURATION = {m.TimeDuration.SECONDS: "sec", m.TimeDuration.MINUTES: "min", m.TimeDuration.HOURS: "hour",
             m.TimeDuration.DAYS: "day", m.TimeDuration.MONTHS: "month", m.TimeDuration.YEARS: "year"}


def render(app: m.SiddhiApp) -> str:
    """The whole app as SiddhiQL (annotations, definitions by kind, then queries and partitions)."""
    parts = [render_annotation(a) for a in app.annotations]
    parts += [render_definition(d) + ";" for d in app.definitions]
    parts += [render_execution_element(e) + ";" for e in app.execution_elements]
    return "\n".join(parts) + "\n"


# ------------------------------------------------------------------------------------ annotations
def string(text: str) -> str:
    """A SiddhiQL string literal of ``text``, which the parser reads back as ``text``.

    Every literal is read verbatim (SiddhiQL has no escapes): a single-quoted one holds neither
    quote, a double-quoted one no double quote, and neither a control character.  Anything
    else (a multi-line ``@payload`` template, say) is written triple-quoted.  A text holding
    three double quotes in a row, or ending with one, has no literal (in Siddhi neither):
    ValueError.
    """
    if not any(c < " " for c in text):
        if "'" not in text and '"' not in text:
            return f"'{text}'"
        if '"' not in text:
            return f'"{text}"'
    if '"""' in text or text.endswith('"'):
        raise ValueError(f"no SiddhiQL string literal holds {text!r}: a triple-quoted one ends at "
                         "the first three double quotes")
    return '"""' + text + '"""'


def render_annotation(a: m.Annotation) -> str:
    items = [f"{el.key}={string(el.value)}" if el.key is not None else string(el.value) for el in a.elements]
    items += [render_annotation(n) for n in a.annotations]
    return f"@{a.name}({', '.join(items)})" if items else f"@{a.name}"


def _annotations(annotations: Iterable[m.Annotation]) -> str:
    text = " ".join(render_annotation(a) for a in annotations)
    return text + "\n" if text else ""


# ------------------------------------------------------------------------------------ expressions
def _constant(c: m.Constant) -> str:
    v, t = c.value, c.type
    if t is m.AttrType.STRING:
        return string(v)
    if t is m.AttrType.BOOL:
        return "true" if v else "false"
    if t is m.AttrType.INT:
        return str(int(v))
    if t is m.AttrType.LONG:
        return f"{int(v)}L"
    if t in (m.AttrType.FLOAT, m.AttrType.DOUBLE):
        f = float(v)
        if math.isnan(f) or math.isinf(f):
            raise ValueError(f"no SiddhiQL literal for {f}")
        text = repr(f)
        return text + ("f" if t is m.AttrType.FLOAT else ("" if ("." in text or "e" in text) else ".0"))
    raise ValueError(f"no SiddhiQL literal for a constant of type {t}")


def _variable(v: m.Variable) -> str:
    prefix = "#" if v.is_inner else "!" if v.is_fault else ""
    if v.stream_id is None:
        return v.attribute
    index = ""
    if v.stream_index is not None:
        if isinstance(v.stream_index, m.LastIndex):
            index = "[last]" if int(v.stream_index) == 0 else f"[last-{int(v.stream_index)}]"
        else:
            index = f"[{v.stream_index}]"
    return f"{prefix}{v.stream_id}{index}.{v.attribute}"


def render_expression(e: m.Expression) -> str:
    """An expression; binary operations are parenthesised."""
    if isinstance(e, m.Constant):
        return _constant(e)
    if isinstance(e, m.TimeConstant):
        return f"{e.millis} millisec"
    if isinstance(e, m.Variable):
        return _variable(e)
    if isinstance(e, (m.MathOp, m.Compare, m.And, m.Or)):
        op = "and" if isinstance(e, m.And) else "or" if isinstance(e, m.Or) else e.op.value
        return f"({render_expression(e.left)} {op} {render_expression(e.right)})"
    if isinstance(e, m.Not):
        return f"(not {render_expression(e.expression)})"
    if isinstance(e, m.IsNull):
        return f"({render_expression(e.expression)} is null)"
    if isinstance(e, m.IsNullStream):
        prefix = "#" if e.is_inner else "!" if e.is_fault else ""
        index = "" if e.stream_index is None else (
            ("[last]" if int(e.stream_index) == 0 else f"[last-{int(e.stream_index)}]")
            if isinstance(e.stream_index, m.LastIndex) else f"[{e.stream_index}]")
        return f"({prefix}{e.stream_id}{index} is null)"
    if isinstance(e, m.In):
        return f"({render_expression(e.expression)} in {e.source_id})"
    if isinstance(e, m.FunctionCall):
        name = f"{e.namespace}:{e.name}" if e.namespace else e.name
        args = "*" if e.star else ", ".join(render_expression(a) for a in e.args)
        return f"{name}({args})"
    raise TypeError(f"not an expression: {type(e).__name__}")


# ------------------------------------------------------------------------------------ definitions
def _attributes(attrs: Iterable[m.Attribute]) -> str:
    return ", ".join(f"{a.name} {a.type.value}" for a in attrs)


def _handler_call(namespace: str, name: str, args: Iterable[m.Expression]) -> str:
    qual = f"{namespace}:{name}" if namespace else name
    return f"{qual}({', '.join(render_expression(a) for a in args)})"


def render_definition(d: m.Definition) -> str:
    """A definition without its closing semicolon."""
    head = _annotations(d.annotations)
    if isinstance(d, m.StreamDefinition):
        return f"{head}define stream {'!' if d.is_fault else ''}{d.id} ({_attributes(d.attributes)})"
    if isinstance(d, m.TableDefinition):
        return f"{head}define table {d.id} ({_attributes(d.attributes)})"
    if isinstance(d, m.WindowDefinition):
        w = d.window
        return (f"{head}define window {d.id} ({_attributes(d.attributes)}) "
                f"{_handler_call(w.namespace, w.name, w.args)} output {d.output_event_type.value} events")
    if isinstance(d, m.TriggerDefinition):
        at = f"every {d.every_millis} millisec" if d.every_millis is not None else string(d.at or "")
        return f"{head}define trigger {d.id} at {at}"
    if isinstance(d, m.FunctionDefinition):
        return f"{head}define function {d.id}[{d.language}] return {d.return_type.value} {{{d.body}}}"
    if isinstance(d, m.AggregationDefinition):
        by = f" by {_variable(d.aggregate_by)}" if d.aggregate_by is not None else ""
        every = ", ".join(_DURATION[x] for x in d.durations)
        return (f"{head}define aggregation {d.id}\nfrom {_single(d.input)}\n{_selector(d.selector)}\n"
                f"aggregate{by} every {every}")
    raise TypeError(f"not a definition: {type(d).__name__}")


# ------------------------------------------------------------------------------------ inputs
def _handler(h: m.StreamHandler) -> str:
    if isinstance(h, m.Filter):
        return f"[{render_expression(h.expression)}]"
    if isinstance(h, m.WindowHandler):
        return "#window." + _handler_call(h.namespace, h.name, h.args)
    if isinstance(h, m.StreamFunction):
        qual = f"{h.namespace}:{h.name}" if h.namespace else h.name
        return f"#{qual}(*)" if h.star else "#" + _handler_call(h.namespace, h.name, h.args)
    raise TypeError(f"not a stream handler: {type(h).__name__}")


def _stream(s: m.SingleInputStream) -> str:
    prefix = "#" if s.is_inner else "!" if s.is_fault else ""
    return prefix + s.stream_id + "".join(_handler(h) for h in s.handlers)


def _single(s: m.SingleInputStream) -> str:
    text = _stream(s)
    return f"{text} as {s.reference_id}" if s.reference_id else text


def _state(e: m.StateElement, kind: m.StateType) -> str:
    if isinstance(e, m.StreamStateElement):
        s = e.stream
        return f"{s.reference_id}={_stream(s)}" if s.reference_id else _stream(s)
    if isinstance(e, m.AbsentStreamStateElement):
        text = f"not {_stream(e.stream)}"
        return text + (f" for {e.waiting_millis} millisec" if e.waiting_millis is not None else "")
    if isinstance(e, m.CountStateElement):
        inner = _state(e.element, kind)
        lo, hi = e.min_count, e.max_count
        if kind is m.StateType.SEQUENCE and (lo, hi) in ((0, -1), (1, -1), (0, 1)):
            return inner + {(0, -1): "*", (1, -1): "+", (0, 1): "?"}[(lo, hi)]
        if hi == -1:
            return f"{inner}<{lo}:>"
        return f"{inner}<{lo}>" if lo == hi else f"{inner}<{lo}:{hi}>"
    if isinstance(e, m.LogicalStateElement):
        return f"{_state(e.left, kind)} {e.op.value} {_state(e.right, kind)}"
    if isinstance(e, m.NextStateElement):
        sep = " -> " if kind is m.StateType.PATTERN else ", "
        return f"{_state(e.first, kind)}{sep}{_state(e.next, kind)}"
    if isinstance(e, m.EveryStateElement):
        body = e.element
        if isinstance(body, m.NextStateElement | m.LogicalStateElement):
            return f"every ({_state(body, kind)})"  # the parser keeps no group node under every
        return f"every {_state(body, kind)}"
    if isinstance(e, m.GroupStateElement):
        within = f" within {e.within_millis} millisec" if e.within_millis is not None else ""
        return f"({_state(e.element, kind)}){within}"
    raise TypeError(f"not a state element: {type(e).__name__}")


def render_input(inp: m.InputStream) -> str:
    if isinstance(inp, m.SingleInputStream):
        return _single(inp)
    if isinstance(inp, m.JoinInputStream):
        left = _single(inp.left) + (" unidirectional" if inp.trigger is m.JoinTrigger.LEFT else "")
        right = _single(inp.right) + (" unidirectional" if inp.trigger is m.JoinTrigger.RIGHT else "")
        text = f"{left} {_JOIN[inp.join_type]} {right}"
        if inp.on is not None:
            text += f" on {render_expression(inp.on)}"
        if inp.within:
            text += " within " + ", ".join(render_expression(w) for w in inp.within)
        if inp.per is not None:
            text += f" per {render_expression(inp.per)}"
        return text
    if isinstance(inp, m.StateInputStream):
        text = _state(inp.element, inp.type)
        return text + (f" within {inp.within_millis} millisec" if inp.within_millis is not None else "")
    raise TypeError(f"not an input: {type(inp).__name__}")


# ------------------------------------------------------------------------------------ selector and output
def _selector(s: m.Selector) -> str:
    if s.attributes is None:
        text = "select *"
    else:
        text = "select " + ", ".join(f"{render_expression(a.expression)} as {a.rename}" for a in s.attributes)
    if s.group_by:
        text += " group by " + ", ".join(_variable(v) for v in s.group_by)
    if s.having is not None:
        text += f" having {render_expression(s.having)}"
    if s.order_by:
        text += " order by " + ", ".join(f"{_variable(o.variable)} {o.order.value}" for o in s.order_by)
    if s.limit is not None:
        text += f" limit {render_expression(s.limit)}"
    if s.offset is not None:
        text += f" offset {render_expression(s.offset)}"
    return text


def _events(t: m.OutputEventType) -> str:
    return f" {t.value} events" if t is not m.OutputEventType.CURRENT else ""


def _set(items: Iterable[m.SetAttribute]) -> str:
    items = list(items)
    return (" set " + ", ".join(f"{_variable(s.table_column)} = {render_expression(s.expression)}"
                                for s in items)) if items else ""


def _on(on: m.Expression | None) -> str:
    return f" on {render_expression(on)}" if on is not None else ""


def render_output(o: m.OutputStream) -> str:
    if isinstance(o, m.InsertIntoStream):
        prefix = "#" if o.is_inner else "!" if o.is_fault else ""
        return f"insert{_events(o.event_type)} into {prefix}{o.target}"
    if isinstance(o, m.ReturnStream):
        return "return" + _events(o.event_type)
    if isinstance(o, m.DeleteStream):
        return f"delete {o.target}{_for(o.event_type)}{_on(o.on)}"
    if isinstance(o, m.UpdateOrInsertStream):
        return f"update or insert into {o.target}{_for(o.event_type)}{_set(o.set)}{_on(o.on)}"
    if isinstance(o, m.UpdateStream):
        return f"update {o.target}{_for(o.event_type)}{_set(o.set)}{_on(o.on)}"
    raise TypeError(f"not an output: {type(o).__name__}")


def _for(t: m.OutputEventType) -> str:
    return f" for {t.value} events" if t is not m.OutputEventType.CURRENT else ""


def _rate(r: m.OutputRate) -> str:
    if isinstance(r, m.EventOutputRate):
        return f"output {r.type.value} every {r.events} events"
    if isinstance(r, m.TimeOutputRate):
        return f"output {r.type.value} every {r.millis} millisec"
    return f"output snapshot every {r.millis} millisec"


def render_query(q: m.Query) -> str:
    """A query without its closing semicolon."""
    text = f"{_annotations(q.annotations)}from {render_input(q.input)}\n{_selector(q.selector)}\n"
    if q.output_rate is not None:
        text += _rate(q.output_rate) + "\n"
    return text + render_output(q.output)


def _partition_type(p: m.PartitionType) -> str:
    if isinstance(p, m.ValuePartitionType):
        return f"{render_expression(p.expression)} of {p.stream_id}"
    ranges = " or ".join(f"{render_expression(r.condition)} as {string(r.label)}" for r in p.ranges)
    return f"{ranges} of {p.stream_id}"


def render_execution_element(e: m.ExecutionElement) -> str:
    if isinstance(e, m.Query):
        return render_query(e)
    types = ", ".join(_partition_type(p) for p in e.partition_types)
    body = "\n".join(render_query(q) + ";" for q in e.queries)
    return f"{_annotations(e.annotations)}partition with ({types})\nbegin\n{body}\nend"


def render_on_demand(q: m.OnDemandQuery) -> str:
    """An on-demand (store) query."""
    text = ""
    if q.input_store is not None:
        text = f"from {q.input_store}" + (f" as {q.reference_id}" if q.reference_id else "")
        if q.on is not None:
            text += f" on {render_expression(q.on)}"
        if q.within:
            text += " within " + ", ".join(render_expression(w) for w in q.within)
        if q.per is not None:
            text += f" per {render_expression(q.per)}"
        text += " "
    if q.selector.attributes is not None or q.input_store is None or q.selector != m.Selector():
        text += _selector(q.selector) + " "
    if q.output is not None:
        text += render_output(q.output)
    return text.strip()
