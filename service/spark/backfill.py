"""``srota aggregation backfill``: compute an aggregation's tables from historical events with Spark.

1. Spark reads the events (json, csv or parquet; a path or a glob) with the input stream's
   schema.
2. Each event goes through the *engine's own* compiled code for this aggregation (filters,
   event time, group-by key, latest-value expressions and base-value inputs), run in the
   Python workers.  Types, float rounding and time parsing are therefore the live engine's.
3. Spark SQL groups the events per bucket and group for every granularity, with the same
   calendar alignment (:mod:`.buckets`) and the same latest-value rule: greatest event time,
   ties to the later event in input order (file name, then position).
4. The rows are upserted into the aggregation's SQLite tables, replacing rows with the same
   key, so running the job twice changes nothing.

SQLite has one writer.  By default the results are collected to the driver (streamed with
``toLocalIterator``) and written through the engine's store; ``writer='jdbc'`` instead writes
each table from one partition (``coalesce(1)``) through the SQLite JDBC driver into a staging
table and upserts it from there; the database file must then be reachable from the executor
that writes (a shared filesystem on a cluster).
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from srota.grammar.model import AttrType, TimeDuration
from srota.service.spark.buckets import bucket_sql, next_bucket_sql, tz_text_sql
from srota.service.spark.session import LoadedAggregation, get_spark, load_aggregation, require_jdbc_jar

Progress = Callable[[str], None]


def _stderr(msg: str) -> None:
    print(f"[srota backfill] {msg}", file=sys.stderr, flush=True)


_SPECS: dict[tuple[str, str], Any] = {}


def _worker_spec(app_text: str, agg_id: str) -> Any:
    """The aggregation's compiled spec, built once per Python worker process."""
    spec = _SPECS.get((app_text, agg_id))
    if spec is None:
        import srota.engine.runtime  # noqa: F401 - registers the built-in functions and aggregators
        from srota.engine.aggregation.spec import compile_spec
        from srota.engine.context import AppContext
        from srota.grammar.parser import parse

        app = parse(app_text)
        ad = next(a for a in app.aggregation_definitions if a.id == agg_id)
        stream = next(s for s in app.stream_definitions if s.id == ad.input.stream_id)
        spec = compile_spec(ad, stream, AppContext(app, "srota-backfill"))
        _SPECS[(app_text, agg_id)] = spec
    return spec


def _extract(rows: Any, app_text: str, agg_id: str, n_attrs: int) -> Any:
    """Per event: ``(ts, offset, file, seq, *key, *latest values, *base inputs)``."""
    from srota.engine.event import Event

    spec = _worker_spec(app_text, agg_id)
    keep, locate, fresh = spec.keep, spec.locate, spec.fresh
    b0 = spec.base_offset
    distinct = [i for i, b in enumerate(spec.bases) if b.op == "distinct"]
    for r in rows:
        e = Event(0, tuple(r[:n_attrs]))
        if keep is not None and not keep([e]):
            continue
        try:
            ts, off, key = locate(e)
        except (ValueError, TypeError):
            continue  # no usable event time: the live engine drops such events too
        row = fresh(e, ts, off)
        bases = row[b0:]
        for i in distinct:
            s = bases[i]
            bases[i] = next(iter(s)) if s else None
        yield (ts, off, r[n_attrs + 1], r[n_attrs], *key, *row[2:b0], *bases)


def _spark_type(t: AttrType) -> Any:
    from pyspark.sql import types as T

    mapping = {AttrType.STRING: T.StringType(), AttrType.INT: T.IntegerType(), AttrType.LONG: T.LongType(),
               AttrType.FLOAT: T.FloatType(), AttrType.DOUBLE: T.DoubleType(), AttrType.BOOL: T.BooleanType()}
    if t not in mapping:
        raise ValueError(f"attributes of type {t.value} cannot be backfilled")
    return mapping[t]


