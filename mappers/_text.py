"""The ``text`` source and sink mappers: what siddhi-map-text reads and writes.

Source, default mapping (no ``@attributes``): one event is ``key:value`` pairs separated by
``,`` and a line break (``new.line.character``, default ``\\n``)::

    symbol:"WSO2",
    price:55.6,
    volume:100

in any order, as siddhi-map-text reads it: key and value are trimmed; the first pair for an
attribute wins; keys the stream does not have are ignored; a ``string`` value is taken
between its enclosing quotes (``"..."`` or ``'...'``); any other value has its ``,`` removed
(``1,000``) and is parsed as Java does (``Integer.parseInt`` and ``Long.parseLong`` read any
Unicode decimal digit, ``١٢``; ``Double.parseDouble`` reads ``55.6d``, ``1e3`` and hexadecimal
``0x1.8p1``, not ``NaNf``; ``Float.parseFloat`` rounds the text to 32 bits once; a ``bool`` is
true for ``true`` in any case and false otherwise; an ``object`` gets the text).
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
Regexes are Java's, translated as the engine's ``regex:`` functions translate them
(``\\w``, ``\\d``, ``\\s`` are ASCII, ``\\b`` knows every letter, ``(?<name>...)``, ``\\p{Alpha}``,
``\\z``, ``\\Q...\\E``), and ``.``, ``$`` and ``\\Z`` know Java's line terminators (``.`` stops at
``\\r``, ``\\u0085``, ``\\u2028`` and ``\\u2029`` too, ``$`` also matches before a last ``\\r\\n``,
``\\r``, ...); one that does not compile is refused when the app is created.

``event.grouping.enabled='true'``: a message holds several events separated by a line that is
the ``delimiter`` (default ``~~~~~~~~~~``); each event maps (or fails) on its own, and, as in
Siddhi, each goes into the app as an event of its own (the host still merges them into one
chunk where no output depends on it).  As siddhi-map-text splits it: at each delimiter followed
by a line break (empty pieces at the end dropped, as Java's ``split`` drops them), each event
but the last losing a line break's length, whatever stands there (a delimiter glued to a
value cuts the value); an event shorter than that (a delimiter line first, two in a row, a
message of delimiter lines only) fails with the rest of the message, the events before it
mapped.

Sink: one message per event in the default format above (``null`` unquoted for a null
string), or a ``@payload("...{{attribute}}...")`` template (values as Java's ``toString``:
``55.6``, ``true``, ``null``; a placeholder's name is read as Siddhi's ``TemplateBuilder``
reads it, without bracket characters, ``{{(price)}}``, and with its spaces, so ``{{ price }}``
is refused).  ``mustache.enabled='true'`` renders the ``@payload`` as a Mustache template
instead, parsed as mustache.java parses it: ``{{name}}`` HTML-escaped (``&``, ``<``, ``>``,
the quotes, ``=``, the back-quote and the characters up to ``\\r``: ``&#10;``), ``{{{name}}}``
and ``{{& name}}`` as they are, a null or unknown name as nothing, ``{{!...}}`` and
``{{%...}}`` nothing, a carriage return without a line feed dropped from the template's text
(variables only; sections, partials and delimiter changes are refused when the app is
created, as are an empty tag, a ``{{{`` closed by ``}}`` and an unclosed ``{{``).
``event.grouping.enabled='true'`` writes a chunk of events as one message, the events
separated by ``<new line><delimiter><new line>``.

Differences from siddhi-map-text, on purpose (each where Siddhi fails a payload, or garbles it):

* ``delimiter`` and ``new.line.character`` are literal text (Siddhi splits with them as
  regular expressions) in which ``\\n``, ``\\r``, ``\\t`` and ``\\\\`` are the control characters
  (Siddhi's source matches them so through the regex, but cuts as many characters off each
  event of a grouped message as the option's text has, two for ``'\\n'``, the last character of
  the event with the line break; its sink writes the backslashes);
* an unquoted ``null`` value is null for every type (Siddhi's own sink writes a null so, and its
  source cannot read it back: ``"ul"`` for a string, a parse error otherwise); any other
  unquoted string value is taken as it is (Siddhi drops its first and last characters);
* an event of the default mapping with ``fail.on.missing.attribute='true'`` fails whenever an
  attribute is missing (Siddhi misses some such events, depending on which attribute is
  missing, and an event that failed can leave attributes of the next one unset).
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from srota.engine.codegen import CodeGen
from srota.engine.extensions.regex import java_regex
from srota.engine.javanumbers import JAVA_SPACE
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


_LINE_FLAGS = re.compile(r"\(\?([idmsuxU]*)(?:-[idmsuxU]*)?[:)]")
# Java's '.' without DOTALL: any character but a line terminator (\n, \r, \u0085, \u2028, \u2029)
_JAVA_DOT = "[^\\n\\r\\x85\\u2028\\u2029]"
# Java's '$' without MULTILINE (and its \Z): the end of the input, or before a line terminator
# that ends it (\r\n, or one of \n, \r, \u0085, \u2028, \u2029, but not the \n of a \r\n)
_JAVA_END = "(?=(?:\\r\\n|(?<!\\r)\\n|[\\r\\x85\\u2028\\u2029])?\\z)"


def _line_terminators(pattern: str) -> str:
    """A Java pattern with ``.``, ``$`` and ``\\Z`` spelled out as Java reads them.

    Python's ``.`` stops only at ``\\n`` and its ``$`` looks only past a last ``\\n``; Java's
    know every line terminator.  A pattern that sets DOTALL, MULTILINE or UNIX_LINES inline is
    left as it is.
    """
    flags = "".join(m.group(1) for m in _LINE_FLAGS.finditer(pattern))
    dot = not any(f in flags for f in "sd")
    end = not any(f in flags for f in "md")
    out: list[str] = []
    i, n, depth = 0, len(pattern), 0
    while i < n:
        c = pattern[i]
        if c == "\\" and pattern.startswith("\\Q", i):
            close = pattern.find("\\E", i + 2)
            close = n if close < 0 else close + 2
            out.append(pattern[i:close])
            i = close
            continue
        if c == "\\":
            text = pattern[i:i + 2]
            out.append(_JAVA_END if text == "\\Z" and not depth else text)
            i += 2
            continue
        if c == "[":
            depth += 1
            out.append(c)
            i += 1
            for lead in ("^", "]"):  # [^...] and a leading ']' (a literal one)
                if i < n and pattern[i] == lead:
                    out.append(lead)
                    i += 1
            continue
        if c == "]" and depth:
            depth -= 1
        elif c == "." and not depth and dot:
            c = _JAVA_DOT
        elif c == "$" and not depth and end:
            c = _JAVA_END
        out.append(c)
        i += 1
    return "".join(out)


def _java_regex(pattern: str) -> re.Pattern[str]:
    """A Java regular expression, as ``java.util.regex`` reads it, compiled for Python's ``re``.

    The engine's translation (:func:`~srota.engine.extensions.regex.java_regex`: ASCII ``\\w``,
    ``\\d``, ``\\s``, named groups, POSIX classes, ``\\z``, ...), with Java's line terminators
    for ``.``, ``$`` and ``\\Z``.
    """
    return java_regex(_line_terminators(pattern))


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
            if not re.fullmatch(r"[+-]?\d+", group):  # Integer.parseInt (no spaces, no '_')
                self.error = f"the regex group index in {spec!r} is not a number"
                return
            self.group = int(group)
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
    def _events(self, text: str) -> tuple[list[str], str | None]:
        """The events of a message, and why the rest of it was lost (None when it was not).

        As siddhi-map-text splits a grouped message: at each ``delimiter`` + line break (as
        Java's ``split``, which drops the empty strings at the end), and each event but the last
        loses as many characters as the line break has (the break before the delimiter line, or
        whatever stands there).  Where an event is shorter than that (a delimiter line first, two
        in a row) Siddhi fails on it, with the events after it; the ones before are sent.
        """
        if not self.event_grouping or self._splitter not in text:
            return [text], None
        parts = text.split(self._splitter)
        while parts and not parts[-1]:  # Java's split drops trailing empty strings
            parts.pop()
        if not parts:
            return [], "the message holds only delimiter lines"
        cut = len(self.new_line)
        events: list[str] = []
        for part in parts[:-1]:
            if len(part) < cut:
                return events, "an empty event before a delimiter line (the rest of the message is lost)"
            events.append(part[:len(part) - cut])
        events.append(parts[-1])
        return events, None

    def map(self, payload: Any, transport: Mapping[str, Any] | None = None) -> list[Row]:
        """Rows of one text message; raises :class:`MappingError` (with the rows that did map)."""
        text = _decode(payload)
        t = transport if transport is not None else _EMPTY
        events, lost = self._events(text)
        map_event = self._map_event
        rows: list[Row] = []
        failed: list[tuple[int, str | None, str]] = []
        for i, event in enumerate(events):
            try:
                rows.append(map_event(event, t))
            except _AttrError as exc:
                failed.append((i, *exc.args))
        if lost is not None:
            failed.append((len(events), None, lost))
        if failed:
            index, name, reason = failed[0]
            if len(failed) > 1:
                reason = f"{reason} ({len(failed)} of {len(events) + (lost is not None)} events failed)"
            raise MappingError(reason, attribute=name, index=index if len(events) > 1 or lost else None,
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


_SIDDHI_PLACEHOLDER = re.compile(r"\{\{([^{}]*)\}\}")


def _siddhi_placeholders(text: str, attributes: Sequence[Attribute]) -> str:
    """``text`` with its ``{{...}}`` placeholders as Siddhi's ``TemplateBuilder`` reads them: the
    name is what stands between the braces less any bracket character (``{{(price)}}`` is
    ``{{price}}``), spaces included, so ``{{ price }}`` names no attribute and is refused there
    (where Srota's templates would trim it)."""
    names = {a.name for a in attributes}

    def name_of(m: re.Match[str]) -> str:
        name = "".join(c for c in m.group(1) if unicodedata.category(c) not in ("Ps", "Pe"))
        if name not in names:
            raise TemplateError(f"the @payload's {m.group(0)!r} names no attribute of the stream "
                                f"({', '.join(a.name for a in attributes)})")
        return "{{" + name + "}}"

    return _SIDDHI_PLACEHOLDER.sub(name_of, text)


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
                 "`": "&#96;", **{chr(c): f"&#{c};" for c in range(14)}}
_HTML_ESCAPE_RE = re.compile("[&<>\"'=`\\x00-\\x0d]")
_LONE_CR = re.compile(r"\r(?!\n)")
_UNSUPPORTED_TAGS = frozenset("#^/<>?$=")  # sections, partials, delimiter changes


def _html_escape(text: str) -> str:
    """What mustache.java's ``HtmlEscaper`` writes for ``{{name}}`` (the characters up to ``\\r``
    too, as ``&#9;``, ``&#10;``, ``&#13;``)."""
    return _HTML_ESCAPE_RE.sub(lambda m: _HTML_ESCAPES[m.group(0)], text)


def _mustache_tags(text: str) -> list[tuple[str, str, str]]:
    """A Mustache template as mustache.java's parser reads it: (literal text, kind, name) per tag.

    A tag runs from ``{{`` to the first ``}}``; its first character says its kind (``{`` must
    then be closed by one more ``}``, ``&``, ``!``, a section's ``#`` ...), the rest, trimmed, is
    the name; a tag that starts with anything else is a variable whose name is all of it,
    trimmed (kind ``""``).  Like mustache.java, the literal text loses a carriage return that no
    line feed follows.  The last item is the text after the last tag, with kind ``"end"``.
    """
    items: list[tuple[str, str, str]] = []
    pos = 0
    while True:
        start = text.find("{{", pos)
        if start < 0:
            items.append((_LONE_CR.sub("", text[pos:]), "end", ""))
            return items
        literal = _LONE_CR.sub("", text[pos:start])
        end = text.find("}}", start + 2)
        if end < 0:
            raise ValueError(f"improperly closed mustache variable at {text[start:start + 20]!r}")
        command = text[start + 2:end]
        if not command:
            raise ValueError("an empty mustache tag '{{}}'")
        kind, name = command[0], command[1:].strip(JAVA_SPACE)
        pos = end + 2
        if kind == "{":
            if not text.startswith("}", pos):
                raise ValueError(f"improperly closed mustache variable {text[start:pos + 1]!r} "
                                 "('{{{' needs '}}}')")
            pos += 1
        elif kind not in _UNSUPPORTED_TAGS and kind not in "&!%":
            kind, name = "", command.strip(JAVA_SPACE)
        items.append((literal, kind, name))


def mustache_template(text: str, attributes: Sequence[Attribute]) -> Callable[[Sequence[Any]], str]:
    """``render(row)`` for a Mustache template over the stream's attributes (variables only).

    ``{{name}}`` is HTML-escaped, ``{{{name}}}`` and ``{{& name}}`` are not, ``{{! ...}}`` is a
    comment and ``{{%...}}`` a pragma (rendered as nothing); a null or unknown name renders as
    nothing.  Sections, inverted sections, partials and delimiter changes raise ``ValueError``, as
    do an empty tag, a ``{{{`` closed by ``}}`` and a ``{{`` not closed at all (mustache.java
    refuses those three too).
    """
    index = {a.name: (i, a.type) for i, a in enumerate(attributes)}
    gen = CodeGen({"_esc": _html_escape, "_fmt": format_value})
    parts: list[str] = []
    for literal, kind, name in _mustache_tags(text):
        if literal:
            parts.append(gen.ref(literal, "s"))
        if kind in _UNSUPPORTED_TAGS:
            raise ValueError(f"mustache '{{{{{kind}...}}}}' tags (sections, partials, delimiter changes) are "
                             f"not supported: '{{{{{kind}{name}}}}}'")
        if kind in ("!", "%", "end") or name not in index:
            continue  # a comment, a pragma (mustache.java knows none here), the end; an unknown name
        i, type_ = index[name]
        value = f"('' if r[{i}] is None else _fmt(r[{i}], {gen.ref(type_, 't')}))"
        parts.append(value if kind in ("{", "&") else f"_esc({value})")
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
            template = siddhi_payload_template(_siddhi_placeholders(payload, self.attributes), self.attributes)
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
