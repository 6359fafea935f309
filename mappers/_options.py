"""Option checking for mappers: the engine's one implementation (see :mod:`engine.options`),
and what every mapper factory starts with (:func:`mapper_options`)."""
from __future__ import annotations

from typing import Any

from srota.engine.options import annotation_options, creation_error, resolve_options
from srota.engine.registry import Param
from srota.grammar.model import Annotation

__all__ = ["annotation_options", "creation_error", "mapper_options", "mapper_where", "resolve_options"]


def mapper_where(map_type: str, kind: str, stream_id: str) -> str:
    """How errors name a mapper: ``"json source mapper of stream 'In'"``."""
    return f"{map_type} {kind} mapper of stream '{stream_id}'" if stream_id else f"{map_type} {kind} mapper"


def mapper_options(map_type: str, kind: str, params: tuple[Param, ...], annotation: Annotation | None,
                   stream_id: str) -> tuple[str, Any, dict[str, Any]]:
    """``(where, pos, options)`` of a ``@map``: its name for errors, its position and its options
    checked against ``params`` (unknown, missing or mistyped ones refuse the app)."""
    where = mapper_where(map_type, kind, stream_id)
    pos = annotation.pos if annotation is not None else None
    return where, pos, resolve_options(params, annotation_options(annotation), where, pos)
