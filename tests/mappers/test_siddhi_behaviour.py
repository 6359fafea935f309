"""The json and csv mappers through the service host, the way siddhi-map-json/-csv test them.

Each case runs an app on a :class:`ServiceHost` with ``inMemory`` sources and sinks: payloads
are published to a topic as Siddhi's tests publish to ``InMemoryBroker``, and what the sinks
write is read back from their topics.  The expectations are those of the upstream test suites
(``component/src/test/java`` of siddhi-io/siddhi-map-json and siddhi-io/siddhi-map-csv).  A
payload that fails to map still goes to the fault stream, once, and is counted.
"""
from __future__ import annotations

from typing import Any

import orjson
import pytest

from tests.mappers.harness import Topic, f32, publish, until


def _faulty_app(name: str, source: str, stream: str) -> str:
    """An app whose source stream's mapping failures go to a fault stream, published on ``<name>-faults``."""
    return f"""
    @app:name('{name}')
    @OnError(action='STREAM')
    {source}
    define stream FooStream {stream};
    @sink(type='inMemory', topic='{name}-faults', @map(type='passThrough'))
    define stream Faults (error string);
    from !FooStream select convert(_error, 'string') as error insert into Faults;
    """


# ------------------------------------------------------------------------------------ json source
async def test_json_array_with_custom_attributes_drops_only_failing_elements(run: Any) -> None:
    """jsonSourceMapperTest9/10/12: a failing element is dropped, the rest of the array maps."""
    name = "JsonArrayCustom"
    r = await run(_faulty_app(name, f"""@source(type='inMemory', topic='{name}', @map(type='json',
        fail.on.missing.attribute='true',
        @attributes(symbol="event.symbol", price="event.price", volume="event.volume")))""",
        "(symbol string, price float, volume long)"))
    got = r.watch("FooStream")
    faults = Topic(f"{name}-faults")
    await publish(name,
                   b'[{"event":{"symbol":"WSO2","price":52.6,"volume":100}},'
                   b'{"event":{"symbol":"WSO2","price":53.6,"volume":99}}]',
                   b'[{"event":{"symbol":"WSO2","price":55.6,"volume":100}},'
                   b'{"testEvent":{"symbol":"WSO2","price":56.6,"volume":99}},'
                   b'{"event":{"symbol":"WSO2","price":57.6,"volume":null}}]',
                   b'[{"event":{"symbol":"WSO2","price":58.6,"volume":100}},'
                   b'{"Event":{"symbol":"WSO2","price":59.6,"volume":99}},'
                   b'{"event":{"symbol":"IBM","price":60.6,"volume":80}}]')
    await until(lambda: sum(len(c) for c in got) >= 6)
    assert [row for c in got for row in c] == [
        ("WSO2", f32(52.6), 100), ("WSO2", f32(53.6), 99), ("WSO2", f32(55.6), 100),
        ("WSO2", f32(57.6), None), ("WSO2", f32(58.6), 100), ("IBM", f32(60.6), 80)]
    errors = await faults.take(2)  # one per failing payload
    assert len(errors) == 2 and all("missing" in e[0] for e in errors)
    assert r.mapping_errors("FooStream") == 2
    faults.close()


