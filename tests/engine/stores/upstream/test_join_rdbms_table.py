"""Port of siddhi-store-rdbms's ``JoinRDBMSTableTestCaseIT``: a stream joined with an rdbms table
(inner, left/right/full outer joins; ``on`` conditions with ``str:contains``; ``having ... is null``).

Each Java test collects the query callback's in-events and asserts each one (its ``switch``
on the event count, whose ``default`` branch fails on any extra event), and that no remove
events arrive; here the whole list of in-events is compared, which checks the same.
"""
from __future__ import annotations

from typing import Any

from srota import SiddhiManager
from tests.engine.stores.upstream.support import T0, store

# The @Store options every Java test of this class gives its table (besides the connection).
OPTS: dict[str, str] = {"field__length": "symbol:100", "pool__properties": "maximumPoolSize:1"}

QUERY1 = "@info(name = 'query1') from StockStream insert into StockTable ;"


class _Run:
    """An app runtime whose ``query2`` callback is collected (in-events' data, remove count)."""

    def __init__(self, app: str) -> None:
        self.rt = SiddhiManager().create_siddhi_app_runtime(app)
        self.ins: list[tuple[Any, ...]] = []
        self.removed = 0
        self.rt.add_query_callback("query2", self._receive)
        self._ts = T0
        self.rt.start()

    def _receive(self, timestamp: int, ins: list[Any] | None, removed: list[Any] | None) -> None:
        self.ins.extend(tuple(e.data) for e in ins or ())
        self.removed += len(removed or ())

    def send(self, stream: str, data: list[Any]) -> None:
        # one event per InputHandler.send call, with rising timestamps, like the Java test
        self.rt.get_input_handler(stream).send(data, timestamp=self._ts)
        self._ts += 1

    def finish(self) -> tuple[list[tuple[Any, ...]], int]:
        self.rt.shutdown()
        return self.ins, self.removed


def _stock_app(url: str, query2: str, *, connection: bool = False,
               stock: str = "symbol string, price float, volume long",
               check: str = "symbol string") -> str:
    return (f"define stream StockStream ({stock}); "
            f"define stream CheckStockStream ({check}); "
            f"{store(url, **OPTS)}\n"
            + ("@connection(maxWait = '4000')" if connection else "")
            + f"define table StockTable ({stock}); "
            + QUERY1 + query2)


def _wso2_ibm_then_check(r: _Run, check: list[Any]) -> None:
    r.send("StockStream", ["WSO2", 55.6, 100])
    r.send("StockStream", ["IBM", 75.6, 10])
    r.send("CheckStockStream", check)


def test_testTableJoinQuery1(rdbms_url: str) -> None:
    """A join without an ``on`` condition pairs the check event with every table row."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) join StockTable "
                        "select CheckStockStream.symbol as checkSymbol, StockTable.symbol as symbol, "
                        "StockTable.volume as volume  "
                        "insert into OutputStream ;"))
    _wso2_ibm_then_check(r, ["WSO2"])
    ins, removed = r.finish()
    assert ins == [("WSO2", "WSO2", 100), ("WSO2", "IBM", 10)]
    assert removed == 0


def test_testTableJoinQuery2(rdbms_url: str) -> None:
    """``on CheckStockStream.symbol==StockTable.symbol`` keeps only the matching row."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) join StockTable "
                        " on CheckStockStream.symbol==StockTable.symbol "
                        "select CheckStockStream.symbol as checkSymbol, StockTable.symbol as symbol, "
                        "StockTable.volume as volume  "
                        "insert into OutputStream ;"))
    _wso2_ibm_then_check(r, ["WSO2"])
    ins, removed = r.finish()
    assert ins == [("WSO2", "WSO2", 100)]
    assert removed == 0


