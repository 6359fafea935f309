"""``rdbms:`` -- siddhi-store-rdbms' stream processors: ``#rdbms:query`` and ``#rdbms:cud``.

Both name a datasource (the service YAML's ``datasources:``, or
``SiddhiManager.set_data_source``) and run SQL with ``?`` placeholders whose values are the
remaining arguments, always bound (the SQL text is a constant; values never enter it).  The
connection is the app's one connection to that datasource (engine/stores/database.py), so
an outage holds the app and retries as the rdbms store does.

* ``#rdbms:query(datasource, 'name type, ...', 'SELECT ... ?', args...)`` emits, per input
  event, one event per result row with the input attributes plus the declared ones (results
  converted to the declared types; a NULL number reads as 0 and a NULL bool as false, as
  JDBC's getters read them in Siddhi).  An optional last argument ``true``
  (``ack.empty.result.set``) emits the input event once with nulls when there are no rows.
* ``#rdbms:cud(datasource, 'INSERT/UPDATE/DELETE ... ?', args...)`` runs the statement per
  input event (all of a chunk's in one transaction) and emits the event with ``numRecords``
  (rows affected).  Any statement runs (a CREATE, a TRUNCATE ...) but one containing DROP or
  ALTER, which Siddhi calls unauthorised (the app is refused), or one returning rows (use
  ``rdbms:query``).  A statement that fails drops its chunk with Siddhi's "Error in
  manipulating records from datasource 'X': ..." (rdbms:query: "Error in retrieving ...").  A constant after the placeholders' values is Siddhi's
  ``transaction.correlation.id``: the calls with that id run in one transaction, on a
  connection of their own, kept open across events until a call with the query ``COMMIT``
  or ``ROLLBACK`` and the same id ends it (``numRecords`` 0); one still open when the app
  stops is rolled back.  A chunk that fails in the middle takes its earlier statements back
  (a savepoint per chunk) and the transaction goes on without it.  As in Siddhi it is off
  until the system parameter
  ``perform.CUD.operations`` is ``true`` (the service config's ``extensions: {rdbms:cud:
  {perform.CUD.operations: true}}``, or ``SiddhiManager.set_extension_properties``): an app
  using it is refused otherwise.  A null parameter fails the event's chunk (nothing of it is
  written) unless ``allow.null.params.with.CUD`` is ``true``.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from srota.engine.event import Event
from srota.engine.expression import ArgInfo
from srota.engine.extensions._checks import (
    ALL,
    REPEAT,
    STRING,
    ChunkProcessor,
    err,
    is_literal,
    stream_processor,
)
from srota.engine.registry import Param
from srota.engine.types import coerce  # a database value as the declared type, as convert() does
from srota.grammar.model import Attribute, AttrType

_log = logging.getLogger("srota.engine.extensions")
#: The result types rdbms:query takes (Siddhi's QueryStreamProcessor: no object).
_TYPES = {t.value: t for t in AttrType if t is not AttrType.OBJECT}
#: What a NULL column reads as: JDBC's getBoolean/getInt/getLong/getFloat/getDouble give
#: false or 0 (Siddhi's RDBMSStreamProcessorUtil.processRecord); only a string stays null.
_NULL_READS_AS: dict[AttrType, Any] = {AttrType.BOOL: False, AttrType.INT: 0, AttrType.LONG: 0,
                                       AttrType.FLOAT: 0.0, AttrType.DOUBLE: 0.0}
#: The queries that end a correlated transaction (Siddhi's, any case).
_ENDINGS = {"commit": True, "rollback": False}
#: Siddhi's unauthorised operations (RDBMSStreamProcessorUtil.OPERATIONS).
_UNAUTHORISED = ("DROP", "ALTER")
#: Statements that return rows: a JDBC batch refuses them, so rdbms:cud never runs them in Siddhi.
_RESULT_STATEMENTS = {"select", "show", "explain", "describe", "desc"}
_PLACEHOLDER = re.compile(r"\?(?=(?:[^']*'[^']*')*[^']*$)")  # a ? outside quoted literals


def _definitions(text: str) -> list[Attribute]:
    out = []
    for part in text.split(","):
        bits = part.split()
        if len(bits) != 2 or bits[1].lower() not in _TYPES:
            raise err(f"rdbms:query(): attribute definition '{part.strip()}' is not 'name type' "
                      f"(types: {', '.join(_TYPES)})")
        out.append(Attribute(bits[0], _TYPES[bits[1].lower()]))
    if not out:
        raise err("rdbms:query(): the attribute definition list is empty")
    return out


def _read(value: Any, type_: AttrType) -> Any:
    """A result column as the declared type, a NULL as JDBC's getter reads it."""
    return _NULL_READS_AS.get(type_) if value is None else coerce(value, type_)


