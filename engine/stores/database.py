"""A connection to one server database, with Siddhi's ``jdbc.url`` options and outage handling.

:func:`open_database` reads the options of ``@store(type='rdbms', ...)`` (siddhi-store-rdbms'
names: ``jdbc.url``, ``username``, ``password``, ``jdbc.driver.name``, ``pool.properties``;
plus a plain ``url='postgresql://user:pass@host:port/db'``) and picks the dialect module
(:mod:`engine.stores.postgresql`, :mod:`engine.stores.mysql`).

A :class:`Database` is used by one thread at a time (the engine's, under the app lock, or a
store's writer thread).  :meth:`Database.run` runs a unit of work in one transaction and, when
the connection is lost or the server is down, reconnects with capped exponential back-off;
the caller stays blocked meanwhile, which is the back-pressure a host needs (its sources wait
for the chunk in flight).  An outage longer than ``max.outage`` (default 5 min) raises
:class:`StoreUnavailableError`, which stops the app with that message instead of dropping
anything.  Errors that retrying cannot mend (a constraint, a type, a missing table) are raised
at once.
"""
from __future__ import annotations

import logging
import threading
import time
import urllib.parse
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from srota.engine import collector
from srota.engine.timeutil import parse_duration

_log = logging.getLogger("srota.engine.stores")

T = TypeVar("T")


class StoreError(Exception):
    """A store that cannot be used as configured (bad URL, refused login, schema clash)."""


class StoreLockedError(StoreError):
    """Another session holds the lock that makes this process a store's one writer
    (:class:`SessionLock`); :meth:`end_holder` ends that session."""

    def __init__(self, message: str, lock: SessionLock) -> None:
        super().__init__(message)
        self.lock = lock

    def end_holder(self) -> int | None:
        """End the session holding the lock (see :meth:`SessionLock.end_holder`)."""
        return self.lock.end_holder()


class StoreUnavailableError(BaseException):
    """The database stayed unreachable longer than the store's ``max.outage``.

    A ``BaseException`` on purpose, like ``SystemExit``: the engine routes an ``Exception``
    raised while processing an event to the fault stream or the log and goes on, which here
    would drop the event.  This one must stop the app (its host does so, committing nothing
    past the chunk) instead of being handled as one event's failure.
    """


@dataclass(frozen=True)
class DatabaseURL:
    """Where a store's database is: ``dialect`` is ``postgresql`` or ``mysql`` (MariaDB too)."""

    dialect: str
    host: str
    port: int
    database: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    params: tuple[tuple[str, str], ...] = ()

    def display(self) -> str:
        """The URL without the password, for logs and errors."""
        who = f"{self.user}@" if self.user else ""
        return f"{self.dialect}://{who}{self.host}:{self.port}/{self.database}"


_SCHEMES = {"postgresql": "postgresql", "postgres": "postgresql", "mysql": "mysql", "mariadb": "mysql"}
_PORTS = {"postgresql": 5432, "mysql": 3306}


def parse_url(url: str, user: str | None = None, password: str | None = None) -> DatabaseURL:
    """Read ``jdbc:postgresql://host:port/db?...``, ``jdbc:mysql://...``, ``jdbc:mariadb://...``
    or the same without ``jdbc:``; ``user``/``password`` (the store's ``username``/``password``
    options) override what the URL carries."""
    text = url.strip()
    if text.lower().startswith("jdbc:"):
        text = text[5:]
    parts = urllib.parse.urlsplit(text)
    dialect = _SCHEMES.get(parts.scheme.lower())
    if dialect is None:
        raise StoreError(f"unsupported database URL '{url}': expected jdbc:postgresql://, jdbc:mysql://, "
                         "jdbc:mariadb:// (or postgresql://, mysql://)")
    database = parts.path.lstrip("/")
    if not database:
        raise StoreError(f"database URL '{url}' names no database (…://host:port/DATABASE)")
    params = tuple(urllib.parse.parse_qsl(parts.query))
    query = dict(params)
    return DatabaseURL(
        dialect=dialect,
        host=parts.hostname or "localhost",
        port=parts.port or _PORTS[dialect],
        database=urllib.parse.unquote(database),
        user=user or (urllib.parse.unquote(parts.username) if parts.username else None) or query.get("user"),
        password=password if password is not None else (
            urllib.parse.unquote(parts.password) if parts.password else query.get("password")),
        params=params,
    )


