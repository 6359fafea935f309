"""The ``time:`` namespace (siddhi-execution-time), with Java's date patterns and calendar."""
from __future__ import annotations

import re

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiManager
from srota.engine.extensions import _javatime as jt

STREAM = "define stream S (s string, f string, t long, n int, z string);\n"
TS = 1_415_692_424_000  # 2014-11-11 07:53:44 UTC


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    """Siddhi's expected values assume a JVM in UTC; the default zone follows TZ like the JVM's."""
    monkeypatch.setenv("TZ", "UTC")
    jt.default_zone.cache_clear()
    yield
    jt.default_zone.cache_clear()


def project(select_all, select: str, s=None, f=None, t=None, n=None, z=None) -> list:
    return select_all(select, [s, f, t, n, z])


@pytest.mark.parametrize("select, row, expected", [
    # SimpleDateFormat letters through the lenient calendar: DD is the day of the year, the
    # second MM overrides the month, SS are milliseconds
    ("time:timestampInMilliseconds(s, f)", {"s": "2007-11-30 10:30:19", "f": "yyyy-MM-DD HH:MM:SS"}, 1170151200019),
    ("time:timestampInMilliseconds(s)", {"s": "2007-11-30 10:30:19.000"}, 1196418619000),
    ("time:dateFormat(s, 'yyyy-MM-dd', f)", {"s": "2014-13-01 00:00:00", "f": "yyyy-MM-dd HH:mm:ss"}, "2015-01-01"),
    ("time:dateFormat(s, 'ss', f)", {"s": "2014-11-11 13:23:44.657", "f": "yyyy-MM-dd HH:mm:ss"}, "44"),  # prefix match
    ("time:dateFormat(t, f)", {"t": TS, "f": "EEE, d MMM yyyy hh:mm a Z"}, "Tue, 11 Nov 2014 07:53 AM +0000"),
    ("time:dateFormat(t, f)", {"t": TS, "f": "yyyy.MM.dd G 'at' HH:mm:ss z"}, "2014.11.11 AD at 07:53:44 UTC"),
    ("time:dateAdd(s, n, 'YEAR', f)", {"s": "2016-02-29 10:00", "f": "yyyy-MM-dd HH:mm", "n": 1}, "2017-02-28 10:00"),
    ("time:dateAdd(s, n, 'month', f)", {"s": "2014-01-31", "f": "yyyy-MM-dd", "n": 1}, "2014-02-28"),
    ("time:dateAdd(s, n, 'QUARTER')", {"s": "2014-11-11 13:23:44.657", "n": 1}, "2015-02-11 13:23:44.657"),
    ("time:dateAdd(t, n, 'HOUR')", {"t": TS, "n": 2}, "1415699624000"),
    ("time:dateAdd(t, n, 'hour')", {"t": TS, "n": 2}, "1415692424000"),   # Siddhi: case-sensitive here
    ("time:dateSub(t, n, 'hour')", {"t": TS, "n": 2}, "1415685224000"),   # ... but not here
    ("time:dateSub(s, n, 'WEEK', f)", {"s": "2014-11-11", "f": "yyyy-MM-dd", "n": 2}, "2014-10-28"),
    ("time:dateDiff(s, f, 'yyyy-MM-dd HH:mm:ss', 'yyyy-MM-dd')", {"s": "2014-11-9 13:23:44", "f": "2014-11-11"}, -1),
    ("time:dateDiff(t, 1412841224000L)", {"t": TS}, 33),
    ("time:extract('WEEK', s, f)", {"s": "2017-10-8", "f": "yyyy-MM-dd"}, 41),            # en_US weeks
    ("time:extract('WEEK', s, f, 'fr_FR')", {"s": "2016-01-01", "f": "yyyy-MM-dd"}, 53),   # ISO weeks
    ("time:extract(t, 'QUARTER')", {"t": TS}, 4),
    ("time:extract(t, 'HOUR')", {"t": TS}, 7),
    ("time:extract('century', s)", {"s": "2014-11-11 13:23:44.657"}, 0),
    ("time:date(s, f)", {"s": "2014/11/11 13:23:44", "f": "yyyy/MM/dd HH:mm:ss"}, "2014-11-11"),
    ("time:date(s, f)", {"s": "13:23:44", "f": "HH:mm:ss"}, "1970-01-01"),
    ("time:date(s)", {"s": "2014-11-11 13:23:44.657"}, None),            # Siddhi's one-argument form
    ("time:dayOfWeek(s)", {"s": "2014-12-11 13:23:44.657"}, "Thursday"),
    ("time:dayOfWeek(s, f)", {"s": "11/12/2014 01 PM", "f": "dd/MM/yyyy hh a"}, "Thursday"),
    ("time:timezoneConvert(s, f, 'PST', 'IST')", {"s": "2014-11-11 13:23:44", "f": "yyyy-MM-dd HH:mm:ss"},
     "2014-11-10 23:53:44"),
    ("time:timezoneConvert(s, f, 'America/New_York', z)",
     {"s": "2016-04-21T00:00:00+0530", "f": "yyyy-MM-dd'T'HH:mm:ssZ", "z": "IST"}, "2016-04-20T14:30:00-0400"),
    ("time:timezoneConvert(s, f, 'UTC')", {"s": "2020/11/11 06:23:44", "f": "yyyy/MM/dd HH:mm:ss"},
     "2020/11/11 06:23:44"),
])
def test_functions(select_all, select, row, expected):
    assert project(select_all, f"{select} as v", **row) == [[expected]]


