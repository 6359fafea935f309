"""The ``json:`` namespace (siddhi-execution-json): JSONPath reads, setElement, conversions,
the ``json:group``/``json:groupAsObject`` aggregators and the ``#json:tokenize``/
``#json:tokenizeAsObject`` stream processors.

Siddhi builds on three Java libraries, and their behaviour is the contract here:

* Jayway JsonPath 2.4.0 reads the paths (:func:`read`, in :mod:`._jsonpath`): a *definite*
  path (names, indexes, functions) gives its value or fails with "path not found" (the
  functions then give null); an *indefinite* one (``..``, ``*``, slices, unions, filters)
  gives a list, possibly empty; a path Jayway cannot read or compute fails, and the event is
  dropped, as it is for a null document. The functions read a map or list document as Gson
  writes it (keys as ``String.valueOf``, a ``HashMap``'s in its order) and json-smart parses it
  again; the tokenizers read it as it is. ``json:setElement`` changes Jayway's targets in
  Jayway's order (:func:`_update_order`).
* json-smart parses JSON text permissively (:func:`parse`: unquoted keys and strings, single
  quotes, useless commas, trailing data after an object or array), an integer past a long as
  a ``BigInteger`` and a decimal of more than 18 characters as a :class:`BigDecimal`;
  ``json:group`` parses with its stricter ``MODE_JSON_SIMPLE``. ``json:toObject`` builds
  ``JSONObject`` maps (:class:`JsonObject`, a ``HashMap``), so their key order is Java's
  ``HashMap`` iteration order, which is what Siddhi's output strings show.
* Gson writes JSON (:func:`gson`): compact, nulls kept, ``< > & = '`` escaped as ``\\u003c``...,
  doubles as Java prints them.

Deliberate departures: ``json:groupAsObject`` keeps one collection per group
(Siddhi's shares one across every group of a query); ``json:setElement`` with an element
Gson cannot read back from its ``toString()`` (a string that is not JSON, a map whose keys hold
spaces) sets the element, where Siddhi drops the event. Not yet as Siddhi: a ``JSONObject`` or
``JSONArray`` made text by ``toString`` is its JSON in Java (docs/siddhi-differences.md).
"""
from __future__ import annotations

import copy
import functools
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import orjson
from srota.engine.aggregators import AggregatorState
from srota.engine.event import Event
from srota.engine.expression import ArgInfo
from srota.engine.extensions import _jsonpath
from srota.engine.extensions._checks import (
    BOOL,
    PRIMITIVES,
    STRING,
    ChunkProcessor,
    JavaHashMap,
    aggregator,
    err,
    function,
    hash_order,
    holding_floats,
    is_literal,
    java_double_str,
    json_writer,
    stream_processor,
)
from srota.engine.registry import Param
from srota.engine.types import f32, hashmap_keys, java_float32_str
from srota.grammar.model import Attribute, AttrType

_JSON_TYPES = (AttrType.STRING, AttrType.OBJECT)
_JSON_AND_PATH = (Param("json", _JSON_TYPES, dynamic=True, doc="JSON text or a JSON object (map/list)."),
                  Param("path", STRING, dynamic=True, doc="A JSONPath (Jayway syntax)."))


# ---------------------------------------------------------------------------- parsing
class InvalidJson(ValueError):
    """The input is not JSON, even for json-smart's permissive parser."""


class JsonObject(JavaHashMap):
    """A json-smart ``JSONObject`` (what ``json:toObject`` makes of every object): a ``HashMap``,
    which ``json:group`` takes as it is where it writes and parses any other map again."""

    __slots__ = ()


def _json_objects(value: Any) -> Any:
    """``value`` with every object a :class:`JsonObject` (json-smart's ``JSONParser``)."""
    if isinstance(value, dict):  # (its keys in HashMap order, for whatever iterates the dict itself)
        return JsonObject((k, _json_objects(value[k])) for k in hashmap_keys(value))
    if isinstance(value, list):
        return [_json_objects(v) for v in value]
    return value