def url_from_options(options: dict[str, str], datasources: dict[str, dict[str, str]] | None = None) -> DatabaseURL:
    """The database of a ``@store`` annotation's options: ``jdbc.url`` (or ``url``), or
    ``datasource='NAME'`` naming one of ``datasources`` (the service YAML's ``datasources:``,
    ``SiddhiManager.set_data_source``)."""
    name = options.get("datasource")
    if name and not (options.get("jdbc.url") or options.get("url")):
        found = (datasources or {}).get(name)
        if found is None:
            known = ", ".join(sorted(datasources or {})) or "none are defined"
            raise StoreError(f"no datasource named '{name}' ({known}): define it under `datasources:` in the "
                             "service config, or with SiddhiManager.set_data_source()")
        options = {**found, **{k: v for k, v in options.items() if k in ("username", "password")}}
    raw = options.get("jdbc.url") or options.get("url")
    if not raw:
        raise StoreError("needs jdbc.url='jdbc:postgresql://host:port/database' (or jdbc:mysql://, "
                         "jdbc:mariadb://), or datasource='NAME'")
    check_pool_properties(options.get("pool.properties") or "")
    return parse_url(raw, options.get("username"), options.get("password"))


def check_pool_properties(text: str) -> None:
    """Refuse ``pool.properties`` that siddhi-store-rdbms and HikariCP refuse (see
    :mod:`srota.engine.stores.hikari`, which checks them as HikariConfig does)."""
    from srota.engine.stores.hikari import check_pool_properties as check  # (it imports StoreError from here)

    check(text)


class Dialect:
    """What differs between databases: driver, quoting, types, upsert.  One module per database."""

    name = ""
    placeholder = "%s"

    def connect(self, url: DatabaseURL, timeout: float) -> Any:
        """A new DB-API connection (autocommit off)."""
        raise NotImplementedError

    def quote(self, name: str) -> str:
        raise NotImplementedError

    def column_type(self, attr_type: Any, length: int | None, key: bool) -> str:
        """The SQL type of an attribute (``key``: it is part of a primary key or index)."""
        raise NotImplementedError

    def create_table_suffix(self) -> str:
        """What follows ``CREATE TABLE t (...)`` (MySQL: the binary collation)."""
        return ""

    def serialize_ddl(self, cur: Any) -> None:
        """Make this transaction's schema changes wait for other processes' (replicas and
        workers creating the same tables at start).  MySQL's ``CREATE TABLE IF NOT EXISTS`` is
        safe as it is; PostgreSQL's is not (two at once: a unique violation on ``pg_type``)."""

    def null_safe_equal(self, left: str, right: str) -> str:
        raise NotImplementedError

    def upsert(self, table: str, columns: list[str], key: list[str]) -> str:
        """``INSERT ... `` that replaces the row with the same key."""
        raise NotImplementedError

    def insert_if_absent(self, table: str, columns: list[str], key: list[str]) -> str:
        """``INSERT ...`` that inserts nothing (row count 0) when the key exists."""
        raise NotImplementedError

    def bulk_upsert(self, cur: Any, table: str, columns: list[str], key: list[str],
                    rows: list[tuple[Any, ...]], fresh: bool = False) -> bool:
        """Upsert many rows faster than multi-row statements, where the database can (``fresh``:
        no row with these keys exists); False when this dialect has no such path."""
        return False

    def existing_columns(self, cur: Any, table: str) -> list[str] | None:
        """The table's column names in order, or None when there is no such table."""
        raise NotImplementedError

    def is_transient(self, exc: BaseException) -> bool:
        """True when retrying may succeed (connection lost, server starting, deadlock)."""
        raise NotImplementedError

    def explain(self, exc: BaseException, url: DatabaseURL) -> str:
        """One line saying what went wrong and what to do."""
        return f"{type(exc).__name__}: {exc}".strip()


def dialect_for(url: DatabaseURL) -> Dialect:
    if url.dialect == "postgresql":
        from srota.engine.stores.postgresql import PostgreSQL

        return PostgreSQL()
    from srota.engine.stores.mysql import MySQL

    return MySQL()


