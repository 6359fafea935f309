"""Port of siddhi-store-rdbms's ``UpdateOrInsertRDBMSTableTestCaseIT``
(component/src/test/java/io/siddhi/extension/store/rdbms/UpdateOrInsertRDBMSTableTestCaseIT.java):
``update or insert into`` an ``@Store(type='rdbms')`` table, on PostgreSQL and MariaDB."""
from __future__ import annotations

import struct
import time
from typing import Any

import pytest
from srota.engine import Event
from srota.grammar.errors import SiddhiAppCreationError

from srota import SiddhiManager
from tests.engine.stores.upstream.support import T0, count_rows, store, table_rows

Row = tuple[Any, ...]


def f32(x: float) -> float:
    """``x`` as a Java ``float`` (what a ``float`` attribute holds)."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


def rows32(rows: list[Row]) -> list[Row]:
    """Rows with every float rounded to 32 bits, so they compare with literals through :func:`f32`."""
    return [tuple(f32(v) if isinstance(v, float) else v for v in r) for r in rows]


def stock_store(url: str, length: str = "symbol:100") -> str:
    """The ``@Store`` of every app of the Java class: its ``field.length`` and ``pool.properties``."""
    return store(url, field__length=length, pool__properties="maximumPoolSize:1")


def run(app: str, query: str | None = None) -> tuple[Any, list[Row], list[int]]:
    """Create and start ``app``; with ``query``, collect that query's in-events (data) and count
    its remove events, as the Java ``QueryCallback`` does."""
    rt = SiddhiManager().create_siddhi_app_runtime(app)
    got: list[Row] = []
    removed = [0]
    if query is not None:
        def receive(ts: int, ins: list[Event] | None, rem: list[Event] | None) -> None:
            got.extend(tuple(e.data) for e in ins or ())
            removed[0] += len(rem or ())
        rt.add_query_callback(query, receive)
    rt.start()
    return rt, got, removed


def wait_for_rows(url: str, table: str, n: int, timeout: float = 5.0) -> int:
    """Poll until ``table`` holds ``n`` rows (a live ``timeBatch`` fires on wall time); the last count."""
    deadline = time.monotonic() + timeout
    while (got := count_rows(url, table)) != n and time.monotonic() < deadline:
        time.sleep(0.1)
    return got


def test_updateOrInsertTableTest1(rdbms_url: str) -> None:
    """A never-true 'on' condition after a timeBatch inserts the batched event as a new row."""
    app = f"""
define stream StockStream (symbol string, price float, volume long);
define stream UpdateStockStream (symbol string, price float, volume long);
{stock_store(rdbms_url)}
define table StockTable (symbol string, price float, volume long);
@info(name = 'query1')
from StockStream
insert into StockTable ;
@info(name = 'query2')
from UpdateStockStream#window.timeBatch(1 sec)
update or insert into StockTable
   on StockTable.symbol=='IBM' and StockTable.symbol=='GOOG';
"""
    rt, _, _ = run(app)
    # wall-clock timestamps: the timeBatch fires on the app's (live) clock
    rt.get_input_handler("StockStream").send(["WSO2", 55.6, 100])
    rt.get_input_handler("StockStream").send(["IBM", 75.6, 100])
    rt.get_input_handler("StockStream").send(["WSO2", 57.6, 100])
    rt.get_input_handler("UpdateStockStream").send(["GOOG", 10.6, 100])
    n = wait_for_rows(rdbms_url, "StockTable", 4)  # Java sleeps 3 s and asserts nothing
    rt.shutdown()
    assert n == 4
    assert rows32(table_rows(rdbms_url, "StockTable")) == sorted(
        [("GOOG", f32(10.6), 100), ("IBM", f32(75.6), 100), ("WSO2", f32(55.6), 100), ("WSO2", f32(57.6), 100)],
        key=repr)


def test_updateOrInsertTableTest2(rdbms_url: str) -> None:
    """Repeated keys through 'update or insert' on a table without a primary key leave one row per key."""
    app = f"""
define stream StockStream (symbol string, price float, volume long);
{stock_store(rdbms_url)}
define table StockTable (symbol string, price float, volume long);
@info(name = 'query2')
from StockStream
update or insert into StockTable
   on StockTable.symbol==symbol ;
