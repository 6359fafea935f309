"""The README's embedding example runs as written (keeps the README true)."""
from __future__ import annotations

import re
from pathlib import Path

from srota import engine


def test_readme_embedding_example_runs(capsys):
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    example = re.search(r"## Embedding API.*?```python\n(.*?)```", readme, re.S)
    assert example is not None
    exec(compile(example.group(1), "README.md", "exec"), {})  # noqa: S102 - our own README
    printed = capsys.readouterr().out
    assert "IBM" in printed and "WSO2" in printed


def test_engine_docstring_example():
    import doctest

    assert doctest.testmod(engine).failed == 0


def test_readme_pytest_recipe_runs(monkeypatch):
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    recipe = next(block for block in re.findall(r"```python\n(.*?)```", readme, re.S) if "def test_" in block)
    monkeypatch.chdir(Path(__file__).parents[1])
    scope: dict = {}
    exec(compile(recipe, "README.md", "exec"), scope)  # noqa: S102 - our own README
    for name, fn in list(scope.items()):
        if name.startswith("test_"):
            fn()
