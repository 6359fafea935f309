"""Prometheus metrics for the service.

Counters that the engine keeps anyway (events into each junction, events out of each query,
errors per stream) are read at scrape time by a custom collector, so the hot path pays
nothing for metrics.  Edge counters (mapping errors, sink errors, consumer lag, buffer
depth, latency) are ordinary prometheus-client metrics updated by the host.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _without_key(eid: str) -> str:
    """An element id without its partition key: ``partition2/<key>/jump/pattern`` -> ``partition2/jump/pattern``.

    Ids inside a partition are ``partitionN/<key>/<query>/<element>``; the key may itself hold
    slashes, so the query and element are taken from the end.
    """
    parts = eid.split("/")
    if len(parts) >= 4 and parts[0].startswith("partition"):
        return "/".join((parts[0], parts[-2], parts[-1]))
    return eid


def _query_of(eid: str) -> str:
    """The query a ``.../<query>/pattern`` element belongs to."""
    parts = eid.split("/")
    return parts[-2] if len(parts) >= 2 else eid


def _per_query(items: Iterable[tuple[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for eid, n in list(items):
        key = _without_key(eid)
        out[key] = out.get(key, 0) + n
    return out


class _EngineCollector(Collector):
    """Reads per-stream and per-query counters from the running app runtimes."""

    def __init__(self, runtimes: Callable[[], dict[str, Any]]) -> None:
        self._runtimes = runtimes

    def collect(self) -> Iterator[Any]:
        events_in = CounterMetricFamily("srota_stream_events", "Events that entered a stream",
                                        labels=["app", "stream"])
        errors = CounterMetricFamily("srota_query_errors", "Chunks that failed inside a query",
                                     labels=["app", "stream"])
        events_out = CounterMetricFamily("srota_query_output_events", "Events a query emitted",
                                         labels=["app", "query"])
        pending = GaugeMetricFamily("srota_timers_pending", "Timers waiting in the app scheduler",
                                    labels=["app"])
        breaches = CounterMetricFamily("srota_limit_breaches", "Events shed because an element hit a limit",
                                       labels=["app", "element"])
        partial = GaugeMetricFamily("srota_pattern_pending", "Partial matches a pattern query holds "
                                    "(summed over its partition keys)", labels=["app", "query"])
        dropped = CounterMetricFamily("srota_pattern_dropped", "Partial matches dropped over the limit "
                                      "(summed over its partition keys)", labels=["app", "query"])
        # @app:statistics (or statistics switched on through the admin API)
        q_in = CounterMetricFamily("srota_statistics_query_events_in", "Events that entered a query "
                                   "(statistics on)", labels=["app", "query"])
        q_latency = GaugeMetricFamily("srota_statistics_query_latency_seconds", "Processing time of a chunk "
                                      "entering a query, over the last 1024 chunks", labels=["app", "query", "quantile"])
        q_event = GaugeMetricFamily("srota_statistics_event_latency_seconds", "Processing time per event of a "
                                    "query, over the last 1024 chunks", labels=["app", "query", "quantile"])
        throughput = GaugeMetricFamily("srota_statistics_stream_throughput", "Events per second into a stream "
                                       "since the previous scrape", labels=["app", "stream"])
        buffered = GaugeMetricFamily("srota_statistics_async_buffered", "Events waiting in an @Async buffer",
                                     labels=["app", "stream"])
        table_rows = GaugeMetricFamily("srota_statistics_table_rows", "Rows of an in-memory table",
                                       labels=["app", "table"])
        for name, runtime in self._runtimes().items():
            ctx = runtime.context
            report = runtime.statistics() if callable(getattr(runtime, "statistics", None)) else None
            if report is not None:
                for qname, q in report["queries"].items():
                    q_in.add_metric([name, qname], q["events_in"])
                    for quantile in ("p50", "p99"):
                        label = "0.5" if quantile == "p50" else "0.99"
                        q_latency.add_metric([name, qname, label], q["latency_ms"][quantile] / 1000)
                        q_event.add_metric([name, qname, label], q["latency_per_event_us"][quantile] / 1e6)
                for sid, st in report["streams"].items():
                    throughput.add_metric([name, sid], st["throughput"])
                for sid, n in report["async_buffers"].items():
                    buffered.add_metric([name, sid], n)
                for tid, t in report["tables"].items():
                    table_rows.add_metric([name, tid], t["rows"])
            for sid, junction in list(ctx.junctions.items()):
                events_in.add_metric([name, sid], junction.events_in)
            for sid, n in list(ctx.errors.items()):
                errors.add_metric([name, sid], n)
            for qname, q in list(runtime.queries.items()):
                events_out.add_metric([name, qname], q.output.events_out)
            pending.add_metric([name], ctx.scheduler.pending())
            # Elements inside a partition exist once per key: sum them per query, so that the
            # number of series does not grow with the number of keys (devices, users ...).
            for element, n in _per_query(ctx.breaches.items()).items():
                breaches.add_metric([name, element], n)
            pending_by_query: dict[str, int] = {}
            dropped_by_query: dict[str, int] = {}
            for eid, element in list(ctx.elements.items()):
                if eid.endswith("/pattern") and hasattr(element, "pending"):
                    query = _query_of(eid)
                    pending_by_query[query] = pending_by_query.get(query, 0) + element.pending
                    dropped_by_query[query] = dropped_by_query.get(query, 0) + getattr(element, "dropped", 0)
            for query, n in pending_by_query.items():
                partial.add_metric([name, query], n)
                dropped.add_metric([name, query], dropped_by_query[query])
        yield events_in
        yield errors
        yield events_out
        yield pending
        yield breaches
        yield partial
        yield dropped
        yield from (q_in, q_latency, q_event, throughput, buffered, table_rows)


class Metrics:
    """The service's metrics registry."""

    def __init__(self, runtimes: Callable[[], dict[str, Any]] = dict) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(_EngineCollector(runtimes))
        # The standard process (CPU, memory, open files), platform (Python version) and gc
        # collectors; they are stateless readers, so one instance serves every registry.
        for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
            self.registry.register(collector)
        r = self.registry
        from srota.service.admin import version_info

        info = version_info()
        Gauge("srota_build_info", "The srota version running (always 1)", ["version", "python"],
              registry=r).labels(info["version"], info["python"]).set(1)
        self.source_messages = Counter("srota_source_messages", "Messages received by a source",
                                       ["app", "stream", "transport"], registry=r)
        self.sink_messages = Counter("srota_sink_messages", "Messages published by a sink",
                                     ["app", "stream", "transport"], registry=r)
        self.mapping_errors = Counter("srota_mapping_errors", "Payloads that could not be mapped",
                                      ["app", "stream"], registry=r)
        self.sink_errors = Counter("srota_sink_errors", "Publishes that failed", ["app", "stream"], registry=r)
        self.dead_letters = Counter("srota_dead_letters", "Dead letters published", ["app", "stream"], registry=r)
        self.errors_stored = Counter("srota_errors_stored", "Entries kept in the error store (srota errors), by kind",
                                     ["app", "stream", "kind"], registry=r)
        self.dead_letters_lost = Counter("srota_dead_letters_lost",
                                         "Dead letters that could never be published (only logged), by reason",
                                         ["app", "stream", "reason"], registry=r)
        self.oversized = Counter("srota_oversized_payloads", "Payloads over limits.max_payload_bytes",
                                 ["app", "stream"], registry=r)
        self.buffer_depth = Gauge("srota_buffer_depth", "Chunks waiting between a source or sink and the app",
                                  ["app", "stream", "direction"], registry=r)
        self.consumer_lag = Gauge("srota_consumer_lag", "Kafka messages not yet consumed",
                                  ["app", "topic", "partition"], registry=r)
        self.latency = Histogram("srota_processing_seconds", "Time to process one source batch",
                                 ["app"], registry=r,
                                 buckets=(0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5))

    def render(self) -> bytes:
        """The Prometheus text exposition of every metric."""
        return generate_latest(self.registry)
