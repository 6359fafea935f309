"""The ``json`` source and sink mappers: what siddhi-map-json reads and writes.

Source, default mapping (no ``@attributes``), as siddhi-map-json:

* a JSON **object** is one event, ``{"event": {...}}`` (the envelope's key in any case) or the
  plain ``{...}``, read as siddhi-map-json walks Jackson's tokens (every field name at any
  depth is an attribute; :mod:`srota.mappers._json_walk` reads what is not flat, the flat
  objects take a faster path with the same answer).  It is strict: a key the stream does not
  define fails the message, and so does a value of the wrong JSON type -- ``int``/``long`` want
  a JSON integer, ``double`` a number with a fraction or exponent (``55`` fails, ``55.0``
  maps), ``float`` any number, ``bool`` ``true``/``false``; a ``string`` takes any scalar as
  its text as written and an object or array as its JSON text.  A missing attribute fails the
  message with ``fail.on.missing.attribute='true'`` (the default) and is null otherwise.
* a JSON **array** is many events, each ``{"event": {...}}`` or a plain object.  Siddhi reads
  array elements leniently (values convert from their text: ``"55.6"`` or ``55`` for a
  ``double``; unknown keys are ignored) and drops only the elements that fail: an envelope
  with fewer keys than the stream has attributes (with ``fail.on.missing.attribute='true'``),
  a plain object with fewer keys than attributes (always: it is not shaped as an event, e.g.
  ``{"testEvent": {...}}``).

Custom mapping: ``@attributes(id='$.device.id', t='$.temp', topic='trp:topic')`` (or
positional) with any JSONPath (see :mod:`srota.mappers._jsonpath`), evaluated on each event
element; ``enclosing.element`` selects the node that holds the events (an array is many
events, an object one).  Values convert from their text as Siddhi's ``AttributeConverter``
parses it (``Boolean.parseBoolean``, ``Integer.parseInt``, ``Double.parseDouble``); an
indefinite path (``$.items[*].id``) gives a list (a ``string`` attribute gets its JSON text).
A path that matches nothing fails the element with ``fail.on.missing.attribute='true'`` and
is null otherwise; in an array only the failing elements are dropped.

``event.grouping.enabled`` (default true): the events of one payload go into the app as one
chunk; false sends them one event at a time.

Every failure raises :class:`MappingError`; when some elements of an array mapped, the error
carries them in ``rows`` and the host sends those on (the payload still goes to the error
route, once).

Sink, as siddhi-map-json: numbers as Gson writes them (``Double.toString``, ``Float.toString``:
``1.0E7``, ``NaN``); a single event is one object ``{"event": {"a": 1, ...}}``; a chunk of
several events is one message, a JSON array of such objects (``event.grouping.enabled='true'``,
the default; ``'false'`` writes one message per event, the project's earlier default).
``@payload('...{{a}}...')`` writes custom text; several events are written
``[<text>,\n<text>]``.  ``enclosing.element='$.portfolio'`` wraps the output.  A null
attribute is written as Siddhi writes it: ``"undefined"`` in the default object and a bare
``undefined`` in a ``@payload`` template, unless ``enable.null.attribute.value='true'``, which
writes JSON ``null`` (the project's earlier default).

Differences from Siddhi, on purpose (none changes a payload Siddhi maps):

* an explicit JSON ``null`` is null in every path (Siddhi fails some array payloads on it);
* an array element whose value does not convert, that is not an object, or whose ``event``
  is not an object, is dropped alone (Siddhi drops the payload);
* an ``object`` attribute of a custom mapping keeps the JSON value (Siddhi gives its text);
* ``enclosing.element`` also applies to the default mapping (Siddhi ignores it there);
* a string substituted into a ``@payload`` template inside a JSON string literal
  (``"{{name}}"``) is JSON-escaped (Siddhi writes it raw, which breaks the JSON when it holds a
  quote); outside one (``{{message}}``, ``"a": {{doc}}``) it is written as it is, as in Siddhi.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson
from srota.engine.codegen import CodeGen
from srota.engine.registry import Kind, Param, extension
from srota.engine.types import f32, java_double_str, java_float32_str
from srota.grammar.model import Annotation, Attribute, AttrType
from srota.mappers._base import (
    TRP_PREFIX,
    MappingError,
    Row,
    SinkMapper,
    SourceMapper,
    attribute_mapping,
    payload_template,
)
from srota.mappers._convert import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    MISSING,
    _ConvertError,
    java_text_converter,
    json_default,
    value_converter,
)
from srota.mappers._gson import lenient_json_error, lenient_json_loads
from srota.mappers._json_walk import WalkError, siddhi_single_event
from srota.mappers._jsonpath import JsonPathError, compile_path
from srota.mappers._options import (
    creation_error,
    mapper_options,
)
from srota.mappers._template import Template

_S = (AttrType.STRING,)
_B = (AttrType.BOOL,)
_EMPTY: Mapping[str, Any] = {}
_DUMPS_OPTS = orjson.OPT_NON_STR_KEYS
_UNDEFINED = "undefined"


class _AttrError(Exception):
    """Raised by generated code: (attribute name or None, reason)."""


class _NotObject(Exception):
    """Raised by generated code when an event element is not a JSON object."""


class _Slow(Exception):
    """Raised by the flat reading of a single object where only Siddhi's walk of the tokens gives
    Siddhi's event (mappers/_json_walk.py)."""


