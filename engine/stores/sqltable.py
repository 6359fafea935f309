"""``@store(type='rdbms', jdbc.url=...)`` tables: the rows live in the database, not in memory.

A :class:`SqlTable` offers the engine what an in-memory table does (``add``, ``delete``,
``replace``, ``scan``, key lookups) but every call is SQL with bound parameters against the
database, so replicas and other programs share one table.  Conditions over the table (``on``
of joins, ``update``, ``delete``, ``update or insert``, ``in`` and on-demand queries) are
translated by :func:`compile_sql_matcher`: comparisons between a column and a value of the
matching event (or another column), ``and``/``or``/``not``, ``is null``, become a ``WHERE``
clause whose values are bound per event; what cannot be expressed (a function of a column,
arithmetic on a column) is filtered in Python over the rows the translatable part selected,
and the plan says so (``table.plans``, logged at debug, shown by ``srota validate --explain``).

Siddhi's semantics are kept: a comparison with a null is false (also under ``not``: those
comparisons are wrapped in ``COALESCE(..., FALSE)``); strings compare by code point (PostgreSQL
columns use the "C" collation, MySQL tables ``utf8mb4_bin``); an insert whose primary key exists
is dropped and logged; ``@PrimaryKey`` and ``@Index`` become the table's primary key and
indexes.  ``@cache(size=, cache.policy=, retention.period=)`` nested in ``@store`` keeps the
rows most recently read or written by primary key in memory (write-through; only primary-key
lookups use it, and only this process's writes refresh it: use it where one writer owns the
table, or with a ``retention.period``).

Every unit of work (one event's lookup, one chunk's writes of a query output) is one
transaction, committed before the call returns: a source's offsets, committed after the chunk
is processed, never run ahead of the table (DESIGN.md decision 12).
"""
from __future__ import annotations

import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from srota.engine import state_codec
from srota.engine.codegen import CodeGen
from srota.engine.event import CURRENT, Event
from srota.engine.expression import ExpressionCompiler, error_at
from srota.engine.stores.database import Database, OwnerFence, StoreError, max_outage, url_from_options
from srota.engine.stores.hikari import check_pool_properties
from srota.engine.table import conjuncts
from srota.engine.timeutil import parse_duration
from srota.engine.types import f32
from srota.grammar.model import (
    And,
    Annotation,
    AttrType,
    Compare,
    CompareOperator,
    Constant,
    Expression,
    IsNull,
    Not,
    Or,
    TableDefinition,
)

_log = logging.getLogger("srota.engine.stores")

_SQL_OPS = {CompareOperator.EQ: "=", CompareOperator.NE: "<>", CompareOperator.LT: "<",
            CompareOperator.LE: "<=", CompareOperator.GT: ">", CompareOperator.GE: ">="}


