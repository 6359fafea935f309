"""Tables: ``define table``, their outputs (insert, delete, update, update or insert), ``in``.

An in-memory table keeps its rows as immutable :class:`~engine.event.Event` objects in an
insertion-ordered dict keyed by a row id, plus a dict per ``@PrimaryKey`` and ``@Index``.
A table with a primary key is read (``from T``, a join, an update's or delete's scan) in the
order of Siddhi's ``IndexEventHolder``: a ``TreeMap`` by key for one numeric key column, else a
``HashMap`` (by the key's Java hash, then the order the rows were placed in).
Conditions over a table (``on`` of joins, updates and deletes, ``expr in T``, on-demand
queries) are compiled once by :func:`compile_matcher`: when the condition has equalities on the
primary key or on an indexed attribute, the generated finder looks rows up by key instead of
scanning (Siddhi's ``CompiledCondition`` / ``OperatorParser``).

Semantics follow Siddhi (conformance note 16):

* an insert whose primary key already exists is dropped and logged (``putIfAbsent``);
* ``update`` without ``set`` updates every table column the output has an attribute of the
  same name for, and keeps the others;
* ``update or insert`` inserts the output event when no row matches, so the output must have
  the table's schema.

``@store(type='sqlite', database='...')`` keeps the rows in SQLite too (see
:mod:`engine.store_sqlite`); any store is found through the registry (``Kind.STORE``).
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from srota.engine.codegen import CodeGen
from srota.engine.event import CURRENT, EXPIRED, Event
from srota.engine.expression import BASE_NAMESPACE, Compiled, ExpressionCompiler, error_at
from srota.engine.registry import Kind, registry
from srota.engine.scope import Column, StreamScope
from srota.engine.types import hashmap_table_for, java_hash, java_key, java_order, key_value
from srota.grammar.errors import did_you_mean
from srota.grammar.model import (
    And,
    Attribute,
    AttrType,
    Compare,
    CompareOperator,
    DeleteStream,
    Expression,
    In,
    InsertIntoStream,
    IsNullStream,
    TableDefinition,
    UpdateOrInsertStream,
    UpdateStream,
    Variable,
    find_annotation,
)

_log = logging.getLogger("srota.engine")

Emit = Callable[[list[Event]], None]


# ---------------------------------------------------------------------------- the table
class InMemoryTable:
    """Rows of one table, with primary-key and index dicts.

    ``store`` (optional) is told about every change (``put(rid, row)``/``remove(rid)``) so
    that a persistent store can write them behind; it never slows a lookup.
    """

    def __init__(self, definition: TableDefinition, primary_key: Sequence[int] = (),
                 indexes: Sequence[int] = ()) -> None:
        self.definition = definition
        self.id = definition.id
        self.attributes = tuple(definition.attributes)
        self.pk_positions = tuple(primary_key)
        self.index_positions = tuple(i for i in indexes if (i,) != self.pk_positions)
        # rows in insertion order; in a HashMap-ordered table, a row an update re-places
        # (Siddhi's delete and add again) moves to the end
        self._rows: dict[int, Event] = {}
        self._order = _java_order_kind(self.attributes, self.pk_positions)
        self._key_text = _java_key_text(self.attributes, self.pk_positions) if self._order == _HASHMAP else None
        self._hashes: dict[int, int] = {}  # row id -> its key's spread Java hash (HashMap order)
        self._capacity = _HASHMAP_INITIAL_TABLE  # the HashMap's table length: grows, never shrinks
        self._ordered: list[Event] | None = None  # the rows in Siddhi's order, until a change
        # keys of the primary-key and index dicts are java_key()s: Siddhi's maps tell -0.0 from
        # 0.0 and take a NaN for every NaN, as Double.equals and compareTo do
        self._pk: dict[Any, int] = {}
        self._pk_floats = any(self.attributes[p].type in _FLOATS for p in self.pk_positions)
        self._indexes: dict[int, dict[Any, dict[int, None]]] = {i: {} for i in self.index_positions}
        self._next_rid = 0
        # id(row event) -> row id: finders return row events, writes need their ids
        self._rid_by_obj: dict[int, int] = {}
        self.store: Any = None
        self.name = definition.id

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return len(self._rows)

    def rows(self) -> list[Event]:
        """Every row, in the order Siddhi reads them (a copy: safe to mutate the table while
        iterating): insertion order without a primary key."""
        return list(self.scan())

    def contents(self) -> list[Event]:
        """Same as :meth:`rows` (the name joins and named windows use)."""
        return list(self.scan())

    def scan(self) -> Any:
        """The rows for one read-only pass, in Siddhi's order (generated finders use it)."""
        if self._order is None:
            return self._rows.values()
        ordered = self._ordered
        if ordered is None:
            ordered = self._ordered = self._java_ordered()
        return ordered

    def _java_ordered(self) -> list[Event]:
        """The rows in the iteration order of Siddhi's primary-key map."""
        rows = self._rows
        if self._order == _TREEMAP:
            return [rows[rid] for _, rid in sorted(self._pk.items(), key=_tree_key)]
        mask, hashes = self._capacity - 1, self._hashes
        return [rows[rid] for _, _, rid in sorted((hashes[rid] & mask, i, rid) for i, rid in enumerate(rows))]

    def lookup_pk(self, key: Any) -> list[Event]:
        """The row whose primary key is ``key`` (a tuple for a composite key), as a list."""
        if self._pk_floats:
            key = java_key(key) if len(self.pk_positions) == 1 else tuple(map(java_key, key))
        rid = self._pk.get(key)
        return [] if rid is None else [self._rows[rid]]

    def lookup_index(self, position: int, value: Any) -> list[Event]:
        """Rows whose indexed attribute at ``position`` equals ``value``."""
        bucket = self._indexes[position].get(java_key(value))
        if not bucket:
            return []
        rows = self._rows
        return [rows[r] for r in bucket]

    def _pk_of(self, data: Sequence[Any]) -> Any:
        pk = self.pk_positions
        if len(pk) == 1:
            return java_key(data[pk[0]])
        return tuple(java_key(data[i]) for i in pk)

    # ------------------------------------------------------------------ writing
    def add(self, chunk: Sequence[Event]) -> None:
        """Insert rows (their data must have the table's arity); duplicate keys are dropped."""
        for e in chunk:
            self._insert(e.timestamp, tuple(e.data))

    def _insert(self, timestamp: int, data: tuple[Any, ...], rid: int | None = None) -> bool:
        if self.pk_positions:
            key = self._pk_of(data)
            if key in self._pk:
                _log.error("table %s: a row with primary key %r already exists; insert of %r dropped",
                           self.id, key, list(data))
                return False
        if rid is None:
            rid = self._next_rid
            self._next_rid += 1
        else:
            self._next_rid = max(self._next_rid, rid + 1)
        row = Event(timestamp, data, CURRENT)
        self._rows[rid] = row
        self._rid_by_obj[id(row)] = rid
        if self.pk_positions:
            self._pk[self._pk_of(data)] = rid
            self._ordered = None
            if self._key_text is not None:
                self._hashes[rid] = _spread(java_hash(self._key_text(data)))
                if len(self._pk) > self._capacity * 3 // 4:
                    self._capacity *= 2
        for pos, index in self._indexes.items():
            index.setdefault(java_key(data[pos]), {})[rid] = None
        if self.store is not None:
            self.store.put(rid, row)
        return True

    def _rid_of(self, row: Event) -> int | None:
        rid = self._rid_by_obj.get(id(row))
        if rid is not None and self._rows.get(rid) is row:
            return rid
        return None

    def delete(self, rows: Sequence[Event]) -> None:
        """Remove these rows (objects previously returned by a lookup)."""
        for row in rows:
            rid = self._rid_of(row)
            if rid is not None:
                self._remove(rid)

    def _remove(self, rid: int) -> None:
        row = self._rows.pop(rid)
        self._rid_by_obj.pop(id(row), None)
        data = row.data
        if self.pk_positions:
            self._pk.pop(self._pk_of(data), None)
            self._hashes.pop(rid, None)
            self._ordered = None
        for pos, index in self._indexes.items():
            key = java_key(data[pos])
            bucket = index.get(key)
            if bucket is not None:
                bucket.pop(rid, None)
                if not bucket:
                    del index[key]
        if self.store is not None:
            self.store.remove(rid)

    def replace(self, row: Event, data: tuple[Any, ...], replace_last: bool = False) -> Event | None:
        """Give ``row`` new data (an update); returns the new row, or None if it was refused.

        ``replace_last``: the update changes an indexed value (see :meth:`relocates`), which
        Siddhi does by deleting the row and adding it again: in a HashMap-ordered table the
        row then comes after the others of its hash slot.
        """
        rid = self._rid_of(row)
        if rid is None:
            return None
        old = row.data
        if self.pk_positions:
            old_key, new_key = self._pk_of(old), self._pk_of(data)
            if new_key != old_key:
                if new_key in self._pk:
                    _log.error("table %s: update to primary key %r clashes with an existing row; "
                               "update of %r dropped", self.id, new_key, list(old))
                    return None
                del self._pk[old_key]
                self._pk[new_key] = rid
                if self._key_text is not None and len(self.pk_positions) == 1:
                    # (a composite key's row is changed in place: Siddhi's map keeps it
                    # where its old key put it)
                    self._hashes[rid] = _spread(java_hash(self._key_text(data)))
            self._ordered = None
        for pos, index in self._indexes.items():
            old_key, new_key = java_key(old[pos]), java_key(data[pos])
            if old_key != new_key:
                bucket = index.get(old_key)
                if bucket is not None:
                    bucket.pop(rid, None)
                    if not bucket:
                        del index[old_key]
                index.setdefault(new_key, {})[rid] = None
        new = Event(row.timestamp, data, CURRENT)
        if replace_last and self._order == _HASHMAP:
            del self._rows[rid]
        self._rows[rid] = new
        del self._rid_by_obj[id(row)]
        self._rid_by_obj[id(new)] = rid
        if self.store is not None:
            self.store.put(rid, new)
        return new

    def relocates(self, rows: Sequence[Event], datas: Sequence[tuple[Any, ...]]) -> bool:
        """Whether giving ``rows`` their new ``datas`` changes an indexed value (a one-column
        primary key or an ``@Index``) from one value to another, neither null.

        Siddhi's ``IndexOperator.update`` then deletes every row the event matched and adds
        them again, in the order they were found, instead of changing them in place.
        """
        positions = (*self.index_positions, *(self.pk_positions if len(self.pk_positions) == 1 else ()))
        return any(r.data[p] is not None and d[p] is not None and r.data[p] != d[p]
                   for r, d in zip(rows, datas, strict=True) for p in positions)

    def key_clash(self, rows: Sequence[Event], datas: Sequence[tuple[Any, ...]]) -> Any:
        """The first new primary key that giving ``rows`` their new ``datas`` would duplicate.

        Siddhi's ``IndexOperator.update`` checks every row an event matched before changing any
        (single-attribute keys only): a key moving to another row's key, or two rows moving to
        one key, fails the whole event.  Returns None when there is no clash.
        """
        if len(self.pk_positions) != 1:
            return None
        p = self.pk_positions[0]
        keys: set[Any] | None = None
        for row, data in zip(rows, datas, strict=True):
            old, new = java_key(row.data[p]), java_key(data[p])
            if new is not None and old is not None and new != old:
                if keys is None:
                    keys = set(self._pk)
                keys.discard(old)
                if new in keys:
                    return new
                keys.add(new)
        return None

    def clear(self) -> None:
        for rid in list(self._rows):
            self._remove(rid)

    # ------------------------------------------------------------------ state
    def snapshot_state(self) -> Any:
        # (the HashMap's table length too: it decides the order of a keyed table's rows, and
        # it never shrinks, so the rows alone do not give it back)
        return {"rows": [(rid, r.timestamp, r.data) for rid, r in self._rows.items()], "capacity": self._capacity}

    def restore_state(self, state: Any) -> None:
        rows = state["rows"] if isinstance(state, dict) else state  # (a list: a snapshot of before 2026-11-29)
        store, self.store = self.store, None
        try:
            self._rows.clear()
            self._rid_by_obj.clear()
            self._pk.clear()
            for index in self._indexes.values():
                index.clear()
            self._capacity = _HASHMAP_INITIAL_TABLE
            for rid, ts, data in rows:
                self._insert(ts, tuple(data), rid)
        finally:
            self.store = store
        if isinstance(state, dict):
            self._capacity = state["capacity"]
        else:  # the table length the rows need at once (Siddhi 5.1.33's restore, which Srota no longer copies)
            self._capacity = max(self._capacity, hashmap_table_for(len(self._rows)))
        self._ordered = None
        if store is not None:
            store.replace_all(self._rows)

    def load(self, rows: Sequence[tuple[int, int, tuple[Any, ...]]]) -> None:
        """Fill the table from a store at start (without writing back)."""
        store, self.store = self.store, None
        try:
            for rid, ts, data in rows:
                self._insert(ts, tuple(data), rid)
        finally:
            self.store = store


