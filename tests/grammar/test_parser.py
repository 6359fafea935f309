"""The parser builds the expected model nodes for each SiddhiQL construct.

Positions are excluded from node equality (``compare=False``), so expected nodes are written
without them; a few tests check positions explicitly.
"""
from __future__ import annotations

import pytest
from srota.grammar import SiddhiParserError, parse, parse_expression, parse_on_demand_query, parse_time
from srota.grammar.model import (
    AbsentStreamStateElement,
    AggregationDefinition,
    And,
    Annotation,
    AnnotationElement,
    Attribute,
    AttrType,
    Compare,
    CompareOperator,
    Constant,
    CountStateElement,
    DeleteStream,
    EventOutputRate,
    EveryStateElement,
    Filter,
    FunctionCall,
    FunctionDefinition,
    GroupStateElement,
    In,
    InsertIntoStream,
    IsNull,
    IsNullStream,
    JoinInputStream,
    JoinTrigger,
    JoinType,
    LastIndex,
    LogicalOperator,
    LogicalStateElement,
    MathOp,
    MathOperator,
    NextStateElement,
    Not,
    OnDemandQuery,
    OnDemandQueryType,
    Or,
    Order,
    OrderByAttribute,
    OutputAttribute,
    OutputEventType,
    Partition,
    Pos,
    Query,
    RangePartitionProperty,
    RangePartitionType,
    RateType,
    ReturnStream,
    Selector,
    SetAttribute,
    SingleInputStream,
    SnapshotOutputRate,
    StateInputStream,
    StateType,
    StreamDefinition,
    StreamFunction,
    StreamStateElement,
    TableDefinition,
    TimeConstant,
    TimeDuration,
    TimeOutputRate,
    TriggerDefinition,
    UpdateOrInsertStream,
    UpdateStream,
    ValuePartitionType,
    Variable,
    WindowDefinition,
    WindowHandler,
)
from srota.grammar.parser import update_variables

S_DEF = "define stream S (symbol string, price float, volume long);\n"


def q(body: str, defs: str = S_DEF) -> Query:
    """Parse ``defs + body`` and return its only query."""
    app = parse(defs + body)
    (query,) = app.execution_elements
    assert isinstance(query, Query)
    return query


def V(attribute: str, stream_id: str | None = None, index: int | None = None, **kw: bool) -> Variable:
    return Variable(attribute, stream_id, index, **kw)


def C(value: object) -> Constant:
    types = {bool: AttrType.BOOL, int: AttrType.INT, float: AttrType.DOUBLE, str: AttrType.STRING}
    return Constant(value, types[type(value)])


def SIS(stream_id: str, *handlers: object, ref: str | None = None, **kw: bool) -> SingleInputStream:
    return SingleInputStream(stream_id, tuple(handlers), ref, **kw)  # type: ignore[arg-type]


def state(ref: str | None, stream_id: str, *handlers: object) -> StreamStateElement:
    return StreamStateElement(SIS(stream_id, *handlers, ref=ref))


# ------------------------------------------------------------------------------------ annotations
class TestAnnotations:
    def test_app_annotations(self) -> None:
        app = parse("@app:name('X') @app:playback\n" + S_DEF)
        assert app.name == "X"
        assert app.annotations == (
            Annotation("app:name", (AnnotationElement(None, "X"),)),
            Annotation("app:playback"),
        )
        assert app.stream_definitions[0].annotations == ()

    def test_playback_with_elements(self) -> None:
        app = parse("@app:playback(idle.time='100 millisecond', increment='2 sec') " + S_DEF)
        a = app.annotations[0]
        assert a.get("idle.time") == "100 millisecond"
        assert a.get("increment") == "2 sec"

    @pytest.mark.parametrize("value", ["2", "", "2 parsecs"])
    def test_bad_playback_times_are_parser_errors(self, value: str) -> None:
        with pytest.raises(SiddhiParserError, match="playback"):
            parse(f"@app:playback(idle.time='100 millisecond', increment='{value}') " + S_DEF)

    def test_nested_annotations_and_dotted_keys(self) -> None:
        app = parse(
            "@source(type='kafka', topic.list='t', bootstrap.servers=\"h:9092\", "
            "@map(type='json', @attributes(id='$.a', t='$.b')))\n" + S_DEF
        )
        (src,) = app.stream_definitions[0].annotations
        assert src == Annotation(
            "source",
            (AnnotationElement("type", "kafka"), AnnotationElement("topic.list", "t"),
             AnnotationElement("bootstrap.servers", "h:9092")),
            (Annotation("map", (AnnotationElement("type", "json"),),
                        (Annotation("attributes", (AnnotationElement("id", "$.a"),
                                                   AnnotationElement("t", "$.b"))),)),),
        )

    def test_table_annotations(self) -> None:
        app = parse("@PrimaryKey('a','b') @Index('a') @store(type='sqlite', database='x.db')\n"
                    "define table T (a string, b int);")
        t = app.table_definitions[0]
        assert t.annotations[0] == Annotation("PrimaryKey", (AnnotationElement(None, "a"),
                                                             AnnotationElement(None, "b")))
        assert t.annotations[0].positional() == ("a", "b")
        assert t.annotations[1].positional() == ("a",)
        assert t.annotations[2].get("database") == "x.db"

    def test_keys_may_be_keywords_and_use_dashes_and_colons(self) -> None:
        app = parse("@purge(enable='true', interval='10 sec', @retentionPeriod(sec='120 sec', min='24 hours'))"
                    "@sink(type='log', bootstrap-servers='x', a:b='c') " + S_DEF)
        purge, sink = app.stream_definitions[0].annotations
        assert purge.nested("retentionPeriod")[0].get("sec") == "120 sec"
        assert purge.nested("retentionPeriod")[0].get("min") == "24 hours"
        assert sink.get("bootstrap-servers") == "x"
        assert sink.get("a:b") == "c"

    def test_query_annotations(self) -> None:
        query = q("@info(name='q1') @Async(buffer.size='64') from S select symbol insert into O;")
        assert query.name == "q1"
        assert query.annotations[1] == Annotation("Async", (AnnotationElement("buffer.size", "64"),))

    def test_triple_quoted_string_is_verbatim(self) -> None:
        # Siddhi 5's lexer only strips the quotes: a backslash stays a backslash (JSON's own
        # escape in a template, a regex's \\d), a line break a line break
        app = parse('@source(type="x", @payload("""{"a":\\t1,\n "b": "c\\n\\d"}""")) ' + S_DEF)
        payload = app.stream_definitions[0].annotations[0].annotations[0]
        assert payload.positional() == ('{"a":\\t1,\n "b": "c\\n\\d"}',)

    def test_annotations_only_app(self) -> None:
        app = parse("@app:name('only')")
        assert app.name == "only" and app.definitions == ()