class Database:
    """One connection to a store's database, reconnected across outages (see the module doc).

    :attr:`on_connect`, when set, runs on every new connection before it is used (in a
    transaction of its own): a store that owns a :class:`SessionLock` takes it there, so a
    connection that was lost (an outage, or ended by a process that took the lock over) is
    never used again without the lock.
    """

    def __init__(self, url: DatabaseURL, what: str, max_outage_ms: int = 300_000,
                 connect_timeout: float = 10.0) -> None:
        self.url = url
        self.what = what
        self.dialect = dialect_for(url)
        self.max_outage_ms = max_outage_ms
        self.connect_timeout = connect_timeout
        self._conn: Any = None
        self._lock = threading.RLock()
        #: Times a unit of work was retried after a transient error.
        self.retries = 0
        #: True while the database is unreachable (for health checks and metrics).
        self.down = False
        self.closed = False
        self._cursor: Any = None  # set while a unit of work runs: nested calls join it
        #: Seconds each of the last 256 units of work took (statistics).
        self.latencies: deque[float] = deque(maxlen=256)
        #: Run on each new connection before its first unit of work (see the class doc).
        self.on_connect: Callable[[Any], None] | None = None

    def q(self, name: str) -> str:
        return self.dialect.quote(name)

    @property
    def holds_session_lock(self) -> bool:
        """True if each connection takes a :class:`SessionLock` (:attr:`on_connect` is set):
        closing an idle connection lets go of the lock at once (:meth:`disconnect`)."""
        return self.on_connect is not None

    @property
    def connected(self) -> bool:
        """True while a connection is open (it may have been lost without our knowing yet)."""
        return self._conn is not None

    def connect_now(self) -> None:
        """Connect at once, raising a :class:`StoreError` that says why it failed (app creation)."""
        with self._lock:
            if self._conn is None:
                try:
                    self._connect()
                except StoreError:
                    raise
                except Exception as exc:
                    raise StoreError(f"{self.what}: cannot connect to {self.url.display()}: "
                                     f"{self.dialect.explain(exc, self.url)}") from None

    def _connect(self) -> Any:
        """A new connection, :attr:`on_connect` run on it (closed again if that fails)."""
        conn = self.dialect.connect(self.url, self.connect_timeout)
        if self.on_connect is not None:
            try:
                cur = conn.cursor()
                try:
                    self.on_connect(cur)
                finally:
                    cur.close()
                conn.commit()
            except BaseException:
                _close_quietly(conn)
                raise
        self._conn = conn
        return conn

    def run(self, work: Callable[[Any], T]) -> T:
        """Run ``work(cursor)`` in one transaction and commit; retry across outages (module doc)."""
        with self._lock:
            if self._cursor is not None:  # inside another unit of work: part of its transaction
                return work(self._cursor)
            started: float | None = None
            delay = 0.05
            while True:
                if self.closed:
                    raise StoreError(f"{self.what}: the store is closed")
                try:
                    conn = self._conn if self._conn is not None else self._connect()
                    t0 = time.perf_counter()
                    cur = self._cursor = conn.cursor()
                    try:
                        result = work(cur)
                    finally:
                        self._cursor = None
                        cur.close()
                    conn.commit()
                    self.latencies.append(time.perf_counter() - t0)
                    if self.down:
                        self.down = False
                        _log.warning("%s: %s is reachable again", self.what, self.url.display())
                    return result
                except Exception as exc:
                    self._rollback()
                    if not self.dialect.is_transient(exc):
                        raise
                    self._drop()
                    now = time.monotonic()
                    if started is None:
                        started = now
                        self.down = True
                        _log.error("%s: %s is unreachable (%s); holding the app and retrying",
                                   self.what, self.url.display(), self.dialect.explain(exc, self.url))
                    if (now - started) * 1000 > self.max_outage_ms:
                        raise StoreUnavailableError(
                            f"{self.what}: {self.url.display()} unreachable for more than "
                            f"{self.max_outage_ms // 1000} s ({self.dialect.explain(exc, self.url)}); "
                            "start the database and restart the app, or raise max.outage") from None
                    self.retries += 1
                    collector.let_run()  # an outage may hold the chunk for minutes
                    time.sleep(delay)
                    delay = min(delay * 2, 2.0)

    def _rollback(self) -> None:
        if self._conn is not None:
            try:
                self._conn.rollback()
            except Exception:
                self._drop()

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        _close_quietly(conn)

    def disconnect(self) -> bool:
        """Close the connection now (the next unit of work makes a new one, through
        :attr:`on_connect`): a session lock it holds is released at once.  False, and nothing
        done, while a unit of work runs on it (or retries through an outage)."""
        if not self._lock.acquire(blocking=False):
            return False
        try:
            if self._cursor is not None:
                return False
            self._drop()
            return True
        finally:
            self._lock.release()

    def close(self) -> None:
        self.closed = True  # first: a unit of work retrying through an outage gives up
        with self._lock:
            self._drop()


