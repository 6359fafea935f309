"""``log``: a sink that writes each payload to the structured log (Siddhi's ``@sink(type='log')``).

A row (the default ``passThrough`` mapping) is written as ``name=value`` pairs in the stream's
attribute order: ``ALERT device=sensor-01 kind=overheat value=41.37``.  Numbers are written
exactly as Python's ``repr`` gives them (the shortest text that reads back to the same float),
so nothing is rounded; strings with spaces, quotes or ``=`` are quoted (logfmt style).  Text
payloads (``@map(type='json')`` ...) are written as they are.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson
import structlog
from srota.connectors._options import creation_error
from srota.connectors.base import Sink
from srota.engine.registry import Kind, Param, extension
from srota.grammar.model import AttrType

_S = (AttrType.STRING,)

# Siddhi's priorities -> structlog methods (TRACE has no structlog level; it logs as debug).
_LEVELS = {"TRACE": "debug", "DEBUG": "debug", "INFO": "info", "WARN": "warning", "WARNING": "warning",
           "ERROR": "error", "FATAL": "critical", "OFF": None}

_PARAMS = (
    Param("prefix", _S, optional=True, default=None,
          doc="The log message; defaults to the sink's name (the stream id)."),
    Param("priority", _S, optional=True, default="INFO",
          doc="TRACE, DEBUG, INFO, WARN, ERROR, FATAL or OFF."),
)


@extension(Kind.SINK, "log", params=_PARAMS, doc="Log each event payload with structlog.")
class LogSink(Sink):
    """Logs ``payload`` (text, or the row as given) and the message properties."""

    type_name = "log"
    PARAMS = _PARAMS
    payload_kind = "any"

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "", **kw: Any) -> None:
        super().__init__(options, name=name, **kw)
        priority = str(self.options["priority"]).upper()
        if priority not in _LEVELS:
            raise creation_error(f"log sink '{self.name}': priority must be one of "
                                 f"{', '.join(_LEVELS)}, not {priority!r}", kw.get("pos"))
        self._method = _LEVELS[priority]
        self._logger = structlog.get_logger("srota.sink.log")
        self._message = self.options["prefix"] or self.name
        self._names: tuple[str, ...] | None = None

    def set_attributes(self, names: Sequence[str]) -> None:
        """The attribute names of the stream (the host calls this), for ``name=value`` output."""
        self._names = tuple(names)

    def render(self, payload: Any) -> str:
        """``name=value`` pairs for a row, the text itself for a text payload."""
        if isinstance(payload, (bytes, bytearray, memoryview)):
            return bytes(payload).decode("utf-8", "replace")
        if isinstance(payload, str):
            return payload
        data = getattr(payload, "data", payload)
        if isinstance(data, Mapping):
            pairs = list(data.items())
        elif isinstance(data, (tuple, list)):
            names = self._names if self._names and len(self._names) == len(data) else \
                tuple(f"_{i}" for i in range(len(data)))
            pairs = list(zip(names, data, strict=True))
        else:
            return _value(data)
        return " ".join(f"{k}={_value(v)}" for k, v in pairs)

    async def connect(self) -> None:
        """Nothing to connect."""

    async def publish(self, items: Sequence[tuple[Any, Mapping[str, Any]]]) -> None:
        """Log every payload."""
        if self._method is None:
            return
        emit = getattr(self._logger, self._method)
        for payload, props in items:
            text = f"{self._message} {self.render(payload)}"
            if props:
                emit(text, properties=dict(props))
            else:
                emit(text)

    async def close(self) -> None:
        """Nothing to close."""


def _value(v: Any) -> str:
    """One value in logfmt style: exact numbers, ``null``, strings quoted when they need it."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    text = v if isinstance(v, str) else str(v)
    if text == "" or any(c in text for c in ' "=\t\n'):
        return orjson.dumps(text).decode()
    return text
