"""Sink-side glue: payloads together with their per-event transport properties."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from srota.mappers._base import SinkMapper
from srota.mappers._template import Template


def map_for_sink(mapper: SinkMapper, rows: Sequence[Sequence[Any]],
                 templates: Mapping[str, Template] | None = None) -> list[tuple[Any, dict[str, str]]]:
    """``(payload, properties)`` pairs ready for ``Sink.publish``.

    ``templates`` are the dynamic sink options (:func:`option_templates`); each event's
    rendered values become its properties (``{'topic': 'alerts-eu', 'key': 'd1'}``).  A
    grouping mapper is given the rows group by group (rows with equal rendered options, in
    first-seen order), as Siddhi's group determiner does, so one payload never mixes topics.
    Raises :class:`MappingError` from the mapper.
    """
    if not rows:
        return []
    if not templates:
        return [(p, {}) for p in mapper.map(rows)]
    items = list(templates.items())
    props = [{k: t.render(r) for k, t in items} for r in rows]
    if not mapper.groups_events:
        payloads = mapper.map(rows)
        return list(zip(payloads, props, strict=True))
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, p in enumerate(props):
        groups.setdefault(tuple(p.values()), []).append(i)
    out: list[tuple[Any, dict[str, str]]] = []
    for indexes in groups.values():
        group_props = props[indexes[0]]
        for payload in mapper.map([rows[i] for i in indexes]):
            out.append((payload, dict(group_props)))
    return out
