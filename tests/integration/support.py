"""Helpers for the service tests against real brokers (tests/integration, tests/faults).

Everything here drives the real service: :func:`running_host` starts a
:class:`service.host.ServiceHost` in the test's event loop, :class:`SrotaProcess` runs
``.venv/bin/srota run`` as a subprocess.  Kafka is read back with plain aiokafka consumers
(no group) up to each partition's high-water mark, which tansu reports reliably in fetch
responses (its ``end_offsets()`` is not).  :meth:`TopicReader.until` takes a high-water mark
only from a fetch answered after it was called: aiokafka keeps the mark of the last response,
which may predate records a process wrote just before the call.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import yaml
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from srota.service.config import HttpConfig, LimitsConfig, PersistenceConfig, ServiceConfig
from srota.service.host import ServiceHost

ROOT = Path(__file__).resolve().parents[2]
SROTA = Path(sys.executable).with_name("srota")


async def wait_until(predicate: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05,
                     what: str = "condition") -> Any:
    """Poll ``predicate`` (sync or async) until it returns something truthy; return that."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if isinstance(value, Awaitable):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(interval)


# ------------------------------------------------------------------------------------ kafka
@dataclass(frozen=True)
class Record:
    """One record read back from Kafka."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes
    headers: tuple[tuple[str, bytes], ...]

    def json(self) -> Any:
        return orjson.loads(self.value)


async def produce(bootstrap: str, topic: str, values: Iterable[bytes | tuple[bytes | None, bytes]],
                  partition: int | None = None) -> int:
    """Send values (or ``(key, value)`` pairs) in order, waiting for every acknowledgement."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    n = 0
    try:
        futures = []
        for v in values:
            key, value = v if isinstance(v, tuple) else (None, v)
            futures.append(await producer.send(topic, value, key=key, partition=partition))
            n += 1
        await asyncio.gather(*futures)
    finally:
        await producer.stop()
    return n


_FETCH_MAX_WAIT_MS = 100