# Per-type "already the right type" checks inlined into generated code; anything else
# (including None and MISSING) goes through the full converter.
_FAST_CHECK = {
    AttrType.STRING: "{v}.__class__ is str",
    AttrType.INT: "{v}.__class__ is int and -2147483648 <= {v} <= 2147483647",
    AttrType.LONG: "{v}.__class__ is int and -9223372036854775808 <= {v} <= 9223372036854775807",
    AttrType.DOUBLE: "{v}.__class__ is float",
    AttrType.BOOL: "{v}.__class__ is bool",
}


def _attr_converter(attr: Attribute, fail_on_missing: bool, custom: bool = False) -> Callable[[Any], Any]:
    """Lenient conversion (array elements, custom mappings): Siddhi converts the value's text with
    ``AttributeConverter`` (``Boolean.parseBoolean``, ``Integer.parseInt``, ``Double.parseDouble``):
    any text but ``true`` is a false bool, `` 7 `` is no int.  ``custom``: a JSONPath's value,
    whose object or array is text too (``{...}`` is a false bool); in a default-mapping array an
    object or array value fails the element."""
    name = attr.name
    by_text = attr.type in (AttrType.BOOL, AttrType.INT, AttrType.LONG, AttrType.FLOAT, AttrType.DOUBLE)
    conv = java_text_converter(attr.type) if by_text else value_converter(attr.type)
    structured_ok = custom or attr.type in (AttrType.STRING, AttrType.OBJECT)

    def convert(value: Any) -> Any:
        if value is MISSING:
            if fail_on_missing:
                raise _AttrError(name, "missing in the payload")
            return None
        if value is None:
            return None
        if not structured_ok and value.__class__ in (dict, list):
            raise _AttrError(name, f"a JSON {'object' if value.__class__ is dict else 'array'} is not "
                                   f"compatible with type {attr.type.value}")
        try:
            return conv(_java_text(value)) if by_text else conv(value)
        except _ConvertError as exc:
            raise _AttrError(name, f"cannot convert to {attr.type.value}: {exc}") from None

    return convert


def _java_text(value: Any) -> str:
    """A decoded JSON value's text as Siddhi's readers give it (json-smart's ``toString``: a
    double as ``Double.toString``)."""
    return java_double_str(value) if value.__class__ is float else _STRING_OF(value)


_STRING_OF = value_converter(AttrType.STRING)


