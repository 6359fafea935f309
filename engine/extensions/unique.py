"""The ``unique:`` namespace: Siddhi's siddhi-execution-unique, as built-in extensions."""
from __future__ import annotations
