"""Snapshots of app state, versioned per element (not per app text).

Every stateful element (window, selector, table, pattern, partition instance, aggregation)
registers under a stable id with a fingerprint of the definition it was built from.  A
snapshot maps ids to ``(kind, fingerprint, state)``.  On restore, an element gets its state
back only when its id, kind and fingerprint still match; everything else is reported by id,
so that after an app changes what still matches is restored and what cannot be is named
(the problem of Siddhi issue 796).

The bytes are data only (:mod:`engine.state_codec`, versioned by ``format``): restoring a
snapshot runs no code the snapshot names.  Pickled snapshots of format 1 are refused, not
loaded.  :func:`read_snapshot` checks a snapshot without applying it, so a host can fall back
to an older revision when the newest cannot be read.
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import fields, is_dataclass
from typing import Any

from srota.engine import state_codec

_log = logging.getLogger("srota.engine")

FORMAT_VERSION = 2


class SnapshotError(ValueError):
    """A snapshot that cannot be read (corrupt, an unknown format, an unknown class)."""


class StaleSnapshotError(SnapshotError):
    """A snapshot that reads well but must not be restored: the shared state an element of it
    accounts for (an aggregation's rows in a database) has moved on without it since."""


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
    return state_codec.dumps(payload)


def read_snapshot(data: bytes) -> dict[str, Any]:
    """Decode and check a snapshot without applying it; raises :class:`SnapshotError`."""
    if data[:1] == b"\x80":  # a pickle (format 1): never loaded
        raise SnapshotError("snapshot is a pickle (format 1), which is no longer loaded")
    try:
        payload = state_codec.loads(data)
    except state_codec.StateDecodeError as exc:
        raise SnapshotError(f"snapshot cannot be read: {exc}") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT_VERSION \
            or not isinstance(payload.get("elements"), dict):
        found = payload.get("format") if isinstance(payload, dict) else None
        raise SnapshotError(f"snapshot format {found} is not supported (this version reads {FORMAT_VERSION})")
    return payload


def restore_snapshot(ctx: Any, data: bytes) -> list[str]:
    """Restore what matches; return the ids of snapshot elements that could not be restored.

    Raises :class:`SnapshotError`, with nothing restored, when the snapshot cannot be read.
    """
    payload = read_snapshot(data)
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
        except StaleSnapshotError:
            raise  # the whole snapshot is unusable: its restorer takes an older one
        except Exception:
            _log.exception("could not restore state of %s", eid)
            skipped.append(eid)
    if ctx.playback and payload.get("clock"):
        ctx.clock._set(payload["clock"])
    if skipped:
        _log.warning("app %s: state not restored for %s (changed or removed since the snapshot)",
                     ctx.name, ", ".join(skipped))
    return skipped
