"""The ``keyvalue`` source and sink mappers: what siddhi-map-keyvalue reads and writes.

Source: a payload is one event given as a map (a ``dict`` or any ``Mapping``), as in-process
transports (``inMemory``) carry it.  Default mapping: each attribute is the value of the key
of its name; custom mapping: ``@attributes(symbol='s', price='p', topic='trp:topic')`` (or
positional).  As siddhi-map-keyvalue:

* a key that is absent or null fails the event with ``fail.on.missing.attribute='true'``
  (the default) and is null otherwise;
* values are type-checked, not parsed: ``int``/``long`` take integers, ``float``/``double``
  numbers, ``bool`` a bool, ``string`` a string, a ``decimal.Decimal`` (Java's BigDecimal) or
  an integer (Java's BigInteger) as text, a date or time as its text; a ``long`` also takes a
  ``datetime`` (a ``Timestamp``) as epoch milliseconds.  Anything else fails the event, unless
  ``implicit.cast.enable='true'``: then a value for a number or bool attribute is parsed from
  its text as Java does (``Float.parseFloat``, ``Long.parseLong``, ``Boolean.parseBoolean``);
  a string attribute is never cast.
* a payload that is not a map fails.

Python has one integer type and one float type where Java has ``Integer``/``Long``/
``BigInteger`` and ``Float``/``Double``, so a Python ``int`` is accepted wherever siddhi-map-
keyvalue accepts any of those (an ``int``, ``long``, ``float`` or ``double`` attribute, and a
``string`` as text) and a ``float`` wherever it accepts a ``Float`` or ``Double`` (a ``float``
or ``double`` attribute); Siddhi refuses a ``Double`` for a ``float`` attribute and an
``Integer`` for a ``long`` one without ``implicit.cast.enable``.  Other differences, on
purpose: an ``object`` attribute takes any value (Siddhi fails every event of such a stream);
``bytes`` payloads are refused (Siddhi deserializes a Java-serialized ``Map``; there is no
safe Python equivalent).

Sink: one map (a ``dict``) per event, by attribute name, or ``@payload(a='symbol',
b='{{symbol}} is here', c='`price`')``: a value that is an attribute's name is that
attribute's value (typed); a ``{{attribute}}`` template is text (a null as ``null``); a
back-quoted word is that word.  An unkeyed ``@payload('...')`` is one entry with key ``None``
(Siddhi's ``null`` key).  The payloads are Python objects (``produces_bytes`` is false): the
mapper fits in-process transports (``inMemory``), not Kafka or MQTT.
"""
from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from srota.engine.codegen import CodeGen
from srota.engine.registry import Kind, Param, extension
from srota.engine.types import f32
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
from srota.mappers._convert import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    _ConvertError,
    format_value,
    java_text_converter,
    value_converter,
)
from srota.mappers._options import (
    annotation_options,
    creation_error,
    mapper_options,
    mapper_where,
    resolve_options,
)
from srota.mappers._template import TemplateError
from srota.mappers._text import siddhi_payload_template

_B = (AttrType.BOOL,)
_EMPTY: Mapping[str, Any] = {}
_MISSING: Any = object()
_TEMPORAL = (datetime.date, datetime.time)  # (datetime.datetime is a date)


class _Reject(Exception):
    """A value of the wrong type; the message is the reason."""


def _describe(value: Any) -> str:
    text = repr(value)
    return (text if len(text) <= 60 else text[:57] + "...") + f" ({type(value).__name__})"


def _java_text(value: Any) -> str:
    """``value.toString()`` as Java writes it (the text an implicit cast parses)."""
    if value.__class__ is float:
        return format_value(value, AttrType.DOUBLE)
    if value.__class__ is bool:
        return "true" if value else "false"
    return str(value)


