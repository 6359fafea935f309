"""``srota test``: app tests in YAML, next to the apps (as ``rpk connect test`` does for pipelines).

A test file (``NAME.test.yaml``) names an app and lists cases; each case sends events in and
compares what comes out.  Nothing connects to a broker: inputs go straight into the app's
streams (or through the ``@map`` of a stream's ``@source``), and outputs are read from streams
(or written through the ``@map`` of a stream's ``@sink``)::

    app: iot-demo.siddhi          # relative to this file
    cases:
      - name: a reading over 40 degrees is an overheat alert
        start: 1767225600000       # the first event's time (epoch ms; default 1_700_000_000_000)
        interval: 2 sec            # between events without 'at' (default 1 sec)
        input:                     # events per stream: a mapping by attribute name, or a list
          Readings:
            - {device: s1, room: r1, temperature: 41.5, humidity: 40.0, ts: 1767225600000}
            - at: 1767225660000    # an event's own time (epoch ms), or 'after: 30 sec'
              data: [s1, r1, 20.0, 40.0, 1767225660000]
        payloads:                  # raw payloads per stream, mapped by its @source's @map
          Readings: ['{"device": "s2", ...}']
        expect:                    # rows per stream, in order; a mapping may name a subset
          Alerts:
            - {device: s1, kind: overheat, value: 41.5}
        expect_payloads:           # payloads per stream, written by its @sink's @map (every
          Alerts: ['{"event": {...}}']   # @sink; or per sink: {0: [...], 1: [...]} / {kafka: [...]})
        unordered: false           # compare outputs as multisets
        tolerance: 1.0e-9          # relative tolerance for doubles and floats

The app runs under ``@app:playback``: time moves with the events' timestamps, so windows,
``within`` and output rates behave the same on every run.  A failing case prints a diff of the
expected and actual outputs; the exit code is 1 when any case fails, 2 when a test file is
invalid.  The same can be written with pytest and the embedding API (README, "Testing apps").
"""
from __future__ import annotations

import dataclasses
import difflib
import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml
from srota.engine.timeutil import parse_duration
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Annotation

DEFAULT_START = 1_700_000_000_000
_CASE_KEYS = {"name", "start", "interval", "input", "payloads", "expect", "expect_payloads", "unordered",
              "tolerance"}


class TestFileError(ValueError):
    """A test file that cannot be run (bad YAML, unknown keys, an app that does not load)."""

    __test__ = False  # not a pytest test class, whatever its name


@dataclass
class CaseResult:
    """The outcome of one case."""

    name: str
    passed: bool
    diff: list[str] = field(default_factory=list)


def find_test_files(paths: Iterable[Path]) -> list[Path]:
    """Test files named, and ``*.test.yaml`` / ``*.test.yml`` under directories named."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(sorted([*p.rglob("*.test.yaml"), *p.rglob("*.test.yml")]))
        else:
            out.append(p)
    return out


def run_test_files(paths: Sequence[Path], verbose: bool = False, out: Any = None) -> int:
    """Run every case of every file; print a report; return the exit code (0, 1 or 2)."""
    out = out or sys.stdout
    files = find_test_files(paths)
    if not files:
        print("srota test: no test files (*.test.yaml) found", file=out)
        return 2
    failed = passed = 0
    invalid = False
    for f in files:
        try:
            results = run_test_file(f)
        except TestFileError as exc:
            print(f"ERROR {f}: {exc}", file=out)
            invalid = True
            continue
        for r in results:
            if r.passed:
                passed += 1
                if verbose:
                    print(f"PASS  {f}: {r.name}", file=out)
            else:
                failed += 1
                print(f"FAIL  {f}: {r.name}", file=out)
                for line in r.diff:
                    print(f"      {line}", file=out)
    print(f"{passed} passed, {failed} failed" + (" (some files could not be run)" if invalid else ""), file=out)
    if invalid:
        return 2
    return 1 if failed else 0


def run_test_file(path: Path) -> list[CaseResult]:
    """Run the cases of one test file (raises :class:`TestFileError` when it cannot)."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TestFileError(exc.strerror or str(exc)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise TestFileError(f"{where}not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    if not isinstance(doc, dict) or "app" not in doc or not isinstance(doc.get("cases"), list):
        raise TestFileError("expected a mapping with 'app' (the .siddhi file) and 'cases' (a list)")
    unknown = set(doc) - {"app", "cases"}
    if unknown:
        raise TestFileError(f"unknown key(s) {', '.join(sorted(unknown))} (expected app, cases)")
    app_path = path.parent / str(doc["app"])
    try:
        text = app_path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TestFileError(f"app {app_path}: {exc.strerror or exc}") from None
    return [run_case(text, case, i, app_path) for i, case in enumerate(doc["cases"])]


