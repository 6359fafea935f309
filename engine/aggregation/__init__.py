"""Incremental aggregation: ``define aggregation A from S select ... aggregate [by t] every sec ... year``.

* :mod:`.buckets`: calendar buckets and time strings (shared with the Spark jobs);
* :mod:`.spec`: the definition compiled into base values and generated per-event code;
* :mod:`.store`: the ``A_SECONDS`` ... ``A_YEARS`` tables, in memory or in SQLite;
* :mod:`.runtime`: the live executors, restart recreation, purging, snapshots;
* :mod:`.retrieval`: joins ``within ... per ...`` and on-demand queries;
* :mod:`.purge`: the ``@purge`` retention policy.
"""
from srota.engine.aggregation.runtime import Aggregation, define_aggregation

__all__ = ["Aggregation", "define_aggregation"]
