"""Fixtures of the extension namespaces' tests: one projection over one event."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture
def select_all(run_app: Any, request: pytest.FixtureRequest) -> Callable[..., list[list[Any]]]:
    """``select_all(select, row, stream=<the module's STREAM>)``: the rows that
    ``from S select <select> insert into Out`` emits for the one event ``row``."""
    def run(select: str, row: list[Any], stream: str | None = None) -> list[list[Any]]:
        text = stream if stream is not None else request.module.STREAM
        runtime, got = run_app(text + f"\nfrom S select {select} insert into Out;")
        runtime.get_input_handler("S").send(row)
        return got.rows

    return run


@pytest.fixture
def select_one(select_all: Callable[..., list[list[Any]]]) -> Callable[..., list[Any]]:
    """Like ``select_all``, but the one output row (``[]`` when the event was dropped)."""
    def run(select: str, row: list[Any], stream: str | None = None) -> list[Any]:
        rows = select_all(select, row, stream)
        return rows[0] if rows else []

    return run