# ---------------------------------------------------------------------------- Siddhi's row order
_TREEMAP, _HASHMAP = "tree", "hash"
_NUMERIC = frozenset({AttrType.INT, AttrType.LONG, AttrType.FLOAT, AttrType.DOUBLE})
_FLOATS = frozenset({AttrType.FLOAT, AttrType.DOUBLE})
#: A ``new HashMap<>()``'s table length (a keyed table's, and one restored anew).
_HASHMAP_INITIAL_TABLE = 16


def _java_order_kind(attributes: Sequence[Attribute], pk: Sequence[int]) -> str | None:
    """How Siddhi's ``IndexEventHolder`` orders the rows of a table with this primary key:
    a ``TreeMap`` for one numeric column, a ``HashMap`` otherwise; None without a key (an
    ``@Index`` alone reads rows from a set of events, in no order that can be reproduced:
    they keep their insertion order)."""
    if not pk:
        return None
    return _TREEMAP if len(pk) == 1 and attributes[pk[0]].type in _NUMERIC else _HASHMAP


def _java_key_text(attributes: Sequence[Attribute], pk: Sequence[int]) -> Callable[[tuple[Any, ...]], Any]:
    """The primary key as Siddhi's HashMap holds it: the value itself for one column, else
    each column's Java text followed by ``:-:`` (``SiddhiConstants.KEY_DELIMITER``)."""
    if len(pk) == 1:
        p = pk[0]
        return lambda data: data[p]
    from srota.engine.extensions._checks import java_str

    typed = [(p, attributes[p].type) for p in pk]
    return lambda data: "".join(java_str(data[p], t) + ":-:" for p, t in typed)


