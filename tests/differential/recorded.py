"""Divergences found against real Siddhi, kept as cases with Siddhi's recorded answer.

Each file in ``recorded/`` is ``{"note": ..., "case": {...}, "siddhi": {...}}``: the case as the
runner takes it and the answer Siddhi 5.1.33 gave. ``test_recorded.py`` runs every one on Srota
and compares, so each divergence found (and fixed) stays fixed where no JVM is.

To record one (with the reference engine here)::

    from tests.differential.recorded import record
    record("join-lengthbatch-outer", case, note="a lengthBatch side joined ...")
    record("ext-str-unhex-pairs", case, note="...", extra_classpath=jars)  # an extension's case
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).resolve().parent / "recorded"


def record(name: str, case: dict[str, Any], note: str, answer: dict[str, Any] | None = None,
           extra_classpath: str = "") -> Path:
    """Run ``case`` on real Siddhi (unless its ``answer`` is given) and save both as ``recorded/<name>.json``.

    ``extra_classpath``: the extension jars a case of an extension needs (as ``--classpath`` of
    ``python -m tests.differential``)."""
    if not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", name):
        raise ValueError(f"a recorded case's name is lower-case letters, digits, '-', '_' and '.': {name!r}")
    if answer is None:
        from tests.differential.reference import ReferenceSiddhi

        ref = ReferenceSiddhi(extra_classpath=extra_classpath)
        try:
            answer = ref.run(dict(case, id=name))
        finally:
            ref.close()
    if answer.get("error") in ("timeout", "runner died"):
        raise RuntimeError(f"Siddhi gave no answer for {name}: {answer['error']}")
    path = RECORDED / f"{name}.json"
    path.write_text(json.dumps({"note": note, "case": dict(case, id=name), "siddhi": answer}, indent=1) + "\n")
    return path


def recorded_cases() -> list[Path]:
    """Every recorded case, by name."""
    return sorted(RECORDED.glob("*.json"))
