"""Sink-side glue: payloads together with their per-event transport properties."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from srota.mappers._base import MappingError, SinkMapper
from srota.mappers._template import Template

#: Where :func:`map_rows_for_sink` puts what did not map: (row indexes, the mapper's error).
Failures = list[tuple[list[int], MappingError]]


def map_for_sink(mapper: SinkMapper, rows: Sequence[Sequence[Any]],
                 templates: Mapping[str, Template] | None = None,
                 chunk_sizes: Sequence[int] | None = None,
                 failed: Failures | None = None) -> list[tuple[Any, dict[str, str]]]:
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
    the properties of the first event.

    A :class:`MappingError` from the mapper is raised, or, given a ``failed`` list, recorded
    there with the rows of the message that failed, and the other messages are still made:
    as Siddhi drops only the message it could not map (a chunk for a grouping mapper, one
    event otherwise).
    """
    return map_rows_for_sink(mapper, rows, templates, chunk_sizes, failed)[0]


def map_rows_for_sink(mapper: SinkMapper, rows: Sequence[Sequence[Any]],
                      templates: Mapping[str, Template] | None = None,
                      chunk_sizes: Sequence[int] | None = None,
                      failed: Failures | None = None,
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
            _map_chunk(mapper, rows[start:start + size], templates, start, out, carried, failed)
        start += size
    return out, carried


def _map_chunk(mapper: SinkMapper, rows: Sequence[Sequence[Any]], templates: Mapping[str, Template] | None,
               offset: int, out: list[tuple[Any, dict[str, str]]], carried: list[list[int]],
               failed: Failures | None) -> None:
    """Map one chunk (its first row is row ``offset`` of the batch) onto ``out``/``carried``."""
    preamble = mapper.preamble()
    if not templates:
        out.extend((p, {}) for p in preamble)
        carried.extend([] for _ in preamble)
        _map_rows(mapper, rows, [{}] * len(rows), list(range(offset, offset + len(rows))), False,
                  out, carried, failed)
        return
    items = list(templates.items())
    props = [{k: t.render(r) for k, t in items} for r in rows]
    out.extend((p, dict(props[0])) for p in preamble)
    carried.extend([] for _ in preamble)
    if not mapper.groups_events or len(rows) == 1:
        _map_rows(mapper, rows, props, list(range(offset, offset + len(rows))), False, out, carried, failed)
        return
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, p in enumerate(props):
        groups.setdefault(tuple(p.values()), []).append(i)
    for indexes in groups.values():
        _map_rows(mapper, [rows[i] for i in indexes], [props[indexes[0]]] * len(indexes),
                  [offset + i for i in indexes], True, out, carried, failed)


def _map_rows(mapper: SinkMapper, rows: Sequence[Sequence[Any]], props: list[dict[str, str]], indexes: list[int],
              group: bool, out: list[tuple[Any, dict[str, str]]], carried: list[list[int]],
              failed: Failures | None) -> None:
    """Map ``rows`` (batch rows ``indexes``, each with its properties) with ``map`` or
    ``map_group``; what fails goes to ``failed`` when there is one: the whole group where the
    mapper writes it as one message, else the events that fail, one by one."""
    try:
        payloads = mapper.map_group(rows) if group else mapper.map(rows)
    except MappingError as exc:
        if failed is None:
            raise
        if mapper.groups_events or len(rows) == 1:
            failed.append((list(indexes), exc))
            return
        for i in range(len(rows)):  # one message per event: only the events that fail are lost
            _map_rows(mapper, rows[i:i + 1], props[i:i + 1], indexes[i:i + 1], group, out, carried, failed)
        return
    if len(payloads) == len(rows):
        out.extend((payload, dict(p)) for payload, p in zip(payloads, props, strict=True))
        carried.extend([i] for i in indexes)
    else:  # one array (or an unknown split: each payload carries all the rows)
        out.extend((payload, dict(props[0]) if props else {}) for payload in payloads)
        carried.extend(list(indexes) for _ in payloads)
