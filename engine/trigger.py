"""Triggers: ``define trigger T at 'start' | at every 5 sec | at '<cron>'``.

A trigger is a stream ``T (triggered_time long)`` that the engine feeds itself, like Siddhi's
``StartTrigger``, ``PeriodicTrigger`` and ``CronTrigger``:

* ``at 'start'`` sends one event when the app starts;
* ``at every <time>`` sends one event every period after the app starts (fixed rate, so
  a late tick does not shift the later ones; the first one period after start, as Siddhi's
  ``scheduleAtFixedRate(.., period, period, ..)``);
* ``at '<cron>'`` sends one event at every time the Quartz cron expression names
  (:mod:`srota.engine.cron`, shared with ``#window.cron``).

Ticks come from the app's scheduler, so under ``@app:playback`` they follow event time and
count from the first event (the clock starts there).  A tick that fell behind (a gap in
event time) fires once and the trigger moves on to its next due time (DESIGN.md decision 11).
"""
from __future__ import annotations

import logging
from typing import Any

from srota.engine.clock import next_period
from srota.engine.cron import CronSchedule
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
        #: False: the trigger sends nothing (see :meth:`SiddhiAppRuntime.disable_triggers`).
        self.enabled = True
        self._cron: CronSchedule | None = None
        if td.at is not None and td.at.strip().lower() != "start":
            try:
                self._cron = CronSchedule(td.at.strip())
            except ValueError as exc:
                raise error_at(f"trigger '{td.id}': {exc}", td) from None

    @property
    def at_start(self) -> bool:
        """True for ``at 'start'``: one event when the app starts."""
        return self.definition.every_millis is None and self._cron is None

    def start(self) -> None:
        """Called by the runtime's start (under the app lock)."""
        if not self.enabled:
            return
        self._running = True
        if self.definition.every_millis is None and self._cron is None:
            self._send(self.ctx.clock.now())
        else:
            self.ctx.clock.on_start(self._arm)

    def _arm(self, now: int) -> None:
        if not self._running:
            return
        every = self.definition.every_millis
        self._schedule(now + every if every is not None else self._next_cron(now))

    def stop(self) -> None:
        self._running = False
        if self._handle is not None:
            self.ctx.scheduler.cancel(self._handle)
            self._handle = None

    def _send(self, at: int) -> None:
        self.junction.send([Event(at, (at,))])

    def _schedule(self, at: int | None) -> None:
        self._handle = None if at is None else self.ctx.scheduler.schedule(at, self._fire)

    def _fire(self, at: int) -> None:
        if not self._running:
            return
        now = self.ctx.clock.now()
        every = self.definition.every_millis
        if every is not None:
            self._schedule(next_period(at, every, now))
        else:  # the next cron time at or after now: missed ones are skipped
            self._schedule(self._next_cron(max(at, now - 1)))
        self._send(at)

    def _next_cron(self, after: int) -> int | None:
        assert self._cron is not None
        return self._cron.next_after(after)


def define_trigger(td: TriggerDefinition, ctx: Any) -> Trigger:
    """Define stream ``T (triggered_time long)`` and the trigger that feeds it.

    As Siddhi's ``SiddhiApp.defineTrigger``, a stream of the trigger's id may be defined too
    where it is the trigger's own stream: ``(triggered_time long)`` with no annotations; the
    trigger then feeds it.
    """
    if td.id in ctx.triggers or td.id in ctx.tables or td.id in ctx.windows:
        raise error_at(f"'{td.id}' is already defined", td)
    existing = ctx.streams.get(td.id)
    if existing is not None and (existing.annotations or list(existing.attributes) != [TRIGGERED_TIME]):
        raise error_at(f"trigger '{td.id}' cannot be defined: stream '{td.id}' is already defined, and not as "
                       "(triggered_time long) without annotations", td)
    if td.every_millis is not None and td.every_millis <= 0:
        raise error_at(f"trigger '{td.id}': the period must be positive", td)
    if existing is not None:
        junction = ctx.junctions[td.id]
    else:
        junction = ctx.define_stream(StreamDefinition(td.id, (TRIGGERED_TIME,), td.annotations, pos=td.pos))
    trigger = Trigger(td, ctx, junction)
    ctx.start_hooks.append(trigger.start)
    ctx.stop_hooks.append(trigger.stop)
    return trigger
