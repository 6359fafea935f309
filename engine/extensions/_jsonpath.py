"""JSONPath as Jayway JsonPath 2.4.0 reads it (what siddhi-execution-json calls).

The compiler and the evaluator follow Jayway's own structure (a chain of path tokens, each
evaluated on the value the previous one found), because the answers Siddhi gives come from that
structure, defects included:

* A path is *definite* when every token is (a single name or index, a function, several names
  as the last token); a definite path gives its **last** result or fails with
  :class:`PathNotFound`; any other path gives the list of its results.
* Several names in one bracket as the last token give one object (``$['a','b']`` is
  ``{"a": .., "b": ..}``, missing names left out); elsewhere they iterate.
* ``..`` (deep scan) takes a node, then its children, depth first, and at an array whose next
  token is not the last evaluates the token after it on every element.
* Path functions (``length()``/``size()``, ``min()``, ``max()``, ``avg()``, ``sum()``,
  ``stddev()``, ``concat()``, ``append()``) apply to each value found; the numeric ones count
  the numbers of an array plus their numeric arguments, give a double, and fail on none (``max``
  starts from ``Double.MIN_VALUE``, so all-negative numbers give 4.9E-324). A parameter list
  whose second character is ``)`` is read as no parameters (``sum(5)`` is ``sum()``).
* Filters: ``== != < <= > >= === !== =~ in nin subsetof contains size empty``, existence,
  ``!``, ``&&``, ``||`` and parentheses, with Jayway's value nodes: a number equals a string
  that reads as the same number (one way only: ``'5' == 5.0`` is false), ``<`` compares numbers
  with numbers and strings with strings only. ``anyof``/``noneof`` came with Jayway 2.5: here
  they are errors, as ``all``, ``matches`` and ``type`` are for any filter written as text.

:class:`PathNotFound` is Jayway's PathNotFoundException (Siddhi gives null / false);
:class:`JsonPathError` is any other Jayway failure (Siddhi's function throws and the event is
dropped).
"""
from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from srota.engine.extensions._checks import java_double_str
from srota.engine.extensions.regex import java_regex


class PathNotFound(LookupError):
    """A definite path does not exist in the document (Jayway's PathNotFoundException)."""


class JsonPathError(ValueError):
    """Any other Jayway failure: an invalid path or filter, a function that cannot compute."""


class InvalidPath(JsonPathError):
    """Jayway's InvalidPathException: a path or filter it cannot read, or a filter value of the
    wrong kind; inside a filter it makes the item not match, elsewhere the read fails."""


Ref = tuple[Any, Any]
"""Where a result lives: (container, key), or (None, None) for the document itself."""

_ROOT_REF: Ref = (None, None)
_UNDEFINED = object()


# ---------------------------------------------------------------------------- tokens
class _Token:
    """One step of a compiled path; ``definite`` says whether it yields at most one value."""

    definite = True


class _Property(_Token):
    def __init__(self, names: list[str]) -> None:
        self.names = names


class _Index(_Token):
    def __init__(self, indexes: list[int]) -> None:
        self.indexes = indexes
        self.definite = len(indexes) == 1


class _Slice(_Token):
    definite = False

    def __init__(self, start: int | None, stop: int | None) -> None:
        self.start, self.stop = start, stop


class _Wildcard(_Token):
    definite = False


class _Scan(_Token):
    definite = False


class _Filter(_Token):
    definite = False

    def __init__(self, predicate: Callable[[Any, Any], bool], text: str) -> None:
        self.predicate, self.text = predicate, text


class _Function(_Token):
    def __init__(self, name: str, params: list[tuple[str, Any]] | None) -> None:
        self.name, self.params = name, params


class CompiledPath:
    """A compiled JSONPath: its tokens (after the root), and where each stands in the chain."""

    def __init__(self, root: str, tokens: list[_Token]) -> None:
        self.root = root
        self.tokens = tokens
        n = len(tokens)
        for i, t in enumerate(tokens):  # several names are one (merged) value only as the last token
            if isinstance(t, _Property) and len(t.names) > 1 and i != n - 1:
                t.definite = False
        # Jayway decides some failures by whether every token before this one is definite
        self.upstream = [all(t.definite for t in tokens[:i]) for i in range(n)]
        self.definite = all(t.definite for t in tokens)
        self.is_function = bool(tokens) and isinstance(tokens[-1], _Function)
        # append() adds to the document's own array, as Jayway does to the document it parsed
        self.mutates = any(isinstance(t, _Function) and t.name == "append" for t in tokens)


# ---------------------------------------------------------------------------- path compiler
_cache: dict[str, CompiledPath] = {}


def compile_path(path: str) -> CompiledPath:
    """Compile ``path`` (Jayway's PathCompiler.compile), cached; :class:`JsonPathError` if invalid."""
    compiled = _cache.get(path)
    if compiled is None:
        compiled = _PathCompiler(path).compile()
        if len(_cache) < 4096:
            _cache[path] = compiled
    return compiled


