"""The ``time:`` namespace: Siddhi's siddhi-execution-time, as built-in extensions.

The thirteen functions of siddhi-execution-time 5.x with Siddhi's parameters, overloads,
return types and null handling.  Dates are read and written with Java's ``SimpleDateFormat``
pattern letters through a reproduction of commons-lang's ``FastDateFormat`` and Java's lenient
``GregorianCalendar`` (see :mod:`srota.engine.extensions._javatime`): ``yyyy-MM-DD`` reads a
day of the year, ``MM`` of 13 rolls into the next year, text after the pattern is ignored,
``extract(... 'WEEK' ...)`` counts weeks by the locale's rules (en_US by default), and
``extract(..., 'th_TH')`` years in the Buddhist era, as ``Calendar.getInstance(locale)`` does.
The default time zone is the process's (``TZ`` or ``/etc/localtime``), as the JVM's is, and the
default date format is ``yyyy-MM-dd HH:mm:ss.SSS``.  A date that does not match its format, an invalid
pattern or zone is an error: the event is dropped and logged (or goes to the fault stream), as
Siddhi does.  ``currentDate``/``currentTime``/``currentTimestamp``/``utcTimestamp`` and
``timestampInMilliseconds()`` read the wall clock, as Siddhi's do (not the app's playback clock).

Siddhi's quirks kept on purpose (its results are the contract):

* ``dateAdd(timestamp, expr, unit)`` compares the unit case-sensitively (``'hour'`` adds
  nothing) while the string forms and ``dateSub`` upper-case it;
* ``dateDiff`` returns a ``long`` (whole days, truncated toward zero);
* ``date(value)`` with one argument returns null (only ``date(value, format)`` extracts);
* ``timestampInMilliseconds(null)`` returns the current time, ``utcTimestamp(null)`` is an
  error;
* ``unit`` and ``locale`` must be constants; an unknown unit extracts 0 and adds nothing.
"""
from __future__ import annotations

import time as _time
from typing import Any

from srota.engine.expression import ArgInfo
from srota.engine.extensions._checks import INT, LONG, STRING, function
from srota.engine.extensions._checks import err as creation_error
from srota.engine.extensions._javatime import (
    DAY_MS,
    UTC_ZONE,
    WEEKDAYS,
    DateFormat,
    Fields,
    JavaTimeError,
    calendar_add,
    date_format,
    default_zone,
    time_formatter,
    week_rules,
    zone_of,
)
from srota.engine.registry import Param
from srota.engine.types import wrap_int
from srota.grammar.model import AttrType

_NS = "time"
DEFAULT_FORMAT = "yyyy-MM-dd HH:mm:ss.SSS"
_S, _L, _I = AttrType.STRING, AttrType.LONG, AttrType.INT


class TimeFunctionError(ValueError):
    """A time function failed on its input (Siddhi's SiddhiAppRuntimeException)."""


def _now() -> int:
    return _time.time_ns() // 1_000_000


def _p(name: str, types: tuple[AttrType, ...], doc: str, dynamic: bool = True, **kw: Any) -> Param:
    return Param(name, types, dynamic=dynamic, doc=doc, **kw)


def _format(pattern: str) -> DateFormat:
    try:
        return date_format(pattern)
    except JavaTimeError as exc:
        raise TimeFunctionError(str(exc)) from None


def _parse(text: str, pattern: str) -> int:
    """Milliseconds of ``text`` in ``pattern`` (default zone), with Siddhi's error message."""
    fmt = _format(pattern)
    try:
        return fmt.parse(text)
    except JavaTimeError as exc:
        raise TimeFunctionError(f"Provided format {pattern} does not match with the timestamp {text}. {exc}") from None


def _unit(info: ArgInfo) -> str:
    return str(info.value).upper()


_DATE_VALUE = "The date, e.g. `2014-11-11 13:23:44.657`, `2014-11-11`, `13:23:44.657`."
_DATE_FORMAT = "The format of date.value (SimpleDateFormat letters), e.g. `yyyy-MM-dd HH:mm:ss.SSS`."
_MILLIS = "The date as milliseconds since the epoch, e.g. `1415712224000L`."
_UNIT = "The part of the date: `SECOND`, `MINUTE`, `HOUR`, `DAY`, `WEEK`, `MONTH`, `QUARTER` or `YEAR` (a constant)."
_OPTIONAL_FORMAT = _p("date.format", STRING, _DATE_FORMAT, optional=True, default=f"`{DEFAULT_FORMAT}`")


