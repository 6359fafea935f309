"""The ``unitconversion:`` namespace: Siddhi's siddhi-execution-unitconversion, as built-in extensions."""
from __future__ import annotations
