"""Random apps of siddhi-execution-time's functions (``--family time_fn``).

A case selects one to four ``time:`` calls (each on a stream of its own, as
:func:`tests.differential.functions.function_case` makes them) over the attributes ``t`` (epoch
milliseconds), ``s`` and ``s2`` (date texts), ``f`` (their pattern, now and then another one),
``n`` (an int amount) and ``z`` (a zone id), any of which may be null. Every function of the jar
that does not read the clock is drawn, in every overload Siddhi 5.1.33 accepts: ``dateFormat``,
``dateAdd`` and ``dateSub`` (epoch and text forms, with the default pattern too; every unit,
``YEAR`` ... ``MILLISECOND``, in capitals or not: ``MILLISECOND`` is no unit of theirs and adds
nothing, and the epoch form of ``dateAdd`` reads its unit case-sensitively), ``dateDiff`` (two
and four arguments; Siddhi refuses the three its code reads), ``extract`` (every unit, with and
without a locale, Thai's Buddhist calendar among them), ``date``, ``dayOfWeek`` (with and without
a pattern), ``timestampInMilliseconds`` and ``timezoneConvert`` (three and four arguments).

Values: epoch times near 1_700_000_000_000 and far from it (before 1970, around the Gregorian
cutover of 1582-10-15, before which ``GregorianCalendar`` is Julian, year 1, 9999 and beyond),
amounts from 0 to the ints' ends (Java's int and long arithmetic wraps); date texts in one
pattern of a set (numbers, fixed widths, text months and weekdays, 12- and 24-hour clocks with
``hh``, ``kk``, ``KK``, days of the year, weeks and weekdays of the month and year, eras,
offsets, zone names), with month ends, February 29 of leap and common years, and months and days
past their ends (the lenient calendar rolls them over), or not matching at all; patterns to
print with every letter ``FastDateFormat`` prints, and letters it refuses (the event is
dropped); ``java.time`` patterns and zones (region ids, Java's short ids, offsets, an unknown
id, short and long zone names) for ``timezoneConvert``, with wall times in the daylight-saving
gaps and overlaps of New York, London, Sydney and Los Angeles.

The wall clock, the JVM's default zone and locale: ``currentDate``, ``currentTime``,
``currentTimestamp``, ``utcTimestamp`` and ``timestampInMilliseconds()`` read
``System.currentTimeMillis()``, so they are not drawn, and ``timestampInMilliseconds(s)``,
which does so for a null ``s``, gets no null. The reference JVM runs with no
``-Duser.timezone`` or ``-Duser.language``: its zone is the machine's (``TZ`` unset,
``/etc/localtime`` is UTC here), which Srota reads the same way, and its locale comes from
``LANG`` (``C.UTF-8``: ``en``, whose weeks are the US's, as Srota's default). Two-digit years
fall within 80 years before today in both engines.

Kept out, as docs/siddhi-differences.md ("Not yet as Siddhi") says: the reference engine runs
commons-lang3 3.12 where siddhi-execution-time declares 3.3.2, which Srota follows. So no
pattern letters ``X``, ``u``, ``Y`` or ``L`` in ``FastDateFormat`` patterns (errors in 3.3.2),
no ``ZZ`` (3.12 prints UTC as ``Z``), hours only in their range (3.3.2 and 3.12 read ``HH``,
``hh`` and ``kk`` out of range differently), no random pattern to read a text with (3.12 reads a
text that does not match more leniently: blanks before numbers, short fixed widths), zone names
in texts only where both read the same offset (``UTC``; ``PST`` in winter and ``PDT`` in
summer: 3.12 reads a name as its fixed offset, 3.3.2 as the region), text fields in their case,
and no unterminated quotes in patterns that read. No ``ja_JP_JP`` locale (Java's Japanese
imperial calendar, which Srota does not have). Zones are drawn for dates from 1971 to 2037,
where the JDK's tz database and Python's agree.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from srota.engine.extensions._javatime import days_from_civil, month_length

from tests.differential.functions import BASE_TS, function_case

_DAY = 86_400_000
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
_WEEKDAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")

#: epoch milliseconds far from the events' times: 1970, the Gregorian cutover (1582-10-15 is
#: -12219292800000), year 1, the end of 9999, year 10000, and the millennia around them
_FAR_MILLIS = (0, -1, 1, -_DAY, 951_782_400_000, 1_709_164_800_000, 1_709_251_199_999,
               -12_219_292_800_000, -12_219_292_800_001, -12_220_156_800_000, -12_219_379_200_000,
               -62_135_596_800_000, -62_135_596_800_001, -62_167_219_200_000, 253_402_300_799_999,
               253_402_300_800_000, -30_610_224_000_000, 4_102_444_800_000, 10**15, -10**15, -2_208_988_800_000)

_UNITS = ("YEAR", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "QUARTER")
_AMOUNTS = (0, 1, -1, 2, -2, 3, 12, -12, 13, 31, -31, 59, 60, 365, 1000, -1000, 100_000, 2**31 - 1, -2**31)
_LOCALES = ("en_US", "fr_FR", "de_DE", "en_GB", "en_IN", "ar_SA", "ja_JP", "pt_BR", "en", "fr", "th_TH",
            "ar_EG", "th_TH_TH", "es_419")

# ---------------------------------------------------------------------------- printed patterns
#: FastDateFormat's letters with the counts drawn (no X, u, Y, L: commons-lang3 3.3.2 refuses
#: them and 3.12 accepts them; no ZZ: 3.12 prints a zero offset as ``Z``)
_PRINT_TOKENS = ("yyyy", "yy", "y", "yyy", "yyyyy", "MM", "M", "MMM", "MMMM", "dd", "d", "ddd", "HH", "H",
                 "hh", "h", "kk", "k", "KK", "K", "mm", "m", "ss", "s", "SSS", "S", "SSSS", "EEE", "EEEE", "E",
                 "D", "DDD", "F", "w", "ww", "W", "a", "G", "z", "zzzz", "Z")
_SEPARATORS = ("-", "/", " ", ":", ".", ", ", "'T'", "' at '", "''", "'o''clock'", "")
_BAD_LETTERS = ("q", "b", "c", "e", "g", "i", "j", "l", "n", "o", "p", "r", "t", "v", "x", "A", "B", "C", "I",
                "J", "N", "O", "P", "Q", "R", "T", "U", "V")


def _print_pattern(rng: random.Random) -> str:
    """A pattern to format with (never to read texts with: 3.12 reads a text that does not match
    more leniently than 3.3.2): a few letters and separators, now and then an illegal letter."""
    parts: list[str] = []
    for i in range(rng.randint(1, 5)):
        token = rng.choice(_PRINT_TOKENS)
        if i:
            separator = rng.choice(_SEPARATORS)
            # no run of a letter made of two (ZZ prints differently in 3.12)
            parts.append(" " if separator == "" and parts[-1][-1] == token[0] else separator)
        parts.append(token)
    if rng.random() < 0.05:
        parts.insert(rng.randint(0, len(parts)), rng.choice(_BAD_LETTERS))
    return "".join(parts)


# ---------------------------------------------------------------------------- parsed patterns
_Fields = dict[str, Any]


#: a pattern letter run's text for the fields drawn (numbers may be out of range: lenient)
_RENDER: dict[str, Callable[[_Fields], str]] = {
    "yyyy": lambda f: str(f["y"]).rjust(4, "0"), "yy": lambda f: f"{f['y'] % 100:02d}",
    "MM": lambda f: f"{f['M']:02d}", "M": lambda f: str(f["M"]),
    "MMM": lambda f: _MONTHS[(f["M"] - 1) % 12][:3], "MMMM": lambda f: _MONTHS[(f["M"] - 1) % 12],
    "dd": lambda f: f"{f['d']:02d}", "d": lambda f: str(f["d"]), "DDD": lambda f: f"{f['D']:03d}",
    "HH": lambda f: f"{f['H']:02d}", "H": lambda f: str(f["H"]),
    "hh": lambda f: f"{f['H'] % 12 or 12:02d}", "a": lambda f: "PM" if f["H"] >= 12 else "AM",
    "kk": lambda f: f"{f['H']:02d}", "KK": lambda f: f"{f['H'] % 12:02d}", "W": lambda f: str(f["W"]),
    "F": lambda f: str(f["W"]), "SSSSSS": lambda f: f"{f['S'] * 1000 + f['w']:06d}",
    "mm": lambda f: f"{f['m']:02d}", "m": lambda f: str(f["m"]), "ss": lambda f: f"{f['s']:02d}",
    "s": lambda f: str(f["s"]), "SSS": lambda f: f"{f['S']:03d}",
    "EEE": lambda f: _WEEKDAYS[f["E"]][:3], "EEEE": lambda f: _WEEKDAYS[f["E"]],
    "ww": lambda f: f"{f['w']:02d}", "G": lambda f: f["G"], "Z": lambda f: f["Z"], "z": lambda f: f["z"],
}
#: the patterns date texts are drawn in (FastDateFormat's): the default, numbers only, fixed
#: widths, text months and days, 12-hour clocks, offsets, zone names, days of the year, weeks, eras
_PARSE_PATTERNS = (
    "yyyy-MM-dd HH:mm:ss.SSS", "yyyy-MM-dd HH:mm:ss", "yyyy/MM/dd", "yyyy-MM-dd", "dd-MMM-yyyy HH:mm",
    "yyyyMMddHHmmss", "yyyyMMdd", "MM/dd/yy hh:mm a", "yyyy-MM-dd'T'HH:mm:ss.SSSZ", "EEE, d MMM yyyy HH:mm:ss Z",
    "yyyy-DDD HH:mm", "MMMM d, yyyy", "yyyy-MM-dd HH:mm:ss z", "d/M/yyyy H:m:s", "HH:mm:ss", "yyyy-MM-dd G",
    "yyyy 'week' ww EEEE", "yyyy-MM-dd hh:mm:ss.SSS a", "yy-M-d", "EEEE dd MMMM yyyy HH:mm",
    "yyyy-MM-dd kk:mm", "yyyy-MM-dd KK:mm a", "yyyy-MM 'W'W EEE", "yyyy-MM F EEE", "yyyy-MM-dd HH:mm:ss.SSSSSS",
)
_TOKEN_RUNS = sorted(_RENDER, key=len, reverse=True)


def _render(pattern: str, fields: _Fields) -> str:
    """The text of ``fields`` in ``pattern`` (quoted literals unquoted)."""
    out, i = [], 0
    while i < len(pattern):
        if pattern[i] == "'":
            j = pattern.index("'", i + 1)
            out.append(pattern[i + 1:j])
            i = j + 1
            continue
        run = next((r for r in _TOKEN_RUNS if pattern.startswith(r, i)
                    and (i + len(r) == len(pattern) or pattern[i + len(r)] != r[0])), None)
        if run is None:
            out.append(pattern[i])
            i += 1
        else:
            out.append(_RENDER[run](fields))
            i += len(run)
    return "".join(out)


def _fields(rng: random.Random, pattern: str) -> _Fields:
    """Fields for a text in ``pattern``: mostly valid dates, with month ends, February 29 of
    leap and common years, and (numeric fields) months and days past their ends."""
    zoned = "z" in pattern
    y = rng.choice((rng.randint(1950, 2050), rng.randint(1970, 2037), 2000, 1900, 2023, 2024, 2100, 1582,
                    1583, 1000, 1, 9999, 1969, rng.randint(100, 9999)))
    if zoned:
        y = rng.randint(1990, 2035)  # zones and their names, where the tz databases agree
    month = rng.randint(1, 12)
    day = rng.choice((rng.randint(1, 28), 1, 28, 29, 30, 31))
    if month == 2 and rng.random() < 0.5:
        day = rng.choice((28, 29))
    numeric_month = "MMM" not in pattern and not zoned
    if numeric_month and rng.random() < 0.08:
        month = rng.choice((0, 13, 14, 24))
    if not zoned and rng.random() < 0.08:
        day = rng.choice((0, 32, 45, 99))
    if y == 1582 and rng.random() < 0.5:
        month, day = 10, rng.randint(1, 20)  # the ten days Java's calendar skips
    zone_name = rng.choice(("UTC", "PST", "PDT")) if zoned else "UTC"
    if zone_name == "PST":
        month = rng.choice((1, 2, 12))  # standard time: 3.12 reads the name as -08:00, 3.3.2 the region
    elif zone_name == "PDT":
        month = rng.choice((5, 6, 7, 8))
    return {
        "y": y, "M": month, "d": day, "H": rng.randint(0, 23), "m": rng.choice((rng.randint(0, 59), 0, 59)),
        "s": rng.randint(0, 59), "S": rng.randint(0, 999), "E": rng.randint(0, 6), "w": rng.randint(1, 53), "W": rng.randint(1, 5),
        "D": rng.choice((rng.randint(1, 365), 1, 59, 60, 365, 366, 367)), "G": rng.choice(("AD", "AD", "BC")),
        "Z": rng.choice(("+0000", "+0530", "-0800", "+1000", "-0330", "+1345")), "z": zone_name,
    }


_MALFORMED = ("", "abc", "2023", "2023-11", "11/14/2023", "2023-11-14T10:00:00", "14-Nov-2023", "x2023-11-14",
              "2023-1x-14 10:00:00.000", "Tuesday", "2023/11/14 10:00:00")


def _date_text(rng: random.Random, pattern: str) -> str | None:
    """A date text in ``pattern``, or (now and then) one that does not match it, or null."""
    roll = rng.random()
    if roll < 0.04:
        return None
    if roll < 0.12:
        return rng.choice(_MALFORMED)
    text = _render(pattern, _fields(rng, pattern))
    if rng.random() < 0.05:
        text += rng.choice((" trailing", "Z", ".999"))  # text after the pattern is ignored
    return text


# ---------------------------------------------------------------------------- timezoneConvert
#: java.time patterns (DateTimeFormatter.ofPattern) with the zones' texts they read
_TZ_PATTERNS = ("yyyy-MM-dd HH:mm:ss", "yyyy/MM/dd HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "dd-MMM-yyyy hh:mm a",
                "yyyy-MM-dd HH:mm:ss.SSS", "uuuu-MM-dd HH:mm", "yyyy-MM-dd HH:mm:ss z", "yyyy-MM-dd HH:mm xxx",
                "yyyy-MM-dd'T'HH:mm:ssZ", "EEE, dd MMM yyyy HH:mm:ss", "yyyy-MM-dd HH:mm VV", "yyyy-DDD HH:mm",
                "yyyy-MM-dd HH:mm:ss zzzz")
_ZONES = ("UTC", "GMT", "Z", "IST", "PST", "EST", "MST", "HST", "ECT", "America/New_York", "Europe/London",
          "Australia/Sydney", "Asia/Kolkata", "Asia/Tokyo", "Asia/Kathmandu", "Europe/Paris", "+05:30", "-08:00",
          "GMT+2", "UTC-03:30", "+14:00", "America/Los_Angeles", "Mars/Olympus", "utc", "+25:00",
          # Java names every zone (engine/extensions/_javazones.py); tzdata's negative DST (Dublin,
          # Casablanca, Windhoek) is the JDK's standard time
          "Asia/Tbilisi", "Africa/Nairobi", "Europe/Dublin", "Africa/Casablanca", "Africa/Windhoek",
          "America/Sao_Paulo", "Pacific/Chatham", "America/Punta_Arenas")
#: daylight-saving gaps and overlaps (local wall times of the first zone listed)
_DST_WALLS = ((2023, 3, 12, 2, 30, "America/New_York"), (2023, 11, 5, 1, 30, "America/New_York"),
              (2023, 3, 26, 1, 30, "Europe/London"), (2023, 10, 29, 1, 30, "Europe/London"),
              (2023, 4, 2, 2, 30, "Australia/Sydney"), (2023, 10, 1, 2, 30, "Australia/Sydney"),
              (2024, 3, 10, 2, 0, "America/Los_Angeles"), (2024, 11, 3, 1, 59, "America/Los_Angeles"))


def _tz_text(rng: random.Random, pattern: str) -> tuple[str | None, str | None]:
    """A local date-time text in ``pattern`` and, for a daylight-saving change, its zone."""
    zone = None
    y, mo, d = rng.randint(1971, 2036), rng.randint(1, 12), rng.choice((rng.randint(1, 28), 29, 30, 31))
    h, mi = rng.randint(0, 23), rng.randint(0, 59)
    if rng.random() < 0.4:
        y, mo, d, h, mi, zone = rng.choice(_DST_WALLS)
    if rng.random() < 0.05:
        return rng.choice(("", "2023-11-14", "2023-13-01 10:00:00", "2023-11-14 25:00:00", "2023-11-14 24:00:00",
                           "2023-02-30 10:00:00", "2023-11-32 10:00:00", "2023-11-14 10:60:00")), zone
    weekday = _WEEKDAYS[(days_from_civil(y, mo, min(d, month_length(y, mo))) + 4) % 7][:3]
    doy = days_from_civil(y, mo, min(d, month_length(y, mo))) - days_from_civil(y, 1, 1) + 1
    text = (pattern.replace("yyyy", f"{y:04d}").replace("uuuu", f"{y:04d}").replace("MMM", _MONTHS[mo - 1][:3])
            .replace("MM", f"{mo:02d}").replace("dd", f"{d:02d}").replace("HH", f"{h:02d}")
            .replace("hh", f"{h % 12 or 12:02d}").replace("mm", f"{mi:02d}").replace("ss", f"{rng.randint(0, 59):02d}")
            .replace("SSS", f"{rng.randint(0, 999):03d}").replace("EEE", weekday).replace("DDD", f"{doy:03d}")
            .replace(" a", " PM" if h >= 12 else " AM").replace("'T'", "T").replace("xxx", rng.choice(("+05:30", "-08:00", "+00:00")))
            .replace("Z", rng.choice(("+0530", "-0800", "+0000"))).replace(" zzzz", " " + rng.choice(("Coordinated Universal Time", "Pacific Standard Time", "India Standard Time")))
            .replace(" z", " " + rng.choice(("UTC", "PST", "GMT")))
            .replace("VV", rng.choice(("Asia/Tokyo", "UTC", "Europe/Paris"))))
    return text, zone



# ---------------------------------------------------------------------------- the calls
def _quote(text: str) -> str:
    """A SiddhiQL string literal of ``text`` (double quotes around a pattern's quotes)."""
    return f'"{text}"' if "'" in text else f"'{text}'"


def _unit(rng: random.Random) -> str:
    unit = rng.choice(_UNITS + ("MILLISECOND",))
    return unit.lower() if rng.random() < 0.15 else unit.capitalize() if rng.random() < 0.05 else unit


def family(rng: random.Random) -> dict[str, Any]:
    """One to four ``time:`` calls over ``t`` (long), ``s``/``s2`` (date texts in one drawn pattern),
    ``f`` (a pattern), ``n`` (int) and ``z`` (a zone)."""
    attrs = [("t", "long"), ("s", "string"), ("s2", "string"), ("f", "string"), ("n", "int"), ("z", "string")]
    text_mode = rng.random()
    tz_pattern = rng.choice(_TZ_PATTERNS)
    pattern = tz_pattern if text_mode < 0.25 else rng.choice(_PARSE_PATTERNS)
    p = _quote(pattern)

    def call() -> str:
        if text_mode < 0.25:  # timezoneConvert's java.time texts
            target = rng.choice(("z", _quote(rng.choice(_ZONES))))
            if rng.random() < 0.3:
                return f"time:timezoneConvert(s, {rng.choice(('f', p))}, {target})"
            return f"time:timezoneConvert(s, {rng.choice(('f', p))}, {target}, {rng.choice(('z', _quote(rng.choice(_ZONES))))})"
        unit = _quote(_unit(rng))
        kinds: list[Callable[[], str]] = [
            lambda: f"time:dateFormat(t, {rng.choice(('f', _quote(_print_pattern(rng))))})",
            lambda: f"time:dateFormat(s, {_quote(_print_pattern(rng))}, {rng.choice(('f', p))})",
            lambda: f"time:dateAdd(t, n, {unit})", lambda: f"time:dateSub(t, n, {unit})",
            lambda: f"time:dateAdd(s, n, {unit}, {rng.choice(('f', p))})",
            lambda: f"time:dateSub(s, n, {unit}, {rng.choice(('f', p))})",
            lambda: f"time:dateDiff(t, {rng.choice(('1700000000000L', '0L', '-12219292800000L', 't'))})",
            lambda: f"time:dateDiff(s, s2, {rng.choice(('f', p))}, {rng.choice(('f', p))})",
            lambda: f"time:extract(t, {unit})",
            lambda: f"time:extract(t, {unit}, {_quote(rng.choice(_LOCALES))})",
            lambda: f"time:extract({unit}, s, {rng.choice(('f', p))})",
            lambda: f"time:extract({unit}, s, {rng.choice(('f', p))}, {_quote(rng.choice(_LOCALES))})",
            lambda: f"time:date(s, {rng.choice(('f', p))})",
            lambda: f"time:dayOfWeek(s, {rng.choice(('f', p))})",
            lambda: f"time:timestampInMilliseconds(s, {rng.choice(('f', p))})",
        ]
        if pattern == "yyyy-MM-dd HH:mm:ss.SSS":  # the forms with the default pattern
            kinds += [lambda: f"time:dateAdd(s, n, {unit})", lambda: f"time:dateSub(s, n, {unit})",
                      lambda: "time:dateDiff(s, s2)", lambda: f"time:extract({unit}, s)",
                      lambda: "time:dateFormat(s, " + _quote(_print_pattern(rng)) + ")",
                      lambda: "time:timestampInMilliseconds(s)", lambda: "time:dayOfWeek(s)"]
        if pattern in ("yyyy-MM-dd", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm:ss.SSS"):
            kinds.append(lambda: "time:dayOfWeek(s)")  # SimpleDateFormat's yyyy-MM-dd before the first blank
        return rng.choice(kinds)()

    expressions = list(dict.fromkeys(call() for _ in range(rng.randint(1, 4))))
    reads_clock = "time:timestampInMilliseconds(s)" in expressions

    def row() -> list[Any]:
        t = rng.choice((BASE_TS + rng.randint(-10**11, 10**11), BASE_TS + rng.randint(-10**12, 10**12),
                        rng.randint(-10**13, 10**13), rng.choice(_FAR_MILLIS)))
        if text_mode < 0.25:
            s, zone = _tz_text(rng, tz_pattern)
            s2 = None
            z = zone if zone and rng.random() < 0.7 else rng.choice(_ZONES)
        else:
            s, s2 = _date_text(rng, pattern), _date_text(rng, pattern)
            z = rng.choice(_ZONES)
        # another pattern for the texts: one of the set (they then mostly fail), a pattern with an
        # illegal letter, or null; not a random one: 3.12 reads a mismatched text more leniently
        # than 3.3.2 in ways docs/siddhi-differences.md lists (blanks, short fixed widths, names)
        f = pattern if rng.random() < 0.85 else rng.choice(
            (rng.choice(_PARSE_PATTERNS), None, "yyyy-MM-dd", "yyyy-MM-dd " + rng.choice(_BAD_LETTERS)))
        n = rng.choice(_AMOUNTS) if rng.random() < 0.5 else rng.randint(-50, 50)
        values = [t, s, s2, f, n, z]
        if rng.random() < 0.05:
            values[rng.randrange(len(values))] = None
        if values[1] is None and reads_clock:  # timestampInMilliseconds(null) is the wall clock's time
            values[1] = rng.choice(_MALFORMED)
        return values

    rows = [row() for _ in range(rng.randint(3, 10))]
    return function_case(rng, attrs, expressions, rows)
