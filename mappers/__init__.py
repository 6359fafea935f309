"""Mappers: payload bytes <-> rows for one stream schema (DESIGN.md, room ``mappers/``).

Pure and synchronous.  The host builds one mapper per ``@source``/``@sink`` from its nested
``@map`` annotation and calls ``map()``:

* :func:`create_source_mapper` -> :class:`SourceMapper`;
  ``mapper.map(payload, transport_properties) -> list[tuple]``
* :func:`create_sink_mapper` -> :class:`SinkMapper`; ``mapper.map(rows) -> list[payload]``;
  :func:`option_templates` + :func:`map_for_sink` add per-event transport properties for
  dynamic sink options (``topic='{{symbol}}'``).

A payload that does not map raises :class:`MappingError` (and nothing else), so the host can
route the original bytes to the error route.  Built-in mappers (``json``, ``csv``, ``xml``,
``text``, ``keyvalue``, ``binary``, ``passThrough``, ``avro``) register themselves in
:data:`engine.registry.registry` on import.
"""
from __future__ import annotations

# (importing a mapper's module registers it)
from srota.mappers import _avro, _binary, _csv, _json, _keyvalue, _passthrough, _text, _xml  # noqa: F401
from srota.mappers._base import (
    DEFAULT_MAP_TYPE,
    TRP_PREFIX,
    MappingError,
    SinkMapper,
    SourceMapper,
    TimedRow,
    TimedRows,
    create_sink_mapper,
    create_source_mapper,
)
from srota.mappers._binary import BinarySinkMapper, BinarySourceMapper
from srota.mappers._csv import CsvSinkMapper, CsvSourceMapper
from srota.mappers._json import JsonSinkMapper, JsonSourceMapper
from srota.mappers._jsonpath import JsonPathError, parse_path
from srota.mappers._keyvalue import KeyValueSinkMapper, KeyValueSourceMapper
from srota.mappers._passthrough import PassThroughSinkMapper, PassThroughSourceMapper
from srota.mappers._sinkmap import Failures, map_for_sink, map_rows_for_sink
from srota.mappers._template import Template, TemplateError, is_template, option_templates
from srota.mappers._text import TextSinkMapper, TextSourceMapper
from srota.mappers._xml import XmlSinkMapper, XmlSourceMapper

__all__ = [
    "DEFAULT_MAP_TYPE",
    "TRP_PREFIX",
    "BinarySinkMapper",
    "BinarySourceMapper",
    "CsvSinkMapper",
    "CsvSourceMapper",
    "Failures",
    "JsonPathError",
    "JsonSinkMapper",
    "JsonSourceMapper",
    "KeyValueSinkMapper",
    "KeyValueSourceMapper",
    "MappingError",
    "PassThroughSinkMapper",
    "PassThroughSourceMapper",
    "SinkMapper",
    "SourceMapper",
    "Template",
    "TemplateError",
    "TextSinkMapper",
    "TextSourceMapper",
    "TimedRow",
    "TimedRows",
    "XmlSinkMapper",
    "XmlSourceMapper",
    "create_sink_mapper",
    "create_source_mapper",
    "is_template",
    "map_for_sink",
    "map_rows_for_sink",
    "option_templates",
    "parse_path",
]