def _checker(type_: AttrType, implicit_cast: bool) -> Callable[[Any], Any]:
    """The value check of one attribute type (None never reaches it)."""
    parse = java_text_converter(type_)
    name = type_.value

    def cast(value: Any) -> Any:
        if not implicit_cast:
            raise _Reject(f"value {_describe(value)} is not compatible with type {name}")
        try:
            return parse(_java_text(value))
        except _ConvertError as exc:
            raise _Reject(f"value {_describe(value)} is not compatible with type {name} ({exc})") from None

    def integer(lo: int, hi: int, millis: bool) -> Callable[[Any], Any]:
        def check(value: Any) -> Any:
            cls = value.__class__
            if cls is int or (isinstance(value, int) and cls is not bool):
                result = int(value)
            elif cls is decimal.Decimal and value.is_finite():
                result = int(value)  # BigDecimal.intValue()/longValue(): the fraction goes
            elif millis and isinstance(value, datetime.datetime):
                return int(value.timestamp() * 1000)  # a Timestamp's getTime()
            else:
                return cast(value)
            if not lo <= result <= hi:
                raise _Reject(f"{result} is out of range for {name}")
            return result
        return check

    def number(single: bool) -> Callable[[Any], Any]:
        def check(value: Any) -> Any:
            cls = value.__class__
            if cls is float or cls is decimal.Decimal or (isinstance(value, (int, float)) and cls is not bool):
                try:
                    result = float(value)
                except OverflowError:
                    raise _Reject(f"{value} is out of range for {name}") from None
                return f32(result) if single else result
            return cast(value)
        return check

    if type_ is AttrType.INT:
        return integer(INT_MIN, INT_MAX, False)
    if type_ is AttrType.LONG:
        return integer(LONG_MIN, LONG_MAX, True)
    if type_ is AttrType.FLOAT:
        return number(True)
    if type_ is AttrType.DOUBLE:
        return number(False)
    if type_ is AttrType.BOOL:
        def boolean(value: Any) -> Any:
            return value if value.__class__ is bool else cast(value)
        return boolean
    if type_ is AttrType.STRING:
        def string(value: Any) -> Any:
            cls = value.__class__
            if cls is str:
                return value
            if isinstance(value, (str, decimal.Decimal, *_TEMPORAL)) or (isinstance(value, int) and cls is not bool):
                return str(value)
            # siddhi-map-keyvalue never casts to a string, implicit.cast.enable or not.
            raise _Reject(f"value {_describe(value)} is not compatible with type string")
        return string

    def anything(value: Any) -> Any:
        return value
    return anything


# Per-type "already the right type" tests inlined into the generated row function.
_FAST = {
    AttrType.STRING: "{v}.__class__ is str",
    AttrType.INT: "{v}.__class__ is int and -2147483648 <= {v} <= 2147483647",
    AttrType.LONG: "{v}.__class__ is int and -9223372036854775808 <= {v} <= 9223372036854775807",
    AttrType.DOUBLE: "{v}.__class__ is float",
    AttrType.BOOL: "{v}.__class__ is bool",
}


