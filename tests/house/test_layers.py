"""The rooms import one way (docs/ARCHITECTURE.md): a lower room never imports a higher one.

``service -> connectors, mappers -> engine -> grammar``; connectors and mappers know nothing of
each other.  Every import counts, the lazy ones inside functions too, and every import of ours
is absolute (``srota.<room>``), so the check reads the source and needs no import machinery.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: What each room may import of ours (besides itself).
ALLOWED: dict[str, set[str]] = {
    "grammar": set(),
    "engine": {"grammar"},
    "mappers": {"engine", "grammar"},
    "connectors": {"engine", "grammar"},
    "service": {"engine", "grammar", "mappers", "connectors"},
    "srota": {"engine", "grammar"},   # the front door re-exports the embedding API
}
ROOMS = {"grammar", "engine", "mappers", "connectors", "service"}


def _imports(path: Path) -> list[tuple[int, str, int]]:
    """``(line, imported module, relative level)`` of every import in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, node.module or "", node.level))
    return found


def _violations() -> list[str]:
    bad = []
    for room in ALLOWED:
        for path in sorted((ROOT / room).rglob("*.py")):
            for line, module, level in _imports(path):
                where = f"{path.relative_to(ROOT)}:{line}"
                if level:
                    bad.append(f"{where}: relative import (write srota.{room}...)")
                    continue
                parts = module.split(".")
                if parts[0] in ROOMS:
                    bad.append(f"{where}: bare '{module}' (write srota.{module})")
                elif parts[0] == "srota" and len(parts) > 1 and parts[1] in ROOMS:
                    target = parts[1]
                    if target != room and target not in ALLOWED[room]:
                        bad.append(f"{where}: {room} imports {target} ({module})")
    return bad


def test_rooms_import_one_way():
    assert _violations() == []


def test_the_check_sees_a_violation(tmp_path):
    bad = tmp_path / "engine" / "x.py"
    bad.parent.mkdir()
    bad.write_text("def f():\n    from srota.service.host import AppHost\n")
    globals()["ROOT"], saved = tmp_path, ROOT
    try:
        assert _violations() == ["engine/x.py:2: engine imports service (srota.service.host)"]
    finally:
        globals()["ROOT"] = saved


def test_the_engine_planners_import_one_way():
    """Inside the engine: query -> join, pattern -> planning, never back."""
    for module in ("join.py", "planning.py", *(f"pattern/{p.name}" for p in (ROOT / "engine" / "pattern").glob("*.py"))):
        for line, imported, _ in _imports(ROOT / "engine" / module):
            assert imported != "srota.engine.query", f"engine/{module}:{line} imports the query planner"
    for line, imported, _ in _imports(ROOT / "engine" / "planning.py"):
        assert imported not in ("srota.engine.join", "srota.engine.pattern"), f"engine/planning.py:{line}"
