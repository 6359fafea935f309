"""The SiddhiQL parser: app text in, :mod:`grammar.model` nodes out.

The grammar lives in ``siddhi.lark`` (package data) and is compiled once into a lark LALR(1)
parser with the contextual lexer.  A lark transformer (:class:`_Builder`, non-recursive so
that long ``or`` chains do not exhaust the stack) turns the parse tree into frozen model
nodes, each carrying the position of its first token.

Every failure, in the lexer, the parser or the builder, surfaces as
:class:`~grammar.errors.SiddhiParserError` with line, column, the offending source line and
(for syntax errors) the tokens that would have been accepted.

Public API::

    parse(text) -> SiddhiApp
    parse_expression(text) -> Expression
    parse_on_demand_query(text) -> OnDemandQuery
    parse_time(text) -> int          # "1 min 30 sec" -> 90000 (annotation values; grammar.durations)
"""
from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib.resources
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from lark import Lark, Token, Transformer_NonRecursive, Tree, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)
from srota.grammar import states
from srota.grammar.durations import UNIT_MILLIS, UNIT_RANK, parse_duration
from srota.grammar.errors import SiddhiParserError
from srota.grammar.model import (
    AbsentStreamStateElement,
    AggregationDefinition,
    And,
    Annotation,
    AnnotationElement,
    Attribute,
    AttrType,
    Compare,
    CompareOperator,
    Constant,
    CountStateElement,
    DeleteStream,
    EventOutputRate,
    EveryStateElement,
    Expression,
    Filter,
    FunctionCall,
    FunctionDefinition,
    GroupStateElement,
    In,
    InsertIntoStream,
    IsNull,
    IsNullStream,
    JoinInputStream,
    JoinTrigger,
    JoinType,
    LastIndex,
    LogicalOperator,
    LogicalStateElement,
    MathOp,
    MathOperator,
    NextStateElement,
    Not,
    OnDemandQuery,
    OnDemandQueryType,
    Or,
    Order,
    OrderByAttribute,
    OutputAttribute,
    OutputEventType,
    Partition,
    Pos,
    Query,
    RangePartitionProperty,
    RangePartitionType,
    RateType,
    ReturnStream,
    Selector,
    SetAttribute,
    SiddhiApp,
    SingleInputStream,
    SnapshotOutputRate,
    StateElement,
    StateInputStream,
    StateType,
    StreamDefinition,
    StreamFunction,
    StreamStateElement,
    TableDefinition,
    TimeConstant,
    TimeDuration,
    TimeOutputRate,
    TriggerDefinition,
    UpdateOrInsertStream,
    UpdateStream,
    ValuePartitionType,
    Variable,
    WindowDefinition,
    WindowHandler,
)

__all__ = ["parse", "parse_expression", "parse_on_demand_query", "parse_time"]

# ------------------------------------------------------------------------------------ lark setup
_START_APP = "app"
_START_EXPRESSION = "expression_only"
_START_ON_DEMAND = "on_demand_only"


@functools.cache
def _lark() -> Lark:
    """The compiled LALR parser, built on first use and shared afterwards (lark parsers are
    reentrant: all per-parse state lives in the parse call).

    lark's analysis of the grammar is cached (cutting a cold start from ~0.3 s to ~0.05 s)
    in a private per-user directory (:func:`_cache_file`), not in the shared temp directory:
    the cache is a pickle, and a file someone else can plant there would run their code.
    Without a private place there is no cache; lark builds its tables then.
    """
    text = importlib.resources.files(__package__).joinpath("siddhi.lark").read_text(encoding="utf-8")
    return Lark(
        text,
        parser="lalr",
        lexer="contextual",
        start=[_START_APP, _START_EXPRESSION, _START_ON_DEMAND],
        propagate_positions=True,
        maybe_placeholders=False,
        cache=_cache_file(text),
    )


