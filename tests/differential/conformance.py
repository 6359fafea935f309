"""Judge the transcribed conformance cases with the real engine.

``python -m tests.differential.conformance [-f feature] [-v]`` runs every deterministic case of
../shared/conformance (not ``wallclock``, no ``$now`` values, no test-only extension, not an
``ext_*`` namespace, whose jars are not here) on Siddhi 5.1.33 and judges Siddhi's output with the
suite's own ``judge``. A case Siddhi fails is one where the transcription and the engine disagree;
the engine's output is the reference.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from typing import Any

from tests.differential.reference import ROOT, ReferenceSiddhi

CONFORMANCE = ROOT.parent / "shared" / "conformance"


def _suite() -> Any:
    spec = importlib.util.spec_from_file_location("conformance_run", CONFORMANCE / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def deterministic(case: dict[str, Any]) -> bool:
    """A case whose output does not depend on the wall clock, runnable on the bare engine."""
    text = json.dumps(case.get("input", []))
    return (case.get("timing") != "wallclock" and "$now" not in text and not case.get("requires_extension")
            and not case.get("feature", "").startswith("ext."))


def to_runner_case(case: dict[str, Any]) -> dict[str, Any]:
    """The conformance case as the runner takes it (a shared ``chunk`` value is one send)."""
    steps: list[dict[str, Any]] = []
    previous_chunk = None
    for item in case.get("input", []):
        event = [item.get("ts"), item["data"]]
        chunk = item.get("chunk")
        if chunk is not None and chunk == previous_chunk and steps and steps[-1]["stream"] == item["stream"]:
            steps[-1]["events"].append(event)
        else:
            steps.append({"stream": item["stream"], "events": [event]})
        previous_chunk = chunk
    expect = case.get("expect") or {}
    runner_case: dict[str, Any] = {"id": case["id"], "app": case["app"], "steps": steps, "streams": [], "queries": []}
    if expect.get("name"):
        runner_case["queries" if expect.get("callback") == "query" else "streams"].append(expect["name"])
    return runner_case


def _unmarked(value: Any) -> Any:
    """A value of the runner's answer as the suite's cases write it (a set as its members)."""
    if isinstance(value, dict):
        return _unmarked(value["$set"]) if value.keys() == {"$set"} else {k: _unmarked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def got_from(answer: dict[str, Any]) -> dict[str, Any]:
    """Siddhi's answer in the shape the suite's ``judge`` reads."""
    answer = _unmarked(answer)
    got: dict[str, Any] = {"current": [], "expired": [], "batches": [], "created": True, "error": None}
    error = answer.get("error")
    if error:
        got["created"] = not any(n in error for n in ("Parser", "Creation", "Validation", "Duplicate",
                                                       "NotExist"))
        got["error"] = error
    for out in answer.get("outputs", []):
        if "events" in out:
            for _, data, expired in out["events"]:
                got["expired" if expired else "current"].append(data)
            if out["events"]:
                got["batches"].append(len(out["events"]))
        else:
            got["current"].extend(data for _, data in out["in"])
            got["expired"].extend(data for _, data in out["out"])
            if out["in"]:
                got["batches"].append(len(out["in"]))
    return got


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-f", "--feature", help="only features starting with this")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each disagreement")
    args = parser.parse_args(argv)
    suite = _suite()
    cases = [c for c in suite.load_cases([str(CONFORMANCE / "cases")], args.feature, None, False) if deterministic(c)]
    ref = ReferenceSiddhi()
    disagreements = []
    try:
        for case in cases:
            answer = ref.run(to_runner_case(case))
            ok, why = suite.judge(case, got_from(answer))
            if not ok:
                disagreements.append((case["id"], why))
                if args.verbose:
                    print(f"DISAGREE {case['id']}: {why[:800]}")
    finally:
        ref.close()
    print(f"Siddhi 5.1.33 agrees with {len(cases) - len(disagreements)} of {len(cases)} deterministic "
          f"conformance cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
