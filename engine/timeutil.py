"""Time strings in annotations and options: ``'100 millisecond'``, ``'1 min 30 sec'``, ``'2 hours'``."""
from __future__ import annotations

import re

_UNITS: dict[str, int] = {}
for _names, _ms in (
    (("ms", "millisec", "millisecond", "milliseconds", "millis", "millisecs"), 1),
    (("s", "sec", "secs", "second", "seconds"), 1000),
    (("m", "min", "mins", "minute", "minutes"), 60_000),
    (("h", "hour", "hours"), 3_600_000),
    (("d", "day", "days"), 86_400_000),
    (("w", "week", "weeks"), 7 * 86_400_000),
    (("month", "months"), 30 * 86_400_000),
    (("y", "year", "years"), 365 * 86_400_000),
):
    for _n in _names:
        _UNITS[_n] = _ms

_PART = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]+)\s*")


def parse_duration(text: str) -> int:
    """Milliseconds in ``text``; raises ValueError naming what is wrong."""
    s = text.strip()
    if not s:
        raise ValueError("empty time value")
    total = 0.0
    pos = 0
    while pos < len(s):
        m = _PART.match(s, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"'{text}' is not a time value such as '1 sec' or '1 min 30 sec'")
        unit = _UNITS.get(m.group(2).lower())
        if unit is None:
            raise ValueError(f"unknown time unit '{m.group(2)}' in '{text}'")
        total += float(m.group(1)) * unit
        pos = m.end()
    return int(total)
