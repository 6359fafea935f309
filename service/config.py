"""The service configuration: YAML with ``${ENV}`` and ``${file:...}`` values, checked at start.

Every setting has a default, so ``srota run APP.siddhi`` needs no file at all.  An invalid
file is rejected with the YAML path of the offending key (``http.port: expected an
integer from 0 to 65535, got 'abc'``).

``${NAME}`` and ``${NAME:-default}`` are replaced in every YAML string value and in app
texts; a variable that is unset and has no default is an error naming it.
"""
from __future__ import annotations

import dataclasses
import difflib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from srota.engine.runtime import extension_property_text
from srota.grammar.durations import parse_duration

_ENV = re.compile(r"\$\{(?:file:(?P<file>[^}]+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?)\}")


class ConfigError(ValueError):
    """The configuration is invalid; ``path`` is the YAML path of the offending key.

    One error is raised for a whole file: ``errors`` lists every problem found (the first is
    this one), ``file`` names the config file when it was read from one.
    """

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        self.file: Path | None = None
        self.errors: list[ConfigError] = [self]
        super().__init__(f"{path}: {message}" if path else message)

    def lines(self) -> list[str]:
        """One ``file: path: message`` line per problem."""
        prefix = f"{self.file}: " if self.file is not None else ""
        return [f"{prefix}{e}" for e in self.errors]


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, or an empty string."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def substitute_env(text: str, where: str = "", env: Mapping[str, str] | None = None) -> str:
    """Replace ``${NAME}``, ``${NAME:-default}`` and ``${file:/path}`` in ``text``.

    ``${file:/run/secrets/kafka-password}`` reads a secret from a file (a Docker or
    Kubernetes secret), without its trailing newline, so secrets need not be in the
    environment or in the config file.
    """
    values: Mapping[str, str] = os.environ if env is None else env

    def repl(m: re.Match[str]) -> str:
        if m.group("file") is not None:
            path = Path(m.group("file").strip())
            try:
                return path.read_text(encoding="utf-8").rstrip("\r\n")
            except OSError as exc:
                raise ConfigError(where, f"cannot read secret file {path}: {exc.strerror}") from None
        name, default = m.group("name"), m.group("default")
        value = values.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise ConfigError(where, f"environment variable {name} is not set (use ${{{name}:-default}})")
            return default
        return value

    return _ENV.sub(repl, text)


@dataclass(frozen=True)
class HttpConfig:
    """The admin HTTP server: health, readiness, metrics, apps, on-demand queries."""

    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = 9090
    #: When set, every endpoint but /health and /ready needs ``Authorization: Bearer TOKEN``
    #: (the query token is accepted too).
    token: str | None = field(default=None, repr=False)
    query_enabled: bool = False
    query_token: str | None = field(default=None, repr=False)
    #: Serve the browser playground at /playground (docs/playground.md).
    playground_enabled: bool = False
    #: HTTP basic auth, as Siddhi Runner's clients send it (``curl -u admin:admin``): accepted
    #: wherever the token is (docs/siddhi-runner-api.md).
    username: str | None = None
    password: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class DeploymentConfig:
    """``deployment:`` -- the apps folder of the Siddhi Runner API and hot deploy
    (docs/siddhi-runner-api.md).  ``dir`` None: the first directory listed under ``apps``."""

    dir: Path | None = None
    #: Poll the folder: a ``.siddhi`` file added, changed or removed deploys, redeploys or undeploys.
    hot: bool = True
    interval_ms: int = 1_000


@dataclass(frozen=True)
class PersistenceConfig:
    """Where state snapshots, table stores and offsets live, and how often snapshots are taken."""

    enabled: bool = False
    database: str = "data/srota.db"
    interval_ms: int = 60_000
    revisions: int = 3
    #: MQTT acknowledgements that may wait for a snapshot before one is taken early (with
    #: persistence a message is acknowledged only once a saved snapshot includes it).
    held_acks: int = 10
    #: When the newest snapshot cannot be restored and an MQTT source cannot send again what
    #: it acknowledged after the older one: ``refuse`` to start, or ``accept`` the gap.
    older_snapshot: str = "refuse"


@dataclass(frozen=True)
class LoggingConfig:
    format: str = "console"  # console | json
    level: str = "info"


