"""Siddhi Runner's ``GET /siddhi-apps/{name}/elements``: what an app is made of, as the runner's
status dashboard draws it (siddhi-io/distribution, ``SiddhiAppsApiServiceImpl.siddhiAppElementsGet``
and its ``SiddhiAppElements`` bean).

One element per input stream of each query (of each query of each partition), one per
aggregation, one per source and one per sink, with the text that defines each end.  The runner's
own quirks are kept, since dashboards read its answers:

* a query's name is the value of the *last* element of its last annotation (``query`` when it has
  none), and a partitioned query takes the partition's annotations, not its own;
* a stream or table is shown as Siddhi's ``toString`` writes it (``@source( type = "http")define
  stream S (a string)``), every other definition as the app's text, with ``'`` turned into ``"``;
* of several partition types or matching functions the last one in Java ``HashMap`` order wins;
* a source or sink matches every annotation of its stream with an element equal to its type.

Where Siddhi's order is a hash map's (aggregations, sources, sinks), the same Java ``HashMap``
order is used.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from srota.engine.types import hashmap_keys
from srota.grammar.model import (
    Annotation,
    FunctionCall,
    InsertIntoStream,
    Partition,
    Query,
    RangePartitionType,
    SiddhiApp,
    SingleInputStream,
    StreamDefinition,
    TableDefinition,
)

#: SiddhiAppElements' fields in declaration order (Gson writes them so, and leaves out nulls).
_FIELDS = ("inputStreamType", "outputStreamType", "inputStreamId", "outputStreamId", "inputStreamSiddhiApp",
           "outputStreamSiddhiApp", "query", "queryName", "partitionType", "partitionTypeQuery",
           "partitionQuery", "partitions", "function", "functionQuery", "source", "sourceStream",
           "sourceSiddhiApp", "sink", "sinkStream", "sinkSiddhiApp")


def app_elements(app: SiddhiApp, text: str, streams: dict[str, StreamDefinition]) -> list[dict[str, Any]]:
    """The runner's element list for ``app`` parsed from ``text``; ``streams`` are the runtime's
    stream definitions (defined and inferred)."""
    return _Elements(app, text, streams).build()


class _Elements:
    def __init__(self, app: SiddhiApp, text: str, streams: dict[str, StreamDefinition]) -> None:
        self.app = app
        self.text = text
        self.streams = streams
        self.out: list[dict[str, Any]] = []

    def build(self) -> list[dict[str, Any]]:
        for element in self.app.execution_elements:
            if isinstance(element, Query):
                self._query(element)
            elif isinstance(element, Partition):
                self._partition(element)
        by_name = {a.id: a for a in self.app.aggregation_definitions}
        for name in hashmap_keys(by_name):
            agg = by_name[name]
            entry = {"inputStreamId": agg.input.stream_id, "outputStreamId": agg.id}
            self._load(entry, agg.input.stream_id, "input")
            entry["outputStreamSiddhiApp"] = self._definition(agg)
            entry["outputStreamType"] = "Aggregation"
            self.out.append(entry)
        self._connectors("source")
        self._connectors("sink")
        return [{k: e[k] for k in _FIELDS if e.get(k) is not None} for e in self.out]

    # ---------------------------------------------------------------- execution elements
    def _query(self, query: Query) -> None:
        output = _output_id(query)
        for stream_id in _input_ids(query):
            entry: dict[str, Any] = {"inputStreamId": stream_id}
            self._load(entry, stream_id, "input")
            entry["outputStreamId"] = output
            self._load(entry, output, "output")
            self._function(entry, query)
            entry["queryName"] = _query_name(query.annotations)
            entry["query"] = self._definition(query)
            self.out.append(entry)

    def _partition(self, partition: Partition) -> None:
        types = {t.stream_id: t for t in partition.partition_types}
        last = types[hashmap_keys(types)[-1]] if types else None
        for query in partition.queries:
            output = _output_id(query)
            for stream_id in _input_ids(query):
                entry: dict[str, Any] = {"inputStreamId": stream_id, "outputStreamId": output,
                                         "partitionQuery": self._definition(query),
                                         "queryName": _query_name(partition.annotations)}
                self._load(entry, stream_id, "input")
                self._load(entry, output, "output")
                self._function(entry, query)
                if last is not None:
                    kind = "Range Partition" if isinstance(last, RangePartitionType) else "Value Partition"
                    entry["partitionType"] = kind
                    entry["partitionTypeQuery"] = self._definition(last)
                entry["query"] = self._definition(partition)
                self.out.append(entry)

    def _function(self, entry: dict[str, Any], query: Query) -> None:
        """The last function definition (in HashMap order) called at the top of a select item."""
        called = {item.expression.name for item in query.selector.attributes or ()
                  if isinstance(item.expression, FunctionCall) and not item.expression.namespace}
        functions = {f.id: f for f in self.app.function_definitions}
        for name in hashmap_keys(functions):
            if name in called:
                entry["function"] = name
                entry["functionQuery"] = self._definition(functions[name])

    # ---------------------------------------------------------------- ends
    def _load(self, entry: dict[str, Any], stream_id: str | None, side: str) -> None:
        """Siddhi's loadInputData/loadOutputData: each kind that has the id overwrites the one
        before (a trigger's stream is a stream first, then the trigger)."""
        if stream_id is None:  # a query that returns its events has no output stream
            return
        kinds: list[tuple[str, Any, bool]] = [
            ("Stream", self.streams.get(stream_id), True),
            ("Table", next((t for t in self.app.table_definitions if t.id == stream_id), None), True),
            ("Trigger", next((t for t in self.app.trigger_definitions if t.id == stream_id), None), False),
            ("Window", next((w for w in self.app.window_definitions if w.id == stream_id), None), False),
            ("Aggregation", next((a for a in self.app.aggregation_definitions if a.id == stream_id), None),
             False),
        ]
        for kind, definition, shown_as_java in kinds:
            if definition is None:
                continue
            entry[f"{side}StreamSiddhiApp"] = (_java_definition(definition) if shown_as_java
                                               else self._definition(definition))
            entry[f"{side}StreamType"] = kind

    def _connectors(self, kind: str) -> None:
        """One element per source (or sink) and per annotation of its stream that has an
        element equal to its type, as the runner's loadSources/loadSinks loop."""
        by_stream: dict[str, StreamDefinition] = {}
        for d in self.app.stream_definitions:
            by_stream.setdefault(d.id, d)
        for stream_id in hashmap_keys(by_stream):
            definition = by_stream[stream_id]
            for connector in definition.annotations:
                if connector.name.lower() != kind:
                    continue
                ctype = connector.get("type")
                for annotation in definition.annotations:
                    for element in annotation.elements:
                        if element.value != ctype:
                            continue
                        text = self._definition(annotation)
                        if kind == "source":
                            entry: dict[str, Any] = {"outputStreamId": stream_id, "inputStreamId": ctype,
                                                     "inputStreamType": "Source"}
                            self._load(entry, stream_id, "output")
                            entry["inputStreamSiddhiApp"] = text
                        else:
                            entry = {"inputStreamId": stream_id}
                            self._load(entry, stream_id, "input")
                            entry.update(outputStreamId=ctype, outputStreamType="Sink", outputStreamSiddhiApp=text)
                        self.out.append(entry)

    def _definition(self, element: Any) -> str:
        """The app's text of ``element`` (from its first annotation, where it has them), with
        ``'`` as ``"``: the runner's getDefinition."""
        pos = element.pos
        starts = [pos.start] + [a.pos.start for a in getattr(element, "annotations", ())
                                if a.pos is not None and a.pos.start is not None]
        return self.text[min(starts):pos.end].replace("'", '"')


def _input_ids(query: Query) -> list[str]:
    """Query.getInputStream().getUniqueStreamIds(): each stream once, in the order met, with
    ``#`` for an inner stream and ``!`` for a fault stream, as Siddhi's ids carry them."""
    ids: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, SingleInputStream):
            sid = _flagged(node.stream_id, node.is_inner, node.is_fault)
            if sid not in ids:
                ids.append(sid)
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            for f in dataclasses.fields(node):
                walk(getattr(node, f.name))

    walk(query.input)
    return ids


