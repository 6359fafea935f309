"""Random apps on real Siddhi 5.1.33 and on Srota, compared: ``make difftest N=2000 SEED=7``.

    python -m tests.differential [--n 400] [--seed 1] [--family joins] [--out DIR] [-v]
    python -m tests.differential --family unique --classpath JARS   # an extension family
    python -m tests.differential --restore   # each app restored from a snapshot midway

An extension family (``unique``, ``reorder``) needs the siddhi-execution jars on the reference
engine's class path (``--classpath``, os.pathsep-separated), which the project does not build.

Prints, per family of the generator, how many apps agree on rows, timestamps and chunks, and
writes every divergent case with both answers to ``--out`` (default ``.cache/difftest``), where
``recorded.record`` can keep it as a regression case. An app Siddhi could not finish in its time
limit is counted apart and not compared. Exits 1 when an app diverges.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from tests.differential.generator import EXTENSION_FAMILIES, FAMILIES, generate
from tests.differential.harness import compare, run_srota
from tests.differential.reference import ROOT, ReferenceSiddhi


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=400, help="how many apps")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--family", choices=FAMILIES + EXTENSION_FAMILIES, help="only apps of this family")
    parser.add_argument("--classpath", default="", help="extension jars for the reference engine")
    parser.add_argument("--out", type=Path, default=ROOT / ".cache" / "difftest", help="where divergent cases go")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each divergence")
    parser.add_argument("--restore", action="store_true",
                        help="both engines snapshot each app at a step drawn from its id and go on in a "
                             "new runtime restored from it; Srota's answer must be Siddhi's restored one, "
                             "or Siddhi's without the restore where Siddhi's restore changed it (lost a "
                             "timer, reordered a hash table) or failed")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    tally: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    started = time.monotonic()
    if args.family in EXTENSION_FAMILIES and not args.classpath:
        parser.error(f"the {args.family} family needs its siddhi-execution jar: --classpath JARS")
    ref = ReferenceSiddhi(extra_classpath=args.classpath)
    try:
        for index in range(args.n):
            case = generate(args.seed, index, args.family)
            restored = with_restore(case) if args.restore else case
            family = case["family"]
            counts = tally[family]
            counts["apps"] += 1
            siddhi = ref.run(restored)
            # (with --restore, also Siddhi's answer without the restore: where Siddhi's own
            # restore fails or changes its answer, Srota's must be that one)
            unrestored = ref.run(case) if restored is not case else None
            if unrestored is not None and (siddhi.get("error") or "").startswith("CannotRestoreSiddhiAppState"):
                counts["restore_failed"] += 1
                siddhi = unrestored
            if siddhi.get("error") in ("timeout", "runner died"):
                counts["siddhi_timeout"] += 1
                continue
            srota = run_srota(restored)
            unordered = case.get("unordered", ())
            result = compare(siddhi, srota, unordered)
            out = args.out
            if not result.agree and unrestored is not None and compare(unrestored, srota, unordered).agree:
                # Siddhi's own restore changed its answer, Srota's did not (see --restore)
                counts["siddhi_restore_changed"] += 1
                result, out = compare(unrestored, srota, unordered), args.out / "siddhi-restore-changed"
                out.mkdir(exist_ok=True)
                (out / f"{case['id']}.json").write_text(
                    json.dumps({"case": restored, "siddhi": siddhi, "siddhi_unrestored": unrestored,
                                "srota": srota}, indent=1, default=repr))
            counts["rows"] += result.rows and result.errors
            counts["chunks"] += result.agree
            counts["rejected"] += bool(siddhi.get("error"))
            if not result.agree:
                (out / f"{case['id']}.json").write_text(
                    json.dumps({"case": restored, "siddhi": siddhi, "srota": srota,
                                "differences": result.differences}, indent=1, default=repr))
                if args.verbose:
                    print(f"DIVERGE {case['id']}\n  " + "\n  ".join(result.differences)[:1500])
    finally:
        ref.close()
    return _report(tally, time.monotonic() - started, args.out)


def with_restore(case: dict[str, Any]) -> dict[str, Any]:
    """``case`` with a restore step (``{"restore": true}``) at a place drawn from its id: after
    its first step, before its last (unchanged with one step, or where it publishes to a
    mapper); the app named if it is not."""
    from tests.differential.transport import uses_transports

    steps = case["steps"]
    if len(steps) < 2 or uses_transports(case):  # (a mapper family's messages: no restore there)
        return case
    at = random.Random(case["id"]).randrange(1, len(steps))
    app = case["app"]
    if "@app:name" not in app:  # (Siddhi restores only into an app of the same name)
        app = f"@app:name('restored')\n{app}"
    return dict(case, app=app, steps=[*steps[:at], {"restore": True}, *steps[at:]])


def _report(tally: dict[str, dict[str, int]], seconds: float, out: Path) -> int:
    print(f"{'family':<16} {'apps':>5} {'rows':>7} {'chunks':>7} {'rejected':>9} {'timeout':>8}")
    total: dict[str, int] = defaultdict(int)
    for family in sorted(tally):
        c = tally[family]
        for k, v in c.items():
            total[k] += v
        print(_line(family, c))
    print(_line("all", total))
    compared = total["apps"] - total["siddhi_timeout"]
    diverged = compared - total["chunks"]
    print(f"{compared} apps compared in {seconds:.0f} s; {diverged} diverged"
          + (f" (cases in {out})" if diverged else ""))
    if total["restore_failed"]:
        print(f"{total['restore_failed']} apps Siddhi could not restore: Srota's compared with Siddhi's "
              "answer without the restore")
    if total["siddhi_restore_changed"]:
        print(f"{total['siddhi_restore_changed']} apps whose answer Siddhi's restore changed and Srota's did not "
              f"(counted as agreeing; both answers in {out / 'siddhi-restore-changed'})")
    return 1 if diverged else 0


def _line(name: str, c: dict[str, int]) -> str:
    compared = max(1, c["apps"] - c["siddhi_timeout"])
    return (f"{name:<16} {c['apps']:>5} {100.0 * c['rows'] / compared:>6.1f}% {100.0 * c['chunks'] / compared:>6.1f}% "
            f"{c['rejected']:>9} {c['siddhi_timeout']:>8}")


if __name__ == "__main__":
    sys.exit(main())
