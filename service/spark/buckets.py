"""Bucket alignment and row layout in Spark SQL, mirroring :mod:`engine.aggregation.buckets`.

The session runs in UTC.  Buckets align in GMT (``off`` ``"0"``), as the live engine and Siddhi 5
do; another fixed offset (``off``, ms) shifts a time before truncation and back after, exactly
like :func:`engine.aggregation.buckets.bucket_start`.
"""
from __future__ import annotations

from srota.engine.aggregation.buckets import FIXED_MILLIS
from srota.grammar.model import TimeDuration


def bucket_sql(ts: str, off: str, duration: TimeDuration) -> str:
    """SQL for the start of the ``duration`` bucket of epoch-ms column ``ts`` at UTC offset ``off``."""
    unit = FIXED_MILLIS.get(duration)
    if str(off) == "0":  # GMT, as the engine aligns
        if unit is not None:
            return f"({ts} - pmod({ts}, {unit}L))"
        field = "MONTH" if duration is TimeDuration.MONTHS else "YEAR"
        return f"unix_millis(date_trunc('{field}', timestamp_millis({ts})))"
    local = f"({ts} + {off})"
    if unit is not None:
        return f"({local} - pmod({local}, {unit}L) - {off})"
    field = "MONTH" if duration is TimeDuration.MONTHS else "YEAR"
    return f"(unix_millis(date_trunc('{field}', timestamp_millis({local}))) - {off})"


def next_bucket_sql(start: str, off: str, duration: TimeDuration) -> str:
    """SQL for the start of the bucket after the one starting at ``start``."""
    unit = FIXED_MILLIS.get(duration)
    if unit is not None:
        return f"({start} + {unit}L)"
    months = 1 if duration is TimeDuration.MONTHS else 12
    return (f"(unix_millis(cast(add_months(to_date(timestamp_millis({start} + {off})), {months}) "
            f"as timestamp)) - {off})")


def tz_text_sql(off: str) -> str:
    """``+05:30`` from an offset in ms (the ``AGG_TIMEZONE`` column)."""
    return (f"concat(if({off} < 0, '-', '+'), lpad(cast(abs({off}) div 3600000 as string), 2, '0'), ':', "
            f"lpad(cast((abs({off}) div 60000) % 60 as string), 2, '0'))")
