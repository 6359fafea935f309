"""Calendar buckets of incremental aggregation, and the time strings its queries use.

Pure functions, no engine state: the live engine and the Spark jobs (``service/spark``) share
them so both align buckets identically.

* A bucket is identified by its start, in epoch milliseconds (``AGG_TIMESTAMP``).
* Seconds, minutes, hours and days are fixed lengths; months and years follow the civil
  calendar.  Aggregations align every bucket in one zone, GMT: Siddhi 5's
  ``IncrementalExecutor`` calls ``IncrementalTimeConverterUtil.getStartTimeOfAggregates(ts,
  duration, timeZone)`` with the aggregation's ``timeZone`` (config property ``aggTimeZone``,
  default ``GMT``), never with the event's own offset; an offset in a time string only moves
  the event to epoch ms (WSO2 SP 4.2 aligned in the event's offset; Siddhi 5 dropped that).
  So an event stamped ``2018-01-05 02:00:00 +05:30`` is ``2018-01-04 20:30 GMT`` and falls into
  the GMT day of 2018-01-04, whatever the offsets of the other events of its key.
  ``offset`` (ms) is kept for the jobs that align in another fixed zone; the engine passes 0.
* Time strings are ``yyyy-MM-dd HH:mm:ss`` (GMT) or ``yyyy-MM-dd HH:mm:ss <Z>`` with ``<Z>`` an
  ISO-8601 offset such as ``+05:30``; ``within`` also accepts ``**`` wildcards for trailing
  fields (``2018-01-** **:**:**`` is January 2018).
"""
from __future__ import annotations

import re

from srota.grammar.model import TimeDuration

DURATIONS: tuple[TimeDuration, ...] = tuple(TimeDuration)
"""Granularities, finest first."""

FIXED_MILLIS: dict[TimeDuration, int] = {
    TimeDuration.SECONDS: 1_000,
    TimeDuration.MINUTES: 60_000,
    TimeDuration.HOURS: 3_600_000,
    TimeDuration.DAYS: 86_400_000,
}

TABLE_SUFFIX: dict[TimeDuration, str] = {d: d.name for d in DURATIONS}
"""``A_SECONDS`` ... ``A_YEARS``."""

_DAY = 86_400_000

_ALIASES = {
    TimeDuration.SECONDS: ("sec", "secs", "second", "seconds"),
    TimeDuration.MINUTES: ("min", "mins", "minute", "minutes"),
    TimeDuration.HOURS: ("hour", "hours"),
    TimeDuration.DAYS: ("day", "days"),
    TimeDuration.MONTHS: ("month", "months"),
    TimeDuration.YEARS: ("year", "years"),
}
_BY_NAME = {alias: d for d, names in _ALIASES.items() for alias in names}


def duration_named(text: str) -> TimeDuration:
    """The granularity a ``per`` value or retention key names (``'days'``, ``'DAYS'``, ``'day'``, ``'sec'``)."""
    d = _BY_NAME.get(str(text).strip().lower())
    if d is None:
        raise ValueError(f"'{text}' is not a granularity (seconds, minutes, hours, days, months or years)")
    return d


