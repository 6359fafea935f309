"""Cron schedules in Quartz syntax: the one implementation behind triggers and ``#window.cron``.

Siddhi's ``define trigger T at '<cron>'`` and ``#window.cron('<cron>')`` both take a Quartz
expression::

    sec  min  hour  day-of-month  month  day-of-week  [year]

Quartz numbers the days of the week 1-7 from **Sunday** (``SUN=1 ... SAT=7``), unlike Unix
cron (``SUN=0``), and wants ``?`` in one of the two day fields.  The expression is translated
to a ``croniter`` one (seconds first, days of the week shifted to Unix numbering, ``nL`` and
``n#k`` kept) and evaluated by croniter.

Time zone rule (one for both users): a schedule is evaluated in the process's local time
zone (``TZ``), as Quartz evaluates it in the JVM's default zone; a service in a container
usually runs with ``TZ=UTC``.  Times are computed on local wall-clock datetimes and turned
into epoch milliseconds with :func:`time.mktime`, so daylight-saving changes are respected.

Not supported (rejected when the app is created): Quartz's ``W`` (nearest weekday) and both
day fields restricted at once (Quartz rejects that too).  ``*`` in both day fields is taken
as "any day".
"""
from __future__ import annotations

import re
import time as _time
from datetime import datetime

_DOW_NAMES = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
_DOW_TOKEN = re.compile(r"^(?P<a>[A-Z]{3}|\d+)(?:-(?P<b>[A-Z]{3}|\d+))?(?:(?P<op>[/#])(?P<n>\d+))?$")


class CronSchedule:
    """A Quartz cron expression; :meth:`next_after` gives its firing times in epoch ms.

    Raises :class:`ValueError` naming what is wrong when the expression is not valid.
    """

    def __init__(self, expr: str) -> None:
        self.expression = expr
        self._text = _to_croniter(expr)

    def next_after(self, millis: int) -> int | None:
        """The first firing time strictly after ``millis`` (epoch ms), or None if there is none."""
        from croniter import CroniterBadDateError, croniter

        start = datetime.fromtimestamp(millis // 1000)  # whole local seconds: the schedule's grain
        try:
            nxt = croniter(self._text, start, second_at_beginning=True).get_next(datetime)
        except CroniterBadDateError:  # e.g. a year range that has ended
            return None
        return int(_time.mktime(nxt.timetuple())) * 1000

    def __repr__(self) -> str:
        return f"CronSchedule({self.expression!r})"


def _to_croniter(expr: str) -> str:
    from croniter import croniter

    fields = expr.split()
    if len(fields) not in (6, 7):
        raise ValueError(f"'{expr}' should have 6 or 7 fields, Quartz style: "
                         "'sec min hour day-of-month month day-of-week [year]'")
    fields = [f.upper() for f in fields]
    dom, dow = fields[3], fields[5]
    if "W" in dom:
        raise ValueError(f"'{expr}': 'W' (nearest weekday) is not supported")
    fields[3] = "*" if dom == "?" else dom
    fields[5] = _day_of_week(dow, expr)
    text = " ".join(fields)
    try:
        ok = croniter.is_valid(text, second_at_beginning=True)
    except Exception:  # croniter raises various errors for odd fields
        ok = False
    if not ok:
        raise ValueError(f"'{expr}' is not a valid cron expression")
    if dom not in ("?", "*") and dow not in ("?", "*"):
        raise ValueError(f"'{expr}': give '?' in day-of-month or in day-of-week "
                         "(both days at once is not supported, as in Quartz)")
    return text


def _day_of_week(field: str, expr: str) -> str:
    """Quartz day-of-week (1 = Sunday) in croniter's numbering (0 = Sunday)."""
    if field in ("?", "*"):
        return "*"
    if field == "L":  # Quartz: 'L' alone is the last day of the week, Saturday
        return "6"
    out = []
    for token in field.split(","):
        if token.endswith("L"):  # 'nL': the last day n of the month
            out.append(f"L{_dow_number(token[:-1], expr)}")
            continue
        if token.startswith("*/"):
            out.append(f"0/{token[2:]}")
            continue
        m = _DOW_TOKEN.match(token)
        if m is None:
            raise ValueError(f"'{expr}': day-of-week '{token}' is not valid")
        part = str(_dow_number(m["a"], expr))
        if m["b"] is not None:
            part += f"-{_dow_number(m['b'], expr)}"
        if m["op"] is not None:
            part += f"{m['op']}{m['n']}"
        out.append(part)
    return ",".join(out)


def _dow_number(text: str, expr: str) -> int:
    if text.isdigit():
        n = int(text)
        if not 1 <= n <= 7:
            raise ValueError(f"'{expr}': day-of-week {n} is out of range (Quartz: 1 = Sunday ... 7 = Saturday)")
        return n - 1
    if text not in _DOW_NAMES:
        raise ValueError(f"'{expr}': '{text}' is not a day of the week")
    return _DOW_NAMES.index(text)
