"""``log``: a sink that writes each payload to the structured log (Siddhi's ``@sink(type='log')``).

By default each line is the one Siddhi's ``LogSink`` writes (siddhi-core 5.1.33,
``io.siddhi.core.stream.output.sink.LogSink``): ``<prefix> : <payload>``, where the prefix
defaults to ``<app name> : <stream id>`` and the payload is printed as Java prints it:

* a row of the default ``passThrough`` mapping is the ``Event``:
  ``Alerts : AlertStream : Event{timestamp=1767225600000, data=[sensor-01, 41.5], isExpired=false}``
  (values as Java's ``String.valueOf``: ``41.0`` for a double, ``Float.toString`` for a float,
  ``null``);
* a text payload (``@map(type='json')``, ``xml``, ``text`` ...) is written as it is;
* a map (``keyvalue``) as Java's ``Map.toString``: ``{symbol=WSO2, price=55.6}``.

Siddhi writes one line per output chunk (a chunk of several events prints as
``[Event{...}, Event{...}]``); Srota writes one line per event, so every line is one event.

``format='fields'`` writes Srota's own line instead: the prefix (default as above), then the
row as ``name=value`` pairs in the stream's attribute order (``ALERT device=sensor-01
value=41.37``), numbers exact (Python's ``repr``), strings quoted when needed (logfmt style).
"""
from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
import structlog
from srota.connectors._options import creation_error
from srota.connectors.base import Sink
from srota.engine.extensions._checks import java_double_str, java_float_str, java_str
from srota.engine.registry import Kind, Param, extension
from srota.engine.types import f32
from srota.grammar.model import AttrType

_S = (AttrType.STRING,)

# Siddhi's priorities -> structlog methods (TRACE has no structlog level; it logs as debug).
_LEVELS = {"TRACE": "debug", "DEBUG": "debug", "INFO": "info", "WARN": "warning", "WARNING": "warning",
           "ERROR": "error", "FATAL": "critical", "OFF": None}
_FORMATS = ("siddhi", "fields")
# The host names a sink <app>/<stream>/sink<n> (a @distribution destination: .../destination<i>).
_SINK_NAME = re.compile(r"^(?P<app>.+)/(?P<stream>[^/]+)/sink\d+(?:/destination\d+)?$")

_PARAMS = (
    Param("prefix", _S, optional=True, default=None,
          doc="Written before each payload; defaults to '<app name> : <stream id>', as in Siddhi."),
    Param("priority", _S, optional=True, default="INFO",
          doc="TRACE, DEBUG, INFO, WARN, ERROR, FATAL or OFF."),
    Param("format", _S, optional=True, default="siddhi",
          doc="'siddhi': '<prefix> : <payload>' as Siddhi's LogSink writes it (a row as "
              "Event{timestamp=..., data=[...], isExpired=false}); 'fields' (Srota's): "
              "'<prefix> name=value ...', numbers exact."),
)


@extension(Kind.SINK, "log", params=_PARAMS,
           doc="Log each event payload with structlog, in Siddhi's '<app> : <stream> : <payload>' form.")
