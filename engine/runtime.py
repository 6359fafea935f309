"""The embedding API: :class:`SiddhiManager` and :class:`SiddhiAppRuntime`.

Mirrors Siddhi's Java API and PySiddhi::

    runtime = SiddhiManager().create_siddhi_app_runtime(app_text)
    runtime.add_callback("OutStream", lambda events: ...)
    runtime.start()
    runtime.get_input_handler("InStream").send(["IBM", 75.6, 100])
    runtime.shutdown()
"""
from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from srota.engine import aggregators as _aggregators  # noqa: F401 - registers the built-in aggregators
from srota.engine import extensions as _extensions  # noqa: F401 - registers str:, math:, time:, ...
from srota.engine import functions as _functions  # noqa: F401 - registers the built-in functions
from srota.engine import stream_processors as _stream_processors  # noqa: F401 - registers #log, #pol2Cart
from srota.engine.clock import Clock, PlaybackClock, WallClock
from srota.engine.coalesce import plan_coalescing
from srota.engine.context import AppContext, Limits
from srota.engine.debugger import Pause, SiddhiDebugger, plain, update_inspector
from srota.engine.event import Event
from srota.engine.expression import error_at
from srota.engine.junction import InputHandler
from srota.engine.output import QueryCallback
from srota.engine.planning import Sources, source_key
from srota.engine.query import QueryRuntime, build_query
from srota.engine.statistics import StatisticsManager, statistics_annotation
from srota.engine.timeutil import parse_duration
from srota.engine.types import hashmap_keys
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import (
    Annotation,
    Attribute,
    AttrType,
    OnDemandQuery,
    Partition,
    Query,
    SiddhiApp,
    StreamDefinition,
    find_annotation,
)

if TYPE_CHECKING:
    from srota.engine.partition import PartitionQuery

_log = logging.getLogger("srota.engine")

StreamCallback = Callable[[list[Event]], None]


class QueryNotExistError(KeyError):
    """``add_query_callback`` named a query the app does not have."""


class DefinitionNotExistError(KeyError):
    """A stream, table or window named in the API does not exist."""


