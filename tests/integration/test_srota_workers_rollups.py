"""``srota run --workers 2`` with roll-ups in PostgreSQL: the partitions' shards compose into
what one process would have rolled up, read by a third process."""
from __future__ import annotations

import os
import subprocess
import urllib.parse
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from srota import SiddhiManager
from tests.integration.support import SROTA, kafka_source, produce, wait_until

pytestmark = pytest.mark.integration

T0 = 1_700_000_000_000
HOUR = 3_600_000


def _aggregation(url: str) -> str:
    p = urllib.parse.urlsplit(url)
    return f"""
@store(type='rdbms', jdbc.url='jdbc:postgresql://{p.hostname}:{p.port}{p.path}', username='{p.username}',
       password='{p.password}')
@PartitionById(enable='true')
define aggregation Usage from Readings
select id, sum(value) as total, count() as events, max(value) as peak
group by id aggregate by ts every sec ... hour;
"""


async def test_two_workers_share_roll_ups_through_postgres(kafka_broker: Any, pg_url: str, tmp_path: Path) -> None:
    kb = kafka_broker
    topic = await kb.create_topic(partitions=4)
    group = f"g-{uuid.uuid4().hex[:8]}"
    app = tmp_path / "usage.siddhi"
    app.write_text(f"""@app:name('Usage')
{kafka_source(kb, topic, group, **{"key.attribute": "id"})}
define stream Readings (id string, value long, ts long);
{_aggregation(pg_url)}""")
    cfg = tmp_path / "srota.yaml"
    cfg.write_text(yaml.safe_dump({
        "http": {"enabled": False}, "logging": {"format": "json", "level": "info"},
        "scaleout": {"checkpoint_interval": "500 ms", "state_topic": f"state-{uuid.uuid4().hex[:8]}"}}))
    rows = [{"id": f"k{i % 12}", "value": (i * 7) % 101, "ts": T0 + i * 2_500} for i in range(3000)]
    expected: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        got = expected[((r["ts"] // HOUR) * HOUR, r["id"])]
        got[0] += r["value"]
        got[1] += 1
        got[2] = max(got[2], r["value"])
    log = tmp_path / "srota.log"
    with open(log, "wb") as f:
        proc = subprocess.Popen([str(SROTA), "run", str(app), "--config", str(cfg), "--workers", "2"],
                                stdout=f, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    reader = None
    try:
        await produce(kb.bootstrap_servers, topic, [(r["id"].encode(), orjson.dumps(r)) for r in rows])
        # Later events close every earlier bucket of each partition's runtime: a bucket of one
        # granularity completes when a completed bucket of a later one reaches it, so the old
        # hour needs a completed minute of a later hour, which needs two seconds after it.
        # (Their own key is left out of the comparison.)
        for p in range(4):
            close = [(b"zz-close", orjson.dumps({"id": "zz-close", "value": 0, "ts": T0 + 2 * 86_400_000 + dt}))
                     for dt in (0, 1_000, 61_000, 62_000)]
            await produce(kb.bootstrap_servers, topic, close, partition=p)
        reader_app = f"@app:name('Usage')\ndefine stream Readings (id string, value long, ts long);\n" \
                     f"{_aggregation(pg_url)}"
        reader = SiddhiManager(shard_id="reader").create_siddhi_app_runtime(reader_app)
        reader.start()
        query = (f"from Usage within {T0 - HOUR}L, {T0 + 86_400_000}L per 'hours' "
                 "select AGG_TIMESTAMP, id, total, events, peak")

        def composed() -> dict[tuple[int, str], list[int]]:
            return {(e.data[0], e.data[1]): [e.data[2], e.data[3], e.data[4]] for e in reader.query(query)
                    if e.data[1] != "zz-close"}

        last: list[Any] = [None]

        def agrees() -> bool:
            last[0] = composed()
            return last[0] == dict(expected)

        try:
            await wait_until(agrees, 90, 0.5, what="composed roll-ups equal to one process's")
        except TimeoutError:
            got = last[0] or {}
            diff = {k: (got.get(k), expected.get(k)) for k in set(got) | set(expected) if got.get(k) != expected.get(k)}
            raise AssertionError(f"{len(diff)} rows differ (got, expected): {sorted(diff.items())[:6]}; log: {log}") from None
        assert proc.poll() is None
    finally:
        if reader is not None:
            reader.shutdown()
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
    text = log.read_text()
    assert "Traceback" not in text, text[-3000:]
