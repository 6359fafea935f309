"""Joins: stream-stream over windows, outer joins, unidirectional, self-joins, tables, errors."""
from __future__ import annotations

import pytest
from srota.engine import Event, SiddhiAppCreationError, SiddhiManager

STREAMS = """
define stream S (symbol string, price double, volume long);
define stream T (user string, tweet string, company string);
"""


def test_inner_join_both_sides_trigger(run_app):
    runtime, got = run_app(STREAMS + """
        @info(name='q') from S#window.length(2) join T#window.length(2) on S.symbol == T.company
        select S.symbol as symbol, T.tweet, S.price insert into Out;""")
    s, t = runtime.get_input_handler("S"), runtime.get_input_handler("T")
    s.send(["WSO2", 55.6, 100])
    t.send(["u1", "hello", "WSO2"])
    s.send(["IBM", 75.6, 100])
    s.send(["WSO2", 57.6, 100])
    assert got.rows == [["WSO2", "hello", 55.6], ["WSO2", "hello", 57.6]]


def test_expired_events_join_as_expired(run_app):
    runtime, got = run_app(STREAMS + """
        @info(name='q') from S#window.length(1) join T#window.length(1) on S.symbol == T.company
        select S.symbol as symbol, S.price as price insert all events into Out;""", stream=None, query="q")
    s, t = runtime.get_input_handler("S"), runtime.get_input_handler("T")
    t.send(["u1", "x", "WSO2"])
    s.send(["WSO2", 1.0, 1])
    s.send(["WSO2", 2.0, 1])  # pushes the first out: it probes T as an expired event
    assert got.rows == [["WSO2", 1.0], ["WSO2", 2.0]]
    assert got.expired_rows == [["WSO2", 1.0]]


@pytest.mark.parametrize("kind, rows", [
    ("left outer", [["WSO2", None, 55.6], ["IBM", None, 75.6], ["WSO2", "hi", 55.6]]),
    ("right outer", [[None, "hi", None], ["WSO2", "hi", 55.6]]),
    ("full outer", [["WSO2", None, 55.6], ["IBM", None, 75.6], [None, "hi", None], ["WSO2", "hi", 55.6]]),
    ("", [["WSO2", "hi", 55.6]]),
])
def test_outer_joins_fill_missing_side_with_nulls(run_app, kind, rows):
    runtime, got = run_app(STREAMS + f"""
        @info(name='q') from S#window.length(2) {kind} join T#window.length(1)
        on S.symbol == T.company and T.tweet == 'hi'
        select S.symbol as symbol, T.tweet as tweet, S.price as price insert into Out;""")
    runtime.get_input_handler("S").send(["WSO2", 55.6, 1])
    runtime.get_input_handler("S").send(["IBM", 75.6, 1])
    runtime.get_input_handler("T").send(["u", "hi", "ORCL"])  # matches nothing
    runtime.get_input_handler("T").send(["u", "hi", "WSO2"])  # pushes ORCL out, matches WSO2
    assert got.rows == rows


def test_unidirectional_only_that_side_triggers(run_app):
    runtime, got = run_app(STREAMS + """
        @info(name='q') from S unidirectional join T#window.length(1)
        select symbol, tweet insert into Out;""")
    s, t = runtime.get_input_handler("S"), runtime.get_input_handler("T")
    s.send(["A", 1.0, 1])  # T is empty
    t.send(["u", "x", "c"])  # T does not trigger
    s.send(["B", 1.0, 1])
    assert got.rows == [["B", "x"]]


def test_stream_without_window_keeps_nothing(run_app):
    runtime, got = run_app(STREAMS + """
        @info(name='q') from S join T#window.length(5) on S.symbol == T.company
        select S.symbol as symbol, T.tweet as tweet insert into Out;""")
    s, t = runtime.get_input_handler("S"), runtime.get_input_handler("T")
    s.send(["A", 1.0, 1])
    t.send(["u", "x", "A"])  # S kept nothing: no match
    s.send(["A", 2.0, 1])
    assert got.rows == [["A", "x"]]


def test_self_join_with_aliases(run_app):
    runtime, got = run_app("""
        define stream S (symbol string, price double);
        @info(name='q') from S#window.length(5) as a join S#window.length(5) as b
        on a.symbol == b.symbol and a.price < b.price
        select a.price as low, b.price as high insert into Out;""")
    h = runtime.get_input_handler("S")
    h.send(["X", 1.0])
    h.send(["X", 2.0])
    h.send(["Y", 3.0])
    assert got.rows == [[1.0, 2.0]]


def test_aggregation_emits_once_per_probing_event(run_app):
    runtime, got = run_app(STREAMS + """
        @info(name='q') from S unidirectional join T#window.length(3)
        select S.symbol as symbol, count() as n insert into Out;""")
    t = runtime.get_input_handler("T")
    for i in range(3):
        t.send(["u", str(i), "c"])
    runtime.get_input_handler("S").send(["A", 1.0, 1])
    assert got.rows == [["A", 3]]