class SessionLock:
    """A named lock owned by a database session: a PostgreSQL session advisory lock, a
    MySQL/MariaDB ``GET_LOCK``.  The server releases it when the session ends, however it
    ends: a clean close, a crashed process, or :meth:`end_holder`.

    What a session lock cannot see by itself is a holder that is alive but stopped (SIGSTOP,
    a frozen VM): its connection stays open, and its lock with it.  A process that knows it
    is the rightful owner now (scale-out: it claimed the partition in the state topic, so
    the holder is a replaced worker) ends the holder's session with :meth:`end_holder`; the
    replaced process then finds its connection gone, and cannot take the lock again while
    the new owner holds it, so it writes nothing more (:attr:`Database.on_connect`).
    """

    def __init__(self, url: DatabaseURL, name: str, connect_timeout: float = 10.0) -> None:
        self.url = url
        self.name = name
        self.dialect = dialect_for(url)
        self.connect_timeout = connect_timeout
        self._key = zlib.crc32(name.encode()) - 2**31  # PostgreSQL's bigint key
        self._mysql_name = name[-64:]  # MySQL's limit on lock names

    def try_take(self, cur: Any) -> bool:
        """Take the lock for ``cur``'s session without waiting; False when another holds it."""
        if self.dialect.name == "postgresql":
            cur.execute("SELECT pg_try_advisory_lock(%s)", (self._key,))
        else:
            cur.execute("SELECT GET_LOCK(%s, 0)", (self._mysql_name,))
        return bool(cur.fetchone()[0])

    def release(self, cur: Any) -> None:
        """Release it (closing the session does too)."""
        if self.dialect.name == "postgresql":
            cur.execute("SELECT pg_advisory_unlock(%s)", (self._key,))
        else:
            cur.execute("SELECT RELEASE_LOCK(%s)", (self._mysql_name,))

    def end_holder(self) -> int | None:
        """End the session that holds the lock, on a connection of its own; its process id
        (PostgreSQL backend pid, MySQL connection id), or None when nobody held it.

        Needs the right to end that session: the same database user (PostgreSQL: or a
        member of ``pg_signal_backend``; MySQL: or ``CONNECTION ADMIN``/``SUPER``).  Raises
        the database's error otherwise.
        """
        conn = self.dialect.connect(self.url, self.connect_timeout)
        try:
            cur = conn.cursor()
            if self.dialect.name == "postgresql":
                # A bigint advisory key is in pg_locks as classid (high half) and objid (low).
                k = self._key & 0xFFFF_FFFF_FFFF_FFFF
                cur.execute("SELECT pid, pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
                            "AND granted AND objsubid = 1 AND classid = %s::bigint::oid AND objid = %s::bigint::oid "
                            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                            "AND pid <> pg_backend_pid()", (k >> 32, k & 0xFFFF_FFFF))
                row = cur.fetchone()
                holder = int(row[0]) if row else None
            else:
                cur.execute("SELECT IS_USED_LOCK(%s), CONNECTION_ID()", (self._mysql_name,))
                used, me = cur.fetchone()
                holder = int(used) if used is not None and int(used) != int(me) else None
                if holder is not None:
                    cur.execute(f"KILL CONNECTION {holder:d}")
            conn.commit()
            return holder
        finally:
            _close_quietly(conn)


class StoreReplacedError(BaseException):
    """Another process owns what this store writes now: this one was replaced (a scale-out
    partition moved while its worker was stopped or cut off).  See :class:`OwnerFence`.

    A ``BaseException``, as :class:`StoreUnavailableError`: the event's failure must not be
    routed and gone past; the host drops the partition, committing nothing of the chunk.
    """


class StoreGoneError(Exception):
    """A request's store cannot answer now: it stayed unreachable past its ``max.outage``, or
    another process owns it (this one was replaced).

    Raised in place of :class:`StoreUnavailableError` or :class:`StoreReplacedError` where the
    caller answers for one piece of work outside event processing (an on-demand query, an
    error's replay, a snapshot, a restore or a redeploy; the service stops the app first where
    the store stayed unreachable): the handler reports it (HTTP 500 or 503) and the service's
    loops go on, while the ``BaseException`` would end the request's or the loop's task with
    no answer at all.
    """


