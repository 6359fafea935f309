"""The test helpers themselves: :class:`TopicReader` reads every record written before it is asked."""
from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.integration.support import TopicReader, produce

pytestmark = pytest.mark.integration


async def test_until_reads_what_was_written_while_nobody_read(kafka_broker: Any) -> None:
    """aiokafka's fetcher keeps fetching while nobody reads, and stops for a partition once it
    holds a response for it: that response's high-water mark is from before the records written
    later.  CI once saw a SIGTERM test miss the last outputs a process wrote before it exited."""
    topic = await kafka_broker.create_topic()
    async with TopicReader(kafka_broker.bootstrap_servers, topic) as reader:
        await produce(kafka_broker.bootstrap_servers, topic, [b'{"n": 0}'])
        assert len(await reader.until(lambda rs: len(rs) == 1)) == 1
        for written in range(3, 9, 2):
            await produce(kafka_broker.bootstrap_servers, topic, [b'{"n": 1}'])
            await asyncio.sleep(0.5)  # the fetcher holds a response with this record
            await produce(kafka_broker.bootstrap_servers, topic, [b'{"n": 2}'])
            assert len(await reader.until(lambda rs: True)) == written
