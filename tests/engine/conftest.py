"""Helpers for engine tests: run an app and collect what a stream or query emits."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from srota.engine import Event, SiddhiManager


class Collector:
    """Collects events of a stream callback or a query callback."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.expired: list[Event] = []
        self.chunks: list[int] = []

    def stream(self, events: list[Event]) -> None:
        self.chunks.append(len(events))
        for e in events:
            (self.expired if e.is_expired else self.events).append(e)

    def query(self, timestamp: int, ins: list[Event] | None, removed: list[Event] | None) -> None:
        self.events.extend(ins or ())
        self.expired.extend(removed or ())

    @property
    def rows(self) -> list[list[Any]]:
        return [list(e.data) for e in self.events]

    @property
    def expired_rows(self) -> list[list[Any]]:
        return [list(e.data) for e in self.expired]


@pytest.fixture
def run_app() -> Iterator[Any]:
    """``run_app(text, stream='Out')`` -> (runtime, collector); runtimes are shut down after."""
    runtimes = []

    def make(text: str, stream: str | None = "Out", query: str | None = None) -> tuple[Any, Collector]:
        runtime = SiddhiManager().create_siddhi_app_runtime(text)
        got = Collector()
        if query is not None:
            runtime.add_query_callback(query, got.query)
        elif stream is not None:
            runtime.add_callback(stream, got.stream)
        runtime.start()
        runtimes.append(runtime)
        return runtime, got

    yield make
    for r in runtimes:
        r.shutdown()
