"""The ``run`` fixture: start an app on a service host; every host started is stopped after the test."""
from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from srota.service.host import ServiceHost

from tests.mappers.harness import Running
from tests.mappers.harness import start as start_app


@pytest.fixture
async def run(tmp_path: Path) -> AsyncIterator[Any]:
    """``await run(app_text)`` starts the app on a host of its own and returns its :class:`Running`."""
    hosts: list[ServiceHost] = []

    async def start(app: str) -> Running:
        r = await start_app(app, str(tmp_path / f"errors-{len(hosts)}.db"))
        hosts.append(r.host)
        return r

    yield start
    for h in hosts:
        await h.stop()
