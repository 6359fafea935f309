"""Start-up: the admin server first, bounded metrics, relative paths, the log sink's lines."""
from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest
from srota.connectors._log import LogSink
from srota.service.config import ConfigError, HttpConfig, ServiceConfig, load_config, parse_config
from srota.service.host import ServiceHost


async def test_health_answers_while_sinks_connect_and_ready_waits_for_them():
    # An MQTT sink to a closed port: the host retries in the foreground for a while.
    app = ("@app:name('Slow') define stream S (a int);"
           "@sink(type='mqtt', url='tcp://127.0.0.1:1', topic='t', @map(type='json')) define stream O (a int);"
           "from S select a insert into O;")
    host = ServiceHost(ServiceConfig(http=HttpConfig(port=0)), app_texts=[app])
    starting = asyncio.create_task(host.start())
    try:
        async with asyncio.timeout(10):
            while host.admin is None or host.admin.port is None:
                await asyncio.sleep(0.01)
        base = host.admin.url
        async with aiohttp.ClientSession() as s:
            async with s.get(f"{base}/health") as r:
                assert r.status == 200
            assert not starting.done()  # still connecting the sink
            async with s.get(f"{base}/ready") as r:
                assert r.status == 503 and (await r.json())["ready"] is False
        await starting
    finally:
        if not starting.done():
            starting.cancel()
        await host.stop()


async def test_pattern_metrics_are_per_query_not_per_partition_key():
    app = ("@app:name('P') define stream S (k string, v long);"
           "partition with (k of S) begin "
           "@info(name='rise') from every e1=S -> e2=S[v > e1.v] select e1.k as k insert into Out; end;")
    host = ServiceHost(ServiceConfig(http=HttpConfig(enabled=False)), app_texts=[app])
    await host.start()
    try:
        h = host.runtimes["P"].get_input_handler("S")
        for i in range(50):
            h.send([f"device-{i}", 10])
        text = host.metrics.render().decode()
        pending = [x for x in text.splitlines() if x.startswith("srota_pattern_pending{")]
        per_key = sum(e.pending for eid, e in host.runtimes["P"].context.elements.items()
                      if eid.endswith("/pattern"))
        assert per_key >= 50  # at least one partial match per key
        assert pending == [f'srota_pattern_pending{{app="P",query="rise"}} {float(per_key)}']
        assert "device-" not in text
        assert 'srota_build_info{python="' in text and "process_cpu_seconds_total" in text
        assert "python_gc_objects_collected_total" in text and "python_info{" in text
    finally:
        await host.stop()


def test_relative_paths_resolve_against_the_config_file(tmp_path: Path, monkeypatch):
    d = tmp_path / "etc"
    d.mkdir()
    cfg = d / "srota.yaml"
    cfg.write_text("apps: [apps/a.siddhi]\n"
                   "refs:\n  in:\n    type: file\n    properties: {file.uri: data/in.jsonl}\n"
                   "  abs:\n    type: file\n    properties: {file.uri: 'file:///tmp/x.jsonl'}\n"
                   "persistence: {enabled: true, database: ../state/srota.db}\n")
    monkeypatch.chdir(tmp_path)
    config = load_config("etc/srota.yaml")
    assert config.refs["in"]["file.uri"] == str(d.absolute() / "data/in.jsonl")
    assert config.refs["abs"]["file.uri"] == "file:///tmp/x.jsonl"
    assert Path(config.persistence.database).resolve() == (tmp_path / "state" / "srota.db").resolve()
    assert config.app_files() == [d.absolute() / "apps" / "a.siddhi"]


def test_every_config_problem_is_collected():
    with pytest.raises(ConfigError) as info:
        parse_config({"http": {"prot": 1, "port": "x"}, "loging": {}, "refs": {"k": {}}}, env={})
    paths = [e.path for e in info.value.errors]
    assert paths == ["loging", "refs.k", "http.prot", "http.port"]
    assert "did you mean 'logging'" in str(info.value.errors[0])


def test_the_log_sink_writes_name_value_pairs_exactly_with_format_fields():
    sink = LogSink({"prefix": "ALERT", "format": "fields"}, name="App/Alerts/sink0")
    sink.set_attributes(["device", "kind", "value", "note", "missing"])
    row = ("sensor-01", "overheat", 30.144000000000005, "two words", None)
    assert sink.render(row) == 'device=sensor-01 kind=overheat value=30.144000000000005 note="two words" missing=null'
    assert sink.render('{"a": 1}') == '{"a": 1}'
    from structlog.testing import capture_logs

    with capture_logs() as logs:
        asyncio.run(sink.publish([(row, {})]))
    assert [x["event"] for x in logs] == [f"ALERT {sink.render(row)}"]
