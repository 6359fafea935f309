"""The reference engine for the differential tests: one Siddhi 5.1.33 runner per test run."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.differential.reference import ReferenceSiddhi, unavailable_reason


@pytest.fixture(scope="session")
def reference_siddhi() -> Iterator[ReferenceSiddhi]:
    """Real Siddhi 5.1.33 (skips, saying why, where it cannot run: no ../shared, no Java, no `make deps`)."""
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"real Siddhi cannot run here: {reason}")
    ref = ReferenceSiddhi()
    yield ref
    ref.close()
