"""Port of siddhi-store-rdbms's ``ReadEventRDBMSTableTestCaseIT``
(component/src/test/java/io/siddhi/extension/store/rdbms/ReadEventRDBMSTableTestCaseIT.java):
reading an ``@Store(type='rdbms')`` table through stream joins, on PostgreSQL and MariaDB."""
from __future__ import annotations

from typing import Any

import pytest
from srota.engine import Event
from srota.grammar.errors import SiddhiAppCreationError

from srota import SiddhiManager
from tests.engine.stores.upstream.support import T0, store, table_rows

Row = tuple[Any, ...]


def item_store(url: str, length: str = "itemId:100") -> str:
    """The ``@Store`` of the Java class's apps: its ``field.length`` and ``pool.properties``."""
    return store(url, field__length=length, pool__properties="maximumPoolSize:1")


class Collector:
    """The Java ``QueryCallback``: in-event data of one or more queries, in arrival order,
    and the number of remove events."""

    def __init__(self) -> None:
        self.got: list[Row] = []
        self.removed = 0

    def __call__(self, ts: int, ins: list[Event] | None, rem: list[Event] | None) -> None:
        self.got.extend(tuple(e.data) for e in ins or ())
        self.removed += len(rem or ())


def start(manager: SiddhiManager, app: str, out: Collector | None = None, *queries: str) -> Any:
    """Create ``app`` on ``manager``, add ``out`` as the callback of ``queries``, and return
    the runtime (not started: some tests start it later)."""
    rt = manager.create_siddhi_app_runtime(app)
    for q in queries:
        assert out is not None
        rt.add_query_callback(q, out)
    return rt


def _stock_app(url: str, window: str) -> str:
    """Tests 1, 4 and 5: StockStream fills the table, FooStream#<window> joins it on the key."""
    return f"""
define stream FooStream (name string, category string, volume long);
define stream StockStream (itemId string, type string, volume long);
define stream OutputStream (checkName string, checkCategory string, checkVolume long);
{item_store(url)}
@PrimaryKey("itemId")
define table StockTable (itemId string, type string, volume long);
@info(name = 'query1')
from StockStream
select *
insert into StockTable;
@info(name = 'query2')
from FooStream#window.{window} join StockTable on FooStream.name==StockTable.itemId
select FooStream.name as checkName, StockTable.type as checkCategory, StockTable.volume as checkVolume
insert into OutputStream;"""


def test_readEventRDBMSTableTestCase1(rdbms_url: str) -> None:
    """A length(1) window join reads the table rows whose key matches."""
    out = Collector()
    rt = start(SiddhiManager(), _stock_app(rdbms_url, "length(1)"), out, "query2")
    rt.start()
    stock = rt.get_input_handler("StockStream").send
    stock(["WSO2", "type1", 100], timestamp=T0)
    stock(["CSC", "type2", 10], timestamp=T0 + 1)
    stock(["IBM", "type3", 10], timestamp=T0 + 2)
    rt.get_input_handler("FooStream").send(["WSO2"], timestamp=T0 + 3)
    rt.get_input_handler("FooStream").send(["IBM"], timestamp=T0 + 4)
    rt.shutdown()
    assert out.got == [("WSO2", "type1", 100), ("IBM", "type3", 10)]
    assert out.removed == 0


def test_readEventRDBMSTableTestCase2(rdbms_url: str) -> None:
    """Joining a table that is not defined fails at app creation."""
    # Java expects SiddhiParserException; siddhi-core itself throws SiddhiAppCreationException
    # ("Stream/table/window/aggregation definition with ID 'StockTable' has not been defined",
    # SingleInputStreamParser), Srota's SiddhiAppCreationError.
    app = """define stream FooStream (name string, category string, volume long);
@info(name = 'query1')
from FooStream#window.length(1) join StockTable on FooStream.name==StockTable.itemId
select FooStream.name as checkName, StockTable.type as checkCategory, StockTable.volume as checkVolume
insert into OutputStream;"""
    with pytest.raises(SiddhiAppCreationError, match="StockTable"):
        SiddhiManager().create_siddhi_app_runtime(app)


def test_readEventRDBMSTableTestCase3(rdbms_url: str) -> None:
    """Joining the table from a stream that is not defined fails at app creation."""
    # As in test 2: Java expects SiddhiParserException, siddhi-core throws SiddhiAppCreationException.
    app = f"""
define stream StockStream (itemId string, type string, volume long);
define stream OutputStream (checkName string, checkCategory string, checkVolume long);
{item_store(rdbms_url)}
@PrimaryKey("itemId")
define table StockTable (itemId string, type string, volume long);
@info(name = 'query1')
from StockStream
select *
insert into StockTable;
@info(name = 'query2')
from FooStream#window.length(1) join StockTable on FooStream.name==StockTable.itemId
select FooStream.name as checkName, StockTable.type as checkCategory, StockTable.volume as checkVolume
insert into OutputStream;"""
    with pytest.raises(SiddhiAppCreationError, match="FooStream"):
        SiddhiManager().create_siddhi_app_runtime(app)


