"""``srota aggregation backfill``: compute an aggregation's tables from historical events with Spark.

1. Inputs are checked before Spark starts (:func:`check_inputs`): a missing input path, an
   unreadable app or an unknown aggregation is one line and exit code 2.
2. Spark reads the events (json, csv or parquet; paths or globs) with the input stream's schema.
3. Every per-event expression (filters, event time, group-by keys, latest-value expressions,
   base-value inputs) runs as a Spark SQL expression with the engine's semantics
   (:mod:`.translate`), so rows stay in the JVM.  What has no exact translation runs as the
   engine's own compiled code over Arrow batches (``mapInArrow``).  The job prints which path
   each expression took.
4. Spark groups the events per second (or the finest granularity) and key, then rolls each
   granularity up into the next listed one (sums of sums, minimum of minimums, union of
   distinct sets, the latest row's values): each event is read and grouped once.  Buckets
   align in GMT, as in the live engine and Siddhi 5.  The latest-value rule is the engine's:
   greatest event time, ties to the later event in input order (file name, then position).
5. The rows are upserted into the aggregation's tables (one transaction per table per batch),
   replacing rows with the same key, so running the job twice changes nothing.  The job computes
   the SQLite layout's columns; an ``rdbms`` store gets them in Siddhi's layout
   (:func:`siddhi_frame`, ``SqlAggregationStore.write_params``).

A progress line per phase (session start, read, compute, write) gives counts, rates and time.

SQLite has one writer.  By default each table's rows are streamed to the driver
(``toLocalIterator``, a partition at a time) and written there; ``writer='jdbc'`` writes each
table from one partition (``coalesce(1)``) through the SQLite JDBC driver into a staging table
and upserts it from there (the database file must then be reachable from that executor).
"""
from __future__ import annotations

import glob
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from srota.grammar.model import AttrType, TimeDuration
from srota.service.spark.buckets import bucket_sql, next_bucket_sql, tz_text_sql
from srota.service.spark.session import (
    LoadedAggregation,
    get_spark,
    jdbc_of,
    load_aggregation,
    require_jdbc_jar,
)
from srota.service.spark.translate import PYTHON, Item, event_time_sql, plan_items, quote_ident, sql_type

Progress = Callable[[str], None]

FORMATS = ("json", "csv", "parquet")


class InputError(ValueError):
    """The job cannot start: a missing input, an unreadable app, an unknown aggregation."""


def _stderr(msg: str) -> None:
    print(f"[srota backfill] {msg}", file=sys.stderr, flush=True)


def _rate(n: float, seconds: float) -> str:
    return f"{n / seconds:,.0f}/s" if seconds > 0 else "-"


# ---------------------------------------------------------------------------- input checks
def _local(path: str) -> str | None:
    """The local file system path of ``path``, or None for a remote URL (hdfs://, s3a://)."""
    if "://" not in path:
        return path
    if path.startswith("file://"):
        return path[len("file://"):]
    return None


def check_app(app_path: str) -> None:
    """The app file exists and is readable (before Spark starts)."""
    app = Path(app_path)
    if not app.is_file():
        raise InputError(f"app file {app_path} does not exist")
    if not os.access(app, os.R_OK):
        raise InputError(f"app file {app_path} is not readable")


def check_inputs(app_path: str, inputs: str | list[str], fmt: str) -> list[str]:
    """Check what can be checked without Spark; returns the input paths as a list."""
    if fmt not in FORMATS:
        raise InputError(f"unknown input format '{fmt}' (json, csv or parquet)")
    check_app(app_path)
    paths = inputs if isinstance(inputs, list) else [inputs]
    if not paths:
        raise InputError("no input path given")
    for p in paths:
        local = _local(p)
        if local is None:
            continue
        if glob.has_magic(local):
            if not glob.glob(local, recursive=True):
                raise InputError(f"input {p} matches no file")
        elif not os.path.exists(local):
            raise InputError(f"input path {p} does not exist")
        elif not os.access(local, os.R_OK):
            raise InputError(f"input path {p} is not readable")
    return paths


def _one_file(paths: list[str]) -> bool:
    """True when the input is one local file (not a glob, not a directory)."""
    if len(paths) != 1:
        return False
    local = _local(paths[0])
    return local is not None and not glob.has_magic(local) and os.path.isfile(local)


# ---------------------------------------------------------------------------- reading
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
        df = df.select(*[F.col(quote_ident(a.name)).cast(_spark_type(a.type)).alias(a.name) for a in attrs])
    else:
        raise InputError(f"unknown input format '{fmt}' (json, csv or parquet)")
    return df.select(*[F.col(quote_ident(a.name)) for a in attrs])