"""
    rt, _, _ = run(app)
    send = rt.get_input_handler("StockStream").send
    for i, (s, p) in enumerate([("WSO2", 55.6), ("IBM", 75.6), ("WSO2", 57.6), ("WSO2", 10.0), ("WSO2", 101.0),
                                ("WSO2", 102.0), ("WSO2", 103.0), ("WSO2", 104.0)]):
        send([s, p, 100], timestamp=T0 + i)
    rt.shutdown()
    # Java asserts nothing; the rows follow from the inputs: the last WSO2 price wins
    assert rows32(table_rows(rdbms_url, "StockTable")) == [("IBM", f32(75.6), 100), ("WSO2", 104.0, 100)]


def _check_app(url: str, update_query: str, check_stream: str = "(symbol string, volume long)",
               check_condition: str = "(symbol==StockTable.symbol and  volume==StockTable.volume)",
               update_stream: str = "") -> str:
    """The StockStream/CheckStockStream apps of tests 3-10, with their own update query."""
    return f"""
define stream StockStream (symbol string, price float, volume long);
define stream CheckStockStream {check_stream};
{update_stream}
{stock_store(url)}
define table StockTable (symbol string, price float, volume long);
{update_query}
@info(name = 'query3')
from CheckStockStream[{check_condition} in StockTable]
insert into OutStream;
"""


def test_updateOrInsertTableTest3(rdbms_url: str) -> None:
    """'update or insert' from a second stream updates the matching row; 'in' sees the new volume."""
    app = _check_app(rdbms_url, """
@info(name = 'query1')
from StockStream
insert into StockTable ;
@info(name = 'query2')
from UpdateStockStream
update or insert into StockTable
   on StockTable.symbol==symbol;
""", update_stream="define stream UpdateStockStream (symbol string, price float, volume long);")
    rt, got, removed = run(app, "query3")
    stock = rt.get_input_handler("StockStream").send
    check = rt.get_input_handler("CheckStockStream").send
    stock(["WSO2", 55.6, 100], timestamp=T0)
    stock(["IBM", 55.6, 100], timestamp=T0 + 1)
    check(["IBM", 100], timestamp=T0 + 2)
    check(["WSO2", 100], timestamp=T0 + 3)
    rt.get_input_handler("UpdateStockStream").send(["IBM", 77.6, 200], timestamp=T0 + 4)
    check(["IBM", 100], timestamp=T0 + 5)
    check(["WSO2", 100], timestamp=T0 + 6)
    rt.shutdown()
    assert got == [("IBM", 100), ("WSO2", 100), ("WSO2", 100)]
    assert removed == [0]
    assert rows32(table_rows(rdbms_url, "StockTable")) == [("IBM", f32(77.6), 200), ("WSO2", f32(55.6), 100)]


def test_updateOrInsertTableTest4(rdbms_url: str) -> None:
    """'update or insert' alone both inserts new keys and updates an existing one."""
    app = _check_app(rdbms_url, """
@info(name = 'query2')
from StockStream
update or insert into StockTable
   on StockTable.symbol==symbol;
""")
    rt, got, removed = run(app, "query3")
    stock = rt.get_input_handler("StockStream").send
    check = rt.get_input_handler("CheckStockStream").send
    stock(["WSO2", 55.6, 100], timestamp=T0)
    stock(["IBM", 55.6, 100], timestamp=T0 + 1)
    check(["IBM", 100], timestamp=T0 + 2)
    check(["WSO2", 100], timestamp=T0 + 3)
    stock(["IBM", 77.6, 200], timestamp=T0 + 4)
    check(["IBM", 100], timestamp=T0 + 5)
    check(["WSO2", 100], timestamp=T0 + 6)
    rt.shutdown()
    assert got == [("IBM", 100), ("WSO2", 100), ("WSO2", 100)]
    assert removed == [0]
    assert rows32(table_rows(rdbms_url, "StockTable")) == [("IBM", f32(77.6), 200), ("WSO2", f32(55.6), 100)]


def test_updateOrInsertTableTest5(rdbms_url: str) -> None:
    """(Disabled upstream, enabled = false) a selection lacking a table column (price) is rejected at creation."""
    # Java expects DuplicateDefinitionException: Siddhi's QueryParser checks an 'update or insert'
    # output against the table (DefinitionParserHelper.validateOutputStream), as siddhi-core's
    # enabled UpdateOrInsertTableTestCase.updateOrInsertTableTest5 shows for in-memory tables.
    app = _check_app(rdbms_url, """