def test_testTableJoinQuery3(rdbms_url: str) -> None:
    """Unqualified attribute names (``on symbol1== symbol``) resolve to the stream and the table."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) join StockTable "
                        " on symbol1== symbol "
                        "select symbol1 as checkSymbol, symbol as symbol, volume as volume  "
                        "insert into OutputStream ;",
                        check="symbol1 string"))
    _wso2_ibm_then_check(r, ["WSO2"])
    ins, removed = r.finish()
    assert ins == [("WSO2", "WSO2", 100)]
    assert removed == 0


def test_testTableJoinQuery4(rdbms_url: str) -> None:
    """Both sides aliased (``as c`` / ``as s``) in the ``on`` condition and the select."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) as c join StockTable as s "
                        " on c.symbol==s.symbol "
                        "select c.symbol as checkSymbol, s.symbol as symbol, s.volume as volume  "
                        "insert into OutputStream ;"))
    _wso2_ibm_then_check(r, ["WSO2"])
    ins, removed = r.finish()
    assert ins == [("WSO2", "WSO2", 100)]
    assert removed == 0


def test_testTableJoinQuery5(rdbms_url: str) -> None:
    """Only the table aliased (``StockTable as s``), the stream referred to by its name."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) join StockTable as s "
                        " on CheckStockStream.symbol==s.symbol "
                        "select CheckStockStream.symbol as checkSymbol, s.symbol as symbol, s.volume as volume  "
                        "insert into OutputStream ;"))
    _wso2_ibm_then_check(r, ["WSO2"])
    ins, removed = r.finish()
    assert ins == [("WSO2", "WSO2", 100)]
    assert removed == 0


def test_testTableJoinQuery6(rdbms_url: str) -> None:
    """Same app as testTableJoinQuery5 (upstream repeats it): the aliased table joins on symbol."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) join StockTable as s "
                        " on CheckStockStream.symbol==s.symbol "
                        "select CheckStockStream.symbol as checkSymbol, s.symbol as symbol, s.volume as volume  "
                        "insert into OutputStream ;"))
    _wso2_ibm_then_check(r, ["WSO2"])
    ins, removed = r.finish()
    assert ins == [("WSO2", "WSO2", 100)]
    assert removed == 0


def test_testTableJoinQuery7(rdbms_url: str) -> None:
    """The table attribute on the left of ``==`` (``StockTable.symbol==CheckStockStream.symbol``)."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) join StockTable "
                        " on StockTable.symbol==CheckStockStream.symbol "
                        "select CheckStockStream.symbol as checkSymbol, StockTable.symbol as symbol, "
                        "StockTable.volume as volume  "
                        "insert into OutputStream ;"))
    _wso2_ibm_then_check(r, ["WSO2"])
    ins, removed = r.finish()
    assert ins == [("WSO2", "WSO2", 100)]
    assert removed == 0


def test_testTableJoinQuery8(rdbms_url: str) -> None:
    """A two-column table (no volume) joined on symbol."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) join StockTable "
                        " on StockTable.symbol==CheckStockStream.symbol "
                        "select CheckStockStream.symbol as checkSymbol, StockTable.symbol as symbol  "
                        "insert into OutputStream ;",
                        stock="symbol string, price float"))
    r.send("StockStream", ["WSO2", 55.6])
    r.send("StockStream", ["IBM", 75.6])
    r.send("CheckStockStream", ["WSO2"])
    ins, removed = r.finish()
    assert ins == [("WSO2", "WSO2")]
    assert removed == 0


def test_testTableJoinQuery9(rdbms_url: str) -> None:
    """An extra ``@connection(maxWait = '4000')`` annotation on the table; no ``on``: every row."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) join StockTable "
                        "select CheckStockStream.symbol as checkSymbol, StockTable.symbol as symbol, "
                        "StockTable.volume as volume  "
                        "insert into OutputStream ;",
                        connection=True))
    _wso2_ibm_then_check(r, ["WSO2"])
    ins, removed = r.finish()
    assert ins == [("WSO2", "WSO2", 100), ("WSO2", "IBM", 10)]
    assert removed == 0


def test_testTableLeftOuterJoinQueryWithContainCondition(rdbms_url: str) -> None:
    """A left outer join on ``str:contains`` and volume emits nulls for an unmatched check event."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) left outer join StockTable "
                        "on str:contains(StockTable.symbol, CheckStockStream.symbol) "
                        "and StockTable.volume == CheckStockStream.volume "
                        "select CheckStockStream.symbol as checkSymbol, StockTable.symbol as symbol, "
                        "StockTable.volume as volume  "
                        "insert into OutputStream ;",
                        connection=True, check="symbol string, volume long"))
    _wso2_ibm_then_check(r, ["WSO2", 100])
    r.send("CheckStockStream", ["CSC", 20])
    ins, removed = r.finish()
    assert ins == [("WSO2", "WSO2", 100), ("CSC", None, None)]
    assert removed == 0


