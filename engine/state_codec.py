"""A data-only encoding of engine state: snapshots and ``object`` columns, no pickles.

Loading a pickle runs whatever code its bytes name, so anyone who can write the state
database could run code in the service, and a renamed class made every old snapshot
unreadable.  This codec writes MessagePack with a few tagged extension types for the state
the engine actually keeps:

=====  =====================================================================
tag    value
=====  =====================================================================
1      tuple
2      set
3      frozenset
4      deque ``[items, maxlen]``
5      an engine object ``[name, {attribute: value}]`` (events, aggregator
       states, pattern states, ...): ``name`` must be a class of a ``srota.``
       module that is already imported, or one registered with
       :func:`register_state_type`; it is created without calling ``__init__``
       and its attributes set, so no code named by the data runs
6      an integer beyond 64 bits (its decimal text)
7      an enum member ``[name, value]`` (same rule for ``name``)
8      an int of an engine subclass of ``int`` ``[name, value]`` (same rule for
       ``name``; made with ``int.__new__``), e.g. a Java ``Long`` in a list
9      a dict of an engine subclass of ``dict`` ``[name, entries, attributes]`` (same
       rule for ``name``; the entries as ``[key, value]`` pairs, in order), e.g. a
       Java ``HashMap`` with its table length
10     a set of an engine subclass of ``set`` ``[name, elements, attributes]`` (same
       rule for ``name``), e.g. a Java ``HashSet`` with its iteration order
11     a float of an engine subclass of ``float`` ``[name, value, attributes]`` (same
       rule for ``name``; made with ``float.__new__``), e.g. a JSON ``BigDecimal``
12     an engine object met before in the same value: its number, counting the engine
       objects (tag 5) in the order they are written
=====  =====================================================================

An engine object held in several places (a pattern's partial match in the states of both
sides of an ``and``, an event in a window and in a partial match) comes back as one object,
as it was: the engines' state relies on it (a match one side takes is gone from the other).

Dictionaries keep non-string keys (MessagePack allows them).  Anything else (a function,
a socket, an object of an unknown class) cannot be encoded: :func:`dumps` raises
:class:`TypeError` naming it.
"""
from __future__ import annotations

import enum
import sys
import threading
from collections import deque
from typing import Any

import msgpack

_TUPLE, _SET, _FROZENSET, _DEQUE, _OBJECT, _BIGINT, _ENUM, _INT_OF, _DICT_OF, _SET_OF, _FLOAT_OF, _SEEN = range(1, 13)

#: The engine objects of the value being written (id -> number, and the objects, kept alive
#: meanwhile so that no id is reused) or read (by number), per thread: set by the outermost
#: dumps() or loads(), which the tags' own payloads call again.
_shared = threading.local()

_registered: dict[str, type] = {}


class StateDecodeError(ValueError):
    """The bytes are not state this codec wrote (or name a class it may not create)."""


def register_state_type(cls: type) -> type:
    """Allow instances of ``cls`` (a class outside ``srota.``, e.g. an extension's state) in state.

    Usable as a class decorator.
    """
    _registered[_name(cls)] = cls
    return cls


def dumps(value: Any) -> bytes:
    """Encode ``value``; raises :class:`TypeError` for what is not data."""
    if getattr(_shared, "written", None) is not None:  # (a tag's payload)
        return _packb(value)
    _shared.written = ({}, [])
    try:
        return _packb(value)
    finally:
        _shared.written = None


def _packb(value: Any) -> bytes:
    return msgpack.packb(value, default=_default, strict_types=True, use_bin_type=True)


def loads(data: bytes) -> Any:
    """Decode what :func:`dumps` wrote; raises :class:`StateDecodeError` for anything else."""
    outermost = getattr(_shared, "read", None) is None
    if outermost:
        _shared.read = []
    try:
        return msgpack.unpackb(data, ext_hook=_ext_hook, strict_map_key=False, raw=False,
                               use_list=True)
    except StateDecodeError:
        raise
    except Exception as exc:  # msgpack's own errors: truncated or foreign bytes
        raise StateDecodeError(f"not engine state ({type(exc).__name__}: {exc})") from None
    finally:
        if outermost:
            _shared.read = None


def _name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _pack(value: Any) -> bytes:
    return dumps(value)