def _output_id(query: Query) -> str | None:
    out = query.output
    if isinstance(out, InsertIntoStream):
        return _flagged(out.target, out.is_inner, out.is_fault)
    return getattr(out, "target", None)


def _flagged(stream_id: str, inner: bool, fault: bool) -> str:
    return ("!" if fault else "") + ("#" if inner else "") + stream_id


def _query_name(annotations: tuple[Annotation, ...]) -> str:
    name = None
    for annotation in annotations:
        for element in annotation.elements:
            name = element.value
    return name if name is not None else "query"


def _java_definition(definition: StreamDefinition | TableDefinition) -> str:
    """AbstractDefinition.toString: its annotations, then ``define stream|table id (a type, ...)``."""
    kind = "table" if isinstance(definition, TableDefinition) else "stream"
    attributes = ", ".join(f"{a.name} {a.type.value}" for a in definition.attributes)
    return "".join(_java_annotation(a) for a in definition.annotations) + \
        f"define {kind} {definition.id} ({attributes})"


def _java_annotation(annotation: Annotation) -> str:
    """Annotation.toString: ``@name( k = "v", "w", @nested( ...))``."""
    parts = [f'{e.key} = "{e.value}"' if e.key is not None else f'"{e.value}"' for e in annotation.elements]
    parts += [_java_annotation(a) for a in annotation.annotations]
    return f"@{annotation.name}( {', '.join(parts)})"
