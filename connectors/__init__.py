"""Connectors: async transports that move opaque payloads (DESIGN.md, room ``connectors/``).

Built-ins register themselves in :data:`engine.registry.registry` on import: sources and
sinks ``kafka``, ``mqtt``, ``http``, ``inMemory``, ``file``, the ``fileeventlistener`` source and the ``log`` sink.  The host builds them
with :func:`create_source` / :func:`create_sink` from a stream's ``@source``/``@sink``
options and drives them through the :class:`Source` / :class:`Sink` interfaces; see
:mod:`connectors.base` for delivery, acknowledgement and back-pressure.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from srota.connectors import _file, _file_listener, _http, _inmemory, _kafka, _log, _mqtt  # noqa: F401  (import registers the built-ins)
from srota.connectors._file import FileAck, FileSink, FileSource
from srota.connectors._http import HttpSink, HttpSource
from srota.connectors._inmemory import InMemoryBroker, InMemorySink, InMemorySource, broker
from srota.connectors._kafka import KafkaAck, KafkaSink, KafkaSource
from srota.connectors._log import LogSink
from srota.connectors._mqtt import MqttSink, MqttSource
from srota.connectors._options import creation_error
from srota.connectors.base import (
    HOST_OPTIONS,
    AckToken,
    Backoff,
    ConnectionUnavailableError,
    ConnectorError,
    Message,
    OnMessages,
    PublishError,
    Sink,
    Source,
)
from srota.engine.registry import Kind, registry
from srota.grammar.model import Pos


def _create(kind: Kind, type_name: str, options: Mapping[str, Any] | None, name: str, pos: Pos | None) -> Any:
    namespace, _, short = type_name.rpartition(":")
    ext = registry.get(kind, namespace, short)
    if ext is None:
        known = ", ".join(e.qualified_name for e in registry.all(kind))
        raise creation_error(f"no {kind.value} called '{type_name}' (known: {known})", pos)
    return ext.factory(options or {}, name=name, pos=pos)


def create_source(type_name: str, options: Mapping[str, Any] | None = None, *, name: str = "",
                  pos: Pos | None = None) -> Source:
    """The source registered as ``type_name`` (``kafka``, ``mqtt`` ...), configured with ``options``.

    ``options`` are the ``@source`` elements (``type`` and ``on.error`` are ignored) as strings
    or native values; ``name`` labels logs (use the stream id); ``pos`` locates errors.
    Invalid options raise ``grammar.errors.SiddhiAppCreationError``.
    """
    return _create(Kind.SOURCE, type_name, options, name, pos)


def create_sink(type_name: str, options: Mapping[str, Any] | None = None, *, name: str = "",
                pos: Pos | None = None) -> Sink:
    """The sink registered as ``type_name``, configured with ``options`` (see :func:`create_source`)."""
    return _create(Kind.SINK, type_name, options, name, pos)


def dynamic_options(type_name: str) -> tuple[str, ...]:
    """Names of the sink options of ``type_name`` that may be ``{{attribute}}`` templates."""
    namespace, _, short = type_name.rpartition(":")
    ext = registry.get(Kind.SINK, namespace, short)
    return tuple(p.name for p in ext.params if p.dynamic) if ext is not None else ()


__all__ = [
    "HOST_OPTIONS",
    "AckToken",
    "Backoff",
    "ConnectionUnavailableError",
    "ConnectorError",
    "FileAck",
    "FileSink",
    "FileSource",
    "HttpSink",
    "HttpSource",
    "InMemoryBroker",
    "InMemorySink",
    "InMemorySource",
    "KafkaAck",
    "KafkaSink",
    "KafkaSource",
    "LogSink",
    "Message",
    "MqttSink",
    "MqttSource",
    "OnMessages",
    "PublishError",
    "Sink",
    "Source",
    "broker",
    "create_sink",
    "create_source",
    "dynamic_options",
]
