"""Port of siddhi-store-rdbms's ``query.StoreQueryTableTestCaseIT``: on-demand (store) queries
(``SiddhiAppRuntime.query``) over an rdbms table: find with ``on``/``select``/``group by``/
``having``/``order by``/``limit``/``offset``, aggregates, and ``insert``/``delete``/``update``/
``update or insert`` store queries, plus the errors of bad queries.

Siddhi's ``query`` returns ``null`` when nothing is found; Srota returns an empty list, so
``Assert.assertNull(events)`` becomes ``== []``.
"""
from __future__ import annotations

from typing import Any

import pytest
from srota.grammar.errors import SiddhiAppCreationError, SiddhiParserError
from srota.grammar.model import Attribute, AttrType
from srota.grammar.parser import parse_on_demand_query

from srota import SiddhiManager
from tests.engine.stores.upstream.support import T0, count_rows, store, table_rows

# The @Store options every Java test of this class gives its table (besides the connection).
OPTS: dict[str, str] = {"field__length": "symbol:100", "pool__properties": "maximumPoolSize:1"}

STOCK = "symbol string, price float, volume long"
ID_STOCK = "id int, symbol string, volume int"
QUERY1 = "@info(name = 'query1') from StockStream insert into StockTable ;"


def _app(url: str, attrs: str = STOCK, *, query: bool = True, pk: bool = False) -> str:
    return (f"define stream StockStream ({attrs}); "
            f"{store(url, **OPTS)}\n"
            + ('@PrimaryKey("symbol")' if pk else "")
            + f"define table StockTable ({attrs}); "
            + (QUERY1 if query else ""))


def _start(url: str, rows: list[list[Any]], attrs: str = STOCK) -> Any:
    """Create and start the app, then send ``rows`` one by one into StockStream (-> StockTable)."""
    rt = SiddhiManager().create_siddhi_app_runtime(_app(url, attrs))
    rt.start()
    send = rt.get_input_handler("StockStream").send
    for i, row in enumerate(rows):
        send(row, timestamp=T0 + i)
    return rt


def _data(events: list[Any]) -> list[tuple[Any, ...]]:
    return [tuple(e.data) for e in events]


# The rows most tests of the class insert first.
WSO2_IBM_WSO2 = [["WSO2", 55.6, 100], ["IBM", 75.6, 100], ["WSO2", 57.6, 100]]


def test_test1(rdbms_url: str) -> None:
    """Find all rows, rows with ``price > 75``, and rows with ``price > volume*3/4`` (long math)."""
    rt = _start(rdbms_url, [["WSO2", 55.6, 100], ["IBM", 75.6, 100], ["WSO3", 57.6, 100]])
    events = rt.query("from StockTable ")
    assert len(events) == 3
    assert sorted(e.data[0] for e in events) == ["IBM", "WSO2", "WSO3"]

    events = rt.query("from StockTable on price > 75 ")
    assert len(events) == 1
    assert events[0].data[0] == "IBM"

    # volume*3/4 is long arithmetic: 100*3/4 == 75, so only IBM (75.6) passes
    events = rt.query("from StockTable on price > volume*3/4  ")
    assert len(events) == 1
    assert events[0].data[0] == "IBM"
    rt.shutdown()


def test_test2(rdbms_url: str) -> None:
    """A projection (``select symbol, volume``) with and without ``on``, and ``group by``/``having``."""
    rt = _start(rdbms_url, WSO2_IBM_WSO2)
    events = rt.query("from StockTable on price > 75 select symbol, volume ")
    assert len(events) == 1
    assert len(events[0].data) == 2
    assert _data(events) == [("IBM", 100)]

    events = rt.query("from StockTable select symbol, volume ")
    assert len(events) == 3
    assert len(events[0].data) == 2
    assert sorted(_data(events)) == [("IBM", 100), ("WSO2", 100), ("WSO2", 100)]

    events = rt.query("from StockTable on price > 5 select symbol group by symbol having symbol == 'WSO2' ")
    assert len(events) == 1
    assert _data(events) == [("WSO2",)]
    rt.shutdown()


def test_test3(rdbms_url: str) -> None:
    """``sum(volume)`` grouped by symbol (with and without ``having``) and by symbol and price."""
    rt = _start(rdbms_url, WSO2_IBM_WSO2)
    events = rt.query("from StockTable on price > 5 select symbol, sum(volume) as totalVolume "
                      "group by symbol having symbol == 'WSO2' ")
    assert len(events) == 1
    assert events[0].data[1] == 200

    events = rt.query("from StockTable on price > 5 select symbol, sum(volume) as totalVolume group by symbol  ")
    assert len(events) == 2
    assert sorted(_data(events)) == [("IBM", 100), ("WSO2", 200)]

    events = rt.query("from StockTable on price > 5 select symbol, sum(volume) as totalVolume "
                      "group by symbol,price  ")
    assert len(events) == 3
    assert sorted(_data(events)) == [("IBM", 100), ("WSO2", 100), ("WSO2", 100)]
    rt.shutdown()


