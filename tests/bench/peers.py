"""The workloads on the Python peers, in the benchmark environment (``scripts/bench-env.sh``).

* **Bytewax** 0.21: W1..W4, input batches of 1000 (``TestingSource(batch_size=1000)``),
  keyed state with ``stateful_map``/``stateful_flat_map`` and ``fold_window`` with an
  event-time clock and a tumbling windower.
* **Quix Streams** 3: W1 only, by calling the composed ``StreamingDataFrame`` directly
  (what its ``Application`` runs per message).  Its windows and state live in RocksDB
  stores bound to Kafka partitions and transactions: they do not run without a broker,
  so W2..W4 would measure Kafka (W5 does that for us).
* **Pathway**: W1 and W2 through ``pw.io.python.read`` (a streaming input fed from Python)
  and ``pw.io.subscribe``; W3 (a count-based window per key) and W4 (a pattern) have no
  Pathway operator.

Each function returns the outputs as lists of plain tuples in the form of
:func:`tests.bench.workloads.canonical`.  Only the run is timed, as for Srota.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from tests.bench.data import START_TS, Row, rows
from tests.bench.harness import Result, measure
from tests.bench.workloads import canonical, digest

BATCH = 1000


# ---------------------------------------------------------------------------- bytewax
def _bytewax(workload: str, data: Sequence[Row], batch: int) -> Callable[[], list[Any]]:
    from datetime import UTC, datetime, timedelta

    import bytewax.operators as op
    import bytewax.operators.windowing as win
    from bytewax.dataflow import Dataflow
    from bytewax.outputs import DynamicSink, StatelessSinkPartition
    from bytewax.testing import TestingSource, run_main

    out: list[Any] = []

    class _Part(StatelessSinkPartition):
        def write_batch(self, items: list[Any]) -> None:
            out.extend(items)

    class _Sink(DynamicSink):
        def build(self, step_id: str, worker_index: int, worker_count: int) -> _Part:
            return _Part()

    flow = Dataflow(f"bench_{workload}")
    inp = op.input("in", flow, TestingSource(data, batch_size=batch))
    if workload == "W1":
        kept = op.filter("filter", inp, lambda r: r[1] >= 100 and r[2] > 10)
        result = op.map("project", kept, lambda r: (r[0], r[1] * r[2]))
    elif workload == "W2":
        epoch = datetime.fromtimestamp(START_TS / 1000, tz=UTC)
        keyed = op.key_on("key", inp, lambda r: r[0])
        clock = win.EventClock(lambda r: epoch + timedelta(milliseconds=r[3] - START_TS),
                               wait_for_system_duration=timedelta(seconds=10))
        windower = win.TumblingWindower(length=timedelta(seconds=1), align_to=epoch)

        def fold(acc: list[Any], r: Row) -> list[Any]:
            acc[0] += 1
            acc[1] += r[2]
            acc[2] += r[1]
            return acc

        def merge(a: list[Any], b: list[Any]) -> list[Any]:
            return [a[0] + b[0], a[1] + b[1], a[2] + b[2]]

        windows = win.fold_window("window", keyed, clock, windower, lambda: [0, 0, 0.0], fold, merge)
        result = op.map("project", windows.down,
                        lambda kv: (kv[1][0], kv[0], kv[1][1][0], kv[1][1][1], kv[1][1][2] / kv[1][1][0]))
    elif workload == "W3":
        keyed = op.key_on("key", inp, lambda r: r[0])

        def slide(state: Any, r: Row) -> tuple[Any, float]:
            if state is None:
                state = [deque(), 0.0]
            q = state[0]
            total = state[1]
            if len(q) == 100:
                total -= q.popleft()
            q.append(r[1])
            total += r[1]
            state[1] = total
            return state, total / len(q)

        result = op.map("project", op.stateful_map("slide", keyed, slide), lambda kv: kv)
    elif workload == "W4":
        keyed = op.key_on("key", inp, lambda r: r[0])

        def match(pending: Any, r: Row) -> tuple[Any, list[Any]]:
            symbol, price, _volume, ts = r
            found = []
            keep = []
            for t1, p1 in pending or ():
                if ts - t1 > 10_000:
                    continue
                if price < p1 * 0.3:
                    found.append((symbol, p1, price))
                else:
                    keep.append((t1, p1))
            if price > 190:
                keep.append((ts, price))
            return keep, found

        result = op.map("project", op.stateful_flat_map("match", keyed, match), lambda kv: kv[1])
    else:
        raise ValueError(workload)
    op.output("out", result, _Sink())

    def run() -> list[Any]:
        run_main(flow)
        return out

    return run


# ---------------------------------------------------------------------------- quix streams
def _quixstreams(workload: str, data: Sequence[Row], batch: int) -> Callable[[], list[Any]]:
    if workload != "W1":
        raise _Excluded("windows and state need a Kafka broker (see the module doc)")
    from types import SimpleNamespace

    from quixstreams.dataframe import StreamingDataFrame
    from quixstreams.dataframe.registry import DataFrameRegistry
    from quixstreams.models import Topic

    # What Application.dataframe() builds, minus the broker it would ask for topic metadata.
    topic = Topic("trades", value_deserializer="json")
    registry = DataFrameRegistry()
    sdf = StreamingDataFrame(topic, topic_manager=None, registry=registry,  # type: ignore[arg-type]
                             processing_context=SimpleNamespace(producer=None), stream_id="trades")
    registry.register_root(sdf)
    sdf = sdf.filter(lambda r: r["price"] >= 100 and r["volume"] > 10)
    sdf = sdf.apply(lambda r: (r["symbol"], r["price"] * r["volume"]))
    out: list[Any] = []
    execute = sdf.compose(sink=lambda value, key, ts, headers: out.append(value))[topic.name]
    # Quix Streams hands values as dicts (what its JSON deserializer produces).
    values = [{"symbol": s, "price": p, "volume": v, "ts": t} for s, p, v, t in data]

    def run() -> list[Any]:
        for v in values:
            execute(v, b"key", v["ts"], None)
        return out

    return run


# ---------------------------------------------------------------------------- pathway
def _pathway(workload: str, data: Sequence[Row], batch: int) -> Callable[[], list[Any]]:
    if workload not in ("W1", "W2"):
        raise _Excluded("no Pathway operator for a count-based window per key or a pattern")
    import pathway as pw

    class Trades(pw.Schema):
        symbol: str
        price: float
        volume: int
        ts: int

    class Feed(pw.io.python.ConnectorSubject):
        def run(self) -> None:
            nxt = self.next
            for s, p, v, t in data:
                nxt(symbol=s, price=p, volume=v, ts=t)

    t = pw.io.python.read(Feed(), schema=Trades, autocommit_duration_ms=100)
    out: list[Any] = []
    if workload == "W1":
        kept = t.filter((t.price >= 100) & (t.volume > 10))
        res = kept.select(kept.symbol, value=kept.price * kept.volume)

        def on_change(key: Any, row: dict[str, Any], time: int, is_addition: bool) -> None:
            if is_addition:
                out.append((row["symbol"], row["value"]))
    else:
        res = t.windowby(t.ts, window=pw.temporal.tumbling(duration=1000, origin=START_TS),
                         instance=t.symbol).reduce(
            w=pw.this._pw_window_start, symbol=pw.this._pw_instance, n=pw.reducers.count(),
            vol=pw.reducers.sum(pw.this.volume), ap=pw.reducers.avg(pw.this.price))
        final: dict[Any, Any] = {}

        def on_change(key: Any, row: dict[str, Any], time: int, is_addition: bool) -> None:
            if is_addition:
                final[key] = ((row["w"] - START_TS) // 1000, row["symbol"], row["n"], row["vol"], row["ap"])
            else:
                final.pop(key, None)

    pw.io.subscribe(res, on_change=on_change)

    def run() -> list[Any]:
        pw.run(monitoring_level=pw.MonitoringLevel.NONE)
        if workload == "W2":
            out.extend(final.values())
        return out

    return run


class _Excluded(Exception):
    """The peer cannot express the workload (the message says why)."""


PEERS = {"bytewax": _bytewax, "quixstreams": _quixstreams, "pathway": _pathway}


def run_peer(system: str, workload: str, n: int, batch: int = BATCH) -> Result:
    """Measure one peer on one workload (``note`` says why when it cannot run it)."""
    data = rows(n)
    try:
        run = PEERS[system](workload, data, batch)
    except _Excluded as exc:
        return Result(workload, system, n, 0.0, 0.0, 0, note=str(exc))
    out, seconds, peak = measure(run)
    canon = canonical(workload, out, n)
    return Result(workload, system, n, seconds, peak, len(out), digest(canon))
