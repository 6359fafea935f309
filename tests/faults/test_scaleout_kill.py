"""Scale-out across real worker processes: SIGKILL one mid-stream, start another, rebalance.

Three ``srota run`` workers (replicas with ``scaleout.partitioned``) share a 6-partition topic
of keyed records.  The app keeps per-key running counts, a length window per key and a
pattern per key.  Mid-stream one worker is killed with SIGKILL, a fourth joins (a rebalance)
and later a second one stops cleanly (another rebalance, through the revoke path).  Each
partition's state moves with it through the Kafka state topic, so:

* every output is what an exact per-key state produces (inputs carry a per-key sequence
  number, outputs say which input they reflect), and the last output per key equals a
  single-process reference run; nothing is lost;
* outputs repeat only for the records the killed worker processed after its last checkpoint.

``SCALEOUT_RECORDS`` sets the number of records (default 100,000).
"""
from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiokafka import AIOKafkaProducer
from srota.engine import SiddhiManager

from tests.conftest import free_port
from tests.integration.support import SrotaProcess, TopicReader, kafka_sink, kafka_source, wait_until

pytestmark = pytest.mark.integration

N = int(os.environ.get("SCALEOUT_RECORDS", "100000"))
KEYS = 600
PARTITIONS = 6
INTERVAL_S = 1.0

QUERIES = """
@info(name='counts')
from In select id, sum(n) as total, count() as count group by id insert into Counts;
partition with (id of In) begin
    @info(name='window')
    from In#window.length(5) select id, sum(n) as wsum, count() as wcount, max(seq) as last insert into Windows;
end;
@info(name='pattern')
from every e1=In[n > 95] -> e2=In[id == e1.id and n < 5]
select e1.id as id, e1.seq as a, e2.seq as b insert into Matches;
"""
STREAMS = """
define stream In (id string, seq long, n long);
define stream Counts (id string, total long, count long);
define stream Windows (id string, wsum long, wcount long, last long);
define stream Matches (id string, a long, b long);
"""


def _inputs() -> list[dict[str, Any]]:
    seqs: dict[str, int] = {}
    out = []
    for i in range(N):
        key = f"k{(i * 37) % KEYS}"
        seq = seqs.get(key, 0)
        seqs[key] = seq + 1
        out.append({"id": key, "seq": seq, "n": (i * 7919) % 101})
    return out


