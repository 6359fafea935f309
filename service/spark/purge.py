"""``srota aggregation purge``: apply an aggregation's retention policy, or rebuild a table, with Spark.

Purge: Spark reads every table's row times (SQLite, PostgreSQL or MariaDB over JDBC; the
bucket column Siddhi's purger compares: ``AGG_EVENT_TIMESTAMP`` in Siddhi's layout for event
time) and computes, per granularity, the newest bucket and how many rows fall before the purge
bound (:func:`engine.aggregation.purge.purge_bounds`: the retention, but never past the end of the
newest bucket the next coarser table holds).  The deletes themselves are one ``DELETE`` per
table on the driver (SQLite has a single writer).

Rebuild (``--rebuild hours``): Spark recomputes the coarser table from the next finer one
(sums of sums, minimum of minimums, union of distinct sets, the latest row's values) and
upserts it.  Only buckets the finer table covers completely are written: those starting at or
after the oldest finer row, and before the bucket of the newest finer row (still open in a
live engine).
"""
from __future__ import annotations

import sys
import time
from typing import Any

from srota.engine.aggregation.buckets import duration_named, next_bucket_start
from srota.engine.aggregation.purge import purge_bounds
from srota.grammar.model import AttrType, TimeDuration
from srota.service.spark.backfill import write_rows
from srota.service.spark.buckets import bucket_sql
from srota.service.spark.session import (
    LoadedAggregation,
    get_spark,
    jdbc_of,
    load_aggregation,
    require_jdbc_jar,
)

#: The shard id the purge opens a ``@PartitionById`` aggregation's store under (it writes nothing).
PURGE_SHARD = "srota-purge"


def _say(msg: str) -> None:
    print(f"[srota purge] {msg}", file=sys.stderr, flush=True)


def read_table(spark: Any, loaded: LoadedAggregation, duration: TimeDuration) -> Any:
    """One aggregation table as a Spark DataFrame in the SQLite layout's columns (``AGG_TIMESTAMP``,
    keys, ``AGG_TIMEZONE``, ``AGG_LAST_EVENT_TIMESTAMP``, latest values, base values), one row per
    bucket and key: what :func:`rebuild_sql` rolls up and ``write_rows`` writes.

    SQLite is read through its JDBC driver.  An ``rdbms`` table in Siddhi's layout may hold
    several rows per bucket and key (shards, and the rows Siddhi writes for late events): the
    engine's reader composes them (every base value's rule), on the driver."""
    store = loaded.store
    store.flush()
    if hasattr(store, "db"):
        return _read_server_table(spark, loaded, duration)
    require_jdbc_jar()
    # Declared SQLite types map to 32-bit ints through the driver: read INTEGER as BIGINT.
    spark_types = {"INTEGER": "BIGINT", "REAL": "DOUBLE", "TEXT": "STRING", "BLOB": "BINARY"}
    custom = ", ".join(f"`{c}` {spark_types[t]}" for c, t in store.schema.columns)
    return (spark.read.format("jdbc").option("url", f"jdbc:sqlite:{store.database}")
            .option("dbtable", f'"{store.tables[duration]}"').option("driver", "org.sqlite.JDBC")
            .option("customSchema", custom).load())


def _read_server_table(spark: Any, loaded: LoadedAggregation, duration: TimeDuration) -> Any:
    from pyspark.sql import types as T
    from srota.engine.aggregation.store import SqliteSchema

    layout = SqliteSchema(loaded.spec)
    spark_types = {"INTEGER": T.LongType(), "REAL": T.DoubleType(), "TEXT": T.StringType()}
    schema = T.StructType([T.StructField(c, spark_types[t], True) for c, t in layout.columns])
    # booleans are 0/1 in the SQLite layout (INTEGER), keys included
    rows = [tuple(int(v) if isinstance(v, bool) else v for v in layout.to_params(ts, key, row))
            for ts, key, row in loaded.store.scan(duration)]
    return spark.createDataFrame(rows, schema)


def read_times(spark: Any, loaded: LoadedAggregation, duration: TimeDuration) -> Any:
    """The time of every stored row of a table (column ``t``), as its purge compares it: the
    bucket, which is ``AGG_EVENT_TIMESTAMP`` in Siddhi's layout for event time (as Siddhi's
    ``IncrementalDataPurger`` deletes) and ``AGG_TIMESTAMP`` otherwise.  Rows, not buckets:
    a delete counts rows."""
    store = loaded.store
    if not hasattr(store, "db"):
        return read_table(spark, loaded, duration).selectExpr("AGG_TIMESTAMP AS t")
    store.flush()
    url, props = jdbc_of(store)
    q = store.db.q
    query = f"(SELECT {q(store.schema.time_column)} AS t FROM {q(store.tables[duration])}) srota_times"
    return spark.read.jdbc(url, query, properties=props).selectExpr("CAST(t AS BIGINT) AS t")


