"""Tests here run the CLI in-process, which configures logging for the whole process: undo it
after each test, so that later tests (``structlog.testing.capture_logs`` elsewhere) see a fresh
configuration rather than loggers cached under this one."""
from __future__ import annotations

import logging

import pytest
import structlog


@pytest.fixture(autouse=True)
def _fresh_logging():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    structlog.reset_defaults()
    for h in list(root.handlers):
        if h not in handlers:
            root.removeHandler(h)
    for h in handlers:
        if h not in root.handlers:
            root.addHandler(h)
    root.setLevel(level)
