"""Where a C compiler is, the install built the columnar path's compiled loops (engine/_speedups.c).

The extension is optional at install (a machine without a compiler gets the pure-Python loops),
so a source that fails to compile would otherwise go unnoticed: the build would only warn, and
any module left from an earlier build would be refused as stale (``columnar._API``).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from srota.engine import columnar

REPO = Path(__file__).resolve().parents[2]


def test_the_compiled_module_is_built_and_current_where_a_compiler_is() -> None:
    if shutil.which(os.environ.get("CC", "cc")) is None:
        pytest.skip("no C compiler here: the pure-Python loops only, by design")
    if os.environ.get("SROTA_PURE_PYTHON"):
        pytest.skip("SROTA_PURE_PYTHON is set")
    assert columnar.available(), "engine/_speedups.c did not build (see `pip install -v -e .`) or is stale"


def test_a_machine_without_a_c_compiler_still_builds_and_installs_srota(tmp_path: Path) -> None:
    # Issue 44: `pip install` needs no compiler; the compiled loops are optional (pyproject's
    # ext-modules), so a failing compiler gives a wheel without them, not an error.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    for folder in ("srota", "grammar", "engine", "mappers", "connectors", "service"):
        shutil.copytree(REPO / folder, src / folder, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    env = dict(os.environ, CC="/bin/false", PIP_DISABLE_PIP_VERSION_CHECK="1")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "dist"), str(src)], env=env, check=True, capture_output=True, timeout=600)
    (wheel,) = (tmp_path / "dist").glob("srota-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "srota/engine/columnar.py" in names
    assert not [n for n in names if n.startswith("srota/engine/_speedups") and not n.endswith(".c")]