def test_test4(rdbms_url: str) -> None:
    """Selecting an unknown attribute (``symbol1``) fails the store query (StoreQueryCreationException)."""
    rt = _start(rdbms_url, WSO2_IBM_WSO2)
    try:
        with pytest.raises(SiddhiAppCreationError) as err:
            rt.query("from StockTable on price > 5 select symbol1, sum(volume) as totalVolume "
                     "group by symbol having totalVolume >150 ")
        # a creation error, not a syntax error (Java: StoreQueryCreationException)
        assert not isinstance(err.value, SiddhiParserError)
    finally:
        rt.shutdown()


def test_test5(rdbms_url: str) -> None:
    """A store query over an undefined table (``StockTable1``) fails (StoreQueryCreationException)."""
    rt = SiddhiManager().create_siddhi_app_runtime(_app(rdbms_url, query=False, pk=True))
    try:
        rt.start()
        with pytest.raises(SiddhiAppCreationError) as err:
            rt.query("from StockTable1 on price > 5 select symbol1, sum(volume) as totalVolume "
                     "group by symbol having totalVolume >150 ")
        assert not isinstance(err.value, SiddhiParserError)
    finally:
        rt.shutdown()


def test_test6(rdbms_url: str) -> None:
    """``sum(volume)  totalVolume`` without ``as`` is a syntax error (SiddhiParserException)."""
    rt = SiddhiManager().create_siddhi_app_runtime(_app(rdbms_url, query=False, pk=True))
    try:
        rt.start()
        with pytest.raises(SiddhiParserError):
            rt.query("from StockTable1 on price > 5 select symbol1, sum(volume)  totalVolume "
                     "group by symbol having totalVolume >150 ")
    finally:
        rt.shutdown()


def test_test7(rdbms_url: str) -> None:
    """``on symbol == 'IBM'`` finds the one IBM row."""
    rt = _start(rdbms_url, WSO2_IBM_WSO2)
    events = rt.query("from StockTable on symbol == 'IBM' select symbol, volume ")
    assert len(events) == 1
    assert events[0].data[0] == "IBM"
    assert _data(events) == [("IBM", 100)]
    rt.shutdown()  # the Java test leaves the runtime running


def test_test9(rdbms_url: str) -> None:
    """``order by price limit 2`` returns the two cheapest rows in price order."""
    rt = _start(rdbms_url, WSO2_IBM_WSO2)
    events = rt.query("from StockTable on volume > 10 select symbol, price, volume order by price limit 2 ")
    assert len(events) == 2
    assert events[0].data[1] == pytest.approx(55.6, rel=1e-6)
    assert events[1].data[1] == pytest.approx(57.6, rel=1e-6)
    assert [e.data[0] for e in events] == ["WSO2", "WSO2"]
    rt.shutdown()  # the Java test leaves the runtime running


def test_test10(rdbms_url: str) -> None:
    """The same grouped ``sum`` store query run twice gives the same answer both times."""
    rt = _start(rdbms_url, WSO2_IBM_WSO2)
    store_query = ("from StockTable on volume > 10 select symbol, sum(volume) as totalVolume "
                   "group by symbol having symbol == 'WSO2'")
    events = rt.query(store_query)
    assert len(events) == 1
    assert events[0].data[1] == 200

    events = rt.query(store_query)
    assert len(events) == 1
    assert events[0].data[1] == 200
    rt.shutdown()  # the Java test leaves the runtime running


def test_test11(rdbms_url: str) -> None:
    """``sum``/``avg``/``min``/``max`` grouped by symbol and price, ordered by symbol, run twice."""
    rt = _start(rdbms_url, [["WSO2", 55.6, 30], ["IBM", 57.6, 150], ["IBM", 57.6, 50], ["WSO2", 50.0, 200]])
    store_query = ("from StockTable on price > 53 "
                   "select symbol, price, sum(volume) as totalVolume, avg(volume) as avgVolume, "
                   "min(volume) as minVolume, max(volume) as maxVolume "
                   "group by symbol, price "
                   "order by symbol; ")
    for _ in range(2):  # Java runs the same store query again
        events = rt.query(store_query)
        assert len(events) == 2
        assert events[0].data[0] == "IBM"
        assert events[0].data[2] == 200
        assert events[0].data[3] == 100.0
        assert isinstance(events[0].data[3], float)  # avg is a double
        assert events[0].data[4] == 50
        assert events[0].data[5] == 150

        assert events[1].data[0] == "WSO2"
        assert events[1].data[2] == 30
        assert events[1].data[3] == 30.0
        assert events[1].data[4] == 30
        assert events[1].data[5] == 30
    rt.shutdown()  # the Java test leaves the runtime running


