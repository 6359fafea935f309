"""The public API is small and deliberate: ``srota`` exports exactly this list."""
from __future__ import annotations

import srota

PUBLIC = {
    "Clock", "DefinitionNotExistError", "Event", "Extension", "InputHandler", "Kind", "Limits", "Param",
    "PlaybackClock", "QueryNotExistError", "QueryTerminal", "SiddhiAppCreationError", "SiddhiAppRuntime",
    "SiddhiDebugger", "SiddhiManager",
    "SiddhiParserError", "WallClock", "__version__", "extension", "registry",
}


def test_srota_exports_the_embedding_api_and_nothing_else():
    assert set(srota.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(srota, name) is not None
    assert srota.SiddhiManager is srota.engine.SiddhiManager
