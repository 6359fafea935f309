"""Java's zone names (engine/extensions/_javazones.py) against the JDK itself, where Java is here."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from srota.engine.extensions._javatime import zone_of
from srota.engine.extensions._javazones import JAVA_ZONE_NAMES

_DUMP = """
import java.util.*;
public class ZoneNames {
    public static void main(String[] a) {
        Locale loc = Locale.ENGLISH;
        String[] ids = TimeZone.getAvailableIDs();
        Arrays.sort(ids);
        StringBuilder sb = new StringBuilder();
        for (String id : ids) {
            TimeZone tz = TimeZone.getTimeZone(id);
            sb.append(id).append('\\t').append(tz.getDisplayName(false, TimeZone.SHORT, loc)).append('\\t')
              .append(tz.getDisplayName(true, TimeZone.SHORT, loc)).append('\\t')
              .append(tz.getDisplayName(false, TimeZone.LONG, loc)).append('\\t')
              .append(tz.getDisplayName(true, TimeZone.LONG, loc)).append('\\n');
        }
        System.out.print(sb);
    }
}
"""


@pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None, reason="no JDK (javac, java) here")
def test_the_table_is_the_jdks(tmp_path: Path) -> None:
    (tmp_path / "ZoneNames.java").write_text(_DUMP)
    subprocess.run(["javac", "-d", str(tmp_path), str(tmp_path / "ZoneNames.java")], check=True)
    out = subprocess.run(["java", "-Duser.language=en", "-cp", str(tmp_path), "ZoneNames"], check=True,
                         capture_output=True, text=True).stdout
    jdk = {parts[0]: tuple(parts[1:]) for parts in (line.split("\t") for line in out.splitlines())}
    assert jdk == JAVA_ZONE_NAMES


@pytest.mark.parametrize(("zone", "utc_ms", "short", "long"), [
    # tzdata counts Ireland's winter as a negative DST; the JDK's summer IST is daylight time,
    # and so is the all-year IST of 1968-1971
    ("Europe/Dublin", 1_689_000_000_000, "IST", "Irish Standard Time"),
    ("Europe/Dublin", 1_673_000_000_000, "GMT", "Greenwich Mean Time"),
    ("Europe/Dublin", 0, "IST", "Irish Standard Time"),
    ("Europe/Dublin", -60_000_000_000, "GMT", "Greenwich Mean Time"),  # 1968-02: before the all-year IST
    # Morocco's +01 is daylight time from 2018 on, not before
    ("Africa/Casablanca", 1_673_000_000_000, "WEST", "Western European Summer Time"),
    ("Africa/Casablanca", 946_684_800_000, "WET", "Western European Time"),
    # Namibia: CAT is daylight time from 1990 on, WAT in the winters of 1994-2017 standard time
    ("Africa/Windhoek", 1_689_000_000_000, "WAT", "Western African Time"),
    ("Africa/Windhoek", 1_150_000_000_000, "CAT", "Central Africa Time"),
    ("Africa/Windhoek", 0, "CAT", "Central Africa Time"),
])
def test_daylight_time_as_the_jdk_counts_it(zone: str, utc_ms: int, short: str, long: str) -> None:
    z = zone_of(zone)
    assert (z.name(utc_ms, False), z.name(utc_ms, True)) == (short, long)
