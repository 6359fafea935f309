"""Statistics of a running app, as Siddhi's ``@app:statistics``.

``@app:statistics(reporter='console'|'log'|'prometheus', interval='60 sec', include='q1,S*')``
(or ``runtime.set_statistics_level('basic'|'detail'|'off')`` at any time, Siddhi's
``setStatisticsLevel``) turns them on.  What is kept:

* per stream: events in (the junction's counter, kept always) and throughput since the last
  report;
* per query: events in and out, and the processing latency of each chunk entering it
  (``basic``: p50/p99 per chunk and per event over the last 1024 timed chunks, one chunk in 8
  timed; ``detail`` times every chunk and also keeps the maximum and the time spent in total);
* per ``@Async`` stream: events buffered; per in-memory table: rows; per database table: the
  latency of its round trips; per aggregation: rows queued for its store and its write
  latency; per query: the events its state holds (windows, partial matches), the cheap
  measure of its memory.

Off, the hot paths test one attribute (``ctx.inspector``) per chunk; on, each chunk entering
a query is timed with two ``perf_counter`` calls.  A ``console`` or ``log`` reporter prints a
report every ``interval``; ``prometheus`` leaves it to the service's ``/metrics``.
"""
from __future__ import annotations

import fnmatch
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from srota.engine.event import Event

_log = logging.getLogger("srota.statistics")

LEVELS = ("off", "basic", "detail")
REPORTERS = ("console", "log", "prometheus")
_WINDOW = 1024  # chunk latencies kept per query
#: ``basic`` times one chunk in SAMPLE (a chunk of one event costs about as much as the timing)
SAMPLE = 8


class _QueryStats:
    __slots__ = ("events_in", "chunks", "latencies", "per_event", "max_s", "total_s")

    def __init__(self) -> None:
        self.events_in = 0
        self.chunks = 0
        self.latencies: deque[float] = deque(maxlen=_WINDOW)
        self.per_event: deque[float] = deque(maxlen=_WINDOW)
        self.max_s = 0.0
        self.total_s = 0.0


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


