"""The chaos soak of issue 43: the whole deployment under seeded faults, every number checked.

:func:`run` starts the broker (behind a proxy, see tests/soak/cluster.py), Mosquitto,
PostgreSQL and three ``srota run`` workers of one consumer group running tests/soak/app.siddhi
(its MQTT QoS 1 source runs on the worker owning partition 0 and writes into the app's input
topic); a producer writes keyed events to Kafka and a publisher to MQTT, each event with a
unique id and a per-key sequence number; the chaos schedule (tests/soak/chaos.py) injects its
faults; then the producers stop, the workers drain, and :mod:`tests.soak.checks` checks
everything against what was sent and what the input topic holds.
"""
from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import random
import shutil
import string
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from srota.service.host import HEAP_TRIM_INTERVAL_S

from tests.soak import chaos as chaos_mod
from tests.soak.checks import Report, attribute_duplicates, check_all, parity
from tests.soak.cluster import SROTA, Broker, Worker, mosquitto, postgres

HERE = Path(__file__).resolve().parent
PARTITIONS = 6
WORKERS = 3
SHARD = "soak"
#: Seconds the input topic must stay unchanged before draining stops waiting for events sent
#: that did not reach it (they are counted as lost by the checks, not waited for forever).
SETTLE_S = 20.0


@dataclass
class Options:
    """A run's settings (``python -m tests.soak --help``)."""

    seconds: float = 600.0
    seed: int = 1
    rate: float = 40.0          # Kafka events a second
    mqtt_rate: float = 5.0      # MQTT messages a second
    keys: int = 24
    mqtt_keys: int = 4
    warmup: float = 20.0
    gap: tuple[float, float] = (10.0, 20.0)
    kinds: tuple[str, ...] = chaos_mod.KINDS
    drain_timeout: float = 240.0
    #: Wait for the workers to close the last minute and compare it too (False, the smoke: up
    #: to a minute shorter, roll-up rows of minutes still open are left out and noted).
    wait_last_minute: bool = True
    workdir: Path | None = None
    keep: bool = True


@dataclass
class Sent:
    """What the producers had acknowledged, in order."""

    kafka: list[dict[str, Any]] = field(default_factory=list)
    mqtt: list[dict[str, Any]] = field(default_factory=list)
    kafka_retries: int = 0
    mqtt_retries: int = 0
    #: Highest acknowledged seq per Kafka key (for recovery times).
    last_seq: dict[str, int] = field(default_factory=dict)