def _spread(h: int) -> int:
    """``HashMap.hash``: the high half of the hash folded into the low one."""
    return h ^ (h >> 16)


def _tree_key(item: tuple[Any, int]) -> Any:
    # a null key first: Siddhi's TreeMap refuses it (NullPointerException, the rest of the
    # chunk dropped), Srota keeps the row (docs/siddhi-differences.md, In-memory tables);
    # the others in compareTo's order (-0.0 before 0.0, NaN last)
    return (item[0] is not None, java_order(key_value(item[0])))


def define_table(td: TableDefinition, ctx: Any) -> InMemoryTable:
    """Create the table of ``define table`` (``@PrimaryKey``, ``@Index``, ``@store``)."""
    if td.id in ctx.streams:
        raise error_at(f"'{td.id}' is already defined as a stream", td)
    existing = ctx.tables.get(td.id)
    if existing is not None:
        if [(a.name, a.type) for a in existing.attributes] != [(a.name, a.type) for a in td.attributes]:
            raise error_at(f"table '{td.id}' is already defined with another schema", td)
        return existing
    names = [a.name for a in td.attributes]
    for a in td.attributes:
        if names.count(a.name) > 1:
            raise error_at(f"table '{td.id}' defines attribute '{a.name}' twice", a)
    pk: list[int] = []
    index_groups: list[list[int]] = []  # the columns of each @Index
    store_ann = find_annotation(td.annotations, "store")
    in_memory = store_ann is None
    seen_pk = False
    for ann in td.annotations:
        lname = ann.name.lower()
        if lname not in ("primarykey", "index"):
            continue
        if lname == "primarykey":
            if seen_pk:  # (Siddhi's DuplicateAnnotationException)
                raise error_at(f"@{ann.name} is defined twice on table '{td.id}'", ann)
            seen_pk = True
        if in_memory:
            # Siddhi's in-memory table: one attribute named whole per @Index, each indexed once
            values = [el.value for el in ann.elements]
            if lname == "index" and len(values) > 1:
                raise error_at(f"@{ann.name} of the in-memory table '{td.id}' takes one attribute, but found "
                               f"{len(values)}: put each in an @Index of its own", ann)
        else:
            values = [v for el in ann.elements for v in el.value.split(",")]
        if not values:
            raise error_at(f"@{ann.name} needs at least one attribute name", ann)
        if in_memory and lname == "index" and any(values[0].strip() in (names[i] for i in g) for g in index_groups):
            raise error_at(f"@{ann.name}('{values[0].strip()}') of table '{td.id}' is defined twice", ann)
        group: list[int] = []
        for v in values:
            v = v.strip()
            if v not in names:
                raise error_at(f"@{ann.name}: table '{td.id}' has no attribute '{v}'", ann)
            pos = names.index(v)
            if lname == "primarykey":
                if pk:
                    pass  # several values in one annotation build one composite key
                pk.append(pos)
            else:
                group.append(pos)
        if group:
            index_groups.append(group)
    if store_ann is not None and (store_ann.get("type") or "").lower() == "rdbms":
        # the rows live in the database (PostgreSQL, MySQL/MariaDB): no in-memory copy
        from srota.engine.stores.sqltable import open_sql_table

        sql_table = open_sql_table(td, pk, index_groups, store_ann, ctx)
        ctx.register_element(f"table:{td.id}", sql_table)
        if ctx.in_hook is None:
            ctx.in_hook = in_hook
        return sql_table  # type: ignore[return-value]
    # in memory, a dict per indexed attribute serves any @Index that names it
    table = InMemoryTable(td, pk, list(dict.fromkeys(pos for group in index_groups for pos in group)))
    if store_ann is not None:
        stype = store_ann.get("type")
        if not stype:
            raise error_at("@store needs a type, e.g. @store(type='sqlite', database='app.db')", store_ann)
        ext = registry.get(Kind.STORE, "", stype)
        if ext is None and stype.lower() == "sqlite":
            from srota.engine import store_sqlite  # noqa: F401 - registers the sqlite store
            ext = registry.get(Kind.STORE, "", stype)
        if ext is None:
            raise error_at(f"unknown store type '{stype}'", store_ann)
        options = {el.key: el.value for el in store_ann.elements if el.key}
        try:
            store = ext.factory(table, options, ctx)
        except (ValueError, OSError) as exc:
            raise error_at(f"@store(type='{stype}'): {exc}", store_ann) from None
        table.store = store
        ctx.stop_hooks.append(store.close)
    ctx.register_element(f"table:{td.id}", table)
    if ctx.in_hook is None:
        ctx.in_hook = in_hook
    return table


