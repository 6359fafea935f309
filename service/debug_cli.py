"""``srota debug``: an interactive debugger prompt, like Siddhi's debugger client.

    srota debug APP.siddhi [--input FILE.csv|FILE.json --stream S] [--break QUERY:in|out ...]

Commands at the ``(srota)`` prompt::

    break QUERY in|out       acquire a breakpoint        release QUERY in|out (or: release all)
    next                     go on, stop at the very next checkpoint
    play                     go on to the next breakpoint
    state QUERY              the query's state (windows, aggregators, partial matches)
    send STREAM v1,v2,...    send one event (values in the stream's attribute order)
    replay                   send the --input file's events
    where                    what is held now          queries     the app's queries
    wait [SECONDS]           until a checkpoint holds (for scripted sessions)
    quit

Events are sent from a feeder thread, so the prompt stays usable while a checkpoint holds
one; every stop prints the held chunk as a table, and every output stream's events are
printed as they come.  ``--config srota.yaml`` runs the service's apps with their live
sources (Kafka, MQTT, ...) and attaches the debugger to ``--app`` (the first app by default);
``send`` then goes into that app alongside its sources.
"""
from __future__ import annotations

import asyncio
import cmd
import csv
import json
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any

from srota.engine.debugger import QueryTerminal
from srota.engine.types import coerce


def _table(attributes: list[str], events: list[Any]) -> str:
    rows = [[str(v) for v in e.data] for e in events]
    widths = [max([len(a)] + [len(r[i]) for r in rows if i < len(r)]) for i, a in enumerate(attributes)]
    line = "  ".join(a.ljust(w) for a, w in zip(attributes, widths, strict=False))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=False)) for r in rows]
    return "\n".join(out)