#: The table of owners' epochs (:class:`OwnerFence`).
FENCE_TABLE = "srota_fence"
#: How long an owner reconnecting waits for an older session of its own lock to end (the
#: server ends a closed connection's session within milliseconds) before it ends that session.
_OWN_SESSION_GRACE_S = 2.0


class OwnerFence:
    """Fences a replaced owner out of a shared table: a :class:`SessionLock` taken on every
    connection (:attr:`Database.on_connect`), and the owner's epoch in :data:`FENCE_TABLE`.

    Scale-out gives a partition's runtime the epoch of its claim on the partition (the
    state topic's, higher for every new owner).  The new owner takes the lock when its runtime
    is created, ending the session of a replaced owner that still holds it (the caller does
    that, on :class:`StoreLockedError`), and writes its epoch.  The replaced owner's next
    unit of work then finds its connection gone and cannot connect again: the lock is held, or
    (after a database restart freed every lock) the stored epoch is newer than its own.  It
    gets :class:`StoreReplacedError` instead of writing a row older than the new owner's.
    """

    def __init__(self, url: DatabaseURL, name: str, epoch: int, what: str, connect_timeout: float = 10.0) -> None:
        self.name = name
        self.epoch = epoch
        self.what = what
        self.lock = SessionLock(url, name, connect_timeout)
        self._opened = False

    def on_connect(self, cur: Any) -> None:
        """Take the lock and check the epoch on a new connection (see the class doc)."""
        dialect = self.lock.dialect
        if not self._opened:
            dialect.serialize_ddl(cur)
            cur.execute(f"CREATE TABLE IF NOT EXISTS {dialect.quote(FENCE_TABLE)} "
                        "(name VARCHAR(200) PRIMARY KEY, epoch BIGINT)")
        # The epoch goes in first, even while another session holds the lock: once the caller
        # ends that session, the replaced owner reconnecting at once finds it and lets go,
        # instead of taking the lock back before this process can.
        stored = self._raise_epoch(cur)
        cur.connection.commit()  # kept when the lock is refused below (the connection is closed then)
        if stored > self.epoch:
            raise StoreReplacedError(f"{self.what} has a newer owner (epoch {stored}, this process's "
                                     f"{self.epoch}): this process was replaced; its writes are dropped")
        if not self.lock.try_take(cur):
            message = f"{self.what} is written by another process holding its lock {self.name!r}"
            if not self._opened:
                raise StoreLockedError(message, self.lock)
            if not self._take_back(cur):
                raise StoreReplacedError(message + ": this process was replaced; its writes are dropped")
        self._opened = True

    def _take_back(self, cur: Any) -> bool:
        """Reconnecting, this owner found its lock held by another session although no newer
        owner wrote its epoch: the holder is an older session, most often this owner's own
        connection that was just closed (a revoked partition lets go of its locks, and the
        partition may stay here), which the server ends a moment after the client closes it.
        Wait for it; past :data:`_OWN_SESSION_GRACE_S` the holder is a replaced owner's
        session, which this newest owner ends.  False only if the lock still cannot be taken.

        (Judging this owner replaced instead dropped its writes while its partition ran on and
        was checkpointed: the chaos soak's missing roll-up rows.)"""
        deadline = time.monotonic() + _OWN_SESSION_GRACE_S
        ended = False
        while True:
            time.sleep(0.02)
            if self._raise_epoch(cur) > self.epoch:
                return False  # a newer owner came meanwhile
            cur.connection.commit()
            if self.lock.try_take(cur):
                return True
            if time.monotonic() >= deadline:
                if ended:
                    return False
                ended = True
                try:
                    holder = self.lock.end_holder()
                except Exception:  # noqa: BLE001 -- not allowed to: judged replaced, as before
                    return False
                _log.warning("%s: ended the database session of an older owner that still held its lock %r "
                             "(session %s)", self.what, self.name, holder)
                deadline = time.monotonic() + _OWN_SESSION_GRACE_S

    def _raise_epoch(self, cur: Any) -> int:
        """Set the stored epoch to this process's where it is older; the stored one before."""
        dialect = self.lock.dialect
        table, ph = dialect.quote(FENCE_TABLE), dialect.placeholder
        cur.execute(f"SELECT epoch FROM {table} WHERE name = {ph}", (self.name,))
        row = cur.fetchone()
        if row is None:
            cur.execute(dialect.insert_if_absent(FENCE_TABLE, ["name", "epoch"], ["name"]), (self.name, self.epoch))
            return self.epoch
        stored = int(row[0])
        if stored < self.epoch:
            cur.execute(f"UPDATE {table} SET epoch = {ph} WHERE name = {ph} AND epoch < {ph}",
                        (self.epoch, self.name, self.epoch))
        return stored


