"""The ``map:`` namespace: Siddhi's siddhi-execution-map, as built-in extensions."""
from __future__ import annotations
