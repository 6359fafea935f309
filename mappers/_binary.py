"""The ``binary`` source and sink mappers: siddhi-map-binary's format, for Siddhi-to-Siddhi links.

A message is a chunk of events, big-endian (Java's ``ByteBuffer``)::

    int    number of events
    then per event:
      long   timestamp (epoch ms)
      each attribute in stream order, by its type:
        int 4 bytes, long 8, float 4 (IEEE single), double 8, bool 1 (1 is true),
        string: int length + that many bytes of UTF-8 (length 0 reads as null),
        object: int 0 (nothing of the value is written)

The events keep their own timestamps both ways: a source hands them to the app with the
payload's (:class:`~mappers._base.TimedRows`), not the arrival time, and a sink writes each
output event's.  Neither side takes options: ``@attributes`` on the source and ``@payload`` on
the sink refuse the app, as in Siddhi.

As siddhi-map-binary, a message that does not read to its last event is dropped whole (routed
as a mapping error), and bytes after the last event are ignored.  A sink chunk with a null
where the format has no null (a number or bool) or a value of the wrong type is not written
(Siddhi logs and drops it): a :class:`MappingError`, routed by the sink's ``on.error``.  Where
Siddhi fails: it writes an empty string as length 0, so it reads back null (kept, it is the
format); its source reads nothing for an ``object`` attribute and so misreads what follows
(Srota reads the 4 bytes its sink wrote, as null).
"""
from __future__ import annotations

import struct
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from srota.engine.registry import Kind, extension
from srota.engine.types import f32
from srota.grammar.model import Annotation, Attribute, AttrType
from srota.mappers._base import MappingError, Row, SinkMapper, SourceMapper, TimedRows, payload_annotation
from srota.mappers._convert import INT_MAX, INT_MIN, LONG_MAX, LONG_MIN
from srota.mappers._options import creation_error, mapper_options

#: struct codes of the fixed-size types (a bool is read as a byte: only 1 is true, as Java's).
_FIXED = {AttrType.INT: "i", AttrType.LONG: "q", AttrType.FLOAT: "f", AttrType.DOUBLE: "d",
          AttrType.BOOL: "B", AttrType.OBJECT: "i"}
_COUNT = struct.Struct(">i")
_LENGTH = struct.Struct(">i")


def _segments(types: Sequence[AttrType]) -> list[tuple[struct.Struct | None, list[AttrType]]]:
    """The event layout as runs: a struct for each run of fixed-size fields (the timestamp
    first), ``None`` for a string."""
    runs: list[tuple[struct.Struct | None, list[AttrType]]] = []
    codes, run_types = ["q"], [AttrType.LONG]
    for t in types:
        if t is AttrType.STRING:
            if codes:
                runs.append((struct.Struct(">" + "".join(codes)), run_types))
                codes, run_types = [], []
            runs.append((None, [t]))
        else:
            codes.append(_FIXED[t])
            run_types.append(t)
    if codes:
        runs.append((struct.Struct(">" + "".join(codes)), run_types))
    return runs


class BinarySourceMapper(SourceMapper):
    """One binary message (``bytes``) -> its events, with their timestamps (module doc)."""

    type_name = "binary"

    def __init__(self, attributes: Sequence[Attribute]) -> None:
        super().__init__(attributes)
        self._runs = _segments([a.type for a in self.attributes])
        # the fewest bytes an event takes: its fixed fields and a length per string
        self._min_event = sum(s.size if s is not None else _LENGTH.size for s, _ in self._runs)

    def map(self, payload: Any, transport: Mapping[str, Any] | None = None) -> list[Row]:
        """The events of one message as :class:`TimedRows`; raises :class:`MappingError`."""
        if isinstance(payload, (bytearray, memoryview)):
            payload = bytes(payload)
        if not isinstance(payload, bytes):
            raise MappingError(f"a binary payload must be bytes, not {type(payload).__name__}", payload=payload)
        try:
            return self._read(payload)
        except struct.error:
            raise MappingError("the message ends before its last event (does the stream match the "
                               "sender's?)", payload=payload) from None

    def _read(self, data: bytes) -> TimedRows:
        (count,) = _COUNT.unpack_from(data, 0)
        at = _COUNT.size
        if count < 0 or count * self._min_event > len(data) - at:
            raise MappingError(f"the message says it holds {count} events, which {len(data)} bytes cannot",
                               payload=data)
        rows = TimedRows()
        stamps = rows.timestamps
        for _ in range(count):
            values: list[Any] = []
            for fixed, types in self._runs:
                if fixed is None:
                    (size,) = _LENGTH.unpack_from(data, at)
                    at += _LENGTH.size
                    if size < 0 or at + size > len(data):
                        raise struct.error("string beyond the message")
                    # (Java's new String(bytes, UTF-8) replaces what is not UTF-8)
                    values.append(data[at:at + size].decode("utf-8", "replace") if size else None)
                    at += size
                else:
                    got = fixed.unpack_from(data, at)
                    at += fixed.size
                    values.extend(_fixed_value(t, v) for t, v in zip(types, got, strict=True))
            stamps.append(values[0])
            rows.append(tuple(values[1:]))
        return rows


