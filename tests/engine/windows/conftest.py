"""Helpers for window tests: build an app, feed timestamped events, collect query output."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from srota.engine import Event, SiddhiManager

STREAM = "define stream S (symbol string, price double, volume int, ts long);"


class Out:
    """What a query callback saw: rows of in/removed events and the chunks."""

    def __init__(self) -> None:
        self.current: list[list[Any]] = []
        self.expired: list[list[Any]] = []
        self.calls: list[tuple[list[list[Any]], list[list[Any]]]] = []

    def __call__(self, ts: int, ins: list[Event] | None, rem: list[Event] | None) -> None:
        i = [list(e.data) for e in ins or ()]
        r = [list(e.data) for e in rem or ()]
        self.current.extend(i)
        self.expired.extend(r)
        self.calls.append((i, r))


@pytest.fixture
def window_app() -> Iterator[Any]:
    """``window_app(window, select='*', out='all', playback=True)`` -> (send, out, runtime)."""
    runtimes = []

    def make(window: str, select: str = "symbol, volume", out: str = "all", playback: bool = True,
             extra: str = "") -> tuple[Any, Out, Any]:
        app = (("@app:playback " if playback else "") + STREAM +
               f"@info(name='q') from S#window.{window} select {select} {extra} insert {out} events into O;")
        rt = SiddhiManager().create_siddhi_app_runtime(app)
        got = Out()
        rt.add_query_callback("q", got)
        rt.start()
        runtimes.append(rt)
        h = rt.get_input_handler("S")

        def send(volume: int, ts: int | None = None, symbol: str = "A", price: float = 1.0,
                 ets: int | None = None) -> None:
            h.send([symbol, price, volume, ets if ets is not None else (ts or 0)], timestamp=ts)

        send.handler = h  # type: ignore[attr-defined]
        return send, got, rt

    yield make
    for r in runtimes:
        r.shutdown()
