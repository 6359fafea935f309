"""The ``text`` source and sink mappers: what siddhi-map-text reads and writes.

Source, default mapping (no ``@attributes``): one event is ``key:value`` pairs separated by
``,`` and a line break (``new.line.character``, default ``\\n``)::

    symbol:"WSO2",
    price:55.6,
    volume:100

in any order, as siddhi-map-text reads it: key and value are trimmed; the first pair for an
attribute wins; keys the stream does not have are ignored; a ``string`` value is taken
between its enclosing quotes (``"..."`` or ``'...'``); any other value has its ``,`` removed
(``1,000``) and is parsed as Java does (``Float.parseFloat("55.6f")``, ``Integer.parseInt``;
a ``bool`` is true for ``true`` in any case and false otherwise; an ``object`` gets the text).
With ``fail.on.missing.attribute='true'`` (the default) an event that lacks an attribute
fails; with ``'false'`` the attribute is null.  A value that does not parse always fails.

Custom mapping: ``regex.A='(\\w+)\\s([-.0-9]+)'``, ``regex.B='volume=([-0-9]+)'`` and
``@attributes(symbol='A[1]', price='A[2]', volume='B', topic='trp:topic')``: each attribute is
group ``n`` of the first match of a regular expression in the event's text (``B`` alone is
group 1); values convert as above (``,`` removed).  A regex that does not match, or a group
that did not take part, leaves the attribute missing (an error with
``fail.on.missing.attribute='true'``, null otherwise).  As in siddhi-map-text, an attribute
that names a regex that is not defined, or a group the regex does not have, fails every event
at mapping time (the app still starts), whatever ``fail.on.missing.attribute`` says.
Regexes are Java's (``\\w``, ``\\d``, ``\\s`` are ASCII; ``(?<name>...)`` is a named group);
one that does not compile is refused when the app is created.

``event.grouping.enabled='true'``: a message holds several events separated by a line that is
the ``delimiter`` (default ``~~~~~~~~~~``); each event maps (or fails) on its own, and, as in
Siddhi, each goes into the app as an event of its own (the host still merges them into one
chunk where no output depends on it).

Sink: one message per event in the default format above (``null`` unquoted for a null
string), or a ``@payload("...{{attribute}}...")`` template (values as Java's ``toString``:
``55.6``, ``true``, ``null``).  ``mustache.enabled='true'`` renders the ``@payload`` as a
Mustache template instead: ``{{name}}`` HTML-escaped, ``{{{name}}}`` and ``{{& name}}`` as
they are, a null or unknown name as nothing (variables only; sections and partials are
refused when the app is created).  ``event.grouping.enabled='true'`` writes a chunk of events
as one message, the events separated by ``<new line><delimiter><new line>``.

Differences from siddhi-map-text, on purpose (none changes a payload Siddhi maps):

* ``delimiter`` and ``new.line.character`` are literal text (Siddhi splits with them as
  regular expressions) in which ``\\n``, ``\\r``, ``\\t`` and ``\\\\`` are the control characters
  (Siddhi's source matches them so through the regex; its sink writes the backslashes);
* an unquoted ``null`` value is null for every type (Siddhi's own sink writes a null so, and its
  source cannot read it back: ``"ul"`` for a string, a parse error otherwise); any other
  unquoted string value is taken as it is (Siddhi drops its first and last characters);
* an event of the default mapping with ``fail.on.missing.attribute='true'`` fails whenever an
  attribute is missing (Siddhi misses some such events, depending on which attribute is
  missing, and an event that failed can leave attributes of the next one unset).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from srota.engine.codegen import CodeGen
from srota.engine.registry import Kind, Param, extension
from srota.grammar.model import Annotation, Attribute, AttrType
from srota.mappers._base import (
    TRP_PREFIX,
    MappingError,
    Row,
    SinkMapper,
    SourceMapper,
    attribute_mapping,
    payload_annotation,
)
from srota.mappers._convert import (
    JAVA_SPACE,
    _ConvertError,
    format_value,
    java_text_converter,
    value_converter,
)
from srota.mappers._options import (
    annotation_options,
    creation_error,
    mapper_options,
    mapper_where,
    resolve_options,
)
from srota.mappers._template import Template, TemplateError

_S = (AttrType.STRING,)
_B = (AttrType.BOOL,)
_EMPTY: Mapping[str, Any] = {}
_ESCAPE = re.compile(r"\\([nrt\\])")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\"}
_REGEX_PREFIX = "regex."
DEFAULT_DELIMITER = "~~~~~~~~~~"
DEFAULT_NEW_LINE = "\n"


def decode_escapes(text: str) -> str:
    """``\\n``, ``\\r``, ``\\t`` and ``\\\\`` written in an option value as the characters they name.

    SiddhiQL keeps backslashes of single-quoted strings, so ``new.line.character='\\r\\n'``
    arrives as four characters; Siddhi's source uses it as a regex, which reads them as CR LF.
    """
    return _ESCAPE.sub(lambda m: _ESCAPES[m.group(1)], text)


def _decode(payload: Any) -> str:
    if isinstance(payload, str):
        return payload
    if isinstance(payload, (bytes, bytearray, memoryview)):
        try:
            return bytes(payload).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MappingError(f"the payload is not UTF-8 text: {exc}", payload=payload) from None
    raise MappingError(f"the text mapper expects text or bytes, not {type(payload).__name__}", payload=payload)


def _java_regex(pattern: str) -> re.Pattern[str]:
    """A Java regular expression compiled by Python's ``re`` with Java's defaults.

    Java's ``\\w``/``\\d``/``\\s``/``\\b`` are ASCII unless asked otherwise, and a named group
    is ``(?<name>...)`` there (``(?P<name>...)`` here).
    """
    translated = re.sub(r"\(\?<(?=[A-Za-z])", "(?P<", pattern)
    return re.compile(translated, re.ASCII)


class _AttrError(Exception):
    """One attribute of one event did not map: (attribute name, reason)."""


# ------------------------------------------------------------------------------------ source
class _RegexField:
    """An attribute read from group ``group`` of regex ``regex_id`` (or a transport property).

    ``error`` is set when the mapping cannot work (an undefined regex, a group index that is
    not a number): Siddhi reports it for every event, so the mapper does too.
    """

    __slots__ = ("name", "index", "type", "regex_id", "group", "trp", "error", "bad_group", "convert")

    def __init__(self, attr: Attribute, index: int, spec: str, regexes: Mapping[str, re.Pattern[str]]) -> None:
        self.name = attr.name
        self.index = index
        self.type = attr.type
        self.trp: str | None = None
        self.regex_id = ""
        self.group = 1
        self.error: str | None = None
        self.bad_group: str | None = None
        self.convert: Callable[[Any], Any] = java_text_converter(attr.type)
        spec = spec.strip()
        if spec.lower().startswith(TRP_PREFIX):
            self.trp = spec[len(TRP_PREFIX):]
            self.convert = value_converter(attr.type)
            return
        if "[" in spec and "]" in spec:  # A[2]: group 2 of regex A
            regex_id, _, group = spec.replace("]", "").partition("[")
            self.regex_id = regex_id
            try:
                self.group = int(group)
            except ValueError:
                self.error = f"the regex group index in {spec!r} is not a number"
                return
        else:  # B: group 1 of regex B
            self.regex_id = spec
        pattern = regexes.get(self.regex_id)
        if pattern is None:
            self.error = (f"no regular expression regex.{self.regex_id} is defined for attribute "
                          f"'{self.name}' (mapping {spec!r})")
        elif not 0 <= self.group <= pattern.groups:
            # Siddhi finds out when the regex matches (an IndexOutOfBoundsException then): an
            # event the regex does not match has the attribute missing, as any other.
            self.bad_group = f"regex.{self.regex_id} has no group {self.group} (attribute '{self.name}')"


class TextSourceMapper(SourceMapper):
    """Text -> rows (see the module doc for the format and the rules).

    ``attribute_map`` maps every attribute to a regex group (``A[1]``, ``B``) or a transport
    property (``trp:topic``) and needs ``regexes`` ({``A``: pattern}); None means the default
    ``key:value`` format.  Bad configuration raises ``ValueError``.
    """

    type_name = "text"

    def __init__(self, attributes: Sequence[Attribute], *, attribute_map: Mapping[str, str] | None = None,
                 regexes: Mapping[str, str] | None = None, fail_on_missing_attribute: bool = True,
                 event_grouping: bool = False, delimiter: str = DEFAULT_DELIMITER,
                 new_line: str = DEFAULT_NEW_LINE) -> None:
        super().__init__(attributes)
        self.fail_on_missing_attribute = fail_on_missing_attribute
        self.event_grouping = event_grouping
        # Siddhi sends each event of a grouped message on its own (the host may still merge
        # them where no output depends on the chunking).
        self.event_grouping_enabled = False
        if not new_line:
            raise ValueError("new.line.character cannot be empty")
        if not delimiter:
            raise ValueError("delimiter cannot be empty")
        self.new_line = new_line
        self.delimiter = delimiter
        self._splitter = delimiter + new_line
        self._pair_separator = "," + new_line
        compiled: dict[str, re.Pattern[str]] = {}
        for regex_id, pattern in (regexes or {}).items():
            try:
                compiled[regex_id] = _java_regex(pattern)
            except re.error as exc:
                raise ValueError(f"regex.{regex_id} is not a valid regular expression ({exc}): {pattern!r}") from None
        self.regexes = compiled
        self._index = {a.name: i for i, a in enumerate(self.attributes)}
        self._converters = tuple(java_text_converter(a.type) for a in self.attributes)
        self._strings = tuple(a.type is AttrType.STRING for a in self.attributes)
        self._fields: tuple[_RegexField, ...] | None = None
        if attribute_map is not None:
            self._fields = tuple(_RegexField(a, i, attribute_map[a.name], compiled)
                                 for i, a in enumerate(self.attributes))
            self._map_event = self._custom_event
        else:
            self._map_event = self._default_event

    # -------------------------------------------------------------- one event
    def _default_event(self, text: str, transport: Mapping[str, Any]) -> Row:
        n = len(self.attributes)
        pairs = text.split(self._pair_separator)
        while pairs and not pairs[-1]:  # Java's split drops trailing empty strings
            pairs.pop()
        fail = self.fail_on_missing_attribute
        if len(pairs) < n and fail:
            raise _AttrError(None, f"the event has {len(pairs)} key:value pairs but the stream has {n} "
                                   "attributes")
        values: list[Any] = [None] * n
        assigned = [False] * n
        index, converters, strings = self._index, self._converters, self._strings
        for pair in pairs:
            key, sep, value = pair.partition(":")
            if not sep:
                continue
            i = index.get(key.strip(JAVA_SPACE))
            if i is None or assigned[i]:  # not an attribute, or not its first pair
                continue
            value = value.strip(JAVA_SPACE)
            assigned[i] = True
            if value == "null":
                continue
            if strings[i]:
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                    value = value[1:-1]
                values[i] = value
                continue
            try:
                values[i] = converters[i](value.replace(",", "").strip(JAVA_SPACE))
            except _ConvertError as exc:
                attr = self.attributes[i]
                raise _AttrError(attr.name, f"incompatible data format: value {value!r} is not "
                                            f"{attr.type.value} ({exc})") from None
        if fail and not all(assigned):
            missing = self.attributes[assigned.index(False)].name
            raise _AttrError(missing, "missing in the event")
        return tuple(values)

    def _custom_event(self, text: str, transport: Mapping[str, Any]) -> Row:
        assert self._fields is not None
        values: list[Any] = [None] * len(self._fields)
        matches: dict[str, re.Match[str] | None] = {}
        fail = self.fail_on_missing_attribute
        for f in self._fields:
            if f.trp is not None:
                raw = transport.get(f.trp)
                if raw is None:
                    if fail:
                        raise _AttrError(f.name, f"transport property '{f.trp}' is missing")
                    continue
                try:
                    values[f.index] = f.convert(raw)
                except _ConvertError as exc:
                    raise _AttrError(f.name, f"cannot convert transport property '{f.trp}': {exc}") from None
                continue
            if f.error is not None:
                raise _AttrError(f.name, f.error)
            if f.regex_id in matches:
                m = matches[f.regex_id]
            else:  # each regex runs once per event, however many attributes it feeds
                m = matches[f.regex_id] = self.regexes[f.regex_id].search(text)
            if m is not None and f.bad_group is not None:
                raise _AttrError(f.name, f.bad_group)
            found = m.group(f.group) if m is not None else None
            if found is None:
                if fail:
                    raise _AttrError(f.name, f"regex.{f.regex_id} group {f.group} found no value in the event")
                continue
            if f.type is AttrType.STRING:
                values[f.index] = found
                continue
            try:
                values[f.index] = f.convert(found.replace(",", ""))
            except _ConvertError as exc:
                raise _AttrError(f.name, f"incompatible data format: {exc}") from None
        return tuple(values)

    # -------------------------------------------------------------- one message
    def _events(self, text: str) -> list[str]:
        if not self.event_grouping:
            return [text]
        parts = text.split(self._splitter)
        while len(parts) > 1 and not parts[-1]:  # Java's split drops trailing empty strings
            parts.pop()
        nl = self.new_line
        # Every event but the last ends with the line break before the delimiter line.
        return [p.removesuffix(nl) for p in parts[:-1]] + [parts[-1]]

    def map(self, payload: Any, transport: Mapping[str, Any] | None = None) -> list[Row]:
        """Rows of one text message; raises :class:`MappingError` (with the rows that did map)."""
        text = _decode(payload)
        t = transport if transport is not None else _EMPTY
        events = self._events(text)
        map_event = self._map_event
        rows: list[Row] = []
        failed: list[tuple[int, str | None, str]] = []
        for i, event in enumerate(events):
            try:
                rows.append(map_event(event, t))
            except _AttrError as exc:
                failed.append((i, *exc.args))
        if failed:
            index, name, reason = failed[0]
            if len(failed) > 1:
                reason = f"{reason} ({len(failed)} of {len(events)} events failed)"
            raise MappingError(reason, attribute=name, index=index if len(events) > 1 else None,
                               payload=payload, rows=rows)
        return rows


# ------------------------------------------------------------------------------------ sink
def siddhi_payload_template(text: str, attributes: Sequence[Attribute],
                            formatter: Any = None) -> Template | int:
    """A ``@payload`` value as Siddhi's ``TemplateBuilder`` reads it.

    A value that is just an attribute's name (``'price'``) is an *object* payload: its index
    is returned.  Otherwise ``\\`text\\``` loses its back-quotes and the text is a
    ``{{attribute}}`` template (an unknown attribute raises :class:`TemplateError`).
    """
    names = [a.name for a in attributes]
    if text.strip() in names:
        return names.index(text.strip())
    if re.fullmatch(r"`\S*`", text):
        text = text[1:-1]
    return Template(text, attributes, formatter)


def _quoted_string_formatter(type_: AttrType) -> Callable[[Any], str]:
    """Values of the default text format: strings in double quotes, null as ``null``."""
    if type_ is AttrType.STRING:
        def fmt(value: Any) -> str:
            return "null" if value is None else '"' + value + '"'
        return fmt

    def plain(value: Any) -> str:
        return format_value(value, type_)
    return plain


_HTML_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "=": "&#61;",
                 "`": "&#96;"}
_HTML_ESCAPE_RE = re.compile("[&<>\"'=`]")
_MUSTACHE_TAG = re.compile(r"\{\{(\{)?\s*([&!#^/>=]?)\s*(.*?)\s*\}?\}\}", re.DOTALL)


def _html_escape(text: str) -> str:
    """What mustache.java's ``HtmlEscaper`` writes for ``{{name}}``."""
    return _HTML_ESCAPE_RE.sub(lambda m: _HTML_ESCAPES[m.group(0)], text)


