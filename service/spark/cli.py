"""The ``srota aggregation`` command group (wired into ``service/cli.py`` by ``add_subparsers``).

::

    srota aggregation backfill APP.siddhi --aggregation A --input 'events/*.json' [--format json|csv|parquet]
                                          [--from T --to T] [--master URL] [--writer driver|jdbc]
    srota aggregation purge APP.siddhi --aggregation A [--now T] [--master URL] [--rebuild GRANULARITY]

Times (``--from``, ``--to``, ``--now``) are epoch milliseconds or ``'yyyy-MM-dd HH:mm:ss[ Z]'``.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def _time(text: str) -> int:
    from srota.engine.aggregation.buckets import time_value

    try:
        return time_value(int(text)) if text.lstrip("-").isdigit() else time_value(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_subparsers(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``aggregation backfill|purge`` to a CLI's subparsers; handlers go to ``func``."""
    p = subparsers.add_parser("aggregation", help="Spark batch jobs on incremental aggregation tables")
    sub = p.add_subparsers(dest="aggregation_command", required=True)

    b = sub.add_parser("backfill", help="compute an aggregation's tables from historical events")
    b.add_argument("app", help="the SiddhiQL app defining the aggregation")
    b.add_argument("--aggregation", required=True, help="aggregation id")
    b.add_argument("--input", required=True, action="append",
                   help="events: a path or glob (repeatable)")
    b.add_argument("--format", default="json", choices=("json", "csv", "parquet"))
    b.add_argument("--from", dest="start", type=_time, help="first event time to include")
    b.add_argument("--to", dest="end", type=_time, help="event time to stop before")
    b.add_argument("--master", help="Spark master URL (default local[*])")
    b.add_argument("--writer", default="auto", choices=("auto", "driver", "jdbc"),
                   help="write through the driver, or over JDBC (SQLite: from one partition; PostgreSQL/"
                        "MariaDB: from every executor); auto: JDBC for a server database on a cluster")
    b.add_argument("--shard-id", help="the shard the rows are written under (@PartitionById aggregations)")
    b.add_argument("--jars", action="append", metavar="JAR",
                   help="another JDBC driver jar for Spark (repeatable; PostgreSQL and MariaDB are found)")
    _retry_option(b)
    b.set_defaults(func=main)

    u = sub.add_parser("purge", help="apply the retention policy, or rebuild a table from the finer one")
    u.add_argument("app")
    u.add_argument("--aggregation", required=True)
    u.add_argument("--now", type=_time, help="purge as if it were this time (default: now)")
    u.add_argument("--master", help="Spark master URL (default local[*])")
    u.add_argument("--rebuild", metavar="GRANULARITY",
                   help="recompute this granularity's table from the next finer one instead of purging")
    u.add_argument("--dry-run", action="store_true",
                   help="print the bounds and how many rows each table would lose; delete nothing")
    _retry_option(u)
    u.set_defaults(func=main)
    return p


def _retry_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--retry-for", type=float, default=300.0, metavar="SECONDS",
                   help="run the job again while its database is unreachable, for up to this long (default 300, "
                        "as the stores' max.outage; 0: never); both jobs are idempotent")


#: What Spark's JDBC readers and writers say when the database went away or is restarting
#: (PostgreSQL's and MariaDB's drivers): the job can run again once it is back.
_TRANSIENT = ("An I/O error occurred while sending to the backend", "Connection refused",
              "the database system is starting up", "the database system is shutting down",
              "the database system is in recovery mode", "terminating connection due to administrator command",
              "SQLNonTransientConnectionException", "Communications link failure", "Socket fail to connect",
              "Connection reset", "connection attempt failed", "FAILED_JDBC.CONNECTION")


def _transient(exc: BaseException) -> bool:
    """Whether a failed job met a database outage (worth running again) rather than a defect."""
    text = str(exc)
    return any(marker in text for marker in _TRANSIENT)


def _with_retries(job: Callable[[], T], retry_for: float) -> T:
    """``job()``, run again with a growing pause while it fails on a database outage."""
    deadline = time.monotonic() + retry_for
    delay = 1.0
    while True:
        try:
            return job()
        except Exception as exc:
            if not _transient(exc) or time.monotonic() + delay > deadline:
                raise
            print(f"srota aggregation: the database is unreachable ({_one_line(exc)}); running the job again in "
                  f"{delay:g} s", file=sys.stderr, flush=True)
            time.sleep(delay)
            delay = min(delay * 2, 10.0)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def main(args: argparse.Namespace) -> int:
    """Run the selected job; returns the process exit code (2: bad input, 3: no Spark, 1: the job failed)."""
    from srota.grammar.errors import SiddhiAppCreationError, SiddhiParserError
    from srota.service.spark.session import SparkUnavailable

    try:
        if args.aggregation_command == "backfill":
            from srota.service.spark.backfill import backfill

            inputs = args.input if len(args.input) > 1 else args.input[0]
            result = _with_retries(lambda: backfill(args.app, args.aggregation, inputs, args.format, args.start,
                                                    args.end, args.master, args.writer, shard_id=args.shard_id,
                                                    jars=tuple(args.jars or ())), args.retry_for)
            total = sum(result["rows"].values())
            p = result["phases"]
            print(f"backfilled {result['events']} events into {total} rows in {result['seconds']:.1f}s "
                  f"(session {p['session']:.1f}s, read {p['read']:.1f}s, compute {p['compute']:.1f}s, "
                  f"write {p['write']:.1f}s)")
            return 0
        from srota.service.spark.backfill import check_app

        check_app(args.app)
        if args.rebuild:
            from srota.service.spark.purge import rebuild

            n = _with_retries(lambda: rebuild(args.app, args.aggregation, args.rebuild, args.master),
                              args.retry_for)
            print(f"rebuilt {n} rows")
            return 0
        from srota.service.spark.purge import purge

        deleted = _with_retries(lambda: purge(args.app, args.aggregation, args.now, args.master,
                                              dry_run=args.dry_run), args.retry_for)
        print(f"{'would purge' if args.dry_run else 'purged'} {sum(deleted.values())} rows")
        return 0
    except SparkUnavailable as exc:
        print(f"srota aggregation: {_one_line(exc)}", file=sys.stderr)
        return 3
    except (ValueError, OSError, SiddhiAppCreationError, SiddhiParserError) as exc:
        print(f"srota aggregation: {_one_line(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # a Spark job failure (a corrupt file, a lost executor): no JVM trace
        if type(exc).__module__.startswith(("pyspark", "py4j")):
            print(f"srota aggregation: Spark job failed: {_one_line(exc)}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":  # pragma: no cover - `python -m srota.service.spark.cli ...`
    parser = argparse.ArgumentParser(prog="srota")
    add_subparsers(parser.add_subparsers(dest="command", required=True))
    ns = parser.parse_args()
    sys.exit(ns.func(ns))
