"""Named windows: ``define window W (...) length(5) [output all|current|expired events]``.

One window processor shared by every query that inserts into it (``insert into W``), reads
from it (``from W ...``, which receives what the window emits) and joins with it (which
probes its contents), as Siddhi's ``Window``.  What the window emits is fanned out through a
private :class:`~engine.junction.StreamJunction`, filtered by the definition's ``output``
clause; only current and expired events leave it (as Siddhi's), never a batch's resets.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from srota.engine.codegen import CodeGen
from srota.engine.event import CURRENT, EXPIRED, Event
from srota.engine.expression import BASE_NAMESPACE, error_at
from srota.engine.junction import InputHandler, StreamJunction
from srota.engine.scope import StreamScope
from srota.grammar.model import OutputEventType, StreamDefinition, WindowDefinition

Receiver = Callable[[list[Event]], None]


class NamedWindow:
    """A window defined at app level; ``insert`` feeds it, ``subscribe`` reads its output."""

    def __init__(self, wd: WindowDefinition, ctx: Any) -> None:
        from srota.engine.windows import build_window

        self.definition = wd
        self.id = wd.id
        self.stream_id = wd.id
        self.ctx = ctx
        out = wd.output_event_type
        self._current = out in (OutputEventType.CURRENT, OutputEventType.ALL)
        self._expired = out in (OutputEventType.EXPIRED, OutputEventType.ALL)
        scope = StreamScope(wd.id, wd.attributes)
        gen = CodeGen(BASE_NAMESPACE)
        factory = build_window(wd.window, scope, ctx, gen, expired=self._expired, findable=True)
        self.processor = factory()
        self.processor.next = self._emit
        #: Whether a join may look into the window: Siddhi's cron window is no FindableProcessor
        #: (Window.compileCondition: "Cannot construct finder for the window ...").
        self.findable = not (wd.window.namespace == "" and wd.window.name.lower() == "cron")
        self._junction = StreamJunction(StreamDefinition(wd.id, wd.attributes, wd.annotations), ctx)

    # ------------------------------------------------------------------ input
    def insert(self, chunk: list[Event]) -> None:
        """Add events (a query's output); expired events enter as current ones."""
        events = [e if e.type == CURRENT else Event(e.timestamp, e.data, CURRENT)
                  for e in chunk if e.type <= EXPIRED]
        if events:
            self.processor.process(events)

    send = insert  # so that an InputHandler can feed the window directly
    async_buffer = None  # (InputHandler asks junctions whether they buffer; a window does not)
    checks_senders = True  # (and whether senders' events need checking: a window keeps them)

    def input_handler(self) -> InputHandler:
        """An input handler that sends events straight into the window."""
        return InputHandler(self, self.ctx)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ output
    def _emit(self, chunk: list[Event]) -> None:
        # Only current and expired events leave a named window, as Siddhi's
        # Window.StreamPublishProcessor keeps: its readers never see a batch window's resets
        # (an aggregating reader over a lengthBatch window keeps counting across batches).
        cur, exp = self._current, self._expired
        if cur and exp:
            out = [e for e in chunk if e.type <= EXPIRED]
        else:
            out = [e for e in chunk if (e.type == CURRENT and cur) or (e.type == EXPIRED and exp)]
        if out:
            self._junction.send(out)

    @property
    def output_junction(self) -> StreamJunction:
        """The junction of what the window emits (a partition's one reader subscribes there)."""
        return self._junction

    def subscribe(self, receiver: Receiver) -> None:
        """Receive every chunk the window emits."""
        self._junction.subscribe(receiver)

    def unsubscribe(self, receiver: Receiver) -> None:
        self._junction.unsubscribe(receiver)

    def contents(self) -> Iterable[Event]:
        """The events the window holds now (what joins and on-demand queries read)."""
        return self.processor.contents()

    # ------------------------------------------------------------------ state
    def snapshot_state(self) -> Any:
        return self.processor.snapshot_state()

    def restore_state(self, state: Any) -> None:
        self.processor.restore_state(state)

    def stop(self) -> None:
        stop = getattr(self.processor, "stop", None)
        if stop is not None:
            stop()


def define_window(wd: WindowDefinition, ctx: Any) -> NamedWindow:
    """Create the named window of ``define window``."""
    if wd.id in ctx.streams or wd.id in ctx.tables:
        raise error_at(f"'{wd.id}' is already defined", wd)
    names = [a.name for a in wd.attributes]
    for a in wd.attributes:
        if names.count(a.name) > 1:
            raise error_at(f"window '{wd.id}' defines attribute '{a.name}' twice", a)
    window = NamedWindow(wd, ctx)
    ctx.register_element(f"window:{wd.id}", window)
    if ctx.in_hook is None:
        from srota.engine.table import in_hook
        ctx.in_hook = in_hook  # `cond in W` reads the window's contents
    ctx.stop_hooks.append(window.stop)
    return window