# ---------------------------------------------------------------------------- clock functions
def _clock_function(name: str, pattern: str, doc: str, example: str) -> None:
    @function(_NS, name, (), overloads=((),), returns=_S, doc=doc, examples=((f"time:{name}()", example),))
    def _build(infos: list[ArgInfo], ctx: Any) -> Any:
        fmt = _format(pattern)
        return _S, lambda: fmt.format(_now())


_clock_function("currentDate", "yyyy-MM-dd", "The system date in `yyyy-MM-dd` format.", "Returns e.g. `2019-06-21`.")
_clock_function("currentTime", "HH:mm:ss", "The system time in `HH:mm:ss` format.", "Returns e.g. `15:23:24`.")


@function(_NS, "currentTimestamp",
          (_p("timezone", STRING, "The zone to show the time in, e.g. `Asia/Kolkata`, `PST` (a constant).",
              dynamic=False, optional=True, default="System timezone"),),
          overloads=((), ("timezone",)), returns=_S,
          doc="The system time in `yyyy-MM-dd HH:mm:ss` format, in the system zone or the given one.",
          examples=(("time:currentTimestamp()", "Returns e.g. `2019-03-31 14:07:00`."),
                    ("time:currentTimestamp('Asia/Kolkata')", "The same instant in Asia/Kolkata.")))
def _current_timestamp(infos: list[ArgInfo], ctx: Any) -> Any:
    local = _format("yyyy-MM-dd HH:mm:ss")
    if not infos:
        return _S, lambda: local.format(_now())
    zoned = time_formatter("yyyy-MM-dd HH:mm:ss")

    def current_timestamp(zone: Any) -> Any:
        if zone is None:
            return local.format(_now())
        try:
            return zoned.format(_now(), zone_of(zone))
        except JavaTimeError as exc:
            raise TimeFunctionError(f"Provided time zone {zone} is invalid. {exc}") from None

    return _S, current_timestamp


@function(_NS, "utcTimestamp",
          (_p("date.format", STRING, "The format of the result (SimpleDateFormat letters).", optional=True,
              default="`yyyy-MM-dd HH:mm:ss`"),),
          overloads=((), ("date.format",)), returns=_S,
          doc="The system time in UTC, in `yyyy-MM-dd HH:mm:ss` or the given format.",
          examples=(("time:utcTimestamp()", "Returns e.g. `2019-07-03 09:58:34`."),))
def _utc_timestamp(infos: list[ArgInfo], ctx: Any) -> Any:
    if not infos:
        fmt = DateFormat("yyyy-MM-dd HH:mm:ss", UTC_ZONE)
        return _S, lambda: fmt.format(_now())

    def utc_timestamp(pattern: Any) -> Any:
        if pattern is None:  # Siddhi has no format to use here and fails
            raise TimeFunctionError("time:utcTimestamp() got a null date.format")
        try:
            return date_format(pattern, "UTC").format(_now())
        except JavaTimeError as exc:
            raise TimeFunctionError(str(exc)) from None

    return _S, utc_timestamp


@function(_NS, "timestampInMilliseconds",
          (_p("date.value", STRING, _DATE_VALUE, optional=True, default="Current system time"),
           _OPTIONAL_FORMAT),
          overloads=((), ("date.value", "date.format"), ("date.value",)), returns=_L,
          doc="The system time, or the given date, in milliseconds since the epoch.",
          examples=(("time:timestampInMilliseconds()", "The current time in milliseconds."),
                    ("time:timestampInMilliseconds('2007-11-30 10:30:19.000')", "Returns `1196418619000` in UTC.")))
def _timestamp_in_milliseconds(infos: list[ArgInfo], ctx: Any) -> Any:
    if not infos:
        return _L, _now
    if len(infos) == 1:
        def timestamp_of(value: Any) -> Any:
            return _now() if value is None else _parse(value, DEFAULT_FORMAT)

        return _L, timestamp_of

    def timestamp_in(value: Any, pattern: Any) -> Any:
        if value is None or pattern is None:
            return None
        return _parse(value, pattern)

    return _L, timestamp_in