def _reference(inputs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The last output per key of every stream, from one in-process runtime."""
    runtime = SiddhiManager().create_siddhi_app_runtime("@app:name('Ref')" + STREAMS + QUERIES)
    last: dict[str, dict[str, Any]] = {"Counts": {}, "Windows": {}, "Matches": {}}
    matches: set[tuple[str, int, int]] = set()
    for stream in ("Counts", "Windows"):
        runtime.add_callback(stream, lambda events, s=stream: last[s].update({e.data[0]: tuple(e.data[1:])
                                                                              for e in events}))
    runtime.add_callback("Matches", lambda events: matches.update(tuple(e.data) for e in events))
    runtime.start()
    handler = runtime.get_input_handler("In")
    for start in range(0, len(inputs), 500):
        handler.send_rows([(e["id"], e["seq"], e["n"]) for e in inputs[start:start + 500]])
    runtime.shutdown()
    last["Matches"] = {"all": matches}
    return last


async def test_workers_killed_and_added_mid_stream_keep_exact_per_key_state(kafka_broker: Any, tmp_path: Path) -> None:
    kb = kafka_broker
    src = await kb.create_topic(partitions=PARTITIONS)
    outs = {s: await kb.create_topic(partitions=3) for s in ("Counts", "Windows", "Matches")}
    group = f"g-{uuid.uuid4().hex[:8]}"
    app = f"""
    @app:name('PerKey')
    {kafka_source(kb, src, group, **{"batch.size": "500", "key.attribute": "id"})}
    define stream In (id string, seq long, n long);
    {kafka_sink(kb, outs["Counts"], key='{{id}}')}
    define stream Counts (id string, total long, count long);
    {kafka_sink(kb, outs["Windows"], key='{{id}}')}
    define stream Windows (id string, wsum long, wcount long, last long);
    {kafka_sink(kb, outs["Matches"], key='{{id}}')}
    define stream Matches (id string, a long, b long);
    {QUERIES}
    """
    settings = {"scaleout": {"partitioned": True, "checkpoint_interval": f"{int(INTERVAL_S * 1000)} ms",
                             "state_topic": f"state-{uuid.uuid4().hex[:8]}"},
                "shutdown": {"timeout": "20 sec"}, "logging": {"format": "json", "level": "info"}}
    workers = [SrotaProcess(tmp_path, app, settings, free_port(), name=f"w{i}") for i in range(4)]
    inputs = _inputs()
    per_key = {}
    for e in inputs:
        per_key.setdefault(e["id"], []).append(e["n"])
    producer = AIOKafkaProducer(bootstrap_servers=kb.bootstrap_servers, acks="all", linger_ms=5)
    await producer.start()
    produced_at: list[float] = []

    async def produce() -> None:
        for start in range(0, N, 2000):
            futures = [await producer.send(src, orjson.dumps(e), key=e["id"].encode())
                       for e in inputs[start:start + 2000]]
            await asyncio.gather(*futures)
            produced_at.append(time.monotonic())
            await asyncio.sleep(0.1)

    readers = {s: TopicReader(kb.bootstrap_servers, t) for s, t in outs.items()}
    try:
        for r in readers.values():
            await r.__aenter__()
        for w in workers[:3]:
            w.start()
        for w in workers[:3]:
            await w.wait_ready()
        stream = asyncio.create_task(produce())

        events = {s: _Events() for s in outs}

        async def progressed(fraction: float) -> bool:
            await readers["Counts"].poll()
            return sum(events["Counts"].update(readers["Counts"]).values()) >= N * fraction

        await wait_until(lambda: progressed(0.3), 120, interval=0.2, what="30% of the stream processed")
        assert not stream.done(), "the stream ended before the kill"
        killed_at = time.monotonic()
        workers[0].kill()
        workers[3].start()  # joins the group: a rebalance, the killed worker's partitions move
        await workers[3].wait_ready()
        await wait_until(lambda: progressed(0.6), 120, interval=0.2, what="60% of the stream processed")
        workers[1].signal(signal.SIGTERM)  # a clean leave: flush, checkpoint, commit, revoke
        assert await workers[1].wait_exit(40) == 0, workers[1].log()
        await stream

        want = {k: len(v) for k, v in per_key.items()}

        counts = await readers["Counts"].until(lambda rs: events["Counts"].update(readers["Counts"]) == want, 180,
                                               what="every key's final count")
        reference = _reference(inputs)
        last_seq = {k: v - 1 for k, v in want.items()}
        windows = await readers["Windows"].until(lambda rs: events["Windows"].update(readers["Windows"], "last") == last_seq, 60,
                                                 what="every key's last window")
        matches = await readers["Matches"].until(
            lambda rs: events["Matches"].matches(readers["Matches"]) >= reference["Matches"]["all"], 60, what="every match")
        for w in workers[2:]:
            w.signal(signal.SIGTERM)
        for w in workers[2:]:
            assert await w.wait_exit(40) == 0, w.log()
    finally:
        for r in readers.values():
            await r.__aexit__()
        await producer.stop()
        for w in workers:
            w.stop()

    # Every Counts output is an exact prefix of its key's inputs; the last equals the reference.
    prefix = {k: [0] for k in per_key}
    for k, ns in per_key.items():
        for n in ns:
            prefix[k].append(prefix[k][-1] + n)
    seen: dict[tuple[str, int], int] = {}
    final: dict[str, tuple[int, int]] = {}
    for r in counts:
        e = r.json()["event"]
        assert prefix[e["id"]][e["count"]] == e["total"], f"state not exact: {e}"
        seen[(e["id"], e["count"])] = seen.get((e["id"], e["count"]), 0) + 1
        if e["count"] >= final.get(e["id"], (0, 0))[1]:
            final[e["id"]] = (e["total"], e["count"])
    assert final == reference["Counts"]
    # Windows: each output is the sum of its key's last five inputs up to ``last``.
    last_window: dict[str, tuple[int, int, int]] = {}
    for r in windows:
        e = r.json()["event"]
        ns = per_key[e["id"]]
        lo = max(0, e["last"] - 4)
        assert (e["wsum"], e["wcount"]) == (sum(ns[lo:e["last"] + 1]), e["last"] + 1 - lo), f"window not exact: {e}"
        if e["last"] >= last_window.get(e["id"], (0, 0, -1))[2]:
            last_window[e["id"]] = (e["wsum"], e["wcount"], e["last"])
    assert last_window == reference["Windows"]
    # Matches: exactly the reference's, some perhaps twice.
    assert {tuple(r.json()["event"].values()) for r in matches} == reference["Matches"]["all"]
    # Repeats: only records the killed worker processed after its last checkpoint (about one
    # interval of its share of the stream; the clean leave repeats nothing).
    repeated = sum(n - 1 for n in seen.values())
    duration = produced_at[-1] - produced_at[0]
    per_second = N / max(duration, 1.0)
    assert repeated <= per_second * (INTERVAL_S + 3), (repeated, per_second)
    log = workers[3].log()
    assert "partition state restored" in log
    print(f"records={N} repeated counts={repeated} rate={per_second:.0f}/s killed at {killed_at - produced_at[0]:.1f}s")


class _Events:
    """Parses each record read back once (a reader's lists only grow)."""

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}
        self.best: dict[str, dict[str, int]] = {}
        self.found: set[tuple[Any, ...]] = set()

    def _new(self, reader: TopicReader) -> list[dict[str, Any]]:
        out = []
        for p, records in reader.records.items():
            start = self.seen.get(p, 0)
            out.extend(r.json()["event"] for r in records[start:])
            self.seen[p] = len(records)
        return out

    def update(self, reader: TopicReader, field: str = "count") -> dict[str, int]:
        """The largest ``field`` per key so far (for the running count: inputs counted)."""
        best = self.best.setdefault(field, {})
        for e in self._new(reader):
            if e[field] > best.get(e["id"], -1):
                best[e["id"]] = e[field]
        return best

    def matches(self, reader: TopicReader) -> set[tuple[Any, ...]]:
        self.found.update(tuple(e.values()) for e in self._new(reader))
        return self.found


async def test_killed_before_its_first_checkpoint_nothing_was_committed(kafka_broker: Any, tmp_path: Path) -> None:
    """A commit never runs ahead of a saved checkpoint: a worker killed before its first
    checkpoint has committed nothing, so its successor (state empty) starts from the beginning."""
    from tests.integration.support import check_running_totals, committed, produce, totals_reached

    kb = kafka_broker
    src, out = await kb.create_topic(partitions=3), await kb.create_topic(partitions=1)
    group = f"g-{uuid.uuid4().hex[:8]}"
    app = f"""
    @app:name('Early')
    {kafka_source(kb, src, group, **{"key.attribute": "id"})}
    define stream In (id string, n long);
    {kafka_sink(kb, out)}
    define stream Out (id string, total long, count long);
    from In select id, sum(n) as total, count() as count group by id insert into Out;
    """
    settings = {"scaleout": {"partitioned": True, "checkpoint_interval": "1 h",
                             "state_topic": f"state-{uuid.uuid4().hex[:8]}"}}
    worker = SrotaProcess(tmp_path, app, settings, free_port(), name="early")
    inputs = [{"id": f"k{i % 9}", "n": i % 11} for i in range(900)]
    try:
        async with TopicReader(kb.bootstrap_servers, out) as reader:
            worker.start()
            await worker.wait_ready()
            await produce(kb.bootstrap_servers, src, [(e["id"].encode(), orjson.dumps(e)) for e in inputs[:600]])
            await reader.until(totals_reached(inputs[:600]), 30, what="the first 600 processed")
            await asyncio.sleep(1.5)  # the host's own commit loop has had its chances
            assert set((await committed(kb.bootstrap_servers, group, src, 3)).values()) == {None}
            worker.kill()
            worker.start()
            await worker.wait_ready()
            await produce(kb.bootstrap_servers, src, [(e["id"].encode(), orjson.dumps(e)) for e in inputs[600:]])
            records = await reader.until(totals_reached(inputs), 30, what="the final totals")
            worker.signal(signal.SIGTERM)
            assert await worker.wait_exit(30) == 0, worker.log()
        check_running_totals([r.json()["event"] for r in records], inputs)
        # The clean stop checkpointed, then committed exactly the checkpointed offsets.
        final = await committed(kb.bootstrap_servers, group, src, 3)
        assert sum(o or 0 for o in final.values()) == len(inputs)
    finally:
        worker.stop()
