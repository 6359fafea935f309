"""siddhi-map-json's reader of a single event (the default mapping of one JSON object), step by step.

siddhi-map-json does not read the object as a tree: it walks Jackson's token stream
(``JsonSourceMapper.convertToSingleEventForDefaultMapping``).  Every field name it meets, at any
depth, is an attribute of the event; the first field's name, when it is ``event`` in any case, is
skipped with whatever follows it; a nested object or array given to a ``string`` attribute is
the JSON text of the first node of that name in the whole document (Jackson's ``findValue``),
after which the walk skips ahead in its own way (``handleJsonObject``).  Most messages are flat,
``{"event": {...}}`` or ``{...}`` with scalar values, and for them the tree the json mapper reads
with orjson gives the same event (:mod:`srota.mappers._json` takes that path); this module reads
the others, so that they map exactly as in Siddhi:

* ``{"event": {"a": 1}, "b": 2}``: ``b`` is an attribute too;
* ``{"event": null}``, ``{"event": [1]}``, a lone scalar, or only whitespace: no attribute (an
  event of nulls where attributes may be missing);
* a ``string`` attribute given a number keeps the number's text as written (``55.60``);
* ``fail.on.missing.attribute='true'`` wants as many field names as the stream has attributes,
  no more (a nested object's fields count).

Duplicate keys in an object, which orjson reads as one, are not told apart (the flat path takes
the last value, as Siddhi does, but Siddhi also counts the repeated name).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from json.decoder import scanstring  # type: ignore[attr-defined]  # (c_scanstring or py_scanstring)
from typing import Any

from srota.engine.types import f32, java_double_str
from srota.grammar.model import Attribute, AttrType

_START_OBJECT, _END_OBJECT, _START_ARRAY, _END_ARRAY, _FIELD_NAME = "{", "}", "[", "]", "field"
_STRING, _INT, _FLOAT, _TRUE, _FALSE, _NULL = "string", "int", "float", "true", "false", "null"
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_SPACE = re.compile(r"[ \t\n\r]*")
_INT_RANGE = {AttrType.INT: (-(2 ** 31), 2 ** 31 - 1), AttrType.LONG: (-(2 ** 63), 2 ** 63 - 1),
              AttrType.OBJECT: (-(2 ** 31), 2 ** 31 - 1)}
_Token = tuple[str, str]
_NO_EVENT = object()  # an object attribute's value Siddhi's reader gives up on: no event, no error


class WalkError(ValueError):
    """The message does not map (the reason is the message); ``attribute`` names the culprit."""

    def __init__(self, reason: str, attribute: str | None = None) -> None:
        super().__init__(reason)
        self.attribute = attribute


def _tokens(text: str) -> list[_Token]:
    """Jackson's tokens of ``text``, strict JSON that orjson has read: (kind, getText())."""
    out: list[_Token] = []
    open_containers: list[str] = []
    expect_name = False  # inside an object, where a string is a field's name
    scan = scanstring
    i, n = _SPACE.match(text, 0).end(), len(text)  # type: ignore[union-attr]
    while i < n:
        c = text[i]
        if c in "{[":
            out.append((c, c))
            open_containers.append(c)
            expect_name = c == "{"
            i += 1
        elif c in "}]":
            out.append((c, c))
            open_containers.pop()
            expect_name = False
            i += 1
        elif c == ",":
            expect_name = open_containers[-1] == "{"
            i += 1
        elif c == ":":
            i += 1
        elif c == '"':
            value, i = scan(text, i + 1)
            out.append((_FIELD_NAME if expect_name else _STRING, value))
            expect_name = False
        else:
            m = _NUMBER.match(text, i)
            if m is not None and m.end() > i:
                out.append((_FLOAT if m.group(1) or m.group(2) else _INT, m.group()))
                i = m.end()
            else:
                for word in (_TRUE, _FALSE, _NULL):
                    if text.startswith(word, i):
                        out.append((word, word))
                        i += len(word)
                        break
                else:
                    raise WalkError(f"unexpected character {c!r} at {i}")
        i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
    return out


def _find_value(node: Any, name: str) -> Any:
    """Jackson's ``JsonNode.findValue``: the first field ``name`` depth first, the field's name
    checked before its value is searched."""
    if node.__class__ is dict:
        for key, value in node.items():
            if key == name:
                return value
            found = _find_value(value, name)
            if found is not None:
                return found
    elif node.__class__ is list:
        for value in node:
            found = _find_value(value, name)
            if found is not None:
                return found
    return None


def _jackson_text(value: Any) -> str:
    """A node as Jackson's ``toString`` writes it: compact JSON, doubles as ``Double.toString``."""
    if value.__class__ is dict:
        return "{" + ",".join(f"{_quoted(k)}:{_jackson_text(v)}" for k, v in value.items()) + "}"
    if value.__class__ is list:
        return "[" + ",".join(_jackson_text(v) for v in value) + "]"
    if value.__class__ is str:
        return _quoted(value)
    if value is None:
        return "null"
    if value.__class__ is bool:
        return "true" if value else "false"
    if value.__class__ is float:
        return java_double_str(value)
    return str(value)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _quoted(text: str) -> str:
    return '"' + "".join(_ESCAPES.get(c) or (f"\\u{ord(c):04X}" if c < " " else c) for c in text) + '"'