# ------------------------------------------------------------------------------------ definitions
class TestDefinitions:
    def test_stream(self) -> None:
        app = parse("define stream S (a string, b int, c long, d float, e double, f bool, g object)")
        assert app.stream_definitions == (StreamDefinition("S", (
            Attribute("a", AttrType.STRING), Attribute("b", AttrType.INT), Attribute("c", AttrType.LONG),
            Attribute("d", AttrType.FLOAT), Attribute("e", AttrType.DOUBLE), Attribute("f", AttrType.BOOL),
            Attribute("g", AttrType.OBJECT))),)

    def test_keywords_are_case_insensitive_and_names_can_be_keywords(self) -> None:
        app = parse("DEFINE Stream S (last INT, min Double, `select` string);")
        assert [a.name for a in app.stream_definitions[0].attributes] == ["last", "min", "select"]

    def test_table(self) -> None:
        app = parse("define table T (a string);")
        assert app.table_definitions == (TableDefinition("T", (Attribute("a", AttrType.STRING),)),)

    @pytest.mark.parametrize(("text", "event_type"), [
        ("", OutputEventType.ALL),
        (" output all events", OutputEventType.ALL),
        (" output expired events", OutputEventType.EXPIRED),
        (" output current events", OutputEventType.CURRENT),
        (" output events", OutputEventType.CURRENT),
    ])
    def test_window(self, text: str, event_type: OutputEventType) -> None:
        app = parse(f"define window W (a int) length(5){text};")
        assert app.window_definitions == (WindowDefinition(
            "W", (Attribute("a", AttrType.INT),), WindowHandler("", "length", (C(5),)), event_type),)

    def test_window_with_namespace_and_time(self) -> None:
        app = parse("define window W (a int) ext:time(1 min 30 sec) output all events;")
        assert app.window_definitions[0].window == WindowHandler("ext", "time", (TimeConstant(90_000),))

    def test_triggers(self) -> None:
        app = parse("define trigger A at 'start'; define trigger B at every 5 sec; "
                    "define trigger C at '*/5 * * * * ?'")
        assert app.trigger_definitions == (
            TriggerDefinition("A", at="start"),
            TriggerDefinition("B", every_millis=5000),
            TriggerDefinition("C", at="*/5 * * * * ?"),
        )

    def test_function_body_keeps_nested_braces_and_quotes(self) -> None:
        body = ' var m = {"a": "}"}; if (x) { return m["a"]; } // }\n'
        app = parse("define function f[JavaScript] return string {" + body + "};\n" + S_DEF)
        assert app.function_definitions == (FunctionDefinition("f", "JavaScript", AttrType.STRING, body),)
        assert app.stream_definitions[0].pos == Pos(3, 1)  # positions after the body still right

    def test_aggregation_range(self) -> None:
        app = parse("define stream T (symbol string, price double, ts long);\n"
                    "define aggregation A from T[price > 0] select symbol, sum(price) as total "
                    "group by symbol aggregate by ts every sec ... year;")
        assert app.aggregation_definitions == (AggregationDefinition(
            "A",
            SIS("T", Filter(Compare(V("price"), CompareOperator.GT, C(0)))),
            Selector(attributes=(OutputAttribute("symbol", V("symbol")),
                                 OutputAttribute("total", FunctionCall("", "sum", (V("price"),)))),
                     group_by=(V("symbol"),)),
            V("ts"),
            tuple(TimeDuration),
        ),)

    def test_aggregation_list_and_partial_range(self) -> None:
        app = parse("define stream T (a int); define aggregation A from T select sum(a) as s "
                    "aggregate every hours, seconds, min; "
                    "define aggregation B from T select sum(a) as s aggregate every minutes ... days;")
        a, b = app.aggregation_definitions
        assert a.aggregate_by is None
        assert a.durations == (TimeDuration.SECONDS, TimeDuration.MINUTES, TimeDuration.HOURS)
        assert b.durations == (TimeDuration.MINUTES, TimeDuration.HOURS, TimeDuration.DAYS)

    def test_aggregation_months(self) -> None:
        app = parse("define stream T (a int); define aggregation A from T select sum(a) as s "
                    "aggregate every day ... month;")
        assert app.aggregation_definitions[0].durations == (TimeDuration.DAYS, TimeDuration.MONTHS)


