"""Spark jobs fail with a clear message when Java is missing (no Spark needed)."""
from __future__ import annotations

import pytest
from srota.service.spark.session import SparkUnavailable, find_java


def test_missing_java_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SparkUnavailable, match="Java 17"):
        find_java()


def test_bad_java_home_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nojava"))
    with pytest.raises(SparkUnavailable, match="JAVA_HOME"):
        find_java()
