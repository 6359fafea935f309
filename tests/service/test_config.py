"""YAML config: defaults, ${ENV} substitution, errors with the YAML path."""
from __future__ import annotations

from pathlib import Path

import pytest
from srota.service.config import ConfigError, ServiceConfig, load_config, parse_config, substitute_env


def test_defaults_need_no_file():
    config = load_config(None)
    assert config == ServiceConfig()
    assert config.http.host == "127.0.0.1" and config.http.query_enabled is False


def test_env_substitution_with_defaults():
    env = {"HOST": "10.0.0.1", "EMPTY": ""}
    assert substitute_env("${HOST}:${PORT:-9092}", env=env) == "10.0.0.1:9092"
    assert substitute_env("${EMPTY:-x}", env=env) == "x"
    with pytest.raises(ConfigError, match="MISSING"):
        substitute_env("${MISSING}", "refs.k", env=env)


def test_full_config(tmp_path: Path):
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "a.siddhi").write_text("define stream S (a int);")
    f = tmp_path / "srota.yaml"
    f.write_text("""
apps: [apps]
refs:
  kafka-main:
    type: kafka
    properties:
      bootstrap.servers: ${BOOT:-127.0.0.1:9092}
      sasl.password: secret
http: {port: 0, query: {enabled: true, token: t0k}}
persistence: {enabled: true, interval: 5 sec, revisions: 2}
logging: {format: json, level: debug}
shutdown: {timeout: 10 sec}
""")
    config = load_config(f, env={})
    assert config.refs["kafka-main"] == {"type": "kafka", "bootstrap.servers": "127.0.0.1:9092",
                                         "sasl.password": "secret"}
    assert config.http.port == 0 and config.http.query_token == "t0k"
    assert config.persistence.interval_ms == 5000 and config.persistence.revisions == 2
    assert config.shutdown_timeout_ms == 10_000
    assert [p.name for p in config.app_files()] == ["a.siddhi"]
    assert "t0k" not in repr(config.http)


@pytest.mark.parametrize("doc, path", [
    ({"http": {"port": "abc"}}, "http.port"),
    ({"http": {"port": 70000}}, "http.port"),
    ({"htp": {}}, "htp"),
    ({"logging": {"format": "xml"}}, "logging.format"),
    ({"persistence": {"interval": "soon"}}, "persistence.interval"),
    ({"refs": {"k": {"properties": {}}}}, "refs.k"),
    ({"http": {"query": {"enabled": "maybe"}}}, "http.query.enabled"),
    ({"gc": {"threshold": 0}}, "gc.threshold"),
    ({"gc": {"generations": 3}}, "gc.generations"),
])
def test_invalid_config_names_the_yaml_path(doc, path):
    with pytest.raises(ConfigError) as info:
        parse_config(doc, env={})
    assert info.value.path == path
    assert str(info.value).startswith(path)


def test_yaml_syntax_error_has_a_position(tmp_path: Path):
    f = tmp_path / "bad.yaml"
    f.write_text("http:\n  port: [1,\n")
    with pytest.raises(ConfigError, match="line"):
        load_config(f)


def test_secrets_from_files(tmp_path: Path):
    secret = tmp_path / "kafka-password"
    secret.write_text("hunter2\n")
    assert substitute_env(f"${{file:{secret}}}", env={}) == "hunter2"
    with pytest.raises(ConfigError, match="cannot read secret file"):
        substitute_env("${file:/nonexistent/secret}", "refs.k.properties.sasl.password", env={})


def test_datasources_and_shard_id(tmp_path):
    from srota.service.config import load_config

    cfg = tmp_path / "srota.yaml"
    cfg.write_text("shard.id: node-7\ndatasources:\n  SAMPLE_DB:\n    url: jdbc:postgresql://db:5432/s\n"
                   "    username: srota\n    password: pw\n")
    config = load_config(cfg)
    assert config.shard_id == "node-7"
    assert config.datasources == {"SAMPLE_DB": {"jdbc.url": "jdbc:postgresql://db:5432/s", "username": "srota",
                                                "password": "pw"}}


def test_extensions_system_parameters_reach_the_apps(tmp_path):
    # Siddhi's deployment.yaml `extensions:`: rdbms:cud is off until perform.CUD.operations
    import pytest
    from srota.service.apphost import manager_for
    from srota.service.config import ConfigError, load_config

    cfg = tmp_path / "srota.yaml"
    cfg.write_text("errors:\n  database: errors.db\nextensions:\n  RDBMS:cud:\n    perform.CUD.operations: true\n"
                   "    allow.null.params.with.CUD: 'false'\n")
    config = load_config(cfg)
    assert config.extensions == {"rdbms:cud": {"perform.CUD.operations": "true", "allow.null.params.with.CUD": "false"}}
    runtime = manager_for(config, None, None).create_siddhi_app_runtime("define stream S (a int);")
    assert runtime.context.extension_property("rdbms:cud", "perform.CUD.operations", "false") == "true"
    runtime.shutdown()
    cfg.write_text("extensions:\n  cud:\n    perform.CUD.operations: true\n")
    with pytest.raises(ConfigError, match="extensions.cud: an extension is named namespace:name"):
        load_config(cfg)


def test_a_bad_datasource_or_shard_id_is_reported(tmp_path):
    """These were read after the config's problems were raised, so theirs were dropped."""
    import pytest
    from srota.service.config import ConfigError, load_config

    cfg = tmp_path / "srota.yaml"
    cfg.write_text("datasources:\n  X:\n    username: a\n    colour: red\nerrors:\n  database: [1]\n")
    with pytest.raises(ConfigError) as info:
        load_config(cfg)
    lines = "\n".join(str(e) for e in info.value.errors)
    assert "datasources.X: needs url" in lines and "datasources.X.colour" in lines and "errors.database" in lines


def test_the_error_store_database(tmp_path):
    from srota.service.config import load_config

    cfg = tmp_path / "srota.yaml"
    cfg.write_text("errors:\n  database: state/errors.db\n")
    assert load_config(cfg).errors_database == str(tmp_path / "state" / "errors.db")


def test_the_collector_threshold():
    assert ServiceConfig().gc_threshold == 20_000
    assert parse_config({"gc": {"threshold": "${GC:-5000}"}}, env={}).gc_threshold == 5000
