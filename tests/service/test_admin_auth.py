"""With a token configured, every admin endpoint but the probes needs it (the debugger and
statistics endpoints too); bodies over the size limit are refused."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp

from tests.integration.support import config, running_host

APP = """@app:name('guarded')
define stream In (id string);
@info(name='q') from In select id insert into Out;
"""

ENDPOINTS = [
    ("GET", "/metrics"), ("GET", "/apps"), ("GET", "/version"), ("POST", "/query"),
    ("GET", "/apps/guarded/debug"), ("POST", "/apps/guarded/debug"), ("DELETE", "/apps/guarded/debug"),
    ("PUT", "/apps/guarded/debug/breakpoints/q/in"), ("DELETE", "/apps/guarded/debug/breakpoints/q/in"),
    ("POST", "/apps/guarded/debug/next"), ("POST", "/apps/guarded/debug/play"),
    ("GET", "/apps/guarded/debug/events"), ("GET", "/apps/guarded/queries/q/state"),
    ("POST", "/apps/guarded/pause"), ("POST", "/apps/guarded/resume"),
    ("GET", "/apps/guarded/statistics"), ("PUT", "/apps/guarded/statistics"),
]


async def test_every_endpoint_but_the_probes_needs_the_token(tmp_path: Path) -> None:
    async with running_host(config(tmp_path, http=True, token="s3cret"), APP) as host, \
            aiohttp.ClientSession() as http:
        base = f"http://127.0.0.1:{host.admin.port}"
        for method, path in ENDPOINTS:
            for headers in ({}, {"Authorization": "Bearer wrong"}):
                async with http.request(method, base + path, headers=headers) as r:
                    assert r.status == 401, (method, path, headers, r.status)
        for path in ("/health", "/ready"):
            async with http.get(base + path) as r:
                assert r.status in (200, 503)
        ok: dict[str, Any] = {"Authorization": "Bearer s3cret"}
        async with http.get(base + "/apps/guarded/debug", headers=ok) as r:
            assert r.status == 200
        async with http.put(base + "/apps/guarded/statistics", headers=ok, data=b"x" * (2 << 20)) as r:
            assert r.status == 413  # over the admin server's 1 MiB request limit
        assert not host.apps["guarded"].runtime.paused
