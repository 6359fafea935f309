"""The playground's sandbox: one app run in a child process that can be killed.

The playground (:mod:`srota.service.playground`) runs apps that are being written: a query
may loop over a huge cross join or fill memory.  Python cannot stop a thread mid-chunk, so
the app runs in a child process of its own, with an address-space limit (``RLIMIT_AS``);
the parent kills it when one input takes longer than the busy limit, and the server and the
service's own apps go on.  The engine alone has no sources or sinks (the service host wires
those), so the sandbox reaches nothing outside unless the app's own ``@store`` does, or the
author attaches the service's connectors (``attach``: the app then runs in a service host of
its own in the child, with the service config's refs).

The two talk newline-delimited JSON over the child's stdin and stdout.  Requests carry an
``id`` and get ``{"id", "result"}`` or ``{"id", "error"}``; the child also sends
notifications: ``{"event": "output", "stream", "events", "total"}`` for every chunk of every
stream, ``{"event": "held", "query", "terminal", "events"}`` at every debugger stop.

In the child, the app's work (``send``) runs on one engine thread, in order; debugger
commands (``next``, ``play``), state and statistics are answered on the reading thread so
they work while the engine thread is held at a breakpoint.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import resource
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from srota.engine import SiddhiManager
from srota.engine.context import Limits
from srota.engine.debugger import plain
from srota.engine.event import Event
from srota.grammar.errors import SiddhiAppCreationError
from srota.mappers._convert import json_default, value_converter

#: Events of one output chunk sent to the page; the rest are counted, not shown.
MAX_SHOWN = 200
#: The child's exit code when it went over its memory.
_EXIT_MEMORY = 3


@dataclass(frozen=True)
class SandboxLimits:
    """What one sandboxed app may use.

    ``memory_mb``: the child's address space (``RLIMIT_AS``); ``busy_seconds``: how long one
    input may take before the app is stopped (a debugger hold does not count);
    ``max_events``: inputs per run; ``max_window_events`` and ``max_pending_matches``: the
    engine's own guards (:class:`srota.engine.context.Limits`), tighter than a service's.
    """

    memory_mb: int = 2048
    busy_seconds: float = 10.0
    max_events: int = 1_000_000
    max_window_events: int = 100_000
    max_pending_matches: int = 10_000


class SandboxError(Exception):
    """A request the sandboxed app refused (a malformed app, an event that does not fit)."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


class SandboxGone(Exception):
    """The child process ended (killed for a limit, or crashed); the message says why."""