def _strict_converter(attr: Attribute, fail_on_missing: bool,
                      check_keys: Callable[[dict[str, Any]], None]) -> Callable[[Any, Any], Any]:
    """Strict conversion of a single-object default mapping: the JSON type must fit (see module doc).

    ``convert(value, event_object)``: an absent value first checks the object's keys, since an
    object with as many keys as the stream has attributes may hold a key the stream lacks.
    """
    type_ = attr.type
    name = attr.name

    def incompatible(value: Any) -> _AttrError:
        text = orjson.dumps(value, default=str).decode()
        if len(text) > 60:
            text = text[:57] + "..."
        return _AttrError(name, f"value {text} is not compatible with type {type_.value}")

    def convert(value: Any, o: Any) -> Any:
        if value is MISSING:
            check_keys(o)
            if fail_on_missing:
                raise _AttrError(name, "missing in the payload")
            return None
        if value is None:
            return None
        cls = value.__class__
        if cls is dict or cls is list or type_ is AttrType.STRING or type_ is AttrType.OBJECT:
            # a nested value, and any but a string for a string or object attribute (Siddhi
            # keeps a number's text as written): Siddhi's walk decides
            raise _Slow()
        if type_ is AttrType.BOOL:
            if cls is bool:
                return value
        elif type_ is AttrType.INT or type_ is AttrType.LONG:
            if cls is int:
                lo, hi = (INT_MIN, INT_MAX) if type_ is AttrType.INT else (LONG_MIN, LONG_MAX)
                if lo <= value <= hi:
                    return value
                raise _AttrError(name, f"{value} is out of range for {type_.value}")
        elif type_ is AttrType.DOUBLE:
            if cls is float:
                return value
        elif type_ is AttrType.FLOAT:
            if cls is float or cls is int:
                try:
                    return f32(float(value))
                except OverflowError:
                    pass
        raise incompatible(value)

    return convert


def _decode(payload: Any, lenient_object: bool) -> Any:
    """The payload's JSON; where it is not strict JSON, what Gson's lenient reader makes of it,
    when that is an array (Siddhi reads event arrays with Gson) or ``lenient_object`` (a custom
    mapping: Siddhi reads it with json-smart, as lenient); a single object for the default
    mapping must be strict JSON (Siddhi reads it with Jackson)."""
    if not isinstance(payload, (bytes, bytearray, memoryview, str)):
        raise MappingError(f"the json mapper expects bytes or text, not {type(payload).__name__}",
                           payload=payload)
    if lenient_object and (b"\x7f" if not isinstance(payload, str) else "\x7f") in payload:
        payload = _json_smart_del(payload)
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        strict_error = exc
    try:  # (text that is not UTF-8 stays refused: UnicodeDecodeError is a ValueError)
        doc = lenient_json_loads(payload if isinstance(payload, str) else bytes(payload).decode("utf-8"))
    except (ValueError, RecursionError):
        doc = None
    if doc.__class__ is list or (lenient_object and doc is not None):
        return doc
    raise MappingError(f"invalid JSON: {strict_error}", payload=payload)


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _json_smart_del(payload: Any) -> str:
    """The text json-smart reads: a string with an escape in it is read char by char, and there
    its permissive mode skips a raw DEL (U+007F); a string without one is taken as it is."""
    text = payload if isinstance(payload, str) else bytes(payload).decode("utf-8", "surrogateescape")

    def strip(m: re.Match[str]) -> str:
        literal = m.group()
        return literal.replace("\x7f", "") if "\\" in literal else literal

    return _JSON_STRING.sub(strip, text)


def _describe_error(exc: Exception) -> tuple[str, str | None]:
    if isinstance(exc, _NotObject):
        value = exc.args[0]
        kind = "null" if value is None else {dict: "object", list: "array", str: "string", bool: "bool",
                                              int: "number", float: "number"}.get(value.__class__, "value")
        return f"expected a JSON object for an event, got {kind}", None
    name, reason = exc.args
    return reason, name