# ---------------------------------------------------------------------------- dateAdd / dateSub
def _date_shift(name: str, sign: int, doc: str, examples: tuple[tuple[str, str], ...]) -> None:
    params = (
        _p("date.value", STRING, _DATE_VALUE, optional=True, default="-"),
        _p("expr", INT, "The amount to add (or subtract), e.g. `2`."),
        _p("unit", STRING, _UNIT, dynamic=False),
        _OPTIONAL_FORMAT,
        _p("timestamp.in.milliseconds", LONG, _MILLIS, optional=True, default="-"),
    )
    overloads = (("date.value", "expr", "unit"), ("timestamp.in.milliseconds", "expr", "unit"),
                 ("date.value", "expr", "unit", "date.format"))

    @function(_NS, name, params, overloads=overloads, returns=_S, pure=True, doc=doc, examples=examples)
    def _build(infos: list[ArgInfo], ctx: Any) -> Any:
        unit = _unit(infos[2])
        if infos[0].type is AttrType.LONG:
            # Siddhi's dateAdd reads the unit of the millisecond form as given (case-sensitive).
            millis_unit = str(infos[2].value) if sign > 0 else unit

            def shift_millis(millis: Any, amount: Any, _unit: Any) -> Any:
                if millis is None or amount is None:
                    return None
                return str(calendar_add(millis, millis_unit, wrap_int(sign * amount), default_zone()))

            return _S, shift_millis

        def shift(value: Any, amount: Any, _unit: Any, pattern: Any = DEFAULT_FORMAT) -> Any:
            if value is None or amount is None or pattern is None:
                return None
            millis = _parse(value, pattern)
            return _format(pattern).format(calendar_add(millis, unit, wrap_int(sign * amount), default_zone()))

        return _S, shift


_date_shift("dateAdd", 1, "Adds expr units to a date; the result is in the date's format, or milliseconds "
                          "as a string for the millisecond form.",
            (("time:dateAdd('2014-11-11 13:23:44.657', 5, 'YEAR', 'yyyy-MM-dd HH:mm:ss.SSS')",
              "Returns `2019-11-11 13:23:44.657`."),
             ("time:dateAdd(1415712224000L, 1, 'HOUR')", "Returns `1415715824000`.")))
_date_shift("dateSub", -1, "Subtracts expr units from a date; the result is in the date's format, or "
                           "milliseconds as a string for the millisecond form.",
            (("time:dateSub('2019-11-11 13:23:44.657', 5, 'YEAR', 'yyyy-MM-dd HH:mm:ss.SSS')",
              "Returns `2014-11-11 13:23:44.657`."),
             ("time:dateSub(1415715824000L, 1, 'HOUR')", "Returns `1415712224000`.")))


# ---------------------------------------------------------------------------- dateDiff
@function(_NS, "dateDiff",
          (_p("date.value1", STRING, "The first date.", optional=True, default="-"),
           _p("date.value2", STRING, "The second date.", optional=True, default="-"),
           _p("date.format1", STRING, "The format of date.value1.", optional=True, default=f"`{DEFAULT_FORMAT}`"),
           _p("date.format2", STRING, "The format of date.value2.", optional=True, default=f"`{DEFAULT_FORMAT}`"),
           _p("timestamp.in.milliseconds1", LONG, "The first date in milliseconds.", optional=True, default="-"),
           _p("timestamp.in.milliseconds2", LONG, "The second date in milliseconds.", optional=True, default="-")),
          overloads=(("date.value1", "date.value2", "date.format1", "date.format2"), ("date.value1", "date.value2"),
                     ("timestamp.in.milliseconds1", "timestamp.in.milliseconds2")),
          returns=_L, pure=True, doc="The days from the second date to the first (whole days, truncated; a long).",
          examples=(("time:dateDiff('2014-11-11 13:23:44', '2014-11-9 13:23:44', 'yyyy-MM-dd HH:mm:ss', "
                     "'yyyy-MM-dd HH:mm:ss')", "Returns `2`."),
                    ("time:dateDiff(1415692424000L, 1412841224000L)", "Returns `33`.")))