def test_an_input_chunk_gives_one_output_chunk(run_app):
    """Siddhi's JoinProcessor selects the matches of each probing event on their own (one row
    each from an aggregating selector) and the selector hands on all their rows as one chunk:
    one callback call per input chunk, and a query reading the output sees one chunk."""
    runtime, got = run_app(STREAMS + """
        define window W (user string, tweet string, company string) length(10);
        from T insert into W;
        @info(name='q') from S join W on S.symbol == W.company
        select S.symbol as symbol, count() as n insert into Out;
        from Out select count() as seen insert into Down;""")
    down = []
    runtime.add_callback("Down", lambda events: down.append([tuple(e.data) for e in events]))
    t0 = 1_700_000_000_000
    runtime.get_input_handler("T").send_events([Event(t0, ("u", "x", "A")), Event(t0, ("u", "y", "A")),
                                                Event(t0, ("u", "z", "B"))])
    runtime.get_input_handler("S").send_events([Event(t0 + 1, ("A", 1.0, 1)), Event(t0 + 1, ("B", 2.0, 2)),
                                                Event(t0 + 1, ("C", 3.0, 3))])
    assert got.rows == [["A", 2], ["B", 1]] and got.chunks == [2]
    assert down == [[(2,)]]


def test_join_table_uses_primary_key(run_app):
    runtime, got = run_app("""
        define stream S (symbol string, price double);
        define stream Check (symbol string);
        @PrimaryKey('symbol') define table Tab (symbol string, price double);
        from S insert into Tab;
        @info(name='q') from Check join Tab on Check.symbol == Tab.symbol
        select Check.symbol as symbol, Tab.price as price insert into Out;""")
    for i in range(100):
        runtime.get_input_handler("S").send([f"s{i}", float(i)])
    table = runtime.tables["Tab"]
    calls = []
    original = table.lookup_pk
    table.lookup_pk = lambda key: calls.append(key) or original(key)  # type: ignore[method-assign]
    runtime.get_input_handler("Check").send(["s42"])
    runtime.get_input_handler("Check").send(["nope"])
    assert got.rows == [["s42", 42.0]]
    assert calls == ["s42", "nope"]


def test_join_table_on_index_and_range(run_app):
    runtime, got = run_app("""
        define stream S (symbol string, volume long);
        define stream Check (symbol string, volume long);
        @Index('symbol') define table Tab (symbol string, volume long);
        from S insert into Tab;
        @info(name='q') from Check join Tab on Check.symbol == Tab.symbol and Tab.volume < Check.volume
        select Tab.symbol as symbol, Tab.volume as volume insert into Out;""")
    for row in (["A", 10], ["A", 50], ["B", 5]):
        runtime.get_input_handler("S").send(row)
    runtime.get_input_handler("Check").send(["A", 20])
    assert got.rows == [["A", 10]]


def test_join_named_window(run_app):
    runtime, got = run_app("""
        define stream S (symbol string, price double);
        define stream Check (symbol string);
        define window W (symbol string, price double) length(2);
        from S insert into W;
        @info(name='q') from Check join W on Check.symbol == W.symbol
        select W.symbol as symbol, W.price as price insert into Out;""")
    for row in (["A", 1.0], ["B", 2.0], ["A", 3.0]):
        runtime.get_input_handler("S").send(row)
    runtime.get_input_handler("Check").send(["A"])
    assert got.rows == [["A", 3.0]]


@pytest.mark.parametrize("query", [
    # ambiguous unqualified attribute
    "from S join T2 select symbol insert into Out;",
    # an aliased stream is named by its alias only
    "from S as a join T2 as b select a.symbol as s, T2.tweet as t insert into Out;",
    # select * would output 'symbol' twice
    "from S#window.length(1) join T2#window.length(1) on S.symbol == T2.symbol select * insert into Out;",
    # two tables
    "from Tab join Tab2 select Tab.symbol as s insert into Out;",
])
def test_join_creation_errors(query):
    app = """
        define stream S (symbol string, price double);
        define stream T2 (user string, tweet string, symbol string);
        define table Tab (symbol string); define table Tab2 (symbol string);
    """ + query
    with pytest.raises(SiddhiAppCreationError):
        SiddhiManager().create_siddhi_app_runtime(app)


CRON = "define stream S (a int, b string); define table T (a int, b string);\n" \
       "define window W (a int, c string) cron('*/5 * * * * ?');\n"


@pytest.mark.parametrize("query", [
    "from S#window.length(2) as x join W as y on x.a == y.a select x.a, b, c insert into O;",
    "from W as y join S#window.length(2) as x on x.a == y.a select x.a, b, c insert into O;",
    "from S#window.length(2) as x unidirectional join W as y select x.a, b, c insert into O;",
    "from W as x join W as y on x.a == y.a select x.a, y.c insert into O;",
])
def test_a_named_cron_window_cannot_be_searched_by_a_join(query):
    """Siddhi 5.1.33: "Cannot construct finder for the window ... cron" (its CronWindowProcessor
    is no FindableProcessor) wherever the other side may trigger."""
    with pytest.raises(SiddhiAppCreationError, match="cron window") as info:
        SiddhiManager().create_siddhi_app_runtime(CRON + query)
    assert info.value.line == 3


@pytest.mark.parametrize("query", [
    "from W as y unidirectional join S#window.length(2) as x on x.a == y.a select x.a, b, c insert into O;",
    "from W as y join T as x on x.a == y.a select x.a, b, c insert into O;",
    "from S#window.length(2) as x join S#window.cron('*/5 * * * * ?') as y on x.a == y.a "
    "select x.a, y.b insert into O;",
])
def test_a_cron_window_that_no_join_side_searches_is_accepted(query):
    SiddhiManager().create_siddhi_app_runtime(CRON + query).shutdown()
