"""The Siddhi Runner's element list (service/siddhi_elements.py). The texts of the queries,
partitions, partition types, definitions and annotations, and Java's ``toString`` of the streams and
tables, were checked against Siddhi 5.1.33's compiler on this app (``SiddhiCompiler.parse`` and the
runner's getDefinition over ``getQueryContextStartIndex``/``EndIndex``)."""
from __future__ import annotations

from srota.service.siddhi_elements import app_elements

from srota import SiddhiManager

APP = """@app:name('Elements')
@source(type='inMemory', topic='stock', @map(type='passThrough'))
define stream In (symbol string, price double, volume long);
@sink(type='log', prefix='out')
define stream Out (symbol string, ap double);
define trigger Tick at every 5 sec;
@PrimaryKey('symbol')
define table Prices (symbol string, price double);
define window W (symbol string, price double) length(5);
define function twice[javascript] return double { return data[0] * 2; };
define aggregation Agg from In select symbol, sum(price) as total group by symbol aggregate every sec...min;
@info(name='avg')
from In[price > 10]#window.length(3)
select symbol, twice(avg(price)) as ap
insert into Out;
from In select symbol, price insert into Prices;
from Tick select triggered_time as t insert into Ticks;
@purge(enable='true', interval='1 sec', idle.period='1 min')
partition with (price < 10 as 'low' or price >= 10 as 'high' of In, symbol of Out)
begin
  @info(name='p1') from In select symbol, twice(price) as p insert into #X;
  from #X join W on #X.symbol == W.symbol select #X.symbol insert into Out2;
end;
"""

IN = ('@source( type = "inMemory", topic = "stock", @map( type = "passThrough"))'
      'define stream In (symbol string, price double, volume long)')
OUT = '@sink( type = "log", prefix = "out")define stream Out (symbol string, ap double)'
TWICE = "define function twice[javascript] return double { return data[0] * 2; }"
PARTITION = ('@purge(enable="true", interval="1 sec", idle.period="1 min")\n'
             'partition with (price < 10 as "low" or price >= 10 as "high" of In, symbol of Out)\nbegin\n'
             '  @info(name="p1") from In select symbol, twice(price) as p insert into #X;\n'
             '  from #X join W on #X.symbol == W.symbol select #X.symbol insert into Out2;\nend')
JOIN = "from #X join W on #X.symbol == W.symbol select #X.symbol insert into Out2"
# the runner's quirks: a partitioned query is named after the partition's last annotation element
# ('1 min'), and of the partition types the last in HashMap order is shown
IN_PARTITION = {"query": PARTITION, "queryName": "1 min", "partitionType": "Value Partition",
                "partitionTypeQuery": "symbol of Out"}

EXPECTED = [
    {"inputStreamType": "Stream", "outputStreamType": "Stream", "inputStreamId": "In", "outputStreamId": "Out",
     "inputStreamSiddhiApp": IN, "outputStreamSiddhiApp": OUT,
     "query": '@info(name="avg")\nfrom In[price > 10]#window.length(3)\nselect symbol, twice(avg(price)) as ap\n'
              "insert into Out",
     "queryName": "avg", "function": "twice", "functionQuery": TWICE},
    {"inputStreamType": "Stream", "outputStreamType": "Table", "inputStreamId": "In", "outputStreamId": "Prices",
     "inputStreamSiddhiApp": IN,
     "outputStreamSiddhiApp": '@PrimaryKey( "symbol")define table Prices (symbol string, price double)',
     "query": "from In select symbol, price insert into Prices", "queryName": "query"},
    {"inputStreamType": "Trigger", "outputStreamType": "Stream", "inputStreamId": "Tick", "outputStreamId": "Ticks",
     "inputStreamSiddhiApp": "define trigger Tick at every 5 sec",
     "outputStreamSiddhiApp": "define stream Ticks (t long)",
     "query": "from Tick select triggered_time as t insert into Ticks", "queryName": "query"},
    {"inputStreamType": "Stream", "inputStreamId": "In", "outputStreamId": "#X", "inputStreamSiddhiApp": IN,
     **IN_PARTITION,
     "partitionQuery": '@info(name="p1") from In select symbol, twice(price) as p insert into #X',
     "function": "twice", "functionQuery": TWICE},
    {"outputStreamType": "Stream", "inputStreamId": "#X", "outputStreamId": "Out2",
     "outputStreamSiddhiApp": "define stream Out2 (symbol string)", **IN_PARTITION, "partitionQuery": JOIN},
    {"inputStreamType": "Window", "outputStreamType": "Stream", "inputStreamId": "W", "outputStreamId": "Out2",
     "inputStreamSiddhiApp": "define window W (symbol string, price double) length(5)",
     "outputStreamSiddhiApp": "define stream Out2 (symbol string)", **IN_PARTITION, "partitionQuery": JOIN},
    {"inputStreamType": "Stream", "outputStreamType": "Aggregation", "inputStreamId": "In", "outputStreamId": "Agg",
     "inputStreamSiddhiApp": IN,
     "outputStreamSiddhiApp": "define aggregation Agg from In select symbol, sum(price) as total group by symbol "
                              "aggregate every sec...min"},
    {"inputStreamType": "Source", "outputStreamType": "Stream", "inputStreamId": "inMemory", "outputStreamId": "In",
     "inputStreamSiddhiApp": '@source(type="inMemory", topic="stock", @map(type="passThrough"))',
     "outputStreamSiddhiApp": IN},
    {"inputStreamType": "Stream", "outputStreamType": "Sink", "inputStreamId": "Out", "outputStreamId": "log",
     "inputStreamSiddhiApp": OUT, "outputStreamSiddhiApp": '@sink(type="log", prefix="out")'},
]


def test_elements_as_the_runner_lists_them() -> None:
    runtime = SiddhiManager().create_siddhi_app_runtime(APP)
    got = app_elements(runtime.app, APP, runtime.stream_definitions)
    assert got == EXPECTED
    assert [list(e) for e in got] == [list(e) for e in EXPECTED]  # Gson's field order
