"""Fixtures of the siddhi-io-file ports: a fresh copy of the upstream resource files, and apps
on service hosts that are all stopped after the test."""
from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from srota.service.host import ServiceHost

from tests.connectors.upstream.file.support import RESOURCES, Files
from tests.mappers.harness import Running
from tests.mappers.harness import start as start_app


@pytest.fixture
def files(tmp_path: Path) -> Files:
    """The upstream ``@BeforeMethod``: ``files/repo`` copied to ``new``, an empty ``moved_files``
    beside it (not created: the source creates it when it moves a file)."""
    new = tmp_path / "files" / "new"
    shutil.copytree(RESOURCES, new)
    return Files(new, tmp_path / "files" / "moved_files")


@pytest.fixture
async def run(tmp_path: Path) -> AsyncIterator[Any]:
    """``await run(app_text)`` starts the app on a host of its own and returns its
    :class:`Running`; ``await run.stop(r)`` is Siddhi's ``shutdown()``."""
    hosts: list[ServiceHost] = []

    async def start(app: str) -> Running:
        r = await start_app(app, str(tmp_path / f"errors-{len(hosts)}.db"))
        hosts.append(r.host)
        return r

    async def stop(r: Running) -> None:
        hosts.remove(r.host)
        await r.host.stop()

    start.stop = stop  # type: ignore[attr-defined]
    yield start
    for h in hosts:
        await h.stop()
