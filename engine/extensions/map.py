"""The ``map:`` namespace (siddhi-execution-map): functions on ``object`` maps, the ``map:collect``
and ``map:merge`` aggregators and the ``#map:tokenize`` stream processor.

Maps are Python dicts.  As in Siddhi, ``put``, ``putAll``, ``putIfAbsent``, ``remove``,
``replace``, ``replaceAll`` and ``clear`` change the map they are given and return it (``clone``
copies); an argument that is not a map (or null) is an error, and the event is dropped.
Wherever Siddhi iterates a ``java.util.HashMap`` (``keys``, ``values``, ``toJSON``, ``toXML``,
``tokenize``, ``combineByKey``) the keys come in Java's HashMap order, so outputs match.

Keys and values are compared as Java's ``equals`` compares them (``get``, ``containsKey``,
``containsValue``, ``remove``, ...: :func:`~srota.engine.extensions._checks.java_equals`): a
long key or value goes into a map, and is looked for, as a
:class:`~srota.engine.extensions._checks.JavaLong`, so that ``Long`` 1 is not ``Integer`` 1
there; a float goes in as Java's ``Float`` prints.

Deliberate departures: ``createFromJSON`` turns JSON arrays into lists (Siddhi keeps org.json's
JSONArray); ``createFromXML`` reads numbers as int or float where Siddhi's NumberFormat reads
the longest numeric prefix.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from srota.engine.expression import ArgInfo
from srota.engine.extensions._checks import (
    ALL,
    OBJECT,
    PRIMITIVES,
    REPEAT,
    STRING,
    CollectionState,
    HoldingArguments,
    JavaHashMap,
    aggregator,
    err,
    function,
    holding,
    java_double_str,
    java_has_key,
    java_in,
    java_map_copy,
    java_map_grown,
    java_map_put_all,
    java_str,
    json_writer,
    need_all,
    needs_holding,
    plain_function,
    tokenizer,
)
from srota.engine.registry import Param
from srota.engine.types import hashmap_keys
from srota.grammar.model import Attribute, AttrType

_MAP = Param("map", OBJECT, dynamic=True, doc="A map.")
_KEY = Param("key", PRIMITIVES, dynamic=True, doc="The key.")
_ANY_KEY = Param("key", ALL, dynamic=True, doc="The key.")


def _need_map(v: Any, position: str = "First") -> dict[Any, Any]:
    if not isinstance(v, dict):
        raise TypeError(f"{position} attribute value must be of type java.util.Map, but found "
                        f"'{'null' if v is None else type(v).__name__}'")
    return v


def _fn(name: str, params: tuple[Param, ...], returns: AttrType, doc: str, impl: Callable[..., Any],
        example: tuple[str, str], overloads: tuple[tuple[str, ...], ...] = (), holds: bool = False) -> None:
    plain_function("map", name, params, returns=returns, doc=doc, examples=(example,), overloads=overloads,
                   holds=holds)(impl)


# ---------------------------------------------------------------------------- creation
@function("map", "create",
          (Param("key1", ALL, optional=True, dynamic=True, doc="A key."),
           Param("value1", ALL, optional=True, dynamic=True, doc="Its value; more key/value pairs may follow.")),
          overloads=((), ("key1", "value1"), ("key1", "value1", REPEAT)),
          returns=AttrType.OBJECT, doc="A new map of the key/value pairs (an even number of arguments).",
          examples=(("map:create(1, 'one', 2, 'two', 3, 'three')", "{1: 'one', 2: 'two', 3: 'three'}"),))
def _create(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    if len(infos) % 2:
        raise err(f"map:create() needs key/value pairs, but found {len(infos)} arguments")

    def create(*kv: Any) -> dict[Any, Any]:
        return JavaHashMap((kv[i], kv[i + 1]) for i in range(0, len(kv), 2))

    return AttrType.OBJECT, holding(infos, create)


def _from_json(text: Any) -> dict[Any, Any]:
    from srota.engine.extensions.json import parse

    if not isinstance(text, str):
        raise TypeError("Data should be a string")
    try:
        value = parse(text)
    except ValueError as exc:
        raise ValueError(f"Cannot create JSON from '{text}' in create from json function") from exc
    if not isinstance(value, dict):
        raise ValueError(f"Cannot create JSON from '{text}' in create from json function")
    return value


_fn("createFromJSON", (Param("json.string", STRING, dynamic=True, doc="JSON text of an object."),),
    AttrType.OBJECT, "A map from the JSON object text (nested objects become maps).", _from_json,
    ("map:createFromJSON(\"{'symbol' : 'IBM', 'price' : 200}\")", "{'symbol': 'IBM', 'price': 200}"))

_INT_TEXT = re.compile(r"[-+]?\d+")
_DEC_TEXT = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?")


def _xml_map(element: ET.Element) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for child in element:
        key = child.tag.split("}", 1)[-1] if child.tag.startswith("{") else child.tag
        if len(child):
            out[key] = _xml_map(child)
            continue
        text = child.text or ""
        if text in ("true", "false"):
            out[key] = text == "true"
        elif _INT_TEXT.fullmatch(text):
            out[key] = int(text)
        elif _DEC_TEXT.fullmatch(text):
            out[key] = float(text)
        else:
            out[key] = text
    return out


def _from_xml(text: Any) -> dict[Any, Any]:
    if not isinstance(text, str):
        raise TypeError("Data should be a string")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ValueError(f"Input data cannot be parsed to xml: {exc}") from None
    return _xml_map(root)


_fn("createFromXML", (Param("xml.string", STRING, dynamic=True, doc="XML text."),),
    AttrType.OBJECT, "A map of the root element's children (nested elements become maps; true/false "
    "and numbers are converted).", _from_xml,
    ("map:createFromXML('<stock><symbol>IBM</symbol><price>200</price></stock>')",
     "{'symbol': 'IBM', 'price': 200}"))


# ---------------------------------------------------------------------------- reading
def _get(m: Any, key: Any, *default: Any) -> Any:
    if java_has_key(_need_map(m), key):
        return m[key]
    return default[0] if default else None


_fn("get", (_MAP, _KEY,
            Param("default.value", ALL, optional=True, dynamic=True, doc="What to return when the key is absent.")),
    AttrType.OBJECT, "The value of the key (or the default, or null).", _get,
    ("map:get(companyMap, 1)", "'IBM' for {1: 'IBM'}"),
    overloads=(("map", "key"), ("map", "key", "default.value")), holds=True)
_fn("containsKey", (_MAP, _KEY), AttrType.BOOL,
    "Whether the map has the key.", lambda m, k: java_has_key(_need_map(m), k),
    ("map:containsKey(stockMap, '1234')", "true for {'1234': 'IBM'}"), holds=True)
_fn("containsValue", (_MAP, Param("value", PRIMITIVES, dynamic=True, doc="The value.")), AttrType.BOOL,
    "Whether some key maps to the value.", lambda m, v: java_in(v, _need_map(m).values()),
    ("map:containsValue(stockMap, 'IBM')", "true for {'1234': 'IBM'}"), holds=True)
_fn("isEmpty", (_MAP,), AttrType.BOOL, "Whether the map is empty.", lambda m: not _need_map(m),
    ("map:isEmpty(stockDetails)", "false for {'IBM': 200}"))
_fn("isMap", (Param("arg", ALL, dynamic=True, doc="Any value."),), AttrType.BOOL,
    "Whether the value is a map.", lambda v: isinstance(v, dict), ("map:isMap(stockDetails)", "true"))
_fn("size", (_MAP,), AttrType.INT, "The number of entries.", lambda m: len(_need_map(m)),
    ("map:size(stockDetails)", "2 for {'IBM': 200, 'WSO2': 100}"))
_fn("keys", (_MAP,), AttrType.OBJECT, "The keys as a list (in Java HashMap order).",
    lambda m: hashmap_keys(_need_map(m)), ("map:keys(stockDetails)", "['IBM', 'WSO2']"))
_fn("values", (_MAP,), AttrType.OBJECT, "The values as a list (in Java HashMap order).",
    lambda m: [m[k] for k in hashmap_keys(_need_map(m))], ("map:values(stockDetails)", "[200, 100]"))


def _org_real(v: float) -> str:
    text = java_double_str(v)
    if "E" not in text and text.endswith(".0"):
        text = text[:-2]
    return text


def _org_quote(s: str) -> str:
    out = ['"']
    prev = ""
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif c == "/" and prev == "<":
            out.append("\\/")
        elif c in "\b\f\n\r\t":
            out.append({"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[c])
        elif c < " " or "\x80" <= c < "\xa0" or "\u2000" <= c < "\u2100":
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
        prev = c
    out.append('"')
    return "".join(out)


_json_text = json_writer(_org_quote, _org_real, keys=hashmap_keys)
"""org.json's ``toString`` of a value (a map's keys in Java HashMap order)."""


_fn("toJSON", (_MAP,), AttrType.STRING, "The map as JSON text (org.json).",
    lambda m: _json_text(_need_map(m)), ("map:toJSON(company)", "'{\"symbol\":\"IBM\"}'"))


def _xml(m: dict[Any, Any]) -> str:
    out = []
    for k in hashmap_keys(m):
        v = m[k]
        if k is None:  # (Siddhi's key.toString(): a NullPointerException)
            raise TypeError("map:toXML(): a key is null")
        key = java_str(k)
        if v is None:
            raise TypeError(f"map:toXML(): the value of '{key}' is null")
        out.append(f"<{key}>{_xml(v) if isinstance(v, dict) else java_str(v)}</{key}>")
    return "".join(out)


@function("map", "toXML",
          (_MAP, Param("root.element.name", (AttrType.OBJECT, AttrType.STRING), optional=True, dynamic=True,
                       doc="The root element to wrap the entries in (a constant).")),
          overloads=(("map",), ("map", "root.element.name")), returns=AttrType.STRING,
          doc="The map as XML: one element per entry (nested maps nest), optionally inside a root element.",
          examples=(("map:toXML(company, 'company')", "'<company><symbol>IBM</symbol></company>'"),))
def _to_xml(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    if len(infos) == 1:
        return AttrType.STRING, lambda m: _xml(_need_map(m))
    root = infos[1].value
    if not infos[1].constant or not isinstance(root, str):
        raise err("map:toXML(): the root element name should be a constant string")
    return AttrType.STRING, lambda m, _r: f"<{root}>{_xml(_need_map(m))}</{root}>"


# ---------------------------------------------------------------------------- changing
def _put(m: Any, k: Any, v: Any) -> Any:
    _need_map(m)[k] = v
    java_map_grown(m)
    return m


def _put_if_absent(m: Any, k: Any, v: Any) -> Any:
    if not java_has_key(_need_map(m), k) or m[k] is None:
        m[k] = v
        java_map_grown(m)
    return m


def _put_all(to: Any, frm: Any) -> Any:
    java_map_put_all(_need_map(to), _need_map(frm, "Second"))
    return to


def _remove(m: Any, k: Any) -> Any:
    if java_has_key(_need_map(m), k):
        del m[k]
    return m


def _replace(m: Any, k: Any, v: Any) -> Any:
    if java_has_key(_need_map(m), k):
        m[k] = v
    return m


def _replace_all(to: Any, frm: Any) -> Any:
    _need_map(to)
    for k, v in _need_map(frm, "Second").items():
        if java_has_key(to, k):
            to[k] = v
    return to


def _clear(m: Any) -> Any:
    _need_map(m).clear()
    return m


_fn("put", (_MAP, _ANY_KEY, Param("value", ALL, dynamic=True, doc="The value.")),
    AttrType.OBJECT, "Puts the entry into the map and returns the map.", _put,
    ("map:put(stockDetails, 'IBM', 200)", "the map with IBM -> 200"), holds=True)
_fn("putIfAbsent", (_MAP, _KEY,
                    Param("value", PRIMITIVES, dynamic=True, doc="The value.")),
    AttrType.OBJECT, "Puts the entry when the key is absent (or null) and returns the map.", _put_if_absent,
    ("map:putIfAbsent(stockDetails, 1234, 'IBM')", "the map, with 1234 -> 'IBM' if it was absent"), holds=True)
_fn("putAll", (Param("to.map", OBJECT, dynamic=True, doc="The map to change."),
               Param("from.map", OBJECT, dynamic=True, doc="The entries to put.")),
    AttrType.OBJECT, "Puts every entry of from.map into to.map and returns it.", _put_all,
    ("map:putAll(toMap, fromMap)", "toMap with fromMap's entries"))
_fn("remove", (_MAP, _ANY_KEY), AttrType.OBJECT,
    "Removes the key and returns the map.", _remove, ("map:remove(stockDetails, 1234)", "the map without 1234"),
    holds=True)
_fn("replace", (_MAP, _KEY,
                Param("value", PRIMITIVES, dynamic=True, doc="The new value.")),
    AttrType.OBJECT, "Replaces the value of the key when present and returns the map.", _replace,
    ("map:replace(stockDetails, 1234, 'IBM')", "the map with 1234 -> 'IBM' if 1234 was there"), holds=True)
_fn("replaceAll", (Param("to.map", OBJECT, dynamic=True, doc="The map to change."),
                   Param("from.map", OBJECT, dynamic=True, doc="The new values.")),
    AttrType.OBJECT, "Replaces the values of to.map's keys that from.map also has, and returns to.map.",
    _replace_all, ("map:replaceAll(toMap, fromMap)", "toMap with the shared keys' values from fromMap"))
_fn("clear", (_MAP,), AttrType.OBJECT, "Removes every entry and returns the (empty) map.", _clear,
    ("map:clear(stockDetails)", "{}"))
_fn("clone", (_MAP,), AttrType.OBJECT, "A copy of the map.", lambda m: java_map_copy(_need_map(m)),
    ("map:clone(stockDetails)", "a new map with the same entries"))


@function("map", "combineByKey", (_MAP,), overloads=(("map", "map"), ("map", "map", REPEAT)),
          returns=AttrType.OBJECT,
          doc="A map from every key of the maps to the list of their values (null where a map lacks the key).",
          examples=(("map:combineByKey(map1, map2)", "{'IBM': [100, 200], 'WSO2': [null, 300]}"),))
def _combine_by_key(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    def combine(*maps: Any) -> dict[Any, Any]:
        return JavaHashMap((k, [m.get(k) for m in maps]) for k in _keys(need_all(maps, dict, "java.util.Map")))

    return AttrType.OBJECT, combine


# ---------------------------------------------------------------------------- aggregators
class _Collect(CollectionState):
    # Siddhi's MapState: one HashMap, of which every result is a copy (new HashMap<>(map))
    __slots__ = ()
    empty = JavaHashMap

    def add(self, value: Any) -> dict[Any, Any]:
        _put(self.data, value[0], value[1])
        return java_map_copy(self.data)

    def remove(self, value: Any) -> dict[Any, Any]:
        _remove(self.data, value[0])
        return java_map_copy(self.data)

    def value(self) -> Any:
        return java_map_copy(self.data)


class _HeldCollect(HoldingArguments, _Collect):
    """``map:collect`` of a long or a float key or value (held as Java's map holds it)."""

    __slots__ = ("kinds",)


@aggregator("map", "collect",
            (Param("key", PRIMITIVES, dynamic=True, doc="The key of each entry."),
             Param("value", ALL, dynamic=True, doc="The value of each entry.")),
            returns=AttrType.OBJECT,
            doc="A map of the key/value pairs of the window (a later event's value wins; an expired "
                "event removes its key).",
            examples=(("from StockStream#window.lengthBatch(10) select map:collect(symbol, price) as stockDetails "
                       "insert into OutputStream;", "{'IBM': 200, 'WSO2': 100, ...}"),))
def _collect(infos: list[ArgInfo]) -> tuple[AttrType, Any]:
    if needs_holding(infos):
        kinds = tuple(info.type for info in infos)
        return AttrType.OBJECT, lambda: _HeldCollect().holding(kinds)
    return AttrType.OBJECT, _Collect


class _Merge(_Collect):
    __slots__ = ()

    def add(self, value: Any) -> dict[Any, Any]:
        java_map_put_all(self.data, _need_map(value))
        return java_map_copy(self.data)

    def remove(self, value: Any) -> dict[Any, Any]:
        for k in _need_map(value):
            _remove(self.data, k)
        return java_map_copy(self.data)


@aggregator("map", "merge", (_MAP,), returns=AttrType.OBJECT,
            doc="The union of the maps of the window (an expired map removes its keys).",
            examples=(("from StockStream#window.lengthBatch(2) select map:merge(map) as stockDetails "
                       "insert into OutputStream;", "{'IBM': 200, 'WSO2': 100}"),))
def _merge(infos: list[ArgInfo]) -> tuple[AttrType, Any]:
    return AttrType.OBJECT, _Merge


# ---------------------------------------------------------------------------- tokenize
def _keys(maps: Sequence[dict[Any, Any]]) -> list[Any]:
    """Every key of the maps, in the order of a Java HashSet that took each map's keys in turn."""
    return hashmap_keys(dict.fromkeys(k for m in maps for k in hashmap_keys(m)))


def _entries_of_one(maps: list[dict[Any, Any]]) -> Iterable[tuple[Any, Any]]:
    # (Siddhi collects the keys into a new HashSet even for one map: their order is that set's,
    # not the map's own, which differs where the map's table is not 16 long, a clone's say)
    m = maps[0]
    return [(k, m[k]) for k in _keys(maps)]


def _entries(maps: list[dict[Any, Any]]) -> Iterable[tuple[Any, list[Any]]]:
    return [(k, [m.get(k) for m in maps]) for k in _keys(maps)]


tokenizer("map", _MAP, Attribute("key", AttrType.OBJECT), dict, "java.util.Map", _entries_of_one, _entries,
          doc="Emits one event per key of the maps, with the input attributes plus `key` and "
              "`value` (with several maps, `value` is the list of their values).",
          examples=(("from StockStream#map:tokenize(stockDetails) select key, value insert into "
                     "OutputStream;", "one event per entry"),))