# ---------------------------------------------------------------------------- Python fallback
_FNS: dict[tuple[str, str, tuple[tuple[str, int], ...]], Any] = {}


def _python_functions(app_text: str, agg_id: str, wanted: tuple[tuple[str, int], ...]) -> list[Any]:
    """The engine's compiled code for the items computed in Python, built once per worker."""
    key = (app_text, agg_id, wanted)
    fns = _FNS.get(key)
    if fns is not None:
        return fns
    import srota.engine.runtime  # noqa: F401 - registers the built-in functions and aggregators
    from srota.engine.aggregation.spec import compile_spec
    from srota.engine.codegen import CodeGen
    from srota.engine.context import AppContext
    from srota.engine.expression import BASE_NAMESPACE, ExpressionCompiler
    from srota.engine.functions import script_function
    from srota.engine.scope import StreamScope
    from srota.grammar.parser import parse

    app = parse(app_text)
    ctx = AppContext(app, "srota-backfill")
    for fd in app.function_definitions:  # as the runtime registers them (engine/runtime.py)
        ctx.script_functions[fd.id] = (fd.return_type, script_function(fd.language, fd.id, fd.return_type, fd.body))
    ad = next(a for a in app.aggregation_definitions if a.id == agg_id)
    stream = next(s for s in app.stream_definitions if s.id == ad.input.stream_id)
    spec = compile_spec(ad, stream, ctx)
    items = {(i.kind, i.index): i for i in plan_items(spec, ctx)}
    names = [ad.input.reference_id] if ad.input.reference_id else []
    gen = CodeGen(BASE_NAMESPACE)
    compiler = ExpressionCompiler(ctx, StreamScope(stream.id, stream.attributes, names), gen)
    fns = []
    for n, (kind, index) in enumerate(wanted):
        node = items[(kind, index)].node
        code = compiler.compile_condition(node) if kind == "filter" else compiler.compile(node).code
        fns.append(gen.function(f"_fallback{n}", "e", ["d = e.data", f"return {code}"]))
    _FNS[key] = fns
    return fns


def _arrow_stage(app_text: str, agg_id: str, wanted: tuple[tuple[str, int], ...], n_attrs: int,
                 filters: int, out_schema: Any) -> Callable[[Any], Any]:
    """The ``mapInArrow`` function: Python filters drop rows, the other items add columns; an
    event whose expression fails is dropped, as the live engine drops it."""

    def run(batches: Any) -> Any:
        import pyarrow as pa
        from srota.engine.event import Event

        fns = _python_functions(app_text, agg_id, wanted)
        keep_fns, value_fns = fns[:filters], fns[filters:]
        schema = pa.schema(out_schema) if not isinstance(out_schema, pa.Schema) else out_schema
        value_types = [schema.field(schema.names.index(f)).type for f in schema.names[-len(value_fns):]] \
            if value_fns else []
        for batch in batches:
            columns = [batch.column(i).to_pylist() for i in range(n_attrs)]
            kept: list[int] = []
            values: list[list[Any]] = [[] for _ in value_fns]
            for pos, data in enumerate(zip(*columns, strict=True)):
                e = Event(0, data)
                try:
                    if not all(f(e) for f in keep_fns):
                        continue
                    row = [f(e) for f in value_fns]
                except Exception:  # noqa: BLE001 - the engine drops an event whose expression fails
                    continue
                kept.append(pos)
                for j, v in enumerate(row):
                    values[j].append(v)
            if not kept:
                continue
            taken = batch.take(pa.array(kept, type=pa.int64())) if len(kept) != batch.num_rows else batch
            arrays = list(taken.columns) + [pa.array(v, type=t) for v, t in zip(values, value_types, strict=True)]
            yield pa.RecordBatch.from_arrays(arrays, schema=schema)

    return run


