"""Java's date machinery, as siddhi-execution-time uses it, in Python.

siddhi-execution-time formats and parses with Apache commons-lang 3.3.2's ``FastDateFormat``
(``SimpleDateFormat`` pattern letters, lenient ``GregorianCalendar`` field resolution), adds
with ``Calendar.add``, reads week numbers with the locale's week rules, and converts time zones
with ``java.time`` (``ZoneId.of(id, SHORT_IDS)``, ``DateTimeFormatter.ofPattern``).  This module
reproduces those pieces:

* :class:`DateFormat` -- ``FastDateFormat``: its printer (letters ``G y M d h H m s S E D F w W
  a k K z Z``; any other letter is an error) and its parser (one regular expression built from
  the pattern, numbers as digit runs, fixed widths between adjacent numbers, text fields in
  English, a prefix match: text after the pattern is ignored), then the lenient calendar
  (``MM`` of 13 rolls into the next year; the most recently set of competing fields wins, so
  ``yyyy-MM-DD`` reads ``DD`` as the day of the year);
* :class:`Fields` and :func:`calendar_add` -- ``GregorianCalendar`` fields and ``add`` (with
  Java's wrapping int and long arithmetic, and its quirks around the 1582 cutover);
* :func:`zone_of` -- ``ZoneId.of`` with Java's short ids (``IST`` is Asia/Kolkata, ``PST``
  America/Los_Angeles, ``EST`` -05:00, ...);
* :class:`TimeFormatter` -- the part of ``DateTimeFormatter.ofPattern`` that
  ``timezoneConvert`` needs (parse to a local date-time, format a zoned one; zone names are
  Java's, short for ``z`` and long for ``zzzz``).

The default time zone is the process's (``TZ``, else ``/etc/localtime``), as the JVM's is; the
default locale is English (United States).  ``GregorianCalendar`` dates before its cutover
(1582-10-15) are Julian, as Java's are (``0001-01-01`` in Java's calendar is ``0000-12-30`` in
the proleptic Gregorian one ``java.time`` uses).  Departure: time-zone names cover the zones of
a table (Java's names of some seventy zones, tzdata's abbreviations for the rest), not every
name Java knows.
"""
from __future__ import annotations

import functools
import os
import re
import time as _time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from srota.engine.extensions._javazones import JAVA_ZONE_NAMES
from srota.engine.types import wrap_int, wrap_long

DAY_MS = 86_400_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_RD_EPOCH = 719_163  # Rata Die (fixed date) of 1970-01-01

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
SHORT_MONTHS = tuple(m[:3] for m in MONTHS)
WEEKDAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")  # 1..7
SHORT_WEEKDAYS = tuple(w[:3] for w in WEEKDAYS)
AM_PM = ("AM", "PM")
ERAS = ("BC", "AD")


class JavaTimeError(ValueError):
    """A date could not be parsed or a pattern or zone is invalid (Java's exceptions)."""


# ---------------------------------------------------------------------------- calendar arithmetic
def days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of the proleptic Gregorian date (month 1..12)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def civil_from_days(z: int) -> tuple[int, int, int]:
    """(year, month 1..12, day) of days since 1970-01-01."""
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, d


def is_leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def month_length(y: int, m: int) -> int:
    """Days in month ``m`` (1..12) of year ``y``."""
    if m == 2:
        return 29 if is_leap(y) else 28
    return 30 if m in (4, 6, 9, 11) else 31


#: ``GregorianCalendar``'s first Gregorian day, 1582-10-15; the days before it are Julian dates
#: there (``java.time``, and so :class:`TimeFormatter`, stays proleptic Gregorian)
CUTOVER_DAY = days_from_civil(1582, 10, 15)
_CUTOVER_YEAR = 1582
_JULIAN_EPOCH = 719_470  # days from Julian 0000-03-01 (March-based years) to 1970-01-01


