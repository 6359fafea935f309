"""Shared plumbing of the built-in extension namespaces: declaration and Siddhi's parameter check.

:func:`function`, :func:`aggregator` and :func:`stream_processor` register an extension with its
declared :class:`~srota.engine.registry.Param` list, overloads, return type, doc and examples (the
reference documentation is generated from these), and validate every call the way Siddhi's
``InputParameterValidator`` does before the builder runs: an overload must match the argument
count and types, and a parameter that is not ``dynamic`` must be a literal.  Errors raised here
carry no position; the planners add the line and column of the call.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from srota.engine import types as _types
from srota.engine.aggregators import AggregatorState
from srota.engine.event import Event
from srota.engine.expression import ArgInfo
from srota.engine.registry import Extension, Kind, Param, extension, registry
from srota.engine.types import hashmap_capacity, hashmap_keys, hashmap_table_for, java_float32_str
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Attribute, AttrType, Constant, TimeConstant

REPEAT = "..."
_F = TypeVar("_F", bound=Callable[..., Any])

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


def held_as_java_float(value: Any) -> Any:
    """A float attribute's value as a map, a list or a JSON document holds it.

    Java keeps a ``Float`` there, which prints with its own shortest digits (``111.11``,
    ``1.0E-5``); Srota's values are Python floats, which print as doubles
    (``111.11000061035156``).  The double of the float's shortest digits prints as Java prints
    the float, and is the same 32-bit value again where a cast takes it back to a float.
    """
    return float(java_float32_str(value)) if isinstance(value, float) else value  # ("Infinity", "NaN" parse too)


class JavaLong(int):
    """A long value as a list or a map holds it: Java keeps a ``Long`` there.

    Srota's int and long values are both Python ints, but a Java container keeps each value's
    class, and ``equals`` tells ``Integer`` 1 from ``Long`` 1 (``List.contains``, ``Map.get``
    find one and not the other).  A ``JavaLong`` prints, computes and compares with ``==`` as
    the int it is; only :func:`java_equals` tells it apart.  (A float has no such mark: a
    subclass of ``float`` is not JSON that orjson writes, so ``Float`` 1.5 and ``Double`` 1.5
    stay equal.)
    """

    __slots__ = ()


def held_as_java_long(value: Any) -> Any:
    """A long attribute's value as a map or a list holds it (a :class:`JavaLong`)."""
    return JavaLong(value) if value.__class__ is int else value


_HOLD = {AttrType.FLOAT: held_as_java_float, AttrType.LONG: held_as_java_long}
"""How a container holds a value of each type that Java keeps apart from its look-alike."""


def _holding(infos: list[ArgInfo], impl: Callable[..., Any], kinds: tuple[AttrType, ...]) -> Callable[..., Any]:
    held = [(i, _HOLD[info.type]) for i, info in enumerate(infos) if info.type in kinds]
    if not held:
        return impl

    def call(*args: Any) -> Any:
        values = list(args)
        for i, hold in held:
            if i < len(values):
                values[i] = hold(values[i])
        return impl(*values)

    return call


def holding_floats(infos: list[ArgInfo], impl: Callable[..., Any]) -> Callable[..., Any]:
    """``impl``, with each argument of type float held as Java holds it (held_as_java_float):
    for the functions that put their arguments into a JSON document."""
    return _holding(infos, impl, (AttrType.FLOAT,))


def holding(infos: list[ArgInfo], impl: Callable[..., Any]) -> Callable[..., Any]:
    """``impl``, with each argument of type float or long held as a Java list or map holds it
    (:func:`held_as_java_float`, :func:`held_as_java_long`): for the functions that put their
    arguments into a container or look them up in one, so that what goes in and what is looked
    for are alike."""
    return _holding(infos, impl, tuple(_HOLD))


def holding_each(kinds: Sequence[AttrType], value: Any) -> Any:
    """An aggregator's argument held as a container holds it: the one value (``kinds`` has one
    type) or the tuple of the arguments' values (a type per argument)."""
    if len(kinds) == 1:
        hold = _HOLD.get(kinds[0])
        return value if hold is None else hold(value)
    return tuple(v if (hold := _HOLD.get(k)) is None else hold(v) for k, v in zip(kinds, value, strict=True))