@dataclass(frozen=True)
class StatisticsConfig:
    """``statistics:`` -- Siddhi's statistics for every app (``level``) or per app (``apps``)."""

    level: str = "off"  # off | basic | detail
    reporter: str = "prometheus"  # console | log | prometheus
    interval_ms: int = 60_000
    apps: dict[str, str] = field(default_factory=dict)

    def level_of(self, app: str) -> str:
        return self.apps.get(app, self.level)


@dataclass(frozen=True)
class LimitsConfig:
    """Guards that stop one bad input from taking the process down."""

    max_payload_bytes: int = 1_048_576
    sink_buffer: int = 10_000
    max_window_events: int = 0          # 0: no limit (Siddhi's behaviour)
    max_pending_matches: int = 100_000  # per pattern state
    python_functions: bool = True       # apps may `define function f[python]` (code in the process)


@dataclass(frozen=True)
class ScaleoutConfig:
    """Several workers (processes or replicas) in the Kafka source's consumer group, with the
    app's state scoped to input partitions and checkpointed to a Kafka topic (docs/scaling.md).

    ``workers`` processes are started on this host; ``partitioned`` turns the per-partition
    mode on for a single worker too (one replica of several on several hosts).
    """

    workers: int = 1
    partitioned: bool = False
    checkpoint_interval_ms: int = 10_000
    #: The state topic; ``{app}`` is replaced by the app's name.
    state_topic: str = "srota-state-{app}"
    #: How long an assigned partition's state may stay unreadable before the app stops.
    restore_timeout_ms: int = 120_000

    @property
    def enabled(self) -> bool:
        """True when apps run one runtime per input partition with Kafka checkpoints."""
        return self.partitioned or self.workers > 1


@dataclass(frozen=True)
class ServiceConfig:
    """The whole service configuration."""

    apps: tuple[Path, ...] = ()
    refs: dict[str, dict[str, str]] = field(default_factory=dict)
    http: HttpConfig = HttpConfig()
    persistence: PersistenceConfig = PersistenceConfig()
    logging: LoggingConfig = LoggingConfig()
    limits: LimitsConfig = LimitsConfig()
    shutdown_timeout_ms: int = 30_000
    base_dir: Path = Path(".")
    scaleout: ScaleoutConfig = ScaleoutConfig()
    #: This process's shard of distributed aggregations (``@PartitionById``); with several
    #: workers each partition's runtime writes as ``<shard.id>p<partition>`` (docs/scaling.md).
    shard_id: str | None = None
    #: Named databases for ``@store(type='rdbms', datasource='NAME')`` and ``#rdbms:query``:
    #: name -> ``{jdbc.url, username, password, max.outage}``.
    datasources: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Extensions' system parameters, as the ``extensions:`` of Siddhi's deployment.yaml:
    #: ``"namespace:name"`` -> {parameter: text} (``rdbms:cud: {perform.CUD.operations: true}``).
    extensions: dict[str, dict[str, str]] = field(default_factory=dict)
    statistics: StatisticsConfig = StatisticsConfig()
    deployment: DeploymentConfig = DeploymentConfig()
    #: The error store (``errors.database``): an SQLite file, or a PostgreSQL/MySQL URL that
    #: replicas share; failed events of streams with ``@OnError(action='STORE')`` and sinks
    #: with ``on.error='STORE'`` (``srota errors``).
    errors_database: str = "data/errors.db"
    #: ``gc.threshold``: container allocations between the garbage collector's young
    #: collections while the service runs (Python's default is 700).  A stream service
    #: allocates a few per event and frees almost all of them by reference counting; at 700
    #: the collector ran thousands of times per million events (docs/performance.md, W5).
    gc_threshold: int = 20_000
    #: The file this config was read from (None: built in code); the playground hands it to
    #: sandboxed apps that attach the service's connectors.
    source: Path | None = field(default=None, compare=False)
    #: Settings of a Siddhi Runner deployment.yaml read as this config that Srota has no
    #: counterpart for (service/runner_config.py), one ``<yaml path>: <why>`` line each;
    #: ``srota run`` logs them as warnings.
    warnings: tuple[str, ...] = field(default=(), compare=False)

    def app_files(self) -> list[Path]:
        """Every app file: listed files, and ``*.siddhi`` in listed directories (sorted)."""
        out: list[Path] = []
        for p in self.apps:
            path = p if p.is_absolute() else self.base_dir / p
            if path.is_dir():
                out.extend(sorted(path.glob("*.siddhi")))
            else:
                out.append(path)
        return out


