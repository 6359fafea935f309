"""``srota aggregation``: inputs are checked before Spark starts (one line, exit code 2)."""
from __future__ import annotations

import os

import pytest
from srota.service.cli import main

APP = ("define stream S (k string, v long, ts long);\n"
       "@store(type='sqlite', database='{db}')\n"
       "define aggregation A from S select k, sum(v) as total group by k aggregate by ts every sec ... day;")


@pytest.fixture
def no_spark(monkeypatch):
    """Fail the test if a job gets as far as starting Spark."""
    import srota.service.spark.backfill as backfill
    import srota.service.spark.purge as purge

    def refuse(*args, **kwargs):
        raise AssertionError("Spark was started")

    monkeypatch.setattr(backfill, "get_spark", refuse)
    monkeypatch.setattr(purge, "get_spark", refuse)


def _run(capsys, *argv: str) -> tuple[int, str]:
    code = main(["aggregation", *argv])
    err = capsys.readouterr().err.strip()
    return code, err


@pytest.fixture
def app(tmp_path):
    path = tmp_path / "app.siddhi"
    path.write_text(APP.format(db=tmp_path / "a.db"))
    return path


def test_missing_input_path(tmp_path, app, capsys, no_spark):
    code, err = _run(capsys, "backfill", str(app), "--aggregation", "A", "--input", str(tmp_path / "none.json"))
    assert code == 2 and err == f"srota aggregation: input path {tmp_path / 'none.json'} does not exist"
    code, err = _run(capsys, "backfill", str(app), "--aggregation", "A", "--input", str(tmp_path / "*.csv"))
    assert code == 2 and err.endswith("matches no file") and "\n" not in err


def test_missing_or_unreadable_app(tmp_path, app, capsys, no_spark):
    src = tmp_path / "e.json"
    src.write_text("")
    code, err = _run(capsys, "backfill", str(tmp_path / "no.siddhi"), "--aggregation", "A", "--input", str(src))
    assert code == 2 and err == f"srota aggregation: app file {tmp_path / 'no.siddhi'} does not exist"
    code, err = _run(capsys, "purge", str(tmp_path / "no.siddhi"), "--aggregation", "A")
    assert code == 2 and "\n" not in err
    if os.geteuid() != 0:  # root reads any file
        app.chmod(0)
        code, err = _run(capsys, "backfill", str(app), "--aggregation", "A", "--input", str(src))
        assert code == 2 and err.endswith("is not readable")


def test_unknown_aggregation_and_bad_app(tmp_path, app, capsys, no_spark):
    src = tmp_path / "e.json"
    src.write_text("")
    code, err = _run(capsys, "backfill", str(app), "--aggregation", "B", "--input", str(src))
    assert code == 2 and err.startswith("srota aggregation: ") and "no aggregation 'B'" in err and "\n" not in err
    code, err = _run(capsys, "purge", str(app), "--aggregation", "B", "--dry-run")
    assert code == 2 and "no aggregation 'B'" in err
    app.write_text("define stream S (k string;\n")
    code, err = _run(capsys, "backfill", str(app), "--aggregation", "A", "--input", str(src))
    assert code == 2 and "\n" not in err


class _SparkLikeError(Exception):
    """Stands for py4j's Py4JJavaError, whose text carries the Java exception."""

    __module__ = "py4j.protocol"


def test_a_job_runs_again_while_its_database_is_unreachable(app, capsys, monkeypatch):
    """Found by the chaos soak: a purge (or backfill) reading while PostgreSQL restarted failed
    the whole job.  Both jobs are idempotent, so they run again while the database is away."""
    import srota.service.spark.cli as cli
    import srota.service.spark.purge as purge

    calls = []

    def flaky_purge(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise _SparkLikeError("An error occurred while calling o53.collectToPython.\n"
                                  "org.postgresql.util.PSQLException: An I/O error occurred while sending to the backend.")
        if len(calls) == 2:  # (Spark's own words when it cannot connect at all)
            raise _SparkLikeError("[FAILED_JDBC.CONNECTION] Failed JDBC jdbc:postgresql:*********(redacted) on the "
                                  "operation: Couldn't connect to the database SQLSTATE: HV000")
        return {"SECONDS": 4}

    monkeypatch.setattr(purge, "purge", flaky_purge)
    monkeypatch.setattr(cli.time, "sleep", lambda s: None)
    code, err = _run(capsys, "purge", str(app), "--aggregation", "A")
    assert code == 0 and len(calls) == 3
    assert err.count("the database is unreachable") == 2

    calls.clear()
    code, err = _run(capsys, "purge", str(app), "--aggregation", "A", "--retry-for", "0")
    assert code == 1 and len(calls) == 1, "--retry-for 0 gives up at once"
    assert "Spark job failed" in err


def test_a_job_that_fails_otherwise_is_not_run_again(app, capsys, monkeypatch):
    import srota.service.spark.purge as purge

    calls = []

    def broken(*args, **kwargs):
        calls.append(1)
        raise _SparkLikeError("An error occurred: java.lang.ArithmeticException: / by zero")

    monkeypatch.setattr(purge, "purge", broken)
    code, err = _run(capsys, "purge", str(app), "--aggregation", "A")
    assert code == 1 and len(calls) == 1