class _PathCompiler:
    def __init__(self, path: str) -> None:
        p = path.strip()
        if not p:
            raise InvalidPath("Path may not be null empty")
        if p[0] not in "$@":
            p = ("$." + path).strip()
        if p.endswith("."):
            raise InvalidPath("Path must not end with a '.' or '..'")
        self.s = p
        self.i = 0
        self.tokens: list[_Token] = []

    def fail(self, message: str) -> JsonPathError:
        return JsonPathError(f"{message} in path '{self.s}'")

    def tail(self) -> bool:
        return self.i >= len(self.s) - 1

    def next_significant(self, pos: int) -> tuple[int, str]:
        j = pos + 1
        while j < len(self.s) and self.s[j] == " ":
            j += 1
        return (j, self.s[j]) if j < len(self.s) else (-1, " ")

    def compile(self) -> CompiledPath:
        s = self.s
        while self.i < len(s) and s[self.i] == " ":
            self.i += 1
        root = s[self.i]
        if root not in "$@":
            raise self.fail("Path must start with '$' or '@'")
        if not self.tail():
            self.i += 1
            if s[self.i] not in ".[":
                raise self.fail(f"Illegal character at position {self.i} expected '.' or '['")
            self.read_next()
        return CompiledPath(root, self.tokens)

    def more(self) -> None:
        if not self.tail():
            self.read_next()

    def read_next(self) -> None:
        c = self.s[self.i]
        if c == "[":
            if not (self.bracket_property() or self.array() or self.wildcard() or self.filter()):
                raise self.fail(f"Could not parse token starting at position {self.i}. Expected ?, ', 0-9, * ")
        elif c == ".":
            self.dot()
        elif c == "*":
            if not self.wildcard():
                raise self.fail(f"Could not parse token starting at position {self.i}")
        else:
            self.property_or_function()

    def dot(self) -> None:
        s = self.s
        if s.startswith("..", self.i):
            self.tokens.append(_Scan())
            self.i += 2
        elif self.i + 1 >= len(s):
            raise self.fail("Path must not end with a '.")
        else:
            self.i += 1
        if self.i < len(s) and s[self.i] == ".":
            raise self.fail(f"Character '.' on position {self.i} is not valid.")
        if self.i >= len(s):
            raise self.fail("Path must not end with a '.' or '..'")
        self.read_next()

    def property_or_function(self) -> None:
        s = self.s
        if s[self.i] in "[*. ":
            raise self.fail(f"Could not parse token starting at position {self.i}")
        start = read = self.i
        end = 0
        is_function = False
        while read < len(s):
            c = s[read]
            if c == " ":
                raise self.fail("Use bracket notion ['my prop'] if your property contains blank characters")
            if c in ".[":
                end = read
                break
            if c == "(":
                is_function = True
                end = read
                read += 1
                break
            read += 1
        if end == 0:
            end = len(s)
        params: list[tuple[str, Any]] | None = None
        if is_function:
            # Jayway looks at the character *after* the first one inside the parentheses: when that
            # is ')' (``sum(5)``, and ``length()`` at the end), it takes no parameters
            if read + 1 < len(s):
                if s[read + 1] != ")":
                    self.i = end + 1
                    params = self.function_parameters(s[start:end])
                else:
                    self.i = read + 1
            else:
                self.i = read
        else:
            self.i = end
        name = s[start:end]
        self.tokens.append(_Function(name, params) if is_function else _Property([name]))
        self.more()

    def function_parameters(self, name: str) -> list[tuple[str, Any]]:
        s = self.s
        kind: str | None = None
        paren, bracket, brace, quote = 1, 0, 0, 0
        prior = ""
        params: list[tuple[str, Any]] = []
        buf: list[str] = []
        done = False
        while self.i < len(s) and not done:
            c = s[self.i]
            self.i += 1
            if kind is None:
                if c.isspace():
                    continue
                if c == "{" or c.isdigit() or c == '"':
                    kind = "json"
                elif c in "$@":
                    kind = "path"
            if c == '"':
                if prior != "\\" and quote > 0:
                    quote -= 1
                else:
                    quote += 1
            elif c == "(":
                paren += 1
            elif c == "{":
                brace += 1
            elif c == "[":
                bracket += 1
            elif c == "}":
                if brace == 0:
                    raise self.fail(f"Unexpected close brace '}}' at character position: {self.i}")
                brace -= 1
            elif c == "]":
                if bracket == 0:
                    raise self.fail(f"Unexpected close bracket ']' at character position: {self.i}")
                bracket -= 1
            if c in "),":
                if c == ")":
                    paren -= 1
                    if paren != 0:
                        buf.append(c)
                if quote == 0 and brace == 0 and bracket == 0 and ((paren == 0 and c == ")") or paren == 1):
                    done = paren == 0
                    if kind is not None:
                        text = "".join(buf)
                        params.append((kind, text if kind == "json" else compile_path(text)))
                        buf = []
                        kind = None
            if kind is not None and not (c == "," and brace == 0 and bracket == 0 and paren == 1):
                buf.append(c)
            prior = c
        if brace or paren or bracket:
            raise self.fail(f"Arguments to function: '{name}' are not closed properly.")
        return params

    def bracket_property(self) -> bool:
        s = self.s
        _, delim = self.next_significant(self.i)
        if delim not in "'\"":
            return False
        names: list[str] = []
        start = read = self.i + 1
        end = 0
        in_prop = in_escape = last_comma = False
        while read < len(s):
            c = s[read]
            if in_escape:
                in_escape = False
            elif c == "\\":
                in_escape = True
            elif c == "]" and not in_prop:
                if last_comma:
                    raise self.fail(f"Found empty property at index {read}")
                break
            elif c == delim:
                if in_prop:
                    _, after = self.next_significant(read)
                    if after not in "],":
                        raise self.fail("Property must be separated by comma or Property must be terminated "
                                        f"close square bracket at index {read}")
                    end = read
                    names.append(_unescape(s[start:end]))
                    in_prop = False
                else:
                    start = read + 1
                    in_prop, last_comma = True, False
            elif c == ",":
                if last_comma:
                    raise self.fail(f"Found empty property at index {read}")
                last_comma = True
            read += 1
        close, _ = self.next_significant(end)
        self.i = close + 1 if close >= 0 else 0
        self.tokens.append(_Property(names))
        self.more()
        return True

    def array(self) -> bool:
        s = self.s
        _, nxt = self.next_significant(self.i)
        if not (nxt.isdigit() or nxt in "-:"):
            return False
        close = s.find("]", self.i + 1)
        if close < 0:
            return False
        expr = s[self.i + 1:close].strip()
        if expr == "*" or any(not (c.isdigit() or c in ",-: ") for c in expr):
            return False
        if ":" in expr:
            if any(not (c.isdigit() or c in "-:") for c in expr):
                raise self.fail(f"Failed to parse SliceOperation: {expr}")
            bits = expr.split(":")
            start = _java_int(bits[0]) if bits and bits[0] else None
            stop = _java_int(bits[1]) if len(bits) > 1 and bits[1] else None
            if start is None and stop is None:
                raise self.fail(f"Failed to parse SliceOperation: {expr}")
            self.tokens.append(_Slice(start, stop))
        else:
            try:
                self.tokens.append(_Index([int(x.strip()) for x in expr.split(",")]))
            except ValueError:
                raise self.fail(f"Failed to parse ArrayIndexOperation: {expr}") from None
        self.i = close + 1
        self.more()
        return True

    def wildcard(self) -> bool:
        s = self.s
        in_bracket = s[self.i] == "["
        if in_bracket:
            star, c = self.next_significant(self.i)
            if c != "*":
                return False
            close, c = self.next_significant(star)
            if c != "]":
                raise self.fail(f"Expected wildcard token to end with ']' on position {star}1")
            self.i = close + 1
        else:
            if s[self.i] != "*" and self.i + 1 >= len(s):
                return False
            self.i += 1
        self.tokens.append(_Wildcard())
        self.more()
        return True

    def filter(self) -> bool:
        s = self.s
        q, c = self.next_significant(self.i)
        if c != "?":
            return False
        o, c = self.next_significant(q)
        if c != "(":
            return False
        close = _matching_close(s, o, "(", ")")
        if close < 0:
            return False
        end, c = self.next_significant(close)
        if c != "]":
            return False
        text = s[self.i:end + 1]
        self.tokens.append(_Filter(_lenient(_FilterCompiler(text).compile()), text))
        self.i = end + 1
        self.more()
        return True


