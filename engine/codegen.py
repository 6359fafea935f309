"""Generated Python code (DESIGN.md decision 2: compile, don't interpret).

Expressions, filters and projections become Python source once, at app creation, and are
``compile()``d.  Each generated function gets a :mod:`linecache` entry, so a traceback from a
failing query shows the generated line.  Code objects are cached by source text: partitions
instantiate the same query many times and pay for compilation once.  The cache is a bounded
LRU (each distinct on-demand query text generates new code; a process serving them for
months must not keep all of it): an evicted entry is compiled again when needed, and its
linecache entry goes with it.
"""
from __future__ import annotations

import itertools
import linecache
import threading
from collections import OrderedDict
from collections.abc import Callable
from types import CodeType
from typing import Any

#: How many generated code objects (and their linecache entries) are kept.
CODE_CACHE_SIZE = 8192

_code_cache: OrderedDict[str, tuple[CodeType, str]] = OrderedDict()
_cache_lock = threading.Lock()
_file_ids = itertools.count(1)


def _compile(source: str) -> tuple[CodeType, str]:
    with _cache_lock:
        hit = _code_cache.get(source)
        if hit is not None:
            _code_cache.move_to_end(source)
            return hit
        filename = f"<srota-generated-{next(_file_ids)}>"
        code = compile(source, filename, "exec")
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        _code_cache[source] = (code, filename)
        while len(_code_cache) > CODE_CACHE_SIZE:
            _, (_, old) = _code_cache.popitem(last=False)
            linecache.cache.pop(old, None)
        return code, filename


class CodeGen:
    """A namespace of helper objects plus the functions generated against it.

    ``ref(obj)`` puts an object into the namespace and returns the name generated code uses
    for it; ``function(...)`` compiles a function over that namespace.
    """

    def __init__(self, base: dict[str, Any] | None = None) -> None:
        self.ns: dict[str, Any] = dict(base or {})
        self._ids = itertools.count()
        self._by_id: dict[int, str] = {}

    def ref(self, obj: Any, hint: str = "k") -> str:
        """The namespace name for ``obj`` (added once)."""
        name = self._by_id.get(id(obj))
        if name is not None and self.ns.get(name) is obj:
            return name
        name = f"_{hint}{next(self._ids)}"
        self.ns[name] = obj
        self._by_id[id(obj)] = name
        return name

    def temp(self) -> str:
        """A fresh local name for generated code."""
        return f"_t{next(self._ids)}"

    def function(self, name: str, params: str, body: list[str]) -> Callable[..., Any]:
        """Compile ``def name(params): body`` in this namespace and return the function."""
        lines = [f"def {name}({params}):"] + ["    " + line for line in body]
        source = "\n".join(lines) + "\n"
        code, _ = _compile(source)
        scope = self.ns
        exec(code, scope)  # noqa: S102 - our own generated code
        fn = scope.pop(name)
        return fn
