"""``kafka``: consumer-group source and producer sink on aiokafka (options follow siddhi-io-kafka).

Source
    Subscribes ``topic.list`` with consumer group ``group.id`` (or, with ``partition.no.list``,
    assigns those partitions of every topic explicitly).  Each ``getmany()`` result is handed
    to the host as one chunk, records in partition order (``threading.option='topic.wise'`` or
    ``'partition.wise'`` hands each topic's or partition's records as a separate chunk instead;
    there are no threads in an asyncio process, the chunking is what remains of the option).
    Offsets are never auto-committed: a chunk's :class:`KafkaAck` carries the next offset of
    every partition in it, and ``await source.commit(tokens)`` commits the highest offset per
    partition in one request, only for partitions this consumer still owns and only forward.
    The consumer restarts from the committed offsets, so what was not committed is delivered
    again (at least once).  Two things override the committed offset, both so that the app's
    state counts each record once: :meth:`KafkaSource.seek_on_start` (offsets saved with a
    restored state snapshot), and a reconnection or rejoin after a failed commit (the source
    resumes after what it already delivered, unless the group has moved further).  Before
    partitions are revoked in a rebalance, delivery stops and ``on_revoke`` (set by the host)
    flushes and commits what was processed, so the next owner starts where this one stopped.
    ``pause()`` pauses every assigned partition (also those assigned later by a rebalance)
    while the consumer keeps polling, so the group stays alive.
    :meth:`KafkaSource.lag` reads the high-water marks the fetcher already has (and, while
    paused, end offsets asked for once a second).

Sink
    Publishes with ``acks`` (default ``all``) to ``topic`` (which may be an
    ``{{attribute}}`` template rendered by the host), with the message key from ``key``
    (typically ``'{{deviceId}}'``) and an optional ``partition.no``.  ``publish`` queues the
    records; ``flush`` waits for the broker's acknowledgements; ``is.synchronous='true'`` makes
    every ``publish`` wait.  A ``headers`` message property (from the host's dead-letter
    route) becomes record headers.  With ``transactional.id`` the host publishes through
    :meth:`KafkaSink.transaction`, which commits the source offsets in the same transaction
    (exactly-once Kafka to Kafka; untested here, tansu has no transactions).

Both take ``optional.configuration='key:value,...'`` in Kafka's (Java) property names, passed
to aiokafka (``session.timeout.ms:2000`` -> ``session_timeout_ms=2000``), and the security
options ``security.protocol``, ``sasl.mechanism``, ``sasl.username``, ``sasl.password``,
``ssl.cafile``, ``ssl.certfile``, ``ssl.keyfile``, ``ssl.password``.  Passwords are never
logged.

``seq.enabled`` (source) and ``sequence.id`` (sink) implement Siddhi's duplicate filtering:
the sink stamps records with ``sequence.id``/``sequence.no`` headers; the source drops a
record whose number is not above the last one seen from that sink on that partition.  As in
siddhi-io-kafka's ``KafkaSink``, the number to send next (``lastSentSequenceNo``) is the
sink's state in the app's snapshots, so after a restore the outputs of the replayed events
carry the numbers they had before and the receiving source drops them; and as its
``KafkaSource``, the last numbers received (``lastReceivedSeqNo``) are the source's, so a
restored receiver drops what it had received.  A sink that starts
without a snapshot numbers from the start time in microseconds (Siddhi: from 0), so that a
receiver still running from before does not drop the outputs of a restarted app that keeps
no state.  A number is used only by a record handed to the producer (a record the client
refuses, or one of an aborted transaction, leaves it for the next).
"""
from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

import structlog
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import (
    CommitFailedError,
    CorruptRecordException,
    IllegalStateError,
    InvalidTopicError,
    KafkaError,
    MessageSizeTooLargeError,
    RecordListTooLargeError,
    RecordTooLargeError,
    UnsupportedForMessageFormatError,
)
from aiokafka.helpers import create_ssl_context
from srota.connectors._kafka_config import TranslationError, translate_optional_configuration
from srota.connectors._options import creation_error
from srota.connectors.base import (
    AckToken,
    Backoff,
    ConnectionUnavailableError,
    Message,
    PublishError,
    RejectedError,
    Sink,
    Source,
)
from srota.engine.registry import Kind, Param, extension
from srota.grammar.model import AttrType

_S = (AttrType.STRING,)
_B = (AttrType.BOOL,)
_I = (AttrType.INT,)

#: ``max.poll.interval.ms``'s default (the Java client's and aiokafka's): the group's rebalance
#: timeout where neither it nor ``rebalance.timeout.ms`` is set (``_rebalance_timeout_s``).
_MAX_POLL_INTERVAL_MS = 300_000

SEQ_ID_HEADER = "sequence.id"
SEQ_NO_HEADER = "sequence.no"

_SECURITY_PARAMS = (
    Param("security.protocol", _S, optional=True, default="PLAINTEXT",
          doc="PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL."),
    Param("sasl.mechanism", _S, optional=True, default="PLAIN",
          doc="PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, GSSAPI or OAUTHBEARER."),
    Param("sasl.username", _S, optional=True, default=None, doc="SASL user name."),
    Param("sasl.password", _S, optional=True, default=None, doc="SASL password (never logged)."),
    Param("ssl.cafile", _S, optional=True, default=None, doc="CA bundle to verify the brokers."),
    Param("ssl.certfile", _S, optional=True, default=None, doc="Client certificate (mutual TLS)."),
    Param("ssl.keyfile", _S, optional=True, default=None, doc="Client private key (mutual TLS)."),
    Param("ssl.password", _S, optional=True, default=None, doc="Password of the private key (never logged)."),
)

# Arguments of the aiokafka constructors that optional.configuration must not set: objects,
# or things this module manages itself.
_RESERVED = frozenset({"loop", "bootstrap_servers", "key_deserializer", "value_deserializer",
                       "key_serializer", "value_serializer", "partition_assignment_strategy",
                       "ssl_context", "sasl_oauth_token_provider", "partitioner", "transactional_id",
                       "security_protocol", "sasl_mechanism", "sasl_plain_username", "sasl_plain_password"})


_INT_SUFFIXES = ("_ms", "_bytes", "_records", "_size")

# Errors no retry can cure: the record itself is refused (by the client or the broker).
_REJECTED = (MessageSizeTooLargeError, RecordTooLargeError, RecordListTooLargeError, InvalidTopicError,
             CorruptRecordException, UnsupportedForMessageFormatError)


