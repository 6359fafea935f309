"""Run one case on Srota the way the Java runner runs it on Siddhi, and compare the two answers.

A case (see ``runner/SiddhiRunner.java``) is an app, the stream and query callbacks to register,
and steps: chunks of events sent to a stream (one event alone with ``send``, more as one chunk
with ``send_events``) and on-demand queries. Both engines answer with the chunks every callback
received, in order; ``compare`` checks them per callback on three levels: the rows (values and
expired flags, in order), their timestamps, and the chunk boundaries.

Values compare exactly, except numbers: a double may differ in its last bits where the two
engines add in another order (relative 1e-9), and a Java ``float`` prints with its own shortest
digits (``65.1``), which Srota holds as the nearest 32-bit value (``65.0999984741211``), so two
numbers that are the same 32-bit float are the same.  A zero's sign counts: Java prints -0.0,
and a sink writes it so.  A list keeps its order; a Java set, which
the runner writes ``{"$set": [...]}`` (in its hash order), is the same as a list of the same
members in any order.
"""
from __future__ import annotations

import json
import math
import signal
import struct
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

Answer = dict[str, Any]


class _Timeout(BaseException):
    """The app ran past its time limit (a BaseException, so the engine's handlers of failing
    events and timer callbacks do not take it for an error of the app's and carry on)."""


def run_srota(case: dict[str, Any], timeout_s: float = 20.0) -> Answer:
    """Run ``case`` on Srota's embedding API (on the service host where it publishes to or reads
    ``inMemory`` topics, :mod:`tests.differential.transport`); the answer has the runner's shape.

    A step ``{"restore": true}`` snapshots the app and shuts it down, and a new runtime of the
    same app, started and restored from the snapshot, takes the rest (as the runner does it).
    """
    from srota import SiddhiManager
    from tests.differential.transport import run_srota_service, uses_transports

    if uses_transports(case):
        return run_srota_service(case, timeout_s)

    outputs: list[dict[str, Any]] = []
    answer: Answer = {"id": case.get("id"), "error": None, "outputs": outputs}
    try:
        runtime = SiddhiManager().create_siddhi_app_runtime(case["app"])
    except Exception as exc:  # a rejected app is an answer
        answer["error"] = f"{type(exc).__name__}: {exc}"
        answer["created"] = False
        return answer
    answer["created"] = True

    def query_callback(name: str) -> Any:
        def receive(timestamp: int, in_events: list[Any] | None, remove_events: list[Any] | None) -> None:
            outputs.append({"cb": f"query:{name}", "ts": timestamp,
                            "in": plain_rows(in_events or (), expired=False),
                            "out": plain_rows(remove_events or (), expired=False)})
        return receive

    def on_alarm(signum: int, frame: Any) -> None:
        raise _Timeout()

    def listen(runtime: Any) -> None:
        for name in case.get("streams", ()):
            runtime.add_callback(name, stream_callback(name, outputs))
        for name in case.get("queries", ()):
            runtime.add_query_callback(name, query_callback(name))

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        try:
            listen(runtime)
        except Exception:  # a callback on a query or stream the app does not have
            answer["created"] = False
            raise
        runtime.start()
        handlers: dict[str, Any] = {}
        for step in case["steps"]:
            if "restore" in step:
                snapshot = runtime.snapshot()
                runtime.shutdown()
                runtime = SiddhiManager().create_siddhi_app_runtime(case["app"])
                listen(runtime)
                runtime.start()
                runtime.restore(snapshot)
                handlers.clear()
                continue
            if "query" in step:
                found = runtime.query(step["query"])
                outputs.append({"cb": "ondemand", "events": plain_rows(found, expired=False)})
                continue
            stream = step["stream"]
            if stream not in handlers:
                handlers[stream] = runtime.get_input_handler(stream)
            send_step(handlers[stream], step["events"])
    except _Timeout:
        answer["error"] = "timeout"
    except Exception as exc:
        record_failure(answer, exc)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        try:
            runtime.shutdown()
        except Exception:  # noqa: S110 - the answer is already made
            pass
    return answer


