"""Prometheus metrics for the service.

Counters that the engine keeps anyway (events into each junction, events out of each query,
errors per stream) are read at scrape time by a custom collector, so the hot path pays
nothing for metrics.  Edge counters (mapping errors, sink errors, consumer lag, buffer
depth, latency) are ordinary prometheus-client metrics updated by the host.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


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
        partial = GaugeMetricFamily("srota_pattern_pending", "Partial matches a pattern query holds",
                                    labels=["app", "element"])
        dropped = CounterMetricFamily("srota_pattern_dropped", "Partial matches dropped over the limit",
                                      labels=["app", "element"])
        for name, runtime in self._runtimes().items():
            ctx = runtime.context
            for sid, junction in list(ctx.junctions.items()):
                events_in.add_metric([name, sid], junction.events_in)
            for sid, n in list(ctx.errors.items()):
                errors.add_metric([name, sid], n)
            for qname, q in list(runtime.queries.items()):
                events_out.add_metric([name, qname], q.output.events_out)
            pending.add_metric([name], ctx.scheduler.pending())
            for element, n in list(ctx.breaches.items()):
                breaches.add_metric([name, element], n)
            for eid, element in list(ctx.elements.items()):
                if eid.endswith("/pattern") and hasattr(element, "pending"):
                    partial.add_metric([name, eid], element.pending)
                    dropped.add_metric([name, eid], getattr(element, "dropped", 0))
        yield events_in
        yield errors
        yield events_out
        yield pending
        yield breaches
        yield partial
        yield dropped


class Metrics:
    """The service's metrics registry."""

    def __init__(self, runtimes: Callable[[], dict[str, Any]] = dict) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(_EngineCollector(runtimes))
        r = self.registry
        self.source_messages = Counter("srota_source_messages", "Messages received by a source",
                                       ["app", "stream", "transport"], registry=r)
        self.sink_messages = Counter("srota_sink_messages", "Messages published by a sink",
                                     ["app", "stream", "transport"], registry=r)
        self.mapping_errors = Counter("srota_mapping_errors", "Payloads that could not be mapped",
                                      ["app", "stream"], registry=r)
        self.sink_errors = Counter("srota_sink_errors", "Publishes that failed", ["app", "stream"], registry=r)
        self.dead_letters = Counter("srota_dead_letters", "Dead letters published", ["app", "stream"], registry=r)
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
