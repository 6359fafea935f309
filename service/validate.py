"""``srota validate``: every problem of apps and configs, as a linter reports them.

Each problem is ``file:line:col: message`` followed by the source line and a caret under the
column.  What is checked, without connecting to any broker:

* configs: every setting (all problems of a file, not only the first), ``${ENV}`` values,
  whether the persistence database's directory is writable;
* apps: syntax, then the meaning of every query (see below), ``${ENV}`` values, and every
  ``@source``/``@sink``: connector type, ``ref=`` against the configs given with the app,
  options (an unknown one is reported at the option, with the closest valid name), mappers,
  and whether the file a ``file`` source reads exists.

Where it stops: the parser stops at the first syntax error, so the statement that holds it is
blanked out and the rest parsed again, to report the syntax errors of later statements; an app
with syntax errors is not checked further.  An error in a definition ends the check of the app
too (later queries depend on it).  An error in a query is
reported and that query left out, and the check goes on with the next one; an error caused
only by a left-out query (its output stream then is not defined) is not reported again.
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.errors import did_you_mean as _hint
from srota.grammar.model import Annotation, Partition, Pos, Query, SiddhiApp
from srota.service.config import _ENV, ConfigError, ServiceConfig, did_you_mean, load_config

APP_SUFFIXES = (".siddhi", ".siddhiql")
CONFIG_SUFFIXES = (".yaml", ".yml")
_MAX_ROUNDS = 100


@dataclass(frozen=True)
class Problem:
    """One problem of one file; ``line``/``column`` are 1-based (None when unknown)."""

    file: str
    message: str
    line: int | None = None
    column: int | None = None
    source_line: str | None = None

    def render(self) -> str:
        """``file:line:col: message`` and, when known, the source line with a caret."""
        where = self.file
        if self.line is not None:
            where += f":{self.line}:{self.column or 1}"
        text = f"{where}: {self.message}"
        if self.source_line is not None and self.line is not None:
            col = max(1, self.column or 1)
            text += f"\n    {self.source_line.rstrip()}\n    {' ' * (col - 1)}^"
        return text


def _problem(file: Path | str, message: str, pos: Pos | None, lines: Sequence[str]) -> Problem:
    line = pos.line if pos else None
    source = lines[line - 1] if line is not None and 0 < line <= len(lines) else None
    return Problem(str(file), message, line, pos.column if pos else None, source)


def _from_exc(file: Path | str, exc: SiddhiAppCreationError, lines: Sequence[str]) -> Problem:
    pos = Pos(exc.line, exc.column or 1) if exc.line is not None else None
    return _problem(file, exc.message, pos, lines)


# ---------------------------------------------------------------------------- files
def validate_paths(names: Iterable[str | Path], env: dict[str, str] | None = None) -> tuple[list[Problem], int]:
    """Check configs and apps; apps are checked against the configs given with them.

    Returns the problems and the number of files checked (a config's apps included).
    """
    configs: list[tuple[Path, ServiceConfig]] = []
    apps: list[Path] = []
    problems: list[Problem] = []
    expanded: list[Path] = []
    for name in names:
        path = Path(name)
        # A directory: its apps and app tests (configs are named one by one, since a directory
        # may hold several for different set-ups).
        expanded.extend(sorted([*path.glob("*.siddhi"), *path.glob("*.test.yaml")]) if path.is_dir() else [path])
    for path in expanded:
        suffix = path.suffix.lower()
        if path.name.endswith((".test.yaml", ".test.yml")):
            app, problem = _test_file_app(path)
            if problem is not None:
                problems.append(problem)
            elif app is not None:
                apps.append(app)
            continue
        if suffix in CONFIG_SUFFIXES:
            try:
                configs.append((path, load_config(path, env=env)))
            except ConfigError as exc:
                problems.extend(Problem(str(path), str(e)) for e in exc.errors)
        elif suffix in APP_SUFFIXES:
            apps.append(path)
        else:
            problems.append(Problem(str(path), "not a config (.yaml, .yml) or an app (.siddhi): "
                                               "srota validate checks only those"))
    seen: set[Path] = set()
    for path, config in configs:
        problems.extend(check_config(path, config))
        for app in config.app_files():
            if app.resolve() not in seen:
                seen.add(app.resolve())
                if not app.exists():
                    problems.append(Problem(str(app), f"no such file (listed under apps in {path})"))
                    continue
                problems.extend(validate_app(app, config, env))
    # Apps named on the command line use the refs of the configs named with them.
    merged = _merge(c for _, c in configs)
    for app in apps:
        if app.resolve() not in seen:
            seen.add(app.resolve())
            problems.extend(validate_app(app, merged, env))
    return problems, len({str(p.file) for p in problems} | {str(p) for p, _ in configs} | {str(s) for s in seen})


def _test_file_app(path: Path) -> tuple[Path | None, Problem | None]:
    """A ``srota test`` file: its shape, and the app it tests (the cases run with ``srota test``)."""
    import yaml

    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        return None, Problem(str(path), f"cannot read the test file: {exc}")
    if not isinstance(doc, dict) or "app" not in doc or not isinstance(doc.get("cases"), list):
        return None, Problem(str(path), "a test file has 'app' (the .siddhi file) and 'cases' (a list)")
    return path.parent / str(doc["app"]), None


def _merge(configs: Iterable[ServiceConfig]) -> ServiceConfig:
    configs = list(configs)
    if not configs:
        return ServiceConfig()
    refs: dict[str, dict[str, str]] = {}
    for c in configs:
        refs.update(c.refs)
    return dataclasses.replace(configs[0], refs=refs)


def check_config(path: Path, config: ServiceConfig) -> list[Problem]:
    """What a config says that can be checked here: its apps exist, the database can be written."""
    problems: list[Problem] = []
    for entry in config.apps:  # (a listed file that does not exist is reported as that file)
        full = entry if entry.is_absolute() else config.base_dir / entry
        if full.is_dir() and not any(full.glob("*.siddhi")):
            problems.append(Problem(str(path), f"apps: directory {full} holds no .siddhi app"))
    if config.persistence.enabled:
        db = Path(config.persistence.database)
        directory = db.parent
        while not directory.exists() and directory != directory.parent:
            directory = directory.parent  # the service creates missing directories
        if not directory.is_dir():
            problems.append(Problem(str(path), f"persistence.database: {directory} is not a directory "
                                               f"(for {db})"))
        elif not os.access(directory, os.W_OK):
            problems.append(Problem(str(path), f"persistence.database: cannot write to {directory} "
                                               f"(for {db})"))
    return problems


# ---------------------------------------------------------------------------- apps
def validate_app(path: Path, config: ServiceConfig | None = None,
                 env: dict[str, str] | None = None) -> list[Problem]:
    """Every problem of one app file."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [Problem(str(path), "no such file")]
    except UnicodeDecodeError:
        return [Problem(str(path), "not a text file")]
    except OSError as exc:
        return [Problem(str(path), exc.strerror or str(exc))]
    return validate_text(raw, path, config or ServiceConfig(), env)


def _substitute(text: str, file: str, lines: Sequence[str], env: dict[str, str] | None,
                problems: list[Problem]) -> str:
    """``${ENV}`` values replaced; each unset one is a problem (and is left as it is)."""
    environ = os.environ if env is None else env

    def repl(m: Any) -> str:
        if m.group("file") is not None:
            secret = Path(m.group("file").strip())
            try:
                return secret.read_text(encoding="utf-8").rstrip("\r\n")
            except OSError as exc:
                message = f"cannot read secret file {secret}: {exc.strerror}"
        else:
            name, default = m.group("name"), m.group("default")
            value = environ.get(name)
            if value is not None and not (value == "" and default is not None):
                return value
            if default is not None:
                return default
            message = f"environment variable {name} is not set (use ${{{name}:-default}})"
        line = text.count("\n", 0, m.start()) + 1
        column = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        problems.append(_problem(file, message, Pos(line, column), lines))
        # Go on checking: inside quotes the text stays; elsewhere (a number in an expression)
        # a 0 keeps the app parseable.
        before = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
        return m.group(0) if before.count("'") % 2 or before.count('"') % 2 else "0"

    return _ENV.sub(repl, text)


def validate_text(raw: str, path: Path | str, config: ServiceConfig, env: dict[str, str] | None = None,
                  on_planned: Callable[[Any], None] | None = None) -> list[Problem]:
    """Every problem of one app text (``path`` names it in the report).

    ``on_planned`` sees the planned runtime (without the queries that failed) before it is
    shut down: the playground reads the app's streams from it.
    """
    from srota.grammar.parser import parse
    from srota.service.bindings import import_extensions

    import_extensions()
    file = str(path)
    lines = raw.splitlines()
    problems: list[Problem] = []
    text = _substitute(raw, file, lines, env, problems)
    try:
        model = parse(text)
    except SiddhiAppCreationError as exc:
        syntax = [exc, *_more_syntax_errors(text, exc)]
        return sorted([*problems, *(_from_exc(file, e, lines) for e in syntax)],
                      key=lambda p: (p.line or 0, p.column or 0))
    runtime, found = _plan(model, config, file, lines)
    problems.extend(found)
    if runtime is None:
        return problems
    try:
        if on_planned is not None:
            on_planned(runtime)
        binding = _check_bindings(runtime, config, file, lines)
        problems.extend(binding)
        if not found and not binding:
            # The host's own wiring, for what is checked across annotations (transactions).
            _check_host(text, config, file, lines, problems)
    finally:
        runtime.shutdown()
    return sorted(problems, key=lambda p: (p.line or 0, p.column or 0))


def _statement_ends(text: str) -> list[int]:
    """Offsets of the ``;`` that end statements (not in strings, comments or script bodies)."""
    ends: list[int] = []
    i, n, depth = 0, len(text), 0
    while i < n:
        c = text[i]
        if c in "'\"":
            close = text.find(c, i + 1)
            i = n if close < 0 else close + 1
            continue
        if text.startswith("--", i):
            close = text.find("\n", i)
            i = n if close < 0 else close + 1
            continue
        if text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        elif c == ";" and depth == 0:
            ends.append(i)
        i += 1
    return ends


def _more_syntax_errors(text: str, first: SiddhiAppCreationError) -> list[SiddhiAppCreationError]:
    """Syntax errors after the first one: the parser stops at the first, so each failing
    statement (from the ``;`` before the error to the ``;`` after it) is blanked out, keeping
    line and column numbers, and the rest parsed again."""
    from srota.grammar.parser import parse

    found: list[SiddhiAppCreationError] = []
    exc = first
    for _ in range(_MAX_ROUNDS):
        if exc.line is None:
            break
        starts = [0]
        for line in text.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))
        if exc.line - 1 >= len(starts):
            break
        offset = min(len(text), starts[exc.line - 1] + max(0, (exc.column or 1) - 1))
        ends = _statement_ends(text)
        begin = max((e + 1 for e in ends if e < offset), default=0)
        end = min((e + 1 for e in ends if e >= offset), default=len(text))
        blanked = text[:begin] + "".join(ch if ch == "\n" else " " for ch in text[begin:end]) + text[end:]
        if blanked == text:
            break
        text = blanked
        try:
            parse(text)
            break
        except SiddhiAppCreationError as nxt:
            if (nxt.line, nxt.column) == (exc.line, exc.column):
                break
            found.append(nxt)
            exc = nxt
    return found


