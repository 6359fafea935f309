"""The avro mapper: siddhi-map-avro's options, a schema registry over real HTTP, Kafka round trip."""
from __future__ import annotations

import asyncio
import io
import json
import struct
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from srota.grammar.errors import SiddhiAppCreationError
from srota.grammar.model import Annotation, AnnotationElement, Attribute, AttrType
from srota.mappers import MappingError, create_sink_mapper, create_source_mapper

fastavro = pytest.importorskip("fastavro", reason="the optional extra srota[avro] is not installed")

ATTRS = (Attribute("symbol", AttrType.STRING), Attribute("price", AttrType.DOUBLE), Attribute("volume", AttrType.LONG))
SCHEMA = {"type": "record", "name": "stock", "namespace": "stock",
          "fields": [{"name": "symbol", "type": "string"}, {"name": "price", "type": "double"},
                     {"name": "volume", "type": "long"}, {"name": "exchange", "type": ["null", "string"]}]}


def _map(**options: str) -> Annotation:
    return Annotation("map", (AnnotationElement("type", "avro"),
                              *(AnnotationElement(k.replace("_", "."), v) for k, v in options.items())))


def _datum(record: dict[str, Any], schema: Any = SCHEMA) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), record)
    return buf.getvalue()


def test_source_maps_fields_by_name_and_ignores_extra_ones() -> None:
    mapper = create_source_mapper(ATTRS, _map(schema_def=json.dumps(SCHEMA)), "Stocks")
    payload = _datum({"symbol": "WSO2", "price": 55.6, "volume": 100, "exchange": "NYSE"})
    assert mapper.map(payload) == [("WSO2", 55.6, 100)]


def test_source_errors_are_mapping_errors() -> None:
    mapper = create_source_mapper(ATTRS, _map(schema_def=json.dumps(SCHEMA)), "Stocks")
    with pytest.raises(MappingError, match="not an Avro datum"):
        mapper.map(b"\x02")
    with pytest.raises(MappingError, match="expects bytes"):
        mapper.map("text")
    other = {"type": "record", "name": "r", "fields": [{"name": "symbol", "type": "string"}]}
    narrow = create_source_mapper(ATTRS, _map(schema_def=json.dumps(other)), "Stocks")
    with pytest.raises(MappingError, match="no field 'price'") as info:
        narrow.map(_datum({"symbol": "IBM"}, other))
    assert info.value.attribute == "price"
    lenient = create_source_mapper(ATTRS, _map(schema_def=json.dumps(other), fail_on_missing_attribute="false"),
                                   "Stocks")
    assert lenient.map(_datum({"symbol": "IBM"}, other)) == [("IBM", None, None)]


def test_arrays_of_records_and_jsonpath_attributes() -> None:
    array = {"type": "array", "items": SCHEMA}
    mapper = create_source_mapper(ATTRS, _map(schema_def=json.dumps(array)), "Stocks")
    records = [{"symbol": s, "price": 1.5, "volume": 2, "exchange": None} for s in ("A", "B")]
    assert mapper.map(_datum(records, array)) == [("A", 1.5, 2), ("B", 1.5, 2)]
    nested = {"type": "record", "name": "n", "fields": [
        {"name": "stock", "type": SCHEMA}, {"name": "seen", "type": "long"}]}
    ann = Annotation("map", (AnnotationElement("type", "avro"), AnnotationElement("schema.def", json.dumps(nested))),
                     (Annotation("attributes", (AnnotationElement("symbol", "$.stock.symbol"),
                                                AnnotationElement("price", "$.stock.price"),
                                                AnnotationElement("volume", "$.seen"))),))
    mapper = create_source_mapper(ATTRS, ann, "Stocks")
    payload = _datum({"stock": {"symbol": "X", "price": 9.5, "volume": 1, "exchange": None}, "seen": 77}, nested)
    assert mapper.map(payload) == [("X", 9.5, 77)]


def test_sink_writes_what_the_source_reads_with_a_schema_made_from_the_stream() -> None:
    sink = create_sink_mapper(ATTRS, _map(), "Stocks")
    payloads = sink.map([("IBM", 75.6, 10), ("WSO2", 57.6, 20)])
    schema = fastavro.parse_schema({"type": "record", "name": "Stocks", "namespace": "srota",
                                    "fields": [{"name": "symbol", "type": "string"}, {"name": "price", "type": "double"},
                                               {"name": "volume", "type": "long"}]})
    assert [fastavro.schemaless_reader(io.BytesIO(p), schema, None) for p in payloads] == [
        {"symbol": "IBM", "price": 75.6, "volume": 10}, {"symbol": "WSO2", "price": 57.6, "volume": 20}]
    with pytest.raises(MappingError, match="does not fit the Avro schema"):
        sink.map([(None, 1.0, 1)])  # a null for a non-null field