class Topic:
    """Reads one topic from the beginning through the outages (plain consumer, no group).

    A reader at the tail of a partition that several producers write at once can miss a record
    on tansu 0.6.0 (the soak's broker): a produce raises the partition's high-water mark before
    its batch is stored, so a fetch meanwhile may see a later producer's batch, stored first,
    and move past the earlier one for good (tests/soak/test_reader.py).  The checks
    therefore read each topic again from the beginning once the run is over (:meth:`reread`),
    and count what the tail missed apart.
    """

    def __init__(self, bootstrap: str, name: str) -> None:
        self.bootstrap = bootstrap
        self.name = name
        self.records: dict[int, list[dict[str, Any]]] = {}
        #: When the reader saw each record (monotonic), parallel to :attr:`records`.
        self.seen_at: dict[int, list[float]] = {}
        #: Each record's offset in its partition, parallel to :attr:`records`.
        self.offsets: dict[int, list[int]] = {}
        self.on_event: Callable[[dict[str, Any]], None] | None = None
        #: Records the reader at the tail missed and :meth:`reread` found.
        self.missed_at_tail = 0
        self._consumer: Any = None
        self._tps: list[Any] = []
        self._lock = asyncio.Lock()  # the read loop and the drain both poll

    async def start(self, partitions: int) -> None:
        from aiokafka import AIOKafkaConsumer, TopicPartition

        self._consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False,
                                          auto_offset_reset="earliest", fetch_max_wait_ms=200)
        await self._consumer.start()
        self._tps = [TopicPartition(self.name, p) for p in range(partitions)]
        self._consumer.assign(self._tps)
        await self._consumer.seek_to_beginning(*self._tps)
        self.records = {p: [] for p in range(partitions)}
        self.seen_at = {p: [] for p in range(partitions)}
        self.offsets = {p: [] for p in range(partitions)}

    async def poll(self) -> bool:
        """Fetch once; True when every partition has been read up to its high-water mark."""
        async with self._lock:
            fetched = await self._consumer.getmany(timeout_ms=200)
            now = time.monotonic()
            for tp, records in fetched.items():
                for r in records:
                    self._add(tp.partition, r.offset, r.value, now)
            for tp in self._tps:
                high = self._consumer.highwater(tp)
                if high is None or await self._consumer.position(tp) < high:
                    return False
            return True

    def _add(self, partition: int, offset: int, value: bytes, now: float) -> None:
        body = orjson.loads(value)
        event = body["event"] if isinstance(body, dict) and "event" in body else body
        self.records[partition].append(event)
        self.seen_at[partition].append(now)
        self.offsets[partition].append(offset)
        if self.on_event is not None:
            self.on_event(event)

    async def reread(self, timeout_s: float = 60.0) -> int:
        """Read every partition again from the beginning, with a fresh consumer, up to its end
        now; add the records the tail has not read (seen now) and go on at the tail from there.
        Returns how many records the tail had gone past without seeing them."""
        from aiokafka import AIOKafkaConsumer

        fresh = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False,
                                 auto_offset_reset="earliest", fetch_max_wait_ms=200)
        await fresh.start()
        try:
            fresh.assign(self._tps)
            await fresh.seek_to_beginning(*self._tps)
            ends = await fresh.end_offsets(self._tps)
            found: dict[int, list[tuple[int, bytes]]] = {tp.partition: [] for tp in self._tps}
            deadline = time.monotonic() + timeout_s
            quiet_since = time.monotonic()
            # Up to the end, or until nothing more comes for 2 s (a produce cut off by a reset
            # connection may have raised the end past the last batch stored).
            while time.monotonic() - quiet_since < 2.0:
                if all([await fresh.position(tp) >= ends[tp] for tp in self._tps]):
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(f"re-reading {self.name} took more than {timeout_s:.0f}s")
                fetched = await fresh.getmany(timeout_ms=500)
                if any(fetched.values()):
                    quiet_since = time.monotonic()
                for tp, records in fetched.items():
                    found[tp.partition].extend((r.offset, r.value) for r in records if r.offset < ends[tp])
        finally:
            await fresh.stop()
        async with self._lock:
            missed = 0
            now = time.monotonic()
            for tp in self._tps:
                p = tp.partition
                have = set(self.offsets[p])
                new = [(off, value) for off, value in found[p] if off not in have]
                tail = await self._consumer.position(tp)
                missed += sum(1 for off, _v in new if off < tail)  # (past the tail: not read yet)
                if new:
                    seen, times = list(self.offsets[p]), list(self.seen_at[p])  # (in offset order)
                    for off, value in new:
                        # A record the tail went past was written about when the next one the
                        # tail saw was: that time places its repeats (attribute_duplicates).
                        after = bisect.bisect_right(seen, off)
                        self._add(p, off, value, times[after] if off < tail and after < len(times) else now)
                    order = sorted(range(len(self.offsets[p])), key=self.offsets[p].__getitem__)
                    self.records[p] = [self.records[p][i] for i in order]
                    self.seen_at[p] = [self.seen_at[p][i] for i in order]
                    self.offsets[p] = [self.offsets[p][i] for i in order]
                if tail < ends[tp]:
                    self._consumer.seek(tp, ends[tp])
            self.missed_at_tail += missed
            return missed

    def dump(self, path: Path) -> None:
        """Write every record read, with its partition and offset, one JSON object a line."""
        with path.open("wb") as out:
            for p in sorted(self.records):
                for off, e in zip(self.offsets[p], self.records[p], strict=True):
                    out.write(orjson.dumps({"partition": p, "offset": off, "event": e}) + b"\n")

    @property
    def all(self) -> list[dict[str, Any]]:
        return [e for p in sorted(self.records) for e in self.records[p]]

    @property
    def timed(self) -> list[tuple[float, dict[str, Any]]]:
        """Every record with when it was seen, in the order seen."""
        return sorted(((t, e) for p in sorted(self.records) for t, e in zip(self.seen_at[p], self.records[p],
                                                                               strict=True)), key=lambda x: x[0])

    async def stop(self) -> None:
        if self._consumer is not None:
            await self._consumer.stop()