# ============================================================================ parent side
class Sandbox:
    """One child process running one app; ``request`` talks to it from the event loop."""

    def __init__(self, limits: SandboxLimits, on_notice: Callable[[dict[str, Any]], None]) -> None:
        self.limits = limits
        self._on_notice = on_notice
        self._proc: asyncio.subprocess.Process | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self._reader: asyncio.Task[None] | None = None
        self._held = False
        #: Why the child ended, when the parent ended it.
        self.gone_reason: str | None = None

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    async def start(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "srota.service.sandbox", str(self.limits.memory_mb),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env=env, limit=64 << 20)
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        try:
            while True:
                line = await self._proc.stdout.readline()
                if not line:
                    break
                message = orjson.loads(line)
                if "id" in message:
                    future = self._pending.pop(message["id"], None)
                    if future is not None and not future.done():
                        future.set_result(message)
                    continue
                if message.get("event") == "held":
                    self._held = True
                self._on_notice(message)
        finally:
            await self._ended()

    async def _ended(self) -> None:
        proc = self._proc
        if proc is None:
            return
        code = await proc.wait()
        if self.gone_reason is None:
            err = b""
            if proc.stderr is not None:
                with contextlib.suppress(Exception):
                    err = await asyncio.wait_for(proc.stderr.read(), 1)
            tail = err.decode(errors="replace").strip().splitlines()[-3:]
            if code == _EXIT_MEMORY or "MemoryError" in "".join(tail):
                self.gone_reason = f"the app ran out of its {self.limits.memory_mb} MiB of memory and was stopped"
            elif code < 0:
                self.gone_reason = f"the app's process ended (signal {-code})"
            else:
                self.gone_reason = f"the app's process ended (exit {code}): {' '.join(tail)}".strip()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(SandboxGone(self.gone_reason))
        self._pending.clear()
        self._on_notice({"event": "stopped", "reason": self.gone_reason})

    async def request(self, op: str, busy: bool = False, **fields: Any) -> Any:
        """Send one request and wait for its answer.

        With ``busy``, the answer must come within the busy limit unless the debugger holds
        the app; otherwise the child is killed and :class:`SandboxGone` says why.
        """
        if not self.alive:
            raise SandboxGone(self.gone_reason or "no app is running")
        assert self._proc is not None and self._proc.stdin is not None
        self._next_id += 1
        ident = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        try:
            self._proc.stdin.write(orjson.dumps({"id": ident, "op": op, **fields}) + b"\n")
            await self._proc.stdin.drain()
        except (ConnectionResetError, BrokenPipeError):
            # The child ended after the check above: until its exit is seen, its reader is
            # about to fail the pending requests, this one too, with the reason (``_ended``).
            if self._proc.returncode is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(future), 10)
            if not future.done():
                self._pending.pop(ident, None)
                raise SandboxGone(self.gone_reason or "the app's process ended") from None
        if busy:
            await self._watch(future)
        answer = await future
        if "error" in answer:
            err = answer["error"]
            raise SandboxError(err["message"], err.get("line"), err.get("column"))
        return answer["result"]

    async def _watch(self, future: asyncio.Future[Any]) -> None:
        """Kill the child when ``future`` is not done within the busy limit, holds aside."""
        waited = 0.0
        step = 0.1
        while not future.done():
            await asyncio.wait([future], timeout=step)
            if self._held:
                waited = 0.0  # a breakpoint holds the app: the author is looking, not the app looping
                continue
            waited += step
            if waited >= self.limits.busy_seconds and not future.done():
                self.gone_reason = (f"one input took more than {self.limits.busy_seconds:g} s; the app was stopped "
                                    "(a runaway query? a huge join or window?)")
                self.kill()
                return

    def resumed(self) -> None:
        """The debugger let the app go on (``next``/``play``): the busy clock runs again."""
        self._held = False

    def kill(self) -> None:
        if self.alive:
            assert self._proc is not None
            self._proc.kill()

    async def stop(self) -> None:
        """Shut the app down (gracefully if it answers within a second, else killed)."""
        if self.alive:
            assert self._proc is not None
            self.gone_reason = self.gone_reason or "stopped"
            with contextlib.suppress(SandboxGone, SandboxError, TimeoutError):
                await asyncio.wait_for(self.request("stop"), 2)
            if self.alive:
                self.kill()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await self._reader
            self._reader = None


