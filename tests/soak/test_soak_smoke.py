"""The 60-second smoke of the chaos soak (tests/soak), part of ``make test``: every process real
(its own broker, Mosquitto, PostgreSQL and three workers: the soak kills and stops them, which the
session's shared servers must not see), faults of four kinds, every check.  (``make soak`` draws
backfills and purges too.)

It takes about two minutes: start-up, the 60 s run, draining, and the Spark parity backfill (the
wait for the last minute to close is left out: its rows are not compared here, they are in
``make soak``).  Skipped only where a server or Spark cannot run here, with the reason.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import _mosquitto_binary, _tansu_binary
from tests.dbservers import postgres_bin
from tests.soak.soak import Options, run

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def _missing() -> str | None:
    if _tansu_binary() is None:
        return "the Kafka-compatible broker (tansu) is not installed (run `make deps`)"
    if _mosquitto_binary() is None:
        return "mosquitto is not installed (run `make deps`)"
    if postgres_bin() is None:
        return "PostgreSQL is not installed (run `make deps`)"
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (the soak's parity check runs Spark)"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "Java is not installed (the soak's parity check runs Spark)"
    return None


@pytest.mark.timeout(900)
async def test_soak_smoke(tmp_path: Path) -> None:
    missing = _missing()
    if missing:
        pytest.skip(missing)
    report = await run(Options(seconds=60, seed=SEED, gap=(8.0, 11.0), warmup=10.0, rate=30.0,
                               kinds=("kill", "zombie", "broker", "mosquitto", "postgres"), workdir=tmp_path,
                               wait_last_minute=False, keep=False))
    print(report.summary())
    assert len({f.kind for f in report.faults}) >= 3, "the schedule drew faults of fewer than 3 kinds"
    assert report.ok, report.summary()


#: A seed whose schedule has a zombie, a PostgreSQL stop, a Mosquitto restart and a SIGKILL (printed).
SEED = 62
