"""A small JSONPath subset, compiled to Python once per mapping.

Supported: ``$`` (the root), ``$.a.b``, ``$.a[0]``, ``$.a[-1]``, ``$['x y']``, ``$["x"]`` and the
relative form Siddhi also accepts (``a.b`` means ``$.a.b``).  Wildcards, recursive descent
and filters are rejected when the mapper is created, never half-evaluated.

A compiled path is a plain function ``get(document) -> value | MISSING``: a key or index that
is absent (or applied to the wrong kind of node) gives ``MISSING``, while an explicit JSON
``null`` gives ``None``, so mappers can tell the two apart.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from srota.engine.codegen import CodeGen
from srota.mappers._convert import MISSING

_NAME = re.compile(r"[^.\[\]\s'\"*]+")
_INDEX = re.compile(r"\[\s*(-?\d+)\s*\]")
_QUOTED = re.compile(r"""\[\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\s*\]""")


class JsonPathError(ValueError):
    """A path is outside the supported subset or malformed."""


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


def parse_path(text: str) -> JsonPath:
    """Parse a path of the supported subset; raises :class:`JsonPathError` with the reason."""
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