def mustache_template(text: str, attributes: Sequence[Attribute]) -> Callable[[Sequence[Any]], str]:
    """``render(row)`` for a Mustache template over the stream's attributes (variables only).

    ``{{name}}`` is HTML-escaped, ``{{{name}}}`` and ``{{& name}}`` are not, ``{{! ...}}`` is a
    comment; a null or unknown name renders as nothing.  Sections, inverted sections, partials
    and delimiter changes raise ``ValueError``.
    """
    index = {a.name: (i, a.type) for i, a in enumerate(attributes)}
    gen = CodeGen({"_esc": _html_escape, "_fmt": format_value})
    parts: list[str] = []
    pos = 0
    for m in _MUSTACHE_TAG.finditer(text):
        if m.start() > pos:
            parts.append(gen.ref(text[pos:m.start()], "s"))
        pos = m.end()
        triple, sigil, name = m.group(1) is not None, m.group(2), m.group(3)
        if sigil == "!":
            continue
        if sigil not in ("", "&"):
            raise ValueError(f"mustache '{{{{{sigil}...}}}}' tags (sections, partials, delimiters) are not "
                             f"supported: {m.group(0)!r}")
        if name not in index:
            continue  # Mustache renders an unknown name as nothing
        i, type_ = index[name]
        value = f"('' if r[{i}] is None else _fmt(r[{i}], {gen.ref(type_, 't')}))"
        parts.append(value if triple or sigil == "&" else f"_esc({value})")
    if pos < len(text):
        parts.append(gen.ref(text[pos:], "s"))
    render: Callable[[Sequence[Any]], str] = gen.function("_mustache", "r",
                                                          [f"return {' + '.join(parts) if parts else repr('')}"])
    return render


