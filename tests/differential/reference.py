"""Real Siddhi 5.1.33 as the reference engine: the Java runner's process, many apps per JVM.

``ReferenceSiddhi.run(case)`` sends one case (see ``runner/SiddhiRunner.java`` for the protocol)
and returns the runner's answer. A runner that timed out or died is started again for the next
case. Where ../shared/siddhi-5.1.33, Java or the dependency jars (``make deps``) are missing,
``unavailable_reason()`` says why, and the tests that need the engine skip with that reason.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SIDDHI_JARS = ROOT.parent / "shared" / "siddhi-5.1.33"
CACHE = ROOT / ".cache" / "siddhi"
DEPENDENCY_JARS = CACHE / "lib"
RUNNER_SOURCE = Path(__file__).resolve().parent / "runner" / "SiddhiRunner.java"
RUNNER_CLASSES = CACHE / "classes"
DEBIAN_JARS = [Path("/usr/share/java") / n for n in ("log4j-api.jar", "log4j-core.jar", "jaxb-api.jar")]
_PREFIX = "@@DIFF "


def unavailable_reason() -> str | None:
    """Why real Siddhi cannot run here, or None when it can."""
    if not SIDDHI_JARS.is_dir():
        return f"{SIDDHI_JARS} is absent (the Siddhi 5.1.33 jars live in ../shared)"
    if shutil.which("java") is None or shutil.which("javac") is None:
        return "no Java 17 (java and javac) on this machine"
    if not (DEPENDENCY_JARS / ".complete").exists():
        return f"the PySiddhi wheel's dependency jars are not in {DEPENDENCY_JARS}: run `make deps`"
    missing = [str(p) for p in DEBIAN_JARS if not p.exists()]
    if missing:
        return f"missing {', '.join(missing)} (Debian's liblog4j2-java, libjaxb-api-java): run `make deps`"
    return None


def classpath() -> str:
    """The runner's class path: Siddhi 5.1.33, the wheel's other jars, Debian's log4j2 and jaxb."""
    jars = sorted(SIDDHI_JARS.glob("siddhi-*.jar")) + sorted(DEPENDENCY_JARS.glob("*.jar")) + DEBIAN_JARS
    return os.pathsep.join(str(j) for j in jars)


def compile_runner() -> Path:
    """Compile the runner into the cache (again only when its source is newer)."""
    target = RUNNER_CLASSES / "SiddhiRunner.class"
    if target.exists() and target.stat().st_mtime >= RUNNER_SOURCE.stat().st_mtime:
        return RUNNER_CLASSES
    RUNNER_CLASSES.mkdir(parents=True, exist_ok=True)
    subprocess.run(["javac", "-nowarn", "-cp", classpath(), "-d", str(RUNNER_CLASSES), str(RUNNER_SOURCE)],
                   check=True, capture_output=True, text=True)
    return RUNNER_CLASSES


class ReferenceSiddhi:
    """A Siddhi 5.1.33 runner process, started on first use and again after a timeout or crash."""

    def __init__(self, log_path: Path | None = None, extra_classpath: str = "") -> None:
        """``extra_classpath``: more jars for the engine (extensions built from their sources)."""
        reason = unavailable_reason()
        if reason:
            raise RuntimeError(reason)
        self._classes = compile_runner()
        self._log_path = log_path or CACHE / "runner.log"
        self._extra = extra_classpath
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def _start(self) -> subprocess.Popen[str]:
        log = open(self._log_path, "a")  # noqa: SIM115 - the process owns it until it exits
        cmd = ["java", "-Xss4m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-Dlog4j2.level=ERROR", "-Dorg.apache.logging.log4j.level=ERROR",
               "-cp", os.pathsep.join(p for p in (str(self._classes), classpath(), self._extra) if p), "SiddhiRunner"]
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                text=True, encoding="utf-8", bufsize=1)

    def run(self, case: dict[str, Any]) -> dict[str, Any]:
        """Run one case on Siddhi; the answer's ``error`` is None, a creation or run error, or 'timeout'."""
        with self._lock:
            for attempt in (1, 2):
                if self._proc is None or self._proc.poll() is not None:
                    self._proc = self._start()
                assert self._proc.stdin is not None and self._proc.stdout is not None
                try:
                    self._proc.stdin.write(json.dumps(case) + "\n")
                    self._proc.stdin.flush()
                    while True:
                        line = self._proc.stdout.readline()
                        if not line:
                            break
                        if line.startswith(_PREFIX):
                            answer: dict[str, Any] = json.loads(line[len(_PREFIX):])
                            if answer.get("error") == "timeout":
                                self._proc.wait(timeout=10)
                                self._proc = None
                            return answer
                except BrokenPipeError:
                    pass
                self.close()
                if attempt == 2:
                    return {"id": case.get("id"), "error": "runner died", "outputs": []}
            raise AssertionError("unreachable")

    def close(self) -> None:
        """Stop the runner process."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.stdin:
                proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
