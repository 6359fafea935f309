"""Starting Spark for the aggregation jobs, and loading the aggregation they work on.

PySpark is imported here only, lazily.  ``local[*]`` is the default master; a ``--master``
URL runs the same job on a cluster (the project's packages are shipped to the executors as a
zip).  A missing Java or PySpark gives a clear :class:`SparkUnavailable` instead of a JVM
stack trace.
"""
from __future__ import annotations

import logging
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_log = logging.getLogger("srota.spark")

SQLITE_JAR = os.environ.get("SROTA_SQLITE_JDBC_JAR", "/usr/share/java/sqlite-jdbc.jar")
_ROOT = Path(__file__).resolve().parents[2]


class SparkUnavailable(RuntimeError):
    """Spark cannot run here: no Java, no PySpark, or no SQLite JDBC driver when one is needed."""


def find_java() -> str:
    """The java executable Spark will use; raises SparkUnavailable when there is none."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        if candidate.exists():
            return str(candidate)
        raise SparkUnavailable(f"JAVA_HOME is {home}, but {candidate} does not exist")
    java = shutil.which("java")
    if java is None:
        raise SparkUnavailable("Spark needs Java 17 and none was found: install a JRE "
                               "(e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME")
    return java


def require_jdbc_jar() -> str:
    """The SQLite JDBC jar path; raises SparkUnavailable when it is missing."""
    if not Path(SQLITE_JAR).exists():
        raise SparkUnavailable(f"the SQLite JDBC driver is missing ({SQLITE_JAR}): install "
                               f"libxerial-sqlite-jdbc-java or set SROTA_SQLITE_JDBC_JAR")
    return SQLITE_JAR


def _code_zip() -> str:
    """``srota.grammar``, ``srota.engine`` and ``srota.service.spark`` as a zip for executors on
    a cluster (local mode imports them directly): the Python fallback of the backfill runs the
    engine's code there.  The rooms sit at the repository root and go in under ``srota/``."""
    path = Path(tempfile.gettempdir()) / f"srota-pyfiles-{os.getpid()}.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.write(_ROOT / "srota" / "__init__.py", "srota/__init__.py")
        zf.write(_ROOT / "service" / "__init__.py", "srota/service/__init__.py")
        for package in ("grammar", "engine", "service/spark"):
            for f in (_ROOT / package).rglob("*"):
                if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
                    zf.write(f, Path("srota") / f.relative_to(_ROOT))
    return str(path)


#: JDBC drivers of the rdbms store's databases (Debian's libpostgresql-jdbc-java, libmariadb-java),
#: put on Spark's class path when present; ``--jars`` adds others (MySQL Connector/J, ...).
SERVER_JARS = (os.environ.get("SROTA_POSTGRESQL_JDBC_JAR", "/usr/share/java/postgresql.jar"),
               os.environ.get("SROTA_MARIADB_JDBC_JAR", "/usr/share/java/mariadb-java-client.jar"))


def get_spark(master: str | None = None, app_name: str = "srota-aggregation", shuffle_partitions: int = 8,
              extra_jars: tuple[str, ...] = ()) -> Any:
    """A SparkSession (``local[*]`` unless ``master`` is given) with UTC session time."""
    find_java()
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:  # pragma: no cover - pyspark is installed in the venv
        raise SparkUnavailable("PySpark is not installed: pip install 'srota[spark]'") from exc
    master = master or "local[*]"
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.sql.session.timeZone", "UTC")
               # Java semantics for the translated expressions: int overflow wraps, a bad cast
               # is null (the expressions guard what ANSI mode would raise on)
               .config("spark.sql.ansi.enabled", "false")
               .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
               .config("spark.ui.showConsoleProgress", "true")
               .config("spark.ui.enabled", "false"))
    jars = [j for j in (SQLITE_JAR, *SERVER_JARS) if Path(j).exists()] + list(extra_jars)
    if jars:
        builder = builder.config("spark.jars", ",".join(jars))
    os.environ.setdefault("PYSPARK_PYTHON", os.environ.get("PYSPARK_PYTHON") or _python())
    try:
        spark = builder.getOrCreate()
    except Exception as exc:
        raise SparkUnavailable(f"Spark could not start ({type(exc).__name__}: {exc})") from exc
    spark.sparkContext.setLogLevel("WARN")
    if not master.startswith("local"):
        spark.sparkContext.addPyFile(_code_zip())
    return spark


def _python() -> str:
    import sys
    return sys.executable


@dataclass
class LoadedAggregation:
    """An app's aggregation, planned by the engine (its spec, store and purge policy)."""

    app_text: str
    runtime: Any
    aggregation: Any

    @property
    def spec(self) -> Any:
        return self.aggregation.spec

    @property
    def store(self) -> Any:
        return self.aggregation.store

    def close(self) -> None:
        self.runtime.shutdown()


def load_aggregation(app_path: str, aggregation_id: str, shard_id: str | None = None) -> LoadedAggregation:
    """Plan the app (not started: no timers, no sources) and find aggregation ``aggregation_id``.

    The aggregation must use ``@store(type='sqlite', ...)`` or ``@store(type='rdbms', ...)``:
    the jobs write to that database (an rdbms store with ``@PartitionById`` under ``shard_id``).
    """
    from srota.engine import SiddhiManager
    from srota.engine.aggregation.store import SqliteStore
    from srota.engine.stores.aggregation import SqlAggregationStore

    text = Path(app_path).read_text()
    runtime = SiddhiManager(shard_id=shard_id).create_siddhi_app_runtime(text)
    agg = runtime.context.aggregations.get(aggregation_id)
    if agg is None:
        runtime.shutdown()
        known = ", ".join(runtime.context.aggregations) or "none"
        raise ValueError(f"{app_path} has no aggregation '{aggregation_id}' (it has: {known})")
    if not isinstance(agg.store, SqliteStore | SqlAggregationStore):
        runtime.shutdown()
        raise ValueError(f"aggregation '{aggregation_id}' has no @store(type='sqlite', database='PATH') or "
                         f"@store(type='rdbms', jdbc.url=...): the batch jobs write to that database")
    return LoadedAggregation(text, runtime, agg)


def jdbc_of(store: Any) -> tuple[str, dict[str, str]]:
    """The JDBC URL and connection properties of an rdbms aggregation store (for Spark)."""
    url = store.db.url
    scheme = "postgresql" if url.dialect == "postgresql" else "mariadb"
    props = {"user": url.user or "", "password": url.password or "",
             "driver": "org.postgresql.Driver" if scheme == "postgresql" else "org.mariadb.jdbc.Driver"}
    if scheme == "mariadb":
        props["sessionVariables"] = "sql_mode=ANSI_QUOTES"  # the staging upsert quotes names the ANSI way
    return f"jdbc:{scheme}://{url.host}:{url.port}/{url.database}", props
