"""The cyclic garbage collector, held off while the engine processes a chunk.

Processing a chunk allocates two container objects per output event (the event and its
row), most of which live until the chunk's outputs are handed on.  A young collection
falling inside the chunk walks all of them and moves them to an older generation, where
they die; deferred to the end of the chunk, it finds only what outlives it (8-16 % of a
filter's or a window's time; docs/performance.md).

The entry points of chunks (``InputHandler``, an ``@Async`` stream's worker) process each
chunk under the app lock ``with holding_off(...)``.  Nothing is freed
later than one chunk, unless the chunk blocks: a debugger hold or a database outage's retry
may last minutes, and the rest of the process (an asyncio loop, a web server) allocates
meanwhile, so they call :func:`let_run` first.  The process setting (``gc.set_threshold``) is
not touched; an application that turned the collector off keeps it off (it is turned on
only where this module turned it off), and ``SiddhiManager(defer_gc=False)`` leaves it alone.
"""
from __future__ import annotations

import gc
import threading

#: A chunk of at least this many events is processed with the collector held off; a
#: smaller one allocates too little for a collection to fall inside it often.
MIN_EVENTS = 64

_here = threading.local()  # .held: this thread's chunk holds the collector off


def hold_off() -> bool:
    """Turn the collector off for the chunk this thread processes now, if it is on; whether
    it was (then the caller must :func:`release` it)."""
    if gc.isenabled():
        gc.disable()
        _here.held = True
        return True
    return False


def release() -> None:
    """Turn the collector on again after the chunk :func:`hold_off` held it off for."""
    _here.held = False
    gc.enable()


class holding_off:  # noqa: N801 - used as a function: ``with holding_off(big):``
    """``with holding_off(big):`` the block runs with the collector held off if ``big`` (and
    it was on), and on again after it, whatever happens in it."""

    __slots__ = ("_big", "_held")

    def __init__(self, big: bool) -> None:
        self._big = big
        self._held = False

    def __enter__(self) -> None:
        self._held = self._big and hold_off()

    def __exit__(self, *exc: object) -> None:
        if self._held:
            release()


def let_run() -> None:
    """Let the collector run again if this thread's chunk holds it off: the chunk is about
    to block for a while (the rest of it runs with the collector on)."""
    if getattr(_here, "held", False):
        _here.held = False
        gc.enable()