@info(name = 'query1')
from StockStream
insert into StockTable ;
@info(name = 'query2')
from UpdateStockStream
select comp as symbol, vol as volume
update or insert into StockTable
   on StockTable.symbol==symbol;
""", update_stream="define stream UpdateStockStream (comp string, vol long);")
    with pytest.raises(SiddhiAppCreationError, match="does not match the definition of table .StockTable."):
        SiddhiManager().create_siddhi_app_runtime(app)


def test_updateOrInsertTableTest6(rdbms_url: str) -> None:
    """Two 'update or insert' queries on one table: an update of IBM and an insert of FB."""
    app = _check_app(rdbms_url, """
@info(name = 'query1')
from StockStream
update or insert into StockTable
   on StockTable.symbol==symbol;
@info(name = 'query2')
from UpdateStockStream
select comp as symbol, 0f as price, vol as volume
update or insert into StockTable
   on StockTable.symbol==symbol;
""", update_stream="define stream UpdateStockStream (comp string, vol long);")
    rt, got, removed = run(app, "query3")
    stock = rt.get_input_handler("StockStream").send
    check = rt.get_input_handler("CheckStockStream").send
    update = rt.get_input_handler("UpdateStockStream").send
    stock(["WSO2", 55.6, 100], timestamp=T0)
    stock(["IBM", 55.6, 100], timestamp=T0 + 1)
    check(["IBM", 100], timestamp=T0 + 2)
    check(["WSO2", 100], timestamp=T0 + 3)
    update(["IBM", 200], timestamp=T0 + 4)
    update(["FB", 300], timestamp=T0 + 5)
    check(["IBM", 100], timestamp=T0 + 6)
    check(["WSO2", 100], timestamp=T0 + 7)
    rt.shutdown()
    assert got == [("IBM", 100), ("WSO2", 100), ("WSO2", 100)]
    assert removed == [0]
    assert rows32(table_rows(rdbms_url, "StockTable")) == [
        ("FB", 0.0, 300), ("IBM", 0.0, 200), ("WSO2", f32(55.6), 100)]


def test_updateOrInsertTableTest7(rdbms_url: str) -> None:
    """A constant price in the selection updates IBM; 'in' with a '<' on price sees it."""
    app = _check_app(rdbms_url, """
@info(name = 'query1')
from StockStream
insert into StockTable ;
@info(name = 'query2')
from UpdateStockStream
select comp as symbol,  5f as price, vol as volume
update or insert into StockTable
   on StockTable.symbol==symbol;
""", check_stream="(symbol string, volume long, price float)",
        check_condition="(symbol==StockTable.symbol and volume==StockTable.volume and price < StockTable.price)",
        update_stream="define stream UpdateStockStream (comp string, vol long);")
    rt, got, removed = run(app, "query3")
    stock = rt.get_input_handler("StockStream").send
    check = rt.get_input_handler("CheckStockStream").send
    stock(["WSO2", 55.6, 100], timestamp=T0)
    stock(["IBM", 155.6, 100], timestamp=T0 + 1)
    check(["IBM", 100, 56.6], timestamp=T0 + 2)
    check(["WSO2", 100, 155.6], timestamp=T0 + 3)
    rt.get_input_handler("UpdateStockStream").send(["IBM", 200], timestamp=T0 + 4)
    check(["IBM", 200, 0.0], timestamp=T0 + 5)
    check(["WSO2", 100, 155.6], timestamp=T0 + 6)
    rt.shutdown()
    assert rows32(got) == [("IBM", 100, f32(56.6)), ("IBM", 200, 0.0)]
    assert removed == [0]
    assert rows32(table_rows(rdbms_url, "StockTable")) == [("IBM", 5.0, 200), ("WSO2", f32(55.6), 100)]


def test_updateOrInsertTableTest8(rdbms_url: str) -> None:
    """'update or insert' with an explicit selection updates IBM's volume."""
    app = _check_app(rdbms_url, """
@info(name = 'query2')
from StockStream
select symbol, price, volume
update or insert into StockTable
   on StockTable.symbol==symbol;
""", check_stream="(symbol string, volume long, price float)",
        check_condition="(symbol==StockTable.symbol and volume==StockTable.volume and price < StockTable.price)")
    rt, got, removed = run(app, "query3")
    stock = rt.get_input_handler("StockStream").send
    check = rt.get_input_handler("CheckStockStream").send
    stock(["WSO2", 55.6, 100], timestamp=T0)
    stock(["IBM", 155.6, 100], timestamp=T0 + 1)
    check(["IBM", 100, 55.6], timestamp=T0 + 2)
    check(["WSO2", 100, 155.6], timestamp=T0 + 3)
    stock(["IBM", 155.6, 200], timestamp=T0 + 4)
    check(["IBM", 200, 55.6], timestamp=T0 + 5)
    check(["WSO2", 100, 155.6], timestamp=T0 + 6)
    rt.shutdown()
    assert rows32(got) == [("IBM", 100, f32(55.6)), ("IBM", 200, f32(55.6))]
    assert removed == [0]
    assert rows32(table_rows(rdbms_url, "StockTable")) == [("IBM", f32(155.6), 200), ("WSO2", f32(55.6), 100)]