class _Walk:
    """Jackson's parser over the tokens: ``next_token`` and ``next_value`` as Jackson's."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.at = -1

    def next_token(self) -> _Token | None:
        self.at += 1
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def next_value(self) -> _Token | None:
        token = self.next_token()
        return self.next_token() if token is not None and token[0] == _FIELD_NAME else token

    def skip_object(self) -> None:
        """``traverseJsonObject``: values up to the first end of an object; an array starts
        ``traverseJsonArray``, and the walk does not come back to the object."""
        while True:
            token = self.next_value()
            if token is None:
                raise WalkError("the message ended inside an object")
            if token[0] == _START_ARRAY:
                return self.skip_array()
            if token[0] == _END_OBJECT:
                return

    def skip_array(self) -> None:
        """``traverseJsonArray``: values up to the first end of an array."""
        while True:
            token = self.next_value()
            if token is None:
                raise WalkError("the message ended inside an array")
            if token[0] == _END_ARRAY:
                return


def siddhi_single_event(text: str, doc: Any, attributes: Sequence[Attribute],
                        fail_on_missing: bool) -> tuple[Any, ...] | None:
    """The event siddhi-map-json makes of one JSON object ``text`` (``doc``: orjson's reading of
    it), or None where Siddhi makes none and reports nothing; raises :class:`WalkError`."""
    tokens = _tokens(text)
    if len(tokens) == 1 and tokens[0][0] == _NULL:
        raise WalkError("the message is null")  # JsonPath refuses a null document
    names = [a.name for a in attributes]
    data: list[Any] = [None] * len(attributes)
    provided = 0
    walk = _Walk(tokens)
    while True:
        token = walk.next_token()
        if token is None:
            break
        if token[0] == _START_OBJECT:
            token = walk.next_token()
            if token is not None and token[1].lower() == "event":
                token = walk.next_token()
        if token is None or token[0] != _FIELD_NAME:
            continue
        key = token[1]
        provided += 1
        if key not in names:
            raise WalkError(f"the stream does not have an attribute named {key!r} (the default mapping "
                            "takes only the stream's attributes)")
        position = names.index(key)
        attr = attributes[position]
        value = walk.next_token()
        if value is None:
            raise WalkError("the message ended after a field name", key)
        if value[0] == _NULL:
            data[position] = None
            continue
        made = _value(attr, value, walk, doc, key)
        if made is _NO_EVENT:
            return None
        data[position] = made
    if fail_on_missing and provided != len(attributes):
        raise WalkError("the event has missing attributes")
    return tuple(data)



def _value(attr: Attribute, token: _Token, walk: _Walk, doc: Any, key: str) -> Any:
    kind, text = token
    type_ = attr.type
    if type_ is AttrType.BOOL and kind in (_TRUE, _FALSE):
        return kind == _TRUE
    if type_ in (AttrType.INT, AttrType.LONG) and kind == _INT:
        return _integer(attr, text)
    if type_ is AttrType.DOUBLE and kind == _FLOAT:
        return float(text)
    if type_ is AttrType.FLOAT and kind in (_INT, _FLOAT):
        return f32(float(text))
    if type_ is AttrType.STRING or type_ is AttrType.OBJECT:
        if kind in (_START_OBJECT, _START_ARRAY):
            node = _find_value(doc, key)
            _skip_nested(walk, node)
            return _jackson_text(node) if type_ is AttrType.STRING else node
        if type_ is AttrType.STRING:
            return text  # getValueAsString: a number as written, true, false
        if kind == _STRING:
            return text
        if kind == _INT:
            return _integer(attr, text)
        if kind == _FLOAT:
            return f32(float(text))
        if kind in (_TRUE, _FALSE):
            return kind == _TRUE
        return _NO_EVENT
    raise WalkError(f"value {text} is not compatible with type {type_.value}", attr.name)


def _integer(attr: Attribute, text: str) -> int:
    value = int(text)
    lo, hi = _INT_RANGE[attr.type]
    if not lo <= value <= hi:
        raise WalkError(f"{value} is out of range for {attr.type.value}", attr.name)
    return value


def _skip_nested(walk: _Walk, node: Any) -> None:
    """``handleJsonObject``: one value, then one more per field of the node found (an array
    has none), an object or array among them skipped as ``traverseJsonObject``/``Array`` do."""
    walk.next_value()
    for _ in node if node.__class__ is dict else ():
        token = walk.next_value()
        if token is None:
            raise WalkError("the message ended inside a value")
        if token[0] == _START_OBJECT:
            walk.skip_object()
        elif token[0] == _START_ARRAY:
            walk.skip_array()
