"""The ``time:`` namespace: Siddhi's siddhi-execution-time, as built-in extensions."""
from __future__ import annotations
