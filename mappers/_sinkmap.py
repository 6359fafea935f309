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
    return map_rows_for_sink(mapper, rows, templates, chunk_sizes)[0]


def map_rows_for_sink(mapper: SinkMapper, rows: Sequence[Sequence[Any]],
                      templates: Mapping[str, Template] | None = None,
                      chunk_sizes: Sequence[int] | None = None
                      ) -> tuple[list[tuple[Any, dict[str, str]]], list[list[int]]]:
    """:func:`map_for_sink`, and for each item the indexes of the rows it carries (none for a
    preamble; all of a chunk for a grouping mapper's array): so the host routes the rows of
    an item the transport refused, whatever the grouping."""
    if not rows:
        return [], []
    sizes = chunk_sizes if chunk_sizes is not None and len(chunk_sizes) > 1 and mapper.groups_events \
        else [len(rows)]
    out: list[tuple[Any, dict[str, str]]] = []
    carried: list[list[int]] = []
    start = 0
    for size in sizes:
        if size:
            _map_chunk(mapper, rows[start:start + size], templates, start, out, carried)
        start += size
    return out, carried


def _map_chunk(mapper: SinkMapper, rows: Sequence[Sequence[Any]], templates: Mapping[str, Template] | None,
               offset: int, out: list[tuple[Any, dict[str, str]]], carried: list[list[int]]) -> None:
    """Map one chunk (its first row is row ``offset`` of the batch) onto ``out``/``carried``."""
    preamble = mapper.preamble()
    if not templates:
        out.extend((p, {}) for p in preamble)
        carried.extend([] for _ in preamble)
        payloads = mapper.map(rows)
        out.extend((p, {}) for p in payloads)
        carried.extend(_carried(len(payloads), list(range(offset, offset + len(rows)))))
        return
    items = list(templates.items())
    props = [{k: t.render(r) for k, t in items} for r in rows]
    out.extend((p, dict(props[0])) for p in preamble)
    carried.extend([] for _ in preamble)
    if not mapper.groups_events or len(rows) == 1:
        payloads = mapper.map(rows)
        out.extend(zip(payloads, props, strict=True))
        carried.extend([offset + i] for i in range(len(rows)))
        return
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, p in enumerate(props):
        groups.setdefault(tuple(p.values()), []).append(i)
    for indexes in groups.values():
        group_props = props[indexes[0]]
        payloads = mapper.map_group([rows[i] for i in indexes])
        out.extend((payload, dict(group_props)) for payload in payloads)
        carried.extend(_carried(len(payloads), [offset + i for i in indexes]))


def _carried(payloads: int, rows: list[int]) -> list[list[int]]:
    """The rows each of ``payloads`` payloads carries: one each, or all in one (an array)."""
    if payloads == len(rows):
        return [[r] for r in rows]
    return [list(rows) for _ in range(payloads)]  # (one array; or an unknown split: all of them)
