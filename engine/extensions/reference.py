"""The extension reference, generated from the registry's declarations (never kept by hand).

:func:`render` writes Markdown for the built-in namespaced extensions (``str:``, ``json:``,
``unique:``, ...): per extension its kind, call shapes (Siddhi's parameter overloads), return
type, parameters (types, default, whether they may vary per event) and examples.
``docs/extensions.md`` is this text (a test keeps it so); ``srota extensions [NAMESPACE]``
prints it.  Only built-ins (modules under ``srota.``) are listed, so an installed third-party
plugin does not change the checked-in reference.
"""
from __future__ import annotations

from srota.engine import extensions as _builtins  # noqa: F401 - registers every built-in namespace
from srota.engine.registry import Extension, Kind, Param, registry

_KIND_ORDER = {Kind.FUNCTION: 0, Kind.AGGREGATOR: 1, Kind.WINDOW: 2, Kind.STREAM_PROCESSOR: 3}
_KIND_NAMES = {Kind.FUNCTION: "function", Kind.AGGREGATOR: "aggregate function", Kind.WINDOW: "window",
               Kind.STREAM_PROCESSOR: "stream processor"}
_SOURCES = {
    "str": "siddhi-execution-string", "math": "siddhi-execution-math", "time": "siddhi-execution-time",
    "json": "siddhi-execution-json", "map": "siddhi-execution-map", "list": "siddhi-execution-list",
    "regex": "siddhi-execution-regex", "unique": "siddhi-execution-unique",
    "reorder": "siddhi-execution-reorder", "unitconversion": "siddhi-execution-unitconversion",
}
CORE = "core"


def _builtin(ext: Extension) -> bool:
    return getattr(ext.factory, "__module__", "").startswith("srota.") and ext.kind in _KIND_ORDER


def extensions(namespace: str | None = None) -> list[Extension]:
    """The built-in extensions of one namespace (``"core"``: the unnamespaced ones), or of all namespaces."""
    wanted = "" if namespace == CORE else namespace
    out = [e for e in registry.all() if _builtin(e)
           and (e.namespace.lower() == wanted.lower() if wanted is not None else e.namespace)]
    return sorted(out, key=lambda e: (e.namespace.lower(), _KIND_ORDER[e.kind], e.name.lower()))


def namespaces() -> list[str]:
    """Every namespace with built-in extensions, sorted."""
    return sorted({e.namespace for e in extensions()}, key=str.lower)


def _types(p: Param) -> str:
    return "|".join(t.value.upper() for t in p.types)


def _shapes(ext: Extension) -> list[str]:
    by_name = {p.name: p for p in ext.params}
    lists: list[list[str]] = []
    if ext.overloads:
        lists = [list(o) for o in ext.overloads]
    else:
        names = [p.name for p in ext.params if not p.repeat]
        required = sum(1 for p in ext.params if not p.optional and not p.repeat)
        lists = [names[:n] for n in range(required, len(names) + 1)]
        if ext.params and ext.params[-1].repeat:
            lists.append([*names, ext.params[-1].name, "..."])
    prefix = {Kind.WINDOW: "#window.", Kind.STREAM_PROCESSOR: "#"}.get(ext.kind, "")
    out = []
    for names in lists:
        args = []
        for n in names:
            if n == "...":
                args.append("...")
            else:
                p = by_name[n]
                args.append(f"<{_types(p)}> {n}")
        out.append(f"{prefix}{ext.qualified_name}({', '.join(args)})")
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _default(p: Param) -> str:
    if not p.optional:
        return ""
    if p.default is None:
        return "-"
    if isinstance(p.default, bool):
        return "true" if p.default else "false"
    return str(p.default)


def _render_one(ext: Extension) -> list[str]:
    lines = [f"### {ext.qualified_name} ({_KIND_NAMES[ext.kind]})", "", ext.doc, "", "```"]
    lines += _shapes(ext)
    lines += ["```", ""]
    returns = ext.meta.get("returns")
    if returns:
        label = "Adds attributes" if ext.kind is Kind.STREAM_PROCESSOR else "Returns"
        lines += [f"{label}: {returns}", ""]
    if ext.params:
        lines += ["| parameter | types | default | per event | description |", "|---|---|---|---|---|"]
        for p in ext.params:
            lines.append(f"| {p.name} | {_types(p)} | {_cell(_default(p))} | {'yes' if p.dynamic else 'no'} "
                         f"| {_cell(p.doc)} |")
        lines.append("")
    for syntax, result in ext.meta.get("examples", ()):
        lines += [f"Example: `{syntax}` gives {result}", ""]
    return lines


def render(namespace: str | None = None) -> str:
    """The Markdown reference of one namespace, or of every namespace."""
    chosen = [namespace] if namespace is not None else namespaces()
    lines = ["# Extension reference", "",
             "Generated from the extensions' declarations (`srota extensions` prints it; "
             "`python -m srota.engine.extensions.reference > docs/extensions.md` rewrites this file). "
             "Parameters marked \"per event: no\" must be constants. Siddhi's behaviour is the "
             "contract; each namespace's module docstring lists the deliberate departures.", ""]
    for ns in chosen:
        items = extensions(ns)
        if not items:
            continue
        title = "core (no namespace)" if ns == CORE else f"`{ns}:`"
        source = _SOURCES.get(ns)
        lines += [f"## {title}", ""]
        if source:
            lines += [f"Siddhi's {source}.", ""]
        lines += ["| name | kind | returns |", "|---|---|---|"]
        for ext in items:
            lines.append(f"| {ext.qualified_name} | {_KIND_NAMES[ext.kind]} | {_cell(ext.meta.get('returns', ''))} |")
        lines.append("")
        for ext in items:
            lines += _render_one(ext)
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":  # pragma: no cover - the documented way to regenerate docs/extensions.md
    import sys

    sys.stdout.write(render(sys.argv[1] if len(sys.argv) > 1 else None))