# ---------------------------------------------------------------------------- condition scopes
class TableScope:
    """Resolves table columns (``T.col``, or bare names the other side lacks) to ``{var}[i]``.

    ``outer`` resolves everything else (the matching event: a stream event, a query's output
    event); it may be None when only the table is in scope (on-demand queries).  In ``join``
    mode an unqualified name both sides have is ambiguous, as in Siddhi's joins; otherwise the
    matching side wins (``update T on T.symbol == symbol``).
    """

    def __init__(self, table: Any, names: Sequence[str], var: str, outer: Any = None,
                 event_var: str | None = None, join: bool = False) -> None:
        self.table = table
        self.names = {n for n in names if n}
        self.var = var
        self.outer = outer
        self.event_var = event_var
        self.join = join
        attrs = table.definition.attributes
        self._index = {a.name: i for i, a in enumerate(attrs)}
        self._types = [a.type for a in attrs]
        self.prologue: tuple[str, ...] = tuple(getattr(outer, "prologue", ()))

    def _column(self, var: Variable) -> tuple[str, AttrType]:
        i = self._index.get(var.attribute)
        if i is None:
            raise error_at(f"table '{self.table.id}' has no attribute '{var.attribute}'"
                           f"{did_you_mean(var.attribute, self._index)}", var)
        return f"{self.var}[{i}]", self._types[i]

    def resolve(self, var: Variable) -> tuple[str, AttrType]:
        if var.stream_id is not None and var.stream_id in self.names:
            return self._column(var)
        if self.outer is None:
            if var.stream_id is not None:
                raise error_at(f"'{var.stream_id}.{var.attribute}': only table '{self.table.id}' is in "
                               f"scope here", var)
            return self._column(var)
        if var.stream_id is not None:
            return self.outer.resolve(var)
        try:
            got = self.outer.resolve(var)
        except Exception:
            if var.attribute in self._index:
                return self._column(var)
            raise
        if self.join and var.attribute in self._index:
            raise error_at(f"attribute '{var.attribute}' is ambiguous: both '{self.table.id}' and another "
                           f"input have it; qualify it", var)
        return got

    def resolve_stream(self, node: IsNullStream) -> str:
        if node.stream_id in self.names and self.event_var:
            return self.event_var
        if self.outer is None:
            raise error_at(f"'{node.stream_id} is null' is not allowed here", node)
        return self.outer.resolve_stream(node)

    def timestamp(self, node: Expression | None) -> str:
        if isinstance(node, Variable) and node.stream_id is None and node.attribute in self.names \
                and self.event_var:
            return f"{self.event_var}.timestamp"
        if self.outer is None:
            if node is None and self.event_var:
                return f"{self.event_var}.timestamp"
            raise error_at("eventTimestamp() needs an event here", node)
        return self.outer.timestamp(node)

    def is_stream_reference(self, name: str) -> bool:
        if name in self.names:
            return True
        probe = getattr(self.outer, "is_stream_reference", None)
        return bool(probe and probe(name))

    def columns(self) -> list[Column]:
        return [Column(a.name, a.type, f"{self.var}[{i}]")
                for i, a in enumerate(self.table.definition.attributes)]