def _plan(model: SiddhiApp, config: ServiceConfig, file: str,
          lines: Sequence[str]) -> tuple[Any, list[Problem]]:
    """Build the runtime, leaving out each query that fails (and reporting why)."""
    from srota.engine import Limits
    from srota.service.apphost import manager_for

    manager = manager_for(config, Limits(max_window_events=config.limits.max_window_events,
                                         max_pending_matches=config.limits.max_pending_matches),
                          config.shard_id, offline=True)
    problems: list[Problem] = []
    dropped_targets: set[str] = set()
    for _ in range(_MAX_ROUNDS):
        try:
            return manager.create_siddhi_app_runtime(model), problems
        except SiddhiAppCreationError as exc:
            cascade = any(f"'{t}'" in exc.message for t in dropped_targets)
            if not cascade:
                problems.append(_from_exc(file, exc, lines))
            smaller, target = _without_failing_query(model, exc)
            if smaller is None:
                return None, problems
            if target:
                dropped_targets.add(target)
            model = smaller
    return None, problems


def _before(pos: Pos | None, line: int, column: int) -> bool:
    return pos is not None and (pos.line, pos.column) <= (line, column)


def _without_failing_query(model: SiddhiApp, exc: SiddhiAppCreationError) -> tuple[SiddhiApp | None, str | None]:
    """The app without the query the error is in (None when it is not in a query)."""
    if exc.line is None:
        return None, None
    line, column = exc.line, exc.column or 1
    elements = list(model.execution_elements)
    # The error belongs to the last element that starts before it (elements are in text order),
    # unless a definition starts between that element and the error.
    candidates = [i for i, el in enumerate(elements) if _before(el.pos, line, column)]
    if not candidates:
        return None, None
    i = candidates[-1]
    start = elements[i].pos
    for d in model.definitions:
        if d.pos is not None and start is not None and (start.line, start.column) < (d.pos.line, d.pos.column) \
                and _before(d.pos, line, column):
            return None, None
    element = elements[i]
    if isinstance(element, Partition):
        inner = [j for j, q in enumerate(element.queries) if _before(q.pos, line, column)]
        if inner and len(element.queries) > 1:
            j = inner[-1]
            target = _target(element.queries[j])
            queries = element.queries[:j] + element.queries[j + 1:]
            elements[i] = dataclasses.replace(element, queries=queries)
            return dataclasses.replace(model, execution_elements=tuple(elements)), target
        target = None
    else:
        target = _target(element)
    del elements[i]
    return dataclasses.replace(model, execution_elements=tuple(elements)), target