def _sql(ctx: Any, datasource: str, query: str, n_args: int, fn: str) -> tuple[Any, str]:
    if datasource not in ctx.datasources:
        known = ", ".join(sorted(ctx.datasources)) or "none are defined"
        raise err(f"{fn}(): no datasource named '{datasource}' ({known}); define it under `datasources:` in the "
                  "service config or with SiddhiManager.set_data_source()")
    marks = len(_PLACEHOLDER.findall(query))
    if marks != n_args:
        raise err(f"{fn}(): the query has {marks} '?' placeholder(s) but {n_args} parameter(s) follow it")
    db = ctx.datasource(datasource) if not ctx.offline else None
    # DB-API drivers here use %s; a literal % must be doubled
    return db, _PLACEHOLDER.sub("%s", query.replace("%", "%%"))


def _constant(infos: list[ArgInfo], i: int, fn: str, what: str) -> str:
    if not is_literal(infos[i]):
        raise err(f"{fn}(): the {what} should be a constant string")
    return str(infos[i].value)


@stream_processor("rdbms", "query",
                  (Param("datasource.name", STRING, doc="A datasource of the service config (`datasources:`)."),
                   Param("attribute.definition.list", STRING, doc="The result columns: 'name type, ...'."),
                   Param("query", STRING, dynamic=True,
                         doc="SQL with `?` placeholders; an attribute gives each event's own query "
                             "(then without parameters)."),
                   Param("parameter", ALL, optional=True, dynamic=True,
                         doc="Values of the placeholders, in order; a last `true` more than the "
                             "placeholders is ack.empty.result.set.")),
                  overloads=(("datasource.name", "attribute.definition.list", "query"),
                             ("datasource.name", "attribute.definition.list", "query", "parameter", REPEAT)),
                  returns="the attributes of attribute.definition.list",
                  doc="Runs a SELECT per event against a datasource and emits one event per result row "
                      "(the input attributes plus the declared ones).",
                  examples=(("from TriggerStream#rdbms:query('SAMPLE_DB', 'creditcardno string, country string', "
                             "'select * from Transactions_Table where country = ?', countrySearchWord) "
                             "select creditcardno, country insert into recordStream;",
                             "one event per matching row"),))
def _query(infos: list[ArgInfo], getters: list[Any], attributes: list[Attribute],
           ctx: Any) -> tuple[list[Attribute], Callable[[], ChunkProcessor]]:
    fn = "rdbms:query"
    datasource = _constant(infos, 0, fn, "datasource name")
    declared = _definitions(_constant(infos, 1, fn, "attribute definition list"))
    args = getters[3:]
    ack_empty = False
    per_event = not is_literal(infos[2])  # the event carries the query (Siddhi: then no parameters)
    query = "" if per_event else _constant(infos, 2, fn, "query")
    marks = len(_PLACEHOLDER.findall(query))
    if len(args) == marks + 1 and is_literal(infos[-1]) and isinstance(infos[-1].value, bool):
        ack_empty, args = bool(infos[-1].value), args[:-1]
    if per_event and args:
        raise err(f"{fn}(): a query given per event takes no parameters")
    db, sql = _sql(ctx, datasource, query, len(args), fn)
    query_of = getters[2]
    types = [a.type for a in declared]
    blank = (None,) * len(declared)

    def run(chunk: list[Event]) -> list[Event]:
        def work(cur: Any) -> list[Event]:
            out: list[Event] = []
            for e in chunk:
                if per_event:
                    cur.execute(str(query_of(e)))  # (no parameters: the text goes as it is)
                else:
                    cur.execute(sql, tuple(g(e) for g in args))
                rows = cur.fetchall()
                for r in rows:
                    out.append(Event(e.timestamp, (*e.data, *(_read(v, t) for v, t in zip(r, types, strict=False))),
                                     e.type))
                if not rows and ack_empty:
                    out.append(Event(e.timestamp, (*e.data, *blank), e.type))
            return out

        return _reporting(lambda: list(db.run(work)), "retrieving", datasource)

    return declared, lambda: ChunkProcessor(run)


@stream_processor("rdbms", "cud",
                  (Param("datasource.name", STRING, doc="A datasource of the service config (`datasources:`)."),
                   Param("query", STRING, doc="INSERT, UPDATE, DELETE (any statement but DROP, ALTER or one "
                                              "returning rows) with `?` placeholders; COMMIT or "
                                              "ROLLBACK ends the transaction of a transaction.correlation.id."),
                   Param("parameter", ALL, optional=True, dynamic=True, doc="Values of the placeholders."),
                   Param("transaction.correlation.id", STRING, optional=True,
                         doc="A constant after the values: the calls with this id share one transaction, "
                             "open until a call with the query COMMIT or ROLLBACK and the id; a chunk that fails "
                             "takes its own statements back and the transaction goes on.")),
                  overloads=(("datasource.name", "query"), ("datasource.name", "query", "parameter", REPEAT)),
                  returns="numRecords (int)",
                  doc="Runs an INSERT, UPDATE or DELETE per event against a datasource (a chunk's in one "
                      "transaction, or in the open transaction of its transaction.correlation.id) and emits "
                      "the event with the number of rows it changed. Off until the "
                      "system parameter perform.CUD.operations is true (`extensions: {rdbms:cud: "
                      "{perform.CUD.operations: true}}` in the service config); a null parameter fails its "
                      "chunk unless allow.null.params.with.CUD is true.",
                  examples=(("from TriggerStream#rdbms:cud('SAMPLE_DB', 'UPDATE Customers_Table SET "
                             "customerName = ? where customerName = ?', changedName, previousName) "
                             "select numRecords insert into RecordStream;", "the rows updated per event"),
                            ("from InsertStream#rdbms:cud('SAMPLE_DB', 'INSERT INTO Names(name) VALUES (?)', name, "
                             "'t1') select name insert into ignoreStream; "
                             "from CommitStream#rdbms:cud('SAMPLE_DB', 'COMMIT', 't1') select * "
                             "insert into ignoreStream2;",
                             "the names inserted under 't1' are written together when an event arrives at "
                             "CommitStream"),))
