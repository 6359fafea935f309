"""The ``srota`` command: ``run``, ``validate``, ``test``, ``debug``, ``playground``, ``errors``, ``extensions``, ``config convert`` and the ``aggregation`` batch jobs.

A user error (a bad config, an invalid app, a file that is not there, a port in use) is one
line naming the file and the problem, with exit code 2.  Anything else is a bug: the traceback
is printed with a line asking to report it, and the exit code is 1.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sqlite3
import sys
import traceback
from pathlib import Path
from typing import Any

from srota.connectors.base import ConnectorError
from srota.grammar.errors import SiddhiAppCreationError
from srota.service.config import ConfigError, load_config
from srota.service.persistence import StateUnusableError

#: Exit codes: 0 ok, 1 checks failed (validate, test) or a bug, 2 a user error.
EXIT_USAGE = 2
_REPORT = "srota: this is a bug, please report it with the traceback above " \
          "(and the app and config, if you can share them)"


class UserError(Exception):
    """A problem the user can fix; the CLI prints it as one line and exits with code 2."""


def cmd_validate(args: argparse.Namespace) -> int:
    from srota.service.validate import validate_paths

    problems, checked = validate_paths(args.files)
    for p in problems:
        print(p.render())
    if problems:
        print(f"{len(problems)} problem(s) in {len({p.file for p in problems})} file(s)")
        return 1
    print(f"ok: {checked} file(s) valid")
    return 0


def cmd_test(args: argparse.Namespace) -> int:
    from srota.service.testing import run_test_files

    return run_test_files([Path(f) for f in args.files], verbose=args.verbose)


def _check_apps(apps: list[Path]) -> None:
    from srota.service.validate import APP_SUFFIXES

    for app in apps:
        if app.suffix.lower() not in APP_SUFFIXES:
            raise UserError(f"{app}: not an app file (.siddhi)")
        if not app.is_file():
            raise UserError(f"{app}: no such app file")


def cmd_extensions(args: argparse.Namespace) -> int:
    """Print the generated extension reference (all namespaces, or one; ``core`` for the unnamespaced)."""
    from srota.engine.extensions import reference

    if args.namespace is not None and not reference.extensions(args.namespace):
        known = ", ".join([*reference.namespaces(), reference.CORE])
        print(f"srota: no extensions in namespace '{args.namespace}' (known: {known})", file=sys.stderr)
        return 2
    sys.stdout.write(reference.render(args.namespace))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from srota.service.host import run_service
    from srota.service.logs import configure_logging

    config = load_config(args.config)
    if args.http_port is not None:
        config = dataclasses.replace(config, http=dataclasses.replace(config.http, port=args.http_port))
    if args.workers is not None:
        if args.workers > 1 and config.persistence.enabled:
            raise UserError("invalid config: persistence.enabled: SQLite snapshots are for one process; with several "
                            "workers each partition's state is checkpointed to Kafka instead")
        config = dataclasses.replace(config, scaleout=dataclasses.replace(config.scaleout, workers=args.workers))
    # The workers of --workers N configure their logging from the config: keep the flags there.
    config = dataclasses.replace(config, logging=dataclasses.replace(
        config.logging, format=args.log_format or config.logging.format, level=args.log_level or config.logging.level))
    configure_logging(config.logging.format, config.logging.level)
    if config.warnings:  # a Siddhi Runner deployment.yaml: say what of it Srota does not use
        import structlog

        log = structlog.get_logger("srota.config")
        for warning in config.warnings:
            log.warning(f"deployment.yaml setting not used: {warning}", config=str(config.source))
    apps = [Path(a) for a in args.apps] or config.app_files()
    if not apps and config.deployment.dir is None:  # (an empty deployment folder waits for apps)
        raise UserError("no apps to run (name .siddhi files, list them under 'apps' in the config, "
                        "or give a deployment.dir to deploy into)")
    _check_apps(apps)
    if config.scaleout.workers > 1:
        from srota.service.workers import run_workers

        return run_workers(config, apps)
    return run_service(config, apps)


def cmd_config(args: argparse.Namespace) -> int:
    """``srota config convert deployment.yaml``: a Siddhi Runner deployment.yaml as a Srota config
    (YAML on stdout, or ``--output``); what has no counterpart is listed on stderr and in the
    file's header comments."""
    import yaml
    from srota.service.runner_config import convert_runner_deployment, is_runner_deployment, render_yaml

    path = Path(args.file)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    if not is_runner_deployment(raw):
        raise UserError(f"{path}: not a Siddhi Runner deployment.yaml (no wso2.carbon, siddhi, refs, "
                        "extensions or dataSources of its shape)")
    conversion = convert_runner_deployment(raw)
    text = render_yaml(conversion, str(path))
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    for warning in conversion.warnings:
        print(f"srota: {path}: warning: {warning}", file=sys.stderr)
    return 0


