"""Durations: the one parser behind time literals, annotation values and the YAML config.

A SiddhiQL time literal (``#window.time(1 min 30 sec)``) is read by the grammar, whose unit
terminals map to :data:`UNIT_MILLIS`; a time written as a string (``@purge(interval='10
sec')``, ``@app:playback(idle.time='100 ms')``, ``flush.interval``, the service config's
``interval: 30 s``) goes through :func:`parse_duration`.  Both use the same units and the
same rule: amounts with units, from the largest unit to the smallest, each at most once.

Units: Siddhi's words, singular or plural (``year month week day hour min minute sec
second millisec millisecond``), and the short forms ``y w d h m s ms`` (``m`` is minutes;
a month is only ``month``), ``hr``, ``mins``, ``secs``, ``millis``.  As in Siddhi's
``Expression.Time``, a month is 30 days and a year 365.
"""
from __future__ import annotations

import re

_SECOND = 1000
_MINUTE = 60 * _SECOND
_HOUR = 60 * _MINUTE
_DAY = 24 * _HOUR

#: Milliseconds per unit, by the grammar's terminal names (largest first: the required order).
UNIT_MILLIS: dict[str, int] = {
    "YEARS": 365 * _DAY,
    "MONTHS": 30 * _DAY,
    "WEEKS": 7 * _DAY,
    "DAYS": _DAY,
    "HOURS": _HOUR,
    "MINUTES": _MINUTE,
    "SECONDS": _SECOND,
    "MILLISECONDS": 1,
}
#: Rank of each unit: a time value names units in increasing rank, each at most once.
UNIT_RANK: dict[str, int] = {name: rank for rank, name in enumerate(UNIT_MILLIS)}

# The words of each unit.  The grammar's terminals (siddhi.lark) accept the long forms; a
# string accepts the short forms too.
_UNIT_WORDS: dict[str, str] = {
    "YEARS": r"years?|y",
    "MONTHS": r"months?",
    "WEEKS": r"weeks?|w",
    "DAYS": r"days?|d",
    "HOURS": r"hours?|hrs?|h",
    "MINUTES": r"min(?:ute)?s?|m",
    "SECONDS": r"sec(?:ond)?s?|s",
    "MILLISECONDS": r"millisec(?:ond)?s?|millis|ms",
}
_PART = re.compile(
    r"\s*(\d+(?:\.\d+)?)\s*(?:" + "|".join(f"(?P<{n}>{p})" for n, p in _UNIT_WORDS.items()) + r")(?![A-Za-z])",
    re.IGNORECASE,
)


def parse_duration(text: str) -> int:
    """Milliseconds of a time string: ``'100 ms'``, ``'1 min 30 sec'``, ``'2 hours'``.

    Raises :class:`ValueError` naming what is wrong (no unit, an unknown unit, units out of
    order).
    """
    pos, total, last_rank = 0, 0.0, -1
    while pos < len(text) and not text[pos:].isspace():
        m = _PART.match(text, pos)
        if m is None:
            raise ValueError(f"'{text}' is not a time value such as '100 ms', '10 sec' or '1 min 30 sec'")
        unit = next(name for name, value in m.groupdict().items() if value is not None)
        rank = UNIT_RANK[unit]
        if rank <= last_rank:
            raise ValueError(f"'{text}' is not a time value: units go from the largest to the smallest, "
                             "each at most once (e.g. '1 min 30 sec')")
        last_rank = rank
        total += float(m.group(1)) * UNIT_MILLIS[unit]
        pos = m.end()
    if last_rank < 0:
        raise ValueError(f"'{text}' is not a time value such as '100 ms', '10 sec' or '1 min 30 sec'")
    return int(total)
