"""Logging: engine records keep their context fields; secrets are redacted."""
from __future__ import annotations

import json
import logging

import structlog
from srota.service.logs import configure_logging, redact


def test_engine_records_keep_context_and_secrets_are_redacted(capsys):
    configure_logging("json", "info")
    logging.getLogger("srota.engine").error("query failed", extra={"app": "A", "stream": "S",
                                                                   "sasl.password": "p"})
    structlog.get_logger("srota.service").info("connected", app="A", token="t0k", url="tcp://h:1")
    lines = [json.loads(x) for x in capsys.readouterr().err.strip().splitlines()]
    assert lines[0]["app"] == "A" and lines[0]["stream"] == "S" and lines[0]["sasl.password"] == "***"
    assert lines[1]["token"] == "***" and lines[1]["url"] == "tcp://h:1"


def test_redact_keeps_ordinary_options():
    assert redact({"password": "x", "bootstrap.servers": "h:9092", "ssl.password": ""}) == \
        {"password": "***", "bootstrap.servers": "h:9092", "ssl.password": ""}