def _kwargs_of(cls: type) -> dict[str, Any]:
    return {name: p.default for name, p in inspect.signature(cls).parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY and name not in _RESERVED}


def parse_optional_configuration(text: str | None, cls: type, where: str,
                                 options: dict[str, Any] | None = None) -> dict[str, Any]:
    """``'session.timeout.ms:2000,auto.offset.reset:latest'`` -> aiokafka keyword arguments.

    Kafka's (Java) property names are translated (:mod:`connectors._kafka_config`): settings the
    connector has an option for (``security.protocol``, ``sasl.jaas.config``, ``acks`` ...) are
    written into ``options`` where that option was left at its default; the rest become
    aiokafka arguments, typed after the argument's default.  A setting with no aiokafka
    equivalent is a creation error saying why.
    """
    try:
        translated = translate_optional_configuration(text, "producer" if cls is AIOKafkaProducer else "consumer")
    except TranslationError as exc:
        raise creation_error(f"{where}: optional.configuration: {exc}", None) from None
    if options is not None:
        defaults = {p.name: p.default for p in (*_SOURCE_PARAMS, *_SINK_PARAMS)}
        for key, value in translated.options.items():
            if key in options and options[key] == defaults.get(key):
                options[key] = value
    if translated.ignored:
        # As the Java client: "supplied but isn't a known config", and the app deploys.
        structlog.get_logger("srota.connectors").warning(
            "optional.configuration settings ignored: the Kafka client does not know them", where=where,
            settings=translated.ignored)
    known = _kwargs_of(cls)
    out: dict[str, Any] = dict(translated.objects)
    for name, value, key in translated.arguments:
        if name not in known:
            raise creation_error(f"{where}: optional.configuration has '{key}', which has no "
                                 f"{cls.__name__} equivalent ({name})", None)
        default = known[name]
        if default is None and name.endswith(_INT_SUFFIXES):
            default = 0  # e.g. rebalance_timeout_ms=None, max_poll_records=None: numbers when given
        try:
            if isinstance(default, bool):
                if value.lower() not in ("true", "false"):
                    raise ValueError(value)
                out[name] = value.lower() == "true"
            elif isinstance(default, int):
                out[name] = int(value)
            elif isinstance(default, float):
                out[name] = float(value)
            else:
                out[name] = None if value.lower() == "null" else value
        except ValueError:
            raise creation_error(f"{where}: optional.configuration '{key}' has a bad value "
                                 f"{value!r}", None) from None
    return out


def _security_kwargs(o: Mapping[str, Any]) -> dict[str, Any]:
    protocol = str(o["security.protocol"]).upper()
    kw: dict[str, Any] = {"security_protocol": protocol}
    if protocol in ("SSL", "SASL_SSL"):
        kw["ssl_context"] = create_ssl_context(cafile=o["ssl.cafile"], certfile=o["ssl.certfile"],
                                               keyfile=o["ssl.keyfile"], password=o["ssl.password"])
    if protocol.startswith("SASL"):
        kw["sasl_mechanism"] = o["sasl.mechanism"]
        kw["sasl_plain_username"] = o["sasl.username"]
        kw["sasl_plain_password"] = o["sasl.password"]
    return kw


def _split(text: str | None) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


class KafkaAck(AckToken):
    """The next offset of every partition in one delivered chunk (and, with seq.enabled, the
    last sequence numbers it carries, which the source's state counts once it entered the app)."""

    __slots__ = ("offsets", "seen", "_received")

    def __init__(self, offsets: dict[TopicPartition, int], seen: dict[tuple[bytes, int], int] | None = None,
                 received: dict[tuple[bytes, int], int] | None = None) -> None:
        self.offsets = offsets
        self.seen = seen if seen is not None else {}
        self._received = received

    def entered(self) -> None:
        """The chunk is in the app's state: its sequence numbers go into the source's state."""
        if self._received is not None:
            self._received.update(self.seen)

    def __repr__(self) -> str:
        return f"KafkaAck({ {f'{tp.topic}[{tp.partition}]': o for tp, o in self.offsets.items()} })"

    def next_offsets(self) -> dict[tuple[str, int], int]:
        """``{(topic, partition): next offset}`` after this chunk (skipped records included)."""
        return {(tp.topic, tp.partition): off for tp, off in self.offsets.items()}


class _Rebalance(ConsumerRebalanceListener):
    """Commits what was processed before partitions move, and seeks where state needs it.

    aiokafka awaits both callbacks inside the group join, while the source's own task may be
    half-way through delivering a chunk; see :meth:`KafkaSource._revoked` and
    :meth:`KafkaSource._assigned`.
    """

    def __init__(self, source: KafkaSource) -> None:
        self._source = source

    async def on_partitions_revoked(self, revoked: Any) -> None:
        await self._source._revoked(set(revoked))

    async def on_partitions_assigned(self, assigned: Any) -> None:
        await self._source._assigned(set(assigned))


_SOURCE_PARAMS = (
    Param("bootstrap.servers", _S, doc="Comma-separated host:port list of brokers."),
    Param("topic.list", _S, doc="Comma-separated topics to consume."),
    Param("group.id", _S, doc="The consumer group (offsets are committed for it)."),
    Param("threading.option", _S, optional=True, default="single.thread",
          doc="single.thread: a chunk per fetch; topic.wise: a chunk per topic; partition.wise: a chunk "
              "per partition."),
    Param("partition.no.list", _S, optional=True, default=None,
          doc="Comma-separated partitions to assign explicitly (no group rebalancing)."),
    Param("seq.enabled", _B, optional=True, default=False,
          doc="Drop duplicate records by the sequence.id/sequence.no headers of a kafka sink."),
    Param("is.binary.message", _B, optional=True, default=False,
          doc="Accepted for compatibility: payloads are always bytes; mappers decode text."),
    Param("topic.offsets.map", _S, optional=True, default=None,
          doc="topic=offset,...: when the source starts, read every partition of that topic from the "
              "record after the offset (from the start when the partition is shorter)."),
    Param("enable.offsets.commit", _B, optional=True, default=True,
          doc="Commit offsets when the host acknowledges chunks (false: never commit)."),
    Param("enable.async.commit", _B, optional=True, default=True,
          doc="Accepted for compatibility: commit() is awaited by the host, off the delivery path."),
    Param("optional.configuration", _S, optional=True, default=None,
          doc="More consumer settings as key:value pairs in Kafka's property names."),
    Param("batch.size", _I, optional=True, default=500, doc="The most records one fetch returns."),
    Param("poll.timeout", _I, optional=True, default=500, doc="Milliseconds a fetch waits for records."),
    *_SECURITY_PARAMS,
)


