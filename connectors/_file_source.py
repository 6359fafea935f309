"""Helpers of the ``file`` source that follow siddhi-io-file: Quartz cron schedules, the
``regex`` mode's splitting of text into events, and the actions after a file is processed.

Kept apart from :mod:`srota.connectors._file` so the source's option handling and its run loop
stay readable; nothing here touches the event loop.
"""
from __future__ import annotations

import datetime as _dt
import os
import re
import shutil
import uuid
from pathlib import Path

# ------------------------------------------------------------------ Quartz cron expressions

_MONTHS = {m: i + 1 for i, m in enumerate(
    ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"))}
_DAYS = {d: i + 1 for i, d in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"))}

#: (low, high, names) of the fields: seconds, minutes, hours, day of month, month, day of week, year.
_FIELDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}), (0, 59, {}), (0, 23, {}), (1, 31, {}), (1, 12, _MONTHS), (1, 7, _DAYS), (1970, 2199, {}),
)


class CronError(ValueError):
    """A cron expression this implementation cannot read."""


def _field_values(text: str, low: int, high: int, names: dict[str, int]) -> frozenset[int] | None:
    """The values one cron field allows (None: any, written ``*`` or ``?``)."""
    if text in ("*", "?"):
        return None

    def number(token: str) -> int:
        value = names.get(token.upper()) if names else None
        if value is None:
            if not token.isdigit():
                raise CronError(f"'{token}' is not a value of this field")
            value = int(token)
        if not low <= value <= high:
            raise CronError(f"{value} is outside {low}-{high}")
        return value

    values: set[int] = set()
    for part in text.split(","):
        step = 1
        if "/" in part:
            part, step_text = part.split("/", 1)
            if not step_text.isdigit() or int(step_text) == 0:
                raise CronError(f"bad step '{step_text}'")
            step = int(step_text)
        if part == "*":
            start, end = low, high
        elif "-" in part:
            a, b = part.split("-", 1)
            start, end = number(a), number(b)
        else:
            start = number(part)
            end = high if step > 1 else start
        if end < start:
            raise CronError(f"range {part} runs backwards")
        values.update(range(start, end + 1, step))
    return frozenset(values)


class QuartzCron:
    """A Quartz cron expression (what siddhi-io-file's ``cron.expression`` takes): seconds,
    minutes, hours, day of month, month, day of week (1 = Sunday) and an optional year, with
    ``*``, ``?``, lists, ranges, steps and month/day names.  As in Quartz, exactly one of day of
    month and day of week must be ``?``.  ``L``, ``W`` and ``#`` are refused (not implemented)."""

    def __init__(self, expression: str) -> None:
        parts = expression.split()
        if len(parts) not in (6, 7):
            raise CronError(f"a cron expression has 6 or 7 fields, not {len(parts)}")
        if (parts[3] == "?") == (parts[5] == "?"):
            raise CronError("exactly one of day-of-month and day-of-week must be '?'")
        if "?" in parts[:3] + parts[4:5] + parts[6:]:
            raise CronError("'?' is allowed only in day-of-month and day-of-week")
        self.fields = [_field_values(p, *_FIELDS[i]) for i, p in enumerate(parts)]
        if len(self.fields) == 6:
            self.fields.append(None)

    def _day_ok(self, day: _dt.date) -> bool:
        dom, month, dow, year = self.fields[3], self.fields[4], self.fields[5], self.fields[6]
        quartz_dow = day.isoweekday() % 7 + 1  # Sunday = 1
        return ((year is None or day.year in year) and (month is None or day.month in month)
                and (dom is None or day.day in dom) and (dow is None or quartz_dow in dow))

    def next_after(self, moment: _dt.datetime) -> _dt.datetime | None:
        """The first firing time strictly after ``moment`` (None when there is none within
        five years); whole days, hours and minutes that cannot match are skipped at once."""
        sec, minute, hour = self.fields[0], self.fields[1], self.fields[2]
        t = moment.replace(microsecond=0) + _dt.timedelta(seconds=1)
        limit = t + _dt.timedelta(days=366 * 5)
        while t < limit:
            if not self._day_ok(t.date()):
                t = t.replace(hour=0, minute=0, second=0) + _dt.timedelta(days=1)
            elif hour is not None and t.hour not in hour:
                t = t.replace(minute=0, second=0) + _dt.timedelta(hours=1)
            elif minute is not None and t.minute not in minute:
                t = t.replace(second=0) + _dt.timedelta(minutes=1)
            elif sec is not None and t.second not in sec:
                t += _dt.timedelta(seconds=1)
            else:
                return t
        return None


# ------------------------------------------------------------------ regex mode

def regex_pattern(begin: str | None, end: str | None) -> re.Pattern[str]:
    """The pattern siddhi-io-file builds from ``begin.regex`` / ``end.regex`` (one must be set);
    raises ``re.error`` for an invalid expression."""
    if begin is not None and end is not None:
        return re.compile(f"{begin}((.|\n)*?){end}")
    if begin is not None:
        return re.compile(f"{begin}((.|\n)*?){begin}")
    assert end is not None
    return re.compile(f"((.|\n)*?)({end})")


class RegexSplitter:
    """Cuts text into events as siddhi-io-file's ``regex`` mode does.

    * ``begin.regex`` and ``end.regex``: each match from a begin to the next end is an event.
    * ``begin.regex`` only: an event runs from one begin to the next (the last one to the end
      of the file).
    * ``end.regex`` only: an event runs from the end of the previous one through the next end.

    Text is fed in pieces (:meth:`feed`, for tailing); :meth:`finish` flushes what a begin-only
    splitter holds back at the end of a file.  Text outside any event is dropped.
    """

    def __init__(self, begin: str | None, end: str | None) -> None:
        self.begin = re.compile(begin) if begin is not None else None
        self.end = re.compile(end) if end is not None else None
        self.pattern = regex_pattern(begin, end)
        self.buffer = ""

    def feed(self, text: str) -> list[str]:
        """The events completed by ``text``."""
        self.buffer += text
        events: list[str] = []
        if self.begin is not None and self.end is None:
            # An event is complete once the next begin shows up.
            starts = [m.start() for m in self.begin.finditer(self.buffer)]
            for a, b in zip(starts, starts[1:], strict=False):
                events.append(self.buffer[a:b].strip())
            if starts:
                self.buffer = self.buffer[starts[-1]:]
            return [e for e in events if e]
        consumed = 0
        for m in self.pattern.finditer(self.buffer):
            events.append(m.group(0).strip())
            consumed = m.end()
        self.buffer = self.buffer[consumed:]
        return [e for e in events if e]

    def finish(self) -> list[str]:
        """At the end of a file: the last begin-only event (nothing for the other forms)."""
        rest, self.buffer = self.buffer, ""
        if self.begin is not None and self.end is None and self.begin.match(rest):
            rest = rest.strip()
            return [rest] if rest else []
        return []


# ------------------------------------------------------------------ after processing

def move_file(path: Path, destination: Path, keep_existing: bool) -> Path:
    """Move ``path`` to ``destination`` (parents created).  When ``destination`` exists it is
    replaced, or with ``keep_existing`` (``move.if.exist.mode='KEEP'``) kept, and the moved file
    gets a unique name: ``<uuid>-<name>`` beside it."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    if keep_existing and destination.exists():
        destination = destination.with_name(f"{uuid.uuid4().hex}-{destination.name}")
    try:
        os.replace(path, destination)
    except OSError:  # another file system: copy, then remove
        shutil.move(str(path), str(destination))
    return destination
