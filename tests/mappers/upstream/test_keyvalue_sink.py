"""siddhi-map-keyvalue ``KeyValueSinkMapperTestCase`` (component/src/test/java/.../sinkmapper), ported.

Each Java ``@Test`` is one test here, named after it.  Events sent into ``FooStream`` are copied
into the stream with the ``@sink(type='inMemory', @map(type='keyvalue'))``; the subscriber gets
one map (a dict) per event, compared with the Java ``HashMap`` expected.  Topics carry the
test's name.  A ``float`` attribute holds a 32-bit value (``f32``): the input handler rounds a
value sent to a float attribute, so where Java sends the ``Double`` 55.6 into a ``float``
attribute (which Siddhi passes on unchanged) the map here holds ``f32(55.6)``.
"""
from __future__ import annotations

from typing import Any

from tests.mappers.harness import Topic, f32

STOCK = "symbol string, price float, volume long"


def _app(name: str, mapping: str, out: str = "BarStream", types: str = STOCK, topic: str | None = None) -> str:
    return f"""
    @App:name('{name}')
    define stream FooStream ({types});
    @sink(type='inMemory', topic='{topic or name}', @map(type='keyvalue'{mapping}))
    define stream {out} ({types});
    from FooStream select * insert into {out};
    """


def _stock(symbol: Any, price: Any, volume: Any, keys: str = "symbol price volume") -> dict[Any, Any]:
    return dict(zip(keys.split(), (symbol, price, volume), strict=True))


async def test_keyvalueSinkMapperDefaultTestCase1(run: Any) -> None:
    """Default mapping: a map per event, keyed by attribute name; a chunk of two is two maps (6)."""
    name = "KvSinkDefault1"
    topic = Topic(name)
    r = await run(_app(name, ""))
    for row in (("WSO2", 55.6, 100), ("WSO2", 57.678, 100), ("WSO2", 50.0, 100), ("WSO2#$%", 50.0, 100)):
        r.send("FooStream", row)
    r.send("FooStream", ("WSO2", 55.6, 100), ("IBM", 32.6, 160))
    await topic.take(6)
    assert topic.messages == [_stock("WSO2", f32(55.6), 100), _stock("WSO2", f32(57.678), 100),
                              _stock("WSO2", 50.0, 100), _stock("WSO2#$%", 50.0, 100),
                              _stock("WSO2", f32(55.6), 100), _stock("IBM", f32(32.6), 160)]


async def test_keyvalueSinkMapperDefaultTestCase2(run: Any) -> None:
    """Null attributes are null values of the map (3 maps)."""
    name = "KvSinkDefault2"
    topic = Topic(name)
    r = await run(_app(name, ""))
    for row in (("WSO2", None, 100), ("WSO2", 57.678, None), (None, 50.0, 100)):
        r.send("FooStream", row)
    await topic.take(3)
    assert topic.messages == [_stock("WSO2", None, 100), _stock("WSO2", f32(57.678), None), _stock(None, 50.0, 100)]


async def test_keyvalueSinkMapperDefaultTestCase3(run: Any) -> None:
    """topic='{{symbol}}': two maps to WSO2, one to IBM."""
    name = "KvSinkDefault3"
    wso2, ibm = Topic(f"{name}-WSO2"), Topic(f"{name}-IBM")
    r = await run(_app(name, "", topic=f"{name}-{{{{symbol}}}}"))
    for row in (("WSO2", 55.6, 100), ("WSO2", 57.678, 101), ("IBM", 50.0, 100)):
        r.send("FooStream", row)
    await wso2.take(2)
    await ibm.take(1)
    assert wso2.messages == [_stock("WSO2", f32(55.6), 100), _stock("WSO2", f32(57.678), 101)]
    assert ibm.messages == [_stock("IBM", 50.0, 100)]


async def test_keyvalueSinkMapperDefaultTestCase4(run: Any) -> None:
    """Values not of the attribute's type (Siddhi does not check sent data) go into the map as they are."""
    name = "KvSinkDefault4"
    topic = Topic(name)
    r = await run(_app(name, ""))
    for row in (("WSO2", 55.6, 100), ("WSO2", 57.678, 100), (123, 50.0, 100)):
        r.send("FooStream", row)
    await topic.take(3)
    assert topic.messages == [_stock("WSO2", f32(55.6), 100), _stock("WSO2", f32(57.678), 100),
                              _stock(123, 50.0, 100)]


