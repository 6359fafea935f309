"""structlog set-up: JSON in production, console in development, secrets never logged.

The engine logs through the standard library (``srota.engine``, ``srota.log``); those records
go through the same structlog processors, so every line has one format.
"""
from __future__ import annotations

import logging
import re
import sys
from typing import Any

import structlog

_SECRET_KEY = re.compile(r"(pass(word)?|secret|token|sasl\.jaas|credential|api[._-]?key)", re.I)
REDACTED = "***"


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


def _identity(logger: Any, method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    return event_dict
