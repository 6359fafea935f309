"""``@distribution``: one ``@sink`` publishing to several destinations (Siddhi's distributed sinks).

.. code-block:: sql

    @sink(type='kafka', bootstrap.servers='...', @map(type='json'),
          @distribution(strategy='partitioned', partitionKey='symbol',
                        @destination(topic='stocks-a'), @destination(topic='stocks-b')))
    define stream Stocks (symbol string, price double);

Each ``@destination`` is a sink of the ``@sink``'s type with the ``@sink``'s options and its
own on top.  ``strategy``: ``roundRobin`` (event *i* to destination *i mod n*),
``partitioned`` (by the Java ``hashCode`` of the ``partitionKey`` attribute's text, as Siddhi,
so an attribute value always goes to the same destination) or ``broadcast`` (every
destination).

Delivery is that of one sink: :meth:`DistributedSink.publish` sends each destination its
items in order; when a destination is unavailable it raises with ``published`` set to the
first item (in the original order) that did not go out, and the host's retry sends from
there again: items of the other destinations after it may be sent twice (at least once).
A refused item is reported at its original index.

A destination's own options may be ``{{attribute}}`` templates (``@destination(topic=
'{{region}}-a')``): the host renders them per event under :func:`destination_option` keys,
and each destination gets its own values under the option's name.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from srota.connectors.base import ConnectionUnavailableError, PublishError, RejectedError, Sink
from srota.engine.types import java_hash

#: The property carrying an item's partition key (rendered from ``{{partitionKey}}``).
PARTITION_KEY = "_distribution.key"


def destination_option(index: int, option: str) -> str:
    """The property carrying destination ``index``'s rendered ``option`` (a template of its own)."""
    return f"_destination.{index}.{option}"
STRATEGIES = ("roundRobin", "partitioned", "broadcast")


class DistributedSink(Sink):
    """Publishes through ``destinations`` by ``strategy`` (see the module doc)."""

    type_name = "distribution"

    def __init__(self, destinations: Sequence[Sink], strategy: str, *, name: str = "",
                 dynamic: Sequence[Sequence[str]] = ()) -> None:
        """``dynamic[i]``: the options of destination ``i`` that are templates of its own."""
        # (no options of its own: each destination checked its own)
        super().__init__({}, name=name)
        if not destinations:
            raise ValueError("@distribution needs at least one @destination")
        by_name = {s.lower(): s for s in STRATEGIES}
        if strategy.lower() not in by_name:
            raise ValueError(f"@distribution strategy must be {', '.join(STRATEGIES)}, not '{strategy}'")
        self.destinations = list(destinations)
        self.strategy = by_name[strategy.lower()]
        self._next = 0  # roundRobin: the destination of the next event
        self._dynamic = [[(option, destination_option(i, option)) for option in (dynamic[i] if i < len(dynamic) else ())]
                         for i in range(len(self.destinations))]

    def _targets(self) -> Callable[[Mapping[str, Any]], Sequence[int]]:
        n = len(self.destinations)
        if self.strategy == "broadcast":
            everyone = tuple(range(n))
            return lambda props: everyone
        if self.strategy == "partitioned":
            def by_key(props: Mapping[str, Any]) -> Sequence[int]:
                h = java_hash(str(props.get(PARTITION_KEY)))
                signed = h - (1 << 32) if h >= 1 << 31 else h
                # Siddhi takes hashCode() % n and drops the event when that is negative (a
                # bug); here those keys go to |hashCode() % n|, the others where Siddhi sends them.
                return (abs(signed) % n,)
            return by_key

        def round_robin(props: Mapping[str, Any]) -> Sequence[int]:
            i = self._next
            self._next = (i + 1) % n
            return (i,)
        return round_robin

    async def connect(self) -> None:
        """Connect every destination."""
        await asyncio.gather(*(d.connect() for d in self.destinations))

    @property
    def connected(self) -> bool:
        return all(d.connected for d in self.destinations)

    async def publish(self, items: Sequence[tuple[Any, Mapping[str, Any]]]) -> None:
        """Send each item to its destination(s), each destination's items in order."""
        targets = self._targets()
        per: list[list[int]] = [[] for _ in self.destinations]
        for i, (_payload, props) in enumerate(items):
            for d in targets(props):
                per[d].append(i)
        first_unsent: int | None = None
        rejected: dict[int, str] = {}
        error: Exception | None = None
        for d, indexes in enumerate(per):
            if not indexes:
                continue
            own = self._dynamic[d]
            batch = [items[i] for i in indexes] if not own else \
                [(items[i][0], {**items[i][1], **{option: items[i][1].get(key) for option, key in own}})
                 for i in indexes]
            try:
                await self.destinations[d].publish(batch)
            except RejectedError as exc:
                rejected.update({indexes[k]: reason for k, reason in exc.rejected.items() if k < len(indexes)})
            except ConnectionUnavailableError as exc:
                unsent = indexes[min(exc.published, len(indexes) - 1)]
                first_unsent = unsent if first_unsent is None else min(first_unsent, unsent)
                error = exc
        if error is not None and first_unsent is not None:
            raise ConnectionUnavailableError(f"destination unavailable: {error}", published=first_unsent)
        if rejected:
            raise RejectedError(f"{len(rejected)} item(s) refused by a destination", rejected)

    async def flush(self) -> None:
        """Flush every destination; the failures of all are reported together."""
        failed = total = 0
        errors = []
        for d in self.destinations:
            try:
                await d.flush()
            except PublishError as exc:
                failed += exc.failed
                total += exc.total
                errors.append(str(exc))
        if errors:
            raise PublishError("; ".join(errors), failed, total)

    async def close(self) -> None:
        for d in self.destinations:
            await d.close()

    def state(self) -> dict[str, Any] | None:
        """Each destination's own state, in order (a kafka destination's sequence number), or
        None when none keeps any.  (Siddhi snapshots each destination's sink.)"""
        states = [d.state() for d in self.destinations]
        return {"destinations": states} if any(s is not None for s in states) else None

    def restore_state(self, state: dict[str, Any]) -> None:
        """Give each destination its part of :meth:`state`'s result."""
        states = state.get("destinations")
        if isinstance(states, list) and len(states) == len(self.destinations):
            for d, own in zip(self.destinations, states, strict=True):
                if isinstance(own, dict):
                    d.restore_state(own)
