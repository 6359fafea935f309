"""Srota's engine: runs SiddhiQL apps (the embedding API, like Siddhi's SiddhiManager).

>>> from engine import SiddhiManager
>>> runtime = SiddhiManager().create_siddhi_app_runtime(
...     "define stream S (symbol string, price double); "
...     "@info(name='q') from S[price > 10] select symbol insert into Out;")
>>> got = []
>>> runtime.add_callback("Out", lambda events: got.extend(e.data for e in events))
>>> runtime.start()
>>> runtime.get_input_handler("S").send(["IBM", 75.6])
>>> got
[('IBM',)]
>>> runtime.shutdown()
"""
from grammar.errors import SiddhiAppCreationError, SiddhiParserError

from .clock import Clock, PlaybackClock, WallClock
from .context import Limits
from .event import Event
from .junction import InputHandler
from .registry import Extension, Kind, Param, extension, registry
from .runtime import DefinitionNotExistError, QueryNotExistError, SiddhiAppRuntime, SiddhiManager

__all__ = [
    "Clock",
    "DefinitionNotExistError",
    "Event",
    "Extension",
    "InputHandler",
    "Kind",
    "Limits",
    "Param",
    "PlaybackClock",
    "QueryNotExistError",
    "SiddhiAppCreationError",
    "SiddhiAppRuntime",
    "SiddhiManager",
    "SiddhiParserError",
    "WallClock",
    "extension",
    "registry",
]