def test_creation_errors_name_the_option() -> None:
    with pytest.raises(SiddhiAppCreationError, match="needs schema.def, or schema.registry"):
        create_source_mapper(ATTRS, _map(), "Stocks")
    with pytest.raises(SiddhiAppCreationError, match="schema.def is not JSON"):
        create_source_mapper(ATTRS, _map(schema_def="{nope"), "Stocks")
    with pytest.raises(SiddhiAppCreationError, match="no field for volume"):
        create_sink_mapper(ATTRS, _map(schema_def=json.dumps({"type": "record", "name": "r", "fields": [
            {"name": "symbol", "type": "string"}, {"name": "price", "type": "double"}]})), "Stocks")


# ------------------------------------------------------------------------------------ registry
class _Registry:
    """A schema registry speaking the Confluent REST API, on a free loopback port."""

    def __init__(self) -> None:
        self.schemas: dict[int, str] = {}
        self.subjects: dict[str, list[int]] = {}
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.runner: web.AppRunner | None = None
        self.url = ""

    def start(self) -> None:
        app = web.Application()
        app.router.add_get("/schemas/ids/{id}", self._by_id)
        app.router.add_post("/subjects/{subject}/versions", self._register)
        app.router.add_get("/subjects/{subject}/versions/latest", self._latest)
        self.thread.start()

        async def up() -> None:
            self.runner = web.AppRunner(app)
            await self.runner.setup()
            site = web.TCPSite(self.runner, "127.0.0.1", 0)
            await site.start()
            self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}"

        asyncio.run_coroutine_threadsafe(up(), self.loop).result(10)

    def stop(self) -> None:
        if self.runner is not None:
            asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    async def _by_id(self, request: web.Request) -> web.Response:
        found = self.schemas.get(int(request.match_info["id"]))
        if found is None:
            return web.json_response({"error_code": 40403, "message": "Schema not found"}, status=404)
        return web.json_response({"schema": found})

    async def _register(self, request: web.Request) -> web.Response:
        schema = json.dumps(json.loads((await request.json())["schema"]), sort_keys=True)
        known = [i for i, s in self.schemas.items() if s == schema]
        i = known[0] if known else len(self.schemas) + 1
        self.schemas[i] = schema
        self.subjects.setdefault(request.match_info["subject"], []).append(i)
        return web.json_response({"id": i})

    async def _latest(self, request: web.Request) -> web.Response:
        ids = self.subjects.get(request.match_info["subject"])
        if not ids:
            return web.json_response({"error_code": 40401, "message": "Subject not found"}, status=404)
        return web.json_response({"id": ids[-1], "version": len(ids), "schema": self.schemas[ids[-1]]})


@pytest.fixture
def registry() -> Iterator[_Registry]:
    r = _Registry()
    r.start()
    try:
        yield r
    finally:
        r.stop()


def test_confluent_wire_format_through_a_registry(registry: _Registry) -> None:
    sink = create_sink_mapper(ATTRS, _map(schema_registry=registry.url, subject="stocks-value",
                                          use_avro_serializer="true"), "Stocks")
    payload = sink.map([("IBM", 75.5, 3)])[0]
    assert payload[0] == 0 and struct.unpack(">I", payload[1:5])[0] == 1  # registered as id 1
    source = create_source_mapper(ATTRS, _map(schema_registry=registry.url, use_avro_serializer="true"), "Stocks")
    assert source.map(payload) == [("IBM", 75.5, 3)]
    by_id = create_source_mapper(ATTRS, _map(schema_registry=registry.url, schema_id="1"), "Stocks")
    assert by_id.map(payload[5:]) == [("IBM", 75.5, 3)]
    unknown = bytes([0]) + struct.pack(">I", 99) + payload[5:]
    with pytest.raises(MappingError, match="HTTP 404"):
        source.map(unknown)
    with pytest.raises(MappingError, match="wire format"):
        source.map(payload[5:])


@pytest.mark.integration
async def test_round_trip_through_kafka(kafka_broker: Any, registry: _Registry, tmp_path: Path) -> None:
    from tests.integration.support import config, kafka_sink, kafka_source, running_host, wait_until

    kb = kafka_broker
    topic = await kb.create_topic(partitions=1)
    avro = f"@map(type='avro', schema.registry='{registry.url}', use.avro.serializer='true', subject='{topic}-value')"
    app = f"""@app:name('avro')
define stream In (symbol string, price double, volume long);
{kafka_sink(kb, topic, avro)}
define stream ToKafka (symbol string, price double, volume long);
{kafka_source(kb, topic, f"g-{uuid.uuid4().hex[:8]}", avro.replace(f", subject='{topic}-value'", ""))}
define stream FromKafka (symbol string, price double, volume long);
from In select * insert into ToKafka;
"""
    async with running_host(config(tmp_path), app) as host:
        got: list[Any] = []
        host.apps["avro"].runtime.add_callback("FromKafka", lambda evs: got.extend(e.data for e in evs))
        rows = [("IBM", 75.5, 3), ("WSO2", 55.25, 7)]
        host.apps["avro"].runtime.get_input_handler("In").send_rows(rows)
        await wait_until(lambda: len(got) >= 2, 30, what="the records back from Kafka")
    assert got == rows
