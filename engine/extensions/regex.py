"""The ``regex:`` namespace: Siddhi's siddhi-execution-regex, as built-in extensions."""
from __future__ import annotations