def needs_holding(infos: Sequence[ArgInfo]) -> bool:
    """Whether some argument is of a type a container holds differently (see :func:`holding`)."""
    return any(info.type in _HOLD for info in infos)


# ---------------------------------------------------------------------------- Java's equals
def java_equals(a: Any, b: Any) -> bool:
    """Java's ``a.equals(b)`` for the values lists and maps hold.

    Values of different classes are never equal (``Integer`` 1, ``Long`` 1 (:class:`JavaLong`),
    ``Double`` 1.0 and ``true`` are four values, where Python's ``==`` takes them for one);
    a double equals another of the same bits (``NaN`` equals ``NaN``, ``0.0`` is not ``-0.0``);
    lists and maps are equal when their members are (``AbstractMap.equals`` asks nothing of the
    map's class: a :class:`JavaHashMap` equals a plain dict of the same entries).
    """
    if a.__class__ is not b.__class__:
        if isinstance(a, dict) and isinstance(b, dict):
            return _maps_equal(a, b)
        return False
    if a.__class__ is float:
        if a == b:
            return a != 0 or math.copysign(1.0, a) == math.copysign(1.0, b)
        return a != a and b != b
    if a.__class__ is list:
        return len(a) == len(b) and all(map(java_equals, a, b))
    if isinstance(a, dict):
        return _maps_equal(a, b)
    return bool(a == b)


def _maps_equal(a: dict[Any, Any], b: dict[Any, Any]) -> bool:
    return len(a) == len(b) and all(java_has_key(b, k) and java_equals(v, b[k]) for k, v in a.items())


def java_in(value: Any, values: Iterable[Any]) -> bool:
    """Java's ``values.contains(value)`` (see :func:`java_equals`)."""
    if value.__class__ is str:  # (a string equals only a string, as in Python)
        return value in values
    return any(java_equals(value, v) for v in values)


def java_index(values: Sequence[Any], value: Any, indices: Iterable[int] | None = None) -> int:
    """Java's ``values.indexOf(value)``: the first index, in the order of ``indices`` (default:
    from the start), whose value equals ``value`` (:func:`java_equals`); -1 if none does."""
    for i in range(len(values)) if indices is None else indices:
        if java_equals(value, values[i]):
            return i
    return -1


_ABSENT = object()


class _KeyProbe:
    """Finds, in one dict look-up, the key a dict holds that Python takes for ``key``: the dict
    compares each candidate key with the probe, and the probe keeps the one that is equal."""

    __slots__ = ("key", "found")

    def __init__(self, key: Any) -> None:
        self.key = key
        self.found: Any = _ABSENT

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        if other == self.key:
            self.found = other
            return True
        return False


