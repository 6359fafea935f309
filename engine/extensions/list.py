"""The ``list:`` namespace: Siddhi's siddhi-execution-list, as built-in extensions."""
from __future__ import annotations
