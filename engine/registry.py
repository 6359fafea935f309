"""The extension registry (DESIGN.md decision 8).

Windows, functions, aggregators, stream processors, stores, sources, sinks and mappers are
found by ``namespace:name`` through one registry.  Built-ins register with the
:func:`extension` decorator; third-party packages expose a callable or module through the
``srota.extensions`` entry-point group, which is imported (and so registers itself) the first
time the registry is searched.

Each extension declares its parameters, so validation and docs come from one place.
"""
from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from srota.grammar.model import AttrType

_log = logging.getLogger(__name__)

ANY_TYPE: tuple[AttrType, ...] = tuple(AttrType)
NUMERIC_TYPES: tuple[AttrType, ...] = (AttrType.INT, AttrType.LONG, AttrType.FLOAT, AttrType.DOUBLE)


class Kind(enum.StrEnum):
    """What an extension is."""

    WINDOW = "window"
    FUNCTION = "function"
    AGGREGATOR = "aggregator"
    STREAM_PROCESSOR = "stream_processor"
    STORE = "store"
    SOURCE = "source"
    SINK = "sink"
    SOURCE_MAPPER = "source_mapper"
    SINK_MAPPER = "sink_mapper"


@dataclass(frozen=True)
class Param:
    """One declared parameter.

    ``types`` are the accepted attribute types; ``dynamic`` says whether the value may vary per
    event (an attribute) rather than be a constant; ``repeat`` lets the last parameter repeat.
    """

    name: str
    types: tuple[AttrType, ...] = ANY_TYPE
    optional: bool = False
    default: Any = None
    dynamic: bool = False
    repeat: bool = False
    doc: str = ""


@dataclass(frozen=True)
class Extension:
    """A registered extension: what it is, how to build it, and what it takes."""

    kind: Kind
    namespace: str
    name: str
    factory: Callable[..., Any]
    params: tuple[Param, ...] = ()
    doc: str = ""
    # Alternative parameter lists (Siddhi's @ParameterOverload); empty means "params as declared".
    overloads: tuple[tuple[str, ...], ...] = ()
    #: Free-form facts about the extension.  ``pure=True`` on a function says its result
    #: depends on its arguments alone (no clock, randomness or state), which lets planners
    #: evaluate it once where they would otherwise evaluate it per candidate.
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def qualified_name(self) -> str:
        return f"{self.namespace}:{self.name}" if self.namespace else self.name


class ExtensionRegistry:
    """Extensions by kind and ``namespace:name``.

    A name is found as written first, as Siddhi finds it.  A name written in another case
    finds the one extension it can only mean (``str:UPPER``, which Siddhi refuses), never one
    of two that differ in case alone: ``unitconversion:kgTost`` (stones) and ``kgToST`` (US
    tons) are two extensions.
    """

    def __init__(self) -> None:
        self._items: dict[tuple[Kind, str, str], Extension] = {}
        self._folded: dict[tuple[Kind, str, str], list[Extension]] = {}
        self._entry_points_loaded = False
        self._lock = threading.Lock()

    def register(self, ext: Extension) -> Extension:
        """Add (or replace) an extension."""
        key = (ext.kind, ext.namespace, ext.name)
        folded = self._folded.setdefault((ext.kind, ext.namespace.lower(), ext.name.lower()), [])
        old = self._items.get(key)
        if old is not None:
            folded.remove(old)
        folded.append(ext)
        self._items[key] = ext
        return ext

    def get(self, kind: Kind, namespace: str, name: str) -> Extension | None:
        """The extension of this kind and name, or None."""
        found = self._lookup(kind, namespace or "", name)
        if found is None and not self._entry_points_loaded:
            self.load_entry_points()
            found = self._lookup(kind, namespace or "", name)
        return found

    def _lookup(self, kind: Kind, namespace: str, name: str) -> Extension | None:
        found = self._items.get((kind, namespace, name))
        if found is None:
            candidates = self._folded.get((kind, namespace.lower(), name.lower()), ())
            if len(candidates) == 1:
                found = candidates[0]
        return found

    def all(self, kind: Kind | None = None) -> list[Extension]:
        """Every registered extension (of one kind), sorted by name."""
        self.load_entry_points()
        items = [e for e in self._items.values() if kind is None or e.kind == kind]
        return sorted(items, key=lambda e: (e.kind.value, e.qualified_name))

    def load_entry_points(self) -> None:
        """Import third-party extensions from the ``srota.extensions`` entry-point group (once)."""
        with self._lock:
            if self._entry_points_loaded:
                return
            self._entry_points_loaded = True
        for ep in entry_points(group="srota.extensions"):
            try:
                obj = ep.load()
                if callable(obj):
                    obj(self)
            except Exception:  # a broken plugin must not take the engine down
                _log.exception("could not load srota extension %s", ep.name)


registry = ExtensionRegistry()


def extension(kind: Kind, name: str, namespace: str = "", params: tuple[Param, ...] = (),
              doc: str = "", overloads: tuple[tuple[str, ...], ...] = (),
              **meta: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Class or function decorator registering a built-in extension in :data:`registry`."""

    def wrap(factory: Callable[..., Any]) -> Callable[..., Any]:
        registry.register(Extension(kind, namespace, name, factory, params,
                                    doc or (factory.__doc__ or "").strip(), overloads, dict(meta)))
        return factory

    return wrap
