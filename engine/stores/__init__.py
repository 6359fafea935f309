"""Stores on server databases: Siddhi's ``rdbms`` store for tables and aggregations.

* :mod:`engine.stores.database` -- the store's URL and options, one connection that rides out
  outages (back-pressure, capped back-off, a bounded outage), the :class:`Dialect` interface.
* :mod:`engine.stores.postgresql`, :mod:`engine.stores.mysql` -- one module per database
  (drivers: psycopg 3, PyMySQL; the optional extra ``srota[rdbms]``).
* :mod:`engine.stores.sqltable` -- tables whose rows live in the database; conditions compile to
  SQL with bound parameters.
* :mod:`engine.stores.aggregation` -- incremental-aggregation roll-ups in the database, with
  shard ids (``@PartitionById``) composed by every reader.

The engine talks to these through the table interface (``engine/table.py``) and the aggregation
``Store`` interface (``engine/aggregation/store.py``); nothing else knows which database it is.
SQLite, the embedded default, keeps its own modules (``engine/store_sqlite.py`` and the
aggregation ``SqliteStore``).
"""