@extension(Kind.SOURCE, "kafka", params=_SOURCE_PARAMS,
           doc="Consume Kafka topics with a consumer group; commit offsets when the host acknowledges.")
class KafkaSource(Source):
    """Kafka consumer (see the module doc)."""

    type_name = "kafka"
    PARAMS = _SOURCE_PARAMS

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "", **kw: Any) -> None:
        super().__init__(options, name=name, **kw)
        o = self.options
        where = f"kafka source '{self.name}'"
        pos = kw.get("pos")
        self.topics = _split(o["topic.list"])
        if not self.topics:
            raise creation_error(f"{where}: topic.list is empty", pos)
        threading = o["threading.option"].lower()
        if threading not in ("single.thread", "topic.wise", "partition.wise"):
            raise creation_error(f"{where}: threading.option must be single.thread, topic.wise or "
                                 f"partition.wise, not {o['threading.option']!r}", pos)
        self._threading = threading
        try:
            self._partitions = [int(p) for p in _split(o["partition.no.list"])]
            # topic.offsets.map: the last offset already read per topic; siddhi-io-kafka seeks
            # every partition of the topic to the one after it when the source starts.
            self._topic_offsets: dict[str, int] = {}
            for item in _split(o["topic.offsets.map"]):
                topic, sep, offset = item.partition("=")
                if not sep:
                    raise creation_error(f"{where}: topic.offsets.map must be <topic>=<offset>,..., not "
                                         f"{item!r}", pos)
                if topic.strip() not in self.topics:
                    raise creation_error(f"{where}: topic.offsets.map names {topic.strip()!r}, which is not in "
                                         "topic.list", pos)
                self._topic_offsets[topic.strip()] = int(offset)
        except ValueError:
            raise creation_error(f"{where}: partition.no.list and topic.offsets.map need integers", pos) from None
        if threading == "partition.wise" and not self._partitions:
            # As siddhi-io-kafka: a chunk per partition needs the partitions named.
            raise creation_error(f"{where}: Threading option is selected as 'partition.wise' but there are no "
                                 "partitions given (set partition.no.list)", pos)
        self._extra = parse_optional_configuration(o["optional.configuration"], AIOKafkaConsumer, where, o)
        # Auto-commit would commit what the host has not processed yet; it is only honoured
        # when asked for explicitly, and then commit() leaves offsets to aiokafka.
        self._auto_commit = bool(self._extra.pop("enable_auto_commit", False))
        self._commit_enabled = o["enable.offsets.commit"] and not self._auto_commit
        self._consumer: AIOKafkaConsumer | None = None
        self._positions: dict[TopicPartition, int] = {}
        self._committed: dict[TopicPartition, int] = {}
        # seq.enabled: the last number delivered from each (sequence id, partition), for
        # dropping duplicates; and the last one in the app's state (KafkaAck.entered), which is
        # the source's state in snapshots.
        self._last_seq: dict[tuple[bytes, int], int] = {}
        self._received_seq: dict[tuple[bytes, int], int] = {}
        # High-water marks asked for while partitions are paused (nothing is fetched then, so
        # the fetcher's marks go stale), and when they were last asked for.
        self._high: dict[TopicPartition, int] = {}
        self._high_asked = 0.0
        # Offsets restored with a state snapshot (seek_on_start), applied at first assignment.
        self._start_offsets: dict[TopicPartition, int] = {}
        # Partitions that topic.offsets.map has positioned since the source started (once each).
        self._offsets_applied: set[TopicPartition] = set()
        # True from a revocation to the next assignment: nothing is delivered in between.
        self._rebalancing = False
        # Where the latest assignment positioned partitions, and a count of assignments: a
        # fetch that spans an assignment is put back to these positions (see _consume).
        self._sought: dict[TopicPartition, int] = {}
        self._epoch = 0
        #: Awaited (with the revoked ``(topic, partition)`` pairs) before partitions move to
        #: another member, after the chunk being delivered has been taken: the host flushes
        #: the outputs of what it processed and commits it here, so the next owner does not
        #: process it again.  Bounded by half the rebalance timeout.
        self.on_revoke: Callable[[set[tuple[str, int]]], Awaitable[None]] | None = None
        #: Awaited with the newly assigned ``(topic, partition)`` pairs before they are
        #: positioned or delivered (scale-out: restore the partitions' state).  It returns
        #: ``{(topic, partition): offset}`` to start from, which win over every other position.
        #: aiokafka assignors for the group (scale-out sets the range assignor, so that the
        #: same partition number of co-partitioned topics goes to the same member).
        self.assignment_strategy: tuple[Any, ...] | None = None
        self.on_assign: Callable[[set[tuple[str, int]]],
                                 Awaitable[Mapping[tuple[str, int], int]]] | None = None
        self._log = self._log.bind(topics=self.topics, group=o["group.id"])

    def seek_on_start(self, offsets: Mapping[tuple[str, int], int]) -> None:
        """Start these partitions at these offsets, overriding the group's committed offsets.

        The host calls this before :meth:`start` with the offsets saved in the same transaction
        as the state snapshot it restored: the snapshot includes every event before them and
        none after, so consuming from exactly there counts each event once in the state.  The
        group's committed offset is usually further on (commits follow flushed outputs, and
        snapshots are periodic); the records in between are processed again and their outputs
        published again (at least once).  Each partition is sought once, when it is first
        assigned to this source; later assignments follow the rules of :meth:`_assigned`.
        """
        self._start_offsets.update({TopicPartition(t, p): int(off) for (t, p), off in offsets.items()})

    def transaction_offsets(self, tokens: Iterable[AckToken]) -> tuple[str, dict[TopicPartition, int]]:
        """``(group id, {partition: next offset})`` of ``tokens``, for a transactional sink."""
        offsets: dict[TopicPartition, int] = {}
        for token in tokens:
            if isinstance(token, KafkaAck):
                for tp, off in token.offsets.items():
                    offsets[tp] = max(off, offsets.get(tp, -1))
        return self.options["group.id"], offsets

    def transaction_committed(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Note offsets a transactional sink committed for this source's group."""
        for tp, off in offsets.items():
            if off > self._committed.get(tp, -1):
                self._committed[tp] = off

    async def _revoked(self, revoked: set[TopicPartition]) -> None:
        """Before a rebalance: hold delivery, let the host commit what it processed."""
        self._rebalancing = True
        self._sought = {}
        if not revoked:
            return
        parts = sorted(f"{tp.topic}[{tp.partition}]" for tp in revoked)
        self._log.info("kafka partitions revoked", partitions=parts)
        consumer = self._consumer
        if consumer is not None:
            # Fetching on goes nowhere until the assignment: records would only be put back.
            with contextlib.suppress(IllegalStateError):
                consumer.pause(*(tp for tp in revoked if tp in consumer.assignment()))
        if self.on_revoke is None:
            return
        timeout = self._rebalance_timeout_s() / 2
        try:
            async with asyncio.timeout(timeout):
                await self._chunk_done()  # the chunk in the host's hands is part of what to commit
                await self.on_revoke({(tp.topic, tp.partition) for tp in revoked})
        except TimeoutError:
            self._log.warning("outputs not flushed before the rebalance; the next owner of these partitions "
                              "will process their uncommitted records again", partitions=parts,
                              timeout_s=timeout)
        except Exception as exc:
            self._log.warning("commit before the rebalance failed; records will be redelivered",
                              partitions=parts, error=repr(exc))

    async def _chunk_done(self) -> None:
        """Wait until no chunk is in the host's hands."""
        while self._in_callback:
            await asyncio.sleep(0.01)

    async def _assigned(self, assigned: set[TopicPartition]) -> None:
        """After a rebalance: seek where this process's state needs, then deliver again."""
        self._log.info("kafka partitions assigned",
                       partitions=sorted(f"{tp.topic}[{tp.partition}]" for tp in assigned))
        consumer = self._consumer
        # A chunk still in the host's hands (the revocation gave up waiting for it: a database
        # outage holds it) is in the app's state once it returns: the host's starting points
        # and the seeks below must count it, or it is delivered again (counted twice).
        waited = time.monotonic()
        await self._chunk_done()
        if time.monotonic() - waited > 1.0:
            self._log.info("assignment waited for the chunk in flight", seconds=round(time.monotonic() - waited, 1))
        if consumer is not None and self.on_assign is not None and assigned:
            starts = await self.on_assign({(tp.topic, tp.partition) for tp in assigned})
            self._start_offsets.update({TopicPartition(t, p): int(o) for (t, p), o in starts.items()})
            for tp in assigned:
                if (tp.topic, tp.partition) not in starts:
                    # The state starts empty: what this source delivered before belongs to a
                    # state that is gone; start from the group's committed offset.
                    self._positions.pop(tp, None)
        if consumer is not None:
            await self._seek_assigned(consumer, assigned, check_group=True)
            if self.paused and assigned:
                consumer.pause(*assigned)
        took = time.monotonic() - waited
        if took > self._rebalance_timeout_s():
            # The group did not wait for this member: it rebalances again, and assignments
            # this slow every time never settle (each one is cut short by the next).
            self._log.warning("the assignment took longer than the group's rebalance timeout; the group will "
                              "rebalance again: raise rebalance.timeout.ms in optional.configuration",
                              seconds=round(took, 1), rebalance_timeout_s=self._rebalance_timeout_s())
        self._epoch += 1
        self._rebalancing = False
        self._ready.set()

    async def _seek_assigned(self, consumer: AIOKafkaConsumer, assigned: Iterable[TopicPartition],
                             check_group: bool) -> None:
        """Position newly assigned partitions.

        * Offsets restored with a snapshot win (see :meth:`seek_on_start`).
        * Else, a partition this source delivered beyond its last successful commit (the
          commit failed: broker outage, the member was thrown out of the group, a reconnect)
          resumes after what it delivered, because the app's state already includes those
          records -- unless the group's committed offset is further on (another member
          processed it since), which then wins.
        * Else the group's committed offset (aiokafka's default).
        """
        # Seek first, without awaiting.  Records the source's own task fetched meanwhile (from
        # the positions before these seeks) are put back to self._sought, not where they began.
        self._sought = {}
        verify: list[tuple[TopicPartition, int]] = []
        mapped: dict[TopicPartition, int] = {}
        for tp in assigned:
            start = self._start_offsets.pop(tp, None)
            if start is not None:
                self._offsets_applied.add(tp)
                consumer.seek(tp, start)
                self._sought[tp] = start
                self._log.info("kafka partition starts at the snapshot's offset",
                               partition=f"{tp.topic}[{tp.partition}]", offset=start)
                continue
            if tp.topic in self._topic_offsets and tp not in self._offsets_applied:
                # topic.offsets.map, as siddhi-io-kafka: read from the offset after the one
                # given (past the end of the partition, auto.offset.reset starts it over).
                self._offsets_applied.add(tp)
                start = self._topic_offsets[tp.topic] + 1
                consumer.seek(tp, start)
                self._sought[tp] = start
                mapped[tp] = start
                self._log.info("kafka partition starts after topic.offsets.map's offset",
                               partition=f"{tp.topic}[{tp.partition}]", offset=start)
                continue
            own = self._positions.get(tp)
            if own is None or own == self._committed.get(tp):
                continue
            consumer.seek(tp, own)
            self._sought[tp] = own
            verify.append((tp, own))
            self._log.info("kafka partition resumes after the records already processed",
                           partition=f"{tp.topic}[{tp.partition}]", offset=own)
        if mapped:
            await self._reset_past_end(consumer, mapped)
        for tp, own in verify if check_group else ():
            try:
                group = await consumer.committed(tp)
            except KafkaError as exc:
                self._log.warning("cannot read the committed offset", error=repr(exc))
                continue
            if group is not None and group > own:
                consumer.seek(tp, group)
                self._sought[tp] = group
                self._log.info("kafka partition was processed further by another member",
                               partition=f"{tp.topic}[{tp.partition}]", offset=group)

    async def _reset_past_end(self, consumer: AIOKafkaConsumer, starts: Mapping[TopicPartition, int]) -> None:
        """A topic.offsets.map start past the end of its partition starts over as
        ``auto.offset.reset`` says, as the Java client does when the broker answers a fetch there
        with OFFSET_OUT_OF_RANGE (some brokers, tansu among them, answer with nothing instead)."""
        try:
            ends = await consumer.end_offsets(list(starts))
        except KafkaError as exc:
            self._log.warning("cannot read end offsets for topic.offsets.map", error=repr(exc))
            return
        reset = self._extra.get("auto_offset_reset", "earliest")
        for tp, start in starts.items():
            end = ends.get(tp)
            if end is None or start <= end:
                continue
            if reset == "latest":
                consumer.seek(tp, end)
                self._sought[tp] = end
            else:
                await consumer.seek_to_beginning(tp)
                self._sought.pop(tp, None)
            self._log.info("topic.offsets.map's offset is past the end of the partition; reset", reset=reset,
                           partition=f"{tp.topic}[{tp.partition}]", offset=start, end=end)

    def _rebalance_timeout_s(self) -> float:
        """How long the group waits for its members to rejoin in a rebalance: ``rebalance.timeout.ms``,
        else ``max.poll.interval.ms`` (default 5 min), as the Java consumer (and so Siddhi's Kafka
        source) binds it.  aiokafka's own default, the session timeout (10 s), is shorter than an
        assignment that restores state and waits for a store's lock: each such assignment made
        the group rebalance again (a storm)."""
        ms = self._extra.get("rebalance_timeout_ms") or self._extra.get("max_poll_interval_ms") or _MAX_POLL_INTERVAL_MS
        return float(ms) / 1000.0

    def _make_consumer(self) -> AIOKafkaConsumer:
        o = self.options
        kw: dict[str, Any] = {
            "bootstrap_servers": o["bootstrap.servers"],
            "group_id": o["group.id"],
            "enable_auto_commit": self._auto_commit,
            "auto_offset_reset": "earliest",
            "max_poll_records": o["batch.size"],
            **_security_kwargs(o),
        }
        kw.update(self._extra)
        kw["rebalance_timeout_ms"] = round(self._rebalance_timeout_s() * 1000)
        if self.assignment_strategy:
            kw["partition_assignment_strategy"] = self.assignment_strategy
        return AIOKafkaConsumer(**kw)

    async def _run(self) -> None:
        backoff = Backoff()
        while not self._stopping:
            consumer = self._make_consumer()
            try:
                await consumer.start()
            except (KafkaError, OSError) as exc:
                await _quiet_stop(consumer)
                delay = backoff.next_delay()
                self._log.warning("kafka source cannot connect; retrying", error=str(exc),
                                  retry_in=round(delay, 2))
                await asyncio.sleep(delay)
                continue
            self._consumer = consumer
            self._rebalancing = False
            try:
                if self._partitions:
                    missing = self._missing_partitions(consumer)
                    if missing:
                        # Assigned to a partition the broker does not know yet, the consumer
                        # would sit idle until its next metadata refresh (minutes); a new
                        # consumer bootstraps with fresh metadata instead.
                        delay = backoff.next_delay()
                        self._log.warning("kafka partitions do not exist yet; waiting", missing=missing,
                                          retry_in=round(delay, 2))
                        await asyncio.sleep(delay)
                        continue
                    consumer.assign([TopicPartition(t, p) for t in self.topics for p in self._partitions])
                    await self._seek_assigned(consumer, consumer.assignment(), check_group=False)
                    if self.paused:
                        consumer.pause(*consumer.assignment())
                    self._ready.set()
                else:
                    consumer.subscribe(self.topics, listener=_Rebalance(self))
                self._log.info("kafka source connected")
                backoff.reset()
                await self._consume(consumer, backoff)
            except (KafkaError, IllegalStateError, OSError) as exc:
                delay = backoff.next_delay()
                self._log.warning("kafka source failed; reconnecting", error=repr(exc), retry_in=round(delay, 2))
                await asyncio.sleep(delay)
            finally:
                self._ready.clear()
                self._consumer = None
                await _quiet_stop(consumer)

    def _missing_partitions(self, consumer: AIOKafkaConsumer) -> list[str]:
        """The configured ``topic[partition]``s absent from the metadata the consumer bootstrapped with."""
        return [f"{t}[{p}]" for t in self.topics for p in self._partitions
                if p not in (consumer.partitions_for_topic(t) or ())]

    async def _consume(self, consumer: AIOKafkaConsumer, backoff: Backoff) -> None:
        o = self.options
        timeout = o["poll.timeout"]
        limit = o["batch.size"]
        while not self._stopping:
            # Polling continues while paused (partitions are paused, so it returns nothing):
            # a consumer that stops polling is thrown out of its group.
            epoch = self._epoch
            if self.paused:
                await self._refresh_high_water(consumer)
            fetched = await consumer.getmany(timeout_ms=timeout, max_records=limit)
            if not fetched or self._stopping:
                continue
            groups = self._groups(fetched)
            for i, group in enumerate(groups):
                # An assignment completed while this fetch was on its way (or while an
                # earlier chunk of it was delivered): the records may come from positions
                # the assignment has just changed.
                stale = epoch != self._epoch
                if self.paused or self._rebalancing or stale:
                    # Paused after this fetch: put the records back rather than hold them, so
                    # polling (and group membership) goes on however long the pause lasts.
                    # During a rebalance the records may belong to another member next.
                    _rewind(consumer, groups[i:], self._sought if self._rebalancing or stale else {})
                    break
                messages, token, first, seen = self._chunk(group)
                ok = True
                if messages:
                    ok = await self._deliver(messages)
                if ok:
                    self._positions.update(token.offsets)
                    # Only now: a chunk delivered again after a host failure is not a duplicate.
                    self._last_seq.update(seen)
                    continue
                # The host failed: rewind everything not yet delivered and try again later.
                _rewind(consumer, groups[i:])
                delay = backoff.next_delay()
                self._log.warning("redelivering after a host failure", retry_in=round(delay, 2),
                                  partitions=sorted(f"{tp.topic}[{tp.partition}]@{off}" for tp, off in first.items()))
                await asyncio.sleep(delay)
                break
            else:
                backoff.reset()

    async def _refresh_high_water(self, consumer: AIOKafkaConsumer) -> None:
        """Ask the broker for the end offsets of the paused partitions, once a second, so that
        :meth:`lag` counts what arrives during a pause."""
        now = time.monotonic()
        if now - self._high_asked < 1.0:
            return
        self._high_asked = now
        partitions = list(consumer.assignment())
        if not partitions:
            return
        try:
            async with asyncio.timeout(5):
                ends = await consumer.end_offsets(partitions)
        except (KafkaError, TimeoutError, IllegalStateError) as exc:
            self._log.debug("cannot read end offsets for the lag", error=repr(exc))
            return
        self._high.update({tp: int(off) for tp, off in ends.items() if off is not None})

    def _groups(self, fetched: Mapping[TopicPartition, list[Any]]) -> list[list[tuple[TopicPartition, list[Any]]]]:
        items = sorted(fetched.items(), key=lambda kv: (kv[0].topic, kv[0].partition))
        if self._threading == "partition.wise":
            return [[item] for item in items]
        if self._threading == "topic.wise":
            by_topic: dict[str, list[tuple[TopicPartition, list[Any]]]] = {}
            for tp, records in items:
                by_topic.setdefault(tp.topic, []).append((tp, records))
            return list(by_topic.values())
        return [items]

    def _chunk(self, group: list[tuple[TopicPartition, list[Any]]]
               ) -> tuple[list[Message], KafkaAck, dict[TopicPartition, int], dict[tuple[bytes, int], int]]:
        """The messages of a chunk, its token, its first offsets and (seq.enabled) the last
        sequence numbers it carries: duplicates are judged by them once it is delivered, and
        the source's state counts them once it entered the app (``KafkaAck.entered``)."""
        offsets: dict[TopicPartition, int] = {}
        first: dict[TopicPartition, int] = {}
        seen: dict[tuple[bytes, int], int] = {}
        token = KafkaAck(offsets, seen, self._received_seq)
        messages: list[Message] = []
        seq = self.options["seq.enabled"]
        for tp, records in group:
            if not records:
                continue
            first[tp] = records[0].offset
            offsets[tp] = records[-1].offset + 1
            for r in records:
                if seq and self._duplicate(r, seen):
                    continue
                messages.append(Message(r.value, {
                    "topic": r.topic, "partition": r.partition, "offset": r.offset, "key": r.key,
                    "timestamp": r.timestamp, "headers": r.headers,
                    # siddhi-io-kafka's names for trp: mappings (record.timestamp is the record's
                    # own time, event.timestamp when the source received it).
                    "record.timestamp": r.timestamp, "event.timestamp": int(time.time() * 1000),
                    "check.sum": r.checksum,
                }, token))
        return messages, token, first, seen

    def _duplicate(self, record: Any, seen: dict[tuple[bytes, int], int]) -> bool:
        """Whether ``record`` is to be dropped (no number, or not above the last one received
        from its sequence id on its partition); else its number goes into ``seen``."""
        headers = dict(record.headers or ())
        seq_id, seq_no = headers.get(SEQ_ID_HEADER), headers.get(SEQ_NO_HEADER)
        if seq_id is None or seq_no is None:
            self._log.warning("seq.enabled but the record has no sequence headers; dropped",
                              topic=record.topic, partition=record.partition, offset=record.offset)
            return True
        try:
            number = int(seq_no)
        except ValueError:
            self._log.warning("bad sequence.no header; dropped", topic=record.topic,
                              partition=record.partition, offset=record.offset)
            return True
        key = (seq_id, record.partition)
        if number <= seen.get(key, self._last_seq.get(key, -1)):
            self._log.debug("duplicate record dropped", topic=record.topic, partition=record.partition,
                            offset=record.offset, sequence_no=number)
            return True
        seen[key] = number
        return False

    def state(self) -> dict[str, Any] | None:
        """With ``seq.enabled``: ``{"lastReceivedSeqNo": [[sequence id, partition, number], ...]}``,
        the last number received from each sink on each partition (siddhi-io-kafka's
        ``KafkaSourceState`` keeps it under that name), of the chunks in the app's state; else None.
        (The offsets are saved by the host, with the snapshot, as before.)"""
        if not self.options["seq.enabled"] or not self._received_seq:
            return None
        # latin-1 turns any header bytes into text and back unchanged.
        return {"lastReceivedSeqNo": [[seq_id.decode("latin-1"), partition, number]
                                      for (seq_id, partition), number in sorted(self._received_seq.items())]}

    def restore_state(self, state: dict[str, Any]) -> None:
        """Drop again what the snapshot's ``lastReceivedSeqNo`` says was received (with ``seq.enabled``)."""
        entries = state.get("lastReceivedSeqNo")
        if not self.options["seq.enabled"] or not isinstance(entries, list):
            return
        for entry in entries:
            if isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str) \
                    and all(isinstance(v, int) and not isinstance(v, bool) for v in entry[1:]):
                key = (entry[0].encode("latin-1"), entry[1])
                self._last_seq[key] = self._received_seq[key] = entry[2]

    def _on_pause(self) -> None:
        if self._consumer is not None:
            self._consumer.pause(*self._consumer.assignment())

    def _on_resume(self) -> None:
        if self._consumer is not None:
            self._consumer.resume(*self._consumer.assignment())

    async def commit(self, tokens: Iterable[AckToken]) -> None:
        """Commit the highest offset per partition over ``tokens`` (see the module doc).

        Partitions no longer assigned are skipped (their new owner redelivers them); a commit
        rejected by a rebalance is logged, not raised, for the same reason.  Other broker
        errors raise ``aiokafka.errors.KafkaError`` so the host can retry.
        """
        offsets: dict[tuple[str, int], int] = {}
        for token in tokens:
            if not isinstance(token, KafkaAck):
                raise TypeError(f"not a kafka acknowledgement: {token!r}")
            for (topic, partition), off in token.next_offsets().items():
                if off > offsets.get((topic, partition), -1):
                    offsets[(topic, partition)] = off
        await self.commit_offsets(offsets)

    async def commit_offsets(self, offsets: Mapping[tuple[str, int], int]) -> dict[tuple[str, int], int]:
        """Commit ``{(topic, partition): next offset}``; returns what was committed.

        Only partitions this consumer owns now, and only forward; a commit rejected by a
        rebalance is logged, not raised (nothing is committed then).  Other broker errors
        raise ``aiokafka.errors.KafkaError`` so the host can retry.
        """
        if not self._commit_enabled or not offsets:
            return {}
        consumer = self._consumer
        if consumer is None:
            self._log.warning("kafka commit skipped: not connected", partitions=len(offsets))
            return {}
        owned = consumer.assignment()
        todo = {}
        for (topic, partition), off in offsets.items():
            tp = TopicPartition(topic, partition)
            if tp in owned and off > self._committed.get(tp, -1):
                todo[tp] = off
        if not todo:
            return {}
        try:
            await consumer.commit(todo)
        except CommitFailedError as exc:
            self._log.warning("kafka commit rejected (group rebalanced); the records will be redelivered",
                              error=str(exc))
            return {}
        self._committed.update(todo)
        self._log.debug("kafka offsets committed",
                        offsets={f"{tp.topic}[{tp.partition}]": off for tp, off in todo.items()})
        return {(tp.topic, tp.partition): off for tp, off in todo.items()}

    def lag(self) -> dict[str, int]:
        """Records not yet delivered per ``topic[partition]``: high-water mark - next offset.

        Uses the high-water marks the fetcher already received (``consumer.highwater``), which
        cost no request; while paused (nothing is fetched) the end offsets asked for once a
        second instead.  Partitions with neither are left out.
        """
        consumer = self._consumer
        if consumer is None:
            return {}
        out: dict[str, int] = {}
        for tp in consumer.assignment():
            high = consumer.highwater(tp)
            asked = self._high.get(tp)
            if asked is not None and (high is None or asked > high):
                high = asked  # paused: the fetcher's mark is stale
            pos = self._positions.get(tp)
            if high is None:
                continue
            if pos is None:
                pos = self._committed.get(tp)
            if pos is not None:
                out[f"{tp.topic}[{tp.partition}]"] = max(0, high - pos)
        return out

    def assignment(self) -> set[tuple[str, int]]:
        """The ``(topic, partition)`` pairs this consumer owns now."""
        consumer = self._consumer
        return {(tp.topic, tp.partition) for tp in consumer.assignment()} if consumer else set()