class JsonSourceMapper(SourceMapper):
    """JSON payload -> rows (see the module doc for the rules).

    ``attribute_map`` maps every attribute to a JSONPath or a transport property
    (``trp:topic``); None means the default mapping.  ``enclosing_element`` is the JSONPath of
    the node holding the events.  With ``fail_on_missing_attribute`` false an absent value
    becomes null instead of an error.  Bad configuration raises ``ValueError`` (the registry
    factory turns it into a creation error with the annotation's position).
    """

    type_name = "json"

    def __init__(self, attributes: Sequence[Attribute], *, attribute_map: Mapping[str, str] | None = None,
                 enclosing_element: str | None = "$", fail_on_missing_attribute: bool = True,
                 event_grouping_enabled: bool = True) -> None:
        super().__init__(attributes)
        self.fail_on_missing_attribute = fail_on_missing_attribute
        self.event_grouping_enabled = event_grouping_enabled
        self._custom = attribute_map is not None
        encl = (enclosing_element or "$").strip()
        try:
            self._enclosing = None if encl == "$" else compile_path(encl)
        except JsonPathError as exc:
            raise ValueError(f"enclosing.element: {exc}") from None
        env = {"MISSING": MISSING, "_AttrError": _AttrError, "_NotObject": _NotObject, "_Slow": _Slow}
        if attribute_map is None:
            self._row_object = self._compile_default(CodeGen(env), strict=True)
            self._row_element = self._compile_default(CodeGen(env), strict=False)
        else:
            self._row_object = self._row_element = self._compile_custom(CodeGen(env), attribute_map)

    # -------------------------------------------------------------- compiled row functions
    def _compile_default(self, gen: CodeGen, *, strict: bool) -> Callable[..., Row]:
        n = len(self.attributes)
        fail = self.fail_on_missing_attribute
        # {"event": {...}} is Siddhi's envelope; a stream whose only attribute is 'event' cannot
        # tell the envelope from its data, so in an array the element is always the data.
        unwrap = self.names != ("event",)
        if strict:
            # A single object, flat: the first key, 'event' in any case, is the envelope, and every
            # key must be an attribute.  Whatever is not flat (a scalar, a nested value, the
            # envelope with keys beside it) raises _Slow, for the walk of Siddhi's own reader
            # (mappers/_json_walk.py).
            body = ["if o.__class__ is not dict:", "    raise _Slow()",
                    "for k in o:",
                    "    if len(k) == 5 and k.lower() == 'event':",
                    "        if len(o) != 1 or o[k].__class__ is not dict:",
                    "            raise _Slow()",
                    "        o = o[k]",
                    "    break",
                    f"if len(o) != {n}:", f"    {gen.ref(self._check_keys, 'ck')}(o)"]
        else:
            # An array element: Siddhi's envelope key is exact; a short object is not an event.
            body = ["if o.__class__ is not dict:", "    raise _NotObject(o)"]
            if unwrap:
                body += ["if 'event' in o:",
                         "    o = o['event']",
                         "    if o.__class__ is not dict:",
                         "        raise _NotObject(o)"]
                if fail:
                    body += [f"    if len(o) < {n}:",
                             "        raise _AttrError(None, 'the event has missing attributes')"]
                body += ["else:", f"    if len(o) < {n}:",
                         "        raise _AttrError(None, 'the element is not in an accepted format for the "
                         "default mapping (an event object or {\"event\": {...}})')"]
            else:
                body += [f"if len(o) < {n}:",
                         "    raise _AttrError(None, 'the event has missing attributes')"]
        body.append("g = o.get")
        values = []
        for i, attr in enumerate(self.attributes):
            body.append(f"v{i} = g({attr.name!r}, MISSING)")
            if strict:
                conv = _strict_converter(attr, fail, self._check_keys)
                check = _FAST_CHECK.get(attr.type)
                ref = gen.ref(conv, "c")
                values.append(f"(v{i} if {check.format(v=f'v{i}')} else {ref}(v{i}, o))" if check
                              else f"{ref}(v{i}, o)")
            else:
                # Inside an array a missing key is null (the size check above is Siddhi's test).
                lenient = _attr_converter(attr, False)
                values.append(_lenient_expr(gen, f"v{i}", attr, lenient))
        body.append(f"return ({', '.join(values)}{',' if len(values) == 1 else ''})")
        return gen.function("_row", "o, t", body)

    def _check_keys(self, o: dict[str, Any]) -> None:
        names = self.names
        for key in o:
            if key not in names:
                raise _AttrError(None, f"the stream does not have an attribute named {key!r} (the default "
                                       "mapping takes only the stream's attributes)")

    def _compile_custom(self, gen: CodeGen, attribute_map: Mapping[str, str]) -> Callable[..., Row]:
        body: list[str] = []
        values = []
        for i, attr in enumerate(self.attributes):
            if attr.name not in attribute_map:
                raise ValueError(f"@attributes does not map '{attr.name}'")
            spec = attribute_map[attr.name].strip()
            if spec.lower().startswith(TRP_PREFIX):
                body.append(f"v{i} = t.get({spec[len(TRP_PREFIX):]!r}, MISSING)")
            else:
                try:
                    path = compile_path(spec)
                except JsonPathError as exc:
                    raise ValueError(f"attribute '{attr.name}': {exc}") from None
                body.append(f"v{i} = {gen.ref(path, 'p')}(o)")
            values.append(_lenient_expr(gen, f"v{i}", attr,
                                        _attr_converter(attr, self.fail_on_missing_attribute, custom=True)))
        body.append(f"return ({', '.join(values)}{',' if len(values) == 1 else ''})")
        return gen.function("_row", "o, t", body)

    # -------------------------------------------------------------- mapping
    def map(self, payload: Any, transport: Mapping[str, Any] | None = None) -> list[Row]:
        """Rows of one JSON payload (see the module doc); raises :class:`MappingError`."""
        try:
            doc = _decode(payload, self._custom)
        except MappingError:
            if not self._custom and _blank(payload):
                # Siddhi's reader finds no field in text that is only white space
                return self._walked(payload, None)
            raise
        if self._enclosing is not None:
            doc = self._enclosing(doc)
            if doc is MISSING or doc is None:
                raise MappingError("the enclosing element is not in the payload", payload=payload)
        t = transport if transport is not None else _EMPTY
        if doc.__class__ is not list:
            try:
                return [self._row_object(doc, t)]
            except (_AttrError, _NotObject) as exc:
                reason, name = _describe_error(exc)
                raise MappingError(reason, attribute=name, payload=payload) from None
            except _Slow:
                return self._walked(payload if self._enclosing is None else orjson.dumps(doc), doc)
        row = self._row_element
        try:
            return [row(item, t) for item in doc]
        except (_AttrError, _NotObject):
            pass
        # Some element failed: Siddhi drops only the failing elements.
        rows: list[Row] = []
        failed: list[tuple[int, str, str | None]] = []
        for index, item in enumerate(doc):
            try:
                rows.append(row(item, t))
            except (_AttrError, _NotObject) as exc:
                reason, name = _describe_error(exc)
                failed.append((index, reason, name))
        index, reason, name = failed[0]
        if len(failed) > 1:
            reason = f"{reason} ({len(failed)} of {len(doc)} events failed: " \
                     f"{', '.join(str(i) for i, _r, _n in failed)})"
        raise MappingError(reason, attribute=name, index=index, payload=payload, rows=rows)


    def _walked(self, payload: Any, doc: Any) -> list[Row]:
        """The event of a single object as Siddhi's reader walks its tokens (mappers/_json_walk.py)."""
        text = payload if isinstance(payload, str) else bytes(payload).decode("utf-8")
        try:
            row = siddhi_single_event(text, doc, self.attributes, self.fail_on_missing_attribute)
        except WalkError as exc:
            raise MappingError(str(exc), attribute=exc.attribute, payload=payload) from None
        return [] if row is None else [row]


