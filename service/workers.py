"""``srota run --workers N``: N worker processes on one host, members of one consumer group.

Each worker is a whole service (:func:`srota.service.host.run_service`) in its own process,
so the apps use N cores; Kafka's consumer group spreads the input partitions over them and
each partition's state follows it (see :mod:`srota.service.scaleout`).  N workers here and N
replicas on N hosts (``workers: 1``, ``scaleout.partitioned: true``) are the same thing.

The parent checks the apps once (a refused app fails here, with its message), starts the
workers, forwards SIGTERM/SIGINT to them, and starts a worker again when one dies (its
partitions go to the others meanwhile).  A worker whose supervisor is gone (killed) stops
cleanly by itself.  Worker ``i`` serves the admin API on ``http.port
+ i`` (port 0: each picks a free port).
"""
from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from srota.grammar.errors import SiddhiAppCreationError
from srota.service.config import ServiceConfig, substitute_env

#: A worker that dies this soon after its start is not restarted (a configuration error).
_FAST_FAILURE_S = 5.0


def check_apps(config: ServiceConfig, app_paths: Sequence[Path]) -> str | None:
    """The ``srota:`` error line for the first app that cannot run partitioned (None: all can)."""
    from srota.service.bindings import import_extensions
    from srota.service.metrics import Metrics
    from srota.service.scaleout import PartitionedAppHost

    import_extensions()
    for path in app_paths:
        try:
            text = substitute_env(path.read_text(encoding="utf-8"), str(path))
            PartitionedAppHost(path, text, config, Metrics()).runtime.shutdown()
        except SiddhiAppCreationError as exc:
            where = str(path)
            if exc.line is not None:
                where = f"{where}:{exc.line}:{exc.column}"
            return f"srota: {where}: {exc.message}"
        except OSError as exc:
            return f"srota: {exc}"
    return None


def _worker_config(config: ServiceConfig, index: int) -> ServiceConfig:
    http = config.http
    if http.enabled and http.port:
        http = dataclasses.replace(http, port=http.port + index)
    return dataclasses.replace(config, http=http)


def _watch_parent(parent: int) -> None:
    """Stop this worker (SIGTERM: a clean stop) once the supervisor is gone, even if it was killed."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGTERM)


def _worker_main(config: ServiceConfig, app_paths: list[Path], index: int, parent: int) -> None:
    from srota.service.host import run_service
    from srota.service.logs import configure_logging

    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="srota-parent-watch").start()

    configure_logging(config.logging.format, config.logging.level)
    import structlog

    structlog.contextvars.bind_contextvars(worker=index)
    sys.exit(run_service(config, app_paths))


def run_workers(config: ServiceConfig, app_paths: Sequence[Path]) -> int:
    """Run ``config.scaleout.workers`` worker processes until SIGTERM/SIGINT; the exit code."""
    problem = check_apps(config, app_paths)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    ctx = multiprocessing.get_context("spawn")
    n = config.scaleout.workers
    stopping = False

    def stop(_sig: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    procs: dict[int, Any] = {}
    started: dict[int, float] = {}

    def spawn(i: int) -> None:
        p = ctx.Process(target=_worker_main, args=(_worker_config(config, i), list(app_paths), i, os.getpid()),
                        name=f"srota-worker-{i}")
        p.start()
        procs[i] = p
        started[i] = time.monotonic()

    for i in range(n):
        spawn(i)
    code = 0
    try:
        while not stopping:
            time.sleep(0.2)
            for i, p in list(procs.items()):
                if p.is_alive():
                    continue
                # An error exit right after the start is a configuration error (restarting
                # cannot help); a worker killed by a signal is always started again.
                if p.exitcode is not None and p.exitcode > 0 and time.monotonic() - started[i] < _FAST_FAILURE_S:
                    print(f"srota: worker {i} failed at start (exit {p.exitcode}); stopping", file=sys.stderr)
                    code = p.exitcode if p.exitcode and p.exitcode > 0 else 1
                    stopping = True
                    break
                print(f"srota: worker {i} exited ({p.exitcode}); starting it again", file=sys.stderr)
                spawn(i)
    finally:
        for p in procs.values():
            if p.is_alive() and p.pid is not None:
                p.terminate()  # SIGTERM: each worker flushes, checkpoints and commits
        deadline = time.monotonic() + config.shutdown_timeout_ms / 1000.0 + 5
        for p in procs.values():
            p.join(max(0.1, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join(5)
            if p.exitcode and p.exitcode > 0:
                code = code or p.exitcode
    return code
