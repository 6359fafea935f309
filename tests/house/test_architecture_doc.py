"""docs/ARCHITECTURE.md stays true: every file or folder it names exists, every room is described."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
ROOMS = ("grammar", "engine", "mappers", "connectors", "service", "srota")


def _named_paths(text: str) -> set[str]:
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_./]*(?:\.py|\.lark|\.md|/))`", text))


def test_every_path_named_exists() -> None:
    missing = []
    for name in sorted(_named_paths(DOC.read_text())):
        # the planner table names engine modules without the folder
        if not any((base / name).exists() for base in (ROOT, ROOT / "engine", ROOT / "service")):
            missing.append(name)
    assert not missing, f"docs/ARCHITECTURE.md names what does not exist: {missing}"


def test_every_room_is_described() -> None:
    text = DOC.read_text()
    assert [room for room in ROOMS if f"`{room}`" not in text and f"`{room}/`" not in text] == []
