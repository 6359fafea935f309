"""The ``csv`` source and sink mappers (options follow siddhi-map-csv).

Source: each record of the payload (one or many lines; quoting as RFC 4180 via the ``csv``
module) is one event, fields in attribute order, or picked by column index with
``@attributes(symbol='2', price='0', topic='trp:topic')``.  ``header``/``header.present``
skips the first record.  An empty field is null.  With ``fail.on.unknown.attribute`` true a
missing or unconvertible field fails the payload; false makes it null.

Sink: one line per event (``\\n``-terminated), optionally preceded by a header line; with
``event.grouping.enabled`` a chunk becomes one multi-line payload.  ``@payload(symbol='0',
price='2')`` places attributes in columns.  Nulls are written as empty fields.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping, Sequence
from typing import Any

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
from srota.mappers._convert import _ConvertError, format_value, text_converter, value_converter
from srota.mappers._options import annotation_options, creation_error, resolve_options

_S = (AttrType.STRING,)
_B = (AttrType.BOOL,)
_EMPTY: Mapping[str, Any] = {}
_ESCAPES = {"\\t": "\t", "\\n": "\n", "\\r": "\r", "\\\\": "\\"}


def _delimiter(value: str | None) -> str:
    text = _ESCAPES.get(value or ",", value or ",")
    if len(text) != 1:
        raise ValueError(f"the delimiter must be one character, not {value!r}")
    if text in ('"', "\n", "\r"):
        raise ValueError(f"{text!r} cannot be the delimiter")
    return text


class _Field:
    """How one attribute is read: a column index or a transport property, and a converter."""

    __slots__ = ("name", "column", "trp", "convert", "type")

    def __init__(self, attr: Attribute, column: int | None, trp: str | None) -> None:
        self.name = attr.name
        self.type = attr.type
        self.column = column
        self.trp = trp
        self.convert: Callable[[Any], Any] = (
            value_converter(attr.type) if trp is not None else text_converter(attr.type))


class CsvSourceMapper(SourceMapper):
    """CSV text -> rows.

    ``attribute_map`` maps every attribute to a 0-based column index (as a string, as in
    ``@attributes``) or ``trp:<property>``; None means the fields are in attribute order.
    Bad configuration raises ``ValueError``.
    """

    type_name = "csv"

    def __init__(self, attributes: Sequence[Attribute], *, delimiter: str = ",", header: bool = False,
                 fail_on_unknown_attribute: bool = True,
                 attribute_map: Mapping[str, str] | None = None) -> None:
        super().__init__(attributes)
        self.delimiter = _delimiter(delimiter)
        self.header = header
        self.fail_on_unknown_attribute = fail_on_unknown_attribute
        fields = []
        for i, attr in enumerate(self.attributes):
            if attribute_map is None:
                fields.append(_Field(attr, i, None))
                continue
            spec = attribute_map[attr.name].strip()
            if spec.lower().startswith(TRP_PREFIX):
                fields.append(_Field(attr, None, spec[len(TRP_PREFIX):]))
                continue
            try:
                column = int(spec)
            except ValueError:
                raise ValueError(f"attribute '{attr.name}' must map to a column index or trp:<name>, "
                                 f"not {spec!r}") from None
            if column < 0:
                raise ValueError(f"attribute '{attr.name}' maps to a negative column ({column})")
            fields.append(_Field(attr, column, None))
        self._fields = tuple(fields)
        self._width = None if attribute_map is not None else len(fields)

    def _records(self, payload: Any) -> list[list[str]]:
        if isinstance(payload, (bytes, bytearray, memoryview)):
            try:
                text = bytes(payload).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise MappingError(f"the payload is not UTF-8 text: {exc}", payload=payload) from None
        elif isinstance(payload, str):
            text = payload
        else:
            raise MappingError(f"the csv mapper expects bytes or text, not {type(payload).__name__}",
                               payload=payload)
        if "\x00" in text:
            raise MappingError("the payload contains NUL characters (binary data?)", payload=payload)
        try:
            records = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=self.delimiter,
                                             strict=True) if r]
        except csv.Error as exc:
            raise MappingError(f"malformed CSV: {exc}", payload=payload) from None
        return records[1:] if self.header else records

    def map(self, payload: Any, transport: Mapping[str, Any] | None = None) -> list[Row]:
        """Rows of one CSV payload (one per record); raises :class:`MappingError`."""
        records = self._records(payload)
        t = transport if transport is not None else _EMPTY
        fail = self.fail_on_unknown_attribute
        multi = len(records) > 1
        rows: list[Row] = []
        for index, record in enumerate(records):
            if fail and self._width is not None and len(record) > self._width:
                raise MappingError(f"the record has {len(record)} fields but the stream has {self._width} "
                                   "attributes", index=index if multi else None, payload=payload)
            values = []
            for f in self._fields:
                if f.trp is not None:
                    raw = t.get(f.trp)
                    missing = f.trp not in t
                elif f.column is not None and f.column < len(record):
                    raw = record[f.column]
                    missing = False
                else:
                    raw, missing = None, True
                if missing:
                    if fail:
                        raise MappingError("missing in the record", attribute=f.name,
                                           index=index if multi else None, payload=payload)
                    values.append(None)
                    continue
                try:
                    values.append(f.convert(raw))
                except _ConvertError as exc:
                    if fail:
                        raise MappingError(f"cannot convert to {f.type.value}: {exc}", attribute=f.name,
                                           index=index if multi else None, payload=payload) from None
                    values.append(None)
            rows.append(tuple(values))
        return rows


class CsvSinkMapper(SinkMapper):
    """Rows -> CSV payloads (bytes, UTF-8).

    ``payload_columns`` maps attributes to 0-based output columns (``@payload(symbol='0',
    price='2')``); the columns must be 0..n-1 with none repeated.  None writes every attribute
    in stream order.
    """

    type_name = "csv"

    def __init__(self, attributes: Sequence[Attribute], *, delimiter: str = ",", header: bool = False,
                 event_grouping_enabled: bool = False,
                 payload_columns: Mapping[str, int] | None = None) -> None:
        super().__init__(attributes)
        self.delimiter = _delimiter(delimiter)
        self.header = header
        self.event_grouping_enabled = event_grouping_enabled
        index = {a.name: i for i, a in enumerate(self.attributes)}
        if payload_columns is None:
            order = list(range(len(self.attributes)))
        else:
            for name in payload_columns:
                if name not in index:
                    raise ValueError(f"@payload names '{name}', which is not an attribute of the stream")
            columns = sorted(payload_columns.values())
            if columns != list(range(len(columns))):
                raise ValueError(f"@payload columns must be 0..{len(columns) - 1}, each used once, "
                                 f"not {sorted(payload_columns.values())}")
            by_column = {c: n for n, c in payload_columns.items()}
            order = [index[by_column[c]] for c in range(len(columns))]
        self._order = tuple(order)
        self._types = tuple(a.type for a in self.attributes)
        self._header_line = self._line([self.attributes[i].name for i in order]) if header else ""

    def _line(self, fields: list[str]) -> str:
        buf = io.StringIO()
        csv.writer(buf, delimiter=self.delimiter, lineterminator="\n").writerow(fields)
        return buf.getvalue()

    def map(self, rows: Sequence[Sequence[Any]]) -> list[Any]:
        """CSV payloads for a chunk of rows; raises :class:`MappingError`."""
        if not rows:
            return []
        buf = io.StringIO()
        writer = csv.writer(buf, delimiter=self.delimiter, lineterminator="\n")
        order, types = self._order, self._types
        lines = []
        try:
            for r in rows:
                writer.writerow([format_value(r[i], types[i], "") for i in order])
                lines.append(buf.getvalue())
                buf.seek(0)
                buf.truncate()
        except IndexError:
            raise MappingError(f"a row has fewer values than the stream's {len(types)} attributes",
                               payload=rows) from None
        if self.event_grouping_enabled:
            return [(self._header_line + "".join(lines)).encode()]
        return [(self._header_line + line).encode() for line in lines]


# ------------------------------------------------------------------------------------ registry
_SOURCE_PARAMS = (
    Param("delimiter", _S, optional=True, default=",", doc="The field separator (one character)."),
    Param("header.present", _B, optional=True, default=False,
          doc="Whether the first record is a header to skip."),
    Param("header", _B, optional=True, default=None, doc="Alias of header.present (Siddhi's examples use both)."),
    Param("fail.on.unknown.attribute", _B, optional=True, default=True,
          doc="When true a missing or unconvertible field fails the payload; when false it is null."),
    Param("event.grouping.enabled", _B, optional=True, default=False,
          doc="Accepted for compatibility: every record of a payload is always an event."),
)

_SINK_PARAMS = (
    Param("delimiter", _S, optional=True, default=",", doc="The field separator (one character)."),
    Param("header", _B, optional=True, default=False, doc="Start each payload with a header line."),
    Param("event.grouping.enabled", _B, optional=True, default=False,
          doc="Write a chunk of events as one multi-line payload."),
)


def _where(kind: str, stream_id: str) -> str:
    return f"csv {kind} mapper of stream '{stream_id}'" if stream_id else f"csv {kind} mapper"


@extension(Kind.SOURCE_MAPPER, "csv", params=_SOURCE_PARAMS,
           doc="CSV -> events: fields in attribute order or by @attributes column index.")
def _csv_source(attributes: tuple[Attribute, ...], annotation: Annotation | None,
                stream_id: str = "") -> CsvSourceMapper:
    where = _where("source", stream_id)
    pos = annotation.pos if annotation is not None else None
    opts = resolve_options(_SOURCE_PARAMS, annotation_options(annotation), where, pos)
    header = opts["header"] if opts["header"] is not None else opts["header.present"]
    amap = attribute_mapping(annotation, attributes, where)
    try:
        return CsvSourceMapper(attributes, delimiter=opts["delimiter"], header=header,
                               fail_on_unknown_attribute=opts["fail.on.unknown.attribute"],
                               attribute_map=amap)
    except ValueError as exc:
        raise creation_error(f"{where}: {exc}", pos) from None


@extension(Kind.SINK_MAPPER, "csv", params=_SINK_PARAMS,
           doc="Events -> CSV lines, optional header, @payload column placement, grouping.")
def _csv_sink(attributes: tuple[Attribute, ...], annotation: Annotation | None,
              stream_id: str = "") -> CsvSinkMapper:
    where = _where("sink", stream_id)
    pos = annotation.pos if annotation is not None else None
    opts = resolve_options(_SINK_PARAMS, annotation_options(annotation), where, pos)
    payload_ann = payload_annotation(annotation, where)
    columns = None
    if payload_ann is not None:
        if any(el.key is None for el in payload_ann.elements):
            raise creation_error(f"{where}: @payload takes attribute='column' pairs", payload_ann.pos or pos)
        columns = {}
        for el in payload_ann.elements:
            try:
                columns[str(el.key)] = int(el.value)
            except ValueError:
                raise creation_error(f"{where}: @payload column of '{el.key}' must be an integer, "
                                     f"not {el.value!r}", el.pos or payload_ann.pos or pos) from None
    try:
        return CsvSinkMapper(attributes, delimiter=opts["delimiter"], header=opts["header"],
                             event_grouping_enabled=opts["event.grouping.enabled"], payload_columns=columns)
    except ValueError as exc:
        raise creation_error(f"{where}: {exc}", pos) from None