def _cache_file(grammar: str) -> str | bool:
    """Where lark may cache its tables: a file in ``$SROTA_CACHE_DIR`` (default
    ``$XDG_CACHE_HOME/srota`` or ``~/.cache/srota``), a directory of this user's only (0700);
    False (no cache) when there is no such place."""
    import hashlib
    import sys

    import lark

    getuid = getattr(os, "getuid", None)
    if getuid is None:  # no POSIX ownership to check
        return False
    base = os.environ.get("SROTA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "srota")
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        st = os.stat(base)
        if st.st_uid != getuid():
            return False
        if st.st_mode & 0o077:
            os.chmod(base, 0o700)
        key = hashlib.sha256(f"{grammar}\0{lark.__version__}\0{sys.version_info[:2]}".encode()).hexdigest()[:24]
        path = os.path.join(base, f"grammar-{key}.lark-cache")
        if os.path.lexists(path):
            fst = os.lstat(path)
            if fst.st_uid != getuid() or fst.st_mode & 0o022 or not os.path.isfile(path) or os.path.islink(path):
                return False
        return path
    except OSError:
        return False


# ------------------------------------------------------------------------------------ time values
# One table and one rule for time literals and time strings (see grammar/durations.py).
_UNIT_MILLIS = UNIT_MILLIS
_UNIT_RANK = UNIT_RANK

_DURATION_BY_UNIT: dict[str, TimeDuration] = {
    "SECONDS": TimeDuration.SECONDS,
    "MINUTES": TimeDuration.MINUTES,
    "HOURS": TimeDuration.HOURS,
    "DAYS": TimeDuration.DAYS,
    "MONTHS": TimeDuration.MONTHS,
    "YEARS": TimeDuration.YEARS,
}
_DURATION_ORDER = list(TimeDuration)


def parse_time(text: str) -> int:
    """Milliseconds of a time string such as ``'1 min 30 sec'`` or ``'100 ms'``.

    The same parser as annotation values and the service config use
    (:func:`grammar.durations.parse_duration`); raises :class:`ValueError`.
    """
    return parse_duration(text)


# ------------------------------------------------------------------------------------ error text
# Readable names for terminals in "expected ..." lists.
_TERMINAL_NAMES: dict[str, str] = {
    "NAME": "identifier",
    "STRING": "string",
    "INT_LIT": "integer",
    "LONG_LIT": "long",
    "FLOAT_LIT": "float",
    "DOUBLE_LIT": "double",
    "SCRIPT": "'{ function body }'",
    "ARROW": "'->'",
    "TRIPLE_DOT": "'...'",
    "STRING_TYPE": "'string'",
    "INT_TYPE": "'int'",
    "LONG_TYPE": "'long'",
    "FLOAT_TYPE": "'float'",
    "DOUBLE_TYPE": "'double'",
    "BOOL_TYPE": "'bool'",
    "OBJECT_TYPE": "'object'",
    "YEARS": "'year'",
    "MONTHS": "'month'",
    "WEEKS": "'week'",
    "DAYS": "'day'",
    "HOURS": "'hour'",
    "MINUTES": "'min'",
    "SECONDS": "'sec'",
    "MILLISECONDS": "'millisec'",
    "_DOT": "'.'",
    "_COLON": "':'",
    "$END": "end of input",
}

_MAX_EXPECTED_SHOWN = 16


def _terminal_display(name: str) -> str:
    """A human name for terminal ``name``: keywords as ``'select'``, punctuation as ``';'``."""
    if name in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[name]
    try:
        term = _lark().get_terminal(name)
    except KeyError:
        return name
    pattern = term.pattern
    if pattern.type == "str":
        return f"'{pattern.value}'"
    # keyword terminals are /word\b/i
    m = re.fullmatch(r"([a-z_]+)\\b", pattern.value)
    if m:
        return f"'{m.group(1)}'"
    return name.lower()


def _token_display(token: Token) -> str:
    if token.type == "$END":
        return "end of input"
    value = str(token.value)
    if len(value) > 40:
        value = value[:37] + "..."
    return f"'{value}'"


def _source_line(text: str, line: int | None) -> str | None:
    if line is None:
        return None
    lines = text.splitlines()
    if 1 <= line <= len(lines):
        return lines[line - 1]
    return "" if line == len(lines) + 1 else None


def _end_position(text: str) -> tuple[int, int]:
    """Line and column just after the last character of ``text``."""
    line = text.count("\n") + 1
    last_nl = text.rfind("\n")
    return line, len(text) - last_nl


def _syntax_error(text: str, exc: UnexpectedInput) -> SiddhiParserError:
    """Convert any lark ``UnexpectedInput`` into a :class:`SiddhiParserError`."""
    expected_names: Iterable[str] = ()
    if isinstance(exc, UnexpectedToken):
        expected_names = exc.accepts or exc.expected
        token = exc.token
        if token.type == "$END" or getattr(token, "line", None) is None:
            line, column = _end_position(text)
        else:
            line, column = token.line, token.column
        found = _token_display(token)
    elif isinstance(exc, UnexpectedCharacters):
        expected_names = exc.allowed or ()
        line, column = exc.line, exc.column
        at = exc.pos_in_stream or 0
        char = text[at] if at < len(text) else ""
        found = f"character {char!r}" if char else "end of input"
        if char in ("'", '"'):
            found += " (unterminated string? strings cannot span lines)"
    elif isinstance(exc, UnexpectedEOF):
        expected_names = exc.expected
        line, column = _end_position(text)
        found = "end of input"
    else:  # pragma: no cover - lark has no other UnexpectedInput subclasses
        line, column = getattr(exc, "line", 1) or 1, getattr(exc, "column", 1) or 1
        found = "input"
    # Ignored terminals (whitespace, comments) are never worth suggesting.
    shown = sorted({_terminal_display(n) for n in expected_names
                    if n not in ("WS", "LINE_COMMENT", "BLOCK_COMMENT")}, key=_expected_order)
    message = f"unexpected {found}"
    if shown:
        listed = ", ".join(shown[:_MAX_EXPECTED_SHOWN])
        if len(shown) > _MAX_EXPECTED_SHOWN:
            listed += ", ..."
        message += f", expected {shown[0]}" if len(shown) == 1 else f", expected one of: {listed}"
        # A misspelt keyword (`selct`) is the most common slip: name the likely fix.
        if isinstance(exc, UnexpectedToken) and exc.token.type == "NAME":
            keywords = [k.strip("'") for k in shown if re.fullmatch(r"'[a-z]+'", k)]
            close = difflib.get_close_matches(str(exc.token).lower(), keywords, n=1, cutoff=0.75)
            if close:
                message += f" (did you mean '{close[0]}'?)"
    return SiddhiParserError(message, line, column, _source_line(text, line), tuple(shown))


def _expected_order(display: str) -> tuple[int, str]:
    """Keywords first, then kinds of token (identifier, string...), then punctuation."""
    if re.fullmatch(r"'[a-z]+'", display):
        return 0, display
    if display[0] != "'":
        return 1, display
    return 2, display


# ------------------------------------------------------------------------------------ scripts
def _mask_scripts(text: str) -> tuple[str, dict[int, str]]:
    """Blank out the bodies of ``define function ... { body }`` so the lexer sees ``{   }``.

    Nested braces cannot be matched by a regular expression, so the body is found here with
    the g4's SCRIPT rule (nested ``{}``, ``"..."`` strings and ``//`` comments inside) and
    replaced by spaces, keeping newlines so that positions stay right.  Returns the masked
    text and the original bodies keyed by the offset of their ``{``.
    """
    if "{" not in text:
        return text, {}
    out = list(text)
    scripts: dict[int, str] = {}
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "-" and text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c in "'\"`":
            if text.startswith('"""', i):
                j = text.find('"""', i + 3)
                i = n if j < 0 else j + 3
                continue
            j = i + 1
            # SiddhiQL strings never span lines; stop at a newline so a stray quote
            # does not swallow the rest of the app.
            while j < n and text[j] != c and (c == "`" or text[j] != "\n"):
                j += 1
            i = j + 1
        elif c == "{":
            end = _script_end(text, i)
            if end < 0:
                line = text.count("\n", 0, i) + 1
                column = i - text.rfind("\n", 0, i)
                raise SiddhiParserError("unterminated function body: '{' has no matching '}'",
                                        line, column, _source_line(text, line))
            scripts[i] = text[i + 1:end]
            for k in range(i + 1, end):
                if text[k] not in "\r\n":
                    out[k] = " "
            i = end + 1
        else:
            i += 1
    return "".join(out), scripts


def _script_end(text: str, start: int) -> int:
    """Index of the ``}`` closing the ``{`` at ``start``, or -1."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        elif c == '"':
            j = text.find('"', i + 1)
            if j < 0:
                return -1
            i = j
        elif c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            if j < 0:
                return -1
            i = j
        i += 1
    return -1


# ------------------------------------------------------------------------------------ helpers
class _Source(NamedTuple):
    """``[#|!]Name`` before it becomes part of a model node."""

    id: str
    is_inner: bool
    is_fault: bool
    pos: Pos


class _StreamRef(NamedTuple):
    """``[#|!]name[index]`` in an expression (``e1[last]``, ``#S``)."""

    id: str
    stream_index: int | None
    is_inner: bool
    is_fault: bool
    pos: Pos


class _Within(NamedTuple):
    """``within a[, b] per p`` of joins with aggregations and of on-demand queries."""

    within: tuple[Expression, ...]
    per: Expression


class _Selection(NamedTuple):
    """The ``select`` list: None for ``select *``."""

    value: tuple[OutputAttribute, ...] | None
    value_pos: Pos | None


class _Clause(NamedTuple):
    """A tagged optional clause (``group by``, ``having``...) on its way into a Selector."""

    kind: str
    value: Any


# Keyword tokens that carry no information beyond the rule they appear in.
_NOISE = frozenset({
    "DEFINE", "STREAM", "TABLE", "WINDOW", "TRIGGER", "FUNCTION", "AGGREGATION", "AGGREGATE",
    "FROM", "PARTITION", "SELECT", "GROUP", "BY", "ORDER", "LIMIT", "OFFSET", "HAVING", "INSERT",
    "DELETE", "UPDATE", "SET", "RETURN", "INTO", "OUTPUT", "SNAPSHOT", "FOR", "OF", "AS", "AT",
    "OR", "AND", "IN", "ON", "IS", "NULL", "NOT", "WITHIN", "WITH", "BEGIN", "END", "EVERY",
    "JOIN", "INNER", "OUTER", "LEFT", "RIGHT", "FULL", "PER", "ARROW", "TRIPLE_DOT",
})


def _strip(children: list[Any]) -> list[Any]:
    """Children without keyword tokens."""
    return [c for c in children if not (isinstance(c, Token) and c.type in _NOISE)]


def _name(token: Token) -> str:
    """An identifier without its back-quotes."""
    value = str(token)
    return value[1:-1] if value.startswith("`") else value


def _tok_pos(token: Token) -> Pos:
    # (every token lark hands to the transformer carries its position)
    return Pos(token.line or 0, token.column or 0)


def _unquote(token: Token) -> str:
    """The value of a string literal: its text between the quotes, verbatim.

    Siddhi 5's lexer (SiddhiQL.g4's STRING_LITERAL) only strips the quotes, of a triple-quoted
    literal too: a regex's backslash stays in it, and a template's backslash and ``n`` stay two
    characters (JSON's escape, where a decoded line break would break the JSON).
    """
    value = str(token)
    if value.startswith('"""'):
        return value[3:-3]
    return value[1:-1]


def _map_nodes(node: Any, fn: Callable[[Any], Any]) -> Any:
    """Rebuild a model tree bottom-up, applying ``fn`` to every dataclass node."""
    if isinstance(node, tuple) and not hasattr(node, "_fields"):
        mapped = tuple(_map_nodes(x, fn) for x in node)
        return node if all(a is b for a, b in zip(mapped, node, strict=True)) else mapped
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {}
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            new = _map_nodes(value, fn)
            if new is not value:
                changes[f.name] = new
        if changes:
            node = dataclasses.replace(node, **changes)
        return fn(node)
    return node


def _resolve_null_checks(node: Any, active: set[str]) -> Any:
    """Turn ``x is null`` into an attribute check unless ``x`` names a stream of the input.

    Siddhi's visitor does the same with its set of "active streams": ``e2 is null`` is a
    stream check when ``e2`` is a pattern event (or a stream / alias of the query), and an
    attribute check otherwise.
    """
    def fix(n: Any) -> Any:
        if isinstance(n, IsNullStream) and not n.is_inner:
            key = ("!" + n.stream_id) if n.is_fault else n.stream_id
            if key not in active:
                return IsNull(Variable(n.stream_id, pos=n.pos), pos=n.pos)
        return n

    return _map_nodes(node, fix)


def _input_stream_names(inp: Any) -> set[str]:
    """Stream ids, aliases and event references an input makes available (Siddhi's activeStreams)."""
    names: set[str] = set()

    def visit(n: Any) -> Any:
        if isinstance(n, SingleInputStream):
            prefix = "#" if n.is_inner else "!" if n.is_fault else ""
            names.add(prefix + n.stream_id)
            if n.reference_id:
                names.add(n.reference_id)
        return n

    _map_nodes(inp, visit)
    return names


def _state_streams(element: Any) -> list[SingleInputStream]:
    found: list[SingleInputStream] = []

    def visit(n: Any) -> Any:
        if isinstance(n, SingleInputStream):
            found.append(n)
        return n

    _map_nodes(element, visit)
    return found


_ATTR_TYPES = {
    "STRING_TYPE": AttrType.STRING,
    "INT_TYPE": AttrType.INT,
    "LONG_TYPE": AttrType.LONG,
    "FLOAT_TYPE": AttrType.FLOAT,
    "DOUBLE_TYPE": AttrType.DOUBLE,
    "BOOL_TYPE": AttrType.BOOL,
    "OBJECT_TYPE": AttrType.OBJECT,
}

class _StarArgs:
    """The argument list of ``f(*)``."""


_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


# ------------------------------------------------------------------------------------ builder
@v_args(meta=True)
class _Builder(Transformer_NonRecursive):
    """Parse tree -> model nodes.  One method per grammar rule (or alias).

    Methods receive ``(meta, children)``; ``meta`` gives the position of the rule's first
    token.  Semantic checks that Siddhi's ANTLR visitor makes (and reports as parser errors)
    are made here too, raising :class:`SiddhiParserError` at the offending construct.
    """

    def __init__(self, text: str, scripts: dict[int, str]) -> None:
        super().__init__(visit_tokens=False)
        self._text = text
        self._scripts = scripts
        # Side tables keyed by id() of model nodes built during this parse (nodes are frozen
        # and the tables only live as long as the transform).
        self._event_refs: set[int] = set()     # StreamStateElements written as `e1=S`
        self._arrow_nexts: set[int] = set()    # NextStateElements written with `->`
        self._comma_nexts: set[int] = set()    # NextStateElements written with `,`
        self._parenthesised: set[int] = set()  # state elements written in plain parentheses
        self._count_marks: set[int] = set()    # CountStateElements written with `*`, `+` or `?`
        self._keep: list[Any] = []             # keeps id()-keyed nodes alive
        self._typed_outputs: set[int] = set()  # outputs written with `current|expired|all events`
        # Provisional IsNullStream nodes made so far; when none were, the (tree-walking)
        # null-check resolution is skipped.
        self._null_stream_checks = 0

    # ---------------------------------------------------------------- utilities
    def _fail(self, message: str, pos: Pos | None) -> SiddhiParserError:
        line = pos.line if pos else None
        column = pos.column if pos else None
        return SiddhiParserError(message, line, column, _source_line(self._text, line))

    def _resolve(self, node: Any, active: set[str]) -> Any:
        """:func:`_resolve_null_checks`, skipped while the text has no ``x is null``."""
        return _resolve_null_checks(node, active) if self._null_stream_checks else node

    @staticmethod
    def _pos(meta: Any) -> Pos | None:
        if getattr(meta, "empty", True):
            return None
        return Pos(meta.line, meta.column, meta.start_pos, meta.end_pos)

    # ---------------------------------------------------------------- app
    def app(self, meta: Any, children: list[Any]) -> SiddhiApp:
        if len(children) == 1 and isinstance(children[0], tuple):  # annotations only
            for a in children[0]:
                if not a.name.lower().startswith("app:"):
                    raise self._fail(f"annotation @{a.name} must be followed by a definition, "
                                     "query or partition", a.pos)
            return self._build_app(children[0], [])
        return self._build_app((), children)

    def _build_app(self, app_annotations: tuple[Annotation, ...], statements: list[Any]) -> SiddhiApp:
        app_annots = list(app_annotations)
        if statements:
            # `@app:...` annotations open the app; the parser attaches them to the first
            # statement, so move the leading ones back to the app.
            first = statements[0]
            own = list(first.annotations)
            while own and own[0].name.lower().startswith("app:"):
                app_annots.append(own.pop(0))
            statements[0] = dataclasses.replace(first, annotations=tuple(own))
        for a in app_annots:
            self._check_app_annotation(a)
        buckets: dict[type, list[Any]] = {
            StreamDefinition: [], TableDefinition: [], WindowDefinition: [], TriggerDefinition: [],
            FunctionDefinition: [], AggregationDefinition: [],
        }
        executions: list[Query | Partition] = []
        for st in statements:
            if isinstance(st, (Query, Partition)):
                executions.append(st)
            else:
                if executions:
                    # The g4 only allows definitions before the first query or partition.
                    raise self._fail("unexpected 'define': definitions must come before queries "
                                     "and partitions", st.pos)
                buckets[type(st)].append(st)
        return SiddhiApp(
            annotations=tuple(app_annots),
            stream_definitions=tuple(buckets[StreamDefinition]),
            table_definitions=tuple(buckets[TableDefinition]),
            window_definitions=tuple(buckets[WindowDefinition]),
            trigger_definitions=tuple(buckets[TriggerDefinition]),
            function_definitions=tuple(buckets[FunctionDefinition]),
            aggregation_definitions=tuple(buckets[AggregationDefinition]),
            execution_elements=tuple(executions),
        )

    def _check_app_annotation(self, a: Annotation) -> None:
        # Siddhi rejects bad playback settings while compiling the app.
        if a.name.lower() == "app:playback":
            for el in a.elements:
                if el.key is not None and el.key.lower() in ("idle.time", "increment"):
                    try:
                        parse_time(el.value)
                    except ValueError as e:
                        raise self._fail(f"invalid @app:playback {el.key}: {e}", el.pos or a.pos) from None

    def statement(self, meta: Any, children: list[Any]) -> Any:
        annotations, body = children
        return dataclasses.replace(body, annotations=annotations)

    def expression_only(self, meta: Any, children: list[Any]) -> Expression:
        return self._resolve(children[0], set())

    def on_demand_only(self, meta: Any, children: list[Any]) -> OnDemandQuery:
        return children[0]

    # ---------------------------------------------------------------- annotations
    def annotations(self, meta: Any, children: list[Any]) -> tuple[Annotation, ...]:
        return tuple(children)

    def annotation(self, meta: Any, children: list[Any]) -> Annotation:
        name, *items = children
        elements = tuple(i for i in items if isinstance(i, AnnotationElement))
        nested = tuple(i for i in items if isinstance(i, Annotation))
        return Annotation(name, elements, nested, pos=self._pos(meta))

    def annotation_name(self, meta: Any, children: list[Any]) -> str:
        return ":".join(_name(t) for t in children)

    def keyed_element(self, meta: Any, children: list[Any]) -> AnnotationElement:
        key, value = children
        return AnnotationElement(key, _unquote(value), pos=self._pos(meta))

    def positional_element(self, meta: Any, children: list[Any]) -> AnnotationElement:
        return AnnotationElement(None, _unquote(children[0]), pos=self._pos(meta))

    def property_name(self, meta: Any, children: list[Any]) -> str:
        if len(children) == 1 and children[0].type == "STRING":
            return _unquote(children[0])
        return "".join(_name(t) if isinstance(t, Token) else t for t in children)

    def dot_sep(self, meta: Any, children: list[Any]) -> str:
        return "."

    def minus_sep(self, meta: Any, children: list[Any]) -> str:
        return "-"

    def colon_sep(self, meta: Any, children: list[Any]) -> str:
        return ":"

    # ---------------------------------------------------------------- definitions
    def attribute_defs(self, meta: Any, children: list[Any]) -> tuple[Attribute, ...]:
        seen: set[str] = set()
        for a in children:
            if a.name in seen:
                raise self._fail(f"duplicate attribute '{a.name}'", a.pos)
            seen.add(a.name)
        return tuple(children)

    def attribute_def(self, meta: Any, children: list[Any]) -> Attribute:
        name, typ = children
        return Attribute(_name(name), typ, pos=self._pos(meta))

    def attribute_type(self, meta: Any, children: list[Any]) -> AttrType:
        return _ATTR_TYPES[children[0].type]

    def _definable(self, src: _Source, what: str) -> str:
        if src.is_inner:
            raise self._fail(f"{what} cannot be defined as an inner stream ('#')", src.pos)
        if src.is_fault:
            raise self._fail(f"{what} cannot be defined as a fault stream ('!')", src.pos)
        return src.id

    def define_stream(self, meta: Any, children: list[Any]) -> StreamDefinition:
        src, attrs = _strip(children)
        return StreamDefinition(self._definable(src, "a stream"), attrs, pos=self._pos(meta))

    def define_table(self, meta: Any, children: list[Any]) -> TableDefinition:
        src, attrs = _strip(children)
        return TableDefinition(self._definable(src, "a table"), attrs, pos=self._pos(meta))

    def define_window(self, meta: Any, children: list[Any]) -> WindowDefinition:
        src, attrs, fn, *rest = _strip(children)
        window = WindowHandler(fn.namespace, fn.name, fn.args, pos=fn.pos)
        event_type = rest[0] if rest else OutputEventType.ALL
        return WindowDefinition(self._definable(src, "a window"), attrs, window, event_type,
                                pos=self._pos(meta))

    def define_trigger_every(self, meta: Any, children: list[Any]) -> TriggerDefinition:
        name, time = _strip(children)
        if time.millis <= 0:
            raise self._fail("a trigger's 'every' interval must be positive", time.pos)
        return TriggerDefinition(_name(name), every_millis=time.millis, pos=self._pos(meta))

    def define_trigger_at(self, meta: Any, children: list[Any]) -> TriggerDefinition:
        name, at = _strip(children)
        return TriggerDefinition(_name(name), at=_unquote(at), pos=self._pos(meta))

    def define_function(self, meta: Any, children: list[Any]) -> FunctionDefinition:
        name, language, rtype, script = _strip(children)
        body = self._scripts.get(script.start_pos, str(script)[1:-1])
        return FunctionDefinition(_name(name), _name(language), rtype, body, pos=self._pos(meta))

    def define_aggregation(self, meta: Any, children: list[Any]) -> AggregationDefinition:
        parts = _strip(children)
        name, stream, selection = parts[0], parts[1], parts[2]
        group_by: tuple[Variable, ...] = ()
        aggregate_by: Variable | None = None
        durations: tuple[TimeDuration, ...] = ()
        for p in parts[3:]:
            if isinstance(p, _Clause):
                group_by = p.value
            elif isinstance(p, Variable):
                aggregate_by = p
            else:
                durations = p
        self._check_single_stream(stream)
        self._check_no_input_alias(stream)
        selector = Selector(attributes=selection.value, group_by=group_by, pos=selection.value_pos)
        active = _input_stream_names(stream)
        selector = self._resolve(selector, active)
        stream = self._resolve(stream, active)
        return AggregationDefinition(_name(name), stream, selector, aggregate_by, durations,
                                     pos=self._pos(meta))

    def duration(self, meta: Any, children: list[Any]) -> TimeDuration:
        tok = children[0]
        if tok.type not in _DURATION_BY_UNIT:
            raise self._fail(f"'{tok}' is not an aggregation granularity; use sec, min, hour, day, "
                             "month or year", _tok_pos(tok))
        return _DURATION_BY_UNIT[tok.type]

    def duration_range(self, meta: Any, children: list[Any]) -> tuple[TimeDuration, ...]:
        first, last = _strip(children)
        lo, hi = _DURATION_ORDER.index(first), _DURATION_ORDER.index(last)
        if lo > hi:
            raise self._fail(f"aggregation range must go from finer to coarser, found "
                             f"{first.value} ... {last.value}", self._pos(meta))
        return tuple(_DURATION_ORDER[lo:hi + 1])

    def duration_list(self, meta: Any, children: list[Any]) -> tuple[TimeDuration, ...]:
        return tuple(sorted(set(children), key=_DURATION_ORDER.index))

    # ---------------------------------------------------------------- queries
    def query(self, meta: Any, children: list[Any]) -> Query:
        parts = _strip(children)
        inp, output = parts[0], parts[-1]
        selector = Selector()
        rate = None
        for p in parts[1:-1]:
            if isinstance(p, Selector):
                selector = p
            else:
                rate = p
        if isinstance(rate, SnapshotOutputRate) and id(output) not in self._typed_outputs:
            # Siddhi's Query.updateOutputEventType: a snapshot limiter's query inserts all
            # events unless it says otherwise (the engine refuses any other kind it says)
            output = dataclasses.replace(output, event_type=OutputEventType.ALL)
        if self._null_stream_checks:
            active = _input_stream_names(inp)
            inp = self._resolve(inp, active)
            selector = self._resolve(selector, active)
            output = self._resolve(output, active)
        return Query(inp, selector, output, rate, pos=self._pos(meta))

    def plain_source(self, meta: Any, children: list[Any]) -> _Source:
        return _Source(_name(children[0]), False, False, self._pos(meta) or _tok_pos(children[0]))

    def inner_source(self, meta: Any, children: list[Any]) -> _Source:
        return _Source(_name(children[0]), True, False, self._pos(meta) or _tok_pos(children[0]))

    def fault_source(self, meta: Any, children: list[Any]) -> _Source:
        return _Source(_name(children[0]), False, True, self._pos(meta) or _tok_pos(children[0]))

    def stream_element(self, meta: Any, children: list[Any]) -> SingleInputStream:
        parts = _strip(children)
        src = parts[0]
        alias = None
        if isinstance(parts[-1], Token):
            alias = _name(parts[-1])
            parts = parts[:-1]
        return SingleInputStream(src.id, tuple(parts[1:]), alias, src.is_inner, src.is_fault,
                                 pos=self._pos(meta))

    def filter_handler(self, meta: Any, children: list[Any]) -> Filter:
        return Filter(children[0], pos=self._pos(meta))

    def window_handler(self, meta: Any, children: list[Any]) -> WindowHandler:
        fn = _strip(children)[0]
        return WindowHandler(fn.namespace, fn.name, fn.args, pos=self._pos(meta))

    def function_handler(self, meta: Any, children: list[Any]) -> StreamFunction:
        fn = children[0]
        return StreamFunction(fn.namespace, fn.name, fn.args, star=fn.star, pos=self._pos(meta))

    def _check_single_stream(self, s: SingleInputStream) -> None:
        windows = [h for h in s.handlers if isinstance(h, WindowHandler)]
        if len(windows) > 1:
            raise self._fail("a stream can have only one window", windows[1].pos)

    def _check_no_input_alias(self, s: SingleInputStream) -> None:
        """Only a join's inputs take `as` in the g4 (join_source); a lone input (standard_stream)
        has none, and Siddhi refuses `from S as x select ...` with a syntax error."""
        if s.reference_id is not None:
            raise self._fail(f"'as {s.reference_id}' names an input of a join: a query or aggregation "
                             f"that reads one stream takes no alias (refer to '{s.stream_id}' itself)", s.pos)

    # ---------------------------------------------------------------- joins
    def join_input(self, meta: Any, children: list[Any]) -> JoinInputStream:
        parts = list(children)
        left = parts.pop(0)
        left_uni = right_uni = False
        if isinstance(parts[0], Token) and parts[0].type == "UNIDIRECTIONAL":
            left_uni = True
            parts.pop(0)
        join_type = parts.pop(0)
        right = parts.pop(0)
        if parts and isinstance(parts[0], Token) and parts[0].type == "UNIDIRECTIONAL":
            right_uni = True
            parts.pop(0)
        on = None
        within: tuple[Expression, ...] = ()
        per = None
        for p in _strip(parts):
            if isinstance(p, _Within):
                within, per = p.within, p.per
            else:
                on = p
        if left_uni and right_uni:
            raise self._fail("only one side of a join can be 'unidirectional'", self._pos(meta))
        trigger = JoinTrigger.LEFT if left_uni else JoinTrigger.RIGHT if right_uni else JoinTrigger.ALL
        for side in (left, right):
            self._check_single_stream(side)
            # SiddhiQL's join_source is `source handlers? window?`: nothing may follow the window
            # (a single-stream query may filter after it; a join input may not).
            hs = side.handlers
            w = next((i for i, h in enumerate(hs) if isinstance(h, WindowHandler)), None)
            if w is not None and w + 1 < len(hs):
                raise self._fail("a join input cannot be filtered or processed after its window: "
                                 "put the filter before the window", hs[w + 1].pos)
        return JoinInputStream(left, join_type, right, on, trigger, within, per, pos=self._pos(meta))

    def inner_join(self, meta: Any, children: list[Any]) -> JoinType:
        return JoinType.JOIN

    def left_outer_join(self, meta: Any, children: list[Any]) -> JoinType:
        return JoinType.LEFT_OUTER

    def right_outer_join(self, meta: Any, children: list[Any]) -> JoinType:
        return JoinType.RIGHT_OUTER

    def full_outer_join(self, meta: Any, children: list[Any]) -> JoinType:
        return JoinType.FULL_OUTER

    def join_within(self, meta: Any, children: list[Any]) -> _Within:
        exprs = _strip(children)
        return _Within(tuple(exprs[:-1]), exprs[-1])

    # ---------------------------------------------------------------- patterns and sequences
    def state_input(self, meta: Any, children: list[Any]) -> SingleInputStream | StateInputStream:
        parts = _strip(children)
        element: StateElement = parts[0]
        within: TimeConstant | None = parts[1] if len(parts) > 1 else None
        # A lone stream without `e1=` is a plain single-stream query.
        if isinstance(element, StreamStateElement) and id(element) not in self._event_refs \
                and within is None:
            self._check_single_stream(element.stream)
            self._check_no_input_alias(element.stream)
            return element.stream
        within_millis = within.millis if within is not None else None
        written = element  # (as parsed: the side tables know its nodes)
        if within_millis is None:
            element, within_millis = self._hoist_trailing_within(element)
        arrows = commas = False

        def kinds(n: Any) -> Any:
            nonlocal arrows, commas
            if isinstance(n, NextStateElement):
                arrows |= id(n) in self._arrow_nexts
                commas |= id(n) in self._comma_nexts
            return n

        # Walk the original element (ids are only known for nodes built by the parser).
        _map_nodes(element, kinds)
        if arrows and commas:
            raise self._fail("a query cannot mix '->' (pattern) and ',' (sequence)", self._pos(meta))
        shape = self._state_shape(written)
        if not states.accepted(shape, sequence=commas):
            message, pos = states.why_refused(shape, sequence=commas)
            raise self._fail(message, pos or self._pos(meta))
        for s in _state_streams(element):
            for h in s.handlers:
                if isinstance(h, WindowHandler):
                    raise self._fail("windows cannot be used inside patterns or sequences", h.pos)
        self._check_no_alias(element)
        state_type = StateType.SEQUENCE if commas else StateType.PATTERN
        return StateInputStream(state_type, element, within_millis, pos=self._pos(meta))

    def _state_shape(self, node: Any, grouped: bool = True) -> states.Shape:
        """The chain as :mod:`states` reads it: flat runs of `->` / `,`, parentheses kept."""
        if grouped and (id(node) in self._parenthesised or isinstance(node, GroupStateElement)):
            inner = node.element if isinstance(node, GroupStateElement) else node
            return states.Group(self._state_shape(inner, grouped=node is not inner), node.pos)
        if isinstance(node, NextStateElement):
            items = [self._state_shape(node.first)]
            rest = node.next
            while isinstance(rest, NextStateElement) and id(rest) not in self._parenthesised:
                items.append(self._state_shape(rest.first))
                rest = rest.next
            items.append(self._state_shape(rest))
            return states.Chain(tuple(items), node.pos)
        if isinstance(node, EveryStateElement):
            inner = self._state_shape(node.element)
            assert isinstance(inner, states.Unit | states.Group)  # (the grammar puts `every` on one state)
            return states.Every(inner, node.pos)
        if isinstance(node, AbsentStreamStateElement):
            return states.Unit("absent" if node.waiting_millis is not None else "absent_no_wait", node.pos)
        if isinstance(node, CountStateElement) and id(node) in self._count_marks:
            return states.Unit("mark", node.pos)
        if isinstance(node, LogicalStateElement):
            absent = [side for side in (node.left, node.right) if isinstance(side, AbsentStreamStateElement)]
            if len(absent) == 2 and any(side.waiting_millis is None for side in absent):
                # (the g4 takes `not A and e1=B` without a waiting time, but not beside another absent)
                return states.Unit("absent_no_wait", node.pos)
            return states.Unit("logical_absent" if absent else "stream", node.pos)
        return states.Unit("stream", node.pos)  # a stream state, counted with <n:m>, `and` / `or`

    def _check_no_alias(self, element: Any) -> None:
        def visit(n: Any) -> Any:
            if isinstance(n, StreamStateElement) and id(n) not in self._event_refs \
                    and n.stream.reference_id is not None:
                raise self._fail("'as' cannot be used in patterns or sequences; write "
                                 f"'{n.stream.reference_id}={n.stream.stream_id}'", n.pos)
            if isinstance(n, AbsentStreamStateElement) and n.stream.reference_id is not None:
                raise self._fail("an absent stream ('not S') cannot have an alias", n.pos)
            return n

        _map_nodes(element, visit)

    def _hoist_trailing_within(self, element: StateElement) -> tuple[StateElement, int | None]:
        """Move ``within`` from a group that ends the whole input to the input itself.

        LALR attaches ``... (e1=A -> e2=B) within 1 sec`` to the group; the g4 only has
        ``within`` over the whole input, so a group at the very end gives its ``within`` back.
        """
        if isinstance(element, GroupStateElement) and element.within_millis is not None:
            return element.element, element.within_millis
        if isinstance(element, EveryStateElement):
            inner, w = self._hoist_trailing_within(element.element)
            if w is not None:
                return self._keep_ids(element, dataclasses.replace(element, element=inner)), w
        if isinstance(element, NextStateElement):
            inner, w = self._hoist_trailing_within(element.next)
            if w is not None:
                return self._keep_ids(element, dataclasses.replace(element, next=inner)), w
        return element, None

    def _keep_ids(self, old: Any, new: Any) -> Any:
        """Carry the side-table marks of ``old`` over to its rebuilt copy ``new``."""
        self._keep.append(new)
        for table in (self._event_refs, self._arrow_nexts, self._comma_nexts):
            if id(old) in table:
                table.add(id(new))
        return new

    def state_next(self, meta: Any, children: list[Any]) -> NextStateElement:
        arrow = any(isinstance(c, Token) and c.type == "ARROW" for c in children)
        first, nxt = _strip(children)
        node = NextStateElement(first, nxt, pos=self._pos(meta))
        self._keep.append(node)
        (self._arrow_nexts if arrow else self._comma_nexts).add(id(node))
        return node

    def state_every(self, meta: Any, children: list[Any]) -> EveryStateElement:
        return EveryStateElement(_strip(children)[0], pos=self._pos(meta))

    def _logical(self, meta: Any, children: list[Any], op: LogicalOperator) -> LogicalStateElement:
        left, right = _strip(children)
        for side in (left, right):
            if isinstance(side, AbsentStreamStateElement) and side.waiting_millis is None \
                    and op is LogicalOperator.OR:
                raise self._fail("'not S or ...' needs a waiting time: 'not S for <time> or ...'",
                                 side.pos)
        return LogicalStateElement(left, op, right, pos=self._pos(meta))

    def state_and(self, meta: Any, children: list[Any]) -> LogicalStateElement:
        return self._logical(meta, children, LogicalOperator.AND)

    def state_or(self, meta: Any, children: list[Any]) -> LogicalStateElement:
        return self._logical(meta, children, LogicalOperator.OR)

    def state_group(self, meta: Any, children: list[Any]) -> StateElement:
        parts = _strip(children)
        if len(parts) == 1:
            # Plain parentheses only group; the model keeps a node only to carry `within`
            # (and the side table, for the g4's rules on groups: see grammar/states.py).
            self._keep.append(parts[0])
            self._parenthesised.add(id(parts[0]))
            return parts[0]
        return GroupStateElement(parts[0], parts[1].millis, pos=self._pos(meta))

    def state_stream(self, meta: Any, children: list[Any]) -> StreamStateElement:
        if len(children) == 2:
            ref, stream = children
            if stream.reference_id is not None:
                raise self._fail("a pattern event cannot also have an alias ('as')", stream.pos)
            node = StreamStateElement(dataclasses.replace(stream, reference_id=_name(ref)),
                                      pos=self._pos(meta))
            self._keep.append(node)
            self._event_refs.add(id(node))
            return node
        return StreamStateElement(children[0], pos=self._pos(meta))

    def _count(self, meta: Any, element: StreamStateElement, lo: int, hi: int) -> CountStateElement:
        node = CountStateElement(element, lo, hi, pos=self._pos(meta))
        if hi != -1 and lo > hi:
            raise self._fail(f"count range <{lo}:{hi}> has min greater than max", node.pos)
        return node

    def state_count(self, meta: Any, children: list[Any]) -> CountStateElement:
        element, _lt, (lo, hi), _gt = children
        return self._count(meta, element, lo, hi)

    def _mark(self, node: CountStateElement) -> CountStateElement:
        """A count written `*`, `+` or `?` (sequences only, in the g4)."""
        self._keep.append(node)
        self._count_marks.add(id(node))
        return node

    def state_zero_or_more(self, meta: Any, children: list[Any]) -> CountStateElement:
        return self._mark(self._count(meta, children[0], 0, -1))

    def state_one_or_more(self, meta: Any, children: list[Any]) -> CountStateElement:
        return self._mark(self._count(meta, children[0], 1, -1))

    def state_zero_or_one(self, meta: Any, children: list[Any]) -> CountStateElement:
        return self._mark(self._count(meta, children[0], 0, 1))

    def count_min_max(self, meta: Any, children: list[Any]) -> tuple[int, int]:
        return int(children[0]), int(children[1])

    def count_min(self, meta: Any, children: list[Any]) -> tuple[int, int]:
        return int(children[0]), -1

    def count_max(self, meta: Any, children: list[Any]) -> tuple[int, int]:
        return 0, int(children[0])

    def count_exact(self, meta: Any, children: list[Any]) -> tuple[int, int]:
        n = int(children[0])
        return n, n

    def state_absent(self, meta: Any, children: list[Any]) -> AbsentStreamStateElement:
        parts = _strip(children)
        stream = parts[0]
        waiting = parts[1].millis if len(parts) > 1 else None
        return AbsentStreamStateElement(stream, waiting, pos=self._pos(meta))

    # ---------------------------------------------------------------- selection
    def query_section(self, meta: Any, children: list[Any]) -> Selector:
        selection, *clauses = children
        fields: dict[str, Any] = {c.kind: c.value for c in clauses}
        return Selector(attributes=selection.value, pos=self._pos(meta), **fields)

    def select_all(self, meta: Any, children: list[Any]) -> _Selection:
        return _Selection(None, self._pos(meta))

    def select_list(self, meta: Any, children: list[Any]) -> _Selection:
        attrs = tuple(_strip(children))
        return _Selection(attrs, self._pos(meta))

    def output_attribute(self, meta: Any, children: list[Any]) -> OutputAttribute:
        parts = _strip(children)
        expr = parts[0]
        if len(parts) > 1:
            rename = _name(parts[1])
        elif isinstance(expr, Variable):
            rename = expr.attribute
        else:
            # Siddhi requires `as` here; the engine reports the empty name with a clear message.
            rename = ""
        return OutputAttribute(rename, expr, pos=self._pos(meta))

    def group_by(self, meta: Any, children: list[Any]) -> _Clause:
        return _Clause("group_by", tuple(_strip(children)))

    def having(self, meta: Any, children: list[Any]) -> _Clause:
        return _Clause("having", _strip(children)[0])

    def order_by(self, meta: Any, children: list[Any]) -> _Clause:
        return _Clause("order_by", tuple(_strip(children)))

    def order_by_item(self, meta: Any, children: list[Any]) -> OrderByAttribute:
        var = children[0]
        order = Order.DESC if len(children) > 1 and children[1].type == "DESC" else Order.ASC
        return OrderByAttribute(var, order, pos=self._pos(meta))

    def _constant_clause(self, kind: str, children: list[Any]) -> _Clause:
        expr = _strip(children)[0]
        if not isinstance(expr, Constant) or expr.type not in (AttrType.INT, AttrType.LONG):
            raise self._fail(f"'{kind}' only accepts int and long constants", getattr(expr, "pos", None))
        return _Clause(kind, expr)

    def limit(self, meta: Any, children: list[Any]) -> _Clause:
        return self._constant_clause("limit", children)

    def offset(self, meta: Any, children: list[Any]) -> _Clause:
        return self._constant_clause("offset", children)

    # ---------------------------------------------------------------- output rate
    def rate_type(self, meta: Any, children: list[Any]) -> RateType:
        return RateType(children[0].type.lower())

    def time_output_rate(self, meta: Any, children: list[Any]) -> TimeOutputRate:
        parts = [c for c in children if not isinstance(c, Token)]
        rate_type = parts[0] if len(parts) > 1 else RateType.ALL
        return TimeOutputRate(parts[-1].millis, rate_type, pos=self._pos(meta))

    def event_output_rate(self, meta: Any, children: list[Any]) -> EventOutputRate:
        rate_type = next((c for c in children if isinstance(c, RateType)), RateType.ALL)
        count = next(c for c in children if isinstance(c, Token) and c.type == "INT_LIT")
        if int(count) <= 0:
            raise self._fail("'output every' needs a positive number of events", _tok_pos(count))
        return EventOutputRate(int(count), rate_type, pos=self._pos(meta))

    def snapshot_output_rate(self, meta: Any, children: list[Any]) -> SnapshotOutputRate:
        time = _strip(children)[0]
        return SnapshotOutputRate(time.millis, pos=self._pos(meta))

    # ---------------------------------------------------------------- outputs
    def output_event_type(self, meta: Any, children: list[Any]) -> OutputEventType:
        first = children[0].type
        if first == "ALL":
            return OutputEventType.ALL
        if first == "EXPIRED":
            return OutputEventType.EXPIRED
        return OutputEventType.CURRENT

    def _table_target(self, src: _Source, what: str) -> str:
        if src.is_inner or src.is_fault:
            raise self._fail(f"{what} can only be used with tables", src.pos)
        return src.id

    @staticmethod
    def _split_output(parts: list[Any]) -> tuple[OutputEventType | None, tuple[SetAttribute, ...], Any]:
        event_type = None
        sets: tuple[SetAttribute, ...] = ()
        on = None
        for p in parts:
            if isinstance(p, OutputEventType):
                event_type = p
            elif isinstance(p, tuple):
                sets = p
            else:
                on = p
        return event_type, sets, on

    def _typed(self, output: Any, event_type: OutputEventType | None) -> Any:
        """``output``, noted as one whose event type was written (see query())."""
        if event_type is not None:
            self._typed_outputs.add(id(output))
            self._keep.append(output)
        return output

    def insert_output(self, meta: Any, children: list[Any]) -> InsertIntoStream:
        parts = _strip(children)
        src = parts[-1]
        event_type = parts[0] if len(parts) > 1 else None
        return self._typed(InsertIntoStream(src.id, event_type or OutputEventType.CURRENT, src.is_inner,
                                            src.is_fault, pos=self._pos(meta)), event_type)

    def delete_output(self, meta: Any, children: list[Any]) -> DeleteStream:
        src, *rest = _strip(children)
        event_type, _sets, on = self._split_output(rest)
        return self._typed(DeleteStream(self._table_target(src, "'delete'"), on, event_type or OutputEventType.CURRENT,
                                        pos=self._pos(meta)), event_type)

    def update_output(self, meta: Any, children: list[Any]) -> UpdateStream:
        src, *rest = _strip(children)
        event_type, sets, on = self._split_output(rest)
        return self._typed(UpdateStream(self._table_target(src, "'update'"), on, sets,
                                        event_type or OutputEventType.CURRENT, pos=self._pos(meta)), event_type)

    def update_or_insert_output(self, meta: Any, children: list[Any]) -> UpdateOrInsertStream:
        src, *rest = _strip(children)
        event_type, sets, on = self._split_output(rest)
        return self._typed(UpdateOrInsertStream(self._table_target(src, "'update or insert'"), on, sets,
                                                event_type or OutputEventType.CURRENT, pos=self._pos(meta)),
                           event_type)

    def return_output(self, meta: Any, children: list[Any]) -> ReturnStream:
        parts = _strip(children)
        event_type = parts[0] if parts else None
        return self._typed(ReturnStream(event_type or OutputEventType.CURRENT, pos=self._pos(meta)), event_type)

    def set_clause(self, meta: Any, children: list[Any]) -> tuple[SetAttribute, ...]:
        return tuple(_strip(children))

    def set_assignment(self, meta: Any, children: list[Any]) -> SetAttribute:
        var, expr = children
        return SetAttribute(var, expr, pos=self._pos(meta))

    # ---------------------------------------------------------------- partitions
    def partition(self, meta: Any, children: list[Any]) -> Partition:
        parts = _strip(children)
        types = tuple(p for p in parts if isinstance(p, (ValuePartitionType, RangePartitionType)))
        queries = tuple(p for p in parts if isinstance(p, Query))
        return Partition(types, queries, pos=self._pos(meta))

    def partition_query(self, meta: Any, children: list[Any]) -> Query:
        annotations, query = children
        return dataclasses.replace(query, annotations=annotations)

    def value_partition(self, meta: Any, children: list[Any]) -> ValuePartitionType:
        expr, stream = _strip(children)
        sid = _name(stream)
        return ValuePartitionType(sid, self._resolve(expr, {sid}), pos=self._pos(meta))

    def range_partition(self, meta: Any, children: list[Any]) -> RangePartitionType:
        parts = _strip(children)
        sid = _name(parts[-1])
        ranges = tuple(self._resolve(r, {sid}) for r in parts[:-1])
        return RangePartitionType(sid, ranges, pos=self._pos(meta))

    def range_condition(self, meta: Any, children: list[Any]) -> RangePartitionProperty:
        expr, label = _strip(children)
        return RangePartitionProperty(_unquote(label), expr, pos=self._pos(meta))

    # ---------------------------------------------------------------- on-demand queries
    def _on_demand(self, meta: Any, qtype: OnDemandQueryType, selector: Selector | None,
                   output: Any = None, store: str | None = None, alias: str | None = None,
                   on: Expression | None = None, within: _Within | None = None) -> OnDemandQuery:
        active = {n for n in (store, alias) if n}
        node = OnDemandQuery(
            qtype, store, on, selector or Selector(), output,
            within.within if within else (), within.per if within else None,
            reference_id=alias, pos=self._pos(meta),
        )
        return self._resolve(node, active)

    def on_demand_find(self, meta: Any, children: list[Any]) -> OnDemandQuery:
        raw = list(children)
        store = _name(raw[1])
        alias = None
        if len(raw) > 3 and isinstance(raw[2], Token) and raw[2].type == "AS":
            alias = _name(raw[3])
        on = within = selector = None
        for p in _strip(raw[4 if alias else 2:]):
            if isinstance(p, _Within):
                within = p
            elif isinstance(p, Selector):
                selector = p
            else:
                on = p
        return self._on_demand(meta, OnDemandQueryType.FIND, selector, store=store, alias=alias,
                               on=on, within=within)

    def on_demand_insert(self, meta: Any, children: list[Any]) -> OnDemandQuery:
        selector, src = _strip(children)
        output = InsertIntoStream(src.id, OutputEventType.CURRENT, src.is_inner, src.is_fault, pos=src.pos)
        return self._on_demand(meta, OnDemandQueryType.INSERT, selector, output)

    def _selector_and_rest(self, children: list[Any]) -> tuple[Selector | None, list[Any]]:
        parts = _strip(children)
        if parts and isinstance(parts[0], Selector):
            return parts[0], parts[1:]
        return None, parts

    def on_demand_update_or_insert(self, meta: Any, children: list[Any]) -> OnDemandQuery:
        selector, (src, *rest) = self._selector_and_rest(children)
        _et, sets, on = self._split_output(rest)
        output = UpdateOrInsertStream(self._table_target(src, "'update or insert'"), on, sets, pos=src.pos)
        return self._on_demand(meta, OnDemandQueryType.UPDATE_OR_INSERT, selector, output)

    def on_demand_delete(self, meta: Any, children: list[Any]) -> OnDemandQuery:
        selector, (src, *rest) = self._selector_and_rest(children)
        _et, _sets, on = self._split_output(rest)
        output = DeleteStream(self._table_target(src, "'delete'"), on, pos=src.pos)
        return self._on_demand(meta, OnDemandQueryType.DELETE, selector, output)

    def on_demand_update(self, meta: Any, children: list[Any]) -> OnDemandQuery:
        selector, (src, *rest) = self._selector_and_rest(children)
        _et, sets, on = self._split_output(rest)
        output = UpdateStream(self._table_target(src, "'update'"), on, sets, pos=src.pos)
        return self._on_demand(meta, OnDemandQueryType.UPDATE, selector, output)

    # ---------------------------------------------------------------- expressions
    def or_op(self, meta: Any, children: list[Any]) -> Or:
        left, _op, right = children
        return Or(left, right, pos=self._pos(meta))

    def and_op(self, meta: Any, children: list[Any]) -> And:
        left, _op, right = children
        return And(left, right, pos=self._pos(meta))

    def in_op(self, meta: Any, children: list[Any]) -> In:
        expr, _op, table = children
        return In(expr, _name(table), pos=self._pos(meta))

    def compare(self, meta: Any, children: list[Any]) -> Compare:
        left, op, right = children
        return Compare(left, CompareOperator(str(op)), right, pos=self._pos(meta))

    def math(self, meta: Any, children: list[Any]) -> MathOp:
        left, op, right = children
        return MathOp(MathOperator(str(op)), left, right, pos=self._pos(meta))

    def not_op(self, meta: Any, children: list[Any]) -> Not:
        return Not(children[1], pos=self._pos(meta))

    def true_const(self, meta: Any, children: list[Any]) -> Constant:
        return Constant(True, AttrType.BOOL, pos=self._pos(meta))

    def false_const(self, meta: Any, children: list[Any]) -> Constant:
        return Constant(False, AttrType.BOOL, pos=self._pos(meta))

    def string_const(self, meta: Any, children: list[Any]) -> Constant:
        return Constant(_unquote(children[0]), AttrType.STRING, pos=self._pos(meta))

    def number_const(self, meta: Any, children: list[Any]) -> Constant:
        negative = len(children) == 2 and str(children[0]) == "-"
        tok: Token = children[-1]
        text = str(tok)
        pos = self._pos(meta)
        if tok.type == "INT_LIT":
            value: Any = -int(text) if negative else int(text)
            if not _INT_MIN <= value <= _INT_MAX:
                raise self._fail(f"integer {value} is out of range (use a long: {text}L)", pos)
            return Constant(value, AttrType.INT, pos=pos)
        if tok.type == "LONG_LIT":
            value = -int(text[:-1]) if negative else int(text[:-1])
            if not _LONG_MIN <= value <= _LONG_MAX:
                raise self._fail(f"long {value} is out of range", pos)
            return Constant(value, AttrType.LONG, pos=pos)
        body = text[:-1] if text[-1] in "fFdD" else text
        value = -float(body) if negative else float(body)
        return Constant(value, AttrType.FLOAT if tok.type == "FLOAT_LIT" else AttrType.DOUBLE, pos=pos)

    def time_value(self, meta: Any, children: list[Any]) -> TimeConstant:
        total, last_rank = 0, -1
        for amount, unit, pos in children:
            rank = _UNIT_RANK[unit]
            if rank <= last_rank:
                raise self._fail("time units must go from largest to smallest, each at most once "
                                 "(e.g. '1 min 30 sec')", pos)
            last_rank = rank
            total += amount * _UNIT_MILLIS[unit]
        return TimeConstant(total, pos=self._pos(meta))

    def time_part(self, meta: Any, children: list[Any]) -> tuple[int, str, Pos]:
        amount, unit = children
        return int(amount), unit.type, _tok_pos(amount)

    def function_call(self, meta: Any, children: list[Any]) -> FunctionCall:
        names = [c for c in children if isinstance(c, Token)]
        args = next((c for c in children if isinstance(c, tuple)), ())
        star = any(isinstance(c, _StarArgs) for c in children)
        namespace = _name(names[0]) if len(names) == 2 else ""
        return FunctionCall(namespace, _name(names[-1]), args, star, pos=self._pos(meta))

    def function_args(self, meta: Any, children: list[Any]) -> tuple[Expression, ...]:
        return tuple(children)

    def star_args(self, meta: Any, children: list[Any]) -> _StarArgs:
        # `f(*)` has no arguments in Siddhi's query API; FunctionCall.star records the `*`.
        return _StarArgs()

    def plain_attribute(self, meta: Any, children: list[Any]) -> Variable:
        return Variable(_name(children[0]), pos=self._pos(meta))

    def qualified_attribute(self, meta: Any, children: list[Any]) -> Variable:
        ref, attr = children
        return Variable(_name(attr), ref.id, ref.stream_index, ref.is_inner, ref.is_fault, pos=self._pos(meta))

    def _stream_ref(self, meta: Any, children: list[Any], inner: bool, fault: bool) -> _StreamRef:
        index = children[1] if len(children) > 1 else None
        return _StreamRef(_name(children[0]), index, inner, fault, self._pos(meta) or _tok_pos(children[0]))

    def stream_ref_plain(self, meta: Any, children: list[Any]) -> _StreamRef:
        return self._stream_ref(meta, children, False, False)

    def stream_ref_inner(self, meta: Any, children: list[Any]) -> _StreamRef:
        return self._stream_ref(meta, children, True, False)

    def stream_ref_fault(self, meta: Any, children: list[Any]) -> _StreamRef:
        return self._stream_ref(meta, children, False, True)

    def index_int(self, meta: Any, children: list[Any]) -> int:
        return int(children[0])

    def index_last(self, meta: Any, children: list[Any]) -> LastIndex:
        return LastIndex(0)

    def index_last_minus(self, meta: Any, children: list[Any]) -> LastIndex:
        return LastIndex(int(children[-1]))

    def null_check_stream(self, meta: Any, children: list[Any]) -> IsNullStream:
        ref = children[0]
        self._null_stream_checks += 1
        # Provisional: _resolve_null_checks turns it into IsNull(Variable) unless `ref`
        # names a stream or event of the enclosing query.
        return IsNullStream(ref.id, ref.stream_index, ref.is_inner, ref.is_fault, pos=self._pos(meta))

    def null_check_attribute(self, meta: Any, children: list[Any]) -> IsNull:
        ref, attr = _strip(children)
        var = Variable(_name(attr), ref.id, ref.stream_index, ref.is_inner, ref.is_fault, pos=ref.pos)
        return IsNull(var, pos=self._pos(meta))

    def null_check_function(self, meta: Any, children: list[Any]) -> IsNull:
        return IsNull(_strip(children)[0], pos=self._pos(meta))


# ------------------------------------------------------------------------------------ entry points
def _run(text: str, start: str) -> Any:
    if not isinstance(text, str):
        raise TypeError(f"SiddhiQL text must be a str, not {type(text).__name__}")
    masked, scripts = _mask_scripts(text)
    try:
        tree: Tree = _lark().parse(masked, start=start)
    except UnexpectedInput as e:
        raise _syntax_error(text, e) from None
    try:
        return _Builder(text, scripts).transform(tree)
    except VisitError as e:
        if isinstance(e.orig_exc, SiddhiParserError):
            raise e.orig_exc from None
        if isinstance(e.orig_exc, RecursionError):
            raise SiddhiParserError("SiddhiQL text is nested too deeply", None, None) from None
        meta = getattr(e.obj, "meta", None)
        line = getattr(meta, "line", None) if meta is not None and not meta.empty else None
        column = getattr(meta, "column", None) if line is not None else None
        raise SiddhiParserError(f"invalid SiddhiQL: {e.orig_exc}", line, column,
                                _source_line(text, line)) from e.orig_exc
    except RecursionError:
        raise SiddhiParserError("SiddhiQL text is nested too deeply", None, None) from None


#: ``${name}`` in an app's text (SiddhiCompiler.updateVariables: Java's ``\w``, ASCII only)
_VARIABLE = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


def update_variables(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with each ``${name}`` replaced by the environment variable ``name``, as Siddhi's
    ``SiddhiManager`` does before it parses an app (it looks at the JVM's system properties
    first, which Python has not).  An unset one is a :class:`SiddhiParserError` at its place."""
    if "$" not in text:
        return text
    values = os.environ if env is None else env

    def value(m: re.Match[str]) -> str:
        found = values.get(m.group(1))
        if found is None:
            line = text.count("\n", 0, m.start()) + 1
            column = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            raise SiddhiParserError(f"No system or environmental variable found for '{m.group(0)}'", line, column,
                                    _source_line(text, line))
        return found

    return _VARIABLE.sub(value, text)


def parse(text: str) -> SiddhiApp:
    """Parse a whole Siddhi app.

    Raises :class:`~grammar.errors.SiddhiParserError` (with line, column, source line and the
    expected tokens) when ``text`` is not valid SiddhiQL.
    """
    return _run(text, _START_APP)


def parse_expression(text: str) -> Expression:
    """Parse a single expression such as ``price > 10 and symbol == 'IBM'``.

    Without a query around it, ``x is null`` is an attribute check (``IsNull(Variable('x'))``).
    """
    return _run(text, _START_EXPRESSION)


def parse_on_demand_query(text: str) -> OnDemandQuery:
    """Parse an on-demand (store) query: ``from T on cond select ...``, ``select ... insert into T``,
    ``[select ...] delete T on cond``, ``[select ...] update T set ... on cond`` or
    ``select ... update or insert into T set ... on cond``."""
    return _run(text, _START_ON_DEMAND)
