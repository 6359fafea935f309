"""The service's error store (``errors.database``): an SQLite file, or a PostgreSQL/MySQL
database every replica shares (a ``postgresql://``/``mysql://``/``jdbc:`` URL), opened when
first needed.

Apps of the service keep failed events there (``@OnError(action='STORE')`` on a stream, for
events that fail in a query and payloads that do not map; ``on.error='STORE'`` on a sink, for
outputs that cannot be published).  ``srota errors`` and the admin API (``/errors``) list,
show, replay and purge them; engine/errorstore.py has the entry format.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from srota.engine.errorstore import ErrorEntry, RdbmsErrorStore, SqliteErrorStore, open_error_store

_lock = threading.Lock()
_open: dict[str, SqliteErrorStore | RdbmsErrorStore] = {}


class ServiceErrorStore:
    """The error store at ``path`` (a file or a database URL), opened on the first write (reads
    of a file never written find nothing and create no file), shared by every app of the
    process."""

    def __init__(self, path: str) -> None:
        self.path = path

    def _store(self, create: bool) -> SqliteErrorStore | RdbmsErrorStore | None:
        with _lock:
            store = _open.get(self.path)
            if store is None and (create or "://" in self.path or Path(self.path).exists()):
                store = _open[self.path] = open_error_store(self.path)
            return store

    def add(self, entry: ErrorEntry) -> int:
        store = self._store(create=True)
        assert store is not None
        return store.add(entry)

    def entries(self, **filters: Any) -> list[ErrorEntry]:
        store = self._store(create=False)
        return [] if store is None else store.entries(**filters)

    def count(self, **filters: Any) -> int:
        store = self._store(create=False)
        return 0 if store is None else store.count(**filters)

    def get(self, ident: int) -> ErrorEntry | None:
        store = self._store(create=False)
        return None if store is None else store.get(ident)

    def discard(self, ident: int) -> bool:
        store = self._store(create=False)
        return False if store is None else store.discard(ident)

    def purge(self, **filters: Any) -> int:
        store = self._store(create=False)
        return 0 if store is None else store.purge(**filters)

    def close(self) -> None:
        """Close the file (the service's shutdown); a later use opens it again."""
        with _lock:
            store = _open.pop(self.path, None)
        if store is not None:
            store.close()
