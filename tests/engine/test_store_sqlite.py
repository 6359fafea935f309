"""SQLite-backed tables: same semantics as in-memory tables, rows survive a restart."""
from __future__ import annotations

import sqlite3
import threading
from typing import Any

from srota.engine import SiddhiManager


def app(path: str) -> str:
    return f"""
        define stream S (symbol string, price double, volume long, ok bool);
        define stream Del (symbol string);
        @PrimaryKey('symbol') @store(type='sqlite', database='{path}')
        define table T (symbol string, price double, volume long, ok bool);
        from S update or insert into T on T.symbol == symbol;
        from Del delete T on T.symbol == symbol;
    """


def test_rows_survive_a_restart(tmp_path):
    path = str(tmp_path / "t.db")
    manager = SiddhiManager()
    first = manager.create_siddhi_app_runtime(app(path))
    first.start()
    h = first.get_input_handler("S")
    h.send(["A", 1.0, 1, True])
    h.send(["B", 2.0, 2, False])
    h.send(["A", 3.0, 3, True])  # an update
    first.get_input_handler("Del").send(["B"])
    first.shutdown()  # flushes what is pending

    second = manager.create_siddhi_app_runtime(app(path))
    second.start()
    assert [list(e.data) for e in second.query("from T select *")] == [["A", 3.0, 3, True]]
    # the primary key index was rebuilt from the database
    second.get_input_handler("S").send(["A", 4.0, 4, False])
    second.get_input_handler("S").send(["C", 5.0, 5, True])
    assert sorted(list(e.data) for e in second.query("from T select *")) == [
        ["A", 4.0, 4, False], ["C", 5.0, 5, True]]
    second.shutdown()


def test_writes_are_batched_behind_the_hot_path(tmp_path):
    path = str(tmp_path / "t.db")
    runtime = SiddhiManager().create_siddhi_app_runtime(app(path))
    runtime.start()
    store = runtime.tables["T"].store
    h = runtime.get_input_handler("S")
    for i in range(50):
        h.send([f"s{i}", float(i), i, True])
    # reads never wait for the database
    assert len(runtime.query("from T select symbol")) == 50
    store.flush()
    assert store.pending() == 0
    con = sqlite3.connect(path)
    assert con.execute('SELECT COUNT(*) FROM "T"').fetchone()[0] == 50
    con.close()
    runtime.shutdown()


class _HeldConnection:
    """An SQLite connection whose writes wait until the test lets them go on."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.writing = threading.Event()
        self.go_on = threading.Event()

    def executemany(self, sql: str, rows: Any) -> Any:
        self.writing.set()
        assert self.go_on.wait(10)
        return self._conn.executemany(sql, rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def test_changes_being_written_still_count_as_pending(tmp_path):
    """A flush takes the queued changes before it writes them; while it writes (or fails to,
    on a full disk: tests/faults/test_disk_full.py once caught it) they read as pending."""
    runtime = SiddhiManager().create_siddhi_app_runtime(
        app(str(tmp_path / "t.db")).replace("@store(type='sqlite',", "@store(type='sqlite', flush.interval='1 hour',"))
    runtime.start()
    store = runtime.tables["T"].store
    held = store._conn = _HeldConnection(store._conn)
    h = runtime.get_input_handler("S")
    for i in range(20):
        h.send([f"s{i}", float(i), i, True])
    flushing = threading.Thread(target=store.flush)
    flushing.start()
    assert held.writing.wait(10)
    h.send(["s0", 9.0, 9, False])  # a row in flight changed again: still one row
    h.send(["new", 1.0, 1, True])
    assert store.pending() == 21
    held.go_on.set()
    flushing.join(10)
    assert store.pending() == 2
    store._conn = held._conn
    runtime.shutdown()


def test_schema_mismatch_is_a_creation_error(tmp_path):
    import pytest
    from srota.engine import SiddhiAppCreationError

    path = str(tmp_path / "t.db")
    SiddhiManager().create_siddhi_app_runtime(app(path)).shutdown()
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(
            f"@store(type='sqlite', database='{path}') define table T (symbol string);")


def _object_app(path: str) -> str:
    return f"""
        define stream S (k string, o object);
        @store(type='sqlite', database='{path}') define table T (k string, o object);
        from S insert into T;
    """


def test_object_columns_are_data_not_pickles(tmp_path):
    """An object column is stored in the data-only state encoding; a pickle in it is not run."""
    import pickle

    path = str(tmp_path / "o.db")
    manager = SiddhiManager()
    first = manager.create_siddhi_app_runtime(_object_app(path))
    first.start()
    first.get_input_handler("S").send(["a", {"x": (1, 2), "y": [1.5, None]}])
    first.shutdown()
    raw = sqlite3.connect(path).execute("SELECT o FROM T").fetchone()[0]
    assert not raw.startswith(b"\x80")  # not a pickle

    class Boom:
        def __reduce__(self):
            marker = str(tmp_path / "ran")
            return (exec, (f"import pathlib; pathlib.Path({marker!r}).write_text('ran')",))

    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO T (k, o) VALUES (?, ?)", ("evil", pickle.dumps(Boom())))
    second = manager.create_siddhi_app_runtime(_object_app(path))
    second.start()
    rows = {e.data[0]: e.data[1] for e in second.query("from T select *")}
    second.shutdown()
    assert rows == {"a": {"x": (1, 2), "y": [1.5, None]}, "evil": None}
    assert not (tmp_path / "ran").exists()