async def test_keyvalueSinkMapperCustomTestCase1(run: Any) -> None:
    """@payload(a='symbol',b='price',c='volume'): attribute values under custom keys (6 maps);
    the output stream is named ``from`` (back-quoted)."""
    name = "KvSinkCustom1"
    topic = Topic(name)
    r = await run(_app(name, ", @payload(a='symbol',b='price',c='volume')", out="`from`"))
    for row in (("WSO2", 55.6, 100), ("WSO2", 57.678, 100), ("WSO2", 50.0, 100), ("WSO2#$%", 50.0, 100)):
        r.send("FooStream", row)
    r.send("FooStream", ("WSO2", 55.6, 100), ("IBM", 32.6, 160))
    await topic.take(6)
    abc = "a b c"
    assert topic.messages == [_stock("WSO2", f32(55.6), 100, abc), _stock("WSO2", f32(57.678), 100, abc),
                              _stock("WSO2", 50.0, 100, abc), _stock("WSO2#$%", 50.0, 100, abc),
                              _stock("WSO2", f32(55.6), 100, abc), _stock("IBM", f32(32.6), 160, abc)]


async def test_keyvalueSinkMapperCustomTestCase2(run: Any) -> None:
    """A template is text ('WSO2 is here'), a back-quoted word is that word ('price'), a name the value."""
    name = "KvSinkCustom2"
    topic = Topic(name)
    r = await run(_app(name, ", @payload(a='{{symbol}} is here',b='`price`',c='volume')", out="`from`"))
    for row in (("WSO2", 55.6, 100), ("WSO2", 57.678, 100), ("WSO2#$%", 50.0, 100)):
        r.send("FooStream", row)
    await topic.take(3)
    abc = "a b c"
    assert topic.messages == [_stock("WSO2 is here", "price", 100, abc), _stock("WSO2 is here", "price", 100, abc),
                              _stock("WSO2#$% is here", "price", 100, abc)]


async def test_keyvalueSinkMapperCustomTestCase3(run: Any) -> None:
    """Nulls: a null in a template is the text ``null``; an attribute value is None."""
    name = "KvSinkCustom3"
    topic = Topic(name)
    r = await run(_app(name, ", @payload(a='{{symbol}} is here',b='`price`',c='volume')", out="`from`"))
    for row in (("WSO2", None, 100), ("WSO2", 57.678, None), (None, 50.0, 100)):
        r.send("FooStream", row)
    await topic.take(3)
    abc = "a b c"
    assert topic.messages == [_stock("WSO2 is here", "price", 100, abc), _stock("WSO2 is here", "price", None, abc),
                              _stock("null is here", "price", 100, abc)]


async def test_keyvalueSinkMapperCustomTestCase4(run: Any) -> None:
    """An unkeyed @payload('{{symbol}} is here') is one entry under the null key."""
    name = "KvSinkCustom4"
    topic = Topic(name)
    r = await run(_app(name, ", @payload('{{symbol}} is here')"))
    r.send("FooStream", ("WSO2", 55.6, 100))
    r.send("FooStream", ("IBM", 57.678, 100))
    await topic.take(2)
    assert topic.messages == [{None: "WSO2 is here"}, {None: "IBM is here"}]


async def test_keyvalueSinkMapperCustomTestCase5(run: Any) -> None:
    """'{{symbol}}' and '{{price}}' are text ("55.6"), 'symbol' and 'price' the typed values."""
    name = "KvSinkCustom5"
    topic = Topic(name)
    r = await run(_app(name, ", @payload(a='{{symbol}}',b='symbol',c='{{price}}',d='price')"))
    r.send("FooStream", ("WSO2", 55.6, 100))
    r.send("FooStream", ("WSO2", 57.678, 100))
    await topic.take(2)
    assert topic.messages == [{"a": "WSO2", "b": "WSO2", "c": "55.6", "d": f32(55.6)},
                              {"a": "WSO2", "b": "WSO2", "c": "57.678", "d": f32(57.678)}]


async def test_keyvalueSinkMapperCustomTestCase6(run: Any) -> None:
    """Custom keys with values not of the attribute's type: they go into the map as they are."""
    name = "KvSinkCustom6"
    topic = Topic(name)
    r = await run(_app(name, ", @payload(a='symbol',b='price',c='volume')", out="`from`"))
    for row in (("WSO2", 55.6, 100), ("WSO2", 57.678, 100), (123, 50.0, "value")):
        r.send("FooStream", row)
    await topic.take(3)
    abc = "a b c"
    assert topic.messages == [_stock("WSO2", f32(55.6), 100, abc), _stock("WSO2", f32(57.678), 100, abc),
                              _stock(123, 50.0, "value", abc)]


async def test_stringsAsPropertyNameTestCase(run: Any) -> None:
    """A quoted @payload key ('1.2ab.c') is the map's key."""
    name = "KvSinkStringKey"
    topic = Topic(name)
    r = await run(_app(name, ", @payload('1.2ab.c'='{{symbol}}')", out="`from`", types="symbol string"))
    for symbol in ("WSO2", "WSO2", "WSO2#$%"):
        r.send("FooStream", (symbol,))
    await topic.take(3)
    assert topic.messages == [{"1.2ab.c": "WSO2"}, {"1.2ab.c": "WSO2"}, {"1.2ab.c": "WSO2#$%"}]