class BigDecimal(float):
    """A JSON number json-smart reads as a ``BigDecimal``: a decimal of more than 18 characters
    (``USE_HI_PRECISION_FLOAT``). It computes as the nearest double, and is written (by Gson,
    json-smart, ``toString``) as ``BigDecimal.toString`` writes its digits: all of them."""

    __slots__ = ("text",)
    text: str

    def __new__(cls, text: str) -> BigDecimal:
        number = super().__new__(cls, text)
        number.text = str(Decimal(text))  # (Python's Decimal writes as Java's BigDecimal.toString)
        return number


_LONG_NUMBER = re.compile(r"[-+.\deE]{19}")  # a number orjson would read as a double, maybe


_NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")  # (json-smart: ".5" is no number)
_STRICT_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d*)?(?:[eE][-+]?\d+)?")  # no leading zero
_STOP = set(",:]}")


def parse(text: str, *, trailing: bool = True, strict: bool = False) -> Any:
    """Parse JSON text permissively (json-smart): strict JSON first, then unquoted/single-quoted forms.

    json-smart's permissive mode accepts trailing data: an object, an array or a quoted string
    ends the text (``{"a": 1} x`` is ``{"a": 1}``), and an unquoted text is a string to its end
    (``1 2``; the empty text is ``""``); and useless commas (``[1,,2,]`` is ``[1, 2]``).
    ``trailing=False`` refuses anything after the value. ``strict``: json-smart's
    ``MODE_JSON_SIMPLE`` (what ``json:group`` parses with): trailing data and useless commas
    still, but no single quotes, no unquoted strings, no NaN and no leading zeros.
    """
    if not _LONG_NUMBER.search(text):  # (orjson reads an integer past 64 bits as a double)
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    p = _Parser(text, strict)
    p.ws()
    if trailing and not strict and (p.i == len(text) or text[p.i] not in "{[\"':]}"):
        return p.bare(top=True)
    value = p.value()
    p.ws()
    if p.i < len(text) and not trailing:
        raise InvalidJson(f"unexpected '{text[p.i]}' at {p.i}")
    return value


