"""Triggers: ``define trigger T at 'start' | at every 5 sec | at '<cron>'``.

A trigger is a stream ``T (triggered_time long)`` that the engine feeds itself, like Siddhi's
``StartTrigger``, ``PeriodicTrigger`` and ``CronTrigger``:

* ``at 'start'`` sends one event when the app starts;
* ``at every <time>`` sends one event every period after the app starts (fixed rate, so
  a late tick does not shift the later ones; the first one period after start, as Siddhi's
  ``scheduleAtFixedRate(.., period, period, ..)``);
* ``at '<cron>'`` sends one event at every time the cron expression names (five fields, or
  Quartz's six/seven with seconds first), computed with ``croniter``.

Ticks come from the app's scheduler, so under ``@app:playback`` they follow event time.
"""
from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from srota.engine.event import Event
from srota.engine.expression import error_at
from srota.grammar.model import Attribute, AttrType, StreamDefinition, TriggerDefinition

_log = logging.getLogger("srota.engine")

TRIGGERED_TIME = Attribute("triggered_time", AttrType.LONG)


class Trigger:
    """One running trigger: schedules its ticks and sends ``[triggered_time]`` events."""

    def __init__(self, td: TriggerDefinition, ctx: Any, junction: Any) -> None:
        self.definition = td
        self.id = td.id
        self.ctx = ctx
        self.junction = junction
        self._handle: int | None = None
        self._running = False
        self._cron: Any = None
        if td.at is not None and td.at.strip().lower() != "start":
            self._cron = _cron_schedule(td)

    def start(self) -> None:
        """Called by the runtime's start (under the app lock)."""
        self._running = True
        now = self.ctx.clock.now()
        td = self.definition
        if td.every_millis is not None:
            self._schedule(now + td.every_millis)
        elif self._cron is not None:
            self._schedule(self._next_cron(now))
        else:
            self._send(now)

    def stop(self) -> None:
        self._running = False
        if self._handle is not None:
            self.ctx.scheduler.cancel(self._handle)
            self._handle = None

    def _send(self, at: int) -> None:
        self.junction.send([Event(at, (at,))])

    def _schedule(self, at: int) -> None:
        self._handle = self.ctx.scheduler.schedule(at, self._fire)

    def _tick(self, at: int) -> None:
        every = self.definition.every_millis
        assert every is not None
        self._schedule(at + every)
        self._send(at)

    def _fire(self, at: int) -> None:
        if not self._running:
            return
        if self.definition.every_millis is not None:
            self._tick(at)
        else:
            self._schedule(self._next_cron(at))
            self._send(at)

    def _next_cron(self, after: int) -> int:
        it = self._cron(datetime.fromtimestamp(after / 1000.0, tz=UTC))
        nxt = it.get_next(datetime)
        return int(nxt.timestamp() * 1000)


def _cron_schedule(td: TriggerDefinition) -> Any:
    """A factory ``start -> croniter`` for the trigger's cron expression (checked now)."""
    from croniter import croniter

    expr = (td.at or "").strip()
    fields = expr.split()
    # Quartz (Siddhi's cron) puts seconds first and allows a year last and '?' for "any".
    if len(fields) in (6, 7):
        fields = fields[1:6] + [fields[0]]
    fields = ["*" if f == "?" else f for f in fields]
    text = " ".join(fields)
    try:
        croniter(text)
    except (ValueError, KeyError) as exc:
        raise error_at(f"trigger '{td.id}': '{expr}' is not a valid cron expression ({exc})", td) from None
    return lambda start: croniter(text, start)


def define_trigger(td: TriggerDefinition, ctx: Any) -> Trigger:
    """Define stream ``T (triggered_time long)`` and the trigger that feeds it."""
    if td.id in ctx.streams or td.id in ctx.tables or td.id in ctx.windows:
        raise error_at(f"'{td.id}' is already defined", td)
    if td.every_millis is not None and td.every_millis <= 0:
        raise error_at(f"trigger '{td.id}': the period must be positive", td)
    junction = ctx.define_stream(StreamDefinition(td.id, (TRIGGERED_TIME,), td.annotations, pos=td.pos))
    trigger = Trigger(td, ctx, junction)
    ctx.start_hooks.append(trigger.start)
    ctx.stop_hooks.append(trigger.stop)
    return trigger