class KeyValueSourceMapper(SourceMapper):
    """Map payloads -> rows (see the module doc for the rules).

    ``attribute_map`` maps every attribute to a key or ``trp:<property>``; None means each
    attribute's own name.  The row function is generated once per mapper.
    """

    type_name = "keyvalue"

    def __init__(self, attributes: Sequence[Attribute], *, attribute_map: Mapping[str, str] | None = None,
                 fail_on_missing_attribute: bool = True, implicit_cast_enable: bool = False) -> None:
        super().__init__(attributes)
        self.fail_on_missing_attribute = fail_on_missing_attribute
        self.implicit_cast_enable = implicit_cast_enable
        gen = CodeGen({"_M": _MISSING, "_missing": self._missing})
        body: list[str] = []
        values: list[str] = []
        for i, attr in enumerate(self.attributes):
            spec = attribute_map[attr.name].strip() if attribute_map is not None else attr.name
            if spec.lower().startswith(TRP_PREFIX):
                source = "t"
                key = spec[len(TRP_PREFIX):]
                check: Callable[[Any], Any] = value_converter(attr.type)
            else:
                source, key = "p", spec
                check = _checker(attr.type, implicit_cast_enable)
            var = f"v{i}"
            body += [f"{var} = {source}.get({key!r})",
                     f"if {var} is None:",
                     f"    {var} = _missing({attr.name!r}, {source == 't'!r})"]
            fast = _FAST.get(attr.type)
            call = f"{gen.ref(self._wrap(attr.name, check), 'c')}({var})"
            if attr.type is AttrType.OBJECT and source == "p":
                values.append(var)
            elif fast is not None:
                values.append(f"({var} if {var} is None or {fast.format(v=var)} else {call})")
            else:
                values.append(f"({var} if {var} is None else {call})")
        body.append(f"return ({', '.join(values)}{',' if len(values) == 1 else ''})")
        self._row: Callable[[Mapping[str, Any], Mapping[str, Any]], Row] = gen.function("_row", "p, t", body)

    def _missing(self, name: str, transport: bool) -> None:
        if self.fail_on_missing_attribute:
            what = "transport property" if transport else "key"
            raise MappingError(f"the {what} of attribute '{name}' is missing or null", attribute=name)
        return None

    @staticmethod
    def _wrap(name: str, check: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def convert(value: Any) -> Any:
            try:
                return check(value)
            except (_Reject, _ConvertError) as exc:
                raise MappingError(str(exc), attribute=name) from None
        return convert

    def map(self, payload: Any, transport: Mapping[str, Any] | None = None) -> list[Row]:
        """The row of one map payload; raises :class:`MappingError`."""
        if not isinstance(payload, Mapping):
            kind = "bytes (a Java-serialized map?)" if isinstance(payload, (bytes, bytearray, memoryview)) \
                else type(payload).__name__
            raise MappingError(f"the keyvalue mapper expects a map, not {kind}", payload=payload)
        try:
            return [self._row(payload, transport if transport is not None else _EMPTY)]
        except MappingError as exc:
            raise MappingError(exc.reason, attribute=exc.attribute, payload=payload) from None


class KeyValueSinkMapper(SinkMapper):
    """Rows -> one ``dict`` per event (see the module doc).

    ``payload`` is the ``@payload`` as (key, value spec) pairs, None for the default map by
    attribute name.  The dict-building function is generated once per mapper.
    """

    type_name = "keyvalue"
    produces_bytes = False

    def __init__(self, attributes: Sequence[Attribute],
                 payload: Sequence[tuple[str | None, str]] | None = None) -> None:
        super().__init__(attributes)
        gen = CodeGen()
        if payload is None:
            items = [f"{a.name!r}: r[{i}]" for i, a in enumerate(self.attributes)]
        else:
            items = []
            for key, spec in payload:
                template = siddhi_payload_template(spec, self.attributes)
                value = f"r[{template}]" if isinstance(template, int) else f"{gen.ref(template.render, 'f')}(r)"
                items.append(f"{key!r}: {value}")
        self._event: Callable[[Sequence[Any]], dict[Any, Any]] = gen.function(
            "_event", "r", [f"return {{{', '.join(items)}}}"])

    def map(self, rows: Sequence[Sequence[Any]]) -> list[Any]:
        """One dict per row."""
        event = self._event
        try:
            return [event(r) for r in rows]
        except IndexError:
            raise MappingError(f"a row has fewer values than the stream's {len(self.attributes)} attributes",
                               payload=rows) from None


# ------------------------------------------------------------------------------------ registry
_SOURCE_PARAMS = (
    Param("fail.on.missing.attribute", _B, optional=True, default=True,
          doc="When true an event whose key is absent or null fails to map; when false the attribute is null."),
    Param("implicit.cast.enable", _B, optional=True, default=False,
          doc="When true a value of another type is parsed from its text for a number or bool attribute "
              "before the event fails."),
)


@extension(Kind.SOURCE_MAPPER, "keyvalue", params=_SOURCE_PARAMS,
           doc="Map payloads -> events: keys by attribute name or @attributes, trp: transport properties.")
def _keyvalue_source(attributes: tuple[Attribute, ...], annotation: Annotation | None,
                     stream_id: str = "") -> KeyValueSourceMapper:
    where, pos, opts = mapper_options("keyvalue", "source", _SOURCE_PARAMS, annotation, stream_id)
    amap = attribute_mapping(annotation, attributes, where)
    return KeyValueSourceMapper(attributes, attribute_map=amap,
                                fail_on_missing_attribute=opts["fail.on.missing.attribute"],
                                implicit_cast_enable=opts["implicit.cast.enable"])


@extension(Kind.SINK_MAPPER, "keyvalue", doc="Events -> maps (dicts): by attribute name or @payload(key='...').")
def _keyvalue_sink(attributes: tuple[Attribute, ...], annotation: Annotation | None,
                   stream_id: str = "") -> KeyValueSinkMapper:
    where = mapper_where("keyvalue", "sink", stream_id)
    pos = annotation.pos if annotation is not None else None
    resolve_options((), annotation_options(annotation), where, pos)
    payload_ann = payload_annotation(annotation, where)
    payload = None
    if payload_ann is not None:
        payload = [(el.key, el.value) for el in payload_ann.elements]
        if not payload:
            raise creation_error(f"{where}: @payload is empty", payload_ann.pos or pos)
    try:
        return KeyValueSinkMapper(attributes, payload)
    except TemplateError as exc:
        raise creation_error(f"{where}: {exc}", pos) from None