def test_updateOrInsertTableTest9(rdbms_url: str) -> None:
    """A left outer join with the table feeds 'update or insert' (the table's symbol and price)."""
    app = _check_app(rdbms_url, """
@info(name = 'query1')
from StockStream
insert into StockTable ;
@info(name = 'query2')
from UpdateStockStream left outer join StockTable
   on UpdateStockStream.comp == StockTable.symbol
select  symbol, ifThenElse(price is nulL,0F,price) as price, vol as volume
update or insert into StockTable
   on StockTable.symbol==symbol;
""", check_stream="(symbol string, volume long, price float)",
        check_condition="(CheckStockStream.symbol==StockTable.symbol and "
                        "CheckStockStream.volume==StockTable.volume and "
                        "CheckStockStream.price < StockTable.price)",
        update_stream="define stream UpdateStockStream (comp string, vol long);")
    rt, got, removed = run(app, "query3")
    stock = rt.get_input_handler("StockStream").send
    check = rt.get_input_handler("CheckStockStream").send
    stock(["WSO2", 55.6, 100], timestamp=T0)
    stock(["IBM", 155.6, 100], timestamp=T0 + 1)
    check(["IBM", 100, 55.6], timestamp=T0 + 2)
    check(["WSO2", 100, 155.6], timestamp=T0 + 3)
    rt.get_input_handler("UpdateStockStream").send(["IBM", 200], timestamp=T0 + 4)
    check(["IBM", 200, 55.6], timestamp=T0 + 5)
    check(["WSO2", 100, 155.6], timestamp=T0 + 6)
    rt.shutdown()
    assert rows32(got) == [("IBM", 100, f32(55.6)), ("IBM", 200, f32(55.6))]
    assert removed == [0]
    assert rows32(table_rows(rdbms_url, "StockTable")) == [("IBM", f32(155.6), 200), ("WSO2", f32(55.6), 100)]


def test_updateOrInsertTableTest10(rdbms_url: str) -> None:
    """A left outer join feeds 'update or insert': a missing IBM is inserted with price 5, WSO2 updated."""
    app = _check_app(rdbms_url, """
@info(name = 'query1')
from StockStream
insert into StockTable ;
@info(name = 'query2')
from UpdateStockStream left outer join StockTable
   on UpdateStockStream.comp == StockTable.symbol
select comp as symbol, ifThenElse(price is nulL,5F,price) as price, vol as volume
update or insert into StockTable
   on StockTable.symbol==symbol;
""", check_stream="(symbol string, volume long, price float)",
        check_condition="(symbol==StockTable.symbol and volume == StockTable.volume and price < StockTable.price)",
        update_stream="define stream UpdateStockStream (comp string, vol long);")
    rt, got, removed = run(app, "query3")
    check = rt.get_input_handler("CheckStockStream").send
    update = rt.get_input_handler("UpdateStockStream").send
    rt.get_input_handler("StockStream").send(["WSO2", 55.6, 100], timestamp=T0)
    check(["IBM", 100, 155.6], timestamp=T0 + 1)
    check(["WSO2", 100, 155.6], timestamp=T0 + 2)
    update(["IBM", 200], timestamp=T0 + 3)
    update(["WSO2", 300], timestamp=T0 + 4)
    check(["IBM", 200, 0.0], timestamp=T0 + 5)
    check(["WSO2", 300, 4.6], timestamp=T0 + 6)
    rt.shutdown()
    assert rows32(got) == [("IBM", 200, 0.0), ("WSO2", 300, f32(4.6))]
    assert removed == [0]
    assert rows32(table_rows(rdbms_url, "StockTable")) == [("IBM", 5.0, 200), ("WSO2", f32(55.6), 300)]


