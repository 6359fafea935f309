"""The ``reorder:`` namespace: Siddhi's siddhi-execution-reorder, as built-in extensions."""
from __future__ import annotations