def _date_diff(infos: list[ArgInfo], ctx: Any) -> Any:
    def days(diff: int) -> int:
        return abs(diff) // DAY_MS * (1 if diff >= 0 else -1)

    if infos[0].type is AttrType.LONG:
        return _L, lambda a, b: None if a is None or b is None else days(a - b)

    def date_diff(a: Any, b: Any, fa: Any = DEFAULT_FORMAT, fb: Any = DEFAULT_FORMAT) -> Any:
        if a is None or b is None or fa is None or fb is None:
            return None
        return days(_parse(a, fa) - _parse(b, fb))

    return _L, date_diff


# ---------------------------------------------------------------------------- dateFormat
@function(_NS, "dateFormat",
          (_p("date.value", STRING, _DATE_VALUE, optional=True, default="-"),
           _p("date.target.format", STRING, "The format to write the date in, e.g. `yyyy/MM/dd HH:mm:ss`."),
           _p("date.source.format", STRING, "The format of date.value.", optional=True,
              default=f"`{DEFAULT_FORMAT}`"),
           _p("timestamp.in.milliseconds", LONG, _MILLIS, optional=True, default="-")),
          overloads=(("date.value", "date.target.format", "date.source.format"), ("date.value", "date.target.format"),
                     ("timestamp.in.milliseconds", "date.target.format")),
          returns=_S, pure=True, doc="Writes a date (a string in date.source.format, or milliseconds) in date.target.format.",
          examples=(("time:dateFormat('2014/11/11 13:23:44', 'mm:ss', 'yyyy/MM/dd HH:mm:ss')", "Returns `23:44`."),
                    ("time:dateFormat(1415692424000L, 'yyyy-MM-dd')", "Returns `2014-11-11`.")))
def _date_format(infos: list[ArgInfo], ctx: Any) -> Any:
    if infos[0].type is AttrType.LONG:
        def format_millis(millis: Any, target: Any) -> Any:
            if millis is None or target is None:
                return None
            return _format(target).format(millis)

        return _S, format_millis

    def date_format_(value: Any, target: Any, source: Any = DEFAULT_FORMAT) -> Any:
        if value is None or target is None or source is None:
            return None
        millis = _parse(value, source)
        return _format(target).format(millis)

    return _S, date_format_


# ---------------------------------------------------------------------------- extract / date / dayOfWeek
def _extractor(unit: str, locale: str | None) -> Any:
    rules = week_rules(locale)
    # Calendar.getInstance(th_TH) is a BuddhistCalendar: its YEAR is the year of the era plus 543
    year_offset = 543 if locale is not None and locale.split("_")[:2] == ["th", "TH"] else 0
    getters = {
        "YEAR": lambda f: f.year_of_era + year_offset, "MONTH": lambda f: f.month + 1, "SECOND": lambda f: f.second,
        "MINUTE": lambda f: f.minute, "HOUR": lambda f: f.hour_of_day, "DAY": lambda f: f.day,
        "WEEK": lambda f: f.week_of_year, "QUARTER": lambda f: f.month // 3 + 1,
    }
    get = getters.get(unit)
    if get is None:
        return lambda millis: 0
    return lambda millis: get(Fields(millis, default_zone(), rules))


@function(_NS, "extract",
          (_p("unit", STRING, _UNIT, dynamic=False),
           _p("date.value", STRING, _DATE_VALUE, optional=True, default="-"),
           _OPTIONAL_FORMAT,
           _p("timestamp.in.milliseconds", LONG, _MILLIS, optional=True, default="-"),
           _p("locale", STRING, "The locale whose week rules WEEK uses, e.g. `en_US`, `fr_FR` (a constant).",
              dynamic=False, optional=True, default="en_US")),
          overloads=(("unit", "date.value"), ("unit", "date.value", "date.format"),
                     ("unit", "date.value", "date.format", "locale"), ("timestamp.in.milliseconds", "unit"),
                     ("timestamp.in.milliseconds", "unit", "locale")),
          returns=_I, pure=True, doc="One part of a date as an int (the month counts from 1; WEEK is the week of the year).",
          examples=(("time:extract('YEAR', '2019/11/11 13:23:44.657', 'yyyy/MM/dd HH:mm:ss.SSS')", "Returns `2019`."),
                    ("time:extract(1394556804000L, 'HOUR')", "Returns `16` in UTC.")))
