"""``@persistedAggregation(enable='true')``: the coarse granularities computed in the database, as
siddhi-core 5.1.33 does it (``aggregation/persistedaggregation/``).

Siddhi keeps only the seconds, minutes and hours in memory (``IncrementalExecutor``; the hours'
table write is waited for).  From days up, a granularity holds nothing: when time reaches the end
of its bucket (``PersistedIncrementalExecutor``), one ``INSERT ... SELECT ... GROUP BY`` over the
next finer table computes that bucket's rows in the database (``rdbms:cud``, queued in order:
``CudStreamProcessorQueueManager``).  The SQL is ``AggregationParser.generateDatabaseQuery``'s,
ported here text for text with the templates of siddhi-core's ``db-aggregation-config.xml`` for
PostgreSQL and MySQL (MariaDB too: its driver is not "mysql", and Siddhi falls back to MySQL's), so
a Srota node and a Siddhi node write the same rows.  Consequences kept as Siddhi has them:

* the finer rows are chosen by their ``AGG_TIMESTAMP`` in ``[bucket start, bucket end)``, and a
  bucket is computed once.  Late events: Siddhi adds one to the root's open bucket with its own
  bucket in ``AGG_EVENT_TIMESTAMP``, so the rows it reaches have ``AGG_TIMESTAMP`` = the bucket it
  was written in (rows of their own where that is not their own bucket), and the day computed
  next counts it (a day row with its own day in ``AGG_EVENT_TIMESTAMP``), then the month and the
  year.  Srota writes such second, minute and hour rows the same way, when the bucket they were
  written in closes (:meth:`PersistedRollups.write_late`), and reads add the rows of a bucket up;
* a plain ``INSERT``: a bucket computed again (a restart that recreates it) fails on the primary
  key, logged, as Siddhi's queue manager logs it;
* days, months and years are truncated by the database in its session's time zone.

Reads ``per`` a persisted granularity answer from its table alone (Siddhi's
``IncrementalAggregateCompileCondition.getOldestInMemoryEventTimestamp``).
"""
from __future__ import annotations

import logging
from typing import Any

from srota.grammar.model import AggregationDefinition, TimeDuration, find_annotation

_log = logging.getLogger("srota.engine.aggregation")

#: granularities Siddhi computes in the database (``ordinal() >= 3``)
PERSISTED = (TimeDuration.DAYS, TimeDuration.MONTHS, TimeDuration.YEARS)
_ORDER = (TimeDuration.SECONDS, TimeDuration.MINUTES, TimeDuration.HOURS, *PERSISTED)

# db-aggregation-config.xml (siddhi-core 5.1.33), the two databases Srota's rdbms store speaks
_TIME_CONVERSION = {
    "postgresql": ("EXTRACT(epoch from date_trunc('{{DURATION}}', to_timestamp({{COLUMN}}/1000)))*1000\n"
                   "            ", {TimeDuration.DAYS: "day", TimeDuration.MONTHS: "month",
                                    TimeDuration.YEARS: "year"}),
    "mysql": ('UNIX_TIMESTAMP(from_unixtime({{COLUMN}}/1000,"{{DURATION}}"))*1000\n            ',
              {TimeDuration.DAYS: "%Y-%m-%d", TimeDuration.MONTHS: "%Y-%m-01", TimeDuration.YEARS: "%Y-01-01"}),
}
_INNER_SELECT = ("SELECT {{SELECTORS}} FROM {{TABLE_NAME}} LEFT JOIN ({{INNER_QUERY_2}}) AS t3 ON\n"
                 "                {{ON_CONDITION}} WHERE {{CONDITION}} GROUP BY {{COLUMNS}}\n            ")
_JOIN = ("SELECT {{SELECTORS}} FROM ({{FROM_CONDITION}}) AS t1 JOIN ({{INNER_QUERY_1}}) AS t2 ON\n"
         "                {{CONDITION}}\n            ")


def persisted_enabled(ad: AggregationDefinition) -> bool:
    """``@persistedAggregation`` is on: present with ``enable`` absent or ``true`` (AggregationParser)."""
    ann = find_annotation(ad.annotations, "persistedAggregation")
    if ann is None:
        return False
    enable = next((e.value for e in ann.elements if (e.key or "").lower() == "enable"), None)
    return enable is None or str(enable).lower() == "true"


def persisted_durations(durations: tuple[TimeDuration, ...]) -> tuple[TimeDuration, ...]:
    """Siddhi's ``sortedDurations``: starting at days or coarser, hours up to the last are filled in."""
    if durations and durations[0] in PERSISTED:
        return _ORDER[2:_ORDER.index(durations[-1]) + 1]
    return durations


def check_selection(ad: AggregationDefinition, compiled: Any) -> None:
    """Siddhi refuses ``distinctCount`` with persisted aggregation (same message)."""
    if any(b.op == "distinct" for b in compiled.bases):
        raise ValueError("Aggregation function 'distinctCount' does not supported with persisted aggregation "
                         "type please use default incremental aggregation")


