"""The database of an ``rdbms`` store goes away in the middle of a Kafka stream and comes back.

The app counts records per key in a PostgreSQL/MariaDB table (``update or insert ... set
n = n + 1``: a record applied twice would count twice) and rolls them up in an aggregation on
the same database.  While the database is gone the chunk in flight waits off the event loop
(the loop keeps serving), the source fetches nothing further, nothing is committed past it;
when the database is back every record is counted exactly once.  An outage longer than the
store's ``max.outage`` stops the service with that reason and the chunk uncommitted.
"""
from __future__ import annotations

import asyncio
import threading
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import free_port
from tests.dbservers import PostgresServer, running_postgres
from tests.integration.support import (
    TcpProxy,
    committed,
    config,
    kafka_source,
    produce,
    running_host,
    wait_until,
)

pytestmark = pytest.mark.integration

T0 = 1_700_000_000_000
KEYS = [f"dev-{i}" for i in range(8)]


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server this test may stop and start (the session's stays up)."""
    with running_postgres("srota-pg-outage-") as server:
        yield server


class _ProxyThread:
    """A :class:`TcpProxy` on a loop of its own: the service blocks its own loop while it connects."""

    def __init__(self, target_port: int) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.proxy = TcpProxy(target_port, free_port())
        self.port = self.proxy.port
        self._do(self.proxy.start())

    def _do(self, coro: Any) -> None:
        asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def cut(self) -> None:
        self._do(self.proxy.cut())

    def restore(self) -> None:
        self._do(self.proxy.restore())

    def close(self) -> None:
        self._do(self.proxy.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def _store(url: str, **extra: str) -> str:
    p = urllib.parse.urlsplit(url)
    scheme = "postgresql" if p.scheme.startswith("postgres") else "mysql"
    opts = {"type": "rdbms", "jdbc.url": f"jdbc:{scheme}://{p.hostname}:{p.port}{p.path}",
            "username": p.username or "", "password": p.password or "", **extra}
    return "@store(" + ", ".join(f"{k}='{v}'" for k, v in opts.items()) + ")"


def _app(source: str, url: str, **store: str) -> str:
    return f"""@app:name('counts')
{source}
define stream Readings (id string, value long, ts long);
{_store(url, **store)}
@PrimaryKey('id')
define table Totals (id string, n long);
{_store(url, **store)}
define aggregation Sums from Readings select id, sum(value) as total, count() as events
group by id aggregate by ts every sec ... hour;
from Readings select id, 1L as n update or insert into Totals set Totals.n = Totals.n + n on Totals.id == id;
"""


def _records(start: int, n: int) -> list[tuple[bytes, bytes]]:
    return [(KEYS[i % len(KEYS)].encode(), orjson.dumps({"id": KEYS[i % len(KEYS)], "value": i, "ts": T0 + i * 10}))
            for i in range(start, start + n)]


def _read_totals(host: Any) -> dict[str, int]:
    table = host.apps["counts"].runtime.context.tables["Totals"]
    return {r.data[0]: r.data[1] for r in table.rows()}


async def _totals(host: Any) -> dict[str, int]:
    # Off the loop: a read waits for the database like the app does, and the proxy runs here.
    return await asyncio.to_thread(_read_totals, host)


def _counted(host: Any, n: int) -> Any:
    async def check() -> bool:
        return sum((await _totals(host)).values()) >= n
    return check


async def _loop_lag(seconds: float) -> float:
    """The longest the event loop took to wake a 50 ms sleep over ``seconds`` (it must not block)."""
    worst = 0.0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.monotonic()
        await asyncio.sleep(0.05)
        worst = max(worst, time.monotonic() - t - 0.05)
    return worst


async def test_postgres_stopped_mid_stream_loses_and_doubles_nothing(kafka_broker: Any, own_postgres: PostgresServer,
                                                                     tmp_path: Path) -> None:
    topic = await kafka_broker.create_topic(partitions=2)
    group = f"g-{uuid.uuid4().hex[:8]}"
    url = own_postgres.url(own_postgres.create_database())
    app = _app(kafka_source(kafka_broker, topic, group), url)
    async with running_host(config(tmp_path), app) as host:
        await produce(kafka_broker.bootstrap_servers, topic, _records(0, 400))
        await wait_until(_counted(host, 400), 60, what="the first 400 records")
        own_postgres.stop("fast")
        await produce(kafka_broker.bootstrap_servers, topic, _records(400, 400))
        lag = await _loop_lag(3.0)  # the database is down: the chunk waits off the loop
        assert lag < 0.5, f"the event loop was blocked for {lag:.2f} s during the outage"
        assert host.apps["counts"].runtime.context.tables["Totals"].db.down
        own_postgres.resume()
        await wait_until(_counted(host, 800), 60, what="every record after the outage")
        await asyncio.sleep(0.5)
        totals = await _totals(host)
        agg = host.apps["counts"].runtime.query(
            f"from Sums within {T0 - 3_600_000}L, {T0 + 3_600_000}L per 'hours' select id, total, events")
    assert totals == {k: 100 for k in KEYS}
    events = {r.data[0]: r.data[2] for r in agg}
    assert sum(events.values()) <= 800  # open buckets of the last second may still be in memory
    assert all(v <= 100 for v in events.values())


async def test_the_broker_lost_during_a_database_outage(tansu_factory: Any, own_postgres: PostgresServer,
                                                        tmp_path: Path) -> None:
    """PostgreSQL stopped, then the broker frozen (SIGSTOP) while the database is still down,
    then both back: the held chunk goes in once, the consumer rejoins, nothing lost or doubled."""
    import os
    import signal

    kb = tansu_factory()
    topic = await kb.create_topic(partitions=2)
    url = own_postgres.url(own_postgres.create_database())
    app = _app(kafka_source(kb, topic, f"g-{uuid.uuid4().hex[:8]}"), url)
    async with running_host(config(tmp_path), app) as host:
        await produce(kb.bootstrap_servers, topic, _records(0, 400))
        await wait_until(_counted(host, 400), 60, what="the first 400 records")
        own_postgres.stop("fast")
        await produce(kb.bootstrap_servers, topic, _records(400, 400))
        await asyncio.sleep(1.0)  # a chunk is held, waiting for the database
        assert kb.proc is not None
        os.kill(kb.proc.pid, signal.SIGSTOP)
        try:
            await asyncio.sleep(5.0)  # the broker gone too: fetches, commits, heartbeats hang
            lag = await _loop_lag(1.0)
            assert lag < 0.5, f"the event loop was blocked for {lag:.2f} s during the outages"
        finally:
            os.kill(kb.proc.pid, signal.SIGCONT)
        await asyncio.sleep(1.0)
        own_postgres.resume()
        await wait_until(_counted(host, 800), 90, what="every record after both outages")
        await asyncio.sleep(0.5)
        totals = await _totals(host)
    assert totals == {k: 100 for k in KEYS}


async def test_connections_cut_by_a_proxy_are_retried(kafka_broker: Any, mariadb_server: Any, tmp_path: Path) -> None:
    topic = await kafka_broker.create_topic(partitions=1)
    proxy = _ProxyThread(mariadb_server.port)
    database = mariadb_server.create_database()
    url = f"mysql://srota:srota@127.0.0.1:{proxy.port}/{database}"
    app = _app(kafka_source(kafka_broker, topic, f"g-{uuid.uuid4().hex[:8]}"), url)
    try:
        async with running_host(config(tmp_path), app) as host:
            await produce(kafka_broker.bootstrap_servers, topic, _records(0, 200))
            await wait_until(_counted(host, 200), 60, what="the first 200 records")
            proxy.cut()
            await produce(kafka_broker.bootstrap_servers, topic, _records(200, 200))
            await asyncio.sleep(2.0)
            proxy.restore()
            await wait_until(_counted(host, 400), 60, what="every record after the cut")
            await asyncio.sleep(0.5)
            assert await _totals(host) == {k: 50 for k in KEYS}
    finally:
        proxy.close()


async def test_an_outage_past_max_outage_stops_the_service_uncommitted(kafka_broker: Any,
                                                                       own_postgres: PostgresServer,
                                                                       tmp_path: Path) -> None:
    topic = await kafka_broker.create_topic(partitions=1)
    group = f"g-{uuid.uuid4().hex[:8]}"
    url = own_postgres.url(own_postgres.create_database())
    app = _app(kafka_source(kafka_broker, topic, group), url, **{"max.outage": "2 sec"})
    stopping = asyncio.Event()
    async with running_host(config(tmp_path), app) as host:
        host.stopping = stopping
        await produce(kafka_broker.bootstrap_servers, topic, _records(0, 100))
        await wait_until(_counted(host, 100), 60, what="the first 100 records")
        await wait_until(lambda: _committed_sum(kafka_broker, group, topic), 30, what="the first commit")
        own_postgres.stop("fast")
        await produce(kafka_broker.bootstrap_servers, topic, _records(100, 50))
        await asyncio.wait_for(stopping.wait(), 30)
        assert host.failure is not None and "unreachable for more than 2 s" in host.failure
        assert "max.outage" in host.failure
    offsets = await committed(kafka_broker.bootstrap_servers, group, topic, 1)
    assert offsets[0] is not None and offsets[0] <= 100  # the failed chunk is not committed


async def _committed_sum(broker: Any, group: str, topic: str) -> bool:
    offsets = await committed(broker.bootstrap_servers, group, topic, 1)
    return offsets[0] == 100