def stream_callback(name: str, outputs: list[dict[str, Any]]) -> Any:
    """A stream callback that adds each chunk to ``outputs`` as the runner writes it."""
    def receive(events: list[Any]) -> None:
        outputs.append({"cb": f"stream:{name}", "events": plain_rows(events, expired=True)})
    return receive


def record_failure(answer: Answer, exc: Exception) -> None:
    """The app failed while running: the error as the runner writes it, and where it was raised."""
    answer["error"] = f"{type(exc).__name__}: {exc}"
    answer["traceback"] = traceback.format_exc(limit=8)


def send_step(handler: Any, events: list[list[Any]]) -> None:
    """A step's events into a stream as the runner sends them: one alone with ``send`` (a null
    time: the engine's own clock), more as one chunk with ``send_events``."""
    from srota import Event

    if len(events) == 1:
        ts, data = events[0]
        if ts is None:
            handler.send(list(data))
        else:
            handler.send(list(data), timestamp=ts)
    else:
        now = int(time.time() * 1000)
        handler.send_events([Event(now if ts is None else ts, list(data)) for ts, data in events])


def plain_rows(events: Any, *, expired: bool) -> list[list[Any]]:
    """Events as the runner writes them: ``[timestamp, data]``, with the expired flag if ``expired``."""
    if expired:
        return [[e.timestamp, _plain(e.data), e.is_expired] for e in events]
    return [[e.timestamp, _plain(e.data)] for e in events]