def _rewind(consumer: AIOKafkaConsumer, groups: list[list[tuple[TopicPartition, list[Any]]]],
            positioned: Mapping[TopicPartition, int] | None = None) -> None:
    """Seek back to the first record of every partition in ``groups`` (fetch them again), or,
    for a partition in ``positioned`` (an assignment has just chosen its position), there."""
    for group in groups:
        for tp, records in group:
            if positioned and tp in positioned:
                with contextlib.suppress(IllegalStateError, AssertionError):
                    consumer.seek(tp, positioned[tp])
            elif records:
                # A partition no longer assigned needs nothing: its next owner starts from the
                # committed offset.  (aiokafka asserts when there is no assignment at all.)
                with contextlib.suppress(IllegalStateError, AssertionError):
                    consumer.seek(tp, records[0].offset)


def _headers(value: Any) -> list[tuple[str, bytes]] | None:
    """Record headers from a ``headers`` message property (a mapping or (name, value) pairs)."""
    if not value:
        return None
    pairs = value.items() if isinstance(value, Mapping) else value
    return [(str(k), v if isinstance(v, bytes) else str(v).encode()) for k, v in pairs]


async def _quiet_stop(client: Any) -> None:
    try:
        await client.stop()
    except Exception:  # stopping a half-started client can fail; nothing more to release
        pass


