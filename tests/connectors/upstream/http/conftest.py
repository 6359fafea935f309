"""The ``run`` fixture of the siddhi-io-http ports: apps on service hosts, all stopped after the test."""
from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from srota.service.config import HttpConfig, ServiceConfig
from srota.service.host import ServiceHost

from tests.mappers.harness import Running


class Hosts:
    """``await run(app_text)`` starts the app on a host of its own (the host's own HTTP API
    off) and returns its :class:`Running`; ``await run.stop(r)`` stops one (Siddhi's
    ``shutdown()``); the others are stopped after the test."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.running: list[ServiceHost] = []
        self.started = 0

    async def __call__(self, app: str) -> Running:
        self.started += 1
        config = ServiceConfig(http=HttpConfig(enabled=False),
                               errors_database=str(self.tmp_path / f"errors-{self.started}.db"))
        host = ServiceHost(config, app_texts=[app])
        self.running.append(host)
        try:
            await host.start()
        except BaseException:
            self.running.remove(host)
            await host.stop()
            raise
        return Running(host, next(iter(host.runtimes)))

    async def stop(self, r: Running) -> None:
        """Stop the host of ``r`` (it is not stopped again after the test)."""
        self.running.remove(r.host)
        await r.host.stop()


@pytest.fixture
async def run(tmp_path: Path) -> AsyncIterator[Hosts]:
    """Service hosts for one test (see :class:`Hosts`)."""
    hosts = Hosts(tmp_path)
    yield hosts
    for host in reversed(hosts.running):
        await host.stop()
