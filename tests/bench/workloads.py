"""The workloads W1..W4 and X1/X1c: their SiddhiQL, the hand-written Python loop, and the output check.

X1 is a projection calling three extension functions per event (``math:round``,
``math:abs``, ``unitconversion:kmTom``); X1c is the same projection with core arithmetic
in their place, so the two rows show what an extension call costs beside an inline operator.

The hand-written loop is the ceiling for pure Python: the least work a Python program can
do for the same result, with no framework.  Every system's outputs are brought to one
canonical form (:func:`canonical`) and compared by :func:`digest`.

Pure Python without imports from the project: the peers' environment imports it too.
"""
from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Sequence
from math import floor
from typing import Any

from tests.bench.data import START_TS, Row

STREAM = "define stream Trades (symbol string, price double, volume long, ts long);\n"

#: SiddhiQL of each workload; every app inserts into ``Out``.
APPS: dict[str, str] = {
    "W1": STREAM + """
@info(name='w1') from Trades[price >= 100 and volume > 10]
select symbol, price * volume as value insert into Out;
""",
    "W2": STREAM + """
@info(name='w2') from Trades#window.externalTimeBatch(ts, 1 sec)
select symbol, count() as n, sum(volume) as vol, avg(price) as ap
group by symbol insert into Out;
""",
    "W3": STREAM + """
partition with (symbol of Trades) begin
  @info(name='w3') from Trades#window.length(100)
  select symbol, avg(price) as ap insert into Out;
end;
""",
    "X1": STREAM + """
@info(name='x1') from Trades
select symbol, math:round(price) as r, math:abs(price - 100.0) as a, unitconversion:kmTom(price) as m
insert into Out;
""",
    "X1c": STREAM + """
@info(name='x1c') from Trades
select symbol, price + 0.5 as r, price - 100.0 as a, price * 1000.0 as m
insert into Out;
""",
    "W4": "@app:playback\n" + STREAM + """
@info(name='w4')
from every e1=Trades[price > 190] -> e2=Trades[symbol == e1.symbol and price < e1.price * 0.3] within 10 sec
select e1.symbol as symbol, e1.price as high, e2.price as low insert into Out;
""",
}

TITLES = {
    "W1": "filter and projection",
    "W2": "1 s event-time tumbling window per symbol",
    "W3": "sliding last 100 events per symbol",
    "W4": "pattern e1 -> e2 within 10 s",
    "W5": "Kafka JSON -> W2 -> Kafka JSON",
    "X1": "projection with 3 extension functions",
    "X1c": "the same projection with core arithmetic",
}


# ---------------------------------------------------------------------------- the loops
def loop_w1(data: Sequence[Row]) -> list[Any]:
    out = []
    append = out.append
    for symbol, price, volume, _ts in data:
        if price >= 100 and volume > 10:
            append((symbol, price * volume))
    return out


def loop_w2(data: Sequence[Row]) -> list[Any]:
    """Tumbling 1 s windows from the first event; a window closes when a later event arrives."""
    out = []
    groups: dict[str, list[Any]] = {}
    end = -1
    start = 0
    for symbol, price, volume, ts in data:
        if ts >= end:
            if end >= 0:
                w = (start - START_TS) // 1000
                out.extend((w, s, g[0], g[1], g[2] / g[0]) for s, g in groups.items())
                groups = {}
                start = ts - (ts - start) % 1000
            else:
                start = ts
            end = start + 1000
        g = groups.get(symbol)
        if g is None:
            groups[symbol] = [1, volume, price]
        else:
            g[0] += 1
            g[1] += volume
            g[2] += price
    return out


def loop_w3(data: Sequence[Row]) -> list[Any]:
    """The average price of the last 100 events of the event's symbol, for every event."""
    out = []
    append = out.append
    windows: dict[str, Any] = {}
    for symbol, price, _volume, _ts in data:
        w = windows.get(symbol)
        if w is None:
            w = windows[symbol] = [deque(), 0.0]
        q = w[0]
        total = w[1]
        if len(q) == 100:
            total -= q.popleft()  # the oldest leaves before the new one counts (as Siddhi)
        q.append(price)
        total += price
        w[1] = total
        append((symbol, total / len(q)))
    return out