def test_testTableRightOuterJoinQueryWithContainCondition(rdbms_url: str) -> None:
    """A right outer join (stream on the left) emits only matches when the stream triggers."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) right outer join StockTable "
                        "on str:contains(StockTable.symbol, CheckStockStream.symbol) "
                        "and CheckStockStream.volume == StockTable.volume "
                        "select CheckStockStream.symbol as checkSymbol, StockTable.symbol as symbol, "
                        "StockTable.volume as volume  "
                        "insert into OutputStream ;",
                        connection=True, check="symbol string, volume long"))
    _wso2_ibm_then_check(r, ["WSO2", 100])
    r.send("CheckStockStream", ["CSC", 60])
    ins, removed = r.finish()
    assert ins == [("WSO2", "WSO2", 100)]
    assert removed == 0


def test_testTableFullOuterJoinQueryWithContainCondition(rdbms_url: str) -> None:
    """A full outer join on ``str:contains`` and volume emits nulls for an unmatched check event."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) full outer join StockTable "
                        "on str:contains(StockTable.symbol, CheckStockStream.symbol) "
                        "and CheckStockStream.volume == StockTable.volume "
                        "select CheckStockStream.symbol as checkSymbol, StockTable.symbol as symbol, "
                        "StockTable.volume as volume  "
                        "insert into OutputStream ;",
                        connection=True, check="symbol string, volume long"))
    _wso2_ibm_then_check(r, ["WSO2", 100])
    r.send("CheckStockStream", ["CSC", 50])
    ins, removed = r.finish()
    assert ins == [("WSO2", "WSO2", 100), ("CSC", None, None)]
    assert removed == 0


def test_testTableJoinQueryWithContainConditionAndConstantAsContainsValue(rdbms_url: str) -> None:
    """``str:contains(StockTable.symbol, 'WSO2')`` (a constant) matches the WSO2 row for each check."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) join StockTable "
                        "on str:contains(StockTable.symbol, 'WSO2') "
                        "select CheckStockStream.symbol as checkSymbol, StockTable.symbol as symbol, "
                        "StockTable.volume as volume  "
                        "insert into OutputStream ;",
                        connection=True, check="symbol string, price float"))
    _wso2_ibm_then_check(r, ["WSO2", 55.6])
    r.send("CheckStockStream", ["IBM", 75.6])
    ins, removed = r.finish()
    assert ins == [("WSO2", "WSO2", 100), ("IBM", "WSO2", 100)]
    assert removed == 0


def test_testTableJoinQueryWithContainConditionAndFieldWithMultipleValues(rdbms_url: str) -> None:
    """``str:contains(StockTable.symbol, CheckStockStream.symbol)`` finds a word inside a long symbol."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) join StockTable "
                        "on str:contains(StockTable.symbol, CheckStockStream.symbol) "
                        "select CheckStockStream.symbol as checkSymbol, StockTable.symbol as symbol, "
                        "StockTable.volume as volume  "
                        "insert into OutputStream ;",
                        connection=True, check="symbol string, price float"))
    r.send("StockStream", ["WSO2, Palm Grove, Colombo", 55.6, 100])
    r.send("StockStream", ["IBM, Armonk, New York, United States", 75.6, 10])
    r.send("CheckStockStream", ["Colombo", 55.6])
    r.send("CheckStockStream", ["United States", 75.6])
    ins, removed = r.finish()
    assert ins == [("Colombo", "WSO2, Palm Grove, Colombo", 100),
                   ("United States", "IBM, Armonk, New York, United States", 10)]
    assert removed == 0