def _volume_app(url: str) -> str:
    """Tests 11 and 12: 'update or insert' matching on volume."""
    return f"""
define stream StockStream (symbol string, price float, volume long);
define stream UpdateStockStream (symbol string, price float, volume long);
{stock_store(url)}
define table StockTable (symbol string, price float, volume long);
@info(name = 'query1')
from StockStream
insert into StockTable ;
@info(name = 'query2')
from UpdateStockStream
update or insert into StockTable
   on StockTable.volume == volume ;
"""


def test_updateOrInsertTableTest11(rdbms_url: str) -> None:
    """A matching volume updates every row with it (3 rows stay 3, all now GOOG)."""
    rt, _, _ = run(_volume_app(rdbms_url).replace("StockTable.volume == volume", "StockTable.volume==volume"))
    stock = rt.get_input_handler("StockStream").send
    stock(["WSO2", 55.6, 100], timestamp=T0)
    stock(["IBM", 75.6, 100], timestamp=T0 + 1)
    stock(["WSO2", 57.6, 100], timestamp=T0 + 2)
    rt.get_input_handler("UpdateStockStream").send(["GOOG", 10.6, 100], timestamp=T0 + 3)
    rt.shutdown()
    assert count_rows(rdbms_url, "StockTable") == 3
    assert rows32(table_rows(rdbms_url, "StockTable")) == [("GOOG", f32(10.6), 100)] * 3


def test_updateOrInsertTableTest12(rdbms_url: str) -> None:
    """A volume no row has inserts a fourth row."""
    rt, _, _ = run(_volume_app(rdbms_url))
    stock = rt.get_input_handler("StockStream").send
    stock(["WSO2", 55.6, 100], timestamp=T0)
    stock(["IBM", 75.6, 100], timestamp=T0 + 1)
    stock(["WSO2", 57.6, 100], timestamp=T0 + 2)
    rt.get_input_handler("UpdateStockStream").send(["GOOG", 10.6, 200], timestamp=T0 + 3)
    rt.shutdown()
    assert count_rows(rdbms_url, "StockTable") == 4
    assert rows32(table_rows(rdbms_url, "StockTable")) == sorted(
        [("GOOG", f32(10.6), 200), ("IBM", f32(75.6), 100), ("WSO2", f32(55.6), 100), ("WSO2", f32(57.6), 100)],
        key=repr)


def _search_app(url: str, update_from: str = "UpdateStockStream", primary_key: str = '@PrimaryKey("symbol")',
                select: str = "") -> str:
    """Tests 13-15 and 17-20: 'update or insert' from UpdateStockStream, a join from SearchStream."""
    return f"""
define stream UpdateStockStream (symbol string, price int, volume long);
define stream SearchStream (symbol string);
{stock_store(url)}
{primary_key}
define table StockTable (symbol string, price int, volume long);
@info(name = 'query1')
from {update_from}
{select}
update or insert into StockTable
   on StockTable.symbol == symbol ;
@info(name = 'query2')
from SearchStream#window.length(1) join StockTable on StockTable.symbol == SearchStream.symbol
select StockTable.symbol as symbol, price, volume
insert into OutStream;
"""


def _send_chunk(rt: Any, stream: str, rows: list[Row], ts: int = T0) -> None:
    """One ``InputHandler.send(Event[])``: the rows as one chunk."""
    rt.get_input_handler(stream).send_events([Event(ts, r) for r in rows])


def _search(rt: Any, *symbols: str, ts: int = T0 + 100) -> None:
    for i, s in enumerate(symbols):
        rt.get_input_handler("SearchStream").send([s], timestamp=ts + i)


def test_updateOrInsertTableTest13(rdbms_url: str) -> None:
    """One chunk with repeated primary keys: the later events update the earlier ones."""
    rt, got, removed = run(_search_app(rdbms_url), "query2")
    _send_chunk(rt, "UpdateStockStream", [("WSO2", 55, 100), ("IBM", 55, 100), ("WSO2", 155, 200), ("IBM", 155, 200)])
    _search(rt, "WSO2", "IBM")
    rt.shutdown()
    assert got == [("WSO2", 155, 200), ("IBM", 155, 200)]
    assert table_rows(rdbms_url, "StockTable") == [("IBM", 155, 200), ("WSO2", 155, 200)]