class LogSink(Sink):
    """Logs each payload (text, a map, or the row as an ``Event``) and its message properties."""

    type_name = "log"
    PARAMS = _PARAMS
    payload_kind = "any"
    wants_timestamps = True  # Siddhi's line prints the event's own timestamp

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "", **kw: Any) -> None:
        super().__init__(options, name=name, **kw)
        priority = str(self.options["priority"]).upper()
        if priority not in _LEVELS:
            raise creation_error(f"log sink '{self.name}': priority must be one of "
                                 f"{', '.join(_LEVELS)}, not {priority!r}", kw.get("pos"))
        fmt = str(self.options["format"]).lower()
        if fmt not in _FORMATS:
            raise creation_error(f"log sink '{self.name}': format must be 'siddhi' or 'fields', not {fmt!r}",
                                 kw.get("pos"))
        self._siddhi = fmt == "siddhi"
        self._method = _LEVELS[priority]
        self._logger = structlog.get_logger("srota.sink.log")
        self._prefix: str = self.options["prefix"] if self.options["prefix"] is not None else _default_prefix(name)
        self._names: tuple[str, ...] | None = None
        self._types: tuple[AttrType, ...] | None = None

    def set_attributes(self, names: Sequence[Any], types: Sequence[AttrType] | None = None) -> None:
        """The stream's attributes (the host calls this): names for ``name=value`` output, and
        types (or :class:`Attribute` objects, which carry both) so that a ``float`` prints as
        Java's ``Float.toString``."""
        if names and all(hasattr(a, "type") and hasattr(a, "name") for a in names):
            types, names = [a.type for a in names], [a.name for a in names]
        self._names = tuple(str(n) for n in names)
        self._types = tuple(types) if types is not None else None

    def render(self, payload: Any, timestamp: int | None = None) -> str:
        """The payload as the line writes it (without the prefix).

        ``timestamp`` is the event's (epoch ms) for a row in Siddhi's format; a row that
        carries its own (a ``TimedRow``) uses that, and without either the time of logging.
        """
        if isinstance(payload, (bytes, bytearray, memoryview)):
            return bytes(payload).decode("utf-8", "replace")
        if isinstance(payload, str):
            return payload
        if self._siddhi:
            return self._siddhi_text(payload, timestamp)
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

    def line(self, payload: Any, timestamp: int | None = None) -> str:
        """The whole log line of one payload: ``<prefix> : <payload>`` (``fields``: ``<prefix> <pairs>``)."""
        return f"{self._prefix}{' : ' if self._siddhi else ' '}{self.render(payload, timestamp)}"

    def _siddhi_text(self, payload: Any, timestamp: int | None) -> str:
        if isinstance(payload, Mapping):  # keyvalue: Java's Map.toString
            return "{" + ", ".join(f"{k}={self._java(v, None)}" for k, v in payload.items()) + "}"
        data = getattr(payload, "data", payload)
        if not isinstance(data, (tuple, list)):
            return java_str(data)
        ts = getattr(payload, "timestamp", None)
        if ts is None:
            ts = timestamp if timestamp is not None else int(time.time() * 1000)
        types = self._types if self._types is not None and len(self._types) == len(data) else None
        values = ", ".join(self._java(v, types[i] if types else None) for i, v in enumerate(data))
        return f"Event{{timestamp={ts}, data=[{values}], isExpired=false}}"

    @staticmethod
    def _java(v: Any, type_: AttrType | None) -> str:
        if type_ is None and isinstance(v, float) and v == v and v not in (float("inf"), float("-inf")) \
                and f32(v) == v:
            # Without the stream's types, a value that is exactly a 32-bit float and shorter
            # as one was a `float` attribute (Srota keeps those rounded to 32 bits): Java
            # prints it with Float.toString (55.6, not 55.599998474121094).
            short = java_float_str(v)
            return short if len(short) < len(java_double_str(v)) else java_double_str(v)
        return java_str(v, type_)

    async def connect(self) -> None:
        """Nothing to connect."""

    async def publish(self, items: Sequence[tuple[Any, Mapping[str, Any]]]) -> None:
        """Log every payload."""
        if self._method is None:
            return
        emit = getattr(self._logger, self._method)
        now: int | None = None
        for payload, props in items:
            ts = None
            if self._siddhi and getattr(payload, "timestamp", None) is None and isinstance(payload, (tuple, list)):
                # (the host hands over rows without their events' times unless it keeps them:
                # the batch's logging time stands in)
                now = now if now is not None else int(time.time() * 1000)
                ts = now
            text = self.line(payload, ts)
            if props:
                emit(text, properties=dict(props))
            else:
                emit(text)

    async def close(self) -> None:
        """Nothing to close."""


def _default_prefix(name: str) -> str:
    """Siddhi's default prefix ``<app name> : <stream id>``, from the host's sink name
    ``<app>/<stream>/sink<n>``; a bare name is used as it is."""
    m = _SINK_NAME.match(name)
    return f"{m.group('app')} : {m.group('stream')}" if m else name


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