def _julian_days(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of the Julian date (month 1..12), by 4-year cycles of March-based years."""
    y -= m <= 2
    cycle, year_of_cycle = divmod(y, 4)
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return cycle * 1461 + year_of_cycle * 365 + doy - _JULIAN_EPOCH


def _julian_from_days(z: int) -> tuple[int, int, int]:
    cycle, doc = divmod(z + _JULIAN_EPOCH, 1461)
    year_of_cycle = min(doc // 365, 3)  # the fourth March-based year ends with February 29
    doy = doc - 365 * year_of_cycle
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return year_of_cycle + cycle * 4 + (m <= 2), m, d


def calendar_days(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a ``GregorianCalendar`` date: Julian before the 1582 cutover."""
    if y > _CUTOVER_YEAR:
        return days_from_civil(y, m, d)
    if y < _CUTOVER_YEAR:
        return _julian_days(y, m, d)
    day = days_from_civil(y, m, d)
    return day if day >= CUTOVER_DAY else _julian_days(y, m, d)


def calendar_date(z: int) -> tuple[int, int, int]:
    """(year, month 1..12, day) of days since 1970-01-01 in ``GregorianCalendar``: Julian before
    1582-10-15."""
    return civil_from_days(z) if z >= CUTOVER_DAY else _julian_from_days(z)


def calendar_month_length(y: int, m: int) -> int:
    """The last day of month ``m`` (1..12) of year ``y`` in ``GregorianCalendar`` (Julian leap years
    up to 1582, which is no leap year)."""
    if m == 2 and y <= _CUTOVER_YEAR:
        return 29 if y % 4 == 0 and y != _CUTOVER_YEAR else 28
    return month_length(y, m)


def _dow_on_or_before(day: int, dow: int) -> int:
    """The epoch day on or before ``day`` falling on ``dow`` (1 = Sunday .. 7 = Saturday)."""
    fixed = day + _RD_EPOCH
    return day - (fixed - (dow - 1)) % 7


def _week_number(day1: int, day: int, first_dow: int, min_days: int) -> int:
    """``GregorianCalendar.getWeekNumber``: the week of ``day`` in the period starting ``day1``."""
    first = _dow_on_or_before(day1 + 6, first_dow)
    if first - day1 >= min_days:
        first -= 7
    return (day - first) // 7 + 1


@dataclass(frozen=True)
class WeekRules:
    """A locale's first day of the week (1 = Sunday) and minimal days in the first week."""

    first_day: int = 1
    min_days: int = 1


_MIN4 = set("AD AN AT AX BE BG CH CZ DE DK EE ES FI FJ FO FR GB GF GG GI GP GR HU IE IM IS IT JE LI LT "
            "LU MC MQ NL NO PL PT RE RU SE SJ SK SM VA".split())
_SUNDAY = set("AG AS AU BD BR BS BT BW BZ CA CN CO DM DO ET GT GU HK HN ID IL IN JM JP KE KH KR LA MH MM MO "
              "MT MX MZ NI NP PA PE PH PK PR PY SA SG SV TH TT TW UM US VE VI WS YE ZA ZW".split())
_SATURDAY = set("AE AF BH DJ DZ EG IQ IR JO KW LY OM QA SD SY".split())
_LOCALE = re.compile(r"([a-z]{2,3})(?:_([A-Z]{2}|\d{3})?(?:_(.+))?)?|_([A-Z]{2}|\d{3})(?:_(.+))?")


def week_rules(locale: str | None) -> WeekRules:
    """The week rules of a locale string such as ``en_US`` or ``fr_FR`` (``LocaleUtils.toLocale``)."""
    if locale is None:
        return WeekRules(1, 1)  # the default locale, en_US
    m = _LOCALE.fullmatch(locale)
    if m is None:
        raise JavaTimeError(f"Invalid locale format: {locale}")
    country = m.group(2) or m.group(4) or ""
    if not country:
        return WeekRules(1, 1)
    if country in _MIN4:
        return WeekRules(2, 4)
    if country in _SUNDAY:
        return WeekRules(1, 1)
    if country in _SATURDAY:
        return WeekRules(7, 1)
    return WeekRules(2, 1)


US_WEEK = WeekRules(1, 1)


# ---------------------------------------------------------------------------- zones
class Zone:
    """A time zone: a fixed offset or a tz database region."""

    __slots__ = ("id", "fixed", "info")

    def __init__(self, zone_id: str, fixed: int | None = None, info: ZoneInfo | None = None) -> None:
        self.id = zone_id
        self.fixed = fixed  # milliseconds east of UTC
        self.info = info

    def offsets(self, utc_ms: int) -> tuple[int, int]:
        """(raw offset, DST offset) in ms at an instant."""
        if self.info is None:
            return self.fixed or 0, 0
        dt = _clamped(utc_ms).astimezone(self.info)
        total = dt.utcoffset()
        dst = dt.dst() or timedelta(0)
        total_ms = int(total.total_seconds() * 1000) if total is not None else 0
        dst_ms = int(dst.total_seconds() * 1000)
        return total_ms - dst_ms, dst_ms

    def _java_daylight(self, utc_ms: int) -> bool:
        """``TimeZone.inDaylightTime``: whether the JDK counts ``utc_ms`` as daylight time (see
        ``_NEGATIVE_DST_SINCE``)."""
        dst = self.offsets(utc_ms)[1]
        since = _NEGATIVE_DST_SINCE.get(self.id)
        if since is None or utc_ms < since:
            return dst > 0
        return dst == 0  # tzdata's standard time is the JDK's daylight time, its negative DST the JDK's standard

    def offset(self, utc_ms: int) -> int:
        if self.info is None:
            return self.fixed or 0
        raw, dst = self.offsets(utc_ms)
        return raw + dst

    def offset_by_wall(self, wall_ms: int) -> int:
        """The offset that applies to a local wall-clock time (the earlier one in a gap or overlap)."""
        if self.info is None:
            return self.fixed or 0
        naive = _clamped(wall_ms).replace(tzinfo=None)
        total = naive.replace(tzinfo=self.info).utcoffset()
        return int(total.total_seconds() * 1000) if total is not None else 0

    def name(self, utc_ms: int, long: bool) -> str:
        """``TimeZone.getDisplayName``: ``UTC``, ``IST``, ``PDT``, ``GMT+05:30``."""
        names = JAVA_ZONE_NAMES.get(self.id)
        if names is not None:
            return names[2 * long + self._java_daylight(utc_ms)]
        if self.info is not None:
            abbr = _clamped(utc_ms).astimezone(self.info).tzname() or ""
            if long:
                return _LONG_NAMES.get(abbr, abbr) if abbr and abbr[0] not in "+-" else _gmt(self.offset(utc_ms))
            if abbr and abbr[0] not in "+-":
                return abbr
            return _gmt(self.offset(utc_ms))
        if self.id in ("UTC", "GMT", "Z", "UT"):
            return "Coordinated Universal Time" if long and self.id != "GMT" else ("GMT" if self.id == "GMT" else "UTC")
        return _gmt(self.fixed or 0)


_LONG_NAMES = {
    "UTC": "Coordinated Universal Time", "GMT": "Greenwich Mean Time", "IST": "India Standard Time",
    "PST": "Pacific Standard Time", "PDT": "Pacific Daylight Time", "MST": "Mountain Standard Time",
    "MDT": "Mountain Daylight Time", "CST": "Central Standard Time", "CDT": "Central Daylight Time",
    "EST": "Eastern Standard Time", "EDT": "Eastern Daylight Time", "CET": "Central European Time",
    "CEST": "Central European Summer Time", "BST": "British Summer Time", "JST": "Japan Standard Time",
    "EET": "Eastern European Time", "EEST": "Eastern European Summer Time", "WET": "Western European Time",
}


#: Zones whose tzdata (the vanguard form Python's zoneinfo reads) counts a season as negative
#: daylight saving, from when: the JDK's tzdb is built from the rearguard form, where the higher
#: offset is the daylight one.  Ireland's winter GMT (its IST, tzdata's standard time, is the
#: JDK's daylight time, and so is the all-year IST of 1968-1971), Morocco's +00 in Ramadan (its
#: +01 the rest of the year), Namibia's winter WAT (the JDK keeps its CAT as daylight time from
#: 1990 on, the winters of 1994-2017 aside).
_NEGATIVE_DST_SINCE = {
    "Europe/Dublin": -37_242_000_000,  # 1968-10-26 23:00 UTC
    "Eire": -37_242_000_000,
    "Africa/Casablanca": 1_540_692_000_000,  # 2018-10-28 02:00 UTC
    "Africa/El_Aaiun": 1_540_692_000_000,
    "Africa/Windhoek": 637_970_400_000,  # 1990-03-20 22:00 UTC
}


def _gmt(offset_ms: int) -> str:
    sign = "-" if offset_ms < 0 else "+"
    minutes = abs(offset_ms) // 60000
    return f"GMT{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def _clamped(ms: int) -> datetime:
    # zoneinfo answers for years 1..9999; Java's calendar goes further.
    ms = min(max(ms, -62_135_596_800_000 + DAY_MS), 253_402_300_799_000 - DAY_MS)
    return _EPOCH + timedelta(milliseconds=ms)


UTC_ZONE = Zone("UTC", 0)

# java.time.ZoneId.SHORT_IDS
SHORT_IDS = {
    "ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare", "CNT": "America/St_Johns", "CST": "America/Chicago", "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix", "PRT": "America/Puerto_Rico",
    "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal", "VST": "Asia/Ho_Chi_Minh",
    "EST": "-05:00", "MST": "-07:00", "HST": "-10:00",
}

_OFFSET = re.compile(r"([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?")


def _parse_offset(text: str) -> int | None:
    m = _OFFSET.fullmatch(text)
    if m is None:
        return None
    hours, minutes, seconds = int(m.group(2)), int(m.group(3) or 0), int(m.group(4) or 0)
    if len(m.group(2)) == 1 and m.group(3) and ":" not in text:
        return None
    if hours > 18 or minutes > 59 or seconds > 59:
        return None
    total = ((hours * 60 + minutes) * 60 + seconds) * 1000
    return -total if m.group(1) == "-" else total


#: ZoneOffset.of's forms by length: where the hours, minutes and seconds are (None: absent)
_OFFSET_FORMS = {2: ((1, 2), None, None), 3: ((1, 3), None, None), 5: ((1, 3), (3, 5), None),
                 6: ((1, 3), (4, 6), None), 7: ((1, 3), (3, 5), (5, 7)), 9: ((1, 3), (4, 6), (7, 9))}


def _zone_offset(text: str) -> tuple[int, str] | None:
    """``ZoneOffset.of``: ``+h``, ``+hh``, ``+hhmm``, ``+hh:mm``, ``+hhmmss``, ``+hh:mm:ss`` (at most
    18 hours) as (milliseconds, the offset's normalized id: ``+02:00``, ``Z`` for zero)."""
    form = _OFFSET_FORMS.get(len(text))
    if text[:1] not in ("+", "-") or form is None:
        return None
    if len(text) in (6, 9) and text[3] != ":" or len(text) == 9 and text[6] != ":":
        return None
    parts = [text[span[0]:span[1]] if span else "0" for span in form]
    if not all(p.isascii() and p.isdigit() for p in parts):
        return None
    hours, minutes, seconds = (int(p) for p in parts)
    total = (hours * 60 + minutes) * 60 + seconds
    if minutes > 59 or seconds > 59 or total > 18 * 3600:
        return None
    if total == 0:
        return 0, "Z"
    sign = -1 if text[0] == "-" else 1
    return sign * total * 1000, f"{text[0]}{hours:02d}:{minutes:02d}" + (f":{seconds:02d}" if seconds else "")


@functools.lru_cache(maxsize=256)
def zone_of(zone_id: str, short_ids: bool = True) -> Zone:
    """``ZoneId.of(zone_id, ZoneId.SHORT_IDS)``; raises :class:`JavaTimeError` for an unknown id.

    An offset's id is normalized as Java's is (``GMT+2`` is ``GMT+02:00``, ``+5`` is ``+05:00``,
    ``+00:00`` is ``Z``): ``VV`` and ``z`` print it."""
    zid = SHORT_IDS.get(zone_id, zone_id) if short_ids else zone_id
    if zid in ("Z", "UTC", "GMT", "UT"):
        return Zone(zid, 0)
    if zid[:1] in "+-":
        parsed = _zone_offset(zid)
        if parsed is None:
            raise JavaTimeError(f"Invalid ID for ZoneOffset, invalid format: {zone_id}")
        return Zone(parsed[1], parsed[0])
    for prefix in ("UTC", "GMT", "UT"):
        if zid.startswith(prefix) and zid[len(prefix):len(prefix) + 1] in ("+", "-"):
            parsed = _zone_offset(zid[len(prefix):])
            if parsed is None:
                raise JavaTimeError(f"Invalid ID for offset-based ZoneId: {zone_id}")
            return Zone(prefix if parsed[0] == 0 else prefix + parsed[1], parsed[0])
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9~/._+-]+", zid):
        raise JavaTimeError(f"Invalid ID for region-based ZoneId, invalid format: {zone_id}")
    try:
        return Zone(zid, None, ZoneInfo(zid))
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise JavaTimeError(f"Unknown time-zone ID: {zone_id}") from None


