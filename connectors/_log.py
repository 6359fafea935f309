"""``log``: a sink that writes each payload to the structured log (Siddhi's ``@sink(type='log')``)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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

    async def connect(self) -> None:
        """Nothing to connect."""

    async def publish(self, items: Sequence[tuple[Any, Mapping[str, Any]]]) -> None:
        """Log every payload."""
        if self._method is None:
            return
        emit = getattr(self._logger, self._method)
        for payload, props in items:
            if isinstance(payload, (bytes, bytearray, memoryview)):
                payload = bytes(payload).decode("utf-8", "replace")
            if props:
                emit(self._message, payload=payload, properties=dict(props))
            else:
                emit(self._message, payload=payload)

    async def close(self) -> None:
        """Nothing to close."""
