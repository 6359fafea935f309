"""A pytest plugin (loaded by tests/conftest.py): a SIGTERM ends the run as Ctrl-C does.

CI cancelling a job, ``make test``'s script stopping the pass that runs beside it, or a kill
of pytest sends SIGTERM, and Python's default for it ends the process at once.  Then no
session fixture's teardown runs, and the PostgreSQL (``pg_ctl`` starts it as a daemon),
MariaDB, tansu and Mosquitto servers of the run go on without it.  With this plugin, SIGTERM
raises ``KeyboardInterrupt`` in the main thread. pytest stops as for Ctrl-C and tears the
session down, stopping those servers.
"""
from __future__ import annotations

import signal
import threading
from types import FrameType


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def pytest_sessionstart() -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)
