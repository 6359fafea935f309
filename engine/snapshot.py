"""Snapshots of app state, versioned per element (not per app text).

Every stateful element (window, selector, table, pattern, partition instance, aggregation)
registers under a stable id with a fingerprint of the definition it was built from.  A
snapshot maps ids to ``(kind, fingerprint, state)``.  On restore, an element gets its state
back only when its id, kind and fingerprint still match; everything else is reported by id,
so that after an app changes what still matches is restored and what cannot be is named
(the problem of Siddhi issue 796).
"""
from __future__ import annotations

import hashlib
import logging
import pickle
from dataclasses import fields, is_dataclass
from typing import Any

_log = logging.getLogger("srota.engine")

FORMAT_VERSION = 1


def fingerprint(node: Any) -> str:
    """A short hash of an app-model node that ignores source positions."""
    return hashlib.sha1(repr(_strip(node)).encode()).hexdigest()[:16]


def _strip(node: Any) -> Any:
    if is_dataclass(node) and not isinstance(node, type):
        return (type(node).__name__,) + tuple(
            (f.name, _strip(getattr(node, f.name))) for f in fields(node) if f.name != "pos")
    if isinstance(node, (tuple, list)):
        return tuple(_strip(x) for x in node)
    return node


def take_snapshot(ctx: Any) -> bytes:
    """Serialise every registered element's state (call under the app lock)."""
    elements: dict[str, dict[str, Any]] = {}
    for eid, element in ctx.elements.items():
        snap = getattr(element, "snapshot_state", None)
        if snap is None:
            continue
        elements[eid] = {
            "kind": type(element).__qualname__,
            "fingerprint": ctx.fingerprints.get(eid),
            "state": snap(),
        }
    payload = {"format": FORMAT_VERSION, "app": ctx.name, "clock": ctx.clock.now(), "elements": elements}
    return pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)


def restore_snapshot(ctx: Any, data: bytes) -> list[str]:
    """Restore what matches; return the ids of snapshot elements that could not be restored."""
    payload = pickle.loads(data)  # noqa: S301 - snapshots are written by this process's own store
    if payload.get("format") != FORMAT_VERSION:
        raise ValueError(f"snapshot format {payload.get('format')} is not supported")
    skipped: list[str] = []
    for eid, entry in payload["elements"].items():
        element = ctx.elements.get(eid)
        if element is None:
            skipped.append(eid)
            continue
        if entry["kind"] != type(element).__qualname__ or entry["fingerprint"] != ctx.fingerprints.get(eid):
            skipped.append(eid)
            continue
        try:
            element.restore_state(entry["state"])
        except Exception:
            _log.exception("could not restore state of %s", eid)
            skipped.append(eid)
    if ctx.playback and payload.get("clock"):
        ctx.clock._set(payload["clock"])
    if skipped:
        _log.warning("app %s: state not restored for %s (changed or removed since the snapshot)",
                     ctx.name, ", ".join(skipped))
    return skipped