# ---------------------------------------------------------------------------- matchers
def conjuncts(expr: Expression | None) -> list[Expression]:
    """The parts of ``a and b and c`` (a condition that is no ``and``: itself; None: none)."""
    if expr is None:
        return []
    if isinstance(expr, And):
        return conjuncts(expr.left) + conjuncts(expr.right)
    return [expr]


def _and_all(parts: list[Expression]) -> Expression | None:
    if not parts:
        return None
    out = parts[0]
    for p in parts[1:]:
        out = And(out, p)
    return out


def compile_matcher(condition: Expression | None, scope: Any, cand_var: str, cand_event: str,
                    source: str, gen: CodeGen, ctx: Any, table: Any = None,
                    params: str = "e", what: str = "on condition") -> Callable[..., list[Event]]:
    """Compile ``condition`` into ``find(params) -> [matching candidate events]``.

    ``scope`` binds the matching side through its ``prologue`` (from ``params``) and reads a
    candidate's data as ``{cand_var}[i]`` (and the candidate event as ``cand_event``).
    ``source`` is the expression giving every candidate (``_t.rows()``).  With a ``table``,
    equalities between a primary-key or indexed column and an expression of the matching side
    turn into key lookups; what remains of the condition filters the rows found.
    """
    if getattr(table, "sql_backed", False):  # the condition becomes SQL where it can
        return table.compile_matcher(condition, scope, cand_var, cand_event, gen, ctx, params, what)
    compiler = ExpressionCompiler(ctx, scope, gen)
    lookup: str | None = None
    rest = conjuncts(condition)
    col_prefix = f"{cand_var}["
    if table is not None and rest and (table.pk_positions or table.index_positions):
        eq: dict[int, tuple[Expression, str]] = {}
        for part in rest:
            if not (isinstance(part, Compare) and part.op is CompareOperator.EQ):
                continue
            left, right = compiler.compile(part.left), compiler.compile(part.right)
            for col, other in ((left, right), (right, left)):
                code = col.code
                if code.startswith(col_prefix) and code.endswith("]") and col_prefix not in other.code \
                        and cand_event not in other.code:
                    try:
                        pos = int(code[len(col_prefix):-1])
                    except ValueError:
                        continue
                    if pos not in eq and _lookup_compatible(col.type, other.type):
                        eq[pos] = (part, other.code)
                    break
        tref = gen.ref(table, "tbl")
        pk = table.pk_positions
        if pk and all(p in eq for p in pk):
            key = eq[pk[0]][1] if len(pk) == 1 else "(" + ", ".join(eq[p][1] for p in pk) + ",)"
            lookup = f"{tref}.lookup_pk({key})"
            used = {id(eq[p][0]) for p in pk}
            rest = [p for p in rest if id(p) not in used]
        else:
            for pos in (*table.index_positions, *(pk if len(pk) == 1 else ())):
                if pos in eq:
                    if pos in table.index_positions:
                        lookup = f"{tref}.lookup_index({pos}, {eq[pos][1]})"
                    else:
                        lookup = f"{tref}.lookup_pk({eq[pos][1]})"
                    rest = [p for p in rest if p is not eq[pos][0]]
                    break
    cond = _and_all(rest)
    cond_code = compiler.compile_condition(cond, what) if cond is not None else None
    cands = lookup if lookup is not None else source
    body = list(scope.prologue)
    if cond_code is None or cond_code == "True":
        body.append(f"return {cands}" if lookup is not None else f"return list({cands})")
    elif cond_code == "False":
        body.append("return []")
    else:
        body.append(f"return [{cand_event} for {cand_event} in {cands} "
                    f"for {cand_var} in ({cand_event}.data,) if {cond_code}]")
    return gen.function("_find", params, body)