# ------------------------------------------------------------------------------------ single streams
class TestSingleStreamQueries:
    def test_handlers_in_text_order(self) -> None:
        query = q("from S[price > 10]#window.length(5)#str:tokenize(symbol)[volume < 3] "
                  "select * insert into O;")
        assert query.input == SIS(
            "S",
            Filter(Compare(V("price"), CompareOperator.GT, C(10))),
            WindowHandler("", "length", (C(5),)),
            StreamFunction("str", "tokenize", (V("symbol"),)),
            Filter(Compare(V("volume"), CompareOperator.LT, C(3))),
        )
        assert query.selector == Selector()
        assert query.output == InsertIntoStream("O")

    def test_window_with_namespace_and_stream_function_without(self) -> None:
        query = q("from S#window.unique:length(symbol, 3)#log('x') select symbol insert into O")
        assert query.input.handlers == (  # type: ignore[union-attr]
            WindowHandler("unique", "length", (V("symbol"), C(3))),
            StreamFunction("", "log", (C("x"),)),
        )

    def test_no_select_means_select_star(self) -> None:
        assert q("from S insert into O").selector == Selector(attributes=None)

    def test_select_list(self) -> None:
        query = q("from S select symbol, price as p, sum(volume) as total, S.price insert into O;")
        assert query.selector.attributes == (
            OutputAttribute("symbol", V("symbol")),
            OutputAttribute("p", V("price")),
            OutputAttribute("total", FunctionCall("", "sum", (V("volume"),))),
            OutputAttribute("price", V("price", "S")),
        )

    def test_unnamed_expression_gets_empty_rename(self) -> None:
        # Siddhi requires `as` for non-attributes; the engine rejects the empty name.
        query = q("from S select price * 2 insert into O")
        assert query.selector.attributes == (
            OutputAttribute("", MathOp(MathOperator.MULTIPLY, V("price"), C(2))),)

    def test_full_selector(self) -> None:
        query = q("from S select symbol, sum(price) as total group by symbol, volume having total > 10 "
                  "order by symbol desc, total limit 5 offset 2 insert into O")
        assert query.selector == Selector(
            attributes=(OutputAttribute("symbol", V("symbol")),
                        OutputAttribute("total", FunctionCall("", "sum", (V("price"),)))),
            group_by=(V("symbol"), V("volume")),
            having=Compare(V("total"), CompareOperator.GT, C(10)),
            order_by=(OrderByAttribute(V("symbol"), Order.DESC), OrderByAttribute(V("total"), Order.ASC)),
            limit=C(5),
            offset=C(2),
        )

    def test_inner_and_fault_streams(self) -> None:
        app = parse(S_DEF + "from !S select symbol insert into #T; from #T select symbol insert into !U")
        first, second = app.execution_elements
        assert first.input == SIS("S", is_fault=True)  # type: ignore[union-attr]
        assert first.output == InsertIntoStream("T", is_inner=True)  # type: ignore[union-attr]
        assert second.input == SIS("T", is_inner=True)  # type: ignore[union-attr]
        assert second.output == InsertIntoStream("U", is_fault=True)  # type: ignore[union-attr]

    def test_positions(self) -> None:
        app = parse(S_DEF + "@info(name='q')\nfrom S[price > 1]\nselect symbol\ninsert into O;")
        (query,) = app.execution_elements
        assert isinstance(query, Query)
        assert app.stream_definitions[0].pos == Pos(1, 1)
        assert query.annotations[0].pos == Pos(2, 1)
        assert query.pos == Pos(3, 1)
        assert query.input.pos == Pos(3, 6)
        flt = query.input.handlers[0]  # type: ignore[union-attr]
        assert flt.pos == Pos(3, 7)
        assert flt.expression.pos == Pos(3, 8)  # type: ignore[union-attr]
        assert flt.expression.right.pos == Pos(3, 16)  # type: ignore[union-attr]
        assert query.selector.pos == Pos(4, 1)
        assert query.output.pos == Pos(5, 1)

    def test_comments_and_back_quotes(self) -> None:
        app = parse("-- a comment\ndefine stream `from` (`select` int); /* block\ncomment */\n"
                    "from `from` select `select` insert into O -- trailing")
        (query,) = app.execution_elements
        assert query.input == SIS("from")  # type: ignore[union-attr]
        assert query.selector.attributes == (OutputAttribute("select", V("select")),)  # type: ignore[union-attr]

    def test_keyword_named_functions(self) -> None:
        query = q("from S select and(price > 1) as a, or(price > 2) as o, min(price) as m insert into O")
        assert [oa.expression.name for oa in query.selector.attributes] == ["and", "or", "min"]  # type: ignore