def test_nulls_give_null(select_all):
    got = project(select_all, "time:dateAdd(s, n, 'YEAR', f) as a, time:dateFormat(t, f) as b, "
                           "time:extract('YEAR', s, f) as c, time:dateDiff(s, s) as d, "
                           "time:timezoneConvert(s, f, z) as e, time:dayOfWeek(s) as g", s=None, f="yyyy")
    assert got == [[None, None, None, None, None, None]]


def test_clock_functions(select_all):
    got = project(select_all, "time:currentDate() as a, time:currentTime() as b, time:currentTimestamp() as c, "
                           "time:currentTimestamp('IST') as d, time:utcTimestamp() as e, "
                           "time:utcTimestamp('yyyy/MM/dd') as g, time:timestampInMilliseconds() as h, "
                           "time:timestampInMilliseconds(s) as i")
    a, b, c, d, e, g, h, i = got[0]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", a) and re.fullmatch(r"\d\d:\d\d:\d\d", b)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", c) and c != d and c == e
    assert re.fullmatch(r"\d{4}/\d\d/\d\d", g)
    assert h > 1_700_000_000_000 and abs(i - h) < 60_000    # a null date reads the clock, as in Siddhi


def test_the_default_zone_follows_tz(select_all, monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    jt.default_zone.cache_clear()
    assert project(select_all, "time:dateFormat(t, 'HH:mm:ss z') as v", t=TS) == [["13:23:44 IST"]]


@pytest.mark.parametrize("row", [
    {"s": "2014:11:11 13:23:44", "f": "yyyy-MM-dd HH:mm:ss"},   # does not match the format
    {"s": "2014-11-11", "f": "yyyy-MM-dd uuuu"},                # a letter FastDateFormat does not know
    {"s": "2014-11-11", "f": "yyyy-'MM"},                      # an unterminated quote
])
def test_unparseable_dates_are_errors(select_all, row, caplog):
    assert project(select_all, "time:dateAdd(s, 1, 'DAY', f) as v", n=1, **row) == []
    assert "Error" in caplog.text or "error" in caplog.text


def test_invalid_zone_is_an_error(select_all, caplog):
    assert project(select_all, "time:timezoneConvert(s, f, z) as v", s="2014-11-11 13:23:44",
                   f="yyyy-MM-dd HH:mm:ss", z="Mars/Olympus") == []
    assert "Mars/Olympus" in caplog.text


@pytest.mark.parametrize("select", [
    "time:dateAdd(s, n, z)",                 # unit must be a constant
    "time:dateAdd(s, 'YEAR', n)",
    "time:dateAdd(n, n, 'YEAR')",
    "time:dateSub(t, s, 'YEAR')",
    "time:dateDiff(s)",
    "time:dateDiff(s, s, f)",                # no 3-argument overload
    "time:dateFormat(s)",
    "time:extract(z, s)",
    "time:extract('WEEK', s, f, z)",        # locale must be a constant
    "time:extract('WEEK', s, f, 'not a locale')",
    "time:extract(n, 'HOUR')",
    "time:currentTimestamp(z)",
    "time:currentDate(s)",
    "time:date(s, f, f)",
    "time:timestampInMilliseconds(s, t)",
    "time:timezoneConvert(s, f)",
])
def test_creation_errors_carry_the_position(select):
    with pytest.raises(SiddhiAppCreationError) as info:
        SiddhiManager().create_siddhi_app_runtime(STREAM + f"from S\nselect {select} as v insert into Out;")
    assert info.value.line == 3 and info.value.column == 8


def test_calendar_add_keeps_the_wall_clock_across_dst():
    zone = jt.zone_of("America/New_York")
    fmt = jt.DateFormat("yyyy-MM-dd HH:mm z", zone)
    start = fmt.parse("2014-03-08 12:00 EST")
    assert fmt.format(jt.calendar_add(start, "DAY", 1, zone)) == "2014-03-09 12:00 EDT"
    assert fmt.format(jt.calendar_add(start, "HOUR", 24, zone)) == "2014-03-09 13:00 EDT"


def test_week_numbers_follow_the_locale():
    day = jt.days_from_civil(2021, 1, 3) * jt.DAY_MS   # a Sunday
    assert jt.Fields(day, jt.UTC_ZONE).week_of_year == 2
    assert jt.Fields(day, jt.UTC_ZONE, jt.week_rules("de_DE")).week_of_year == 53
    assert jt.Fields(jt.days_from_civil(2014, 12, 28) * jt.DAY_MS, jt.UTC_ZONE).week_of_year == 1


def test_two_digit_years_and_twelve_hour_clock():
    assert jt.date_format("yy-MM-dd hh:mm a").parse("14-11-11 01:30 PM") == 1415712600000
    assert jt.date_format("hh 'o''clock' a, k").format(0) == "12 o'clock AM, 24"


def test_quarter_amounts_wrap_like_java_ints():
    # Siddhi computes expr * 3 for QUARTER in int arithmetic: 715827883 * 3 wraps to -2147483647
    start = jt.date_format("yyyy-MM-dd").parse("2014-11-11")
    assert jt.calendar_add(start, "QUARTER", 715827883, jt.UTC_ZONE) == \
        jt.calendar_add(start, "MONTH", -2147483647, jt.UTC_ZONE)


@pytest.mark.parametrize("select, row, expected", [
    # GregorianCalendar is Julian before 1582-10-15 (checked on real Siddhi 5.1.33 with the time jar)
    ("time:dateFormat(t, 'yyyy-MM-dd')", {"t": -62_135_596_800_000}, "0001-01-03"),
    ("time:timestampInMilliseconds(s, f)", {"s": "0001-01-01 00:00:00", "f": "yyyy-MM-dd HH:mm:ss"}, -62_135_769_600_000),
    ("time:dayOfWeek(s, f)", {"s": "1582-10-15", "f": "yyyy-MM-dd"}, "Friday"),
    ("time:dayOfWeek(s, f)", {"s": "1582-10-04", "f": "yyyy-MM-dd"}, "Thursday"),
    ("time:dateAdd(s, n, 'DAY', f)", {"s": "1582-10-04", "f": "yyyy-MM-dd", "n": 1}, "1582-10-15"),
    ("time:dateAdd(s, n, 'MONTH', f)", {"s": "1500-01-31", "f": "yyyy-MM-dd", "n": 1}, "1500-02-29"),
    ("time:dateFormat(s, 'yyyy-MM-dd', f)", {"s": "1582-10-10", "f": "yyyy-MM-dd"}, "1582-10-20"),
])
def test_julian_calendar_before_the_cutover(select_all, select, row, expected):
    assert project(select_all, f"{select} as v", **row) == [[expected]]


def test_julian_days_round_trip():
    assert jt.calendar_date(jt.CUTOVER_DAY - 1) == (1582, 10, 4)
    assert jt.calendar_date(jt.CUTOVER_DAY) == (1582, 10, 15)
    for day in range(-800_000, -100_000, 997):
        assert jt.calendar_days(*jt.calendar_date(day)) == day


@pytest.mark.parametrize("select, row, expected", [
    # GregorianCalendar.add: the year and month in ints, the time in a long, all wrapping
    # (Siddhi 5.1.33 with siddhi-execution-time's jar gave these)
    ("time:dateAdd(t, n, 'YEAR')", {"t": 1_700_000_000_000, "n": 2**31 - 1}, "6017547994300606464"),
    ("time:dateSub(t, n, 'YEAR')", {"t": 1_700_000_000_000, "n": 2**31 - 1}, "6017548057459006464"),
    ("time:dateAdd(t, n, 'MONTH')", {"t": 1_700_000_000_000, "n": 2**31 - 1}, "-5647450798892800000"),
    ("time:dateAdd(t, n, 'QUARTER')", {"t": 1_700_000_000_000, "n": 2**31 - 1}, "-5647450804249600000"),
    ("time:dateAdd(s, n, 'YEAR', f)", {"s": "2023-11-14 22:13:20", "f": "yyyy-MM-dd HH:mm:ss", "n": 2**31 - 1},
     "190690474-11-04 07:56:46"),
    ("time:dateAdd(t, n, 'YEAR')", {"t": 1_700_000_000_000, "n": 100_000}, "3157395200000000"),
])
def test_calendar_add_overflows_like_java(select_all, select, row, expected):
    assert project(select_all, f"{select} as v", **row) == [[expected]]


@pytest.mark.parametrize("target, pattern, expected", [
    # ZoneId.of normalizes an offset's id, and VV and z print it
    ("GMT+2", "yyyy-MM-dd HH:mm VV", "2023-11-14 12:00 GMT+02:00"),
    ("GMT+2", "yyyy-MM-dd HH:mm z", "2023-11-14 12:00 GMT+02:00"),
    ("+5", "yyyy-MM-dd HH:mm VV", "2023-11-14 15:00 +05:00"),
    ("-00:00", "yyyy-MM-dd HH:mm VV", "2023-11-14 10:00 Z"),
    ("UTC+00:00", "yyyy-MM-dd HH:mm VV", "2023-11-14 10:00 UTC"),
    # Java's zone names, where tzdata has a number (+0545) or no long name
    ("Asia/Kathmandu", "yyyy-MM-dd HH:mm z", "2023-11-14 15:45 NPT"),
    ("Asia/Kathmandu", "yyyy-MM-dd HH:mm zzzz", "2023-11-14 15:45 Nepal Time"),
    # every zone Java names (engine/extensions/_javazones.py), not only the common ones
    ("Asia/Tbilisi", "yyyy-MM-dd HH:mm z", "2023-11-14 14:00 GET"),
    ("Africa/Nairobi", "yyyy-MM-dd HH:mm zzzz", "2023-11-14 13:00 East Africa Time"),
    ("America/Punta_Arenas", "yyyy-MM-dd HH:mm z", "2023-11-14 07:00 GMT-03:00"),
    # the JDK's daylight time where tzdata counts a negative DST: Dublin's winter GMT is
    # standard time, Morocco's +01 and Namibia's CAT are daylight time
    ("Europe/Dublin", "yyyy-MM-dd HH:mm zzzz", "2023-11-14 10:00 Greenwich Mean Time"),
    ("Africa/Casablanca", "yyyy-MM-dd HH:mm z", "2023-11-14 11:00 WEST"),
    ("Africa/Windhoek", "yyyy-MM-dd HH:mm zzzz", "2023-11-14 12:00 Western African Time"),
])
def test_timezone_convert_zone_ids_and_names(select_all, target, pattern, expected):
    assert project(select_all, "time:timezoneConvert(s, f, z) as v", s="2023-11-14 10:00 UTC", f=pattern,
                   z=target) == [[expected]]


def test_timezone_convert_reads_and_writes_long_names(select_all):
    got = project(select_all, "time:timezoneConvert(s, f, 'Europe/Paris', 'PST') as v",
                  s="2023-01-05 10:00:00 Pacific Standard Time", f="yyyy-MM-dd HH:mm:ss zzzz")
    assert got == [["2023-01-05 19:00:00 Central European Standard Time"]]


@pytest.mark.parametrize("select, row, expected", [
    # Calendar.getInstance(th_TH) is a BuddhistCalendar
    ("time:extract(t, 'YEAR', 'th_TH')", {"t": 1_700_000_000_000}, 2566),
    ("time:extract(t, 'YEAR', 'th_TH')", {"t": -62_167_219_200_000}, 544),   # 1 BC (Julian)
    ("time:extract('year', s, f, 'th_TH')", {"s": "2023-11-14", "f": "yyyy-MM-dd"}, 2566),
])
def test_thai_locale_counts_buddhist_years(select_all, select, row, expected):
    assert project(select_all, f"{select} as v", **row) == [[expected]]


@pytest.mark.parametrize("select, row, expected", [
    # October 1582 has the days 1-4 (Julian) and 15-31 (Gregorian): a date by week or weekday
    # of the month is reckoned in both calendars and the Gregorian one taken
    ("time:date(s, f)", {"s": "1582-10 W3 Sat", "f": "yyyy-MM 'W'W EEE"}, "1582-10-16"),
    ("time:date(s, f)", {"s": "1582-10 3 Fri", "f": "yyyy-MM F EEE"}, "1582-10-15"),
    # ... and its weeks and weekdays of the month count from its first day, October 1
    ("time:dateFormat(t, f)", {"t": -12_219_292_800_000, "f": "F W"}, "1 1"),
    ("time:dateFormat(t, f)", {"t": -12_218_688_000_000, "f": "F W d"}, "2 2 22"),
    # in 1581 and 1582 Java looks for the next year's first week whatever the week number
    ("time:extract('WEEK', s, f)", {"s": "December 28, 1582", "f": "MMMM d, yyyy"}, 1),
    ("time:extract('WEEK', s, f)", {"s": "December 20, 1582", "f": "MMMM d, yyyy"}, 50),
    # Calendar.add in (the year of the era) 1582 cuts no day to its month's length: June 31 is July 1
    ("time:dateSub(s, n, 'MONTH', f)", {"s": "1582-08-31 17:10:37", "f": "yyyy-MM-dd HH:mm:ss", "n": 2},
     "1582-07-01 17:10:37"),
    ("time:dateAdd(s, n, 'MONTH', f)", {"s": "1582-01-31", "f": "yyyy-MM-dd", "n": 1}, "1582-03-03"),
    ("time:dateAdd(s, n, 'MONTH', f)", {"s": "1582-01-31 BC", "f": "yyyy-MM-dd G", "n": 1}, "1582-03-03 BC"),
    ("time:dateAdd(s, n, 'MONTH', f)", {"s": "1583-01-31 BC", "f": "yyyy-MM-dd G", "n": 1}, "1583-02-28 BC"),
])
def test_the_cutover_month_and_year(select_all, select, row, expected):
    assert project(select_all, f"{select} as v", **row) == [[expected]]


@pytest.mark.parametrize("text, pattern, expected", [
    # DateTimeFormatter reads a short name for z and a long one for zzzz, or a region id
    ("2018-08-31 23:00:03 PST", "yyyy-MM-dd HH:mm:ss z", [["2018-08-31 23:00:03 Z"]]),
    ("2018-08-31 23:00:03 Pacific Standard Time", "yyyy-MM-dd HH:mm:ss zzzz", [["2018-08-31 23:00:03 Z"]]),
    ("2018-08-31 23:00:03 Asia/Tokyo", "yyyy-MM-dd HH:mm:ss zzzz", [["2018-08-31 23:00:03 Z"]]),
    ("2018-08-31 23:00:03 Pacific Standard Time", "yyyy-MM-dd HH:mm:ss z", []),
    ("2018-08-31 23:00:03 PST", "yyyy-MM-dd HH:mm:ss zzzz", []),
    ("2018-08-31 23:00:03 Nowhere", "yyyy-MM-dd HH:mm:ss z", []),
])
def test_timezone_convert_reads_zone_names_of_the_pattern_style(select_all, text, pattern, expected):
    assert project(select_all, "time:timezoneConvert(s, f, 'Z', 'UTC') as v", s=text, f=pattern) == expected