class DebugShell(cmd.Cmd):
    """The prompt (see the module docstring)."""

    prompt = "(srota) "
    intro = "srota debugger: 'help' lists the commands; 'quit' leaves."

    def __init__(self, runtime: Any, inputs: list[tuple[str, list[Any]]] | None = None,
                 stdout: Any = None) -> None:
        super().__init__(stdout=stdout or sys.stdout)
        self.runtime = runtime
        self.debugger = runtime.debug()
        self.inputs = inputs or []
        self._waited = 0  # stops already waited for
        self._feed: queue.Queue[tuple[str, list[Any]] | None] = queue.Queue()
        self._feeder = threading.Thread(target=self._run_feeder, name="srota-debug-feeder", daemon=True)
        self._feeder.start()
        self.debugger.set_debugger_callback(self._on_stop)
        for sid in runtime.stream_definitions:
            if not sid.startswith("!"):
                runtime.add_callback(sid, lambda events, sid=sid: self._say(
                    f"[{sid}] " + ", ".join(str(tuple(e.data)) for e in events)))

    def _say(self, text: str) -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def _on_stop(self, events: list[Any], query: str, terminal: QueryTerminal, debugger: Any) -> None:
        attrs = self._attributes(query, terminal, events)
        self._say(f"\n== held at {query} ({terminal.value}): {len(events)} event(s)\n{_table(attrs, events)}\n"
                  "next | play | state QUERY")

    def _attributes(self, query: str, terminal: QueryTerminal, events: list[Any]) -> list[str]:
        q = self.runtime.queries.get(query)
        if terminal is QueryTerminal.OUT and q is not None and hasattr(q, "output_attributes"):
            return [a.name for a in q.output_attributes]
        stream = getattr(getattr(getattr(q, "query", None), "input", None), "stream_id", None)
        definition = self.runtime.stream_definitions.get(stream) if stream else None
        if definition is not None and events and len(definition.attributes) == len(events[0].data):
            return [a.name for a in definition.attributes]
        width = len(events[0].data) if events else 0
        return [f"#{i}" for i in range(width)]

    def _run_feeder(self) -> None:
        while True:
            item = self._feed.get()
            if item is None:
                return
            stream, values = item
            try:
                self.runtime.get_input_handler(stream).send(values)
            except Exception as exc:  # a bad value: say so, keep the prompt
                self._say(f"send to {stream} failed: {exc}")

    # ------------------------------------------------------------------ commands
    def _terminal(self, arg: str) -> tuple[str, QueryTerminal] | None:
        parts = arg.replace(":", " ").split()
        if len(parts) != 2 or parts[1].lower() not in ("in", "out"):
            self._say("usage: QUERY in|out")
            return None
        return parts[0], QueryTerminal(parts[1].lower())

    def do_break(self, arg: str) -> None:
        """break QUERY in|out: stop at that checkpoint."""
        got = self._terminal(arg)
        if got is not None:
            try:
                self.debugger.acquire_break_point(*got)
                self._say(f"breakpoint at {got[0]} ({got[1].value})")
            except ValueError as exc:
                self._say(str(exc))

    def do_release(self, arg: str) -> None:
        """release QUERY in|out, or release all."""
        if arg.strip() == "all":
            self.debugger.release_all_break_points()
            self._say("every breakpoint released")
            return
        got = self._terminal(arg)
        if got is not None:
            try:
                self.debugger.release_break_point(*got)
                self._say(f"released {got[0]} ({got[1].value})")
            except ValueError as exc:
                self._say(str(exc))

    def do_next(self, arg: str) -> None:
        """next: go on and stop at the very next checkpoint."""
        self.debugger.next()

    def do_play(self, arg: str) -> None:
        """play: go on to the next breakpoint."""
        self.debugger.play()

    def do_state(self, arg: str) -> None:
        """state QUERY: the query's state."""
        try:
            self._say(json.dumps(self.debugger.get_query_state(arg.strip()), indent=2, default=str))
        except ValueError as exc:
            self._say(str(exc))

    def do_send(self, arg: str) -> None:
        """send STREAM v1,v2,...: send one event."""
        stream, _, rest = arg.strip().partition(" ")
        definition = self.runtime.stream_definitions.get(stream)
        if definition is None:
            self._say(f"no stream named '{stream}'")
            return
        raw = next(csv.reader([rest])) if rest.strip() else []
        attrs = definition.attributes
        if len(raw) != len(attrs):
            self._say(f"{stream} has {len(attrs)} attribute(s): {', '.join(a.name for a in attrs)}")
            return
        try:
            values = [None if v.strip() == "null" and a.type.value != "string" else coerce(v.strip(), a.type)
                      for v, a in zip(raw, attrs, strict=True)]
        except ValueError as exc:
            self._say(str(exc))
            return
        self._feed.put((stream, values))

    def do_replay(self, arg: str) -> None:
        """replay: send the --input file's events."""
        for item in self.inputs:
            self._feed.put(item)
        self._say(f"{len(self.inputs)} event(s) queued")

    def do_wait(self, arg: str) -> None:
        """wait [SECONDS]: until a checkpoint holds (scripted sessions; default 10 s)."""
        deadline = time.monotonic() + float(arg or 10)
        while self.debugger.stops <= self._waited and time.monotonic() < deadline:
            time.sleep(0.01)
        self._waited = self.debugger.stops
        self.do_where("")

    def do_where(self, arg: str) -> None:
        """where: what is held now."""
        held = self.debugger.held
        self._say("nothing is held" if held is None else f"held at {held[0]} ({held[1].value})")

    def do_queries(self, arg: str) -> None:
        """queries: the app's queries."""
        self._say(", ".join(sorted(self.runtime.queries)))

    def do_quit(self, arg: str) -> bool:
        """quit: leave (a held chunk goes on; events queued to send are sent first)."""
        self.runtime.undebug()
        self._feed.put(None)
        self._feeder.join(30)
        return True

    do_EOF = do_quit

    def emptyline(self) -> bool:
        return False


