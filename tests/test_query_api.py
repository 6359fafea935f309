"""srota.query: the worked examples of docs/query_api.md run, and built apps equal parsed ones."""
from __future__ import annotations

import re
from pathlib import Path

from srota.grammar.parser import parse

from srota.query import (
    Aggregation,
    App,
    Partition,
    Query,
    Stream,
    Trigger,
    col,
    event,
    every,
    fn,
    lit,
    sequence,
)
from tests.grammar.test_render import strip

DOC = Path(__file__).resolve().parents[1] / "docs" / "query_api.md"


def test_the_documented_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 4
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {})  # noqa: S102 - our own documentation


def test_a_built_app_equals_the_parsed_text() -> None:
    app = (App("Shop")
           .stream(Stream("Orders").attr("id", "string").attr("amount", "double").attr("ts", "long"))
           .trigger(Trigger("Tick", every="5 sec"))
           .aggregation(Aggregation("Sales", "Orders", fn("sum", col("amount")).as_("total"), group_by=["id"],
                                    by="ts", every=["seconds", "minutes"]))
           .query(Query.from_("Orders").filter(~col("id").is_null() & (col("amount") >= lit(10, "long")))
                  .select("id", (col("amount") * 1.1).as_("gross")).order_by("gross desc").limit(5)
                  .output_every("10 events", "last").insert_into("Big", events="all"))
           .partition(Partition(("id", "Orders")).query(
               Query.from_("Orders").select("id", fn("count").as_("n")).insert_into("#Counts")))
           .query(Query.from_pattern(sequence(every(event("Orders", ref="a")) >> event("Orders", ref="b").count(2, 3)))
                  .select(col("a.id").as_("first")).insert_into("Seq")))
    text = """@app:name('Shop')
define stream Orders (id string, amount double, ts long);
define trigger Tick at every 5 sec;
define aggregation Sales from Orders select sum(amount) as total group by id aggregate by ts every sec, min;
from Orders[not (id is null) and amount >= 10L] select id, amount * 1.1 as gross order by gross desc limit 5
output last every 10 events insert all events into Big;
partition with (id of Orders) begin from Orders select id, count() as n insert into #Counts; end;
from every a=Orders, b=Orders<2:3> select a.id as first insert into Seq;
"""
    assert strip(app.build()) == strip(parse(text))
    assert strip(parse(app.to_siddhiql())) == strip(parse(text))
