"""On-demand queries: find, insert, delete, update, update or insert over tables and windows."""
from __future__ import annotations

import pytest
from srota.engine import SiddhiAppCreationError, SiddhiParserError

APP = """
define stream S (symbol string, price double, volume long);
@PrimaryKey('symbol') define table StockTable (symbol string, price double, volume long);
define window W (symbol string, price double, volume long) length(2);
from S insert into StockTable;
from S insert into W;
"""


def fill(runtime):
    h = runtime.get_input_handler("S")
    for row in (["IBM", 75.5, 10], ["WSO2", 5.5, 20], ["GOOG", 15.0, 30]):
        h.send(row)


def data(events):
    return [list(e.data) for e in events]


def test_find_with_condition_and_selector(run_app):
    runtime, _ = run_app(APP, stream=None)
    fill(runtime)
    # in the order of Siddhi's HashMap of the string keys: GOOG's slot (1) before IBM's (5)
    assert data(runtime.query("from StockTable on price > 10 select symbol, price")) == [
        ["GOOG", 15.0], ["IBM", 75.5]]
    assert data(runtime.query("from StockTable on StockTable.symbol == 'WSO2' select volume")) == [[20]]
    assert data(runtime.query("from StockTable select sum(volume) as total")) == [[60]]
    assert data(runtime.query("from StockTable as t select t.symbol as s order by s limit 2")) == [
        ["GOOG"], ["IBM"]]


def test_find_over_named_window(run_app):
    runtime, _ = run_app(APP, stream=None)
    fill(runtime)
    assert data(runtime.query("from W select symbol")) == [["WSO2"], ["GOOG"]]


def test_insert_delete_update_upsert(run_app):
    runtime, _ = run_app(APP, stream=None)
    fill(runtime)
    assert runtime.query("select 'ORCL' as symbol, 1.0 as price, 5L as volume insert into StockTable") == []
    runtime.query("delete StockTable on StockTable.symbol == 'WSO2'")
    runtime.query("select 'IBM' as symbol, 99.0 as p update StockTable set StockTable.price = p "
                  "on StockTable.symbol == symbol")
    runtime.query("select 'NEW' as symbol, 2.0 as price, 1L as volume "
                  "update or insert into StockTable on StockTable.symbol == symbol")
    assert sorted(data(runtime.query("from StockTable select *"))) == [
        ["GOOG", 15.0, 30], ["IBM", 99.0, 10], ["NEW", 2.0, 1], ["ORCL", 1.0, 5]]


def test_errors(run_app):
    runtime, _ = run_app(APP, stream=None)
    with pytest.raises(SiddhiAppCreationError):
        runtime.query("from Nope select *")
    with pytest.raises(SiddhiAppCreationError):
        runtime.query("from StockTable on nope > 1 select *")
    with pytest.raises(SiddhiParserError):
        runtime.query("from StockTable selec *")


def test_distinct_query_texts_do_not_grow_caches_forever(monkeypatch):
    """Each distinct on-demand text generates code: the plan and code caches are bounded LRUs."""
    import linecache

    from srota.engine import SiddhiManager, codegen, ondemand
    monkeypatch.setattr(codegen, "CODE_CACHE_SIZE", 40)
    monkeypatch.setattr(ondemand, "PLAN_CACHE_SIZE", 10)
    rt = SiddhiManager().create_siddhi_app_runtime(
        "define stream S (k string, v long); define table T (k string, v long); from S insert into T;")
    rt.start()
    rt.get_input_handler("S").send(["a", 7])
    for i in range(300):
        got = rt.query(f"from T on v == {i % 150} select k, v")
        assert [e.data for e in got] == ([("a", 7)] if i % 150 == 7 else [])
    assert len(codegen._code_cache) <= 40
    assert len(ondemand._plans[rt.context]) <= 10
    generated = [f for f in linecache.cache if f.startswith("<srota-generated-")]
    assert len(generated) <= 40
    hot = "from T on v == 7 select k, v"
    for _ in range(3):
        assert [e.data for e in rt.query(hot)] == [("a", 7)]  # still right after evictions
    rt.shutdown()


def test_a_find_query_across_runtimes_answers_as_one_runtime_holding_all_rows():
    from srota.engine import SiddhiManager
    from srota.engine.ondemand import run_find_query_across

    app = "define stream S (k string, v long); @PrimaryKey('k') define table T (k string, v long); from S insert into T;"
    one, two, both = (SiddhiManager().create_siddhi_app_runtime(app) for _ in range(3))
    for rt, rows in ((one, [("a", 5), ("b", 1)]), (two, [("c", 7), ("d", 2)]), (both, [("a", 5), ("b", 1), ("c", 7),
                                                                                       ("d", 2)])):
        rt.start()
        rt.get_input_handler("S").send_rows(rows)
    for query in ("from T select count() as n, sum(v) as total, max(v) as top",
                  "from T on v > 1 select k, v order by v desc limit 2",
                  "from T on k == 'c' select k, v"):
        assert [e.data for e in run_find_query_across([one.context, two.context], query)] == \
            [e.data for e in both.query(query)]
    with pytest.raises(ValueError, match="only 'from <table or window>"):
        run_find_query_across([one.context], "delete T on v > 1")


def test_output_attributes_without_running_the_query(run_app):
    """Siddhi's getOnDemandQueryOutputAttributes: names and types, from text or the model, for
    tables, windows and aggregations; nothing runs, a text's plan is kept for query()."""
    from srota.engine import ondemand
    from srota.grammar.model import Attribute, AttrType
    from srota.grammar.parser import parse_on_demand_query

    aggregation = ("define aggregation A from S select symbol, sum(volume) as total "
                   "group by symbol aggregate every sec ... min;\n")
    runtime, _ = run_app(APP.replace("from S insert into StockTable;", aggregation + "from S insert into StockTable;"),
                         stream=None)
    text = "from StockTable on price > 10 select symbol, price * 2 as twice"
    assert runtime.get_on_demand_query_output_attributes(text) == [
        Attribute("symbol", AttrType.STRING), Attribute("twice", AttrType.DOUBLE)]
    assert text in ondemand._plans[runtime.context]
    model = parse_on_demand_query("from W select count() as n")
    assert runtime.get_store_query_output_attributes(model) == [Attribute("n", AttrType.LONG)]
    assert runtime.get_on_demand_query_output_attributes(
        "from A within 0L, 9999999999999L per 'seconds' select symbol, total") == [
        Attribute("symbol", AttrType.STRING), Attribute("total", AttrType.LONG)]
    assert runtime.query(text) == []  # the table is empty: nothing was inserted by planning
    with pytest.raises(SiddhiAppCreationError, match="nope"):
        runtime.get_on_demand_query_output_attributes("from StockTable select nope")
