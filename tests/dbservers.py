"""Real PostgreSQL 15 and MariaDB 10.11 servers for the tests, on free loopback ports.

Each server is started once per test run (the session fixtures in ``tests/conftest.py``) in a
temporary data directory, with password authentication (user ``srota``, password ``srota``) so
that a wrong password is a real refusal, and stopped at the end.  A test gets a fresh, empty
database of its own (``PostgresServer.create_database``).

PostgreSQL refuses to run as root, so when the tests run as root the server runs as the
``postgres`` user (``runuser -u postgres``); MariaDB is told ``--user=mysql`` likewise.  The
binaries come from Debian's ``postgresql-15`` and ``mariadb-server`` packages (``make deps``);
when they are absent the fixtures skip with that reason.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

USER = "srota"
PASSWORD = "srota"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout: float, proc: subprocess.Popen[bytes] | None, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with code {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s: {log.read_text()[-2000:]}")


def _as_user(user: str, argv: list[str]) -> list[str]:
    """Run ``argv`` as ``user`` when we are root (the servers refuse or misbehave as root)."""
    if os.geteuid() == 0 and shutil.which("runuser"):
        return ["runuser", "-u", user, "--", *argv]
    return argv


def _hand_to(user: str, path: Path) -> None:
    if os.geteuid() == 0:
        shutil.chown(path, user, user if user != "postgres" else None)
        for parent in [path, *path.parents]:
            if parent == Path("/") or str(parent) == "/tmp":
                break
            parent.chmod(parent.stat().st_mode | 0o711)  # let the server user traverse


# ------------------------------------------------------------------------------------ PostgreSQL
def postgres_bin() -> Path | None:
    """The directory of PostgreSQL 15's server programs, or None when it is not installed."""
    for candidate in (Path("/usr/lib/postgresql/15/bin"), *sorted(Path("/usr/lib/postgresql").glob("*/bin"))):
        if (candidate / "pg_ctl").is_file() and (candidate / "initdb").is_file():
            return candidate
    found = shutil.which("pg_ctl")
    return Path(found).resolve().parent if found else None