class _Parser:
    def __init__(self, text: str, strict: bool = False) -> None:
        self.s = text
        self.i = 0
        self.strict = strict

    def ws(self) -> None:
        s, i = self.s, self.i
        while i < len(s) and s[i] in " \t\r\n":
            i += 1
        self.i = i

    def value(self) -> Any:
        self.ws()
        if self.i >= len(self.s):
            raise InvalidJson("unexpected end of JSON")
        c = self.s[self.i]
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c == '"' or (c == "'" and not self.strict):
            return self.quoted()
        return self.bare()

    def _commas(self) -> None:
        """Skip useless commas (json-smart accepts ``[1,,2,]`` and ``{,"a": 1,}``)."""
        self.ws()
        while self.i < len(self.s) and self.s[self.i] == ",":
            self.i += 1
            self.ws()

    def obj(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        self.i += 1
        while True:
            self._commas()
            c = self._peek()
            if c == "}":
                self.i += 1
                return out
            if self.strict and c != '"':
                raise InvalidJson(f"unexpected '{c}' at {self.i}")
            key = self.quoted() if c in "\"'" else self.word()
            self.ws()
            if self._peek() != ":":
                raise InvalidJson(f"expected ':' at {self.i}")
            self.i += 1
            out[str(key)] = self.value()
            self.ws()
            c = self._peek()
            if c == "}":
                continue
            self.i += 1
            if c != ",":
                raise InvalidJson(f"expected ',' or '}}' at {self.i - 1}")

    def arr(self) -> list[Any]:
        out: list[Any] = []
        self.i += 1
        while True:
            self._commas()
            if self._peek() == "]":
                self.i += 1
                return out
            out.append(self.value())
            self.ws()
            c = self._peek()
            if c == "]":
                continue
            self.i += 1
            if c != ",":
                raise InvalidJson(f"expected ',' or ']' at {self.i - 1}")

    def _peek(self) -> str:
        if self.i >= len(self.s):
            raise InvalidJson("unexpected end of JSON")
        return self.s[self.i]

    def quoted(self) -> str:
        quote = self.s[self.i]
        self.i += 1
        out: list[str] = []
        s = self.s
        while True:
            if self.i >= len(s):
                raise InvalidJson("unterminated string")
            c = s[self.i]
            if c == quote:
                self.i += 1
                text = "".join(out)  # (an escaped surrogate pair is one character, as in Java's UTF-16)
                return text.encode("utf-16", "surrogatepass").decode("utf-16") if "\\u" in s else text
            if c == "\\":
                self.i += 1
                e = s[self.i] if self.i < len(s) else ""
                if e == "u":
                    out.append(chr(int(s[self.i + 1:self.i + 5], 16)))
                    self.i += 5
                    continue
                out.append({"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}.get(e, e))
                self.i += 1
                continue
            out.append(c)
            self.i += 1

    def word(self) -> str:
        start = self.i
        s = self.s
        while self.i < len(s) and s[self.i] not in _STOP and s[self.i] not in " \t\r\n":
            self.i += 1
        if start == self.i:
            raise InvalidJson(f"unexpected '{self._peek()}' at {self.i}")
        return s[start:self.i]

    def bare(self, top: bool = False) -> Any:
        """An unquoted value: to the next ``, : ] }``, or (``top``, the whole text) to the end."""
        start = self.i
        s = self.s
        while self.i < len(s) and (top or s[self.i] not in _STOP):
            self.i += 1
        text = s[start:self.i].strip()
        if not text and not top:
            raise InvalidJson(f"unexpected '{self._peek()}' at {self.i}")
        if text == "true":
            return True
        if text == "false":
            return False
        if text == "null":
            return None
        if (_STRICT_NUMBER if self.strict else _NUMBER).fullmatch(text):
            if any(ch in text for ch in ".eE"):
                return BigDecimal(text) if len(text) > 18 else float(text)
            return int(text)  # (an Integer, a Long or a BigInteger)
        if self.strict:
            raise InvalidJson(f"unexpected '{text}' at {start}")
        if text == "NaN":
            return math.nan
        return text  # json-smart's permissive mode takes an unquoted word as a string


def _document_of(info: ArgInfo) -> Callable[[Any], Any]:
    """``f(json)`` giving the document to read: a literal JSON text is parsed once, at creation.

    Only for functions that never change the document (the getters, ``isExists``).
    """
    if is_literal(info) and isinstance(info.value, str):
        try:
            fixed = _document(info.value)
        except ValueError:
            return _document  # invalid: fail on each event, as Siddhi does
        return lambda _json: fixed
    return _document


def _document(value: Any) -> Any:
    """The document a function reads (Jayway's ``JsonPath.parse``): JSON text parsed; any other
    value is written with Gson first, as Siddhi does (``gson.toJson(map)``: keys as
    ``String.valueOf`` writes them, a ``HashMap``'s in its order, every long and float a JSON
    number again). A document that is null (a null argument, which Gson writes ``null``) is an
    error, as Jayway's ``JsonContext`` refuses it, and the event is dropped."""
    if not isinstance(value, str):
        value = gson(value)
    if not value:
        raise ValueError("json string can not be null or empty")
    try:
        doc = parse(value)
    except (InvalidJson, ValueError, IndexError) as exc:
        raise ValueError(f"The input JSON is not a valid JSON. Input JSON - {value}") from exc
    if doc is None:
        raise ValueError("json can not be null")
    return doc


# ---------------------------------------------------------------------------- writing (Gson)
_GSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f",
                 "<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "=": "\\u003d", "'": "\\u0027",
                 "\u2028": "\\u2028", "\u2029": "\\u2029"}
_GSON_SPECIAL = re.compile("[\"\\\\\x00-\x1f<>&='\u2028\u2029]")


def _gson_str(s: str) -> str:
    return '"' + _GSON_SPECIAL.sub(lambda m: _GSON_ESCAPES.get(m.group(), f"\\u{ord(m.group()):04x}"), s) + '"'


def _gson_real(value: float) -> str:
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{java_double_str(value)} is not a valid double value as per JSON specification")
    return _double_text(value)


def _gson_real32(value: float) -> str:
    """A ``Float`` (a float attribute's value in a set): ``Float.toString``."""
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"{java_float32_str(value)} is not a valid double value as per JSON specification")
    return java_float32_str(value)


def _double_text(value: float) -> str:
    """``Double.toString``; Java 17 prints Double.MIN_VALUE (what Jayway's ``max()`` starts from) as 4.9E-324.
    A :class:`BigDecimal` writes its own digits."""
    if isinstance(value, BigDecimal):
        return value.text
    return "4.9E-324" if value == 5e-324 else java_double_str(value)


def _gson_keys(m: dict[Any, Any]) -> Any:
    """A map's keys as Gson meets them: a ``HashMap``'s in its order, a JSON object's as parsed."""
    return hashmap_keys(m) if isinstance(m, JavaHashMap) else m


gson = json_writer(_gson_str, _gson_real, sequences=(list, tuple, set, frozenset), keys=_gson_keys,
                   real32=_gson_real32)
"""``new GsonBuilder().serializeNulls().create().toJson(value)``."""

_SMART_SPECIAL = re.compile("[\"\\\\/\x00-\x1f\x7f-\x9f\u2000-\u20ff]")
_SMART_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b",
                  "\f": "\\f"}