def _blank(payload: Any) -> bool:
    """Non-empty text of JSON white space only (Jackson's: space, tab, line feed, return)."""
    if isinstance(payload, str):
        return bool(payload) and not payload.strip(" \t\n\r")
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return len(payload) > 0 and not bytes(payload).strip(b" \t\n\r")
    return False


def _lenient_expr(gen: CodeGen, var: str, attr: Attribute, conv: Callable[[Any], Any]) -> str:
    ref = gen.ref(conv, "c")
    if attr.type is AttrType.OBJECT:
        return f"({var} if {var} is not MISSING else {ref}({var}))"
    check = _FAST_CHECK.get(attr.type)
    if check is None:
        return f"{ref}({var})"
    return f"({var} if {check.format(v=var)} else {ref}({var}))"


# ------------------------------------------------------------------------------------ sink
def _json_placed_formatter(null: str) -> Callable[[AttrType, str, int], Callable[[Any], str]]:
    """How a value is written where its placeholder stands in a JSON ``@payload``: inside a
    string literal (``"{{name}}"``) a string is JSON-escaped, so the document stays valid
    whatever it holds; outside one (``{{message}}``, ``"a": {{doc}}``) a string is written as it
    is, a piece of JSON, as Siddhi writes every value."""
    inner = _json_value_formatter(null)

    def placed(type_: AttrType, text: str, start: int) -> Callable[[Any], str]:
        quoted = _inside_json_string(text, start)
        if type_ is AttrType.STRING and not quoted:
            def raw(v: Any) -> str:
                return null if v is None else (v if v.__class__ is str else str(v))
            return raw
        if type_ is AttrType.OBJECT and quoted:
            dumped = inner(type_)

            def escaped(v: Any) -> str:
                return null if v is None else orjson.dumps(dumped(v))[1:-1].decode()
            return escaped
        return inner(type_)
    return placed