def test_test12(rdbms_url: str) -> None:
    """``getStoreQueryOutputAttributes`` names and types a store query's output attributes."""
    rt = SiddhiManager().create_siddhi_app_runtime(_app(rdbms_url, query=False))
    rt.start()
    try:
        actual = rt.get_store_query_output_attributes(parse_on_demand_query("from StockTable select * ;"))
        symbol = Attribute("symbol", AttrType.STRING)
        price = Attribute("price", AttrType.FLOAT)
        volume = Attribute("volume", AttrType.LONG)
        assert list(actual) == [symbol, price, volume]

        actual = rt.get_store_query_output_attributes(
            parse_on_demand_query("from StockTable select symbol, sum(volume) as totalVolume ;"))
        assert list(actual) == [symbol, Attribute("totalVolume", AttrType.LONG)]
    finally:
        rt.shutdown()


def test_test14(rdbms_url: str) -> None:
    """A ``select ... update or insert into`` store query updates the matching row (run twice)."""
    rt = _start(rdbms_url, [["WSO2", 55.6, 100], ["IBM", 75.6, 200], ["WSO2", 57.6, 300]])
    store_query = ('select "newSymbol" as symbol, 123.45f as price, 123L as volume '
                   "update or insert into StockTable "
                   "set StockTable.symbol = symbol, StockTable.price=price on StockTable.volume == 100L ")
    for _ in range(2):  # the second run checks the query runtime is reset
        assert rt.query(store_query) == []
        events = rt.query("from StockTable on volume == 100L select *;")
        assert len(events) == 1
        assert events[0].data[0] == "newSymbol"
        assert events[0].data[1] == pytest.approx(123.45, rel=1e-6)
        assert events[0].data[2] == 100
        assert count_rows(rdbms_url, "StockTable") == 3  # updated, nothing inserted
    rt.shutdown()


def test_test15(rdbms_url: str) -> None:
    """``update or insert into`` with no matching row inserts the selected row."""
    rt = _start(rdbms_url, [["WSO2", 55.6, 100], ["IBM", 75.6, 200], ["WSO2", 57.6, 300]])
    rt.query('select "newSymbol" as symbol, 123.45f as price, 123L as volume '
             "update or insert into StockTable "
             "set StockTable.symbol = symbol, StockTable.price=price on StockTable.volume == 500L ")

    all_events = rt.query("from StockTable select *;")
    assert len(all_events) == 4

    new_events = rt.query("from StockTable on volume == 123L select *;")
    assert len(new_events) == 1
    assert new_events[0].data[0] == "newSymbol"
    assert new_events[0].data[1] == pytest.approx(123.45, rel=1e-6)
    assert new_events[0].data[2] == 123
    rt.shutdown()


def test_test16(rdbms_url: str) -> None:
    """``select 100L as vol delete StockTable on StockTable.volume == vol`` deletes (run twice)."""
    rt = _start(rdbms_url, [["WSO2", 55.6, 100], ["IBM", 75.6, 200], ["GOOGLE", 57.6, 300]])
    assert len(rt.query("from StockTable select *;")) == 3

    store_query = "select 100L as vol delete StockTable on StockTable.volume == vol;"
    rt.query(store_query)

    all_events = rt.query("from StockTable select *;")
    assert len(all_events) == 2
    assert sorted(e.data[0] for e in all_events) == ["GOOGLE", "IBM"]
    assert rt.query("from StockTable on volume == 100L select *") == []

    # submit the same store query again to test resetting the query runtime
    rt.query(store_query)
    assert rt.query("from StockTable on volume == 100L select *") == []
    assert count_rows(rdbms_url, "StockTable") == 2
    rt.shutdown()


def test_test17(rdbms_url: str) -> None:
    """``delete StockTable on StockTable.volume == 100L`` (no select) deletes the matching row."""
    rt = _start(rdbms_url, [["WSO2", 55.6, 100], ["IBM", 75.6, 200], ["GOOGLE", 57.6, 300]])
    assert len(rt.query("from StockTable select *;")) == 3

    rt.query("delete StockTable on StockTable.volume == 100L;")

    all_events = rt.query("from StockTable select *;")
    assert len(all_events) == 2
    assert sorted(e.data[0] for e in all_events) == ["GOOGLE", "IBM"]
    assert rt.query("from StockTable on volume == 100L select *") == []
    rt.shutdown()