def _plain(value: Any) -> Any:
    """A value as JSON would carry it (tuples and sets as lists, maps as dicts; an exception, a
    fault stream's ``_error``, as ``"$error"``, as the runner writes Siddhi's)."""
    if isinstance(value, BaseException):
        return "$error"
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=repr)
    if isinstance(value, dict):  # (a key as Gson writes it: String.valueOf, null and true too)
        from srota.engine.extensions._checks import java_str

        return {java_str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def same_value(a: Any, b: Any) -> bool:
    """True when ``a`` (Siddhi's) and ``b`` (Srota's) are the same value (see the module doc)."""
    a, b = _special_text(a), _special_text(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b if isinstance(a, bool) and isinstance(b, bool) else False
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if a == b:
            # a zero's sign shows when Java prints it (-0.0) and survives arithmetic (1 / -0.0)
            return not (a == 0 and isinstance(a, float) and isinstance(b, float)
                        and math.copysign(1.0, a) != math.copysign(1.0, b))
        if isinstance(a, int) and isinstance(b, int):
            return False
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) or _same_float32(a, b)
    if isinstance(a, dict) and a.keys() == {"$set"} and isinstance(b, list):
        # a Java set (the runner marks it): the same members, in any order
        members = a["$set"]
        return len(members) == len(b) and (all(same_value(x, y) for x, y in zip(members, b, strict=True)) or Counter(
            json.dumps(x, sort_keys=True) for x in members) == Counter(json.dumps(y, sort_keys=True) for y in b))
    if isinstance(a, list) and isinstance(b, list):  # a list: in its order
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return bool(a == b)


def _special_text(value: Any) -> Any:
    """A NaN or an infinity as Java prints it: the runner writes one so in a row, while in a
    list Gson writes the number itself."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else "Infinity" if value > 0 else "-Infinity"
    return value


def _same_float32(a: float, b: float) -> bool:
    try:
        return struct.pack("<f", a) == struct.pack("<f", b)
    except (OverflowError, struct.error):
        return False


@dataclass
class Comparison:
    """How Srota's answer compares with Siddhi's for one case."""

    rows: bool = True
    timestamps: bool = True
    chunks: bool = True
    errors: bool = True
    differences: list[str] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        """Rows, timestamps and chunks all the same (or both engines refused the app)."""
        return self.errors and self.rows and self.timestamps and self.chunks


def _chunks_by_callback(answer: Answer) -> dict[str, list[list[tuple[int, Any, bool]]]]:
    chunks: dict[str, list[list[tuple[int, Any, bool]]]] = {}
    for out in answer.get("outputs", ()):
        key = out["cb"]
        if "events" in out:
            rows = [(e[0], e[1], bool(e[2]) if len(e) > 2 else False) for e in out["events"]]
        else:
            rows = [(e[0], e[1], False) for e in out["in"]] + [(e[0], e[1], True) for e in out["out"]]
        chunks.setdefault(key, []).append(rows)
    return chunks


def compare(siddhi: Answer, srota: Answer, unordered_callbacks: tuple[str, ...] | list[str] = ()) -> Comparison:
    """Compare Srota's answer with Siddhi's, per callback (see the module doc).

    ``unordered_callbacks`` names callbacks (``"ondemand"``, ``"query:q3"``) whose rows come in
    an order Siddhi does not define (a ``@Index`` table's rows are a ``HashSet`` of events, in
    identity-hash order, which changes from run to run): their rows are compared as a multiset
    within each chunk.
    """
    result = Comparison()
    s_err, p_err = siddhi.get("error"), srota.get("error")
    if s_err or p_err:
        created_s = siddhi.get("created", not (s_err and _creation_error(s_err)))
        created_p = srota.get("created", not (p_err and _creation_error(p_err)))
        if created_s != created_p or (s_err is None) != (p_err is None):
            result.errors = False
            result.differences.append(f"errors: Siddhi {s_err!r}, Srota {p_err!r}")
        if not created_s and not created_p:
            return result
    want, got = _chunks_by_callback(siddhi), _chunks_by_callback(srota)
    unordered = set(unordered_callbacks)
    for key in sorted(set(want) | set(got)):
        w, g = want.get(key, []), got.get(key, [])
        if key in unordered:  # each chunk's rows in a canonical order, the chunks kept in theirs
            w, g = [sorted(c, key=_row_key) for c in w], [sorted(c, key=_row_key) for c in g]
        w_rows = [r for c in w for r in c]
        g_rows = [r for c in g for r in c]
        if len(w_rows) != len(g_rows) or not all(
                x[2] == y[2] and same_value(x[1], y[1]) for x, y in zip(w_rows, g_rows, strict=True)):
            result.rows = False
            result.differences.append(f"{key}: rows differ\n  Siddhi {len(w_rows)}: {_show(w_rows)}\n"
                                      f"  Srota  {len(g_rows)}: {_show(g_rows)}")
            continue
        if any(x[0] != y[0] for x, y in zip(w_rows, g_rows, strict=True)):
            result.timestamps = False
            result.differences.append(f"{key}: timestamps differ\n  Siddhi {[r[0] for r in w_rows][:20]}\n"
                                      f"  Srota  {[r[0] for r in g_rows][:20]}")
        if [len(c) for c in w] != [len(c) for c in g]:
            result.chunks = False
            result.differences.append(f"{key}: chunks differ: Siddhi {[len(c) for c in w][:30]}, "
                                      f"Srota {[len(c) for c in g][:30]}")
    return result


def _row_key(row: tuple[int, Any, bool]) -> str:
    """A canonical sort key for a row; floats rounded to 32 bits so both engines' forms sort alike."""
    def canon(v: Any) -> Any:
        if isinstance(v, float):
            return round(struct.unpack("<f", struct.pack("<f", v))[0], 4) if abs(v) < 3e38 else v
        if isinstance(v, list):
            return [canon(x) for x in v]
        return v
    return json.dumps([row[2], canon(row[1])], sort_keys=True, default=repr)


def _creation_error(error: str) -> bool:
    names = ("SiddhiParserException", "SiddhiAppCreationException", "SiddhiAppValidationException",
             "DuplicateDefinitionException", "DefinitionNotExistException", "QueryNotExistException",
             "SiddhiParserError", "SiddhiAppCreationError", "DefinitionNotExistError", "QueryNotExistError")
    return error.split(":", 1)[0].strip() in names


def _show(rows: list[tuple[int, Any, bool]], limit: int = 12) -> str:
    shown = ", ".join(f"{'-' if r[2] else ''}{json.dumps(r[1])}" for r in rows[:limit])
    return shown + (" ..." if len(rows) > limit else "")