class Soak:
    """One run: its processes, producers, readers, faults and results."""

    def __init__(self, opts: Options) -> None:
        self.opts = opts
        self.dir = opts.workdir or Path(tempfile.mkdtemp(prefix="srota-soak-"))
        self.dir.mkdir(parents=True, exist_ok=True)
        self.broker = Broker(self.dir)
        self.mqtt = mosquitto(self.dir / "mosquitto")
        self.pg = postgres(self.dir / "postgres")
        self.workers: list[Worker] = []
        self.sent = Sent()
        self.faults: list[chaos_mod.Fault] = []
        self.jobs: list[tuple[str, subprocess.Popen[bytes], Path]] = []
        self.job_results: list[tuple[str, int, str]] = []
        self.topics: dict[str, Topic] = {}
        self.counts_last: dict[str, int] = {}
        self.processed: set[str] = set()
        self.tag = uuid.uuid4().hex[:6]
        self.t0 = 0.0
        self.producing = True
        #: Purge jobs started, and when (the seconds they may delete are left out of the parity).
        self.purges: dict[str, int] = {}
        #: The shard id each chaos backfill writes (by job name): one backfill of a shard at a time.
        self.job_shards: dict[str, str] = {}
        self.log_lines: list[str] = []

    # ------------------------------------------------------------------------------- set-up
    def say(self, msg: str) -> None:
        line = f"[soak {time.strftime('%H:%M:%S')}] {msg}"
        self.log_lines.append(line)
        print(line, flush=True)

    def app_text(self, template: str, jdbc: str) -> str:
        return string.Template((HERE / template).read_text()).substitute(
            topic=self.topic_names["in"], group=f"soak-{self.tag}", bootstrap=self.broker.bootstrap_servers,
            fast_group=self.broker.fast_group, counts=self.topic_names["counts"],
            windows=self.topic_names["windows"], matches=self.topic_names["matches"],
            joined=self.topic_names["joined"], jdbc=jdbc, mqtt_url=self.mqtt.url,
            mqtt_topic=f"soak/{self.tag}/in", mqtt_client=f"soak-{self.tag}")

    def jdbc(self, db: str) -> str:
        return f"jdbc:postgresql://127.0.0.1:{self.pg.port}/{db}"

    def pg_url(self, db: str) -> str:
        return str(self.pg.url(db))

    async def start(self) -> None:
        self.say(f"logs and data in {self.dir}")
        await asyncio.to_thread(self.pg.start)
        self.live_db, self.parity_db = self.pg.create_database(), self.pg.create_database()
        self.scratch_db = self.pg.create_database()
        self.mqtt.start()
        await self.broker.start()
        self.topic_names = {"in": f"in-{self.tag}", "counts": f"counts-{self.tag}", "windows": f"windows-{self.tag}",
                            "matches": f"matches-{self.tag}", "joined": f"joined-{self.tag}"}
        for name in self.topic_names.values():
            await self.broker.create_topic(name, PARTITIONS if name.startswith("in-") else 3)
        self.app_path = self.dir / "soak.siddhi"
        self.app_path.write_text(self.app_text("app.siddhi", self.jdbc(self.live_db)))
        # The chaos backfills write a shard of their own in a database of their own: each live
        # shard's lock is held by the worker that owns the partition (a second writer is refused
        # by design), and rows of another shard in the live database would add to the parity.
        self.scratch_app = self.dir / "scratch.siddhi"
        self.scratch_app.write_text(self.app_text("app.siddhi", self.jdbc(self.scratch_db)))
        self.parity_app = self.dir / "parity.siddhi"
        self.parity_app.write_text(self.app_text("app.siddhi", self.jdbc(self.parity_db)))
        settings = {"shard.id": SHARD, "shutdown": {"timeout": "20 sec"},
                    "scaleout": {"partitioned": True, "checkpoint_interval": "1 sec",
                                 "state_topic": f"state-{self.tag}"}}
        self.workers = [Worker(self.dir, f"w{i}", [self.app_path], settings) for i in range(WORKERS)]
        for w in self.workers:
            w.start()
        for w in self.workers:
            await w.wait_ready()
        for key, name in self.topic_names.items():
            topic = Topic(self.broker.bootstrap_servers, name)
            await topic.start(PARTITIONS if key == "in" else 3)
            self.topics[key] = topic
        self.topics["counts"].on_event = self._on_count
        self.topics["windows"].on_event = lambda e: self.processed.add(e["uid"])
        self.say(f"up: tansu :{self.broker.port} (proxy :{self.broker.proxy.port}), mosquitto :{self.mqtt.port}, "
                 f"postgres :{self.pg.port}, workers " + ", ".join(f"{w.name} :{w.port}" for w in self.workers))

    def _on_count(self, e: dict[str, Any]) -> None:
        if e["last"] > self.counts_last.get(e["id"], -1):
            self.counts_last[e["id"]] = e["last"]

    # ------------------------------------------------------------------------------- producers
    async def produce_kafka(self) -> None:
        from aiokafka import AIOKafkaProducer
        from aiokafka.errors import KafkaError

        rng = random.Random(self.opts.seed * 7919 + 1)
        keys = [f"k{i}" for i in range(self.opts.keys)]
        seqs = dict.fromkeys(keys, 0)
        producer = AIOKafkaProducer(bootstrap_servers=self.broker.bootstrap_servers, acks="all",
                                    request_timeout_ms=5000, retry_backoff_ms=200)
        await producer.start()
        per_tick = max(1, round(self.opts.rate / 10))
        i = 0
        try:
            next_tick = time.monotonic()
            while self.producing:
                batch = []
                for _ in range(per_tick):
                    key = keys[i % len(keys)]
                    i += 1
                    e: dict[str, Any] = {"id": key, "seq": seqs[key], "n": rng.randrange(101), "uid": f"{key}:{seqs[key]}",
                         "ts": int(time.time() * 1000)}
                    seqs[key] += 1
                    batch.append(e)
                # A key is at most once a tick and a tick waits for its acknowledgements, so a
                # retried send cannot overtake a later record of its key.
                pending = batch
                while pending:
                    futures = []
                    for e in pending:
                        try:
                            futures.append(await producer.send(self.topic_names["in"], orjson.dumps({"event": e}),
                                                               key=e["id"].encode()))
                        except KafkaError:
                            futures.append(None)
                    results = await asyncio.gather(*[f for f in futures if f is not None], return_exceptions=True)
                    it = iter(results)
                    failed = []
                    for e, f in zip(pending, futures, strict=True):
                        r = next(it) if f is not None else None
                        if f is None or isinstance(r, BaseException):
                            failed.append(e)
                        else:
                            self.sent.kafka.append(e)
                            self.sent.last_seq[e["id"]] = e["seq"]
                    if failed:
                        self.sent.kafka_retries += len(failed)
                        await asyncio.sleep(0.5)
                    pending = failed
                next_tick += 0.1
                await asyncio.sleep(max(0.0, next_tick - time.monotonic()))
        finally:
            await producer.stop()

    async def publish_mqtt(self) -> None:
        import aiomqtt

        rng = random.Random(self.opts.seed * 104729 + 3)
        keys = [f"m{i}" for i in range(self.opts.mqtt_keys)]
        seqs = dict.fromkeys(keys, 0)
        topic = f"soak/{self.tag}/in"
        i = 0
        pending: dict[str, Any] | None = None
        while self.producing or pending is not None:
            try:
                async with aiomqtt.Client(self.mqtt.host, self.mqtt.port, identifier=f"soak-pub-{self.tag}",
                                          clean_session=False, timeout=5) as client:
                    while self.producing or pending is not None:
                        if pending is None:
                            key = keys[i % len(keys)]
                            i += 1
                            pending = {"id": key, "seq": seqs[key], "n": rng.randrange(101),
                                       "uid": f"{key}:{seqs[key]}", "ts": int(time.time() * 1000)}
                            seqs[key] += 1
                        await asyncio.wait_for(client.publish(topic, orjson.dumps({"event": pending}), qos=1), 5)
                        self.sent.mqtt.append(pending)
                        pending = None
                        await asyncio.sleep(1 / self.opts.mqtt_rate)
            except (aiomqtt.MqttError, TimeoutError, OSError):
                self.sent.mqtt_retries += 1
                await asyncio.sleep(0.5)

    # ------------------------------------------------------------------------------- readers
    async def read_loop(self) -> None:
        while True:
            for t in self.topics.values():
                with contextlib.suppress(Exception):
                    await t.poll()
            await asyncio.sleep(0.1)

    async def monitor(self) -> None:
        """Recovery times and warmed-up RSS of each worker."""
        while True:
            now = time.monotonic()
            for f in self.faults:
                if f.ended and f.recovery is None:
                    target = f.extra.setdefault("target", dict(self.sent.last_seq))
                    if all(self.counts_last.get(k, -1) >= s for k, s in target.items()):
                        f.recovery = now - f.ended
            for w in self.workers:
                if w.warm_rss is None and w.alive and now - w.started_at > self.opts.warmup:
                    w.warm_rss = w.rss_kb()
            for name, proc, log in list(self.jobs):
                if proc.poll() is not None:
                    self.jobs.remove((name, proc, log))
                    if name in self.purges:
                        # A purge deletes what is older than the retention when it runs, up to its end.
                        self.purges[name] = int(time.time() * 1000)
                    tail = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
                    self.job_results.append((name, proc.returncode, tail[0] if tail else ""))
                    self.say(f"{name} finished with exit code {proc.returncode}: {tail[0] if tail else ''}")
            await asyncio.sleep(0.5)

    # ------------------------------------------------------------------------------- Spark jobs
    def _spark_job(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = self.dir / f"{name}.log"
        with open(log, "wb") as f:
            proc = subprocess.Popen([str(SROTA), "aggregation", *argv], stdout=f, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
        self.jobs.append((name, proc, log))
        return proc

    async def start_backfill(self, partition: int) -> str:
        """Backfill partition ``partition``'s records of a past minute the workers have
        processed wholly, with Spark, into the scratch database on the same PostgreSQL (its
        outages hit it too) while the workers write."""
        shard = f"backfill-p{partition}"
        if any(self.job_shards.get(name) == shard for name, _proc, _log in self.jobs):
            # One writer per shard: a second backfill of it at once is refused (by design).
            return f"skipped: a backfill of p{partition} is still running"
        records = list(self.topics["in"].records.get(partition, []))
        now_ms = int(time.time() * 1000)
        minute = (now_ms - 70_000) // 60_000 * 60_000
        while minute >= self.start_ms:
            inside = [e for e in records if minute <= e["ts"] < minute + 60_000]
            # Whole: every record of the minute (and before) has been processed by a worker.
            if inside and all(e["uid"] in self.processed for e in records if e["ts"] < minute + 60_000):
                break
            minute -= 60_000
        else:
            return "skipped: no past minute processed wholly yet"
        path = self.dir / f"backfill-p{partition}-{minute}.json"
        path.write_bytes(b"\n".join(orjson.dumps(e) for e in records))
        name = f"backfill-{len(self.jobs) + len(self.job_results)}"
        self._spark_job(name, ["backfill", str(self.scratch_app), "--aggregation", "Agg", "--input", str(path),
                               "--from", str(minute), "--to", str(minute + 60_000), "--shard-id", shard,
                               "--master", "local[1]"])
        self.job_shards[name] = shard
        return f"{name}: p{partition} minute {minute}"

    async def start_purge(self) -> str:
        if any(name.startswith("purge-") for name, _proc, _log in self.jobs):
            # Purges write under one shard id ('srota-purge'): a second at once is refused.
            return "skipped: a purge is still running"
        name = f"purge-{len(self.jobs) + len(self.job_results)}"
        self.purges[name] = int(time.time() * 1000)
        self._spark_job(name, ["purge", str(self.app_path), "--aggregation", "Agg", "--master", "local[1]"])
        return name

    # ------------------------------------------------------------------------------- the run
    async def run(self) -> Report:
        opts = self.opts
        self.faults = chaos_mod.schedule(opts.seed, opts.seconds, opts.warmup, 15.0, opts.gap, WORKERS, opts.kinds)
        self.say(f"seed {opts.seed}, {opts.seconds:.0f}s, {len(self.faults)} faults scheduled:")
        for f in self.faults:
            self.say("  " + f.describe())
        producers: list[asyncio.Task[None]] = []
        background: list[asyncio.Task[None]] = []
        try:
            await self.start()
            background = [asyncio.create_task(self.read_loop()), asyncio.create_task(self.monitor())]
            self.t0 = time.monotonic()
            self.start_ms = int(time.time() * 1000)
            producers = [asyncio.create_task(self.produce_kafka()), asyncio.create_task(self.publish_mqtt())]
            for f in self.faults:
                await asyncio.sleep(max(0.0, self.t0 + f.at - time.monotonic()))
                self.say("fault: " + f.describe())
                try:
                    await chaos_mod.inject(f, self)
                except Exception as exc:  # a fault that could not be injected is reported, not fatal
                    f.note = f"failed: {type(exc).__name__}: {exc}"
                    f.ended = time.monotonic()
                self.say(f"  back after {f.ended - f.started:.1f}s {f.note}")
            await asyncio.sleep(max(0.0, self.t0 + opts.seconds - time.monotonic()))
            self.producing = False
            await asyncio.wait_for(asyncio.gather(*producers), 60)
            self.say(f"producers stopped: {len(self.sent.kafka)} Kafka events, {len(self.sent.mqtt)} MQTT messages; "
                     "waiting for the workers to drain")
            while self.jobs:
                await asyncio.sleep(1)
            drained = await self.drain()
            self.say("drained" if drained else f"NOT drained after {opts.drain_timeout:.0f}s")
            # What the checks read: every topic again from the beginning (see Topic).
            for topic in self.topics.values():
                await topic.reread()
            missed = {name: t.missed_at_tail for name, t in self.topics.items() if t.missed_at_tail}
            if missed:
                self.say(f"records the readers at the tail missed, found reading again (the broker): {missed}")
            quiet_since = time.monotonic()
            rows = await self.parity()
            # The workers' memory at rest, as after warm-up: idle (the parity check only reads)
            # past their periodic return of freed heap, not at the peak of the drain.
            await asyncio.sleep(max(0.0, quiet_since + HEAP_TRIM_INTERVAL_S + 5.0 - time.monotonic()))
            rss_end = {w.name: w.rss_kb() for w in self.workers}
            report = await asyncio.to_thread(
                check_all, self.sent, self.topics["in"].all, {k: t.all for k, t in self.topics.items()},
                self.pg_url(self.live_db), rows)
            report.faults = self.faults
            attribute_duplicates(report, {k: t.timed for k, t in self.topics.items()}, self.faults, self.t0)
            report.jobs = self.job_results
            report.rss = {w.name: (w.warm_rss, rss_end[w.name], w.runs) for w in self.workers}
            report.seed, report.seconds, report.dir = opts.seed, opts.seconds, self.dir
            report.kafka_retries, report.mqtt_retries = self.sent.kafka_retries, self.sent.mqtt_retries
            report.missed_at_tail = missed
            if not report.ok:  # what the checks read, to look into afterwards
                for name, topic in self.topics.items():
                    topic.dump(self.dir / f"topic-{name}.jsonl")
                self.say(f"every topic as read: {self.dir}/topic-*.jsonl")
            return report
        finally:
            self.producing = False
            for t in (*producers, *background):
                t.cancel()
            await self.stop()

    async def drain(self) -> bool:
        """Wait until the workers caught up with the input topic: every record in it has its
        window output and every key's count covers its records.

        Draining is about the workers, not about loss: what was sent and never reached the
        input topic (an MQTT message lost) is reported by the checks.  So the input is taken
        as complete once everything sent is in it, or once it stopped growing for
        ``SETTLE_S`` (the MQTT source has nothing more to deliver)."""
        deadline = time.monotonic() + self.opts.drain_timeout
        sent = {e["uid"] for e in self.sent.kafka} | {e["uid"] for e in self.sent.mqtt}
        size, grew = -1, time.monotonic()
        reread = time.monotonic()
        while time.monotonic() < deadline:
            if time.monotonic() - max(grew, reread) >= SETTLE_S:
                # Stuck: maybe on a record the tail missed (see Topic); read the topics again.
                for name in ("in", "windows", "counts"):
                    await self.topics[name].reread()
                reread = time.monotonic()
            topic = self.topics["in"]
            caught_up = await topic.poll()
            uids = {e["uid"] for e in topic.all}
            if len(topic.all) != size:
                size, grew = len(topic.all), time.monotonic()
            arrived = sent <= uids or time.monotonic() - grew >= SETTLE_S
            if caught_up and arrived and uids <= self.processed:
                counts: dict[str, int] = {}
                for e in topic.all:
                    counts[e["id"]] = counts.get(e["id"], 0) + 1
                best: dict[str, int] = {}
                for e in self.topics["counts"].all:
                    best[e["id"]] = max(best.get(e["id"], 0), e["count"])
                if best == counts:
                    if not sent <= uids:
                        self.say(f"{len(sent - uids)} sent events never reached the input topic "
                                 f"(nothing new for {SETTLE_S:.0f}s): the checks count them as lost")
                    return True
            await asyncio.sleep(1)
        return False

    async def parity(self) -> dict[str, Any]:
        """Backfill everything the input topic holds with Spark into the parity database, wait for
        the live roll-ups to close their last minute, and return both sides' rows."""
        events = self.topics["in"].all
        path = self.dir / "all-events.json"
        path.write_bytes(b"\n".join(orjson.dumps(e) for e in events))
        last_ts = max((e["ts"] for e in events), default=0)
        self.say(f"Spark backfill of {len(events)} events into the parity database")
        proc = self._spark_job("parity-backfill", ["backfill", str(self.parity_app), "--aggregation", "Agg",
                                                   "--input", str(path), "--shard-id", "spark", "--master", "local[2]"])
        # The live workers close a minute by their timer once the wall clock passes its end.
        wait_s = (last_ts // 60_000 + 1) * 60_000 + 3_000 - time.time() * 1000
        if self.opts.wait_last_minute:
            await asyncio.sleep(max(0.0, wait_s / 1000))
        while any(j[1] is proc for j in self.jobs):  # the monitor records it when it ends
            await asyncio.sleep(1)
        if proc.returncode != 0:
            raise RuntimeError(f"the parity backfill failed (exit {proc.returncode}): {self.dir / 'parity-backfill.log'}")
        start = min((e["ts"] for e in events), default=0) - 3_600_000
        end = last_ts + 3_600_000
        purged = [at for name, at in self.purges.items()
                  if any(n == name and code == 0 for n, code, _ in self.job_results)]
        # Seconds older than the retention (2 min) at the end of the last purge may be gone.
        lo_sec = max(purged) - 118_000 if purged else None
        rows = {}
        # Rows of a period that ended less than 3 s before the read may not be closed yet.
        closed = None if self.opts.wait_last_minute else int(time.time() * 1000) - 3_000
        for side, db in (("live", self.live_db), ("spark", self.parity_db)):
            rows[side] = await asyncio.to_thread(parity, self.jdbc(db), start, end)
        return {"rows": rows, "lo_sec": lo_sec, "closed": closed}

    async def stop(self) -> None:
        """Stop every process of the run.  Each step on its own: this also runs when the run is
        interrupted (Ctrl-C cancels it), when a step's own awaits may be cancelled too."""

        async def step(what: str, work: Any) -> None:
            try:
                await work
            except (Exception, asyncio.CancelledError) as exc:
                self.say(f"stopping {what}: {type(exc).__name__}: {exc}")

        workers = list(self.workers)
        codes: list[Any] = [None] * len(workers)

        async def stop_workers() -> None:
            codes[:] = await asyncio.gather(*[asyncio.to_thread(w.stop) for w in workers])

        await step("the workers", stop_workers())
        for w, code in zip(workers, codes, strict=True):
            if code not in (0, None):
                self.say(f"{w.name} exited with {code} at the end")
        for name, t in self.topics.items():
            await step(f"the {name} reader", t.stop())
        for _, proc, _ in self.jobs:
            proc.kill()
        await step("the broker", self.broker.stop())
        self.mqtt.stop()
        await step("PostgreSQL", asyncio.to_thread(self.pg.stop, "immediate"))
        (self.dir / "soak.log").write_text("\n".join(self.log_lines) + "\n")
        if not self.opts.keep:
            shutil.rmtree(self.dir / "postgres", ignore_errors=True)


async def run(opts: Options) -> Report:
    """One soak run; returns its report (``report.ok`` is False on any mismatch or loss)."""
    return await Soak(opts).run()


def main_json(report: Report) -> str:
    return json.dumps(report.summary(), indent=1, default=str)


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run it as: python -m tests.soak")
