"""The app context: what every planner and processor of one app runtime shares."""
from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from srota.engine.clock import Clock, PlaybackClock, Scheduler, WallClock
from srota.engine.expression import ArgInfo
from srota.engine.registry import Kind, registry
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import AttrType, SiddhiApp, StreamDefinition

_log = logging.getLogger("srota.engine")

try:
    from fastrlock.rlock import FastRLock as _FastRLock
except ImportError:  # (a platform without its wheel: the standard lock, slower per send)
    _FastRLock = None


def app_lock() -> Any:
    """A new re-entrant lock for an app: fastrlock's where it is installed, else
    ``threading.RLock``.

    Every one-by-one send takes the app lock, and ``threading.RLock``'s acquire and release
    (their arguments parsed per call) cost about 75 ns a pair here, 9-14 % of such a send
    (docs/performance.md); fastrlock's cost about 30.  Both are re-entrant, take
    ``acquire(blocking=False)`` and serve as context managers, which is all the engine asks.
    """
    return threading.RLock() if _FastRLock is None else _FastRLock()


@dataclass(frozen=True)
class Limits:
    """Guards that stop one bad input or app from taking the process down.

    ``max_window_events``: a window holding more events sheds its oldest (a sliding window
    expires them early, a batch window drops them from the batch); 0 means no limit, as in
    Siddhi.  ``max_pending_matches``: partial matches one pattern state keeps before the
    oldest are dropped (``@pattern(max.pending=...)`` overrides it per query).  Every breach
    is counted in :attr:`AppContext.breaches` and logged (at most once a minute per element).

    ``python_functions``: whether ``define function f[python] ...`` is allowed.  Its body is
    Python run in the process, so whoever writes the app text runs code; turn it off where
    app texts are not trusted (the service: ``limits.python_functions: false``).
    """

    max_window_events: int = 0
    max_pending_matches: int = 100_000
    python_functions: bool = True


