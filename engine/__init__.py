"""Srota's engine: runs SiddhiQL apps (the embedding API, like Siddhi's SiddhiManager).

>>> from srota.engine import SiddhiManager
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
from srota.engine.clock import Clock, PlaybackClock, WallClock
from srota.engine.context import Limits
from srota.engine.debugger import QueryTerminal, SiddhiDebugger
from srota.engine.event import Event
from srota.engine.junction import InputHandler
from srota.engine.registry import Extension, Kind, Param, extension, registry
from srota.engine.runtime import DefinitionNotExistError, QueryNotExistError, SiddhiAppRuntime, SiddhiManager
from srota.grammar.errors import SiddhiAppCreationError, SiddhiParserError

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
    "QueryTerminal",
    "SiddhiAppCreationError",
    "SiddhiAppRuntime",
    "SiddhiDebugger",
    "SiddhiManager",
    "SiddhiParserError",
    "WallClock",
    "extension",
    "registry",
]