def _default(value: Any) -> Any:
    cls = value.__class__
    if cls is tuple:
        return msgpack.ExtType(_TUPLE, _pack(list(value)))
    if cls is int:  # beyond 64 bits (smaller ones msgpack writes itself)
        return msgpack.ExtType(_BIGINT, str(value).encode())
    if cls is set:
        return msgpack.ExtType(_SET, _pack(list(value)))
    if cls is frozenset:
        return msgpack.ExtType(_FROZENSET, _pack(list(value)))
    if cls is deque:
        return msgpack.ExtType(_DEQUE, _pack([list(value), value.maxlen]))
    if isinstance(value, enum.Enum):
        _check_allowed(cls)
        return msgpack.ExtType(_ENUM, _pack([_name(cls), value.value]))
    if isinstance(value, int) and not isinstance(value, bool):  # (a bool msgpack writes itself)
        _check_allowed(cls)
        return msgpack.ExtType(_INT_OF, _pack([_name(cls), int(value)]))
    if isinstance(value, set):
        _check_allowed(cls)
        return msgpack.ExtType(_SET_OF, _pack([_name(cls), list(value), _attributes(value)]))
    if isinstance(value, dict):
        _check_allowed(cls)
        return msgpack.ExtType(_DICT_OF, _pack([_name(cls), [[k, v] for k, v in value.items()],
                                                _attributes(value)]))
    if isinstance(value, float):  # (json's BigDecimal: a double that knows its digits)
        _check_allowed(cls)
        return msgpack.ExtType(_FLOAT_OF, _pack([_name(cls), float(value), _attributes(value)]))
    if isinstance(value, (list, dict, tuple, str, bytes, float, int)):
        raise TypeError(f"cannot keep a {cls.__qualname__} (a subclass of a built-in type) in state")
    # a class made for speed keeps its state as the class it stands for (RawEvent as Event)
    cls = getattr(cls, "_state_class", cls)
    _check_allowed(cls)
    numbers, kept = _shared.written
    number = numbers.get(id(value))
    if number is not None:
        return msgpack.ExtType(_SEEN, _pack(number))
    numbers[id(value)] = len(kept)  # (numbered before its attributes, as loads() counts)
    kept.append(value)
    return msgpack.ExtType(_OBJECT, _pack([_name(cls), _attributes(value)]))


def _check_allowed(cls: type) -> None:
    name = _name(cls)
    if not (cls.__module__.startswith("srota.") or name in _registered):
        raise TypeError(f"cannot keep a {cls.__module__}.{cls.__qualname__} in state: only data and engine "
                        "objects (register others with srota.engine.state_codec.register_state_type)")


def _attributes(value: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for klass in type(value).__mro__:
        for slot in klass.__dict__.get("__slots__", ()):
            if slot not in ("__dict__", "__weakref__") and hasattr(value, slot):
                attrs[slot] = getattr(value, slot)
    attrs.update(getattr(value, "__dict__", {}))
    return attrs


def _class(name: str) -> type:
    cls = _registered.get(name)
    if cls is not None:
        return cls
    module, _, qualname = name.partition(":")
    if not module.startswith("srota."):
        raise StateDecodeError(f"state names class {name}, which is not an engine class")
    obj: Any = sys.modules.get(module)  # never imported on the data's say-so
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if not isinstance(obj, type):
        raise StateDecodeError(f"state names class {name}, which does not exist (renamed or removed?)")
    return obj


def _ext_hook(code: int, data: bytes) -> Any:
    if code == _OBJECT:
        seen = _shared.read
        place = len(seen)
        seen.append(None)
        # the object is made before its attributes are read: one of them may lead back to it
        unpacker = msgpack.Unpacker(ext_hook=_ext_hook, strict_map_key=False, raw=False, use_list=True)
        unpacker.feed(data)
        if unpacker.read_array_header() != 2:
            raise StateDecodeError("an engine object that is not [name, attributes]")
        obj: Any = object.__new__(_class(unpacker.unpack()))
        seen[place] = obj
        for key, val in (unpacker.unpack() or {}).items():
            object.__setattr__(obj, key, val)
        return obj
    if code == _SEEN:
        ref = loads(data)
        seen = _shared.read
        if not isinstance(ref, int) or not 0 <= ref < len(seen) or seen[ref] is None:
            raise StateDecodeError(f"state refers to engine object {ref!r}, which it has not written")
        return seen[ref]
    if code == _BIGINT:
        return int(data.decode())
    inner = loads(data)
    if code == _TUPLE:
        return tuple(inner)
    if code == _SET:
        return set(inner)
    if code == _FROZENSET:
        return frozenset(inner)
    if code == _DEQUE:
        return deque(inner[0], inner[1])
    if code == _ENUM:
        cls = _class(inner[0])
        if not issubclass(cls, enum.Enum):  # never call another class's constructor on the data's say-so
            raise StateDecodeError(f"state names {inner[0]} as an enum, which it is not")
        return cls(inner[1])
    if code == _INT_OF:
        cls = _class(inner[0])
        if not issubclass(cls, int) or issubclass(cls, (bool, enum.Enum)):
            raise StateDecodeError(f"state names {inner[0]} as a kind of int, which it is not")
        return int.__new__(cls, inner[1])
    if code == _DICT_OF:
        cls = _class(inner[0])
        if not issubclass(cls, dict):
            raise StateDecodeError(f"state names {inner[0]} as a kind of dict, which it is not")
        mapping: Any = dict.__new__(cls)
        for key, val in inner[1]:
            dict.__setitem__(mapping, key, val)
        for key, val in (inner[2] or {}).items():
            object.__setattr__(mapping, key, val)
        return mapping
    if code == _FLOAT_OF:
        cls = _class(inner[0])
        if not issubclass(cls, float):
            raise StateDecodeError(f"state names {inner[0]} as a kind of float, which it is not")
        number: Any = float.__new__(cls, inner[1])
        for key, val in (inner[2] or {}).items():
            object.__setattr__(number, key, val)
        return number
    if code == _SET_OF:
        cls = _class(inner[0])
        if not issubclass(cls, set):
            raise StateDecodeError(f"state names {inner[0]} as a kind of set, which it is not")
        members: Any = set.__new__(cls)
        set.update(members, inner[1])
        for key, val in (inner[2] or {}).items():
            object.__setattr__(members, key, val)
        return members
    raise StateDecodeError(f"unknown tag {code} in state")