def _java_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise InvalidPath(f"Failed to parse SliceOperation: {text}") from None
    if not -2 ** 31 <= n < 2 ** 31:
        raise InvalidPath(f"Failed to parse SliceOperation: {text}")
    return n


def _unescape(text: str) -> str:
    """Jayway's Utils.unescape: backslash escapes, ``\\uXXXX`` included."""
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            e = text[i + 1]
            if e == "u" and i + 5 < len(text):
                try:
                    out.append(chr(int(text[i + 2:i + 6], 16)))
                    i += 6
                    continue
                except ValueError:
                    pass
            out.append({"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}.get(e, e))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _next_unescaped(s: str, start: int, ch: str) -> int:
    escape = False
    for j in range(start + 1, len(s)):
        if escape:
            escape = False
        elif s[j] == "\\":
            escape = True
        elif s[j] == ch:
            return j
    return -1


def _matching_close(s: str, start: int, open_ch: str, close_ch: str) -> int:
    """CharacterIndex.indexOfMatchingCloseChar, skipping strings and regexes."""
    opened, j = 1, start + 1
    while j < len(s):
        if s[j] in "'\"":
            j = _next_unescaped(s, j, s[j])
            if j < 0:
                raise InvalidPath(f"Could not find matching close quote when parsing : {s}")
            j += 1
        if j < len(s) and s[j] == "/":
            j = _next_unescaped(s, j, "/")
            if j < 0:
                raise InvalidPath(f"Could not find matching close for / when parsing regex in : {s}")
            j += 1
        if j >= len(s):
            return -1
        if s[j] == open_ch:
            opened += 1
        if s[j] == close_ch:
            opened -= 1
            if opened == 0:
                return j
        j += 1
    return -1


# ---------------------------------------------------------------------------- evaluation
class _Context:
    __slots__ = ("root", "values", "refs", "require")

    def __init__(self, root: Any, require: bool = False) -> None:
        self.root = root
        self.values: list[Any] = []
        self.refs: list[Ref] = []
        self.require = require  # Option.REQUIRE_PROPERTIES (a filter's existence check)

    def add(self, ref: Ref, value: Any) -> None:
        self.values.append(value)
        self.refs.append(ref)


def evaluate(path: CompiledPath, doc: Any, root: Any, require: bool = False) -> _Context:
    """Run ``path`` on ``doc``; the context holds every result and where it lives."""
    ctx = _Context(root, require)
    if path.tokens:
        _eval(path, 0, _ROOT_REF, doc, ctx)
    else:
        ctx.add(_ROOT_REF, doc)
    return ctx


def value_of(path: CompiledPath, ctx: _Context) -> Any:
    """EvaluationContext.getValue: a definite path's last result (or :class:`PathNotFound`), else the list."""
    if path.definite:
        if not ctx.values:
            raise PathNotFound(f"No results for path: {path.root}")
        return ctx.values[-1]
    return ctx.values


def read(doc: Any, path: str) -> Any:
    """``JsonPath.read(doc, path)``: a definite path's value (or :class:`PathNotFound`), else a list."""
    compiled = compile_path(path)
    if compiled.mutates:  # Siddhi's Jayway reads a document parsed for this call: keep ours (cached, or the event's) as it is
        doc = copy.deepcopy(doc)
    return value_of(compiled, evaluate(compiled, doc, doc))


def _eval(path: CompiledPath, i: int, ref: Ref, model: Any, ctx: _Context) -> None:
    token = path.tokens[i]
    leaf = i == len(path.tokens) - 1
    if isinstance(token, _Property):
        if not isinstance(model, dict):
            if path.upstream[i]:
                raise PathNotFound(f"Expected to find an object with property {token.names} but found {model!r}")
            return
        if len(token.names) == 1 or leaf:
            _object_property(path, i, model, token.names, ctx)
        else:
            for name in token.names:
                _object_property(path, i, model, [name], ctx)
    elif isinstance(token, _Index):
        if _array_model(path, i, model):
            for idx in token.indexes:
                _array_index(path, i, model, idx, ctx)
    elif isinstance(token, _Slice):
        if _array_model(path, i, model):
            _slice(path, i, token, model, ctx)
    elif isinstance(token, _Wildcard):
        if isinstance(model, dict):
            for key in list(model):
                _object_property(path, i, model, [key], ctx)
        elif isinstance(model, list):
            for idx in range(len(model)):
                try:
                    _array_index(path, i, model, idx, ctx)
                except PathNotFound:
                    if ctx.require:
                        raise
    elif isinstance(token, _Scan):
        _walk(path, i + 1, ref, model, ctx, _scan_predicate(path, i + 1, ctx))
    elif isinstance(token, _Filter):
        if isinstance(model, dict):
            if token.predicate(model, ctx.root):
                _found(path, i, ref, model, ctx)
        elif isinstance(model, list):
            for idx, item in enumerate(model):
                if token.predicate(item, ctx.root):
                    _array_index(path, i, model, idx, ctx)
        elif path.upstream[i]:
            raise InvalidPath(f"Filter: {token.text} can not be applied to primitives. "
                                f"Current context is: {_text(model)}")
    elif isinstance(token, _Function):
        result = _call(token, model, ctx)
        ctx.add(ref, result)  # Jayway adds a function's value even when a token follows
        if not leaf:
            _eval(path, i + 1, ref, result, ctx)


def _found(path: CompiledPath, i: int, ref: Ref, value: Any, ctx: _Context) -> None:
    if i == len(path.tokens) - 1:
        ctx.add(ref, value)
    else:
        _eval(path, i + 1, ref, value, ctx)


def _object_property(path: CompiledPath, i: int, model: dict[str, Any], names: list[str], ctx: _Context) -> None:
    token = path.tokens[i]
    leaf = i == len(path.tokens) - 1
    if len(names) == 1:
        name = names[0]
        if name not in model:
            if leaf:
                if ctx.require:
                    raise PathNotFound(f"No results for path: ['{name}']")
                return
            if not (path.upstream[i] and token.definite) and not ctx.require:
                return
            raise PathNotFound(f"Missing property in path ['{name}']")
        _found(path, i, (model, name), model[name], ctx)
        return
    merged: dict[str, Any] = {}
    for name in names:
        if name in model:
            merged[name] = model[name]
        elif ctx.require:
            raise PathNotFound(f"Missing property in path {names}")
    ctx.add((model, names), merged)


def _array_model(path: CompiledPath, i: int, model: Any) -> bool:
    if isinstance(model, list):
        return True
    if path.upstream[i]:
        raise PathNotFound(f"Filter can only be applied to arrays. Current context is: {_text(model)}")
    return False


def _array_index(path: CompiledPath, i: int, model: list[Any], idx: int, ctx: _Context) -> None:
    effective = idx + len(model) if idx < 0 else idx
    if 0 <= effective < len(model):  # Jayway ignores an index out of bounds
        # the reference keeps the index as written: Jayway's set/put/add through -1 fail (List.set(-1))
        _found(path, i, (model, idx), model[effective], ctx)


def _slice(path: CompiledPath, i: int, token: _Slice, model: list[Any], ctx: _Context) -> None:
    n = len(model)
    start, stop = token.start, token.stop
    if stop is None:  # [from:]
        assert start is not None
        first = max(0, start + n if start < 0 else start)
        indexes = range(first, n)
    elif start is None:  # [:to]
        indexes = range(0, min(n, stop + n if stop < 0 else stop)) if n else range(0)
    else:  # [from:to]: a negative from is not adjusted, so its indexes count from the end
        indexes = range(start, min(n, stop)) if n else range(0)
    for idx in indexes:
        _array_index(path, i, model, idx, ctx)


def _scan_predicate(path: CompiledPath, i: int, ctx: _Context) -> Callable[[Any], bool]:
    target = path.tokens[i]
    if isinstance(target, _Property):
        if not target.definite:
            return lambda m: isinstance(m, dict)
        names = target.names
        return lambda m: isinstance(m, dict) and all(n in m for n in names)
    if isinstance(target, (_Index, _Slice)):
        return lambda m: isinstance(m, list)
    if isinstance(target, _Wildcard):
        return lambda m: True
    if isinstance(target, _Filter):
        predicate = target.predicate
        return lambda m: predicate(m, ctx.root)
    return lambda m: False


def _walk(path: CompiledPath, i: int, ref: Ref, model: Any, ctx: _Context, matches: Callable[[Any], bool]) -> None:
    """ScanPathToken.walk: the node first, then each child's subtree."""
    if isinstance(model, dict):
        if matches(model):
            _eval(path, i, ref, model, ctx)
        for key, value in list(model.items()):
            _walk(path, i, (model, key), value, ctx, matches)
    elif isinstance(model, list):
        if matches(model):
            if i == len(path.tokens) - 1:
                _eval(path, i, ref, model, ctx)
            else:  # Jayway skips the target token here and runs the one after it on every element,
                # each under the array's own reference (what setElement then changes)
                for item in model:
                    _eval(path, i + 1, ref, item, ctx)
        for idx, item in enumerate(model):
            _walk(path, i, (model, idx), item, ctx, matches)


# ---------------------------------------------------------------------------- path functions
def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _call(token: _Function, model: Any, ctx: _Context) -> Any:
    name = token.name
    if name not in _FUNCTIONS:
        raise InvalidPath(f"Function with name: {name} does not exist.")
    params = [_param_value(p, ctx) for p in token.params or ()]
    return _FUNCTIONS[name](model, params)


def _param_value(param: tuple[str, Any], ctx: _Context) -> Any:
    kind, arg = param
    if kind == "path":  # PathLateBindingValue: the path read on the document
        return value_of(arg, evaluate(arg, ctx.root, ctx.root))
    from srota.engine.extensions.json import parse  # json-smart, permissive

    try:
        return parse(arg)
    except ValueError as exc:
        raise JsonPathError(f"invalid function parameter {arg}") from exc


def _aggregate(combine: Callable[[list[float]], float]) -> Callable[[Any, list[Any]], Any]:
    def run(model: Any, params: list[Any]) -> Any:
        numbers = [float(v) for v in model if _is_number(v)] if isinstance(model, list) else []
        numbers += [float(v) for v in params if _is_number(v)]
        if not numbers:
            raise JsonPathError("Aggregation function attempted to calculate value using empty array")
        return combine(numbers)
    return run


def _max(numbers: list[float]) -> float:
    best = 5e-324  # Double.MIN_VALUE, the smallest positive double, not the most negative
    for x in numbers:
        if best < x:
            best = x
    return best


def _min(numbers: list[float]) -> float:
    best = 1.7976931348623157e308
    for x in numbers:
        if best > x:
            best = x
    return best


def _sum(numbers: list[float]) -> float:
    total = 0.0
    for x in numbers:  # in order, as Java adds (not math.fsum)
        total += x
    return total


def _stddev(numbers: list[float]) -> float:
    total = squares = count = 0.0
    for x in numbers:
        total += x
        squares += x * x
        count += 1
    return math.sqrt(squares / count - total * total / count / count)


def _length(model: Any, _params: list[Any]) -> Any:
    return len(model) if isinstance(model, (list, dict)) else None


def _concat(model: Any, params: list[Any]) -> str:
    parts = [v for v in model if isinstance(v, str)] if isinstance(model, list) else []
    parts += [_text(v) for v in params if v is not None]
    return "".join(parts)


def _append(model: Any, params: list[Any]) -> Any:
    if isinstance(model, list):
        model.extend(params)
    return model


_FUNCTIONS: dict[str, Callable[[Any, list[Any]], Any]] = {
    "avg": _aggregate(lambda xs: _sum(xs) / len(xs)),
    "stddev": _aggregate(_stddev),
    "sum": _aggregate(_sum),
    "min": _aggregate(_min),
    "max": _aggregate(_max),
    "concat": _concat,
    "length": _length,
    "size": _length,
    "append": _append,
}


def _text(v: Any) -> str:
    """Java's ``toString`` of a parsed JSON value (json-smart's for objects and arrays)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, float):
        return java_double_str(v)
    if isinstance(v, (dict, list)):
        from srota.engine.extensions.json import smart

        return smart(v)
    return str(v)


# ---------------------------------------------------------------------------- filter values
class _Node:
    """A ValueNode: what a filter compares."""

    def equals(self, other: _Node) -> bool:
        """Jayway's ``equals`` of this node with another (not symmetric across kinds)."""
        return other is self


class _Num(_Node):
    def __init__(self, number: Decimal | None) -> None:
        self.number = number  # None: NumberNode.NAN (a string that is no number)

    def as_str(self) -> _Str:
        return _Str(_decimal_text(self.number) if self.number is not None else "NaN")

    def equals(self, other: _Node) -> bool:
        if not isinstance(other, (_Num, _Str)):
            return False
        that = other if isinstance(other, _Num) else other.as_num()
        if that.number is None or self.number is None:
            return False
        return self.number == that.number


class _Str(_Node):
    def __init__(self, text: str) -> None:
        self.text = text

    def as_num(self) -> _Num:
        return _Num(_decimal(self.text))

    def equals(self, other: _Node) -> bool:
        if not isinstance(other, (_Num, _Str)):
            return False
        that = other if isinstance(other, _Str) else other.as_str()
        return self.text == that.text


class _Bool(_Node):
    def __init__(self, value: bool) -> None:
        self.value = value

    def equals(self, other: _Node) -> bool:
        return isinstance(other, _Bool) and other.value == self.value


class _Null(_Node):
    def equals(self, other: _Node) -> bool:
        return isinstance(other, _Null)


class _Undefined(_Node):
    def equals(self, other: _Node) -> bool:
        return False


class _Json(_Node):
    """JSON from the document (parsed) or from a literal (text, parsed when compared)."""

    def __init__(self, value: Any, parsed: bool) -> None:
        self.value, self.parsed = value, parsed

    def parse(self) -> Any:
        if self.parsed:
            return self.value
        from srota.engine.extensions.json import parse

        try:
            return parse(self.value)
        except ValueError as exc:
            raise JsonPathError(f"invalid JSON in filter: {self.value}") from exc

    def value_list(self) -> _ValueList | None:
        parsed = self.parse()
        return _ValueList(parsed) if isinstance(parsed, list) else None

    def equals(self, other: _Node) -> bool:  # JsonNode.equals(Object): the JSON as held
        return isinstance(other, _Json) and _java_equal(self.value, other.value)


class _Pattern(_Node):
    def __init__(self, text: str) -> None:
        self.text = text
        body = text[text.index("/") + 1:text.rindex("/")]
        try:
            self.regex = java_regex(("(?i)" if text.endswith("/i") else "") + body)
        except (re.error, ValueError) as exc:
            raise InvalidPath(f"invalid regular expression {text}") from exc

    def equals(self, other: _Node) -> bool:
        return isinstance(other, _Pattern) and other.text == self.text


class _PathValue(_Node):
    """A path in a filter (or a string in a list that reads as one): equal to nothing."""

    def __init__(self, path: CompiledPath, exists: bool, should_exist: bool) -> None:
        self.path, self.exists, self.should_exist = path, exists, should_exist

    def equals(self, other: _Node) -> bool:
        return other is self

    def value(self, item: Any, root: Any) -> _Node:
        """PathNode.evaluate: the value at the path, or whether it exists."""
        doc = root if self.path.root == "$" else item
        if self.exists:
            try:
                value_of(self.path, evaluate(self.path, doc, root, require=True))
            except PathNotFound:
                return _FALSE
            return _TRUE
        try:
            found = value_of(self.path, evaluate(self.path, doc, root))
        except PathNotFound:
            return _UNDEF
        if isinstance(found, (dict, list)):
            return _Json(found, True)
        return _node_of_value(found)


class _ValueList(_Node):
    def __init__(self, values: list[Any]) -> None:
        self.nodes = [_node_of_element(v) for v in values]

    def contains(self, node: _Node) -> bool:
        """``List.contains``: ``node.equals(element)``, Jayway's equality being one-way."""
        return any(node.equals(n) for n in self.nodes)

    def equals(self, other: _Node) -> bool:
        return isinstance(other, _ValueList) and len(other.nodes) == len(self.nodes) and all(
            a.equals(b) for a, b in zip(self.nodes, other.nodes, strict=True))


_TRUE, _FALSE, _NULL, _UNDEF = _Bool(True), _Bool(False), _Null(), _Undefined()


def _decimal(text: str) -> Decimal | None:
    if not re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text):
        return None
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def _decimal_text(d: Decimal) -> str:
    """BigDecimal.toString (scientific notation when the exponent is large, as Python's ``str``)."""
    return str(d)


def _node_of_value(v: Any) -> _Node:
    """A document value read by a filter's path."""
    if v is None:
        return _NULL
    if isinstance(v, bool):
        return _TRUE if v else _FALSE
    if isinstance(v, (int, float)):
        if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            raise JsonPathError(f"Character N is neither a decimal digit number ... {v}")
        return _Num(Decimal(_text(v)))
    if isinstance(v, str):
        return _Str(v)
    raise JsonPathError(f"Could not convert {v} to a ValueNode")


def _node_of_element(v: Any) -> _Node:
    """ValueNode.toValueNode: an element of a list a filter compares against."""
    if v is None:
        return _NULL
    if isinstance(v, str):
        t = v.strip()
        if t[:1] in ("@", "$"):
            try:
                return _PathValue(compile_path(t), False, False)
            except JsonPathError:
                pass
        if len(t) > 1 and ((t[0] == "[" and t[-1] == "]") or (t[0] == "{" and t[-1] == "}")):
            try:
                from srota.engine.extensions.json import parse

                parse(t)
                return _Json(v, False)
            except ValueError:
                pass
        return _Str(_unescape(v))
    if isinstance(v, bool):
        return _TRUE if v else _FALSE
    if isinstance(v, (int, float)):
        return _Num(Decimal(_text(v)))
    raise JsonPathError("Could not determine value type")


def _java_equal(a: Any, b: Any) -> bool:
    """``equals`` of json-smart values: an int is not a double, a bool is not a number."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_java_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_java_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


# ---------------------------------------------------------------------------- filter operators
def _value_list(node: _Node) -> _ValueList | None:
    if isinstance(node, _Json):
        return node.value_list()
    if isinstance(node, _ValueList):
        return node
    raise InvalidPath("Expected value list node")


def _less(left: _Node, right: _Node) -> int | None:
    """Sign of left - right for two numbers or two strings, else None."""
    if isinstance(left, _Num) and isinstance(right, _Num):
        if left.number is None or right.number is None:
            raise JsonPathError("NumberNode.NAN compared")
        return (left.number > right.number) - (left.number < right.number)
    if isinstance(left, _Str) and isinstance(right, _Str):
        a, b = left.text.encode("utf-16-be"), right.text.encode("utf-16-be")
        return (a > b) - (a < b)
    return None


def _equals(left: _Node, right: _Node) -> bool:
    if isinstance(left, _Json) and isinstance(right, _Json):
        return _java_equal(left.value, right.parse())
    return left.equals(right)


def _regex(left: _Node, right: _Node) -> bool:
    if isinstance(left, _Pattern) == isinstance(right, _Pattern):
        return False
    pattern, other = (left, right) if isinstance(left, _Pattern) else (right, left)
    assert isinstance(pattern, _Pattern)
    if isinstance(other, _Str):
        text = other.text
    elif isinstance(other, _Num):
        text = other.as_str().text
    elif isinstance(other, _Bool):
        text = "true" if other.value else "false"
    else:
        text = ""
    return pattern.regex.fullmatch(text) is not None


def _size(left: _Node, right: _Node) -> bool:
    if not isinstance(right, _Num) or right.number is None:
        return False
    expected = int(right.number)
    if isinstance(left, _Str):
        return len(left.text) == expected
    if isinstance(left, _Json):
        parsed = left.parse()
        return (len(parsed) if isinstance(parsed, list) else -1) == expected
    return False


def _empty(left: _Node, right: _Node) -> bool:
    if isinstance(left, (_Str, _Json)):
        if not isinstance(right, _Bool):
            raise InvalidPath("Expected boolean node")
        if isinstance(left, _Str):
            return (left.text == "") == right.value
        parsed = left.parse()
        empty = len(parsed) == 0 if isinstance(parsed, (list, dict, str)) else True
        return empty == right.value
    return False


def _in(left: _Node, right: _Node) -> bool:
    values = _value_list(right)
    return values is not None and values.contains(left)


def _contains(left: _Node, right: _Node) -> bool:
    if isinstance(left, _Str) and isinstance(right, _Str):
        return right.text in left.text
    if isinstance(left, _Json):
        values = left.value_list()
        return values is not None and values.contains(right)
    return False


def _subsetof(left: _Node, right: _Node) -> bool:
    whole = _value_list(right)
    if whole is None:
        return False
    part = _value_list(left)
    if part is None:
        return False
    return all(whole.contains(n) for n in part.nodes)


def _all(left: _Node, right: _Node) -> bool:
    raise InvalidPath("Expected value list node")  # a filter's text never gives `all` a value list


def _needs_node(kind: str) -> Callable[[_Node, _Node], bool]:
    def fail(left: _Node, right: _Node) -> bool:
        raise InvalidPath(f"Expected {kind} node")
    return fail


def _exists(left: _Node, right: _Node) -> bool:
    assert isinstance(left, _Bool) and isinstance(right, _Bool)
    return left.value == right.value


_OPERATORS: dict[str, Callable[[_Node, _Node], bool]] = {
    ">=": lambda a, b: (c := _less(a, b)) is not None and c >= 0,
    "<=": lambda a, b: (c := _less(a, b)) is not None and c <= 0,
    "==": _equals,
    "===": lambda a, b: type(a) is type(b) and _equals(a, b),
    "!=": lambda a, b: not _equals(a, b),
    "!==": lambda a, b: not (type(a) is type(b) and _equals(a, b)),
    "<": lambda a, b: (c := _less(a, b)) is not None and c < 0,
    ">": lambda a, b: (c := _less(a, b)) is not None and c > 0,
    "=~": _regex,
    "NIN": lambda a, b: not _in(a, b),
    "IN": _in,
    "CONTAINS": _contains,
    "ALL": _all,
    "SIZE": _size,
    "EXISTS": _exists,
    "TYPE": _needs_node("class"),
    "MATCHES": _needs_node("predicate"),
    "EMPTY": _empty,
    "SUBSETOF": _subsetof,
}

Predicate = Callable[[Any, Any], bool]


class _Unsupported(InvalidPath):
    """Jayway's InvalidPathException while reading a filter: the parser backs off and tries another reading."""


class _FilterCompiler:
    """Jayway's FilterCompiler: ``[?(...)]`` to a predicate ``(item, root) -> bool``."""

    def __init__(self, text: str) -> None:
        s = text.strip()
        if not (s.startswith("[") and s.endswith("]")):
            raise InvalidPath(f"Filter must start with '[' and end with ']'. {text}")
        s = s[1:-1].strip()
        if not s.startswith("?"):
            raise InvalidPath(f"Filter must start with '[?' and end with ']'. {text}")
        s = s[1:].strip()
        if not (s.startswith("(") and s.endswith(")")):
            raise InvalidPath(f"Filter must start with '[?(' and end with ')]'. {text}")
        self.s = s
        self.i = 0
        self.text = text

    def compile(self) -> Predicate:
        try:
            result = self.logical_or()
            self.blanks()
            if self.i < len(self.s):
                raise InvalidPath(f"Expected end of filter expression instead of: {self.s[self.i:]}")
            return result
        except InvalidPath:
            raise
        except Exception as exc:
            raise InvalidPath(f"Failed to parse filter: {self.text}") from exc

    def blanks(self) -> None:
        while self.i < len(self.s) and self.s[self.i] == " ":
            self.i += 1

    def current(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def significant(self, text: str) -> None:
        self.blanks()
        if not self.s.startswith(text, self.i):
            raise _Unsupported(f"Expected {text}")
        self.i += len(text)

    def logical_or(self) -> Predicate:
        ops = [self.logical_and()]
        while True:
            save = self.i
            try:
                self.significant("||")
                ops.append(self.logical_and())
            except _Unsupported:
                self.i = save
                break
        if len(ops) == 1:
            return ops[0]
        return lambda item, root: any(op(item, root) for op in ops)

    def logical_and(self) -> Predicate:
        ops = [self.and_operand()]
        while True:
            save = self.i
            try:
                self.significant("&&")
                ops.append(self.and_operand())
            except _Unsupported:
                self.i = save
                break
        if len(ops) == 1:
            return ops[0]
        return lambda item, root: all(op(item, root) for op in ops)

    def and_operand(self) -> Predicate:
        self.blanks()
        save = self.i
        if self.current() == "!":
            self.i += 1
            self.blanks()
            if self.current() in ("$", "@"):
                self.i = save  # `!@.x`: a path that must not exist, read by the expression
            else:
                op = self.and_operand()
                return lambda item, root: not op(item, root)
        self.blanks()
        if self.current() == "(":
            self.i += 1
            op = self.logical_or()
            self.significant(")")
            return op
        return self.expression()

    def expression(self) -> Predicate:
        left = self.value()
        save = self.i
        try:
            operator = self.operator()
            right = self.value()
        except _Unsupported:
            self.i = save
        else:
            return _relation(left, operator, right)
        if not isinstance(left, _PathValue):
            raise InvalidPath("Expected path node")
        check = _PathValue(left.path, True, left.should_exist)
        return _relation(check, "EXISTS", _TRUE if left.should_exist else _FALSE)

    def operator(self) -> str:
        self.blanks()
        begin = self.i
        s = self.s
        if self.current() and self.current() in "<>=~!":
            while self.i < len(s) and s[self.i] in "<>=~!":
                self.i += 1
        else:
            while self.i < len(s) and s[self.i] != " ":
                self.i += 1
        op = s[begin:self.i].upper()
        if op not in _OPERATORS:
            raise _Unsupported(f"Filter operator {s[begin:self.i]} is not supported!")
        return op

    def value(self) -> _Node:
        self.blanks()
        c = self.current()
        if c in ("$", "@"):
            return self.path()
        if c == "!":
            self.i += 1
            self.blanks()
            if self.current() in ("$", "@"):
                return self.path()
            raise _Unsupported("Unexpected character: !")
        return self.literal()

    def literal(self) -> _Node:
        self.blanks()
        c, s = self.current(), self.s
        if c in ("'", '"'):
            close = _next_unescaped(s, self.i, c)
            if close < 0:
                raise _Unsupported(f"String literal does not have matching quotes. Expected {c} in {s}")
            text = s[self.i + 1:close]
            self.i = close + 1
            return _Str(_unescape(text))
        if c in ("t", "f"):
            word = "true" if c == "t" else "false"
            if s.startswith(word, self.i):
                self.i += len(word)
                return _TRUE if c == "t" else _FALSE
            raise _Unsupported("Expected boolean literal")
        if c == "n":
            if s.startswith("null", self.i):
                self.i += 4
                return _NULL
            raise _Unsupported("Expected <null> value")
        if c in ("{", "["):
            close = _matching_close(s, self.i, c, "}" if c == "{" else "]")
            if close < 0:
                raise _Unsupported(f"String not closed. Expected ' in {s}")
            text = s[self.i:close + 1]
            self.i = close + 1
            return _Json(text, False)
        if c == "/":
            close = _next_unescaped(s, self.i, "/")
            if close < 0:
                raise _Unsupported(f"Pattern not closed. Expected / in {s}")
            if close + 1 < len(s) and s[close + 1] == "i":
                close += 1
            text = s[self.i:close + 1]
            self.i = close + 1
            return _Pattern(text)
        begin = self.i
        while self.i < len(s) and (s[self.i].isdigit() or s[self.i] in "-."):
            self.i += 1
        number = _decimal(s[begin:self.i])
        if number is None:  # new BigDecimal fails: not an InvalidPathException, the filter is invalid
            raise InvalidPath(f"Failed to parse filter: {self.text}, error on position: {self.i}")
        return _Num(number)

    def path(self) -> _PathValue:
        s = self.s
        j = self.i - 1
        while j >= 0 and s[j] == " ":
            j -= 1
        should_exist = not (j >= 0 and s[j] == "!")
        begin = self.i
        self.i += 1
        while self.i < len(s):
            if s[self.i] == "[":
                close = _matching_close(s, self.i, "[", "]")
                if close < 0:
                    raise InvalidPath(f"Square brackets does not match in filter {s}")
                self.i = close + 1
            if self.i >= len(s):
                break
            c = s[self.i]
            function_close = c == ")" and self._closes_function(begin)
            if c in "<>=~! " or (c == ")" and not function_close):
                break
            self.i += 1
        return _PathValue(compile_path(s[begin:self.i]), False, should_exist)

    def _closes_function(self, lower: int) -> bool:
        s = self.s
        j = self.i - 1
        while j >= 0 and s[j] == " ":
            j -= 1
        if j < 0 or s[j] != "(":
            return False
        j -= 1
        while j > lower:
            if s[j] == ".":
                return True
            j -= 1
        return False


def _lenient(predicate: Predicate) -> Predicate:
    """PredicatePathToken.accept: an InvalidPathException while testing an item means no match."""
    def accept(item: Any, root: Any) -> bool:
        try:
            return predicate(item, root)
        except InvalidPath:
            return False
    return accept


def _relation(left: _Node, operator: str, right: _Node) -> Predicate:
    evaluator = _OPERATORS[operator]

    def apply(item: Any, root: Any) -> bool:
        lv = left.value(item, root) if isinstance(left, _PathValue) else left
        rv = right.value(item, root) if isinstance(right, _PathValue) else right
        return evaluator(lv, rv)

    return apply


def targets(doc: Any, path: str) -> list[Ref]:
    """Where the path's results live ((container, key) pairs), for setElement's set/put/add."""
    compiled = compile_path(path)
    ctx = evaluate(compiled, doc, doc)
    value_of(compiled, ctx)  # PathNotFound for a definite path that finds nothing
    return ctx.refs