def _cud(infos: list[ArgInfo], getters: list[Any], attributes: list[Attribute],
         ctx: Any) -> tuple[list[Attribute], Callable[[], ChunkProcessor]]:
    fn = "rdbms:cud"
    if ctx.extension_property(fn, "perform.CUD.operations", "false").lower() != "true":
        raise err(f"{fn}(): performing CUD operations is disabled; enable it with the system parameter "
                  "perform.CUD.operations: true (the service config's `extensions: {rdbms:cud: "
                  "{perform.CUD.operations: true}}`, or SiddhiManager.set_extension_properties)")
    allow_nulls = ctx.extension_property(fn, "allow.null.params.with.CUD", "false").lower() == "true"
    datasource = _constant(infos, 0, fn, "datasource name")
    query = _constant(infos, 1, fn, "query")
    args = getters[2:]
    correlation_id = None
    marks = len(_PLACEHOLDER.findall(query))
    if len(args) == marks + 1:  # Siddhi: a last argument beyond the values
        if not is_literal(infos[-1]):
            raise err(f"{fn}(): the query has {marks} '?' placeholder(s) but {len(args)} parameter(s) follow "
                      "it; a last one beyond the placeholders is the transaction correlation id, which should "
                      "be a constant string")
        correlation_id = str(infos[-1].value)
        args = args[:-1]
    ending = _ENDINGS.get(query.strip().rstrip(";").strip().lower())
    if any(word in query.upper() for word in _UNAUTHORISED):
        # Siddhi's RDBMSStreamProcessorUtil.queryContainsCheck: the text anywhere, any case (a
        # column 'dropped' too).  Siddhi finds it per chunk and drops every event; the query is
        # a constant, so it is known now
        raise err(f"{fn}(): the query has unauthorised operations, '{query}' (Siddhi refuses a query "
                  f"containing {' or '.join(_UNAUTHORISED)} anywhere and drops every event sent to it)")
    first = (query.split(None, 1) or [""])[0].lower()
    if first in _RESULT_STATEMENTS:
        # Siddhi runs it in a JDBC batch, which fails for every chunk (a result where none was expected)
        raise err(f"{fn}(): a {first.upper()} returns rows, which rdbms:cud cannot run; use rdbms:query")
    db, sql = _sql(ctx, datasource, query, len(args), fn)
    held = ctx.held_transaction(datasource, correlation_id) if correlation_id is not None and db else None
    if ending is not None:
        if correlation_id is None:
            _log.warning("%s(): '%s' without a transaction correlation id has no effect (each call without "
                         "an id commits its own work)", fn, query.strip())
        return [Attribute("numRecords", AttrType.INT)], lambda: ChunkProcessor(_ender(held, ending))

    def run(chunk: list[Event]) -> list[Event]:
        params = [tuple(g(e) for g in args) for e in chunk]
        if not allow_nulls and any(None in p for p in params):
            # Siddhi's words; before any statement runs, so nothing of the chunk is written
            raise ValueError("Null values have been detected in the parameters passed to the CUD function. "
                             "CUD functions do not permit null parameters (allow.null.params.with.CUD).")

        def work(cur: Any) -> list[Event]:
            out = []
            for e, p in zip(chunk, params, strict=True):
                cur.execute(sql, p)
                out.append(Event(e.timestamp, (*e.data, int(max(cur.rowcount, 0))), e.type))
            return out

        return _reporting(lambda: list((held or db).run(work)), "manipulating", datasource)

    return [Attribute("numRecords", AttrType.INT)], lambda: ChunkProcessor(run)


def _reporting(work: Callable[[], list[Event]], doing: str, datasource: str) -> list[Event]:
    """``work()``, a database error reported in Siddhi's words: "Error in manipulating records
    from datasource 'X': <the driver's message>" (the chunk is dropped as any failing chunk; an
    outage is a StoreUnavailableError, a BaseException, and goes by untouched)."""
    try:
        return work()
    except Exception as exc:
        raise RuntimeError(f"Error in {doing} records from datasource '{datasource}': "
                           f"{' '.join(str(exc).split())}") from exc


def _ender(held: Any, commit: bool) -> Callable[[list[Event]], list[Event]]:
    """A COMMIT or ROLLBACK call: ends the held transaction (if any is open) at each chunk."""
    def run(chunk: list[Event]) -> list[Event]:
        if held is not None:
            held.end(commit)
        return [Event(e.timestamp, (*e.data, 0), e.type) for e in chunk]

    return run