def _inside_json_string(text: str, end: int) -> bool:
    """Whether ``text[end]`` stands inside a JSON string literal (placeholders before it skipped)."""
    inside = False
    i = 0
    while i < end:
        c = text[i]
        if inside and c == "\\":
            i += 2
            continue
        if c == '"':
            inside = not inside
        elif c == "{" and text.startswith("{{", i):
            close = text.find("}}", i)
            if 0 <= close < end:
                i = close + 2
                continue
        i += 1
    return inside


def _json_value_formatter(null: str) -> Callable[[AttrType], Callable[[Any], str]]:
    """How a value is written into a JSON ``@payload`` template (``null``: the text of a null)."""
    def formatter(type_: AttrType) -> Callable[[Any], str]:
        if type_ is AttrType.STRING:
            def fmt(v: Any) -> str:
                if v is None:
                    return null
                return orjson.dumps(v if v.__class__ is str else str(v))[1:-1].decode()
        elif type_ in (AttrType.INT, AttrType.LONG):
            def fmt(v: Any) -> str:
                return null if v is None else str(v)
        elif type_ in (AttrType.FLOAT, AttrType.DOUBLE):
            java_text = java_float32_str if type_ is AttrType.FLOAT else java_double_str

            def fmt(v: Any) -> str:  # as Java's String.valueOf: 1.0E7, NaN, Infinity
                return null if v is None else java_text(v)
        elif type_ is AttrType.BOOL:
            def fmt(v: Any) -> str:
                return null if v is None else ("true" if v else "false")
        else:
            def fmt(v: Any) -> str:
                if v is None:
                    return null
                return orjson.dumps(v, default=json_default, option=_DUMPS_OPTS).decode()
        return fmt
    return formatter


# Siddhi's Gson writes a number with its ``toString``: ``Float.toString`` and ``Double.toString``
# (``1.0E7``, ``1.0E-5``, ``NaN``, ``Infinity``: Gson's toString is lenient, so NaN and the
# infinities are written, not JSON but what a Siddhi consumer gets).  orjson writes a double as
# Java does only where the shortest repr is Java's text and needs no exponent: 2^-6 <= |v| < 2^23
# (engine.types.java_double_str); every other number is written as a raw fragment of Java's text.
_ORJSON_LOW, _ORJSON_HIGH = 0.015625, 8388608.0


def _enclosing_text(element: str) -> tuple[str, str]:
    """What siddhi-map-json's sink writes before and after a message for ``enclosing.element``:
    the names between dots (Java's ``split``, trailing empty names dropped) as keys, raw, but
    ``$``, and as many closing braces as names, less one when the first is ``$``."""
    names = element.split(".")
    while names and not names[-1]:
        names.pop()
    if not names:
        raise ValueError(f"enclosing.element {element!r} names no element")
    opening = "".join('{"' + name + '":' for name in names if name != "$")
    return opening, "}" * (len(names) - 1 if names[0] == "$" else len(names))


def _escape_separators(data: bytes) -> bytes:
    """U+2028 and U+2029 written ``\\u2028`` and ``\\u2029``, as Gson's JsonWriter writes them."""
    return data.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")


def _java_double(value: Any) -> Any:
    return orjson.Fragment(java_double_str(value)) if value.__class__ is float else value


def _java_float(value: Any) -> Any:
    return None if value is None else orjson.Fragment(java_float32_str(value))


def _java_float_undefined(value: Any) -> Any:
    return _UNDEFINED if value is None else orjson.Fragment(java_float32_str(value))


