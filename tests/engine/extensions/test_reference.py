"""The generated extension reference: docs/extensions.md never drifts from the declarations."""
from __future__ import annotations

from pathlib import Path

from srota.engine.extensions import reference
from srota.service.cli import main

DOCS = Path(__file__).resolve().parents[3] / "docs" / "extensions.md"


def test_checked_in_reference_is_the_generated_one():
    expected = reference.render()
    assert DOCS.read_text(encoding="utf-8") == expected, (
        "docs/extensions.md is stale: run `python -m srota.engine.extensions.reference > docs/extensions.md`")


def test_every_namespaced_builtin_is_documented_with_its_parameters():
    text = reference.render()
    for ext in reference.extensions():
        assert f"### {ext.qualified_name} (" in text
        for p in ext.params:
            assert f"| {p.name} |" in text


def test_cli_prints_one_namespace(capsys):
    assert main(["extensions", "regex"]) == 0
    out = capsys.readouterr().out
    assert "### regex:matches (function)" in out and "str:concat" not in out
    assert main(["extensions", "nosuch"]) == 2