def _smart_str(s: str) -> str:
    return '"' + _SMART_SPECIAL.sub(lambda m: _SMART_ESCAPES.get(m.group(), f"\\u{ord(m.group()):04X}"), s) + '"'


smart = json_writer(_smart_str, _double_text)
"""json-smart's ``toJSONString`` (what ``json:group`` prints)."""

_canonical = json_writer(_gson_str, _gson_real, keys=sorted)
"""A JSON object's text with its keys sorted: equal objects (as ``JSONObject.equals``) alike."""


def _java_text(v: Any) -> str:
    """``v.toString()`` of a JsonPath result."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return _double_text(v)
    if isinstance(v, (dict, list)):
        return smart(v)
    return str(v)


# ---------------------------------------------------------------------------- JSONPath (Jayway)
# The reader lives in _jsonpath (Jayway 2.4.0's compiler and evaluator); these names are its API here.
PathNotFound = _jsonpath.PathNotFound
read = _jsonpath.read


def _targets(doc: Any, path: str) -> list[tuple[Any, Any]]:
    """(container, key) pairs the path's results live at (for set/put/add); (None, None) is the document."""
    return _jsonpath.targets(doc, path)


def _at(doc: Any, container: Any, key: Any) -> Any:
    """The value a target points at (several names: the object Jayway merges them into)."""
    if container is None:
        return doc
    if isinstance(key, list):
        return {k: container[k] for k in key if k in container}
    _no_negative(key)
    return container[key]