class TopicReader:
    """Reads a whole topic from the beginning, and keeps reading what is added (no group)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.records: dict[int, list[Record]] = {}
        self._consumer: AIOKafkaConsumer | None = None
        self._tps: list[TopicPartition] = []

    async def __aenter__(self) -> TopicReader:
        consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False,
                                    auto_offset_reset="earliest", fetch_max_wait_ms=_FETCH_MAX_WAIT_MS)
        await consumer.start()
        self._consumer = consumer
        partitions = await wait_until(lambda: consumer.partitions_for_topic(self.topic), 10,
                                      what=f"topic {self.topic}")
        self._tps = [TopicPartition(self.topic, p) for p in sorted(partitions)]
        consumer.assign(self._tps)
        await consumer.seek_to_beginning(*self._tps)
        self.records = {tp.partition: [] for tp in self._tps}
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._consumer is not None:
            await self._consumer.stop()
            self._consumer = None

    @property
    def all(self) -> list[Record]:
        """Every record read so far, in partition order."""
        return [r for p in sorted(self.records) for r in self.records[p]]

    async def poll(self, fetched_since_ms: float = 0.0) -> bool:
        """Fetch once; True when every partition has been read up to its high-water mark, as
        known from a fetch answered at ``fetched_since_ms`` (wall clock) or later."""
        consumer = self._consumer
        assert consumer is not None
        fetched = await consumer.getmany(timeout_ms=100)
        for tp, records in fetched.items():
            self.records[tp.partition].extend(
                Record(r.partition, r.offset, r.key, r.value, tuple(r.headers or ())) for r in records)
        for tp in self._tps:
            high, answered = consumer.highwater(tp), consumer.last_poll_timestamp(tp)
            if high is None or answered is None or answered < fetched_since_ms:
                return False
            if await consumer.position(tp) < high:
                return False
        return True

    async def until(self, done: Callable[[list[Record]], bool], timeout: float = 30.0,
                    what: str = "records") -> list[Record]:
        """Read until caught up and ``done(records)``; return every record.

        Caught up means up to a high-water mark that a fetch answered after this call began
        (with a margin of the fetch's long-poll wait), so every record written before the
        call is read."""
        deadline = time.monotonic() + timeout
        fetched_since_ms = time.time() * 1000 + _FETCH_MAX_WAIT_MS
        while True:
            caught_up = await self.poll(fetched_since_ms)
            if caught_up and done(self.all):
                return self.all
            if time.monotonic() > deadline:
                detail = getattr(done, "describe", None)
                raise TimeoutError(f"{self.topic}: {sum(map(len, self.records.values()))} records after "
                                   f"{timeout}s, still waiting for {what}"
                                   + (f" ({detail(self.all)})" if detail else ""))


async def read_topic(bootstrap: str, topic: str, min_count: int = 0, timeout: float = 30.0) -> list[Record]:
    """Every record of ``topic`` (at least ``min_count``, waiting for them), in partition order."""
    async with TopicReader(bootstrap, topic) as reader:
        return await reader.until(lambda rs: len(rs) >= min_count, timeout, f"{min_count} records")


def totals_reached(inputs: list[dict[str, Any]]) -> Callable[[list[Record]], bool]:
    """For :meth:`TopicReader.until`: every key's running count has reached its input count."""
    want: dict[str, int] = {}
    for e in inputs:
        want[e["id"]] = want.get(e["id"], 0) + 1

    def seen(records: list[Record]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in records:
            e = r.json()["event"]
            counts[e["id"]] = max(counts.get(e["id"], 0), e["count"])
        return counts

    def done(records: list[Record]) -> bool:
        return seen(records) == want

    done.describe = lambda records: f"counts per key {seen(records)}, expected {want}"  # type: ignore[attr-defined]
    return done


async def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int | None]:
    """The group's committed offset per partition (None: nothing committed)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    await consumer.start()
    try:
        return {p: await consumer.committed(TopicPartition(topic, p)) for p in range(partitions)}
    finally:
        await consumer.stop()


def kafka_source(broker: Any, topic: str, group: str, mapping: str = "@map(type='json')", **extra: str) -> str:
    """A ``@source(type='kafka', ...)`` annotation with the fast group settings of the fixtures."""
    options = {"topic.list": topic, "group.id": group, "bootstrap.servers": broker.bootstrap_servers,
               "optional.configuration": broker.fast_group, "poll.timeout": "100", **extra}
    return "@source(type='kafka', " + ", ".join(f"{k}='{v}'" for k, v in options.items()) + f", {mapping})"


# One Kafka record per event (keys, offsets and counts in these tests are per event): the json
# sink's Siddhi default writes a chunk of events as one array message instead.
PER_EVENT_JSON = "@map(type='json', event.grouping.enabled='false')"


def kafka_sink(broker: Any, topic: str, mapping: str = PER_EVENT_JSON, **extra: str) -> str:
    options = {"topic": topic, "bootstrap.servers": broker.bootstrap_servers, **extra}
    return "@sink(type='kafka', " + ", ".join(f"{k}='{v}'" for k, v in options.items()) + f", {mapping})"


# ------------------------------------------------------------------------------------ the host
def config(tmp_path: Path | None = None, *, persistence: bool = False, interval_ms: int = 60_000,
           sink_buffer: int = 10_000, max_payload_bytes: int = 1_048_576, http: bool = False,
           shutdown_timeout_ms: int = 20_000, refs: dict[str, dict[str, str]] | None = None,
           **http_options: Any) -> ServiceConfig:
    """A service config for in-process hosts (admin off unless ``http``; port 0)."""
    return ServiceConfig(
        refs=refs or {},
        http=HttpConfig(enabled=http, port=0, **http_options),
        persistence=PersistenceConfig(enabled=persistence, database=str((tmp_path or Path(".")) / "state.db"),
                                      interval_ms=interval_ms, revisions=3),
        limits=LimitsConfig(max_payload_bytes=max_payload_bytes, sink_buffer=sink_buffer),
        shutdown_timeout_ms=shutdown_timeout_ms,
    )


@contextlib.asynccontextmanager
async def running_host(cfg: ServiceConfig, *apps: str, ready_timeout: float = 30.0) -> AsyncIterator[ServiceHost]:
    """A started :class:`ServiceHost` whose sources are subscribed; stopped on exit."""
    host = ServiceHost(cfg, app_texts=list(apps))
    await host.start()
    try:
        await wait_until(host.is_ready, ready_timeout, what="the service to be ready")
        yield host
    finally:
        await host.stop()


# ------------------------------------------------------------------------------------ processes
class SrotaProcess:
    """``srota run APP --config CONFIG`` as a subprocess, with its admin port for readiness."""

    def __init__(self, workdir: Path, app_text: str, settings: dict[str, Any], port: int, name: str = "srota") -> None:
        self.workdir = workdir
        self.port = port
        self.app = workdir / f"{name}.siddhi"
        self.app.write_text(app_text, encoding="utf-8")
        self.config = workdir / f"{name}.yaml"
        settings = {"http": {"host": "127.0.0.1", "port": port}, "logging": {"format": "json", "level": "info"},
                    **settings}
        self.config.write_text(yaml.safe_dump(settings), encoding="utf-8")
        self.log_path = workdir / f"{name}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.runs = 0

    def start(self) -> None:
        self.runs += 1
        with open(self.log_path, "ab") as log:
            log.write(f"--- run {self.runs}\n".encode())
            log.flush()
            self.proc = subprocess.Popen([str(SROTA), "run", str(self.app), "--config", str(self.config)],
                                         cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"})

    async def wait_ready(self, timeout: float = 60.0) -> None:
        async def ready() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"srota exited with {self.proc.returncode}:\n{self.log()}")
            try:
                async with aiohttp.ClientSession() as s, \
                        s.get(f"http://127.0.0.1:{self.port}/ready", timeout=aiohttp.ClientTimeout(total=1)) as r:
                    return r.status == 200
            except (TimeoutError, aiohttp.ClientError):
                return False

        await wait_until(ready, timeout, interval=0.1, what="srota /ready")

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    async def wait_exit(self, timeout: float = 30.0) -> int:
        assert self.proc is not None
        proc = self.proc
        await wait_until(lambda: proc.poll() is not None, timeout, what="srota to exit")
        return int(proc.returncode)

    def kill(self) -> None:
        """SIGKILL (no shutdown at all) and reap."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        """Cleanup: SIGTERM, then SIGKILL if it does not exit."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def snapshot_consumed(database: Path, app: str) -> int:
    """How many records the newest snapshot of ``app`` includes (the sum of its next offsets)."""
    if not database.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(database, timeout=1)) as db:
            row = db.execute("SELECT COALESCE(SUM(next_offset), 0) FROM srota_offsets WHERE app = ? AND revision = "
                             "(SELECT MAX(revision) FROM srota_snapshots WHERE app = ?)", (app, app)).fetchone()
            return int(row[0])
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0


