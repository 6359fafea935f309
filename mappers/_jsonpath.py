"""JSONPath for the json mapper: a compiled fast path for simple paths, a library for the rest.

siddhi-map-json evaluates ``@attributes`` and ``enclosing.element`` with Jayway JsonPath, so
any JSONPath is valid there: wildcards (``$.items[*].id``), recursive descent (``$..price``)
and filters (``$.items[?(@.price > 10 && @.sym == 'a')].id``).

* **Simple paths** -- ``$``, ``$.a.b``, ``$.a[0]``, ``$.a[-1]``, ``$['x y']``, ``$["x"]`` and the
  relative form Jayway also accepts (``a.b`` means ``$.a.b``) -- are parsed by
  :func:`parse_path` and compiled to one Python function (plain subscripts in a ``try``): the
  hot path of nearly every mapping, about ten times cheaper than a general evaluator.
* **Everything else** goes to `python-jsonpath <https://pypi.org/project/python-jsonpath/>`_
  (``jsonpath`` on import), chosen over ``jsonpath-ng`` because its filter syntax is the
  one Jayway users write (``[?(@.a > 1 && @.b == 'x')]``, ``||``, ``=~ /regex/``, ``in``),
  it implements RFC 9535 with a clear "is this query singular" answer (Jayway's *definite*
  path), it is pure Python with no dependencies, typed, and actively maintained.
  Paths are compiled once, when the mapper is created; a syntax error is a creation error.

A compiled path is a plain function ``get(document) -> value | MISSING``.  For a *definite*
path (one node at most) a key or index that is absent (or applied to the wrong kind of node)
gives ``MISSING`` -- Jayway's ``PathNotFoundException`` -- while an explicit JSON ``null``
gives ``None``, so mappers can tell the two apart.  An *indefinite* path (wildcard, descent,
filter, slice) always gives a list of the matches, possibly empty, as Jayway does.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jsonpath as _jsonpath_lib
from srota.engine.codegen import CodeGen
from srota.mappers._convert import MISSING

_NAME = re.compile(r"[^.\[\]\s'\"*]+")
_INDEX = re.compile(r"\[\s*(-?\d+)\s*\]")
_QUOTED = re.compile(r"""\[\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\s*\]""")


class JsonPathError(ValueError):
    """A path is malformed (or, for :func:`parse_path`, outside the simple subset)."""


@dataclass(frozen=True)
class JsonPath:
    """A parsed path: ``steps`` are ``str`` keys and ``int`` indexes, applied from the root."""

    text: str
    steps: tuple[str | int, ...]

    def compile(self) -> Callable[[Any], Any]:
        """``get(document) -> value | MISSING`` as generated code."""
        gen = CodeGen({"MISSING": MISSING, "_ix": _index})
        expr = "o"
        for step in self.steps:
            expr = f"_ix({expr}, {step})" if isinstance(step, int) else f"{expr}[{step!r}]"
        if not self.steps:
            return gen.function("_path", "o", ["return o"])
        return gen.function("_path", "o", [
            "try:",
            f"    return {expr}",
            "except (KeyError, TypeError, IndexError):",
            "    return MISSING",
        ])


def _index(node: Any, i: int) -> Any:
    # Only arrays are indexable: ``"abc"[0]`` must be a miss, not ``"a"``.
    if node.__class__ is not list:
        raise IndexError(i)
    return node[i]


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def compile_path(text: str) -> Callable[[Any], Any]:
    """``get(document) -> value | MISSING`` for any JSONPath (see the module doc).

    Simple paths take the compiled fast path; the others are evaluated by python-jsonpath.
    Raises :class:`JsonPathError` for a malformed path.
    """
    try:
        return parse_path(text).compile()
    except JsonPathError:
        pass
    src = text.strip()
    if not src:
        raise JsonPathError("empty JSON path")
    if not src.startswith(("$", "@")):
        src = "$." + src  # Jayway reads a path without a root as relative to it
    try:
        query = _jsonpath_lib.compile(src)
    except _jsonpath_lib.JSONPathError as exc:
        raise JsonPathError(f"invalid JSON path {text!r}: {str(exc).splitlines()[0]}") from None
    findall = query.findall
    if isinstance(query, _jsonpath_lib.JSONPath) and query.singular_query():
        def get_one(document: Any) -> Any:
            found = findall(document)
            return found[0] if found else MISSING
        return get_one

    def get_all(document: Any) -> Any:
        return findall(document)
    return get_all


def is_simple_path(text: str) -> bool:
    """Whether ``text`` takes the compiled fast path of :func:`compile_path`."""
    try:
        parse_path(text)
    except JsonPathError:
        return False
    return True


def parse_path(text: str) -> JsonPath:
    """Parse a simple path (see the module doc); raises :class:`JsonPathError` otherwise."""
    src = text.strip()
    if not src:
        raise JsonPathError("empty JSON path")
    i = 0
    steps: list[str | int] = []
    if src.startswith("$"):
        i = 1
    else:
        m = _NAME.match(src)
        if not m:
            raise JsonPathError(f"JSON path {text!r} must start with '$' or a name")
        steps.append(m.group(0))
        i = m.end()
    while i < len(src):
        ch = src[i]
        if ch == ".":
            if src.startswith("..", i):
                raise JsonPathError(f"recursive descent ('..') is not supported in {text!r}")
            m = _NAME.match(src, i + 1)
            if not m:
                rest = src[i + 1:i + 2]
                if rest == "*":
                    raise JsonPathError(f"wildcards are not supported in {text!r}")
                raise JsonPathError(f"a name is expected after '.' at position {i + 1} of {text!r}")
            steps.append(m.group(0))
            i = m.end()
        elif ch == "[":
            m = _INDEX.match(src, i)
            if m:
                steps.append(int(m.group(1)))
                i = m.end()
                continue
            m = _QUOTED.match(src, i)
            if m:
                quoted = m.group(1) if m.group(1) is not None else m.group(2)
                steps.append(_unescape(quoted))
                i = m.end()
                continue
            raise JsonPathError(f"only [n], ['name'] and [\"name\"] are supported, at position {i} of {text!r}")
        else:
            raise JsonPathError(f"unexpected {ch!r} at position {i} of JSON path {text!r}")
    return JsonPath(text, tuple(steps))
