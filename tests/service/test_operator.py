"""The operator's view: the srota command run as a user runs it (a subprocess), from any directory."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SROTA = str(Path(sys.executable).with_name("srota"))


def srota(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
          timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SROTA, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def _no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr + proc.stdout


# ---------------------------------------------------------------------------- validate
def test_validate_the_demo_app_against_its_config(tmp_path: Path):
    """The form the README documents: the app's ref= names resolve against the config."""
    proc = srota("validate", "config/apps/iot-demo.siddhi", "config/demo.yaml", cwd=REPO)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.startswith("ok:")
    # and every shipped config, from another directory
    proc = srota("validate", *(str(p) for p in sorted((REPO / "config").glob("*.yaml"))), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout


def test_validate_reports_every_error_with_caret_and_did_you_mean(tmp_path: Path):
    app = tmp_path / "bad.siddhi"
    app.write_text(
        "define stream S (temp double, id string);\n"
        "@sink(type='log', prefx='A')\n"
        "define stream O (t double);\n"
        "from S select tmp as t insert into O;\n"
        "from S#window.lenght(3) select temp as t insert into O;\n"
        "from S select id, temp insert into Mid;\n"
        "from Mid select idd as t insert into O;\n"
        "from S select maxx(temp) as t insert into O;\n")
    proc = srota("validate", str(app))
    assert proc.returncode == 1
    out = proc.stdout
    _no_traceback(proc)
    assert f"{app}:4:15: stream 'S' has no attribute 'tmp' (did you mean 'temp'? valid: id, temp)" in out
    assert "    from S select tmp as t insert into O;\n                  ^" in out
    assert f"{app}:5:" in out and "unknown window 'lenght' (did you mean 'length'?" in out
    assert f"{app}:7:17: stream 'Mid' has no attribute 'idd' (did you mean 'id'?" in out
    assert f"{app}:8:" in out and "unknown function 'maxx' (did you mean 'max'?" in out
    # the option is pointed at, not the annotation
    assert f"{app}:2:19: @sink(type='log'): unknown option 'prefx' (did you mean 'prefix'?" in out
    assert "5 problem(s) in 1 file(s)" in out


def test_validate_reports_every_problem_of_a_config(tmp_path: Path):
    cfg = tmp_path / "srota.yaml"
    cfg.write_text("http:\n  prot: 9090\nloging: {level: info}\npersistence: {interval: soon}\n")
    proc = srota("validate", str(cfg))
    assert proc.returncode == 1
    assert f"{cfg}: http.prot: unknown setting (did you mean 'port'?)" in proc.stdout
    assert f"{cfg}: loging: unknown setting (did you mean 'logging'?)" in proc.stdout
    assert f"{cfg}: persistence.interval:" in proc.stdout


def test_validate_checks_files_env_and_database_without_a_broker(tmp_path: Path):
    (tmp_path / "not-a-dir").write_text("")
    app = tmp_path / "app.siddhi"
    app.write_text("@source(type='file', file.uri='missing.jsonl', tailing='false', @map(type='json'))\n"
                   "define stream S (a int);\n"
                   "@source(type='file', file.uri='later.jsonl', @map(type='json'))\n"
                   "define stream T (a int);\n"
                   "@source(type='file', file.uri='later.bin', @map(type='binary'))\n"
                   "define stream B (a int);\n"
                   "@sink(type='kafka', bootstrap.servers='${SROTA_TEST_UNSET_BOOT}', topic='t')\n"
                   "define stream O (a int);\n"
                   "from S select a insert into O;\n")
    cfg = tmp_path / "srota.yaml"
    cfg.write_text("apps: [app.siddhi]\npersistence: {enabled: true, database: not-a-dir/x/srota.db}\n")
    env = {k: v for k, v in os.environ.items() if k != "SROTA_TEST_UNSET_BOOT"}
    proc = subprocess.run([SROTA, "validate", str(cfg)], cwd=tmp_path, capture_output=True, text=True,
                          env=env, timeout=60)
    out = proc.stdout
    assert proc.returncode == 1
    assert "missing.jsonl does not exist" in out
    assert "later.jsonl" not in out  # tailed: the source waits for it to appear
    assert f"{app}:5:" in out and "'binary' mapping cannot be used with mode 'line'" in out
    assert f"{app}:7:" in out and "environment variable SROTA_TEST_UNSET_BOOT is not set" in out
    assert "persistence.database:" in out and "not a directory" in out


def test_validate_uses_the_refs_of_the_config_given_with_the_app(tmp_path: Path):
    app = tmp_path / "app.siddhi"
    app.write_text("@source(ref='in', @map(type='json'))\ndefine stream S (a int);\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("refs:\n  in:\n    type: kafka\n    properties:\n      bootstrap.servers: h:1\n"
                   "      topic.list: t\n      group.id: g\n      topic.lst: x\n")
    proc = srota("validate", str(app), str(cfg))
    assert proc.returncode == 1
    assert "the config's ref has an unknown kafka option 'topic.lst' (did you mean 'topic.list'?" in proc.stdout
    assert "no such connector ref" not in proc.stdout


def test_a_yaml_syntax_error_names_the_file_once_and_other_files_are_refused(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("http:\n  port: [1,\n")
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    proc = srota("validate", str(bad), str(other))
    assert proc.returncode == 1
    line = next(x for x in proc.stdout.splitlines() if "bad.yaml" in x)
    assert line.count("bad.yaml") == 1 and "line 3, column 1: not valid YAML" in line
    assert f"{other}: not a config (.yaml, .yml) or an app (.siddhi)" in proc.stdout

    run = srota("run", "-c", str(bad))
    assert run.returncode == 2
    assert run.stderr.strip().count("\n") == 0 and str(bad) in run.stderr and "not valid YAML" in run.stderr
    _no_traceback(run)
    run = srota("run", "-c", str(other))
    assert run.returncode == 2 and f"{other}: a config file is YAML" in run.stderr
    run = srota("run", str(other))
    assert run.returncode == 2 and "not an app file" in run.stderr


# ---------------------------------------------------------------------------- run
def _wait_for(proc: subprocess.Popen[str], pattern: str, lines: list[str], timeout: float = 30) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    rx = re.compile(pattern)
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            if proc.poll() is not None:
                break
            continue
        lines.append(line)
        m = rx.search(line)
        if m:
            return m
    raise AssertionError(f"no line matching {pattern!r} in:\n{''.join(lines)}")


def test_run_the_demo_from_another_directory_prints_the_banner_and_alerts(tmp_path: Path):
    """`srota run --config /elsewhere/demo.yaml` from any directory (relative paths resolve)."""
    proc = subprocess.Popen([SROTA, "run", "--config", str(REPO / "config" / "demo.yaml"), "--http-port", "0"],
                            cwd=tmp_path, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "SROTA_DEMO_DATA": ""})
    lines: list[str] = []
    try:
        _wait_for(proc, r"srota \S+ \(\w+ [\d.]+\) started", lines)
        _wait_for(proc, r"source Readings <- file .*sensor-readings\.jsonl", lines)
        admin = _wait_for(proc, r"admin\s+(http://127\.0\.0\.1:\d+)", lines).group(1)
        _wait_for(proc, r"persistence\s+off", lines)
        with urllib.request.urlopen(f"{admin}/version", timeout=5) as r:
            assert json.loads(r.read())["version"]
        # the log sink's line as Siddhi writes it: <prefix> : Event{timestamp=..., data=[...], isExpired=false}
        _wait_for(proc, r"ALERT : Event\{timestamp=\d+, data=\[sensor-\d+, room-\d+, \w+, [\d.]+, \d+\], "
                        r"isExpired=false\}", lines, timeout=60)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "Traceback" not in "".join(lines)


def test_version():
    proc = srota("--version")
    assert proc.returncode == 0 and re.match(r"srota \S+ \(\w+ [\d.]+\)", proc.stdout)


def test_user_errors_at_start_are_one_line_with_exit_code_2(tmp_path: Path):
    missing = srota("run", str(tmp_path / "nope.siddhi"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "nope.siddhi" in missing.stderr
    app = tmp_path / "a.siddhi"
    app.write_text("define stream S (a int);\nfrom S select b insert into O;\n")
    bad = srota("run", str(app), "--http-port", "0")
    assert bad.returncode == 2 and f"{app}:2:15:" in bad.stderr
    _no_traceback(bad)
    source = tmp_path / "src.siddhi"
    source.write_text("@source(type='file', file.uri='/nonexistent/r.jsonl', tailing='false', @map(type='json'))\n"
                      "define stream S (a int);\n")
    proc = srota("run", str(source), "--http-port", "0")
    assert proc.returncode == 2 and "/nonexistent/r.jsonl does not exist" in proc.stderr
    _no_traceback(proc)
    unset = tmp_path / "env.siddhi"
    unset.write_text("@app:name('${SROTA_TEST_UNSET_NAME}')\ndefine stream S (a int);\n")
    proc = srota("run", str(unset), "--http-port", "0")
    assert proc.returncode == 2 and "SROTA_TEST_UNSET_NAME is not set" in proc.stderr
    _no_traceback(proc)


def test_a_bug_prints_the_traceback_and_asks_to_report_it(monkeypatch, capsys):
    from srota.service import cli

    def boom(args):
        raise RuntimeError("an internal error")

    monkeypatch.setattr(cli, "cmd_validate", boom)  # build_parser looks it up when main runs
    assert cli.main(["validate", "x.siddhi"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError: an internal error" in err and "please report" in err


# ---------------------------------------------------------------------------- health
def test_health_reads_the_configured_port(tmp_path: Path):
    cfg = tmp_path / "srota.yaml"
    port = _free_port()
    cfg.write_text(f"http: {{port: {port}}}\n")
    app = tmp_path / "a.siddhi"
    app.write_text("define stream S (a int);\n")
    assert srota("health", "--config", str(cfg)).returncode == 1  # nothing runs yet
    proc = subprocess.Popen([SROTA, "run", str(app)], stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "SROTA_CONFIG": str(cfg)})
    try:
        _wait_for(proc, r"started", [])
        ok = srota("health", env={"SROTA_CONFIG": str(cfg)})
        assert ok.returncode == 0 and f":{port}/ready: ok" in ok.stdout
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------- srota test
def test_srota_test_runs_the_demo_tests():
    proc = srota("test", "config/apps", "-v", cwd=REPO)
    assert proc.returncode == 0, proc.stdout
    assert "PASS" in proc.stdout and " 0 failed" in proc.stdout


def test_srota_test_prints_a_diff_and_fails(tmp_path: Path):
    shutil.copy(REPO / "config" / "apps" / "iot-demo.siddhi", tmp_path / "iot-demo.siddhi")
    text = (REPO / "config" / "apps" / "iot-demo.test.yaml").read_text().replace("value: 11.5", "value: 11.0")
    (tmp_path / "iot-demo.test.yaml").write_text(text)
    proc = srota("test", str(tmp_path))
    assert proc.returncode == 1
    assert "FAIL" in proc.stdout and "jump" in proc.stdout
    assert "-device=sensor-04 kind=jump value=11.0" in proc.stdout
    assert "+device=sensor-04 kind=jump value=11.5" in proc.stdout


def test_srota_test_rejects_an_invalid_test_file(tmp_path: Path):
    (tmp_path / "a.siddhi").write_text("define stream S (a int);\nfrom S select a insert into O;\n")
    (tmp_path / "a.test.yaml").write_text("app: a.siddhi\ncases:\n  - input: {S: [{b: 1}]}\n    expect: {O: []}\n")
    proc = srota("test", str(tmp_path / "a.test.yaml"))
    assert proc.returncode == 2 and "no attribute(s) b" in proc.stdout
    (tmp_path / "a.test.yaml").write_text(
        "app: a.siddhi\ncases:\n  - input: {S: [{a: 1}, [2]]}\n    expect: {O: [{a: 1}, {a: 2}]}\n")
    assert srota("test", str(tmp_path / "a.test.yaml")).returncode == 0


def test_the_pytest_recipe_of_the_readme():
    """The README's recipe, as written there."""
    from srota import SiddhiManager

    app = "@app:playback\n" + (REPO / "config" / "apps" / "iot-demo.siddhi").read_text()
    runtime = SiddhiManager().create_siddhi_app_runtime(app)
    alerts = []
    runtime.add_callback("Alerts", lambda events: alerts.extend(e.data for e in events))
    runtime.start()
    readings = runtime.get_input_handler("Readings")
    readings.send(["sensor-04", "room-4", 20.0, 40.0, 1767225600000], timestamp=1767225600000)
    readings.send(["sensor-04", "room-4", 31.5, 40.0, 1767225602000], timestamp=1767225602000)
    runtime.shutdown()
    assert [(a[0], a[2], a[3]) for a in alerts] == [("sensor-04", "jump", 11.5)]


@pytest.mark.parametrize("target", ["README.md"])
def test_readme_shows_the_commands(target: str):
    text = (REPO / target).read_text()
    for command in ("srota validate", "srota test", "srota health", "srota --version"):
        assert command in text


def test_validate_reports_the_syntax_errors_of_later_statements(tmp_path: Path):
    app = tmp_path / "syntax.siddhi"
    app.write_text("define stream S (a int, b string);\n"
                   "from S[a > ] select a insert into O;\n"
                   "-- a comment; with a semicolon, and 'quotes;'\n"
                   "from S select a, insert into O2;\n"
                   "from S select b insert into O4;\n")
    proc = srota("validate", str(app))
    assert proc.returncode == 1
    assert f"{app}:2:12: unexpected ']'" in proc.stdout
    assert f"{app}:4:25: unexpected 'into'" in proc.stdout
    assert "2 problem(s)" in proc.stdout


def test_did_you_mean_in_patterns_and_tables():
    from srota import SiddhiAppCreationError, SiddhiManager

    apps = {
        "define stream S (temp double, id string);\n"
        "from every e1=S -> e2=S[tmp > e1.temp] select e2.id insert into O;": "(did you mean 'temp'?",
        "define stream S (temp double, id string);\ndefine table T (id string, temp double);\n"
        "from S join T on T.idd == S.id select S.id insert into O;": "(did you mean 'id'?",
    }
    for text, hint in apps.items():
        with pytest.raises(SiddhiAppCreationError) as info:
            SiddhiManager().create_siddhi_app_runtime(text)
        assert hint in info.value.message


def test_validate_points_at_unknown_map_options(tmp_path: Path):
    app = tmp_path / "map.siddhi"
    app.write_text("@source(type='inMemory', topic='t', @map(type='json', enclosing.elemnt='$.x'))\n"
                   "define stream S (a int);\n")
    proc = srota("validate", str(app))
    assert proc.returncode == 1
    assert (f"{app}:1:55: @map(type='json'): unknown option 'enclosing.elemnt' "
            "(did you mean 'enclosing.element'?") in proc.stdout
    assert "1 problem(s)" in proc.stdout
