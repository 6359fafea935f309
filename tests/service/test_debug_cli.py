"""``srota debug`` on the shipped example, driven through its prompt like a person would."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SROTA = Path(sys.executable).with_name("srota")


def _session(commands: list[str], *args: str) -> str:
    done = subprocess.run([str(SROTA), "debug", str(ROOT / "examples" / "stock.siddhi"), *args],
                          input="".join(c + "\n" for c in commands), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_break_replay_step_state_and_play() -> None:
    out = _session(["replay", "wait", "next", "wait", "state avgPrice", "release all", "play", "wait 1", "quit"],
                   "--input", str(ROOT / "examples" / "trades.csv"), "--break", "avgPrice:out")
    assert "breakpoint at avgPrice (out)" in out
    first = out.index("== held at avgPrice (out): 1 event(s)")
    assert "symbol  avgPrice  totalVolume" in out[first:]
    assert "== held at lastPrice (in)" in out[first:]  # next: the very next checkpoint
    assert "symbol  price  volume  ts" in out[first:]  # IN events named by the input stream
    assert '"avgPrice/window"' in out
    # released and played: every trade goes through, each output printed once
    assert out.count("[Trades] ") == 5 and out.count("[BigTrades] ") == 2
    assert "nothing is held" in out


def test_send_typed_values_and_unknown_names() -> None:
    out = _session(["break bigTrades in", "send Trades IBM,120.5,5000,1700000000000", "wait", "play", "wait 1",
                    "send Nope 1", "send Trades IBM,x,1,2", "break nope in", "quit"])
    assert "== held at bigTrades (in): 1 event(s)" in out
    assert "IBM     120.5  5000    1700000000000" in out
    assert "[BigTrades] ('IBM', 120.5, 5000)" in out
    assert "no stream named 'Nope'" in out
    assert "could not convert" in out or "invalid literal" in out
    assert "no query named 'nope'" in out


def test_debug_a_service_config_with_its_live_source(tmp_path: Path) -> None:
    """``srota debug --config``: the demo's file source feeds the app; the prompt holds it."""
    import os

    env = {**os.environ, "SROTA_HTTP_PORT": "0"}
    commands = ["queries", "break overheat in", "wait 20", "state overheat", "release all", "play", "quit"]
    done = subprocess.run([str(SROTA), "debug", "--config", str(ROOT / "config" / "demo.yaml")],
                          input="".join(c + "\n" for c in commands), capture_output=True, text=True, timeout=90,
                          env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "drift, jump, overheat" in out
    assert "== held at overheat (in)" in out and "device     room    temperature" in out
    assert '"overheat/selector"' in out or "{}" in out
