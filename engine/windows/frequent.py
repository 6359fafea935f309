"""``frequent(n[, attrs...])`` and ``lossyFrequent(support[, error][, attrs...])`` (Siddhi's deprecated
frequency windows).

As Siddhi, keys are the concatenated ``toString`` of the named attributes (all attributes when
none are named), and the windows hold their events and counts in maps that iterate as Java's
``ConcurrentHashMap<String, ...>`` does (:class:`JavaStringMap`): that order is the order of
the expired events of one chunk and of what a join finds in the window.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from srota.engine.event import CURRENT, EXPIRED, Event
from srota.engine.partition import java_string_hash
from srota.engine.registry import Kind, Param, extension
from srota.engine.types import java_double_str, java_float32_str
from srota.engine.windows.base import WindowProcessor, WindowSpec, int_value, require_attribute
from srota.grammar.model import AttrType


class JavaStringMap:
    """A map from strings iterating as Java's ``ConcurrentHashMap`` does (no concurrency).

    A table of bins (16 at first) indexed by the spread ``String.hashCode``; a new key goes at
    the end of its bin, a replaced value keeps its place; at 3/4 full the table doubles and
    each bin splits as CHM's ``transfer`` splits it (the run of nodes that all go the same way
    at the end of the bin stays in order, the nodes before it are prepended one by one).
    Iteration: bin after bin, each in order.  (Bins of 8+ colliding keys are not made trees.)
    """

    __slots__ = ("bins", "size", "hashes")

    def __init__(self) -> None:
        self.bins: list[list[list[Any]]] = [[] for _ in range(16)]
        self.size = 0
        self.hashes: dict[str, int] = {}

    def _bin(self, key: str) -> list[list[Any]]:
        h = self.hashes.get(key)
        if h is None:
            h = java_string_hash(key)
            h = (h ^ (h >> 16)) & 0x7FFFFFFF
        return self.bins[h & (len(self.bins) - 1)]

    def __contains__(self, key: str) -> bool:
        return key in self.hashes

    def __len__(self) -> int:
        return self.size

    def get(self, key: str) -> Any:
        if key not in self.hashes:
            return None
        for node in self._bin(key):
            if node[0] == key:
                return node[1]
        return None  # pragma: no cover - hashes and bins agree

    def put(self, key: str, value: Any) -> Any:
        """Set ``key``; returns the previous value (None when new)."""
        b = self._bin(key)
        if key in self.hashes:
            for node in b:
                if node[0] == key:
                    old, node[1] = node[1], value
                    return old
        h = java_string_hash(key)
        self.hashes[key] = (h ^ (h >> 16)) & 0x7FFFFFFF
        b.append([key, value])
        self.size += 1
        n = len(self.bins)
        if self.size >= n - (n >> 2):
            self._resize()
        return None

    def remove(self, key: str) -> Any:
        """Remove ``key``; returns its value (None when absent)."""
        if key not in self.hashes:
            return None
        b = self._bin(key)
        del self.hashes[key]
        for i, node in enumerate(b):
            if node[0] == key:
                del b[i]
                self.size -= 1
                return node[1]
        return None  # pragma: no cover

    def _resize(self) -> None:
        n = len(self.bins)
        bins: list[list[list[Any]]] = [[] for _ in range(2 * n)]
        hashes = self.hashes
        for i, f in enumerate(self.bins):
            if not f:
                continue
            bits = [hashes[node[0]] & n for node in f]
            last_run = len(f) - 1
            while last_run > 0 and bits[last_run - 1] == bits[-1]:
                last_run -= 1
            lo: list[list[Any]] = []
            hi: list[list[Any]] = []
            (hi if bits[-1] else lo).extend(f[last_run:])
            for node, bit in zip(f[:last_run], bits[:last_run], strict=True):
                (hi if bit else lo).insert(0, node)
            bins[i], bins[i + n] = lo, hi
        self.bins = bins

    def keys(self) -> list[str]:
        return [node[0] for b in self.bins for node in b]

    def values(self) -> Iterator[Any]:
        return (node[1] for b in self.bins for node in b)

    def items(self) -> list[tuple[str, Any]]:
        return [(node[0], node[1]) for b in self.bins for node in b]

    @classmethod
    def of(cls, items: Iterable[tuple[str, Any]]) -> JavaStringMap:
        """A map holding ``items`` put in that order."""
        m = cls()
        for k, v in items:
            m.put(k, v)
        return m


def _java_str(value: Any, type_: AttrType | None) -> str:
    """``String.valueOf`` of an attribute value (what Siddhi's generateKey appends)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_float32_str(value) if type_ is AttrType.FLOAT else java_double_str(value)
    return str(value)


def _key_fn(types: list[AttrType], indexes: Sequence[int | None]) -> Callable[[Event], str]:
    """Siddhi's generateKey: the concatenated strings of the values at ``indexes`` (None: an
    output slot that holds no attribute, which appends ``null``)."""
    pairs = [(i, types[i] if i is not None and i < len(types) else None) for i in indexes]
    if all(i is not None and t is AttrType.STRING for i, t in pairs):
        strings = [i for i, _ in pairs if i is not None]
        return lambda e: "".join("null" if e.data[i] is None else e.data[i] for i in strings)
    return lambda e: "".join("null" if i is None else _java_str(e.data[i], t) for i, t in pairs)


class _KeyedWindow(WindowProcessor):
    """A frequency window: keyed by the named attributes or, when none are named, by the
    event's output data (see :meth:`key_by_output`)."""

    def __init__(self, spec: WindowSpec, named: list[int]) -> None:
        super().__init__(spec)
        self.types = [a.type for a in spec.scope.attributes]
        self.named = bool(named)
        # Without a query's word on its output data, all attributes in their order
        self.key = _key_fn(self.types, named or list(range(len(self.types))))

    def key_by_output(self, indexes: list[int | None]) -> None:
        """Key by these attributes when the window names none: Siddhi's generateKey then
        concatenates the event's output data, which holds only what the query's selector
        outputs as plain attributes (in a join: the distinct ones of this side, in select
        order; ``select *``: all), not every attribute of the stream."""
        if not self.named:
            self.key = _key_fn(self.types, indexes)


class FrequentWindow(_KeyedWindow):
    """Misra-Gries: keeps the latest event of (at most) ``n`` most frequent keys."""

    def __init__(self, spec: WindowSpec, most: int, named: list[int]) -> None:
        super().__init__(spec, named)
        self.most = most
        self.counts = JavaStringMap()   # Siddhi's countMap
        self.events = JavaStringMap()   # Siddhi's map (what find scans)

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        now = self.clock.now()
        counts, events = self.counts, self.events
        for e in chunk:
            if e.type != CURRENT:
                continue
            k = self.key(e)
            if events.put(k, e) is not None:
                counts.put(k, counts.get(k) + 1)
                out.append(e)
                continue
            if len(events) > self.most:
                # every other key loses one, in the count map's order (the expired events' order)
                for other in counts.keys()[: self.most]:
                    c = counts.get(other) - 1
                    if c == 0:
                        counts.remove(other)
                        out.append(Event(now, events.remove(other).data, EXPIRED))
                    else:
                        counts.put(other, c)
                if len(events) > self.most:
                    events.remove(k)  # no room was made: the event is dropped
                else:
                    counts.put(k, 1)
                    out.append(e)
            else:
                counts.put(k, 1)
                out.append(e)
        if out:
            self.next(out)

    def contents(self) -> Iterable[Event]:
        return self.events.values()

    def snapshot_state(self) -> Any:
        return {"counts": self.counts.items(), "events": self.events.items()}

    def restore_state(self, state: Any) -> None:
        self.counts = _restored(state["counts"])
        self.events = _restored(state["events"])


def _restored(items: Any) -> JavaStringMap:
    """A map from its snapshot (its items in iteration order; a dict from older snapshots)."""
    pairs = items.items() if isinstance(items, dict) else items
    return JavaStringMap.of((k if isinstance(k, str) else str(k), v) for k, v in pairs)


def _attribute_indexes(spec: WindowSpec, start: int) -> list[int]:
    return [require_attribute(spec, a, "a key") for a in spec.args[start:]]


@extension(Kind.WINDOW, "frequent",
           # (Siddhi 5.1.33's overloads: (event.count) and (event.count, attribute), a string)
           params=(Param("event.count", (AttrType.INT,), doc="How many frequent keys to keep."),
                   Param("attribute", (AttrType.STRING,), optional=True, dynamic=True,
                         doc="The key attribute (default: all the attributes).")),
           doc="Keeps the latest event of the most frequent keys (deprecated in Siddhi).")
def _frequent(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    most = int_value(spec, spec.args[0], "event.count", minimum=1)
    assert most is not None
    named = _attribute_indexes(spec, 1)
    return lambda: FrequentWindow(spec, most, named)


class LossyFrequentWindow(_KeyedWindow):
    """Lossy counting: keys whose frequency exceeds ``support - error`` pass."""

    def __init__(self, spec: WindowSpec, support: float, error: float, named: list[int]) -> None:
        super().__init__(spec, named)
        self.support = support
        self.error = error
        self.width = math.ceil(1 / error)
        self.total = 0
        self.bucket = 1.0
        self.counts = JavaStringMap()   # key -> [count, bucket id] (Siddhi's countMap)
        self.events = JavaStringMap()   # Siddhi's map (what find scans)

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        now = self.clock.now()
        counts, events = self.counts, self.events
        for e in chunk:
            if e.type != CURRENT:
                continue
            self.total += 1
            if self.total != 1:
                self.bucket = math.ceil(self.total / self.width)
            k = self.key(e)
            if events.put(k, e) is not None:
                c = counts.get(k)
                counts.put(k, [c[0] + 1, c[1]])
            else:
                counts.put(k, [1, int(self.bucket) - 1])
            if counts.get(k)[0] >= (self.support - self.error) * self.total:
                out.append(e)
            if self.total % self.width == 0:
                # pruned in the count map's order (the expired events' order)
                for other, (count, bucket) in counts.items():
                    if count + bucket <= self.bucket:
                        counts.remove(other)
                        out.append(Event(now, events.remove(other).data, EXPIRED))
        if out:
            self.next(out)

    def contents(self) -> Iterable[Event]:
        return self.events.values()

    def snapshot_state(self) -> Any:
        return {"total": self.total, "bucket": self.bucket,
                "counts": [(k, list(v)) for k, v in self.counts.items()], "events": self.events.items()}

    def restore_state(self, state: Any) -> None:
        self.total = state["total"]
        self.bucket = state["bucket"]
        self.counts = _restored([(k, list(v)) for k, v in (state["counts"].items() if isinstance(
            state["counts"], dict) else state["counts"])])
        self.events = _restored(state["events"])


@extension(Kind.WINDOW, "lossyFrequent",
           # (Siddhi 5.1.33's overloads: doubles, then at most one string attribute)
           params=(Param("support.threshold", (AttrType.DOUBLE,), doc="Minimum frequency (0..1) to pass."),
                   Param("error.bound", (AttrType.DOUBLE,), optional=True, doc="Error bound (default support/10)."),
                   Param("attribute", (AttrType.STRING,), optional=True, dynamic=True,
                         doc="The key attribute (default: all the attributes).")),
           doc="Passes events whose key frequency exceeds the support threshold (deprecated in Siddhi).")
def _lossy_frequent(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    support = float(spec.args[0].value)
    start = 1
    if len(spec.args) > 1 and spec.args[1].constant:
        error = float(spec.args[1].value)
        start = 2
    else:
        error = support / 10
    if not 0 <= support <= 1 or not 0 < error <= 1:
        raise spec.error("support.threshold and error.bound should be between 0 and 1", spec.handler)
    named = _attribute_indexes(spec, start)
    return lambda: LossyFrequentWindow(spec, support, error, named)