_SINK_PARAMS = (
    Param("bootstrap.servers", _S, doc="Comma-separated host:port list of brokers."),
    Param("topic", _S, dynamic=True, doc="The topic to publish to; may be an {{attribute}} template."),
    Param("partition.no", _I, optional=True, default=None, dynamic=True,
          doc="The partition to publish to (default: chosen by key hash)."),
    Param("key", _S, optional=True, default=None, dynamic=True,
          doc="The message key, usually an {{attribute}} template such as '{{deviceId}}'."),
    Param("sequence.id", _S, optional=True, default=None,
          doc="Stamp records with this id and a growing number for seq.enabled sources."),
    Param("is.binary.message", _B, optional=True, default=False,
          doc="Accepted for compatibility: payloads are always sent as bytes."),
    Param("optional.configuration", _S, optional=True, default=None,
          doc="More producer settings as key:value pairs in Kafka's property names."),
    Param("is.synchronous", _B, optional=True, default=False,
          doc="Wait for the broker's acknowledgement inside every publish."),
    Param("acks", _S, optional=True, default="all", doc="all, 1 or 0."),
    Param("max.pending", _I, optional=True, default=10_000,
          doc="Records queued without acknowledgement before publish waits for them."),
    Param("transactional.id", _S, optional=True, default=None,
          doc="Publish in Kafka transactions that also commit the source offsets (exactly-once "
              "Kafka to Kafka; needs a broker with transactions, see docs/delivery.md)."),
    *_SECURITY_PARAMS,
)


