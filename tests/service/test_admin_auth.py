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


async def test_every_route_the_server_has_needs_the_token(tmp_path: Path) -> None:
    """Taken from the router itself (the list above can miss a route added later): every route
    but the probes and the sign-in page answers 401 without the token, or sends a browser to
    sign in; so do paths that are not routes at all."""
    import re

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    cfg = config(tmp_path, http=True, token="s3cret", playground_enabled=True)
    async with running_host(cfg, APP) as host, aiohttp.ClientSession() as http:
        base = f"http://127.0.0.1:{host.admin.port}"
        routes = [(r.method, r.resource.canonical) for r in host.admin.app.router.routes()
                  if r.method not in ("HEAD", "*") and r.resource is not None]
        assert len(routes) > len(ENDPOINTS), routes
        names = {"app": "guarded", "query": "q", "name": "q"}

        async def refused(method: str, path: str) -> None:
            async with http.request(method, base + path, allow_redirects=False, data=b"{}") as r:
                if path.startswith("/playground") and "/api/" not in path:
                    assert r.status == 302 and r.headers["Location"] == "/playground/login", (method, path)
                else:
                    assert r.status == 401, (method, path, r.status)

        for method, canonical in routes:
            path = re.sub(r"\{(\w+)[^}]*\}", lambda m: names.get(m.group(1), "x"), canonical)
            if path in ("/health", "/ready", "/playground/login"):
                continue
            await refused(method, path)

        seen: list[str] = []

        @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
        @given(st.sampled_from(["GET", "POST", "PUT", "DELETE"]),
               st.lists(st.text("abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=12), max_size=4))
        def random_paths(method: str, parts: list[str]) -> None:
            seen.append(method + " /" + "/".join(parts))

        random_paths()
        for item in seen:
            method, path = item.split(" ", 1)
            if path in ("/health", "/ready", "/playground/login"):
                continue
            await refused(method, path)