# ------------------------------------------------------------------------------------ outputs
class TestOutputs:
    @pytest.mark.parametrize(("text", "event_type"), [
        ("insert into T", OutputEventType.CURRENT),
        ("insert current events into T", OutputEventType.CURRENT),
        ("insert expired events into T", OutputEventType.EXPIRED),
        ("insert all events into T", OutputEventType.ALL),
        ("insert events into T", OutputEventType.CURRENT),
    ])
    def test_insert(self, text: str, event_type: OutputEventType) -> None:
        assert q(f"from S {text}").output == InsertIntoStream("T", event_type)

    def test_return(self) -> None:
        assert q("from S select symbol return").output == ReturnStream()
        assert q("from S select symbol return all events").output == ReturnStream(OutputEventType.ALL)

    def test_delete(self) -> None:
        defs = S_DEF + "define table T (symbol string);\n"
        assert q("from S delete T on T.symbol == symbol", defs).output == DeleteStream(
            "T", Compare(V("symbol", "T"), CompareOperator.EQ, V("symbol")))
        assert q("from S delete T for expired events on T.symbol == symbol", defs).output == DeleteStream(
            "T", Compare(V("symbol", "T"), CompareOperator.EQ, V("symbol")), OutputEventType.EXPIRED)

    def test_update(self) -> None:
        defs = S_DEF + "define table T (symbol string, price float);\n"
        out = q("from S update T for all events set T.price = price, T.symbol = 'x' "
                "on T.symbol == symbol", defs).output
        assert out == UpdateStream(
            "T", Compare(V("symbol", "T"), CompareOperator.EQ, V("symbol")),
            (SetAttribute(V("price", "T"), V("price")), SetAttribute(V("symbol", "T"), C("x"))),
            OutputEventType.ALL)
        assert q("from S update T on T.symbol == symbol", defs).output == UpdateStream(
            "T", Compare(V("symbol", "T"), CompareOperator.EQ, V("symbol")))

    def test_update_or_insert(self) -> None:
        defs = S_DEF + "define table T (symbol string, price float);\n"
        out = q("from S update or insert into T set T.price = price on T.symbol == symbol", defs).output
        assert out == UpdateOrInsertStream(
            "T", Compare(V("symbol", "T"), CompareOperator.EQ, V("symbol")),
            (SetAttribute(V("price", "T"), V("price")),))

    @pytest.mark.parametrize(("text", "rate"), [
        ("output every 5 events", EventOutputRate(5)),
        ("output first every 3 events", EventOutputRate(3, RateType.FIRST)),
        ("output last every 3 events", EventOutputRate(3, RateType.LAST)),
        ("output all every 3 events", EventOutputRate(3, RateType.ALL)),
        ("output every 1 sec", TimeOutputRate(1000)),
        ("output last every 1 min 30 sec", TimeOutputRate(90_000, RateType.LAST)),
        ("output snapshot every 1 sec", SnapshotOutputRate(1000)),
    ])
    def test_output_rates(self, text: str, rate: object) -> None:
        assert q(f"from S select symbol {text} insert into O").output_rate == rate


# ------------------------------------------------------------------------------------ joins
class TestJoins:
    DEFS = S_DEF + "define stream T (symbol string, tweet string);\n"

    @pytest.mark.parametrize(("text", "join_type"), [
        ("join", JoinType.JOIN),
        ("inner join", JoinType.JOIN),
        ("left outer join", JoinType.LEFT_OUTER),
        ("right outer join", JoinType.RIGHT_OUTER),
        ("full outer join", JoinType.FULL_OUTER),
    ])
    def test_join_types(self, text: str, join_type: JoinType) -> None:
        query = q(f"from S#window.length(2) as a {text} T#window.time(1 sec) as b "
                  "on a.symbol == b.symbol select a.symbol, b.tweet insert into O", self.DEFS)
        assert query.input == JoinInputStream(
            SIS("S", WindowHandler("", "length", (C(2),)), ref="a"),
            join_type,
            SIS("T", WindowHandler("", "time", (TimeConstant(1000),)), ref="b"),
            Compare(V("symbol", "a"), CompareOperator.EQ, V("symbol", "b")),
        )

    def test_unidirectional(self) -> None:
        left = q("from S unidirectional join T select * insert into O", self.DEFS)
        right = q("from S join T unidirectional select * insert into O", self.DEFS)
        assert left.input.trigger is JoinTrigger.LEFT  # type: ignore[union-attr]
        assert right.input.trigger is JoinTrigger.RIGHT  # type: ignore[union-attr]
        assert right.input.on is None  # type: ignore[union-attr]

    def test_within_per(self) -> None:
        query = q("from S as i join A as s on s.symbol == i.symbol "
                  "within '2017-06-** **:**:**', '2018' per 'seconds' select s.symbol insert into O",
                  self.DEFS)
        assert query.input.within == (C("2017-06-** **:**:**"), C("2018"))  # type: ignore[union-attr]
        assert query.input.per == C("seconds")  # type: ignore[union-attr]

    def test_plain_outer_join_is_a_syntax_error(self) -> None:
        with pytest.raises(SiddhiParserError, match="unexpected 'outer'"):
            parse(self.DEFS + "from S outer join T select * insert into O")


