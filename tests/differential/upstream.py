"""Siddhi's own test methods, transcribed, with real Siddhi's recorded answers.

``tests/differential/upstream/*.json`` holds, per test class of siddhi-core or of a
siddhi-execution-* extension, the methods that the shared conformance suite does not carry,
transcribed into its case format (an app, the events its test sends) and turned into runner
cases, each with the answer Siddhi 5.1.33 gave.  ``test_upstream.py`` runs every one on Srota
and compares, as ``test_recorded.py`` does for the divergences found by the generator, so the
behaviours the upstream suites pin stay Siddhi's where no JVM is.

Only deterministic cases are kept: no wall clock (``timing`` "none", no ``$now``), no
``@Async``, no test-only extension.  Output times are compared only where they are the same on
every run (``timestamps``: a playback app whose events all carry their time); elsewhere an
event sent without a timestamp, or an expired one, takes the clock's time in either engine.

To record (with the reference engine here; ``--classpath`` adds extension jars built from the
siddhi-execution-* sources, which are not in the project)::

    python -m tests.differential.upstream CASES.json... [--classpath JARS] [--out DIR]

A case whose answers differ is not kept: it is printed, for a fix or a note in
docs/siddhi-differences.md.  ``upstream_asserted/`` holds the methods whose extension cannot be built
here (siddhi-execution-unitconversion needs javax.measure; map's toJSON, createFromJSON and
createFromXML need org.json and axiom), judged by their own assertions instead.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from tests.differential.conformance import _suite, to_runner_case
from tests.differential.harness import compare, run_srota
from tests.differential.reference import ReferenceSiddhi

UPSTREAM = Path(__file__).resolve().parent / "upstream"
#: Methods of an extension real Siddhi cannot run here (no jar can be built for it), in the
#: conformance case format with the Java test's own assertions as the expectation.
UPSTREAM_ASSERTED = Path(__file__).resolve().parent / "upstream_asserted"


def upstream_files() -> list[Path]:
    """Every recorded upstream class, by name."""
    return sorted(UPSTREAM.glob("*.json"))


def kept(case: dict[str, Any]) -> bool:
    """Whether ``case`` (conformance format) gives the same answer on every run of either engine."""
    return (case.get("timing") != "wallclock" and "$now" not in json.dumps(case.get("input", []))
            and not case.get("requires_extension") and "@async" not in case["app"].lower())


def fixed_times(runner_case: dict[str, Any]) -> bool:
    """Whether the output times of ``runner_case`` are the same on every run: a playback app whose
    events all carry their timestamps (without playback an expired event takes the clock's time)."""
    return "@app:playback" in runner_case["app"].lower() and all(
        e[0] is not None for step in runner_case["steps"] for e in step.get("events", ()))


def record(paths: list[Path], out: Path, extra_classpath: str = "") -> tuple[int, list[str]]:
    """Record the kept cases of ``paths`` whose answers agree into ``out/<Class>.json``; returns
    how many were kept and a line for each that was not."""
    suite = _suite()
    cases = [c for c in suite.load_cases([str(p) for p in paths], None, None, False) if kept(c)]
    by_class: dict[str, dict[str, Any]] = defaultdict(dict)
    refused: list[str] = []
    ref = ReferenceSiddhi(extra_classpath=extra_classpath)
    try:
        for case in cases:
            runner_case = to_runner_case(case)
            siddhi = ref.run(runner_case)
            if siddhi.get("error") in ("timeout", "runner died"):
                refused.append(f"{case['id']}: Siddhi gave no answer ({siddhi['error']})")
                continue
            timed = fixed_times(runner_case)
            result = compare(siddhi, run_srota(runner_case))
            if not (result.errors and result.rows and result.chunks and (result.timestamps or not timed)):
                refused.append(f"{case['id']}: " + "; ".join(result.differences)[:300])
                continue
            by_class[case["id"].rsplit(".", 1)[0]][case["id"]] = {
                "id": case["id"], "source": case.get("source"), "case": runner_case, "siddhi": siddhi,
                "timestamps": timed}
    finally:
        ref.close()
    out.mkdir(parents=True, exist_ok=True)
    for cls, entries in by_class.items():
        path = out / f"{cls}.json"
        old = {e["id"]: e for e in json.loads(path.read_text())} if path.exists() else {}
        old.update(entries)
        path.write_text(json.dumps(sorted(old.values(), key=lambda e: e["id"]), indent=None,
                                   separators=(",", ":")) + "\n")
    return sum(len(e) for e in by_class.values()), refused


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--classpath", default="", help="extension jars for the reference engine")
    parser.add_argument("--out", type=Path, default=UPSTREAM)
    args = parser.parse_args(argv)
    count, refused = record(args.paths, args.out, args.classpath)
    for line in refused:
        print("NOT KEPT", line)
    print(f"{count} cases kept, {len(refused)} not")
    return 0


if __name__ == "__main__":
    sys.exit(main())
