"""Test helpers for apps: fault injection.

``custom:fault()`` always raises, as the fault-injection function of Siddhi's own test
suite does; use it to check an app's error routes (``@OnError``, fault streams ``!S``).
It is registered through the ``srota.extensions`` entry point, like any third-party
extension, which also keeps that mechanism exercised.
"""
from __future__ import annotations

from typing import Any

from grammar.model import AttrType

from .registry import Extension, ExtensionRegistry, Kind


def _fault(args: list[Any], ctx: Any) -> tuple[AttrType, Any]:
    def fault(*values: Any) -> float:
        raise RuntimeError("Error when running faultAdd()")

    return AttrType.DOUBLE, fault


def register(registry: ExtensionRegistry) -> None:
    """Entry point of the ``srota.extensions`` group."""
    registry.register(Extension(Kind.FUNCTION, "custom", "fault", _fault,
                                doc="Always raises (fault injection for testing error routes)."))