class TextSinkMapper(SinkMapper):
    """Rows -> text payloads (bytes, UTF-8); see the module doc for the formats."""

    type_name = "text"

    def __init__(self, attributes: Sequence[Attribute], *, payload: str | None = None,
                 mustache: bool = False, event_grouping_enabled: bool = False,
                 delimiter: str = DEFAULT_DELIMITER, new_line: str = DEFAULT_NEW_LINE) -> None:
        super().__init__(attributes)
        self.event_grouping_enabled = event_grouping_enabled
        self.delimiter = delimiter
        self.new_line = new_line
        self._separator = new_line + delimiter + new_line
        if payload is None:
            # The default format is itself a template: name:"value",<nl>name:value ...
            text = ("," + new_line).join(f"{a.name}:{{{{{a.name}}}}}" for a in self.attributes)
            self.render: Callable[[Sequence[Any]], str] = Template(
                text, self.attributes, _quoted_string_formatter).render
        elif mustache:
            self.render = mustache_template(payload, self.attributes)
        else:
            template = siddhi_payload_template(payload, self.attributes)
            if isinstance(template, int):
                raise ValueError("the text sink mapper does not support object @payload mappings "
                                 f"(@payload('{payload}') names an attribute)")
            self.render = template.render

    def map(self, rows: Sequence[Sequence[Any]]) -> list[Any]:
        """Text payloads for a chunk: one per row, or one for the chunk when grouping."""
        if not rows:
            return []
        render = self.render
        try:
            texts = [render(r) for r in rows]
        except IndexError:
            raise MappingError(f"a row has fewer values than the stream's {len(self.attributes)} attributes",
                               payload=rows) from None
        except (TypeError, ValueError) as exc:
            raise MappingError(f"cannot write text: {exc}", payload=rows) from None
        if self.event_grouping_enabled and len(texts) > 1:
            return [self._separator.join(texts).encode()]
        return [t.encode() for t in texts]