def _fixed_value(type_: AttrType, value: Any) -> Any:
    if type_ is AttrType.BOOL:
        return value == 1
    if type_ is AttrType.OBJECT:
        return None
    return value


def _writer(type_: AttrType) -> Callable[[Any], bytes]:
    """Bytes of one value of ``type_``; raises ``TypeError``/``ValueError`` naming a bad one."""
    if type_ is AttrType.STRING:
        def string(v: Any) -> bytes:
            if v.__class__ is not str:
                raise TypeError(f"{_describe(v)} is not a string")
            raw = v.encode("utf-8")
            return _LENGTH.pack(len(raw)) + raw
        return string
    if type_ is AttrType.OBJECT:
        return lambda v: b"\x00\x00\x00\x00"
    if type_ is AttrType.BOOL:
        def boolean(v: Any) -> bytes:
            if v.__class__ is not bool:
                raise TypeError(f"{_describe(v)} is not a bool")
            return b"\x01" if v else b"\x00"
        return boolean
    code = struct.Struct(">" + _FIXED[type_])
    if type_ in (AttrType.INT, AttrType.LONG):
        lo, hi = (INT_MIN, INT_MAX) if type_ is AttrType.INT else (LONG_MIN, LONG_MAX)

        def integer(v: Any) -> bytes:
            if not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"{_describe(v)} is not {'an int' if type_ is AttrType.INT else 'a long'}")
            if not lo <= v <= hi:
                raise ValueError(f"{v} is out of range for {type_.value}")
            return code.pack(v)
        return integer

    def number(v: Any) -> bytes:
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise TypeError(f"{_describe(v)} is not a number")
        return code.pack(f32(float(v)) if type_ is AttrType.FLOAT else float(v))
    return number


def _describe(value: Any) -> str:
    return "null" if value is None else f"{type(value).__name__} {value!r}"[:80]


class BinarySinkMapper(SinkMapper):
    """A chunk of output events -> one binary message (module doc)."""

    type_name = "binary"
    event_grouping_enabled = True  # the whole chunk is one message, as Siddhi's
    #: The host hands this mapper rows that carry their event's timestamp (``row.timestamp``).
    wants_timestamps = True

    def __init__(self, attributes: Sequence[Attribute]) -> None:
        super().__init__(attributes)
        self._writers = [_writer(a.type) for a in self.attributes]

    def map(self, rows: Sequence[Sequence[Any]]) -> list[Any]:
        """One message for the chunk; raises :class:`MappingError` for a value it cannot write."""
        now = None
        parts = [_COUNT.pack(len(rows))]
        for index, row in enumerate(rows):
            stamp = getattr(row, "timestamp", None)
            if stamp is None:  # rows that never were events (a test harness): now, as Siddhi's
                now = now if now is not None else int(time.time() * 1000)
                stamp = now
            parts.append(struct.pack(">q", stamp))
            for name, write, value in zip(self.names, self._writers, row, strict=True):
                try:
                    parts.append(write(value))
                except (TypeError, ValueError, OverflowError, struct.error) as exc:
                    raise MappingError(f"cannot be written in binary: {exc}" if value is not None else
                                       "null cannot be written in binary (only a string may be null)",
                                       attribute=name, index=index) from None
        return [b"".join(parts)]


@extension(Kind.SOURCE_MAPPER, "binary",
           doc="siddhi-map-binary messages -> events, with their own timestamps.")
def _binary_source(attributes: tuple[Attribute, ...], annotation: Annotation | None,
                   stream_id: str) -> BinarySourceMapper:
    where, pos, _ = mapper_options("binary", "source", (), annotation, stream_id)
    if annotation is not None and annotation.nested("attributes"):
        raise creation_error(f"{where}: 'binary' source-mapper does not support custom mapping "
                             "(@attributes)", pos)
    return BinarySourceMapper(attributes)


@extension(Kind.SINK_MAPPER, "binary", doc="Events -> siddhi-map-binary messages (a chunk a message).")
def _binary_sink(attributes: tuple[Attribute, ...], annotation: Annotation | None,
                 stream_id: str) -> BinarySinkMapper:
    where, pos, _ = mapper_options("binary", "sink", (), annotation, stream_id)
    if payload_annotation(annotation, where) is not None:
        raise creation_error(f"{where}: binary sink-mapper does not support @payload mapping", pos)
    return BinarySinkMapper(attributes)
