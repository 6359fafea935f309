"""Siddhi Runner's deployment.yaml read as a Srota config (service/runner_config.py): by
``srota run --config`` as it is, and by ``srota config convert``."""
from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from srota.service.cli import main
from srota.service.config import HttpConfig, load_config, parse_config
from srota.service.host import ServiceHost
from srota.service.runner_config import convert_runner_deployment, is_runner_deployment

from tests.mappers.harness import Topic, publish, until

DATA = Path(__file__).parent / "data"
RUNNER_DEFAULT = DATA / "siddhi-runner-deployment.yaml"  # siddhi-io/distribution's own, unchanged
RUNNER_REFS = DATA / "runner-deployment-refs.yaml"
SROTA = str(Path(sys.executable).with_name("srota"))


def test_the_runners_own_default_file_is_read_with_warnings_and_no_error():
    config = load_config(RUNNER_DEFAULT)
    # wso2.carbon.id is the runner's shard id for distributed aggregations (FileConfigManager)
    assert config.shard_id == "siddhi-runner"
    assert config.refs == {} and config.datasources == {} and config.extensions == {}
    assert config.http == HttpConfig()  # the runner's 0.0.0.0 listeners are not taken over
    text = "\n".join(config.warnings)
    assert "dataSources[0] 'WSO2_PERMISSIONS_DB': jdbc:h2 database" in text  # H2: no counterpart
    assert "wso2.carbon: name" in text
    assert "transports: not converted (the runner listened on 0.0.0.0:9090, 0.0.0.0:9443 https)" in text
    assert "wso2carbon" not in text  # (no password in a warning)


def test_refs_extensions_datasources_and_persistence_are_converted():
    env = {"SALES_DB_URL": "jdbc:postgresql://db.example:5432/sales", "ORDERS_TOPIC": "orders",
           "BIG_ORDERS_TOPIC": "big"}
    config = load_config(RUNNER_REFS, env=env)
    assert config.refs["orders-in"] == {"type": "inMemory", "topic": "orders"}  # ${env:X} -> ${X}
    assert config.refs["big-orders-out"] == {"type": "inMemory", "topic": "big"}
    assert "untyped" not in config.refs
    assert config.datasources == {"SALES_DB": {"jdbc.url": "jdbc:postgresql://db.example:5432/sales",
                                               "username": "srota", "password": "srota"}}  # ${env:X,default}
    assert config.extensions == {"rdbms:cud": {"perform.CUD.operations": "true"}}
    assert config.shard_id == "sales-node-1"
    assert (config.persistence.enabled, config.persistence.interval_ms, config.persistence.revisions) == \
        (False, 300_000, 4)
    warnings = "\n".join(config.warnings)
    for expected in ("siddhi.refs[2] 'store4': Srota has no source or sink of type 'rdbms'",
                     "siddhi.refs[3] 'untyped': no type",
                     "siddhi.properties.partitionById: Siddhi property with no counterpart",
                     "'SALES_DB': driverClassName, maxPoolSize, isAutoCommit, jndiConfig: no counterpart",
                     "'WSO2_CARBON_DB': jdbc:h2 database",
                     "state.persistence: persistenceStore, config: not converted",
                     "wso2.transport.http: not converted (the runner listened on 0.0.0.0:9090)"):
        assert expected in warnings, (expected, warnings)


def test_the_shape_tells_a_runner_file_from_a_srota_config():
    assert is_runner_deployment({"wso2.carbon": {"id": "x"}})
    assert is_runner_deployment({"refs": [{"ref": {"name": "a", "type": "kafka"}}]})
    assert is_runner_deployment({"extensions": [{"extension": {"name": "cud", "namespace": "rdbms"}}]})
    assert not is_runner_deployment({"refs": {"a": {"type": "kafka"}}, "extensions": {"rdbms:cud": {}}})
    assert not is_runner_deployment(None)
    # the newer layout: top-level refs/extensions/properties win over siddhi.* (as FileConfigManager reads)
    conv = convert_runner_deployment({"refs": [{"ref": {"name": "a", "type": "log"}}],
                                      "siddhi": {"refs": [{"ref": {"name": "b", "type": "log"}}]},
                                      "properties": {"shardId": "node-7"}, "wso2.carbon": {"id": "ignored"},
                                      "wso2.metrics": {"enabled": False}})
    assert conv.config == {"refs": {"a": {"type": "log", "properties": {}}}, "shard.id": "node-7"}
    assert conv.warnings == ["wso2.metrics: no counterpart in Srota; not converted"]
    assert parse_config(conv.config).refs == {"a": {"type": "log"}}