# ---------------------------------------------------------------------------- loading
_TOP_KEYS = {"apps", "refs", "http", "persistence", "logging", "limits", "shutdown", "workers", "scaleout",
             "shard.id", "datasources", "extensions", "statistics", "errors", "gc",
             "deployment"}

# Connector options that name files: a relative value is relative to the config file.
_PATH_OPTIONS = {"file.uri", "dir.uri", "move.after.process", "move.after.failure",
                 "ssl.cafile", "ssl.certfile", "ssl.keyfile"}


def _resolve(value: str, base_dir: Path) -> str:
    """``value`` made relative to ``base_dir`` when it is a relative path (or ``file:`` URI)."""
    if not value or value.startswith(("file:/", "/")) or "://" in value:
        return value
    if value.startswith("file:"):
        return "file:" + str(base_dir / value[5:])
    return str(base_dir / value)


def load_config(path: str | Path | None, env: dict[str, str] | None = None) -> ServiceConfig:
    """Read and check a YAML config file (None: every default).

    Relative paths in the file (apps, ``persistence.database``, file options of refs) are
    relative to the file's directory, so the config works from any working directory.
    A Siddhi Runner ``deployment.yaml`` is recognised by its shape and read through
    :mod:`srota.service.runner_config`; what it holds that Srota cannot use is in ``warnings``.
    Raises :class:`ConfigError` carrying every problem of the file (``errors``) and its name.
    """
    if path is None:
        return ServiceConfig()
    p = Path(path)
    try:
        if p.suffix.lower() not in (".yaml", ".yml"):
            raise ConfigError("", "a config file is YAML (.yaml or .yml)")
        try:
            raw = yaml.safe_load(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError("", "no such file") from None
        except IsADirectoryError:
            raise ConfigError("", "is a directory, not a config file") from None
        except UnicodeDecodeError:
            raise ConfigError("", "not a text file") from None
        except OSError as exc:
            raise ConfigError("", exc.strerror or str(exc)) from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
            raise ConfigError("", f"{where}not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
        warnings: tuple[str, ...] = ()
        from srota.service.runner_config import convert_runner_deployment, is_runner_deployment

        if is_runner_deployment(raw):  # Siddhi Runner's deployment.yaml: what Srota has a counterpart for
            conversion = convert_runner_deployment(raw)
            raw, warnings = conversion.config, tuple(conversion.warnings)
        return dataclasses.replace(parse_config(raw, base_dir=p.absolute().parent, env=env), source=p.absolute(),
                                   warnings=warnings)
    except ConfigError as exc:
        for e in exc.errors:
            e.file = p
        raise


def parse_config(raw: Any, base_dir: Path = Path("."), env: dict[str, str] | None = None) -> ServiceConfig:
    """Check a parsed YAML document and build a :class:`ServiceConfig`.

    Every problem is collected; the first is raised with the others in its ``errors``.
    """
    if raw is None:
        raw = {}
    d = _Doc(env)
    root = d.take({}, d.mapping, raw, "")
    for key in root:
        if key not in _TOP_KEYS:
            d.fail(key, f"unknown setting{did_you_mean(key, _TOP_KEYS)}; expected one of "
                        f"{', '.join(sorted(_TOP_KEYS))}")
    apps = tuple(Path(d.take("", d.string, a, f"apps[{i}]"))
                 for i, a in enumerate(d.take([], d.sequence, root.get("apps", []), "apps")))
    refs: dict[str, dict[str, str]] = {}
    for name, body in d.take({}, d.mapping, root.get("refs", {}), "refs").items():
        entry = d.take({}, d.mapping, body, f"refs.{name}")
        if "type" not in entry:
            d.fail(f"refs.{name}", "a connector ref needs a 'type' (kafka, mqtt, ...)")
        props: dict[str, str] = {"type": d.take("", d.string, entry.get("type", ""), f"refs.{name}.type")}
        for k, v in d.take({}, d.mapping, entry.get("properties", {}), f"refs.{name}.properties").items():
            value = d.take("", d.scalar, v, f"refs.{name}.properties.{k}")
            props[str(k)] = _resolve(value, base_dir) if str(k) in _PATH_OPTIONS else value
        d.only(entry, f"refs.{name}", {"type", "properties"})
        refs[str(name)] = props

    h = d.take({}, d.mapping, root.get("http", {}), "http")
    d.only(h, "http", {"enabled", "host", "port", "token", "query", "playground", "username", "password"})
    q = d.take({}, d.mapping, h.get("query", {}), "http.query")
    d.only(q, "http.query", {"enabled", "token"})
    pg = d.take({}, d.mapping, h.get("playground", {}), "http.playground")
    d.only(pg, "http.playground", {"enabled"})
    http = HttpConfig(
        enabled=d.take(True, d.boolean, h.get("enabled", True), "http.enabled"),
        host=d.take("127.0.0.1", d.string, h.get("host", "127.0.0.1"), "http.host"),
        port=d.take(9090, d.integer, h.get("port", 9090), "http.port", 0, 65535),
        token=d.take(None, d.secret, h.get("token"), "http.token"),
        query_enabled=d.take(False, d.boolean, q.get("enabled", False), "http.query.enabled"),
        query_token=d.take(None, d.secret, q.get("token"), "http.query.token"),
        playground_enabled=d.take(False, d.boolean, pg.get("enabled", False), "http.playground.enabled"),
        username=d.take(None, d.secret, h.get("username"), "http.username"),
        password=d.take(None, d.secret, h.get("password"), "http.password"),
    )
    if (http.username is None) != (http.password is None):
        d.fail("http.username" if http.username is None else "http.password",
               "basic auth needs both http.username and http.password")
    dc = d.take({}, d.mapping, root.get("deployment", {}), "deployment")
    d.only(dc, "deployment", {"dir", "hot", "interval"})
    deployment_dir = d.take(None, d.string, dc.get("dir"), "deployment.dir") if dc.get("dir") is not None else None
    deployment = DeploymentConfig(
        dir=Path(_resolve(deployment_dir, base_dir)) if deployment_dir else None,
        hot=d.take(True, d.boolean, dc.get("hot", True), "deployment.hot"),
        interval_ms=d.take(1_000, d.duration, dc.get("interval", "1 sec"), "deployment.interval"))
    pc = d.take({}, d.mapping, root.get("persistence", {}), "persistence")
    d.only(pc, "persistence", {"enabled", "database", "interval", "revisions", "held_acks", "older_snapshot"})
    persistence = PersistenceConfig(
        enabled=d.take(False, d.boolean, pc.get("enabled", False), "persistence.enabled"),
        database=_resolve(d.take("data/srota.db", d.string, pc.get("database", "data/srota.db"),
                                 "persistence.database"), base_dir),
        interval_ms=d.take(60_000, d.duration, pc.get("interval", "60 sec"), "persistence.interval"),
        revisions=d.take(3, d.integer, pc.get("revisions", 3), "persistence.revisions", 1, 1000),
        held_acks=d.take(10, d.integer, pc.get("held_acks", 10), "persistence.held_acks", 1, 1_000_000),
        older_snapshot=d.take("refuse", d.string, pc.get("older_snapshot", "refuse"), "persistence.older_snapshot"),
    )
    if persistence.older_snapshot not in ("refuse", "accept"):
        d.fail("persistence.older_snapshot", f"expected 'refuse' or 'accept', got {persistence.older_snapshot!r}")
    lc = d.take({}, d.mapping, root.get("logging", {}), "logging")
    d.only(lc, "logging", {"format", "level"})
    fmt = d.take("console", d.string, lc.get("format", "console"), "logging.format")
    if fmt not in ("console", "json"):
        d.fail("logging.format", f"expected 'console' or 'json', got {fmt!r}")
        fmt = "console"
    level = d.take("info", d.string, lc.get("level", "info"), "logging.level").lower()
    if level not in ("debug", "info", "warning", "error", "critical"):
        d.fail("logging.level", f"expected debug, info, warning, error or critical, got {level!r}")
        level = "info"
    sc = d.take({}, d.mapping, root.get("statistics", {}), "statistics")
    d.only(sc, "statistics", {"level", "reporter", "interval", "apps"})
    levels = ("off", "basic", "detail")

    def stat_level(value: Any, path: str) -> str:
        if value is False:  # YAML reads a bare `off` as false
            return "off"
        got = d.take("off", d.string, value, path).lower()
        if got not in levels:
            d.fail(path, f"expected off, basic or detail, got {got!r}")
            return "off"
        return got

    reporter = d.take("prometheus", d.string, sc.get("reporter", "prometheus"), "statistics.reporter").lower()
    if reporter not in ("console", "log", "prometheus"):
        d.fail("statistics.reporter", f"expected console, log or prometheus, got {reporter!r}")
        reporter = "prometheus"
    statistics = StatisticsConfig(
        level=stat_level(sc.get("level", "off"), "statistics.level"), reporter=reporter,
        interval_ms=d.take(60_000, d.duration, sc.get("interval", "60 sec"), "statistics.interval"),
        apps={str(k): stat_level(v, f"statistics.apps.{k}")
              for k, v in d.take({}, d.mapping, sc.get("apps", {}), "statistics.apps").items()})
    li = d.take({}, d.mapping, root.get("limits", {}), "limits")
    d.only(li, "limits", {"max_payload_bytes", "sink_buffer", "max_window_events", "max_pending_matches",
                          "python_functions"})
    limits = LimitsConfig(
        max_payload_bytes=d.take(1_048_576, d.integer, li.get("max_payload_bytes", 1_048_576),
                                 "limits.max_payload_bytes", 1, 2**31),
        sink_buffer=d.take(10_000, d.integer, li.get("sink_buffer", 10_000), "limits.sink_buffer", 1, 10**8),
        max_window_events=d.take(0, d.integer, li.get("max_window_events", 0), "limits.max_window_events",
                                 0, 2**62),
        max_pending_matches=d.take(100_000, d.integer, li.get("max_pending_matches", 100_000),
                                   "limits.max_pending_matches", 0, 2**62),
        python_functions=d.take(True, d.boolean, li.get("python_functions", True), "limits.python_functions"),
    )
    sd = d.take({}, d.mapping, root.get("shutdown", {}), "shutdown")
    d.only(sd, "shutdown", {"timeout"})
    shutdown = d.take(30_000, d.duration, sd.get("timeout", "30 sec"), "shutdown.timeout")
    so = d.take({}, d.mapping, root.get("scaleout", {}), "scaleout")
    d.only(so, "scaleout", {"partitioned", "checkpoint_interval", "state_topic", "restore_timeout"})
    scaleout = ScaleoutConfig(
        workers=d.take(1, d.integer, root.get("workers", 1), "workers", 1, 1024),
        partitioned=d.take(False, d.boolean, so.get("partitioned", False), "scaleout.partitioned"),
        checkpoint_interval_ms=d.take(10_000, d.duration, so.get("checkpoint_interval", "10 sec"),
                                      "scaleout.checkpoint_interval"),
        state_topic=d.take("srota-state-{app}", d.string, so.get("state_topic", "srota-state-{app}"),
                           "scaleout.state_topic"),
        restore_timeout_ms=d.take(120_000, d.duration, so.get("restore_timeout", "2 min"),
                                  "scaleout.restore_timeout"),
    )
    ec = d.take({}, d.mapping, root.get("errors", {}), "errors")
    d.only(ec, "errors", {"database"})
    errors_database = _resolve(d.take("data/errors.db", d.string, ec.get("database", "data/errors.db"),
                                      "errors.database"), base_dir)
    gc_doc = d.take({}, d.mapping, root.get("gc", {}), "gc")
    d.only(gc_doc, "gc", {"threshold"})
    gc_threshold = d.take(20_000, d.integer, gc_doc.get("threshold", 20_000), "gc.threshold", 100, 10**8)
    if scaleout.enabled and persistence.enabled:
        d.fail("persistence.enabled", "SQLite snapshots are for one process; with several workers "
                                      "(or scaleout.partitioned) each partition's state is checkpointed to Kafka instead")
    shard_id = d.take(None, d.string, root.get("shard.id"), "shard.id") if root.get("shard.id") is not None \
        else None
    datasources: dict[str, dict[str, str]] = {}
    for name, body in d.take({}, d.mapping, root.get("datasources", {}), "datasources").items():
        entry = d.take({}, d.mapping, body, f"datasources.{name}")
        d.only(entry, f"datasources.{name}", {"url", "jdbc.url", "username", "password", "max.outage"})
        if "url" not in entry and "jdbc.url" not in entry:
            d.fail(f"datasources.{name}", "needs url: jdbc:postgresql://host:port/db (or jdbc:mysql://, jdbc:mariadb://)")
        # (values substituted like every other string: a database URL or password from ${ENV})
        datasources[str(name)] = {("jdbc.url" if k == "url" else k): d.take("", d.scalar, v, f"datasources.{name}.{k}")
                                  for k, v in entry.items()}
    extensions: dict[str, dict[str, str]] = {}
    for ext_name, body in d.take({}, d.mapping, root.get("extensions", {}), "extensions").items():
        if str(ext_name).count(":") != 1:
            d.fail(f"extensions.{ext_name}", "an extension is named namespace:name (rdbms:cud)")
            continue
        entry = d.take({}, d.mapping, body, f"extensions.{ext_name}")
        extensions[str(ext_name).lower()] = {str(k): extension_property_text(v) for k, v in entry.items()}
    if d.errors:
        first = d.errors[0]
        first.errors = list(d.errors)
        raise first
    return ServiceConfig(
        errors_database=errors_database, gc_threshold=gc_threshold,
        scaleout=scaleout, shard_id=shard_id or None, datasources=datasources, extensions=extensions,
        statistics=statistics, deployment=deployment,
        apps=apps, refs=refs, http=http, persistence=persistence,
        logging=LoggingConfig(fmt, level), limits=limits,
        shutdown_timeout_ms=shutdown, base_dir=base_dir,
    )


class _Doc:
    """Typed accessors that substitute ``${ENV}`` and report the YAML path on error."""

    def __init__(self, env: dict[str, str] | None) -> None:
        self.env = env
        self.errors: list[ConfigError] = []

    def fail(self, path: str, message: str) -> None:
        """Note a problem and go on checking the rest of the file."""
        self.errors.append(ConfigError(path, message))

    def take(self, default: Any, accessor: Any, *args: Any) -> Any:
        """``accessor(*args)``, or ``default`` after noting its error."""
        try:
            return accessor(*args)
        except ConfigError as exc:
            self.errors.append(exc)
            return default

    def secret(self, value: Any, path: str) -> str | None:
        return (self.string(value, path) or None) if value is not None else None

    def mapping(self, value: Any, path: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ConfigError(path, f"expected a mapping, got {type(value).__name__}")
        return {str(k): v for k, v in value.items()}

    def sequence(self, value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list):
            raise ConfigError(path, f"expected a list, got {type(value).__name__}")
        return value

    def only(self, value: dict[str, Any], path: str, allowed: set[str]) -> None:
        for k in value:
            if k not in allowed:
                self.fail(f"{path}.{k}", f"unknown setting{did_you_mean(k, allowed)}; expected one of "
                                         f"{', '.join(sorted(allowed))}")

    def string(self, value: Any, path: str) -> str:
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ConfigError(path, f"expected a string, got {type(value).__name__}")
        return substitute_env(str(value), path, self.env)

    def scalar(self, value: Any, path: str) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        return self.string(value, path)

    def integer(self, value: Any, path: str, low: int, high: int) -> int:
        if isinstance(value, str):
            value = substitute_env(value, path, self.env)
        try:
            if isinstance(value, bool):
                raise ValueError
            n = int(value)
        except (TypeError, ValueError):
            raise ConfigError(path, f"expected an integer from {low} to {high}, got {value!r}") from None
        if not low <= n <= high:
            raise ConfigError(path, f"expected an integer from {low} to {high}, got {n}")
        return n

    def boolean(self, value: Any, path: str) -> bool:
        if isinstance(value, str):
            value = substitute_env(value, path, self.env).strip().lower()
            if value in ("true", "yes", "on", "1"):
                return True
            if value in ("false", "no", "off", "0"):
                return False
        if isinstance(value, bool):
            return value
        raise ConfigError(path, f"expected true or false, got {value!r}")

    def duration(self, value: Any, path: str) -> int:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return int(value)
        try:
            return parse_duration(self.string(value, path))
        except ValueError as exc:
            raise ConfigError(path, str(exc)) from None