async def test_json_default_mapping_is_strict(run: Any) -> None:
    """jsonSourceMapperTest4/6/8/16/18: unknown keys and integers for doubles fail the message."""
    name = "JsonStrict"
    r = await run(_faulty_app(name, f"@source(type='inMemory', topic='{name}', @map(type='json'))",
                              "(symbol string, price double, volume int)"))
    got = r.watch("FooStream")
    faults = Topic(f"{name}-faults")
    await publish(name,
                   b'{"event1":{"symbol":"WSO2","price":52.6,"volume":100}}',  # not an attribute
                   b'{"event":{"symbol":"WSO2","price":55,"volume":100}}',  # integer for a double
                   b'{"event":{"symbol":"WSO2","price":10.12,"discount":"3%","volume":100}}',  # extra key
                   b'{"event":{"symbol":"WSO2","price":55.0,"volume":100.0}}',  # fraction for an int
                   b'{"event":{"symbol":"WSO2","price":"55.6","volume":100}}',  # text for a double
                   b'{"event":{"symbol":123,"price":1.5e1,"volume":100}}',  # a number is text for a string
                   b'{"symbol":"IBM","price":55.6,"volume":7}')  # the plain object form
    errors = await faults.take(5)
    await until(lambda: sum(len(c) for c in got) >= 2)
    assert [row for c in got for row in c] == [("123", 15.0, 100), ("IBM", 55.6, 7)]
    text = [e[0] for e in errors]
    assert "does not have an attribute named 'event1'" in text[0]
    assert "not compatible with type double" in text[1]
    assert "'discount'" in text[2]
    assert r.mapping_errors("FooStream") == 5
    faults.close()


async def test_json_fail_on_missing_attribute_false(run: Any) -> None:
    """jsonSourceMapperTest3/27: a missing value is null; a mis-shaped array element is dropped."""
    name = "JsonLenient"
    r = await run(_faulty_app(name, f"""@source(type='inMemory', topic='{name}',
        @map(type='json', fail.on.missing.attribute='false'))""", "(symbol string, price float, volume long)"))
    got = r.watch("FooStream")
    await publish(name,
                   b'{"event":{"price":56,"volume":100}}',
                   b'[{"symbol":"WSO2","price":55.6,"volume":100},'
                   b'{"testEvent":{"symbol":"WSO2","price":56.6,"volume":99}},'
                   b'{"symbol":"WSO2","price":57.6,"volume":80}]')
    await until(lambda: sum(len(c) for c in got) >= 3)
    assert [row for c in got for row in c] == [(None, 56.0, 100), ("WSO2", f32(55.6), 100),
                                                ("WSO2", f32(57.6), 80)]


@pytest.mark.parametrize("grouping", ["true", "false"])
async def test_json_event_grouping(run: Any, grouping: str) -> None:
    """jsonSourceMapperTest30/31: with grouping off every event is a callback of its own."""
    name = f"JsonGrouping{grouping}"
    r = await run(f"""
    @app:name('{name}')
    @source(type='inMemory', topic='{name}', batch.size='1', @map(type='json', enclosing.element="portfolio",
        event.grouping.enabled='{grouping}',
        @attributes(symbol="stock.company.symbol", price="stock.price", volume="trp:symbol")))
    define stream FooStream (symbol string, price float, volume string);
    """)
    got = r.watch("FooStream")
    await publish(name, b'{"portfolio":[{"stock":{"volume":100,"company":{"symbol":"wso2"},"price":56.6}},'
                         b'{"stock":{"volume":200,"company":{"symbol":"wso2"},"price":57.6}}]}',
                   properties={"symbol": "test"})
    await until(lambda: sum(len(c) for c in got) >= 2)
    expected = [("wso2", f32(56.6), "test"), ("wso2", f32(57.6), "test")]
    assert got == ([expected] if grouping == "true" else [[e] for e in expected])


async def test_json_paths_with_wildcards_descent_and_filters(run: Any) -> None:
    name = "JsonPaths"
    r = await run(f"""
    @app:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='json', enclosing.element="$.orders[*]",
        @attributes(id="id", skus="$.lines[*].sku", total="$..amount", big="$.lines[?(@.qty > 2)].sku")))
    define stream FooStream (id string, skus string, total object, big string);
    """)
    got = r.watch("FooStream")
    await publish(name, orjson.dumps({"orders": [
        {"id": "o1", "lines": [{"sku": "a", "qty": 1, "amount": 2.5}, {"sku": "b", "qty": 3, "amount": 9}]},
        {"id": "o2", "lines": []}]}))
    await until(lambda: sum(len(c) for c in got) >= 2)
    assert got == [[("o1", '["a","b"]', [2.5, 9], '["b"]'), ("o2", "[]", [], "[]")]]