def test_testTableJoinQueryWithMultipleConditionsIncludingContainCondition1(rdbms_url: str) -> None:
    """``(volume >= ... AND str:contains(symbol, 'WSO2'))``: the comparison first, then contains."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) join StockTable "
                        "on (StockTable.volume >= CheckStockStream.volume AND "
                        "str:contains(StockTable.symbol, 'WSO2')) "
                        "select CheckStockStream.symbol as checkSymbol, StockTable.symbol as symbol, "
                        "StockTable.volume as volume  "
                        "insert into OutputStream ;",
                        check="symbol string, volume long"))
    r.send("StockStream", ["WSO2", 55.6, 100])
    r.send("StockStream", ["IBM2", 75.6, 10])
    r.send("CheckStockStream", ["WSO", 50])
    r.send("CheckStockStream", ["IBM", 1])
    ins, removed = r.finish()
    assert ins == [("WSO", "WSO2", 100), ("IBM", "WSO2", 100)]
    assert removed == 0


def test_testTableJoinQueryWithMultipleConditionsIncludingContainCondition2(rdbms_url: str) -> None:
    """``(str:contains(symbol, 'WSO2') AND volume >= ...)``: contains first, then the comparison."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream#window.length(1) join StockTable "
                        "on (str:contains(StockTable.symbol, 'WSO2') AND "
                        "StockTable.volume >= CheckStockStream.volume) "
                        "select CheckStockStream.symbol as checkSymbol, StockTable.symbol as symbol, "
                        "StockTable.volume as volume  "
                        "insert into OutputStream ;",
                        check="symbol string, volume long"))
    r.send("StockStream", ["WSO2", 55.6, 100])
    r.send("StockStream", ["IBM2", 75.6, 10])
    r.send("CheckStockStream", ["WSO", 50])
    r.send("CheckStockStream", ["IBM", 1])
    ins, removed = r.finish()
    assert ins == [("WSO", "WSO2", 100), ("IBM", "WSO2", 100)]
    assert removed == 0


def test_testIsNullInHavingClause(rdbms_url: str) -> None:
    """A left outer join's null table attribute passes ``having nullableSymbol is null``."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream left outer join StockTable "
                        "on StockTable.symbol == CheckStockStream.symbol "
                        "select CheckStockStream.symbol as checkSymbol, StockTable.symbol as nullableSymbol "
                        "having nullableSymbol is null "
                        "insert into OutputStream ;",
                        check="symbol string, volume long"))
    r.send("CheckStockStream", ["WSO2", 50])  # the table is empty: a null match
    r.send("StockStream", ["WSO2", 55.6, 100])
    r.send("CheckStockStream", ["WSO2", 50])  # matched: filtered out by having
    r.send("CheckStockStream", ["WSO22", 50])
    ins, removed = r.finish()
    assert ins == [("WSO2", None), ("WSO22", None)]
    assert removed == 0


def test_testTableJoinQueryWithMultipleContainCondition(rdbms_url: str) -> None:
    """Two ``str:contains`` conditions ANDed: only a row containing the word in both columns."""
    r = _Run(_stock_app(rdbms_url,
                        "@info(name = 'query2') "
                        "from CheckStockStream join StockTable "
                        "on ("
                        "   str:contains(StockTable.symbol, CheckStockStream.symbol) AND "
                        "   str:contains(StockTable.symbol2, CheckStockStream.symbol)"
                        ")"
                        "select CheckStockStream.symbol as checkSymbol, StockTable.symbol as symbol, "
                        "StockTable.volume as volume  "
                        "insert into OutputStream ;",
                        connection=True, stock="symbol string, symbol2 string, price float, volume long",
                        check="symbol string, price float"))
    r.send("StockStream", ["WSO2, Palm Grove, Colombo", "WSO2, Palm Grove, Colombo", 55.6, 100])
    r.send("StockStream", ["IBM, Armonk, New York, United States", "IBM, Armonk, New York", 75.6, 10])
    r.send("CheckStockStream", ["Colombo", 55.6])
    r.send("CheckStockStream", ["United States", 75.6])
    ins, removed = r.finish()
    assert ins == [("Colombo", "WSO2, Palm Grove, Colombo", 100)]
    assert removed == 0