def test_readEventRDBMSTableTestCase4(rdbms_url: str) -> None:
    """A length(5) window join reads every matching row, one output per FooStream event."""
    out = Collector()
    rt = start(SiddhiManager(), _stock_app(rdbms_url, "length(5)"), out, "query2")
    rt.start()
    rows = [("WSO2", "type1", 100), ("CSC", "type2", 10), ("IBM", "type3", 10), ("MSFT", "type4", 10),
            ("MIT", "type5", 10)]
    for i, r in enumerate(rows):
        rt.get_input_handler("StockStream").send(list(r), timestamp=T0 + i)
    for i, r in enumerate(rows):
        rt.get_input_handler("FooStream").send([r[0]], timestamp=T0 + 10 + i)
    rt.shutdown()
    assert out.got == rows
    assert out.removed == 0


def test_readEventRDBMSTableTestCase5(rdbms_url: str) -> None:
    """A time(5 sec) window join outputs only the FooStream events whose key is in the table."""
    manager = SiddhiManager()
    out = Collector()
    rt = start(manager, _stock_app(rdbms_url, "time(5 sec)"), out, "query2")
    rt.start()
    stock = rt.get_input_handler("StockStream").send
    foo = rt.get_input_handler("FooStream").send
    # wall-clock timestamps for the live time window; Java's sleeps (1 s, 2 s) change no output
    stock(["WSO2", "type1", 100])
    stock(["CSC", "type2", 10])
    stock(["IBM", "type3", 10])
    foo(["WSO2"])
    foo(["CSC"])
    foo(["IBM"])
    foo(["MSFT"])
    foo(["MIT"])
    rt.shutdown()
    manager.shutdown()
    assert out.got == [("WSO2", "type1", 100), ("CSC", "type2", 10), ("IBM", "type3", 10)]
    assert out.removed == 0


def test_readEventRDBMSTableTestCase6(rdbms_url: str) -> None:
    """A join without 'on' and avg() group by the table's name with 'having' outputs WSO2's average only."""
    app = f"""
define stream FooStream (name string, category string, volume long);
define stream StockStream (name string, type string, volume long);
define stream OutputStream (checkName string, checkCategory string, checkVolume double);
{item_store(rdbms_url, "name:100")}
define table StockTable (name string, type string, volume long);
@info(name = 'query1')
from StockStream
select *
insert into StockTable;
@info(name = 'query2')
from FooStream#window.length(1) join StockTable
select FooStream.name as checkName, StockTable.type as checkCategory, avg(StockTable.volume) as checkVolume
group by StockTable.name having checkVolume>50
insert into OutputStream;
"""
    out = Collector()
    rt = start(SiddhiManager(), app, out, "query2")
    rt.start()
    stock = rt.get_input_handler("StockStream").send
    stock(["WSO2", "type1", 100], timestamp=T0)
    stock(["WSO2", "type1", 200], timestamp=T0 + 1)
    stock(["IBM", "type2", 30], timestamp=T0 + 2)
    rt.get_input_handler("FooStream").send(["WSO2"], timestamp=T0 + 3)
    rt.shutdown()
    assert out.got == [("WSO2", "type1", 150.0)]
    assert out.removed == 0


_FIRST = """
define stream FirstStream (column1 string, column2 string, column3 string, column4 float,
column5 bool, column6 double);
{store}
define table StockTable (column1 string, column2 string, column3 string, column4 float,
column5 bool, column6 double);
@info(name = 'query1')
from FirstStream
select *
insert into StockTable;
"""

_SECOND = """
define stream SecondStream (columnName string, volume float, isValid bool);
{extra}{store}
define table StockTable (column1 string, column4 float, column5 bool);
@info(name = 'query2')
from SecondStream join StockTable on columnName == column1 and volume == column4 and isValid == column5
select {select}
insert into OutputStream;
{more}"""


def _two_apps(url: str, select: str, extra: str = "", more: str = "",
              second_store: str | None = None) -> tuple[SiddhiManager, Any, Any]:
    """Tests 7-12: one app writes all six columns of StockTable, a second app defines the same
    table with three of them and joins it; both on one manager, as in Java."""
    manager = SiddhiManager()
    first = _FIRST.format(store=item_store(url, "column1:100"))
    second = _SECOND.format(store=second_store or item_store(url, "column1:100"), extra=extra, select=select,
                            more=more)
    rt1 = manager.create_siddhi_app_runtime(first)
    rt2 = manager.create_siddhi_app_runtime(second)
    return manager, rt1, rt2


FIRST_ROW = ["WSO2", "Castro Street", "Mountain View", 34.5, True, 500.0]

# Siddhi's RDBMSEventTable.connect() creates the table only when it does not exist and never
# compares columns; RDBMSIterator.extractRecord reads each attribute by column name. So an app
# may define a table with a subset of the database table's columns (tests 7-12).