def loop_w4(data: Sequence[Row]) -> list[Any]:
    """``every e1[price > 190] -> e2[same symbol, price < e1.price * 0.3] within 10 sec``."""
    out = []
    pending: dict[str, list[tuple[int, float]]] = {}
    for symbol, price, _volume, ts in data:
        waiting = pending.get(symbol)
        if waiting:
            keep = []
            for t1, p1 in waiting:
                if ts - t1 > 10_000:
                    continue  # expired
                if price < p1 * 0.3:
                    out.append((symbol, p1, price))
                else:
                    keep.append((t1, p1))
            pending[symbol] = keep
        if price > 190:
            if waiting is None:
                pending[symbol] = [(ts, price)]
            else:
                pending[symbol].append((ts, price))
    return out


def loop_x1(data: Sequence[Row]) -> list[Any]:
    """math:round (halves up), math:abs, unitconversion:kmTom, by hand."""
    out = []
    append = out.append
    for symbol, price, _volume, _ts in data:
        append((symbol, floor(price + 0.5), abs(price - 100.0), price * 1000.0))
    return out


def loop_x1c(data: Sequence[Row]) -> list[Any]:
    out = []
    append = out.append
    for symbol, price, _volume, _ts in data:
        append((symbol, price + 0.5, price - 100.0, price * 1000.0))
    return out


LOOPS: dict[str, Callable[[Sequence[Row]], list[Any]]] = {
    "W1": loop_w1, "W2": loop_w2, "W3": loop_w3, "W4": loop_w4, "X1": loop_x1, "X1c": loop_x1c,
}


# ---------------------------------------------------------------------------- checking
def canonical(workload: str, outputs: list[Any], n_events: int) -> list[Any]:
    """Outputs in one form for every system.

    W1: ``(symbol, value)``; W2: ``(window, symbol, count, volume, avg)`` sorted, closed
    windows only (a window closes when a later event arrives; some systems also flush the
    last one at the end of input); W3: ``(symbol, avg)``; W4: ``(symbol, high, low)``.
    Floats are rounded to 6 decimals.  All compare as multisets (sorted): keyed and parallel peers
    emit outputs in another order (Srota's order is checked by the engine's own tests).
    """
    if workload == "W1":
        return sorted((s, round(v, 6)) for s, v in outputs)
    if workload == "W2":
        last = (n_events - 1) // 1000
        return sorted((w, s, n, v, round(a, 6)) for w, s, n, v, a in outputs if w < last)
    if workload == "W3":
        return sorted((s, round(a, 6)) for s, a in outputs)
    if workload in ("X1", "X1c"):
        return sorted((s, round(r, 6), round(a, 6), round(m, 6)) for s, r, a, m in outputs)
    return sorted((s, h, low) for s, h, low in outputs)


def digest(rows: list[Any]) -> str:
    """A short fingerprint of canonical outputs."""
    h = hashlib.sha1()
    for r in rows:
        h.update(repr(r).encode())
    return h.hexdigest()[:12]


def chunked_subset(workload: str, canon: list[Any], data: Sequence[Row], chunk: int) -> list[Any]:
    """What Siddhi emits when events arrive in chunks, given the every-event outputs in order.

    Only W3 differs: a partition hands each run of consecutive same-symbol events of a chunk
    to the key's query as one chunk, and an aggregating selector emits the last event of a
    chunk (Siddhi's batch semantics).  So the outputs are those of each run's last event.
    """
    if workload != "W3":
        return canon
    n = len(data)
    return sorted(canon[i] for i in range(n)
                  if (i + 1) % chunk == 0 or i + 1 == n or data[i + 1][0] != data[i][0])