class JsonSinkMapper(SinkMapper):
    """Rows -> JSON payloads (see the module doc for the format)."""

    type_name = "json"

    def __init__(self, attributes: Sequence[Attribute], *, payload: str | None = None,
                 enclosing_element: str | None = None, event_grouping_enabled: bool = True,
                 validate_json: bool = False, enable_null_attribute_value: bool = False) -> None:
        super().__init__(attributes)
        self.event_grouping_enabled = event_grouping_enabled
        self.validate_json = validate_json
        self.enable_null_attribute_value = enable_null_attribute_value
        # Siddhi splits enclosing.element at each '.' and writes each name but '$' as a key, raw
        self._prefix, self._suffix = _enclosing_text(enclosing_element) if enclosing_element else ("", "")
        self._prefix_bytes, self._suffix_bytes = self._prefix.encode(), self._suffix.encode()
        null_text = "null" if enable_null_attribute_value else _UNDEFINED
        self._template = (Template(payload, attributes, placed=_json_placed_formatter(null_text))
                          if payload is not None else None)
        gen = CodeGen({"_f32": _java_float, "_f32u": _java_float_undefined, "_U": _UNDEFINED,
                       "_jd": _java_double})
        body, plain, undefined = [], [], []
        lo, hi = _ORJSON_LOW, _ORJSON_HIGH
        for i, attr in enumerate(self.attributes):
            if attr.type is AttrType.FLOAT:
                plain.append(f"{attr.name!r}: _f32(r[{i}])")
                undefined.append(f"{attr.name!r}: _f32u(r[{i}])")
            elif attr.type is AttrType.DOUBLE:
                # where orjson would not write Java's text, a fragment of it (None stays None)
                body += [f"d{i} = r[{i}]",
                         f"if d{i}.__class__ is not float or not ({lo} <= d{i} < {hi} or {-hi} < d{i} <= {-lo}):",
                         f"    d{i} = _jd(d{i})"]
                plain.append(f"{attr.name!r}: d{i}")
                undefined.append(f"{attr.name!r}: (_U if d{i} is None else d{i})")
            else:
                plain.append(f"{attr.name!r}: r[{i}]")
                undefined.append(f"{attr.name!r}: (_U if r[{i}] is None else r[{i}])")
        if not enable_null_attribute_value:
            # Siddhi writes a null as "undefined"; rows without nulls (nearly all) skip the checks.
            body += ["if None in r:", f"    return {{'event': {{{', '.join(undefined)}}}}}"]
        body.append(f"return {{'event': {{{', '.join(plain)}}}}}")
        self._event = gen.function("_event", "r", body)

    def _check(self, data: bytes) -> bytes:
        if self.validate_json:
            # Siddhi validates with ``new Gson().fromJson(text, Object.class)``, which reads
            # leniently: a template's bare ``undefined`` (a null) passes, so strict JSON would
            # drop messages Siddhi publishes.  Strict JSON is lenient JSON too: orjson answers
            # for most messages, the reader written in Python only for the rest.
            try:
                orjson.loads(data)
                return data
            except orjson.JSONDecodeError:
                pass
            reason = lenient_json_error(data.decode("utf-8", "replace"))
            if reason is not None:
                raise MappingError(f"the generated JSON is not valid: {reason}", payload=data)
        return data

    def map(self, rows: Sequence[Sequence[Any]]) -> list[Any]:
        """JSON payloads (bytes) for a chunk of rows; raises :class:`MappingError`.

        One row is one object; several rows are one JSON array message when event grouping is
        enabled (Siddhi's default), one object each otherwise.
        """
        if not rows:
            return []
        return self._map(rows, self.event_grouping_enabled and len(rows) > 1)

    def map_group(self, rows: Sequence[Sequence[Any]]) -> list[Any]:
        """One group of a multi-event chunk: an array even for one event, when grouping."""
        if not rows:
            return []
        return self._map(rows, self.event_grouping_enabled)

    def _map(self, rows: Sequence[Sequence[Any]], as_array: bool) -> list[Any]:
        try:
            if self._template is not None:
                render = self._template.render
                texts = [render(r) for r in rows]
                if as_array:
                    texts = ["[" + ",\n".join(texts) + "]"]
                return [self._check((self._prefix + t + self._suffix).encode()) for t in texts]
            event = self._event
            if as_array:
                objs: list[Any] = [[event(r) for r in rows]]
            else:
                objs = [event(r) for r in rows]
            dumps = orjson.dumps
            out = [dumps(o, default=json_default, option=_DUMPS_OPTS) for o in objs]
            # Gson escapes the line and paragraph separators, which orjson writes as they are
            out = [_escape_separators(d) if b"\xe2\x80" in d else d for d in out]
            if self._prefix_bytes or self._suffix_bytes:
                out = [self._prefix_bytes + d + self._suffix_bytes for d in out]
            return [self._check(d) for d in out] if self.validate_json else out
        except MappingError:
            raise
        except IndexError:
            raise MappingError(f"a row has fewer values than the stream's {len(self.names)} attributes",
                               payload=rows) from None
        except (TypeError, ValueError) as exc:  # orjson.JSONEncodeError is a TypeError
            raise MappingError(f"cannot write JSON: {exc}", payload=rows) from None


