"""The ``run`` fixture of the siddhi-io-http ports: apps on service hosts, all stopped after the test.

The hosts are those of the siddhi-io-mqtt ports (:class:`~tests.connectors.upstream.mqtt.conftest.Hosts`,
the host's own HTTP API off): ``await run(app_text)`` starts an app on a host of its own and
``await run.stop(r)`` is Siddhi's ``shutdown()``.
"""
from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.connectors.upstream.mqtt.conftest import Hosts


@pytest.fixture
async def run(tmp_path: Path) -> AsyncIterator[Hosts]:
    """Service hosts for one test (see the module doc)."""
    hosts = Hosts(tmp_path)
    yield hosts
    for host in reversed(hosts.running):
        await host.stop()