class AppContext:
    """Shared state of one app runtime: clock, scheduler, lock, definitions, stateful elements.

    ``elements`` maps a stable element id (``query1/window``, ``table:T``, ...) to every object
    that keeps state, for snapshots; ``element_id`` hands out ids that do not depend on
    object identity so that a restored snapshot finds the same element again.
    """

    def __init__(self, app: SiddhiApp, name: str, clock: Clock | None = None,
                 limits: Limits | None = None) -> None:
        self.app = app
        self.limits = limits or Limits()
        # read by the pattern planner (``@pattern(max.pending=...)`` overrides it)
        self.pattern_max_pending = self.limits.max_pending_matches
        self.breaches: Counter[str] = Counter()
        self._breach_logged: dict[str, float] = {}
        self.name = name
        self.lock = app_lock()
        self.clock: Clock = clock or WallClock()
        self.playback = isinstance(self.clock, PlaybackClock)
        self.scheduler = Scheduler(self.clock, self.lock)
        self.streams: dict[str, StreamDefinition] = {}
        self.junctions: dict[str, Any] = {}
        self.tables: dict[str, Any] = {}
        self.windows: dict[str, Any] = {}
        self.aggregations: dict[str, Any] = {}
        self.triggers: dict[str, Any] = {}
        self.script_functions: dict[str, tuple[AttrType, Callable[..., Any]]] = {}
        self.elements: dict[str, Any] = {}
        self.fingerprints: dict[str, str | None] = {}
        self.start_hooks: list[Callable[[], None]] = []
        self.stop_hooks: list[Callable[[], None]] = []
        self.errors: Counter[str] = Counter()
        self.in_hook: Any = None
        #: This process's shard id for distributed aggregations (SiddhiManager(shard_id=...)).
        self.shard_id: str | None = None
        #: Set under scale-out: the epoch of this runtime's claim on its partition, which fences
        #: a replaced owner out of the app's rdbms tables (engine.stores.database.OwnerFence).
        self.fence_epoch: int | None = None
        #: Planning only (``srota validate``): server-database stores do not connect.
        self.offline = False
        #: Named databases (``datasource='NAME'`` of stores, ``rdbms:query``): name -> options.
        self.datasources: dict[str, dict[str, str]] = {}
        self._datasource_dbs: dict[str, Any] = {}
        self._held_transactions: dict[tuple[str, str], Any] = {}
        #: Whether chunks are processed with the cyclic garbage collector deferred until
        #: each is done (engine/collector.py; ``SiddhiManager(defer_gc=...)``).
        self.defer_gc = True
        #: Extensions' system parameters (``SiddhiManager.set_extension_properties``):
        #: ``"namespace:name"`` (lower case) -> {parameter: text}.
        self.extension_properties: dict[str, dict[str, str]] = {}
        #: The debugger (engine/debugger.py) or None; statistics (engine/statistics.py) or None;
        #: ``inspector`` is set when either is, so that the hot paths test one attribute.
        self.debugger: Any = None
        self.statistics: Any = None
        self.inspector: Any = None
        #: runtime.pause(): senders wait at the app's entry while it is paused.
        self.pause_gate: Any = None
        self._ids = itertools.count()
        # Set while planning a partition: the key-local scope for inner streams, etc.
        self.partition: Any = None
        #: The junction whose chunk is being dispatched (faults of its events go to its @OnError).
        self.dispatching: Any = None
        #: Where ``@OnError(action='STORE')`` keeps failed events (engine/errorstore.py); None: logged.
        self.error_store: Any = None
        #: Whether each junction's ``coalescible`` is up to date, and what brings it up to
        #: date (engine/coalesce.py; set by the runtime, cleared by every (un)subscribe).
        self.coalescing_planned = False
        self.replan_coalescing: Callable[[], None] | None = None

    def datasource(self, name: str) -> Any:
        """The app's connection to datasource ``name`` (one per app, created on first use)."""
        db = self._datasource_dbs.get(name)
        if db is None:
            from srota.engine.stores.database import Database, max_outage, url_from_options

            options = {"datasource": name}
            db = Database(url_from_options(options, self.datasources), f"datasource '{name}'",
                          max_outage(self.datasources.get(name, {})))
            self._datasource_dbs[name] = db
            self.stop_hooks.append(db.close)
        return db

    def held_transaction(self, datasource: str, correlation_id: str) -> Any:
        """The transaction ``correlation_id`` on datasource ``datasource``, kept open across
        events until a commit or rollback (rdbms:cud; engine/stores/database.py's
        ``HeldTransaction``).  One per id and datasource in the app; one still open when
        the app stops is rolled back, with a warning."""
        key = (datasource, correlation_id)
        tx = self._held_transactions.get(key)
        if tx is None:
            from srota.engine.stores.database import HeldTransaction

            if not self._held_transactions:
                self.stop_hooks.append(self._roll_back_held)
            tx = HeldTransaction(self.datasource(datasource), f"transaction '{correlation_id}'")
            self._held_transactions[key] = tx
        return tx

    def _roll_back_held(self) -> None:
        for (datasource, cid), tx in self._held_transactions.items():
            try:
                if tx.end(commit=False):
                    _log.warning("app %s stopped with transaction '%s' on datasource '%s' neither committed "
                                 "nor rolled back: rolled back", self.name, cid, datasource)
            except Exception as exc:
                _log.warning("app %s: rolling back transaction '%s' at stop failed: %s", self.name, cid, exc)

    def fault_event(self, event: Any, exc: Exception) -> None:
        """Route one event that failed inside a query the way its stream's ``@OnError`` says.

        Stages that evaluate user expressions over a chunk call this for the one event that
        raised and go on with the others (faults stay with the event, DESIGN.md decision 7).
        Outside a dispatch (a timer tick) there is no stream to blame: ``exc`` is re-raised.
        """
        junction = self.dispatching
        if junction is None:
            raise exc
        from srota.engine.event import Event

        n = len(junction.definition.attributes)
        data = tuple(event.data[:n])
        junction.on_error([Event(event.timestamp, data)], exc)

    def store_error(self, stream_id: str, events: list[Any], exc: BaseException) -> None:
        """Keep events that failed in the app's error store (``@OnError(action='STORE')``).

        Without a store, or when the store itself fails, the events are logged and dropped,
        and the log says why: an error route must never raise into the chunk that failed.
        """
        store = self.error_store
        if store is not None:
            from srota.engine.errorstore import STREAM, entry_for

            try:
                store.add(entry_for(self.name, stream_id, STREAM, exc, events))
                return
            except Exception as store_exc:  # noqa: BLE001 -- reported below, with the events' own error
                reason = f"the error store failed ({type(store_exc).__name__}: {store_exc})"
        else:
            reason = "no error store is configured (SiddhiManager(error_store=...), or the service's errors.database)"
        _log.error("error processing events of stream %s in app %s: %s: %s; @OnError(action='STORE'), but %s: "
                   "%d event(s) dropped", stream_id, self.name, type(exc).__name__, exc, reason, len(events),
                   extra={"app": self.name, "stream": stream_id, "dropped": len(events)})

    # ------------------------------------------------------------------ functions
    def extension_property(self, extension: str, key: str, default: str) -> str:
        """A system parameter of ``extension`` (``"rdbms:cud"``), as Siddhi's ConfigReader reads
        the ``extensions:`` of its deployment.yaml; ``default`` when it is not set."""
        return self.extension_properties.get(extension.lower(), {}).get(key, default)

    def find_function(self, namespace: str, name: str) -> Callable[[list[ArgInfo], Any], Any] | None:
        """A function factory by name: app-defined script functions first, then extensions."""
        if not namespace and name in self.script_functions:
            rtype, fn = self.script_functions[name]
            return lambda args, ctx: (rtype, fn)
        ext = registry.get(Kind.FUNCTION, namespace, name)
        return ext.factory if ext is not None else None

    def is_aggregator(self, namespace: str, name: str) -> bool:
        return registry.get(Kind.AGGREGATOR, namespace, name) is not None

    # ------------------------------------------------------------------ state
    def register_element(self, element_id: str, element: Any, fingerprint: str | None = None) -> str:
        """Record a stateful element under a stable id (made unique if taken).

        ``fingerprint`` identifies the definition the element was built from (see
        :mod:`engine.snapshot`), so a snapshot is restored only into a matching element.
        """
        eid = element_id
        n = 1
        while eid in self.elements and self.elements[eid] is not element:
            n += 1
            eid = f"{element_id}#{n}"
        self.elements[eid] = element
        self.fingerprints[eid] = fingerprint
        return eid

    def unregister_prefix(self, prefix: str) -> None:
        """Forget every element whose id starts with ``prefix`` (a purged partition key)."""
        for eid in [k for k in self.elements if k.startswith(prefix)]:
            del self.elements[eid]
            self.fingerprints.pop(eid, None)

    def define_stream(self, definition: StreamDefinition, key: str | None = None) -> Any:
        """Add a stream (and its junction); returns the junction."""
        from srota.engine.junction import StreamJunction

        key = key or definition.id
        self.streams[key] = definition
        junction = StreamJunction(definition, self)
        self.junctions[key] = junction
        return junction

    def limit_breach(self, element: str, what: str, count: int = 1) -> None:
        """Count ``count`` events shed by ``element`` because of a limit, and log it (rate-limited)."""
        self.breaches[element] += count
        now = time.monotonic()
        if now - self._breach_logged.get(element, -1e9) >= 60.0:
            self._breach_logged[element] = now
            _log.warning("app %s: %s exceeded %s; %d event(s) shed so far", self.name, element, what,
                         self.breaches[element], extra={"app": self.name, "element": element})

    def metrics_error(self, stream_id: str) -> None:
        self.errors[stream_id] += 1

    def stream(self, stream_id: str, node: Any = None) -> StreamDefinition:
        """The definition of a stream, or a creation error at ``node``."""
        found = self.streams.get(stream_id)
        if found is None:
            pos = getattr(node, "pos", None)
            raise SiddhiAppCreationError(f"stream '{stream_id}' is not defined",
                                         pos.line if pos else None, pos.column if pos else None)
        return found