def _lookup_compatible(col: AttrType, other: AttrType) -> bool:
    """A dict lookup agrees with ``==`` only when both sides hash alike (not float vs double)."""
    if col == other:
        return True
    ints = (AttrType.INT, AttrType.LONG)
    return col in ints and other in ints


# ---------------------------------------------------------------------------- `in`
def in_hook(node: In, compiler: ExpressionCompiler) -> Compiled:
    """``cond in T``: true when a row of T satisfies ``cond`` (with the outer scope's variables)."""
    ctx = compiler.ctx
    table = ctx.tables.get(node.source_id)
    if table is None:
        window = ctx.windows.get(node.source_id)
        if window is None:
            raise error_at(f"'in {node.source_id}': no table named '{node.source_id}'", node)
        table = window
    gen = compiler.gen
    var = gen.temp()
    ev = gen.temp()
    scope = TableScope(table, [node.source_id], var, compiler.scope, ev)
    scope.prologue = ()  # the outer variables are already bound where the `in` is used
    inner = ExpressionCompiler(ctx, scope, gen)
    if getattr(table, "sql_backed", False):  # the database answers (one query per event)
        return Compiled(table.compile_contains(node.expression, inner, var, ev, gen), AttrType.BOOL, nullable=False)
    rest = conjuncts(node.expression)
    tref = gen.ref(table, "tbl")
    lookup = None
    if isinstance(table, InMemoryTable):
        for part in rest:
            if isinstance(part, Compare) and part.op is CompareOperator.EQ:
                a, b = inner.compile(part.left), inner.compile(part.right)
                for col, other in ((a, b), (b, a)):
                    if col.code.startswith(f"{var}[") and f"{var}[" not in other.code:
                        pos = int(col.code[len(var) + 1:-1])
                        if _lookup_compatible(col.type, other.type):
                            if table.pk_positions == (pos,):
                                lookup = f"{tref}.lookup_pk({other.code})"
                            elif pos in table.index_positions:
                                lookup = f"{tref}.lookup_index({pos}, {other.code})"
                        break
                if lookup is not None:
                    rest = [p for p in rest if p is not part]
                    break
    cond = _and_all(rest)
    cands = lookup or (f"{tref}.scan()" if isinstance(table, InMemoryTable) else f"{tref}.contents()")
    if cond is None:
        return Compiled(f"bool({cands})", AttrType.BOOL, nullable=False)
    code = inner.compile_condition(cond, "'in' condition")
    return Compiled(f"any(True for {ev} in {cands} for {var} in ({ev}.data,) if {code})",
                    AttrType.BOOL, nullable=False)


