"""Sink-side glue: payloads together with their per-event transport properties."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from srota.mappers._base import SinkMapper
from srota.mappers._template import Template


def map_for_sink(mapper: SinkMapper, rows: Sequence[Sequence[Any]],
                 templates: Mapping[str, Template] | None = None,
                 chunk_sizes: Sequence[int] | None = None) -> list[tuple[Any, dict[str, str]]]:
    """``(payload, properties)`` pairs ready for ``Sink.publish``.

    ``rows`` are one output chunk of the stream, or several chunks back to back with their
    lengths in ``chunk_sizes``: each chunk is mapped on its own, because the message shape
    depends on it (Siddhi's sink mappers get a single event or an event array, and the json
    mapper writes an object or an array).

    ``templates`` are the dynamic sink options (:func:`option_templates`); each event's
    rendered values become its properties (``{'topic': 'alerts-eu', 'key': 'd1'}``).  A
    grouping mapper is given a multi-event chunk group by group (rows with equal rendered
    options, in first-seen order), as Siddhi's group determiner does, so one payload never
    mixes topics.  A mapper's :meth:`~SinkMapper.preamble` (the CSV header) goes first, with
    the properties of the first event.  Raises :class:`MappingError` from the mapper.
    """
    if not rows:
        return []
    if chunk_sizes is not None and len(chunk_sizes) > 1 and mapper.groups_events:
        out: list[tuple[Any, dict[str, str]]] = []
        start = 0
        for size in chunk_sizes:
            if size:
                out.extend(_map_chunk(mapper, rows[start:start + size], templates))
            start += size
        return out
    return _map_chunk(mapper, rows, templates)


def _map_chunk(mapper: SinkMapper, rows: Sequence[Sequence[Any]],
               templates: Mapping[str, Template] | None) -> list[tuple[Any, dict[str, str]]]:
    preamble = mapper.preamble()
    if not templates:
        out = [(p, {}) for p in preamble]
        out.extend((p, {}) for p in mapper.map(rows))
        return out
    items = list(templates.items())
    props = [{k: t.render(r) for k, t in items} for r in rows]
    out = [(p, dict(props[0])) for p in preamble]
    if not mapper.groups_events or len(rows) == 1:
        payloads = mapper.map(rows)
        out.extend(zip(payloads, props, strict=True))
        return out
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, p in enumerate(props):
        groups.setdefault(tuple(p.values()), []).append(i)
    for indexes in groups.values():
        group_props = props[indexes[0]]
        for payload in mapper.map_group([rows[i] for i in indexes]):
            out.append((payload, dict(group_props)))
    return out
