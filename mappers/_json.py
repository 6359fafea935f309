"""The ``json`` source and sink mappers (options follow siddhi-map-json).

Source, default mapping: a payload is one event object, ``{"event": {...}}`` (Siddhi's format)
or the plain ``{...}``, or an array of either; keys are attribute names, extra keys are
ignored.  Custom mapping: ``@attributes(id='$.device.id', t='$.temp', topic='trp:topic')``
with JSONPaths evaluated on each event element.  ``enclosing.element`` selects the node that
holds the events (an array is many events, an object one).

Sink, default mapping: ``{"event": {"a": 1, ...}}`` per event; ``@payload('...{{a}}...')``
for custom text; ``enclosing.element='$.portfolio'`` wraps the output; with
``event.grouping.enabled='true'`` a chunk becomes one JSON array.

Differences from Siddhi, on purpose:

* an explicit ``null`` is kept as null even when ``fail.on.missing.attribute`` is true (only an
  *absent* key fails), so nulls round-trip;
* ``event.grouping.enabled`` on the sink defaults to false: our chunks follow transport batches,
  so grouping by default would make the message shape depend on timing; when enabled the
  output is always an array, even for one event;
* ``enable.null.attribute.value`` defaults to true (nulls are written as ``null``); false drops
  null attributes from the default object instead of writing Siddhi's ``"undefined"``;
* strings substituted into a ``@payload`` template are JSON-escaped.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson
from srota.engine.codegen import CodeGen
from srota.engine.registry import Kind, Param, extension
from srota.grammar.model import Annotation, Attribute, AttrType
from srota.mappers._base import (
    TRP_PREFIX,
    MappingError,
    Row,
    SinkMapper,
    SourceMapper,
    attribute_mapping,
    payload_annotation,
)
from srota.mappers._convert import MISSING, _ConvertError, json_default, shortest_float32, value_converter
from srota.mappers._jsonpath import JsonPathError, parse_path
from srota.mappers._options import annotation_options, creation_error, resolve_options
from srota.mappers._template import Template

_S = (AttrType.STRING,)
_B = (AttrType.BOOL,)
_EMPTY: Mapping[str, Any] = {}
_DUMPS_OPTS = orjson.OPT_NON_STR_KEYS


class _AttrError(Exception):
    """Raised by generated code: (attribute name, reason)."""


# Per-type "already the right type" checks inlined into generated code; anything else
# (including None and MISSING) goes through the full converter.
_FAST_CHECK = {
    AttrType.STRING: "{v}.__class__ is str",
    AttrType.INT: "{v}.__class__ is int and -2147483648 <= {v} <= 2147483647",
    AttrType.LONG: "{v}.__class__ is int and -9223372036854775808 <= {v} <= 9223372036854775807",
    AttrType.DOUBLE: "{v}.__class__ is float",
    AttrType.BOOL: "{v}.__class__ is bool",
}


def _attr_converter(attr: Attribute, fail_on_missing: bool) -> Callable[[Any], Any]:
    conv = value_converter(attr.type)
    name = attr.name

    def convert(value: Any) -> Any:
        if value is MISSING:
            if fail_on_missing:
                raise _AttrError(name, "missing in the payload")
            return None
        try:
            return conv(value)
        except _ConvertError as exc:
            raise _AttrError(name, f"cannot convert to {attr.type.value}: {exc}") from None

    return convert


def _value_expr(gen: CodeGen, var: str, attr: Attribute, fail_on_missing: bool) -> str:
    conv = gen.ref(_attr_converter(attr, fail_on_missing), "c")
    if attr.type is AttrType.OBJECT:
        return f"({var} if {var} is not MISSING else {conv}({var}))"
    check = _FAST_CHECK.get(attr.type)
    if check is None:
        return f"{conv}({var})"
    return f"({var} if {check.format(v=var)} else {conv}({var}))"


def _decode(payload: Any) -> Any:
    if not isinstance(payload, (bytes, bytearray, memoryview, str)):
        raise MappingError(f"the json mapper expects bytes or text, not {type(payload).__name__}",
                           payload=payload)
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        raise MappingError(f"invalid JSON: {exc}", payload=payload) from None


class JsonSourceMapper(SourceMapper):
    """JSON payload -> rows.

    ``attribute_map`` maps every attribute to a JSONPath (``$.a.b``, ``$.a[0]``, ``$['x']``,
    relative ``a.b``) or a transport property (``trp:topic``); None means the default mapping.
    ``enclosing_element`` is the JSONPath of the node holding the events.  With
    ``fail_on_missing_attribute`` false an absent value becomes null instead of an error.
    Bad configuration raises ``ValueError`` (the registry factory turns it into a creation
    error with the annotation's position).
    """

    type_name = "json"

    def __init__(self, attributes: Sequence[Attribute], *, attribute_map: Mapping[str, str] | None = None,
                 enclosing_element: str | None = "$", fail_on_missing_attribute: bool = True) -> None:
        super().__init__(attributes)
        self.fail_on_missing_attribute = fail_on_missing_attribute
        encl = (enclosing_element or "$").strip()
        self._enclosing = None if encl == "$" else parse_path(encl).compile()
        gen = CodeGen({"MISSING": MISSING, "_AttrError": _AttrError, "_NotObject": _NotObject})
        if attribute_map is None:
            self._row = self._compile_default(gen)
            self._uses_transport = False
        else:
            self._row, self._uses_transport = self._compile_custom(gen, attribute_map)

    def _compile_default(self, gen: CodeGen) -> Callable[..., Row]:
        body = ["if o.__class__ is not dict:", "    raise _NotObject(o)"]
        # {"event": {...}} is Siddhi's envelope; unwrap it unless the stream itself is a lone
        # 'event' attribute, where the envelope and the data look the same.
        if self.names != ("event",):
            body += ["e = o.get('event')", "if e.__class__ is dict and len(o) == 1:", "    o = e"]
        body.append("g = o.get")
        values = []
        for i, attr in enumerate(self.attributes):
            body.append(f"v{i} = g({attr.name!r}, MISSING)")
            values.append(_value_expr(gen, f"v{i}", attr, self.fail_on_missing_attribute))
        body.append(f"return ({', '.join(values)}{',' if len(values) == 1 else ''})")
        return gen.function("_row", "o, t", body)

    def _compile_custom(self, gen: CodeGen, attribute_map: Mapping[str, str]) -> tuple[Callable[..., Row], bool]:
        body: list[str] = []
        values = []
        uses_transport = False
        for i, attr in enumerate(self.attributes):
            if attr.name not in attribute_map:
                raise ValueError(f"@attributes does not map '{attr.name}'")
            spec = attribute_map[attr.name].strip()
            if spec.lower().startswith(TRP_PREFIX):
                uses_transport = True
                body.append(f"v{i} = t.get({spec[len(TRP_PREFIX):]!r}, MISSING)")
            else:
                try:
                    path = parse_path(spec).compile()
                except JsonPathError as exc:
                    raise ValueError(f"attribute '{attr.name}': {exc}") from None
                body.append(f"v{i} = {gen.ref(path, 'p')}(o)")
            values.append(_value_expr(gen, f"v{i}", attr, self.fail_on_missing_attribute))
        body.append(f"return ({', '.join(values)}{',' if len(values) == 1 else ''})")
        return gen.function("_row", "o, t", body), uses_transport

    def map(self, payload: Any, transport: Mapping[str, Any] | None = None) -> list[Row]:
        """Rows of one JSON payload (see the class doc); raises :class:`MappingError`."""
        doc = _decode(payload)
        if self._enclosing is not None:
            doc = self._enclosing(doc)
            if doc is MISSING:
                raise MappingError("the enclosing element is not in the payload", payload=payload)
        items = doc if doc.__class__ is list else (doc,)
        t = transport if transport is not None else _EMPTY
        row = self._row
        try:
            return [row(item, t) for item in items]
        except (_AttrError, _NotObject):
            pass
        # Error path: find the failing event again to report its index precisely.
        for index, item in enumerate(items):
            try:
                row(item, t)
            except _AttrError as exc:
                name, reason = exc.args
                raise MappingError(reason, attribute=name, index=index if len(items) > 1 else None,
                                   payload=payload) from None
            except _NotObject as exc:
                kind = "null" if exc.args[0] is None else type(exc.args[0]).__name__
                raise MappingError(f"expected a JSON object for an event, got {kind}",
                                   index=index if len(items) > 1 else None, payload=payload) from None
        raise AssertionError("unreachable")  # pragma: no cover


class _NotObject(Exception):
    """Raised by generated code when an event element is not a JSON object."""


# ------------------------------------------------------------------------------------ sink
def _json_value_formatter(type_: AttrType) -> Callable[[Any], str]:
    """How a value is written into a JSON ``@payload`` template."""
    if type_ is AttrType.STRING:
        def fmt(v: Any) -> str:
            if v is None:
                return "null"
            return orjson.dumps(v if v.__class__ is str else str(v))[1:-1].decode()
    elif type_ in (AttrType.INT, AttrType.LONG):
        def fmt(v: Any) -> str:
            return "null" if v is None else str(v)
    elif type_ in (AttrType.FLOAT, AttrType.DOUBLE):
        single = type_ is AttrType.FLOAT

        def fmt(v: Any) -> str:
            if v is None or not math.isfinite(v):
                return "null"
            return repr(shortest_float32(v) if single else float(v))
    elif type_ is AttrType.BOOL:
        def fmt(v: Any) -> str:
            return "null" if v is None else ("true" if v else "false")
    else:
        def fmt(v: Any) -> str:
            return orjson.dumps(v, default=json_default, option=_DUMPS_OPTS).decode()
    return fmt


def _f32_out(value: Any) -> Any:
    return None if value is None else shortest_float32(value)


class JsonSinkMapper(SinkMapper):
    """Rows -> JSON payloads (see the module doc for the format)."""

    type_name = "json"

    def __init__(self, attributes: Sequence[Attribute], *, payload: str | None = None,
                 enclosing_element: str | None = None, event_grouping_enabled: bool = False,
                 validate_json: bool = False, enable_null_attribute_value: bool = True) -> None:
        super().__init__(attributes)
        self.event_grouping_enabled = event_grouping_enabled
        self.validate_json = validate_json
        self._wrap: tuple[str, ...] = ()
        if enclosing_element and enclosing_element.strip() != "$":
            steps = parse_path(enclosing_element).steps
            if any(not isinstance(s, str) for s in steps):
                raise ValueError(f"a sink enclosing.element must be a path of names, not {enclosing_element!r}")
            self._wrap = tuple(str(s) for s in steps)
        self._template = Template(payload, attributes, _json_value_formatter) if payload is not None else None
        gen = CodeGen({"_f32": _f32_out})
        items = []
        for i, attr in enumerate(self.attributes):
            value = f"_f32(r[{i}])" if attr.type is AttrType.FLOAT else f"r[{i}]"
            items.append(f"{attr.name!r}: {value}")
        body = [f"d = {{{', '.join(items)}}}"]
        if not enable_null_attribute_value:
            body.append("d = {k: v for k, v in d.items() if v is not None}")
        body.append("return {'event': d}")
        self._event = gen.function("_event", "r", body)

    def _wrap_obj(self, obj: Any) -> Any:
        for key in reversed(self._wrap):
            obj = {key: obj}
        return obj

    def _wrap_text(self, text: str) -> str:
        for key in reversed(self._wrap):
            text = "{" + orjson.dumps(key).decode() + ":" + text + "}"
        return text

    def _check(self, data: bytes) -> bytes:
        if self.validate_json:
            try:
                orjson.loads(data)
            except orjson.JSONDecodeError as exc:
                raise MappingError(f"the generated JSON is not valid: {exc}", payload=data) from None
        return data

    def map(self, rows: Sequence[Sequence[Any]]) -> list[Any]:
        """JSON payloads (bytes) for a chunk of rows; raises :class:`MappingError`."""
        if not rows:
            return []
        try:
            if self._template is not None:
                render = self._template.render
                texts = [render(r) for r in rows]
                if self.event_grouping_enabled:
                    texts = ["[" + ",".join(texts) + "]"]
                return [self._check(self._wrap_text(t).encode()) for t in texts]
            event = self._event
            if self.event_grouping_enabled:
                objs: list[Any] = [[event(r) for r in rows]]
            else:
                objs = [event(r) for r in rows]
            if self._wrap:
                objs = [self._wrap_obj(o) for o in objs]
            return [orjson.dumps(o, default=json_default, option=_DUMPS_OPTS) for o in objs]
        except MappingError:
            raise
        except IndexError:
            raise MappingError(f"a row has fewer values than the stream's {len(self.names)} attributes",
                               payload=rows) from None
        except (TypeError, ValueError) as exc:  # orjson.JSONEncodeError is a TypeError
            raise MappingError(f"cannot write JSON: {exc}", payload=rows) from None


# ------------------------------------------------------------------------------------ registry
_SOURCE_PARAMS = (
    Param("enclosing.element", _S, optional=True, default="$",
          doc="JSONPath of the node holding the events: an array is many events, an object one."),
    Param("fail.on.missing.attribute", _B, optional=True, default=True,
          doc="When true a payload missing an attribute fails to map (it goes to the error route); "
              "when false the attribute is null.  An explicit JSON null is always kept as null."),
    Param("event.grouping.enabled", _B, optional=True, default=True,
          doc="Accepted for compatibility: the events of one payload always form one chunk."),
)

_SINK_PARAMS = (
    Param("validate.json", _B, optional=True, default=False,
          doc="Check that each generated message is valid JSON; an invalid one fails to map."),
    Param("enclosing.element", _S, optional=True, default=None,
          doc="Wrap the output: '$.portfolio' writes {\"portfolio\": <events>}."),
    Param("event.grouping.enabled", _B, optional=True, default=False,
          doc="Write a chunk of events as one JSON array instead of one message per event."),
    Param("enable.null.attribute.value", _B, optional=True, default=True,
          doc="Write null attributes as null (true) or leave them out of the default object (false)."),
)


def _where(kind: str, stream_id: str) -> str:
    return f"json {kind} mapper of stream '{stream_id}'" if stream_id else f"json {kind} mapper"


@extension(Kind.SOURCE_MAPPER, "json", params=_SOURCE_PARAMS,
           doc="JSON -> events: Siddhi's {\"event\": {...}} format, plain objects, arrays, JSONPath "
               "@attributes and trp: transport properties.")
def _json_source(attributes: tuple[Attribute, ...], annotation: Annotation | None,
                 stream_id: str = "") -> JsonSourceMapper:
    where = _where("source", stream_id)
    pos = annotation.pos if annotation is not None else None
    opts = resolve_options(_SOURCE_PARAMS, annotation_options(annotation), where, pos)
    amap = attribute_mapping(annotation, attributes, where)
    try:
        return JsonSourceMapper(attributes, attribute_map=amap,
                                enclosing_element=opts["enclosing.element"],
                                fail_on_missing_attribute=opts["fail.on.missing.attribute"])
    except ValueError as exc:
        raise creation_error(f"{where}: {exc}", pos) from None


@extension(Kind.SINK_MAPPER, "json", params=_SINK_PARAMS,
           doc="Events -> JSON: {\"event\": {...}} per event, @payload templates, enclosing element, "
               "grouping into arrays.")
def _json_sink(attributes: tuple[Attribute, ...], annotation: Annotation | None,
               stream_id: str = "") -> JsonSinkMapper:
    where = _where("sink", stream_id)
    pos = annotation.pos if annotation is not None else None
    opts = resolve_options(_SINK_PARAMS, annotation_options(annotation), where, pos)
    payload_ann = payload_annotation(annotation, where)
    payload = None
    if payload_ann is not None:
        values = payload_ann.positional()
        if len(values) != 1 or any(el.key is not None for el in payload_ann.elements):
            raise creation_error(f"{where}: @payload takes one template string", payload_ann.pos or pos)
        payload = values[0]
    try:
        return JsonSinkMapper(attributes, payload=payload, enclosing_element=opts["enclosing.element"],
                              event_grouping_enabled=opts["event.grouping.enabled"],
                              validate_json=opts["validate.json"],
                              enable_null_attribute_value=opts["enable.null.attribute.value"])
    except ValueError as exc:
        raise creation_error(f"{where}: {exc}", pos) from None
