"""Built-in stream functions (``#log(...)``, ``#pol2Cart(...)``).

A stream-processor extension's factory gets the arguments' info, per-event getters for them,
the input attributes and the app context, and returns ``(extra output attributes,
make_processor)``.  Processors take chunks and may append attributes to each event.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

from srota.engine.event import Event
from srota.engine.expression import ArgInfo
from srota.engine.registry import NUMERIC_TYPES, Kind, Param, extension
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Attribute, AttrType

_log = logging.getLogger("srota.log")

Getter = Callable[[Event], Any]
_LEVELS = {"TRACE": 5, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING,
           "WARNING": logging.WARNING, "ERROR": logging.ERROR, "FATAL": logging.CRITICAL, "OFF": None}


class _Processor:
    __slots__ = ("next", "fn")

    def __init__(self, fn: Callable[[list[Event]], list[Event]]) -> None:
        self.fn = fn
        self.next: Callable[[list[Event]], None] = lambda chunk: None

    def process(self, chunk: list[Event]) -> None:
        out = self.fn(chunk)
        if out:
            self.next(out)


@extension(Kind.STREAM_PROCESSOR, "log",
           params=(Param("priority", (AttrType.STRING,), optional=True, default="INFO"),
                   Param("log.message", (AttrType.STRING,), optional=True, dynamic=True),
                   Param("is.event.logged", (AttrType.BOOL,), optional=True, default=True)),
           doc="Logs each event (with an optional priority and message) and passes it on.")
def _log_processor(args: list[ArgInfo], getters: list[Getter], attributes: list[Attribute],
                   ctx: Any) -> tuple[list[Attribute], Callable[[], _Processor]]:
    types = [a.type for a in args]
    priority, message, logged = "INFO", None, True
    if len(args) > 3:
        raise SiddhiAppCreationError(f"#log() takes at most 3 arguments, {len(args)} given")
    if len(args) == 3:
        if types != [AttrType.STRING, AttrType.STRING, AttrType.BOOL] or not args[0].constant:
            raise SiddhiAppCreationError("#log(priority, message, is.event.logged) needs (string constant, "
                                         "string, bool)")
        priority, message, logged = args[0].value, getters[1], args[2].value
    elif len(args) == 2:
        if types == [AttrType.STRING, AttrType.BOOL]:
            message, logged = getters[0], args[1].value
        elif types == [AttrType.STRING, AttrType.STRING] and args[0].constant:
            priority, message = args[0].value, getters[1]
        else:
            raise SiddhiAppCreationError("#log() with two arguments takes (priority, message) or "
                                         "(message, is.event.logged)")
    elif len(args) == 1:
        if types[0] is AttrType.BOOL:
            logged = args[0].value
        elif types[0] is AttrType.STRING:
            message = getters[0]
        else:
            raise SiddhiAppCreationError("#log(x) takes a message string or an is.event.logged bool")
    level_name = str(priority).upper()
    if level_name not in _LEVELS:
        raise SiddhiAppCreationError(f"#log(): unknown priority '{priority}'")
    level = _LEVELS[level_name]
    names = [a.name for a in attributes]

    def run(chunk: list[Event]) -> list[Event]:
        if level is not None and _log.isEnabledFor(level):
            for e in chunk:
                text = message(e) if message is not None else ""
                if logged:
                    _log.log(level, "%s: %s %s", ctx.name, text, dict(zip(names, e.data, strict=False)))
                else:
                    _log.log(level, "%s: %s", ctx.name, text)
        return chunk

    return [], lambda: _Processor(run)


@extension(Kind.STREAM_PROCESSOR, "pol2Cart",
           params=(Param("theta", NUMERIC_TYPES, dynamic=True), Param("rho", NUMERIC_TYPES, dynamic=True),
                   Param("z", NUMERIC_TYPES, optional=True, dynamic=True)),
           doc="Polar to Cartesian coordinates: adds x, y (and z) to each event.")
def _pol2cart(args: list[ArgInfo], getters: list[Getter], attributes: list[Attribute],
              ctx: Any) -> tuple[list[Attribute], Callable[[], _Processor]]:
    if len(args) not in (2, 3) or any(a.type not in NUMERIC_TYPES for a in args):
        raise SiddhiAppCreationError("#pol2Cart(theta, rho[, z]) takes 2 or 3 numeric arguments")
    theta, rho = getters[0], getters[1]
    z = getters[2] if len(args) == 3 else None
    extra = [Attribute("x", AttrType.DOUBLE), Attribute("y", AttrType.DOUBLE)]
    if z is not None:
        extra.append(Attribute("z", AttrType.DOUBLE))

    def run(chunk: list[Event]) -> list[Event]:
        out = []
        for e in chunk:
            t, r = theta(e), rho(e)
            if t is None or r is None:
                xy: tuple[Any, ...] = (None, None)
            else:
                rad = math.radians(t)
                xy = (r * math.cos(rad), r * math.sin(rad))
            if z is not None:
                zv = z(e)
                xy = (*xy, None if zv is None else float(zv))
            out.append(Event(e.timestamp, (*e.data, *xy), e.type))
        return out

    return extra, lambda: _Processor(run)