def format_time(ms: int) -> str:
    """``2018-01-05 10:00:00.000 UTC`` for epoch ms (purge bounds, progress lines)."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def purge(app_path: str, aggregation_id: str, now: int | None = None, master: str | None = None,
          spark: Any = None, progress: Any = _say, dry_run: bool = False) -> dict[str, int]:
    """Delete rows outside the retention policy (every shard's); returns rows deleted (or due,
    with ``dry_run``) per table.  A table without a bound (no retention, or nothing coarser stored
    yet) is left alone."""
    from pyspark.sql import functions as F

    say = progress or (lambda msg: None)
    # A sharded (@PartitionById) store needs a shard id to open; the purge writes no rows and
    # deletes every shard's, as Siddhi's purger does, so any id not a live writer's will do.
    loaded = load_aggregation(app_path, aggregation_id, PURGE_SHARD)
    own = spark is None
    try:
        t = time.perf_counter()
        spark = spark or get_spark(master, f"srota-purge-{aggregation_id}")
        say(f"session: Spark {spark.version} on {spark.sparkContext.master} ready in "
            f"{time.perf_counter() - t:.1f}s")
        agg = loaded.aggregation
        now = int(time.time() * 1000) if now is None else now
        say(f"purging as of {format_time(now)}" + (" (dry run: nothing is deleted)" if dry_run else ""))
        durations = agg.durations
        newest: dict[TimeDuration, tuple[int, int] | None] = {}
        frames = {}
        for d in durations:
            df = read_times(spark, loaded, d)
            frames[d] = df
            top = df.agg(F.max("t")).first()[0]
            newest[d] = None if top is None else (int(top), 0)  # buckets align in GMT
        bounds = purge_bounds(agg.policy, durations, now, newest)
        deleted: dict[str, int] = {}
        for d in durations:
            table = loaded.store.tables[d]
            bound = bounds.get(d)
            if bound is None:
                why = "no retention" if agg.policy.retention.get(d) is None else "the next coarser table is empty"
                say(f"{table}: kept whole ({why})")
                continue
            due = frames[d].where(F.col("t") < F.lit(bound)).count()
            n = due if dry_run else (loaded.store.delete_before(d, bound) if due else 0)
            deleted[table] = n
            verb = "would be deleted" if dry_run else "deleted"
            say(f"{table}: {n} row(s) before {format_time(bound)} {verb}")
        return deleted
    finally:
        loaded.close()
        if own and spark is not None:
            spark.stop()


def rebuild_sql(spec: Any, duration: TimeDuration, view: str, low: int, high: int) -> str:
    """Spark SQL rolling the finer table in ``view`` up into ``duration`` buckets in ``[low, high)``."""
    off = "0"  # buckets align in GMT (engine/aggregation/buckets.py)
    keys = [f"`{n}`" for n, _ in spec.group_by]
    order = "AGG_LAST_EVENT_TIMESTAMP"
    sel = [f"{bucket_sql('AGG_TIMESTAMP', off, duration)} AS `AGG_TIMESTAMP`", *keys,
           f"max_by(AGG_TIMEZONE, {order}) AS `AGG_TIMEZONE`", f"max({order}) AS `{order}`"]
    sel += [f"max_by(`{n}`, {order}) AS `{n}`" for n, _ in spec.latest]
    for b in spec.bases:
        c = f"`{b.name}`"
        if b.op in ("sum", "count"):
            sel.append(f"sum({c}) AS {c}")
        elif b.op in ("min", "max"):
            sel.append(f"{b.op}({c}) AS {c}")
        else:
            elem = {AttrType.STRING: "string", AttrType.INT: "int", AttrType.LONG: "bigint",
                    AttrType.BOOL: "boolean", AttrType.FLOAT: "float", AttrType.DOUBLE: "double"}[b.arg_type]
            sel.append(f"to_json(array_sort(array_distinct(flatten(collect_list(from_json({c}, "
                       f"'array<{elem}>')))))) AS {c}")
    group = ", ".join(["1", *keys])
    return (f"SELECT * FROM (SELECT {', '.join(sel)} FROM {view} GROUP BY {group}) "
            f"WHERE AGG_TIMESTAMP >= {low}L AND AGG_TIMESTAMP < {high}L")


def rebuild(app_path: str, aggregation_id: str, granularity: str, master: str | None = None,
            spark: Any = None, progress: Any = _say) -> int:
    """Recompute ``granularity``'s table from the next finer table; returns rows upserted."""
    from pyspark.sql import functions as F
    from srota.engine.aggregation.buckets import bucket_start

    say = progress or (lambda msg: None)
    loaded = load_aggregation(app_path, aggregation_id)
    own = spark is None
    try:
        agg = loaded.aggregation
        duration = duration_named(granularity)
        if duration not in agg.durations:
            raise ValueError(f"aggregation '{aggregation_id}' does not keep {duration.value}")
        i = agg.durations.index(duration)
        if i == 0:
            raise ValueError(f"{duration.value} is the finest granularity of '{aggregation_id}': "
                             f"there is no finer table to rebuild it from")
        finer = agg.durations[i - 1]
        spark = spark or get_spark(master, f"srota-rebuild-{aggregation_id}")
        df = read_table(spark, loaded, finer)
        stats = df.agg(F.min("AGG_TIMESTAMP"), F.max("AGG_TIMESTAMP")).first()
        if stats[0] is None:
            say(f"{loaded.store.tables[finer]} is empty: nothing to rebuild")
            return 0
        oldest, newest_row = int(stats[0]), int(stats[1])
        off = 0  # buckets align in GMT
        # The first coarse bucket counts only if the finer table starts exactly at its start.
        first = bucket_start(oldest, duration, off)
        low = first if first == oldest else next_bucket_start(first, duration, off)
        high = bucket_start(newest_row, duration, off)
        view = f"srota_rebuild_{aggregation_id}"
        df.createOrReplaceTempView(view)
        rows = spark.sql(rebuild_sql(loaded.spec, duration, view, low, high))
        n = write_rows(loaded, duration, rows)
        loaded.store.flush()
        say(f"{loaded.store.tables[duration]}: {n} row(s) rebuilt from {loaded.store.tables[finer]}")
        return n
    finally:
        loaded.close()
        if own and spark is not None:
            spark.stop()
