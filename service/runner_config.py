"""Siddhi Runner's ``deployment.yaml`` read as a Srota config (``srota run --config``, ``srota config convert``).

Siddhi Runner (siddhi-io/distribution) configures itself with a WSO2 Carbon ``deployment.yaml``.
What Srota has a counterpart for is converted:

* ``refs`` (or ``siddhi.refs``): ``- ref: {name, type, properties}`` -> ``refs: {name: {type, properties}}``;
* ``extensions`` (or ``siddhi.extensions``): ``- extension: {name, namespace, properties}`` ->
  ``extensions: {namespace:name: properties}``;
* ``dataSources`` (or ``wso2.datasources.dataSources``) of type RDBMS on PostgreSQL, MySQL or
  MariaDB: ``definition.configuration.{jdbcUrl, username, password}`` ->
  ``datasources: {name: {jdbc.url, username, password}}``;
* ``properties.shardId`` (or ``siddhi.properties``), else ``wso2.carbon.id`` -> ``shard.id``, the
  shard id Siddhi's ``FileConfigManager.extractProperty("shardId")`` gives distributed aggregations;
* ``statePersistence`` (or ``state.persistence``): ``enabled``, ``intervalInMin``,
  ``revisionsToKeep`` -> ``persistence`` (snapshots go to Srota's SQLite database).

Carbon's placeholders ``${env:NAME}`` and ``${env:NAME,default}`` become Srota's ``${NAME}`` and
``${NAME:-default}``.  Everything else (``wso2.carbon``'s name and ports, ``transports``,
``authentication``, metrics, Hikari pool settings, ``${sys:...}``/``${sec:...}`` placeholders,
data sources on databases Srota does not reach) has no counterpart: each is named in a warning,
never dropped silently, and never an error.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

#: Top-level keys only a Siddhi Runner / Carbon deployment.yaml has.
_RUNNER_KEYS = frozenset({"wso2.carbon", "wso2.datasources", "dataSources", "siddhi", "transports",
                          "wso2.transport.http", "statePersistence", "state.persistence", "authentication",
                          "wso2.metrics", "wso2.metrics.jdbc", "wso2.securevault", "auth.configs",
                          "deployment.config", "cluster.config", "wso2.artifact.deployment"})
_DATABASES = ("jdbc:postgresql:", "jdbc:mysql:", "jdbc:mariadb:")
#: Carbon's placeholders (org.wso2.carbon.config ConfigProviderImpl: ``${(sys|env|sec):key(,default)}``).
_CARBON_PLACEHOLDER = re.compile(r"\$\{(sys|env|sec):([^,}]+?)(?:,([^}]*))?\}")
#: Carbon's ``${carbon.home}``-style system variables (ConfigurationUtils.substituteVariables).
_CARBON_VARIABLE = re.compile(r"\$\{[A-Za-z_][\w]*(?:\.[\w]+)+\}")


@dataclass
class Conversion:
    """A Srota config document made from a runner deployment.yaml, and what could not be converted."""

    config: dict[str, Any] = field(default_factory=dict)
    #: One ``<yaml path>: <what and why>`` line per setting with no counterpart in Srota.
    warnings: list[str] = field(default_factory=list)
    #: Lines saying how a setting was read (``shard.id`` taken from ``wso2.carbon.id``).
    notes: list[str] = field(default_factory=list)


def is_runner_deployment(raw: Any) -> bool:
    """True when a parsed YAML document has the shape of Siddhi Runner's deployment.yaml: a key
    only Carbon's file has, or ``refs``/``extensions`` as lists (Srota's are mappings)."""
    if not isinstance(raw, Mapping):
        return False
    return any(str(k) in _RUNNER_KEYS for k in raw) or isinstance(raw.get("refs"), list) \
        or isinstance(raw.get("extensions"), list)


def convert_runner_deployment(raw: Mapping[str, Any]) -> Conversion:
    """Convert a runner deployment.yaml (parsed) into a Srota config document (see the module doc)."""
    out = Conversion()
    siddhi = _mapping(raw.get("siddhi"))
    used: set[str] = set()

    def section(top: str, nested: str) -> tuple[Any, str]:
        # Siddhi reads the top-level namespace when it is not empty, else `siddhi.<name>`.
        if raw.get(top):
            used.add(top)
            return raw[top], top
        if siddhi.get(nested):
            return siddhi[nested], f"siddhi.{nested}"
        return None, top

    refs, where = section("refs", "refs")
    if refs is not None:
        out.config["refs"] = _refs(refs, where, out)
    extensions, where = section("extensions", "extensions")
    if extensions is not None:
        out.config["extensions"] = _extensions(extensions, where, out)
    props, where = section("properties", "properties")
    carbon = _mapping(raw.get("wso2.carbon"))
    shard = _shard_id(props, where, carbon, out)
    if shard is not None:
        out.config["shard.id"] = shard
    if "siddhi" in raw:
        used.add("siddhi")
        for key in siddhi:
            if key not in ("refs", "extensions", "properties"):
                out.warnings.append(f"siddhi.{key}: no counterpart in Srota; not converted")

    sources: Any = None
    if "dataSources" in raw:
        used.add("dataSources")
        sources, where = raw["dataSources"], "dataSources"
    elif isinstance(raw.get("wso2.datasources"), Mapping):
        used.add("wso2.datasources")
        sources, where = raw["wso2.datasources"].get("dataSources"), "wso2.datasources.dataSources"
    if sources:
        datasources = _datasources(sources, where, out)
        if datasources:
            out.config["datasources"] = datasources

    for key in ("statePersistence", "state.persistence"):
        if key in raw:
            used.add(key)
            persistence = _persistence(raw[key], key, out)
            if persistence:
                out.config["persistence"] = persistence
            break

    if carbon:
        used.add("wso2.carbon")
        rest = [k for k in _leaves(carbon) if k != "id" and not (k == "ports.offset" and _mapping(carbon.get("ports")).get("offset") == 0)]
        if rest:
            out.warnings.append(f"wso2.carbon: {', '.join(rest)}: no counterpart in Srota; not converted")
    for key in ("transports", "wso2.transport.http"):
        if key in raw:
            used.add(key)
            out.warnings.append(f"{key}: not converted{_listeners(raw[key])}; Srota's admin server (health, "
                                f"metrics, apps) listens at http.host/http.port, 127.0.0.1:9090 by default")
    for key in raw:
        if str(key) not in used and str(key) != "siddhi":
            out.warnings.append(f"{key}: no counterpart in Srota; not converted")
    out.config = _placeholders(out.config, "", out)
    return out


def render_yaml(conversion: Conversion, source: str) -> str:
    """The converted config as YAML, headed by comments naming its source and every warning."""
    lines = [f"# Converted by `srota config convert` from {source} (a Siddhi Runner deployment.yaml)."]
    lines += [f"# {n}" for n in conversion.notes]
    if conversion.warnings:
        lines.append("# Warnings (settings with no counterpart in Srota are not converted):")
        lines += [f"#   {w}" for w in conversion.warnings]
    body = yaml.safe_dump(conversion.config, sort_keys=False, default_flow_style=False, allow_unicode=True) \
        if conversion.config else "{}\n"
    return "\n".join(lines) + "\n" + body


# ---------------------------------------------------------------------------- sections
def _entries(value: Any, where: str, inner: str, out: Conversion) -> list[tuple[str, Mapping[str, Any]]]:
    """The ``- <inner>: {...}`` items of a runner list, with their YAML paths."""
    if not isinstance(value, list):
        out.warnings.append(f"{where}: expected a list of '- {inner}: ...' items; not converted")
        return []
    items = []
    for i, item in enumerate(value):
        body = item.get(inner) if isinstance(item, Mapping) else None
        if not isinstance(body, Mapping):
            out.warnings.append(f"{where}[{i}]: expected '{inner}: {{name: ..., ...}}'; not converted")
            continue
        items.append((f"{where}[{i}]", body))
    return items


def _properties(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): _text(v) for k, v in value.items() if v is not None}


def _refs(value: Any, where: str, out: Conversion) -> dict[str, Any]:
    from srota.engine.registry import Kind, registry
    from srota.service.bindings import import_extensions

    import_extensions()
    refs: dict[str, Any] = {}
    for path, ref in _entries(value, where, "ref", out):
        name, kind = ref.get("name"), ref.get("type")
        if not name:
            out.warnings.append(f"{path}: a ref without a name cannot be referred to; not converted")
            continue
        if not kind:
            out.warnings.append(f"{path} '{name}': no type (Srota's refs need one: kafka, mqtt, http, ...); "
                                "not converted")
            continue
        refs[str(name)] = {"type": str(kind), "properties": _properties(ref.get("properties"))}
        if registry.get(Kind.SOURCE, "", str(kind)) is None and registry.get(Kind.SINK, "", str(kind)) is None:
            out.warnings.append(f"{path} '{name}': Srota has no source or sink of type '{kind}' (refs serve "
                                "@source/@sink; a store names a database with @store(type='rdbms', "
                                "datasource='...') and `datasources:`); converted, but an app using it fails")
    return refs


def _extensions(value: Any, where: str, out: Conversion) -> dict[str, dict[str, str]]:
    extensions: dict[str, dict[str, str]] = {}
    for path, ext in _entries(value, where, "extension", out):
        name, namespace = ext.get("name"), ext.get("namespace")
        if not name or not namespace:
            out.warnings.append(f"{path}: an extension without both name and namespace "
                                f"({namespace or '?'}:{name or '?'}); not converted")
            continue
        extensions[f"{namespace}:{name}"] = _properties(ext.get("properties"))
    return extensions


def _shard_id(props: Any, where: str, carbon: Mapping[str, Any], out: Conversion) -> str | None:
    shard = None
    if isinstance(props, Mapping):
        for key, v in props.items():
            if str(key).lower() == "shardid" and v is not None:
                shard = _text(v)
            else:
                out.warnings.append(f"{where}.{key}: Siddhi property with no counterpart in Srota; not converted")
    elif props is not None:
        out.warnings.append(f"{where}: expected a mapping; not converted")
    if shard is None and carbon.get("id"):
        # FileConfigManager.extractProperty("shardId") falls back to the server's id.
        shard = _text(carbon["id"])
        out.notes.append(f"shard.id is wso2.carbon.id ('{shard}'), as Siddhi Runner's shard id for "
                         "distributed aggregations when properties.shardId is not set")
    return shard


def _datasources(value: Any, where: str, out: Conversion) -> dict[str, dict[str, str]]:
    if not isinstance(value, list):
        out.warnings.append(f"{where}: expected a list of data sources; not converted")
        return {}
    found: dict[str, dict[str, str]] = {}
    for i, ds in enumerate(value):
        path = f"{where}[{i}]"
        if not isinstance(ds, Mapping) or not ds.get("name"):
            out.warnings.append(f"{path}: a data source without a name; not converted")
            continue
        name = str(ds["name"])
        path = f"{path} '{name}'"
        definition = _mapping(ds.get("definition"))
        kind = str(definition.get("type") or "")
        conf = _mapping(definition.get("configuration"))
        url = _text(conf.get("jdbcUrl") or "")
        if kind.upper() not in ("RDBMS", "RDB"):
            out.warnings.append(f"{path}: type '{kind}' is not RDBMS; not converted")
            continue
        if not url.lower().startswith(_DATABASES) and not url.startswith("${env:"):  # (read at start)
            scheme = ":".join(url.split(":")[:2])  # (not the rest: a URL may carry a password)
            out.warnings.append(f"{path}: {scheme + ' database' if url else 'no jdbcUrl'}: Srota reaches PostgreSQL, MySQL and "
                                "MariaDB (jdbc:postgresql://, jdbc:mysql://, jdbc:mariadb://); not converted")
            continue
        entry = {"jdbc.url": url}
        for key in ("username", "password"):
            if conf.get(key) is not None:
                entry[key] = _text(conf[key])
        found[name] = entry
        ignored = [k for k in conf if k not in ("jdbcUrl", "username", "password")]
        ignored += [k for k in ds if k not in ("name", "description", "definition")]
        if ignored:
            out.warnings.append(f"{path}: {', '.join(map(str, ignored))}: no counterpart in Srota (one "
                                "connection per database, the driver chosen by the URL); not converted")
    return found


def _persistence(value: Any, where: str, out: Conversion) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        out.warnings.append(f"{where}: expected a mapping; not converted")
        return {}
    persistence: dict[str, Any] = {}
    if "enabled" in value:
        persistence["enabled"] = value["enabled"]
    if value.get("intervalInMin") is not None:
        persistence["interval"] = f"{_text(value['intervalInMin'])} min"
    if value.get("revisionsToKeep") is not None:
        persistence["revisions"] = value["revisionsToKeep"]
    rest = [k for k in value if k not in ("enabled", "intervalInMin", "revisionsToKeep")]
    if rest:
        store = str(value.get("persistenceStore", "")).rsplit(".", 1)[-1]
        out.warnings.append(f"{where}: {', '.join(map(str, rest))}: not converted; Srota keeps snapshots in its "
                            f"SQLite database (persistence.database, data/srota.db)"
                            + (f", not in {store}; Siddhi's snapshots are not restored" if store else ""))
    return persistence


# ---------------------------------------------------------------------------- values
def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    """A YAML scalar as the text Siddhi's ConfigReader gives (``true``, not ``True``)."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _placeholders(value: Any, where: str, out: Conversion) -> Any:
    """Carbon's ``${env:X}``/``${env:X,default}`` as Srota's ``${X}``/``${X:-default}``; a warning
    for ``${sys:...}``, ``${sec:...}`` and ``${carbon.home}``-style variables, left as they are."""
    if isinstance(value, dict):
        return {k: _placeholders(v, f"{where}.{k}" if where else str(k), out) for k, v in value.items()}
    if not isinstance(value, str):
        return value

    def repl(m: re.Match[str]) -> str:
        kind, key, default = m.group(1), m.group(2).strip(), m.group(3)
        if kind == "env":
            return f"${{{key}:-{default.strip()}}}" if default is not None else f"${{{key}}}"
        what = "a Java system property" if kind == "sys" else "a secure-vault alias"
        out.warnings.append(f"{where}: {m.group(0)} is {what}, which Srota cannot read; left as it is "
                            "(write the value, or ${ENV_VAR})")
        return m.group(0)

    text = _CARBON_PLACEHOLDER.sub(repl, value)
    for m in _CARBON_VARIABLE.finditer(text):
        out.warnings.append(f"{where}: {m.group(0)} is a Carbon variable, which Srota cannot read; left as it is")
    return text


def _leaves(mapping: Mapping[str, Any], prefix: str = "") -> list[str]:
    keys: list[str] = []
    for k, v in mapping.items():
        path = f"{prefix}{k}"
        keys.extend(_leaves(v, path + ".") if isinstance(v, Mapping) else [path])
    return keys


def _listeners(transports: Any) -> str:
    """`` (the runner listened on 0.0.0.0:9090, 0.0.0.0:9443 https)``, from either layout."""
    http = transports.get("http", transports) if isinstance(transports, Mapping) else {}
    found = []
    for listener in (http.get("listenerConfigurations") or []) if isinstance(http, Mapping) else []:
        if isinstance(listener, Mapping) and listener.get("port") is not None:
            scheme = f" {listener['scheme']}" if listener.get("scheme") else ""
            found.append(f"{listener.get('host', '0.0.0.0')}:{listener['port']}{scheme}")
    return f" (the runner listened on {', '.join(found)})" if found else ""
