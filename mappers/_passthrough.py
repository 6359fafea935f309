"""The ``passThrough`` mappers: payloads that already are rows (Siddhi's default mapper).

Source: a payload is one row (a tuple, a list of values, a dict by attribute name, or an
event-like object with ``.data``) or many rows (a list whose items are all tuples, lists,
dicts or events).  A single row whose values are all lists must therefore be given as a tuple.
For a stream with one ``string`` or ``object`` attribute, ``bytes``/``str`` payloads are a row
too.  Values are type-checked strictly (no parsing of strings): an ``int`` may widen to
``long``/``float``/``double``, a ``float`` attribute is rounded to 32 bits.

Sink: hands each row through as a tuple; ``produces_bytes`` is false, so it fits in-process
transports (``inMemory``, ``log``) and callbacks, not Kafka or MQTT.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from srota.engine.registry import Kind, extension
from srota.engine.types import f32
from srota.grammar.model import Annotation, Attribute, AttrType
from srota.mappers._base import MappingError, Row, SinkMapper, SourceMapper
from srota.mappers._convert import INT_MAX, INT_MIN, LONG_MAX, LONG_MIN, with_article
from srota.mappers._options import annotation_options, creation_error


class _Reject(Exception):
    """A value of the wrong type; the message is the reason."""


def _strict(type_: AttrType) -> Callable[[Any], Any]:
    """A converter that accepts only values already of (or widening to) the attribute type."""
    def integer(lo: int, hi: int, name: str) -> Callable[[Any], Any]:
        def check(v: Any) -> Any:
            if v.__class__ is not int:
                if isinstance(v, int) and not isinstance(v, bool):
                    v = int(v)
                else:
                    raise _Reject(f"{type(v).__name__} {v!r} is not {with_article(name)}")
            if not lo <= v <= hi:
                raise _Reject(f"{v} is out of range for {name}")
            return v
        return check

    def number(single: bool) -> Callable[[Any], Any]:
        def check(v: Any) -> Any:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise _Reject(f"{type(v).__name__} {v!r} is not a number")
            return f32(float(v)) if single else float(v)
        return check

    def typed(cls: type, name: str) -> Callable[[Any], Any]:
        def check(v: Any) -> Any:
            if not isinstance(v, cls):
                raise _Reject(f"{type(v).__name__} {v!r} is not a {name}")
            return v
        return check

    if type_ is AttrType.INT:
        return integer(INT_MIN, INT_MAX, "int")
    if type_ is AttrType.LONG:
        return integer(LONG_MIN, LONG_MAX, "long")
    if type_ is AttrType.FLOAT:
        return number(True)
    if type_ is AttrType.DOUBLE:
        return number(False)
    if type_ is AttrType.BOOL:
        return typed(bool, "bool")
    if type_ is AttrType.STRING:
        return typed(str, "string")
    return lambda v: v


def _is_row(value: Any) -> bool:
    return isinstance(value, (tuple, list, dict)) or hasattr(value, "data")


class PassThroughSourceMapper(SourceMapper):
    """Row-shaped payloads -> rows, type-checked (see the module doc)."""

    type_name = "passThrough"

    def __init__(self, attributes: Sequence[Attribute]) -> None:
        super().__init__(attributes)
        self._checks = tuple(_strict(a.type) for a in self.attributes)
        self._text_row = len(self.attributes) == 1 and self.attributes[0].type in (AttrType.STRING,
                                                                                 AttrType.OBJECT)

    def _row(self, value: Any, index: int | None, payload: Any) -> Row:
        if isinstance(value, dict):
            missing = [n for n in self.names if n not in value]
            if missing:
                raise MappingError("missing in the payload", attribute=missing[0], index=index, payload=payload)
            values: Sequence[Any] = [value[n] for n in self.names]
        elif isinstance(value, (tuple, list)):
            values = value
        elif hasattr(value, "data"):
            values = value.data
        else:
            raise MappingError(f"a row must be a tuple, list, dict or event, not {type(value).__name__}",
                               index=index, payload=payload)
        if len(values) != len(self._checks):
            raise MappingError(f"a row has {len(values)} values but the stream has {len(self._checks)} "
                               "attributes", index=index, payload=payload)
        out: list[Any] = []
        for name, check, v in zip(self.names, self._checks, values, strict=True):
            if v is None:
                out.append(None)
                continue
            try:
                out.append(check(v))
            except _Reject as exc:
                raise MappingError(str(exc), attribute=name, index=index, payload=payload) from None
        return tuple(out)

    def map(self, payload: Any, transport: Mapping[str, Any] | None = None) -> list[Row]:
        """Rows of one payload; raises :class:`MappingError`."""
        if isinstance(payload, (bytes, bytearray, memoryview, str)):
            if not self._text_row:
                raise MappingError(f"passThrough got {type(payload).__name__}; only a stream with one string or "
                                   "object attribute takes raw text or bytes", payload=payload)
            if self.attributes[0].type is AttrType.STRING and not isinstance(payload, str):
                try:
                    payload = bytes(payload).decode()
                except UnicodeDecodeError:
                    raise MappingError("the payload is not UTF-8 text", payload=payload) from None
            return [(payload,)]
        if isinstance(payload, list) and payload and all(_is_row(v) for v in payload):
            return [self._row(v, i, payload) for i, v in enumerate(payload)]
        return [self._row(payload, None, payload)]


class PassThroughSinkMapper(SinkMapper):
    """Rows -> the same rows (as tuples), one payload per event."""

    type_name = "passThrough"
    produces_bytes = False

    def map(self, rows: Sequence[Sequence[Any]]) -> list[Any]:
        """The rows as tuples (a ``TimedRow`` kept as it is, with its timestamp)."""
        return [r if isinstance(r, tuple) else tuple(r) for r in rows]


def _check_no_options(annotation: Annotation | None, where: str) -> None:
    pos = annotation.pos if annotation is not None else None
    opts = annotation_options(annotation)
    if opts:
        raise creation_error(f"{where} takes no options (got {', '.join(opts)})", pos)
    if annotation is not None and annotation.annotations:
        raise creation_error(f"{where} takes no @attributes or @payload", pos)


@extension(Kind.SOURCE_MAPPER, "passThrough", doc="Row-shaped payloads -> events, type-checked.")
def _passthrough_source(attributes: tuple[Attribute, ...], annotation: Annotation | None,
                        stream_id: str = "") -> PassThroughSourceMapper:
    _check_no_options(annotation, "the passThrough source mapper")
    return PassThroughSourceMapper(attributes)


@extension(Kind.SINK_MAPPER, "passThrough", doc="Events -> rows (tuples) for in-process transports.")
def _passthrough_sink(attributes: tuple[Attribute, ...], annotation: Annotation | None,
                      stream_id: str = "") -> PassThroughSinkMapper:
    _check_no_options(annotation, "the passThrough sink mapper")
    return PassThroughSinkMapper(attributes)