def snapshot_revisions(database: Path, app: str) -> int:
    """The newest snapshot revision saved for ``app`` (0 before the first)."""
    if not database.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(database, timeout=1)) as db:
            return int(db.execute("SELECT COALESCE(MAX(revision), 0) FROM srota_snapshots WHERE app = ?", (app,)).fetchone()[0])
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0


# ------------------------------------------------------------------------------------ checks
def check_running_totals(outputs: list[dict[str, Any]], inputs: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Check the outputs of ``select id, sum(n) as total, count() as count group by id``.

    Siddhi emits one row per key per chunk (the last), so which running totals appear depends
    on how the input was chunked, and replays after a failure repeat some.  What must hold
    whatever the chunking, if the state counted every input exactly once: each output
    ``(total, count)`` of a key is the sum of that key's first ``count`` inputs (an input
    counted twice or skipped breaks this for every later output of the key), and the last
    output of each key (the largest count) covers all of its inputs.  Returns the final
    ``(total, count)`` per key.
    """
    prefix: dict[str, dict[int, int]] = {}
    for e in inputs:
        sums = prefix.setdefault(e["id"], {0: 0})
        sums[len(sums)] = sums[len(sums) - 1] + e["n"]
    final: dict[str, tuple[int, int]] = {}
    for o in outputs:
        sums = prefix.get(o["id"])
        assert sums is not None, f"output for an unknown key: {o}"
        assert o["count"] in sums and sums[o["count"]] == o["total"], \
            f"{o['id']}: total {o['total']} after {o['count']} inputs, expected {sums.get(o['count'])}"
        if o["count"] >= final.get(o["id"], (0, 0))[1]:
            final[o["id"]] = (o["total"], o["count"])
    expected = {k: (sums[len(sums) - 1], len(sums) - 1) for k, sums in prefix.items()}
    assert final == expected, f"final state {final} != {expected}"
    return final


# ------------------------------------------------------------------------------------ network
class TcpProxy:
    """A loopback TCP proxy that can cut every connection and refuse new ones (an outage)."""

    def __init__(self, target_port: int, port: int) -> None:
        self.target_port = target_port
        self.port = port
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.connections = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port, reuse_address=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        self.connections += 1
        self._writers.update((writer, up_writer))

        async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            try:
                while data := await r.read(65536):
                    w.write(data)
                    await w.drain()
            except (OSError, asyncio.CancelledError):
                pass
            finally:
                w.close()
                self._writers.discard(w)

        with contextlib.suppress(asyncio.CancelledError):  # cancelled when the test's loop ends
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def cut(self) -> None:
        """Refuse new connections and reset the open ones."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for w in list(self._writers):
            with contextlib.suppress(Exception):
                w.transport.abort()
        self._writers.clear()
        if server is not None:
            await server.wait_closed()

    async def restore(self) -> None:
        await self.start()

    async def close(self) -> None:
        await self.cut()