# ------------------------------------------------------------------------------------ patterns
class TestPatterns:
    DEFS = "define stream S1 (symbol string, price float); define stream S2 (symbol string, price float);\n"

    def test_every_followed_by_within(self) -> None:
        query = q("from every e1=S1[price>20] -> e2=S2[price>e1.price] within 5 sec "
                  "select e1.symbol, e2[0].price as p0, e2[last].price as pl insert into O", self.DEFS)
        assert query.input == StateInputStream(
            StateType.PATTERN,
            NextStateElement(
                EveryStateElement(state("e1", "S1", Filter(Compare(V("price"), CompareOperator.GT, C(20))))),
                state("e2", "S2", Filter(Compare(V("price"), CompareOperator.GT, V("price", "e1")))),
            ),
            5000,
        )
        assert query.selector.attributes == (
            OutputAttribute("symbol", V("symbol", "e1")),
            OutputAttribute("p0", V("price", "e2", 0)),
            OutputAttribute("pl", V("price", "e2", LastIndex(0))),
        )
        last = query.selector.attributes[2].expression  # type: ignore[index]
        assert isinstance(last.stream_index, LastIndex)  # type: ignore[union-attr]

    def test_last_minus_k(self) -> None:
        query = q("from e1=S1 -> e2=S2 select e2[last-1].price as p insert into O", self.DEFS)
        index = query.selector.attributes[0].expression.stream_index  # type: ignore
        assert isinstance(index, LastIndex) and index == 1

    def test_next_is_right_associative(self) -> None:
        query = q("from e1=S1 -> e2=S2 -> e3=S1 select e1.price insert into O", self.DEFS)
        assert query.input.element == NextStateElement(  # type: ignore[union-attr]
            state("e1", "S1"), NextStateElement(state("e2", "S2"), state("e3", "S1")))

    def test_every_group(self) -> None:
        query = q("from every (e1=S1 -> e2=S2) -> e3=S1 select e1.price insert into O", self.DEFS)
        assert query.input.element == NextStateElement(  # type: ignore[union-attr]
            EveryStateElement(NextStateElement(state("e1", "S1"), state("e2", "S2"))), state("e3", "S1"))

    def test_trailing_group_within_belongs_to_the_pattern(self) -> None:
        query = q("from every (e1=S1 -> e2=S2) within 1 sec select e1.price insert into O", self.DEFS)
        assert query.input == StateInputStream(
            StateType.PATTERN,
            EveryStateElement(NextStateElement(state("e1", "S1"), state("e2", "S2"))), 1000)

    def test_group_within_inside_the_chain(self) -> None:
        query = q("from (e1=S1 -> e2=S2) within 1 sec -> e3=S1 select e1.price insert into O", self.DEFS)
        assert query.input == StateInputStream(StateType.PATTERN, NextStateElement(
            GroupStateElement(NextStateElement(state("e1", "S1"), state("e2", "S2")), 1000),
            state("e3", "S1")))

    @pytest.mark.parametrize(("text", "lo", "hi"), [
        ("<2:5>", 2, 5), ("<2:>", 2, -1), ("<:5>", 0, 5), ("<3>", 3, 3),
    ])
    def test_counts(self, text: str, lo: int, hi: int) -> None:
        query = q(f"from e1=S1[price>1]{text} -> e2=S2 select e1[0].price insert into O", self.DEFS)
        assert query.input.element.first == CountStateElement(  # type: ignore[union-attr]
            state("e1", "S1", Filter(Compare(V("price"), CompareOperator.GT, C(1)))), lo, hi)

    def test_logical(self) -> None:
        query = q("from e1=S1 and e2=S2 -> e3=S1 or e4=S2 select e1.price insert into O", self.DEFS)
        assert query.input.element == NextStateElement(  # type: ignore[union-attr]
            LogicalStateElement(state("e1", "S1"), LogicalOperator.AND, state("e2", "S2")),
            LogicalStateElement(state("e3", "S1"), LogicalOperator.OR, state("e4", "S2")))

    def test_every_binds_looser_than_and(self) -> None:
        query = q("from every e1=S1 and e2=S2 select e1.price insert into O", self.DEFS)
        assert query.input.element == EveryStateElement(  # type: ignore[union-attr]
            LogicalStateElement(state("e1", "S1"), LogicalOperator.AND, state("e2", "S2")))

    def test_absent(self) -> None:
        query = q("from e1=S1 -> not S2[price > e1.price] for 1 sec select e1.price insert into O", self.DEFS)
        assert query.input.element == NextStateElement(  # type: ignore[union-attr]
            state("e1", "S1"),
            AbsentStreamStateElement(SIS("S2", Filter(Compare(V("price"), CompareOperator.GT,
                                                              V("price", "e1")))), 1000))

    def test_absent_in_logical_without_for(self) -> None:
        query = q("from not S1[price > 10] and e2=S2 select e2.price insert into O", self.DEFS)
        assert query.input == StateInputStream(StateType.PATTERN, LogicalStateElement(
            AbsentStreamStateElement(SIS("S1", Filter(Compare(V("price"), CompareOperator.GT, C(10))))),
            LogicalOperator.AND, state("e2", "S2")))

    def test_every_absent_in_parentheses(self) -> None:
        query = q("from (not S1 for 1 sec or not S2 for 2 sec) -> e3=S1 select e3.price insert into O",
                  self.DEFS)
        assert query.input.element == NextStateElement(  # type: ignore[union-attr]
            LogicalStateElement(AbsentStreamStateElement(SIS("S1"), 1000), LogicalOperator.OR,
                                AbsentStreamStateElement(SIS("S2"), 2000)),
            state("e3", "S1"))

    def test_single_every_is_a_pattern(self) -> None:
        query = q("from every e1=S1 select e1.price insert into O", self.DEFS)
        assert query.input == StateInputStream(StateType.PATTERN, EveryStateElement(state("e1", "S1")))

    def test_single_event_reference_is_a_pattern(self) -> None:
        query = q("from e1=S1 select e1.price insert into O", self.DEFS)
        assert query.input == StateInputStream(StateType.PATTERN, state("e1", "S1"))

    def test_is_null_on_events_and_attributes(self) -> None:
        query = q("from e1=S1 -> e2=S2[e1 is null or e1[last-1] is null or price is null "
                  "or e1.price is null or f(price) is null] select e1.price insert into O", self.DEFS)
        cond = query.input.element.next.stream.handlers[0].expression  # type: ignore[union-attr]
        assert cond == Or(Or(Or(Or(
            IsNullStream("e1"),
            IsNullStream("e1", LastIndex(1))),
            IsNull(V("price"))),
            IsNull(V("price", "e1"))),
            IsNull(FunctionCall("", "f", (V("price"),))))

    def test_not_of_is_null(self) -> None:
        query = q("from e1=S1 -> e2=S2[not e1 is null] select e1.price insert into O", self.DEFS)
        cond = query.input.element.next.stream.handlers[0].expression  # type: ignore[union-attr]
        assert cond == Not(IsNullStream("e1"))