@extension(Kind.SINK, "kafka", params=_SINK_PARAMS, doc="Publish to Kafka with acks, keys and dynamic topics.")
class KafkaSink(Sink):
    """Kafka producer (see the module doc)."""

    type_name = "kafka"
    PARAMS = _SINK_PARAMS

    def __init__(self, options: Mapping[str, Any] | None = None, *, name: str = "", **kw: Any) -> None:
        super().__init__(options, name=name, **kw)
        o = self.options
        where = f"kafka sink '{self.name}'"
        if str(o["acks"]) not in ("all", "1", "0", "-1"):
            raise creation_error(f"{where}: acks must be all, 1 or 0", kw.get("pos"))
        self._extra = parse_optional_configuration(o["optional.configuration"], AIOKafkaProducer, where, o)
        if self._extra.get("enable_idempotence"):
            self._log.warning("enable.idempotence requested; some brokers (tansu) do not support it")
        self._transactional_id: str | None = o["transactional.id"] or None
        if self._transactional_id and str(o["acks"]) not in ("all", "-1"):
            raise creation_error(f"{where}: transactional.id needs acks='all'", kw.get("pos"))
        self._producer: AIOKafkaProducer | None = None
        self._pending: list[asyncio.Future[Any]] = []
        # The index of each pending record in the items of the publish call that sent it, so
        # that a RejectedError from flush names the items the caller gave.
        self._pending_index: list[int] = []
        seq_id = o["sequence.id"]
        self._seq_id = seq_id.encode() if seq_id else None
        # The number of the next record (Siddhi's lastSentSequenceNo); restored from the snapshot
        # if there is one, else microseconds since the epoch: a restarted sink keeping no state
        # still continues above its last number.
        self._next_seq = time.time_ns() // 1000
        self._log = self._log.bind(topic=o["topic"])

    @property
    def connected(self) -> bool:
        """True once the producer has started."""
        return self._producer is not None

    async def connect(self) -> None:
        """Start the producer; raises :class:`ConnectionUnavailableError` when no broker answers."""
        if self._producer is not None:
            return
        o = self.options
        acks: Any = "all" if str(o["acks"]) in ("all", "-1") else int(o["acks"])
        extra = dict(self._extra)
        if self._transactional_id:
            # aiokafka turns idempotence on for transactional producers.
            extra["transactional_id"] = self._transactional_id
        producer = AIOKafkaProducer(bootstrap_servers=o["bootstrap.servers"], acks=acks,
                                    **_security_kwargs(o), **extra)
        try:
            await producer.start()
        except (KafkaError, OSError) as exc:
            await _quiet_stop(producer)
            raise ConnectionUnavailableError(f"kafka sink '{self.name}': {exc}") from exc
        self._producer = producer
        self._log.info("kafka sink connected")

    async def publish(self, items: Sequence[tuple[Any, Mapping[str, Any]]]) -> None:
        """Queue the records (see the module doc); waits when ``max.pending`` are unacknowledged.

        A record the client refuses outright (larger than ``max.request.size``) is skipped and
        reported, with the others sent, by :class:`RejectedError` at the end.
        """
        producer = self._producer
        if producer is None:
            raise ConnectionUnavailableError(f"kafka sink '{self.name}' is not connected")
        rejected: dict[int, str] = {}
        for n, (payload, props) in enumerate(items):
            topic = str(self._option(props, "topic"))
            key = self._option(props, "key")
            partition = self._option(props, "partition.no")
            if isinstance(payload, str):
                payload = payload.encode()
            elif not isinstance(payload, (bytes, bytearray, memoryview)):
                raise TypeError(f"kafka sink '{self.name}' publishes bytes, not {type(payload).__name__}; "
                                "map the stream with a json or csv mapper")
            headers = _headers(props.get("headers"))
            if self._seq_id is not None:
                headers = [*(headers or ()), (SEQ_ID_HEADER, self._seq_id),
                           (SEQ_NO_HEADER, str(self._next_seq).encode())]
            try:
                fut = await producer.send(
                    topic, bytes(payload),
                    key=key.encode() if isinstance(key, str) else key,
                    partition=int(partition) if partition is not None else None,
                    headers=headers)
            except _REJECTED as exc:
                rejected[n] = f"{type(exc).__name__}: {exc}"
                continue
            except KafkaError as exc:
                raise ConnectionUnavailableError(f"kafka sink '{self.name}': cannot send to {topic}: {exc!r}",
                                                 published=n) from exc
            if self._seq_id is not None:
                self._next_seq += 1  # (only a record the producer took uses its number)
            self._pending.append(fut)
            self._pending_index.append(n)
        if self.options["is.synchronous"] or len(self._pending) >= self.options["max.pending"]:
            try:
                await self.flush()
            except RejectedError as exc:
                rejected.update(exc.rejected)
        if rejected:
            raise RejectedError(f"kafka sink '{self.name}': {len(rejected)} of {len(items)} records refused: "
                                f"{next(iter(rejected.values()))}", rejected)

    async def flush(self) -> None:
        """Wait for the broker to acknowledge every queued record; raises :class:`PublishError`."""
        pending, self._pending = self._pending, []
        index, self._pending_index = self._pending_index, []
        if not pending:
            return
        results = await asyncio.gather(*pending, return_exceptions=True)
        failed = [r for r in results if isinstance(r, BaseException)]
        if failed and all(isinstance(r, _REJECTED) for r in failed):
            # The broker refused these records themselves: retrying cannot help.
            rejected = {index[i]: f"{type(r).__name__}: {r}" for i, r in enumerate(results)
                        if isinstance(r, BaseException)}
            raise RejectedError(f"kafka sink '{self.name}': the broker refused {len(rejected)} of {len(results)} "
                                f"records: {next(iter(rejected.values()))}", rejected)
        if failed:
            self._log.error("kafka records not acknowledged", failed=len(failed), total=len(results),
                            error=repr(failed[0]))
            raise PublishError(f"kafka sink '{self.name}': {len(failed)} of {len(results)} records were not "
                               f"acknowledged: {failed[0]!r}", failed=len(failed), total=len(results))

    @property
    def transactional(self) -> bool:
        """True when ``transactional.id`` is set: the host publishes through :meth:`transaction`."""
        return self._transactional_id is not None

    async def transaction(self, items: Sequence[tuple[Any, Mapping[str, Any]]],
                          offsets: Mapping[str, Mapping[TopicPartition, int]]) -> None:
        """Publish ``items`` and commit ``offsets`` (``{group id: {partition: next offset}}``)
        in one Kafka transaction: consumers reading ``read_committed`` see the records exactly
        when the source offsets move past the records that caused them.  On failure the
        transaction is aborted and the error raised (the host retries the whole of it).

        Untested here: tansu, the broker of our tests, has no transactions (see docs/delivery.md).
        """
        producer = self._producer
        if producer is None:
            raise ConnectionUnavailableError(f"kafka sink '{self.name}' is not connected")
        if not self._transactional_id:
            raise RuntimeError(f"kafka sink '{self.name}' has no transactional.id")
        await producer.begin_transaction()
        next_seq = self._next_seq
        try:
            if items:
                await self.publish(items)
                await self.flush()
            for group_id, group_offsets in offsets.items():
                if group_offsets:
                    await producer.send_offsets_to_transaction(dict(group_offsets), group_id)
            await producer.commit_transaction()
        except BaseException:
            self._pending, self._pending_index = [], []
            self._next_seq = next_seq  # no reader sees the aborted records: their numbers are free
            with contextlib.suppress(Exception):
                await producer.abort_transaction()
            raise

    def state(self) -> dict[str, Any] | None:
        """With ``sequence.id``: ``{"lastSentSequenceNo": n}``, the number of the next record
        (siddhi-io-kafka's ``KafkaSinkState`` keeps it under that name); else None."""
        if self._seq_id is None:
            return None
        return {"lastSentSequenceNo": self._next_seq}

    def restore_state(self, state: dict[str, Any]) -> None:
        """Number on from the snapshot's ``lastSentSequenceNo`` (with ``sequence.id``)."""
        number = state.get("lastSentSequenceNo")
        if self._seq_id is not None and isinstance(number, int) and not isinstance(number, bool):
            self._next_seq = number

    async def close(self) -> None:
        """Flush (logging failures) and stop the producer."""
        try:
            await self.flush()
        except PublishError:
            pass
        producer, self._producer = self._producer, None
        if producer is not None:
            await _quiet_stop(producer)
