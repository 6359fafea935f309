"""The ``csv`` source and sink mappers: what siddhi-map-csv reads and writes.

Source: each record of a message (one or many lines, quoted with ``"`` as RFC 4180; empty
lines skipped) is one event, fields in attribute order (extra fields ignored), or picked by
0-based column index with ``@attributes(symbol='2', price='0', topic='trp:topic')``.  As
siddhi-map-csv (Apache Commons CSV underneath):

* ``delimiter`` may be several characters (``'-/-'``); ``'\\t'`` selects the tab-delimited
  format, whose fields are trimmed;
* ``header='true'`` skips the first *message* the source ever receives (the header line a
  producer sends once), not the first line of every message;
* a ``string`` field is taken as it is (an empty field is ``""``, ``null`` is the text
  ``"null"``); ``int``/``long`` must be an integer with no spaces; ``float``/``double`` a
  number (surrounding spaces allowed, as Java's parser does); ``bool`` is true when the field
  is ``true`` in any case and false otherwise; an empty numeric field is a mapping error;
* with ``fail.on.unknown.attribute='true'`` (the default) a field that does not convert, or a
  missing one, fails its record: that record is dropped and the message goes to the error
  route, while the message's other records are still events.  With ``'false'`` the field is
  null and the record maps.

Sink: one line per event (``\\n``-terminated), fields quoted only where needed (Commons CSV's
minimal quoting), null written as ``null``; with ``event.grouping.enabled='true'`` a chunk of
events is one multi-line message.  ``@payload(symbol='0', price='2')`` places attributes in
columns.  ``header='true'`` publishes the header line once, as a message of its own, before
the first events (to the first event's topic).
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
from srota.mappers._convert import (
    _ConvertError,
    format_value,
    java_text_converter,
    value_converter,
)
from srota.mappers._options import (
    creation_error,
    mapper_options,
)

_S = (AttrType.STRING,)
_B = (AttrType.BOOL,)
_EMPTY: Mapping[str, Any] = {}
_TAB = "\t"
#: Java's ``Character.isWhitespace``, which Commons CSV trims by: the space, line and paragraph
#: separators but the no-break ones, and the controls \t \n \v \f \r and U+001C..U+001F.
_JAVA_WHITESPACE = (" \u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2008\u2009\u200a\u2028\u2029\u205f"
                    "\u3000\t\n\x0b\f\r\x1c\x1d\x1e\x1f")
#: What may stand around a field (not a line break, which ends the record).
_FIELD_SPACE = _JAVA_WHITESPACE.replace("\n", "").replace("\r", "")
_ESCAPES = {"\\t": "\t", "\\n": "\n", "\\r": "\r", "\\\\": "\\"}


def _delimiter(value: str | None) -> str:
    text = value if value else ","
    text = _ESCAPES.get(text, text)
    if any(c in text for c in ('"', "\n", "\r")):
        raise ValueError(f"the delimiter cannot contain a quote or a line break ({value!r})")
    return text


# ------------------------------------------------------------------------------------ source
class _Field:
    """How one attribute is read: a column index or a transport property, and a converter."""

    __slots__ = ("name", "column", "trp", "convert", "type")

    def __init__(self, attr: Attribute, column: int | None, trp: str | None) -> None:
        self.name = attr.name
        self.type = attr.type
        self.column = column
        self.trp = trp
        self.convert: Callable[[Any], Any] = (
            value_converter(attr.type) if trp is not None else java_text_converter(attr.type))


def _split_records(text: str, delimiter: str, trim: bool) -> list[list[str]]:
    """Records of ``text`` for a multi-character or tab delimiter (Commons CSV rules).

    ``"`` quotes a field (``""`` inside is a quote); a line break ends a record; empty lines
    are skipped; with ``trim`` (the tab-delimited format) what Java's ``Character.isWhitespace``
    calls white space around a field goes.
    """
    records: list[list[str]] = []
    fields: list[str] = []
    i, n, dl = 0, len(text), len(delimiter)
    while True:
        j = i
        if trim:
            while j < n and text[j] in _FIELD_SPACE and not text.startswith(delimiter, j):
                j += 1
        quoted = j < n and text[j] == '"'
        if quoted:
            parts = []
            j += 1
            while True:
                k = text.find('"', j)
                if k < 0:
                    raise csv.Error("end of data inside a quoted field")
                parts.append(text[j:k])
                if text.startswith('"', k + 1):
                    parts.append('"')
                    j = k + 2
                    continue
                j = k + 1
                break
            # Commons CSV skips whitespace between a closing quote and the delimiter.
            while j < n and text[j] in _FIELD_SPACE and not text.startswith(delimiter, j):
                j += 1
            if j < n and text[j] not in "\r\n" and not text.startswith(delimiter, j):
                raise csv.Error(f"invalid character {text[j]!r} between a quoted field and the delimiter")
            value = "".join(parts)
        else:
            k = j
            while k < n and text[k] not in "\r\n" and not text.startswith(delimiter, k):
                k += 1
            value = text[j:k].rstrip(_FIELD_SPACE) if trim else text[i:k]
            j = k
        fields.append(value)
        if j < n and text.startswith(delimiter, j):
            i = j + dl
            continue
        if quoted or fields != [""]:  # an empty line is no record
            records.append(fields)
        fields = []
        if j >= n:
            break
        j += 2 if text.startswith("\r\n", j) else 1
        if j >= n:
            break
        i = j
    return records


class CsvSourceMapper(SourceMapper):
    """CSV text -> rows (see the module doc).

    ``attribute_map`` maps every attribute to a 0-based column index (as a string, as in
    ``@attributes``) or ``trp:<property>``; None means the fields are in attribute order.
    The mapper keeps one piece of state: whether the header message has been skipped.
    Bad configuration raises ``ValueError``.
    """

    type_name = "csv"

    def __init__(self, attributes: Sequence[Attribute], *, delimiter: str = ",", header: bool = False,
                 fail_on_unknown_attribute: bool = True,
                 attribute_map: Mapping[str, str] | None = None) -> None:
        super().__init__(attributes)
        self.delimiter = _delimiter(delimiter)
        self.header = header
        self._header_pending = header
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
        trim = self.delimiter == _TAB
        try:
            if len(self.delimiter) == 1 and not trim:
                try:
                    return [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=self.delimiter,
                                                  strict=True) if r]
                except csv.Error:
                    pass  # the csv module is stricter in places (spaces after a closing quote)
            return _split_records(text, self.delimiter, trim)
        except csv.Error as exc:
            raise MappingError(f"malformed CSV: {exc}", payload=payload) from None

    def map(self, payload: Any, transport: Mapping[str, Any] | None = None) -> list[Row]:
        """Rows of one CSV message (one per record); raises :class:`MappingError`.

        When some records fail, the error carries the others in ``rows``.
        """
        if self._header_pending:
            # siddhi-map-csv skips the first message the source receives, whatever it holds.
            self._header_pending = False
            return []
        records = self._records(payload)
        t = transport if transport is not None else _EMPTY
        fail = self.fail_on_unknown_attribute
        rows: list[Row] = []
        failed: list[tuple[int, str, str]] = []
        for index, record in enumerate(records):
            values: list[Any] = []
            error: tuple[str, str] | None = None
            for f in self._fields:
                if f.trp is not None:
                    raw = t.get(f.trp)
                    missing = raw is None
                elif f.column is not None and f.column < len(record):
                    raw = record[f.column]
                    missing = False
                else:
                    raw, missing = None, True
                if missing:
                    if fail:
                        error = (f.name, "missing in the record")
                        break
                    values.append(None)
                    continue
                try:
                    values.append(f.convert(raw))
                except _ConvertError as exc:
                    if fail:
                        error = (f.name, f"cannot convert to {f.type.value}: {exc}")
                        break
                    values.append(None)
            if error is None:
                rows.append(tuple(values))
            else:
                failed.append((index, *error))
        if failed:
            index, name, reason = failed[0]
            if len(failed) > 1:
                reason = f"{reason} ({len(failed)} of {len(records)} records failed)"
            raise MappingError(reason, attribute=name, index=index if len(records) > 1 else None,
                               payload=payload, rows=rows)
        return rows


# ------------------------------------------------------------------------------------ sink
def _needs_quotes(value: str, first: bool, delimiter: str) -> bool:
    """Commons CSV 1.10 minimal quoting (what siddhi-map-csv writes)."""
    if not value:
        return first  # an empty first field is quoted, or the line would read as empty
    if value[0] <= "#":
        return True
    if "\n" in value or "\r" in value or '"' in value or delimiter in value:
        return True
    return value[-1] <= " "


class CsvSinkMapper(SinkMapper):
    """Rows -> CSV payloads (bytes, UTF-8).

    ``payload_columns`` maps attributes to 0-based output columns (``@payload(symbol='0',
    price='2')``); the columns must be 0..n-1 with none repeated.  None writes every attribute
    in stream order.  With ``header`` the header line is published once (see :meth:`preamble`).
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
        self._header_pending = header
        self._header_line = self._line([self.attributes[i].name for i in order]) if header else ""

    def _line(self, fields: Sequence[str]) -> str:
        d = self.delimiter
        out = []
        for i, v in enumerate(fields):
            out.append('"' + v.replace('"', '""') + '"' if _needs_quotes(v, i == 0, d) else v)
        return d.join(out) + "\n"

    def preamble(self) -> list[Any]:
        """The header line, once, as a message of its own (siddhi-map-csv's ``header='true'``)."""
        if not self._header_pending:
            return []
        self._header_pending = False
        return [self._header_line.encode()]

    def map(self, rows: Sequence[Sequence[Any]]) -> list[Any]:
        """CSV payloads for a chunk of rows; raises :class:`MappingError`."""
        if not rows:
            return []
        order, types, line = self._order, self._types, self._line
        try:
            lines = [line([format_value(r[i], types[i], "null") for i in order]) for r in rows]
        except IndexError:
            raise MappingError(f"a row has fewer values than the stream's {len(types)} attributes",
                               payload=rows) from None
        if self.event_grouping_enabled:
            return ["".join(lines).encode()]
        return [text.encode() for text in lines]