# ------------------------------------------------------------------------------------ registry
_SOURCE_PARAMS = (
    Param("fail.on.missing.attribute", _B, optional=True, default=True,
          doc="When true an event with a missing attribute (or a regex that finds nothing) fails to map; "
              "when false the attribute is null."),
    Param("event.grouping.enabled", _B, optional=True, default=False,
          doc="When true a message holds several events separated by a delimiter line."),
    Param("delimiter", _S, optional=True, default=DEFAULT_DELIMITER,
          doc="The line that separates the events of a grouped message."),
    Param("new.line.character", _S, optional=True, default="\\n",
          doc="The line break of the events ('\\n', '\\r\\n')."),
)

_SINK_PARAMS = (
    Param("event.grouping.enabled", _B, optional=True, default=False,
          doc="When true a chunk of events is one message, the events separated by the delimiter line."),
    Param("delimiter", _S, optional=True, default=DEFAULT_DELIMITER,
          doc="The line that separates grouped events."),
    Param("new.line.character", _S, optional=True, default="\\n",
          doc="The line break written ('\\n', '\\r\\n')."),
    Param("mustache.enabled", _B, optional=True, default=False,
          doc="Render @payload as a Mustache template ({{name}} HTML-escaped, {{{name}}} as is)."),
)


@extension(Kind.SOURCE_MAPPER, "text", params=_SOURCE_PARAMS + (
        Param("regex.<id>", _S, optional=True,
              doc="A regular expression that @attributes refers to as '<id>[group]' or '<id>' (group 1)."),),
           doc="Text -> events: key:value lines, or regex groups with @attributes; grouped messages.")
