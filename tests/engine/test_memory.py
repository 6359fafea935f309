"""srota.engine.memory: freed C-heap memory goes back to the system (the soak's RSS bound)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# A burst of blocks over CPython's small-object limit (so they come from malloc), nearly all
# freed, a few kept spread over the heap: what a rebalance or an outage's retries leave behind.
_BURST = textwrap.dedent("""
    import sys
    from srota.engine.memory import release_free_memory

    def rss_mb():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) // 1024
        raise AssertionError("no VmRSS")

    before = rss_mb()
    blocks = [bytes(2000) + str(i).encode() for i in range(40_000)]  # about 80 MB
    kept = blocks[::64]
    del blocks
    freed = rss_mb()
    released = release_free_memory() if sys.argv[1] == "trim" else None
    print(before, freed, rss_mb(), released)
""")


def _run(mode: str) -> tuple[int, int, int, str]:
    out = subprocess.run([sys.executable, "-c", _BURST, mode], check=True, capture_output=True, text=True).stdout
    before, freed, after, released = out.split()
    return int(before), int(freed), int(after), released


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; malloc_trim is glibc's")
def test_freed_heap_stays_resident_until_released() -> None:
    # Without a trim glibc keeps what the burst freed (the survivors pin the heap's top):
    before, freed, after, _ = _run("keep")
    assert freed - before > 50 and after - before > 50
    # With one it goes back to the system.
    before, freed, after, released = _run("trim")
    assert released == "True"
    assert freed - before > 50
    assert after - before < 20, (before, freed, after)


def test_release_free_memory_is_safe_to_call_repeatedly() -> None:
    from srota.engine.memory import release_free_memory

    first = release_free_memory()
    assert release_free_memory() is first
