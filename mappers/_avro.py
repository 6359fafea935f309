"""The ``avro`` mapper (siddhi-map-avro's options and semantics), on fastavro.

Source: ``@map(type='avro', schema.def='{...}')`` or ``schema.registry='http://host:8081',
schema.id='7'``.  A message is one Avro binary datum of that schema (no container file); with
``use.avro.serializer='true'`` it is in the Confluent wire format that Kafka's
``KafkaAvroSerializer`` writes (a zero byte, the writer schema's id in four bytes, the datum),
and the writer schema is fetched from the registry by that id (cached).  A record maps to one
event by attribute name (extra fields are ignored; a missing one fails unless
``fail.on.missing.attribute='false'``); an array of records maps to many; ``@attributes(
name='$.a.b')`` maps by JSONPath over the decoded record, as the json mapper does.

Sink: the schema is ``schema.def``, or the registry's ``schema.id`` / latest version of
``subject``, or -- none given -- one made from the stream definition (a record named after
the stream, a field per attribute, as siddhi-map-avro generates).  Each event is one message;
with ``use.avro.serializer='true'`` it is framed for ``KafkaAvroDeserializer`` (the schema is
registered under ``subject`` when it has no id yet).

A payload that is not a datum of the schema, a value of the wrong type, a null for a
non-null field: :class:`~mappers._base.MappingError`, routed like any other mapping error.
"""
from __future__ import annotations

import io
import json
import struct
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

from srota.engine.registry import Kind, Param, extension
from srota.engine.types import f32
from srota.grammar.model import Annotation, Attribute, AttrType
from srota.mappers._base import MappingError, Row, SinkMapper, SourceMapper, attribute_mapping
from srota.mappers._options import (
    creation_error,
    mapper_options,
)

_S = (AttrType.STRING,)
_B = (AttrType.BOOL,)
_AVRO_TYPES = {AttrType.STRING: "string", AttrType.INT: "int", AttrType.LONG: "long", AttrType.FLOAT: "float",
               AttrType.DOUBLE: "double", AttrType.BOOL: "boolean", AttrType.OBJECT: "bytes"}
_MAGIC = 0


def _fastavro() -> Any:
    try:
        import fastavro
    except ImportError:
        raise MappingError("the avro mapper needs fastavro: pip install 'srota[avro]'") from None
    return fastavro


