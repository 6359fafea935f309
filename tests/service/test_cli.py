"""The srota command line."""
from __future__ import annotations

from pathlib import Path

from service.cli import main


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
