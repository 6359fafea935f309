"""The live side of incremental aggregation (Siddhi's ``AggregationRuntime`` and ``IncrementalExecutor``).

Each granularity keeps its current bucket(s) in memory.  When an event (or, for coarser
granularities, a completed finer bucket) belongs to a newer bucket, the older buckets are
*dispatched*: written to that granularity's table and handed to the next coarser granularity,
exactly as the WSO2 SP documentation's worked example (events 0 to 5) describes.

Out-of-order events (event time only):

* ``@BufferSize(n)`` keeps the ``n`` root buckets before the newest one open, so late events
  within the buffer join their bucket before it is written.
* An event older than the buffer is dropped with ``@IgnoreEventsOlderThanBuffer('true')``.
  Otherwise it still lands in its own bucket (Siddhi 5 behaviour, conformance note 18, which
  ``Aggregation1TestCase`` pins): the bucket is reopened in memory and, when dispatched, is
  merged into the row already stored and passed on as a correction to the coarser
  granularities.  This keeps the tables independent of arrival order, which is what lets the
  Spark backfill reproduce them.

After a restart with a persistent ``@store``, the coarser granularities' open buckets are
recreated from the finer tables, and resent events older than the end of the newest stored
root bucket are ignored (the SP documentation's "Single-node Deployment").  A restored
snapshot skips this, as in an HA deployment.

Reading (joins ``within ... per ...`` and on-demand queries) combines the table of the
requested granularity with the open buckets of it and of every finer granularity.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from srota.engine.aggregation.buckets import FIXED_MILLIS, bucket_start, duration_named, next_bucket_start
from srota.engine.aggregation.purge import PurgePolicy, parse_purge, purge_bounds
from srota.engine.aggregation.spec import AggSpec, compile_spec
from srota.engine.aggregation.store import MemoryStore, SqliteStore, Store, StoredRow
from srota.engine.clock import next_period
from srota.engine.event import CURRENT, Event
from srota.engine.expression import error_at
from srota.engine.types import hashmap_order, java_float_str
from srota.grammar.model import AggregationDefinition, Attribute, TimeDuration, find_annotation

_log = logging.getLogger("srota.engine.aggregation")

Key = tuple[int, tuple[Any, ...]]


class _Level:
    """One granularity's open buckets: ``(start, group key) -> row``, and the newest start seen."""

    __slots__ = ("duration", "buckets", "top")

    def __init__(self, duration: TimeDuration) -> None:
        self.duration = duration
        self.buckets: dict[Key, list[Any]] = {}
        self.top: int | None = None