def read_inputs(path: Path, stream: str, runtime: Any) -> list[tuple[str, list[Any]]]:
    """Events of a CSV (a header row of attribute names, or the stream's order) or JSON-lines file."""
    definition = runtime.stream_definitions.get(stream)
    if definition is None:
        raise ValueError(f"--stream: no stream named '{stream}'")
    attrs = definition.attributes
    names = [a.name for a in attrs]
    out: list[tuple[str, list[Any]]] = []
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".json", ".jsonl"):
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                obj = json.loads(line)
                obj = obj.get("event", obj) if isinstance(obj, dict) else obj
                values = [obj.get(a) for a in names] if isinstance(obj, dict) else list(obj)
                if len(values) != len(names):
                    raise ValueError(f"{path}:{n}: expected {len(names)} values")
                out.append((stream, values))
        return out
    rows = list(csv.reader(text.splitlines()))
    if rows and [c.strip() for c in rows[0]] == names:
        rows = rows[1:]
    for n, row in enumerate(rows, 1):
        if len(row) != len(attrs):
            raise ValueError(f"{path}:{n}: expected {len(attrs)} values ({', '.join(names)})")
        out.append((stream, [coerce(v.strip(), a.type) for v, a in zip(row, attrs, strict=True)]))
    return out


def run_debug(args: Any) -> int:
    """The ``srota debug`` entry point."""
    from srota.engine import SiddhiManager

    if args.config:
        return _run_with_service(args)
    app_path = Path(args.app)
    runtime = SiddhiManager().create_siddhi_app_runtime(app_path.read_text(encoding="utf-8"))
    inputs = read_inputs(Path(args.input), args.stream or _first_stream(runtime), runtime) if args.input else []
    shell = DebugShell(runtime, inputs)
    for spec in args.breaks or []:
        shell.do_break(spec)
    try:
        shell.cmdloop()
    finally:
        runtime.shutdown()
    return 0


def _first_stream(runtime: Any) -> str:
    return next(sid for sid in runtime.stream_definitions if not sid.startswith("!"))


def _run_with_service(args: Any) -> int:
    """The service's apps with their live sources, the prompt on one of them."""
    from srota.service.config import load_config
    from srota.service.host import ServiceHost

    config = load_config(args.config)
    paths = [Path(p) for p in ([args.app] if args.app else [])] or config.app_files()
    host = ServiceHost(config, paths)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    stop = asyncio.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)

        async def main() -> None:
            await host.start()
            for app in host.apps.values():
                app.use_engine_thread()  # holds must not block the service's loop
            ready.set()
            await stop.wait()
            await host.stop()

        loop.run_until_complete(main())

    thread = threading.Thread(target=serve, name="srota-debug-service", daemon=True)
    thread.start()
    ready.wait(60)
    name = args.debug_app or next(iter(host.apps))
    shell = DebugShell(host.apps[name].runtime)
    for spec in args.breaks or []:
        shell.do_break(spec)
    try:
        shell.cmdloop()
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(60)
    return 0


def add_parser(sub: Any) -> None:
    """Add ``debug`` to the CLI's subparsers."""
    p = sub.add_parser("debug", help="an interactive debugger prompt: breakpoints, next/play, state, send")
    p.add_argument("app", nargs="?", help="the .siddhi app (with --config: which of its apps, by file)")
    p.add_argument("--input", help="events to replay with 'replay': CSV (header optional) or JSON lines")
    p.add_argument("--stream", help="the stream --input's events go to (default: the first stream)")
    p.add_argument("--break", dest="breaks", action="append", metavar="QUERY:in|out",
                   help="a breakpoint to start with (repeatable)")
    p.add_argument("--config", "-c", help="run the service's apps with their live sources")
    p.add_argument("--app-name", dest="debug_app", help="with --config: the app to debug (default: the first)")
    p.set_defaults(func=lambda args: run_debug(args))
