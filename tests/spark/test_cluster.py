"""The batch jobs on a real Spark standalone cluster (master + one worker on loopback).

The cluster comes from pyspark's own launcher (``bin/spark-class``), on free ports, and is
stopped after the test.  ``srota aggregation backfill --master spark://...`` and ``purge``
run as separate processes (the driver), the executors run the per-event code shipped as a zip
(one expression takes the Python fallback, so the engine's code runs on the executors too),
and the rows must equal those of the same jobs on ``local[2]``.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(600)]

APP = ("define stream S (k string, v double, n long, ts long);\n"
       "@store(type='sqlite', database='{db}')\n"
       "@purge(enable='true', interval='1 min', @retentionPeriod(sec='120 sec', min='24 hours'))\n"
       "define aggregation A from S[n > 0]\n"
       # convert() has no Spark SQL translation: the executors run the engine's shipped code
       "select k, sum(v) as total, count() as c, max(n) as mx, distinctCount(n) as dn, v / n as ratio,\n"
       "       convert(v, 'string') as vText\n"
       "group by k aggregate by ts every sec ... day;")
T0 = 1_700_000_000_000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


@pytest.fixture
def cluster(tmp_path):
    """``spark://127.0.0.1:PORT`` of a master with one registered worker (2 cores, 1 GB)."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java")
    home = _spark_home()
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable, "SPARK_WORKER_DIR": str(tmp_path / "work")}
    port, ui = _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs = []
    logs = []
    try:
        for name, args in (
            ("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                        "--webui-port", str(ui)]),
            ("worker", ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", str(_free_port()),
                        "--webui-port", str(_free_port()), "--cores", "2", "--memory", "1g", url]),
        ):
            log = (tmp_path / f"{name}.log").open("w")
            logs.append(log)
            procs.append(subprocess.Popen([str(home / "bin" / "spark-class"), *args], env=env, stdout=log,
                                          stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json", timeout=2) as r:
                    if json.load(r).get("aliveworkers", 0) >= 1:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                pytest.fail("the standalone cluster did not come up:\n" + "\n".join(
                    (tmp_path / f"{n}.log").read_text()[-2000:] for n in ("master", "worker")))
            time.sleep(1)
        yield url
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        for log in logs:
            log.close()


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    return subprocess.run([sys.executable, "-m", "srota.service.cli", "aggregation", *args], capture_output=True,
                          text=True, timeout=400, env=env)


def _rows(db) -> dict[str, list]:
    conn = sqlite3.connect(db)
    return {t: sorted(conn.execute(f'SELECT * FROM "A_{t}"').fetchall(), key=repr)
            for t in ("SECONDS", "MINUTES", "HOURS", "DAYS")}


def test_backfill_and_purge_on_a_standalone_cluster_equal_local(tmp_path, cluster, spark):
    from srota.service.spark.backfill import backfill
    from srota.service.spark.purge import purge

    rnd = random.Random(7)
    src = tmp_path / "events.json"
    t = T0
    with src.open("w") as f:
        for _ in range(3000):
            t += rnd.randint(0, 4000)
            f.write(json.dumps({"k": rnd.choice("abc"), "v": rnd.randint(0, 400) * 0.5, "n": rnd.randint(-1, 9),
                                "ts": t - rnd.randint(0, 1500)}) + "\n")
    now = t + 3_600_000
    local_app, remote_app = tmp_path / "local.siddhi", tmp_path / "remote.siddhi"
    local_app.write_text(APP.format(db=tmp_path / "local.db"))
    remote_app.write_text(APP.format(db=tmp_path / "remote.db"))

    backfill(str(local_app), "A", str(src), "json", spark=spark, progress=None)
    done = _cli("backfill", str(remote_app), "--aggregation", "A", "--input", str(src), "--master", cluster)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"on {cluster}" in done.stderr and "Python (Arrow, mapInArrow)" in done.stderr
    local = _rows(tmp_path / "local.db")
    assert local["SECONDS"] and _rows(tmp_path / "remote.db") == local

    purge(str(local_app), "A", now, spark=spark, progress=None)
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(now / 1000))
    done = _cli("purge", str(remote_app), "--aggregation", "A", "--now", when, "--master", cluster)
    assert done.returncode == 0, done.stderr[-3000:]
    purged = _rows(tmp_path / "local.db")
    assert len(purged["SECONDS"]) < len(local["SECONDS"])
    assert _rows(tmp_path / "remote.db") == purged