def insert_select(schema: Any, dialect: str, table: str, finer: str, duration: TimeDuration,
                  shard: str | None) -> tuple[str, tuple[str, ...]]:
    """``AggregationParser.generateDatabaseQuery`` for ``duration``'s table from ``finer``'s.

    Returns the SQL (``?`` placeholders, as Siddhi's) and the order of its parameters
    (``"from"``/``"to"``: the bucket's start and end).
    """
    conv_template, mapping = _TIME_CONVERSION[dialect]
    conv = conv_template.replace("{{COLUMN}}", "AGG_EVENT_TIMESTAMP").replace("{{DURATION}}", mapping[duration])
    names: list[str] = list(schema.column_names)
    kinds = _executor_kinds(schema)
    group_names = [n for n, _ in schema.spec.group_by]
    external = schema.event_time
    insert = f"INSERT INTO {table} ({', '.join(names)})"
    filt = " (AGG_TIMESTAMP >= ? AND AGG_TIMESTAMP < ? ) "
    outer: list[str] = []
    t1: list[str] = []
    t2: list[str] = []
    inner_t2: list[str] = []
    on: list[str] = []
    t2_on: list[str] = []
    group: list[str] = []
    group_t3: list[str] = []
    if shard is not None:
        filt += f" AND SHARD_ID = '{shard}' "
        group.append("SHARD_ID")
        group_t3.append("t3.SHARD_ID")
        inner_t2.append("SHARD_ID")
        t2_on.append(f"{finer}.SHARD_ID = t3.SHARD_ID")
        if external:
            t1.append("SHARD_ID")
    if not external:
        for name, kind in zip(names, kinds, strict=True):
            if kind == "var":
                if name == "AGG_TIMESTAMP":
                    t1.append("? AS AGG_TIMESTAMP")
                else:
                    t1.append(name)
                    group.append(name)
            elif kind == "const":
                t1.append(f"'{shard}' AS {name}")
            elif kind in ("sum", "min", "max"):
                t1.append(f"{kind.upper()}({name}) AS {name}")
        sql = " ".join([insert, " SELECT " + ", ".join(t1) + " ", f" FROM {finer}", " WHERE " + filt,
                        "GROUP BY " + ", ".join(group)])
        return sql, ("from", "from", "to")
    for name in group_names:
        group.append(name)
        group_t3.append(f"t3.{name}")
        on.append(f"t1.{name} = t2.{name}")
        t2_on.append(f"{finer}.{name} = t3.{name}")
    # Siddhi takes the first group-by attribute unguarded: without one, the app does not start
    t2_where = f"t3.{group_names[0]} IS NOT NULL "
    for name, kind in zip(names, kinds, strict=True):
        if kind == "var":
            if name == "AGG_TIMESTAMP":
                outer.append(" ? AS AGG_TIMESTAMP")
            elif name in group_names:
                t2.append(f"t3.{name} AS {name}")
                outer.append(f"t1.{name} AS {name}")
                t1.append(name)
                inner_t2.append(name)
            else:
                t2.append(f"MAX({name}) AS {name}")
                outer.append(f"t2.{name} AS {name}")
        elif kind == "time":
            outer.append("t1.AGG_EVENT_TIMESTAMP AS AGG_EVENT_TIMESTAMP")
            t1.append(conv + " AS AGG_EVENT_TIMESTAMP")
            t2.append(conv + " AS AGG_EVENT_TIMESTAMP")
            on.append("t1.AGG_EVENT_TIMESTAMP = t2.AGG_EVENT_TIMESTAMP")
        elif kind == "max" and name == "AGG_LAST_EVENT_TIMESTAMP":
            inner_t2.append(f"MAX({name}) AS {name}")
            t2.append(f"MAX(t3.{name}) AS {name}")
            outer.append(f"t2.{name} AS {name}")
            t2_on.append(f"{finer}.{name} = t3.{name}")
        elif kind in ("sum", "min", "max"):
            outer.append(f"t1.{name} AS {name}")
            t1.append(f"{kind.upper()}({name}) AS {name}")
        elif kind == "const":
            outer.append(f"t1.{name} AS {name}")
    group.append(conv)
    group_t3.append(conv)
    group_clause = "GROUP BY " + ", ".join(group)
    where = "WHERE " + filt
    inner_q = " ".join([" SELECT " + ", ".join(inner_t2) + " ", f" FROM {finer}", where, group_clause])
    sub_t1 = " ".join([" SELECT " + ", ".join(t1) + " ", f" FROM {finer}", where, group_clause])
    sub_t2 = (_INNER_SELECT.replace("{{SELECTORS}}", ", ".join(t2)).replace("{{TABLE_NAME}}", finer)
              .replace("{{INNER_QUERY_2}}", inner_q).replace("{{ON_CONDITION}}", " AND ".join(t2_on))
              .replace("{{CONDITION}}", t2_where).replace("{{COLUMNS}}", ", ".join(group_t3)))
    final = (_JOIN.replace("{{SELECTORS}}", ", ".join(outer)).replace("{{FROM_CONDITION}}", sub_t1)
             .replace("{{INNER_QUERY_1}}", sub_t2).replace("{{CONDITION}}", " AND ".join(on)))
    return insert + " " + final, ("from", "from", "to", "from", "to")