# ------------------------------------------------------------------------------------ registry
_SOURCE_PARAMS = (
    Param("enclosing.element", _S, optional=True, default="$",
          doc="JSONPath of the node holding the events: an array is many events, an object one."),
    Param("fail.on.missing.attribute", _B, optional=True, default=True,
          doc="When true an event missing an attribute fails to map (it goes to the error route; in "
              "an array only that element is dropped); when false the attribute is null.  An explicit "
              "JSON null is always null."),
    Param("event.grouping.enabled", _B, optional=True, default=True,
          doc="When true the events of one payload (an array) go into the app as one chunk; when false "
              "one event at a time."),
)

_SINK_PARAMS = (
    Param("validate.json", _B, optional=True, default=False,
          doc="Check that each generated message is JSON as Siddhi's (lenient) Gson reads it: a bare "
              "undefined or 'single quotes' pass, an unterminated object does not; an invalid one fails "
              "to map."),
    Param("enclosing.element", _S, optional=True, default=None,
          doc="Wrap the output: '$.portfolio' writes {\"portfolio\": <events>}."),
    Param("event.grouping.enabled", _B, optional=True, default=True,
          doc="When true a chunk of several events is one message, a JSON array (Siddhi's default); "
              "when false every event is a message of its own."),
    Param("enable.null.attribute.value", _B, optional=True, default=False,
          doc="When false (Siddhi's default) a null attribute is written as \"undefined\" (a bare "
              "undefined in a @payload template); when true as JSON null."),
)


@extension(Kind.SOURCE_MAPPER, "json", params=_SOURCE_PARAMS,
           doc="JSON -> events: Siddhi's {\"event\": {...}} format, plain objects, arrays, JSONPath "
               "@attributes and trp: transport properties.")
def _json_source(attributes: tuple[Attribute, ...], annotation: Annotation | None,
                 stream_id: str = "") -> JsonSourceMapper:
    where, pos, opts = mapper_options("json", "source", _SOURCE_PARAMS, annotation, stream_id)
    amap = attribute_mapping(annotation, attributes, where)
    try:
        return JsonSourceMapper(attributes, attribute_map=amap,
                                enclosing_element=opts["enclosing.element"],
                                fail_on_missing_attribute=opts["fail.on.missing.attribute"],
                                event_grouping_enabled=opts["event.grouping.enabled"])
    except ValueError as exc:
        raise creation_error(f"{where}: {exc}", pos) from None


@extension(Kind.SINK_MAPPER, "json", params=_SINK_PARAMS,
           doc="Events -> JSON: {\"event\": {...}} per event, @payload templates, enclosing element, "
               "grouping into arrays.")
def _json_sink(attributes: tuple[Attribute, ...], annotation: Annotation | None,
               stream_id: str = "") -> JsonSinkMapper:
    where, pos, opts = mapper_options("json", "sink", _SINK_PARAMS, annotation, stream_id)
    payload = payload_template(annotation, where, pos, "@payload takes one template string")
    try:
        return JsonSinkMapper(attributes, payload=payload, enclosing_element=opts["enclosing.element"],
                              event_grouping_enabled=opts["event.grouping.enabled"],
                              validate_json=opts["validate.json"],
                              enable_null_attribute_value=opts["enable.null.attribute.value"])
    except ValueError as exc:
        raise creation_error(f"{where}: {exc}", pos) from None
