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
  merged into the row already stored (an in-memory table keeps it as a row of its own, under
  the bucket it was written in, as Siddhi's does: reads add the two) and passed on as a
  correction to the coarser granularities.  This keeps the tables independent of arrival
  order, which is what lets the Spark backfill reproduce them.

After a restart with a persistent ``@store``, the coarser granularities' open buckets are
recreated from the finer tables, and resent events older than the end of the newest stored
root bucket are ignored (the SP documentation's "Single-node Deployment").  A restored
snapshot skips this, as in an HA deployment.

Timers (Siddhi 5's ``IncrementalExecutor.getTimestamp``, which calls ``scheduler.notifyAt`` in
the root executor for arrival *and* event time): the first event arms a timer at the end of
its root bucket (arrival time: at the app's start); when it fires, every bucket of every
granularity that ended by the clock's now is written and rolled up, and the timer is armed
at the end of now's root bucket, and so on each root bucket.  The clock is the app's: the
wall clock live, the playback clock (event timestamps) under ``@app:playback``.  So with
event times in the past (2017) the open buckets are closed at once, and late events that
follow land in their reopened buckets, closed at the next tick (a coarser granularity's under
playback only when its own bucket ends, as Siddhi's).  Under playback an event-time
aggregation closes its root buckets by the chunk's time, as Siddhi's ``AGG_TIMESTAMP`` (its
last event's), keying each event's row by its own bucket.  Siddhi 5 dropped
``@BufferSize``; with it (or ``@IgnoreEventsOlderThanBuffer``) the WSO2 SP 4.2 rules hold, and
SP 4.2 armed no timer for event time (the buffer decides when a bucket is complete).

Reading (joins ``within ... per ...`` and on-demand queries) combines the table of the
requested granularity with the open buckets of it and of every finer granularity.  A
distributed aggregation (``@PartitionById``) reads, as Siddhi's
``IncrementalAggregateCompileCondition.find`` does when ``isDistributed``, no memory but the
tables of every shard: the requested table, and of each finer granularity the rows of the
buckets the next coarser granularity still holds open (see :meth:`Aggregation.rows`).
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from srota.engine.aggregation.buckets import FIXED_MILLIS, bucket_start, duration_named, next_bucket_start
from srota.engine.aggregation.persisted import PERSISTED, PersistedRollups, check_selection, persisted_enabled
from srota.engine.aggregation.purge import PurgePolicy, parse_purge, purge_bounds
from srota.engine.aggregation.spec import AggSpec, compile_spec
from srota.engine.aggregation.store import MemoryStore, SqliteStore, Store, StoredRow
from srota.engine.clock import next_period
from srota.engine.event import CURRENT, Event
from srota.engine.expression import error_at
from srota.engine.types import hashmap_capacity, java_float32_str, java_float_str, java_hash
from srota.grammar.model import AggregationDefinition, Attribute, AttrType, TimeDuration, find_annotation

_log = logging.getLogger("srota.engine.aggregation")

Key = tuple[int, tuple[Any, ...]]


class _Level:
    """One granularity's open buckets: ``(start, group key) -> row``, and the newest start seen."""

    __slots__ = ("duration", "buckets", "top", "late", "last_new")

    def __init__(self, duration: TimeDuration) -> None:
        self.duration = duration
        self.buckets: dict[Key, list[Any]] = {}
        self.top: int | None = None
        self.late: dict[Key, int] = {}
        """Persisted aggregation: buckets holding only late events -> the root bucket they were
        written in (Siddhi writes them as rows of their own: persisted.py, "late events")."""
        self.last_new = True
        """Whether the last event (or finer row) in opened a bucket: Siddhi's store map had one
        key fewer at that call, which decides its table's size (``_dispatch_order``)."""


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
        # The bucket timer: Siddhi 5 arms it for arrival and event time alike; WSO2 SP 4.2,
        # whose @BufferSize and @IgnoreEventsOlderThanBuffer decide when an event-time bucket
        # is complete, armed none for event time (module docstring).
        self._timed = spec.time_attribute is None or (buffer == 0 and not ignore_older)
        self._bucket_timer: int | None = None
        self._timer_at: int | None = None
        """When the bucket timer fires next (None: not armed; kept in snapshots)."""
        self._stopped = False
        self._purge_thread: threading.Thread | None = None
        self._plans: dict[Any, Any] = {}
        # String.hashCode of the store keys' parts (group text, "<bucket>:-:"): _store_key_hash
        self._key_hashes: dict[tuple[Any, ...], tuple[int, int]] = {}  # group -> (hash, 31**len)
        self._start_hashes: dict[int, int] = {}
        self._float_keys = tuple(t is AttrType.FLOAT for _, t in spec.group_by)
        self.dropped = 0
        """Events ignored: older than the buffer, or already stored before a restart."""
        self.persisted: PersistedRollups | None = None
        """``@persistedAggregation``: days and coarser are computed in the database (persisted.py)."""

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
        # Siddhi arms the root's timer with the first event's time (``timerStarted``)
        arm = self._timer_at is None and self._timed and spec.time_attribute is not None
        late_rows = self._late_rows_level() is not None
        # Arrival time is the app's clock (Siddhi's currentTimeMillis()); under playback that is
        # the newest timestamp seen, which never goes back: an event with an older timestamp (or
        # a chunk whose last event is not its newest) lands in the bucket of that time.
        clock = self.ctx.clock
        arrival = clock.now() if clock.playback and (spec.time_attribute is None or self._timed) else None
        # Event time under playback: Siddhi 5's root executor closes buckets by the event's
        # arrival (AGG_TIMESTAMP, the app's clock: a chunk's last time), and keys each event's
        # row by its own bucket, so a chunk's older events join the open buckets under their own
        # seconds, handed on together at the next close.  (One by one the two times agree.)
        closing = None if arrival is None or spec.time_attribute is None else \
            (arrival - arrival % unit if unit is not None else bucket_start(arrival, duration))
        for e in chunk:
            if e.type != CURRENT:
                continue
            ts, off, key = locate(e)
            if arrival is not None and closing is None:
                ts = arrival
            # Buckets align in the aggregation's zone (GMT, as Siddhi 5's default aggTimeZone),
            # never in the event's own offset: that only moved the event to epoch ms.
            b = ts - ts % unit if unit is not None else bucket_start(ts, duration)
            if arm:
                arm = False
                if not self._stopped:
                    self._arm_bucket_timer(next_bucket_start(b if closing is None else closing, duration))
            top = lvl.top
            resume = self._resume_after
            if resume is not None and ts < resume:
                if top is None or top - buffer_ms <= resume:
                    self.dropped += 1  # stored before the restart: a resent event
                    continue
                self._resume_after = None
            if closing is not None and (top is None or closing > top):
                self._advance(0, closing)
                top = closing
            if top is None or b > top:
                self._advance(0, b)
            elif b < top - buffer_ms and self.ignore_older:
                self.dropped += 1
                continue
            k = (b, key)
            if late_rows and top is not None and b < top:
                # Siddhi adds a late event to the root's open bucket (its own bucket kept in
                # AGG_EVENT_TIMESTAMP): the rows it reaches are written under the open buckets,
                # so the day computed next counts it (persisted.py, "late events")
                lvl.late[k] = top
            row = buckets.get(k)
            if row is None:
                buckets[k] = fresh(e, ts, off)
                lvl.last_new = True
            else:
                absorb(row, e, ts, off)
                lvl.last_new = False

    def _advance(self, i: int, new_top: int) -> None:
        """Granularity ``i`` saw bucket ``new_top``: dispatch the buckets that are now complete.

        Then, as Siddhi's ``IncrementalExecutor.sendTimerEvent`` after each dispatch, the next
        coarser granularity learns that time has reached ``new_top``: its bucket that ended by
        then closes too (an event at 06:00:00 closes hour 05 at once).  WSO2 SP 4.2 did not
        do this for event time, where an hour closed only when a completed minute of a later
        hour reached it; its @BufferSize rules keep that (``_timed`` is off).
        """
        lvl = self._levels[i]
        if self.persisted is not None and lvl.duration in PERSISTED:
            old, lvl.top = lvl.top, new_top  # no buckets: the database computes the one that ended
            if old is not None and new_top > old:
                self.persisted.roll_up(lvl.duration, old, next_bucket_start(old, lvl.duration))
            if i + 1 < len(self._levels) and self._levels[i + 1].top is None:
                # Siddhi's timer event: the next persisted granularity starts counting time too
                up_duration = self._levels[i + 1].duration
                self._advance(i + 1, bucket_start(new_top if old is None else old, up_duration))
        under, lvl.top = lvl.top, new_top
        threshold = new_top - (self._buffer_ms if i == 0 else 0)
        due = self._due(lvl, threshold)
        if due:
            self._dispatch(i, due, under)
        if self._timed and i + 1 < len(self._levels):
            up = self._levels[i + 1]
            b = bucket_start(new_top, up.duration)
            if up.top is not None and b > up.top:
                self._advance(i + 1, b)

    def _dispatch(self, i: int, keys: list[Key], under: int | None = None) -> None:
        """Hand granularity ``i``'s buckets ``keys`` on: to its table and the next granularity.
        ``under``: the bucket the store was in (an older bucket's row is a late event's)."""
        lvl = self._levels[i]
        # Siddhi's store hands out its groups in its map's order (the next granularity adds
        # them up in that order, and the table is written in it)
        due = set(keys)
        keys = [k for k in _dispatch_order(lvl.buckets, self._store_key_hash, lvl.last_new) if k in due]
        if self.spec.time_attribute is None:
            keys.sort(key=lambda k: k[0])  # (stable: an older bucket first, each in that order)
        pop = lvl.buckets.pop
        rows: list[StoredRow] = [(k[0], k[1], pop(k)) for k in keys]
        tags: dict[Key, int] = {}
        written = rows
        if lvl.late:
            tags = {k: lvl.late.pop(k) for k in keys if k in lvl.late}
            if tags:
                # late events as rows of their own, under the bucket they were written in (Siddhi's)
                assert self.persisted is not None
                d = lvl.duration
                self.persisted.write_late(d, [(bucket_start(tags[(s, key)], d), s, key, row)
                                              for s, key, row in rows if (s, key) in tags])
                written = [r for r in rows if (r[0], r[1]) not in tags]
        # (event time: the rows of buckets older than ``under`` are late events', written apart)
        self.store.write(lvl.duration, written, "merge", under if self.spec.time_attribute is not None else None)
        if i + 1 < len(self._levels):
            self._forward(i + 1, rows, tags)

    @staticmethod
    def _due(lvl: _Level, threshold: int) -> list[Key]:
        """The open buckets that ended before ``threshold``; late events' buckets (persisted) once
        the bucket they were written in has ended too, as Siddhi writes them with it (a restart
        recreates the open buckets from the rows written in them)."""
        if not lvl.late:
            return [k for k in lvl.buckets if k[0] < threshold]
        late, d = lvl.late, lvl.duration
        return [k for k in lvl.buckets if k[0] < threshold and (k not in late or bucket_start(late[k], d) < threshold)]

    def _late_rows_level(self) -> int | None:
        """The index of the hours whose rows the database rolls up into days (persisted, event
        time, Siddhi's timer rules), where late events are rows of their own; else None."""
        if self.persisted is None or not self._timed or self.spec.time_attribute is None:
            return None
        i = self._index.get(TimeDuration.HOURS)
        if i is None or i + 1 >= len(self._levels) or self._levels[i + 1].duration not in PERSISTED:
            return None
        return i

    def _forward(self, j: int, rows: list[StoredRow], tags: dict[Key, int] | None = None) -> None:
        """Completed buckets of granularity ``j - 1`` enter granularity ``j``.

        ``tags``: rows of late events only, with the root bucket they were written in
        (persisted): still late at this granularity if their bucket is older than that one's.
        """
        lvl = self._levels[j]
        duration = lvl.duration
        merge = self.spec.merge
        for start, key, row in rows:
            b = bucket_start(start, duration)
            under = tags.get((start, key)) if tags else None
            if self.persisted is not None and duration in PERSISTED:
                # time only (the row itself is in the finer table): a late row's is the bucket
                # it was written in
                t = b if under is None else max(b, bucket_start(under, duration))
                if lvl.top is None or t > lvl.top:
                    self._advance(j, t)
                continue
            if under is not None and b < bucket_start(under, duration):
                lvl.late[(b, key)] = under
            if lvl.top is None or b > lvl.top:
                self._advance(j, b)
            k = (b, key)
            have = lvl.buckets.get(k)
            lvl.last_new = have is None
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
                    self._dispatch(i, list(lvl.buckets), lvl.top)
            self.store.flush()

    # ------------------------------------------------------------------ restart
    def _initialise(self) -> None:
        """Recreate the coarser open buckets from the finer tables (persistent stores only)."""
        self._initialised = True
        if not self.store.persistent:
            return
        durations = self.spec.durations
        # a shard rebuilds its open buckets from its own rows (another shard has its own)
        own = getattr(self.store, "own_shard", self.store)
        newest_root = own.newest(durations[0])
        if newest_root is not None:
            self._resume_after = next_bucket_start(newest_root[0], durations[0])
        late_level = self._late_rows_level()
        for j in range(1, len(durations)):
            lvl = self._levels[j]
            newest = own.newest(durations[j])
            since = None if newest is None else next_bucket_start(newest[0], durations[j])
            if late_level is not None and j <= late_level:
                assert self.persisted is not None
                self._recreate_with_late_rows(j, self.persisted.own_rows(durations[j - 1], since))
                continue
            if self.persisted is not None and durations[j] in PERSISTED:
                # Siddhi's recreateState: complete buckets rolled up; time is the finer rows'
                # AGG_TIMESTAMP (a late event's row is written in a newer bucket than its own)
                for under in sorted({r[0] for r in self.persisted.own_rows(durations[j - 1], since)}):
                    b = bucket_start(under, durations[j])
                    if lvl.top is None or b > lvl.top:
                        self._advance(j, b)
                continue
            # each row written in its own bucket: none of them late
            self._recreate_with_late_rows(j, [(start, start, key, row)
                                              for start, key, row in own.scan(durations[j - 1], since, None)])
        _log.info("aggregation %s: recreated open buckets from %s (events before %s ignored)",
                  self.id, self.store.__class__.__name__, self._resume_after)

    def _recreate_with_late_rows(self, j: int, rows: list[tuple[int, int, tuple[Any, ...], list[Any]]]) -> None:
        """Recreate granularity ``j``'s open buckets from the finer rows ``(AGG_TIMESTAMP, own
        bucket, key, row)`` written in them, a late event's rows (persisted) tagged as late."""
        lvl = self._levels[j]
        duration = lvl.duration
        merge = self.spec.merge
        for under, start, key, row in rows:
            b = bucket_start(start, duration)
            k = (b, key)
            have = lvl.buckets.get(k)
            if have is None:
                lvl.buckets[k] = row
            else:
                merge(have, row)
            at = bucket_start(under, duration)
            if b < at:
                lvl.late[k] = under
            if lvl.top is None or at > lvl.top:
                lvl.top = at

    # ------------------------------------------------------------------ reading
    def rows(self, per: TimeDuration, start: int | None, end: int | None) -> list[tuple[Any, ...]]:
        """Output rows (``AGG_TIMESTAMP``, select items) of granularity ``per`` with start in ``[start, end)``.

        Rows come in Siddhi's order, so that results compare equal to Siddhi's even where a
        query does not sort (a ``group by`` keeps each group's last row): for event time (and a
        distributed read) the order its ``HashMap`` of ``"<AGG_TIMESTAMP>:-:<key>:-:"`` strings
        yields (``OutOfOrderEventsDataAggregator``); for arrival time the table's rows in time
        order, then the open buckets in the order of ``IncrementalDataAggregator``'s
        ``"<key>-<bucket start>"`` map (Siddhi adds the one to the other).

        A distributed aggregation reads every shard's tables and no memory (:meth:`_shard_rows`).
        """
        i = self._index.get(per)
        if i is None:
            raise ValueError(f"aggregation '{self.id}' does not keep {per.value} "
                             f"(it keeps {', '.join(d.value for d in self.spec.durations)})")
        spec = self.spec
        stored = 0  # how many of the rows came from the table (arrival time: they go first)
        last_new = True  # whether the last row added to ``merged`` opened a key
        if self.store.sharded:
            merged = self._shard_rows(i, start, end)
        else:
            if not self._initialised:
                self._initialise()
            merged = {}
            own = spec.time_attribute is not None
            scanned: list[StoredRow] = []
            if own and isinstance(self.store, MemoryStore):
                # Siddhi's in-memory table keys an event-time row by the primary key string
                # "<AGG_TIMESTAMP>:-:<AGG_EVENT_TIMESTAMP>:-:<group values>:-:" (the bucket it
                # was written in, its own) in a HashMap sized by the whole table, and a find walks
                # that map (rows sharing a bin in the order they were written: by the bucket
                # written in, then as the executor handed them out); a late event's row, kept
                # apart, is added to its own bucket's in that order
                entries = self.store.entries(per, start, end)
                cap = hashmap_capacity(self.store.size(per))
                slots = [_hash_slot(f"{u}:-:{self._key_text((ts, key))}", cap) for u, ts, key, _ in entries]
                merge = spec.merge
                for n in sorted(range(len(entries)), key=lambda n: (slots[n], n)):
                    _, ts, key, row = entries[n]
                    have = merged.get((ts, key))
                    last_new = have is None
                    if have is None:
                        merged[(ts, key)] = row
                    else:
                        merge(have, row)
            else:
                scanned = self.store.scan(per, start, end)
            for ts, key, row in scanned:
                merged[(ts, key)] = row
                last_new = True
            stored = len(merged)
            # (persisted, arrival time: per days and coarser, Siddhi reads the table alone; event
            # time reads the open finer buckets as ever: IncrementalAggregateCompileCondition.find)
            if not (self.persisted is not None and per in PERSISTED and not own):
                opened = self._merge_open(i, per, start, end, merged)
                if opened is not None:
                    last_new = opened
        finalize = spec.finalize
        items = list(merged.items())
        if spec.time_attribute is None and not self.store.sharded:
            # (dicts keep insertion order: the table's rows come first, then the open buckets)
            # (the open buckets came in IncrementalDataAggregator's order: _merge_open)
            table_order = list(range(stored))
            if spec.group_by and isinstance(self.store, MemoryStore):
                # Siddhi's in-memory table keys rows by the primary key string
                # "<AGG_TIMESTAMP>:-:<group values>:-:" in a HashMap sized by the whole table,
                # and a find walks that map (a lone numeric key is a TreeMap: time order)
                # (rows sharing a bin in the order they were written: by bucket, then as the
                # executor handed them out, _dispatch)
                cap = hashmap_capacity(self.store.size(per))
                table_order.sort(key=lambda n: (_hash_slot(self._key_text(items[n][0]), cap), items[n][0][0], n))
            order = table_order + list(range(stored, len(items)))
        else:
            # OutOfOrderEventsDataAggregator's map is filled by computeIfAbsent, which puts a new
            # key at the head of its bin: a bin iterates its keys newest first
            order = _computed_map_order([self._key_text(k) for k, _ in items],
                                        None if self.store.sharded else len(items) - (1 if last_new else 0))
        return [finalize(items[n][0][0], items[n][0][1], items[n][1]) for n in order]

    def _store_key_hash(self, k: Key) -> int:
        """``hashCode`` of :meth:`_store_key` ``(k)``, from cached parts (every dispatch orders
        its buckets by it; a high-cardinality group by would walk each key's text each time)."""
        parts = self._key_hashes
        group = parts.get(k[1])
        if group is None:
            if len(parts) >= _KEY_HASHES_KEPT:
                parts.clear()
            h, n = _text_hash(self._store_group_text(k[1]))
            group = parts[k[1]] = (h, pow(31, n, 1 << 32))
        if self.spec.time_attribute is None:
            return group[0]
        start = self._start_hashes.get(k[0])
        if start is None:
            if len(self._start_hashes) >= _KEY_HASHES_KEPT:
                self._start_hashes.clear()
            start = self._start_hashes[k[0]] = java_hash(f"{k[0]}:-:")
        # String.hashCode of the joined text, a polynomial: start * 31**len(group) + group
        return (start * group[1] + group[0]) & 0xFFFFFFFF

    def _store_key(self, k: Key) -> str:
        """The key of open bucket ``k`` in its granularity's store (Siddhi's group-by key:
        under event time the bucket's own start, then the group's values)."""
        if self.spec.time_attribute is not None:
            return f"{k[0]}:-:{self._store_group_text(k[1])}"
        return self._store_group_text(k[1])

    def _store_group_text(self, group: tuple[Any, ...]) -> str:
        """The group's part of :meth:`_store_key` (``null`` for an arrival-time aggregation
        without group by: its store keys no group)."""
        return self._group_text(group) if group or self.spec.time_attribute is not None else "null"

    def _group_text(self, group: tuple[Any, ...]) -> str:
        """``GroupByKeyGenerator``'s key of a group: each value as Java prints it (a float
        attribute's as a ``Float``) and ``:-:``."""
        return "".join((java_float32_str(v) if f32 and v.__class__ is float else _java_str(v)) + ":-:"
                       for v, f32 in zip(group, self._float_keys, strict=True))

    def _key_text(self, k: Key) -> str:
        """``"<bucket>:-:<group values>:-:"``: a table's primary key, a read's group key."""
        return f"{k[0]}:-:{self._group_text(k[1])}"

    def _merge_open(self, i: int, per: TimeDuration, start: int | None, end: int | None,
                    merged: dict[Key, list[Any]]) -> bool | None:
        """Add the open buckets of granularity ``i`` and the finer ones to ``merged`` (the
        table's rows of ``per``) as a read of Siddhi's does.

        ``IncrementalDataAggregator`` walks the granularities from ``per`` down to the root and
        each one's open buckets in the order its store hands them out (``_dispatch_order``),
        uniting them under ``"<store key>-<per start>"`` keys (the ``per`` bucket of the store's
        current one) in a map filled by computeIfAbsent; the rows of that map, in its order,
        follow the table's (arrival time) or are added to them, each to its ``per`` bucket and
        group (event time: ``OutOfOrderEventsDataAggregator``).  Where two rows meet, that order
        decides a sum that loses digits and which of -0.0 and 0.0 a min or max keeps.  Under
        event time an open bucket is kept or left by its own start (its
        ``AGG_EVENT_TIMESTAMP``), not its ``per`` bucket's.

        Returns whether the last row added to ``merged`` opened a key there (None: none added).
        """
        copy, merge = self.spec.copy_row, self.spec.merge
        own = self.spec.time_attribute is not None
        united: dict[str, list[Any]] = {}
        united_new = True
        for j in range(i, -1, -1):
            lvl = self._levels[j]
            if not lvl.buckets:
                continue
            store_per = None if lvl.top is None else bucket_start(lvl.top, per)
            for k in _dispatch_order(lvl.buckets, self._store_key_hash, lvl.last_new):
                s = k[0]
                name = f"{self._store_key(k)}-{bucket_start(s, per) if store_per is None else store_per}"
                have = united.get(name)
                united_new = have is None
                if have is None:
                    united[name] = [s, k[1], copy(lvl.buckets[k])]
                else:
                    merge(have[2], lvl.buckets[k])
        names = list(united)
        last_new = None
        for n in _computed_map_order(names, len(names) - (1 if united_new else 0)):
            s, key, row = united[names[n]]
            b = bucket_start(s, per)
            t = s if own else b
            if (start is not None and t < start) or (end is not None and t >= end):
                continue
            k = (b, key)
            have = merged.get(k)
            last_new = have is None
            if have is None:
                merged[k] = row
            else:
                merge(have, row)
        return last_new

    def _shard_rows(self, i: int, start: int | None, end: int | None) -> dict[Key, list[Any]]:
        """Granularity ``i``'s rows in ``[start, end)`` composed from every shard's tables.

        As Siddhi's distributed read (``IncrementalAggregateCompileCondition.find``,
        ``isDistributed``; the filters are built in ``AggregationRuntime.compileExpression``):
        no shard's memory, only tables, every shard's.  The requested table gives the buckets
        its granularity has closed; of each finer granularity's table come the rows whose
        bucket of the next coarser granularity is still open, in the shard that wrote them.
        Siddhi tells those by ``AGG_TIMESTAMP >= getAggregationStartTime(currentTimeMillis(),
        <next coarser duration>)``, because its rows carry the bucket they were *written* in,
        and its timer has written every bucket that ended before.  Srota's rows carry their own
        bucket (late events merge into it), so a finer row counts unless the same shard's row
        of the next coarser table for its bucket and key exists; Siddhi's bound still limits
        what is read, one coarser bucket earlier (a shard whose timer has not yet closed the
        bucket that just ended keeps counting it meanwhile, where Siddhi's bound skips it for
        that moment).  That rule also holds for buckets closed early (``complete_all``) or
        late (event times ahead of the clock), where the bound alone would count some twice.  Finer
        rows are kept, as for the memory of a single process, when their own start (event time;
        the recording ``postgresql_two_shards`` of real Siddhi shows it) or the bucket of
        granularity ``i`` they belong to (arrival time) is within ``[start, end)``.  Arrival-time
        rows are dated by their newest finer row before they are merged (:func:`_date_by_finer_rows`).
        """
        spec = self.spec
        durations = spec.durations
        per = durations[i]
        copy, merge = spec.copy_row, spec.merge
        scan_shards = self.store.scan_shards
        merged: dict[Key, list[Any]] = {}
        # event time: a finer row is kept on its own start (its AGG_EVENT_TIMESTAMP), as in
        # the single-process read above: a day inside ``within`` counts towards its month
        own_start = spec.time_attribute is not None

        def add(k: Key, row: list[Any]) -> None:
            have = merged.get(k)
            if have is None:
                merged[k] = copy(row)
            else:
                merge(have, row)

        now = self.ctx.clock.now()
        lows = []  # where each finer table's rows are read from
        for j in range(i):
            up = durations[j + 1]
            low = bucket_start(bucket_start(now, up) - 1, up)  # the previous coarser bucket's start
            lows.append(low if start is None else max(low, start))
        # (read coarsest first: a bucket a shard rolls up meanwhile is then counted in its finer rows)
        scans = {i: scan_shards(per, start, end)}
        for j in range(i - 1, -1, -1):
            scans[j] = scan_shards(durations[j], lows[j], None)
        if spec.time_attribute is None and spec.latest:
            _date_by_finer_rows(scans, durations)
        # the requested granularity: its rows in range, and which shard rolled up which bucket
        above: set[tuple[int, tuple[Any, ...], str]] = set()
        for ts, key, shard, row in scans[i]:
            add((ts, key), row)
            above.add((ts, key, shard))
        for j in range(i - 1, -1, -1):
            up = durations[j + 1]
            seen: set[tuple[int, tuple[Any, ...], str]] = set()
            for ts, key, shard, row in scans[j]:
                seen.add((ts, key, shard))
                if (bucket_start(ts, up), key, shard) in above:
                    continue  # the shard has rolled it up into the next coarser table
                b = bucket_start(ts, per)
                t = ts if own_start else b
                if (start is not None and t < start) or (end is not None and t >= end):
                    continue
                add((b, key), row)
            above = seen
        return merged

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

    # ------------------------------------------------------------------ bucket timer
    def _on_bucket_timer(self, at: int) -> None:
        """Close the buckets whose time has ended, even without events (module docstring).

        Siddhi's timer event for ``at`` re-notifies at the next root bucket end and, when it is
        behind, ticks through every bucket end up to now; one tick that closes everything
        ended by now has the same outcome (DESIGN.md decision 11: time never replays).
        """
        self._bucket_timer = self._timer_at = None
        if self._stopped:
            return
        now = max(at, self.ctx.clock.now())
        self._close_ended(now)
        root = self.spec.durations[0]
        self._arm_bucket_timer(next_bucket_start(bucket_start(now, root), root))

    def _close_ended(self, now: int) -> None:
        """Dispatch, finest granularity first, every open bucket that ended by ``now``.

        A level's newest bucket becomes now's, as Siddhi's executors move their emit time on
        with the timer event: events of earlier buckets that still arrive are late ones.  The
        root buckets they reopen close at the next tick.  Under the wall clock so do the coarser
        ones, so that late data reaches every table within a tick instead of waiting for its
        granularity's next bucket end (which a year bucket would do for a year); under playback
        a coarser one waits for that end, as in Siddhi (the order a read adds buckets in then
        is Siddhi's: docs/siddhi-differences.md).
        """
        for i, lvl in enumerate(self._levels):
            b = bucket_start(now, lvl.duration)
            under = lvl.top
            if lvl.top is not None and b > lvl.top:
                if self.persisted is not None and lvl.duration in PERSISTED:
                    self._advance(i, b)  # the bucket that ended is computed in the database
                else:
                    lvl.top = b
            elif i > 0 and self.ctx.clock.playback:
                # under playback, as Siddhi's executors: a coarser granularity hands its buckets
                # on only when its own one changes, a late event's reopened one with the rest
                # (the order a read then adds them in is Siddhi's); under the wall clock they
                # reach the tables at the next tick, so that late data is stored at once
                continue
            threshold = b - (self._buffer_ms if i == 0 else 0)
            due = self._due(lvl, threshold)
            if due:
                self._dispatch(i, due, under)

    def _arm_bucket_timer(self, at: int) -> None:
        self._timer_at = at
        self._bucket_timer = self.ctx.scheduler.schedule(at, self._on_bucket_timer)

    def _cancel_bucket_timer(self) -> None:
        if self._bucket_timer is not None:
            self.ctx.scheduler.cancel(self._bucket_timer)
        self._bucket_timer = self._timer_at = None

    def _schedule(self, at: int, callback: Callable[[int], None]) -> None:
        self._timers.append(self.ctx.scheduler.schedule(at, callback))
        if len(self._timers) > 16:
            self._timers = self._timers[-4:]

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Start the purge timer and, for arrival-time aggregations, the bucket timer.

        They count from the app's start; under playback from the first event's time.  An
        event-time aggregation arms its bucket timer with its first event (see ``process``).
        """
        self.ctx.clock.on_start(self._arm)

    def _arm(self, now: int) -> None:
        if self._stopped:
            return
        if self.policy.enabled and any(v is not None for v in self.policy.retention.values()):
            self._schedule(now + self.policy.interval, self._on_purge_timer)
        if self.spec.time_attribute is None and self._timer_at is None:
            root = self.spec.durations[0]
            self._arm_bucket_timer(next_bucket_start(bucket_start(now, root), root))

    def stop(self) -> None:
        """Cancel timers and flush the store (open buckets stay in memory, as in Siddhi)."""
        self._stopped = True
        for h in self._timers:
            self.ctx.scheduler.cancel(h)
        self._timers.clear()
        self._cancel_bucket_timer()
        self.store.close()

    # ------------------------------------------------------------------ snapshots
    def snapshot_state(self) -> Any:
        """Open buckets of every granularity (and the tables, when they live in memory)."""
        state: dict[str, Any] = {
            "levels": [(lvl.duration.value, lvl.top, lvl.buckets) for lvl in self._levels],
            "late": {lvl.duration.value: dict(lvl.late) for lvl in self._levels if lvl.late},
            "resume_after": self._resume_after,
            # as Siddhi's snapshot keeps its scheduler's notify queue and ``TimerStarted``
            "timer_at": self._timer_at,
        }
        if isinstance(self.store, MemoryStore):
            state["tables"] = self.store.snapshot_state()
        elif getattr(self.store, "rewinds_with_snapshot", False):
            # A shared database store: the snapshot carries its watermark, so whoever restores
            # it (this process, or the worker a partition moved to) puts the shard's rows back
            # as they were; the writes it accounts for are committed before it is handed over.
            state["store_mark"] = self.store.committed_mark()
            state["store_epoch"] = self.store.epoch
        return state

    def restore_state(self, state: Any) -> None:
        levels = {d: (top, buckets) for d, top, buckets in state["levels"]}
        for lvl in self._levels:
            top, buckets = levels.get(lvl.duration.value, (None, {}))
            lvl.top, lvl.buckets = top, buckets
            lvl.late = dict(state.get("late", {}).get(lvl.duration.value, {}))
        self._resume_after = state.get("resume_after")
        if "tables" in state and isinstance(self.store, MemoryStore):
            self.store.restore_state(state["tables"])
        if state.get("store_mark") is not None and getattr(self.store, "rewinds_with_snapshot", False):
            self.store.rewind(state["store_mark"], state.get("store_epoch"))
        self._initialised = True  # a snapshot replaces the recreation from tables
        if self._stopped:
            return
        # The snapshot's timer replaces this runtime's (a time already past fires at once and
        # closes what ended meanwhile); one taken before any timer was armed leaves this
        # runtime's as it is.  A snapshot from before timers were kept has none: an event-time
        # aggregation with open buckets then arms one at the end of its newest root bucket.
        root = self._levels[0]
        at = state.get("timer_at")
        if at is None and "timer_at" not in state and self._timed and self.spec.time_attribute is not None \
                and root.top is not None:
            at = next_bucket_start(root.top, root.duration)
        if at is not None:
            self._cancel_bucket_timer()
            self._arm_bucket_timer(at)


# ---------------------------------------------------------------------------- Siddhi's order
#: How many groups' (and bucket starts') key hashes an aggregation keeps before starting over.
_KEY_HASHES_KEPT = 1 << 16


def _computed_map_order(keys: list[str], size_at_last_call: int | None = None) -> list[int]:
    """Indexes of ``keys`` in the order a ``HashMap`` filled with them by ``computeIfAbsent``
    iterates them: by bin, and within a bin newest first (``computeIfAbsent`` links a new node
    at the head of its bin, where ``put`` appends it; a resize keeps a bin's order).

    ``size_at_last_call``: how many keys the map held at the last call (default: one fewer
    than ``keys``, the last call adding the last key).  ``computeIfAbsent`` grows the table
    at a call, a new key's or not, while the map is over its threshold (``put`` grows it after
    adding), so the table is the one ``put`` would give that many keys."""
    return _computed_order([java_hash(k) for k in keys], size_at_last_call)


def _computed_order(hashes: list[int], size_at_last_call: int | None = None) -> list[int]:
    """:func:`_computed_map_order` of keys with these hash codes."""
    size = max(len(hashes) - 1, 0) if size_at_last_call is None else size_at_last_call
    mask = hashmap_capacity(size) - 1
    return sorted(range(len(hashes)), key=lambda n: ((hashes[n] ^ (hashes[n] >> 16)) & mask, -n))


def _dispatch_order(buckets: dict[Key, list[Any]], key_hash: Callable[[Key], int], last_new: bool) -> list[Key]:
    """A store's open buckets in the order Siddhi's store hands them out
    (``BaseIncrementalValueStore.getGroupedByEvents``): its group states, a map filled by
    ``computeIfAbsent`` under their store keys (``key_hash``: the keys' ``hashCode``; every
    event a call, ``last_new`` whether the last one opened its bucket), copied into a
    ``HashMap`` by ``put``."""
    keys = list(buckets)
    hashes = [key_hash(k) for k in keys]
    mask = hashmap_capacity(len(keys)) - 1
    states = _computed_order(hashes, len(keys) - (1 if last_new else 0))
    return [keys[n] for n in sorted(states, key=lambda n: (hashes[n] ^ (hashes[n] >> 16)) & mask)]


def _text_hash(text: str) -> tuple[int, int]:
    """``String.hashCode`` of ``text`` and its length in UTF-16 units."""
    return java_hash(text), len(text.encode("utf-16-be")) // 2


def _hash_slot(key: str, cap: int) -> int:
    h = java_hash(key)
    return (h ^ (h >> 16)) & (cap - 1)


def _java_str(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return java_float_str(v)
    return str(v)


def _date_by_finer_rows(scans: dict[int, list[tuple[int, tuple[Any, ...], str, list[Any]]]],
                        durations: tuple[TimeDuration, ...]) -> None:
    """Give the stored rows of an arrival-time aggregation a time for their latest event.

    Siddhi's tables keep ``AGG_LAST_EVENT_TIMESTAMP`` for event time only, so a stored
    arrival-time row is dated by its bucket's start, and the minute rows of several shards all
    tie: which shard's latest value won would be the database's row order.  The newest finer
    row of the same shard, key and bucket (down to the root table, which holds every root
    bucket) dates it better, to the root granularity: the shard whose events came last wins,
    as when the same buckets are still finer rows (``scans`` maps a granularity's index to its
    rows, each a copy of its own; their ``row[0]`` is raised in place).
    """
    newest: dict[tuple[int, int, tuple[Any, ...], str], int] = {}
    top = max(scans)
    for j in sorted(scans):  # finest first: a row's date is known before its coarser row's
        up = durations[j + 1] if j < top else None
        for ts, key, shard, row in scans[j]:
            seen = newest.get((j, ts, key, shard))
            if seen is not None and seen > row[0]:
                row[0] = seen
            if up is not None:
                k = (j + 1, bucket_start(ts, up), key, shard)
                if newest.get(k, row[0]) <= row[0]:
                    newest[k] = row[0]


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
    persisted = persisted_enabled(ad)
    if persisted:
        try:
            check_selection(ad, spec)
        except ValueError as exc:
            raise error_at(str(exc), ad) from None
    buffer, ignore_older = _buffer_options(ad, spec)
    policy = parse_purge(ad.annotations, spec.durations)
    store = _open_store(ad, spec, ctx, sharded, pbi)
    agg = Aggregation(ad, spec, ctx, store, buffer, ignore_older, policy)
    if persisted and not isinstance(store, MemoryStore):
        agg.persisted = _persisted_rollups(ad, store)
    elif persisted and not getattr(ctx, "offline", False):
        raise error_at("@persistedAggregation needs @store(type='rdbms', datasource=...) on PostgreSQL or "
                       "MySQL/MariaDB (Siddhi fails without a datasource)", ad)
    ctx.junctions[inp.stream_id].subscribe(agg.process)
    ctx.register_element(f"aggregation:{ad.id}", agg)
    ctx.start_hooks.append(agg.start)
    ctx.stop_hooks.append(agg.stop)
    return agg


def _persisted_rollups(ad: AggregationDefinition, store: Store) -> PersistedRollups:
    from srota.engine.stores.aggregation import SqlAggregationStore

    if not isinstance(store, SqlAggregationStore):
        raise error_at("@persistedAggregation needs @store(type='rdbms', datasource=...) on PostgreSQL or "
                       "MySQL/MariaDB (Siddhi fails without a datasource)", ad)
    try:
        return PersistedRollups(store)
    except IndexError:  # Siddhi's generateDatabaseQuery takes the first group-by attribute unguarded
        raise error_at("@persistedAggregation with 'aggregate by' needs a group by: Siddhi fails with "
                       "IndexOutOfBoundsException (Index 0 out of bounds for length 0)", ad) from None


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
            return open_sql_aggregation_store(spec, options, ctx.shard_id, sharded, ctx.datasources,
                                              getattr(ctx, "fence_epoch", None))
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