def _target(query: Query) -> str | None:
    target = getattr(query.output, "target", None)
    return target.lstrip("#") if isinstance(target, str) else None


# ---------------------------------------------------------------------------- sources and sinks
def _check_bindings(runtime: Any, config: ServiceConfig, file: str, lines: Sequence[str]) -> list[Problem]:
    problems: list[Problem] = []
    for definition in runtime.stream_definitions.values():
        if definition.is_fault:
            continue
        for ann in definition.annotations:
            kind = ann.name.lower()
            if kind in ("source", "sink"):
                problems.extend(_check_annotation(runtime, definition, ann, kind, config, file, lines))
    return problems


def _check_annotation(runtime: Any, definition: Any, ann: Annotation, kind: str, config: ServiceConfig,
                      file: str, lines: Sequence[str]) -> list[Problem]:
    from srota.engine.registry import Kind, registry
    from srota.service.bindings import _HOST_OPTIONS, _connector, _options

    from srota import mappers

    problems: list[Problem] = []
    try:
        type_name, options = _options(ann, config.refs)
    except SiddhiAppCreationError as exc:
        problem = _from_exc(file, exc, lines)
        if not config.refs and "no such connector ref" in exc.message:
            problem = dataclasses.replace(problem, message=problem.message + "; name the config that "
                                          "defines it with the app: srota validate APP.siddhi CONFIG.yaml")
        return [problem]
    reg_kind = Kind.SOURCE if kind == "source" else Kind.SINK
    ext = registry.get(reg_kind, "", type_name)
    if ext is None:
        known = [e.qualified_name for e in registry.all(reg_kind)]
        pos = _element_pos(ann, "type") or ann.pos
        return [_problem(file, f"@{ann.name}: no {kind} called '{type_name}'{did_you_mean(type_name, known)} "
                               f"(known: {', '.join(known)})", pos, lines)]
    allowed = {p.name.lower(): p.name for p in ext.params}
    own = {el.key for el in ann.elements if el.key is not None}
    for key in list(options):
        if key in _HOST_OPTIONS or key.lower() in allowed:
            continue
        hint = _hint(key, allowed.values())
        if key in own:
            message = f"@{ann.name}(type='{type_name}'): unknown option '{key}'{hint}"
            problems.append(_problem(file, message, _element_pos(ann, key) or ann.pos, lines))
        else:
            message = (f"@{ann.name}(ref='{options.get('ref')}'): the config's ref has an unknown "
                       f"{type_name} option '{key}'{hint}")
            problems.append(_problem(file, message, _element_pos(ann, "ref") or ann.pos, lines))
        del options[key]
    connector = None
    try:
        connector = _connector(reg_kind, type_name, options, f"{runtime.name}/{definition.id}/{kind}", ann)
    except SiddhiAppCreationError as exc:
        problems.append(_from_exc(file, exc, lines))
    maps = ann.nested("map")
    map_problems = _check_map_options(maps[0] if maps else None, kind, file, lines)
    problems.extend(map_problems)
    try:
        if map_problems:
            pass  # the mapper would only report the first unknown option again, at the annotation
        elif kind == "source":
            mapper = mappers.create_source_mapper(definition.attributes, maps[0] if maps else None, definition.id)
            if connector is not None:  # (a transport may refuse a map type: the file source in a text mode)
                connector.check_map_type(mapper.type_name)
        else:
            mappers.create_sink_mapper(definition.attributes, maps[0] if maps else None, definition.id)
    except SiddhiAppCreationError as exc:
        problems.append(_from_exc(file, exc, lines))
    # (a tailed file, or one read on a schedule, may appear later: the source waits for it)
    waits = getattr(connector, "tailing", False) or getattr(connector, "cron", None) is not None
    if kind == "source" and type_name == "file" and options.get("file.uri") and connector is not None and not waits:
        from srota.connectors._file import uri_to_path

        source_file = uri_to_path(options["file.uri"])
        if not source_file.exists():
            where = "" if "file.uri" in own else f" (from the config's ref '{options.get('ref')}')"
            problems.append(_problem(file, f"@source(type='file'): {source_file} does not exist{where}",
                                     _element_pos(ann, "file.uri") or _element_pos(ann, "ref") or ann.pos,
                                     lines))
    return problems


