"""Spark batch jobs for incremental aggregation: backfill and purge (PySpark imported lazily).

``srota aggregation backfill|purge`` (see :mod:`.cli`).  The rest of the project never imports
PySpark, so it runs without Java.
"""
from srota.service.spark.session import SparkUnavailable

__all__ = ["SparkUnavailable"]