class TestSequences:
    DEFS = TestPatterns.DEFS

    def test_sequence_with_quantifiers(self) -> None:
        query = q("from every e1=S1, e2=S2*, e3=S1+, e4=S2?, e5=S1<1:2> within 5 sec "
                  "select e1.price insert into O", self.DEFS)
        assert query.input == StateInputStream(
            StateType.SEQUENCE,
            NextStateElement(
                EveryStateElement(state("e1", "S1")),
                NextStateElement(
                    CountStateElement(state("e2", "S2"), 0, -1),
                    NextStateElement(
                        CountStateElement(state("e3", "S1"), 1, -1),
                        NextStateElement(CountStateElement(state("e4", "S2"), 0, 1),
                                         CountStateElement(state("e5", "S1"), 1, 2))))),
            5000)

    def test_sequence_with_absent_group(self) -> None:
        query = q("from (not S1[price>10] for 1 sec and not S2 for 1 sec), e3=S1 select e3.price "
                  "insert into O", self.DEFS)
        assert query.input.type is StateType.SEQUENCE  # type: ignore[union-attr]
        assert isinstance(query.input.element.first, LogicalStateElement)  # type: ignore[union-attr]

    def test_stream_function_before_quantifier(self) -> None:
        query = q("from e1=S1#log('x')+, e2=S2 select e1[0].price insert into O", self.DEFS)
        assert query.input.element.first == CountStateElement(  # type: ignore[union-attr]
            state("e1", "S1", StreamFunction("", "log", (C("x"),))), 1, -1)


# ------------------------------------------------------------------------------------ expressions
class TestExpressions:
    @pytest.mark.parametrize(("text", "value", "typ"), [
        ("5", 5, AttrType.INT), ("-5", -5, AttrType.INT), ("+5", 5, AttrType.INT),
        ("5l", 5, AttrType.LONG), ("5L", 5, AttrType.LONG), ("-9223372036854775808L", -(2**63), AttrType.LONG),
        ("5f", 5.0, AttrType.FLOAT), ("5.5F", 5.5, AttrType.FLOAT), ("1e2f", 100.0, AttrType.FLOAT),
        ("5.0", 5.0, AttrType.DOUBLE), ("5d", 5.0, AttrType.DOUBLE), ("5.5D", 5.5, AttrType.DOUBLE),
        (".5", 0.5, AttrType.DOUBLE), ("1e3", 1000.0, AttrType.DOUBLE), ("-2.5e-1", -0.25, AttrType.DOUBLE),
        ("true", True, AttrType.BOOL), ("FALSE", False, AttrType.BOOL),
        ("'it'", "it", AttrType.STRING), ('"it\'s"', "it's", AttrType.STRING),
        ('"""a\\nb"""', "a\\nb", AttrType.STRING),  # verbatim, as Siddhi's lexer reads it
    ])
    def test_constants(self, text: str, value: object, typ: AttrType) -> None:
        assert parse_expression(text) == Constant(value, typ)

    @pytest.mark.parametrize(("text", "millis"), [
        ("1 sec", 1000), ("1 second", 1000), ("2 seconds", 2000), ("1 min 30 sec", 90_000),
        ("1 minute", 60_000), ("2 hours", 7_200_000), ("1 day", 86_400_000), ("1 week", 604_800_000),
        ("1 month", 2_592_000_000), ("1 year", 31_536_000_000), ("500 millisec", 500),
        ("500 milliseconds", 500), ("1 hour 1 min 1 sec 1 millisecond", 3_661_001), ("1sec", 1000),
    ])
    def test_time_constants(self, text: str, millis: int) -> None:
        assert parse_expression(text) == TimeConstant(millis)

    def test_precedence(self) -> None:
        assert parse_expression("a + b * c - d") == MathOp(
            MathOperator.SUBTRACT,
            MathOp(MathOperator.ADD, V("a"), MathOp(MathOperator.MULTIPLY, V("b"), V("c"))),
            V("d"))
        assert parse_expression("a / b % c") == MathOp(
            MathOperator.MOD, MathOp(MathOperator.DIVIDE, V("a"), V("b")), V("c"))
        assert parse_expression("a > 1 and b <= 2 or not c == d") == Or(
            And(Compare(V("a"), CompareOperator.GT, C(1)), Compare(V("b"), CompareOperator.LE, C(2))),
            Compare(Not(V("c")), CompareOperator.EQ, V("d")))
        assert parse_expression("a < b == c != d") == Compare(
            Compare(Compare(V("a"), CompareOperator.LT, V("b")), CompareOperator.EQ, V("c")),
            CompareOperator.NE, V("d"))
        assert parse_expression("not (a >= 1)") == Not(Compare(V("a"), CompareOperator.GE, C(1)))

    def test_in_binds_looser_than_comparison(self) -> None:
        assert parse_expression("a == b in T and c") == And(
            In(Compare(V("a"), CompareOperator.EQ, V("b")), "T"), V("c"))

    def test_minus_literal_and_subtraction(self) -> None:
        assert parse_expression("a -5") == MathOp(MathOperator.SUBTRACT, V("a"), C(5))
        assert parse_expression("a * -5") == MathOp(MathOperator.MULTIPLY, V("a"), C(-5))

    def test_functions(self) -> None:
        assert parse_expression("count()") == FunctionCall("", "count")
        assert parse_expression("count(*)") == FunctionCall("", "count", star=True)
        assert parse_expression("maximum(*)") == FunctionCall("", "maximum", (), star=True)
        assert parse_expression("str:concat(a, 'x')") == FunctionCall("str", "concat", (V("a"), C("x")))
        assert parse_expression("ifThenElse(a > 1, 'y', 'n')") == FunctionCall(
            "", "ifThenElse", (Compare(V("a"), CompareOperator.GT, C(1)), C("y"), C("n")))

    def test_variables(self) -> None:
        assert parse_expression("S.price") == V("price", "S")
        assert parse_expression("#S.price") == V("price", "S", is_inner=True)
        assert parse_expression("!S.price") == V("price", "S", is_fault=True)
        assert parse_expression("e1[2].price") == V("price", "e1", 2)

    def test_is_null_without_context_is_an_attribute_check(self) -> None:
        assert parse_expression("x is null") == IsNull(V("x"))
        assert parse_expression("#S is null") == IsNullStream("S", is_inner=True)

    def test_long_condition_chains(self) -> None:
        expr = parse_expression(" or ".join(f"a == {i}" for i in range(400)))
        assert isinstance(expr, Or) and expr.right == Compare(V("a"), CompareOperator.EQ, C(399))

    def test_expression_positions(self) -> None:
        expr = parse_expression("a +\n  b")
        assert expr.pos == Pos(1, 1)
        assert expr.right.pos == Pos(2, 3)  # type: ignore[union-attr]


