"""Random apps of extension functions, for the differential tests (``--family string_fn`` ...).

Every function family makes its case the same way (:func:`function_case`): one query per
expression, each reading an input stream of its own (``S0``, ``S1``, ...) and inserting into an
output stream of its own (``O0``, ``O1``, ...) that the runner watches; every row is sent to each
input stream in turn, one by one.  In Siddhi a query that throws on an event (a function's
exception) takes the event away from the queries after it on the same stream, where Srota goes
on with them (docs/siddhi-differences.md, "A query that throws on an event"): streams of their
own keep one failing call from hiding the others' answers, and sending alone keeps a failure
from taking a whole chunk with it.  The families themselves (``functions_string``,
``functions_math``, ...) draw the expressions and the values: the edge cases of each
function's arguments, as real payloads bring them. Siddhi runs them only with the
siddhi-execution jar of the namespace on its class path (``--classpath JARS``).
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

#: the first event's time: 2023-11-14 22:13:20 UTC, as the generator's
BASE_TS = 1_700_000_000_000


def function_case(rng: random.Random, attrs: Sequence[tuple[str, str]], expressions: Sequence[str],
                  rows: Sequence[Sequence[Any]], *, chunk_rate: float = 0.0) -> dict[str, Any]:
    """The case that sends ``rows`` (values of ``attrs``, in order) to ``S0``, ``S1``, ... and
    selects each of ``expressions`` from its own stream (see :func:`query_case`)."""
    queries = [f"from S{i}\nselect {expression} as r" for i, expression in enumerate(expressions)]
    return query_case(rng, attrs, queries, rows, chunk_rate=chunk_rate)


def query_case(rng: random.Random, attrs: Sequence[tuple[str, str]], queries: Sequence[str],
               rows: Sequence[Sequence[Any]], *, chunk_rate: float = 0.0) -> dict[str, Any]:
    """The case of ``queries``, each the text of a query up to its ``insert`` that reads
    ``S<i>`` (``from S<i>#window.length(2) select ...``) and inserts into ``O<i>``: ``rows``
    (values of ``attrs``) are sent to each ``S<i>`` in turn, the time going on. ``chunk_rate``:
    how often 2-4 rows go as one chunk (only where no query can fail, or the chunk is lost in
    Siddhi as a whole)."""
    definition = ", ".join(f"{name} {typ}" for name, typ in attrs)
    lines = ["@app:playback"]
    lines += [f"define stream S{i} ({definition});" for i in range(len(queries))]
    lines.append("")
    lines += [f"@info(name='q{i}')\n{query}\ninsert into O{i};" for i, query in enumerate(queries)]
    ts = BASE_TS + rng.randint(0, 5000)
    steps: list[dict[str, Any]] = []
    pending = list(rows)
    while pending:
        size = rng.randint(2, 4) if rng.random() < chunk_rate else 1
        chunk, pending = pending[:size], pending[size:]
        gaps = [rng.choice((0, 1, rng.randint(1, 900))) for _ in chunk]
        for i in range(len(queries)):  # the same rows to each stream, the time going on
            events = []
            for row, gap in zip(chunk, gaps, strict=True):
                ts += gap
                events.append([ts, list(row)])
            steps.append({"stream": f"S{i}", "events": events})
    return {"app": "\n".join(lines) + "\n", "streams": [f"O{i}" for i in range(len(queries))],
            "queries": [], "steps": steps}