class JavaHashMap(dict[Any, Any]):
    """A map as a Java ``HashMap`` holds it: a dict that also knows its table length.

    A ``HashMap`` iterates its keys slot by slot of a table that grows with the entries and
    never shrinks; a copy (``new HashMap<>(m)``) gets a table sized to the entries it copies.
    So two maps with the same entries may iterate them in other orders, and Siddhi's printed
    maps, ``map:keys`` and ``map:values`` follow that order (:func:`hashmap_keys` reads
    ``table``).  ``table`` is 0 until the first entry makes a table of 16.
    """

    __slots__ = ("table",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.table = hashmap_capacity(len(self)) if self else 0


def java_map_copy(m: dict[Any, Any]) -> JavaHashMap:
    """``new HashMap<>(m)``: ``m``'s entries in ``m``'s order, in a table sized for them."""
    copy = JavaHashMap()
    for k in hashmap_keys(m):
        dict.__setitem__(copy, k, m[k])
    copy.table = hashmap_table_for(len(copy)) if copy else 0
    return copy


def java_map_put_all(to: dict[Any, Any], frm: dict[Any, Any]) -> None:
    """``to.putAll(frm)``: a map with no table yet gets one sized for ``frm`` at once."""
    if isinstance(to, JavaHashMap) and frm:
        if not to.table:
            to.table = hashmap_table_for(len(frm))
        elif len(frm) > to.table * 3 // 4:
            to.table *= 2  # (HashMap.putMapEntries resizes once before the puts)
    for k in hashmap_keys(frm):
        to[k] = frm[k]
    java_map_grown(to)


def java_map_grown(m: dict[Any, Any]) -> None:
    """Note that entries may have been put into ``m`` (its table grows, never shrinks)."""
    if isinstance(m, JavaHashMap) and m:
        m.table = hashmap_capacity(len(m), m.table or 16)


def java_has_key(m: dict[Any, Any], key: Any) -> bool:
    """Java's ``m.containsKey(key)``: Python's dict finds one key for 1, 1L, 1.0 and true, and
    Java only the key of ``key``'s own class (:func:`java_equals`)."""
    if key.__class__ is str:
        return key in m
    probe = _KeyProbe(key)
    return probe in m and java_equals(probe.found, key)


def plain_function(namespace: str, name: str, params: tuple[Param, ...] = (), *, returns: AttrType, doc: str,
                   examples: tuple[tuple[str, str], ...] = (),
                   overloads: tuple[tuple[str, ...], ...] = (), holds: bool = False) -> Callable[[_F], _F]:
    """Register the decorated callable as the implementation of every call of a function that
    needs no set-up per call (a fixed return type, nothing read from the arguments' kinds).
    The callable itself is what generated code calls per event, so it adds no indirection.
    ``holds``: the function puts its arguments into a container or looks them up in one (see
    :func:`holding`)."""
    def wrap(impl: _F) -> _F:
        def build(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, _F]:
            if holds:
                return returns, holding(infos, impl)  # type: ignore[return-value]
            return returns, impl

        function(namespace, name, params, returns=returns, doc=doc, examples=examples, overloads=overloads)(build)
        return impl

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
#: ``Double.toString`` and ``Float.toString`` (of a 32-bit value), as JDK 17 writes them
java_double_str = _types.java_double_str
java_float_str = _types.java_float32_str


def java_str(v: Any, type_: AttrType | None = None) -> str:
    """``String.valueOf(v)`` for Siddhi values (maps print as ``{k=v}`` in Java ``HashMap`` order,
    lists as ``[a, b]``, sets as ``[a, b]`` in Java ``HashSet`` order)."""
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
    if isinstance(v, dict):  # (a java.util.HashMap: its keys in their hash order)
        return "{" + ", ".join(f"{java_str(k)}={java_str(v[k])}" for k in hashmap_keys(v)) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(java_str(x) for x in v) + "]"
    if isinstance(v, (set, frozenset)):
        element_type = AttrType.FLOAT if getattr(v, "float32", False) else None  # (Float.toString)
        return "[" + ", ".join(java_str(x, element_type) for x in java_set_order(v)) + "]"
    return str(v)


def java_set_order(v: set[Any] | frozenset[Any]) -> Sequence[Any]:
    """The elements of a set as a ``java.util.HashSet`` of them iterates: in their hash order,
    or as the set says (``java_order``: ``unionSet``'s, which knows its table and -0.0 from 0.0)."""
    order = getattr(v, "java_order", None)
    return order if order is not None else hashmap_keys(v)


def json_writer(quote: Callable[[str], str], real: Callable[[float], str] = java_double_str, *,
                sequences: tuple[type[Iterable[Any]], ...] = (list, tuple),
                keys: Callable[[dict[Any, Any]], Iterable[Any]] | None = None,
                real32: Callable[[float], str] | None = None) -> Callable[[Any], str]:
    """A compact JSON writer in the manner of one Java library (Gson, json-smart, org.json differ
    only in these): ``quote`` writes a string or a key, ``real`` a float, ``keys`` orders a map's
    keys (default: as stored), ``sequences`` are the types written as arrays; any other value is
    written as its quoted ``str``. A key that is no string is written as Java's
    ``String.valueOf`` writes it (``1.0E10``, ``true``, ``null``). A set is written as a Java
    ``HashSet`` iterates it, a float attribute's (``float32``) with ``real32`` (a ``Float``)."""
    def key(k: Any) -> str:
        return quote(k if isinstance(k, str) else java_str(k))

    def write(value: Any) -> str:
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        if isinstance(value, float):
            return real(value)
        if isinstance(value, str):
            return quote(value)
        if isinstance(value, dict):
            if keys is None:
                return "{" + ",".join(f"{key(k)}:{write(v)}" for k, v in value.items()) + "}"
            return "{" + ",".join(f"{key(k)}:{write(value[k])}" for k in keys(value)) + "}"
        if isinstance(value, sequences):
            if not isinstance(value, (set, frozenset)):
                return "[" + ",".join(write(v) for v in value) + "]"
            if real32 is not None and getattr(value, "float32", False):
                return "[" + ",".join(write(v) if v is None else real32(v) for v in java_set_order(value)) + "]"
            return "[" + ",".join(write(v) for v in java_set_order(value)) + "]"
        return quote(str(value))

    return write


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


class CollectionState(AggregatorState):
    """An aggregator state gathering one ``list`` or ``dict`` (``empty``) from the window's events.

    The ``collect``/``merge`` aggregators of ``list:`` and ``map:`` build on it: they add
    ``add``/``remove`` and, like them, every result handed out is a copy, so a later event never
    changes a value an earlier event carried away.
    """

    __slots__ = ("data",)
    empty: Callable[..., Any] = list

    def __init__(self) -> None:
        self.data = self.empty()

    def reset(self) -> None:
        self.data = self.empty()

    def value(self) -> Any:
        return self.empty(self.data)


class HoldingArguments(CollectionState):
    """Mixed into a collecting aggregator's state whose arguments include a long or a float: each
    value is held as Java's list or map holds it (:func:`holding_each`) before it is added or
    removed.  The state class has the slot ``kinds`` (the arguments' types), which
    :meth:`holding` sets.  (Snapshots taken before states held their values keep states of the
    state class it is mixed into, which go on holding nothing, as they did.)
    """

    __slots__ = ()
    kinds: tuple[AttrType, ...]

    def holding(self, kinds: tuple[AttrType, ...]) -> HoldingArguments:
        """The state, holding the values of arguments of types ``kinds``."""
        # (the slot is the state class's own: a slot here would clash with its base's slots)
        self.kinds = kinds  # type: ignore[misc]
        return self

    def add(self, value: Any) -> Any:
        return super().add(holding_each(self.kinds, value))

    def remove(self, value: Any) -> Any:
        return super().remove(holding_each(self.kinds, value))


def need_all(values: Sequence[Any], kind: type, java_type: str) -> Sequence[Any]:
    """``values``, each checked to be a ``kind`` (else Siddhi's ``Attribute number, 'n' must be of
    type <java_type>``)."""
    for i, v in enumerate(values):
        if not isinstance(v, kind):
            raise TypeError(f"Attribute number, '{i + 1}' must be of type {java_type}")
    return values


def tokenizer(namespace: str, param: Param, key: Attribute, kind: type, java_type: str,
              one: Callable[[list[Any]], Iterable[tuple[Any, Any]]],
              several: Callable[[list[Any]], Iterable[tuple[Any, Any]]], *, doc: str,
              examples: tuple[tuple[str, str], ...]) -> None:
    """Register ``#<namespace>:tokenize(param, ...)``: per event, the arguments' values (see
    :func:`need_all`), then one event per ``(key, value)`` of ``one(values)`` (one argument) or
    ``several(values)``, with the input attributes plus ``key`` and ``value``."""
    @stream_processor(namespace, "tokenize", (param,), overloads=((param.name,), (param.name, REPEAT)),
                      returns=f"{key.name} ({key.type.value}), value (object)", doc=doc, examples=examples)
    def build(infos: list[ArgInfo], getters: list[Callable[[Any], Any]], attributes: list[Attribute],
              ctx: Any) -> tuple[list[Attribute], Callable[[], ChunkProcessor]]:
        pairs = one if len(getters) == 1 else several

        def run(chunk: list[Event]) -> list[Event]:
            out: list[Event] = []
            for e in chunk:
                values = [g(e) for g in getters]
                need_all(values, kind, java_type)
                for k, v in pairs(values):
                    out.append(Event(e.timestamp, (*e.data, k, v), e.type))
            return out

        return [key, Attribute("value", AttrType.OBJECT)], lambda: ChunkProcessor(run)


# ---------------------------------------------------------------------------- Java's HashMap order
def hash_order(value: Any) -> Any:
    """``value`` with every map's keys in Java ``HashMap`` iteration order (recursively)."""
    if isinstance(value, dict):
        return {k: hash_order(value[k]) for k in hashmap_keys(value)}
    if isinstance(value, list):
        return [hash_order(v) for v in value]
    return value
