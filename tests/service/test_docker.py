"""The container files, checked without a Docker engine (none runs on CI machines)."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml
from srota.engine.timeutil import parse_duration
from srota.service.config import load_config

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"


def _compose() -> dict:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


def _dockerfile_instructions() -> list[tuple[str, str]]:
    text = (DOCKER / "Dockerfile").read_text().replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_the_dockerfile_copies_every_package_and_file_it_needs():
    copies = [rest.split() for word, rest in _dockerfile_instructions()
              if word == "COPY" and not rest.startswith("--from")]
    sources = {src for args in copies for src in args[:-1]}
    for src in sources:
        assert (REPO / src).exists(), f"COPY {src}: not in the build context"
    # every folder the package installs from (pyproject package-dir) is copied into the build stage
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    folders = {d.split("/")[0] for d in pyproject["tool"]["setuptools"]["package-dir"].values()}
    assert folders <= sources, f"not copied: {folders - sources}"
    assert "pyproject.toml" in sources


def test_the_dockerfile_has_a_health_check_a_data_volume_and_a_spark_variant():
    instructions = _dockerfile_instructions()
    words = [w for w, _ in instructions]
    assert "HEALTHCHECK" in words and "USER" in words
    health = next(rest for w, rest in instructions if w == "HEALTHCHECK")
    assert '"srota", "health"' in health
    assert any(w == "VOLUME" and "/app/data" in rest for w, rest in instructions)
    assert any(w == "ARG" and rest.startswith("WITH_SPARK") for w, rest in instructions)
    text = (DOCKER / "Dockerfile").read_text()
    assert "jre" in text and "[rdbms,spark]" in text and "[rdbms]" in text
    env = next(rest for w, rest in instructions if w == "ENV" and "SROTA_CONFIG" in rest)
    config = re.search(r"SROTA_CONFIG=(\S+)", env).group(1)
    assert (REPO / config).exists()
    load_config(REPO / config)


def test_dockerignore_keeps_the_context_small_but_not_what_is_copied():
    ignored = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    assert ".venv" in ignored and ".git" in ignored
    for needed in ("config", "srota", "engine", "service", "pyproject.toml", "README.md"):
        assert needed not in ignored


def test_compose_services_files_ports_and_shutdown():
    compose = _compose()
    services = compose["services"]
    assert {"kafka", "mosquitto", "producer", "srota"} <= set(services)
    for name, svc in services.items():
        build = svc.get("build")
        if build:
            assert (DOCKER / build["context"] / build["dockerfile"]).exists(), name
        for volume in svc.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                assert (DOCKER / source).exists(), f"{name}: {source}"
            else:
                assert source in compose.get("volumes", {}), f"{name}: volume {source} is not declared"
    # reachable from the host: an external Kafka listener and MQTT
    kafka = services["kafka"]
    assert any(p.startswith("9094:") for p in kafka["ports"])
    assert "EXTERNAL://localhost:9094" in kafka["environment"]["KAFKA_ADVERTISED_LISTENERS"]
    assert any(p.startswith("1883:") for p in services["mosquitto"]["ports"])

    srota = services["srota"]
    assert any(v.endswith(":/app/data") for v in srota["volumes"])
    env = srota["environment"]
    config = load_config(DOCKER / ".." / "config" / Path(env["SROTA_CONFIG"]).relative_to("config"),
                         env={k: str(v) for k, v in env.items()})
    assert config.persistence.enabled and config.persistence.database == "/app/data/srota.db"
    assert config.http.port == int(env["SROTA_HTTP_PORT"])
    assert any(p.startswith(f"{config.http.port}:") for p in srota["ports"])
    assert srota["healthcheck"]["test"] == ["CMD", "srota", "health"]
    assert parse_duration(srota["stop_grace_period"].replace("s", " sec")) > config.shutdown_timeout_ms

    # the producer replays the bundled readings into the topic the demo reads
    producer = services["producer"]
    penv = {k: str(v) for k, v in producer["environment"].items()}
    replay = load_config(REPO / penv["SROTA_CONFIG"], env=penv)
    assert Path(replay.refs["readings-file"]["file.uri"]).exists()
    assert replay.refs["readings-topic"]["topic"] == config.refs["readings"]["topic.list"]
    assert replay.refs["readings-topic"]["bootstrap.servers"] == env["KAFKA_BOOTSTRAP"]


def test_the_build_stage_compiles_the_columnar_loops_and_the_image_leaves_build_files_out():
    text = (DOCKER / "Dockerfile").read_text()
    build_stage = text.split("FROM ${PYTHON_IMAGE}\n")[0]
    assert "gcc" in build_stage and "pip wheel" in build_stage  # engine/_speedups.c goes in the wheel
    ignored = (REPO / ".dockerignore").read_text().split()
    assert "**/*.so" in ignored  # (a module built here for this machine must not reach the image)