# ---------------------------------------------------------------------------- per-event columns
def prepare_events(loaded: LoadedAggregation, df: Any, items: list[Item], start: int | None = None,
                   end: int | None = None, one_file: bool = False) -> Any:
    """Events -> ``(__ts, __off, __ord, k*, l*, b*)``, filtered, with ``__ts`` in ``[start, end)``.

    ``__ord`` orders events for the latest-value rule: event time, then input order (file
    name, then position; the name is left out when ``one_file``)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    spec = loaded.spec
    if spec.time_attribute is None:
        raise InputError(f"aggregation '{spec.id}' aggregates by arrival time: only aggregations with "
                         f"'aggregate by <attribute>' can be backfilled")
    ts_sql, off_sql = event_time_sql(spec.time_attribute, spec.time_type)
    extra = [F.expr(ts_sql).alias("__ts"), F.expr(off_sql).alias("__off"),
             F.monotonically_increasing_id().alias("__seq")]
    if not one_file:
        extra.append(F.input_file_name().alias("__file"))
    df = df.select("*", *extra)
    conds = ["__ts IS NOT NULL"] + [i.sql for i in items if i.kind == "filter" and i.sql is not None]
    if start is not None:
        conds.append(f"__ts >= {int(start)}L")
    if end is not None:
        conds.append(f"__ts < {int(end)}L")
    df = df.where(" AND ".join(conds))

    python = [i for i in items if i.sql is None]
    if python:
        python.sort(key=lambda i: i.kind != "filter")  # filters first: they drop rows
        values = [i for i in python if i.kind != "filter"]
        out_fields = list(df.schema.fields) + [T.StructField(i.column, _spark_type(i.type), True)
                                               for i in values if i.type is not None]
        out = T.StructType(out_fields)
        import pyarrow as pa

        arrow_schema = pa.schema([pa.field(f.name, _arrow_of_spark(f.dataType)) for f in out_fields])
        run = _arrow_stage(loaded.app_text, spec.id, tuple((i.kind, i.index) for i in python),
                           len(spec.stream.attributes), len(python) - len(values), arrow_schema)
        df = df.mapInArrow(run, out)

    def raw(i: Item) -> str:
        return i.sql if i.sql is not None else quote_ident(i.column)

    cols = ["__ts", "__off", f"{_order_sql(spec, one_file)} AS __ord"]
    cols += [f"{raw(i)} AS k{i.index}" for i in items if i.kind == "key"]
    cols += [f"{raw(i)} AS l{i.index}" for i in items if i.kind == "latest"]
    for i in (i for i in items if i.kind == "base"):
        b = spec.bases[i.index]
        v = raw(i)
        if b.op == "count":
            expr = "1L" if b.arg is None else f"(CASE WHEN {v} IS NULL THEN 0L ELSE 1L END)"
        elif b.op == "sum":
            expr = f"CAST({v} AS {sql_type(b.type)})"
        else:
            expr = v
        cols.append(f"{expr} AS b{i.index}")
    return df.selectExpr(*cols)


# ---------------------------------------------------------------------------- grouping
# Bits of a long order key left for the position when the time within the root bucket takes
# the rest: a second spans 1000 ms (10 bits), a minute 60 000 ms (16 bits).
_POSITION_BITS = {TimeDuration.SECONDS: 53, TimeDuration.MINUTES: 47}


def _order_sql(spec: Any, one_file: bool) -> str:
    """The key of the latest-value rule: event time, then input order (file name, position).

    A struct makes Spark aggregate by sorting (its hash aggregation takes fixed-width
    buffers only).  So when one file is read and the root granularity is seconds or minutes,
    the key is one long: the time within the root bucket above the position
    (``monotonically_increasing_id``: partition << 33 | row, below 2**47 for up to 16 384
    partitions), which orders exactly like ``(time, position)`` inside a bucket."""
    root = spec.durations[0]
    bits = _POSITION_BITS.get(root)
    if one_file and bits is not None:
        return f"((__ts - {bucket_sql('__ts', '0', root)}) * {1 << bits}L + __seq)"
    return "struct(__ts, __seq)" if one_file else "struct(__ts, __file, __seq)"


def _root_sql(spec: Any, duration: TimeDuration, view: str) -> str:
    """The finest granularity's buckets from the prepared events in ``view``."""
    keys = [f"k{i}" for i in range(len(spec.group_by))]
    # long event times carry no offset: AGG_TIMEZONE is +00:00, no need to pick the latest
    off = "max_by(__off, __ord)" if spec.time_type is AttrType.STRING else "0L"
    sel = [f"{bucket_sql('__ts', '0', duration)} AS __b", *keys, "max(__ts) AS __last", f"{off} AS __o"]
    sel += [f"max_by(l{i}, __ord) AS l{i}" for i in range(len(spec.latest))]
    for i, b in enumerate(spec.bases):
        agg = {"sum": "sum", "count": "sum", "min": "min", "max": "max", "distinct": "collect_set"}[b.op]
        sel.append(f"{agg}(b{i}) AS b{i}")
    sel.append("count(1) AS __n")
    return f"SELECT {', '.join(sel)} FROM {view} GROUP BY {', '.join(['1', *keys])}"