# ---------------------------------------------------------------------------- one case
def run_case(app_text: str, case: Any, index: int = 0, app_path: Path | None = None) -> CaseResult:
    """Run one case (a mapping as in the module doc) against an app text."""
    from srota.engine import SiddhiManager
    from srota.grammar.parser import parse
    from srota.service.bindings import import_extensions

    if not isinstance(case, dict):
        raise TestFileError(f"cases[{index}]: expected a mapping")
    name = str(case.get("name", f"case {index + 1}"))
    unknown = set(case) - _CASE_KEYS
    if unknown:
        raise TestFileError(f"case '{name}': unknown key(s) {', '.join(sorted(unknown))} "
                            f"(expected {', '.join(sorted(_CASE_KEYS))})")
    import_extensions()
    try:
        model = parse(app_text)
        if not any(a.name.lower() == "app:playback" for a in model.annotations):
            model = dataclasses.replace(model, annotations=(*model.annotations,
                                                            Annotation("app:playback", (), (), None)))
        runtime = SiddhiManager().create_siddhi_app_runtime(model)
    except SiddhiAppCreationError as exc:
        where = f"{app_path}:{exc.line}:{exc.column}" if exc.line is not None else str(app_path or "app")
        raise TestFileError(f"the app does not load: {where}: {exc.message}") from None
    try:
        return _run(runtime, case, name)
    finally:
        runtime.shutdown()


def _run(runtime: Any, case: dict[str, Any], name: str) -> CaseResult:
    definitions = runtime.stream_definitions
    expect = _mapping(case.get("expect"), f"case '{name}': expect")
    expect_payloads = _mapping(case.get("expect_payloads"), f"case '{name}': expect_payloads")
    # Output rows per stream, as the chunks the app emitted (a sink maps one chunk at a time).
    outputs: dict[str, list[list[tuple[Any, ...]]]] = {}
    for stream in {*expect, *expect_payloads}:
        if stream not in definitions:
            raise TestFileError(f"case '{name}': no stream '{stream}' to expect outputs of "
                                f"(streams: {', '.join(sorted(s for s in definitions if not s.startswith('!')))})")
        chunks = outputs.setdefault(stream, [])
        runtime.add_callback(stream, lambda events, chunks=chunks: chunks.append([tuple(e.data) for e in events]))
    events = _inputs(runtime, case, name)
    runtime.start()
    for _, stream, data in sorted(events, key=lambda e: e[0]):  # stable: equal times keep file order
        runtime.get_input_handler(stream).send(list(data), timestamp=_)
    drain = getattr(runtime, "drain", None)
    if drain is not None:
        drain()
    tolerance = float(case.get("tolerance", 1e-9))
    unordered = bool(case.get("unordered", False))
    diff: list[str] = []
    for stream, expected in expect.items():
        attrs = [a.name for a in definitions[stream].attributes]
        want = [_expected_row(r, attrs, f"case '{name}': expect.{stream}") for r in _list(expected, stream)]
        rows = [r for chunk in outputs[stream] for r in chunk]
        diff.extend(_compare(stream, attrs, want, rows, tolerance, unordered))
    for stream, expected in expect_payloads.items():
        sinks = _sink_annotations(definitions[stream], name)
        if isinstance(expected, dict):  # per sink: its position ("0", "1", ...) or its type
            wanted = {_sink_index(sinks, str(key), stream, name): value for key, value in expected.items()}
        else:  # a list: every sink of the stream writes these payloads
            wanted = {i: expected for i in range(len(sinks))}
        for i, value in sorted(wanted.items()):
            got = _sink_payloads(definitions[stream], sinks[i], outputs[stream], name)
            label = stream if len(sinks) == 1 else f"{stream} @sink {i} ({sinks[i].get('type')})"
            diff.extend(_compare_payloads(label, [_payload_text(p) for p in _list(value, stream)], got, unordered))
    return CaseResult(name, not diff, diff)


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TestFileError(f"{where}: expected a mapping of stream name to a list")
    return {str(k): v for k, v in value.items()}


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise TestFileError(f"{where}: expected a list")
    return value