# ------------------------------------------------------------------------------------ partitions
class TestPartitions:
    def test_value_and_range_partitions(self) -> None:
        app = parse(S_DEF + "define stream T (symbol string, volume long);\n"
                    "@purge(enable='true', interval='1 sec') partition with (symbol of S, "
                    "volume >= 100 as 'high' or volume < 100 as 'low' of T) begin "
                    "@info(name='q') from S select symbol insert into #I; "
                    "from #I select symbol insert into O; end;")
        (part,) = app.execution_elements
        assert isinstance(part, Partition)
        assert part.annotations[0].name == "purge"
        assert part.partition_types == (
            ValuePartitionType("S", V("symbol")),
            RangePartitionType("T", (
                RangePartitionProperty("high", Compare(V("volume"), CompareOperator.GE, C(100))),
                RangePartitionProperty("low", Compare(V("volume"), CompareOperator.LT, C(100))),
            )),
        )
        first, second = part.queries
        assert first.name == "q"
        assert first.output == InsertIntoStream("I", is_inner=True)
        assert second.input == SIS("I", is_inner=True)

    def test_partition_end_without_semicolons(self) -> None:
        app = parse(S_DEF + "partition with (symbol of S) begin from S select symbol insert into O end")
        assert len(app.execution_elements[0].queries) == 1  # type: ignore[union-attr]


# ------------------------------------------------------------------------------------ on-demand
class TestOnDemandQueries:
    def test_find(self) -> None:
        odq = parse_on_demand_query("from T on price > 10 select symbol, price order by price limit 3")
        assert odq == OnDemandQuery(
            OnDemandQueryType.FIND, "T", Compare(V("price"), CompareOperator.GT, C(10)),
            Selector(attributes=(OutputAttribute("symbol", V("symbol")), OutputAttribute("price", V("price"))),
                     order_by=(OrderByAttribute(V("price")),), limit=C(3)))

    def test_find_with_alias_within_per(self) -> None:
        odq = parse_on_demand_query("from A as a within '2017', '2018' per 'days' select a.x;")
        assert odq.reference_id == "a"
        assert odq.within == (C("2017"), C("2018")) and odq.per == C("days")
        assert parse_on_demand_query("from T") == OnDemandQuery(OnDemandQueryType.FIND, "T", None, Selector())

    def test_insert(self) -> None:
        odq = parse_on_demand_query("select 'x' as symbol, 1 as n insert into T")
        assert odq.type is OnDemandQueryType.INSERT and odq.input_store is None
        assert odq.output == InsertIntoStream("T")

    def test_delete_update_upsert(self) -> None:
        assert parse_on_demand_query("delete T on T.n == 1") == OnDemandQuery(
            OnDemandQueryType.DELETE, None, None, Selector(),
            DeleteStream("T", Compare(V("n", "T"), CompareOperator.EQ, C(1))))
        upd = parse_on_demand_query("select 2 as m update T set T.n = m on T.n == 1")
        assert upd.type is OnDemandQueryType.UPDATE
        assert upd.output == UpdateStream("T", Compare(V("n", "T"), CompareOperator.EQ, C(1)),
                                          (SetAttribute(V("n", "T"), V("m")),))
        ups = parse_on_demand_query("select 2 as n update or insert into T set T.n = n on T.n == 2")
        assert ups.type is OnDemandQueryType.UPDATE_OR_INSERT
        assert isinstance(ups.output, UpdateOrInsertStream)


# ------------------------------------------------------------------------------------ app level
class TestApp:
    def test_definitions_grouped_and_queries_in_order(self) -> None:
        app = parse(S_DEF + "define table T (a int); from S insert into A; from S insert into B")
        assert [e.output.target for e in app.execution_elements] == ["A", "B"]  # type: ignore
        assert len(app.definitions) == 2

    def test_final_semicolon_optional(self) -> None:
        assert parse(S_DEF + "from S insert into A") == parse(S_DEF + "from S insert into A;")

    def test_definition_after_query_is_an_error(self) -> None:
        with pytest.raises(SiddhiParserError, match="definitions must come before"):
            parse(S_DEF + "from S insert into A; define stream X (a int);")

    def test_parse_time(self) -> None:
        assert parse_time("100 millisecond") == 100
        assert parse_time("1 min 30 sec") == 90_000
        assert parse_time(" 2 HOURS ") == 7_200_000
        with pytest.raises(ValueError):
            parse_time("2")
        with pytest.raises(ValueError):
            parse_time("30 sec 1 min")

    def test_fifty_line_app_parses(self) -> None:
        # (How fast is a benchmark's question, never a timed test's: it fails under load.)
        lines = [S_DEF.strip()]
        lines += [f"@info(name='q{i}') from S[price > {i}]#window.length({i + 1}) "
                  f"select symbol, avg(price) as p group by symbol insert into O{i};" for i in range(49)]
        app = parse("\n".join(lines))
        assert len(app.execution_elements) == 49


