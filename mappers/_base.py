"""What every mapper is: the two interfaces, the one error type, and the factories.

A *source mapper* turns one transport payload (plus the message's transport properties) into
rows for one stream schema; a *sink mapper* turns a chunk of rows into payloads.  Mappers are
pure and synchronous; they know nothing about transports.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from srota.engine.registry import Kind, registry
from srota.grammar.model import Annotation, Attribute
from srota.mappers._options import creation_error

#: Prefix of a transport property in ``@attributes``: ``@attributes(topic='trp:topic')``.
TRP_PREFIX = "trp:"

Row = tuple[Any, ...]


class TimedRows(list[tuple[Any, ...]]):
    """The rows of one payload with their events' own timestamps (epoch ms), one per row in
    ``timestamps``: a source mapper whose format carries them (``binary``) returns these, and
    the engine sends the events with them instead of the arrival time
    (:meth:`engine.junction.InputHandler.send_row_groups`)."""

    __slots__ = ("timestamps",)

    def __init__(self, rows: Any = (), timestamps: list[int] | None = None) -> None:
        super().__init__(rows)
        self.timestamps: list[int] = timestamps if timestamps is not None else []


class TimedRow(tuple[Any, ...]):
    """An output row with its event's ``timestamp``, for a sink mapper whose format writes it
    (``wants_timestamps``; the host makes these for that mapper only)."""

    timestamp: int

    @classmethod
    def of(cls, timestamp: int, data: Any) -> TimedRow:
        """The row of an output event."""
        row = cls(data)
        row.timestamp = timestamp
        return row


class MappingError(ValueError):
    """A payload could not be mapped to (or from) rows.

    The host catches this one type and routes the offending payload, with its original bytes,
    to the error route (``@OnError``/fault stream/error topic).  Nothing else is raised by
    ``map()`` for bad input.

    ``reason`` is a one-line, human-readable cause; ``attribute`` names the stream attribute
    involved (when there is one); ``index`` is the position of the failing event inside a
    multi-event payload (when known); ``payload`` is the input as given.

    ``rows`` are the events of the same payload that *did* map: siddhi-map-json and
    siddhi-map-csv drop only the failing elements of a multi-event payload (a JSON array, a
    CSV message of several records), so the host sends these on and routes the payload, with
    this error, to the error route.  Empty when the payload as a whole failed.
    """

    def __init__(self, reason: str, *, attribute: str | None = None, index: int | None = None,
                 payload: Any = None, rows: list[Row] | None = None) -> None:
        self.reason = reason
        self.attribute = attribute
        self.index = index
        self.payload = payload
        self.rows: list[Row] = rows if rows is not None else []
        where = []
        if index is not None:
            where.append(f"event {index}")
        if attribute is not None:
            where.append(f"attribute '{attribute}'")
        super().__init__(f"{', '.join(where)}: {reason}" if where else reason)


class SourceMapper(ABC):
    """Payload -> rows for one stream schema.

    ``map(payload, transport)`` returns a list of rows (tuples in attribute order; ``None`` is
    null).  ``transport`` is the message's transport-properties dict (``topic``,
    ``partition``, ``offset``, ``key`` ...) read by ``trp:`` attribute mappings.
    """

    #: The registry name (``json``, ``csv``, ``passThrough``).
    type_name: ClassVar[str] = ""

    #: Whether the events of one payload go into the app as one chunk (Siddhi's
    #: ``event.grouping.enabled``); when False the host sends them one event per chunk.
    event_grouping_enabled: bool = True

    def __init__(self, attributes: Sequence[Attribute]) -> None:
        self.attributes: tuple[Attribute, ...] = tuple(attributes)
        self.names: tuple[str, ...] = tuple(a.name for a in self.attributes)

    @abstractmethod
    def map(self, payload: Any, transport: Mapping[str, Any] | None = None) -> list[Row]:
        """Rows of one payload; raises :class:`MappingError` when it does not map."""


class SinkMapper(ABC):
    """Rows -> payloads for one stream schema.

    ``map(rows)`` returns the payloads to publish, in order: one per row, or one for the whole
    chunk when the mapper groups events.  ``produces_bytes`` tells the host whether the
    payloads are ``bytes`` (JSON, CSV) or Python objects (passthrough), so it can refuse to
    wire an object mapper to a byte transport when the app is created.
    """

    type_name: ClassVar[str] = ""
    produces_bytes: ClassVar[bool] = True
    #: Whether ``map`` is given :class:`TimedRow` rows (the format writes event timestamps).
    wants_timestamps: ClassVar[bool] = False

    def __init__(self, attributes: Sequence[Attribute]) -> None:
        self.attributes: tuple[Attribute, ...] = tuple(attributes)
        self.names: tuple[str, ...] = tuple(a.name for a in self.attributes)

    @property
    def groups_events(self) -> bool:
        """True when ``map`` writes a whole chunk as one payload (event grouping)."""
        return bool(getattr(self, "event_grouping_enabled", False))

    @abstractmethod
    def map(self, rows: Sequence[Sequence[Any]]) -> list[Any]:
        """Payloads for a chunk of rows; raises :class:`MappingError` when a row cannot be written.

        A chunk of one row is a single event (Siddhi's ``mapAndSend(Event)``); a longer chunk
        is an event array (``mapAndSend(Event[])``).
        """

    def map_group(self, rows: Sequence[Sequence[Any]]) -> list[Any]:
        """Payloads for one group of a multi-event chunk (rows with equal dynamic options).

        Siddhi maps each group as an event array even when it holds one event, so a grouping
        mapper writes it as such (the JSON mapper: ``[{...}]``).  Defaults to :meth:`map`.
        """
        return self.map(rows)

    def preamble(self) -> list[Any]:
        """Payloads to publish before the next chunk's, once (the CSV header); usually none.

        The host publishes them with the transport properties of the chunk's first event.
        """
        return []


DEFAULT_MAP_TYPE = "passThrough"


def _create(kind: Kind, attributes: Sequence[Attribute], annotation: Annotation | None,
            stream_id: str) -> Any:
    map_type = (annotation.get("type") if annotation is not None else None) or DEFAULT_MAP_TYPE
    namespace, _, name = map_type.rpartition(":")
    ext = registry.get(kind, namespace, name)
    pos = annotation.pos if annotation is not None else None
    if ext is None:
        what = "source" if kind is Kind.SOURCE_MAPPER else "sink"
        known = ", ".join(e.qualified_name for e in registry.all(kind))
        raise creation_error(f"no {what} mapper called '{map_type}' for stream '{stream_id}' "
                             f"(known: {known})", pos)
    return ext.factory(tuple(attributes), annotation, stream_id)


def create_source_mapper(attributes: Sequence[Attribute], annotation: Annotation | None = None,
                         stream_id: str = "") -> SourceMapper:
    """Build the source mapper described by a ``@map(type=..., ...)`` annotation.

    ``annotation`` is the ``@map`` nested in a stream's ``@source`` (None means Siddhi's
    default, ``passThrough``).  Options, ``@attributes`` and JSONPaths are validated here;
    errors are :class:`grammar.errors.SiddhiAppCreationError` with the annotation's position.
    """
    return _create(Kind.SOURCE_MAPPER, attributes, annotation, stream_id)


def create_sink_mapper(attributes: Sequence[Attribute], annotation: Annotation | None = None,
                       stream_id: str = "") -> SinkMapper:
    """Build the sink mapper described by a ``@map(type=..., ...)`` annotation (see above)."""
    return _create(Kind.SINK_MAPPER, attributes, annotation, stream_id)


def attribute_mapping(annotation: Annotation | None, attributes: Sequence[Attribute],
                      where: str, *, partial: bool = False) -> dict[str, str] | None:
    """The ``@attributes(...)`` nested in ``@map`` as {attribute name: mapping}, or None.

    Both Siddhi forms are accepted: keyed (``@attributes(id='$.id', t='$.t')``, any order,
    every attribute named) and positional (``@attributes('$.id', '$.t')``, one per attribute
    in stream order).  With ``partial`` a keyed ``@attributes`` may leave attributes out, as
    Siddhi's core allows (the mapper leaves them null; siddhi-map-xml documents it).
    """
    if annotation is None:
        return None
    nested = annotation.nested("attributes")
    if not nested:
        return None
    if len(nested) > 1:
        raise creation_error(f"{where}: only one @attributes is allowed", nested[1].pos or annotation.pos)
    ann = nested[0]
    pos = ann.pos or annotation.pos
    names = [a.name for a in attributes]
    keyed = [el for el in ann.elements if el.key is not None]
    positional = [el for el in ann.elements if el.key is None]
    if keyed and positional:
        raise creation_error(f"{where}: @attributes mixes keyed and positional values", pos)
    if positional:
        if len(positional) != len(names):
            raise creation_error(f"{where}: @attributes has {len(positional)} values but the stream "
                                 f"has {len(names)} attributes", pos)
        return {n: el.value for n, el in zip(names, positional, strict=True)}
    mapping: dict[str, str] = {}
    for el in keyed:
        assert el.key is not None
        if el.key not in names:
            raise creation_error(f"{where}: @attributes names '{el.key}', which is not an attribute "
                                 f"of the stream ({', '.join(names)})", el.pos or pos)
        if el.key in mapping:
            raise creation_error(f"{where}: @attributes maps '{el.key}' twice", el.pos or pos)
        mapping[el.key] = el.value
    missing = [n for n in names if n not in mapping]
    if missing and not partial:
        raise creation_error(f"{where}: @attributes does not map {', '.join(repr(m) for m in missing)}",
                             pos)
    return mapping


def payload_annotation(annotation: Annotation | None, where: str) -> Annotation | None:
    """The single ``@payload(...)`` nested in ``@map``, or None."""
    if annotation is None:
        return None
    nested = annotation.nested("payload")
    if len(nested) > 1:
        raise creation_error(f"{where}: only one @payload is allowed", nested[1].pos or annotation.pos)
    return nested[0] if nested else None


def payload_template(annotation: Annotation | None, where: str, pos: Any, refusal: str) -> str | None:
    """The one template string of a text mapper's ``@payload("...")``, or None without one.

    ``refusal`` says why a ``@payload`` with several or keyed values is refused (at creation).
    """
    payload_ann = payload_annotation(annotation, where)
    if payload_ann is None:
        return None
    values = payload_ann.positional()
    if len(values) != 1 or any(el.key is not None for el in payload_ann.elements):
        raise creation_error(f"{where}: {refusal}", payload_ann.pos or pos)
    return values[0]
