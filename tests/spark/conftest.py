"""A shared local Spark session for the batch-job tests (skipped without Java or PySpark)."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def spark():
    from srota.service.spark.session import SparkUnavailable, get_spark

    try:
        session = get_spark("local[2]", "srota-tests", shuffle_partitions=4)
    except SparkUnavailable as exc:
        pytest.skip(str(exc))
    yield session
    session.stop()