def _admin_base(config_path: str | None) -> tuple[str, str | None]:
    config = load_config(config_path or os.environ.get("SROTA_CONFIG"))
    if not config.http.enabled:
        raise UserError("the admin server is off (http.enabled: false): nothing to ask")
    host = config.http.host
    host = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host  # listening everywhere: ask loopback
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{config.http.port}", config.http.token or config.http.query_token or None


def cmd_errors(args: argparse.Namespace) -> int:
    """``srota errors list|show|replay|discard|purge``: the running service's error store."""
    import json
    import urllib.error
    import urllib.parse
    import urllib.request

    base, token = _admin_base(args.config)

    def call(method: str, path: str) -> tuple[int, Any]:
        req = urllib.request.Request(base + path, method=method,
                                     headers={"Authorization": f"Bearer {token}"} if token else {})
        try:
            with urllib.request.urlopen(req, timeout=args.timeout) as r:  # noqa: S310 - our own URL
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")
        except (urllib.error.URLError, OSError) as exc:
            raise UserError(f"{base}: {getattr(exc, 'reason', exc)}") from None

    query = {k: v for k, v in (("app", args.app), ("stream", args.stream)) if v}
    if args.action == "list":
        code, body = call("GET", "/errors?" + urllib.parse.urlencode({**query, "limit": args.limit}))
        if code == 200:
            for e in body["entries"]:
                what = f"{e['events']} event(s)" if e["payload_bytes"] is None else f"payload of {e['payload_bytes']} bytes"
                print(f"{e['id']:>6}  {e['app']}/{e['stream']}  {e['kind']:<7}  {what}: {e['cause']}")
            print(f"{body['count']} error(s)" + (f", first {len(body['entries'])} shown" if body["count"] > len(body["entries"]) else ""))
            return 0
    elif args.action == "purge":
        if not query and not args.all:
            raise UserError("srota errors purge needs --app (and --stream) or --all")
        code, body = call("DELETE", "/errors?" + urllib.parse.urlencode({**query, **({"all": "true"} if args.all else {})}))
        if code == 200:
            print(f"purged {body['purged']} error(s)")
            return 0
    else:
        if not args.ids:
            raise UserError(f"srota errors {args.action} needs the id(s) of errors (srota errors list)")
        failed = 0
        for ident in args.ids:
            method, path = {"show": ("GET", f"/errors/{ident}"), "replay": ("POST", f"/errors/{ident}/replay"),
                            "discard": ("DELETE", f"/errors/{ident}")}[args.action]
            code, body = call(method, path)
            if code != 200:
                print(f"error {ident}: {body.get('error', f'HTTP {code}')}", file=sys.stderr)
                failed += 1
            elif args.action == "show":
                print(json.dumps(body, indent=2))
            elif args.action == "replay":
                print(f"error {ident}: replayed {body['events']} event(s)")
            else:
                print(f"error {ident}: discarded")
        return 1 if failed else 0
    print(f"{base}: {body.get('error', f'HTTP {code}')}", file=sys.stderr)
    return 1