class TestRefusedAsSiddhiDoes:
    """Apps Siddhi 5.1.33 refuses with a syntax error (SiddhiParserException), checked on it."""

    DEFS = "define stream A (a int); define stream B (a int); define stream C (a int); define stream D (a int);\n"

    @pytest.mark.parametrize("body", [
        "from A as x select a insert into O",
        "from A#window.length(2) as x select x.a insert into O",
        "from A[a > 0] as x select a insert into O",
        "partition with (a of A) begin from A as x select a insert into O; end",
    ])
    def test_an_alias_on_a_lone_input(self, body: str) -> None:
        with pytest.raises(SiddhiParserError, match="'as x' names an input of a join") as info:
            q(body, self.DEFS)
        assert info.value.line == 2

    def test_an_alias_on_an_aggregations_input(self) -> None:
        with pytest.raises(SiddhiParserError, match="'as x' names an input of a join"):
            parse("define stream S (a int, ts long);\n"
                  "define aggregation G from S as x select sum(a) as t aggregate by ts every sec...min;")

    def test_a_joins_aliases_stay(self) -> None:
        query = q("from A#window.length(2) as x join B#window.length(2) as y on x.a == y.a "
                  "select x.a insert into O", self.DEFS)
        assert isinstance(query.input, JoinInputStream) and query.input.left.reference_id == "x"

    @pytest.mark.parametrize(("chain", "message"), [
        ("not A for 1 sec -> not B for 1 sec -> e3=C", "two absent states"),
        ("e1=C -> not A for 1 sec -> not B for 1 sec", "two absent states"),
        ("not A for 1 sec, not B for 1 sec, e3=C", "two absent states"),
        ("every (e1=A, e2=B)", "'every' in a sequence can only be over its first state"),
        ("every (e1=A), e2=B", "'every' in a sequence can only be over its first state"),
        ("e1=A, every e2=B", "'every' can only begin a sequence"),
        ("(e1=A, e2=B), e3=C", "cannot begin with a parenthesised group"),
        ("e1=A+ -> e2=B", "a pattern counts with <min:max>"),
        ("not A -> e2=B", "needs a waiting time"),
        ("not A and not B -> e3=C", "needs a waiting time"),
        ("(not A for 1 sec) -> e2=B", "no pattern of this shape"),
        ("every (every e1=A -> e2=B)", "no pattern of this shape"),
    ])
    def test_states_the_g4_does_not_arrange_so(self, chain: str, message: str) -> None:
        with pytest.raises(SiddhiParserError, match=message) as info:
            q(f"from {chain} select 1 as one insert into O", self.DEFS)
        assert info.value.line == 2 and info.value.column is not None

    @pytest.mark.parametrize("chain", [
        "not A for 1 sec -> e2=B -> not C for 1 sec -> not D for 1 sec",
        "not A for 1 sec -> not B for 1 sec -> e3=C -> not D for 1 sec",
        "not A for 1 sec and not B for 1 sec -> e3=C",
        "every e1=A, e2=B",
        "e1=A -> every e2=B",
        "every (e1=A -> e2=B) within 1 sec",
        "every (not A for 1 sec -> e2=B)",
        "every (not A for 1 sec, e2=B), e3=C",
        "every (not A for 1 sec and e1=B), e2=C",
        "every not A for 1 sec, e2=B",
        "e3=C, (e1=A, e2=B)",
        "e1=A, e2=B*, e3=C?, e4=D+",
        "not A for 1 sec",
    ])
    def test_states_the_g4_takes(self, chain: str) -> None:
        assert isinstance(q(f"from {chain} select 1 as one insert into O", self.DEFS).input, StateInputStream)


# ------------------------------------------------------------------------------------ variables
class TestVariables:
    """SiddhiCompiler.updateVariables (Siddhi's VariableUpdateTestCase, with the environment for
    its system properties)."""

    def test_a_variable_is_replaced(self) -> None:
        text = "@app:name('Test') define stream ${foo} (symbol string, price float, volume long);"
        assert update_variables(text, {"foo": "Foo"}) == text.replace("${foo}", "Foo")

    def test_an_unset_variable_is_an_error_at_its_place(self) -> None:
        text = "@app:name('Test')\ndefine stream ${foo2} (symbol string);"
        with pytest.raises(SiddhiParserError, match=r"No system or environmental variable found for '\$\{foo2\}'") as info:
            update_variables(text, {})
        assert (info.value.line, info.value.column) == (2, 15)

    def test_only_word_names_are_variables(self) -> None:
        assert update_variables("select '${a.b}', '$x', '${}' as v", {}) == "select '${a.b}', '$x', '${}' as v"

    def test_the_manager_reads_the_environment(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from srota.engine import SiddhiManager

        monkeypatch.setenv("SROTA_TEST_STREAM", "Quotes")
        runtime = SiddhiManager().create_siddhi_app_runtime(
            "define stream ${SROTA_TEST_STREAM} (a int); from Quotes select a insert into O;")
        assert "Quotes" in runtime.stream_definitions
        runtime.shutdown()
