"""The host's side of exactly-once Kafka to Kafka (``transactional.id`` on a kafka sink).

tansu has no transactions, so the kafka sink's transaction itself is untested here (see
docs/delivery.md).  What is tested is the host's orchestration, with a stand-in sink that
records each transaction: every chunk's outputs and that chunk's offsets travel in one
transaction, the source's own (non-transactional) commit is not used, and a failed
transaction is retried whole, with the source held meanwhile.
"""
from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
import pytest
from srota.connectors.base import RejectedError, Sink
from srota.engine.registry import Kind, Param, extension
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import AttrType
from srota.service.host import ServiceHost

from tests.integration.support import committed, config, kafka_source, produce, running_host, wait_until

pytestmark = pytest.mark.integration

TRANSACTIONS: dict[str, list[tuple[list[Any], dict[str, dict[Any, int]]]]] = {}
FAIL_NEXT: dict[str, int] = {}
REFUSE: dict[str, set[int]] = {}  # values of n the stand-in broker can never take
_PARAMS = (Param("name", (AttrType.STRING,), doc="Where the transactions are recorded."),)


@extension(Kind.SINK, "testTransactional", params=_PARAMS, doc="Records transactions (tests only).")
class RecordingTransactionalSink(Sink):
    type_name = "testTransactional"
    PARAMS = _PARAMS
    transactional = True

    async def connect(self) -> None:
        pass

    async def publish(self, items: Sequence[tuple[Any, Mapping[str, Any]]]) -> None:
        raise AssertionError("a transactional sink is published to through transaction()")

    async def transaction(self, items: Sequence[tuple[Any, Mapping[str, Any]]],
                          offsets: Mapping[str, Mapping[Any, int]]) -> None:
        name = self.options["name"]
        if FAIL_NEXT.get(name):
            FAIL_NEXT[name] -= 1
            raise ConnectionError("transaction aborted (test)")
        refused = {i: "MessageSizeTooLargeError: test" for i, (p, _) in enumerate(items)
                   if p[0] in REFUSE.get(name, ())}
        if refused:
            raise RejectedError("refused (test)", refused)
        TRANSACTIONS.setdefault(name, []).append(
            ([p for p, _ in items], {g: {(tp.topic, tp.partition): o for tp, o in offs.items()}
                                     for g, offs in offsets.items()}))

    async def close(self) -> None:
        pass


def _app(kb: Any, src: str, group: str, name: str, extra_sink: str = "") -> str:
    return f"""
    @app:name('Txn')
    {kafka_source(kb, src, group, **{"batch.size": "10"})}
    define stream In (n int);
    @sink(type='testTransactional', name='{name}', @map(type='passThrough'))
    define stream Out (n int);
    {extra_sink}
    from In select n insert into Out;
    """


async def test_each_chunk_and_its_offsets_in_one_transaction(kafka_broker: Any) -> None:
    kb = kafka_broker
    src, group, name = await kb.create_topic(), f"g-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    FAIL_NEXT[name] = 2
    async with running_host(config(), _app(kb, src, group, name)):
        await produce(kb.bootstrap_servers, src, [orjson.dumps({"n": i}) for i in range(50)])
        await wait_until(lambda: sum(len(p) for p, _ in TRANSACTIONS.get(name, [])) >= 50, 30,
                         what="every output in a transaction")
    txns = TRANSACTIONS[name]
    assert FAIL_NEXT[name] == 0, "the failed transactions were not retried"
    outputs = [row[0] for payloads, _ in txns for row in payloads]
    assert outputs == list(range(50)), "outputs lost or repeated"
    seen = 0
    for payloads, offsets in txns:
        if not offsets:
            continue
        seen += len(payloads)
        # The offsets committed with a chunk's outputs are exactly past that chunk.
        assert offsets == {group: {(src, 0): seen}}
    # Offsets went only through the transactions, never through the consumer's own commit.
    assert (await committed(kb.bootstrap_servers, group, src, 1)) == {0: None}


async def test_a_transactional_sink_must_be_the_only_sink(kafka_broker: Any) -> None:
    kb = kafka_broker
    app = _app(kb, "t", "g", "x", extra_sink="@sink(type='log') define stream Other (n int);")
    host = ServiceHost(config(), app_texts=[app])
    with pytest.raises(SiddhiAppCreationError, match="only sink"):
        await host.start()


async def test_an_output_the_broker_refuses_leaves_the_transaction_the_rest_commits(kafka_broker: Any) -> None:
    """A record the broker can never take aborts every attempt: it is left out (logged) and the
    transaction of the others commits, rather than retrying forever with the source held."""
    kb = kafka_broker
    src, group, name = await kb.create_topic(), f"g-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    REFUSE[name] = {13}
    async with running_host(config(), _app(kb, src, group, name)):
        await produce(kb.bootstrap_servers, src, [orjson.dumps({"n": i}) for i in range(30)])
        await wait_until(lambda: sum(len(p) for p, _ in TRANSACTIONS.get(name, [])) >= 29, 30,
                         what="every other output in a transaction")
    outputs = sorted(row[0] for payloads, _ in TRANSACTIONS[name] for row in payloads)
    assert outputs == [n for n in range(30) if n != 13]
