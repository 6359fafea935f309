"""siddhi-io-file ``FileSourceBinaryChunkedModeTestCase``, ported: each Java ``@Test`` is one
test here, named after it.  The event tests map with ``binaryPassThrough``, which Srota does not
implement (skipped; binary.chunked with its trp:sequence.number, trp:content.length and
trp:eof is tested in tests/connectors/test_file.py).  Where only the source's options are
expected to be refused, the ``json`` mapper stands in."""
from __future__ import annotations

from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError

from tests.connectors.upstream.file.support import Files, app

NO_MAPPER = "needs @map(type='binaryPassThrough'), which Srota does not implement"


@pytest.mark.skip(reason=NO_MAPPER)
async def test_siddhiIoFileTestForBinaryChunkedWithDirUri() -> None:
    """dir.uri, binary.chunked, move: 8 events with eof true and the company file names."""


@pytest.mark.skip(reason=NO_MAPPER)
async def test_siddhiIoFileTestForBinaryChunkedWithFileUri() -> None:
    """file.uri, binary.chunked, delete: 1 event, file name apache.bin, length the file size."""


async def test_siddhiIoFileTestForBinaryChunkedWithException(run: Any, files: Files) -> None:
    """tailing='true' in binary.chunked mode: SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="tailing"):
        await run(app(f"@source(type='file', mode='binary.chunked', file.uri='{files.uri('binary/apache.bin')}', "
                      "tailing='true', @map(type='json'))"))


async def test_siddhiIoFileTestBinaryChunkedModeException(run: Any, files: Files) -> None:
    """begin.regex and end.regex in binary.chunked mode: SiddhiAppCreationException."""
    with pytest.raises(SiddhiAppCreationError, match="begin.regex"):
        await run(app(f"@source(type='file', mode='binary.chunked', dir.uri='{files.uri('binary')}', "
                      "begin.regex='<event>', end.regex='</event>', @map(type='json'))"))
