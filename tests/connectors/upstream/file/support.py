"""What the siddhi-io-file ports share: the resource files, the upstream app shape, waiting.

The Java tests copy ``src/test/resources/files/repo`` to ``files/new`` before each test and run
an app whose ``file`` source feeds ``FooStream``, copied into ``BarStream``.  Their callbacks
count *callbacks*, which is one per event there because each file event arrives alone; Srota
hands a source's chunk to the engine at once, so here events (rows) are counted, which is the
count the Java tests mean.  ``Thread.sleep`` and ``SiddhiTestHelper.waitForEvents`` become
polling with a timeout, followed by a short wait that shows no more events come.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The copied upstream resources (component/src/test/resources/files/repo, the files used here).
RESOURCES = Path(__file__).parent / "resources" / "repo"

STOCK = "symbol string, price float, volume long"


class Files:
    """The per-test copy of the resources (``new``, the Java ``dirUri``) and ``moved``
    (``moveAfterProcessDir``)."""

    def __init__(self, new: Path, moved: Path) -> None:
        self.new = new
        self.moved = moved

    def uri(self, relative: str = "") -> str:
        """``'file:/' + dirUri + '/' + relative`` as the Java tests write it (``file://tmp/...``)."""
        return "file:/" + str(self.new / relative) if relative else "file:/" + str(self.new)

    def moved_uri(self, relative: str = "") -> str:
        return "file:/" + str(self.moved / relative) if relative else "file:/" + str(self.moved)

    def listing(self, relative: str) -> list[str]:
        """``new File(dirUri + relative).list()``."""
        return sorted(p.name for p in (self.new / relative).iterdir())

    def moved_listing(self, relative: str = "") -> list[str]:
        path = self.moved / relative
        return sorted(p.name for p in path.iterdir()) if path.is_dir() else []


def app(source: str, types: str = STOCK, name: str = "TestSiddhiApp") -> str:
    """The upstream app: ``source`` on FooStream, everything copied into BarStream."""
    return (f"@App:name('{name}') {source} define stream FooStream ({types}); "
            f"define stream BarStream ({types}); from FooStream select * insert into BarStream;")


def rows(chunks: list[list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    return [row for chunk in chunks for row in chunk]


async def until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll ``predicate`` until it holds (raises ``TimeoutError``)."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


async def events(got: list[list[tuple[Any, ...]]], n: int, timeout: float = 10.0,
                 settle: float = 0.3) -> list[tuple[Any, ...]]:
    """Wait for ``n`` events in ``got``, then ``settle`` seconds more so extra ones would show."""
    await until(lambda: len(rows(got)) >= n, timeout)
    await asyncio.sleep(settle)
    return rows(got)