class PostgresServer:
    """One PostgreSQL server in ``workdir``; ``url(db)`` gives a ``postgresql://`` URL.

    For speed the tests' server does not wait for its disk (``fsync``, ``synchronous_commit``
    off): a crash of the server (``stop("immediate")``) then loses transactions it had
    acknowledged.  ``durable=True`` keeps PostgreSQL's defaults, for tests that crash it
    (the chaos soak): a store may rely on a commit, as it does on a production server.
    """

    def __init__(self, workdir: Path, bindir: Path, durable: bool = False) -> None:
        self.workdir = workdir
        self.bindir = bindir
        self.durable = durable
        self.datadir = workdir / "data"
        self.log = workdir / "server.log"
        self.port = _free_port()
        self.host = "127.0.0.1"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        _hand_to("postgres", self.workdir)
        if not self.datadir.exists():
            pwfile = self.workdir / "pw"
            pwfile.write_text(PASSWORD + "\n")
            _hand_to("postgres", pwfile)
            subprocess.run(_as_user("postgres", [str(self.bindir / "initdb"), "-D", str(self.datadir),
                                                 "-U", USER, "--pwfile", str(pwfile), "-A", "scram-sha-256",
                                                 "-E", "UTF8", "--locale", "C", "--no-sync"]),
                           check=True, capture_output=True)
        self.resume()

    def resume(self) -> None:
        """Start the (already initialised) server again on the same port."""
        options = f"-p {self.port} -k {self.workdir} -c listen_addresses=127.0.0.1 -c max_connections=200"
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        subprocess.run(_as_user("postgres", [str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-o", options,
                                             "-l", str(self.log), "-w", "-t", "60", "start"]),
                       check=True, capture_output=True)
        _wait_port(self.port, 30, None, self.log)

    def stop(self, mode: str = "fast") -> None:
        subprocess.run(_as_user("postgres", [str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-m", mode,
                                             "-w", "stop"]), capture_output=True)

    def url(self, database: str = "postgres", user: str = USER, password: str = PASSWORD) -> str:
        return f"postgresql://{user}:{password}@{self.host}:{self.port}/{database}"

    def jdbc_url(self, database: str) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{database}"

    def create_database(self) -> str:
        """A fresh empty database; returns its name."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name


# ------------------------------------------------------------------------------------ MariaDB
def mariadb_bin() -> tuple[Path, Path] | None:
    """``(mariadbd, mariadb-install-db)``, or None when MariaDB is not installed."""
    server = shutil.which("mariadbd") or ("/usr/sbin/mariadbd" if Path("/usr/sbin/mariadbd").is_file() else None)
    install = shutil.which("mariadb-install-db")
    if server and install:
        return Path(server), Path(install)
    return None


class MariaDBServer:
    """One MariaDB server in ``workdir``; ``url(db)`` gives a ``mysql://`` URL."""

    def __init__(self, workdir: Path, server: Path, install: Path) -> None:
        self.workdir = workdir
        self.server = server
        self.install = install
        self.datadir = workdir / "data"
        self.socket = workdir / "mysqld.sock"
        self.log = workdir / "server.log"
        self.port = _free_port()
        self.host = "127.0.0.1"
        self.proc: subprocess.Popen[bytes] | None = None
        self._user = "mysql" if os.geteuid() == 0 else None

    def _argv(self) -> list[str]:
        argv = [str(self.server), "--no-defaults", f"--datadir={self.datadir}", f"--port={self.port}",
                "--bind-address=127.0.0.1", f"--socket={self.socket}", f"--pid-file={self.workdir}/m.pid",
                "--skip-log-bin", "--innodb-flush-log-at-trx-commit=0", "--innodb-buffer-pool-size=64M",
                "--skip-name-resolve", "--max-connections=300", f"--log-error={self.log}"]
        if self._user:
            argv.append(f"--user={self._user}")
        return argv

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self._user:
            _hand_to(self._user, self.workdir)
        if not self.datadir.exists():
            argv = [str(self.install), "--no-defaults", f"--datadir={self.datadir}",
                    "--auth-root-authentication-method=normal", "--skip-test-db"]
            if self._user:
                argv.append(f"--user={self._user}")
            subprocess.run(argv, check=True, capture_output=True)
            self.resume()
            import pymysql

            conn = pymysql.connect(unix_socket=str(self.socket), user="root", autocommit=True)
            with conn.cursor() as cur:
                cur.execute(f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'")
                cur.execute(f"GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'%' WITH GRANT OPTION")
            conn.close()
        else:
            self.resume()

    def resume(self) -> None:
        """Start the (already initialised) server again on the same port."""
        self.proc = subprocess.Popen(self._argv(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_port(self.port, 60, self.proc, self.log)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None

    def url(self, database: str = "", user: str = USER, password: str = PASSWORD) -> str:
        return f"mysql://{user}:{password}@{self.host}:{self.port}/{database}"

    def jdbc_url(self, database: str) -> str:
        return f"jdbc:mariadb://{self.host}:{self.port}/{database}"

    def create_database(self) -> str:
        import pymysql

        name = "t_" + uuid.uuid4().hex[:12]
        conn = pymysql.connect(host=self.host, port=self.port, user=USER, password=PASSWORD, autocommit=True)
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
        conn.close()
        return name


@contextlib.contextmanager
def running_postgres(prefix: str = "srota-pg-") -> Iterator[PostgresServer]:
    """A PostgreSQL server in a fresh data directory, stopped and removed after (skips the
    test when the binaries are absent)."""
    bindir = postgres_bin()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries are not installed (run `make deps`: postgresql-15)")
    server = PostgresServer(Path(tempfile.mkdtemp(prefix=prefix)), bindir)
    server.start()
    try:
        yield server
    finally:
        server.stop("immediate")
        shutil.rmtree(server.workdir, ignore_errors=True)


@contextlib.contextmanager
def running_mariadb(prefix: str = "srota-maria-") -> Iterator[MariaDBServer]:
    """A MariaDB server in a fresh data directory, stopped and removed after (skips the test
    when the binaries are absent)."""
    found = mariadb_bin()
    if found is None:
        pytest.skip("MariaDB server binaries are not installed (run `make deps`: mariadb-server)")
    server = MariaDBServer(Path(tempfile.mkdtemp(prefix=prefix)), *found)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.workdir, ignore_errors=True)
