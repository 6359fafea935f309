"""Resolve extension options (``@source``, ``@sink``, ``@map``, ``@store`` ...) against the
parameters the extension declares in the registry (DESIGN.md decision 8).

Option values arrive as strings (from SiddhiQL annotations) or as native values (from the
service's YAML).  Either way they are checked once, when the extension is created: unknown
names, missing required options and values of the wrong type are creation errors carrying
the annotation's line and column (DESIGN.md decision 3).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from srota.engine.registry import Param
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Annotation, AttrType, Pos

_TRUE = frozenset({"true"})
_FALSE = frozenset({"false"})


def creation_error(message: str, pos: Pos | None) -> SiddhiAppCreationError:
    """A :class:`SiddhiAppCreationError` at ``pos`` (which may be unknown)."""
    return SiddhiAppCreationError(message, pos.line if pos else None, pos.column if pos else None)


def annotation_options(annotation: Annotation | None, skip: Iterable[str] = ("type",)) -> dict[str, str]:
    """The ``key='value'`` elements of an annotation, without ``skip`` keys (lower-cased)."""
    if annotation is None:
        return {}
    skipped = {s.lower() for s in skip}
    return {el.key: el.value for el in annotation.elements
            if el.key is not None and el.key.lower() not in skipped}


def _parse(value: Any, param: Param, where: str, pos: Pos | None) -> Any:
    kind = param.types[0] if param.types else AttrType.STRING
    if kind is AttrType.STRING or kind is AttrType.OBJECT:
        return value if isinstance(value, str) or kind is AttrType.OBJECT else str(value)
    if kind is AttrType.BOOL:
        if isinstance(value, bool):
            return value
        low = str(value).strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise creation_error(f"{where}: option '{param.name}' must be 'true' or 'false', not {value!r}", pos)
    try:
        if kind in (AttrType.INT, AttrType.LONG):
            if isinstance(value, bool) or isinstance(value, float):
                raise ValueError
            return int(str(value).strip())
        return float(str(value).strip())
    except ValueError:
        raise creation_error(
            f"{where}: option '{param.name}' must be of type {kind.value}, not {value!r}", pos) from None


def resolve_options(params: tuple[Param, ...], given: Mapping[str, Any], where: str,
                    pos: Pos | None = None, dynamic_ok: bool = False) -> dict[str, Any]:
    """Typed option values by declared parameter name.

    ``where`` names the extension in error messages (``"json source mapper"``).  Values of
    ``dynamic`` parameters that contain a ``{{attribute}}`` template are kept as strings when
    ``dynamic_ok`` is true (the host renders them per event).
    """
    by_name = {p.name.lower(): p for p in params}
    out: dict[str, Any] = {}
    for key, value in given.items():
        param = by_name.get(key.lower())
        if param is None:
            allowed = ", ".join(sorted(p.name for p in params)) or "none"
            raise creation_error(f"{where}: unknown option '{key}' (allowed: {allowed})", pos)
        if isinstance(value, str) and "{{" in value:
            if not (dynamic_ok and param.dynamic):
                raise creation_error(f"{where}: option '{param.name}' cannot be an {{{{attribute}}}} template",
                                     pos)
            out[param.name] = value
        else:
            out[param.name] = _parse(value, param, where, pos)
    for param in params:
        if param.name not in out:
            if not param.optional:
                raise creation_error(f"{where}: option '{param.name}' is required", pos)
            out[param.name] = param.default
    return out
