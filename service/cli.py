"""The ``srota`` command: ``run``, ``validate``, ``extensions`` and the ``aggregation`` batch jobs."""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from srota.grammar.errors import SiddhiAppCreationError
from srota.service.config import ConfigError, ServiceConfig, load_config, substitute_env


def _validate_app(path: Path, config: ServiceConfig | None = None) -> list[str]:
    """``file:line:col: message`` for each problem of one app file.

    Checks the app and its ``@source``/``@sink`` bindings (connector types, options, mappers,
    and ``ref=`` names against the config's refs).
    """
    from srota.service.host import AppHost, import_extensions
    from srota.service.metrics import Metrics

    try:
        text = substitute_env(path.read_text(encoding="utf-8"), str(path))
    except OSError as exc:
        return [f"{path}: {exc.strerror}"]
    except ConfigError as exc:
        return [f"{path}: {exc}"]
    import_extensions()
    try:
        AppHost(path, text, config or ServiceConfig(), Metrics()).runtime.shutdown()
    except SiddhiAppCreationError as exc:
        line = exc.line if exc.line is not None else 0
        col = exc.column if exc.column is not None else 0
        return [f"{path}:{line}:{col}: {exc.message}"]
    return []


def cmd_validate(args: argparse.Namespace) -> int:
    problems: list[str] = []
    for name in args.files:
        path = Path(name)
        if path.suffix in (".yaml", ".yml"):
            try:
                config = load_config(path)
            except ConfigError as exc:
                problems.append(f"{path}: {exc}")
                continue
            for app in config.app_files():
                problems.extend(_validate_app(app, config))
        else:
            problems.extend(_validate_app(path))
    for p in problems:
        print(p)
    if not problems:
        print(f"ok: {len(args.files)} file(s) valid")
    return 1 if problems else 0


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

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"srota: invalid config: {exc}", file=sys.stderr)
        return 2
    if args.http_port is not None:
        config = dataclasses.replace(config, http=dataclasses.replace(config.http, port=args.http_port))
    configure_logging(args.log_format or config.logging.format, args.log_level or config.logging.level)
    apps = [Path(a) for a in args.apps] or config.app_files()
    if not apps:
        print("srota: no apps to run (name .siddhi files or list them under 'apps' in the config)",
              file=sys.stderr)
        return 2
    return run_service(config, apps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="srota", description="Siddhi streaming SQL apps as a service")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run apps until SIGTERM/SIGINT")
    run.add_argument("apps", nargs="*", help=".siddhi app files (default: the config's apps)")
    run.add_argument("--config", "-c", help="YAML config file (default: every default)")
    run.add_argument("--log-format", choices=("console", "json"))
    run.add_argument("--log-level", choices=("debug", "info", "warning", "error"))
    run.add_argument("--http-port", type=int, help="admin port (overrides the config; 0 picks a free one)")
    run.set_defaults(func=cmd_run)
    val = sub.add_parser("validate", help="check apps (and configs) and print file:line:col: message")
    val.add_argument("files", nargs="+", help=".siddhi apps or .yaml configs")
    val.set_defaults(func=cmd_validate)
    ext = sub.add_parser("extensions", help="print the reference of the built-in extensions (Markdown)")
    ext.add_argument("namespace", nargs="?", help="one namespace (str, json, unique, ...; core: no namespace)")
    ext.set_defaults(func=cmd_extensions)
    try:
        from srota.service.spark import cli as spark_cli
    except ImportError:
        spark_cli = None
    if spark_cli is not None and hasattr(spark_cli, "add_subparsers"):
        spark_cli.add_subparsers(sub)
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