def _rollup_sql(spec: Any, duration: TimeDuration, view: str) -> str:
    """``duration``'s buckets from the next finer listed granularity's rows in ``view``.

    The finer rows of one key lie in disjoint buckets, so their latest event times differ:
    ``__last`` alone orders them (a long: Spark's hash aggregation)."""
    keys = [f"k{i}" for i in range(len(spec.group_by))]
    off = "max_by(__o, __last)" if spec.time_type is AttrType.STRING else "0L"
    sel = [f"{bucket_sql('__b', '0', duration)} AS __b", *keys, "max(__last) AS __last", f"{off} AS __o"]
    sel += [f"max_by(l{i}, __last) AS l{i}" for i in range(len(spec.latest))]
    for i, b in enumerate(spec.bases):
        if b.op == "distinct":
            sel.append(f"array_distinct(flatten(collect_list(b{i}))) AS b{i}")
        else:
            agg = {"sum": "sum", "count": "sum", "min": "min", "max": "max"}[b.op]
            sel.append(f"{agg}(b{i}) AS b{i}")
    sel.append("sum(__n) AS __n")
    return f"SELECT {', '.join(sel)} FROM {view} GROUP BY {', '.join(['1', *keys])}"


def _table_sql(spec: Any, duration: TimeDuration, view: str, start: int | None, end: int | None) -> str:
    """The table's columns, in the store's order, for the buckets ``[start, end)`` covers completely."""
    outer = ["__b AS `AGG_TIMESTAMP`"]
    outer += [f"k{i} AS {quote_ident(name)}" for i, (name, _) in enumerate(spec.group_by)]
    outer += [f"{tz_text_sql('__o')} AS `AGG_TIMEZONE`", "__last AS `AGG_LAST_EVENT_TIMESTAMP`"]
    outer += [f"l{i} AS {quote_ident(name)}" for i, (name, _) in enumerate(spec.latest)]
    for i, b in enumerate(spec.bases):
        v = f"to_json(array_sort(b{i}))" if b.op == "distinct" else f"b{i}"
        outer.append(f"{v} AS {quote_ident(b.name)}")
    where = []
    if start is not None:
        where.append(f"__b >= {int(start)}L")
    if end is not None:
        where.append(f"{next_bucket_sql('__b', '0', duration)} <= {int(end)}L")
    sql = f"SELECT {', '.join(outer)} FROM {view}"
    return sql + (" WHERE " + " AND ".join(where) if where else "")


# ---------------------------------------------------------------------------- writing
def write_rows(loaded: LoadedAggregation, duration: TimeDuration, rows_df: Any, writer: str = "driver",
               batch: int = 50_000, expected: int | None = None, arrow_rows: int = 3_000_000) -> int:
    """Upsert (replace) ``rows_df`` into ``duration``'s table; one transaction per ``batch`` rows.

    Up to ``arrow_rows`` expected rows come to the driver as one Arrow table; more are
    streamed a partition at a time (``toLocalIterator``), so the driver's memory stays bounded."""
    store = loaded.store
    if writer == "auto":  # executors write a server database themselves on a cluster
        master = rows_df.sparkSession.sparkContext.master
        writer = "jdbc" if hasattr(store, "db") and not master.startswith("local") else "driver"
    if writer == "jdbc":
        return _write_jdbc(loaded, duration, rows_df)
    if expected is not None and expected <= arrow_rows:
        # one Arrow transfer: columns, not pickled Row objects
        table = rows_df.toArrow()
        rows = list(zip(*(c.to_pylist() for c in table.columns), strict=True))
        n = 0
        for i in range(0, len(rows), batch):
            n += store.write_params(duration, rows[i:i + batch], "replace")
        return n
    n = 0
    pending: list[tuple[Any, ...]] = []
    for r in rows_df.toLocalIterator(prefetchPartitions=True):
        pending.append(tuple(r))
        if len(pending) >= batch:
            n += store.write_params(duration, pending, "replace")
            pending = []
    if pending:
        n += store.write_params(duration, pending, "replace")
    return n


