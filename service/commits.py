"""Which source positions may be acknowledged: the commit tracker (DESIGN decision 12).

A commit never runs ahead of the state that covers it.  For one source, a
:class:`CommitTracker` follows three frontiers per partition, each a "next offset to consume":

``consumed``
    every event before it has been sent into the app: what a state snapshot taken now
    includes (:meth:`CommitTracker.positions`).
``flushed``
    every output caused by the events before it has been flushed by its sink.  A chunk is
    noted with a *barrier* (an opaque value the host can test, e.g. the sink queue sequence
    numbers at the chunk's end); the frontier moves over leading chunks whose barrier is
    passed, in order.
``saved``
    included in a state snapshot (or checkpoint) that is saved: :meth:`CommitTracker.saved`.

What may be committed (:meth:`CommitTracker.due`) is the ``flushed`` frontier when the state
is not persisted (outputs at least once: nothing is committed before its outputs are out), and
the lower of ``flushed`` and ``saved`` when it is (``gated``): after a crash the state is the
saved snapshot and the source resumes at its offsets, so a committed offset beyond them would
skip events the state never counted.  This holds for every partition the source was ever
assigned -- a partition first consumed after the last snapshot is not committed until a
snapshot includes it, and a partition that a rebalance took away keeps its offsets in the
next snapshot.

Keyed by partition, so a checkpoint of some partitions only (one checkpoint per partition,
when state moves with its partition) reports :meth:`saved` for those partitions alone and
reads :meth:`positions` for them alone; the tracker keeps no other per-source state.

Sources without offsets (MQTT acknowledgements) use the tokens of the chunks whose outputs are
flushed, from :meth:`CommitTracker.flushed`.  When the state is persisted (``gated``) such a
token is also held until a saved snapshot includes its chunk: the broker does not send a
message again once it is acknowledged, so an acknowledgement ahead of the snapshot would, after
a crash, leave the message out of the restored state for good.  Snapshots say what they include
by the chunk count (:meth:`CommitTracker.chunks`) taken with them; :attr:`CommitTracker.held`
tells the host how many acknowledgements wait, so that it can snapshot early.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Mapping
from typing import Any, Generic, TypeVar

#: A partition, as sources name it (Kafka: ``(topic, partition)``).
Part = tuple[str, int]
B = TypeVar("B")


class CommitTracker(Generic[B]):
    """The consumed, flushed and saved frontiers of one source (see the module doc)."""

    def __init__(self, *, gated: bool) -> None:
        #: True when commits wait for a saved snapshot that includes them.
        self.gated = gated
        self._consumed: dict[Part, int] = {}
        self._flushed: dict[Part, int] = {}
        self._saved: dict[Part, int] = {}
        self._committed: dict[Part, int] = {}
        # Chunks whose outputs are not all flushed yet, oldest first:
        # (offsets, token, barrier, the chunk number a snapshot must include first, messages).
        self._pending: deque[tuple[Mapping[Part, int], Any, B, int, int]] = deque()
        self._chunks = 0  # chunks consumed so far (numbered from 1)
        self._saved_chunks = 0  # every chunk up to this number is in a saved snapshot
        # Flushed tokens, oldest first, with the chunk number a saved snapshot must include
        # before they go out (0: none; gated sources without offsets wait).
        self._unsaved: deque[tuple[int, Any, int]] = deque()
        self._held = 0

    # ------------------------------------------------------------------ facts
    def restore(self, offsets: Mapping[Part, int]) -> None:
        """Start from a restored snapshot: its offsets are consumed, flushed and saved."""
        for part, offset in offsets.items():
            self._consumed[part] = offset
            self._flushed[part] = offset
            self._saved[part] = offset

    def consumed(self, offsets: Mapping[Part, int], token: Any, barrier: B, messages: int = 1) -> None:
        """A chunk of ``messages`` entered the app: ``offsets`` are the next offsets of its
        partitions (may be empty), ``token`` its acknowledgement, ``barrier`` what must be
        flushed for it."""
        self._consumed.update(offsets)
        self._chunks += 1
        # The snapshot a token waits for: none (0) for offset sources, which commit by due().
        waits_for = self._chunks if self.gated and not offsets else 0
        self._pending.append((offsets, token, barrier, waits_for, messages))

    def flushed(self, passed: Callable[[B], bool]) -> list[Any]:
        """Move the flushed frontier over the leading chunks whose barrier has ``passed``;
        returns the tokens that may be acknowledged now, oldest first (gated: those of chunks
        without offsets only once a saved snapshot includes them)."""
        while self._pending and passed(self._pending[0][2]):
            offsets, token, _barrier, waits_for, messages = self._pending.popleft()
            self._flushed.update(offsets)
            if token is not None:
                self._unsaved.append((waits_for, token, messages))
                if waits_for:
                    self._held += messages
        tokens = []
        while self._unsaved and self._unsaved[0][0] <= self._saved_chunks:
            waits_for, token, messages = self._unsaved.popleft()
            if waits_for:
                self._held -= messages
            tokens.append(token)
        return tokens

    def saved(self, offsets: Mapping[Part, int], chunks: int | None = None) -> None:
        """A snapshot including the events before ``offsets`` (and, when given, the first
        ``chunks`` chunks: :meth:`chunks` when it was taken) is saved (only forward)."""
        for part, offset in offsets.items():
            if offset > self._saved.get(part, -1):
                self._saved[part] = offset
        if chunks is not None:
            self._saved_chunks = max(self._saved_chunks, chunks)

    def chunks(self) -> int:
        """How many chunks have been consumed: a snapshot taken now includes them all."""
        return self._chunks

    @property
    def held(self) -> int:
        """Messages flushed whose acknowledgements wait for a snapshot (gated sources without
        offsets)."""
        return self._held

    def committed(self, offsets: Mapping[Part, int]) -> None:
        """The source committed these offsets."""
        for part, offset in offsets.items():
            if offset > self._committed.get(part, -1):
                self._committed[part] = offset

    # ------------------------------------------------------------------ questions
    def positions(self, parts: Collection[Part] | None = None) -> dict[Part, int]:
        """The consumed frontier (of ``parts``, or of every partition ever consumed): the
        offsets to save with a snapshot taken now."""
        if parts is None:
            return dict(self._consumed)
        return {p: o for p, o in self._consumed.items() if p in parts}

    def due(self) -> dict[Part, int]:
        """The offsets that may be committed now and are ahead of the last commit."""
        out = {}
        for part, offset in self._flushed.items():
            if self.gated:
                saved = self._saved.get(part)
                if saved is None:
                    continue
                offset = min(offset, saved)
            if offset > self._committed.get(part, -1):
                out[part] = offset
        return out

    @property
    def pending(self) -> int:
        """Chunks whose outputs are not all flushed yet."""
        return len(self._pending)
