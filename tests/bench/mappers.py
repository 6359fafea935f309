"""The mapper micro-benchmark: JSON in -> rows out, and rows in -> JSON out.

    python -m tests.bench.mappers [N]

Runs the ``json`` source mapper over N one-event payloads (the shape a Kafka topic carries,
``{"symbol": ..., "price": ..., "volume": ..., "ts": ...}``, given to ``map`` in chunks of
500 as the host does), and the ``json`` sink mapper over the same N rows in chunks of 500 with
the default mapping (one JSON array message per chunk, Siddhi's default) and with
``event.grouping.enabled='false'`` (one message per event).  Prints one JSON line per case
with events per second (best of three runs).
"""
from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

import orjson

from tests.bench.data import rows

CHUNK = 500


def _best(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str]) -> int:
    from srota.grammar.model import Annotation, AnnotationElement, Attribute, AttrType

    from srota import mappers

    n = int(argv[0]) if argv else 200_000
    attrs = (Attribute("symbol", AttrType.STRING), Attribute("price", AttrType.DOUBLE),
             Attribute("volume", AttrType.LONG), Attribute("ts", AttrType.LONG))
    data = rows(n)
    payloads = [orjson.dumps({"symbol": s, "price": p, "volume": v, "ts": t}) for s, p, v, t in data]
    chunks = [data[i:i + CHUNK] for i in range(0, n, CHUNK)]
    json_map = Annotation("map", (AnnotationElement("type", "json"),))
    source = mappers.create_source_mapper(attrs, json_map, "Trades")

    def decode() -> None:
        m = source.map
        for p in payloads:
            m(p, None)

    cases: list[tuple[str, Callable[[], object]]] = [("json source: payload -> rows", decode)]
    for label, extra in (("json sink: rows -> JSON (default, grouped)", ()),
                         ("json sink: rows -> JSON (event.grouping.enabled=false)",
                          (AnnotationElement("event.grouping.enabled", "false"),))):
        sink = mappers.create_sink_mapper(attrs, Annotation("map", (AnnotationElement("type", "json"), *extra)),
                                          "Out")

        def encode(sink: mappers.SinkMapper = sink) -> None:
            for c in chunks:
                mappers.map_for_sink(sink, c)

        cases.append((label, encode))
    for label, fn in cases:
        seconds = _best(fn)
        print(json.dumps({"case": label, "events": n, "seconds": round(seconds, 4),
                          "events_per_s": round(n / seconds)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