def cmd_playground(args: argparse.Namespace) -> int:
    """Serve the browser playground on loopback until Ctrl-C (docs/playground.md)."""
    import asyncio
    import webbrowser

    from srota.service.playground import serve
    from srota.service.sandbox import SandboxLimits

    limits = SandboxLimits(memory_mb=args.memory_mb, busy_seconds=args.busy_seconds, max_events=args.max_events)

    def ready(url: str) -> None:
        print(f"srota playground: {url}  (Ctrl-C stops it)", flush=True)
        if args.open:
            webbrowser.open(url)

    try:
        asyncio.run(serve(Path(args.app) if args.app else None, args.host, args.port, limits, ready,
                          Path(args.config) if args.config else None))
    except KeyboardInterrupt:
        pass
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """Print what a running service runs: each app's streams, queries, debugger and statistics."""
    import json
    import urllib.error
    import urllib.request

    base, token = _admin_base(args.config)

    def get(path: str) -> tuple[int, object]:
        req = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {token}"} if token else {})
        try:
            with urllib.request.urlopen(req, timeout=args.timeout) as r:  # noqa: S310 - our own URL
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, None

    try:
        code, apps = get("/apps")
    except (urllib.error.URLError, OSError) as exc:
        print(f"{base}: {getattr(exc, 'reason', exc)}")
        return 1
    if code != 200 or not isinstance(apps, list):
        print(f"{base}/apps: HTTP {code}")
        return 1
    for app in apps:
        name = app["name"]
        print(f"app {name}: {len(app.get('queries', []))} queries; sources "
              + ", ".join(f"{s['stream']}<-{s['type']}{'' if s.get('ready', True) else ' (not ready)'}"
                          for s in app.get("sources", [])))
        _, debug = get(f"/apps/{name}/debug")
        if isinstance(debug, dict) and (debug.get("attached") or debug.get("paused")):
            held = debug.get("held")
            print(f"  debugger: {'paused; ' if debug.get('paused') else ''}breakpoints "
                  + (", ".join(f"{b['query']}:{b['terminal']}" for b in debug.get("breakpoints", [])) or "none")
                  + (f"; held at {held['query']} ({held['terminal']})" if held else ""))
        code, stats = get(f"/apps/{name}/statistics")
        if code == 200 and isinstance(stats, dict):
            from srota.engine.statistics import format_report

            print("\n".join("  " + line for line in format_report(stats).splitlines()[1:]))
        else:
            print("  statistics: off (statistics.level in the config, or PUT /apps/{app}/statistics)")
    return 0


def cmd_health(args: argparse.Namespace) -> int:
    """Ask the admin server of a running service (at the config's host and port) for /ready."""
    import urllib.error
    import urllib.request

    config = load_config(args.config or os.environ.get("SROTA_CONFIG"))
    if not config.http.enabled:
        raise UserError("the admin server is off (http.enabled: false): nothing to ask")
    host = config.http.host
    host = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host  # listening everywhere: ask loopback
    host = f"[{host}]" if ":" in host else host
    url = f"http://{host}:{config.http.port}/{'health' if args.live else 'ready'}"
    try:
        with urllib.request.urlopen(url, timeout=args.timeout) as response:  # noqa: S310 - our own URL
            ok = response.status == 200
    except urllib.error.HTTPError as exc:
        ok = False
        print(f"{url}: HTTP {exc.code}")
    except (urllib.error.URLError, OSError) as exc:
        print(f"{url}: {getattr(exc, 'reason', exc)}")
        return 1
    if ok:
        print(f"{url}: ok")
    return 0 if ok else 1