def _write_jdbc(loaded: LoadedAggregation, duration: TimeDuration, rows_df: Any) -> int:
    if hasattr(loaded.store, "db"):
        return _write_jdbc_server(loaded, duration, rows_df)
    require_jdbc_jar()
    store = loaded.store
    table = store.tables[duration]
    staging = f"{table}__staging"

    def create(conn: Any) -> None:
        # Spark 4 asks whether the table exists and takes SQLite's "no such table" for an
        # error: the staging table is made here, with the table's columns and affinities
        conn.execute(f'DROP TABLE IF EXISTS "{staging}"')
        conn.execute(f'CREATE TABLE "{staging}" AS SELECT * FROM "{table}" WHERE 0')

    store._call(create)
    rows_df.coalesce(1).write.jdbc(f"jdbc:sqlite:{store.database}", staging, mode="append",
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


def siddhi_frame(store: Any, rows_df: Any) -> Any:
    """Rows in the SQLite layout's column order (what the jobs compute: ``AGG_TIMESTAMP``, keys,
    ``AGG_TIMEZONE``, ``AGG_LAST_EVENT_TIMESTAMP``, latest values, base values) as the rdbms
    store's Siddhi layout (``store.schema.column_names``), valued as the store writes them.

    ``AGG_EVENT_TIMESTAMP`` is the bucket, as Srota writes it; ``SHARD_ID`` the job's shard id;
    a distinct set is its JSON as bytes; ``AGG_TIMEZONE`` has no column.  Booleans stay
    booleans on PostgreSQL and are 0/1 on MariaDB (``TINYINT(1)``); floats are widened to
    doubles, exactly, as the engine writes them: a FLOAT staging column would go through
    MariaDB's FLOAT -> DOUBLE conversion, which rounds to the float's shortest decimal
    (339.79, where the engine wrote 339.7900085449219)."""
    from pyspark.sql import functions as F
    from srota.engine.stores.aggregation import SHARD

    schema = store.schema
    pg = store.db.dialect.name == "postgresql"
    distinct = {b.name for b in store.spec.bases if b.op == "distinct"}
    cols = []
    for name, t in schema.attr_types:
        if name == SHARD:
            c = F.lit(store.shard_id).cast("string")
        elif name == "AGG_EVENT_TIMESTAMP":
            c = F.col("AGG_TIMESTAMP").cast("long")
        elif name in distinct:
            c = F.col(quote_ident(name)).cast("binary")
        elif t is AttrType.BOOL:
            c = F.col(quote_ident(name)).cast("boolean" if pg else "long")
        elif t is AttrType.FLOAT:
            c = F.col(quote_ident(name)).cast("double")
        else:
            c = F.col(quote_ident(name))
        # Spark quotes the staging table's column names as given; the upsert names them as
        # the dialect does (PostgreSQL folds them to lower case)
        cols.append(c.alias(name.lower() if pg else name))
    return rows_df.select(*cols)


def _write_jdbc_server(loaded: LoadedAggregation, duration: TimeDuration, rows_df: Any) -> int:
    """PostgreSQL/MariaDB: the executors write a staging table in parallel over JDBC, then one
    statement upserts it into the aggregation's table (under the job's shard id)."""
    store = loaded.store
    url, props = jdbc_of(store)
    table = store.tables[duration]
    staging = f"srota_staging_{os.getpid()}_{duration.name.lower()}"  # unquoted by Spark: lower case
    names = store.schema.column_names
    siddhi_frame(store, rows_df).write.jdbc(url, staging, mode="overwrite", properties=props)
    pg = store.db.dialect.name == "postgresql"
    q = store.db.q
    cols = ", ".join(q(c) for c in names)
    upsert = store.db.dialect.upsert(table, names, store.schema.key_names)
    head = upsert.split(" VALUES ")[0]
    tail = upsert[upsert.index(" ON CONFLICT" if pg else " ON DUPLICATE KEY"):]
    sql = f"{head} SELECT {cols} FROM {q(staging)}{tail}"

    def run(cur: Any) -> int:
        cur.execute(sql)
        n = cur.rowcount
        cur.execute(f"DROP TABLE {q(staging)}")
        return int(n)

    return int(store._call(run))


# ---------------------------------------------------------------------------- the job
def backfill(app_path: str, aggregation_id: str, inputs: str | list[str], fmt: str = "json",
             start: int | None = None, end: int | None = None, master: str | None = None,
             writer: str = "auto", spark: Any = None, progress: Progress | None = _stderr,
             shard_id: str | None = None, jars: tuple[str, ...] = ()) -> dict[str, Any]:
    """Run the backfill job.

    Returns ``{"events", "rows": {table: n}, "seconds", "phases": {phase: seconds},
    "paths": [(expression, path, reason)]}``; ``phases`` has ``session``, ``read``, ``compute``
    and ``write`` (``read`` covers reading, the per-event expressions and the first grouping,
    which Spark runs as one pipelined stage).
    """
    say = progress or (lambda msg: None)
    t0 = time.perf_counter()
    paths = check_inputs(app_path, inputs, fmt)
    try:
        loaded = load_aggregation(app_path, aggregation_id, shard_id)
    except OSError as exc:
        raise InputError(f"cannot read app {app_path}: {exc.strerror or exc}") from None
    own_spark = spark is None
    phases: dict[str, float] = {}
    cached: list[Any] = []
    try:
        spec = loaded.spec
        if spec.time_attribute is None:
            raise InputError(f"aggregation '{spec.id}' aggregates by arrival time: only aggregations with "
                             f"'aggregate by <attribute>' can be backfilled")
        items = plan_items(spec, loaded.runtime.context)
        t = time.perf_counter()
        spark = spark or get_spark(master, f"srota-backfill-{aggregation_id}", extra_jars=jars)
        phases["session"] = time.perf_counter() - t
        sc = spark.sparkContext
        say(f"session: Spark {spark.version} on {sc.master} ready in {phases['session']:.1f}s")
        for i in items:
            say(f"{i.label}: {i.path}" + (f" ({i.reason})" if i.path == PYTHON else ""))

        t = time.perf_counter()
        events = prepare_events(loaded, read_events(spark, spec, paths, fmt), items, start, end,
                                one_file=_one_file(paths))
        view = f"srota_events_{aggregation_id}"
        events.createOrReplaceTempView(view)
        durations = spec.durations
        frames = {durations[0]: spark.sql(_root_sql(spec, durations[0], view)).persist()}
        cached.append(frames[durations[0]])
        stats = frames[durations[0]].selectExpr("coalesce(sum(__n), 0)", "count(1)").first()
        n_events, n_root = int(stats[0]), int(stats[1])
        phases["read"] = time.perf_counter() - t
        say(f"read: {n_events:,} events ({fmt}, {len(paths)} path(s)) grouped into {n_root:,} "
            f"{durations[0].value} rows in {phases['read']:.1f}s ({_rate(n_events, phases['read'])} events)")

        t = time.perf_counter()
        counts = {durations[0]: n_root}
        for prev, d in zip(durations, durations[1:], strict=False):
            pv = f"srota_rows_{aggregation_id}_{prev.name}"
            frames[prev].createOrReplaceTempView(pv)
            frames[d] = spark.sql(_rollup_sql(spec, d, pv)).persist()
            cached.append(frames[d])
            counts[d] = frames[d].count()
        n_rows = sum(counts.values())
        phases["compute"] = time.perf_counter() - t
        say(f"compute: rolled up {', '.join(d.value for d in durations[1:]) or 'nothing'} "
            f"({n_rows:,} rows in all) in {phases['compute']:.1f}s")

        t = time.perf_counter()
        written: dict[str, int] = {}
        for d in durations:
            t1 = time.perf_counter()
            fv = f"srota_rows_{aggregation_id}_{d.name}"
            frames[d].createOrReplaceTempView(fv)
            n = write_rows(loaded, d, spark.sql(_table_sql(spec, d, fv, start, end)), writer, expected=counts[d])
            table = loaded.store.tables[d]
            written[table] = n
            dt = time.perf_counter() - t1
            say(f"write: {table}: {n:,} rows upserted in {dt:.1f}s ({_rate(n, dt)})")
        loaded.store.flush()
        phases["write"] = time.perf_counter() - t
        total = sum(written.values())
        say(f"write: {total:,} rows in {phases['write']:.1f}s ({_rate(total, phases['write'])} rows)")
        return {"events": n_events, "rows": written, "seconds": time.perf_counter() - t0, "phases": phases,
                "paths": [(i.label, i.path, i.reason) for i in items]}
    finally:
        for df in cached:
            df.unpersist()
        loaded.close()
        if own_spark and spark is not None:
            spark.stop()


def _arrow_of_spark(t: Any) -> Any:
    import pyarrow as pa
    from pyspark.sql import types as T

    table = {T.StringType: pa.string(), T.IntegerType: pa.int32(), T.LongType: pa.int64(),
             T.FloatType: pa.float32(), T.DoubleType: pa.float64(), T.BooleanType: pa.bool_()}
    for cls, at in table.items():
        if isinstance(t, cls):
            return at
    raise ValueError(f"no Arrow type for {t}")
