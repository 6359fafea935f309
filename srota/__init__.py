"""Srota: Siddhi Streaming SQL (SiddhiQL) complex event processing in Python.

The embedding API, like Siddhi's ``SiddhiManager``::

    from srota import SiddhiManager

    runtime = SiddhiManager().create_siddhi_app_runtime(app_text)

The rooms live in sub-packages: ``srota.grammar`` (parser and app model), ``srota.engine``
(the runtime), ``srota.mappers``, ``srota.connectors`` and ``srota.service`` (the process).
"""
from importlib.metadata import PackageNotFoundError, version

from srota.engine import (
    Clock,
    DefinitionNotExistError,
    Event,
    Extension,
    InputHandler,
    Kind,
    Limits,
    Param,
    PlaybackClock,
    QueryNotExistError,
    SiddhiAppCreationError,
    SiddhiAppRuntime,
    SiddhiManager,
    SiddhiParserError,
    WallClock,
    extension,
    registry,
)

try:
    __version__ = version("srota")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without an install
    __version__ = "0+unknown"

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
    "__version__",
    "extension",
    "registry",
]