class StatisticsManager:
    """Counters and latencies of one app (see the module docstring)."""

    def __init__(self, runtime: Any, level: str = "basic", reporter: str = "prometheus",
                 interval_ms: int = 60_000, include: tuple[str, ...] = ("*",)) -> None:
        if level not in LEVELS[1:]:
            raise ValueError(f"statistics level must be one of {', '.join(LEVELS)}, not '{level}'")
        if reporter not in REPORTERS:
            raise ValueError(f"statistics reporter must be one of {', '.join(REPORTERS)}, not '{reporter}'")
        self._runtime = runtime
        self.level = level
        self.reporter = reporter
        self.interval_ms = interval_ms
        self.include = include
        self._queries: dict[str, _QueryStats] = {}
        self._lock = threading.Lock()
        self._last = (time.monotonic(), self._stream_counts())
        self._last_queries: dict[str, int] = {}
        self._timer: threading.Timer | None = None
        self.printer: Callable[[str], None] = print

    def _included(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.include)

    def time_query(self, query_name: str, receiver: Callable[[list[Event]], None], chunk: list[Event]) -> None:
        """Run ``receiver(chunk)`` (a query's entry), counting it and timing one chunk in
        ``SAMPLE`` (``detail``: every chunk): the latencies are a sample, the counts exact."""
        stats = self._queries.get(query_name)
        if stats is None:
            stats = self._queries.setdefault(query_name, _QueryStats())
        n = len(chunk)
        stats.events_in += n
        stats.chunks += 1
        if stats.chunks % SAMPLE and self.level != "detail":
            receiver(chunk)
            return
        t0 = time.perf_counter()
        try:
            receiver(chunk)
        finally:
            elapsed = time.perf_counter() - t0
            stats.latencies.append(elapsed)
            stats.per_event.append(elapsed / n if n else elapsed)
            if self.level == "detail":
                stats.total_s += elapsed
                if elapsed > stats.max_s:
                    stats.max_s = elapsed

    def _stream_counts(self) -> dict[str, int]:
        ctx = self._runtime.context
        return {sid: j.events_in for sid, j in list(ctx.junctions.items()) if not str(sid).startswith("!")}

    def report(self) -> dict[str, Any]:
        """A plain-data report: streams, queries, async buffers, tables, aggregations."""
        ctx = self._runtime.context
        now = time.monotonic()
        counts = self._stream_counts()
        then, before = self._last
        self._last = (now, counts)
        span = max(now - then, 1e-9)
        streams = {sid: {"events_in": n, "throughput": round((n - before.get(sid, 0)) / span, 2)}
                   for sid, n in counts.items() if self._included(str(sid))}
        queries: dict[str, Any] = {}
        for name, runtime_query in list(self._runtime.queries.items()):
            if not self._included(name):
                continue
            s = self._queries.get(name) or _QueryStats()
            lat, per = list(s.latencies), list(s.per_event)
            before_q = self._last_queries.get(name, 0)
            self._last_queries[name] = s.events_in
            entry: dict[str, Any] = {"events_in": s.events_in,
                                     "throughput": round((s.events_in - before_q) / span, 2), "events_out": runtime_query.output.events_out
                     if hasattr(runtime_query, "output") else None,
                     "chunks": s.chunks,
                     "latency_ms": {"p50": round(_percentile(lat, 0.5) * 1000, 4),
                                    "p99": round(_percentile(lat, 0.99) * 1000, 4)},
                     "latency_per_event_us": {"p50": round(_percentile(per, 0.5) * 1e6, 3),
                                              "p99": round(_percentile(per, 0.99) * 1e6, 3)}}
            if self.level == "detail":
                entry["latency_ms"]["max"] = round(s.max_s * 1000, 4)
                entry["busy_s"] = round(s.total_s, 6)
            held = _events_held(runtime_query)
            if held is not None:
                entry["events_held"] = held
            queries[name] = entry
        buffers = {sid: len(j.async_buffer) for sid, j in list(ctx.junctions.items())
                   if getattr(j, "async_buffer", None) is not None}
        tables: dict[str, Any] = {}
        for tid, table in list(ctx.tables.items()):
            if getattr(table, "sql_backed", False):
                # counting a database table's rows is a query: its round trips are reported instead
                tables[tid] = {"store_latency_ms": _quantiles(list(table.db.latencies))}
            else:
                tables[tid] = {"rows": len(table)}
        aggregations = {}
        for aid, agg in list(ctx.aggregations.items()):
            agg_entry: dict[str, Any] = {"store_backlog": getattr(agg.store, "backlog", 0)}
            latencies = getattr(agg.store, "latencies", None)
            if latencies is not None:
                agg_entry["store_latency_ms"] = _quantiles(list(latencies))
            aggregations[aid] = agg_entry
        return {"app": self._runtime.name, "level": self.level, "streams": streams, "queries": queries,
                "async_buffers": buffers, "tables": tables, "aggregations": aggregations}

    # ------------------------------------------------------------------ reporters
    def start(self) -> None:
        if self.reporter in ("console", "log") and self._timer is None:
            self._schedule()

    def _schedule(self) -> None:
        self._timer = threading.Timer(self.interval_ms / 1000.0, self._tick)
        self._timer.daemon = True
        self._timer.start()

    def _tick(self) -> None:
        if self._timer is None:
            return
        try:
            text = format_report(self.report())
            if self.reporter == "console":
                self.printer(text)
            else:
                _log.info("%s", text)
        finally:
            if self._timer is not None:
                self._schedule()

    def stop(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()


def _quantiles(values: list[float]) -> dict[str, float]:
    return {"p50": round(_percentile(values, 0.5) * 1000, 4), "p99": round(_percentile(values, 0.99) * 1000, 4)}


def _events_held(query: Any) -> int | None:
    """Events a query's state holds (windows' contents, patterns' partial matches): the
    cheap measure of its memory; None when it holds none of either."""
    elements = dict(getattr(query, "elements", {}))
    for instance in getattr(query, "instance_runtimes", lambda: [])():
        elements.update(instance.elements)
    total, found = 0, False
    for element in elements.values():
        size = getattr(element, "size", None)
        if callable(getattr(element, "contents", None)) and not callable(size):
            total += _held(element)
            found = True
        elif hasattr(element, "pending"):
            total += int(element.pending)
            found = True
    return total if found else None


def _held(element: Any) -> int:
    """The events a window (or named window) holds, counted without reading them as a find
    does: a batch window that a find scanned expires those events with their own timestamps,
    so ``contents()`` would change the query's output."""
    count = getattr(element, "held_count", None)
    if count is None:  # a named window: its window processor counts
        count = getattr(getattr(element, "processor", None), "held_count", None)
    if callable(count):
        return int(count())
    return len(element.contents())


def format_report(report: dict[str, Any]) -> str:
    """A report as lines of text (the console and log reporters)."""
    lines = [f"statistics of app {report['app']} ({report['level']})"]
    for sid, s in sorted(report["streams"].items()):
        lines.append(f"  stream {sid}: {s['events_in']} events in, {s['throughput']}/s")
    for name, q in sorted(report["queries"].items()):
        lines.append(f"  query {name}: {q['events_in']} in, {q['events_out']} out, latency p50 "
                     f"{q['latency_ms']['p50']} ms p99 {q['latency_ms']['p99']} ms per chunk")
    for sid, n in sorted(report["async_buffers"].items()):
        lines.append(f"  @async {sid}: {n} buffered")
    for tid, t in sorted(report["tables"].items()):
        if "rows" in t:
            lines.append(f"  table {tid}: {t['rows']} rows")
        else:
            lines.append(f"  table {tid}: store p50 {t['store_latency_ms']['p50']} ms p99 {t['store_latency_ms']['p99']} ms")
    return "\n".join(lines)


def statistics_annotation(app: Any) -> dict[str, Any] | None:
    """The options of ``@app:statistics(...)``, or None when the app has none (or says false)."""
    from srota.engine.timeutil import parse_duration
    from srota.grammar.model import find_annotation

    ann = find_annotation(app.annotations, "app:statistics")
    if ann is None:
        return None
    positional = ann.positional()
    if positional and positional[0].lower() == "false" or (ann.get("enable") or "").lower() == "false":
        return None
    include = tuple(p.strip() for p in (ann.get("include") or "*").split(",") if p.strip())
    interval = (ann.get("interval") or "60 sec").strip()
    return {"reporter": (ann.get("reporter") or "console").lower(),
            # Siddhi's interval is a number of seconds; a time value with a unit works too
            "interval_ms": int(interval) * 1000 if interval.isdigit() else parse_duration(interval),
            "include": include or ("*",), "level": (ann.get("level") or "basic").lower()}
