"""The ``json:`` namespace: Siddhi's siddhi-execution-json, as built-in extensions."""
from __future__ import annotations