class SqlTable:
    """A table in PostgreSQL or MySQL/MariaDB (see the module doc)."""

    sql_backed = True

    def __init__(self, definition: TableDefinition, primary_key: Sequence[int],
                 index_groups: Sequence[Sequence[int]], store: Annotation, ctx: Any) -> None:
        options = {el.key: el.value for el in store.elements if el.key}
        self.definition = definition
        self.id = self.name = definition.id
        self.attributes = tuple(definition.attributes)
        self.pk_positions = tuple(primary_key)
        #: one database index per ``@Index``, over its columns, as siddhi-store-rdbms makes them
        self._index_groups = [tuple(g) for g in index_groups]
        self.index_positions = tuple(i for i in dict.fromkeys(i for g in self._index_groups for i in g)
                                     if (i,) != self.pk_positions)
        self.store: Any = None  # the in-memory table's write-behind hook; unused here
        self._ctx = ctx
        self._types = [a.type for a in self.attributes]
        self.sql_table = options.get("table.name") or definition.id
        if options.get("jdbc.url") or options.get("url"):  # (Siddhi reads them only then, not for a datasource)
            check_pool_properties(options.get("pool.properties") or "")
        self.db = Database(url_from_options(options, getattr(ctx, "datasources", None)), f"table '{definition.id}'",
                           max_outage(options))
        epoch, shard = getattr(ctx, "fence_epoch", None), getattr(ctx, "shard_id", None)
        if epoch is not None and shard:
            # Scale-out: the partition's owner writes the table; a replaced one is fenced out.
            self.db.on_connect = OwnerFence(self.db.url, f"srota:table:{self.db.url.database}:{self.sql_table}:"
                                            f"{shard}", epoch, f"table '{definition.id}' for shard {shard!r}",
                                            self.db.connect_timeout).on_connect
        self.plans: list[str] = []
        q = self.db.q
        self._t = q(self.sql_table)
        self._cols = [a.name for a in self.attributes]
        self._select = f"SELECT {', '.join(q(c) for c in self._cols)} FROM {self._t}"
        ph = self.db.dialect.placeholder
        self._insert = f"INSERT INTO {self._t} ({', '.join(q(c) for c in self._cols)}) " \
                       f"VALUES ({', '.join(ph for _ in self._cols)})"
        if self.pk_positions:
            self._insert_new = self.db.dialect.insert_if_absent(
                self.sql_table, self._cols, [self._cols[i] for i in self.pk_positions])
        key = self.pk_positions or tuple(range(len(self._cols)))
        if self.pk_positions:
            self._where_row = " AND ".join(f"{q(self._cols[i])} = {ph}" for i in key)
        else:  # no key: a row is all its values (nulls included)
            self._where_row = " AND ".join(self.db.dialect.null_safe_equal(q(self._cols[i]), ph) for i in key)
        self._row_key = key
        self._update = f"UPDATE {self._t} SET {', '.join(f'{q(c)} = {ph}' for c in self._cols)} " \
                       f"WHERE {self._where_row}"
        self._delete = f"DELETE FROM {self._t} WHERE {self._where_row}"
        self._cache = _cache_of(store)
        #: siddhi-store-rdbms's ``allow.null.values`` (default false): then a row with a null
        #: in a column that is not a string is not inserted, and a null such a column holds
        #: (written by an update or another program) reads as 0 / 0.0 / false, as JDBC's getters
        self.allow_nulls = (options.get("allow.null.values") or "false").strip().lower() == "true"
        lengths = _field_lengths(options.get("field.length", ""))
        unknown = [name for name in lengths if name not in self._cols]
        if unknown:  # (siddhi-store-rdbms refuses the table too)
            raise StoreError(f"field.length names {unknown}, not attributes of table '{definition.id}' "
                             f"({', '.join(self._cols)})")
        if not getattr(ctx, "offline", False):
            self.db.connect_now()
            self.db.run(lambda cur: self._create(cur, lengths))

    # ------------------------------------------------------------------ schema
    def _create(self, cur: Any, lengths: dict[str, int]) -> None:
        dialect = self.db.dialect
        q = self.db.q
        dialect.serialize_ddl(cur)  # another replica may be creating it now: check after it is done
        have = dialect.existing_columns(cur, self.sql_table)
        if have is not None:
            # As siddhi-store-rdbms: an existing table is used as it is, and since every
            # statement names its columns, it may have more than the app defines (the app
            # reads and writes its own); a column the app defines must be there.
            present = {c.lower() for c in have}
            missing = [c for c in self._cols if c.lower() not in present]
            if missing:
                raise StoreError(f"table '{self.sql_table}' in {self.db.url.display()} has columns {have}, "
                                 f"not {missing} that the app defines: migrate it, or set table.name=")
            return
        keyed = set(self.pk_positions) | set(self.index_positions)
        cols = [f"{q(a.name)} {dialect.column_type(a.type, lengths.get(a.name), i in keyed)}"
                for i, a in enumerate(self.attributes)]
        if self.pk_positions:
            cols.append(f"PRIMARY KEY ({', '.join(q(self._cols[i]) for i in self.pk_positions)})")
        cur.execute(f"CREATE TABLE {self._t} ({', '.join(cols)}){dialect.create_table_suffix()}")
        for n, group in enumerate(self._index_groups):
            cur.execute(f"CREATE INDEX {q(f'{self.sql_table}_INDEX_{n}')} ON {self._t} "
                        f"({', '.join(q(self._cols[i]) for i in group)})")

    # ------------------------------------------------------------------ conversion
    def _to_sql(self, data: Sequence[Any]) -> tuple[Any, ...]:
        out = []
        for v, t in zip(data, self._types, strict=True):
            if v is not None and t is AttrType.OBJECT:
                v = state_codec.dumps(v)
            out.append(v)
        return tuple(out)

    def _row(self, rec: Sequence[Any], now: int) -> Event:
        data = []
        allow_nulls = self.allow_nulls
        for v, t in zip(rec, self._types, strict=True):
            if v is None:
                if not allow_nulls:
                    v = _NULL_READS_AS.get(t)
            else:
                if t is AttrType.BOOL:
                    v = bool(v)
                elif t is AttrType.FLOAT:
                    v = f32(float(v))
                elif t is AttrType.DOUBLE:
                    v = float(v)
                elif t is AttrType.OBJECT:
                    v = state_codec.loads(bytes(v))
            data.append(v)
        return Event(now, tuple(data), CURRENT)

    def _fetch(self, sql: str, params: Sequence[Any]) -> list[Event]:
        def work(cur: Any) -> list[Any]:
            cur.execute(sql, tuple(params))
            return list(cur.fetchall())

        now = self._ctx.clock.now()
        return [self._row(r, now) for r in self.db.run(work)]

    def _key_params(self, data: Sequence[Any]) -> tuple[Any, ...]:
        sql = self._to_sql(data)
        return tuple(sql[i] for i in self._row_key)

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return int(self.db.run(lambda cur: (cur.execute(f"SELECT COUNT(*) FROM {self._t}"), cur.fetchone())[1][0]))

    def rows(self) -> list[Event]:
        """Every row (a fresh read)."""
        return self._fetch(self._select, ())

    contents = rows
    scan = rows

    def select(self, where: str, params: Sequence[Any]) -> list[Event]:
        """Rows matching a translated condition (``where`` uses the dialect's placeholders)."""
        return self._fetch(f"{self._select} WHERE {where}" if where else self._select, params)

    def exists(self, where: str, params: Sequence[Any]) -> bool:
        """Whether a row matches a translated condition (one ``SELECT 1 ... LIMIT 1``)."""
        sql = f"SELECT 1 FROM {self._t}{f' WHERE {where}' if where else ''} LIMIT 1"

        def work(cur: Any) -> bool:
            cur.execute(sql, tuple(params))
            return cur.fetchone() is not None

        return bool(self.db.run(work))

    def lookup_pk(self, key: Any) -> list[Event]:
        values = (key,) if len(self.pk_positions) == 1 else tuple(key)
        cache = self._cache
        if cache is not None:
            hit = cache.get(values)
            if hit is not None:
                return [hit]
        where = " AND ".join(f"{self.db.q(self._cols[i])} = {self.db.dialect.placeholder}"
                             for i in self.pk_positions)
        rows = self.select(where, values)
        if cache is not None and rows:
            cache.put(values, rows[0])
        return rows

    def lookup_index(self, position: int, value: Any) -> list[Event]:
        return self.select(f"{self.db.q(self._cols[position])} = {self.db.dialect.placeholder}", (value,))

    # ------------------------------------------------------------------ writing
    def atomically(self, work: Callable[[], Any]) -> Any:
        """Run ``work`` (several table calls) in one transaction, retried as one across outages."""
        return self.db.run(lambda cur: work())

    def add(self, chunk: Sequence[Event]) -> None:
        """Insert rows; a row whose primary key exists is dropped and logged (Siddhi's rule).
        A null in a column that is not a string refuses the whole chunk, unless
        ``allow.null.values``: siddhi-store-rdbms binds the chunk's rows in one batch and fails
        it at that row, before anything runs, so the chunk goes to the query's error handling
        (logged and dropped, or the fault stream of ``@OnError``)."""
        if not self.allow_nulls:
            self._refuse_nulls(chunk)
        if not chunk:
            return
        rows = [self._to_sql(e.data) for e in chunk]
        if not self.pk_positions:
            self.db.run(lambda cur: cur.executemany(self._insert, rows))
            return
        inserted = self.db.run(lambda cur: [self._insert_one(cur, row) for row in rows])
        for e, ok in zip(chunk, inserted, strict=True):
            if not ok:
                _log.error("table %s: a row with primary key %r already exists; insert of %r dropped",
                           self.id, self._pk_of(e.data), list(e.data))
            elif self._cache is not None:
                self._cache.put(self._pk_values(e.data), Event(e.timestamp, tuple(e.data), CURRENT))

    def _refuse_nulls(self, chunk: Sequence[Event]) -> None:
        for e in chunk:
            for v, t, name in zip(e.data, self._types, self._cols, strict=True):
                if v is None and t is not AttrType.STRING:
                    # RDBMSEventTable.add's words (its DatabaseRuntimeException and the cause)
                    raise StoreError(f"Failed to add records to the store: '{self.sql_table}': Cannot Execute "
                                     f"Insert/Update on the table: '{self.sql_table}'. A null value detected for "
                                     f"the attribute '{name}' (allow.null.values is false): {list(e.data)}")

    def _insert_one(self, cur: Any, row: tuple[Any, ...]) -> bool:
        cur.execute(self._insert_new, row)
        return bool(cur.rowcount)

    def _pk_of(self, data: Sequence[Any]) -> Any:
        pk = self.pk_positions
        return data[pk[0]] if len(pk) == 1 else tuple(data[i] for i in pk)

    def _pk_values(self, data: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(data[i] for i in self.pk_positions)

    def delete(self, rows: Sequence[Event]) -> None:
        """Delete these rows (as returned by a lookup: by primary key, or by all their values)."""
        if not rows:
            return
        keys = [self._key_params(r.data) for r in rows]
        self.db.run(lambda cur: cur.executemany(self._delete, keys))
        if self._cache is not None:
            for r in rows:
                self._cache.drop(self._pk_values(r.data))

    def replace(self, row: Event, data: tuple[Any, ...]) -> Event | None:
        """Give ``row`` new values (an update); None when a primary-key clash refused it."""
        params = (*self._to_sql(data), *self._key_params(row.data))
        try:
            self.db.run(lambda cur: cur.execute(self._update, params))
        except Exception as exc:
            if self.db.dialect.is_transient(exc) or not _is_integrity_error(exc):
                raise
            _log.error("table %s: update to %r refused by the database (%s); update of %r dropped",
                       self.id, list(data), " ".join(str(exc).split()), list(row.data))
            return None
        if not self.allow_nulls:  # the row as a read gives it back (a null as 0 / false)
            data = tuple(_NULL_READS_AS.get(t) if v is None else v for v, t in zip(data, self._types, strict=True))
        new = Event(row.timestamp, tuple(data), CURRENT)
        if self._cache is not None:
            self._cache.drop(self._pk_values(row.data))
            self._cache.put(self._pk_values(data), new)
        return new

    def clear(self) -> None:
        self.db.run(lambda cur: cur.execute(f"DELETE FROM {self._t}"))
        if self._cache is not None:
            self._cache.clear()

    # ------------------------------------------------------------------ state
    def snapshot_state(self) -> Any:
        return None  # the database is the state: a snapshot does not copy it

    def restore_state(self, state: Any) -> None:
        if state:  # a snapshot taken while the table was in memory: keep the database's rows
            _log.warning("table %s: a snapshot holds in-memory rows; the %s table is kept as it is",
                         self.id, self.db.url.dialect)

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------------ conditions
    def compile_matcher(self, condition: Expression | None, scope: Any, cand_var: str, cand_event: str,
                        gen: CodeGen, ctx: Any, params: str, what: str) -> Callable[..., list[Event]]:
        """Compile ``condition`` into ``find(params) -> rows``, as SQL where it can (module doc)."""
        compiler = ExpressionCompiler(ctx, scope, gen)
        cands, rest = self._plan(condition, compiler, cand_var, cand_event, gen, what)
        body = list(scope.prologue)
        if rest is None:
            body.append(f"return {cands.rows()}")
        else:
            code = compiler.compile_condition(rest, what)
            body.append(f"return [{cand_event} for {cand_event} in {cands.rows()} "
                        f"for {cand_var} in ({cand_event}.data,) if {code}]")
        return gen.function("_sqlfind", params, body)

    def compile_contains(self, condition: Expression | None, compiler: ExpressionCompiler, cand_var: str,
                         cand_event: str, gen: CodeGen) -> str:
        """Inline code for ``condition in T``: one ``SELECT 1 ... LIMIT 1`` where all of the
        condition translates (Siddhi's rdbms store asks the database whether a record exists),
        else the translated part selects the rows the rest is tested on in Python."""
        cands, rest = self._plan(condition, compiler, cand_var, cand_event, gen, "'in' condition")
        if rest is None:
            return cands.any()
        code = compiler.compile_condition(rest, "'in' condition")
        return f"any(True for {cand_event} in {cands.rows()} for {cand_var} in ({cand_event}.data,) if {code})"

    def _plan(self, condition: Expression | None, compiler: ExpressionCompiler, cand_var: str, cand_event: str,
              gen: CodeGen, what: str) -> tuple[_Candidates, Expression | None]:
        """How to read the candidate rows (SQL for every translatable conjunct) and the rest of
        ``condition`` to test on them in Python (None when all of it is SQL)."""
        translator = _Translator(self, compiler, cand_var, cand_event)
        sql_parts: list[str] = []
        args: list[str] = []
        rest: Expression | None = None
        n_rest = 0
        for part in conjuncts(condition):
            got = translator.translate(part, negated=False, top=True)
            if got is None:
                rest = part if rest is None else And(rest, part)
                n_rest += 1
            else:
                sql_parts.append(got[0])
                args.extend(got[1])
        where = " AND ".join(sql_parts)
        plan = f"{what} on table '{self.id}': " + (
            f"SQL WHERE {where}" if where else "reads every row") + (
            f"; filtered in Python: {n_rest} part(s) with no SQL translation" if n_rest else "")
        self.plans.append(plan)
        _log.debug("%s", plan)
        key = None
        pk = self.pk_positions
        if pk and len(sql_parts) == len(pk) and set(translator.key_equalities) == set(pk):
            # exactly the primary key: a key lookup (served by @cache when there is one)
            eq = translator.key_equalities
            key = eq[pk[0]] if len(pk) == 1 else "(" + "".join(eq[p] + ", " for p in pk) + ")"
        args_code = "(" + "".join(a + ", " for a in args) + ")"
        return _Candidates(gen.ref(self, "sqltbl"), where, args_code, key), rest


class _Candidates(NamedTuple):
    """Generated code's ways to a condition's candidate rows of a table."""

    table: str  # the table's name in the generated code
    where: str  # the translated part, with placeholders
    args: str  # the code of the placeholders' values
    key: str | None  # the code of the primary key, when the translated part is exactly it

    def rows(self) -> str:
        """Code giving the rows (a key lookup, served by @cache where there is one)."""
        if self.key is not None:
            return f"{self.table}.lookup_pk({self.key})"
        return f"{self.table}.select({self.where!r}, {self.args})"

    def any(self) -> str:
        """Code telling whether there is a row (``SELECT 1 ... LIMIT 1``)."""
        if self.key is not None:
            return f"bool({self.rows()})"
        return f"{self.table}.exists({self.where!r}, {self.args})"


class _Translator:
    """Turns condition parts into SQL with parameters (Python code over the matching event)."""

    def __init__(self, table: SqlTable, compiler: ExpressionCompiler, cand_var: str, cand_event: str) -> None:
        self.table = table
        self.compiler = compiler
        self.column = re.compile(rf"^{re.escape(cand_var)}\[(\d+)\]$")
        self.touches = re.compile(rf"\b{re.escape(cand_var)}\[|\b{re.escape(cand_event)}\b")
        self.ph = table.db.dialect.placeholder
        #: column position -> parameter code of top-level `column == value` parts
        self.key_equalities: dict[int, str] = {}

    def _side(self, expr: Expression) -> tuple[str, list[str], AttrType] | None:
        """A column, or a value of the matching side (a bound parameter); None otherwise."""
        c = self.compiler.compile(expr)
        m = self.column.match(c.code)
        if m:
            return self.table.db.q(self.table._cols[int(m.group(1))]), [], c.type
        if self.touches.search(c.code):
            return None  # computed from a column: no faithful SQL for Siddhi's typing
        if c.type is AttrType.OBJECT:
            return None
        return self.ph, [c.code], c.type

    def translate(self, expr: Expression, negated: bool, top: bool = False) -> tuple[str, list[str]] | None:
        if isinstance(expr, And | Or):
            left = self.translate(expr.left, negated)
            right = self.translate(expr.right, negated)
            if left is None or right is None:
                return None
            op = "AND" if isinstance(expr, And) else "OR"
            return f"({left[0]} {op} {right[0]})", left[1] + right[1]
        if isinstance(expr, Not):
            inner = self.translate(expr.expression, not negated)
            return None if inner is None else (f"(NOT {inner[0]})", inner[1])
        if isinstance(expr, IsNull):
            side = self._side(expr.expression)
            if side is None or not side[1] and side[0] == self.ph:
                return None
            return f"({side[0]} IS NULL)", side[1]
        if isinstance(expr, Compare):
            lhs = self._side(expr.left)
            rhs = self._side(expr.right)
            if lhs is None or rhs is None or (lhs[0] == self.ph and rhs[0] == self.ph):
                return None
            if (lhs[2] is AttrType.STRING) != (rhs[2] is AttrType.STRING) or AttrType.BOOL in (lhs[2], rhs[2]) \
                    and lhs[2] is not rhs[2]:
                return None  # the compiler's own rules decide these (errors, or false)
            sql = f"{lhs[0]} {_SQL_OPS[expr.op]} {rhs[0]}"
            if top and expr.op is CompareOperator.EQ and lhs[2] is rhs[2]:
                for val_side, e in ((rhs, expr.left), (lhs, expr.right)):
                    m = self.column.match(self.compiler.compile(e).code)
                    if m and val_side[0] == self.ph:
                        self.key_equalities.setdefault(int(m.group(1)), val_side[1][0])
            if negated:  # a comparison with a null is false in Siddhi, also under `not`
                sql = f"COALESCE({sql}, FALSE)"
            return f"({sql})", lhs[1] + rhs[1]
        if isinstance(expr, Constant) and expr.type is AttrType.BOOL:
            return ("(1 = 1)" if expr.value else "(1 = 0)"), []
        return None


def _is_integrity_error(exc: BaseException) -> bool:
    return type(exc).__name__ in ("IntegrityError", "UniqueViolation")


#: What a null reads as without ``allow.null.values`` (JDBC's getBoolean/getInt/... of a NULL).
_NULL_READS_AS: dict[AttrType, Any] = {AttrType.BOOL: False, AttrType.INT: 0, AttrType.LONG: 0,
                                       AttrType.FLOAT: 0.0, AttrType.DOUBLE: 0.0}


def _field_lengths(text: str) -> dict[str, int]:
    """``field.length='symbol:100, name:30'`` (siddhi-store-rdbms)."""
    out: dict[str, int] = {}
    for part in text.split(","):
        if ":" in part:
            name, _, n = part.partition(":")
            try:
                out[name.strip()] = int(n)
            except ValueError:
                raise StoreError(f"field.length: '{part.strip()}' is not 'attribute:length'") from None
    return out


class _RowCache:
    """Rows by primary key, at most ``size``, evicting the least recently used (or the oldest)."""

    def __init__(self, size: int, policy: str, retention_ms: int | None) -> None:
        self.size = size
        self.policy = policy
        self.retention_ms = retention_ms
        self._rows: OrderedDict[tuple[Any, ...], tuple[Event, float]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[Any, ...]) -> Event | None:
        got = self._rows.get(key)
        if got is None or (self.retention_ms is not None
                           and (time.monotonic() - got[1]) * 1000 > self.retention_ms):
            self.misses += 1
            if got is not None:
                del self._rows[key]
            return None
        if self.policy == "LRU":
            self._rows.move_to_end(key)
        self.hits += 1
        return got[0]

    def put(self, key: tuple[Any, ...], row: Event) -> None:
        self._rows[key] = (row, time.monotonic())
        self._rows.move_to_end(key)
        while len(self._rows) > self.size:
            self._rows.popitem(last=False)

    def drop(self, key: tuple[Any, ...]) -> None:
        self._rows.pop(key, None)

    def clear(self) -> None:
        self._rows.clear()


def _cache_of(store: Annotation) -> _RowCache | None:
    found = store.nested("cache")
    if not found:
        return None
    ann = found[0]
    try:
        size = int(ann.get("size") or "0")
    except ValueError:
        raise StoreError(f"@cache: size must be a number, not '{ann.get('size')}'") from None
    if size <= 0:
        raise StoreError("@cache needs size='N' (N > 0)")
    policy = (ann.get("cache.policy") or "FIFO").upper()
    if policy not in ("FIFO", "LRU", "LFU"):
        raise StoreError(f"@cache: cache.policy must be FIFO, LRU or LFU, not '{policy}'")
    if policy == "LFU":
        policy = "LRU"  # recency approximates frequency for a write-through row cache
    retention = ann.get("retention.period")
    return _RowCache(size, policy, parse_duration(retention) if retention else None)


def open_sql_table(td: TableDefinition, pk: Sequence[int], index_groups: Sequence[Sequence[int]],
                   store: Annotation, ctx: Any) -> SqlTable:
    """Create the ``@store(type='rdbms')`` table of ``td`` (errors carry the annotation's position)."""
    try:
        table = SqlTable(td, pk, index_groups, store, ctx)
    except StoreError as exc:
        raise error_at(f"@store(type='rdbms'): {exc}", store) from None
    except Exception as exc:
        raise error_at(f"@store(type='rdbms') table '{td.id}': {type(exc).__name__}: "
                       f"{' '.join(str(exc).split())}", store) from None
    ctx.stop_hooks.append(table.close)
    return table
