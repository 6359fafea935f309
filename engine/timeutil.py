"""Time strings in annotations and options (``'100 ms'``, ``'1 min 30 sec'``).

The parser is the grammar's (:mod:`srota.grammar.durations`): time literals, annotation
values and the service config share one set of units and one rule.
"""
from __future__ import annotations

from srota.grammar.durations import parse_duration

__all__ = ["parse_duration"]