def _executor_kinds(schema: Any) -> list[str]:
    """The kind of Siddhi's processing executor behind each column (``constructProcessExpressionExecutors``)."""
    kinds: list[str] = []
    ops = {b.name: b.op for b in schema.spec.bases}
    for name in schema.column_names:
        if name == "SHARD_ID":
            kinds.append("const")
        elif name == "AGG_EVENT_TIMESTAMP":
            kinds.append("time")
        elif name == "AGG_LAST_EVENT_TIMESTAMP":
            kinds.append("max")
        elif name in ops:
            kinds.append({"count": "sum"}.get(ops[name], ops[name]))
        else:
            kinds.append("var")
    return kinds


class PersistedRollups:
    """The database roll-ups of one aggregation on a :class:`SqlAggregationStore` (module doc)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        db = store.db
        dialect = "postgresql" if db.dialect.name == "postgresql" else "mysql"
        ph = db.dialect.placeholder
        self.queries: dict[TimeDuration, tuple[str, tuple[str, ...]]] = {}
        durations = list(store.spec.durations)
        for i in range(len(durations) - 1, 0, -1):
            d = durations[i]
            if d in PERSISTED:
                sql, params = insert_select(store.schema, dialect, store.tables[d], store.tables[durations[i - 1]],
                                            d, store.shard_id)
                self.queries[d] = (sql.replace("%", "%%").replace("?", ph) if ph != "?" else sql, params)

    def roll_up(self, duration: TimeDuration, start: int, end: int) -> None:
        """Queue the computation of ``duration``'s bucket ``[start, end)`` after the queued writes."""
        sql, order = self.queries[duration]
        params = tuple(start if p == "from" else end for p in order)
        spec_id = self.store.spec.id

        def run(cur: Any) -> None:
            try:
                cur.execute(sql, params)
            except Exception as exc:  # Siddhi's queue manager logs and goes on (a data mismatch)
                _log.error("aggregation %s: error while executing the aggregation for data between %s - %s for "
                           "duration %s: %s", spec_id, start, end, duration.name, exc)
                raise
        self.store._put_job(run)

    def own_rows(self, duration: TimeDuration, since: int | None) -> list[tuple[int, int, tuple[Any, ...], list[Any]]]:
        """This shard's rows of ``duration`` written in buckets from ``since`` on, as stored:
        ``(AGG_TIMESTAMP, own bucket, key, row)`` (a restart recreates the open buckets from them)."""
        from_params = self.store.schema.from_params
        out = []
        for rec in self.store._records(duration, since, None, own=True):
            start, key, row = from_params(rec)
            out.append((int(rec[0]), start, key, row))
        return out

    def write_late(self, duration: TimeDuration, rows: list[tuple[int, int, tuple[Any, ...], list[Any]]]) -> None:
        """Queue late events' rows ``(written under, own bucket, key, row)`` as Siddhi writes them.

        ``AGG_TIMESTAMP`` is the bucket they were written in, ``AGG_EVENT_TIMESTAMP`` their own
        (module doc); a row already there for both (and the key) has the new one added in.
        """
        store = self.store
        schema = store.schema
        q = store.db.q
        ph = store.db.dialect.placeholder
        table = store.tables[duration]
        nkeys = len(schema.key_names)
        select = store._select + q(table) + " WHERE " + " AND ".join(f"{q(c)} = {ph}" for c in schema.key_names)
        upsert = store._upsert[duration]
        spec = store.spec
        shard = store.shard_id
        rows = [(under, own, key, spec.copy_row(row)) for under, own, key, row in rows]

        def params(under: int, own: int, key: tuple[Any, ...], row: list[Any]) -> list[Any]:
            p = list(schema.to_params(own, key, row, shard))
            p[0] = under
            return p

        def run(cur: Any) -> None:
            for under, own, key, row in rows:
                p = params(under, own, key, row)
                cur.execute(select, p[:nkeys])
                rec = cur.fetchone()
                if rec is not None:
                    have = schema.from_params(rec)[2]
                    spec.merge(have, row)
                    p = params(under, own, key, have)
                cur.execute(upsert, p)
            store._max_written.pop(duration, None)  # (read again: the newest AGG_TIMESTAMP may be new)
        store._put_job(run)
