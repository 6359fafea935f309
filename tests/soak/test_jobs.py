"""The soak's chaos backfills: one at a time per shard, as an operator must run them.

Found by the chaos soak (seed 73): two backfills of partition 3's past minutes drawn 15 s
apart ran at once under the same shard id, and the second was refused by the shard's lock
("already written by another process with shard id 'backfill-p3'"), which is the store doing
its job; the soak counted it as a failed Spark job.  A backfill of a shard whose last backfill
still runs is now skipped, as a purge is while another purge runs.
"""
from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from tests.soak.soak import Options, Soak, Topic


def _soak(tmp_path: Path) -> Soak:
    try:
        soak = Soak(Options(workdir=tmp_path))
    except RuntimeError as exc:  # a server the soak needs is not installed
        pytest.skip(str(exc))
    topic = Topic("127.0.0.1:9", "in-test")
    topic.records = {p: [] for p in range(6)}
    soak.topics["in"] = topic
    soak.start_ms = int(time.time() * 1000)
    return soak


class _Running:
    def poll(self) -> None:
        return None


def test_a_backfill_of_a_shard_still_being_backfilled_is_skipped(tmp_path: Path) -> None:
    soak = _soak(tmp_path)
    running: Any = _Running()
    soak.jobs.append(("backfill-3", running, tmp_path / "backfill-3.log"))
    soak.job_shards["backfill-3"] = "backfill-p3"
    assert asyncio.run(soak.start_backfill(3)) == "skipped: a backfill of p3 is still running"
    # Another partition's shard is free (here it has no past minute to backfill yet).
    assert asyncio.run(soak.start_backfill(1)) == "skipped: no past minute processed wholly yet"
    # Once the first has ended (the monitor takes it off the running jobs), p3 may go again.
    soak.jobs.clear()
    assert asyncio.run(soak.start_backfill(3)) == "skipped: no past minute processed wholly yet"
