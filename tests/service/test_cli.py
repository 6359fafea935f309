"""The srota command line."""
from __future__ import annotations

from pathlib import Path

from srota.service.cli import main


def test_validate_reports_file_line_column(tmp_path: Path, capsys):
    good = tmp_path / "good.siddhi"
    good.write_text("define stream S (a int);\nfrom S[a > 1] select a insert into O;\n")
    bad = tmp_path / "bad.siddhi"
    bad.write_text("define stream S (a int);\nfrom S[a > 1] select b insert into O;\n")
    assert main(["validate", str(good)]) == 0
    assert main(["validate", str(good), str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:2:" in out and "no attribute 'b'" in out


def test_validate_checks_configs_and_their_apps(tmp_path: Path, capsys):
    app = tmp_path / "a.siddhi"
    app.write_text("define stream S (a int)\nfrom S select a insert into O;")
    cfg = tmp_path / "srota.yaml"
    cfg.write_text("apps: [a.siddhi]\n")
    assert main(["validate", str(cfg)]) == 1
    assert f"{app}:2:" in capsys.readouterr().out
    cfg.write_text("http: {port: nope}\n")
    assert main(["validate", str(cfg)]) == 1
    assert "http.port" in capsys.readouterr().out


def test_validate_checks_sources_and_sinks(tmp_path: Path, capsys):
    app = tmp_path / "a.siddhi"
    app.write_text("@source(type='kafka', topic.list='t', bootstrap.servers='h:1', group.id='g', nope='1',"
                   " @map(type='json'))\ndefine stream S (a int);\n")
    assert main(["validate", str(app)]) == 1
    assert "unknown option 'nope'" in capsys.readouterr().out
    app.write_text("@sink(ref='missing', @map(type='json'))\ndefine stream S (a int);\n")
    assert main(["validate", str(app)]) == 1
    assert "no such connector ref" in capsys.readouterr().out


def test_run_with_only_annotations_and_no_config(tmp_path: Path):
    """``srota run APP`` with sources and sinks declared in the app alone, then SIGTERM."""
    import json
    import signal
    import subprocess
    import sys
    import time

    readings = tmp_path / "in.jsonl"
    # A double attribute wants a JSON number with a fraction (siddhi-map-json's default mapping).
    readings.write_text("".join(json.dumps({"event": {"id": f"d{i}", "temp": 30.0 + i}}) + "\n" for i in range(20)))
    alerts = tmp_path / "alerts.jsonl"
    app = tmp_path / "app.siddhi"
    app.write_text(f"""
@source(type='file', file.uri='{readings}', @map(type='json'))
define stream Readings (id string, temp double);
@sink(type='file', file.uri='{alerts}', @map(type='json'))
define stream Alerts (id string, temp double);
from Readings[temp > 40] select id, temp insert into Alerts;
""")
    srota = Path(sys.executable).with_name("srota")
    proc = subprocess.Popen([str(srota), "run", str(app), "--http-port", "0"], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if alerts.exists() and len(_events(alerts.read_text())) == 9:
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert [e["id"] for e in _events(alerts.read_text())] == [f"d{i}" for i in range(11, 20)]


def _events(text: str) -> list[dict]:
    """The events of json sink messages, one per line: an object, or an array for a chunk."""
    import json

    out = []
    for line in text.splitlines():
        doc = json.loads(line)
        out.extend(e["event"] for e in (doc if isinstance(doc, list) else [doc]))
    return out


def test_run_reports_an_invalid_app_with_file_line_column(tmp_path: Path, capsys):
    bad = tmp_path / "bad.siddhi"
    bad.write_text("define stream S (a int);\nfrom S select b insert into O;\n")
    assert main(["run", str(bad), "--http-port", "0"]) == 2
    assert f"{bad}:2:15: stream 'S' has no attribute 'b'" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "missing.siddhi")]) == 2
