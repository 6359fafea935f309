"""What the ports of siddhi-store-rdbms's test suites share: the ``@Store`` options of a fixture
database, and the rows the database holds (what ``RDBMSTableTestUtils`` reads in Java)."""
from __future__ import annotations

import urllib.parse
from typing import Any

from tests.engine.stores.test_sqltable import store_options

__all__ = ["T0", "count_rows", "store", "table_rows"]

T0 = 1_700_000_000_000


def store(url: str, **extra: str) -> str:
    """``@Store(type='rdbms', jdbc.url=..., username=..., password=..., jdbc.driver.name=...)``
    for ``url`` (a ``postgresql://`` or ``mysql://`` fixture URL) with ``extra`` options
    (``field__length='symbol:100'`` style keys: ``__`` becomes ``.``)."""
    return f"@Store({store_options(url, **{k.replace('__', '.'): v for k, v in extra.items()})})"


def table_rows(url: str, table: str) -> list[tuple[Any, ...]]:
    """Every row of ``table`` (its name as the app created it), sorted by repr."""
    p = urllib.parse.urlsplit(url)
    if p.scheme.startswith("postgres"):
        import psycopg

        with psycopg.connect(url) as conn:
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()  # unquoted: folded, as Siddhi's names
    else:
        import pymysql

        conn = pymysql.connect(host=p.hostname, port=p.port, user=p.username, password=p.password,
                               database=p.path.lstrip("/"))
        try:
            with conn.cursor() as cur:
                cur.execute(f"SELECT * FROM `{table}`")
                rows = list(cur.fetchall())
        finally:
            conn.close()
    return sorted((tuple(r) for r in rows), key=repr)


def count_rows(url: str, table: str) -> int:
    """How many rows ``table`` has (``RDBMSTableTestUtils.getRowsInTable``)."""
    return len(table_rows(url, table))