# ------------------------------------------------------------------------------------ a test sink
class Gate:
    """Controls a ``testGated`` sink: ``open`` lets publishes through; ``published`` collects them."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.open.set()
        self.published: list[Any] = []
        self.failing: BaseException | None = None
        self.waiting = 0


GATES: dict[str, Gate] = {}


def gate(name: str) -> Gate:
    """The gate of the ``testGated`` sinks with ``gate='name'`` (created on first use)."""
    return GATES.setdefault(name, Gate())


def _register_gated_sink() -> None:
    from collections.abc import Mapping, Sequence

    from srota.connectors.base import ConnectionUnavailableError, Sink
    from srota.engine.registry import Kind, Param, extension
    from srota.grammar.model import AttrType

    params = (Param("gate", (AttrType.STRING,), doc="The Gate's name."),
              Param("topic", (AttrType.STRING,), optional=True, default=None, dynamic=True,
                    doc="Accepted and ignored (so templated topics can be tried)."))

    @extension(Kind.SINK, "testGated", params=params, doc="A sink the test holds and releases (tests only).")
    class GatedSink(Sink):
        """Publishes into its :class:`Gate` while the gate is open; waits while it is closed;
        raises :class:`ConnectionUnavailableError` while ``gate.failing`` is set."""

        type_name = "testGated"
        PARAMS = params

        async def connect(self) -> None:
            pass

        async def publish(self, items: Sequence[tuple[Any, Mapping[str, Any]]]) -> None:
            g = gate(self.options["gate"])
            g.waiting += 1
            try:
                await g.open.wait()
            finally:
                g.waiting -= 1
            if g.failing is not None:
                raise ConnectionUnavailableError(f"testGated sink: {g.failing}")
            g.published.extend(payload for payload, _props in items)

        async def close(self) -> None:
            pass


_register_gated_sink()
