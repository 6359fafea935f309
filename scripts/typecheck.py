"""``make lint``'s type check: mypy over the public API (srota/__init__.py) and every room.

The rooms sit at the repository root and install as ``srota.<room>`` (pyproject's
``package-dir``), a mapping mypy's file discovery cannot read (nor can it follow the editable
install's import hook).  So this script names each file's module itself: every ``*.py`` of
the rooms becomes a mypy build source with its ``srota.`` module name, and imports between
them resolve to those sources.  The settings are pyproject's ``[tool.mypy]``; extra
arguments go to mypy (``python scripts/typecheck.py --strict``).
"""
from __future__ import annotations

import sys
from pathlib import Path

from mypy import build
from mypy.errors import CompileError
from mypy.main import process_options
from mypy.modulefinder import BuildSource

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("grammar", "engine", "mappers", "connectors", "service")


def _sources() -> list[BuildSource]:
    out = [BuildSource(str(ROOT / "srota" / "__init__.py"), "srota", None)]
    for room in ROOMS:
        for path in sorted((ROOT / room).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out.append(BuildSource(str(path), ".".join(["srota", *parts]), None))
    return out


def main(argv: list[str]) -> int:
    _, options = process_options(["--config-file", str(ROOT / "pyproject.toml"), *argv, str(ROOT / "srota")])
    try:
        result = build.build(_sources(), options)
    except CompileError as exc:
        print("\n".join(exc.messages))
        return 2
    for line in result.errors:
        print(line)
    n = len(_sources())
    print(f"Found {len(result.errors)} error(s) in {n} source files" if result.errors else
          f"Success: no issues found in {n} source files")
    return 1 if result.errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
