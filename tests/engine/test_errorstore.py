"""``@OnError(action='STORE')``: events that fail in a query are kept with their cause."""
from __future__ import annotations

import logging

import pytest
from srota.engine import SiddhiManager
from srota.engine.errorstore import (
    MAPPING,
    STREAM,
    ErrorEntry,
    RdbmsErrorStore,
    SqliteErrorStore,
    open_error_store,
)

T0 = 1_700_000_000_000
APP = """
@app:name('Div')
@OnError(action='STORE')
define stream S (name string, n int);
-- (Siddhi's 100 / 0 is null, not an error: the failing division is a Python function's)
define function div[python] return int { int(data[0] / data[1]) };
from S select name, div(100, n) as share insert into Out;
partition with (name of S) begin
  from S select name, div(10, n) as tenth insert into PerName;
end;
"""


def test_failed_events_are_stored_with_their_cause_and_the_others_go_on(tmp_path) -> None:
    store = SqliteErrorStore(tmp_path / "errors.db")
    rt = SiddhiManager(error_store=store).create_siddhi_app_runtime(APP)
    out: list[tuple] = []
    rt.add_callback("Out", lambda events: out.extend(e.data for e in events))
    rt.start()
    handler = rt.get_input_handler("S")
    handler.send(["a", 4], T0)
    handler.send(["b", 0], T0 + 1)
    handler.send(["c", 5], T0 + 2)
    rt.shutdown()
    assert out == [("a", 25), ("c", 20)]
    entries = store.entries()
    # the event failed in the query and in the partition's query: stored once for each
    assert [(e.app, e.stream, e.kind, e.cause) for e in entries] == [("Div", "S", STREAM, "ZeroDivisionError: division by zero")] * 2
    assert entries[0].events == [{"timestamp": T0 + 1, "data": ["b", 0]}]
    assert "ZeroDivisionError" in entries[0].stack
    # kept on disk: another store object on the file sees them
    assert SqliteErrorStore(tmp_path / "errors.db").count(app="Div") == 2


def test_without_a_store_the_events_are_logged_and_dropped(caplog) -> None:
    rt = SiddhiManager().create_siddhi_app_runtime(APP)
    rt.start()
    with caplog.at_level(logging.ERROR, "srota.engine"):
        rt.get_input_handler("S").send(["b", 0], T0)
    rt.shutdown()
    assert "no error store is configured" in caplog.text


def test_the_store_lists_pages_shows_discards_and_purges(tmp_path) -> None:
    _lists_pages_shows_discards_and_purges(SqliteErrorStore(tmp_path / "e.db"))


@pytest.mark.integration
def test_a_database_store_behaves_as_the_file_and_is_shared(rdbms_url) -> None:
    """PostgreSQL and MariaDB: the same entries, pages and purges; two store objects (two
    replicas) see each other's entries."""
    store = open_error_store(rdbms_url)
    assert isinstance(store, RdbmsErrorStore)
    _lists_pages_shows_discards_and_purges(store)
    other = RdbmsErrorStore(rdbms_url)  # a second replica: the table exists already
    rt = SiddhiManager(error_store=other).create_siddhi_app_runtime(APP)
    rt.start()
    rt.get_input_handler("S").send(["b", 0], T0)
    rt.shutdown()
    [entry, _] = store.entries(app="Div")
    assert entry.events == [{"timestamp": T0, "data": ["b", 0]}] and entry.cause.startswith("ZeroDivisionError")
    payload = store.add(ErrorEntry("C", "P", MAPPING, "bad", payload=b"\x00\xffraw", created=T0))
    assert store.get(payload).payload == b"\x00\xffraw"
    store.close()
    other.close()


def _lists_pages_shows_discards_and_purges(store: SqliteErrorStore | RdbmsErrorStore) -> None:
    ids = [store.add(ErrorEntry("A", "S", STREAM, f"cause {i}", [{"timestamp": T0, "data": [i]}], created=T0 + i))
           for i in range(5)]
    store.add(ErrorEntry("B", "P", MAPPING, "bad json", payload=b"{not json", created=T0 + 10))
    assert [e.id for e in store.entries(app="A", limit=2)] == ids[:2]
    assert [e.id for e in store.entries(app="A", after=ids[1])] == ids[2:]
    assert store.get(ids[0]).summary() == {"id": ids[0], "app": "A", "stream": "S", "kind": STREAM, "cause": "cause 0",
                                           "events": 1, "payload_bytes": None, "created": T0}
    assert store.entries(app="B")[0].detail()["payload"] == "{not json"
    assert store.discard(ids[0]) and not store.discard(ids[0])
    assert store.purge(app="A", before=T0 + 3) == 2
    assert store.count(app="A") == 2 and store.purge() == 3 and store.count() == 0


def test_an_unknown_action_is_an_error() -> None:
    with pytest.raises(Exception, match="must be LOG, STREAM, STORE or WAIT"):
        SiddhiManager().create_siddhi_app_runtime("@OnError(action='KEEP') define stream S (n int);")
