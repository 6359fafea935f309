"""The disk of an SQLite store fills up: writes wait and retry (back-pressure), nothing is lost
or counted twice, the log says why, and everything is written once space is back.

A real full disk: a tmpfs of 4 MB mounted for the test (needs root, as in CI; skipped with
the reason otherwise), filled with a ballast file until the kernel says ENOSPC.
"""
from __future__ import annotations

import contextlib
import logging
import sqlite3
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from srota.engine import SiddhiManager


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip() or mounted.returncode}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(disk: Path) -> Path:
    """Write a ballast file until the disk is full; returns it (delete it to free the space)."""
    ballast = disk / "ballast"
    with open(ballast, "wb", buffering=0) as f, contextlib.suppress(OSError):
        while True:
            f.write(b"\0" * 4096)
    return ballast


def test_a_full_disk_holds_roll_up_writes_until_space_is_back(small_disk: Path, caplog) -> None:
    db = small_disk / "rollups.db"
    app = ("define stream S (k string, v long, ts long);\n"
           f"@store(type='sqlite', database='{db}')\n"
           "define aggregation A from S select k, sum(v) as total, count() as n group by k "
           "aggregate by ts every sec ... min;")
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    store = rt.context.aggregations["A"].store
    rt.start()
    h = rt.get_input_handler("S")
    # Event times ahead of the wall clock: the aggregation's timer (armed at the first event's
    # second end) stays pending, so each event closes the previous second (past event times
    # would be closed by the timer at once, in ticks the test does not control).
    t0 = (int(time.time()) + 86_400) * 1000
    h.send(["k0", 1, t0])
    h.send(["k0", 1, t0 + 1000])
    store.flush()  # the database and its tables exist before the disk fills
    ballast = _fill(small_disk)
    # Enough rows (about 200 kB with their undo copies) that they cannot fit in space SQLite
    # allocated before the disk filled (its WAL file keeps its size).
    events = [[f"k{i % 50}-{'x' * 40}", i, t0 + 1000 + i * 1000] for i in range(1, 1500)]
    with caplog.at_level(logging.WARNING, logger="srota.engine"):
        for e in events:
            h.send(e)
        flushed = threading.Event()
        threading.Thread(target=lambda: (store.flush(), flushed.set()), daemon=True).start()
        assert not flushed.wait(2.0), "the writes claimed to be stored on a full disk"
        assert store.failed_writes == 0, "writes were dropped instead of retried"
        assert "retrying" in caplog.text and ("full" in caplog.text or "disk" in caplog.text), caplog.text[-500:]
        ballast.unlink()  # space is back
        assert flushed.wait(30), "the writes did not go through once space was back"
    rt.shutdown()
    expected: dict[tuple[int, str], tuple[int, int]] = {(t0, "k0"): (1, 1), (t0 + 1000, "k0"): (1, 1)}
    for k, v, ts in events[:-1]:  # the last second is still open: it is in memory, not stored yet
        total, n = expected.get((ts, k), (0, 0))
        expected[(ts, k)] = (total + v, n + 1)
    with sqlite3.connect(db) as conn:
        rows = conn.execute('SELECT * FROM "A_SECONDS"').fetchall()
        columns = [c[0] for c in conn.execute('SELECT * FROM "A_SECONDS"').description]
    got = {}
    for row in rows:
        r = dict(zip(columns, row, strict=True))
        got[(r["AGG_TIMESTAMP"], r["k"])] = (r["AGG_SUM_v"], r["AGG_COUNT"])
    assert got == expected  # nothing lost, nothing counted twice


def test_a_full_disk_keeps_table_changes_queued_until_space_is_back(small_disk: Path, caplog) -> None:
    db = small_disk / "table.db"
    app = ("define stream S (k string, v long);\n"
           f"@store(type='sqlite', database='{db}', flush.interval='50 millisec')\n"
           "@PrimaryKey('k') define table T (k string, v long);\n"
           "from S select k, v update or insert into T on T.k == k;")
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    rt.start()
    h = rt.get_input_handler("S")
    h.send(["k0", 0])
    store = rt.context.tables["T"].store
    store.flush()
    ballast = _fill(small_disk)
    with caplog.at_level(logging.WARNING, logger="srota.engine"):
        for i in range(300):
            # k0 updated, k1..k299 inserted: 300 kB, more than any space SQLite has already
            # allocated (a WAL file keeps its size), so the write cannot succeed on the full disk
            h.send([_key(i), i])
        deadline = threading.Event()
        deadline.wait(1.0)  # several flushes fail meanwhile
        assert store.pending() == 300, "changes were dropped while the disk was full"
        assert "write failed" in caplog.text, caplog.text[-500:]
    ballast.unlink()
    rt.shutdown()  # writes what is left
    with sqlite3.connect(db) as conn:
        rows = dict(conn.execute('SELECT "k", "v" FROM "T"').fetchall())
    assert rows == {_key(i): i for i in range(300)}


def _key(i: int) -> str:
    return f"k{i}-" + "x" * 1000 if i else "k0"