# ------------------------------------------------------------------------------------ json sink
async def test_json_sink_single_event_object_chunk_array_and_undefined(run: Any) -> None:
    """jsonSinkMapperTestCase1/2: an event is an object, an event array one array message."""
    name = "JsonSink"
    r = await run(f"""
    @app:name('{name}')
    define stream FooStream (symbol string, price float, volume long);
    @sink(type='inMemory', topic='{name}', @map(type='json'))
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    out = Topic(name)
    r.send("FooStream", ("WSO2", 55.6, 100))
    r.send("FooStream", ("WSO2#$%", 50.0, None))
    r.send("FooStream", ("WSO2", 55.6, 100), ("IBM", 32.6, 160))
    await out.take(3)
    assert out.text() == [
        '{"event":{"symbol":"WSO2","price":55.6,"volume":100}}',
        '{"event":{"symbol":"WSO2#$%","price":50.0,"volume":"undefined"}}',
        '[{"event":{"symbol":"WSO2","price":55.6,"volume":100}},{"event":{"symbol":"IBM","price":32.6,"volume":160}}]']
    out.close()


async def test_json_sink_project_options_one_message_per_event_and_json_null(run: Any) -> None:
    """The project's earlier defaults, now options: event.grouping.enabled='false' and JSON nulls."""
    name = "JsonSinkOptions"
    r = await run(f"""
    @app:name('{name}')
    define stream FooStream (symbol string, price float, volume long);
    @sink(type='inMemory', topic='{name}', @map(type='json', event.grouping.enabled='false',
        enable.null.attribute.value='true'))
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    out = Topic(name)
    r.send("FooStream", ("WSO2", 55.6, None), (None, None, 100))
    await out.take(2)
    assert out.text() == ['{"event":{"symbol":"WSO2","price":55.6,"volume":null}}',
                          '{"event":{"symbol":null,"price":null,"volume":100}}']
    out.close()


async def test_json_sink_payload_template_nulls_and_arrays(run: Any) -> None:
    """jsonSinkMapperTestCase10/11: bare undefined in a template; an array joins with ",\\n"."""
    name = "JsonSinkTemplate"
    r = await run(f"""
    @app:name('{name}')
    define stream FooStream (symbol string, price float, volume long);
    @sink(type='inMemory', topic='{name}', @map(type='json', enclosing.element="$.portfolio.company",
        @payload(\"\"\"{{"Symbol":"{{{{symbol}}}}","Price":{{{{price}}}},"Volume":{{{{volume}}}}}}\"\"\")))
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    out = Topic(name)
    r.send("FooStream", ("WSO2", 55.6, None))
    r.send("FooStream", (None, 57.6, 200))
    r.send("FooStream", ("WSO2", 55.6, 100), ("IBM", 32.6, 160))
    await out.take(3)
    assert out.text() == [
        '{"portfolio":{"company":{"Symbol":"WSO2","Price":55.6,"Volume":undefined}}}',
        '{"portfolio":{"company":{"Symbol":"undefined","Price":57.6,"Volume":200}}}',
        '{"portfolio":{"company":[{"Symbol":"WSO2","Price":55.6,"Volume":100},\n'
        '{"Symbol":"IBM","Price":32.6,"Volume":160}]}}']
    out.close()


async def test_json_sink_groups_a_chunk_by_dynamic_topic(run: Any) -> None:
    """Siddhi's group determiner: one message per topic, each an array (even of one event)."""
    name = "JsonSinkTopics"
    r = await run(f"""
    @app:name('{name}')
    define stream FooStream (symbol string, price float, volume long);
    @sink(type='inMemory', topic='{name}-{{{{symbol}}}}', @map(type='json'))
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2", 1.5, 1), ("IBM", 2.5, 2), ("WSO2", 3.5, 3))
    await wso2.take(1)
    await ibm.take(1)
    assert [len(orjson.loads(m)) for m in wso2.messages] == [2]
    assert orjson.loads(ibm.messages[0]) == [{"event": {"symbol": "IBM", "price": 2.5, "volume": 2}}]
    wso2.close()
    ibm.close()


# ------------------------------------------------------------------------------------ csv source
async def test_csv_header_skips_the_first_message_ever(run: Any) -> None:
    """testCSVInputDefaultMappingMultipleEvent(WithMultiCharacterDelimiter)."""
    name = "CsvHeader"
    r = await run(f"""
    @app:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='csv', header='true', delimiter='-/-'))
    define stream FooStream (symbol string, price float, volume long);
    """)
    got = r.watch("FooStream")
    await publish(name, "symbol-/-price-/-volume", "WSO2-/-55.6-/-100", "IBM-/-75.6-/-10\nORCL-/-1-/-2")
    await until(lambda: sum(len(c) for c in got) >= 3)
    assert [row for c in got for row in c] == [("WSO2", f32(55.6), 100), ("IBM", f32(75.6), 10), ("ORCL", 1.0, 2)]


async def test_csv_empty_numeric_field_is_a_mapping_error(run: Any) -> None:
    """testInputCustomMappingwithfailunknownattribute1: only the valid message maps."""
    name = "CsvStrict"
    r = await run(_faulty_app(name, f"""@source(type='inMemory', topic='{name}', @map(type='csv',
        fail.on.unknown.attribute='true', @attributes(symbol='2', price='0', volume='1')))""",
        "(symbol string, price float, volume int)"))
    got = r.watch("FooStream")
    faults = Topic(f"{name}-faults")
    await publish(name, "55.689,100,null", "75, ,IBM@#$%^*", ",10,WSO2", " 55.6,aa,WSO2",
                   "1,2,A\n,3,B\n4,5,C")  # one bad record among good ones: only it is dropped
    errors = await faults.take(4)
    await until(lambda: sum(len(c) for c in got) >= 3)
    assert [row for c in got for row in c] == [("null", f32(55.689), 100), ("A", 1.0, 2), ("C", 4.0, 5)]
    assert "price" in errors[1][0] and "not a number" in errors[1][0]
    assert r.mapping_errors("FooStream") == 4
    faults.close()


async def test_csv_unknown_attributes_are_null_when_allowed(run: Any) -> None:
    """testInputCustomMappingwithfailunknownattribute."""
    name = "CsvLenient"
    r = await run(f"""
    @app:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='csv', fail.on.unknown.attribute="false",
        @attributes(symbol="2", price="0", volume="1")))
    define stream FooStream (symbol string, price float, volume int);
    """)
    got = r.watch("FooStream")
    await publish(name, "55.689,100,null", "75, ,IBM@#$%^*", " ,10,WSO2", " 55.6,aa,WSO2", " bb,10.6,WSO2")
    await until(lambda: sum(len(c) for c in got) >= 5)
    assert [row for c in got for row in c] == [
        ("null", f32(55.689), 100), ("IBM@#$%^*", 75.0, None), ("WSO2", None, 10), ("WSO2", f32(55.6), None),
        ("WSO2", None, None)]


async def test_csv_tab_delimiter_trims_fields(run: Any) -> None:
    """testTSVInputDefaultMapping."""
    name = "CsvTsv"
    r = await run(f"""
    @app:name('{name}')
    @source(type='inMemory', topic='{name}', @map(type='csv', delimiter='\\t'))
    define stream FooStream (symbol string, price float, volume int);
    """)
    got = r.watch("FooStream")
    await publish(name, "null\t55.689\t100", " WSO2\t0\t10", " WSO2\t00.3\t16")
    await until(lambda: sum(len(c) for c in got) >= 3)
    assert [row for c in got for row in c] == [("null", f32(55.689), 100), ("WSO2", 0.0, 10), ("WSO2", f32(0.3), 16)]


# ------------------------------------------------------------------------------------ csv sink
async def test_csv_sink_nulls_and_header_once_to_the_first_events_topic(run: Any) -> None:
    """testCSVSinkmapperDefaultMappingWithDelimiterAndHeader."""
    name = "CsvSink"
    r = await run(f"""
    @app:name('{name}')
    define stream FooStream (symbol string, price float, volume long);
    @sink(type='inMemory', topic='{name}-{{{{symbol}}}}', @map(type='csv', delimiter="-", header='true'))
    define stream BarStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    """)
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2", 55.645, 100))
    r.send("FooStream", ("IBM", 75.0, 100))
    r.send("FooStream", ("WSO2", 57.6, 100))
    r.send("FooStream", ("IBM", None, 57))
    await wso2.take(3)
    await ibm.take(2)
    assert wso2.text() == ["symbol-price-volume\n", "WSO2-55.645-100\n", "WSO2-57.6-100\n"]
    assert ibm.text() == ["IBM-75.0-100\n", "IBM-null-57\n"]
    wso2.close()
    ibm.close()


async def test_csv_sink_payload_columns_quoting_and_grouping(run: Any) -> None:
    """testCSVSinkmapperDefaultMappingWithSiddhiQL1/3 and testTextSinkMapperdafaultEventGroup."""
    name = "CsvSinkGroup"
    r = await run(f"""
    @app:name('{name}')
    define stream FooStream (symbol string, price float, volume long);
    @sink(type='inMemory', topic='{name}', @map(type='csv', @payload(symbol="0", price="2", volume="1")))
    define stream BarStream (symbol string, price float, volume long);
    @sink(type='inMemory', topic='{name}-{{{{symbol}}}}', @map(type='csv', event.grouping.enabled='true'))
    define stream GroupStream (symbol string, price float, volume long);
    from FooStream select * insert into BarStream;
    from FooStream select * insert into GroupStream;
    """)
    plain, wso2, ibm = Topic(name), Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r.send("FooStream", ("WSO2,NO10,Palam groove Rd", 55.645, 100), ("WSO2", None, None))
    r.send("FooStream", ("WSO2", 55.6, 100), ("IBM", 75.6, 100), ("WSO2", 55.6, 100), ("IBM", 75.6, 100))
    await plain.take(6)
    assert plain.text()[:2] == ['"WSO2,NO10,Palam groove Rd",100,55.645\n', "WSO2,null,null\n"]
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.text()[1] == "WSO2,55.6,100\nWSO2,55.6,100\n"
    assert ibm.text() == ["IBM,75.6,100\nIBM,75.6,100\n"]
    for t in (plain, wso2, ibm):
        t.close()


# ------------------------------------------------------------------------------------ unmappable outputs
async def test_an_unmappable_output_loses_only_its_own_message(run: Any) -> None:
    """Siddhi drops the message it could not map, not the batch: with one message per event
    only the failing event is lost (and with on.error='STORE' kept), the rest is published."""
    name = "JsonSinkUnmappable"
    r = await run(f"""
    @app:name('{name}')
    define stream FooStream (symbol string);
    @sink(type='inMemory', topic='{name}', on.error='STORE',
        @map(type='json', validate.json='true', event.grouping.enabled='false', @payload("{{'s':{{{{symbol}}}}}}")))
    define stream BarStream (symbol string);
    from FooStream select * insert into BarStream;
    """)
    out = Topic(name)
    r.send("FooStream", ("a b",), ("WSO2",), ("c d",), ("IBM",))  # `{'s':a b}` is not JSON even to Gson
    await out.take(2)
    assert out.text() == ["{'s':WSO2}", "{'s':IBM}"]
    stored = r.host.error_store.entries(stream="BarStream")
    assert sorted(tuple(e["data"]) for entry in stored for e in entry.events) == [("a b",), ("c d",)]
    out.close()