def test_updateOrInsertTableTest14(rdbms_url: str) -> None:
    """A two-column primary key (symbol, volume) with 'on symbol': one chunk leaves one row per symbol."""
    rt, got, removed = run(_search_app(rdbms_url, primary_key='@PrimaryKey("symbol", "volume")'), "query2")
    _send_chunk(rt, "UpdateStockStream", [("WSO2", 55, 100), ("IBM", 55, 100), ("WSO2", 155, 100), ("IBM", 155, 100)])
    _search(rt, "WSO2", "IBM")
    rt.shutdown()
    assert got == [("WSO2", 155, 100), ("IBM", 155, 100)]
    assert table_rows(rdbms_url, "StockTable") == [("IBM", 155, 100), ("WSO2", 155, 100)]


def test_updateOrInsertTableTest15(rdbms_url: str) -> None:
    """A lengthBatch of 1000 events with one key leaves the last event's row."""
    rt, got, removed = run(_search_app(rdbms_url, "UpdateStockStream#window.lengthBatch(1000)", select="select *"),
                           "query2")
    _send_chunk(rt, "UpdateStockStream", [("WSO2", 55, i) for i in range(1000)])
    _search(rt, "WSO2")
    rt.shutdown()
    assert got == [("WSO2", 55, 999)]
    assert table_rows(rdbms_url, "StockTable") == [("WSO2", 55, 999)]


def test_updateOrInsertTableTest16(rdbms_url: str) -> None:
    """Two lengthBatch(3500) queries with 'set' on a three-column key leave one row, the last time."""
    event_count = 3500
    app = f"""
define stream UpdateAPIMStream1 (apiContext string, apiName string , apiVersion string,
apiCreator string , apiCreatorTenantDomain string , applicationOwner string , lastAccessTime long);
define stream SearchStream (apiName string);
define stream UpdateAPIMStream2 (apiContext string, apiName string , apiVersion string,
apiCreator string , apiCreatorTenantDomain string , applicationOwner string , lastAccessTime long);
define stream SearchStream (apiName string);
{stock_store(rdbms_url, "apiName:100")}
@PrimaryKey('apiName','apiCreatorTenantDomain','apiCreator')
define table ApiLastAccessSummary (apiName string, apiCreatorTenantDomain string,
apiContext string, apiVersion string, applicationOwner string, lastAccessTime long, apiCreator string);
@info(name = 'query1')
from UpdateAPIMStream1#window.lengthBatch({event_count})
select apiName, apiCreatorTenantDomain, apiContext, apiVersion, applicationOwner, lastAccessTime, apiCreator
update or insert into ApiLastAccessSummary
set ApiLastAccessSummary.apiContext = apiContext, ApiLastAccessSummary.apiVersion = apiVersion,
ApiLastAccessSummary.applicationOwner = applicationOwner,
ApiLastAccessSummary.lastAccessTime = lastAccessTime
on ApiLastAccessSummary.apiName == apiName and
ApiLastAccessSummary.apiCreatorTenantDomain == apiCreatorTenantDomain and
ApiLastAccessSummary.apiCreator == apiCreator;
@info(name = 'query2')
from UpdateAPIMStream2#window.lengthBatch({event_count})
select apiName, apiCreatorTenantDomain, apiContext, apiVersion, applicationOwner, lastAccessTime, apiCreator
update or insert into ApiLastAccessSummary
set ApiLastAccessSummary.apiContext = apiContext, ApiLastAccessSummary.apiVersion = apiVersion,
ApiLastAccessSummary.applicationOwner = applicationOwner,
ApiLastAccessSummary.lastAccessTime = lastAccessTime
on ApiLastAccessSummary.apiName == apiName and
ApiLastAccessSummary.apiCreatorTenantDomain == apiCreatorTenantDomain and
ApiLastAccessSummary.apiCreator == apiCreator;
@info(name = 'query3')
from SearchStream#window.length(1) join ApiLastAccessSummary on ApiLastAccessSummary.apiName ==
SearchStream.apiName
select apiContext, SearchStream.apiName, apiVersion, apiCreator,
apiCreatorTenantDomain, applicationOwner, lastAccessTime
insert into OutStream;
"""
    rt, got, removed = run(app, "query3")
    rows = [("order", "pizzashack", "1.0.0", "user1", "carbon.super", "app_owner", i) for i in range(event_count)]
    _send_chunk(rt, "UpdateAPIMStream1", rows)
    _send_chunk(rt, "UpdateAPIMStream2", rows)
    rt.get_input_handler("SearchStream").send(["pizzashack"], timestamp=T0 + 100)
    rt.shutdown()
    assert got == [("order", "pizzashack", "1.0.0", "user1", "carbon.super", "app_owner", event_count - 1)]
    assert table_rows(rdbms_url, "ApiLastAccessSummary") == [
        ("pizzashack", "carbon.super", "order", "1.0.0", "app_owner", event_count - 1, "user1")]