# ---------------------------------------------------------------------------- query outputs
def _check_table_schema(table: InMemoryTable, attributes: Sequence[Attribute], node: Any) -> None:
    have = [a.type for a in table.attributes]
    want = [a.type for a in attributes]
    if have != want:
        shown = ", ".join(f"{a.name} {a.type.value}" for a in attributes)
        target = ", ".join(f"{a.name} {a.type.value}" for a in table.attributes)
        raise error_at(f"output ({shown}) does not match the definition of table '{table.id}' ({target})",
                       node)


def _table(ctx: Any, target: str, node: Any) -> InMemoryTable:
    table = ctx.tables.get(target)
    if table is None:
        raise error_at(f"table '{target}' is not defined", node)
    return table


def plan_table_insert(out: InsertIntoStream, attributes: list[Attribute], ctx: Any,
                      gen: CodeGen) -> Emit:
    """``insert into T``: the output must have the table's schema; expired events insert too."""
    table = _table(ctx, out.target, out)
    _check_table_schema(table, attributes, out)
    add = table.add

    def target(chunk: list[Event]) -> None:
        add([e for e in chunk if e.type <= EXPIRED])

    return target


def plan_table_output(out: DeleteStream | UpdateStream | UpdateOrInsertStream,
                      attributes: list[Attribute], ctx: Any, gen: CodeGen) -> Emit:
    """``delete T on ...``, ``update T [set ...] on ...``, ``update or insert into T ...``."""
    table = _table(ctx, out.target, out)
    out_scope = StreamScope(f"{out.target}#output", attributes, (), "d")
    var = "_td"
    scope = TableScope(table, [out.target], var, out_scope, "_r")
    find = compile_matcher(out.on, scope, var, "_r", f"{gen.ref(table, 'tbl')}.scan()", gen, ctx,
                           table, what="on condition")
    if isinstance(out, DeleteStream):
        def delete(chunk: list[Event]) -> None:
            for e in chunk:
                if e.type <= EXPIRED:
                    rows = find(e)
                    if rows:
                        table.delete(rows)
        return _one_transaction(table, delete)

    new_row = _plan_update_row(out, attributes, table, scope, var, gen, ctx)
    upsert = isinstance(out, UpdateOrInsertStream)
    if isinstance(out, UpdateOrInsertStream):
        _check_table_schema(table, attributes, out)
        if not getattr(table, "sql_backed", False):
            return _plan_in_memory_upsert(out, attributes, table, scope, var, find, new_row, gen, ctx)

    update_rows = _row_updater(table, out, attributes, new_row)

    def update(chunk: list[Event]) -> None:
        for e in chunk:
            if e.type > EXPIRED:
                continue
            rows = find(e)
            if rows:
                update_rows(e, rows)
            elif upsert:
                table.add([e])

    return _one_transaction(table, update)


def _row_updater(table: Any, out: UpdateStream | UpdateOrInsertStream, attributes: list[Attribute],
                 new_row: Callable[[Event, Event], tuple[Any, ...]]) -> Callable[[Event, list[Event]], None]:
    """``update(e, rows)``: give the rows ``e`` matched their new data.

    Where the update may change a single-column primary key of an in-memory table, the new keys
    are checked first and a clash drops the event's whole update (as Siddhi's IndexOperator).
    """
    replace = table.replace
    pk: Sequence[int] = getattr(table, "pk_positions", ())
    in_memory = isinstance(table, InMemoryTable)
    if len(pk) == 1 and in_memory:
        key_name = table.attributes[pk[0]].name
        if out.set:
            rekeys = any(sa.table_column.attribute == key_name for sa in out.set)
        else:
            rekeys = any(a.name == key_name for a in attributes)
    else:
        rekeys = False
    # a HashMap-ordered table places again the rows whose indexed values an update changes
    relocating = in_memory and table._order == _HASHMAP
    if not rekeys and not relocating:
        def update_rows(e: Event, rows: list[Event]) -> None:
            for r in rows:
                replace(r, new_row(e, r))
        return update_rows

    def update_checked(e: Event, rows: list[Event]) -> None:
        datas = [new_row(e, r) for r in rows]
        if rekeys:
            clash = table.key_clash(rows, datas)
            if clash is not None:
                _log.error("table %s: update failed for %r: a row with primary key %r already exists",
                           table.id, list(e.data), clash)
                return
        last = relocating and table.relocates(rows, datas)
        for r, data in zip(rows, datas, strict=True):
            replace(r, data, last)
    return update_checked


