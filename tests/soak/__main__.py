"""``python -m tests.soak [--seconds 600] [--seed N]``: one chaos soak run, its summary, exit 1 on
any mismatch or loss (tests/soak/soak.py)."""
from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from pathlib import Path

from tests.soak.chaos import KINDS
from tests.soak.soak import Options, run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.soak", description=__doc__)
    p.add_argument("--seconds", type=float, default=600.0, help="how long the producers run (default 600)")
    p.add_argument("--seed", type=int, default=None, help="the chaos schedule's seed (default: from the clock)")
    p.add_argument("--rate", type=float, default=40.0, help="Kafka events a second (default 40)")
    p.add_argument("--mqtt-rate", type=float, default=5.0, help="MQTT messages a second (default 5)")
    p.add_argument("--gap", default="10,20", help="seconds between faults, MIN,MAX (default 10,20: >= 30 in 600 s)")
    p.add_argument("--kinds", default=",".join(KINDS), help=f"fault kinds to draw from (default {','.join(KINDS)})")
    p.add_argument("--warmup", type=float, default=20.0, help="seconds before the first fault (default 20)")
    p.add_argument("--workdir", type=Path, default=None, help="logs and data (default: a new temp folder)")
    args = p.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time()) % 100_000
    lo, hi = (float(x) for x in args.gap.split(","))
    kinds = tuple(k for k in args.kinds.split(",") if k)
    unknown = set(kinds) - set(KINDS)
    if unknown:
        p.error(f"unknown fault kinds {sorted(unknown)}")
    opts = Options(seconds=args.seconds, seed=seed, rate=args.rate, mqtt_rate=args.mqtt_rate, gap=(lo, hi),
                   kinds=kinds, warmup=args.warmup, workdir=args.workdir)
    # The soak's own Kafka and MQTT clients log every refused connection of an outage: to a file.
    if opts.workdir is not None:
        opts.workdir.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(filename=str((opts.workdir or Path(tempfile.gettempdir())) / "soak-clients.log"),
                        level=logging.WARNING)
    try:
        report = asyncio.run(run(opts))
    except KeyboardInterrupt:  # the run's processes were stopped on the way out (Soak.stop)
        print("interrupted: every process of the run was stopped", file=sys.stderr)
        return 130
    print(report.summary(), flush=True)
    if report.dir is not None:
        (report.dir / "summary.txt").write_text(report.summary() + "\n")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