class Aggregation:
    """A running ``define aggregation``: consumes its input stream, keeps buckets, answers reads."""

    def __init__(self, ad: AggregationDefinition, spec: AggSpec, ctx: Any, store: Store,
                 buffer: int, ignore_older: bool, policy: PurgePolicy) -> None:
        self.id = ad.id
        self.definition = ad
        self.spec = spec
        self.ctx = ctx
        self.store = store
        self.policy = policy
        self.ignore_older = ignore_older
        root = spec.durations[0]
        self._buffer_ms = buffer * FIXED_MILLIS.get(root, 0)
        self._levels = [_Level(d) for d in spec.durations]
        self._index = {d: i for i, d in enumerate(spec.durations)}
        self._initialised = not store.persistent
        self._resume_after: int | None = None
        self._timers: list[int] = []
        self._stopped = False
        self._purge_thread: threading.Thread | None = None
        self._plans: dict[Any, Any] = {}
        self.dropped = 0
        """Events ignored: older than the buffer, or already stored before a restart."""

    # ------------------------------------------------------------------ schema
    @property
    def attributes(self) -> list[Attribute]:
        """``AGG_TIMESTAMP`` and the select items, as joins and on-demand queries see them."""
        return self.spec.attributes

    @property
    def durations(self) -> tuple[TimeDuration, ...]:
        return self.spec.durations

    # ------------------------------------------------------------------ events in
    def process(self, chunk: list[Event]) -> None:
        """Receive a chunk of the input stream (subscribed to its junction)."""
        spec = self.spec
        if spec.keep is not None:
            chunk = spec.keep(chunk)
        if not self._initialised:
            self._initialise()
        lvl = self._levels[0]
        buckets = lvl.buckets
        locate, fresh, absorb = spec.locate, spec.fresh, spec.absorb
        duration = lvl.duration
        unit = FIXED_MILLIS.get(duration)
        buffer_ms = self._buffer_ms
        for e in chunk:
            if e.type != CURRENT:
                continue
            ts, off, key = locate(e)
            # Buckets align in the aggregation's zone (GMT, as Siddhi 5's default aggTimeZone),
            # never in the event's own offset: that only moved the event to epoch ms.
            b = ts - ts % unit if unit is not None else bucket_start(ts, duration)
            top = lvl.top
            resume = self._resume_after
            if resume is not None and ts < resume:
                if top is None or top - buffer_ms <= resume:
                    self.dropped += 1  # stored before the restart: a resent event
                    continue
                self._resume_after = None
            if top is None or b > top:
                self._advance(0, b)
            elif b < top - buffer_ms and self.ignore_older:
                self.dropped += 1
                continue
            k = (b, key)
            row = buckets.get(k)
            if row is None:
                buckets[k] = fresh(e, ts, off)
            else:
                absorb(row, e, ts, off)

    def _advance(self, i: int, new_top: int) -> None:
        """Granularity ``i`` saw bucket ``new_top``: dispatch the buckets that are now complete."""
        lvl = self._levels[i]
        lvl.top = new_top
        threshold = new_top - (self._buffer_ms if i == 0 else 0)
        due = [k for k in lvl.buckets if k[0] < threshold]
        if due:
            self._dispatch(i, due)

    def _dispatch(self, i: int, keys: list[Key]) -> None:
        lvl = self._levels[i]
        keys.sort(key=lambda k: k[0])  # stable: one bucket's groups keep their order
        pop = lvl.buckets.pop
        rows: list[StoredRow] = [(k[0], k[1], pop(k)) for k in keys]
        self.store.write(lvl.duration, rows, "merge")
        if i + 1 < len(self._levels):
            self._forward(i + 1, rows)

    def _forward(self, j: int, rows: list[StoredRow]) -> None:
        """Completed buckets of granularity ``j - 1`` enter granularity ``j``."""
        lvl = self._levels[j]
        duration = lvl.duration
        merge = self.spec.merge
        for start, key, row in rows:
            b = bucket_start(start, duration)
            if lvl.top is None or b > lvl.top:
                self._advance(j, b)
            k = (b, key)
            have = lvl.buckets.get(k)
            if have is None:
                lvl.buckets[k] = row  # the finer granularity no longer holds it
            else:
                merge(have, row)

    def complete_all(self) -> None:
        """Dispatch every open bucket, finest first (end of a batch of input; tests, benchmarks).

        Later events of the same buckets reopen them and are merged into the stored rows.
        """
        with self.ctx.lock:
            if not self._initialised:
                self._initialise()
            for i, lvl in enumerate(self._levels):
                if lvl.buckets:
                    self._dispatch(i, list(lvl.buckets))
            self.store.flush()

    # ------------------------------------------------------------------ restart
    def _initialise(self) -> None:
        """Recreate the coarser open buckets from the finer tables (persistent stores only)."""
        self._initialised = True
        if not self.store.persistent:
            return
        durations = self.spec.durations
        merge = self.spec.merge
        # a shard rebuilds its open buckets from its own rows (another shard has its own)
        own = getattr(self.store, "own_shard", self.store)
        newest_root = own.newest(durations[0])
        if newest_root is not None:
            self._resume_after = next_bucket_start(newest_root[0], durations[0])
        for j in range(1, len(durations)):
            lvl = self._levels[j]
            newest = own.newest(durations[j])
            since = None if newest is None else next_bucket_start(newest[0], durations[j])
            for start, key, row in own.scan(durations[j - 1], since, None):
                b = bucket_start(start, durations[j])
                k = (b, key)
                have = lvl.buckets.get(k)
                if have is None:
                    lvl.buckets[k] = row
                else:
                    merge(have, row)
                if lvl.top is None or b > lvl.top:
                    lvl.top = b
        _log.info("aggregation %s: recreated open buckets from %s (events before %s ignored)",
                  self.id, self.store.__class__.__name__, self._resume_after)

    # ------------------------------------------------------------------ reading
    def rows(self, per: TimeDuration, start: int | None, end: int | None) -> list[tuple[Any, ...]]:
        """Output rows (``AGG_TIMESTAMP``, select items) of granularity ``per`` with start in ``[start, end)``.

        Rows come in the order Siddhi's ``HashMap`` of ``"<AGG_TIMESTAMP>:-:<key>:-:"`` strings
        yields them, so that results compare equal to Siddhi's even where a test does not sort
        (``IncrementalExternalTimestampDataAggregator``).
        """
        i = self._index.get(per)
        if i is None:
            raise ValueError(f"aggregation '{self.id}' does not keep {per.value} "
                             f"(it keeps {', '.join(d.value for d in self.spec.durations)})")
        if not self._initialised:
            self._initialise()
        spec = self.spec
        merged: dict[Key, list[Any]] = {}
        copy, merge = spec.copy_row, spec.merge
        for ts, key, row in self.store.scan(per, start, end):
            merged[(ts, key)] = row
        for j in range(i, -1, -1):
            for (s, key), row in self._levels[j].buckets.items():
                b = s if j == i else bucket_start(s, per)
                if (start is not None and b < start) or (end is not None and b >= end):
                    continue
                k = (b, key)
                have = merged.get(k)
                if have is None:
                    merged[k] = copy(row)
                else:
                    merge(have, row)
        finalize = spec.finalize
        items = list(merged.items())
        order = hashmap_order([_java_key(k) for k, _ in items])
        return [finalize(items[n][0][0], items[n][0][1], items[n][1]) for n in order]

    def per_duration(self, value: Any) -> TimeDuration:
        """The granularity a ``per`` value names (a creation or runtime error if not kept)."""
        d = duration_named(str(value))
        if d not in self._index:
            raise ValueError(f"aggregation '{self.id}' does not keep {d.value}")
        return d

    def join_input_plan(self, inp: Any, ctx: Any, sources: Any, gen: Any, element_prefix: str) -> Any:
        """The input plan of ``from S join A within ... per ...`` (engine/join.py delegates here)."""
        from srota.engine.aggregation.retrieval import plan_aggregation_join
        return plan_aggregation_join(self, inp, ctx, sources, gen, element_prefix)

    def on_demand(self, query: Any) -> list[Event]:
        """Run ``from A [on ...] within ... per ... select ...`` (engine/ondemand.py delegates here)."""
        from srota.engine.aggregation.retrieval import run_on_demand
        with self.ctx.lock:
            return run_on_demand(self, query)

    # ------------------------------------------------------------------ purging
    def purge(self, now: int | None = None) -> dict[TimeDuration, int]:
        """Apply the retention policy now (or at ``now``); returns rows deleted per granularity."""
        if now is None:
            now = self.ctx.clock.now()
        durations = self.spec.durations
        newest = {d: self.store.newest(d) for d in durations}
        deleted = {}
        for d, bound in purge_bounds(self.policy, durations, now, newest).items():
            n = self.store.delete_before(d, bound)
            if n:
                deleted[d] = n
        if deleted:
            _log.info("aggregation %s: purged %s", self.id,
                      ", ".join(f"{n} {d.value} row(s)" for d, n in deleted.items()))
        return deleted

    def _on_purge_timer(self, at: int) -> None:
        if self._stopped:
            return
        # a purge that fell behind runs once, then at its next due time (DESIGN.md decision 11)
        self._schedule(next_period(at, self.policy.interval, self.ctx.clock.now()), self._on_purge_timer)
        if self.store.persistent:
            # SQLite work happens on its own thread: do not hold the app lock meanwhile.  One
            # purge at a time: while one still runs, a tick is skipped (the next one catches up).
            running = self._purge_thread
            if running is not None and running.is_alive():
                return
            self._purge_thread = threading.Thread(target=self._purge_quietly, args=(at,),
                                                  name=f"srota-purge-{self.id}", daemon=True)
            self._purge_thread.start()
        else:
            self._purge_quietly(at)

    def _purge_quietly(self, now: int) -> None:
        try:
            self.purge(now)
        except Exception:
            _log.exception("aggregation %s: purging failed", self.id)

    # ------------------------------------------------------------------ arrival-time timers
    def _on_bucket_timer(self, at: int) -> None:
        """Arrival-time aggregations close buckets when their time ends, even without events."""
        if self._stopped:
            return
        for i, lvl in enumerate(self._levels):
            if lvl.top is not None:
                b = bucket_start(at, lvl.duration)
                if b > lvl.top:
                    self._advance(i, b)
        root = self.spec.durations[0]
        # the next bucket end after now: ends missed while behind are not replayed one by one
        after = max(at, self.ctx.clock.now())
        self._schedule(next_bucket_start(bucket_start(after, root), root), self._on_bucket_timer)

    def _schedule(self, at: int, callback: Callable[[int], None]) -> None:
        self._timers.append(self.ctx.scheduler.schedule(at, callback))
        if len(self._timers) > 16:
            self._timers = self._timers[-4:]

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Start the purge timer and, for arrival-time aggregations, the bucket timer.

        They count from the app's start; under playback from the first event's time.
        """
        self.ctx.clock.on_start(self._arm)

    def _arm(self, now: int) -> None:
        if self._stopped:
            return
        if self.policy.enabled and any(v is not None for v in self.policy.retention.values()):
            self._schedule(now + self.policy.interval, self._on_purge_timer)
        if self.spec.time_attribute is None:
            root = self.spec.durations[0]
            self._schedule(next_bucket_start(bucket_start(now, root), root), self._on_bucket_timer)

    def stop(self) -> None:
        """Cancel timers and flush the store (open buckets stay in memory, as in Siddhi)."""
        self._stopped = True
        for h in self._timers:
            self.ctx.scheduler.cancel(h)
        self._timers.clear()
        self.store.close()

    # ------------------------------------------------------------------ snapshots
    def snapshot_state(self) -> Any:
        """Open buckets of every granularity (and the tables, when they live in memory)."""
        state: dict[str, Any] = {
            "levels": [(lvl.duration.value, lvl.top, lvl.buckets) for lvl in self._levels],
            "resume_after": self._resume_after,
        }
        if isinstance(self.store, MemoryStore):
            state["tables"] = self.store.snapshot_state()
        elif getattr(self.store, "rewinds_with_snapshot", False):
            # A shared database store: the snapshot carries its watermark, so whoever restores
            # it (this process, or the worker a partition moved to) puts the shard's rows back
            # as they were; the writes it accounts for are committed before it is handed over.
            state["store_mark"] = self.store.watermark()
            self.store.flush()
        return state

    def restore_state(self, state: Any) -> None:
        levels = {d: (top, buckets) for d, top, buckets in state["levels"]}
        for lvl in self._levels:
            top, buckets = levels.get(lvl.duration.value, (None, {}))
            lvl.top, lvl.buckets = top, buckets
        self._resume_after = state.get("resume_after")
        if "tables" in state and isinstance(self.store, MemoryStore):
            self.store.restore_state(state["tables"])
        if state.get("store_mark") is not None and getattr(self.store, "rewinds_with_snapshot", False):
            self.store.rewind(state["store_mark"])
        self._initialised = True  # a snapshot replaces the recreation from tables


# ---------------------------------------------------------------------------- Siddhi's order
def _java_key(k: Key) -> str:
    parts = [str(k[0])]
    for v in k[1]:
        parts.append(_java_str(v))
    return "".join(p + ":-:" for p in parts)


def _java_str(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return java_float_str(v)
    return str(v)


# ---------------------------------------------------------------------------- planning
def define_aggregation(ad: AggregationDefinition, ctx: Any) -> Aggregation:
    """Plan ``define aggregation``: validate, compile, open the store and subscribe to the input."""
    inp = ad.input
    if inp.is_inner or inp.is_fault:
        raise error_at("an aggregation must read a defined stream", inp)
    stream = ctx.stream(inp.stream_id, inp)
    _check_durations(ad)
    pbi = find_annotation(ad.annotations, "PartitionById")
    sharded = pbi is not None and (pbi.get("enable") or "true").lower() != "false"
    spec = compile_spec(ad, stream, ctx)
    buffer, ignore_older = _buffer_options(ad, spec)
    policy = parse_purge(ad.annotations, spec.durations)
    store = _open_store(ad, spec, ctx, sharded, pbi)
    agg = Aggregation(ad, spec, ctx, store, buffer, ignore_older, policy)
    ctx.junctions[inp.stream_id].subscribe(agg.process)
    ctx.register_element(f"aggregation:{ad.id}", agg)
    ctx.start_hooks.append(agg.start)
    ctx.stop_hooks.append(agg.stop)
    return agg


def _check_durations(ad: AggregationDefinition) -> None:
    """Siddhi 5 sorts a comma list and lets it skip units (``every min, day, year``: the WSO2 SP
    4.2 rule "no gaps" is gone, ``AggregationParser.sortedDurations``); roll-ups then go from each
    listed granularity to the next listed one.  A granularity named twice is still an error."""
    if len(set(ad.durations)) != len(ad.durations):
        raise error_at("an aggregation granularity is listed twice", ad)


def _buffer_options(ad: AggregationDefinition, spec: AggSpec) -> tuple[int, bool]:
    buffer = 0
    a = find_annotation(ad.annotations, "BufferSize")
    if a is not None:
        raw = (a.positional() or (a.get("value") or a.get("size") or "",))[0]
        try:
            buffer = int(raw)
        except ValueError:
            raise error_at(f"@BufferSize must be a positive integer, not '{raw}'", a) from None
        if buffer < 0:
            raise error_at("@BufferSize must be a positive integer", a)
        if buffer and spec.time_attribute is None:
            raise error_at("@BufferSize needs 'aggregate by <event time attribute>': arrival-time "
                           "events are never out of order", a)
        if buffer and spec.durations[0] not in FIXED_MILLIS:
            raise error_at("with @BufferSize the finest granularity must be seconds, minutes, hours or days", a)
    ignore = False
    a = find_annotation(ad.annotations, "IgnoreEventsOlderThanBuffer")
    if a is not None:
        raw = (a.positional() or (a.get("value") or a.get("enable") or "",))[0]
        if raw.lower() not in ("true", "false"):
            raise error_at(f"@IgnoreEventsOlderThanBuffer must be true or false, not '{raw}'", a)
        ignore = raw.lower() == "true"
    return buffer, ignore


def _open_store(ad: AggregationDefinition, spec: AggSpec, ctx: Any, sharded: bool, pbi: Any) -> Store:
    a = find_annotation(ad.annotations, "store")
    kind = (a.get("type") or "").lower() if a is not None else ""
    if sharded and kind != "rdbms":
        raise error_at("@PartitionById (distributed aggregation) needs a store every shard can reach: "
                       "@store(type='rdbms', jdbc.url=...)", pbi)
    if a is None or kind in ("inmemory", "memory"):
        return MemoryStore(spec)
    if kind == "rdbms":
        from srota.engine.stores.aggregation import open_sql_aggregation_store
        from srota.engine.stores.database import StoreError

        options = {el.key: el.value for el in a.elements if el.key}
        try:
            if getattr(ctx, "offline", False):  # validation: check the options, connect nowhere
                from srota.engine.stores.database import url_from_options

                url_from_options(options, ctx.datasources)
                if sharded and not ctx.shard_id:
                    raise StoreError("@PartitionById needs a shard id: `shard.id` in the service config "
                                     "(SiddhiManager(shard_id=...) when embedded), or one per worker under --workers")
                return MemoryStore(spec)
            return open_sql_aggregation_store(spec, options, ctx.shard_id, sharded, ctx.datasources)
        except StoreError as exc:
            raise error_at(f"@store(type='rdbms'): {exc}", a) from None
        except Exception as exc:
            raise error_at(f"@store(type='rdbms') aggregation '{ad.id}': {type(exc).__name__}: "
                           f"{' '.join(str(exc).split())}", a) from None
    if kind != "sqlite":
        raise error_at(f"aggregation store type '{a.get('type')}' is not supported (use 'sqlite' or 'rdbms')", a)
    database = a.get("database") or a.get("path")
    if not database:
        raise error_at("@store(type='sqlite') needs database='PATH'", a)
    try:
        return SqliteStore(spec, database)
    except Exception as exc:
        raise error_at(f"cannot open aggregation store '{database}': {exc}", a) from None
