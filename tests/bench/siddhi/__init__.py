"""Siddhi 5.1.33 on the JVM as a peer in the benchmark (the ``siddhi`` and ``siddhi-1`` rows).

``run_siddhi(workload, n, chunk)`` runs :mod:`SiddhiBench.java <tests.bench.siddhi>` in a JVM
of its own on the workload's app (the SiddhiQL Srota runs, :data:`tests.bench.workloads.APPS`)
and the same events (:func:`tests.bench.data.rows`, written once to a binary file in
``.cache/siddhi``), and returns its :class:`~tests.bench.harness.Result`: the timed round's
rate, its peak memory, and the digest of its outputs, canonicalised here as every system's are.
``chunk`` > 1 sends ``InputHandler.send(Event[])`` of ``chunk`` events, 1 sends
``send(long, Object[])`` per event. The JVM is warmed up first: untimed rounds over all the
events, each on a new app runtime, :data:`WARMUP_ROUNDS` of them or as many as fit in
:data:`WARMUP_SECONDS` (at least one). Warm-up rounds over a tenth of the events were not enough:
W1's timed round then took three to four times the CPU time (C2 still compiling, the heap still
growing). The Java process's start, the file reading and the warm-up are not timed.

Where Java or the jars are missing, :func:`unavailable_reason` says why (that of
:mod:`tests.differential.reference`, whose class path this uses).
"""
from __future__ import annotations

import fcntl
import json
import os
import struct
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from tests.bench.data import START_TS, rows
from tests.bench.harness import Result
from tests.bench.workloads import APPS, canonical, digest
from tests.differential.reference import CACHE, classpath, unavailable_reason

__all__ = ["run_siddhi", "unavailable_reason", "events_file", "compile_bench", "read_outputs"]

SOURCE = Path(__file__).resolve().parent / "SiddhiBench.java"
CLASSES = CACHE / "bench-classes"
WARMUP_ROUNDS = 5
WARMUP_EVENTS = 10_000_000  # all of them
WARMUP_SECONDS = 15.0
#: The JVM's options: the defaults a user gets (G1, tiered C2), logging quiet.
JAVA_OPTIONS = ["-Dlog4j2.level=ERROR", "-Dorg.apache.logging.log4j.level=ERROR"]
_PREFIX = "@@BENCH "


def compile_bench() -> Path:
    """Compile SiddhiBench.java into ``.cache/siddhi/bench-classes`` (again only when the source
    is newer); one process at a time."""
    CACHE.mkdir(parents=True, exist_ok=True)
    target = CLASSES / "SiddhiBench.class"
    with open(CACHE / "bench-classes.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists() and target.stat().st_mtime >= SOURCE.stat().st_mtime:
            return CLASSES
        CLASSES.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(["javac", "-nowarn", "-cp", classpath(), "-d", str(CLASSES), str(SOURCE)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"javac SiddhiBench.java failed: {proc.stderr.strip()[-500:]}")
    return CLASSES


def events_file(n: int) -> Path:
    """``rows(n)`` as the Java side reads them (written once per ``n``): big-endian int n, then
    per event the symbol (Java's ``writeUTF``), double price, long volume, long ts."""
    path = CACHE / f"bench-events-{n}.bin"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    pack = struct.Struct(">dqq").pack
    encoded: dict[str, bytes] = {}
    parts = [struct.pack(">i", n)]
    append = parts.append
    for symbol, price, volume, ts in rows(n):
        s = encoded.get(symbol)
        if s is None:
            b = symbol.encode()
            s = encoded[symbol] = struct.pack(">H", len(b)) + b
        append(s)
        append(pack(price, volume, ts))
    fd, tmp = tempfile.mkstemp(dir=CACHE, prefix=path.name + ".")
    with os.fdopen(fd, "wb") as f:
        f.write(b"".join(parts))
    os.replace(tmp, path)
    return path


def read_outputs(path: Path) -> list[tuple[int, tuple[Any, ...]]]:
    """The Java side's outputs file: ``(timestamp, data)`` per output event."""
    buf = path.read_bytes()
    (width,) = struct.unpack_from(">i", buf, 0)
    letters = buf[4:4 + width].decode()
    pos = 4 + width
    (count,) = struct.unpack_from(">i", buf, pos)
    pos += 4
    q, d, unpack_from = struct.Struct(">q"), struct.Struct(">d"), struct.unpack_from
    out: list[tuple[int, tuple[Any, ...]]] = []
    for _ in range(count):
        (ts,) = q.unpack_from(buf, pos)
        pos += 8
        values: list[Any] = []
        for letter in letters:
            present = buf[pos]
            pos += 1
            if not present:
                values.append(None)
            elif letter in "DF":
                values.append(d.unpack_from(buf, pos)[0])
                pos += 8
            elif letter in "LI":
                values.append(q.unpack_from(buf, pos)[0])
                pos += 8
            elif letter == "B":
                values.append(bool(buf[pos]))
                pos += 1
            else:
                (size,) = unpack_from(">H", buf, pos)
                values.append(buf[pos + 2:pos + 2 + size].decode())
                pos += 2 + size
        out.append((ts, tuple(values)))
    return out


def run_siddhi(workload: str, n: int, chunk: int, warmup_rounds: int = WARMUP_ROUNDS,
               warmup_events: int = WARMUP_EVENTS, warmup_seconds: float = WARMUP_SECONDS,
               timeout: int = 1800) -> Result:
    """Siddhi 5.1.33 on ``workload`` in a JVM of its own: chunks of ``chunk`` events through
    ``send(Event[])``, or one by one (``chunk`` 1) through ``send(long, Object[])``.

    ``peak_mb`` is the JVM's peak resident size during the timed round above its size before
    it, as the Python runs report theirs; ``process_mb`` the whole JVM's peak then.
    """
    reason = unavailable_reason()
    if reason:
        raise RuntimeError(reason)
    classes = compile_bench()
    events = events_file(n)
    system = "siddhi" if chunk > 1 else "siddhi-1"
    with tempfile.TemporaryDirectory(prefix="srota-siddhi-bench-") as tmp:
        app_file, out_file = Path(tmp) / "app.siddhi", Path(tmp) / "outputs.bin"
        app_file.write_text(APPS[workload])
        cmd = ["java", *JAVA_OPTIONS, "-cp", os.pathsep.join([str(classes), classpath()]), "SiddhiBench",
               str(app_file), str(events), "chunked" if chunk > 1 else "single", str(max(1, chunk)),
               str(warmup_rounds), str(warmup_events), str(warmup_seconds), str(out_file)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        answers = [json.loads(line[len(_PREFIX):]) for line in proc.stdout.splitlines() if line.startswith(_PREFIX)]
        if proc.returncode != 0 or not answers:
            tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
            raise RuntimeError(f"SiddhiBench {workload} failed (status {proc.returncode}): {tail}")
        got = answers[0]
        outputs = read_outputs(out_file)
    if workload == "W2":
        out: list[Any] = [((ts - START_TS) // 1000, *data) for ts, data in outputs]
    else:
        out = [data for _, data in outputs]
    canon = canonical(workload, out, n)
    note = (f"JVM {got['peak_mb']:.0f} MB peak RSS, {got['cpu_seconds']:.2f} CPU s, "
            f"after {got['warmup_rounds']} warm-up rounds")
    return Result(workload, system, n, got["seconds"], max(0.0, got["peak_mb"] - got["rss_before_mb"]),
                  len(out), digest(canon), note=note, process_mb=got["peak_mb"])
