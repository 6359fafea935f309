"""Retention of aggregation tables: ``@purge(enable, interval, @retentionPeriod(...))``.

Siddhi's defaults (``IncrementalDataPurger``): purging is on, every 15 minutes; seconds are
kept 120 sec, minutes 24 hours, hours 30 days, days 1 year, months and years for ever.  A
retention below the minimum (120 sec, 120 min, 25 hours, 32 days, 13 months) is rejected.

Unlike Siddhi, which halts all purging when a coarser table misses data, rows of a
granularity are deleted only up to the end of the newest bucket the next coarser table holds:
no finer row goes before the coarser row that summarises it exists.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from srota.engine.aggregation.buckets import duration_named, next_bucket_start
from srota.engine.expression import error_at
from srota.engine.timeutil import parse_duration
from srota.grammar.model import Annotation, TimeDuration, find_annotation

_MONTH = 30 * 86_400_000
DEFAULT_INTERVAL = 15 * 60_000
DEFAULT_RETENTION: dict[TimeDuration, int | None] = {
    TimeDuration.SECONDS: 120_000,
    TimeDuration.MINUTES: 24 * 3_600_000,
    TimeDuration.HOURS: 30 * 86_400_000,
    TimeDuration.DAYS: 365 * 86_400_000,
    TimeDuration.MONTHS: None,
    TimeDuration.YEARS: None,
}
MINIMUM_RETENTION: dict[TimeDuration, int] = {
    TimeDuration.SECONDS: 120_000,
    TimeDuration.MINUTES: 120 * 60_000,
    TimeDuration.HOURS: 25 * 3_600_000,
    TimeDuration.DAYS: 32 * 86_400_000,
    TimeDuration.MONTHS: 13 * _MONTH,
    TimeDuration.YEARS: 0,
}


@dataclass
class PurgePolicy:
    """When to purge and how long each granularity is kept (None: for ever)."""

    enabled: bool = True
    interval: int = DEFAULT_INTERVAL
    retention: dict[TimeDuration, int | None] = field(default_factory=dict)


def parse_purge(annotations: tuple[Annotation, ...], durations: tuple[TimeDuration, ...]) -> PurgePolicy:
    """The policy an aggregation's annotations give (creation errors for bad values)."""
    policy = PurgePolicy(retention={d: DEFAULT_RETENTION[d] for d in durations})
    a = find_annotation(annotations, "purge")
    if a is None:
        return policy
    enable = a.get("enable")
    if enable is not None:
        if enable.lower() not in ("true", "false"):
            raise error_at(f"@purge enable must be true or false, not '{enable}'", a)
        policy.enabled = enable.lower() == "true"
    interval = a.get("interval")
    if interval is not None:
        try:
            policy.interval = parse_duration(interval)
        except ValueError as exc:
            raise error_at(f"@purge interval: {exc}", a) from None
        if policy.interval <= 0:
            raise error_at("@purge interval must be positive", a)
    for rp in a.nested("retentionPeriod"):
        for el in rp.elements:
            try:
                d = duration_named(el.key or "")
            except ValueError as exc:
                raise error_at(f"@retentionPeriod: {exc}", el) from None
            if d not in durations:
                raise error_at(f"{d.value} cannot be purged: the aggregation does not keep {d.value}", el)
            if el.value.strip().lower() == "all":
                policy.retention[d] = None
                continue
            try:
                millis = parse_duration(el.value)
            except ValueError as exc:
                raise error_at(f"@retentionPeriod {el.key}: {exc}", el) from None
            if millis < MINIMUM_RETENTION[d]:
                raise error_at(f"{d.value} cannot be kept only '{el.value}': the minimum retention is "
                               f"{MINIMUM_RETENTION[d] // 60_000} minutes", el)
            policy.retention[d] = millis
    return policy


def purge_bounds(policy: PurgePolicy, durations: tuple[TimeDuration, ...], now: int,
                 newest: dict[TimeDuration, tuple[int, int] | None]) -> dict[TimeDuration, int]:
    """For each granularity to purge, delete rows with ``AGG_TIMESTAMP`` below the bound.

    ``newest[d]`` is ``(AGG_TIMESTAMP, utc offset)`` of the newest row of table ``d`` (None
    when empty).  A bound never passes the end of the newest bucket of the next coarser
    table, so a finer row is only purged once the coarser table holds its data.
    """
    bounds: dict[TimeDuration, int] = {}
    for i, d in enumerate(durations):
        keep = policy.retention.get(d)
        if keep is None:
            continue
        bound = now - keep
        if i + 1 < len(durations):
            coarse = durations[i + 1]
            top = newest.get(coarse)
            if top is None:
                continue
            bound = min(bound, next_bucket_start(top[0], coarse))
        bounds[d] = bound
    return bounds
