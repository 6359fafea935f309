"""The ``xml`` source and sink mappers: what siddhi-map-xml reads and writes.

Source, default mapping (no ``@attributes``): the root element is ``<events>`` and each of its
``<event>`` children is one event whose child elements are named after the attributes::

    <events><event><symbol>WSO2</symbol><price>55.6</price><volume>100</volume></event></events>

Values convert from the element's text as Siddhi's do (Java's parsers: ``Float.parseFloat``,
``Long.parseLong`` ...; an empty ``<symbol></symbol>`` is the empty string, an empty number
fails).  Child elements the stream does not have are ignored, and so are children of
``<events>`` not named ``event``: the events are the ``<event>`` children in no namespace, or,
when there is none, every child whose local name is ``event`` (Axiom's ``getChildrenWithName``
and its legacy fallback).  An event that lacks an attribute fails with
``fail.on.missing.attribute='true'`` (the default) and has it null otherwise; a value that does
not convert always fails the event.  Only the failing events of a payload are dropped.  A root
other than ``<events>`` fails the payload.  The custom-mapping options (``enclosing.element``,
``namespaces`` ...) are ignored here, as Siddhi ignores them.

A payload is text: bytes are decoded as UTF-8 with malformed sequences replaced (Java's ``new
String(bytes, UTF_8)``) and the XML declaration's encoding is not read.  What follows the root
element is not read either (Siddhi's Axiom builds the tree lazily): a second document, text or
a broken tag after it is no error, unless an XPath walks the document node's children (an
absolute path such as ``/stock/price`` or ``//price``, an absolute ``enclosing.element``),
which makes Axiom parse it.

Custom mapping: ``@attributes(symbol='symbol', price='price/@value', t='trp:topic')``, each an
XPath 1.0 expression (lxml's libxml2) or a transport property; prefixes in them are bound by
``namespaces='dt=urn:a,at=urn:b'``.  Without ``enclosing.element`` the root element is the one
event; with it (an XPath, ``//portfolio``) every element it selects holds events: its child
elements are the events, or, with ``enclosing.element.as.event='true'``, the selected elements
are.  The XPaths are evaluated on each event element; the first node selected gives the value:

* an element's text (an element with child elements gives its XML text, as Axiom's
  ``toString`` writes it, to a ``string`` attribute and fails any other type); with
  ``enclosing.element.as.event='true'``, a path that selects nothing but equals (ignoring case)
  the name of a leaf event element selects the event element itself
  (``enclosing.element='//list/data'``, ``@attributes(data='data')``);
* an XML attribute's value (a value that does not convert always fails the event);
* (beyond Siddhi, which leaves these null) a text node or a string, number or boolean result
  (``count(item)``), converted from its text.

An XPath that selects nothing, or an element text that does not convert, fails the event with
``fail.on.missing.attribute='true'`` and gives null otherwise.  A keyed ``@attributes`` must
map every attribute (Siddhi's core refuses the app otherwise); a mapping's text is trimmed.

``extract.leaf.node.data='true'`` flattens each event element instead: every leaf text and XML
attribute is keyed by its path from the event element (``/stock/price``,
``/child/detail/@key``), one event per leaf node (an element with child elements or an empty
element), with the values of its ancestors; the ``@attributes`` values are those keys.  Texts
are trimmed as Java's ``String.trim`` does.  A leaf that fails (a missing value with
``fail.on.missing.attribute='true'``, a value that does not convert) drops its event and the
later leaves of its element, not the earlier ones.  A value missing with
``fail.on.missing.attribute='false'`` is what Java's parser makes of null: false for a ``bool``,
null for an ``int``, ``long``, ``string`` or ``object``, and for a ``float`` or ``double`` the
whole message is lost (Siddhi's mapper meets a ``NullPointerException`` it does not catch).

``enable.streaming.xml.content='true'`` reads a document that arrives in pieces (a file read
line by line): the pieces are parsed incrementally and each element at the simple path
``enclosing.element`` (``/root/child``, required) is an event as soon as it is complete, mapped
on its own (``/child/@id`` addresses it as the root), with or without leaf-node extraction.
Only that element is kept in memory.  Consecutive documents are read one after the other; after
malformed content the mapper skips to the next piece that starts a document.

Parsing is safe by construction: no DTD is loaded, no entity is expanded, nothing is fetched
from the network, and a payload with a ``<!DOCTYPE`` is refused (no XXE, no entity
expansion bombs); libxml2's size and depth limits stay on (no ``huge_tree``).

Sink: one message per chunk of events.  Default mapping:
``<events><event><symbol>WSO2</symbol><price>55.6</price></event>...</events>`` (a null is
``<volume xsi:nil="true"/>``); ``enclosing.element='<portfolio>'`` replaces ``<events>`` (its
closing tag is derived from it as Siddhi does).  A ``@payload("<S>{{symbol}}</S>")`` template is
rendered per event (null as ``null``), the events of a chunk concatenated inside the enclosing
element when one is given.  ``validate.xml='true'`` parses each custom message and fails it
(to the sink's error route) when it is not well-formed XML or has a DOCTYPE.  A ``@payload``
that is only an attribute's name (an object message) is refused when the app is created.

Differences from siddhi-map-xml, on purpose (none changes a well-formed payload Siddhi maps):

* values written into XML are escaped (``&`` ``<`` ``>``, and quotes in a ``@payload``), where
  Siddhi writes them raw and so makes malformed XML of a value such as ``AT&T``; a
  ``@payload`` that is one placeholder (``'{{message}}'``) writes its value as it is, as
  Siddhi does (the attribute holds a document);
* a ``<!DOCTYPE`` is refused in source payloads (Siddhi's StAX parser reads DTDs);
* the streaming mode is an incremental XML parser, not Siddhi's text scanning, so a piece may
  end anywhere (inside a tag too) and text keeps its line breaks only if the transport keeps
  them; ``enclosing.element`` must be a simple path there, which is all Siddhi's scanner reads
  (it also loses the events after an element closed by ``/>`` in a piece that holds a whole
  document, and after a leaf ``float`` missing with ``fail.on.missing.attribute='false'`` its
  state is its own: here only that piece's events are lost);
* XML 1.1 is read as XML 1.0 (libxml2): its control-character references (``&#1;``) are
  malformed here, as are raw U+FFFE and U+FFFF, which Siddhi's Woodstox lets through;
* a ``namespaces`` entry without ``=`` is a creation error (Siddhi fails with an index error);
  one with more than one ``=`` is logged and its URI cut at the second ``=``, as in Siddhi.

Siddhi's sink writes ``xsi:nil`` without declaring the ``xsi`` prefix, so such a message is
not namespace-well-formed: neither Siddhi's source nor this one reads it back.
"""
from __future__ import annotations