def _extract(infos: list[ArgInfo], ctx: Any) -> Any:
    millis_form = infos[0].type is AttrType.LONG
    locale_info = infos[2] if millis_form and len(infos) == 3 else infos[3] if len(infos) == 4 else None
    try:
        get = _extractor(_unit(infos[1] if millis_form else infos[0]),
                         None if locale_info is None else str(locale_info.value))
    except JavaTimeError as exc:
        raise creation_error(f"time:extract(): {exc}") from None
    if millis_form:
        return _I, lambda millis, _unit, _locale=None: None if millis is None else get(millis)

    def extract(_u: Any, value: Any, pattern: Any = DEFAULT_FORMAT, _locale: Any = None) -> Any:
        if value is None or pattern is None:
            return None
        return get(_parse(value, pattern))

    return _I, extract


@function(_NS, "date",
          (_p("date.value", STRING, _DATE_VALUE),
           _OPTIONAL_FORMAT),
          overloads=(("date.value", "date.format"), ("date.value",)), returns=_S, pure=True,
          doc="The date part of a date-time, in `yyyy-MM-dd` format (Siddhi returns null for the one-argument form).",
          examples=(("time:date('2014/11/11 13:23:44', 'yyyy/MM/dd HH:mm:ss')", "Returns `2014-11-11`."),))
def _date(infos: list[ArgInfo], ctx: Any) -> Any:
    if len(infos) == 1:
        return _S, lambda value: None

    def date(value: Any, pattern: Any) -> Any:
        if value is None or pattern is None:
            return None
        return _format("yyyy-MM-dd").format(_parse(value, pattern))

    return _S, date


@function(_NS, "dayOfWeek",
          (_p("date.value", STRING, _DATE_VALUE),
           _OPTIONAL_FORMAT),
          overloads=(("date.value", "date.format"), ("date.value",)), returns=_S, pure=True,
          doc="The day of the week of a date: `Monday` ... `Sunday`.",
          examples=(("time:dayOfWeek('2014/12/11 13:23:44', 'yyyy/MM/dd HH:mm:ss')", "Returns `Thursday`."),))
def _day_of_week(infos: list[ArgInfo], ctx: Any) -> Any:
    def name(millis: int) -> str:
        return WEEKDAYS[Fields(millis, default_zone()).day_of_week - 1]

    if len(infos) == 1:
        def day_of_week_of(value: Any) -> Any:
            if value is None:
                return None
            # Siddhi reads the part before the first space as yyyy-MM-dd
            return name(_parse(value.split(" ")[0], "yyyy-MM-dd"))

        return _S, day_of_week_of

    def day_of_week(value: Any, pattern: Any) -> Any:
        if value is None or pattern is None:
            return None
        return name(_parse(value, pattern))

    return _S, day_of_week


# ---------------------------------------------------------------------------- timezoneConvert
@function(_NS, "timezoneConvert",
          (_p("date.value", STRING, "The date-time, e.g. `2014-11-11 13:23:44.657`.", default="-"),
           _p("date.source.format", STRING, "Its format (java.time DateTimeFormatter letters).", default="-"),
           _p("target.timezone", STRING, "The zone to convert to, e.g. `Asia/Kolkata`, `PST`.", default="-"),
           _p("source.timezone", STRING, "The zone of date.value.", optional=True, default="System timezone")),
          overloads=(("date.value", "date.source.format", "target.timezone"),
                     ("date.value", "date.source.format", "target.timezone", "source.timezone")),
          returns=_S, pure=True, doc="The date-time moved from its zone (or the system's) to the target zone, in the same format.",
          examples=(("time:timezoneConvert('2014/11/11 13:23:44', 'yyyy/MM/dd HH:mm:ss', 'UTC', 'IST')",
                     "Returns `2014/11/11 07:53:44`."),))
def _timezone_convert(infos: list[ArgInfo], ctx: Any) -> Any:
    def timezone_convert(value: Any, pattern: Any, target: Any, source: Any = ...) -> Any:
        if value is None or pattern is None or target is None or source is None:
            return None
        try:
            source_zone = default_zone() if source is ... else zone_of(source)
            target_zone = zone_of(target)
            fmt = time_formatter(pattern)
            wall = fmt.parse_local(value)
            instant = wall - source_zone.offset_by_wall(wall)
            return fmt.format(instant, target_zone)
        except JavaTimeError as exc:
            raise TimeFunctionError(f"Provided date value : {value} cannot be parsed by given pattern {pattern}. "
                                    f"{exc}") from None

    return _S, timezone_convert
