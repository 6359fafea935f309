"""structlog set-up: JSON in production, console in development, secrets never logged.

The engine logs through the standard library (``srota.engine``, ``srota.log``); those records
go through the same structlog processors, so every line has one format.
"""
from __future__ import annotations

import logging
import re
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

_SECRET_KEY = re.compile(r"(pass(word)?|secret|token|sasl\.jaas|credential|api[._-]?key)", re.I)
REDACTED = "***"
_format = "console"  # what configure_logging chose: the banner is plain text on a console


def redact(mapping: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``mapping`` whose secret-looking values are replaced by ``***``."""
    return {k: (REDACTED if _SECRET_KEY.search(str(k)) and v not in (None, "") else v)
            for k, v in mapping.items()}


def _redact_processor(logger: Any, method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    for key, value in list(event_dict.items()):
        if isinstance(value, dict):
            event_dict[key] = redact(value)
        elif _SECRET_KEY.search(key) and value not in (None, ""):
            event_dict[key] = REDACTED
    return event_dict


def configure_logging(fmt: str = "console", level: str = "info") -> None:
    """Route structlog and standard logging to stderr in ``fmt`` (console or json)."""
    global _format
    _format = fmt
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.stdlib.ExtraAdder(),  # the engine's stdlib records carry app/stream/query in `extra`
        _redact_processor,
    ]
    renderer: Any = (structlog.processors.JSONRenderer() if fmt == "json"
                     else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()))
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.processors.format_exc_info if fmt == "json" else _identity,
                    renderer],
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for noisy in ("aiokafka", "kafka", "aiohttp.access", "py4j"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))


def _identity(logger: Any, method: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    return event_dict


def _target(connector: Any) -> str:
    """What a source or sink reads or writes (a topic, a file), never a secret."""
    options = getattr(connector, "options", None) or {}
    for key in ("topic.list", "topic", "file.uri", "dir.uri"):
        value = options.get(key)
        if value:
            return f" {value}"
    return ""


def banner_lines(host: Any) -> list[str]:
    """The start-up banner: version, apps with their sources and sinks, admin URL, persistence."""
    from srota.service.admin import version_info

    info = version_info()
    lines = [f"srota {info['version']} ({info['implementation']} {info['python']}) started"]
    for app in host.apps.values():
        lines.append(f"  app {app.name}" + (f" ({app.path})" if app.path else ""))
        for b in app.sources:
            lines.append(f"    source {b.stream_id} <- {b.transport}{_target(b.source)}")
        for b in app.sinks:
            lines.append(f"    sink   {b.stream_id} -> {b.transport}{_target(b.sink)}")
    admin = getattr(host, "admin", None)
    lines.append(f"  admin        {admin.url} (/health /ready /metrics /apps /version)" if admin is not None
                 else "  admin        off")
    persistence = host.config.persistence
    lines.append(f"  persistence  on ({persistence.database}, every {persistence.interval_ms} ms)"
                 if persistence.enabled else "  persistence  off")
    return lines


def log_banner(host: Any) -> None:
    """Print the banner to stderr (console format), or log it as one record (json format)."""
    lines = banner_lines(host)
    if _format == "console":
        print("\n".join(lines), file=sys.stderr, flush=True)
        return
    from srota.service.admin import version_info

    admin = getattr(host, "admin", None)
    structlog.get_logger("srota.service").info(
        "started", version=version_info()["version"], admin=admin.url if admin is not None else None,
        persistence=host.config.persistence.enabled,
        apps=[{"name": a.name, "sources": [f"{b.stream_id}<-{b.transport}" for b in a.sources],
               "sinks": [f"{b.stream_id}->{b.transport}" for b in a.sinks]} for a in host.apps.values()])