#: The savepoint behind each unit of work of a held transaction.
_SAVEPOINT = "srota_unit"


class HeldTransaction:
    """A transaction kept open across units of work until told to commit or roll back
    (rdbms:cud's ``transaction.correlation.id``).  Each unit of work is all or nothing: one
    that fails leaves the transaction as it was before it.

    It has a connection of its own beside the :class:`Database`'s (whose units of work each
    commit), made at its first unit of work.  A connection lost in between loses the
    transaction (the server rolls it back): that is raised as a :class:`StoreError` saying
    so, not retried, and the next unit of work begins a new transaction.
    """

    def __init__(self, db: Database, label: str) -> None:
        self.db = db
        self.label = label
        self._conn: Any = None
        self._lock = threading.Lock()

    def run(self, work: Callable[[Any], T]) -> T:
        """Run ``work(cursor)`` inside the transaction (no commit)."""
        db = self.db
        with self._lock:
            if db.closed:
                raise StoreError(f"{db.what}: the store is closed")
            began = self._conn is not None
            try:
                if self._conn is None:
                    self._conn = db.dialect.connect(db.url, db.connect_timeout)
                cur = self._conn.cursor()
                try:
                    return self._unit(cur, work)
                finally:
                    cur.close()
            except Exception as exc:
                if not db.dialect.is_transient(exc):
                    raise
                self._close()
                lost = "is lost, its work so far rolled back" if began else "cannot begin"
                raise StoreError(f"{db.what}: {self.label} {lost}: {db.dialect.explain(exc, db.url)}") from exc

    def _unit(self, cur: Any, work: Callable[[Any], T]) -> T:
        """``work(cur)`` all or nothing inside the transaction, behind a savepoint.

        A failed statement must take back its unit's earlier ones and leave the transaction
        usable: PostgreSQL refuses every later statement of a transaction one of whose
        statements failed (and turns its COMMIT into a rollback) until it is rolled back to
        a savepoint; MariaDB would keep the unit's statements before the failing one.
        """
        cur.execute(f"SAVEPOINT {_SAVEPOINT}")
        try:
            result = work(cur)
        except Exception as exc:
            if self.db.dialect.is_transient(exc):
                raise  # the connection went (the caller ends the transaction): no undo to try on it
            try:
                cur.execute(f"ROLLBACK TO SAVEPOINT {_SAVEPOINT}")
            except Exception as undo:
                if self.db.dialect.is_transient(undo):
                    raise undo from exc  # the connection went: the transaction is lost
                # The server ended the transaction itself (a MariaDB deadlock rolls it all
                # back, savepoint included) or its state is unknown: end it rather than
                # commit half a unit.
                self._close()
                raise StoreError(f"{self.db.what}: {self.label} is lost, its work so far rolled back: "
                                 f"{self.db.dialect.explain(undo, self.db.url)}") from exc
            raise
        cur.execute(f"RELEASE SAVEPOINT {_SAVEPOINT}")
        return result

    def end(self, commit: bool) -> bool:
        """Commit (or roll back) what was done and close the connection; False if nothing was."""
        with self._lock:
            conn = self._conn
            if conn is None:
                return False
            try:
                if commit:
                    conn.commit()
                else:
                    conn.rollback()
            except Exception as exc:
                raise StoreError(f"{self.db.what}: {self.label} could not {'commit' if commit else 'roll back'}: "
                                 f"{self.db.dialect.explain(exc, self.db.url)}") from exc
            finally:
                self._close()
            return True

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        _close_quietly(conn)


def _close_quietly(conn: Any) -> None:
    """Close a connection that may be broken already (its error would say nothing new)."""
    if conn is not None:
        try:
            conn.close()
        except Exception:
            pass


def max_outage(options: dict[str, str]) -> int:
    """The ``max.outage`` option in milliseconds (default 5 min)."""
    return parse_duration(options.get("max.outage", "5 min"))