def test_readEventRDBMSTableTestCase7(rdbms_url: str) -> None:
    """An app whose table definition has a subset of the database table's columns reads them."""
    _, rt1, rt2 = _two_apps(rdbms_url, "columnName, volume, isValid")
    out = Collector()
    rt2.add_query_callback("query2", out)
    rt1.start()
    rt2.start()
    rt1.get_input_handler("FirstStream").send(FIRST_ROW, timestamp=T0)
    rt2.get_input_handler("SecondStream").send(["WSO2", 34.5, True], timestamp=T0 + 1000)
    rt1.shutdown()
    rt2.shutdown()
    assert out.got == [("WSO2", 34.5, True)]
    assert out.removed == 0
    # the database table keeps all six columns (MariaDB's bool is a TINYINT 1, equal to True)
    assert table_rows(rdbms_url, "StockTable") == [("WSO2", "Castro Street", "Mountain View", 34.5, True, 500.0)]


def test_readEventRDBMSTableTestCase8(rdbms_url: str) -> None:
    """As test 7, with an expression (volume + 4) in the selection."""
    _, rt1, rt2 = _two_apps(rdbms_url, "columnName, (volume + 4 ) as volume, isValid")
    out = Collector()
    rt2.add_query_callback("query2", out)
    rt1.start()
    rt2.start()
    rt1.get_input_handler("FirstStream").send(FIRST_ROW, timestamp=T0)
    rt2.get_input_handler("SecondStream").send(["WSO2", 34.5, True], timestamp=T0 + 1000)
    rt1.shutdown()
    rt2.shutdown()
    assert out.got == [("WSO2", 38.5, True)]
    assert out.removed == 0


def test_readEventRDBMSTableTestCase9(rdbms_url: str) -> None:
    """Two joins of the partial table definition: one on three columns, one on the key alone."""
    _, rt1, rt2 = _two_apps(
        rdbms_url, "columnName, (volume + 4 ) as volume, isValid",
        extra="define stream ThirdStream (columnName string, volume float, isValid bool);\n",
        more="""@info(name = 'query3')
from ThirdStream join StockTable on columnName == column1
select columnName, volume, isValid
insert into OutputStream;
""")
    out = Collector()  # Java's two callbacks share one counter: query2's event first, then query3's
    rt2.add_query_callback("query2", out)
    rt2.add_query_callback("query3", out)
    rt1.start()
    rt2.start()
    rt1.get_input_handler("FirstStream").send(FIRST_ROW, timestamp=T0)
    rt2.get_input_handler("SecondStream").send(["WSO2", 34.5, True], timestamp=T0 + 1000)
    rt2.get_input_handler("ThirdStream").send(["WSO2", 34.5, True], timestamp=T0 + 6000)
    rt1.shutdown()
    rt2.shutdown()
    assert out.got == [("WSO2", 38.5, True), ("WSO2", 34.5, True)]
    assert out.removed == 0


def test_readEventRDBMSTableTestCase10(rdbms_url: str) -> None:
    """A join of the partial table definition with ifThenElse() in the selection."""
    _, rt1, rt2 = _two_apps(rdbms_url, "columnName, volume, ifThenElse(volume>30,'High','Low') as isValid")
    out = Collector()
    rt2.add_query_callback("query2", out)
    rt1.start()
    rt2.start()
    rt1.get_input_handler("FirstStream").send(FIRST_ROW, timestamp=T0)
    rt2.get_input_handler("SecondStream").send(["WSO2", 34.5, True], timestamp=T0 + 1000)
    rt1.shutdown()
    rt2.shutdown()
    assert out.got == [("WSO2", 34.5, "High")]
    assert out.removed == 0


def test_readEventRDBMSTableTestCase11(rdbms_url: str) -> None:
    """A cached (@Cache(size='2')) partial table definition started after the row was written reads it."""
    cached = item_store(rdbms_url, "column1:100")
    assert cached.endswith(")")
    cached = cached[:-1] + ", @Cache(size='2'))"  # @Cache nested in @Store, as in Java
    _, rt1, rt2 = _two_apps(rdbms_url, "columnName, (volume + 4 ) as volume, isValid", second_store=cached)
    out = Collector()
    rt2.add_query_callback("query2", out)
    rt1.start()
    rt1.get_input_handler("FirstStream").send(FIRST_ROW, timestamp=T0)
    rt2.start()  # after the insert: the cache is loaded from the database at start
    rt2.get_input_handler("SecondStream").send(["WSO2", 34.5, True], timestamp=T0 + 10000)
    rt1.shutdown()
    rt2.shutdown()
    assert out.got == [("WSO2", 38.5, True)]
    assert out.removed == 0


def test_readEventRDBMSTableTestCase12(rdbms_url: str) -> None:
    """A join of the partial table definition with 'order by' on a selected expression."""
    _, rt1, rt2 = _two_apps(rdbms_url, "columnName, (volume + 4 ) as volumeSel, isValid\norder by volumeSel")
    out = Collector()
    rt2.add_query_callback("query2", out)
    rt1.start()
    rt1.get_input_handler("FirstStream").send(FIRST_ROW, timestamp=T0)
    rt2.start()
    rt2.get_input_handler("SecondStream").send(["WSO2", 34.5, True], timestamp=T0 + 10000)
    rt1.shutdown()
    rt2.shutdown()
    assert out.got == [("WSO2", 38.5, True)]
    assert out.removed == 0
