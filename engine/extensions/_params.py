"""Declaring built-in extension functions and aggregators with Siddhi's parameter check.

:func:`function` and :func:`aggregator` register an extension together with its declared
:class:`~srota.engine.registry.Param` list, parameter overloads, return type, doc and examples
(one place, so the reference documentation is generated from it), and check every call the way
Siddhi's ``InputParameterValidator`` does before the builder runs: some overload must match the
argument count and types, and a parameter that is not ``dynamic`` must be a literal.  Errors
raised here carry no position; the expression compiler and the selector add the line and column
of the call.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from srota.engine.expression import ArgInfo
from srota.engine.registry import Extension, Kind, Param, registry
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import AttrType, Constant, TimeConstant

NUMBERS = (AttrType.INT, AttrType.LONG, AttrType.FLOAT, AttrType.DOUBLE)
REALS = (AttrType.FLOAT, AttrType.DOUBLE)
INTEGERS = (AttrType.INT, AttrType.LONG)
STRING = (AttrType.STRING,)
INT = (AttrType.INT,)
LONG = (AttrType.LONG,)
DOUBLE = (AttrType.DOUBLE,)

Examples = tuple[tuple[str, str], ...]


def creation_error(message: str) -> SiddhiAppCreationError:
    """A creation error (the caller's planner adds the call's line and column)."""
    return SiddhiAppCreationError(message)


def is_literal(info: ArgInfo) -> bool:
    """Whether the argument is a literal (Siddhi's ``ConstantExpressionExecutor``)."""
    return info.constant and isinstance(info.node, (Constant, TimeConstant))


def _shapes(params: Sequence[Param], overloads: Sequence[Sequence[str]]) -> list[list[str]]:
    if overloads:
        return [list(o) for o in overloads]
    names = [p.name for p in params]
    required = sum(1 for p in params if not p.optional)
    return [names[:n] for n in range(required, len(names) + 1)]


def validate(qual: str, params: Sequence[Param], overloads: Sequence[Sequence[str]],
             infos: Sequence[ArgInfo]) -> list[Param]:
    """The parameters matched to ``infos`` by Siddhi's overload rules, or a creation error."""
    by_name = {p.name: p for p in params}
    shapes = _shapes(params, overloads)
    for names in shapes:
        if len(names) != len(infos):
            continue
        matched = [by_name[n] for n in names]
        if all(info.type in p.types for p, info in zip(matched, infos, strict=True)):
            for i, (p, info) in enumerate(zip(matched, infos, strict=True)):
                if not p.dynamic and not is_literal(info):
                    raise creation_error(f"'{qual}' expects parameter '{p.name}' at position {i} to be "
                                         "a constant, but found a dynamic attribute")
            return matched
    found = ", ".join(i.type.value for i in infos)
    supported = "; ".join(
        "(" + ", ".join(f"{'|'.join(t.value for t in by_name[n].types)} {n}" for n in names) + ")"
        for names in shapes)
    raise creation_error(f"'{qual}' has no parameter overload for ({found}); supported: {supported}")


def _register(kind: Kind, namespace: str, name: str, params: tuple[Param, ...],
              overloads: tuple[tuple[str, ...], ...], doc: str, factory: Callable[..., Any],
              returns: str, examples: Examples) -> None:
    registry.register(Extension(kind, namespace, name, factory, params, doc, overloads,
                                {"returns": returns, "examples": examples}))


def _type_doc(t: str | AttrType | tuple[AttrType, ...]) -> str:
    if isinstance(t, AttrType):
        return t.value
    if isinstance(t, tuple):
        return "|".join(x.value for x in t)
    return t


def function(namespace: str, name: str, params: tuple[Param, ...] = (), *,
             returns: str | AttrType | tuple[AttrType, ...], doc: str, examples: Examples = (),
             overloads: tuple[tuple[str, ...], ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a function; the builder gets ``(infos, ctx)`` once the call is validated and returns
    ``(return type, implementation)`` like the core functions' factories (a callable or a template)."""
    qual = f"{namespace}:{name}"

    def wrap(build: Callable[[list[ArgInfo], Any], Any]) -> Callable[..., Any]:
        def factory(infos: list[ArgInfo], ctx: Any) -> Any:
            validate(qual, params, overloads, infos)
            return build(infos, ctx)

        _register(Kind.FUNCTION, namespace, name, params, overloads, doc, factory, _type_doc(returns), examples)
        return build

    return wrap


def aggregator(namespace: str, name: str, params: tuple[Param, ...] = (), *,
               returns: str | AttrType | tuple[AttrType, ...], doc: str, examples: Examples = (),
               overloads: tuple[tuple[str, ...], ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register an aggregator; the builder gets the validated infos and returns ``(type, state factory)``."""
    qual = f"{namespace}:{name}"

    def wrap(build: Callable[[list[ArgInfo]], Any]) -> Callable[..., Any]:
        def factory(infos: list[ArgInfo]) -> Any:
            validate(qual, params, overloads, infos)
            return build(infos)

        _register(Kind.AGGREGATOR, namespace, name, params, overloads, doc, factory, _type_doc(returns), examples)
        return build

    return wrap