class SiddhiAppRuntime:
    """A created app: callbacks, input handlers, start/shutdown, on-demand queries, snapshots."""

    def __init__(self, app: SiddhiApp, text: str | None = None, clock: Clock | None = None,
                 limits: Limits | None = None, shard_id: str | None = None, offline: bool = False,
                 datasources: dict[str, dict[str, str]] | None = None, error_store: Any = None,
                 extension_properties: dict[str, dict[str, str]] | None = None,
                 fence_epoch: int | None = None) -> None:
        self.app = app
        self.text = text
        self.name = app.name or f"app-{id(self):x}"
        self._ctx = AppContext(app, self.name, clock or _clock_for(app), _app_limits(app, limits))
        #: This process's shard of distributed aggregations (``@PartitionById``).
        self._ctx.shard_id = shard_id
        self._ctx.fence_epoch = fence_epoch
        #: Plan only: server-database stores do not connect (``srota validate``).
        self._ctx.offline = offline
        self._ctx.datasources = dict(datasources or {})
        self._ctx.extension_properties = {k: dict(v) for k, v in (extension_properties or {}).items()}
        #: Where ``@OnError(action='STORE')`` keeps failed events (engine/errorstore.py).
        self._ctx.error_store = error_store
        #: Queries by name; a partitioned query answers for all its key instances.
        self.queries: dict[str, QueryRuntime | PartitionQuery] = {}
        self.partitions: list[Any] = []
        self._started = False
        _plan_app(self, self._ctx)
        #: Receivers change (callbacks, partition instances): senders re-plan when they merge.
        self._ctx.replan_coalescing = self._plan_coalescing
        stats = statistics_annotation(app)
        if stats is not None:
            try:
                self._ctx.statistics = StatisticsManager(self, stats["level"], stats["reporter"],
                                                         stats["interval_ms"], stats["include"])
            except ValueError as exc:
                ann = find_annotation(app.annotations, "app:statistics")
                pos = ann.pos if ann is not None else None
                raise SiddhiAppCreationError(f"@app:statistics: {exc}", pos.line if pos else None,
                                             pos.column if pos else None) from None
            update_inspector(self._ctx)

    # ------------------------------------------------------------------ definitions
    @property
    def context(self) -> AppContext:
        """The app context (for extensions and the service host)."""
        return self._ctx

    @property
    def stream_definitions(self) -> dict[str, StreamDefinition]:
        """Every stream, defined or inferred, including fault streams (``!S``)."""
        return dict(self._ctx.streams)

    @property
    def tables(self) -> dict[str, Any]:
        return dict(self._ctx.tables)

    # ------------------------------------------------------------------ callbacks and input
    def add_callback(self, stream_id: str, callback: StreamCallback, *, merged_chunks: bool = False) -> None:
        """Call ``callback(events)`` with every chunk of ``stream_id`` (``!S`` for a fault stream).

        ``merged_chunks=True`` says the callback does not care how events are grouped into
        calls (a sink whose mapper writes each event on its own): where every receiver of a
        stream says so, chunks that queued up from one-by-one senders (an ``@Async`` buffer,
        a source's messages) may go through as one (:mod:`srota.engine.coalesce`), and the
        callback gets the events of several sends in one call.  By default each call is one
        chunk as it was sent, as in Siddhi.
        """
        junction = self._ctx.junctions.get(stream_id)
        if junction is None:
            window = self._ctx.windows.get(stream_id)
            if window is None:
                raise DefinitionNotExistError(f"stream '{stream_id}' is not defined in app {self.name}")
            window.subscribe(callback)
            return
        junction.subscribe(callback, chunk_invariant=merged_chunks)

    def remove_callback(self, stream_id: str, callback: StreamCallback) -> None:
        junction = self._ctx.junctions.get(stream_id)
        if junction is not None:
            junction.unsubscribe(callback)

    def _plan_coalescing(self) -> None:
        """Decide which streams may merge chunks (again after the receivers changed)."""
        plan_coalescing(self._ctx.junctions, self.queries)
        self._ctx.coalescing_planned = True

    def add_query_callback(self, query_name: str, callback: QueryCallback) -> None:
        """Call ``callback(timestamp, in_events, remove_events)`` with every output of a query."""
        query = self.queries.get(query_name)
        if query is None:
            raise QueryNotExistError(f"no query named '{query_name}' in app {self.name}")
        if not isinstance(query, QueryRuntime):
            # Siddhi's addCallback looks only at the app's own queries (QueryNotExistException):
            # a partition's queries run per key and are reached through their output streams.
            raise QueryNotExistError(f"query '{query_name}' is inside a partition, which takes no query "
                                     "callback (as in Siddhi): add a callback to the stream it inserts into")
        query.add_callback(callback)
        self._ctx.coalescing_planned = False  # a query callback sees the query's chunks

    def get_input_handler(self, stream_id: str) -> InputHandler:
        """The handler that sends events into ``stream_id``."""
        junction = self._ctx.junctions.get(stream_id)
        if junction is None:
            window = self._ctx.windows.get(stream_id)
            if window is not None:
                return window.input_handler()
            raise DefinitionNotExistError(f"stream '{stream_id}' is not defined in app {self.name}")
        return InputHandler(junction, self._ctx)

    # ------------------------------------------------------------------ lifecycle
    def disable_triggers(self, *, start_only: bool = False) -> None:
        """Keep this runtime's triggers from firing (all of them, or the ``at 'start'`` ones
        only); call before :meth:`start`.  For hosts that run one app as several runtimes
        (one per input partition) and want each trigger to fire once per app."""
        for trigger in self._ctx.triggers.values():
            if trigger.at_start or not start_only:
                trigger.enabled = False

    def start(self) -> None:
        """Start timers, triggers and sources of time."""
        if self._started:
            return
        self._started = True
        with self._ctx.lock:
            for hook in list(self._ctx.start_hooks):
                hook()
        self._ctx.scheduler.start()
        if self._ctx.statistics is not None:
            self._ctx.statistics.start()

    def shutdown(self) -> None:
        """Stop timers and release resources (tables flush to their stores)."""
        if self._ctx.debugger is not None:
            self._ctx.debugger.detach()  # a held sender must not outlive the app
        if self._ctx.pause_gate is not None:
            self._ctx.pause_gate.resume()
        if self._ctx.statistics is not None:
            self._ctx.statistics.stop()
        self._ctx.scheduler.stop()
        with self._ctx.lock:
            for hook in reversed(self._ctx.stop_hooks):
                try:
                    hook()
                except Exception:
                    _log.exception("error while shutting down app %s", self.name)
            for q in self.queries.values():
                for hook in q.stop_hooks:
                    hook()
        for junction in list(self._ctx.junctions.values()):
            if junction.async_buffer is not None:
                junction.async_buffer.join()
        self._started = False

    def drain(self) -> int:
        """Process every event waiting in ``@Async`` buffers now; returns how many there were.

        A host calls this before it checkpoints (snapshot, offset commit), so that the state
        and the outputs cover every event it has handed to the app.
        """
        drained = 0
        with self._ctx.lock:
            for junction in list(self._ctx.junctions.values()):
                buffer = junction.async_buffer
                if buffer is not None and len(buffer):
                    drained += len(buffer)
                    buffer.drain()
        return drained

    # ------------------------------------------------------------------ looking inside
    def debug(self) -> SiddhiDebugger:
        """Attach a debugger (starting the runtime when it is not started yet, as Siddhi's
        ``debug()`` does); returns it.  ``undebug()`` detaches it."""
        if self._ctx.debugger is None:
            self._ctx.debugger = SiddhiDebugger(self)
            update_inspector(self._ctx)
        self.start()
        return self._ctx.debugger

    def undebug(self) -> None:
        """Detach the debugger: breakpoints released, a held sender goes on."""
        debugger, self._ctx.debugger = self._ctx.debugger, None
        update_inspector(self._ctx)
        if debugger is not None:
            debugger.detach()

    @property
    def debugger(self) -> SiddhiDebugger | None:
        return self._ctx.debugger

    def pause(self) -> None:
        """Hold the app: the next chunk sent into it waits (chunks inside finish) until ``resume()``."""
        if self._ctx.pause_gate is None:
            self._ctx.pause_gate = Pause()
        self._ctx.pause_gate.pause()

    def resume(self) -> None:
        if self._ctx.pause_gate is not None:
            self._ctx.pause_gate.resume()

    @property
    def paused(self) -> bool:
        return self._ctx.pause_gate is not None and self._ctx.pause_gate.paused

    def query_state(self, query_name: str) -> dict[str, Any]:
        """The state of a query's stateful elements as plain data (windows, aggregators,
        partial matches), ``{element id: state}``; every key instance of a partitioned query."""
        query = self.queries.get(query_name)
        if query is None:
            raise QueryNotExistError(f"no query named '{query_name}' (queries: {', '.join(sorted(self.queries))})")
        elements: dict[str, Any] = dict(query.elements)
        for instance in getattr(query, "instance_runtimes", lambda: [])():
            elements.update(instance.elements)
        out = {}
        for eid, element in elements.items():
            take = getattr(element, "snapshot_state", None)
            if take is not None:
                out[eid] = plain(take())
        return out

    def set_statistics_level(self, level: str, reporter: str | None = None, interval_ms: int | None = None) -> None:
        """``off``, ``basic`` or ``detail`` (Siddhi's ``setStatisticsLevel``), at any time."""
        current = self._ctx.statistics
        if level == "off":
            if current is not None:
                current.stop()
            self._ctx.statistics = None
        elif current is not None and reporter is None and interval_ms is None:
            if level not in ("basic", "detail"):
                raise ValueError(f"statistics level must be off, basic or detail, not '{level}'")
            current.level = level
        else:
            if current is not None:
                current.stop()
            manager = StatisticsManager(self, level, reporter or (current.reporter if current else "prometheus"),
                                        interval_ms or (current.interval_ms if current else 60_000))
            self._ctx.statistics = manager
            if self._started:
                manager.start()
        update_inspector(self._ctx)

    def statistics(self) -> dict[str, Any] | None:
        """The statistics report (plain data), or None when statistics are off."""
        stats = self._ctx.statistics
        return None if stats is None else stats.report()

    # ------------------------------------------------------------------ on-demand queries
    def query(self, text: str) -> list[Event]:
        """Run an on-demand (store) query and return its events."""
        from srota.engine.ondemand import run_on_demand_query
        return run_on_demand_query(self._ctx, text)

    def get_on_demand_query_output_attributes(self, query: str | OnDemandQuery) -> list[Attribute]:
        """The attributes (names and types) an on-demand query returns, without running it
        (Siddhi's ``getOnDemandQueryOutputAttributes``); the query is planned, and a text's
        plan is kept for :meth:`query`.  A query that does not plan raises its creation error."""
        from srota.engine.ondemand import on_demand_output_attributes
        return on_demand_output_attributes(self._ctx, query)

    #: Siddhi's older name (``getStoreQueryOutputAttributes``).
    get_store_query_output_attributes = get_on_demand_query_output_attributes

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> bytes:
        """Serialise the state of every stateful element (per element, keyed by stable id)."""
        from srota.engine.snapshot import take_snapshot
        with self._ctx.lock:
            return take_snapshot(self._ctx)

    def restore(self, data: bytes) -> list[str]:
        """Restore a snapshot; returns the ids of elements that could not be restored."""
        from srota.engine.snapshot import restore_snapshot
        with self._ctx.lock:
            return restore_snapshot(self._ctx, data)

    def __enter__(self) -> SiddhiAppRuntime:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def extension_property_text(value: Any) -> str:
    """An extension's system parameter as the text extensions read (``True`` as ``"true"``, as
    Siddhi's deployment.yaml gives it)."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


class SiddhiManager:
    """Creates app runtimes (and keeps them, like Siddhi's SiddhiManager).

    ``limits`` applies to every app it creates (an app's ``@app:limits(...)`` overrides it).
    ``shard_id`` names this process among the writers of distributed aggregations
    (``@PartitionById(enable='true')`` with a shared ``rdbms`` store), as Siddhi's
    ``SiddhiManager.setConfigManager``'s ``shardId`` does; keep it stable across restarts.
    ``offline`` plans apps without connecting their server-database stores (validation only:
    such a runtime must not be started).  ``defer_gc``: process each chunk of 64 events or
    more with Python's cyclic garbage collector held off until the chunk is done (it runs
    right after, on what outlives the chunk; engine/collector.py says why it pays).  Turn it
    off where another thread of the application turns the collector off and on itself.
    ``fence_epoch`` (scale-out: the partition claim's epoch, with the partition's ``shard_id``)
    fences a replaced owner out of the apps' ``rdbms`` tables
    (:class:`~srota.engine.stores.database.OwnerFence`).
    """

    def __init__(self, limits: Limits | None = None, shard_id: str | None = None, offline: bool = False,
                 error_store: Any = None, defer_gc: bool = True, fence_epoch: int | None = None) -> None:
        self._runtimes: dict[str, SiddhiAppRuntime] = {}
        #: Siddhi's ``setErrorStore``: where ``@OnError(action='STORE')`` keeps failed events
        #: (:class:`srota.engine.errorstore.SqliteErrorStore` or anything with ``add(entry)``).
        self.error_store = error_store
        self._lock = threading.Lock()
        self.limits = limits
        self.shard_id = shard_id
        self.offline = offline
        self.defer_gc = defer_gc
        self.fence_epoch = fence_epoch
        self.datasources: dict[str, dict[str, str]] = {}
        self.extension_properties: dict[str, dict[str, str]] = {}

    def set_data_source(self, name: str, url: str, username: str | None = None, password: str | None = None,
                        **options: str) -> None:
        """Name a database (``jdbc:postgresql://...``, ``jdbc:mysql://...``) for the apps created
        after this: ``@store(type='rdbms', datasource='NAME')`` and ``#rdbms:query('NAME', ...)``
        (Siddhi's ``SiddhiManager.setDataSource``)."""
        entry = {"jdbc.url": url, **options}
        if username is not None:
            entry["username"] = username
        if password is not None:
            entry["password"] = password
        self.datasources[name] = entry

    def set_extension_properties(self, extension: str, properties: Mapping[str, Any]) -> None:
        """System parameters of an extension for the apps created after this, as the
        ``extensions:`` of Siddhi's deployment.yaml (``SiddhiManager.setConfigManager``):
        ``set_extension_properties("rdbms:cud", {"perform.CUD.operations": True})``.  Values
        are kept as text (``True`` as ``"true"``); later calls add to earlier ones."""
        if extension.count(":") != 1:
            raise ValueError(f"an extension is named 'namespace:name', not {extension!r}")
        entry = self.extension_properties.setdefault(extension.lower(), {})
        for key, value in properties.items():
            entry[str(key)] = extension_property_text(value)

    def create_siddhi_app_runtime(self, app: str | SiddhiApp | Any, clock: Clock | None = None) -> SiddhiAppRuntime:
        """Parse, validate and plan an app.  Raises :class:`SiddhiAppCreationError` (line, column).

        In an app's text, each ``${name}`` is first replaced by the environment variable
        ``name``, as Siddhi's ``SiddhiManager`` does; an unset one is a parser error."""
        if isinstance(app, str):
            from srota.grammar.parser import parse, update_variables

            # (Siddhi's SiddhiManager, too, reads ${name} from the environment first)
            updated = update_variables(app)
            model, text = parse(updated), updated
        elif hasattr(app, "build"):  # a builder of srota.query
            model, text = app.build(), None
        else:
            model, text = app, None
        runtime = SiddhiAppRuntime(model, text, clock, self.limits, self.shard_id, self.offline, self.datasources,
                                   self.error_store, self.extension_properties, self.fence_epoch)
        runtime.context.defer_gc = self.defer_gc
        with self._lock:
            self._runtimes[runtime.name] = runtime
        return runtime

    def validate_siddhi_app(self, app: str | SiddhiApp) -> None:
        """Check syntax and semantics without keeping the runtime."""
        self.create_siddhi_app_runtime(app).shutdown()

    def get_siddhi_app_runtime(self, name: str) -> SiddhiAppRuntime | None:
        return self._runtimes.get(name)

    def shutdown(self) -> None:
        with self._lock:
            runtimes = list(self._runtimes.values())
            self._runtimes.clear()
        for r in runtimes:
            r.shutdown()


# ---------------------------------------------------------------------------- planning
def _clock_for(app: SiddhiApp) -> Clock:
    playback = find_annotation(app.annotations, "app:playback")
    if playback is None:
        return WallClock()
    clock = PlaybackClock()
    idle = playback.get("idle.time")
    increment = playback.get("increment")
    if idle is not None or increment is not None:
        try:
            if idle is None or increment is None:
                raise ValueError("@app:playback needs both idle.time and increment")
            clock_idle = parse_duration(idle)
            clock_inc = parse_duration(increment)
            if not any(c.isalpha() for c in increment) or not any(c.isalpha() for c in idle):
                raise ValueError("a time value needs a unit, e.g. '2 sec'")
        except ValueError as exc:
            pos = playback.pos
            raise SiddhiAppCreationError(f"@app:playback: {exc}", pos.line if pos else None,
                                         pos.column if pos else None) from None
        clock.idle_millis = clock_idle
        clock.increment_millis = clock_inc
    return clock


def _app_limits(app: SiddhiApp, limits: Limits | None) -> Limits:
    """The manager's limits, overridden by ``@app:limits(max.window.events='N', max.pending.matches='N')``."""
    limits = limits or Limits()
    a = find_annotation(app.annotations, "app:limits")
    if a is None:
        return limits
    values: dict[str, int] = {}
    for key, field_name in (("max.window.events", "max_window_events"),
                            ("max.pending.matches", "max_pending_matches")):
        raw = a.get(key)
        if raw is None:
            continue
        try:
            n = int(raw)
            if n < 0:
                raise ValueError
        except ValueError:
            raise error_at(f"@app:limits {key} must be a whole number >= 0 (0: no limit), not '{raw}'", a) from None
        values[field_name] = n
    return dataclasses.replace(
        limits,
        max_window_events=values.get("max_window_events", limits.max_window_events),
        max_pending_matches=values.get("max_pending_matches", limits.max_pending_matches))


_FAULT_ATTRIBUTE = Attribute("_error", AttrType.OBJECT)


def _on_error_action(annotations: tuple[Annotation, ...]) -> str:
    a = find_annotation(annotations, "OnError")
    if a is None:
        return "LOG"
    action = (a.get("action") or (a.positional() or ("LOG",))[0]).upper()
    if action not in ("LOG", "STREAM", "STORE", "WAIT"):
        raise error_at(f"@OnError action must be LOG, STREAM, STORE or WAIT, not '{action}'", a)
    return action


def _plan_app(runtime: SiddhiAppRuntime, ctx: AppContext) -> None:
    app = runtime.app
    legacy = find_annotation(app.annotations, "app:async")
    if legacy is not None:
        raise error_at("@app:async is not supported: put @Async(buffer.size='...', workers='...', "
                       "batch.size.max='...') on the streams that should be asynchronous", legacy)
    seen: dict[str, str] = {}

    def claim(kind: str, ident: str, node: Any) -> None:
        other = seen.get(ident)
        # (a trigger may share its id with a stream of its own schema: define_trigger judges)
        if other is not None and other != kind and {other, kind} != {"stream", "trigger"}:
            raise error_at(f"'{ident}' is already defined as a {other}", node)
        seen[ident] = kind

    for sd in app.stream_definitions:
        claim("stream", sd.id, sd)
        _define_stream(ctx, sd)
    for fd in app.function_definitions:
        from srota.engine.functions import script_function
        claim("function", fd.id, fd)
        if not ctx.limits.python_functions:
            raise error_at(f"function '{fd.id}': script functions are turned off here "
                           "(Limits(python_functions=False); service: limits.python_functions)", fd)
        try:
            ctx.script_functions[fd.id] = (fd.return_type,
                                           script_function(fd.language, fd.id, fd.return_type, fd.body))
        except SiddhiAppCreationError as exc:
            raise error_at(exc.message, fd) from None
    first_tables: dict[str, Any] = {}
    for td in app.table_definitions:
        claim("table", td.id, td)
        first = first_tables.setdefault(td.id, td)
        if first is not td and first.annotations != td.annotations:
            # (Siddhi's definitions are equal with their annotations, in their order)
            raise error_at(f"table '{td.id}' is already defined with other annotations", td)
        from srota.engine.table import define_table
        ctx.tables[td.id] = define_table(td, ctx)
    # Siddhi makes named windows (each with its scheduler) and triggers in the order of a HashMap
    # of their ids: of their timers due at one instant, and of 'start' triggers, that order
    # fires first (a window's scheduler rank is taken as it is made)
    for wd in _in_siddhi_order(app.window_definitions):
        if wd.id in ctx.windows:  # (Siddhi refuses a second window of an id even when it is the same)
            raise error_at(f"window '{wd.id}' is already defined", wd)
        claim("window", wd.id, wd)
        from srota.engine.named_window import define_window
        ctx.windows[wd.id] = define_window(wd, ctx)
    for trd in _in_siddhi_order(app.trigger_definitions):
        claim("trigger", trd.id, trd)
        from srota.engine.trigger import define_trigger
        ctx.triggers[trd.id] = define_trigger(trd, ctx)
    for ad in app.aggregation_definitions:
        if ad.id in ctx.aggregations:  # (as a window: never twice)
            raise error_at(f"aggregation '{ad.id}' is already defined", ad)
        claim("aggregation", ad.id, ad)
        from srota.engine.aggregation import define_aggregation
        ctx.aggregations[ad.id] = define_aggregation(ad, ctx)

    sources = Sources(ctx)
    for n, element in enumerate(app.execution_elements, start=1):
        if isinstance(element, Query):
            q = build_query(element, ctx, sources, n)
            if q.name in runtime.queries:
                raise error_at(f"duplicate query name '{q.name}'", element)
            runtime.queries[q.name] = q
        elif isinstance(element, Partition):
            from srota.engine.partition import build_partition
            partition = build_partition(element, ctx, n)
            runtime.partitions.append(partition)
            for pq in partition.query_runtimes():
                if pq.name in runtime.queries:
                    raise error_at(f"duplicate query name '{pq.name}'", element)
                runtime.queries[pq.name] = pq


def _in_siddhi_order(definitions: Sequence[Any]) -> list[Any]:
    """``definitions`` in the order of a Java ``HashMap`` of their ids (a repeated id beside
    its first, in the app's order), the order Siddhi's SiddhiApp keeps them in."""
    order = {d: i for i, d in enumerate(hashmap_keys(dict.fromkeys(d.id for d in definitions)))}
    return sorted(definitions, key=lambda d: order[d.id])


def _define_stream(ctx: AppContext, sd: StreamDefinition) -> None:
    existing = ctx.streams.get(sd.id)
    if existing is not None:
        if [(a.name, a.type) for a in existing.attributes] != [(a.name, a.type) for a in sd.attributes]:
            raise error_at(f"stream '{sd.id}' is already defined with another schema", sd)
        if existing.annotations != sd.annotations:  # (Siddhi's definitions are equal with their annotations)
            raise error_at(f"stream '{sd.id}' is already defined with other annotations", sd)
        return
    names = [a.name for a in sd.attributes]
    for a in sd.attributes:
        if names.count(a.name) > 1:
            raise error_at(f"stream '{sd.id}' defines attribute '{a.name}' twice", a)
    for io in sd.annotations:
        if io.name.lower() in ("source", "sink") and not (io.get("type") or io.get("ref")):
            raise error_at(f"@{io.name} on stream '{sd.id}' needs a type (or a ref to a configured connector)", io)
    junction = ctx.define_stream(sd)
    async_annotation = find_annotation(sd.annotations, "Async")
    if async_annotation is not None:
        junction.enable_async(*_async_settings(async_annotation))
    action = _on_error_action(sd.annotations)
    if action == "STREAM":
        fault = StreamDefinition(sd.id, (*sd.attributes, _FAULT_ATTRIBUTE), is_fault=True)
        junction.fault_junction = ctx.define_stream(fault, source_key(sd.id, is_fault=True))
    junction.store_errors = action == "STORE"


def _async_settings(a: Annotation) -> tuple[int, int, int]:
    """``@Async(buffer.size='1024', workers='1', batch.size.max='...')`` with Siddhi's defaults."""
    values = []
    for key, default in (("buffer.size", 1024), ("workers", 1), ("batch.size.max", 1)):
        raw = a.get(key)
        try:
            n = default if raw is None else int(raw)
        except ValueError:
            raise error_at(f"@Async {key} must be a whole number, not '{raw}'", a) from None
        if n <= 0:  # StreamJunction rejects a batch.size.max of 0 too (its default is buffer.size)
            raise error_at(f"@Async {key} must be positive, not {n}", a)
        values.append(n)
    return values[0], values[1], values[2] if a.get("batch.size.max") is not None else values[0]