def test_test18(rdbms_url: str) -> None:
    """``select 10 as id, "YAHOO" as symbol, 400 as volume insert into StockTable`` (run twice)."""
    rt = _start(rdbms_url, [[1, "WSO2", 100], [2, "IBM", 200], [3, "GOOGLE", 300]], ID_STOCK)
    assert len(rt.query("from StockTable select *;")) == 3

    store_query = 'select 10 as id, "YAHOO" as symbol, 400 as volume insert into StockTable;'
    rt.query(store_query)

    assert len(rt.query("from StockTable select *;")) == 4
    new_events = rt.query("from StockTable on id == 10 select *;")
    assert len(new_events) == 1
    assert tuple(new_events[0].data) == (10, "YAHOO", 400)

    # submit the same store query again to test resetting the query runtime
    rt.query(store_query)
    new_events = rt.query("from StockTable on id == 10 select *;")
    assert len(new_events) == 2
    assert _data(new_events) == [(10, "YAHOO", 400), (10, "YAHOO", 400)]
    rt.shutdown()


def test_test19(rdbms_url: str) -> None:
    """``update StockTable set ... on StockTable.id==2`` with constants (run twice)."""
    rt = _start(rdbms_url, [[1, "WSO2", 100], [2, "IBM", 200], [3, "GOOGLE", 300]], ID_STOCK)
    store_query = 'update StockTable set StockTable.symbol="MICROSOFT", StockTable.volume=2000 on StockTable.id==2;'
    for _ in range(2):  # the second run checks the query runtime is reset
        rt.query(store_query)
        assert len(rt.query("from StockTable select *;")) == 3
        updated = rt.query("from StockTable on id == 2 select *")
        assert len(updated) == 1
        assert tuple(updated[0].data) == (2, "MICROSOFT", 2000)
    assert table_rows(rdbms_url, "StockTable") == [(1, "WSO2", 100), (2, "MICROSOFT", 2000), (3, "GOOGLE", 300)]
    rt.shutdown()


def test_test20(rdbms_url: str) -> None:
    """``select ... update StockTable set StockTable.symbol=newSymbol, ... on StockTable.id==2``."""
    rt = _start(rdbms_url, [[1, "WSO2", 100], [2, "IBM", 200], [3, "GOOGLE", 300]], ID_STOCK)
    rt.query('select "MICROSOFT" as newSymbol, 2000 as newVolume '
             "update StockTable "
             "set StockTable.symbol=newSymbol, StockTable.volume=newVolume "
             "on StockTable.id==2;")
    assert len(rt.query("from StockTable select *;")) == 3
    updated = rt.query("from StockTable on id == 2 select *")
    assert len(updated) == 1
    assert tuple(updated[0].data) == (2, "MICROSOFT", 2000)
    rt.shutdown()


def test_test21(rdbms_url: str) -> None:
    """``LIMIT 2``, ``LIMIT 1 OFFSET 0`` and ``LIMIT 1 OFFSET 1`` return rows in insertion order."""
    rt = _start(rdbms_url, [[1, "WSO2", 100], [2, "IBM", 200], [3, "GOOGLE", 300]], ID_STOCK)
    events = rt.query("from StockTable select * LIMIT 2;")
    assert len(events) == 2
    assert events[0].data[0] == 1
    assert events[1].data[0] == 2

    events = rt.query("from StockTable select * LIMIT 1 OFFSET 0;")
    assert len(events) == 1
    assert events[0].data[0] == 1

    events = rt.query("from StockTable select * LIMIT 1 OFFSET 1;")
    assert len(events) == 1
    assert events[0].data[0] == 2
    rt.shutdown()  # the Java test leaves the runtime running


def test_test22(rdbms_url: str) -> None:
    """``order by`` an alias (``price as priceSel ... order by priceSel``) with ``limit 2``."""
    rt = _start(rdbms_url, WSO2_IBM_WSO2)
    events = rt.query("from StockTable on volume > 10 select symbol, price as priceSel, volume "
                      "order by priceSel limit 2 ")
    assert len(events) == 2
    assert events[0].data[1] == pytest.approx(55.6, rel=1e-6)
    assert events[1].data[1] == pytest.approx(57.6, rel=1e-6)
    rt.shutdown()  # the Java test leaves the runtime running
