"""The ``str:`` namespace: Siddhi's siddhi-execution-string, as built-in extensions."""
from __future__ import annotations