def read_events(spark: Any, spec: Any, inputs: str | list[str], fmt: str) -> Any:
    """The input files as a DataFrame with the stream's columns, typed, in attribute order."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    attrs = spec.stream.attributes
    schema = T.StructType([T.StructField(a.name, _spark_type(a.type), True) for a in attrs])
    paths = inputs if isinstance(inputs, list) else [inputs]
    if fmt == "json":
        df = spark.read.schema(schema).json(paths)
    elif fmt == "csv":
        df = spark.read.schema(schema).option("header", "true").csv(paths)
    elif fmt == "parquet":
        df = spark.read.parquet(*paths)
        df = df.select(*[F.col(a.name).cast(_spark_type(a.type)).alias(a.name) for a in attrs])
    else:
        raise ValueError(f"unknown input format '{fmt}' (json, csv or parquet)")
    return df.select(*[F.col(f"`{a.name}`") for a in attrs])


def prepare_events(spark: Any, loaded: LoadedAggregation, df: Any, start: int | None = None,
                   end: int | None = None) -> Any:
    """Events -> the extracted per-event DataFrame (cached), filtered to ``[start, end)``."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    spec = loaded.spec
    if spec.time_attribute is None:
        raise ValueError(f"aggregation '{spec.id}' aggregates by arrival time: only aggregations with "
                         f"'aggregate by <attribute>' can be backfilled")
    n_attrs = len(spec.stream.attributes)
    df = df.withColumn("__seq", F.monotonically_increasing_id()).withColumn("__file", F.input_file_name())
    fields = [T.StructField("__ts", T.LongType(), False), T.StructField("__off", T.LongType(), False),
              T.StructField("__file", T.StringType(), True), T.StructField("__seq", T.LongType(), False)]
    fields += [T.StructField(f"k{i}", _spark_type(t), True) for i, (_, t) in enumerate(spec.group_by)]
    fields += [T.StructField(f"l{i}", _spark_type(t), True) for i, (_, t) in enumerate(spec.latest)]
    for i, b in enumerate(spec.bases):
        t = b.arg_type if b.op in ("min", "max", "distinct") else b.type
        fields.append(T.StructField(f"b{i}", _spark_type(t), True))
    app_text, agg_id = loaded.app_text, spec.id
    rdd = df.rdd.mapPartitions(lambda rows: _extract(rows, app_text, agg_id, n_attrs))
    events = spark.createDataFrame(rdd, T.StructType(fields))
    if start is not None:
        events = events.where(F.col("__ts") >= F.lit(start))
    if end is not None:
        events = events.where(F.col("__ts") < F.lit(end))
    return events.cache()


def aggregate_sql(spec: Any, duration: TimeDuration, view: str, start: int | None, end: int | None) -> str:
    """Spark SQL computing the rows of ``duration``'s table from the extracted events in ``view``."""
    order = "struct(__ts, __file, __seq)"
    keys = [f"k{i}" for i in range(len(spec.group_by))]
    inner = [f"{bucket_sql('__ts', '__off', duration)} AS __b"] + keys
    inner.append(f"max_by(__off, {order}) AS __o")
    inner.append("max(__ts) AS __last")
    inner += [f"max_by(l{i}, {order}) AS l{i}" for i in range(len(spec.latest))]
    for i, b in enumerate(spec.bases):
        if b.op in ("sum", "count"):
            inner.append(f"sum(b{i}) AS b{i}")
        elif b.op in ("min", "max"):
            inner.append(f"{b.op}(b{i}) AS b{i}")
        else:
            inner.append(f"to_json(array_sort(collect_set(b{i}))) AS b{i}")
    group = ", ".join(["1", *keys])
    outer = ["__b AS `AGG_TIMESTAMP`"]
    outer += [f"k{i} AS `{name}`" for i, (name, _) in enumerate(spec.group_by)]
    outer += [f"{tz_text_sql('__o')} AS `AGG_TIMEZONE`", "__last AS `AGG_LAST_EVENT_TIMESTAMP`"]
    outer += [f"l{i} AS `{name}`" for i, (name, _) in enumerate(spec.latest)]
    outer += [f"b{i} AS `{b.name}`" for i, b in enumerate(spec.bases)]
    where = []
    if start is not None:
        where.append(f"__b >= {start}L")
    if end is not None:  # only buckets the range covers completely
        where.append(f"{next_bucket_sql('__b', '__o', duration)} <= {end}L")
    sql = (f"SELECT {', '.join(outer)} FROM (SELECT {', '.join(inner)} FROM {view} GROUP BY {group})")
    if where:
        sql += " WHERE " + " AND ".join(where)
    return sql