def _check_map_options(ann: Annotation | None, kind: str, file: str, lines: Sequence[str]) -> list[Problem]:
    """Each unknown option of a ``@map``, at the option, with the closest valid name."""
    from srota.engine.registry import Kind, registry

    if ann is None:
        return []
    map_type = ann.get("type") or "passThrough"
    namespace, _, name = map_type.rpartition(":")
    ext = registry.get(Kind.SOURCE_MAPPER if kind == "source" else Kind.SINK_MAPPER, namespace, name)
    if ext is None or not ext.params:
        return []  # an unknown mapper type is reported when the mapper is created
    allowed = {p.name.lower(): p.name for p in ext.params}
    return [_problem(file, f"@map(type='{map_type}'): unknown option '{el.key}'{_hint(el.key, allowed.values())}",
                     el.pos or ann.pos, lines)
            for el in ann.elements
            if el.key is not None and el.key.lower() != "type" and el.key.lower() not in allowed]


def _element_pos(ann: Annotation, key: str) -> Pos | None:
    for el in ann.elements:
        if el.key is not None and el.key.lower() == key.lower():
            return el.pos
    return None


def _check_host(text: str, config: ServiceConfig, file: str, lines: Sequence[str],
                problems: list[Problem]) -> None:
    from srota.service.apphost import AppHost
    from srota.service.metrics import Metrics

    host_class = AppHost
    if config.scaleout.enabled:  # several workers: also check that the state can be split by partition
        from srota.service.scaleout import PartitionedAppHost as host_class
    try:
        host_class(Path(file), text, config, Metrics(), offline=True).runtime.shutdown()
    except SiddhiAppCreationError as exc:
        problems.append(_from_exc(file, exc, lines))