def _inputs(runtime: Any, case: dict[str, Any], name: str) -> list[tuple[int, str, tuple[Any, ...]]]:
    """``(timestamp, stream, row)`` for every input event and mapped payload, in file order."""
    definitions = runtime.stream_definitions
    start = int(case.get("start", DEFAULT_START))
    interval = _duration(case.get("interval", 1000), f"case '{name}': interval")
    now = start - interval
    events: list[tuple[int, str, tuple[Any, ...]]] = []

    def stamp(item: Any, where: str) -> tuple[int, Any]:
        nonlocal now
        if isinstance(item, dict) and ("at" in item or "after" in item or "data" in item):
            extra = set(item) - {"at", "after", "data"}
            if extra:
                raise TestFileError(f"{where}: an event with 'at'/'after' has only 'data' besides "
                                    f"(found {', '.join(sorted(extra))})")
            if "at" in item:
                now = int(item["at"])
            else:
                now += _duration(item.get("after", interval), where)
            return now, item.get("data")
        now += interval
        return now, item

    for stream, items in _mapping(case.get("input"), f"case '{name}': input").items():
        definition = definitions.get(stream)
        if definition is None:
            raise TestFileError(f"case '{name}': input: no stream '{stream}'")
        attrs = [a.name for a in definition.attributes]
        for i, item in enumerate(_list(items, stream)):
            where = f"case '{name}': input.{stream}[{i}]"
            ts, data = stamp(item, where)
            events.append((ts, stream, _input_row(data, attrs, where)))
    for stream, items in _mapping(case.get("payloads"), f"case '{name}': payloads").items():
        definition = definitions.get(stream)
        if definition is None:
            raise TestFileError(f"case '{name}': payloads: no stream '{stream}'")
        mapper = _source_mapper(definition, name)
        for i, item in enumerate(_list(items, stream)):
            where = f"case '{name}': payloads.{stream}[{i}]"
            ts, payload = stamp(item, where)
            try:
                rows = mapper.map(_payload_text(payload))
            except Exception as exc:  # a MappingError: the case says what the mapper rejected
                raise TestFileError(f"{where}: the @source mapper rejects it: {exc}") from None
            events.extend((ts, stream, tuple(r)) for r in rows)
    return events


def _duration(value: Any, where: str) -> int:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    try:
        return parse_duration(str(value))
    except ValueError as exc:
        raise TestFileError(f"{where}: {exc}") from None


def _input_row(data: Any, attrs: list[str], where: str) -> tuple[Any, ...]:
    if isinstance(data, dict):
        unknown = set(data) - set(attrs)
        if unknown:
            raise TestFileError(f"{where}: no attribute(s) {', '.join(sorted(unknown))} "
                                f"(attributes: {', '.join(attrs)})")
        return tuple(data.get(a) for a in attrs)
    if isinstance(data, list) and len(data) == len(attrs):
        return tuple(data)
    raise TestFileError(f"{where}: expected a mapping by attribute name or a list of {len(attrs)} values "
                        f"({', '.join(attrs)})")


def _expected_row(data: Any, attrs: list[str], where: str) -> dict[str, Any]:
    """An expected row as {attribute: value} (a mapping may name only some attributes)."""
    row = _input_row(data, attrs, where)
    if isinstance(data, dict):
        return {a: data[a] for a in attrs if a in data}
    return dict(zip(attrs, row, strict=True))


def _payload_text(payload: Any) -> Any:
    """A payload as given: text as it is, a YAML mapping or list as JSON text."""
    if isinstance(payload, (dict, list)):
        return orjson.dumps(payload).decode()
    return payload


def _source_mapper(definition: Any, name: str) -> Any:
    from srota import mappers

    sources = [a for a in definition.annotations if a.name.lower() == "source"]
    maps = sources[0].nested("map") if sources else []
    try:
        return mappers.create_source_mapper(definition.attributes, maps[0] if maps else None, definition.id)
    except SiddhiAppCreationError as exc:
        raise TestFileError(f"case '{name}': stream {definition.id}: {exc.message}") from None


def _sink_annotations(definition: Any, name: str) -> list[Annotation]:
    sinks = [a for a in definition.annotations if a.name.lower() == "sink"]
    if not sinks:
        raise TestFileError(f"case '{name}': expect_payloads: stream {definition.id} has no @sink")
    return sinks


