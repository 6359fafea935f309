"""An example third-party extension: ``custom:fault()``, for testing error routes.

``custom:fault()`` always raises, as the fault-injection function of Siddhi's own test
suite does; use it to check an app's error routes (``@OnError``, fault streams ``!S``).
This package is installed beside Srota by the dev set-up (``make``) and registers through
the ``srota.extensions`` entry-point group, exactly as a user's own extension package would;
it is not part of the srota wheel.
"""
from __future__ import annotations

from typing import Any

from srota.engine.registry import Extension, ExtensionRegistry, Kind
from srota.grammar.model import AttrType


def _fault(args: list[Any], ctx: Any) -> tuple[AttrType, Any]:
    def fault(*values: Any) -> float:
        raise RuntimeError("Error when running faultAdd()")

    return AttrType.DOUBLE, fault


def register(registry: ExtensionRegistry) -> None:
    """Entry point of the ``srota.extensions`` group."""
    registry.register(Extension(Kind.FUNCTION, "custom", "fault", _fault,
                                doc="Always raises (fault injection for testing error routes)."))
