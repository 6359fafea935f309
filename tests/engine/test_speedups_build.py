"""Where a C compiler is, the install built the columnar path's compiled loops (engine/_speedups.c).

The extension is optional at install (a machine without a compiler gets the pure-Python loops),
so a source that fails to compile would otherwise go unnoticed: the build would only warn, and
any module left from an earlier build would be refused as stale (``columnar._API``).
"""
from __future__ import annotations

import os
import shutil

import pytest
from srota.engine import columnar


def test_the_compiled_module_is_built_and_current_where_a_compiler_is() -> None:
    if shutil.which(os.environ.get("CC", "cc")) is None:
        pytest.skip("no C compiler here: the pure-Python loops only, by design")
    if os.environ.get("SROTA_PURE_PYTHON"):
        pytest.skip("SROTA_PURE_PYTHON is set")
    assert columnar.available(), "engine/_speedups.c did not build (see `pip install -v -e .`) or is stale"