def _sink_index(sinks: list[Annotation], key: str, stream: str, name: str) -> int:
    """A sink named by its position among the stream's ``@sink``s, or by its type when unique."""
    if key.isdigit():
        if int(key) >= len(sinks):
            raise TestFileError(f"case '{name}': expect_payloads.{stream}: no @sink {key} "
                                f"(the stream has {len(sinks)})")
        return int(key)
    found = [i for i, a in enumerate(sinks) if (a.get("type") or "").lower() == key.lower()]
    if len(found) != 1:
        raise TestFileError(f"case '{name}': expect_payloads.{stream}: '{key}' names "
                            f"{'no' if not found else 'more than one'} @sink; use its position (0, 1, ...)")
    return found[0]


def _sink_payloads(definition: Any, sink: Annotation, chunks: list[list[tuple[Any, ...]]], name: str) -> list[str]:
    from srota import mappers

    maps = sink.nested("map")
    try:
        mapper = mappers.create_sink_mapper(definition.attributes, maps[0] if maps else None, definition.id)
    except SiddhiAppCreationError as exc:
        raise TestFileError(f"case '{name}': stream {definition.id}: {exc.message}") from None
    out = []
    for payload in (p for rows in chunks if rows for p in mapper.map(rows)):
        if isinstance(payload, (bytes, bytearray, memoryview)):
            payload = bytes(payload).decode("utf-8", "replace")
        out.append(payload if isinstance(payload, str) else repr(payload))
    return out


# ---------------------------------------------------------------------------- comparing
def _same(want: Any, got: Any, tolerance: float) -> bool:
    if isinstance(want, bool) or isinstance(got, bool):
        return want is got
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        if isinstance(want, float) or isinstance(got, float):
            return math.isclose(want, got, rel_tol=tolerance, abs_tol=tolerance)
        return want == got
    return bool(want == got)


def _matches(want: dict[str, Any], got: tuple[Any, ...], attrs: list[str], tolerance: float) -> bool:
    index = {a: i for i, a in enumerate(attrs)}
    return all(_same(v, got[index[k]], tolerance) for k, v in want.items())


def _show(row: dict[str, Any]) -> str:
    from srota.connectors._log import _value

    return " ".join(f"{k}={_value(v)}" for k, v in row.items())


def _compare(stream: str, attrs: list[str], want: list[dict[str, Any]], got: list[tuple[Any, ...]],
             tolerance: float, unordered: bool) -> list[str]:
    if unordered:
        left = list(got)
        missing = []
        for w in want:
            hit = next((i for i, g in enumerate(left) if _matches(w, g, attrs, tolerance)), None)
            if hit is None:
                missing.append(w)
            else:
                left.pop(hit)
        if not missing and not left:
            return []
        return [f"{stream} (unordered): expected but not emitted:", *[f"- {_show(w)}" for w in missing],
                "emitted but not expected:", *[f"+ {_show(dict(zip(attrs, g, strict=True)))}" for g in left]]
    if len(want) == len(got) and all(_matches(w, g, attrs, tolerance) for w, g in zip(want, got, strict=True)):
        return []
    # Show the actual rows with the attributes the expectation names, so the diff lines up.
    shown = []
    for i, g in enumerate(got):
        keys = list(want[i]) if i < len(want) else attrs
        full = dict(zip(attrs, g, strict=True))
        shown.append(_show({k: full[k] for k in keys}))
    return [f"{stream}: expected {len(want)} event(s), got {len(got)}",
            *(line.rstrip("\n") for line in difflib.unified_diff(
                [_show(w) for w in want], shown, "expected", "actual", lineterm="", n=2))]


def _normal(payload: str) -> Any:
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError:
        return payload


def _compare_payloads(stream: str, want: list[str], got: list[str], unordered: bool) -> list[str]:
    w, g = [_normal(p) for p in want], [_normal(p) for p in got]
    if unordered:
        key = lambda v: orjson.dumps(v, option=orjson.OPT_SORT_KEYS)  # noqa: E731
        if sorted(map(key, w)) == sorted(map(key, g)):
            return []
    elif w == g:
        return []
    return [f"{stream} payloads: expected {len(want)}, got {len(got)}",
            *difflib.unified_diff([str(p) for p in want], [str(p) for p in got], "expected", "actual",
                                  lineterm="", n=2)]