# ------------------------------------------------------------------------------------ registry
_SOURCE_PARAMS = (
    Param("delimiter", _S, optional=True, default=",",
          doc="The field separator, one or more characters; '\\t' reads tab-delimited text (fields trimmed)."),
    Param("header", _B, optional=True, default=None,
          doc="When true the first message the source receives is a header and is skipped."),
    Param("header.present", _B, optional=True, default=False, doc="Alias of header."),
    Param("fail.on.unknown.attribute", _B, optional=True, default=True,
          doc="When true a record with a missing or unconvertible field fails to map (only that record "
              "is dropped); when false the field is null."),
    Param("event.grouping.enabled", _B, optional=True, default=False,
          doc="Accepted for compatibility: every record of a message is an event, and a message's "
              "events go into the app together."),
)

_SINK_PARAMS = (
    Param("delimiter", _S, optional=True, default=",", doc="The field separator, one or more characters."),
    Param("header", _B, optional=True, default=False,
          doc="Publish the header line once, as its own message, before the first events."),
    Param("event.grouping.enabled", _B, optional=True, default=False,
          doc="Write a chunk of events as one multi-line message."),
)


@extension(Kind.SOURCE_MAPPER, "csv", params=_SOURCE_PARAMS,
           doc="CSV -> events: fields in attribute order or by @attributes column index.")
def _csv_source(attributes: tuple[Attribute, ...], annotation: Annotation | None,
                stream_id: str = "") -> CsvSourceMapper:
    where, pos, opts = mapper_options("csv", "source", _SOURCE_PARAMS, annotation, stream_id)
    header = opts["header"] if opts["header"] is not None else opts["header.present"]
    amap = attribute_mapping(annotation, attributes, where)
    try:
        return CsvSourceMapper(attributes, delimiter=opts["delimiter"], header=header,
                               fail_on_unknown_attribute=opts["fail.on.unknown.attribute"],
                               attribute_map=amap)
    except ValueError as exc:
        raise creation_error(f"{where}: {exc}", pos) from None


@extension(Kind.SINK_MAPPER, "csv", params=_SINK_PARAMS,
           doc="Events -> CSV lines, header once, @payload column placement, grouping.")
def _csv_sink(attributes: tuple[Attribute, ...], annotation: Annotation | None,
              stream_id: str = "") -> CsvSinkMapper:
    where, pos, opts = mapper_options("csv", "sink", _SINK_PARAMS, annotation, stream_id)
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