import copy
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import structlog
from lxml import etree
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
    payload_template,
)
from srota.mappers._convert import MISSING, _ConvertError, format_value, java_text_converter, value_converter
from srota.mappers._options import (
    creation_error,
    mapper_options,
)
from srota.mappers._template import Template, TemplateError, is_one_placeholder

_S = (AttrType.STRING,)
_B = (AttrType.BOOL,)
_EMPTY: Mapping[str, Any] = {}
_log = structlog.get_logger("srota.mappers")

#: The only parser settings used for untrusted XML: no DTD, no entities, no network, and
#: libxml2's limits on (``huge_tree`` off bounds depth and text size).
PARSER_OPTIONS: Mapping[str, Any] = {
    "resolve_entities": False,
    "no_network": True,
    "huge_tree": False,
    "load_dtd": False,
    "dtd_validation": False,
}

# lxml parser objects must not be shared between threads; mappers run on the event loop, but a
# sink mapper may run on an app's engine thread.
_parsers = threading.local()


class _Refused(Exception):
    """A document that parses but is not accepted (a DOCTYPE)."""


def _parser() -> Any:
    parser = getattr(_parsers, "parser", None)
    if parser is None:
        parser = _parsers.parser = etree.XMLParser(**PARSER_OPTIONS)
    return parser


def _text_parser() -> Any:
    """A parser for a payload that is text: its declared encoding is ignored (UTF-8 bytes of the
    text are fed), as Siddhi's parser reads the Java string and never the declaration."""
    parser = getattr(_parsers, "text_parser", None)
    if parser is None:
        parser = _parsers.text_parser = etree.XMLParser(encoding="utf-8", **PARSER_OPTIONS)
    return parser


def _check_no_doctype(element: Any) -> None:
    info = element.getroottree().docinfo
    if info.doctype or info.internalDTD is not None:
        raise _Refused("a <!DOCTYPE> is not accepted (DTDs and entities are refused)")


def parse_xml(data: bytes) -> Any:
    """The root element of ``data``, parsed with :data:`PARSER_OPTIONS`.

    Raises ``etree.XMLSyntaxError`` for malformed XML and ``ValueError`` for a DOCTYPE.
    """
    root = etree.fromstring(data, _parser())
    try:
        _check_no_doctype(root)
    except _Refused as exc:
        raise ValueError(str(exc)) from None
    return root


def _parse_source(data: bytes) -> tuple[Any, str | None]:
    """The root element of a source payload (UTF-8 text, its declaration ignored), and the
    parse error met after the root element ended, if any.

    Siddhi's Axiom builds the document lazily and never reads past the root element unless an
    XPath walks the document's children: content after it (a second document, text, a broken
    tag) is not an error until then.  Raises ``etree.XMLSyntaxError`` for an error in the root
    element or before it, and :class:`_Refused` for a DOCTYPE.
    """
    try:
        root = etree.fromstring(data, _text_parser())
    except etree.XMLSyntaxError as exc:
        end = _root_end(data)
        if end is None or end == len(data):
            raise
        root = etree.fromstring(data[:end], _text_parser())  # the error is after it
        _check_no_doctype(root)
        return root, f"invalid XML after the root element: {exc}"
    _check_no_doctype(root)
    return root, None


def _root_end(data: bytes) -> int | None:
    """Where the root element of ``data`` ends (the offset after its end tag), when it ends
    before the first parse error the incremental parser sees, else None.  Fed up to each '>'
    so that the root's end is seen where it is."""
    parser = etree.XMLPullParser(events=("start", "end"), encoding="utf-8", **PARSER_OPTIONS)
    depth = 0
    start = 0
    n = len(data)
    try:
        while start < n:
            end = data.find(b">", start)
            stop = n if end < 0 else end + 1
            parser.feed(data[start:stop])
            start = stop
            for event, _element in parser.read_events():
                depth += 1 if event == "start" else -1
                if depth == 0:
                    return stop
    except etree.XMLSyntaxError:
        return None
    return None


def _java_text(payload: Any) -> bytes:
    """A payload as the UTF-8 bytes of the Java string Siddhi parses: text as it is, bytes
    decoded as UTF-8 with malformed sequences replaced (``new String(bytes, UTF_8)``)."""
    if isinstance(payload, str):
        return payload.encode("utf-8", "surrogatepass")
    data = _payload_bytes(payload)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace").encode("utf-8")
    return data