def _plan_in_memory_upsert(out: UpdateOrInsertStream, attributes: list[Attribute], table: InMemoryTable,
                           scope: TableScope, var: str, find: Callable[..., list[Event]],
                           new_row: Callable[[Event, Event], tuple[Any, ...]], gen: CodeGen,
                           ctx: Any) -> Emit:
    """``update or insert`` into an in-memory table, a chunk at a time as Siddhi's InMemoryTable.

    Every event of the chunk is first matched against the table, and updates the rows it
    matches (``Operator.tryUpdate``); the events that matched nothing are then reduced among
    themselves, in order: one that matches an earlier one's pending row updates that row (the
    ``set`` reading it as the table row), otherwise it becomes a pending row of its own
    (``reduceEventsForUpdateOrInsert``); the pending rows are inserted last.  So no event of a
    chunk ever matches a row that another event of the same chunk inserted.
    """
    # the same condition, tested against one pending row instead of looked up in the table
    match_pending = compile_matcher(out.on, scope, var, "_r", "(_r,)", gen, ctx, None,
                                    params="e, _r", what="on condition")
    update_rows, add = _row_updater(table, out, attributes, new_row), table.add

    def upsert(chunk: list[Event]) -> None:
        missed: list[Event] = []
        for e in chunk:
            if e.type > EXPIRED:
                continue
            rows = find(e)
            if rows:
                update_rows(e, rows)
            else:
                missed.append(e)
        if not missed:
            return
        pending: list[Event] = []
        for e in missed:
            hit = False
            for i, p in enumerate(pending):
                if match_pending(e, p):
                    pending[i] = Event(p.timestamp, new_row(e, p), CURRENT)
                    hit = True
            if not hit:
                pending.append(e)
        add(pending)

    return upsert


def _one_transaction(table: Any, apply: Emit) -> Emit:
    """A database table applies a chunk's changes in one transaction (retried as one)."""
    atomically = getattr(table, "atomically", None)
    if atomically is None:
        return apply

    def in_transaction(chunk: list[Event]) -> None:
        atomically(lambda: apply(chunk))

    return in_transaction


def _plan_update_row(out: UpdateStream | UpdateOrInsertStream, attributes: list[Attribute],
                     table: InMemoryTable, scope: TableScope, var: str, gen: CodeGen,
                     ctx: Any) -> Callable[[Event, Event], tuple[Any, ...]]:
    """A generated ``new(e, row) -> data``: set columns change, the others keep their value."""
    names = [a.name for a in table.attributes]
    values = [f"{var}[{i}]" for i in range(len(names))]
    if out.set:
        compiler = ExpressionCompiler(ctx, scope, gen)
        assigned: dict[int, str] = {}
        for sa in out.set:
            col = sa.table_column
            if col.stream_id is not None and col.stream_id != out.target:
                raise error_at(f"'set {col.stream_id}.{col.attribute}': only columns of '{out.target}' "
                               f"can be set", col)
            if col.attribute not in names:
                raise error_at(f"table '{out.target}' has no attribute '{col.attribute}'"
                               f"{did_you_mean(col.attribute, names)}", col)
            c = compiler.compile(sa.expression)
            assigned[names.index(col.attribute)] = c.code  # a later one for a column wins
        if len(assigned) > 1 and any(f"{var}[" in code for code in assigned.values()):
            # Siddhi sets the columns one at a time in column order (its update set is a
            # HashMap keyed by position), each expression reading the row as the earlier
            # assignments left it: `set T.b = T.a, T.a = x` gives b the new a
            body = list(scope.prologue) + [f"{var} = list(_r.data)"]
            body += [f"{var}[{i}] = {assigned[i]}" for i in sorted(assigned)]
            body.append(f"return tuple({var})")
            return gen.function("_new_row", "e, _r", body)
        for i, code in assigned.items():
            values[i] = code
    else:
        matched = False
        for j, a in enumerate(attributes):
            if a.name in names:
                values[names.index(a.name)] = f"d[{j}]"
                matched = True
        if not matched:
            raise error_at(f"update of '{out.target}': the output has no attribute of the table", out)
    body = list(scope.prologue) + [f"{var} = _r.data", "return (" + "".join(v + ", " for v in values) + ")"]
    return gen.function("_new_row", "e, _r", body)


def new_codegen() -> CodeGen:
    """A code generator with the expression helpers (for callers outside a query)."""
    return CodeGen(BASE_NAMESPACE)