# ---------------------------------------------------------------------------- civil calendar
def _civil(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a count of days since 1970-01-01 (proleptic Gregorian)."""
    z = days + 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


def _days(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a civil date."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def bucket_start(ts: int, duration: TimeDuration, offset: int = 0) -> int:
    """Start (epoch ms) of the ``duration`` bucket holding ``ts``, aligned in UTC offset ``offset``."""
    unit = FIXED_MILLIS.get(duration)
    local = ts + offset
    if unit is not None:
        return local - local % unit - offset
    y, m, _ = _civil(local // _DAY)
    if duration is TimeDuration.MONTHS:
        return _days(y, m, 1) * _DAY - offset
    return _days(y, 1, 1) * _DAY - offset


def next_bucket_start(start: int, duration: TimeDuration, offset: int = 0) -> int:
    """Start of the bucket after the one starting at ``start`` (its expiry time)."""
    unit = FIXED_MILLIS.get(duration)
    if unit is not None:
        return bucket_start(start, duration, offset) + unit
    y, m, _ = _civil((start + offset) // _DAY)
    if duration is TimeDuration.MONTHS:
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
        return _days(y, m, 1) * _DAY - offset
    return _days(y + 1, 1, 1) * _DAY - offset


# ---------------------------------------------------------------------------- time strings
_TIME = re.compile(
    r"^\s*(\d{4}|\*\*)-(\d{1,2}|\*\*)-(\d{1,2}|\*\*)\s+(\d{1,2}|\*\*):(\d{1,2}|\*\*):(\d{1,2}|\*\*)"
    r"(?:\.(\d{1,3}))?\s*(Z|GMT|UTC|[+-]\d{2}:?\d{2})?\s*$", re.IGNORECASE)


def parse_offset(text: str | None) -> int:
    """Milliseconds of an ISO-8601 UTC offset (``+05:30``, ``-0800``, ``Z``); 0 when absent."""
    if not text or text.upper() in ("Z", "GMT", "UTC"):
        return 0
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return sign * (int(digits[:2]) * 3_600_000 + int(digits[2:4]) * 60_000)


def format_offset(offset: int) -> str:
    """``+05:30`` for 19 800 000 ms (the ``AGG_TIMEZONE`` column)."""
    sign = "-" if offset < 0 else "+"
    minutes = abs(offset) // 60_000
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def parse_time(text: str) -> tuple[int, int]:
    """``(epoch ms, offset ms)`` of ``yyyy-MM-dd HH:mm:ss[ Z]``; raises ValueError otherwise."""
    m = _TIME.match(text)
    if m is None or "*" in text:
        raise ValueError(f"'{text}' is not a time such as '2018-01-05 10:00:00' or "
                         f"'2018-01-05 10:00:00 +05:30'")
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    millis = int((m.group(7) or "0").ljust(3, "0"))
    if not (1 <= mo <= 12 and 1 <= d <= 31 and h < 24 and mi < 60 and s < 60):
        raise ValueError(f"'{text}' is not a valid date and time")
    offset = parse_offset(m.group(8))
    local = _days(y, mo, d) * _DAY + ((h * 60 + mi) * 60 + s) * 1000 + millis
    return local - offset, offset


_WILDCARD_UNITS = (TimeDuration.YEARS, TimeDuration.MONTHS, TimeDuration.DAYS, TimeDuration.HOURS,
                   TimeDuration.MINUTES, TimeDuration.SECONDS)


def parse_within_pattern(text: str) -> tuple[int, int]:
    """``[start, end)`` of a single ``within`` value: a time with ``**`` for trailing fields.

    ``'2018-01-** **:**:**'`` is ``['2018-01-01 00:00:00', '2018-02-01 00:00:00')``; a value
    without wildcards is the one second it names.
    """
    m = _TIME.match(text)
    if m is None:
        raise ValueError(f"'{text}' is not a within value such as '2018-01-** **:**:**'")
    fields = m.groups()[:6]
    first_wild = next((i for i, f in enumerate(fields) if f == "**"), 6)
    if first_wild == 0 or any(f != "**" for f in fields[first_wild:]):
        raise ValueError(f"'{text}': only trailing fields may be '**'")
    defaults = ("1970", "1", "1", "0", "0", "0")
    concrete = [f if i < first_wild else defaults[i] for i, f in enumerate(fields)]
    zone = m.group(8) or ""
    start, offset = parse_time(f"{concrete[0]}-{concrete[1]}-{concrete[2]} "
                               f"{concrete[3]}:{concrete[4]}:{concrete[5]} {zone}".strip())
    unit = _WILDCARD_UNITS[first_wild - 1]
    return start, next_bucket_start(start, unit, offset)


def time_value(value: object, what: str = "time") -> int:
    """Epoch ms of a ``within`` bound or event time: a long, or a time string."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{what} must be a long or a time string, not {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        return parse_time(value)[0]
    raise ValueError(f"{what} must be a long or a time string, not {value!r}")


def within_range(values: tuple[object, ...]) -> tuple[int, int]:
    """``[start, end)`` from the evaluated ``within`` operands (one pattern, or start and end)."""
    if len(values) == 1:
        v = values[0]
        if not isinstance(v, str):
            raise ValueError("a single within value must be a string such as '2018-01-** **:**:**'")
        return parse_within_pattern(v)
    return time_value(values[0], "within start"), time_value(values[1], "within end")