def _update_order(refs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """The targets in the order Jayway changes them (``EvaluationContextImpl.updateOperations``
    sorts its ``PathRef``s): two array indexes by index, others by their accessors' text
    (``$``, the property, the index, several names joined with ``&&``), both descending."""
    def accessor(ref: tuple[Any, Any]) -> bytes:
        container, key = ref
        text = "$" if container is None else "&&".join(key) if isinstance(key, list) else str(key)
        return text.encode("utf-16-be")  # (String.compareTo compares UTF-16 units)

    def index(ref: tuple[Any, Any]) -> int | None:
        container, key = ref
        return key if isinstance(container, list) and isinstance(key, int) else None

    def compare(a: tuple[Any, Any], b: tuple[Any, Any]) -> int:
        ia, ib = index(a), index(b)
        if ia is not None and ib is not None:
            return (ib > ia) - (ib < ia)
        sa, sb = accessor(a), accessor(b)
        return (sb > sa) - (sb < sa)

    return sorted(refs, key=functools.cmp_to_key(compare))


def _no_negative(key: Any) -> None:
    """Jayway changes an array through the index as the path wrote it: a negative one fails
    (``List.set(-1)``), and Siddhi drops the event."""
    if isinstance(key, int) and key < 0:
        raise ValueError(f"Index {key} out of bounds")


# ---------------------------------------------------------------------------- functions
def _getter(name: str, returns: AttrType, convert: Callable[[Any], Any], doc: str,
            example: tuple[str, str], unwrap: bool = True) -> None:
    @function("json", name, _JSON_AND_PATH, returns=returns, doc=doc, examples=(example,))
    def build(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
        document = _document_of(infos[0])

        def get(json: Any, path: Any) -> Any:
            if path is None:
                raise ValueError(f"json:{name}(): the path cannot be null")
            doc_ = document(json)
            try:
                found = read(doc_, path)
            except PathNotFound:
                return None
            if unwrap and isinstance(found, list):  # Siddhi: a one-element list gives its element
                found = found[0] if len(found) == 1 else None
            return None if found is None else convert(found)

        return returns, get


def _parse_int(bits: int) -> Callable[[Any], Any]:
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def conv(v: Any) -> Any:
        text = _java_text(v)
        if not re.fullmatch(r"[-+]?\d+", text):
            return None
        n = int(text)
        return n if lo <= n <= hi else None

    return conv


_JAVA_DOUBLE = re.compile(r"[-+]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)[fFdD]?)")


def _parse_double(v: Any) -> Any:
    text = _java_text(v).strip()
    if not _JAVA_DOUBLE.fullmatch(text):
        return None
    return float(text.rstrip("fFdD").replace("Infinity", "inf"))


def _parse_bool(v: Any) -> Any:
    text = _java_text(v).lower()
    return True if text == "true" else False if text == "false" else None


_getter("getString", AttrType.STRING, lambda v: v if isinstance(v, str) else gson(v),
        "The element at the path as a string (objects and arrays as JSON text); null when absent.",
        ("json:getString(json, '$.name')", "'John' for {'name' : 'John'}"), unwrap=False)
_getter("getInt", AttrType.INT, _parse_int(32),
        "The element at the path as an int; null when absent or not an int.",
        ("json:getInt(json, '$.age')", "25 for {'age' : 25}"))
_getter("getLong", AttrType.LONG, _parse_int(64),
        "The element at the path as a long; null when absent or not a long.",
        ("json:getLong(json, '$.age')", "25 for {'age' : 25}"))
_getter("getDouble", AttrType.DOUBLE, _parse_double,
        "The element at the path as a double; null when absent or not a number.",
        ("json:getDouble(json, '$.salary')", "2500.0 for {'salary' : 2500.0}"))
_getter("getFloat", AttrType.FLOAT, lambda v: None if (d := _parse_double(v)) is None else f32(d),
        "The element at the path as a float; null when absent or not a number.",
        ("json:getFloat(json, '$.salary')", "2500.0 for {'salary' : 2500.0}"))
_getter("getBool", AttrType.BOOL, _parse_bool,
        "The element at the path as a bool; null when absent or not true/false.",
        ("json:getBool(json, '$.married')", "true for {'married' : true}"))


@function("json", "getObject",
          _JSON_AND_PATH, returns=AttrType.OBJECT,
          doc="The element at the path as an object (a list with one element gives the element); null when absent.",
          examples=(("json:getObject(json, '$.address')", "{'city': 'CA'} for {'address': {'city': 'CA'}}"),))
def _get_object(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    document = _document_of(infos[0])
    shared = document is not _document  # a document parsed once must not leak out to be changed

    def get(json: Any, path: Any) -> Any:
        if path is None:
            raise ValueError("json:getObject(): the path cannot be null")
        try:
            found = read(document(json), path)
        except PathNotFound:
            return None
        if isinstance(found, list) and len(found) == 1:
            found = found[0]
        if shared and isinstance(found, (dict, list)):
            return copy.deepcopy(found)
        return found

    return AttrType.OBJECT, get


@function("json", "isExists",
          _JSON_AND_PATH, returns=AttrType.BOOL,
          doc="Whether the path exists in the JSON (an indefinite path always does). Invalid JSON is an error.",
          examples=(("json:isExists(json, '$.married')", "true for {'married' : true}"),))
def _is_exists(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    document = _document_of(infos[0])

    def exists(json: Any, path: Any) -> bool:
        if path is None:
            raise ValueError("json:isExists(): the path cannot be null")
        try:
            read(document(json), path)
        except PathNotFound:
            return False
        return True

    return AttrType.BOOL, exists


def _element(value: Any) -> Any:
    """A string element that is a JSON object or array is inserted parsed (as Siddhi does with Gson)."""
    if isinstance(value, str):
        try:
            parsed = parse(value, trailing=False)  # (Gson's fromJson: the whole text or nothing)
        except (InvalidJson, ValueError, IndexError):
            return value
        if isinstance(parsed, (dict, list)):
            return _gson_numbers(parsed)
    return value


def _gson_numbers(value: Any) -> Any:
    """Gson reads every JSON number into an ``Object`` as a Double."""
    if isinstance(value, dict):
        return {k: _gson_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_gson_numbers(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value


@function("json", "setElement",
          (Param("json", _JSON_TYPES, dynamic=True, doc="JSON text or a JSON object (map/list)."),
           Param("path", STRING, dynamic=True, doc="Where to set the element (a JSONPath)."),
           Param("json.element", PRIMITIVES + (AttrType.OBJECT,), dynamic=True, doc="The element to set."),
           Param("key", STRING, optional=True, dynamic=True,
                 doc="The key to set in the object at the path; without it the element replaces the "
                     "path's value (or is appended when the path is an array).")),
          overloads=(("json", "path", "json.element"), ("json", "path", "json.element", "key")),
          returns=AttrType.OBJECT,
          doc="A copy of the JSON with the element set: appended when the path is an array, put under "
              "the key otherwise. An invalid path leaves the JSON unchanged.",
          examples=(("json:setElement(json, '$', 'Peter', 'name')", "{'name': 'Peter'} for {'name': 'John'}"),
                    ("json:setElement(json, '$.items', 'book')", "{'items': ['pen', 'book']} for {'items': ['pen']}")))
def _set_element(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    def set_element(json: Any, path: Any, element: Any, key: Any = None) -> Any:
        if json is None or path is None:
            raise ValueError("json:setElement(): the json and the path cannot be null")
        doc = _document(json)
        try:
            found = read(doc, path)
        except PathNotFound:
            found = None
        if element is None and (key is not None or isinstance(found, list)):
            # Siddhi reads the element with jsonElement.toString() to add it to an array or put it
            # under a key: a null one is a NullPointerException, and the event is dropped
            raise ValueError("json:setElement(): the element cannot be null")
        try:
            targets = _update_order(_targets(doc, path))
        except PathNotFound:
            return doc
        # Jayway adds or puts at each target in turn: a null or missing one is skipped, one of
        # the wrong kind throws InvalidModificationException, which Siddhi catches, keeping
        # what the targets before it got
        if isinstance(found, list):
            for container, k in targets:
                if isinstance(k, list):  # (several names: "Add can not be performed to multiple properties")
                    return doc
                value = _at(doc, container, k)
                if value is None:
                    continue
                if not isinstance(value, list):
                    return doc
                if isinstance(container, list):
                    # an array in an array: Jayway's ArrayIndexPathRef.add calls setProperty, which
                    # json-smart's provider refuses for a list (a JsonPathException Siddhi does not
                    # catch here): the event is dropped
                    raise ValueError("setProperty operation cannot be used with a list")
                value.append(_element(element))
        elif key is not None:
            if key == "":
                raise ValueError("key can not be null or empty")
            for container, k in targets:
                if isinstance(k, list):
                    return doc
                try:
                    value = _at(doc, container, k)
                except (KeyError, IndexError):  # Jayway: path not found, the JSON stays as it was
                    return doc
                if value is None:
                    continue
                if not isinstance(value, dict):
                    return doc
                value[str(key)] = _element(element)
        else:
            for container, k in targets:
                if container is None:
                    return doc
                if isinstance(k, list):  # several names: Jayway sets each, there or not
                    for one in k:
                        container[one] = element
                    continue
                _no_negative(k)
                if k in container if isinstance(container, dict) else -len(container) <= k < len(container):
                    container[k] = element  # (Jayway's set replaces a leaf that is there, adds none)
        return doc

    return AttrType.OBJECT, holding_floats(infos, set_element)


@function("json", "toObject", (Param("json", STRING, dynamic=True, doc="JSON text."),),
          returns=AttrType.OBJECT,
          doc="The JSON text as an object (map or list); null when it is not JSON. A null argument is an error.",
          examples=(("json:toObject(json)", "{'name': 'John'} for \"{'name' : 'John'}\""),))
def _to_object(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    def to_object(text: Any) -> Any:
        if text is None:
            raise ValueError("json:toObject(): the argument cannot be null")
        try:
            return _json_objects(parse(text))
        except (InvalidJson, ValueError, IndexError):
            return None

    return AttrType.OBJECT, to_object


@function("json", "toString",
          (Param("json", _JSON_TYPES, dynamic=True, doc="A JSON object (map/list) or a string."),
           Param("allow.escape", BOOL, optional=True, default=False, dynamic=True,
                 doc="Return the JSON text itself as an escaped JSON string.")),
          overloads=(("json",), ("json", "allow.escape")),
          returns=AttrType.STRING,
          doc="The value as JSON text (Gson); a string gives a quoted JSON string.",
          examples=(("json:toString(json)", "'{\"name\":\"John\"}'"),
                    ("json:toString(json, true)", "'\"{\\\"name\\\":\\\"John\\\"}\"'")))
def _to_string(infos: list[ArgInfo], ctx: Any) -> tuple[AttrType, Any]:
    if len(infos) == 1:
        return AttrType.STRING, gson

    def to_string(value: Any, escape: Any) -> str:
        if value is None or escape is None:
            raise ValueError("Null value passed to json:toString() function.")
        text = gson(value)
        return gson(text) if escape else text

    return AttrType.STRING, to_string


# ---------------------------------------------------------------------------- aggregators
def _smart_object(value: Any) -> Any:
    """A json-smart JSONObject (HashMap order) from JSON text or a map; null stays null."""
    if value is None:
        return None
    if isinstance(value, JsonObject):  # (Siddhi keeps a JSONObject as it is)
        return value
    parsed = parse(value if isinstance(value, str) else gson(value), strict=True)
    if parsed is None:  # (the text "null": json-smart's null, which Siddhi collects as such)
        return None
    if not isinstance(parsed, dict):
        raise ValueError(f"'{value}' is not a JSON object")
    return hash_order(parsed)


class _Group(AggregatorState):
    """Counts per JSON object (compared by content) in first-seen order."""

    __slots__ = ("items", "arity", "enclosing", "distinct", "as_object", "_second_bool")

    def __init__(self, arity: int, as_object: bool, second_is_bool: bool) -> None:
        self.items: dict[str, list[Any]] = {}  # canonical text -> [object, count]
        self.arity = arity
        self.as_object = as_object
        self.enclosing: str | None = None
        self.distinct = False
        self._second_bool = second_is_bool

    def _options(self, value: Any) -> Any:
        if self.arity == 1:
            return value
        if self.arity == 3:
            self.enclosing = None if value[1] is None else str(value[1])
            self.distinct = bool(value[2])
        elif isinstance(value[1], bool):
            self.distinct = value[1]
        else:
            self.enclosing = None if value[1] is None else str(value[1])
        return value[0]

    def add(self, value: Any) -> Any:
        obj = _smart_object(self._options(value))
        key = _canonical(obj)
        slot = self.items.get(key)
        if slot is None:
            self.items[key] = [obj, 1]
        else:
            slot[1] += 1
        return self.value()

    def remove(self, value: Any) -> Any:
        obj = _smart_object(self._options(value))
        key = _canonical(obj)
        slot = self.items.get(key)
        if slot is None:  # (Java unboxes the null count of an object never added: NullPointerException)
            raise ValueError(f"json:group: {value!r} was never added")
        slot[1] -= 1
        if slot[1] <= 0:
            del self.items[key]
        return self.value()

    def reset(self) -> None:
        self.items = {}

    def value(self) -> Any:
        if self.distinct:
            array = [obj for obj, _ in self.items.values()]
        else:
            array = [obj for obj, n in self.items.values() for _ in range(n)]
        result: Any = array if self.enclosing is None else {self.enclosing: array}
        return result if self.as_object else smart(result)




def _group(name: str, as_object: bool) -> None:
    @aggregator("json", name,
                (Param("json", _JSON_TYPES, dynamic=True, doc="JSON objects (text or maps) to collect."),
                 Param("enclosing.element", STRING, optional=True, dynamic=True,
                       doc="Wrap the array in an object under this key."),
                 Param("distinct", BOOL, optional=True, default=False, dynamic=True,
                       doc="Only distinct objects.")),
                overloads=(("json",), ("json", "distinct"), ("json", "enclosing.element"),
                           ("json", "enclosing.element", "distinct")),
                returns=AttrType.OBJECT if as_object else AttrType.STRING,
                doc=("Collects the JSON objects of the window (or group) into a JSON array"
                     + (" object." if as_object else ", as JSON text.")),
                examples=((f"json:{name}(json)", "[{'date':'2013-11-19','time':'10:30'}, ...]"),
                          (f"json:{name}(json, 'result', true)", "{'result': [...]} with distinct objects")))
    def build(infos: list[ArgInfo]) -> tuple[AttrType, Any]:
        arity = len(infos)
        second_bool = arity == 2 and infos[1].type is AttrType.BOOL
        return (AttrType.OBJECT if as_object else AttrType.STRING), lambda: _Group(arity, as_object, second_bool)


_group("group", False)
_group("groupAsObject", True)


# ---------------------------------------------------------------------------- tokenizers
def _tokenizer(name: str, as_object: bool) -> None:
    @stream_processor("json", name,
                      (Param("json", _JSON_TYPES, dynamic=True, doc="JSON text or a JSON object."),
                       Param("path", STRING, dynamic=True, doc="A JSONPath selecting the elements."),
                       Param("fail.on.missing.attribute", BOOL, optional=True, default=True,
                             doc="When false, a missing path gives one event with a null jsonElement.")),
                      overloads=(("json", "path"), ("json", "path", "fail.on.missing.attribute")),
                      returns=f"jsonElement ({'object' if as_object else 'string'})",
                      doc="Emits one event per element the path selects (an array's items, or the "
                          "object or string found), with the input attributes plus `jsonElement`"
                          + (" as an object." if as_object else " as JSON text."),
                      examples=((f"from InputStream#json:{name}(json, '$.name') select jsonElement "
                                 "insert into OutputStream;", "one event per name"),))
    def build(infos: list[ArgInfo], getters: list[Any], attributes: list[Attribute],
              ctx: Any) -> tuple[list[Attribute], Callable[[], ChunkProcessor]]:
        fail = True
        if len(infos) == 3:
            if not is_literal(infos[2]):
                raise err(f"json:{name}(): fail.on.missing.attribute should be a constant")
            fail = bool(infos[2].value)
        get_json, get_path = getters[0], getters[1]
        out_type = AttrType.OBJECT if as_object else AttrType.STRING
        wrap = (lambda v: v) if as_object else gson

        def run(chunk: list[Event]) -> list[Event]:
            out: list[Event] = []
            for e in chunk:
                path = get_path(e)
                json = get_json(e)
                if json is None:  # (JsonPath.read refuses a null json)
                    raise ValueError("json can not be null")
                try:  # (an object is read as it is, not written and parsed again as the functions do)
                    found = read(_document(json) if isinstance(json, str) else json, path)
                except PathNotFound:
                    found = None
                if isinstance(found, list):
                    if not found and not fail:
                        out.append(Event(e.timestamp, (*e.data, None), e.type))
                    out.extend(Event(e.timestamp, (*e.data, wrap(v)), e.type) for v in found)
                elif isinstance(found, dict):
                    out.append(Event(e.timestamp, (*e.data, wrap(found)), e.type))
                elif isinstance(found, str) or (found is None and not fail):
                    out.append(Event(e.timestamp, (*e.data, found), e.type))
            return out

        return [Attribute("jsonElement", out_type)], lambda: ChunkProcessor(run)


_tokenizer("tokenize", False)
_tokenizer("tokenizeAsObject", True)
