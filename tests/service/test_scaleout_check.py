"""Which apps may run with state split by Kafka partition (service/scaleout_check.py)."""
from __future__ import annotations

import subprocess

import pytest
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.parser import parse
from srota.service.scaleout_check import SourceInfo, check, problems

from tests.integration.support import SROTA

KEYED = {"In": SourceInfo("kafka", "id")}
HEAD = "@app:name('A') define stream In (id string, n long);\n"


def _problems(body: str, sources: dict[str, SourceInfo] = KEYED) -> list[str]:
    return problems(parse(HEAD + body), sources)


@pytest.mark.parametrize("body", [
    "from In[n > 3] select id, n * 2 as m insert into Out;",
    "from In select id, sum(n) as total, count() as c group by id insert into Out;",
    "partition with (id of In) begin from In#window.length(5) select id, sum(n) as s insert into Out; end;",
    "partition with (id of In) begin from every e1=In -> e2=In[n > e1.n] select e1.id as id insert into Out; end;",
    "from every e1=In[n > 90] -> e2=In[id == e1.id and n < 10] select e1.id as id, e2.n as b insert into Out;",
    "from In#window.time(1 min) select id, sum(n) as s group by id insert into Out;",
    # the key carries over to a derived stream that selects it as is
    "from In[n > 0] select id, n insert into Mid; from Mid select id, count() as c group by id insert into Out;",
])
def test_per_key_state_is_accepted(body: str) -> None:
    assert _problems(body) == []


@pytest.mark.parametrize(("body", "why"), [
    ("@info(name='last100') from In#window.length(100) select sum(n) as s insert into Out;",
     "query 'last100' uses #window.length(...), which holds the events of every key together"),
    ("@info(name='q') from In select count() as c insert into Out;", "aggregates without group by"),
    ("@info(name='q') from In select n, count() as c group by n insert into Out;", "groups by n, not by the key id"),
    ("@info(name='p') from every e1=In -> e2=In[n > e1.n] select e1.id as id insert into Out;",
     "need not have the key of the events before it"),
    ("@info(name='p') from e1=In -> e2=In[id == e1.id] select e1.id as id insert into Out;", "without every"),
    ("@info(name='s') from every e1=In, e2=In[id == e1.id] select e1.id as id insert into Out;", "is a sequence"),
    ("@info(name='q') partition with (n of In) begin from In select count() as c insert into Out; end;",
     "not by the key.attribute"),
    ("@info(name='q') from In select id, n insert into Mid; "
     "@info(name='r') from Mid#window.lengthBatch(10) select count() as c insert into Out;", "query 'r'"),
])
def test_state_across_keys_is_refused_with_the_query_and_why(body: str, why: str) -> None:
    found = _problems(body)
    assert found and any(why in p for p in found), found


def test_without_key_attribute_any_aggregation_is_refused() -> None:
    found = _problems("from In select id, count() as c group by id insert into Out;", {"In": SourceInfo("kafka")})
    assert found and "no key.attribute" in found[0]


def test_opt_in_accepts_per_partition_state() -> None:
    app = parse("@app:name('A') @app:statePerPartition define stream In (id string, n long);\n"
                "from In#window.length(100) select sum(n) as s insert into Out;")
    assert problems(app, KEYED) == []


def test_mqtt_state_is_refused_with_a_hint_to_bridge_into_kafka() -> None:
    found = _problems("from In select id, count() as c group by id insert into Out;", {"In": SourceInfo("mqtt")})
    assert found and "bridge the topic into Kafka" in found[0]
    assert _problems("from In[n > 1] select id insert into Out;", {"In": SourceInfo("mqtt")}) == []


def test_check_names_the_opt_in_annotation() -> None:
    with pytest.raises(SiddhiAppCreationError, match=r"@app:statePerPartition"):
        check(parse(HEAD + "from In#window.length(100) select sum(n) as s insert into Out;"), KEYED)


@pytest.mark.integration
def test_srota_run_with_workers_refuses_a_global_window_at_start(kafka_broker: object, tmp_path: object) -> None:
    from pathlib import Path

    tmp = Path(str(tmp_path))
    app = tmp / "global.siddhi"
    app.write_text(
        "@app:name('Global')\n"
        f"@source(type='kafka', topic.list='in', group.id='g', bootstrap.servers='{kafka_broker.bootstrap_servers}', "  # type: ignore[attr-defined]
        "key.attribute='id', @map(type='json'))\n"
        "define stream In (id string, n long);\n"
        "@info(name='last100')\nfrom In#window.length(100) select sum(n) as total insert into Out;\n")
    done = subprocess.run([str(SROTA), "run", str(app), "--workers", "2", "--http-port", "0"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "cannot run with several workers" in done.stderr
    assert "query 'last100' uses #window.length(...)" in done.stderr
    assert "@app:statePerPartition" in done.stderr


def test_config_workers_and_scaleout_settings(tmp_path: object) -> None:
    from srota.service.config import ConfigError, parse_config

    cfg = parse_config({"workers": 3, "scaleout": {"checkpoint_interval": "5 sec", "state_topic": "st-{app}"}})
    assert cfg.scaleout.workers == 3 and cfg.scaleout.enabled
    assert cfg.scaleout.checkpoint_interval_ms == 5000 and cfg.scaleout.state_topic == "st-{app}"
    assert not parse_config({}).scaleout.enabled
    assert parse_config({"scaleout": {"partitioned": True}}).scaleout.enabled
    with pytest.raises(ConfigError, match="persistence.enabled"):
        parse_config({"workers": 2, "persistence": {"enabled": True}})


def test_validate_checks_the_scaleout_rules_when_the_config_scales_out(tmp_path: object) -> None:
    from pathlib import Path

    from srota.service.config import parse_config
    from srota.service.validate import validate_app

    def _validate_app(path: Path, config: object = None) -> list[str]:
        return [p.message for p in validate_app(path, config)]  # type: ignore[arg-type]

    app = Path(str(tmp_path)) / "global.siddhi"
    app.write_text("@app:name('G')\n@source(type='kafka', topic.list='in', group.id='g', "
                   "bootstrap.servers='127.0.0.1:9', key.attribute='id', @map(type='json'))\n"
                   "define stream In (id string, n long);\n"
                   "@info(name='last100') from In#window.length(100) select sum(n) as s insert into Out;\n")
    assert _validate_app(app) == []
    found = _validate_app(app, parse_config({"workers": 2}))
    assert found and "query 'last100' uses #window.length(...)" in found[0]
