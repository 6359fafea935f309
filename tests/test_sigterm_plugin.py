"""tests/sigterm_plugin.py: a SIGTERM to pytest still tears the session's fixtures down."""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_TESTS = '''
import time
from pathlib import Path

import pytest

@pytest.fixture(scope="session")
def server():
    yield
    Path({done!r}).write_text("stopped")

def test_runs_long(server):
    Path({started!r}).write_text("started")
    time.sleep(60)
'''


def _run(tmp_path: Path, plugin: bool) -> bool:
    """Run a session whose fixture writes a file on teardown, SIGTERM it mid-test: torn down?"""
    tmp_path.mkdir()
    started, done = tmp_path / "started", tmp_path / "done"
    module = tmp_path / "test_long.py"
    module.write_text(_TESTS.format(done=str(done), started=str(started)))
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--noconftest",
            *(["-p", "tests.sigterm_plugin"] if plugin else []), str(module)]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), proc.communicate(timeout=5)[0]
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    return done.exists()


def test_sigterm_tears_the_session_down(tmp_path: Path) -> None:
    assert _run(tmp_path / "with", plugin=True)


def test_without_the_plugin_it_does_not(tmp_path: Path) -> None:
    """What the plugin is for: Python's default SIGTERM skips the teardown."""
    assert not _run(tmp_path / "without", plugin=False)
