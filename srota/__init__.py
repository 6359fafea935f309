"""Srota: Siddhi Streaming SQL (SiddhiQL) complex event processing in Python.

The embedding API, like Siddhi's ``SiddhiManager``::

    from srota import SiddhiManager

    runtime = SiddhiManager().create_siddhi_app_runtime(app_text)

The rooms live in sub-packages: ``srota.grammar`` (parser and app model), ``srota.engine``
(the runtime), ``srota.mappers``, ``srota.connectors`` and ``srota.service`` (the process).
This module re-exports the engine's public API (``srota.engine.__all__``) and the version.
"""
from importlib.metadata import PackageNotFoundError, version

from srota import engine as _engine
from srota.engine import *  # noqa: F403 - the public API is srota.engine.__all__, guarded by a test

try:
    __version__ = version("srota")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without an install
    __version__ = "0+unknown"

__all__ = [*_engine.__all__, "__version__"]