def _timezone_named(name: str) -> Zone:
    """``TimeZone.getTimeZone(name)`` for the names FastDateParser accepts; unknown ids are GMT."""
    if name.startswith("GMT") and len(name) > 3:
        off = _parse_offset(name[3:])
        return Zone(name, off if off is not None else 0)
    try:
        return zone_of(name, short_ids=False)
    except JavaTimeError:
        return Zone("GMT", 0)


@functools.lru_cache(maxsize=1)
def default_zone() -> Zone:
    """The process's time zone, as the JVM picks its default: ``TZ``, else ``/etc/localtime``."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz:
        try:
            return zone_of(tz, short_ids=False)
        except JavaTimeError:
            return Zone("GMT", 0)
    try:
        target = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in target:
            key = target.split("zoneinfo/", 1)[1]
            return UTC_ZONE if key in ("UTC", "Etc/UTC", "Etc/UCT", "UCT", "Zulu", "Etc/Zulu") else zone_of(key, False)
    except (OSError, JavaTimeError):
        pass
    return UTC_ZONE


# ---------------------------------------------------------------------------- fields
class Fields:
    """The ``GregorianCalendar`` fields of an instant in a zone (months 0-based, as Java's)."""

    __slots__ = ("millis", "zone", "rules", "year", "month", "day", "epoch_day", "ms_of_day",
                 "raw_offset", "dst_offset")

    def __init__(self, millis: int, zone: Zone, rules: WeekRules = US_WEEK) -> None:
        self.millis = millis
        self.zone = zone
        self.rules = rules
        if zone.info is None:
            self.raw_offset, self.dst_offset = zone.fixed or 0, 0
        else:
            self.raw_offset, self.dst_offset = zone.offsets(millis)
        local = millis + self.raw_offset + self.dst_offset
        self.epoch_day, self.ms_of_day = divmod(local, DAY_MS)
        y, m, d = calendar_date(self.epoch_day)
        self.year, self.month, self.day = y, m - 1, d

    # the Calendar.get() values
    @property
    def era(self) -> int:
        return 1 if self.year > 0 else 0

    @property
    def year_of_era(self) -> int:
        return self.year if self.year > 0 else 1 - self.year

    @property
    def hour_of_day(self) -> int:
        return self.ms_of_day // 3_600_000

    @property
    def minute(self) -> int:
        return self.ms_of_day // 60_000 % 60

    @property
    def second(self) -> int:
        return self.ms_of_day // 1000 % 60

    @property
    def millisecond(self) -> int:
        return self.ms_of_day % 1000

    @property
    def day_of_week(self) -> int:
        return (self.epoch_day + 4) % 7 + 1

    @property
    def day_of_year(self) -> int:
        return self.epoch_day - calendar_days(self.year, 1, 1) + 1

    @property
    def _month_start(self) -> int:
        # the month's first day: in October 1582 the 1st (Julian) is 14 days before the 15th
        return calendar_days(self.year, self.month + 1, 1)

    @property
    def day_of_week_in_month(self) -> int:
        return (self.epoch_day - self._month_start) // 7 + 1

    @property
    def week_of_month(self) -> int:
        return _week_number(self._month_start, self.epoch_day, self.rules.first_day, self.rules.min_days)

    @property
    def week_of_year(self) -> int:
        fd, md = self.rules.first_day, self.rules.min_days
        jan1 = calendar_days(self.year, 1, 1)
        week = _week_number(jan1, self.epoch_day, fd, md)
        if week == 0:
            prev_jan1 = calendar_days(self.year - 1, 1, 1)
            return _week_number(prev_jan1, jan1 - 1, fd, md)
        # Java checks the next year's first week for weeks 52 and later, and in 1581 and 1582
        # (around the cutover, whose year is 10 days short) for every week
        if week >= 52 or _CUTOVER_YEAR - 1 <= self.year <= _CUTOVER_YEAR:
            next_jan1 = calendar_days(self.year + 1, 1, 1)
            first = _dow_on_or_before(next_jan1 + 6, fd)
            if first - next_jan1 >= md and self.epoch_day >= first - 7:
                return 1
        return week


def calendar_add(millis: int, unit: str, amount: int, zone: Zone) -> int:
    """``Calendar.add`` of ``amount`` ``unit``s (siddhi-execution-time's unit names).

    Java's arithmetic wraps: the year and month in ``int``s, the milliseconds in a ``long``
    (adding 2**31-1 years lands some 190 million years from now, not 2 billion)."""
    if unit in ("SECOND", "MINUTE", "HOUR"):
        return wrap_long(millis + amount * {"SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000}[unit])
    f = Fields(millis, zone)
    if unit in ("DAY", "WEEK"):
        delta = amount * (7 if unit == "WEEK" else 1)
        old_offset = f.raw_offset + f.dst_offset
        new = (f.epoch_day + delta) * DAY_MS + f.ms_of_day - old_offset
        change = old_offset - zone.offset(new)
        if change:
            adjusted = new + change
            if Fields(adjusted, zone).epoch_day == f.epoch_day + delta:
                new = adjusted
        return wrap_long(new)
    if unit in ("YEAR", "MONTH", "QUARTER"):
        # GregorianCalendar.add: the year of the era plus the amount (or the months' whole years),
        # the month plus the amount, all ints; the era flips where the year passes 0, which in
        # proleptic years is plain (wrapping) addition.  siddhi-execution-time multiplies a
        # QUARTER amount by 3 as an int too.
        if unit == "YEAR":
            y, m = wrap_int(f.year + amount), f.month
        else:
            months = wrap_int(f.month + (wrap_int(amount * 3) if unit == "QUARTER" else amount))
            y, m = wrap_int(f.year + months // 12), months % 12
        # pinDayOfMonth: the day is cut to the month's length, but in (the year of the era) 1582
        # Java takes the length of the month the day rolls into (June 31 is July 1, whose
        # length, 31, keeps the 31st): no day is cut there
        year_of_era = y if y > 0 else 1 - y
        d = f.day if year_of_era == _CUTOVER_YEAR else min(f.day, calendar_month_length(y, m + 1))
        wall = calendar_days(y, m + 1, d) * DAY_MS + f.ms_of_day
        return wrap_long(wall - zone.offset_by_wall(wall))
    return millis  # an unknown unit changes nothing, as in Siddhi


# ---------------------------------------------------------------------------- FastDateFormat
_PRINTER_LETTERS = set("GyMdhHmsSEDFwWakKzZ")
_PARSER_TOKEN = re.compile(r"D+|E+|F+|G+|H+|K+|M+|S+|W+|Z+|a+|d+|h+|k+|m+|s+|w+|y+|z+|''|'[^']++(?:''[^']*+)*+'"
                           r"|[^'A-Za-z]++")


def _printer_tokens(pattern: str) -> list[str]:
    """``FastDatePrinter.parseToken``: runs of one letter, or literal text (prefixed with ')."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c.isascii() and c.isalpha():
            j = i
            while j + 1 < n and pattern[j + 1] == c:
                j += 1
            out.append(pattern[i:j + 1])
            i = j + 1
            continue
        buf = ["'"]
        in_literal = False
        while i < n:
            c = pattern[i]
            if c == "'":
                if i + 1 < n and pattern[i + 1] == "'":
                    i += 1
                    buf.append(c)
                else:
                    in_literal = not in_literal
            elif not in_literal and c.isascii() and c.isalpha():
                break
            else:
                buf.append(c)
            i += 1
        out.append("".join(buf))
    return out


def _num(value: int, width: int) -> str:
    if width == 1:
        return str(value)
    if width == 2:
        return f"{value:02d}" if 0 <= value < 100 else str(value)
    return str(value).rjust(width, "0") if value >= 0 else str(value)


def _printer_rule(token: str) -> Any:
    c, n = token[0], len(token)
    if c == "'":
        text = token[1:]
        return lambda f: text
    if c not in _PRINTER_LETTERS:
        raise JavaTimeError(f"Illegal pattern component: {token}")
    if c == "G":
        return lambda f: ERAS[f.era]
    if c == "y":
        if n == 2:
            return lambda f: f"{f.year_of_era % 100:02d}"
        w = max(n, 4)
        return lambda f: _num(f.year_of_era, w)
    if c == "M":
        if n >= 4:
            return lambda f: MONTHS[f.month]
        if n == 3:
            return lambda f: SHORT_MONTHS[f.month]
        if n == 2:
            return lambda f: f"{f.month + 1:02d}"
        return lambda f: str(f.month + 1)
    if c == "E":
        names = WEEKDAYS if n >= 4 else SHORT_WEEKDAYS
        return lambda f: names[f.day_of_week - 1]
    if c == "a":
        return lambda f: AM_PM[f.hour_of_day >= 12]
    if c == "z":
        long = n >= 4
        return lambda f: f.zone.name(f.millis, long)
    if c == "Z":
        colon = n > 1

        def offset(f: Fields) -> str:
            total = (f.raw_offset + f.dst_offset) // 60000
            sign = "-" if total < 0 else "+"
            total = abs(total)
            return f"{sign}{total // 60:02d}{':' if colon else ''}{total % 60:02d}"

        return offset
    getters = {
        "d": lambda f: f.day, "H": lambda f: f.hour_of_day, "m": lambda f: f.minute, "s": lambda f: f.second,
        "S": lambda f: f.millisecond, "D": lambda f: f.day_of_year, "F": lambda f: f.day_of_week_in_month,
        "w": lambda f: f.week_of_year, "W": lambda f: f.week_of_month, "K": lambda f: f.hour_of_day % 12,
        "h": lambda f: f.hour_of_day % 12 or 12, "k": lambda f: f.hour_of_day or 24,
    }
    get = getters[c]
    return lambda f: _num(get(f), n)


# Parser strategies: (kind, field); kinds: num, text, zone, literal.
_NUMBER_FIELDS = {"D": "doy", "F": "dowim", "H": "hod24", "K": "hour", "S": "ms", "W": "wom", "d": "dom",
                  "h": "hour12", "k": "hod", "m": "minute", "s": "second", "w": "woy", "y": "year", "M": "month"}
_TEXT_VALUES = {
    "M": {**{m: i for i, m in enumerate(MONTHS)}, **{m: i for i, m in enumerate(SHORT_MONTHS)}},
    "E": {**{w: i + 1 for i, w in enumerate(WEEKDAYS)}, **{w: i + 1 for i, w in enumerate(SHORT_WEEKDAYS)}},
    "a": {"AM": 0, "PM": 1},
    "G": {"BC": 0, "AD": 1},
}
_TEXT_FIELD = {"M": "month", "E": "dow", "a": "ampm", "G": "era"}
_ZONE_NAMES = {
    "UTC": "UTC", "Coordinated Universal Time": "UTC", "GMT": "Europe/London", "Greenwich Mean Time": "GMT",
    "BST": "Europe/London", "British Summer Time": "Europe/London",
    "IST": "Asia/Kolkata", "India Standard Time": "Asia/Kolkata",
    "PST": "America/Los_Angeles", "PDT": "America/Los_Angeles", "Pacific Standard Time": "America/Los_Angeles",
    "Pacific Daylight Time": "America/Los_Angeles", "MST": "America/Denver", "MDT": "America/Denver",
    "Mountain Standard Time": "America/Denver", "Mountain Daylight Time": "America/Denver",
    "CST": "America/Chicago", "CDT": "America/Chicago", "Central Standard Time": "America/Chicago",
    "Central Daylight Time": "America/Chicago", "EST": "America/New_York", "EDT": "America/New_York",
    "Eastern Standard Time": "America/New_York", "Eastern Daylight Time": "America/New_York",
    "CET": "Europe/Paris", "CEST": "Europe/Paris", "Central European Time": "Europe/Paris",
    "Central European Summer Time": "Europe/Paris", "EET": "Europe/Athens", "EEST": "Europe/Athens",
    "WET": "Europe/Lisbon", "WEST": "Europe/Lisbon", "JST": "Asia/Tokyo", "Japan Standard Time": "Asia/Tokyo",
    "HST": "Pacific/Honolulu", "AKST": "America/Anchorage", "AKDT": "America/Anchorage",
    "AEST": "Australia/Sydney", "AEDT": "Australia/Sydney", "SGT": "Asia/Singapore",
}
_ZONE_REGEX = ("(GMT[+\\-]\\d{0,1}\\d{2}|[+\\-]\\d{2}:?\\d{2}|"
               + "|".join(re.escape(k) for k in sorted(_ZONE_NAMES, key=lambda k: k.lower())) + ")")


def _parser_strategy(token: str) -> tuple[str, Any]:
    c = token[0]
    if c == "'":
        text = token[1:-1] if len(token) > 2 else token
        return "literal", text.replace("''", "'") if len(token) > 2 else "'"
    if c in ("z", "Z"):
        return "zone", None
    if c in "EGa" or (c == "M" and len(token) >= 3):
        return "text", c
    if c in _NUMBER_FIELDS:
        if c == "y":
            return "num", "year" if len(token) > 2 else "year2"
        return "num", _NUMBER_FIELDS[c]
    return "literal", token


class DateFormat:
    """``FastDateFormat.getInstance(pattern)`` in a zone: ``format(ms)`` and ``parse(text) -> ms``."""

    def __init__(self, pattern: str, zone: Zone | None = None) -> None:
        self.pattern = pattern
        self.zone = zone
        self._rules = [_printer_rule(t) for t in _printer_tokens(pattern)]
        self._strategies, self._regex = self._build_parser(pattern)

    @staticmethod
    def _build_parser(pattern: str) -> tuple[list[tuple[str, Any]], re.Pattern[str]]:
        tokens: list[str] = []
        pos = 0
        while pos < len(pattern):
            m = _PARSER_TOKEN.match(pattern, pos)
            if m is None:
                if pos == 0:
                    raise JavaTimeError(f"Illegal pattern character '{pattern[0]}'")
                raise JavaTimeError(f'Failed to parse "{pattern}" ; gave up at index {pos}')
            tokens.append(m.group())
            pos = m.end()
        strategies = [(_parser_strategy(t), t) for t in tokens]
        regex: list[str] = []
        groups: list[tuple[str, Any]] = []
        for i, ((kind, arg), token) in enumerate(strategies):
            if kind == "literal":
                regex.append(re.escape(arg))
                continue
            if kind == "num":
                nxt = strategies[i + 1] if i + 1 < len(strategies) else None
                next_is_number = nxt is not None and (
                    nxt[0][0] == "num" or (nxt[0][0] == "literal" and nxt[1].lstrip("'")[:1].isdigit()))
                regex.append(f"(\\d{{{len(token)}}})" if next_is_number else "(\\d++)")
            elif kind == "text":
                names = sorted(_TEXT_VALUES[arg], key=len, reverse=True)
                regex.append("(" + "|".join(re.escape(x) for x in names) + ")")
            else:
                regex.append(_ZONE_REGEX)
            groups.append((kind, arg))
        return groups, re.compile("".join(regex))

    def format(self, millis: int) -> str:
        f = Fields(millis, self.zone or default_zone())
        return "".join(rule(f) for rule in self._rules)

    def parse(self, text: str) -> int:
        """Milliseconds of ``text`` (a prefix match, like ``FastDateFormat.parse``)."""
        m = self._regex.match(text)
        if m is None:
            raise JavaTimeError(f'Unparseable date: "{text}" does not match {self._regex.pattern}')
        values: dict[str, int] = {}  # insertion order = Calendar.set order (the stamps)
        zone = self.zone or default_zone()
        for (kind, arg), value in zip(self._strategies, m.groups(), strict=True):
            if kind == "num":
                number = int(value)
                if number > 2**31 - 1:
                    raise JavaTimeError(f'For input string: "{value}"')
                field = arg
                if arg == "year2":
                    field, number = "year", _adjust_year(number) if number < 100 else number
                elif arg == "month":
                    number -= 1
                elif arg == "hod24":
                    field, number = "hod", number % 24
                elif arg == "hour12":
                    field, number = "hour", number % 12
                values.pop(field, None)
                values[field] = number
            elif kind == "text":
                field = _TEXT_FIELD[arg]
                values.pop(field, None)
                values[field] = _TEXT_VALUES[arg][value]
            else:
                zone = _parsed_zone(value)
        return resolve(values, zone)


def _parsed_zone(value: str) -> Zone:
    if value[0] in "+-":
        return _timezone_named("GMT" + value)
    if value.startswith("GMT") and len(value) > 3:
        return _timezone_named(value)
    for name, zid in _ZONE_NAMES.items():
        if name.lower() == value.lower():
            return zone_of(zid, short_ids=False)
    raise JavaTimeError(f"{value} is not a supported timezone name")


def _adjust_year(two_digits: int) -> int:
    start = _time.gmtime().tm_year - 80
    century = start // 100 * 100
    trial = century + two_digits
    return trial if two_digits >= start - century else trial + 100


def resolve(values: dict[str, int], zone: Zone, rules: WeekRules = US_WEEK) -> int:
    """Lenient ``GregorianCalendar.computeTime`` of the fields set, in the order they were set."""
    order = {k: i + 1 for i, k in enumerate(values)}  # stamps; 0 = unset

    def stamp(k: str) -> int:
        return order.get(k, 0)

    def agg(a: int, b: int) -> int:
        return 0 if a == 0 or b == 0 else max(a, b)

    dow, month, dom = stamp("dow"), stamp("month"), stamp("dom")
    wom, dowim_s, doy, woy = agg(stamp("wom"), dow), agg(stamp("dowim"), dow), stamp("doy"), agg(stamp("woy"), dow)
    best = max(dom, wom, dowim_s, doy, woy)
    if best == 0:
        wom, dowim_s, woy = stamp("wom"), max(stamp("dowim"), dow), stamp("woy")
        best = max(wom, dowim_s, woy)
        if best == 0:
            best = dom = month
    use: set[str] = set()
    if best == dom or (best == wom and stamp("wom") >= stamp("woy")) or (
            best == dowim_s and stamp("dowim") >= stamp("woy")):
        use.add("month")
        if best == dom:
            use.add("dom")
        else:
            if dow:
                use.add("dow")
            if wom == dowim_s:
                use.add("wom" if stamp("wom") >= stamp("dowim") else "dowim")
            elif best == wom:
                use.add("wom")
            elif stamp("dowim"):
                use.add("dowim")
    elif best == doy:
        use.add("doy")
    else:
        if dow:
            use.add("dow")
        use.add("woy")

    year = values.get("year", 1970)
    if values.get("era", 1) == 0:
        year = 1 - year
    hod_s, hour_s = stamp("hod"), agg(stamp("hour"), stamp("ampm"))
    if max(hod_s, hour_s) == 0 and max(stamp("hour"), stamp("ampm")) == 0:
        time_of_day = 0
    elif hod_s >= hour_s and hod_s:
        time_of_day = values["hod"]
    else:
        time_of_day = values.get("hour", 0) + (12 * values.get("ampm", 0) if "ampm" in values else 0)
    time_of_day = ((time_of_day * 60 + values.get("minute", 0)) * 60 + values.get("second", 0)) * 1000 \
        + values.get("ms", 0)
    day, time_of_day = divmod(time_of_day, DAY_MS)

    first_dow, min_days = rules.first_day, rules.min_days
    if "month" in use:
        y, m = divmod(year * 12 + values.get("month", 0), 12)

        def month_based(julian: bool) -> int:
            base = (_julian_days if julian else days_from_civil)(y, m + 1, 1)
            if "dom" in use:
                return base + values.get("dom", 1) - 1
            if "wom" in use:
                first = _dow_on_or_before(base + 6, first_dow)
                if first - base >= min_days:
                    first -= 7
                if "dow" in use:
                    first = _dow_on_or_before(first + 6, values["dow"])
                return first + 7 * (values["wom"] - 1)
            target = values["dow"] if "dow" in use else first_dow
            dowim = values["dowim"] if "dowim" in use else 1
            if dowim >= 0:
                return _dow_on_or_before(base + 7 * dowim - 1, target)
            length = 29 if julian and m == 1 and y % 4 == 0 else month_length(y, m + 1)
            return _dow_on_or_before(base + length + 7 * (dowim + 1) - 1, target)

        # GregorianCalendar.computeTime reckons a date from its month in both calendars around
        # the cutover (days carried over from the time of day included) and takes the Gregorian
        # one if it falls on or after 1582-10-15 (so in October 1582 the third Saturday is the
        # 16th, of the Gregorian month)
        base = month_based(True) if year < _CUTOVER_YEAR else month_based(False)
        if base + day < CUTOVER_DAY and year >= _CUTOVER_YEAR:
            base = month_based(True)
    else:
        base = calendar_days(year, 1, 1)
        if "doy" in use:
            base += values["doy"] - 1
        else:
            first = _dow_on_or_before(base + 6, first_dow)
            if first - base >= min_days:
                first -= 7
            if "dow" in use and values["dow"] != first_dow:
                first = _dow_on_or_before(first + 6, values["dow"])
            base = first + 7 * (values.get("woy", 1) - 1)
    wall = (base + day) * DAY_MS + time_of_day
    return wrap_long(wall - zone.offset_by_wall(wall))  # computeTime's long arithmetic


@functools.lru_cache(maxsize=512)
def date_format(pattern: str, zone_id: str | None = None) -> DateFormat:
    """A cached :class:`DateFormat` (``FastDateFormat.getInstance`` caches too)."""
    return DateFormat(pattern, zone_of(zone_id, False) if zone_id else None)


# ---------------------------------------------------------------------------- java.time patterns
_DTF_TOKEN = re.compile(r"'(?:[^']|'')*'|''|([A-Za-z])\1*|\[|\]|.", re.S)
_DTF_LETTERS = set("GuyDMLdQqYwWEecFaBhKkHmsSAnNVvzOXxZp")


#: the zone names DateTimeFormatter reads for z, zz, zzz (short) and zzzz (long), besides ids
_ZONE_NAME_REGEX = {long: "|".join(re.escape(name) for name in sorted(
    {name for names in JAVA_ZONE_NAMES.values() for name in names[2 * long:2 * long + 2]}, key=len, reverse=True))
    for long in (False, True)}


_ZONE_NAMES_READ = {f"zone_{style}": {name for names in JAVA_ZONE_NAMES.values() for name in names[i:i + 2]}
                    for style, i in (("short", 0), ("long", 2))}


class TimeFormatter:
    """The ``DateTimeFormatter.ofPattern`` subset ``timezoneConvert`` needs.

    ``parse_local`` reads a local date-time (the whole text must match; an offset or zone in
    the text is read and ignored, as ``LocalDateTime.parse`` does); ``format`` prints an instant
    in a zone.
    """

    def __init__(self, pattern: str) -> None:
        self.tokens: list[str] = []
        for m in _DTF_TOKEN.finditer(pattern):
            tok = m.group()
            if tok[0].isascii() and tok[0].isalpha():
                if tok[0] not in _DTF_LETTERS:
                    raise JavaTimeError(f"Unknown pattern letter: {tok[0]}")
            self.tokens.append(tok)
        self._regex, self._fields = self._build()

    def _build(self) -> tuple[re.Pattern[str], list[tuple[str, int]]]:
        parts: list[str] = []
        fields: list[tuple[str, int]] = []
        for tok in self.tokens:
            c, n = tok[0], len(tok)
            if c == "'":
                parts.append(re.escape("'" if tok == "''" else tok[1:-1].replace("''", "'")))
            elif c in "[]":
                continue  # optional sections: treated as required (the common use is none)
            elif not (c.isascii() and c.isalpha()):
                parts.append(re.escape(tok))
            elif c in "yu":
                parts.append(r"(\d{2})" if n == 2 else rf"([+-]?\d{{{n},19}})" if n != 1 else r"([+-]?\d+)")
                fields.append(("year2" if n == 2 else "year", n))
            elif c in "ML" and n >= 3:
                names = MONTHS if n >= 4 else SHORT_MONTHS
                parts.append("(" + "|".join(names) + ")")
                fields.append(("month_text", n))
            elif c == "E" or (c in "ec" and n >= 3):
                names = WEEKDAYS if n == 4 else SHORT_WEEKDAYS
                parts.append("(" + "|".join(names) + ")")
                fields.append(("ignore", n))
            elif c == "a":
                parts.append("(AM|PM)")
                fields.append(("ampm", n))
            elif c == "S":
                parts.append(rf"(\d{{{n}}})")
                fields.append(("fraction", n))
            elif c in "MLdHhKkmsD":
                parts.append(r"(\d+)" if n == 1 else rf"(\d{{{n}}})")
                fields.append(({"M": "month", "L": "month", "d": "dom", "H": "hod", "h": "h12", "K": "k11",
                                "k": "k24", "m": "minute", "s": "second", "D": "doy"}[c], n))
            elif c in "ZXxO":
                parts.append(r"(Z|GMT(?:[+-]\d{1,2}(?::?\d{2})?)?|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)")
                fields.append(("ignore", n))
            elif c in "Vz":  # a zone id or, for z, a short name (zzzz: a long one, with blanks)
                zone_names = _ZONE_NAME_REGEX[n >= 4] + "|" if c == "z" else ""
                parts.append("(" + zone_names + r"[A-Za-z][A-Za-z0-9~/._+:-]*)")
                fields.append(("zone" if c == "V" else "zone_long" if n >= 4 else "zone_short", n))
            else:
                raise JavaTimeError(f"pattern letter '{c}' is not supported by time:timezoneConvert")
        return re.compile("".join(parts)), fields

    def parse_local(self, text: str) -> int:
        """Wall-clock milliseconds (as if UTC) of a local date-time text."""
        m = self._regex.fullmatch(text)
        if m is None:
            raise JavaTimeError(f"Text '{text}' could not be parsed")
        v: dict[str, int] = {}
        for (field, n), raw in zip(self._fields, m.groups(), strict=True):
            if field == "ignore":
                continue
            if field.startswith("zone"):  # read and dropped, but a name or an id Java knows
                if raw not in _ZONE_NAMES_READ.get(field, ()):
                    try:
                        zone_of(raw, short_ids=False)
                    except JavaTimeError:
                        raise JavaTimeError(f"Text '{text}' could not be parsed: unknown zone {raw}") from None
                continue
            if field == "month_text":
                v["month"] = (MONTHS if n >= 4 else SHORT_MONTHS).index(raw) + 1
            elif field == "ampm":
                v["ampm"] = AM_PM.index(raw)
            elif field == "fraction":
                v["ms"] = int(raw.ljust(3, "0")[:3])
            elif field == "year2":
                v["year"] = 2000 + int(raw)
            else:
                v[field] = int(raw)
        if "year" not in v or not ("month" in v and "dom" in v or "doy" in v):
            raise JavaTimeError(f"Text '{text}' could not be parsed: unable to obtain a LocalDateTime")
        if "hod" in v:
            hour = v["hod"]
        elif "k24" in v:
            hour = v["k24"] % 24
        elif "h12" in v or "k11" in v:
            if "ampm" not in v:
                raise JavaTimeError(f"Text '{text}' could not be parsed: unable to obtain a LocalDateTime")
            hour = (v["h12"] % 12 if "h12" in v else v["k11"]) + 12 * v["ampm"]
        else:
            raise JavaTimeError(f"Text '{text}' could not be parsed: unable to obtain a LocalDateTime")
        minute, second, ms = v.get("minute", 0), v.get("second", 0), v.get("ms", 0)
        if hour > 24 or minute > 59 or second > 59 or (hour == 24 and (minute or second or ms)):
            raise JavaTimeError(f"Text '{text}' could not be parsed: invalid time")
        if "doy" in v:
            if not 1 <= v["doy"] <= (366 if is_leap(v["year"]) else 365):
                raise JavaTimeError(f"Text '{text}' could not be parsed: invalid day of year")
            day = days_from_civil(v["year"], 1, 1) + v["doy"] - 1
        else:
            if not 1 <= v["month"] <= 12 or not 1 <= v["dom"] <= 31:
                raise JavaTimeError(f"Text '{text}' could not be parsed: invalid date")
            # the SMART resolver moves day 29..31 of a shorter month to its last day
            day = days_from_civil(v["year"], v["month"], min(v["dom"], month_length(v["year"], v["month"])))
        return day * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 + ms

    def format(self, utc_ms: int, zone: Zone) -> str:
        f = Fields(utc_ms, zone)
        out: list[str] = []
        for tok in self.tokens:
            c, n = tok[0], len(tok)
            if c == "'":
                out.append("'" if tok == "''" else tok[1:-1].replace("''", "'"))
            elif c in "[]":
                continue
            elif not (c.isascii() and c.isalpha()):
                out.append(tok)
            elif c in "yu":
                year = f.year if c == "u" else f.year_of_era
                out.append(f"{year % 100:02d}" if n == 2 else str(year).rjust(n, "0"))
            elif c in "ML":
                out.append(MONTHS[f.month] if n >= 4 else SHORT_MONTHS[f.month] if n == 3 else str(f.month + 1).rjust(n, "0"))
            elif c in "Eec":
                out.append(WEEKDAYS[f.day_of_week - 1] if n == 4 else SHORT_WEEKDAYS[f.day_of_week - 1])
            elif c == "a":
                out.append(AM_PM[f.hour_of_day >= 12])
            elif c == "S":
                out.append(f"{f.millisecond:03d}".ljust(n, "0")[:n])
            elif c in "dHhKkmsD":
                value = {"d": f.day, "H": f.hour_of_day, "h": f.hour_of_day % 12 or 12, "K": f.hour_of_day % 12,
                         "k": f.hour_of_day or 24, "m": f.minute, "s": f.second, "D": f.day_of_year}[c]
                out.append(str(value).rjust(n, "0"))
            elif c in "ZXxO":
                out.append(_offset_text(f.raw_offset + f.dst_offset, c, n))
            elif c == "V":
                out.append(zone.id)
            elif c == "z":  # an offset's name is its id (``+05:30``, ``GMT+02:00``)
                out.append(zone.name(utc_ms, n >= 4) if zone.info is not None or zone.id in JAVA_ZONE_NAMES else zone.id)
            else:
                raise JavaTimeError(f"pattern letter '{c}' is not supported by time:timezoneConvert")
        return "".join(out)


def _offset_text(offset_ms: int, letter: str, n: int) -> str:
    total = offset_ms // 1000
    sign = "-" if total < 0 else "+"
    total = abs(total)
    hh, mm, ss = total // 3600, total // 60 % 60, total % 60
    if letter == "O":
        if total == 0:
            return "GMT"
        return f"GMT{sign}{hh}" + (f":{mm:02d}" if mm else "") if n == 1 else f"GMT{sign}{hh:02d}:{mm:02d}"
    if letter == "X" and total == 0:
        return "Z"
    if letter == "Z":
        if n <= 3:
            return f"{sign}{hh:02d}{mm:02d}"
        if n == 4:
            return "GMT" if total == 0 else f"GMT{sign}{hh:02d}:{mm:02d}"
        return "Z" if total == 0 else f"{sign}{hh:02d}:{mm:02d}"
    # X / x
    if n == 1:
        return f"{sign}{hh:02d}" + (f"{mm:02d}" if mm else "")
    if n in (2, 4):
        return f"{sign}{hh:02d}{mm:02d}" + (f"{ss:02d}" if n == 4 and ss else "")
    return f"{sign}{hh:02d}:{mm:02d}" + (f":{ss:02d}" if n == 5 and ss else "")


@functools.lru_cache(maxsize=256)
def time_formatter(pattern: str) -> TimeFormatter:
    """A cached :class:`TimeFormatter`."""
    return TimeFormatter(pattern)