def test_config_convert_prints_a_srota_config_and_the_warnings(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path):
    assert main(["config", "convert", str(RUNNER_REFS)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"# Converted by `srota config convert` from {RUNNER_REFS}")
    assert "#   siddhi.refs[3] 'untyped': no type" in out  # the warnings head the file too
    assert f"srota: {RUNNER_REFS}: warning: siddhi.refs[3] 'untyped': no type" in err
    converted = yaml.safe_load(out)
    assert converted["refs"]["orders-in"] == {"type": "inMemory", "properties": {"topic": "${ORDERS_TOPIC}"}}
    assert converted["datasources"]["SALES_DB"]["jdbc.url"] == "${SALES_DB_URL}"
    # the converted file is a Srota config, and reads as the runner's file does
    target = tmp_path / "srota.yaml"
    assert main(["config", "convert", str(RUNNER_REFS), "-o", str(target)]) == 0
    env = {"SALES_DB_URL": "jdbc:mysql://h/db", "ORDERS_TOPIC": "o", "BIG_ORDERS_TOPIC": "b"}
    again, direct = load_config(target, env=env), load_config(RUNNER_REFS, env=env)
    assert (again.refs, again.datasources, again.extensions, again.shard_id) == \
        (direct.refs, direct.datasources, direct.extensions, direct.shard_id)
    assert dataclasses.replace(again.persistence, database="") == dataclasses.replace(direct.persistence, database="")
    assert again.warnings == ()
    capsys.readouterr()
    assert main(["config", "convert", str(Path(__file__).parents[2] / "config" / "demo.yaml")]) == 2
    assert "not a Siddhi Runner deployment.yaml" in capsys.readouterr().err


async def test_an_app_uses_the_refs_and_the_data_source_of_a_runner_file(postgres_server: Any,
                                                                          tmp_path: Path):
    database = postgres_server.create_database()
    orders, big = f"orders-{uuid.uuid4().hex[:8]}", f"big-{uuid.uuid4().hex[:8]}"
    env = {"SALES_DB_URL": postgres_server.jdbc_url(database), "ORDERS_TOPIC": orders, "BIG_ORDERS_TOPIC": big}
    config = load_config(RUNNER_REFS, env=env)
    app = ("@App:name('Sales')\n"
           "@source(ref='orders-in', @map(type='passThrough'))\n"
           "define stream Orders (id string, amount double);\n"
           "@sink(ref='big-orders-out', @map(type='passThrough'))\n"
           "define stream BigOrders (id string, amount double);\n"
           "@store(type='rdbms', datasource='SALES_DB')\n"
           "define table OrderTable (id string, amount double);\n"
           "from Orders insert into OrderTable;\n"
           "from Orders[amount > 100.0] insert into BigOrders;\n")
    host = ServiceHost(dataclasses.replace(config, http=HttpConfig(enabled=False),
                                           errors_database=str(tmp_path / "errors.db")), app_texts=[app])
    out = Topic(big)
    await host.start()
    try:
        await until(host.is_ready)
        await publish(orders, ("o-1", 50.0), ("o-2", 250.0))
        assert await out.take(1) == [("o-2", 250.0)]
        import psycopg

        def rows() -> list[tuple[Any, ...]]:
            with psycopg.connect(postgres_server.url(database)) as conn:
                tables = [t for (t,) in conn.execute("SELECT table_name FROM information_schema.tables "
                                                     "WHERE table_schema = 'public'")]
                if not tables:
                    return []
                return sorted(conn.execute(f'SELECT * FROM "{tables[0]}"').fetchall())

        await until(lambda: len(rows()) == 2)
        assert rows() == [("o-1", 50.0), ("o-2", 250.0)]
    finally:
        out.close()
        await host.stop()


def test_srota_run_reads_the_runners_file_and_logs_what_it_does_not_use(tmp_path: Path):
    app = tmp_path / "app.siddhi"
    app.write_text("define stream S (a int);\n@sink(type='log')\ndefine stream T (a int);\n"
                   "from S select a insert into T;\n")
    proc = subprocess.Popen([SROTA, "run", str(app), "--config", str(RUNNER_DEFAULT), "--http-port", "0"],
                            cwd=tmp_path, stderr=subprocess.PIPE, text=True, env={**os.environ})
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "started" in line and "srota" in line:
                break
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    text = "".join(lines)
    assert "deployment.yaml setting not used: transports: not converted" in text, text
    assert "deployment.yaml setting not used: dataSources[0] 'WSO2_PERMISSIONS_DB'" in text


def test_datasource_values_take_env_values_like_every_other_setting():
    config = parse_config({"datasources": {"db": {"url": "${DB_URL}", "password": "${DB_PASSWORD:-x}"}}},
                          env={"DB_URL": "jdbc:postgresql://h/db"})
    assert config.datasources == {"db": {"jdbc.url": "jdbc:postgresql://h/db", "password": "x"}}
