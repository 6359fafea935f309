"""The service returns the C heap's free memory to the system now and then (the chaos soak's
RSS bound: a worker's RSS must not stay at the height of its busiest moment)."""
from __future__ import annotations

import asyncio

from srota.service import host as host_mod
from srota.service.config import HttpConfig, ServiceConfig
from srota.service.host import ServiceHost

APP = "@app:name('Trim') define stream S (v long); from S select v insert into Out;"


async def test_host_releases_free_memory_periodically_and_stops_doing_so(monkeypatch) -> None:
    calls: list[int] = []

    def fake_release() -> bool:
        calls.append(1)
        return True

    monkeypatch.setattr(host_mod, "HEAP_TRIM_INTERVAL_S", 0.02)
    monkeypatch.setattr(host_mod, "release_free_memory", fake_release)
    host = ServiceHost(ServiceConfig(http=HttpConfig(enabled=False)), app_texts=[APP])
    await host.start()
    try:
        for _ in range(200):
            if len(calls) >= 3:
                break
            await asyncio.sleep(0.01)
        assert len(calls) >= 3
    finally:
        await host.stop()
    seen = len(calls)
    await asyncio.sleep(0.1)
    assert len(calls) == seen  # stopped with the host


async def test_host_stops_trying_where_the_c_library_cannot(monkeypatch) -> None:
    calls: list[int] = []

    def unsupported() -> bool:
        calls.append(1)
        return False

    monkeypatch.setattr(host_mod, "HEAP_TRIM_INTERVAL_S", 0.01)
    monkeypatch.setattr(host_mod, "release_free_memory", unsupported)
    host = ServiceHost(ServiceConfig(http=HttpConfig(enabled=False)), app_texts=[APP])
    await host.start()
    try:
        await asyncio.sleep(0.15)
        assert calls == [1]
    finally:
        await host.stop()