def _payload_bytes(payload: Any) -> bytes:
    if isinstance(payload, bytes):
        return payload
    if isinstance(payload, str):
        # Encoded, since lxml refuses text that carries an encoding declaration.
        return payload.encode("utf-8")
    if isinstance(payload, (bytearray, memoryview)):
        return bytes(payload)
    raise MappingError(f"the xml mapper expects bytes or text, not {type(payload).__name__}", payload=payload)


def _local(tag: str) -> str:
    """``{urn:x}price`` or ``price`` -> ``price``."""
    return tag[tag.index("}") + 1:] if tag[:1] == "{" else tag


def _is_element(node: Any) -> bool:
    # Comments and processing instructions are nodes too; their tag is a function.
    return node.tag.__class__ is str


def _has_child_element(element: Any) -> bool:
    return any(child.tag.__class__ is str for child in element)


def _direct_text(element: Any) -> str:
    """The element's own text nodes, joined (Axiom's ``getText``: not the descendants')."""
    if len(element) == 0:
        return element.text or ""
    return (element.text or "") + "".join(child.tail or "" for child in element)


def _java_trim(text: str) -> str:
    """Java's ``String.trim``: only characters up to U+0020 go (not U+2028, U+00A0 ...)."""
    return text.strip(JAVA_SPACE)