_BATCH_17 = [("WSO2", 55, 0), ("IBM", 55, 1), ("IBM", 55, 2), ("APPLE", 55, 3), ("WSO2", 55, 4),
             ("GOOGLE", 55, 5), ("GOOGLE", 55, 6), ("GOOGLE", 55, 7), ("Amazon", 55, 8), ("INTEL", 55, 9)]


def test_updateOrInsertTableTest17(rdbms_url: str) -> None:
    """A lengthBatch(10) with repeated primary keys: the last event of each key wins."""
    rt, got, removed = run(_search_app(rdbms_url, "UpdateStockStream#window.lengthBatch(10)", select="select *"),
                           "query2")
    _send_chunk(rt, "UpdateStockStream", _BATCH_17)
    _search(rt, "WSO2", "IBM", "APPLE", "GOOGLE", "Amazon", "INTEL")
    rt.shutdown()
    expected = [("WSO2", 55, 4), ("IBM", 55, 2), ("APPLE", 55, 3), ("GOOGLE", 55, 7), ("Amazon", 55, 8),
                ("INTEL", 55, 9)]
    assert got == expected
    assert table_rows(rdbms_url, "StockTable") == sorted(expected, key=repr)


def test_updateOrInsertTableTest18(rdbms_url: str) -> None:
    """Two chunks of 5 make one lengthBatch(10) with repeated primary keys: the last of each key wins."""
    rt, got, removed = run(_search_app(rdbms_url, "UpdateStockStream#window.lengthBatch(10)", select="select *"),
                           "query2")
    _send_chunk(rt, "UpdateStockStream",
                [("WSO2", 55, 0), ("APPLE", 55, 3), ("WSO2", 55, 4), ("GOOGLE", 55, 5), ("INTEL", 55, 9)])
    _send_chunk(rt, "UpdateStockStream",
                [("WSO2", 55, 4), ("IBM", 55, 1), ("IBM", 55, 3), ("Amazon", 55, 8), ("INTEL", 55, 9)], ts=T0 + 1)
    _search(rt, "WSO2", "IBM", "APPLE", "GOOGLE", "Amazon", "INTEL")
    rt.shutdown()
    expected = [("WSO2", 55, 4), ("IBM", 55, 3), ("APPLE", 55, 3), ("GOOGLE", 55, 5), ("Amazon", 55, 8),
                ("INTEL", 55, 9)]
    assert got == expected
    assert table_rows(rdbms_url, "StockTable") == sorted(expected, key=repr)


def test_updateOrInsertTableTest19(rdbms_url: str) -> None:
    """One chunk with repeated keys into a table without a primary key: one row per key, the last values."""
    rt, got, removed = run(_search_app(rdbms_url, primary_key=""), "query2")
    _send_chunk(rt, "UpdateStockStream", [("WSO2", 55, 100), ("IBM", 55, 100), ("WSO2", 155, 200), ("IBM", 155, 200)])
    _search(rt, "WSO2", "IBM")
    rt.shutdown()
    assert got == [("WSO2", 155, 200), ("IBM", 155, 200)]
    assert removed == [0]
    assert table_rows(rdbms_url, "StockTable") == [("IBM", 155, 200), ("WSO2", 155, 200)]


def test_updateOrInsertTableTest20(rdbms_url: str) -> None:
    """One chunk with repeated primary keys (no window): one row per key, the last values."""
    rt, got, removed = run(_search_app(rdbms_url), "query2")
    _send_chunk(rt, "UpdateStockStream", [("WSO2", 55, 100), ("IBM", 55, 100), ("WSO2", 155, 200), ("IBM", 155, 200)])
    _search(rt, "WSO2", "IBM")
    rt.shutdown()
    assert got == [("WSO2", 155, 200), ("IBM", 155, 200)]
    assert removed == [0]
    assert table_rows(rdbms_url, "StockTable") == [("IBM", 155, 200), ("WSO2", 155, 200)]
