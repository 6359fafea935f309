"""``frequent(n[, attrs...])`` and ``lossyFrequent(support[, error][, attrs...])`` (Siddhi's deprecated
frequency windows).

Keys are the tuple of the named attributes (all attributes when none are named).  Siddhi keys
by the concatenated ``toString`` of the values and iterates a hash map; here keys keep their
first-seen order, which only changes the order of expired events inside one chunk.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from srota.engine.event import CURRENT, EXPIRED, Event
from srota.engine.registry import ANY_TYPE, Kind, Param, extension
from srota.engine.windows.base import WindowProcessor, WindowSpec, int_value, require_attribute
from srota.grammar.model import AttrType

_NUMBER = (AttrType.INT, AttrType.LONG, AttrType.FLOAT, AttrType.DOUBLE)


def _key_fn(indexes: list[int]) -> Callable[[Event], Any]:
    if not indexes:
        return lambda e: tuple(e.data)
    if len(indexes) == 1:
        i = indexes[0]
        return lambda e: e.data[i]
    return lambda e: tuple(e.data[i] for i in indexes)


class FrequentWindow(WindowProcessor):
    """Misra-Gries: keeps the latest event of (at most) ``n`` most frequent keys."""

    def __init__(self, spec: WindowSpec, most: int, key: Callable[[Event], Any]) -> None:
        super().__init__(spec)
        self.most = most
        self.key = key
        self.counts: dict[Any, int] = {}
        self.events: dict[Any, Event] = {}

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        now = self.clock.now()
        counts, events = self.counts, self.events
        for e in chunk:
            if e.type != CURRENT:
                continue
            k = self.key(e)
            known = k in events
            events[k] = e
            if known:
                counts[k] += 1
                out.append(e)
                continue
            if len(events) > self.most:
                for other in list(counts)[: self.most]:
                    c = counts[other] - 1
                    if c == 0:
                        del counts[other]
                        out.append(Event(now, events.pop(other).data, EXPIRED))
                    else:
                        counts[other] = c
                if len(events) > self.most:
                    del events[k]  # no room was made: the event is dropped
                else:
                    counts[k] = 1
                    out.append(e)
            else:
                counts[k] = 1
                out.append(e)
        if out:
            self.next(out)

    def contents(self) -> Iterable[Event]:
        return self.events.values()

    def snapshot_state(self) -> Any:
        return {"counts": dict(self.counts), "events": dict(self.events)}

    def restore_state(self, state: Any) -> None:
        self.counts = dict(state["counts"])
        self.events = dict(state["events"])


def _attribute_indexes(spec: WindowSpec, start: int) -> list[int]:
    return [require_attribute(spec, a, "a key") for a in spec.args[start:]]


@extension(Kind.WINDOW, "frequent",
           params=(Param("event.count", (AttrType.INT,), doc="How many frequent keys to keep."),
                   Param("attribute", ANY_TYPE, dynamic=True, repeat=True, doc="Key attributes.")),
           doc="Keeps the latest event of the most frequent keys (deprecated in Siddhi).")
def _frequent(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    most = int_value(spec, spec.args[0], "event.count", minimum=1)
    assert most is not None
    key = _key_fn(_attribute_indexes(spec, 1))
    return lambda: FrequentWindow(spec, most, key)


class LossyFrequentWindow(WindowProcessor):
    """Lossy counting: keys whose frequency exceeds ``support - error`` pass."""

    def __init__(self, spec: WindowSpec, support: float, error: float, key: Callable[[Event], Any]) -> None:
        super().__init__(spec)
        self.support = support
        self.error = error
        self.key = key
        self.width = math.ceil(1 / error)
        self.total = 0
        self.bucket = 1.0
        self.counts: dict[Any, list[int]] = {}   # key -> [count, bucket id]
        self.events: dict[Any, Event] = {}

    def process(self, chunk: list[Event]) -> None:
        out: list[Event] = []
        now = self.clock.now()
        for e in chunk:
            if e.type != CURRENT:
                continue
            self.total += 1
            if self.total != 1:
                self.bucket = math.ceil(self.total / self.width)
            k = self.key(e)
            if k in self.events:
                self.counts[k][0] += 1
            else:
                self.counts[k] = [1, int(self.bucket) - 1]
            self.events[k] = e
            if self.counts[k][0] >= (self.support - self.error) * self.total:
                out.append(e)
            if self.total % self.width == 0:
                for other in list(self.counts):
                    count, bucket = self.counts[other]
                    if count + bucket <= self.bucket:
                        del self.counts[other]
                        out.append(Event(now, self.events.pop(other).data, EXPIRED))
        if out:
            self.next(out)

    def contents(self) -> Iterable[Event]:
        return self.events.values()

    def snapshot_state(self) -> Any:
        return {"total": self.total, "bucket": self.bucket,
                "counts": {k: list(v) for k, v in self.counts.items()}, "events": dict(self.events)}

    def restore_state(self, state: Any) -> None:
        self.total = state["total"]
        self.bucket = state["bucket"]
        self.counts = {k: list(v) for k, v in state["counts"].items()}
        self.events = dict(state["events"])


@extension(Kind.WINDOW, "lossyFrequent",
           params=(Param("support.threshold", _NUMBER, doc="Minimum frequency (0..1) to pass."),
                   Param("error.bound", _NUMBER, optional=True, doc="Error bound (default support/10)."),
                   Param("attribute", ANY_TYPE, dynamic=True, repeat=True, doc="Key attributes.")),
           doc="Passes events whose key frequency exceeds the support threshold (deprecated in Siddhi).")
def _lossy_frequent(spec: WindowSpec) -> Callable[[], WindowProcessor]:
    support = float(spec.args[0].value)
    start = 1
    if len(spec.args) > 1 and spec.args[1].constant:
        if spec.args[1].type not in _NUMBER:
            raise spec.error("error.bound should be a number", spec.args[1].node)
        error = float(spec.args[1].value)
        start = 2
    else:
        error = support / 10
    if not 0 <= support <= 1 or not 0 < error <= 1:
        raise spec.error("support.threshold and error.bound should be between 0 and 1", spec.handler)
    key = _key_fn(_attribute_indexes(spec, start))
    return lambda: LossyFrequentWindow(spec, support, error, key)