class SchemaRegistry:
    """A Confluent-compatible schema registry (``GET /schemas/ids/{id}``, subjects' versions,
    ``POST /subjects/{subject}/versions``), with parsed schemas cached by id."""

    def __init__(self, url: str, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._by_id: dict[int, Any] = {}
        self._lock = threading.Lock()

    def _request(self, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method="POST" if body is not None else "GET",
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json",
                                              "Accept": "application/vnd.schemaregistry.v1+json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as exc:
            raise LookupError(f"schema registry {self.url}{path}: HTTP {exc.code} {exc.read()[:200]!r}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise LookupError(f"schema registry {self.url} unreachable: {exc}") from None

    def by_id(self, schema_id: int) -> Any:
        with self._lock:
            got = self._by_id.get(schema_id)
        if got is None:
            text = self._request(f"/schemas/ids/{schema_id}")["schema"]
            got = _fastavro().parse_schema(json.loads(text))
            with self._lock:
                self._by_id[schema_id] = got
        return got

    def latest(self, subject: str) -> tuple[int, Any]:
        found = self._request(f"/subjects/{subject}/versions/latest")
        return int(found["id"]), json.loads(found["schema"])

    def register(self, subject: str, schema: Any) -> int:
        return int(self._request(f"/subjects/{subject}/versions", {"schema": json.dumps(schema)})["id"])


def stream_schema(stream_id: str, attributes: Sequence[Attribute]) -> dict[str, Any]:
    """The record schema siddhi-map-avro generates for a stream."""
    return {"type": "record", "name": stream_id or "Event", "namespace": "srota",
            "fields": [{"name": a.name, "type": _AVRO_TYPES[a.type]} for a in attributes]}


def _convert(value: Any, attr: Attribute) -> Any:
    t = attr.type
    if value is None:
        return None
    if t is AttrType.STRING:
        if isinstance(value, str):
            return value
    elif t in (AttrType.INT, AttrType.LONG):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif t is AttrType.DOUBLE:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif t is AttrType.FLOAT:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return f32(float(value))
    elif t is AttrType.BOOL:
        if isinstance(value, bool):
            return value
    else:
        return value
    raise MappingError(f"attribute '{attr.name}' is {t.value}, the record has {value!r}", attribute=attr.name)


class AvroSourceMapper(SourceMapper):
    """Avro datum -> rows (see the module docstring)."""

    type_name = "avro"

    def __init__(self, attributes: Sequence[Attribute], schema: Any, registry: SchemaRegistry | None,
                 use_serializer: bool, fail_on_missing: bool, attribute_map: Mapping[str, str] | None) -> None:
        super().__init__(attributes)
        self._schema = schema
        self._registry = registry
        self._framed = use_serializer
        self._fail_on_missing = fail_on_missing
        self._json = None
        if attribute_map:
            from srota.mappers._json import JsonSourceMapper

            self._json = JsonSourceMapper(attributes, attribute_map=attribute_map,
                                          fail_on_missing_attribute=fail_on_missing)

    def _datum(self, payload: Any) -> Any:
        fastavro = _fastavro()
        if not isinstance(payload, bytes | bytearray | memoryview):
            raise MappingError(f"the avro mapper expects bytes, not {type(payload).__name__}", payload=payload)
        data = bytes(payload)
        schema = self._schema
        if self._framed:
            if len(data) < 5 or data[0] != _MAGIC:
                raise MappingError("not in the Confluent Avro wire format (magic byte, schema id, datum)",
                                   payload=payload)
            schema_id = struct.unpack(">I", data[1:5])[0]
            if self._registry is None:
                if schema is None:
                    raise MappingError(f"schema id {schema_id} in the message, and no schema.registry to fetch it")
            else:
                try:
                    schema = self._registry.by_id(schema_id)
                except LookupError as exc:
                    raise MappingError(str(exc), payload=payload) from None
            data = data[5:]
        buf = io.BytesIO(data)
        try:
            datum = fastavro.schemaless_reader(buf, schema, None)
        except Exception as exc:
            raise MappingError(f"not an Avro datum of the schema: {type(exc).__name__}: {exc}",
                               payload=payload) from None
        if buf.tell() != len(data):
            raise MappingError(f"not an Avro datum of the schema ({len(data) - buf.tell()} byte(s) left over)",
                               payload=payload)
        return datum

    def map(self, payload: Any, transport: Mapping[str, Any] | None = None) -> list[Row]:
        datum = self._datum(payload)
        records = datum if isinstance(datum, list) else [datum]
        if self._json is not None:
            import orjson

            try:
                return self._json.map(orjson.dumps(datum, default=lambda v: bytes(v).hex()), transport)
            except MappingError as exc:
                raise MappingError(exc.reason, attribute=exc.attribute, index=exc.index, payload=payload,
                                   rows=exc.rows) from None
        rows: list[Row] = []
        for index, record in enumerate(records):
            if not isinstance(record, dict):
                raise MappingError(f"an Avro {type(record).__name__} is not a record", index=index, payload=payload,
                                   rows=rows)
            values = []
            for a in self.attributes:
                if a.name not in record and self._fail_on_missing:
                    raise MappingError(f"the record has no field '{a.name}'", attribute=a.name, index=index,
                                       payload=payload, rows=rows)
                try:
                    values.append(_convert(record.get(a.name), a))
                except MappingError as exc:
                    raise MappingError(exc.reason, attribute=a.name, index=index, payload=payload,
                                       rows=rows) from None
            rows.append(tuple(values))
        return rows


class AvroSinkMapper(SinkMapper):
    """Rows -> Avro datums, one message per event (see the module docstring)."""

    type_name = "avro"
    produces_bytes = True

    def __init__(self, attributes: Sequence[Attribute], schema: Any, schema_id: int | None) -> None:
        super().__init__(attributes)
        fastavro = _fastavro()
        self._schema = fastavro.parse_schema(schema)
        self._prefix = b"" if schema_id is None else bytes([_MAGIC]) + struct.pack(">I", schema_id)
        names = [f["name"] for f in schema.get("fields", [])] if isinstance(schema, dict) else []
        missing = [a.name for a in attributes if names and a.name not in names]
        if missing:
            raise ValueError(f"the schema has no field for {', '.join(missing)}")
        self._names = [a.name for a in attributes]

    def map(self, rows: Sequence[Sequence[Any]]) -> list[Any]:
        fastavro = _fastavro()
        out = []
        for index, row in enumerate(rows):
            buf = io.BytesIO()
            buf.write(self._prefix)
            try:
                fastavro.schemaless_writer(buf, self._schema, dict(zip(self._names, row, strict=True)))
            except Exception as exc:
                raise MappingError(f"the event does not fit the Avro schema: {exc}", index=index,
                                   payload=list(row)) from None
            out.append(buf.getvalue())
        return out


_SOURCE_PARAMS = (
    Param("schema.def", _S, optional=True, doc="The Avro schema (JSON)."),
    Param("schema.registry", _S, optional=True, doc="A Confluent-compatible schema registry URL."),
    Param("schema.id", _S, optional=True, doc="The schema's id in the registry."),
    Param("use.avro.serializer", _B, optional=True, default=False,
          doc="Messages in the Confluent wire format (KafkaAvroSerializer)."),
    Param("fail.on.missing.attribute", _B, optional=True, default=True,
          doc="A record without a field of the stream fails (else the attribute is null)."),
)
_SINK_PARAMS = (
    Param("schema.def", _S, optional=True, doc="The Avro schema (JSON); default: made from the stream."),
    Param("schema.registry", _S, optional=True, doc="A Confluent-compatible schema registry URL."),
    Param("schema.id", _S, optional=True, doc="The schema's id in the registry."),
    Param("subject", _S, optional=True, doc="The registry subject (its latest version, or where to register)."),
    Param("use.avro.serializer", _B, optional=True, default=False,
          doc="Write the Confluent wire format (for KafkaAvroDeserializer)."),
)


def _schema_def(text: str, where: str, pos: Any) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise creation_error(f"{where}: schema.def is not JSON: {exc}", pos) from None


@extension(Kind.SOURCE_MAPPER, "avro", params=_SOURCE_PARAMS,
           doc="Avro -> events: one binary datum per message (or the Confluent wire format), fields by name "
               "or JSONPath @attributes.")
def _avro_source(attributes: tuple[Attribute, ...], annotation: Annotation | None,
                 stream_id: str = "") -> AvroSourceMapper:
    where, pos, opts = mapper_options("avro", "source", _SOURCE_PARAMS, annotation, stream_id)
    registry = SchemaRegistry(opts["schema.registry"]) if opts["schema.registry"] else None
    schema = None
    try:
        if opts["schema.def"]:
            schema = _fastavro().parse_schema(_schema_def(opts["schema.def"], where, pos))
        elif registry is not None and opts["schema.id"]:
            schema = registry.by_id(int(opts["schema.id"]))
        elif not opts["use.avro.serializer"]:
            raise creation_error(f"{where}: needs schema.def, or schema.registry with schema.id (or "
                                 "use.avro.serializer='true' with schema.registry)", pos)
        elif registry is None:
            raise creation_error(f"{where}: use.avro.serializer='true' needs schema.registry", pos)
    except (LookupError, ValueError, MappingError) as exc:
        raise creation_error(f"{where}: {exc}", pos) from None
    return AvroSourceMapper(attributes, schema, registry, bool(opts["use.avro.serializer"]),
                            bool(opts["fail.on.missing.attribute"]), attribute_mapping(annotation, attributes, where))


@extension(Kind.SINK_MAPPER, "avro", params=_SINK_PARAMS,
           doc="Events -> Avro: one binary datum per event (or the Confluent wire format); the schema from "
               "schema.def, the registry, or the stream.")
def _avro_sink(attributes: tuple[Attribute, ...], annotation: Annotation | None,
               stream_id: str = "") -> AvroSinkMapper:
    where, pos, opts = mapper_options("avro", "sink", _SINK_PARAMS, annotation, stream_id)
    registry = SchemaRegistry(opts["schema.registry"]) if opts["schema.registry"] else None
    schema_id = int(opts["schema.id"]) if opts["schema.id"] else None
    try:
        if opts["schema.def"]:
            schema = _schema_def(opts["schema.def"], where, pos)
        elif registry is not None and schema_id is not None:
            schema = json.loads(registry._request(f"/schemas/ids/{schema_id}")["schema"])
        elif registry is not None and opts["subject"]:
            try:
                schema_id, schema = registry.latest(opts["subject"])
            except LookupError as exc:
                if "HTTP 404" not in str(exc):
                    raise
                schema = stream_schema(stream_id, attributes)  # a new subject: register the stream's
        else:
            schema = stream_schema(stream_id, attributes)
        if opts["use.avro.serializer"] and schema_id is None:
            if registry is None or not opts["subject"]:
                raise creation_error(f"{where}: use.avro.serializer='true' needs schema.id, or schema.registry "
                                     "and subject to register the schema under", pos)
            schema_id = registry.register(opts["subject"], schema)
        return AvroSinkMapper(attributes, schema, schema_id if opts["use.avro.serializer"] else None)
    except (LookupError, ValueError, MappingError) as exc:
        raise creation_error(f"{where}: {exc}", pos) from None