def _version() -> str:
    from srota.service.admin import version_info

    info = version_info()
    return f"srota {info['version']} ({info['implementation']} {info['python']})"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="srota", description="Siddhi streaming SQL apps as a service")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run apps until SIGTERM/SIGINT")
    run.add_argument("apps", nargs="*", help=".siddhi app files (default: the config's apps)")
    run.add_argument("--config", "-c", default=os.environ.get("SROTA_CONFIG"),
                     help="YAML config file (default: $SROTA_CONFIG, else every default)")
    run.add_argument("--log-format", choices=("console", "json"))
    run.add_argument("--log-level", choices=("debug", "info", "warning", "error"))
    run.add_argument("--http-port", type=int, help="admin port (overrides the config; 0 picks a free one)")
    run.add_argument("--workers", type=int, help="worker processes in the Kafka source's consumer group, each "
                     "owning some input partitions and their state (overrides the config's workers)")
    run.set_defaults(func=cmd_run)
    conf = sub.add_parser("config", help="convert a Siddhi Runner deployment.yaml into a Srota config")
    conf_sub = conf.add_subparsers(dest="action", required=True)
    convert = conf_sub.add_parser("convert", help="print the Srota config of a Siddhi Runner deployment.yaml "
                                                  "(refs, data sources, extension properties); what has no "
                                                  "counterpart is listed on stderr")
    convert.add_argument("file", help="the runner's deployment.yaml (srota run --config also reads it as it is)")
    convert.add_argument("--output", "-o", help="write the config here instead of stdout")
    convert.set_defaults(func=cmd_config)
    val = sub.add_parser("validate", help="check apps and configs; print every problem as file:line:col")
    val.add_argument("files", nargs="+", help=".siddhi apps and .yaml configs (apps are checked "
                                              "against the refs of the configs given with them)")
    val.set_defaults(func=cmd_validate)
    test = sub.add_parser("test", help="run app tests (*.test.yaml): send inputs, compare outputs")
    test.add_argument("files", nargs="+", help="test files, or directories to search for *.test.yaml")
    test.add_argument("--verbose", "-v", action="store_true", help="print every case, not only failures")
    test.set_defaults(func=cmd_test)
    health = sub.add_parser("health", help="exit 0 if the running service is ready (for container health checks)")
    health.add_argument("--config", "-c", help="the service's config, for the admin host and port "
                                               "(default: $SROTA_CONFIG, else every default)")
    health.add_argument("--live", action="store_true", help="ask /health (alive) instead of /ready")
    health.add_argument("--timeout", type=float, default=3.0, help="seconds to wait for the answer")
    health.set_defaults(func=cmd_health)
    status = sub.add_parser("status", help="what a running service runs: apps, debugger, statistics")
    status.add_argument("--config", "-c", help="the service's config (default: $SROTA_CONFIG)")
    status.add_argument("--timeout", type=float, default=3.0, help="seconds to wait for each answer")
    status.set_defaults(func=cmd_status)
    errs = sub.add_parser("errors", help="the running service's error store: list, show, replay, discard, purge")
    errs.add_argument("action", choices=("list", "show", "replay", "discard", "purge"))
    errs.add_argument("ids", nargs="*", type=int, help="error ids (show, replay, discard)")
    errs.add_argument("--app", help="only this app's errors (list, purge)")
    errs.add_argument("--stream", help="only this stream's errors (list, purge)")
    errs.add_argument("--all", action="store_true", help="purge every app's errors")
    errs.add_argument("--limit", type=int, default=100, help="errors listed at most")
    errs.add_argument("--config", "-c", help="the service's config (default: $SROTA_CONFIG)")
    errs.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for each answer")
    errs.set_defaults(func=cmd_errors)
    play = sub.add_parser("playground", help="a browser page to write, validate, feed, watch and debug an app")
    play.add_argument("app", nargs="?", help="a .siddhi app to open (default: the first example)")
    play.add_argument("--host", default="127.0.0.1", help="address to serve on (default: loopback only)")
    play.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    play.add_argument("--open", action="store_true", help="open the page in the default browser")
    play.add_argument("--config", "-c", help="a service config: apps run in the playground may attach its "
                                             "connectors (their @source/@sink and refs) instead of running alone")
    play.add_argument("--memory-mb", type=int, default=2048, help="memory of each sandboxed app (MiB)")
    play.add_argument("--busy-seconds", type=float, default=10.0,
                      help="an app taking longer than this on one input is stopped")
    play.add_argument("--max-events", type=int, default=1_000_000, help="input events per run")
    play.set_defaults(func=cmd_playground)
    from srota.service.debug_cli import add_parser as add_debug

    add_debug(sub)
    ext = sub.add_parser("extensions", help="print the reference of the built-in extensions (Markdown)")
    ext.add_argument("namespace", nargs="?", help="one namespace (str, json, unique, ...; core: no namespace)")
    ext.set_defaults(func=cmd_extensions)
    spark_cli: Any
    try:
        from srota.service.spark import cli as spark_cli
    except ImportError:
        spark_cli = None
    if spark_cli is not None and hasattr(spark_cli, "add_subparsers"):
        spark_cli.add_subparsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code (see the module doc)."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ConfigError as exc:
        for line in exc.lines():
            print(f"srota: {line}", file=sys.stderr)
        return EXIT_USAGE
    except SiddhiAppCreationError as exc:
        where = getattr(exc, "path", None) or "app"
        if exc.line is not None:
            where = f"{where}:{exc.line}:{exc.column}"
        print(f"srota: {where}: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    except (UserError, ConnectorError, StateUnusableError) as exc:  # a source or sink that cannot start, state
        # that cannot be used as it is
        print(f"srota: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # a file that cannot be read, a port in use
        name = f"{exc.filename}: " if exc.filename else ""
        print(f"srota: {name}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except sqlite3.OperationalError as exc:  # the persistence database cannot be opened
        print(f"srota: persistence.database: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception:
        traceback.print_exc()
        print(_REPORT, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