def _short(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."


def _describe(element: Any) -> str:
    return _short(etree.tostring(element, encoding="unicode", with_tail=False))


class _AttrError(Exception):
    """One attribute of one event did not map: (attribute name or None, reason)."""


class _MessageError(Exception):
    """The whole message fails, the events mapped before included (as an exception Siddhi's
    mapper does not catch drops them all)."""


def parse_namespaces(text: str | None) -> dict[str, str]:
    """``'dt=urn:a, at=urn:b'`` -> ``{'dt': 'urn:a', 'at': 'urn:b'}`` (siddhi-map-xml's format).

    An entry with more than one ``=`` is logged and keeps the text between the first two, as
    Siddhi does; one without ``=`` raises ``ValueError``.
    """
    out: dict[str, str] = {}
    if not text:
        return out
    for entry in text.split(","):
        if not entry.strip():
            continue
        parts = entry.split("=")
        if len(parts) < 2:
            raise ValueError(f"namespaces: malformed entry {entry.strip()!r}; each namespace has to have "
                             "format <prefix>=<uri>")
        if len(parts) > 2:
            _log.warning("malformed namespace mapping found: each namespace has to have format <prefix>=<uri>",
                         namespace=entry.strip(), used=f"{parts[0].strip()}={parts[1].strip()}")
        prefix, uri = parts[0].strip(), parts[1].strip()
        if not prefix:
            raise ValueError(f"namespaces: entry {entry.strip()!r} has no prefix")
        out[prefix] = uri
    return out


def _compile_xpath(text: str, namespaces: Mapping[str, str], what: str) -> Any:
    try:
        return etree.XPath(text, namespaces=dict(namespaces) or None)
    except (etree.XPathSyntaxError, TypeError, ValueError) as exc:
        raise ValueError(f"{what}: {text!r} is not an XPath expression: {exc}") from None


_LITERALS = re.compile(r"'[^']*'|\"[^\"]*\"")
_ABSOLUTE = re.compile(r"(?:^|[(\[,|=<>+]|!=|\b(?:and|or|div|mod)\b|\s-)\s*/")
_UPWARD = re.compile(r"\.\.|\b(?:parent|ancestor|ancestor-or-self|following|following-sibling)\s*::|\bid\s*\(")


def reaches_document(xpath: str) -> bool:
    """Whether evaluating ``xpath`` on the root element walks the document node's children: an
    absolute path (``/stock/price``, ``//price``), a step up or to following nodes, ``id()``.

    Jaxen on Siddhi's lazily built Axiom tree then parses what follows the root element, so an
    error there fails the message; a relative path (``price``, ``@id``) never reads it.
    """
    text = _LITERALS.sub("''", xpath.strip())
    return bool(_ABSOLUTE.search(text) or _UPWARD.search(text))


def _number_text(value: float) -> str:
    if value.is_integer() and abs(value) < 2 ** 63:
        return str(int(value))
    return repr(value)


# ------------------------------------------------------------------------- Axiom's XML text
_XML_NS = "http://www.w3.org/XML/1998/namespace"


def _axiom_chars(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace("\r", "&#xd;").replace("]]>", "]]&gt;")


def _axiom_attr(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
            .replace("\n", "&#xa;").replace("\t", "&#x9;").replace("\r", "&#xd;"))


def axiom_xml(element: Any) -> str:
    """An element as siddhi-map-xml's ``OMElement.toString()`` writes it (Axiom on Woodstox).

    The element's own namespace declarations are written, and one for each namespace an
    element or XML attribute uses that is not declared in the text so far (not those of its
    ancestors it does not use); declarations come before the attributes.  An element without
    content is ``<x/>``; CDATA is written as text; text escapes ``&``, ``<``, a carriage return
    and the ``>`` of ``]]>``; attribute values escape ``&``, ``<``, ``"`` and line breaks and
    tabs; a processing instruction is ``<?target  data?>`` (Axiom adds a space to the target).
    """
    out: list[str] = []
    _axiom_write(element, {None: ""}, out)
    return "".join(out)


def _axiom_write(element: Any, scope: dict[str | None, str], out: list[str]) -> None:
    parent = element.getparent()
    inherited = parent.nsmap if parent is not None else {}
    scope = dict(scope)
    declarations: list[str] = []

    def declare(prefix: str | None, uri: str) -> None:
        scope[prefix] = uri
        declarations.append(f' xmlns:{prefix}="{_axiom_attr(uri)}"' if prefix else f' xmlns="{_axiom_attr(uri)}"')

    for prefix, uri in element.nsmap.items():
        if inherited.get(prefix) != uri and scope.get(prefix) != uri:
            declare(prefix, uri)  # declared on the element itself (an xmlns="" only if needed)
    tag = element.tag
    prefix = element.prefix
    uri = tag[1:tag.index("}")] if tag[:1] == "{" else ""
    local = _local(tag)
    if scope.get(prefix, "" if prefix is None else None) != uri:
        declare(prefix, uri)
    name = f"{prefix}:{local}" if prefix else local
    attributes: list[str] = []
    for key, value in element.attrib.items():
        if key[:1] == "{":
            a_uri = key[1:key.index("}")]
            a_prefix = "xml" if a_uri == _XML_NS else next(
                (p for p, u in element.nsmap.items() if p and u == a_uri), None)
            if a_prefix is None:
                a_prefix = next((p for p, u in scope.items() if p and u == a_uri), "ns1")
            if a_prefix != "xml" and scope.get(a_prefix) != a_uri:
                declare(a_prefix, a_uri)
            attributes.append(f' {a_prefix}:{_local(key)}="{_axiom_attr(value)}"')
        else:
            attributes.append(f' {key}="{_axiom_attr(value)}"')
    out.append(f"<{name}{''.join(declarations)}{''.join(attributes)}")
    if not element.text and len(element) == 0:
        out.append("/>")
        return
    out.append(">")
    if element.text:
        out.append(_axiom_chars(element.text))
    for child in element:
        if _is_element(child):
            _axiom_write(child, scope, out)
        elif isinstance(child, etree._Comment):
            out.append(f"<!--{child.text or ''}-->")
        elif isinstance(child, etree._ProcessingInstruction):
            data = child.text or ""
            out.append(f"<?{child.target} {' ' + data if data else ''}?>")
        if child.tail:
            out.append(_axiom_chars(child.tail))
    out.append(f"</{name}>")


# ------------------------------------------------------------------------------------ source
class _Field:
    """One attribute of a custom mapping: an XPath, a leaf-data key, or a transport property."""

    __slots__ = ("name", "index", "type", "spec", "xpath", "trp", "convert", "convert_trp")

    def __init__(self, attr: Attribute, index: int, spec: str, namespaces: Mapping[str, str],
                 leaf_keys: bool) -> None:
        self.name = attr.name
        self.index = index
        self.type = attr.type
        self.spec = _java_trim(spec)  # Siddhi trims a mapping's text
        self.trp: str | None = None
        self.xpath: Any = None
        self.convert: Callable[[str], Any] = java_text_converter(attr.type)
        self.convert_trp: Callable[[Any], Any] = value_converter(attr.type)
        if self.spec.lower().startswith(TRP_PREFIX):
            self.trp = self.spec[len(TRP_PREFIX):]
        else:
            # Every mapping is an XPath, compiled (and so checked) now; leaf-node data is looked
            # up by the text of the path, as Siddhi does.
            xpath = _compile_xpath(self.spec, namespaces, f"attribute '{attr.name}'")
            self.xpath = None if leaf_keys else xpath


class _StreamSplitter:
    """Incremental parsing of a document that arrives in pieces: the complete elements at a path.

    Only the elements on the way to the path and the one being completed are kept; everything
    else is dropped as soon as it ends.
    """

    def __init__(self, steps: Sequence[tuple[str | None, str]], prefixes: Sequence[str | None]) -> None:
        self._steps = tuple(steps)      # (namespace URI or None for any, local name) per level
        self._prefixes = tuple(prefixes)  # prefix as written, matched when its URI is unknown
        self._parser: Any = None
        self._open: list[bool] = []     # per open element: whether it is on the path
        self._inside = 0                # open elements at the path (0 or 1)
        self._resync = False
        first = steps[0][1] if prefixes[0] is None else f"{prefixes[0]}:{steps[0][1]}"
        self._document_start = re.compile(rf"\s*<(\?xml|{re.escape(first)}[\s/>]|{re.escape(first)}$)")

    def _matches(self, depth: int, element: Any) -> bool:
        uri, local = self._steps[depth]
        tag = element.tag
        if _local(tag) != local:
            return False
        if uri is not None:
            return bool(tag == f"{{{uri}}}{local}")
        prefix = self._prefixes[depth]
        return prefix is None or element.prefix == prefix

    def feed(self, text: str) -> tuple[list[Any], str | None]:
        """The path elements completed by ``text`` (standalone copies), and the parse error
        that made the mapper drop the rest of the document, if any."""
        matches: list[Any] = []
        if self._resync:
            if not self._document_start.match(text):
                return matches, None
            self._resync = False
        start, n = 0, len(text)
        while start < n:
            # Fed up to each '>' so that the end of a document is seen where it is, and what
            # follows it starts a new one.
            end = text.find(">", start)
            stop = n if end < 0 else end + 1
            piece = text[start:stop]
            start = stop
            if self._parser is None:
                piece = piece.lstrip()
                if not piece:
                    continue
                self._parser = etree.XMLPullParser(events=("start", "end"), **PARSER_OPTIONS)
            try:
                self._parser.feed(piece)
                self._drain(matches)
            except (etree.XMLSyntaxError, _Refused) as exc:
                self._parser = None
                self._open.clear()
                self._inside = 0
                self._resync = True
                return matches, f"invalid XML: {exc}" if isinstance(exc, etree.XMLSyntaxError) else str(exc)
        return matches, None

    def _drain(self, matches: list[Any]) -> None:
        last = len(self._steps) - 1
        for event, element in self._parser.read_events():
            if event == "start":
                depth = len(self._open)
                if depth == 0:
                    _check_no_doctype(element)
                on_path = (depth == 0 or self._open[-1]) and depth <= last and self._matches(depth, element)
                self._open.append(on_path)
                if on_path and depth == last:
                    self._inside += 1
                continue
            on_path = self._open.pop()
            depth = len(self._open)
            if on_path and depth == last:
                self._inside -= 1
                matches.append(copy.deepcopy(element))  # its own document: '/child/@id' works
            if depth == 0:
                self._parser = None  # the document is over; what follows starts the next one
                return
            if not self._inside:
                # The classic iterparse clean-up: nothing that ended outside a match is needed.
                element.clear()
                parent = element.getparent()
                while element.getprevious() is not None:
                    del parent[0]


def _stream_steps(enclosing: str, namespaces: Mapping[str, str]) -> tuple[list[tuple[str | None, str]],
                                                                           list[str | None]]:
    path = enclosing.strip()
    names = path[1:].split("/") if path.startswith("/") else path.split("/")
    steps: list[tuple[str | None, str]] = []
    prefixes: list[str | None] = []
    for name in names:
        if not re.fullmatch(r"[A-Za-z_][\w.\-]*(:[A-Za-z_][\w.\-]*)?", name):
            raise ValueError(f"enclosing.element {enclosing!r}: with enable.streaming.xml.content='true' "
                             "it must be a simple path of element names, such as /root/child")
        prefix, _, local = name.rpartition(":")
        if prefix:
            steps.append((namespaces.get(prefix), local))
            prefixes.append(prefix)
        else:
            steps.append((None, local))
            prefixes.append(None)
    return steps, prefixes


class XmlSourceMapper(SourceMapper):
    """XML payload -> rows (see the module doc for the rules).

    ``attribute_map`` maps attributes to XPaths (or leaf-data keys) and transport properties
    (``trp:topic``); None means the default mapping, which ignores every other option.  Bad
    configuration raises ``ValueError`` (the registry factory turns it into a creation error).
    """

    type_name = "xml"

    def __init__(self, attributes: Sequence[Attribute], *, attribute_map: Mapping[str, str] | None = None,
                 namespaces: Mapping[str, str] | None = None, enclosing_element: str | None = None,
                 enclosing_element_as_event: bool = False, fail_on_missing_attribute: bool = True,
                 enable_streaming_xml_content: bool = False, extract_leaf_node_data: bool = False) -> None:
        super().__init__(attributes)
        self.fail_on_missing_attribute = fail_on_missing_attribute
        self._custom = attribute_map is not None
        ns = dict(namespaces or {})
        self._positions = {a.name: i for i, a in enumerate(self.attributes)}
        self._converters = {a.name: (i, java_text_converter(a.type), a.type)
                            for i, a in enumerate(self.attributes)}
        self._fields: tuple[_Field, ...] = ()
        self._enclosing: Any = None
        self._as_event = enclosing_element_as_event
        self._leaf = extract_leaf_node_data
        self._stream: _StreamSplitter | None = None
        self._reads_document = False
        if attribute_map is None:
            return
        self._fields = tuple(_Field(a, i, attribute_map[a.name], ns, extract_leaf_node_data)
                             for i, a in enumerate(self.attributes) if a.name in attribute_map)
        paths = [f.spec for f in self._fields if f.xpath is not None]
        if enclosing_element is not None and enclosing_element.strip() and not enable_streaming_xml_content:
            paths.append(enclosing_element)
        self._reads_document = any(reaches_document(p) for p in paths)
        if enable_streaming_xml_content:
            if not enclosing_element or not enclosing_element.strip():
                raise ValueError("'enclosing.element' must be given when 'enable.streaming.xml.content' is true")
            steps, prefixes = _stream_steps(enclosing_element, ns)
            self._stream = _StreamSplitter(steps, prefixes)
        elif enclosing_element is not None and enclosing_element.strip():
            self._enclosing = _compile_xpath(enclosing_element.strip(), ns, "enclosing.element")

    # -------------------------------------------------------------- mapping
    def map(self, payload: Any, transport: Mapping[str, Any] | None = None) -> list[Row]:
        """Rows of one XML payload (see the module doc); raises :class:`MappingError`."""
        t = transport if transport is not None else _EMPTY
        if self._stream is not None:
            return self._map_stream(payload, t)
        data = _java_text(payload)
        try:
            root, after = _parse_source(data)
        except etree.XMLSyntaxError as exc:
            raise MappingError(f"invalid XML: {exc}", payload=payload) from None
        except _Refused as exc:
            raise MappingError(str(exc), payload=payload) from None
        if not self._custom:
            return self._map_default(root, payload)
        if after is not None and self._reads_document:
            # an XPath walks the document's children, and so reaches what follows the root
            raise MappingError(after, payload=payload)
        if self._enclosing is None:
            events = [root]
        else:
            try:
                selected = self._enclosing(root)
            except etree.XPathError as exc:
                raise MappingError(f"enclosing.element could not be evaluated: {exc}", payload=payload) from None
            nodes = selected if selected.__class__ is list else []
            if not nodes:
                raise MappingError("the enclosing element did not match any XML node", payload=payload)
            if not all(isinstance(n, etree._Element) and _is_element(n) for n in nodes):
                raise MappingError("the enclosing element must select elements", payload=payload)
            if self._as_event:
                events = nodes
            else:
                events = [child for node in nodes for child in node if _is_element(child)]
        return self._map_events(events, t, payload)

    def _map_events(self, events: Sequence[Any], t: Mapping[str, Any], payload: Any,
                    rows: list[Row] | None = None, failed: list[tuple[int, str, str | None]] | None = None
                    ) -> list[Row]:
        rows = [] if rows is None else rows
        failed = [] if failed is None else failed
        for index, element in enumerate(events):
            try:
                if self._leaf:
                    self._leaf_rows(element, t, rows)
                else:
                    rows.append(self._custom_row(element, t))
            except _AttrError as exc:
                name, reason = exc.args
                failed.append((index, f"{reason} (event {_describe(element)})", name))
            except _MessageError as exc:
                rows.clear()
                raise MappingError(f"{exc} (event {_describe(element)})", index=index, payload=payload) from None
        if failed:
            _raise_failed(failed, len(events), payload, rows)
        return rows

    def _map_default(self, root: Any, payload: Any) -> list[Row]:
        if _local(root.tag) != "events":
            raise MappingError(f"the default mapping expects the root element <events>, found <{_local(root.tag)}>",
                               payload=payload)
        rows: list[Row] = []
        failed: list[tuple[int, str, str | None]] = []
        converters = self._converters
        n = len(self.attributes)
        # Axiom's getChildrenWithName(event): the <event> children in no namespace, or, when
        # there is none, every child whose local name is event (its legacy fallback)
        events = [child for child in root if child.tag == "event"] or \
            [child for child in root if _is_element(child) and _local(child.tag) == "event"]
        index = -1
        for event in events:
            index += 1
            row: list[Any] = [None] * n
            seen = [False] * n
            error: tuple[str, str | None] | None = None
            for child in event:
                if not _is_element(child):
                    continue
                found = converters.get(_local(child.tag))
                if found is None:
                    continue  # not an attribute of the stream: ignored, as Siddhi does
                i, convert, type_ = found
                text = _direct_text(child)
                try:
                    row[i] = convert(text)
                except _ConvertError as exc:
                    error = (f"cannot convert <{_local(child.tag)}> to {type_.value}: {exc}", _local(child.tag))
                    break
                seen[i] = True
            if error is None and self.fail_on_missing_attribute and not all(seen):
                missing = self.names[seen.index(False)]
                error = (f"no <{missing}> element in the event", missing)
            if error is not None:
                failed.append((index, f"{error[0]} (event {_describe(event)})", error[1]))
            else:
                rows.append(tuple(row))
        if failed:
            _raise_failed(failed, index + 1, payload, rows)
        return rows

    def _trp(self, field: _Field, t: Mapping[str, Any]) -> Any:
        value = t.get(field.trp or "", MISSING)
        if value is MISSING or value is None:
            if self.fail_on_missing_attribute:
                raise _AttrError(field.name, f"the transport property '{field.trp}' is missing")
            return None
        try:
            return field.convert_trp(value)
        except _ConvertError as exc:
            raise _AttrError(field.name, f"transport property '{field.trp}': {exc}") from None

    def _custom_row(self, element: Any, t: Mapping[str, Any]) -> Row:
        row: list[Any] = [None] * len(self.attributes)
        fail = self.fail_on_missing_attribute
        for f in self._fields:
            if f.trp is not None:
                row[f.index] = self._trp(f, t)
                continue
            try:
                result = f.xpath(element)
            except etree.XPathError as exc:
                raise _AttrError(f.name, f"XPath {f.spec!r} could not be evaluated: {exc}") from None
            if result.__class__ is list:
                if result:
                    node = result[0]
                elif (self._as_event and _local(element.tag).lower() == f.spec.lower()
                      and not _has_child_element(element)):
                    node = element  # the event element is the value (Siddhi's leaf-event rule)
                elif fail:
                    raise _AttrError(f.name, f"XPath {f.spec!r} did not select anything")
                else:
                    continue
            else:
                node = result
            row[f.index] = self._value(f, node, fail)
        return tuple(row)

    @staticmethod
    def _value(f: _Field, node: Any, fail: bool) -> Any:
        if isinstance(node, etree._Element):
            if not _is_element(node):
                return None  # a comment or processing instruction holds no value (as in Siddhi)
            if _has_child_element(node):
                if f.type is AttrType.STRING:
                    return axiom_xml(node)
                raise _AttrError(f.name, f"XPath {f.spec!r} selected an element with child elements, and "
                                         f"attribute '{f.name}' is {f.type.value}, not string")
            text: str = _direct_text(node)
            attribute = False
        elif isinstance(node, bool):
            text, attribute = ("true" if node else "false"), False
        elif isinstance(node, float):
            text, attribute = _number_text(node), False
        else:
            text = str(node)
            attribute = bool(getattr(node, "is_attribute", False))
        try:
            return f.convert(text)
        except _ConvertError as exc:
            # Siddhi drops the event for an XML attribute's value whatever the option says.
            if fail or attribute:
                raise _AttrError(f.name, f"cannot convert the value of {f.spec!r} to {f.type.value}: {exc}") from None
            return None

    def _leaf_rows(self, element: Any, t: Mapping[str, Any], rows: list[Row]) -> None:
        """Append the rows of the leaf nodes of ``element`` to ``rows``; a leaf that fails raises
        :class:`_AttrError` after the rows of the leaves before it, which Siddhi keeps.

        A value missing with ``fail.on.missing.attribute='false'`` goes through Java's parser
        as null, as in Siddhi: a ``bool`` is false (``Boolean.parseBoolean(null)``), an ``int``
        or ``long`` null, and a ``float`` or ``double`` fails the whole message (Siddhi's
        ``Float.parseFloat(null)`` throws an exception the mapper does not catch).
        """
        fail = self.fail_on_missing_attribute
        for flat in leaf_node_data(element):
            row: list[Any] = [None] * len(self.attributes)
            for f in self._fields:
                if f.trp is not None:
                    row[f.index] = self._trp(f, t)
                    continue
                value = flat.get(f.spec)
                if value is None:
                    if fail:
                        raise _AttrError(f.name, f"no value at {f.spec!r} in the leaf node data")
                    if f.type is AttrType.BOOL:
                        row[f.index] = False
                    elif f.type is AttrType.FLOAT or f.type is AttrType.DOUBLE:
                        raise _MessageError(f"no value at {f.spec!r} in the leaf node data for {f.type.value} "
                                            f"attribute '{f.name}' (Siddhi drops the whole message)")
                    continue
                try:
                    row[f.index] = f.convert(value)
                except _ConvertError as exc:
                    if fail:
                        raise _AttrError(f.name, f"cannot convert the value at {f.spec!r} to "
                                                 f"{f.type.value}: {exc}") from None
            rows.append(tuple(row))

    def _map_stream(self, payload: Any, t: Mapping[str, Any]) -> list[Row]:
        assert self._stream is not None
        # Java's text of the piece: bytes as UTF-8, malformed sequences replaced
        text = payload if isinstance(payload, str) else _payload_bytes(payload).decode("utf-8", "replace")
        elements, error = self._stream.feed(text)
        rows: list[Row] = []
        failed: list[tuple[int, str, str | None]] = []
        try:
            self._map_events(elements, t, payload, rows, failed)
        except MappingError:
            if error is None:
                raise
        if error is not None:
            failed.append((len(elements), error, None))
            _raise_failed(failed, len(elements) + 1, payload, rows)
        return rows


def leaf_node_data(element: Any) -> list[dict[str, str]]:
    """The flat values of each leaf node under ``element``, keyed by path (siddhi-map-xml's
    ``extract.leaf.node.data``).

    An element with non-blank text and no child elements is a value (``/stock/price``), an
    XML attribute too (``/stock/@exchange``); any other child element is a node of its own,
    and every node without such child nodes is a leaf that gives one event, with the values
    of its ancestors (the nearer the root, the higher the precedence, as in Siddhi).
    """
    leaves: list[list[dict[str, str]]] = []

    def walk(path: str, node: Any, chain: list[dict[str, str]]) -> None:
        own: dict[str, str] = {}
        local = _local(node.tag)
        for key, value in node.attrib.items():
            own[f"{path}/{local}/@{_local(key)}"] = value
        chain = [*chain, own]
        next_path = f"{path}/{local}"
        has_nodes = False
        for child in node:
            if not _is_element(child):
                continue
            text = _java_trim(_direct_text(child))
            if text and not _has_child_element(child):
                own[f"{next_path}/{_local(child.tag)}"] = text
            else:
                has_nodes = True
                walk(next_path, child, chain)
        if not has_nodes:
            # Values of the ancestors (and of later siblings' text) are read when merging,
            # after the walk: the chain holds the dicts, not copies, as Siddhi's holders do.
            leaves.append(chain)

    walk("", element, [])
    out = []
    for chain in leaves:
        flat: dict[str, str] = {}
        for values in reversed(chain):  # the leaf first, the root last: the root's value wins
            flat.update(values)
        out.append(flat)
    return out


def _raise_failed(failed: list[tuple[int, str, str | None]], total: int, payload: Any, rows: list[Row]) -> None:
    index, reason, name = failed[0]
    if len(failed) > 1:
        reason = f"{reason} ({len(failed)} of {total} events failed: {', '.join(str(i) for i, _r, _n in failed)})"
    raise MappingError(reason, attribute=name, index=index, payload=payload, rows=rows)


# ------------------------------------------------------------------------------------ sink
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_ATTR_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"})


def _placed_formatter(type_: AttrType, text: str, start: int) -> Callable[[Any], str]:
    """A placeholder that is the whole ``@payload`` (``'{{message}}'``) writes its value as it
    is, a document of its own, as Siddhi writes every value; one inside markup is escaped."""
    if is_one_placeholder(text):
        def raw(value: Any) -> str:
            return format_value(value, type_)
        return raw
    return _template_formatter(type_)


def _template_formatter(type_: AttrType) -> Callable[[Any], str]:
    """How a value goes into a ``@payload``: as Java's ``toString`` (``null`` for a null),
    text escaped for element content and quoted attributes alike."""
    def fmt(value: Any) -> str:
        return format_value(value, type_).translate(_ATTR_ESCAPES)
    return fmt


def closing_element(enclosing: str) -> str:
    """The closing tag siddhi-map-xml derives from an enclosing element: ``<portfolio>`` ->
    ``</portfolio>``, ``<portfolio xmlns:dt='...'>`` -> ``</portfolio>``."""
    parts = enclosing.split(" ")
    while len(parts) > 1 and parts[-1] == "":  # Java's split drops trailing empty strings
        parts.pop()
    if len(parts) == 1:
        return enclosing[:1] + "/" + enclosing[1:]
    head = parts[0] + ">"
    return head[:1] + "/" + head[1:]


class XmlSinkMapper(SinkMapper):
    """Rows -> XML payloads: one message per chunk (see the module doc for the format)."""

    type_name = "xml"
    #: Siddhi's xml sink maps an event array into one message.
    event_grouping_enabled = True

    def __init__(self, attributes: Sequence[Attribute], *, payload: str | None = None,
                 enclosing_element: str | None = None, validate_xml: bool = False) -> None:
        super().__init__(attributes)
        self.validate_xml = validate_xml
        if payload is not None and payload in self.names:
            raise ValueError(f"@payload('{payload}') is an object message (the attribute itself), which the xml "
                             "sink mapper does not support")
        self._template = Template(payload, attributes, placed=_placed_formatter) if payload is not None else None
        if enclosing_element is not None:
            self._open, self._close = enclosing_element, closing_element(enclosing_element)
        elif self._template is not None:
            self._open = self._close = ""
        else:
            self._open, self._close = "<events>", "</events>"
        self._columns = tuple((f"<{a.name}>", f"</{a.name}>", f'<{a.name} xsi:nil="true"/>', a.type)
                              for a in self.attributes)

    def _event(self, row: Sequence[Any]) -> str:
        parts = ["<event>"]
        for value, (start, end, nil, type_) in zip(row, self._columns, strict=True):
            if value is None:
                parts.append(nil)
            else:
                parts += (start, format_value(value, type_).translate(_TEXT_ESCAPES), end)
        parts.append("</event>")
        return "".join(parts)

    def map(self, rows: Sequence[Sequence[Any]]) -> list[Any]:
        """One XML message (bytes) for a chunk of rows; raises :class:`MappingError`."""
        if not rows:
            return []
        try:
            if self._template is not None:
                render = self._template.render
                text = self._open + "".join(render(r) for r in rows) + self._close
                if self.validate_xml:
                    self._validate(text)
            else:
                text = self._open + "".join(self._event(r) for r in rows) + self._close
        except MappingError:
            raise
        except ValueError as exc:  # zip(strict=True): a row of the wrong length
            raise MappingError(f"cannot write XML: {exc}", payload=rows) from None
        except IndexError:
            raise MappingError(f"a row has fewer values than the stream's {len(self.names)} attributes",
                               payload=rows) from None
        return [text.encode("utf-8")]

    @staticmethod
    def _validate(text: str) -> None:
        try:
            parse_xml(text.encode("utf-8"))
        except etree.XMLSyntaxError as exc:
            raise MappingError(f"the generated XML is not valid: {exc}", payload=text) from None
        except ValueError as exc:
            raise MappingError(f"the generated XML is not valid: {exc}", payload=text) from None


# ------------------------------------------------------------------------------------ registry
_SOURCE_PARAMS = (
    Param("namespaces", _S, optional=True, default=None,
          doc="The namespace prefixes the XPaths use: 'dt=urn:schemas-microsoft-com:datatypes,at=urn:x'."),
    Param("enclosing.element", _S, optional=True, default=None,
          doc="Custom mapping: XPath of the elements holding the events (their child elements are the "
              "events); without it the root element is the one event.  With enable.streaming.xml.content, "
              "the simple path of the event elements (/root/child)."),
    Param("enclosing.element.as.event", _B, optional=True, default=False,
          doc="When true the elements enclosing.element selects are the events themselves."),
    Param("fail.on.missing.attribute", _B, optional=True, default=True,
          doc="When true an event whose XPath selects nothing (or whose element text does not convert) fails "
              "to map and goes to the error route; when false the attribute is null."),
    Param("enable.streaming.xml.content", _B, optional=True, default=False,
          doc="Custom mapping of a document that arrives in pieces (a file line by line): each element at "
              "enclosing.element is an event as soon as it is complete."),
    Param("extract.leaf.node.data", _B, optional=True, default=False,
          doc="One event per leaf node of each event element, with its ancestors' values, keyed by path "
              "(/stock/price, /child/detail/@key)."),
)

_SINK_PARAMS = (
    Param("validate.xml", _B, optional=True, default=False,
          doc="Check that each custom (@payload) message is well-formed XML; one that is not fails to map."),
    Param("enclosing.element", _S, optional=True, default=None,
          doc="The element around the events of a message ('<portfolio>'); the default mapping uses "
              "<events>, a @payload none."),
)


@extension(Kind.SOURCE_MAPPER, "xml", params=_SOURCE_PARAMS,
           doc="XML -> events: Siddhi's <events><event>...</event></events> format, XPath @attributes with "
               "namespaces, enclosing elements, leaf-node extraction, streamed documents and trp: properties.")
def _xml_source(attributes: tuple[Attribute, ...], annotation: Annotation | None,
                stream_id: str = "") -> XmlSourceMapper:
    where, pos, opts = mapper_options("xml", "source", _SOURCE_PARAMS, annotation, stream_id)
    amap = attribute_mapping(annotation, attributes, where)
    try:
        namespaces = parse_namespaces(opts["namespaces"]) if amap is not None else {}
        return XmlSourceMapper(attributes, attribute_map=amap, namespaces=namespaces,
                               enclosing_element=opts["enclosing.element"],
                               enclosing_element_as_event=opts["enclosing.element.as.event"],
                               fail_on_missing_attribute=opts["fail.on.missing.attribute"],
                               enable_streaming_xml_content=opts["enable.streaming.xml.content"],
                               extract_leaf_node_data=opts["extract.leaf.node.data"])
    except ValueError as exc:
        raise creation_error(f"{where}: {exc}", pos) from None


@extension(Kind.SINK_MAPPER, "xml", params=_SINK_PARAMS,
           doc="Events -> XML: <events><event>...</event></events> per chunk, @payload templates, enclosing "
               "element, validation.")
def _xml_sink(attributes: tuple[Attribute, ...], annotation: Annotation | None,
              stream_id: str = "") -> XmlSinkMapper:
    where, pos, opts = mapper_options("xml", "sink", _SINK_PARAMS, annotation, stream_id)
    payload = payload_template(annotation, where, pos, "the xml sink mapper does not support multiple @payload mappings")
    try:
        return XmlSinkMapper(attributes, payload=payload, enclosing_element=opts["enclosing.element"],
                             validate_xml=opts["validate.xml"])
    except TemplateError as exc:
        raise creation_error(f"{where}: {exc}", pos) from None
    except ValueError as exc:
        raise creation_error(f"{where}: {exc}", pos) from None