def write_rows(loaded: LoadedAggregation, duration: TimeDuration, rows_df: Any, writer: str = "driver",
               batch: int = 50_000) -> int:
    """Upsert (replace) ``rows_df`` into ``duration``'s table; returns the number of rows."""
    store = loaded.store
    if writer == "jdbc":
        return _write_jdbc(loaded, duration, rows_df)
    n = 0
    pending: list[tuple[Any, ...]] = []
    for r in rows_df.toLocalIterator():
        pending.append(tuple(r))
        if len(pending) >= batch:
            n += store.write_params(duration, pending, "replace")
            pending = []
    if pending:
        n += store.write_params(duration, pending, "replace")
    return n


def _write_jdbc(loaded: LoadedAggregation, duration: TimeDuration, rows_df: Any) -> int:
    require_jdbc_jar()
    store = loaded.store
    table = store.tables[duration]
    staging = f"{table}__staging"
    rows_df.coalesce(1).write.jdbc(f"jdbc:sqlite:{store.database}", staging, mode="overwrite",
                                   properties={"driver": "org.sqlite.JDBC"})
    schema = store.schema
    names = ", ".join(f'"{c}"' for c in schema.column_names)
    upsert = schema.upsert_sql(table, "replace")
    sql = upsert.replace(f"VALUES ({', '.join('?' for _ in schema.column_names)})",
                         f'SELECT {names} FROM "{staging}" WHERE true')

    def run(conn: Any) -> int:
        conn.execute("BEGIN")
        n = conn.execute(sql).rowcount
        conn.execute(f'DROP TABLE "{staging}"')
        conn.execute("COMMIT")
        return n

    return store._call(run)


def backfill(app_path: str, aggregation_id: str, inputs: str | list[str], fmt: str = "json",
             start: int | None = None, end: int | None = None, master: str | None = None,
             writer: str = "driver", spark: Any = None, progress: Progress | None = _stderr) -> dict[str, Any]:
    """Run the backfill job; returns ``{"events", "rows": {table: n}, "seconds"}``."""
    say = progress or (lambda msg: None)
    t0 = time.perf_counter()
    loaded = load_aggregation(app_path, aggregation_id)
    own_spark = spark is None
    try:
        spark = spark or get_spark(master, f"srota-backfill-{aggregation_id}")
        spec = loaded.spec
        raw = read_events(spark, spec, inputs, fmt)
        events = prepare_events(spark, loaded, raw, start, end)
        n_events = events.count()
        say(f"{aggregation_id}: {n_events} events read and prepared in {time.perf_counter() - t0:.1f}s")
        view = f"srota_events_{aggregation_id}"
        events.createOrReplaceTempView(view)
        written: dict[str, int] = {}
        for duration in spec.durations:
            t1 = time.perf_counter()
            rows_df = spark.sql(aggregate_sql(spec, duration, view, start, end))
            n = write_rows(loaded, duration, rows_df, writer)
            table = loaded.store.tables[duration]
            written[table] = n
            say(f"{table}: {n} rows upserted in {time.perf_counter() - t1:.1f}s")
        events.unpersist()
        loaded.store.flush()
        return {"events": n_events, "rows": written, "seconds": time.perf_counter() - t0}
    finally:
        loaded.close()
        if own_spark and spark is not None:
            spark.stop()