def _text_source(attributes: tuple[Attribute, ...], annotation: Annotation | None,
                 stream_id: str = "") -> TextSourceMapper:
    where = mapper_where("text", "source", stream_id)
    pos = annotation.pos if annotation is not None else None
    given = annotation_options(annotation)
    # regex.<id> options are open-ended (Siddhi takes every key that contains 'regex.').
    regexes = {k.replace(_REGEX_PREFIX, "", 1): v for k, v in given.items() if _REGEX_PREFIX in k}
    opts = resolve_options(_SOURCE_PARAMS, {k: v for k, v in given.items() if _REGEX_PREFIX not in k}, where, pos)
    amap = attribute_mapping(annotation, attributes, where)
    try:
        return TextSourceMapper(attributes, attribute_map=amap, regexes=regexes,
                                fail_on_missing_attribute=opts["fail.on.missing.attribute"],
                                event_grouping=opts["event.grouping.enabled"],
                                delimiter=decode_escapes(opts["delimiter"]),
                                new_line=decode_escapes(opts["new.line.character"]))
    except ValueError as exc:
        raise creation_error(f"{where}: {exc}", pos) from None


@extension(Kind.SINK_MAPPER, "text", params=_SINK_PARAMS,
           doc="Events -> text: key:value lines, @payload templates (plain or Mustache), grouping.")
def _text_sink(attributes: tuple[Attribute, ...], annotation: Annotation | None,
               stream_id: str = "") -> TextSinkMapper:
    where, pos, opts = mapper_options("text", "sink", _SINK_PARAMS, annotation, stream_id)
    payload_ann = payload_annotation(annotation, where)
    payload = None
    if payload_ann is not None:
        if len(payload_ann.elements) != 1:
            raise creation_error(f"{where}: the text sink mapper does not support multiple @payload mappings",
                                 payload_ann.pos or pos)
        payload = payload_ann.elements[0].value
    try:
        return TextSinkMapper(attributes, payload=payload, mustache=opts["mustache.enabled"],
                              event_grouping_enabled=opts["event.grouping.enabled"],
                              delimiter=decode_escapes(opts["delimiter"]),
                              new_line=decode_escapes(opts["new.line.character"]))
    except (ValueError, TemplateError) as exc:
        raise creation_error(f"{where}: {exc}", pos) from None
