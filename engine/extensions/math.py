"""The ``math:`` namespace: Siddhi's siddhi-execution-math, as built-in extensions."""
from __future__ import annotations