# ============================================================================ child side
class _Child:
    """The child's end: owns the runtime; ``serve`` reads requests until stdin closes."""

    def __init__(self, out: Any) -> None:
        self._out = out
        self._write_lock = threading.Lock()
        self._work: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.runtime: Any = None
        self._sent = 0
        self._limits = SandboxLimits()
        self._converters: dict[str, list[Callable[[Any], Any]]] = {}
        #: With ``attach``: the service host running the app, and its event loop.
        self._host: tuple[Any, Any] | None = None
        threading.Thread(target=self._engine_loop, name="sandbox-engine", daemon=True).start()

    def _write(self, message: dict[str, Any]) -> None:
        data = orjson.dumps(message, default=json_default, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n"
        with self._write_lock:
            self._out.write(data)
            self._out.flush()

    def serve(self, lines: Any) -> None:
        for line in lines:
            if not line.strip():
                continue
            request = orjson.loads(line)
            if request["op"] in ("run", "send"):
                self._work.put(request)  # in order, on the engine thread
            elif request["op"] == "query":
                threading.Thread(target=self._answer, args=(request,), daemon=True).start()
            else:
                self._answer(request)
            if request["op"] == "stop":
                break
        self._work.put(None)

    def _engine_loop(self) -> None:
        while (request := self._work.get()) is not None:
            self._answer(request)

    def _answer(self, request: dict[str, Any]) -> None:
        try:
            result = getattr(self, "_op_" + request["op"])(request)
            self._write({"id": request["id"], "result": result})
        except SiddhiAppCreationError as exc:
            self._write({"id": request["id"], "error": {"message": exc.message, "line": exc.line,
                                                        "column": exc.column}})
        except SandboxError as exc:
            self._write({"id": request["id"], "error": {"message": exc.message}})
        except MemoryError:
            os._exit(_EXIT_MEMORY)
        except Exception as exc:  # noqa: BLE001 -- every failure of a request is the page's to show
            self._write({"id": request["id"], "error": {"message": f"{type(exc).__name__}: {exc}"}})

    # ------------------------------------------------------------------ operations
    def _op_run(self, request: dict[str, Any]) -> dict[str, Any]:
        from srota.service.bindings import import_extensions  # the connectors and mappers: heavy, once

        import_extensions()
        self._limits = SandboxLimits(**request.get("limits", {}))
        attach = request.get("attach")
        runtime = self._start_attached(request["text"], attach) if attach else \
            SiddhiManager(limits=self._engine_limits()).create_siddhi_app_runtime(request["text"])
        for name in runtime.stream_definitions:
            runtime.add_callback(name, self._output(name))
        runtime.debug().listeners.append(self._held)
        runtime.set_statistics_level("basic")
        if not attach:
            runtime.start()
        self.runtime = runtime
        self._converters = {name: [value_converter(a.type) for a in d.attributes]
                            for name, d in runtime.stream_definitions.items()}
        return describe(runtime)

    def _engine_limits(self) -> Limits:
        return Limits(max_window_events=self._limits.max_window_events,
                      max_pending_matches=self._limits.max_pending_matches, python_functions=False)

    def _start_attached(self, text: str, config_path: str) -> Any:
        """Run the app in a service host of its own, with the service config's connectors: its
        ``@source``/``@sink`` (and ``ref=``s) connect; persistence, the admin server and
        scale-out stay off, and the sandbox's limits apply.  Returns the started runtime."""
        import asyncio
        import dataclasses

        from srota.service.config import HttpConfig, PersistenceConfig, ScaleoutConfig, load_config
        from srota.service.host import ServiceHost

        config = load_config(config_path)
        limits = dataclasses.replace(config.limits, max_window_events=self._limits.max_window_events,
                                     max_pending_matches=self._limits.max_pending_matches, python_functions=False)
        config = dataclasses.replace(config, apps=(), http=HttpConfig(enabled=False), limits=limits,
                                     persistence=PersistenceConfig(enabled=False), scaleout=ScaleoutConfig())
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, name="sandbox-host", daemon=True).start()
        host = ServiceHost(config, app_texts=[text])
        try:
            asyncio.run_coroutine_threadsafe(host.start(), loop).result(60)
        except Exception as exc:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(host.stop(), loop).result(60)
            loop.call_soon_threadsafe(loop.stop)
            raise SandboxError(f"the app's sources and sinks could not start: {exc}") from None
        self._host = (host, loop)
        app = next(iter(host.apps.values()))
        app.use_engine_thread()  # a debugger hold must not stop the host's loop
        return app.runtime

    def _output(self, stream: str) -> Callable[[list[Any]], None]:
        def callback(events: list[Any]) -> None:
            shown = events[-MAX_SHOWN:]
            self._write({"event": "output", "stream": stream, "total": len(events),
                         "events": _rows(shown)})
        return callback

    def _held(self, query: str, terminal: Any, events: list[Any]) -> None:
        self._write({"event": "held", "query": query, "terminal": terminal.value,
                     "events": _rows(events[:MAX_SHOWN])})

    def _op_send(self, request: dict[str, Any]) -> dict[str, Any]:
        stream = request["stream"]
        converters = self._converters.get(stream)
        if converters is None:
            raise SandboxError(f"no stream named {stream!r}")
        rows = request["events"]
        if self._sent + len(rows) > self._limits.max_events:
            raise SandboxError(f"the playground's limit of {self._limits.max_events:,} input events per run "
                               "is reached: stop the app and run it again")
        values_list: list[list[Any]] = []
        stamps: list[int | None] = []
        for i, row in enumerate(rows):
            data = row.get("data") if isinstance(row, dict) else row
            if not isinstance(data, list) or len(data) != len(converters):
                got = len(data) if isinstance(data, list) else "no list of"
                raise SandboxError(f"event {i + 1}: {stream} has {len(converters)} attributes, got {got} values")
            try:
                values_list.append([None if v is None else convert(v)
                                    for convert, v in zip(converters, data, strict=True)])
            except Exception as exc:  # noqa: BLE001 -- the converters' reasons are the message
                raise SandboxError(f"event {i + 1}: {exc}") from None
            ts = row.get("timestamp") if isinstance(row, dict) else None
            stamps.append(None if ts is None else int(ts))
        handler = self._require().get_input_handler(stream)
        if any(ts is not None for ts in stamps):  # event time: each event keeps its own
            now = self.runtime.context.clock.now()
            handler.send_events([Event(now if ts is None else ts, v) for ts, v in zip(stamps, values_list, strict=True)])
        else:  # one chunk, stamped now (as a source's batch)
            handler.send_rows(values_list)
        self._sent += len(values_list)
        return {"sent": len(values_list), "total": self._sent}

    def _op_query(self, request: dict[str, Any]) -> dict[str, Any]:
        events = self._require().query(request["text"])
        return {"events": _rows(events[:10_000]),
                "total": len(events)}

    def _op_debug(self, request: dict[str, Any]) -> dict[str, Any]:
        debugger = self._require().debugger
        action = request["action"]
        if action == "acquire":
            debugger.acquire_break_point(request["query"], request["terminal"])
        elif action == "release":
            debugger.release_break_point(request["query"], request["terminal"])
        elif action == "next":
            debugger.next()
        elif action == "play":
            debugger.play()
        elif action != "state":
            raise SandboxError(f"unknown debugger action {action!r}")
        held = debugger.held
        return {"breakpoints": [{"query": q, "terminal": t.value} for q, t in debugger.break_points],
                "held": None if held is None or action in ("next", "play") else
                {"query": held[0], "terminal": held[1].value}}

    def _op_query_state(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"query": request["query"], "state": plain(self._require().query_state(request["query"]))}

    def _op_statistics(self, request: dict[str, Any]) -> Any:
        return self._require().statistics()

    def _op_stop(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.runtime is not None:
            debugger = self.runtime.debugger
            if debugger is not None:
                debugger.detach()
            if self._host is not None:  # attached: the host flushes its sinks and stops the app
                import asyncio

                host, loop = self._host
                asyncio.run_coroutine_threadsafe(host.stop(), loop).result(60)
                loop.call_soon_threadsafe(loop.stop)
                self._host = None
            else:
                self.runtime.shutdown()
            self.runtime = None
        return {"stopped": True}

    def _require(self) -> Any:
        if self.runtime is None:
            raise SandboxError("no app is running")
        return self.runtime


def _rows(events: list[Any]) -> list[dict[str, Any]]:
    return [{"timestamp": e.timestamp, "data": list(e.data)} for e in events]


def describe(runtime: Any) -> dict[str, Any]:
    """What the page shows of a running app: its streams (with attributes), queries, tables,
    windows and aggregations."""
    ctx = runtime.context
    defined = {d.id for d in runtime.app.stream_definitions}

    def attrs(definition: Any) -> list[dict[str, str]]:
        return [{"name": a.name, "type": a.type.value} for a in definition.attributes]

    return {
        "name": runtime.name,
        "streams": [{"name": n, "attributes": attrs(d), "defined": n in defined, "fault": n.startswith("!")}
                    for n, d in runtime.stream_definitions.items()],
        "queries": sorted(runtime.queries),
        "tables": sorted(ctx.tables),
        "windows": sorted(ctx.windows),
        "aggregations": sorted(getattr(ctx, "aggregations", {}) or {}),
    }


def _resident_bytes() -> int:
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def _limit_memory(megabytes: int) -> None:
    """Exit with :data:`_EXIT_MEMORY` once the resident memory passes ``megabytes``.

    A watchdog rather than ``RLIMIT_AS`` alone: the engine turns an exception in one event
    into a fault of that event and goes on (decision 5), so a ``MemoryError`` raised deep in a
    query would be logged and the app would limp on at its limit.  The address-space limit
    stays, at twice the size, as the backstop for an allocation too large and too fast for the
    watchdog to see.
    """
    limit = megabytes << 20
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (2 * limit + (512 << 20),) * 2)

    def watch() -> None:
        while True:
            if _resident_bytes() > limit:
                os._exit(_EXIT_MEMORY)
            time.sleep(0.05)

    if os.path.exists("/proc/self/statm"):
        threading.Thread(target=watch, name="sandbox-memory", daemon=True).start()


def main() -> None:
    """The child's entry point: ``python -m srota.service.sandbox MEMORY_MB``."""
    _limit_memory(int(sys.argv[1]) if len(sys.argv) > 1 else SandboxLimits.memory_mb)
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # a print() in the app's code must not corrupt the protocol
    _Child(out).serve(sys.stdin.buffer)


if __name__ == "__main__":
    main()
