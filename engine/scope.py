"""Scopes: where the attributes an expression names are read from.

Generated functions take ``e`` (an :class:`~engine.event.Event`, or a
:class:`~engine.event.StateEvent` for joins and patterns).  Each scope says which local names
its ``prologue`` binds and which source reads a given attribute.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from srota.engine.expression import error_at
from srota.grammar.errors import did_you_mean
from srota.grammar.model import Attribute, AttrType, Expression, IsNullStream, Variable


@dataclass(frozen=True)
class Column:
    """One readable attribute: its name, type, and the source that reads it."""

    name: str
    type: AttrType
    code: str


class StreamScope:
    """Attributes of a single stream; data tuple bound to ``d`` (``d = e.data``).

    ``names`` are the identifiers that may qualify attributes: the stream id and its alias.
    """

    prologue: tuple[str, ...] = ("d = e.data",)

    def __init__(self, stream_id: str, attributes: Sequence[Attribute], names: Sequence[str] = (),
                 data: str = "d") -> None:
        self.stream_id = stream_id
        self.attributes = tuple(attributes)
        self.names = {stream_id, *[n for n in names if n]}
        self.data = data
        self._index = {a.name: i for i, a in enumerate(self.attributes)}
        if data != "d":
            self.prologue = (f"{data} = e.data",)

    def index(self, name: str) -> int | None:
        return self._index.get(name)

    def resolve(self, var: Variable) -> tuple[str, AttrType]:
        if var.stream_id is not None and var.stream_id not in self.names:
            raise error_at(f"'{var.stream_id}.{var.attribute}': no stream or alias '{var.stream_id}' "
                           f"here (expected {', '.join(sorted(self.names))})", var)
        if var.stream_index is not None:
            raise error_at(f"'{var.stream_id}[{var.stream_index}]' indexes are only allowed in patterns", var)
        i = self._index.get(var.attribute)
        if i is None:
            raise error_at(f"stream '{self.stream_id}' has no attribute '{var.attribute}'"
                           f"{did_you_mean(var.attribute, self._index)}", var)
        return f"{self.data}[{i}]", self.attributes[i].type

    def resolve_stream(self, node: IsNullStream) -> str:
        raise error_at(f"'{node.stream_id} is null' needs a pattern or join event reference", node)

    def timestamp(self, node: Expression | None) -> str:
        if node is not None:
            raise error_at("eventTimestamp() takes an event reference only in patterns and joins", node)
        return "e.timestamp"

    def columns(self) -> list[Column]:
        """Every attribute (``select *``)."""
        return [Column(a.name, a.type, f"{self.data}[{i}]") for i, a in enumerate(self.attributes)]


class OutputScope:
    """For ``having`` and ``order by``: output attributes (``o[i]``) first, then the input scope."""

    def __init__(self, names: Sequence[str], types: Sequence[AttrType], inner: object) -> None:
        self._index = {n: i for i, n in enumerate(names)}
        self._types = list(types)
        self.inner = inner
        self.prologue: tuple[str, ...] = tuple(getattr(inner, "prologue", ()))

    def resolve(self, var: Variable) -> tuple[str, AttrType]:
        if var.stream_id is None and var.stream_index is None:
            i = self._index.get(var.attribute)
            if i is not None:
                return f"o[{i}]", self._types[i]
        return self.inner.resolve(var)  # type: ignore[attr-defined]

    def resolve_stream(self, node: IsNullStream) -> str:
        return self.inner.resolve_stream(node)  # type: ignore[attr-defined]

    def timestamp(self, node: Expression | None) -> str:
        return self.inner.timestamp(node)  # type: ignore[attr-defined]

    def is_stream_reference(self, name: str) -> bool:
        probe = getattr(self.inner, "is_stream_reference", None)
        return bool(probe and probe(name))
