"""Shared plumbing of the built-in extension namespaces: declaration and Siddhi's parameter check.

:func:`function`, :func:`aggregator` and :func:`stream_processor` register an extension with its
declared :class:`~srota.engine.registry.Param` list, overloads, return type, doc and examples (the
reference documentation is generated from these), and validate every call the way Siddhi's
``InputParameterValidator`` does before the builder runs: an overload must match the argument
count and types, and a parameter that is not ``dynamic`` must be a literal.  Errors raised here
carry no position; the planners add the line and column of the call.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from srota.engine.expression import ArgInfo
from srota.engine.registry import Extension, Kind, Param, extension, registry
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import AttrType, Constant, TimeConstant

REPEAT = "..."

STRING = (AttrType.STRING,)
INT = (AttrType.INT,)
LONG = (AttrType.LONG,)
BOOL = (AttrType.BOOL,)
OBJECT = (AttrType.OBJECT,)
INT_LONG = (AttrType.INT, AttrType.LONG)
PRIMITIVES = (AttrType.STRING, AttrType.INT, AttrType.LONG, AttrType.FLOAT, AttrType.DOUBLE, AttrType.BOOL)
ALL = PRIMITIVES + OBJECT


def err(message: str) -> SiddhiAppCreationError:
    """A creation error (the planner adds the call's line and column)."""
    return SiddhiAppCreationError(message)


def is_literal(info: ArgInfo) -> bool:
    """Whether the argument is a literal (Siddhi's ConstantExpressionExecutor)."""
    return info.constant and isinstance(info.node, (Constant, TimeConstant))


def _overloads(params: Sequence[Param], overloads: Sequence[Sequence[str]]) -> list[list[str]]:
    if overloads:
        return [list(o) for o in overloads]
    # Without declared overloads: the required parameters, then each longer optional prefix.
    names = [p.name for p in params if not p.repeat]
    required = sum(1 for p in params if not p.optional and not p.repeat)
    out = [names[:n] for n in range(required, len(names) + 1)]
    if params and params[-1].repeat:
        out.append(names + [params[-1].name, REPEAT])
    return out


def validate(qual: str, params: Sequence[Param], overloads: Sequence[Sequence[str]],
             infos: Sequence[ArgInfo]) -> list[Param]:
    """The parameters matched to ``infos`` (Siddhi's overload rules), or a creation error."""
    by_name = {p.name: p for p in params}
    n = len(infos)
    for names in _overloads(params, overloads):
        repeat = bool(names) and names[-1] == REPEAT
        if repeat:
            if n < len(names) - 1 or n == 0:
                continue
            matched = [by_name[names[i] if i < len(names) - 1 else names[-2]] for i in range(n)]
        else:
            if len(names) != n:
                continue
            matched = [by_name[x] for x in names]
        if all(info.type in p.types for p, info in zip(matched, infos, strict=True)):
            for i, (p, info) in enumerate(zip(matched, infos, strict=True)):
                if not p.dynamic and not is_literal(info):
                    raise err(f"'{qual}' expects input parameter '{p.name}' at position {i} to be a "
                              "constant, but found a dynamic attribute")
            return matched
    found = ", ".join(i.type.value for i in infos)
    shapes = "; ".join(
        "(" + ", ".join(x if x == REPEAT else f"{'|'.join(t.value for t in by_name[x].types)} {x}"
                        for x in names) + ")"
        for names in _overloads(params, overloads))
    raise err(f"'{qual}' has no parameter overload for ({found}); supported: {shapes or '()'}")


def _declare(kind: Kind, namespace: str, name: str, params: tuple[Param, ...], overloads: Any,
             doc: str, factory: Callable[..., Any], **meta: Any) -> Extension:
    return registry.register(Extension(kind, namespace, name, factory, params, doc,
                                       tuple(tuple(o) for o in overloads), dict(meta)))


def function(namespace: str, name: str, params: tuple[Param, ...] = (), *, returns: str | AttrType,
             doc: str, examples: tuple[tuple[str, str], ...] = (),
             overloads: tuple[tuple[str, ...], ...] = (),
             pure: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a function; the builder gets ``(infos, ctx)`` after validation and returns
    ``(return type, implementation)`` like the core functions' factories.  ``pure``: the result
    depends on the arguments alone (see :class:`~srota.engine.registry.Extension`)."""
    qual = f"{namespace}:{name}"

    def wrap(build: Callable[[list[ArgInfo], Any], Any]) -> Callable[..., Any]:
        def factory(infos: list[ArgInfo], ctx: Any) -> Any:
            validate(qual, params, overloads, infos)
            return build(infos, ctx)

        _declare(Kind.FUNCTION, namespace, name, params, overloads, doc, factory,
                 returns=_type_doc(returns), examples=examples, **({"pure": True} if pure else {}))
        return build

    return wrap


def aggregator(namespace: str, name: str, params: tuple[Param, ...] = (), *, returns: str | AttrType,
               doc: str, examples: tuple[tuple[str, str], ...] = (),
               overloads: tuple[tuple[str, ...], ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register an aggregator; the builder gets the validated infos and returns ``(type, state factory)``."""
    qual = f"{namespace}:{name}"

    def wrap(build: Callable[[list[ArgInfo]], Any]) -> Callable[..., Any]:
        def factory(infos: list[ArgInfo]) -> Any:
            validate(qual, params, overloads, infos)
            return build(infos)

        _declare(Kind.AGGREGATOR, namespace, name, params, overloads, doc, factory,
                 returns=_type_doc(returns), examples=examples)
        return build

    return wrap


def stream_processor(namespace: str, name: str, params: tuple[Param, ...] = (), *, returns: str,
                     doc: str, examples: tuple[tuple[str, str], ...] = (),
                     overloads: tuple[tuple[str, ...], ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a stream processor; the builder gets ``(infos, getters, attributes, ctx)``."""
    qual = f"{namespace}:{name}"

    def wrap(build: Callable[..., Any]) -> Callable[..., Any]:
        def factory(infos: list[ArgInfo], getters: list[Any], attributes: list[Any], ctx: Any) -> Any:
            validate(qual, params, overloads, infos)
            return build(infos, getters, attributes, ctx)

        _declare(Kind.STREAM_PROCESSOR, namespace, name, params, overloads, doc, factory,
                 returns=returns, examples=examples)
        return build

    return wrap


def window(namespace: str, name: str, params: tuple[Param, ...] = (), *, doc: str,
           examples: tuple[tuple[str, str], ...] = (),
           overloads: tuple[tuple[str, ...], ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a window (validated by the window planner against ``params``/``overloads``)."""
    return extension(Kind.WINDOW, name, namespace, params, doc, overloads, examples=examples,
                     returns="the input stream's attributes")


def _type_doc(t: str | AttrType) -> str:
    return t.value if isinstance(t, AttrType) else t


# ---------------------------------------------------------------------------- Java's toString
def java_double_str(v: float) -> str:
    """``Double.toString``: shortest round-trip digits, scientific below 1e-3 and from 1e7."""
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0.0" if str(v).startswith("-") else "0.0"
    return _java_digits(repr(v), abs(v))


def java_float_str(v: float) -> str:
    """``Float.toString`` of a 32-bit value: the shortest digits that round-trip in 32 bits."""
    from srota.engine.types import f32

    if v != v or v in (float("inf"), float("-inf")) or v == 0:
        return java_double_str(v)
    for digits in range(1, 10):
        text = f"{v:.{digits}g}"
        if f32(float(text)) == v:
            return _java_digits(repr(float(text)), abs(v))
    return _java_digits(repr(v), abs(v))


def _java_digits(text: str, mag: float) -> str:
    mantissa, _, exp = text.partition("e")
    sign = "-" if mantissa.startswith("-") else ""
    mantissa = mantissa.lstrip("-")
    digits = mantissa.replace(".", "")
    point = (mantissa.index(".") if "." in mantissa else len(mantissa)) + (int(exp) if exp else 0)
    lead = len(digits) - len(digits.lstrip("0"))
    digits = digits.lstrip("0")
    point -= lead
    digits = digits.rstrip("0") or "0"
    if 1e-3 <= mag < 1e7:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        whole = digits[:point].ljust(point, "0")
        frac = digits[point:] or "0"
        return f"{sign}{whole}.{frac}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{point - 1}"


def java_str(v: Any, type_: AttrType | None = None) -> str:
    """``String.valueOf(v)`` for Siddhi values (maps print as ``{k=v}``, lists as ``[a, b]``)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int) and type_ in (AttrType.FLOAT, AttrType.DOUBLE):
        v = float(v)  # a double attribute holding 100 prints as Java's 100.0
    if isinstance(v, float):
        return java_float_str(v) if type_ is AttrType.FLOAT else java_double_str(v)
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        return "{" + ", ".join(f"{java_str(k)}={java_str(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(java_str(x) for x in v) + "]"
    return str(v)


class ChunkProcessor:
    """A stream processor running ``fn(chunk) -> chunk``; ``state`` (if any) goes into snapshots."""

    __slots__ = ("next", "fn", "state")

    def __init__(self, fn: Callable[[list[Any]], list[Any]], state: Any = None) -> None:
        self.fn = fn
        self.state = state
        self.next: Callable[[list[Any]], None] = lambda chunk: None

    def process(self, chunk: list[Any]) -> None:
        out = self.fn(chunk)
        if out:
            self.next(out)


# ---------------------------------------------------------------------------- Java's HashMap order
def java_hash(key: Any) -> int:
    """``key.hashCode()`` as a 32-bit unsigned value (String, Integer/Long, Double, Boolean)."""
    if isinstance(key, str):
        data = key.encode("utf-16-be")
        h = 0
        for i in range(0, len(data), 2):
            h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
        return h
    if isinstance(key, bool):
        return 1231 if key else 1237
    if isinstance(key, int):
        if -(2 ** 31) <= key < 2 ** 31:
            return key & 0xFFFFFFFF
        v = key & 0xFFFFFFFFFFFFFFFF
        return (v ^ (v >> 32)) & 0xFFFFFFFF
    if isinstance(key, float):
        import struct

        bits = struct.unpack(">q", struct.pack(">d", key))[0] & 0xFFFFFFFFFFFFFFFF
        return (bits ^ (bits >> 32)) & 0xFFFFFFFF
    return hash(key) & 0xFFFFFFFF


def hashmap_keys(keys: Any) -> list[Any]:
    """The keys in the order a ``java.util.HashMap`` filled in this order iterates them."""
    keys = list(keys)
    cap = 16
    while len(keys) > cap * 0.75:
        cap *= 2

    def slot(i: int) -> tuple[int, int]:
        h = java_hash(keys[i])
        return ((h ^ (h >> 16)) & (cap - 1), i)

    return [keys[i] for i in sorted(range(len(keys)), key=slot)]


def hash_order(value: Any) -> Any:
    """``value`` with every map's keys in Java ``HashMap`` iteration order (recursively)."""
    if isinstance(value, dict):
        return {k: hash_order(value[k]) for k in hashmap_keys(value)}
    if isinstance(value, list):
        return [hash_order(v) for v in value]
    return value
